"""A pure-Python twin of ``tf.data.Dataset`` that shows what each op does.

``glassbox.Dataset`` has the methods the course teaches, with the names,
arguments and semantics of ``tf.data.Dataset``. Iterating it yields what
``tf.data``'s ``as_numpy_iterator()`` yields for the same pipeline:

>>> ds = Dataset.range(10).repeat(3).batch(7)
>>> ds
Dataset.range(10).repeat(3).batch(7)
>>> [b.tolist() for b in ds]
[[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 0, 1, 2, 3], [4, 5, 6, 7, 8, 9, 0], [1, 2, 3, 4, 5, 6, 7], [8, 9]]

Unlike ``tf.data`` it can also tell what each op did. :meth:`Dataset.trace`
runs the chain once and returns, for every op, each element it emitted with
the positions of the input elements it was made from (and, for ``repeat``,
the epoch):

>>> ops = Dataset.range(3).repeat(2).batch(4).trace()
>>> [op.name for op in ops]
['range(3)', 'repeat(2)', 'batch(4)']
>>> [s.epoch for s in ops[1].steps]
[0, 0, 0, 1, 1, 1]
>>> [s.sources for s in ops[2].steps]
[(0, 1, 2, 3), (4, 5)]

Each trace also tells which op it is and with which arguments, so tools
never parse the display name:

>>> ops[2].kind, ops[2].args
('batch', {'batch_size': 4, 'drop_remainder': False})

Ops whose algorithm is a lesson of its own (the shuffle buffer, the
interleave cycle) live in bottom modules (:mod:`datakit.glassbox.shuffle_buffer`,
:mod:`datakit.glassbox.interleave_cycle`, argument rules in :mod:`datakit.core.arguments`)
that this chain imports; it loads neither TensorFlow nor Matplotlib. The
variable-length methods (``padded_batch``, ``ragged_batch``, ``unbatch``,
``window``, ``flat_map``) come from :mod:`datakit.glassbox.variable_length`, the
source-combining ones (``zip``, ``concatenate``, ``sample_from_datasets``,
``choose_from_datasets``, ``cache``) from :mod:`datakit.glassbox.combining`; element
values (NumPy, as ``as_numpy_iterator()`` gives them) from :mod:`datakit.glassbox.elements`.
"""

from __future__ import annotations

import glob
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from datakit.core.arguments import AUTOTUNE, check_count, check_int, interleave_lengths
from datakit.glassbox.combining import CacheStep, CombiningOps, SourceStep
from datakit.glassbox.elements import Step
from datakit.glassbox.elements import call as _call
from datakit.glassbox.elements import function_name as _fn_name
from datakit.glassbox.elements import leaves as _leaves
from datakit.glassbox.elements import slice_element as _slice
from datakit.glassbox.elements import stack as _stack
from datakit.glassbox.elements import structure_len as _structure_len
from datakit.glassbox.elements import to_numpy as _to_numpy
from datakit.glassbox.interleave_cycle import cycle_steps
from datakit.glassbox.shuffle_buffer import (
    buffer_steps,
    check_buffer_size,
    replay_picks,
    rng_chooser,
)
from datakit.glassbox.variable_length import VariableLengthOps, batcher

__all__ = ["AUTOTUNE", "Dataset", "Step", "OpTrace", "ShuffleStep", "SourceStep", "CacheStep",
           "glassbox_shuffle"]


@dataclass
class OpTrace:
    """What one op of a chain emitted, in order."""

    name: str
    steps: list[Step] = field(default_factory=list)
    #: The method that made the op (``"batch"``, ``"repeat"``, ...).
    kind: str = ""
    #: Its arguments as passed (after checking), by name.
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def values(self) -> list[Any]:
        return [s.value for s in self.steps]


def _check_parallel(num_parallel_calls: Any) -> None:
    check_count("num_parallel_calls", num_parallel_calls, none=True, autotune=True)


# ----------------------------------------------------------------------------
# The chain
# ----------------------------------------------------------------------------


class _Recorder(list):
    """The steps one op emitted while tracing.

    An op records ``sources`` as positions in its current pass over the
    input; ``offset`` (set when a pass starts) turns them into positions in
    the input's whole recorded stream.
    """

    offset = 0

    def append(self, step: Step) -> None:
        if self.offset:
            step.sources = tuple(s + self.offset for s in step.sources)
        super().append(step)

# An op's generator takes the parent's iterator factory and a recorder
# (a list of Step, or None) and yields values.
_Op = Callable[[Callable[[list | None], Iterator[Any]], list | None], Iterator[Any]]


