"""Elements and rows as keys of a multiset: the same rows in another order, or batched
differently, are told apart from other values.

A one-dimensional element is a value, not a batch of fields: it is cut into rows only when
the reference's elements are batches (several arrays sharing their first axis, or a last
batch shorter than the others).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from datakit.exercises.answers import as_text

__all__: list[str] = []


def _leaves(element: Any) -> list:
    import tensorflow as tf
    return tf.nest.flatten(element)


def is_batched(ref: list) -> bool:
    """Whether the reference's elements are batches: each element's arrays share their first
    axis, and that is a batch axis (several arrays, or the last element shorter)."""
    firsts = []
    for e in ref:
        leaves = _leaves(e)
        if not leaves or not all(isinstance(x, np.ndarray) and x.ndim for x in leaves):
            return False
        sizes = {x.shape[0] for x in leaves}
        if len(sizes) != 1:
            return False
        firsts.append(sizes.pop())
    several = len(_leaves(ref[0])) > 1 if ref else False
    return bool(firsts) and (several or len(set(firsts)) > 1)


def keys(elements: list, batched: bool) -> list:
    """Hashable keys, one per element, or one per row when the elements are batches."""
    keys: list = []
    for e in elements:
        leaves = _leaves(e)
        if batched:
            keys.extend(zip(*[[_key(np.asarray(v)) for v in leaf] for leaf in leaves],
                            strict=False))
        else:
            keys.append(tuple(_key(np.asarray(v)) for v in leaves))
    return keys


def _key(a: np.ndarray) -> tuple:
    if a.dtype.kind == "f":
        a = np.round(a.astype(np.float64), 4) + 0.0
    if a.dtype.kind in "SUO":
        return ("text", a.shape, repr(as_text(a).tolist()))
    return (a.dtype.kind, a.shape, a.tobytes())


def rows_line(mine: list, ref: list, batched: bool) -> list[str]:
    """What comparing the elements (rows of batches) as multisets says: another order, other
    values, or counts."""
    unit = "rows" if batched else "elements"
    try:
        mine_rows, ref_rows = Counter(keys(mine, batched)), Counter(keys(ref, batched))
    except (TypeError, ValueError, AttributeError):  # ragged or mixed structures: no row view
        return []
    if mine_rows == ref_rows:
        if len(mine) != len(ref):
            return [f"the same {unit} as the reference, batched differently: check the batch "
                    "size and drop_remainder."]
        return [f"the same {unit} as the reference, in another order: check the order asked "
                "(seed, shuffle, sort)."]
    if sum(mine_rows.values()) and not (mine_rows & ref_rows):
        return [f"no {unit[:-1]} of yours is in the reference: check the values themselves."]
    lost, extra = sum((ref_rows - mine_rows).values()), sum((mine_rows - ref_rows).values())
    parts = [f"{lost} reference {unit[:-1]}(s) missing from yours"] * bool(lost) + [
        f"{extra} {unit[:-1]}(s) of yours not in the reference"] * bool(extra)
    return [f"content differs: {', '.join(parts)}."]
