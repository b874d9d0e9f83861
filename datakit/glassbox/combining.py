"""Combining sources in the glass box: zip, concatenate, cache, sample and choose from datasets.

The ops of ``zip``, ``concatenate``, ``cache``, ``sample_from_datasets`` and
``choose_from_datasets``.

The functions here build the ops that :class:`datakit.glassbox.Dataset`'s
methods of these names chain, with ``tf.data``'s arguments and defaults.
Their traces say where every element came from: a
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
imports only :mod:`datakit.core` and the glass box's bottom modules, and no TensorFlow.
"""

from __future__ import annotations

import itertools
import os
import pickle
import secrets
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from datakit.core.arguments import check_number, check_ordered, check_seed
from datakit.core.atomic import write_atomic
from datakit.glassbox.elements import Step, leaves, pack
from datakit.glassbox.recording import Op, Parent, Recorder, check_name

__all__ = ["concatenate", "sample_from_datasets", "choose_from_datasets", "cache"]

#: What tf.data logs when a cache's first pass is not read to the end (and what the twin warns).
PARTIAL_CACHE_WARNING = (
    "The calling iterator did not fully read the dataset being cached. In order to avoid "
    "unexpected truncation of the dataset, the partially cached contents of the dataset will "
    "be discarded. This can happen if you have an input pipeline similar to "
    "`dataset.cache().take(k).repeat()`. You should use `dataset.take(k).cache().repeat()` "
    "instead.")


@dataclass
class SourceStep(Step):
    """An element of a combined dataset: the input ``dataset`` it came from (``sources``: where)."""

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


def check_datasets(method: str, datasets: Any, dataset_type: type) -> list[Any]:
    """The datasets of a tuple, dict or list, each a ``dataset_type`` (``TypeError`` otherwise)."""
    flat = leaves(datasets) if isinstance(datasets, (tuple, dict)) else check_ordered(
        f"{method}() datasets", datasets, "Datasets")
    if not flat or not all(isinstance(d, dataset_type) for d in flat):
        raise TypeError(f"{method}() takes a non-empty list of glass-box Datasets, got "
                        f"{[type(d).__name__ for d in flat]}.")
    return flat


def zip_op(structure: Any, flat: list[Any], name: str | None = None) -> Op:
    """The next element of each of ``flat``, packed as ``structure``; stop at the shortest.

    ``flat`` are the datasets of ``structure`` in order, or ``[structure]`` for one dataset.
    """
    check_name("zip", name)
    single = len(flat) == 1 and structure is flat[0]

    def run(_parent: Parent, rec: Recorder) -> Iterator[Any]:
        its = [iter(d) for d in flat]
        for pos in itertools.count():
            values = []
            for it in its:
                try:
                    values.append(next(it))
                except StopIteration:
                    return
            y = values[0] if single else pack(structure, values)
            rec.append(Step(y, (pos,)))
            yield y

    return Op(run, f"zip(<{len(flat)} datasets>)", "zip")


def concatenate(other: Any, name: str | None = None) -> Op:
    """The input's elements, then ``other``'s."""
    check_name("concatenate", name)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        for k, source in enumerate((parent(), iter(other))):
            for pos, x in enumerate(source):
                rec.append(SourceStep(x, (pos,), dataset=k))
                yield x

    return Op(run, f"concatenate({other!r})", "concatenate")


def sample_from_datasets(flat: list[Any], weights: list[float] | None = None,
                         seed: int | None = None, stop_on_empty_dataset: bool = False,
                         rerandomize_each_iteration: bool | None = None) -> Op:
    """Each element from one of ``flat`` drawn with probabilities ``weights`` (NumPy, ``seed``).

    >>> sample_from_datasets([[0]], weights=[0.5, 0.5])
    Traceback (most recent call last):
        ...
    ValueError: weights has 2 values for 1 datasets: give one weight per dataset.
    """
    w = [1.0] * len(flat) if weights is None else [
        check_number(f"weights[{i}]", v) for i, v in enumerate(weights)]
    if len(w) != len(flat):
        raise ValueError(f"weights has {len(w)} values for {len(flat)} datasets: give one "
                         "weight per dataset.")
    if any(v < 0 for v in w) or sum(w) <= 0:
        raise ValueError(f"weights={w}: pass weights >= 0, not all zero.")
    base = check_seed(seed) % 2**64 if seed is not None else secrets.randbits(128)  # fresh entropy
    passes = itertools.count()

    def run(_parent: Parent, rec: Recorder) -> Iterator[Any]:
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
            rec.append(SourceStep(x, (taken[i],), dataset=i))
            taken[i] += 1
            yield x

    extra = f", seed={seed}" if seed is not None else ""
    return Op(run, f"sample_from_datasets(<{len(flat)} datasets>, weights={w}{extra})",
              "sample_from_datasets",
              dict(weights=w, seed=seed, stop_on_empty_dataset=bool(stop_on_empty_dataset),
                   rerandomize_each_iteration=bool(rerandomize_each_iteration)))


def choose_from_datasets(flat: list[Any], chooser: Any, stop_on_empty_dataset: bool = True) -> Op:
    """Each element from the one of ``flat`` that ``chooser`` names (an index per element)."""

    def run(_parent: Parent, rec: Recorder) -> Iterator[Any]:
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
            rec.append(SourceStep(x, (taken[i],), dataset=i))
            taken[i] += 1
            yield x

    return Op(run, f"choose_from_datasets(<{len(flat)} datasets>, {chooser!r})",
              "choose_from_datasets", dict(stop_on_empty_dataset=bool(stop_on_empty_dataset)))


class _CacheStore:
    """Where ``cache`` keeps its first complete pass: in memory, or in a pickle file."""

    def __init__(self, path: str):
        self.path = path
        self.memory: list[Any] | None = None

    def load(self) -> list[Any] | None:
        if not self.path:
            return self.memory
        if os.path.exists(self.path + ".glassbox"):
            with open(self.path + ".glassbox", "rb") as f:
                return pickle.load(f)
        return None

    def keep(self, values: list[Any]) -> None:
        if self.path:
            write_atomic(self.path + ".glassbox", pickle.dumps(values))
        elif self.memory is None:  # two passes that ran side by side: the first one is kept
            self.memory = values


def cache(filename: str = "", name: str | None = None) -> Op:
    """The elements of the first complete pass, kept (in memory, or in ``filename + ".glassbox"``).

    The file is a pickle written atomically (not tf.data's format). A first
    pass that stops early keeps nothing and warns, as tf.data does.
    """
    check_name("cache", name)
    path = os.fspath(filename)
    if path and os.path.isdir(path):
        raise IsADirectoryError(f"cache(filename={path!r}) is a folder: filename names the cache "
                                f"file ({path + '.glassbox'!r} would land beside the folder); "
                                f"pass a file name in it, e.g. {os.path.join(path, 'cache')!r}")
    store = _CacheStore(path)

    def run(parent: Parent, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # not a source: it has an input
        cached = store.load()
        if cached is not None:
            for pos, x in enumerate(cached):
                rec.append(CacheStep(x, (pos,), from_cache=True))
                yield x
            return
        values, complete = [], False
        try:
            for pos, x in enumerate(parent()):
                values.append(x)
                rec.append(CacheStep(x, (pos,)))
                yield x
            complete = True
            store.keep(values)
        finally:
            if not complete:
                warnings.warn(PARTIAL_CACHE_WARNING, stacklevel=2)

    return Op(run, f"cache({filename!r})" if path else "cache()", "cache", dict(filename=path))