class Dataset(VariableLengthOps, CombiningOps):
    """A pure-Python ``tf.data.Dataset`` twin: a chain of ops over plain values."""

    def __init__(self, op: _Op, name: str, parent: Dataset | None = None, *,
                 kind: str | None = None, args: dict[str, Any] | None = None):
        self._op = op
        self._name = name
        self._parent = parent
        # What the op is, for tools (OpTrace.kind/args): the display name is for people.
        self._kind = kind if kind is not None else name.split("(")[0]
        self._args = dict(args or {})

    # -- sources -------------------------------------------------------------

    @classmethod
    def range(cls, *args: int, output_type: Any = np.int64) -> Dataset:
        """Like ``tf.data.Dataset.range``: ``range(stop)``, ``range(start, stop[, step])``.

        >>> [int(x) for x in Dataset.range(2, 9, 3)]
        [2, 5, 8]
        """
        if not 1 <= len(args) <= 3:
            raise TypeError("range() takes 1 to 3 arguments: stop, or start, stop[, step]")
        for a in args:
            check_int("range() argument", a)
        if len(args) == 3 and args[2] == 0:
            raise ValueError("range() step must not be zero")
        dtype = np.dtype(output_type if not hasattr(output_type, "as_numpy_dtype")
                         else output_type.as_numpy_dtype)
        values = range(*args)

        def op(_parent, rec):
            for i, v in enumerate(values):
                x = dtype.type(v)
                if rec is not None:
                    rec.append(Step(x, (i,)))
                yield x

        return cls(op, "range(" + ", ".join(str(a) for a in args) + ")")

    @classmethod
    def from_tensor_slices(cls, tensors: Any) -> Dataset:
        """Like ``tf.data.Dataset.from_tensor_slices``: one element per row.

        Tuples and dicts are structure: each component is sliced, and the
        elements are tuples or dicts of slices.

        >>> ds = Dataset.from_tensor_slices(({"a": [1, 2]}, ["x", "y"]))
        >>> list(ds)[1]
        ({'a': np.int32(2)}, b'y')
        """
        data = _to_numpy(tensors)
        n = _structure_len(data)

        def op(_parent, rec):
            for i in range(n):
                x = _slice(data, i)
                if rec is not None:
                    rec.append(Step(x, (i,)))
                yield x

        return cls(op, f"from_tensor_slices(<{n} rows>)")

    @classmethod
    def from_iterable(cls, items: Iterable[Any], name: str | None = None) -> Dataset:
        """A dataset over any re-iterable of values (a glass-box convenience)."""
        items = list(items)

        def op(_parent, rec):
            for i, x in enumerate(items):
                x = _to_numpy(x)
                if rec is not None:
                    rec.append(Step(x, (i,)))
                yield x

        return cls(op, name or f"from_iterable(<{len(items)} items>)")

    # -- transformations -------------------------------------------------------

    def _chain(self, op: _Op, name: str, **args: Any) -> Dataset:
        """A new dataset applying ``op`` to this one; ``args`` are the op's checked arguments."""
        return Dataset(op, name, parent=self, args=args)

    def repeat(self, count: int | None = None) -> Dataset:
        """Repeat the input ``count`` times (``None`` or -1: forever).

        An empty input stays empty even when repeated forever, as in tf.data.

        >>> [int(x) for x in Dataset.range(2).repeat(2)]
        [0, 1, 0, 1]
        """
        n = -1 if count is None else check_int("count", count)

        def op(parent, rec):
            for epoch in itertools.count():
                if n >= 0 and epoch >= n:
                    return
                empty = True
                for pos, x in enumerate(parent()):
                    empty = False
                    if rec is not None:
                        rec.append(Step(x, (pos,), epoch))
                    yield x
                if empty:
                    return

        return self._chain(op, "repeat()" if count is None else f"repeat({n})", count=n)

    def batch(self, batch_size: int, drop_remainder: bool = False) -> Dataset:
        """Stack ``batch_size`` consecutive elements into one.

        The last batch is shorter unless ``drop_remainder=True`` drops it.

        >>> [b.tolist() for b in Dataset.range(5).batch(2, drop_remainder=True)]
        [[0, 1], [2, 3]]
        >>> Dataset.range(5).batch(0)
        Traceback (most recent call last):
            ...
        ValueError: batch_size=0 is invalid: a batch must hold at least one element, so pass batch_size >= 1.
        """
        size = check_int("batch_size", batch_size)
        if size < 1:
            raise ValueError(
                f"batch_size={size} is invalid: a batch must hold at least one element, "
                "so pass batch_size >= 1."
            )

        op = batcher(size, drop_remainder, _stack)
        extra = ", drop_remainder=True" if drop_remainder else ""
        return self._chain(op, f"batch({size}{extra})", batch_size=size,
                           drop_remainder=bool(drop_remainder))

    def map(self, map_func: Callable, num_parallel_calls: int | None = None,
            deterministic: bool | None = None) -> Dataset:
        """Apply ``map_func`` to each element (a tuple is unpacked into arguments).

        ``num_parallel_calls`` changes speed, not results: the order is kept
        unless ``deterministic=False``, and this twin always keeps it.

        >>> [int(x) for x in Dataset.range(4).map(lambda x: x * x, num_parallel_calls=2)]
        [0, 1, 4, 9]
        """
        _check_parallel(num_parallel_calls)

        def op(parent, rec):
            for pos, x in enumerate(parent()):
                y = _call(map_func, x)
                if y is None:
                    raise TypeError(f"map_func {_fn_name(map_func)} returned None for element "
                                    f"{pos}: it must return a value (a missing `return`?), "
                                    "as tf.data requires.")
                y = _to_numpy(y)
                if rec is not None:
                    rec.append(Step(y, (pos,)))
                yield y

        extra = f", num_parallel_calls={num_parallel_calls}" if num_parallel_calls else ""
        return self._chain(op, f"map({_fn_name(map_func)}{extra})")

    def filter(self, predicate: Callable) -> Dataset:
        """Keep the elements for which ``predicate`` is true.

        >>> [int(x) for x in Dataset.range(6).filter(lambda x: x % 2 == 0)]
        [0, 2, 4]
        """

        def op(parent, rec):
            for pos, x in enumerate(parent()):
                keep = np.asarray(_call(predicate, x))
                if keep.shape != () or keep.dtype != bool:
                    raise ValueError(
                        "filter() predicate must return a scalar bool, got "
                        f"{keep.dtype} of shape {keep.shape}; compare, e.g. `x > 0`."
                    )
                if keep:
                    if rec is not None:
                        rec.append(Step(x, (pos,)))
                    yield x

        return self._chain(op, f"filter({_fn_name(predicate)})")

    def take(self, count: int) -> Dataset:
        """The first ``count`` elements (-1: all of them).

        >>> [int(x) for x in Dataset.range(5).take(2)], len(list(Dataset.range(5).take(-1)))
        ([0, 1], 5)
        """
        n = check_int("count", count)

        def op(parent, rec):
            if n == 0:
                return
            for pos, x in enumerate(parent()):
                if rec is not None:
                    rec.append(Step(x, (pos,)))
                yield x
                if n > 0 and pos + 1 >= n:
                    return

        return self._chain(op, f"take({n})")

    def skip(self, count: int) -> Dataset:
        """Everything after the first ``count`` elements (-1: skip all).

        >>> [int(x) for x in Dataset.range(5).skip(3)], list(Dataset.range(5).skip(-1))
        ([3, 4], [])
        """
        n = check_int("count", count)

        def op(parent, rec):
            for pos, x in enumerate(parent()):
                if n < 0 or pos < n:
                    continue
                if rec is not None:
                    rec.append(Step(x, (pos,)))
                yield x

        return self._chain(op, f"skip({n})")

    def enumerate(self, start: int = 0) -> Dataset:
        """Pair each element with its index: ``(index, element)``, index int64.

        >>> [(int(i), int(x)) for i, x in Dataset.range(3).skip(1).enumerate(start=10)]
        [(10, 1), (11, 2)]
        """
        first = check_int("start", start)

        def op(parent, rec):
            for pos, x in enumerate(parent()):
                y = (np.int64(first + pos), x)
                if rec is not None:
                    rec.append(Step(y, (pos,)))
                yield y

        return self._chain(op, f"enumerate({first})" if first else "enumerate()")

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """Return ``transformation_func(self)``: reuse a whole chain of ops.

        >>> evens_squared = lambda ds: ds.filter(lambda x: x % 2 == 0).map(lambda x: x * x)
        >>> [int(x) for x in Dataset.range(5).apply(evens_squared)]
        [0, 4, 16]
        """
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(
                "apply() expects a function that takes a Dataset and returns a Dataset, "
                f"got {type(out).__name__}."
            )
        return out

    def shuffle(self, buffer_size: int, seed: int | None = None,
                reshuffle_each_iteration: bool = True) -> Dataset:
        """Shuffle with a buffer of ``buffer_size`` slots, TensorFlow's algorithm.

        Its own random numbers (NumPy, from ``seed``): same elements as
        tf.data, not the same order. The algorithm lives in
        :mod:`datakit.glassbox.shuffle_buffer`; :func:`glassbox_shuffle` replays
        TensorFlow's picks.

        >>> sorted(int(x) for x in Dataset.range(5).shuffle(3, seed=42))
        [0, 1, 2, 3, 4]
        """
        return glassbox_shuffle(self, buffer_size, seed, reshuffle_each_iteration)

    def interleave(self, map_func: Callable, cycle_length: int | None = None,
                   block_length: int | None = None, num_parallel_calls: int | None = None,
                   deterministic: bool | None = None) -> Dataset:
        """Read ``cycle_length`` datasets made by ``map_func`` in turn, ``block_length`` at a time.

        ``cycle_length=None`` means AUTOTUNE, as in tf.data: the number of
        CPU cores, fewer with ``num_parallel_calls`` (see
        :func:`datakit.core.arguments.default_cycle_length`). Parallel calls change speed, not order (unless
        ``deterministic=False`` in tf.data; this twin always keeps it). The
        cycle itself lives in :mod:`datakit.glassbox.interleave_cycle`.

        >>> ds = Dataset.range(1, 4).interleave(lambda n: Dataset.range(n).map(lambda _: n),
        ...                                     cycle_length=2)
        >>> [int(x) for x in ds]
        [1, 2, 2, 3, 3, 3]
        >>> Dataset.range(3).interleave(Dataset.range, cycle_length=2, num_parallel_calls=4)
        Traceback (most recent call last):
            ...
        ValueError: num_parallel_calls=4 is more than cycle_length=2: at most one call per open input; lower it or pass tf.data.AUTOTUNE.
        """
        cycle, block, _ = interleave_lengths(cycle_length, block_length, num_parallel_calls)

        def op(parent, rec):
            for s in cycle_steps(parent(), lambda x: _call(map_func, x), cycle, block):
                if rec is not None:
                    rec.append(Step(s.value, (s.input,)))
                yield s.value

        args = [f"cycle_length={cycle_length}"] if cycle_length is not None else []
        args += [f"block_length={block}"] if block != 1 else []
        return self._chain(op, f"interleave({', '.join([_fn_name(map_func)] + args)})",
                           cycle_length=cycle, block_length=block)

    @classmethod
    def list_files(cls, file_pattern: str | list[str], shuffle: bool | None = None,
                   seed: int | None = None) -> Dataset:
        """The file names matching ``file_pattern`` (a glob or a list of them), as bytes.

        ``shuffle=False`` gives them sorted, exactly as tf.data does. The
        default shuffles, reshuffling on every pass; this twin uses its own
        random numbers (NumPy, from ``seed``): same names as tf.data, not the
        same order.

        >>> import datakit
        >>> [p.split(b"/")[-1] for p in Dataset.list_files(
        ...     str(datakit.data_path("housing", "*.csv")), shuffle=False)]
        [b'housing.csv']
        """
        patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
        patterns = [p.decode() if isinstance(p, bytes) else str(p) for p in patterns]
        names = sorted(n for p in patterns for n in glob.glob(p))
        if not names:
            raise FileNotFoundError(
                f"No files matched pattern: {', '.join(patterns)}; check the folder and the "
                "pattern (tf.data raises InvalidArgumentError here).")
        files = [n.encode() for n in names]
        rng = np.random.default_rng(seed)

        def op(_parent, rec):
            order = rng.permutation(len(files)) if shuffle is None or shuffle else range(len(files))
            for i, j in enumerate(order):
                if rec is not None:
                    rec.append(Step(files[j], (int(j),)))
                yield files[j]

        extra = ", shuffle=False" if shuffle is False else (f", seed={seed}" if seed is not None else "")
        return cls(op, f"list_files({file_pattern!r}{extra})")

    # -- running ---------------------------------------------------------------

    def _chain_list(self) -> list[Dataset]:
        chain, node = [], self
        while node is not None:
            chain.append(node)
            node = node._parent
        return chain[::-1]

    def _iter(self, recorders: dict[int, _Recorder] | None) -> Iterator[Any]:
        rec = None if recorders is None else recorders.setdefault(id(self), _Recorder())
        parent = self._parent

        def parent_iter():
            # Each call starts a new pass over the parent (repeat makes several):
            # positions an op records count from 0 per pass, the recorder shifts
            # them to positions in the parent's whole recorded stream.
            if rec is not None:
                rec.offset = len(recorders.setdefault(id(parent), _Recorder()))
            return parent._iter(recorders)

        return self._op(parent_iter if parent is not None else None, rec)

    def __iter__(self) -> Iterator[Any]:
        return self._iter(None)

    def as_numpy_iterator(self) -> Iterator[Any]:
        """Same as iterating: the values are already NumPy (as in tf.data).

        Elements that are datasets (``window``) cannot be NumPy: a TypeError, as in tf.data.

        >>> next(Dataset.range(4).window(2).as_numpy_iterator())
        Traceback (most recent call last):
            ...
        TypeError: as_numpy_iterator() is not supported for datasets whose elements are datasets (window() makes them): flatten them first, e.g. .flat_map(lambda w: w.batch(size)).
        """
        for x in self:
            if any(isinstance(leaf, Dataset) for leaf in _leaves(x)):
                raise TypeError(
                    "as_numpy_iterator() is not supported for datasets whose elements are "
                    "datasets (window() makes them): flatten them first, e.g. "
                    ".flat_map(lambda w: w.batch(size)).")
            yield x

    def trace(self, max_elements: int | None = None) -> list[OpTrace]:
        """Run the chain once and return what every op emitted, source first.

        ``max_elements`` stops after that many final elements (needed for an
        endless ``repeat()``).
        """
        recorders: dict[int, list] = {}
        it = self._iter(recorders)
        for _ in itertools.islice(it, max_elements):
            pass
        return [OpTrace(node._name, recorders.get(id(node), []), node._kind, dict(node._args))
                for node in self._chain_list()]

    def __repr__(self) -> str:
        return "Dataset." + ".".join(node._name for node in self._chain_list())


