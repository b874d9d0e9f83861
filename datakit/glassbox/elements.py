"""Elements as ``tf.data`` yields them, in plain NumPy, and the record of one emitted element.

A ``tf.data`` element is a tensor or a nested structure (tuple, dict) of
tensors; ``as_numpy_iterator()`` gives NumPy values in the same structure.
These functions build the same values from Python ones, the way
``tf.convert_to_tensor`` would, and take them apart (slice, stack, pad):

>>> as_tensor_value((1, [2.5, 3.0], "a"))
(np.int32(1), array([2.5, 3. ], dtype=float32), b'a')
>>> stack([np.array([1, 2]), np.array([3, 4])]).tolist()
[[1, 2], [3, 4]]
>>> pad(np.array([[1], [2]]), (3, 2), 0).tolist()
[[1, 0], [2, 0], [0, 0]]

:class:`Step` is what the glass box records for every element an op emits.
This module sits at the bottom of the import graph: it imports nothing from
the kit, nor TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Step", "stack", "call", "leaves", "pack", "pad"]


@dataclass
class Step:
    """One element emitted by one op."""

    value: Any
    #: Positions, in the op's input stream, of the elements this one came from.
    sources: tuple[int, ...]
    #: For ``repeat``: the pass over the input (0, 1, ...) it came from.
    epoch: int | None = None


def as_tensor_value(x: Any) -> Any:
    """Convert a Python/NumPy value the way ``tf.convert_to_tensor`` would.

    Tuples and dicts are structure (kept); lists become arrays; Python ints
    become int32, floats float32, str bytes, as in TensorFlow.
    """
    if isinstance(x, tuple):
        return tuple(as_tensor_value(v) for v in x)
    if isinstance(x, dict):
        return {k: as_tensor_value(v) for k, v in x.items()}
    if isinstance(x, np.ndarray) and x.dtype.kind not in "US":
        return x
    if isinstance(x, np.generic) and not isinstance(x, (np.str_, np.bytes_)):
        return x
    arr = np.asarray(x)
    if arr.dtype.kind in "US" or arr.dtype == object:
        return np.vectorize(to_bytes, otypes=[object])(arr) if arr.ndim else to_bytes(arr[()])
    if arr.dtype == np.float64 and not isinstance(x, np.ndarray):
        arr = arr.astype(np.float32)
    elif arr.dtype.kind == "i" and not isinstance(x, np.ndarray):
        arr = arr.astype(np.int32)
    return arr[()] if arr.ndim == 0 else arr


def to_bytes(v: Any) -> bytes:
    return v.encode() if isinstance(v, str) else bytes(v)


def structure_len(x: Any) -> int:
    if isinstance(x, tuple):
        lengths = {structure_len(v) for v in x}
    elif isinstance(x, dict):
        lengths = {structure_len(v) for v in x.values()}
    else:
        if np.ndim(x) == 0:
            raise ValueError(
                "from_tensor_slices() slices along the first axis, but got a scalar "
                f"({x!r}); wrap it in a list, or use Dataset.from_tensors()."
            )
        return len(x)
    if len(lengths) != 1:
        raise ValueError(
            "from_tensor_slices() needs every component to have the same first dimension, "
            f"got lengths {sorted(lengths)}; slice arrays of equal length."
        )
    return lengths.pop()


def slice_element(x: Any, i: int) -> Any:
    if isinstance(x, tuple):
        return tuple(slice_element(v, i) for v in x)
    if isinstance(x, dict):
        return {k: slice_element(v, i) for k, v in x.items()}
    return x[i]


def stack(items: list[Any]) -> Any:
    first = items[0]
    if isinstance(first, tuple):
        return tuple(stack([it[j] for it in items]) for j in range(len(first)))
    if isinstance(first, dict):
        return {k: stack([it[k] for it in items]) for k in first}
    if isinstance(first, bytes) or (isinstance(first, np.ndarray) and first.dtype == object):
        out = np.empty((len(items),) + np.shape(first), dtype=object)
        for j, it in enumerate(items):
            out[j] = it
        return out
    shapes = {np.shape(it) for it in items}
    if len(shapes) > 1:
        raise ValueError(
            f"Cannot batch elements with different shapes {sorted(shapes)}: batch() stacks "
            "equal shapes only. Batch with drop_remainder=True first, or pad (padded_batch)."
        )
    return np.stack(items)


def call(fn: Callable, element: Any) -> Any:
    """Call ``fn`` the way tf.data does: a tuple element is unpacked into arguments."""
    return fn(*element) if isinstance(element, tuple) else fn(element)


def pack(structure: Any, flat: list[Any]) -> Any:
    """Rebuild ``structure`` (tuples, dicts, leaves) from ``flat`` values in :func:`leaves` order.

    >>> pack(("a", {"y": "b", "x": "c"}), [1, 2, 3])
    (1, {'y': 3, 'x': 2})
    """
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, tuple):
            return tuple(build(v) for v in s)
        if isinstance(s, dict):
            done = {k: build(s[k]) for k in sorted(s)}
            return {k: done[k] for k in s}
        return next(it)

    return build(structure)


def function_name(fn: Callable) -> str:
    """A function's name for a readable chain (``lambda`` for anonymous ones)."""
    name = getattr(fn, "__name__", type(fn).__name__)
    return "lambda" if name == "<lambda>" else name


