"""Combining sources in the glass box: ``zip``, ``concatenate``, ``sample_from_datasets``, ``choose_from_datasets``, ``cache``.

The methods of :class:`CombiningOps` become methods of
:class:`datakit.glassbox.Dataset`, with ``tf.data``'s names, arguments and
defaults. Their traces say where every element came from: a
:class:`SourceStep` names the input dataset (``dataset``) and the position
in it; a :class:`CacheStep` says whether the cache served it:

>>> from datakit.glassbox.dataset import Dataset
>>> a, b = Dataset.range(3), Dataset.range(10, 12)
>>> [int(x) for x in a.concatenate(b)]
[0, 1, 2, 10, 11]
>>> mixed = Dataset.sample_from_datasets([a, b], weights=[0.5, 0.5], seed=1)
>>> [(s.dataset, int(s.value)) for s in mixed.trace()[-1].steps]
[(1, 10), (1, 11), (0, 0), (0, 1), (0, 2)]

``sample_from_datasets`` draws with its own random numbers (NumPy, from
``seed``): the same elements as ``tf.data``, in another order. This module
imports nothing from the kit but the bottom modules, nor TensorFlow.
"""

from __future__ import annotations

import itertools
import os
import pickle
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from datakit.core.arguments import check_int
from datakit.glassbox.elements import Step, leaves, pack

__all__ = ["CombiningOps", "SourceStep", "CacheStep", "sample_order", "PARTIAL_CACHE_WARNING"]

#: What tf.data logs when a cache's first pass is not read to the end (and what the twin warns).
PARTIAL_CACHE_WARNING = (
    "The calling iterator did not fully read the dataset being cached. In order to avoid "
    "unexpected truncation of the dataset, the partially cached contents of the dataset will "
    "be discarded. This can happen if you have an input pipeline similar to "
    "`dataset.cache().take(k).repeat()`. You should use `dataset.take(k).cache().repeat()` "
    "instead.")


@dataclass
class SourceStep(Step):
    """An element of a combined dataset: which input ``dataset`` it came from (its ``sources`` position there)."""

    dataset: int = 0


@dataclass
class CacheStep(Step):
    """An element of ``cache()``: read from the input (first pass) or served from the cache."""

    from_cache: bool = False


def sample_order(weights: list[float], rng: np.random.Generator, alive: list[bool]) -> int | None:
    """One draw of ``sample_from_datasets``: an input index, weights renormalized over ``alive``.

    >>> sample_order([0.0, 1.0], np.random.default_rng(0), [True, True])
    1
    >>> sample_order([1.0, 1.0], np.random.default_rng(0), [False, False]) is None
    True
    """
    w = np.asarray(weights, dtype=float) * np.asarray(alive, dtype=float)
    if w.sum() <= 0:
        return None
    return int(rng.choice(len(w), p=w / w.sum()))


def _datasets(name: str, datasets: Any, dataset_type: type) -> list[Any]:
    flat = leaves(datasets) if isinstance(datasets, (tuple, dict)) else list(datasets)
    if not flat or not all(isinstance(d, dataset_type) for d in flat):
        raise TypeError(f"{name}() takes a non-empty list of glass-box Datasets, got "
                        f"{[type(d).__name__ for d in flat]}.")
    return flat


