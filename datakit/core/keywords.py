"""Keywords under two names, written once: an old name kept for a version, or tf.data's own.

A reader of the kit gives its knobs one name everywhere (``n_readers``,
``n_read_threads``, ``n_parse_threads``). Two kinds of other name reach it:

- an **old name** of the kit's (``renamed``): kept for one version, each use
  warns (``DeprecationWarning``) with the name to use;
- **tf.data's own name** for the op the reader wraps (``aliases``): accepted
  quietly, since a learner who knows ``TFRecordDataset`` should not be told off.

Either way, passing both names is a ``TypeError`` naming both, and a keyword
that is neither is the ``TypeError`` Python gives.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     keywords("parquet_dataset", {"num_parallel_calls": 2, "seed": 1},
...              renamed={"num_parallel_calls": "n_parse_threads"})
{'seed': 1, 'n_parse_threads': 2}
>>> w[0].category.__name__, str(w[0].message)[:62]
('DeprecationWarning', 'parquet_dataset(): num_parallel_calls= is now n_parse_threads=')
>>> keywords("read_records", {"num_parallel_reads": 2},
...          aliases={"num_parallel_reads": "n_read_threads"})
{'n_read_threads': 2}
>>> keywords("read_records", {"num_parallel_reads": 2, "n_read_threads": 2},
...          aliases={"num_parallel_reads": "n_read_threads"})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
TypeError: read_records() got num_parallel_reads= and n_read_threads=: pass only n_read_threads=
(num_parallel_reads= is tf.data's name for it).

This module imports nothing from the kit, nor TensorFlow.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["keywords", "old_keyword"]


def keywords(func: str, given: Mapping[str, Any], *, renamed: Mapping[str, str] | None = None,
             aliases: Mapping[str, str] | None = None, allowed: Iterable[str] | None = None,
             stacklevel: int = 3) -> dict[str, Any]:
    """``given`` with each other name under the kit's name (see the module docstring).

    ``renamed`` maps the kit's old names to the new ones (a warning each use);
    ``aliases`` maps tf.data's names to the kit's (no warning). With ``allowed``,
    a resulting keyword outside it is the ``TypeError`` Python would give for
    ``func(**given)``. ``stacklevel`` points the warning at the caller's caller.
    """
    renamed, aliases = dict(renamed or {}), dict(aliases or {})
    out = {k: v for k, v in given.items() if k not in renamed and k not in aliases}
    for other, new in [*renamed.items(), *aliases.items()]:
        if other not in given:
            continue
        if new in given:
            why = "its old name" if other in renamed else "tf.data's name for it"
            raise TypeError(f"{func}() got {other}= and {new}=: pass only {new}= "
                            f"({other}= is {why}).")
        if other in renamed:
            warnings.warn(f"{func}(): {other}= is now {new}= (the name every reader of the "
                          "kit uses); the old name goes in the next version.",
                          DeprecationWarning, stacklevel=stacklevel)
        out[new] = given[other]
    if allowed is not None:
        unknown = sorted(set(out) - set(allowed))
        if unknown:
            raise TypeError(f"{func}() got an unexpected keyword argument {unknown[0]!r}")
    return out


def old_keyword(func: str, old: str, old_value: Any, new: str, new_value: Any, default: Any) -> Any:
    """The value of a keyword renamed from ``old`` to ``new``: ``old_value`` (warning) when given.

    For a signature that keeps the old keyword, defaulting to ``None``, for one
    version. Both given (the new one not at its ``default``) is a ``TypeError``.

    >>> import warnings
    >>> old_keyword("clip_dataset", "cycle_length", None, "n_readers", 2, 2)
    2
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     old_keyword("clip_dataset", "cycle_length", 4, "n_readers", 2, 2)
    4
    >>> str(w[0].message)[:54]
    'clip_dataset(): cycle_length= is now n_readers= (the n'
    """
    if old_value is None:
        return new_value
    given = {old: old_value} if new_value == default else {old: old_value, new: new_value}
    return keywords(func, given, renamed={old: new}, stacklevel=4)[new]
