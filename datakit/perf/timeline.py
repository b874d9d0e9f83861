"""Where the time goes: per-element, per-stage timelines of real ``tf.data`` pipelines.

A traced pipeline carries, next to each element, one small float64 tensor:
the element's id, then a (start, end) pair per stage, taken with
``tf.timestamp()`` *inside* the mapped functions (no Python callback on the
hot path); the stage names travel in the element structure, so they cost
nothing at run time. :func:`tag` starts the record (an element id),
:func:`timed` wraps a map function so it also records when it started and
finished, and :func:`trace_timeline` plays the consumer (a training step, or
a simulated one) and returns a :class:`Timeline` of plain NumPy arrays:

>>> import tensorflow as tf
>>> ds = tag(tf.data.Dataset.range(6)).map(timed("square", lambda x: x * x))
>>> ds = ds.batch(2).map(timed("sum", lambda x: tf.reduce_sum(x)))
>>> tl = trace_timeline(ds)
>>> tl.stages, tl.ids.tolist(), tl.step.tolist()
(['square', 'sum'], [0, 1, 2, 3, 4, 5], [0, 0, 1, 1, 2, 2])
>>> bool((tl.start <= tl.end).all()), bool((tl.start[:, 1] >= tl.end[:, 0]).all())
(True, True)

For pictures that do not depend on the machine, feed it the sleeping
source and map of :mod:`datakit.perf.synthetic` (the record's format is in
:mod:`datakit.perf.stamps`); the kit's CSV reader traces
itself with ``csv_reader_dataset(..., trace=True)``. Drawing is separate:
:func:`plot_timeline` (a Gantt chart, one lane per stage, overlapping bars
stacked into sub-lanes) and :func:`plot_occupancy`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf
from matplotlib.axes import Axes

from datakit import plotting
from datakit.core.arguments import check_count, check_seconds
from datakit.perf.stamps import TRACE, add_stage, check_stage_name, is_traced, stamp_around

__all__ = ["tag", "timed", "between", "trace_timeline", "bars", "occupancy", "summary",
           "plot_timeline"]

def tag(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Start tracing: each element ``x`` becomes ``(x, trace)``, the trace holding its position."""
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"tag() takes a tf.data.Dataset, got {type(dataset).__name__}")
    return dataset.enumerate().map(tf.autograph.experimental.do_not_convert(
        lambda i, x: (x, {TRACE: tf.cast(i, tf.float64)[None]})))


