"""Compare two datasets (or lists) element by element and say what differs.

:func:`compare` reads the reference, then your answer (at most one element more
than the reference has rows), and says *what* differs: the number of
elements, the first element that differs and where inside it, a dtype or a
shape, the structure, rows that are not batched, or only the order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from datakit.exercises.answers import elements, not_elements, row_count, unbatched, with_article

__all__ = ["compare"]


@dataclass
class Feedback:
    """The result of a check: ``ok``, and ``lines`` that say what differs (``str()`` joins them)."""

    ok: bool
    lines: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return "\n".join(self.lines)

    __repr__ = __str__


def _describe(value) -> str:
    if isinstance(value, dict):
        return "a dict with keys " + repr(sorted(value))
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return f"an array of shape {tuple(value.shape)} and dtype {value.dtype}"


def _short(a: np.ndarray) -> str:
    if a.dtype.kind == "f":
        return np.format_float_positional(a.item(), precision=6, trim="-") if a.ndim == 0 else \
            np.array2string(a, precision=4, threshold=6)
    if a.ndim == 0:
        v = a.item()
        return repr(v.decode("utf-8", "replace") if isinstance(v, bytes) else v)
    return np.array2string(a, threshold=6)


def _where(path: str) -> str:
    return f" at {path}" if path else ""


def _diff(mine, ref, path: str = "") -> str | None:
    """The first difference between two plain values, as a phrase, or None."""
    if isinstance(ref, dict) or isinstance(mine, dict):
        if not (isinstance(ref, dict) and isinstance(mine, dict)):
            return (f"{_where(path)[4:] or 'the element'} is {_describe(mine)}, "
                    f"expected {_describe(ref)}")
        return _diff_dicts(mine, ref, path)
    if isinstance(ref, tuple) or isinstance(mine, tuple):
        if not (isinstance(ref, tuple) and isinstance(mine, tuple)) or len(ref) != len(mine):
            return f"{path or 'the element'} is {_describe(mine)}, expected {_describe(ref)}"
        return _first_diff(_diff(a, b, f"{path}[{k}]")
                           for k, (a, b) in enumerate(zip(mine, ref, strict=False)))
    return _diff_arrays(mine, ref, path)


def _first_diff(diffs: Iterable[str | None]) -> str | None:
    return next((d for d in diffs if d), None)


def _diff_dicts(mine: dict, ref: dict, path: str) -> str | None:
    missing, extra = sorted(set(ref) - set(mine)), sorted(set(mine) - set(ref))
    if missing or extra:
        if len(ref) == len(mine) == 1:  # an Example feature: the list kind
            return (f"{path or 'the value'} is {with_article(next(iter(mine)))}, "
                    f"expected {with_article(next(iter(ref)))}")
        parts = ([f"missing keys {missing}"] * bool(missing)
                 + [f"extra keys {extra}"] * bool(extra))
        return f"{' and '.join(parts)}{_where(path)}"
    return _first_diff(_diff(mine[k], ref[k], f"{path}[{k!r}]") for k in ref)


def _diff_arrays(a: np.ndarray, b: np.ndarray, path: str) -> str | None:
    kinds = {a.dtype.kind, b.dtype.kind}
    text = {"S", "U", "O"}
    if a.dtype != b.dtype and not kinds <= text:
        return f"dtype{_where(path)}: yours {a.dtype}, expected {b.dtype}"
    if a.shape != b.shape:
        return f"shape{_where(path)}: yours {a.shape}, expected {b.shape}"
    if a.dtype.kind == "f":
        same = np.isclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        same = np.asarray(a == b)
    if np.all(same):
        return None
    if a.ndim == 0:
        return f"yours {_short(a)}, expected {_short(b)}{_where(path)}"
    index = tuple(int(i) for i in np.argwhere(~same)[0])
    return (f"{_where(path)[4:] or 'the array'}, index {index if len(index) > 1 else index[0]}: "
            f"yours {_short(a[index])}, expected {_short(b[index])}")


def _rows(elements: list) -> list:
    """Hashable keys, one per row: batches are cut along their first axis."""
    import tensorflow as tf
    keys = []
    for e in elements:
        leaves = tf.nest.flatten(e)
        firsts = {leaf.shape[0] if isinstance(leaf, np.ndarray) and leaf.ndim else None
                  for leaf in leaves}
        n = firsts.pop() if len(firsts) == 1 else None
        split = [[leaf] for leaf in leaves] if n is None else [list(leaf) for leaf in leaves]
        for row in zip(*split, strict=False):
            keys.append(tuple(_key(np.asarray(v)) for v in row))
    return keys


def _key(a: np.ndarray):
    if a.dtype.kind == "f":
        a = np.round(a.astype(np.float64), 4) + 0.0
    return (a.dtype.kind, a.shape, a.tobytes() if a.dtype.kind != "O" else repr(a.tolist()))


def compare(answer, reference) -> Feedback:
    """Compare two datasets (or iterables) element by element and say what differs."""
    wrong = not_elements(answer)
    if wrong:
        return Feedback(False, [f"not yet: {wrong}?" if "forget" in wrong
                                else f"not yet: {wrong}."])
    ref, endless = elements(reference)
    if endless:
        raise ValueError(f"with these inputs the reference does not end ({endless}): "
                         "check with inputs that end (for example repeat=1, not None), so "
                         "the answers can be compared")
    mine, too_many = elements(answer, limit=row_count(ref) + 1)  # bounded by the reference
    if too_many:
        return Feedback(False, [f"not yet: your dataset: {too_many}, the reference has "
                                f"{len(ref):,}; does it end? (repeat() without a count?)"])
    not_batched = unbatched(mine, ref)
    if not_batched:
        return Feedback(False, [not_batched])
    lines = []
    if len(mine) != len(ref):
        lines.append(f"yours has {len(mine)} elements, the reference {len(ref)}.")
    first = next(((i, d) for i, (a, b) in enumerate(zip(mine, ref, strict=False))
                  if (d := _diff(a, b))), None)
    structural = False
    if first:
        i, d = first
        structural = d.startswith("dtype") or " is " in d or "keys" in d  # a type or structure
        lines.append(f"element {i}: {d}." if structural else f"element {i} differs: {d}.")
    if not lines:
        return Feedback(True, [f"correct: {len(ref)} elements, each equal to the reference's, "
                               "in the same order."])
    lines[0] = "not yet: " + lines[0]
    if not structural:  # values of another type or shape: comparing rows would say nothing more
        lines += _rows_line(mine, ref)
    return Feedback(False, lines)


def _rows_line(mine: list, ref: list) -> list[str]:
    """What comparing the rows as multisets says: another order, other values, or counts."""
    try:
        mine_rows, ref_rows = Counter(_rows(mine)), Counter(_rows(ref))
    except (TypeError, ValueError, AttributeError):  # ragged or mixed structures: no row view
        return []
    if mine_rows == ref_rows:
        return ["same rows as the reference, in another order: "
                "check the seeds, and where you shuffle."]
    if sum(mine_rows.values()) and not (mine_rows & ref_rows):
        return ["no row of yours is in the reference: check the values themselves."]
    lost, extra = sum((ref_rows - mine_rows).values()), sum((mine_rows - ref_rows).values())
    parts = [f"{lost} reference row(s) missing from yours"] * bool(lost) + [
        f"{extra} row(s) of yours not in the reference"] * bool(extra)
    return [f"content differs: {', '.join(parts)}."]

