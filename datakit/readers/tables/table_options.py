"""The options every row reader shares, checked once before any file is opened.

:class:`TableOptions` holds what a reader does with rows once a format has
produced them (passes, batch size, the shuffle buffer and its seed, files read
at once, reading and parsing threads, the final prefetch), with one name per
knob across the kit's readers. Its ``__post_init__`` is the rulebook: a bad
value fails here, with a message that says how to fix the call, before a file
is opened or a TensorFlow op is built. CSV's ``ReadOptions`` extends it.

>>> TableOptions(batch_size=64).batch_size
64
>>> TableOptions(n_readers=2, n_read_threads=3)  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
ValueError: n_read_threads=3 is more than n_readers=2: at most one call per open input; lower
it or pass tf.data.AUTOTUNE.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from datakit.core.arguments import (
    PREFETCH,
    check_count,
    check_seed,
    check_shuffle_buffer,
    interleave_lengths,
)
from datakit.core.keywords import Keywords, keywords, options_from

__all__ = ["TableOptions"]

#: The counts: (smallest value, None allowed, AUTOTUNE allowed), in the order they are checked.
_COUNTS = {"n_readers": (1, False, False), "batch_size": (1, False, False),
           "repeat": (1, True, False), "shuffle_buffer_size": (0, True, False),
           "n_read_threads": (1, True, False), "n_parse_threads": (1, True, True),
           "prefetch": (0, True, True)}

#: The parallelism knobs, by the one name every reader gives them.
KNOBS = {"n_readers": "files read at once (interleave's cycle_length)",
         "n_read_threads": "threads reading them (interleave's num_parallel_calls)",
         "n_parse_threads": "parse calls at once (map's num_parallel_calls)"}


@dataclass(frozen=True, kw_only=True)
class TableOptions:
    """What a row reader does with rows, whatever the format: see the module docstring.

    ``repeat``: passes over the files (``None``: forever); ``shuffle_buffer_size``:
    rows in the buffer (``None`` or 0: no shuffle, files in sorted order); ``seed``
    seeds the file order and the shuffle; ``prefetch``: the final prefetch's
    buffer (``tf.data.AUTOTUNE``, the row and clip readers' default; 0 or ``None``:
    none); the knobs are :data:`KNOBS`.
    """

    repeat: int | None = 1
    batch_size: int = 32
    shuffle_buffer_size: int | None = 10_000
    seed: int | None = None
    n_readers: int = 5
    n_read_threads: int | None = None
    n_parse_threads: int | None = 5
    prefetch: int | None = PREFETCH

    def __post_init__(self) -> None:
        for name, (low, none, auto) in _COUNTS.items():
            check_count(name, getattr(self, name), low, none=none, autotune=auto)
        interleave_lengths(self.n_readers, 1, self.n_read_threads,
                           names=("n_readers", "n_read_threads"))
        if self.shuffle_buffer_size:
            check_shuffle_buffer(self.shuffle_buffer_size, what="rows")
        if self.seed is not None:
            check_seed(self.seed)

    @property
    def shuffled(self) -> bool:
        """Whether rows (and files) are shuffled."""
        return bool(self.shuffle_buffer_size)


def table_options(reader: Callable, options: TableOptions | None, given: Mapping[str, Any],
                  tf_names: Mapping[str, Any]) -> tuple[TableOptions, Keywords]:
    """The :class:`TableOptions` of a call to ``reader``, and its knobs as the caller wrote them.

    ``given``: the reader's :class:`TableOptions` keywords, by name, with their values
    (a keyword at its signature's default counts as not given); ``tf_names``: its
    ``**keywords`` (tf.data's names, :data:`~datakit.core.keywords.TF_DATA_NAMES`).
    ``options=`` is a whole :class:`TableOptions`; a keyword beside it replaces a field
    it leaves at the class' default, and one it sets too is a ``TypeError`` naming both
    (:func:`~datakit.core.keywords.options_from`).

    >>> def reader(batch_size=32, options=None, **tf_names):
    ...     return table_options(reader, options, {"batch_size": batch_size}, tf_names)[0]
    >>> reader(options=TableOptions(seed=1), batch_size=8).batch_size
    8
    >>> reader(options=TableOptions(batch_size=4), batch_size=8)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    TypeError: reader() got batch_size twice: batch_size=8 beside options=TableOptions(batch_...
    """
    where = reader.__qualname__
    defaults = {name: p.default for name, p in inspect.signature(reader).parameters.items()
                if name in given}
    knobs = keywords(where, given, tf_names, takes=TABLE_FIELDS, defaults=defaults)
    with knobs.as_written():
        opts = options_from(TableOptions, options, dict(knobs), where=where, given=knobs.given)
    return opts, knobs


#: The fields of :class:`TableOptions`, in order.
TABLE_FIELDS = tuple(f.name for f in fields(TableOptions))
