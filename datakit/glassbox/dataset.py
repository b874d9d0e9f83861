# Over 300 lines on purpose: this is the one class a learner reads, every tf.data method the
# course teaches with its docstring and a runnable example (as tf.data's own dataset_ops.py).
# Each method is a call into the module that builds its op; no algorithm lives here.
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
the epoch), which op it is and with which arguments:

>>> ops = Dataset.range(3).repeat(2).batch(4).trace()
>>> [op.name for op in ops], [s.epoch for s in ops[1].steps]
(['range(3)', 'repeat(2)', 'batch(4)'], [0, 0, 0, 1, 1, 1])
>>> [s.sources for s in ops[2].steps], ops[2].kind, ops[2].args
([(0, 1, 2, 3), (4, 5)], 'batch', {'batch_size': 4, 'drop_remainder': False})

Each method checks its arguments and calls the module that builds its op,
as ``tf.data``'s methods call their ``*_op`` modules:
:mod:`~datakit.glassbox.sources`, :mod:`~datakit.glassbox.transformations`,
:mod:`~datakit.glassbox.shuffle_buffer`, :mod:`~datakit.glassbox.variable_length`
and :mod:`~datakit.glassbox.combining`. What an op is and records is in
:mod:`~datakit.glassbox.recording`. An argument the glass box cannot honour
(``name=``, ``deterministic=False``, ``row_splits_dtype=``) gets an
:class:`~datakit.glassbox.recording.IgnoredArgumentWarning`. The glass box
loads neither TensorFlow nor Matplotlib.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from datakit.core.arguments import check_count, check_flag
from datakit.glassbox import combining, sources, transformations, variable_length
from datakit.glassbox.combining import check_datasets
from datakit.glassbox.elements import leaves
from datakit.glassbox.recording import NOT_TRACING, Op, OpTrace, Recorders
from datakit.glassbox.shuffle_buffer import shuffle_op

__all__ = ["Dataset", "glassbox_shuffle"]


