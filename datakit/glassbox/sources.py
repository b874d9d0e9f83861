"""The glass box's sources: ``range``, ``from_tensor_slices``, ``from_iterable``, ``list_files``.

Each function checks its arguments as ``tf.data`` does and returns the
:class:`~datakit.glassbox.recording.Op` that :class:`datakit.glassbox.Dataset`
starts a chain with; a source's step names the position it emitted:

>>> from datakit.glassbox.recording import NO_RECORDER
>>> op = range_op(2, 9, 3)
>>> op.name, op.kind, op.args
('range(2, 9, 3)', 'range', {'start': 2, 'stop': 9, 'step': 3, 'output_type': 'int64'})
>>> [int(x) for x in op.run(None, NO_RECORDER)]
[2, 5, 8]

This module imports only the glass box's bottom modules, and no TensorFlow.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from datakit.core.arguments import check_int, check_seed
from datakit.glassbox.elements import Step, as_tensor_value, slice_element, structure_len
from datakit.glassbox.recording import Op, OpRun, Recorder, check_name

__all__ = ["from_tensor_slices", "from_iterable", "list_files"]


def range_op(*args: int, output_type: Any = np.int64, name: str | None = None) -> Op:
    """``range(stop)`` or ``range(start, stop[, step])``, as ``output_type`` values."""
    if not 1 <= len(args) <= 3:
        raise TypeError("range() takes 1 to 3 arguments: stop, or start, stop[, step]")
    for a in args:
        check_int("range() argument", a)
    if len(args) == 3 and args[2] == 0:
        raise ValueError("range() step must not be zero")
    check_name("range", name)
    dtype = np.dtype(getattr(output_type, "as_numpy_dtype", output_type))
    values = range(*args)

    def run(_parent: Callable[[], Iterator[Any]] | None, rec: Recorder) -> Iterator[Any]:
        for i, v in enumerate(values):
            x = dtype.type(v)
            rec.append(Step(x, (i,)))
            yield x

    return Op(run, "range(" + ", ".join(str(a) for a in args) + ")", "range",
              dict(start=values.start, stop=values.stop, step=values.step,
                   output_type=dtype.name))


def _positions(n: int, value: Callable[[int], Any]) -> OpRun:
    """The generator that emits ``value(i)`` for ``i < n``, each at its position."""

    def run(_parent: Callable[[], Iterator[Any]] | None, rec: Recorder) -> Iterator[Any]:
        for i in range(n):
            x = value(i)
            rec.append(Step(x, (i,)))
            yield x

    return run


def from_tensor_slices(tensors: Any, name: str | None = None) -> Op:
    """One element per row; tuples and dicts are structure (each component is sliced)."""
    check_name("from_tensor_slices", name)
    try:
        data = as_tensor_value(tensors)
    except ValueError as e:  # NumPy's "inhomogeneous shape": rows of several lengths
        if "inhomogeneous" not in str(e):
            raise
        raise ValueError("from_tensor_slices(): tensors holds rows of different lengths "
                         "(ragged), which one tensor cannot hold: pad them to one length, or "
                         "slice a tf.ragged.constant(...) in tf.data") from None
    n = structure_len(data)
    return Op(_positions(n, lambda i: slice_element(data, i)), f"from_tensor_slices(<{n} rows>)",
              "from_tensor_slices", dict(tensors=data))


def from_iterable(items: Iterable[Any], name: str | None = None) -> Op:
    """The values of ``items``, converted as ``tf.data`` would; ``name`` is the display name."""
    values = [as_tensor_value(x) for x in items]
    return Op(_positions(len(values), values.__getitem__),
              name or f"from_iterable(<{len(values)} items>)", "from_iterable", dict(items=values))


def list_files(file_pattern: str | list[str], shuffle: bool | None = None,
               seed: int | None = None, name: str | None = None) -> Op:
    """The names matching ``file_pattern`` (a glob or a list), as bytes; shuffled by default.

    >>> list_files("/no/such/folder/*.csv")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    FileNotFoundError: No files matched pattern: /no/such/folder/*.csv; check the folder and the
    pattern (tf.data raises InvalidArgumentError here).
    """
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    patterns = [p.decode() if isinstance(p, bytes) else str(p) for p in patterns]
    names = sorted(n for p in patterns for n in glob.glob(p))
    if not names:
        raise FileNotFoundError(
            f"No files matched pattern: {', '.join(patterns)}; check the folder and the "
            "pattern (tf.data raises InvalidArgumentError here).")
    seed = check_seed(seed)
    check_name("list_files", name)
    files = [n.encode() for n in names]
    rng = np.random.default_rng(None if seed is None else seed % 2**64)
    shuffled = shuffle is None or bool(shuffle)

    def run(_parent: Callable[[], Iterator[Any]] | None, rec: Recorder) -> Iterator[Any]:
        order = rng.permutation(len(files)) if shuffled else range(len(files))
        for j in order:
            rec.append(Step(files[j], (int(j),)))
            yield files[j]

    extra = ", shuffle=False" if shuffle is False else ("" if seed is None else f", seed={seed}")
    return Op(run, f"list_files({file_pattern!r}{extra})", "list_files",
              dict(file_pattern=file_pattern, shuffle=shuffled, seed=seed))