class CombiningOps:
    """The source-combining methods of ``glassbox.Dataset`` (mixed into it)."""

    @classmethod
    def zip(cls, *args: Any, datasets: Any = None, name: str | None = None):
        """Pair up the elements of several datasets (a tuple or dict of them); stop at the shortest.

        >>> from datakit.glassbox.dataset import Dataset
        >>> [(int(x), int(y)) for x, y in Dataset.zip(Dataset.range(3), Dataset.range(5, 9))]
        [(0, 5), (1, 6), (2, 7)]
        """
        if datasets is not None and args:
            raise TypeError("zip() takes datasets positionally or as datasets=, not both.")
        structure = datasets if datasets is not None else (args[0] if len(args) == 1 else args)
        flat = [structure] if isinstance(structure, cls) else _datasets("zip", structure, cls)

        def op(_parent, rec):
            its = [iter(d) for d in flat]
            for pos in itertools.count():
                values = []
                for it in its:
                    try:
                        values.append(next(it))
                    except StopIteration:
                        return
                y = values[0] if isinstance(structure, cls) else pack(structure, values)
                if rec is not None:
                    rec.append(Step(y, (pos,)))
                yield y

        return cls(op, f"zip(<{len(flat)} datasets>)", kind="zip")

    def concatenate(self, dataset: Any, name: str | None = None):
        """This dataset's elements, then ``dataset``'s.

        >>> from datakit.glassbox.dataset import Dataset
        >>> [int(x) for x in Dataset.range(2).concatenate(Dataset.range(5, 7))]
        [0, 1, 5, 6]
        """
        other = _datasets("concatenate", [dataset], type(self))[0]

        def op(parent, rec):
            for k, source in enumerate((parent(), iter(other))):
                for pos, x in enumerate(source):
                    if rec is not None:
                        rec.append(SourceStep(x, (pos,), dataset=k))
                    yield x

        return self._chain(op, f"concatenate({other!r})")

    @classmethod
    def sample_from_datasets(cls, datasets: list[Any], weights: list[float] | None = None,
                             seed: int | None = None, stop_on_empty_dataset: bool = False,
                             rerandomize_each_iteration: bool | None = None):
        """Each element from a randomly chosen input, with probabilities ``weights``.

        An exhausted input drops out (the others' weights renormalized) unless
        ``stop_on_empty_dataset=True`` ends the whole dataset there. Own
        random numbers (NumPy, from ``seed``): each pass draws the same
        order unless ``rerandomize_each_iteration=True``.

        >>> from datakit.glassbox.dataset import Dataset
        >>> ds = Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(10, 13)], seed=0)
        >>> sorted(int(x) for x in ds)
        [0, 1, 2, 10, 11, 12]
        >>> Dataset.sample_from_datasets([Dataset.range(3)], weights=[0.5, 0.5])
        Traceback (most recent call last):
            ...
        ValueError: weights has 2 values for 1 datasets: give one weight per dataset.
        """
        flat = _datasets("sample_from_datasets", datasets, cls)
        w = [1.0] * len(flat) if weights is None else [float(v) for v in weights]
        if len(w) != len(flat):
            raise ValueError(f"weights has {len(w)} values for {len(flat)} datasets: give one "
                             "weight per dataset.")
        if any(v < 0 for v in w) or sum(w) <= 0:
            raise ValueError(f"weights={w}: pass weights >= 0, not all zero.")
        base = check_int("seed", seed) if seed is not None else np.random.SeedSequence().entropy
        passes = itertools.count()

        def op(_parent, rec):
            k = next(passes) if rerandomize_each_iteration else 0
            rng = np.random.default_rng([base, k])
            its, alive, taken = [iter(d) for d in flat], [True] * len(flat), [0] * len(flat)
            while (i := sample_order(w, rng, alive)) is not None:
                try:
                    x = next(its[i])
                except StopIteration:
                    if stop_on_empty_dataset:
                        return
                    alive[i] = False
                    continue
                if rec is not None:
                    rec.append(SourceStep(x, (taken[i],), dataset=i))
                taken[i] += 1
                yield x

        extra = f", seed={seed}" if seed is not None else ""
        return cls(op, f"sample_from_datasets(<{len(flat)} datasets>, weights={w}{extra})",
                   kind="sample_from_datasets", args=dict(weights=w, seed=seed))

    @classmethod
    def choose_from_datasets(cls, datasets: list[Any], choice_dataset: Any,
                             stop_on_empty_dataset: bool = True):
        """Each element from the input that ``choice_dataset`` names (an index per element).

        >>> from datakit.glassbox.dataset import Dataset
        >>> picks = Dataset.from_iterable([0, 1, 1, 0])
        >>> [int(x) for x in Dataset.choose_from_datasets([Dataset.range(2), Dataset.range(5, 9)],
        ...                                               picks)]
        [0, 5, 6, 1]
        """
        flat = _datasets("choose_from_datasets", datasets, cls)
        chooser = _datasets("choose_from_datasets", [choice_dataset], cls)[0]

        def op(_parent, rec):
            its, taken = [iter(d) for d in flat], [0] * len(flat)
            for c in chooser:
                i = int(c)
                if not 0 <= i < len(flat):
                    raise ValueError(f"choice_dataset gave index {i}, but there are {len(flat)} "
                                     f"datasets: choose indices 0..{len(flat) - 1}.")
                try:
                    x = next(its[i])
                except StopIteration:
                    if stop_on_empty_dataset:
                        return
                    continue
                if rec is not None:
                    rec.append(SourceStep(x, (taken[i],), dataset=i))
                taken[i] += 1
                yield x

        return cls(op, f"choose_from_datasets(<{len(flat)} datasets>, {chooser!r})",
                   kind="choose_from_datasets")

    def cache(self, filename: str = "", name: str | None = None):
        """Keep the elements of the first complete pass; later passes read them from the cache.

        ``filename=""`` keeps them in memory; a file name stores them on disk
        (a pickle, ``filename + ".glassbox"``: not tf.data's format), where
        another dataset with the same name finds them. A first pass that
        stops early keeps nothing and warns, as tf.data does.

        >>> from datakit.glassbox.dataset import Dataset
        >>> ops = Dataset.range(3).map(lambda x: x * 10).cache().repeat(2).trace()
        >>> len(ops[1].steps), [s.from_cache for s in ops[2].steps]
        (3, [False, False, False, True, True, True])
        """
        path = os.fspath(filename)
        memory: list[list[Any]] = []

        def load() -> list[Any] | None:
            if not path:
                return memory[0] if memory else None
            if os.path.exists(path + ".glassbox"):
                with open(path + ".glassbox", "rb") as f:
                    return pickle.load(f)
            return None

        def keep(values: list[Any]) -> None:
            if not path:
                memory.append(values)
                return
            tmp = f"{path}.glassbox.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                pickle.dump(values, f)
            os.replace(tmp, path + ".glassbox")

        def op(parent, rec):
            cached = load()
            if cached is not None:
                for pos, x in enumerate(cached):
                    if rec is not None:
                        rec.append(CacheStep(x, (pos,), from_cache=True))
                    yield x
                return
            values, complete = [], False
            try:
                for pos, x in enumerate(parent()):
                    values.append(x)
                    if rec is not None:
                        rec.append(CacheStep(x, (pos,)))
                    yield x
                complete = True
                keep(values)
            finally:
                if not complete:
                    warnings.warn(PARTIAL_CACHE_WARNING, stacklevel=2)

        return self._chain(op, f"cache({filename!r})" if path else "cache()", filename=path)