# ----------------------------------------------------------------------------
# The glass-box shuffle (the algorithm: datakit.glassbox.shuffle_buffer)
# ----------------------------------------------------------------------------


@dataclass
class ShuffleStep(Step):
    """A glass-box shuffle output, with the buffer it was picked from."""

    slots: tuple = ()      # input position in each slot before the pick (None: empty)
    slot: int = -1         # the slot picked
    entered: tuple = ()    # input positions that entered just before this pick


def glassbox_shuffle(ds: Dataset, buffer_size: int, seed: int | None = None,
                     reshuffle_each_iteration: bool = True, *,
                     picks: Iterable[int] | None = None) -> Dataset:
    """The glass-box shuffle; ``picks`` replays given draws instead of its own RNG.

    Args:
        ds: the dataset to shuffle.
        buffer_size: slots in the buffer (>= 1).
        seed: its own RNG is NumPy seeded with ``(seed, iteration)``, so it is
            deterministic per seed but not TensorFlow's order.
        reshuffle_each_iteration: if false, iteration 0's draws every time.
        picks: draws to replay at every iteration (e.g. TF's, from
            :func:`datakit.see.shuffle.trace_buffer`) instead of the RNG.

    Raises:
        TypeError: ``buffer_size`` or ``seed`` is not an int.
        ValueError: ``buffer_size < 1``; while iterating, picks that run out
            or fall outside the buffer.

    >>> gb = glassbox_shuffle(Dataset.range(5), 2, picks=[1, 1, 0, 1, 0])
    >>> [int(x) for x in gb]
    [1, 2, 0, 4, 3]
    >>> a = Dataset.range(9).shuffle(4, seed=1)
    >>> [int(x) for x in a] == [int(x) for x in Dataset.range(9).shuffle(4, seed=1)]
    True
    """
    size = check_buffer_size(buffer_size)
    if seed is not None:  # any int64, as tf.data takes (-1 included): as an unsigned seed
        seed = check_int("seed", seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError(f"seed={seed}: pass an int that fits in 64 bits")
    picks = None if picks is None else list(picks)
    base = seed % 2**64 if seed is not None else np.random.SeedSequence().entropy
    passes = [0]  # iterations started so far; a trace() does not use them up

    def op(parent, rec):
        if rec is None:
            k, passes[0] = passes[0], passes[0] + 1
        else:  # tracing: the passes a fresh iteration would make, without using them up
            k = passes[0] + getattr(rec, "passes", 0)
            rec.passes = getattr(rec, "passes", 0) + 1
        k = k if reshuffle_each_iteration else 0
        choose = (replay_picks(picks) if picks is not None
                  else rng_chooser(np.random.default_rng([base, k])))
        for p in buffer_steps(parent(), size, choose):
            if rec is not None:
                rec.append(ShuffleStep(p.value, (p.position,), None, p.slots, p.slot, p.entered))
            yield p.value

    args = [str(size)] + ([f"seed={seed}"] if seed is not None else [])
    if not reshuffle_each_iteration:
        args.append("reshuffle_each_iteration=False")
    return ds._chain(op, f"shuffle({', '.join(args)})", buffer_size=size, seed=seed,
                     reshuffle_each_iteration=bool(reshuffle_each_iteration))
