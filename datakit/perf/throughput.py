"""Throughput of a pipeline as ``fit()`` consumes it, and how long its consumer waits.

:func:`measure` drains a dataset inside a ``tf.function`` (as Keras ``fit()``
does: no Python loop per batch, which at batch 32 costs more than a fast
reader) and times it from the first element to the last one taken.
:func:`consumer_wait` is the fraction of a Python consumer's time spent waiting
for elements. The tuner, :mod:`datakit.perf.tune`, is built on them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import tensorflow as tf

from datakit.core.arguments import check_seconds

__all__ = ["Run", "consumer_wait", "measure"]


# -- measuring ------------------------------------------------------------------------------


def _summary(x: Any) -> tuple[tf.Tensor, tf.Tensor]:
    """(rows, a value to sum) of one element: its first tensor's leading dimension and sum."""
    comps = [c for c in tf.nest.flatten(x) if isinstance(c, tf.Tensor)]
    if not comps:
        return tf.constant(1, tf.int64), tf.constant(0.0, tf.float64)
    c = comps[0]
    rows = tf.concat([tf.shape(c, out_type=tf.int64), [1]], 0)[0]  # 1 for a scalar
    if c.dtype == tf.string:
        c = tf.strings.length(c)
    elif not (c.dtype.is_numpy_compatible and (c.dtype.is_bool or c.dtype.is_integer
                                               or c.dtype.is_floating)):
        return rows, tf.constant(0.0, tf.float64)
    return rows, tf.reduce_sum(tf.cast(c, tf.float64))


@dataclass
class Run:
    """One timed run: elements and rows after the first element, and how long they took."""

    elements: int
    rows: int
    seconds: float
    first_s: float      # to the first element (start-up, shuffle buffer filling...)
    exhausted: bool     # the dataset ended before the time ran out
    count: int = 0      # every element taken, the first one included
    total_rows: int = 0  # their rows, the first element's included

    @property
    def elements_per_s(self) -> float:
        return self.elements / self.seconds if self.seconds > 0 else float("nan")

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else float("nan")


def _drain(dataset: tf.data.Dataset, seconds: tf.Tensor, limit: tf.Tensor) -> tuple:
    """Drain ``dataset`` for about ``seconds``, at most ``limit`` elements (a new iterator
    per call)."""
    it = iter(dataset)
    t0 = tf.timestamp()
    zero = tf.constant(0, tf.int64)

    def cond(n: tf.Tensor, rows: tf.Tensor, first_rows: tf.Tensor, acc: tf.Tensor,
             t1: tf.Tensor, t2: tf.Tensor, more: tf.Tensor) -> tf.Tensor:
        return more & (n < limit) & ((n < 2) | (t2 - t1 < seconds))

    def body(n: tf.Tensor, rows: tf.Tensor, first_rows: tf.Tensor, acc: tf.Tensor,
             t1: tf.Tensor, t2: tf.Tensor, more: tf.Tensor) -> tuple:
        opt = it.get_next_as_optional()

        def take() -> tuple:
            r, v = _summary(opt.get_value())
            now = tf.timestamp()
            first = tf.equal(n, 0)
            return (n + 1, tf.where(first, rows, rows + r), tf.where(first, r, first_rows),
                    acc + v, tf.where(first, now, t1), now)

        out = tf.cond(opt.has_value(), take,
                      lambda: (n, rows, first_rows, acc, t1, t2))
        return (*out, opt.has_value())

    n, rows, first_rows, acc, t1, t2, more = tf.while_loop(
        cond, body, (zero, zero, zero, tf.constant(0.0, tf.float64), t0, t0,
                     tf.constant(True)))
    return n, rows, first_rows, acc, t0, t1, t2, more


#: The drain, traced once per element structure: the dataset is an argument, not a capture,
#: so the doctor's dozens of measurements of one pipeline (its stages, its variants) share
#: traces instead of tracing one each (about 0.1 CPU s apiece). Written with ``tf.while_loop``
#: and ``tf.cond``: AutoGraph has nothing to convert.
_DRAIN = tf.function(_drain, autograph=False)


class _NoRetracingWarning(logging.Filter):
    """Drop TensorFlow's "triggered tf.function retracing" warning: :func:`measure` traces
    a new drain for each new element structure, as intended."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "triggered tf.function retracing" not in record.getMessage()


@contextmanager
def _expected_tracing() -> Iterator[None]:
    log, quiet = tf.get_logger(), _NoRetracingWarning()
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def measure(dataset: tf.data.Dataset, seconds: float = 0.5, *, repeats: int = 1,
            limit: int = 2**62) -> Run:
    """Drain ``dataset`` inside a ``tf.function`` (as ``fit()`` consumes) for about ``seconds``.

    Timed from the first element to the last one taken (not to teardown);
    each element's first tensor is summed so nothing is optimized away.
    With ``repeats > 1``, the fastest run counts (on a shared machine the
    minimum time is the signal).

    >>> r = measure(tf.data.Dataset.range(100).batch(10), seconds=1.0)
    >>> r.elements, r.rows, r.exhausted
    (9, 90, True)
    """
    check_seconds("seconds", seconds, positive=True, func="measure")
    runs = []
    for _ in range(repeats):
        with _expected_tracing():
            out = _DRAIN(dataset, tf.constant(seconds, tf.float64), tf.constant(limit, tf.int64))
        n, rows, first_rows, _, t0, t1, t2, more = (v.numpy() for v in out)
        runs.append(Run(max(int(n) - 1, 0), int(rows), float(t2 - t1), float(t1 - t0),
                        not bool(more), int(n), int(rows + first_rows)))
    return max(runs, key=lambda r: r.elements_per_s if r.elements else -1.0)


def consumer_wait(dataset: tf.data.Dataset, step_time: float, seconds: float) -> float:
    """Fraction of a Python consumer's time spent waiting for elements, at ``step_time`` each."""
    waited = total = 0.0
    start = time.perf_counter()
    it = iter(dataset)
    for k in range(10**9):
        t = time.perf_counter()
        try:
            next(it)
        except StopIteration:
            break
        if k:  # the first element is start-up
            waited += time.perf_counter() - t
        if step_time:
            time.sleep(step_time)
        if k:
            total += time.perf_counter() - t
        if time.perf_counter() - start > seconds and k > 2:
            break
    return waited / total if total else 1.0
