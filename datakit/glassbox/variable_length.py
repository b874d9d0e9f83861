"""Variable-length data in the glass box: ``padded_batch``, ``ragged_batch``, ``unbatch``, ``window``, ``flat_map``.

The methods of :class:`VariableLengthOps` become methods of
:class:`datakit.glassbox.Dataset`, with ``tf.data``'s names, arguments and
defaults; the algorithms are plain functions here (:func:`pad_batch`,
:func:`windows`):

>>> pad_batch([np.array([1, 2, 3]), np.array([4])]).tolist()
[[1, 2, 3], [4, 0, 0]]
>>> [list(w) for w in window_positions(7, 3, shift=2)]
[[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]

This module imports nothing from the kit but the bottom modules
(:mod:`datakit.glassbox.elements`, :mod:`datakit.core.arguments`), nor TensorFlow.
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

__all__ = ["VariableLengthOps", "batcher", "pad_batch", "ragged_batch_of", "window_positions", "windows"]


def _part(spec: Any, key: Any, element: Any) -> Any:
    """The part of ``padded_shapes`` / ``padding_values`` for one component of ``element``."""
    if spec is None or not isinstance(spec, (tuple, dict)) or not isinstance(element, (tuple, dict)):
        return spec
    return spec[key]


def pad_batch(items: list[Any], padded_shapes: Any = None, padding_values: Any = None) -> Any:
    """Stack ``items`` after padding each component to ``padded_shapes`` (None: the batch's longest).

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


class VariableLengthOps:
    """The variable-length methods of ``glassbox.Dataset`` (mixed into it)."""

    def padded_batch(self, batch_size: int, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False, name: str | None = None):
        """Like ``batch``, padding each component to ``padded_shapes`` (None: the batch's longest).

        >>> from datakit.glassbox.dataset import Dataset
        >>> ds = Dataset.range(1, 4).map(lambda n: np.arange(n))
        >>> [b.tolist() for b in ds.padded_batch(2)]
        [[[0, 0], [0, 1]], [[0, 1, 2]]]
        >>> [b.tolist() for b in ds.padded_batch(3, padded_shapes=[4], padding_values=-1)]
        [[[0, -1, -1, -1], [0, 1, -1, -1], [0, 1, 2, -1]]]
        """
        size = check_count("batch_size", batch_size)

        def make(buf):
            return pad_batch(buf, padded_shapes, padding_values)

        args = dict(batch_size=size, padded_shapes=padded_shapes, padding_values=padding_values,
                    drop_remainder=bool(drop_remainder))
        return self._chain(batcher(size, drop_remainder, make), _name("padded_batch", args), **args)

    def ragged_batch(self, batch_size: int, drop_remainder: bool = False,
                     row_splits_dtype: Any = np.int64, name: str | None = None):
        """Batch elements of different lengths without padding (rows of a ``RaggedTensor``).

        Iterating gives what tf.data's ``as_numpy_iterator()`` gives: an
        ordinary array when the rows happen to have one length, else an
        object array of rows.

        >>> from datakit.glassbox.dataset import Dataset
        >>> [b.tolist() for b in Dataset.range(4).map(lambda n: np.arange(n)).ragged_batch(2)]
        [[array([], dtype=int64), array([0])], [array([0, 1]), array([0, 1, 2])]]
        """
        size = check_count("batch_size", batch_size)
        args = dict(batch_size=size, drop_remainder=bool(drop_remainder))
        return self._chain(batcher(size, drop_remainder, ragged_batch_of),
                           _name("ragged_batch", args), **args)

    def unbatch(self, name: str | None = None):
        """Split each element along its first axis: the inverse of ``batch``.

        >>> from datakit.glassbox.dataset import Dataset
        >>> [int(x) for x in Dataset.range(5).batch(2).unbatch()]
        [0, 1, 2, 3, 4]
        """

        def op(parent, rec):
            for pos, x in enumerate(parent()):
                lengths = {len(leaf) if np.ndim(leaf) else None for leaf in leaves(x)}
                if None in lengths or len(lengths) != 1:
                    raise ValueError(
                        "unbatch() needs every component to have a first axis of one length, "
                        f"got {sorted(lengths, key=str)}; batch first, or unbatch only the "
                        "batched components (map).")
                for i in range(lengths.pop()):
                    y = slice_element(x, i)
                    if rec is not None:
                        rec.append(Step(y, (pos,)))
                    yield y

        return self._chain(op, "unbatch()")

    def window(self, size: int, shift: int | None = None, stride: int = 1,
               drop_remainder: bool = False, name: str | None = None):
        """A dataset of windows, each a *dataset* of ``size`` elements (tuples: a tuple of datasets).

        A window starts every ``shift`` inputs (default ``size``) and takes
        every ``stride``-th one; the last windows are shorter unless
        ``drop_remainder=True``. Flatten with ``flat_map(lambda w: w.batch(size))``.

        >>> from datakit.glassbox.dataset import Dataset
        >>> ds = Dataset.range(5).window(3, shift=1, drop_remainder=True)
        >>> [[int(x) for x in w] for w in ds]
        [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
        >>> [b.tolist() for b in ds.flat_map(lambda w: w.batch(3))]
        [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
        """
        n = check_count("size", size)
        step = n if shift is None else check_count("shift", shift)
        by = check_count("stride", stride)
        from_values = type(self).from_iterable

        def as_datasets(values: list[Any]) -> Any:
            flat = [from_values(list(col), name=f"<window of {len(values)}>")
                    for col in zip(*[leaves(v) for v in values])]
            return pack(values[0], flat)

        def op(parent, rec):
            for positions, values in windows(parent(), n, step, by, drop_remainder):
                w = as_datasets(values)
                if rec is not None:
                    rec.append(Step(w, tuple(positions)))
                yield w

        args = dict(size=n, shift=step, stride=by, drop_remainder=bool(drop_remainder))
        return self._chain(op, _name("window", args, first="size"), **args)

    def flat_map(self, map_func: Callable, name: str | None = None):
        """Map each element to a dataset and chain those datasets one after another.

        >>> from datakit.glassbox.dataset import Dataset
        >>> [int(x) for x in Dataset.range(1, 4).flat_map(lambda n: Dataset.range(n))]
        [0, 0, 1, 0, 1, 2]
        """
        dataset_type = type(self)

        def op(parent, rec):
            for pos, x in enumerate(parent()):
                inner = call(map_func, x)
                if not isinstance(inner, dataset_type):
                    raise TypeError("flat_map() expects map_func to return a Dataset, got "
                                    f"{type(inner).__name__}; use map() for plain values.")
                for y in inner:
                    if rec is not None:
                        rec.append(Step(y, (pos,)))
                    yield y

        return self._chain(op, f"flat_map({function_name(map_func)})")


def batcher(size: int, drop_remainder: bool, make: Callable[[list[Any]], Any]):
    """The op of a batch-like method: groups of ``size`` inputs, made into one by ``make``."""

    def op(parent, rec):
        buf: list[Any] = []
        start = 0
        for pos, x in enumerate(parent()):
            if not buf:
                start = pos
            buf.append(x)
            if len(buf) == size:
                out = make(buf)
                if rec is not None:
                    rec.append(Step(out, tuple(range(start, start + size))))
                buf = []
                yield out
        if buf and not drop_remainder:
            out = make(buf)
            if rec is not None:
                rec.append(Step(out, tuple(range(start, start + len(buf)))))
            yield out

    return op


def _name(method: str, args: dict[str, Any], first: str = "batch_size") -> str:
    """``method(first, other=...)`` showing only the arguments that differ from their default."""
    defaults = {"padded_shapes": None, "padding_values": None, "drop_remainder": False,
                "stride": 1}
    shown = [str(args[first])] + [f"{k}={v!r}" for k, v in args.items()
                                  if k != first and defaults.get(k, object()) != v
                                  and not (k == "shift" and v == args[first])]
    return f"{method}({', '.join(shown)})"
