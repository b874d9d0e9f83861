"""Variable-length data in the glass box: padded and ragged batches, unbatch, windows, flat_map.

The functions here build the ops that :class:`datakit.glassbox.Dataset`'s
methods of these names chain, with ``tf.data``'s arguments and defaults; the
algorithms are plain functions (:func:`pad_batch`, :func:`windows`):

>>> pad_batch([np.array([1, 2, 3]), np.array([4])]).tolist()
[[1, 2, 3], [4, 0, 0]]
>>> [list(w) for w in window_positions(7, 3, shift=2)]
[[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]

This module imports only :mod:`datakit.core.arguments` and the glass box's
bottom modules (elements, recording, transformations), and no TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from datakit.core.arguments import check_count
from datakit.glassbox.elements import (
    Step,
    call,
    function_name,
    leaves,
    map_structure,
    pack,
    pad,
    ragged_stack,
    slice_element,
    stack,
)
from datakit.glassbox.recording import (
    Op,
    Parent,
    Recorder,
    check_callable,
    check_name,
    warn_ignored,
)
from datakit.glassbox.transformations import batcher

__all__ = ["windows", "padded_batch", "ragged_batch", "unbatch", "window", "flat_map"]


def _part(spec: Any, key: Any, element: Any) -> Any:
    """The part of ``padded_shapes`` / ``padding_values`` for one component of ``element``."""
    if not isinstance(spec, (tuple, dict)) or not isinstance(element, (tuple, dict)):
        return spec
    return spec[key]


def pad_batch(items: list[Any], padded_shapes: Any = None, padding_values: Any = None) -> Any:
    """Stack ``items``, each component padded to ``padded_shapes`` (None: the batch's longest).

    ``padding_values`` default to 0 (``b""`` for strings); one value for a
    structure pads every component with it.

    >>> pad_batch([(np.array([1]), np.int64(7)), (np.array([2, 3]), np.int64(8))], ([3], []), -1)
    (array([[ 1, -1, -1],
           [ 2,  3, -1]]), array([7, 8]))
    """
    first = items[0]
    if isinstance(first, (tuple, dict)):
        keys = range(len(first)) if isinstance(first, tuple) else list(first)
        parts = {k: pad_batch([it[k] for it in items], _part(padded_shapes, k, first),
                              _part(padding_values, k, first)) for k in keys}
        return tuple(parts.values()) if isinstance(first, tuple) else parts
    arrays = [np.asarray(it) for it in items]
    ranks = {a.ndim for a in arrays}
    if len(ranks) != 1:
        raise ValueError(f"padded_batch() needs elements of one rank, got ranks {sorted(ranks)}.")
    rank = ranks.pop()
    want = [None] * rank if padded_shapes is None else list(padded_shapes)
    if len(want) != rank:
        raise ValueError(f"padded_shapes={padded_shapes!r} has rank {len(want)}, the elements "
                         f"have rank {rank}: give one size (or None) per axis.")
    target = tuple(max(a.shape[d] for a in arrays) if w is None or w == -1 else int(w)
                   for d, w in enumerate(want))
    value = padding_values
    if value is None:
        value = b"" if arrays[0].dtype == object else 0
    return stack([pad(a, target, value) for a in arrays])


def ragged_batch_of(items: list[Any]) -> Any:
    """Batch elements of different lengths, component by component (see :func:`ragged_stack`)."""
    return map_structure(lambda *rows: ragged_stack([np.asarray(r) for r in rows]), *items)


def windows(values: Iterable[Any], size: int, shift: int, stride: int,
            drop_remainder: bool) -> Iterator[tuple[list[int], list[Any]]]:
    """``(positions, elements)`` of each window, streaming (an endless input is fine).

    Window ``k`` holds the inputs at ``k * shift + j * stride`` for ``j < size``.
    """
    buf: list[tuple[int, Any]] = []
    skip = 0
    span = (size - 1) * stride + 1
    for pos, x in enumerate(values):
        if skip:
            skip -= 1
            continue
        buf.append((pos, x))
        if len(buf) == span:
            chosen = buf[::stride][:size]
            yield [p for p, _ in chosen], [v for _, v in chosen]
            skip = max(0, shift - len(buf))
            buf = buf[shift:]
    while buf and not drop_remainder:
        chosen = buf[::stride][:size]
        yield [p for p, _ in chosen], [v for _, v in chosen]
        buf = buf[shift:]


def window_positions(n: int, size: int, shift: int | None = None, stride: int = 1,
                     drop_remainder: bool = False) -> list[list[int]]:
    """The input positions in each window of ``range(n).window(...)``.

    >>> window_positions(7, 3, shift=2, stride=2)
    [[0, 2, 4], [2, 4, 6], [4, 6], [6]]
    >>> window_positions(7, 3, shift=2, stride=2, drop_remainder=True)
    [[0, 2, 4], [2, 4, 6]]
    """
    return [p for p, _ in windows(range(n), size, shift or size, stride, drop_remainder)]


def padded_batch(batch_size: int, padded_shapes: Any = None, padding_values: Any = None,
                 drop_remainder: bool = False, name: str | None = None) -> Op:
    """``batch`` that pads each component to ``padded_shapes`` (None: the batch's longest)."""
    size = check_count("batch_size", batch_size)
    check_name("padded_batch", name)

    def make(buf: list[Any]) -> Any:
        return pad_batch(buf, padded_shapes, padding_values)

    args = dict(batch_size=size, padded_shapes=padded_shapes, padding_values=padding_values,
                drop_remainder=bool(drop_remainder))
    return Op(batcher(size, drop_remainder, make), _name("padded_batch", args), "padded_batch",
              args)


def ragged_batch(batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = np.int64,
                 name: str | None = None) -> Op:
    """Batch elements of different lengths without padding (rows of a ``RaggedTensor``).

    ``as_numpy_iterator()`` shows no row splits, so ``row_splits_dtype`` only warns here.
    """
    size = check_count("batch_size", batch_size)
    if np.dtype(getattr(row_splits_dtype, "as_numpy_dtype", row_splits_dtype)) != np.int64:
        warn_ignored("ragged_batch", "row_splits_dtype", row_splits_dtype, "its rows show no "
                     "row splits: as_numpy_iterator() gives the rows", stacklevel=3)
    check_name("ragged_batch", name)
    args = dict(batch_size=size, drop_remainder=bool(drop_remainder))
    return Op(batcher(size, drop_remainder, ragged_batch_of), _name("ragged_batch", args),
              "ragged_batch", args)


def unbatch(name: str | None = None) -> Op:
    """Each element split along its first axis: the inverse of ``batch``."""
    check_name("unbatch", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for pos, x in enumerate(parent()):
            lengths = {len(leaf) if np.ndim(leaf) else None for leaf in leaves(x)}
            length = next(iter(lengths), None)  # None too when x has no components
            if length is None or len(lengths) != 1:
                raise ValueError(
                    "unbatch() needs every component to have a first axis of one length, "
                    f"got {sorted(lengths, key=str)}; batch first, or unbatch only the "
                    "batched components (map).")
            for i in range(length):
                y = slice_element(x, i)
                rec.append(Step(y, (pos,)))
                yield y

    return Op(run, "unbatch()", "unbatch")


def window(make_dataset: Callable[..., Any], size: int, shift: int | None = None,
           stride: int = 1, drop_remainder: bool = False, name: str | None = None) -> Op:
    """Windows of ``size`` inputs, each made a dataset by ``make_dataset(values, name=...)``."""
    n = check_count("size", size)
    step = n if shift is None else check_count("shift", shift)
    by = check_count("stride", stride)
    check_name("window", name)

    def as_datasets(values: list[Any]) -> Any:
        flat = [make_dataset(list(col), name=f"<window of {len(values)}>")
                for col in zip(*[leaves(v) for v in values], strict=True)]
        return pack(values[0], flat)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for positions, values in windows(parent(), n, step, by, drop_remainder):
            w = as_datasets(values)
            rec.append(Step(w, tuple(positions)))
            yield w

    args = dict(size=n, shift=step, stride=by, drop_remainder=bool(drop_remainder))
    return Op(run, _name("window", args, first="size"), "window", args)


def flat_map(dataset_type: type[Iterable[Any]], map_func: Callable, name: str | None = None) -> Op:
    """Each element mapped to a ``dataset_type`` dataset, those chained one after another."""
    check_callable("flat_map", "map_func", map_func)
    check_name("flat_map", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for pos, x in enumerate(parent()):
            inner = call(map_func, x)
            if not isinstance(inner, dataset_type):
                raise TypeError("flat_map() expects map_func to return a Dataset, got "
                                f"{type(inner).__name__}; use map() for plain values.")
            for y in inner:
                rec.append(Step(y, (pos,)))
                yield y

    return Op(run, f"flat_map({function_name(map_func)})", "flat_map")


def _name(method: str, args: dict[str, Any], first: str = "batch_size") -> str:
    """``method(first, other=...)`` showing only the arguments that differ from their default."""
    defaults = {"padded_shapes": None, "padding_values": None, "drop_remainder": False,
                "stride": 1}
    shown = [str(args[first])] + [f"{k}={v!r}" for k, v in args.items()
                                  if k != first and defaults.get(k, object()) != v
                                  and not (k == "shift" and v == args[first])]
    return f"{method}({', '.join(shown)})"
