"""Compare two datasets (or lists) element by element and say what differs.

:func:`compare` reads the reference, then your answer (at most one element more
than the reference has rows), and says *what* differs, in your answer's terms: the number
of elements, the first element that differs and where inside it (the key, the field, the
index), a type or a shape, the structure, rows that are not batched, or only the order;
and the likely cause. Values are compared as given: a float is not an index, a string
label is not an integer; plain Python values (``[1, 2]``) are compared by kind, not width.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from datakit.exercises.answers import (
    Typed,
    as_text,
    batched_too,
    elements,
    is_scalar,
    not_elements,
    plain,
    row_count,
    unbatched,
    with_article,
)
from datakit.exercises.learner import told_as_yours
from datakit.exercises.rows import is_batched, keys, rows_line

__all__ = ["compare"]

ORDERS = ("same", "any")


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


_KINDS = {"i": "integers", "u": "integers", "f": "floats", "b": "booleans", "S": "bytes",
          "U": "strings", "O": "strings", "c": "complex numbers"}


def _kind(a: np.ndarray) -> str:
    if a.dtype.kind == "O" and a.size and isinstance(a.flat[0], bytes):
        return "bytes"
    return _KINDS.get(a.dtype.kind, str(a.dtype))


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a dict with keys " + repr(sorted(value))
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    if value.ndim == 0:
        return f"a single value ({_kind(value)}, {value.dtype})"
    return f"an array of shape {tuple(value.shape)} and dtype {value.dtype}"


def _short(a: np.ndarray) -> str:
    if a.dtype.kind == "f":
        return np.format_float_positional(a.item(), precision=6, trim="-") if a.ndim == 0 else \
            np.array2string(np.asarray(a), precision=4, threshold=6)
    if a.ndim == 0:
        return repr(a.item())  # b'cat' and 'cat' stay told apart
    return np.array2string(np.asarray(a), threshold=6)


def _where(path: str) -> str:
    return f" at {path}" if path else ""


def _diff(mine: Any, ref: Any, path: str = "") -> str | None:
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


def _same_type(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype; or, where either side is plain Python values, the same kind."""
    if _kind(a) in ("strings", "bytes") and _kind(b) in ("strings", "bytes"):
        return True  # tf.string is bytes: text is compared as text
    if a.dtype == b.dtype:
        return True
    return (isinstance(a, Typed) or isinstance(b, Typed)) and _kind(a) == _kind(b)


def _type_diff(a: np.ndarray, b: np.ndarray, path: str) -> str:
    if _kind(a) == _kind(b):
        return f"dtype{_where(path)}: yours {a.dtype}, expected {b.dtype}"
    why = ""
    if {_kind(a), _kind(b)} == {"floats", "integers"}:
        why = " (a float is not an index or a count: cast, or check the computation)"
    elif {_kind(a), _kind(b)} & {"strings", "bytes"}:
        why = " (a name is not a number: map names to their indices, or back)"
    return (f"dtype{_where(path)}: yours {_kind(a)} ({a.dtype}), expected {_kind(b)} "
            f"({b.dtype}){why}")


def _diff_arrays(a: np.ndarray, b: np.ndarray, path: str) -> str | None:
    if not _same_type(a, b):
        return _type_diff(a, b, path)
    if a.shape != b.shape:
        flip = " (the same axes, swapped?)" if a.ndim == b.ndim and sorted(a.shape) == \
            sorted(b.shape) else ""
        return f"shape{_where(path)}: yours {a.shape}, expected {b.shape}{flip}"
    if _kind(a) in ("strings", "bytes"):
        if a.dtype.kind == b.dtype.kind == "S" and np.array_equal(a, b):
            return None  # the same bytes are the same text (decoding each costs more)
        a_cmp, b_cmp = as_text(np.asarray(a)), as_text(np.asarray(b))
        same = np.asarray(a_cmp == b_cmp)
    elif a.dtype.kind == "f" or b.dtype.kind == "f":
        same = np.isclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        same = np.asarray(np.asarray(a) == np.asarray(b))
    if np.all(same):
        return None
    if a.ndim == 0:
        return f"{path + ': ' if path else ''}yours {_short(a)}, expected {_short(b)}"
    index = tuple(int(i) for i in np.argwhere(~same)[0])
    swapped = ""
    if a.dtype.kind != "O" and np.array_equal(np.sort(np.asarray(a), axis=None),
                                              np.sort(np.asarray(b), axis=None)):
        swapped = " (the same values in another order inside it: swapped or sorted?)"
    return (f"{_where(path)[4:] or 'the array'}, index {index if len(index) > 1 else index[0]}: "
            f"yours {_short(a[index])}, expected {_short(b[index])}{swapped}")


