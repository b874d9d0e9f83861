"""How fast is my input pipeline? Throughput and memory of any dataset, measured.

:func:`benchmark` iterates a dataset from Python (as your training loop
would), skips a few warm-up steps, and reports elements/s, batches/s, the
time to the first element and how much the process's memory (RSS) grew at
its peak. It takes any iterable: a ``tf.data.Dataset``, a PyTorch
``DataLoader``, a list of arrays.

>>> import tensorflow as tf
>>> r = benchmark(tf.data.Dataset.range(100).batch(10), warmup=2, progress=False)
>>> r.batches, r.elements, r.elements == 10 * r.batches
(8, 80, True)
>>> r.elements_per_s > 0 and r.first_element_s >= 0 and r.peak_rss_mb >= r.rss_before_mb
True

The rates are timed from the end of the warm-up to the arrival of the last
element (not to the teardown of the iterator, which can take longer). On a
shared machine timings are noisy: run it a few times and look at the
minimum and median, as ``benchmarks/`` does.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from datakit.core.arguments import check_count
from datakit.core.progress import progress_bar
from datakit.perf.memory import RssSampler

__all__ = ["benchmark"]


@dataclass
class BenchResult:
    """What :func:`benchmark` measured. Times in seconds, memory in MB (10**6 bytes)."""

    batches: int               # batches timed (after the warm-up)
    elements: int              # elements in those batches (leading dimension of the first tensor)
    seconds: float             # from the end of the warm-up to the last batch
    elements_per_s: float
    batches_per_s: float
    first_element_s: float     # from creating the iterator to the first batch
    warmup: int
    rss_before_mb: float       # before the iterator was created
    peak_rss_mb: float         # highest RSS sampled while iterating
    peak_rss_growth_mb: float  # peak_rss_mb - rss_before_mb

    def __str__(self) -> str:
        return (f"{self.elements_per_s:,.0f} elements/s, {self.batches_per_s:,.1f} batches/s "
                f"({self.elements:,} elements in {self.seconds:.2f} s); first element after "
                f"{self.first_element_s:.2f} s; peak RSS +{self.peak_rss_growth_mb:,.0f} MB")

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def count_elements(batch: Any) -> int:
    """Elements in one batch: the leading dimension of its first tensor (1 for a scalar).

    >>> import numpy as np
    >>> count_elements({"x": np.zeros((32, 9)), "y": np.zeros(32)}), count_elements(3.0)
    (32, 1)
    """
    while isinstance(batch, (tuple, list, dict)) and len(batch):
        batch = batch[sorted(batch)[0]] if isinstance(batch, dict) else batch[0]
    shape = getattr(batch, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else 1


def _known_length(dataset: Any) -> int | None:
    card = getattr(dataset, "cardinality", None)
    if callable(card):
        n = int(card())
        return n if n >= 0 else None
    try:
        return len(dataset)
    except TypeError:
        return None


def benchmark(dataset: Iterable[Any], steps: int | None = None, *, warmup: int = 1,
              progress: bool | None = None, sample_every: float = 0.005) -> BenchResult:
    """Iterate ``warmup + steps`` batches of ``dataset`` (all if ``steps`` is None) and time it.

    Args:
        dataset: anything iterable (a ``tf.data.Dataset``, a ``DataLoader``...).
        steps: batches to time after the warm-up; ``None``: the whole dataset.
        warmup: batches read first and not timed (pipelines start slowly).
        progress: a progress bar (:mod:`datakit.core.progress`): ``None``
            shows one in a terminal or notebook once the run has lasted a
            second, ``True`` / ``False`` force it on or off.
        sample_every: seconds between resident-memory samples.

    Raises:
        TypeError: ``dataset`` is not iterable.
        ValueError: ``steps < 1``, ``warmup < 0``, or ``steps=None`` on a
            dataset that repeats forever.
    """
    check_count("steps", steps, none=True,
                fix="steps must be >= 1 (or None for the whole dataset)")
    check_count("warmup", warmup, 0)
    if not hasattr(dataset, "__iter__"):
        raise TypeError(f"benchmark() takes an iterable dataset, got {type(dataset).__name__}")
    known = _known_length(dataset)
    card = getattr(dataset, "cardinality", None)
    if steps is None and callable(card) and int(card()) == -1:  # tf.data.INFINITE_CARDINALITY
        raise ValueError("the dataset repeats forever: pass steps=... to benchmark a part of it")
    total = warmup + steps if steps is not None else known
    sampler = RssSampler(sample_every)
    before = sampler.peak
    sampler.start()
    bar = progress_bar(total, "batches", progress=progress, unit="batch")
    batches = elements = 0
    t_start = time.perf_counter()
    # seconds to the first batch; when the timed part began and when the last batch came
    t_first, t_timed, t_last = 0.0, t_start, t_start
    try:
        iterator = iter(dataset)
        while total is None or batches < total:
            try:
                batch = next(iterator)
            except StopIteration:
                break
            t_last = time.perf_counter()
            if batches == 0:
                t_first = t_last - t_start
            batches += 1
            if batches == warmup:
                t_timed = t_last
            elif batches > warmup:
                elements += count_elements(batch)
            bar.update(1)
        del iterator
    finally:
        sampler.stop.set()
        sampler.join()
        bar.close()
    timed = batches - warmup
    if timed < 1:
        raise ValueError(f"the dataset gave {batches} batches, not more than warmup={warmup}: "
                         "lower warmup or pass a longer dataset")
    seconds = max(t_last - t_timed, 1e-9)
    mb = 1e-6
    return BenchResult(timed, elements, seconds, elements / seconds, timed / seconds, t_first,
                       warmup, before * mb, sampler.peak * mb, (sampler.peak - before) * mb)