class Dataset:
    """A pure-Python ``tf.data.Dataset`` twin: a chain of ops over plain values."""

    def __init__(self, op: Op, parent: Dataset | None = None):
        self._op = op
        self._parent = parent

    def _then(self, op: Op) -> Dataset:
        """A new dataset applying ``op`` to this one."""
        return Dataset(op, parent=self)

    # -- sources -------------------------------------------------------------

    @classmethod
    def range(cls, *args: int, output_type: Any = np.int64, name: str | None = None) -> Dataset:
        """Like ``tf.data.Dataset.range``: ``range(stop)``, ``range(start, stop[, step])``.

        >>> [int(x) for x in Dataset.range(2, 9, 3)]
        [2, 5, 8]
        """
        return cls(sources.range_op(*args, output_type=output_type, name=name))

    @classmethod
    def from_tensor_slices(cls, tensors: Any, name: str | None = None) -> Dataset:
        """Like ``tf.data.Dataset.from_tensor_slices``: one element per row.

        Tuples and dicts are structure: each component is sliced, and the
        elements are tuples or dicts of slices.

        >>> ds = Dataset.from_tensor_slices(({"a": [1, 2]}, ["x", "y"]))
        >>> list(ds)[1]
        ({'a': np.int32(2)}, b'y')
        """
        return cls(sources.from_tensor_slices(tensors, name))

    @classmethod
    def from_iterable(cls, items: Iterable[Any], name: str | None = None) -> Dataset:
        """A dataset over any re-iterable of values (a glass-box convenience; ``name`` shows)."""
        return cls(sources.from_iterable(items, name))

    @classmethod
    def list_files(cls, file_pattern: str | list[str], shuffle: bool | None = None,
                   seed: int | None = None, name: str | None = None) -> Dataset:
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
        return cls(sources.list_files(file_pattern, shuffle, seed, name))

    @classmethod
    def zip(cls, *args: Any, datasets: Any = None, name: str | None = None) -> Dataset:
        """Pair up the elements of several datasets (a tuple or dict of them); stop at the shortest.

        >>> [(int(x), int(y)) for x, y in Dataset.zip(Dataset.range(3), Dataset.range(5, 9))]
        [(0, 5), (1, 6), (2, 7)]
        """
        if datasets is not None and args:
            raise TypeError("zip() takes datasets positionally or as datasets=, not both.")
        structure = datasets if datasets is not None else (args[0] if len(args) == 1 else args)
        flat = [structure] if isinstance(structure, cls) else check_datasets("zip", structure, cls)
        return cls(combining.zip_op(structure, flat, name))

    @classmethod
    def sample_from_datasets(cls, datasets: list[Any], weights: list[float] | None = None,
                             seed: int | None = None, stop_on_empty_dataset: bool = False,
                             rerandomize_each_iteration: bool | None = None) -> Dataset:
        """Each element from a randomly chosen input, with probabilities ``weights``.

        An exhausted input drops out (the others' weights renormalized) unless
        ``stop_on_empty_dataset=True`` ends the whole dataset there. Own
        random numbers (NumPy, from ``seed``): each pass draws the same
        order unless ``rerandomize_each_iteration=True``.

        >>> ds = Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(10, 13)], seed=0)
        >>> sorted(int(x) for x in ds)
        [0, 1, 2, 10, 11, 12]
        """
        flat = check_datasets("sample_from_datasets", datasets, cls)
        return cls(combining.sample_from_datasets(flat, weights, seed, stop_on_empty_dataset,
                                                  rerandomize_each_iteration))

    @classmethod
    def choose_from_datasets(cls, datasets: list[Any], choice_dataset: Any,
                             stop_on_empty_dataset: bool = True) -> Dataset:
        """Each element from the input that ``choice_dataset`` names (an index per element).

        >>> picks = Dataset.from_iterable([0, 1, 1, 0])
        >>> [int(x) for x in Dataset.choose_from_datasets([Dataset.range(2), Dataset.range(5, 9)],
        ...                                               picks)]
        [0, 5, 6, 1]
        """
        flat = check_datasets("choose_from_datasets", datasets, cls)
        chooser = check_datasets("choose_from_datasets", [choice_dataset], cls)[0]
        return cls(combining.choose_from_datasets(flat, chooser, stop_on_empty_dataset))

    # -- transformations -------------------------------------------------------

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        """Repeat the input ``count`` times (``None`` or -1: forever).

        An empty input stays empty even when repeated forever, as in tf.data.

        >>> [int(x) for x in Dataset.range(2).repeat(2)]
        [0, 1, 0, 1]
        """
        return self._then(transformations.repeat(count, name))

    def batch(self, batch_size: int, drop_remainder: bool = False,
              num_parallel_calls: int | None = None, deterministic: bool | None = None,
              name: str | None = None) -> Dataset:
        """Stack ``batch_size`` consecutive elements into one.

        The last batch is shorter unless ``drop_remainder=True`` drops it.

        >>> [b.tolist() for b in Dataset.range(5).batch(2, drop_remainder=True)]
        [[0, 1], [2, 3]]
        """
        return self._then(transformations.batch(batch_size, drop_remainder, num_parallel_calls,
                                                deterministic, name))

    def map(self, map_func: Callable, num_parallel_calls: int | None = None,
            deterministic: bool | None = None, name: str | None = None) -> Dataset:
        """Apply ``map_func`` to each element (a tuple is unpacked into arguments).

        ``num_parallel_calls`` changes speed, not results: the order is kept
        unless ``deterministic=False``, and this twin always keeps it.

        >>> [int(x) for x in Dataset.range(4).map(lambda x: x * x, num_parallel_calls=2)]
        [0, 1, 4, 9]
        """
        return self._then(transformations.map_op(map_func, num_parallel_calls, deterministic,
                                                 name))

    def filter(self, predicate: Callable, name: str | None = None) -> Dataset:
        """Keep the elements for which ``predicate`` is true.

        >>> [int(x) for x in Dataset.range(6).filter(lambda x: x % 2 == 0)]
        [0, 2, 4]
        """
        return self._then(transformations.filter_op(predicate, name))

    def take(self, count: int, name: str | None = None) -> Dataset:
        """The first ``count`` elements (-1: all of them).

        >>> [int(x) for x in Dataset.range(5).take(2)], len(list(Dataset.range(5).take(-1)))
        ([0, 1], 5)
        """
        return self._then(transformations.take(count, name))

    def skip(self, count: int, name: str | None = None) -> Dataset:
        """Everything after the first ``count`` elements (-1: skip all).

        >>> [int(x) for x in Dataset.range(5).skip(3)], list(Dataset.range(5).skip(-1))
        ([3, 4], [])
        """
        return self._then(transformations.skip(count, name))

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        """Pair each element with its index: ``(index, element)``, index int64.

        >>> [(int(i), int(x)) for i, x in Dataset.range(3).skip(1).enumerate(start=10)]
        [(10, 1), (11, 2)]
        """
        return self._then(transformations.enumerate_op(start, name))

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
                f"got {type(out).__name__}.")
        return out

    def shuffle(self, buffer_size: int, seed: int | None = None,
                reshuffle_each_iteration: bool = True, name: str | None = None) -> Dataset:
        """Shuffle with a buffer of ``buffer_size`` slots, TensorFlow's algorithm.

        Its own random numbers (NumPy, from ``seed``): same elements as
        tf.data, not the same order. The algorithm lives in
        :mod:`datakit.glassbox.shuffle_buffer`; :func:`glassbox_shuffle` replays
        TensorFlow's picks.

        >>> sorted(int(x) for x in Dataset.range(5).shuffle(3, seed=42))
        [0, 1, 2, 3, 4]
        """
        return self._then(shuffle_op(buffer_size, seed, reshuffle_each_iteration, name=name))

    def interleave(self, map_func: Callable, cycle_length: int | None = None,
                   block_length: int | None = None, num_parallel_calls: int | None = None,
                   deterministic: bool | None = None, name: str | None = None) -> Dataset:
        """Read ``cycle_length`` datasets made by ``map_func`` in turn, ``block_length`` at a time.

        ``cycle_length=None`` means AUTOTUNE, as in tf.data: the number of
        CPU cores, fewer with ``num_parallel_calls`` (see
        :func:`datakit.core.arguments.default_cycle_length`). Parallel calls
        change speed, not order. The cycle lives in :mod:`datakit.glassbox.interleave_cycle`.

        >>> ds = Dataset.range(1, 4).interleave(lambda n: Dataset.range(n).map(lambda _: n),
        ...                                     cycle_length=2)
        >>> [int(x) for x in ds]
        [1, 2, 2, 3, 3, 3]
        >>> Dataset.range(3).interleave(  # doctest: +NORMALIZE_WHITESPACE
        ...     Dataset.range, cycle_length=2, num_parallel_calls=4)
        Traceback (most recent call last):
            ...
        ValueError: num_parallel_calls=4 is more than cycle_length=2: at most one call per open
        input; lower it or pass tf.data.AUTOTUNE.
        """
        return self._then(transformations.interleave(map_func, cycle_length, block_length,
                                                     num_parallel_calls, deterministic, name,
                                                     dataset_type=Dataset))

    def concatenate(self, dataset: Any, name: str | None = None) -> Dataset:
        """This dataset's elements, then ``dataset``'s.

        >>> [int(x) for x in Dataset.range(2).concatenate(Dataset.range(5, 7))]
        [0, 1, 5, 6]
        """
        other = check_datasets("concatenate", [dataset], Dataset)[0]
        return self._then(combining.concatenate(other, name))

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """Keep the elements of the first complete pass; later passes read them from the cache.

        ``filename=""`` keeps them in memory; a file name stores them on disk
        (a pickle, ``filename + ".glassbox"``: not tf.data's format), where
        another dataset with the same name finds them. A first pass that
        stops early keeps nothing and warns, as tf.data does.

        >>> ops = Dataset.range(3).map(lambda x: x * 10).cache().repeat(2).trace()
        >>> len(ops[1].steps), [s.from_cache for s in ops[2].steps]
        (3, [False, False, False, True, True, True])
        """
        return self._then(combining.cache(filename, name))

    def padded_batch(self, batch_size: int, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Like ``batch``, padding each component to ``padded_shapes`` (None: the batch's longest).

        >>> ds = Dataset.range(1, 4).map(lambda n: np.arange(n))
        >>> [b.tolist() for b in ds.padded_batch(2)]
        [[[0, 0], [0, 1]], [[0, 1, 2]]]
        >>> [b.tolist() for b in ds.padded_batch(3, padded_shapes=[4], padding_values=-1)]
        [[[0, -1, -1, -1], [0, 1, -1, -1], [0, 1, 2, -1]]]
        """
        return self._then(variable_length.padded_batch(batch_size, padded_shapes, padding_values,
                                                       drop_remainder, name))

    def ragged_batch(self, batch_size: int, drop_remainder: bool = False,
                     row_splits_dtype: Any = np.int64, name: str | None = None) -> Dataset:
        """Batch elements of different lengths without padding (rows of a ``RaggedTensor``).

        Iterating gives what tf.data's ``as_numpy_iterator()`` gives: an
        ordinary array when the rows happen to have one length, else an
        object array of rows.

        >>> [b.tolist() for b in Dataset.range(4).map(lambda n: np.arange(n)).ragged_batch(2)]
        [[array([], dtype=int64), array([0])], [array([0, 1]), array([0, 1, 2])]]
        """
        return self._then(variable_length.ragged_batch(batch_size, drop_remainder,
                                                       row_splits_dtype, name))

    def unbatch(self, name: str | None = None) -> Dataset:
        """Split each element along its first axis: the inverse of ``batch``.

        >>> [int(x) for x in Dataset.range(5).batch(2).unbatch()]
        [0, 1, 2, 3, 4]
        """
        return self._then(variable_length.unbatch(name))

    def window(self, size: int, shift: int | None = None, stride: int = 1,
               drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """A dataset of windows, each a *dataset* of ``size`` elements (tuples: tuples of them).

        A window starts every ``shift`` inputs (default ``size``) and takes
        every ``stride``-th one; the last windows are shorter unless
        ``drop_remainder=True``. Flatten with ``flat_map(lambda w: w.batch(size))``.

        >>> ds = Dataset.range(5).window(3, shift=1, drop_remainder=True)
        >>> [[int(x) for x in w] for w in ds]
        [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
        >>> [b.tolist() for b in ds.flat_map(lambda w: w.batch(3))]
        [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
        """
        return self._then(variable_length.window(Dataset.from_iterable, size, shift, stride,
                                                 drop_remainder, name))

    def flat_map(self, map_func: Callable, name: str | None = None) -> Dataset:
        """Map each element to a dataset and chain those datasets one after another.

        >>> [int(x) for x in Dataset.range(1, 4).flat_map(lambda n: Dataset.range(n))]
        [0, 0, 1, 0, 1, 2]
        """
        return self._then(variable_length.flat_map(Dataset, map_func, name))

    # -- running ---------------------------------------------------------------

    def _chain_list(self) -> list[Dataset]:
        chain: list[Dataset] = []
        node: Dataset | None = self
        while node is not None:
            chain.append(node)
            node = node._parent
        return chain[::-1]

    def _iter(self, recorders: Recorders = NOT_TRACING) -> Iterator[Any]:
        rec, parent = recorders.of(self), self._parent
        if parent is None:  # a source
            return self._op.run(None, rec)

        def parent_iter() -> Iterator[Any]:
            # Each call starts a new pass over the parent (repeat makes several):
            # positions an op records count from 0 per pass, the recorder shifts
            # them to positions in the parent's whole recorded stream.
            rec.offset = len(recorders.of(parent))
            return parent._iter(recorders)

        return self._op.run(parent_iter, rec)

    def __iter__(self) -> Iterator[Any]:
        return self._iter()

    def as_numpy_iterator(self) -> Iterator[Any]:
        """Same as iterating: the values are already NumPy (as in tf.data).

        Elements that are datasets (``window``) cannot be NumPy: a TypeError, as in tf.data.

        >>> next(Dataset.range(4).window(2).as_numpy_iterator())  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
            ...
        TypeError: as_numpy_iterator() is not supported for datasets whose elements are datasets
        (window() makes them): flatten them first, e.g. .flat_map(lambda w: w.batch(size)).
        """
        for x in self:
            if any(isinstance(leaf, Dataset) for leaf in leaves(x)):
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
        max_elements = check_count("max_elements", max_elements, 0, none=True)
        recorders = Recorders()
        for _ in itertools.islice(self._iter(recorders), max_elements):
            pass
        return [OpTrace(node._op.name, recorders.get(id(node), []), node._op.kind,
                        dict(node._op.args)) for node in self._chain_list()]

    def __repr__(self) -> str:
        return "Dataset." + ".".join(node._op.name for node in self._chain_list())


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
    check_flag("reshuffle_each_iteration", reshuffle_each_iteration)
    return ds._then(shuffle_op(buffer_size, seed, reshuffle_each_iteration, picks=picks))