def timed(name: str, fn: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """Wrap ``fn`` for ``map`` on a traced dataset, recording when it ran as stage ``name``.

    ``fn`` sees the element as it would without tracing; ``fn=None`` only
    stamps the time the element passed this point (a zero-length stage).
    """
    check_stage_name(name)
    fn = fn if fn is not None else (lambda *x: x[0] if len(x) == 1 else x)

    def stage(value: Any, trace: dict) -> tuple[Any, dict]:
        if not is_traced((value, trace)):
            raise TypeError("timed() needs a traced dataset: start the pipeline with "
                            "timeline.tag(ds)")
        out, times = stamp_around(lambda: fn(*value) if isinstance(value, tuple) else fn(value))
        return out, add_stage(trace, name, times)

    return stage


def between(name: str) -> Callable[[tf.data.Dataset], tf.data.Dataset]:
    """For ``apply``: stage ``name`` spans from when this point was asked for an element to its
    arrival.

    On a dataset that is not traced yet it also tags the elements.

    Use it right after an op you cannot wrap (``batch``, a library's
    reader). The bar is the time the ops upstream worked on the element
    (the request is stamped by a ``zip`` whose first input takes a
    timestamp, the arrival by a ``scan`` right after it). The gap between
    one bar's end and the next bar's start is time nobody asked: whatever
    is downstream was busy or its buffer was full (back-pressure), so a
    lane with gaps is a stage that could go faster than it is asked to.
    """
    check_stage_name(name)

    def asked(_: tf.Tensor) -> tf.Tensor:
        return tf.timestamp()  # runs when zip asks for the next element: the request time

    def arrival(count: tf.Tensor, element: tuple) -> tuple[tf.Tensor, tuple]:
        requested, element = element
        now = tf.timestamp()
        if is_traced(element):
            value, trace = element
        else:  # not traced yet: tag it here too
            value, trace = element, {TRACE: tf.cast(count, tf.float64)[None]}
        return count + 1, (value, add_stage(trace, name, tf.stack([requested, now])))

    def apply(ds: tf.data.Dataset) -> tf.data.Dataset:
        requests = tf.data.Dataset.from_tensors(0).repeat().map(asked)
        return tf.data.Dataset.zip((requests, ds)).scan(tf.constant(0, tf.int64), arrival)

    return apply


def busy_fraction(tl: Timeline, stage: int) -> float:
    """Fraction of the run (first start to last end) during which stage ``stage`` had a bar."""
    b0, b1, _ = bars(tl, stage)
    if not len(b0):
        return 0.0
    order = np.argsort(b0)
    covered, reach = 0.0, -np.inf
    for a, b in zip(b0[order], b1[order], strict=True):  # union of intervals
        covered += max(0.0, b - max(a, reach))
        reach = max(reach, b)
    return float(covered / max(b1.max() - b0.min(), 1e-12))


def stage_names(element_spec: Any) -> list[str]:
    """The stages a traced dataset records, in pipeline order."""
    if not is_traced(element_spec):
        raise TypeError("not a traced dataset: start it with timeline.tag(ds) or a traced source")
    names = next(iter(element_spec[1]))[len(TRACE):]
    return names.split(",") if names else []


@dataclass
class Timeline:
    """A traced run. Times are seconds since the consumer asked for its first element.

    Creating the iterator (where ``tf.data`` rewrites and instantiates the
    pipeline) comes before that and is kept apart in ``startup`` seconds.
    """

    stages: list[str]
    ids: np.ndarray        # (N,) element id, in the order the consumer received them
    step: np.ndarray       # (N,) consumer step that received the element
    start: np.ndarray      # (N, S) when stage s started work on the element
    end: np.ndarray        # (N, S) when it finished
    requested: np.ndarray  # (M,) consumer asked for the next element
    received: np.ndarray   # (M,) ... got it
    finished: np.ndarray   # (M,) ... finished its (simulated) training step
    startup: float = 0.0   # seconds spent creating the iterator, before time 0

    @property
    def ready(self) -> np.ndarray:
        """(M,) when each consumer step's element was produced (its last stage ended)."""
        if not self.stages:
            return self.received.copy()
        out = np.full(len(self.received), -np.inf)
        np.maximum.at(out, self.step, self.end[:, -1])
        return out

    def wait_fraction(self) -> np.ndarray:
        """(M,) fraction of each step the consumer spent waiting for input."""
        span = np.maximum(self.finished - self.requested, 1e-12)
        return (self.received - self.requested) / span


def trace_timeline(dataset: tf.data.Dataset, *, step_time: float = 0.0,
                   train_step: Callable[[Any], Any] | None = None,
                   steps: int | None = None) -> Timeline:
    """Iterate a traced dataset as a training loop would and record when everything happened.

    Each step calls ``train_step(element)`` if given, else sleeps ``step_time``.
    """
    names = stage_names(dataset.element_spec)
    check_seconds("step_time", step_time)
    check_count("steps", steps, none=True, fix="pass steps >= 1 (or None for the whole dataset)")
    ids: list[np.ndarray] = []  # per step: the element ids, step index and stage times
    step: list[np.ndarray] = []
    times: list[np.ndarray] = []
    req: list[float] = []  # per step: when it asked, got its element, finished
    got: list[float] = []
    fin: list[float] = []
    t0 = time.time()
    iterator = iter(dataset)
    origin = time.time()
    while steps is None or len(req) < steps:
        asked = time.time()
        try:
            value, trace = next(iterator)
        except StopIteration:
            break
        req.append(asked)
        got.append(time.time())
        if train_step is not None:
            train_step(value)
        elif step_time:
            time.sleep(step_time)
        fin.append(time.time())
        record = np.reshape(next(iter(trace.values())).numpy(), (-1, 1 + 2 * len(names)))
        ids.append(record[:, 0].astype(np.int64))
        step.append(np.full(len(record), len(req) - 1))
        times.append(record[:, 1:].reshape(-1, len(names), 2))
    t = np.concatenate(times) - origin if times else np.zeros((0, len(names), 2))

    def cat(xs: list[np.ndarray], dt: type) -> np.ndarray:
        return np.concatenate(xs) if xs else np.zeros(0, dt)

    return Timeline(names, cat(ids, np.int64), cat(step, np.int64), t[..., 0], t[..., 1],
                    np.array(req) - origin, np.array(got) - origin, np.array(fin) - origin,
                    origin - t0)


def bars(tl: Timeline, stage: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(start, end, first_step)`` intervals of one stage (shared work drawn once)."""
    pairs = np.stack([tl.start[:, stage], tl.end[:, stage]], 1)
    uniq, first = np.unique(pairs, axis=0, return_index=True)
    return uniq[:, 0], uniq[:, 1], tl.step[first]


def sub_lanes(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Lane index for each interval so that intervals in one lane never overlap (greedy).

    >>> sub_lanes(np.array([0., 1., 3., 5.]), np.array([2., 4., 6., 7.])).tolist()
    [0, 1, 0, 1]
    """
    lanes: list[float] = []  # the end of the last interval in each lane
    out = np.zeros(len(start), np.int64)
    for i in np.lexsort((end, start)):
        free = [k for k, last in enumerate(lanes) if last <= start[i]]
        if free:
            lanes[free[0]] = end[i]
        else:
            lanes.append(end[i])
        out[i] = free[0] if free else len(lanes) - 1
    return out


def occupancy(tl: Timeline) -> tuple[np.ndarray, np.ndarray]:
    """Prefetch buffer occupancy as a step function: ``(times, produced - consumed)``."""
    events = np.concatenate([tl.ready, tl.received])
    delta = np.concatenate([np.ones(len(tl.ready)), -np.ones(len(tl.received))])
    order = np.lexsort((-delta, events))  # at equal times count the arrival first
    return events[order], np.cumsum(delta[order]).astype(np.int64)


def summary(tl: Timeline) -> dict[str, float]:
    """Total time, mean wait fraction, each stage's peak parallelism and busy fraction."""
    out = {"seconds": float(tl.finished[-1]) if len(tl.finished) else 0.0,
           "steps": len(tl.received),
           "mean_wait_fraction": float(tl.wait_fraction().mean()) if len(tl.received) else 0.0}
    for s, name in enumerate(tl.stages):
        b0, b1, _ = bars(tl, s)
        out[f"{name}_parallelism"] = int(sub_lanes(b0, b1).max() + 1) if len(b0) else 0
        out[f"{name}_busy_fraction"] = busy_fraction(tl, s)
    return out


def plot_timeline(tl: Timeline, ax: Axes | None = None, *, title: str = "Timeline",
                  occupancy_ax: bool = True) -> Axes:
    """Gantt chart: one lane per stage (sub-lanes when work overlaps), then the consumer.

    Bars are coloured by the consumer step that received the element. With
    ``ax=None`` and ``occupancy_ax`` a second panel shows :func:`plot_occupancy`.
    Returns the Gantt Axes.
    """
    with plotting.style():
        if ax is None and occupancy_ax:
            fig, (ax, ax2) = plt.subplots(2, 1, sharex=True, figsize=(8, 4),
                                          gridspec_kw={"height_ratios": [3, 1]})
            plot_occupancy(tl, ax2)
        ax = plotting.new_axes(ax)
        y, ticks, labels = 0.0, [], []
        lanes = [(name, *bars(tl, s)) for s, name in enumerate(tl.stages)]
        span = max(float(tl.finished.max()) if len(tl.finished) else 0.0, 1e-3)
        for name, b0, b1, st in lanes + [("train step", tl.received, tl.finished,
                                         np.arange(len(tl.received)))]:
            sub = sub_lanes(b0, b1) if len(b0) else np.zeros(0, int)
            n = int(sub.max() + 1) if len(sub) else 1
            for a, b, k, s in zip(b0, b1, sub, st, strict=True):
                thin = b - a < span / 150  # a white edge would hide a thin bar
                ax.barh(y + k, max(b - a, span / 400), left=a, height=0.8,
                        color=plotting.epoch_color(int(s)), edgecolor="white",
                        linewidth=0 if thin else 0.5)
            ticks.append(y + (n - 1) / 2)
            labels.append(name if n == 1 else f"{name} (x{n})")
            if name == "train step" and len(tl.received):
                labels[-1] += f"\nwaits {tl.wait_fraction().mean():.0%}"

            y += n + 0.6
        if len(tl.received):  # consumer waiting: hatched bars on the consumer lane
            ax.barh([y - 1.6] * len(tl.received), tl.received - tl.requested,
                    left=tl.requested, height=0.8, color="none", edgecolor=plotting.MUTED,
                    hatch="////", linewidth=0, label="train step waiting in next()")
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8,
                      handlelength=3, borderaxespad=0.2)
        ax.set_yticks(ticks, labels)
        ax.invert_yaxis()
        ax.set_title(title, loc="left")
        if not ((spec := ax.get_subplotspec()) and spec.get_geometry()[0] > 1):
            ax.set_xlabel("time (s)")
    return ax


def plot_occupancy(tl: Timeline, ax: Axes | None = None) -> Axes:
    """Elements produced but not yet taken by the consumer, over time."""
    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(8, 1.5))
        t, n = occupancy(tl)
        ax.step(np.concatenate([[0.0], t]), np.concatenate([[0], n]), where="post",
                color=plotting.PALETTE[0])
        ax.set_ylabel("ready,\nnot taken")
        ax.yaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.set_ylim(bottom=0)
        ax.set_xlabel("time (s)")
    return ax