def map_structure(fn: Callable, *elements: Any) -> Any:
    """Apply ``fn`` leaf by leaf to elements of the same structure (tuples and dicts kept).

    >>> map_structure(lambda a, b: a + b, (1, {"k": 2}), (10, {"k": 20}))
    (11, {'k': 22})
    """
    first = elements[0]
    if isinstance(first, tuple):
        return tuple(map_structure(fn, *parts) for parts in zip(*elements, strict=True))
    if isinstance(first, dict):
        return {k: map_structure(fn, *(e[k] for e in elements)) for k in first}
    return fn(*elements)


def leaves(x: Any) -> list[Any]:
    """The leaves of a structure, in order (dict keys sorted, as ``tf.nest`` does)."""
    if isinstance(x, tuple):
        return [leaf for v in x for leaf in leaves(v)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in leaves(x[k])]
    return [x]


def pad(value: Any, shape: tuple[int, ...], padding_value: Any) -> np.ndarray:
    """``value`` padded at the end of each axis with ``padding_value`` up to ``shape``.

    Raises:
        ValueError: the value has another rank, or is larger than ``shape`` on an axis.

    >>> pad(np.array([b"a"], dtype=object), (2,), b"").tolist()
    [b'a', b'']
    >>> pad(np.array([1, 2, 3]), (2,), 0)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    ValueError: cannot pad an element of shape (3,) to (2,): it is larger; give padded_shapes at
    least the longest element's size (or None: the batch's longest).
    """
    arr = np.asarray(value)
    if arr.ndim != len(shape) or any(a > s for a, s in zip(arr.shape, shape, strict=True)):
        raise ValueError(
            f"cannot pad an element of shape {arr.shape} to {tuple(shape)}: "
            + ("it is larger; give padded_shapes at least the longest element's size "
               "(or None: the batch's longest)." if arr.ndim == len(shape)
               else "padded_shapes must have the element's rank."))
    out = np.full(shape, padding_value, dtype=arr.dtype)
    out[tuple(slice(0, n) for n in arr.shape)] = arr
    return out


def ragged_stack(rows: list[Any]) -> np.ndarray:
    """Rows of different lengths as one batch, the way a ``RaggedTensor``'s ``numpy()`` shows it.

    Equal shapes: an ordinary stacked array. Otherwise a 1-D object array of rows.

    >>> ragged_stack([np.array([1, 2]), np.array([3])])
    array([array([1, 2]), array([3])], dtype=object)
    >>> ragged_stack([np.array([1]), np.array([3])]).tolist()
    [[1], [3]]
    """
    if len({np.shape(r) for r in rows}) == 1:
        return stack(rows)
    out = np.empty(len(rows), dtype=object)
    for i, r in enumerate(rows):
        out[i] = r
    return out
