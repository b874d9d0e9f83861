"""Which source each element of a real ``sample_from_datasets`` came from, and how batches mix.

:func:`tag_sources` makes every element of source ``i`` carry ``(i, its
position in source i)`` next to its value, at the cost of one small map per
source; :func:`trace_sample` runs the real ``tf.data.Dataset.
sample_from_datasets`` over tagged sources and returns plain arrays;
:func:`source_counts` counts sources per batch and :func:`plot_source_batches`
draws them; :func:`resampled_labels` runs a real ``rejection_resample`` without
its console noise.

>>> import tensorflow as tf
>>> t = trace_sample([tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)], seed=1)
>>> sorted(zip(t.sources.tolist(), t.positions.tolist(), [int(v) for v in t.values]))
[(0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 10), (1, 1, 11)]
>>> source_counts(t.sources, batch_size=5, num_sources=2).tolist()
[[3, 2]]
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from datakit import plotting
from datakit.core.arguments import check_count, check_number, check_ordered, check_seed
from datakit.core.class_ids import check_class_ids

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["trace_sample", "source_counts", "plot_source_batches", "resampled_labels"]


def tag_sources(datasets: Sequence[Any]) -> list[Any]:
    """Each source's elements ``x`` as ``(x, {"source": i, "position": p})`` (int64 tags)."""
    import tensorflow as tf

    if not datasets or not all(isinstance(d, tf.data.Dataset) for d in datasets):
        raise TypeError("tag_sources() takes a non-empty list of tf.data.Dataset, got "
                        f"{[type(d).__name__ for d in datasets]}.")

    def tagger(i: int) -> Any:
        return lambda p, x: (x, {"source": tf.constant(i, tf.int64), "position": p})

    return [d.enumerate().map(tagger(i)) for i, d in enumerate(datasets)]


@dataclass
class SampleTrace:
    """A real mixed run: for each output element, its source, its position there and its value."""

    sources: np.ndarray     # int64 [elements]
    positions: np.ndarray   # int64 [elements]
    values: list[Any]


def trace_sample(datasets: Sequence[Any], weights: Sequence[float] | None = None, *,
                 seed: int | None = None, stop_on_empty_dataset: bool = False,
                 max_elements: int | None = None) -> SampleTrace:
    """Run the real ``sample_from_datasets`` over tagged sources: where each element came from.

    Args:
        datasets: the sources (``tf.data.Dataset``).
        weights: sampling probabilities, one per source (None: equal).
        seed: the sampling seed (same seed, same order).
        stop_on_empty_dataset: end at the first exhausted source, as tf.data does.
        max_elements: read at most this many (needed for endless sources).

    Raises:
        TypeError: a source is not a ``tf.data.Dataset``.
        ValueError: ``max_elements`` < 0, or the weights do not match the sources.
    """
    import tensorflow as tf

    seed = check_seed(seed)
    datasets = check_ordered("datasets", datasets, "tf.data.Dataset")
    if not datasets:
        raise ValueError("datasets=[] holds no source: pass a list of one or more "
                         "tf.data.Dataset.")
    if weights is not None and len(weights) != len(datasets):
        raise ValueError(f"weights has {len(weights)} values for {len(datasets)} datasets: "
                         "give one weight per dataset.")
    mixed = tf.data.Dataset.sample_from_datasets(
        tag_sources(datasets), weights=None if weights is None else list(weights), seed=seed,
        stop_on_empty_dataset=stop_on_empty_dataset)
    if max_elements is not None:
        mixed = mixed.take(check_count("max_elements", max_elements, 0))
    sources, positions, values = [], [], []
    for x, tag in mixed.as_numpy_iterator():
        sources.append(tag["source"])
        positions.append(tag["position"])
        values.append(x)
    return SampleTrace(np.array(sources, np.int64), np.array(positions, np.int64), values)


def source_counts(sources: Any, batch_size: int, num_sources: int | None = None) -> np.ndarray:
    """``[batch, source]``: how many elements of each source (or label) each batch holds.

    >>> source_counts([0, 0, 1, 2, 2], batch_size=2).tolist()
    [[2, 0, 0], [0, 1, 1], [0, 0, 1]]
    """
    size = check_count("batch_size", batch_size)
    s = np.asarray(sources, dtype=np.int64)
    if s.size and s.min() < 0:
        raise ValueError("sources must be indices >= 0 (source numbers or class ids).")
    k = num_sources if num_sources is not None else int(s.max()) + 1 if s.size else 0
    return np.stack([np.bincount(s[i:i + size], minlength=k) for i in range(0, len(s), size)]
                    ) if s.size else np.zeros((0, k), np.int64)


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Send what C++ code writes to file descriptor 2 to /dev/null for a while."""
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def resampled_labels(labels: Any, target_dist: Sequence[float], *, seed: int | None = None
                     ) -> np.ndarray:
    """The labels a real ``rejection_resample(target_dist)`` of ``labels`` gives, in order.

    Without ``initial_dist`` TensorFlow reads the source twice, a rejecting pass
    and an unfiltered one mixed in, so the count can differ from ``len(labels)``
    and an element can come twice. It prints "Proportion of examples rejected by
    sampler is high" (from C++, up to 10 times) while it rejects more than half;
    this runs it with that output silenced.

    >>> kept = resampled_labels([0] * 700 + [1] * 300, [0.5, 0.5], seed=0)
    >>> bool(0.4 < kept.mean() < 0.6)
    True
    >>> resampled_labels([0, 1, 2], [0.5, 0.5])  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    ValueError: labels: label 2 at position 2 is outside target_dist's 2 classes: each label must
    be a class id 0..1.
    """
    import tensorflow as tf

    seed = check_seed(seed)
    target = [check_number(f"target_dist[{i}]", p) for i, p in
              enumerate(check_ordered("target_dist", target_dist, "probabilities"))]
    if any(p < 0 for p in target) or abs(sum(target) - 1) > 1e-6:
        raise ValueError(f"target_dist={target} must be probabilities >= 0 that sum to 1 "
                         f"(they sum to {sum(target):g}): divide each by their sum.")
    labels = check_class_ids(labels, len(target), classes_from="target_dist")

    logger = tf.get_logger()
    level = logger.level
    logger.setLevel("ERROR")  # a deprecation notice from inside rejection_resample
    try:
        ds = tf.data.Dataset.from_tensor_slices(labels)
        resampled = ds.rejection_resample(class_func=lambda y: y,
                                          target_dist=target, seed=seed)
        with _quiet_native_stderr():
            return np.array([y for _, y in resampled.as_numpy_iterator()], dtype=np.int64)
    finally:
        logger.setLevel(level)


def plot_source_batches(counts: np.ndarray, ax: Axes | None = None, *,
                        title: str = "What each batch holds", label: str = "source") -> Axes:
    """Stacked bars: the elements of each source (or label) in every batch."""
    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(7, 2.8))
        plotting.stacked_bars(ax, counts, label)
        ax.set_xlabel("batch")
        ax.set_ylabel("elements")
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    return ax
