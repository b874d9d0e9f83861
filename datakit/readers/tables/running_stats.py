"""The statistics accumulators every ``column_stats`` pass shares: moments and vocabularies.

A pass reads a table a block at a time (CSV chunks, Parquet row groups) and
counts each block into a :class:`~datakit.readers.tables.table_stats.ColumnStats`
with :func:`add_numbers` (numbers) or a ``Counter`` (text); :func:`finish_column`
closes each column after the last block. One pass over any number of blocks
gives the whole column's mean and std (Chan et al.'s merge, in float64):

>>> import numpy as np
>>> from datakit.readers.tables.table_stats import NUMBER, ColumnStats
>>> s, moments = ColumnStats("x", NUMBER), {"x": (0, 0.0, 0.0)}
>>> add_numbers(s, np.array([1.0, 2.0]), moments)
>>> add_numbers(s, np.array([np.nan, 4.0]), moments)
>>> finish_column(s, moments, {}, None)
>>> s.count, s.missing, s.mean, (s.min, s.max)
(3, 1, 2.3333333333333335, (1.0, 4.0))
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from datakit.readers.tables.table_stats import NUMBER, ColumnStats

__all__: list[str] = []

#: The largest float32: a number beyond it is infinite in the readers (float32).
FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_MAX = FLOAT32_MAX


def add_numbers(s: ColumnStats, values: np.ndarray, moments: dict) -> None:
    """Count one block of a number column into ``s`` and its running ``moments``.

    nan and inf count as missing, and so do values beyond float32's range (a
    ``9.99e99`` missing-value sentinel, a ``1e39``): the readers hold numbers in
    float32, where those are infinite, and read them as missing (the mean); counted
    in, they would make the mean itself infinite and every feature of the column
    NaN, or the std so large that the column is all zeros. ``moments[name]`` is
    (count, mean, sum of squared deviations), merged block by block (Chan et al.),
    so one pass over any number of blocks gives the mean and the std of the whole column.

    >>> from datakit.readers.tables.table_stats import NUMBER, ColumnStats
    >>> s, moments = ColumnStats("x", NUMBER), {"x": (0, 0.0, 0.0)}
    >>> add_numbers(s, np.array([1.0, 9.99e99, 3.0, -1e39]), moments)
    >>> s.missing, s.min, s.max
    (2, 1.0, 3.0)
    """
    v = values[np.abs(values) <= _FLOAT32_MAX]  # (nan compares false: missing too)
    s.missing += len(values) - len(v)
    if len(v):
        part = (len(v), v.mean(), ((v - v.mean()) ** 2).sum())
        moments[s.name] = _combine(moments[s.name], part)
        s.min = float(v.min()) if s.min is None else min(s.min, float(v.min()))
        s.max = float(v.max()) if s.max is None else max(s.max, float(v.max()))


def finish_column(s: ColumnStats, moments: dict, vocab: dict, limit: int | None) -> None:
    """Close ``s`` after the pass: a number's count, mean and std; a text's vocabulary.

    The empty value of a text column counts as missing; the vocabulary keeps
    the ``limit`` most frequent values (ties by value), the rest counted as unknown.
    """
    if s.kind == NUMBER:
        n, mean, m2 = moments[s.name]
        s.count = n
        s.mean, s.std = (float(mean), float(np.sqrt(m2 / n))) if n else (None, None)
    else:
        s.missing += vocab[s.name].pop("", 0)
        s.count = sum(vocab[s.name].values())
        s.vocabulary, s.unknown = cap_vocabulary(vocab[s.name], limit)


def cap_vocabulary(counts: Counter, limit: int | None) -> tuple[dict[str, int], int]:
    """The most frequent values (ties: by value), at most ``limit``; and how many were left out.

    >>> cap_vocabulary(Counter({"b": 2, "a": 2, "c": 1}), 2)
    ({'a': 2, 'b': 2}, 1)
    """
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    kept = ranked if limit is None else ranked[:limit]
    return dict(kept), sum(n for _, n in ranked[len(kept):])


def _combine(a: tuple[int, float, float],
             b: tuple[int, float, float]) -> tuple[int, float, float]:
    """Chan et al.: merge (count, mean, sum of squared deviations) of two parts."""
    (na, ma, qa), (nb, mb, qb) = a, b
    n = na + nb
    delta = mb - ma
    return n, ma + delta * nb / n, qa + qb + delta * delta * na * nb / n
