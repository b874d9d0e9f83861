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

from dataclasses import dataclass

from datakit.core.arguments import check_count, check_seed, check_shuffle_buffer, interleave_lengths

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
    buffer (0 or ``None``: none); the knobs are :data:`KNOBS`.
    """

    repeat: int | None = 1
    batch_size: int = 32
    shuffle_buffer_size: int | None = 10_000
    seed: int | None = None
    n_readers: int = 5
    n_read_threads: int | None = None
    n_parse_threads: int | None = 5
    prefetch: int | None = 1

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