def _scalars(answer: Any, reference: Any) -> Feedback:
    mine, ref = plain(answer), plain(reference)
    d = _diff(mine, ref)
    if d is None:
        return Feedback(True, [f"correct: {_short(mine)}, the reference's value."])
    return Feedback(False, [f"not yet: {d}."])


def compare(answer: Any, reference: Any, *, order: str = "same") -> Feedback:
    """Compare two datasets (or iterables, or two single values) and say what differs.

    ``order="any"``: the same elements (or rows) in any order are correct, for a question
    that asks for no order.
    """
    if order not in ORDERS:
        raise ValueError(f"compare(order={order!r}): use one of {ORDERS}")
    if is_scalar(reference) and is_scalar(answer):
        return _scalars(answer, reference)
    mine, ref, refused = _read(answer, reference)
    if refused is not None:  # a Feedback is falsy when it refuses
        return refused
    batched = is_batched(ref)
    if order == "any" and _same_multiset(mine, ref, batched):
        return Feedback(True, [f"correct: the reference's {len(ref)} elements, in an order "
                               "the question allows."])
    lines = []
    if len(mine) != len(ref):
        lines.append(f"yours has {len(mine)} elements, the reference {len(ref)}.")
    first = next(((i, d) for i, (a, b) in enumerate(zip(mine, ref, strict=False))
                  if (d := _diff(a, b))), None)
    structural = False
    if first:
        i, d = first
        structural = _structural(d)
        lines.append(f"element {i}: {d}." if structural else f"element {i} differs: {d}.")
    if not lines:
        return Feedback(True, [f"correct: {len(ref)} elements, each equal to the reference's, "
                               "in the same order."])
    lines[0] = "not yet: " + lines[0]
    if not structural:  # values of another type or shape: comparing rows would say nothing more
        lines += rows_line(mine, ref, batched)
    return Feedback(False, lines)


def _read(answer: Any, reference: Any) -> tuple[list, list, Feedback | None]:
    """Both answers' elements, or a refusal: no dataset, an error, endless, not batched."""
    wrong = not_elements(answer)
    if wrong:
        return [], [], Feedback(False, [f"not yet: {wrong}?" if "forget" in wrong
                                        else f"not yet: {wrong}."])
    ref, endless = elements(reference)
    if endless:
        raise ValueError(f"with these inputs the reference does not end ({endless}): "
                         "check with inputs that end (for example repeat=1, not None), so "
                         "the answers can be compared")
    try:
        mine, too_many = elements(answer, limit=row_count(ref) + 1)  # bounded by the reference
    except Exception as error:  # your dataset fails when read: your code's error, told so
        return [], ref, Feedback(False, [told_as_yours(error, "reading your dataset")])
    if too_many:
        return mine, ref, Feedback(False, [
            f"not yet: your dataset: {too_many}, the reference has {len(ref):,}; does it end? "
            "(repeat() without a count?)"])
    not_batched = unbatched(mine, ref) or batched_too(mine, ref)
    return mine, ref, Feedback(False, [not_batched]) if not_batched else None


def _structural(d: str) -> bool:
    """A type, a structure, or a shape beyond the batch axis differs: comparing rows would
    say nothing more."""
    if d.startswith("dtype") or " is " in d or "keys" in d:
        return True
    shapes = re.match(r"shape[^:]*: yours \(([^)]*)\), expected \(([^)]*)\)", d)
    return shapes is not None and shapes.group(1).split(",")[1:] != shapes.group(2).split(",")[1:]


def _same_multiset(mine: list, ref: list, batched: bool) -> bool:
    if next((d for a, b in zip(mine, ref, strict=False) if (d := _diff(a, b))),
            "").startswith("dtype"):
        return False  # the same values of another type are not the reference's
    try:
        return Counter(keys(mine, batched)) == Counter(keys(ref, batched))
    except (TypeError, ValueError, AttributeError):
        return False


#END
