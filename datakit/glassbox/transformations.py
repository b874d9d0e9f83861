"""The glass box's one-input transformations: repeat, batch, map, filter, take, skip, interleave.

The ops of ``repeat``, ``batch``, ``map``, ``filter``, ``take``, ``skip``,
``enumerate`` and ``interleave``.

Each function checks its arguments as ``tf.data`` does and returns the
:class:`~datakit.glassbox.recording.Op` that :class:`datakit.glassbox.Dataset`
chains; a step names the input positions its element came from:

>>> from datakit.glassbox.recording import Recorder
>>> op, rec = batch(2), Recorder()
>>> [b.tolist() for b in op.run(lambda: iter([1, 2, 3]), rec)], [s.sources for s in rec]
([[1, 2], [3]], [(0, 1), (2,)])
>>> op.kind, op.args
('batch', {'batch_size': 2, 'drop_remainder': False})

The interleave cycle itself lives in :mod:`datakit.glassbox.interleave_cycle`.
This module imports only the glass box's bottom modules, and no TensorFlow.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from datakit.core.arguments import check_count, check_int, interleave_lengths
from datakit.glassbox.elements import Step, as_tensor_value, call, function_name, stack
from datakit.glassbox.interleave_cycle import cycle_steps
from datakit.glassbox.recording import (
    Op,
    OpRun,
    Parent,
    Recorder,
    check_callable,
    check_deterministic,
    check_name,
)

__all__ = ["repeat", "batch", "take", "skip", "interleave"]


def repeat(count: int | None = None, name: str | None = None) -> Op:
    """The input ``count`` times (``None`` or -1: forever); an empty input stays empty."""
    n = -1 if count is None else check_int("count", count)
    check_name("repeat", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for epoch in itertools.count():
            if n >= 0 and epoch >= n:
                return
            empty = True
            for pos, x in enumerate(parent()):
                empty = False
                rec.append(Step(x, (pos,), epoch))
                yield x
            if empty:
                return

    return Op(run, "repeat()" if count is None else f"repeat({n})", "repeat", dict(count=n))


def batcher(size: int, drop_remainder: bool, make: Callable[[list[Any]], Any]) -> OpRun:
    """The generator of a batch-like op: groups of ``size`` inputs, made into one by ``make``."""

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        buf: list[Any] = []
        start = 0
        for pos, x in enumerate(parent()):
            if not buf:
                start = pos
            buf.append(x)
            if len(buf) == size:
                out = make(buf)
                rec.append(Step(out, tuple(range(start, start + size))))
                buf = []
                yield out
        if buf and not drop_remainder:
            out = make(buf)
            rec.append(Step(out, tuple(range(start, start + len(buf)))))
            yield out

    return run


def batch(batch_size: int, drop_remainder: bool = False, num_parallel_calls: int | None = None,
          deterministic: bool | None = None, name: str | None = None) -> Op:
    """``batch_size`` consecutive elements stacked into one; a shorter last one unless dropped.

    >>> batch(0)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    ValueError: batch_size=0 is invalid: a batch must hold at least one element, so pass batch_size
    >= 1.
    """
    size = check_count("batch_size", batch_size, fix="a batch must hold at least one "
                       "element, so pass batch_size >= 1")
    check_count("num_parallel_calls", num_parallel_calls, none=True, autotune=True)
    check_deterministic("batch", deterministic, num_parallel_calls)
    check_name("batch", name)
    extra = ", drop_remainder=True" if drop_remainder else ""
    return Op(batcher(size, drop_remainder, stack), f"batch({size}{extra})", "batch",
              dict(batch_size=size, drop_remainder=bool(drop_remainder)))


def map_op(map_func: Callable, num_parallel_calls: int | None = None,
           deterministic: bool | None = None, name: str | None = None) -> Op:
    """``map_func`` applied to each element (a tuple is unpacked into arguments)."""
    check_callable("map", "map_func", map_func)
    check_count("num_parallel_calls", num_parallel_calls, none=True, autotune=True)
    check_deterministic("map", deterministic, num_parallel_calls)
    check_name("map", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for pos, x in enumerate(parent()):
            y = call(map_func, x)
            if y is None:
                raise TypeError(f"map_func {function_name(map_func)} returned None for element "
                                f"{pos}: it must return a value (a missing `return`?), "
                                "as tf.data requires.")
            y = as_tensor_value(y)
            rec.append(Step(y, (pos,)))
            yield y

    extra = f", num_parallel_calls={num_parallel_calls}" if num_parallel_calls else ""
    return Op(run, f"map({function_name(map_func)}{extra})", "map")


def filter_op(predicate: Callable, name: str | None = None) -> Op:
    """The elements for which ``predicate`` returns a scalar ``True``."""
    check_callable("filter", "predicate", predicate)
    check_name("filter", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for pos, x in enumerate(parent()):
            keep = np.asarray(call(predicate, x))
            if keep.shape != () or keep.dtype != bool:
                raise ValueError("filter() predicate must return a scalar bool, got "
                                 f"{keep.dtype} of shape {keep.shape}; compare, e.g. `x > 0`.")
            if keep:
                rec.append(Step(x, (pos,)))
                yield x

    return Op(run, f"filter({function_name(predicate)})", "filter")


def take(count: int, name: str | None = None) -> Op:
    """The first ``count`` elements (-1: all of them); it reads no input past them."""
    n = check_int("count", count)
    check_name("take", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        if n == 0:
            return
        for pos, x in enumerate(parent()):
            rec.append(Step(x, (pos,)))
            yield x
            if n > 0 and pos + 1 >= n:
                return

    return Op(run, f"take({n})", "take", dict(count=n))


def skip(count: int, name: str | None = None) -> Op:
    """Everything after the first ``count`` elements (-1: skip all)."""
    n = check_int("count", count)
    check_name("skip", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for pos, x in enumerate(parent()):
            if n < 0 or pos < n:
                continue
            rec.append(Step(x, (pos,)))
            yield x

    return Op(run, f"skip({n})", "skip", dict(count=n))


def enumerate_op(start: int = 0, name: str | None = None) -> Op:
    """Each element paired with its index, ``(index, element)``, index int64."""
    first = check_int("start", start)
    check_name("enumerate", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for pos, x in enumerate(parent()):
            y = (np.int64(first + pos), x)
            rec.append(Step(y, (pos,)))
            yield y

    return Op(run, f"enumerate({first})" if first else "enumerate()", "enumerate",
              dict(start=first))


def interleave(map_func: Callable, cycle_length: int | None = None,
               block_length: int | None = None, num_parallel_calls: int | None = None,
               deterministic: bool | None = None, name: str | None = None,
               dataset_type: type | None = None) -> Op:
    """``cycle_length`` datasets made by ``map_func``, read in turn ``block_length`` at a time.

    With ``dataset_type``, ``map_func`` must return one (as tf.data requires a Dataset).
    """
    check_callable("interleave", "map_func", map_func)
    cycle, block, _ = interleave_lengths(cycle_length, block_length, num_parallel_calls)
    check_deterministic("interleave", deterministic, num_parallel_calls)
    check_name("interleave", name)

    def make(x: Any) -> Any:
        inner = call(map_func, x)
        if dataset_type is not None and not isinstance(inner, dataset_type):
            raise TypeError("interleave() expects map_func to return a Dataset, got "
                            f"{type(inner).__name__}; wrap the values, e.g. "
                            "Dataset.from_tensor_slices(...), as tf.data requires.")
        return inner

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for s in cycle_steps(parent(), make, cycle, block):
            rec.append(Step(s.value, (s.input,)))
            yield s.value

    shown = [function_name(map_func)]
    shown += [f"cycle_length={cycle_length}"] if cycle_length is not None else []
    shown += [f"block_length={block}"] if block != 1 else []
    return Op(run, f"interleave({', '.join(shown)})", "interleave",
              dict(cycle_length=cycle, block_length=block))
