"""Where the time goes: per-element, per-stage timelines of real ``tf.data`` pipelines.

A traced pipeline carries, next to each element, a small dict of timestamps
taken with ``tf.timestamp()`` *inside* the mapped functions (no Python
callback on the hot path). :func:`tag` starts the record (an element id),
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

:func:`synthetic_files` is a source whose "open" and "read" sleep for a set
time (like the artificial dataset of TensorFlow's performance guide), so
pictures do not depend on the machine. Drawing is separate:
:func:`plot_timeline` (a Gantt chart, one lane per stage, overlapping bars
stacked into sub-lanes) and :func:`plot_occupancy`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf

from datakit import plotting

_KEY = re.compile(r"^t(\d\d)_(.+)$")


def tag(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Start tracing: each element ``x`` becomes ``(x, {"id": position})``."""
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"tag() takes a tf.data.Dataset, got {type(dataset).__name__}")
    return dataset.enumerate().map(lambda i, x: (x, {"id": i}))


def _stamp_around(make: Callable[[], Any]) -> tuple[Any, tf.Tensor]:
    """Run ``make()`` between two timestamps; return its output and ``[t0, t1]``."""
    t0 = tf.timestamp()
    with tf.control_dependencies([t0]):  # every op made in here waits for t0
        out = tf.nest.map_structure(tf.identity, make())
    with tf.control_dependencies([t0, *tf.nest.flatten(out)]):
        t1 = tf.timestamp()
    return out, tf.stack([t0, t1])


def _add_stage(trace: dict, name: str, times: tf.Tensor) -> dict:
    k = sum(1 for key in trace if _KEY.match(key))
    shape = tf.concat([tf.shape(trace["id"]), [2]], 0)  # one row per element, also in a batch
    return {**trace, f"t{k:02d}_{name}": tf.broadcast_to(times, shape)}


def timed(name: str, fn: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """Wrap ``fn`` for ``map`` on a traced dataset, recording when it ran as stage ``name``.

    ``fn`` sees the element as it would without tracing; ``fn=None`` only
    stamps the time the element passed this point (a zero-length stage).
    """
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][\w ]*", name):
        raise ValueError(f"stage name must be a short word such as 'parse', got {name!r}")
    fn = fn if fn is not None else (lambda *x: x[0] if len(x) == 1 else x)

    def stage(value, trace):
        if not isinstance(trace, dict) or "id" not in trace:
            raise TypeError("timed() needs a traced dataset: start the pipeline with timeline.tag(ds)")
        out, times = _stamp_around(lambda: fn(*value) if isinstance(value, tuple) else fn(value))
        return out, _add_stage(trace, name, times)

    return stage


def sleep_op(seconds: float | tf.Tensor) -> tf.Tensor:
    """A graph op that sleeps ``seconds`` (``py_function`` + ``time.sleep``: no busy core)."""
    seconds = tf.cast(seconds, tf.float64)
    return tf.py_function(lambda s: time.sleep(float(s)) or s, [seconds], tf.float64)


def work(seconds: float, per_item: float = 0.0) -> Callable[[Any], Any]:
    """A stand-in map function that sleeps ``seconds`` (+ ``per_item`` per element of a batch)."""
    if seconds < 0 or per_item < 0:
        raise ValueError("work() takes seconds >= 0 and per_item >= 0")

    def fn(x):
        n = tf.cast(tf.size(x), tf.float64)
        with tf.control_dependencies([sleep_op(seconds + per_item * n)]):
            return tf.identity(x)

    return fn


def synthetic_files(num_files: int = 2, rows_per_file: int = 4, *, open_time: float = 0.02,
                    read_time: float = 0.01, cycle_length: int = 1,
                    num_parallel_calls: int | None = None,
                    deterministic: bool | None = None) -> tf.data.Dataset:
    """Traced rows of ``num_files`` fake files whose open and each read sleep a set time.

    Files are interleaved (``cycle_length``, ``num_parallel_calls`` as in
    ``interleave``); element ``f * rows_per_file + r`` is row ``r`` of file ``f``.

    >>> tl = trace_timeline(synthetic_files(2, 3, open_time=0.001, read_time=0.001))
    >>> tl.stages, sorted(tl.ids.tolist())
    (['open', 'read'], [0, 1, 2, 3, 4, 5])
    """
    if num_files < 1 or rows_per_file < 1 or cycle_length < 1:
        raise ValueError("synthetic_files() needs num_files, rows_per_file, cycle_length >= 1")
    if num_parallel_calls not in (None, tf.data.AUTOTUNE) and num_parallel_calls > cycle_length:
        raise ValueError(f"num_parallel_calls={num_parallel_calls} > cycle_length={cycle_length}: "
                         "interleave cannot read more files at once than it has open")
    if open_time < 0 or read_time < 0:
        raise ValueError("open_time and read_time are seconds >= 0")

    def read_file(f):
        opened = tf.data.Dataset.from_tensors(f).map(  # opens lazily, in the thread that reads
            lambda f: _stamp_around(lambda: sleep_op(open_time))[1])

        def read(t_open, r):
            row_id = f * rows_per_file + r
            out, t_read = _stamp_around(lambda: sleep_op(read_time) * 0 + tf.cast(row_id, tf.float64))
            row_id = tf.cast(out, tf.int64)
            return row_id, {"id": row_id, "t00_open": t_open, "t01_read": t_read}

        return opened.flat_map(
            lambda t: tf.data.Dataset.range(rows_per_file).map(lambda r: read(t, r)))

    return tf.data.Dataset.range(num_files).interleave(
        read_file, cycle_length=cycle_length, block_length=1,
        num_parallel_calls=num_parallel_calls, deterministic=deterministic)


def serial(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """``dataset`` with the runtime's hidden help off (injected prefetch, parallelized maps...)."""
    options = tf.data.Options()
    opt = options.experimental_optimization
    opt.inject_prefetch = False
    opt.map_parallelization = False
    opt.parallel_batch = False
    opt.map_and_batch_fusion = False
    options.autotune.enabled = False
    return dataset.with_options(options)


def stage_names(element_spec: Any) -> list[str]:
    """The stages a traced dataset records, in pipeline order."""
    if not (isinstance(element_spec, tuple) and len(element_spec) == 2
            and isinstance(element_spec[1], dict) and "id" in element_spec[1]):
        raise TypeError("not a traced dataset: start it with timeline.tag(ds) or a traced source")
    keys = sorted(k for k in element_spec[1] if _KEY.match(k))
    return [_KEY.match(k).group(2) for k in keys]


@dataclass
class Timeline:
    """A traced run. Times are seconds since the consumer asked for its first element."""

    stages: list[str]
    ids: np.ndarray        # (N,) element id, in the order the consumer received them
    step: np.ndarray       # (N,) consumer step that received the element
    start: np.ndarray      # (N, S) when stage s started work on the element
    end: np.ndarray        # (N, S) when it finished
    requested: np.ndarray  # (M,) consumer asked for the next element
    received: np.ndarray   # (M,) ... got it
    finished: np.ndarray   # (M,) ... finished its (simulated) training step

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
    if step_time < 0 or (steps is not None and steps < 1):
        raise ValueError("step_time must be >= 0 and steps >= 1 (or None for the whole dataset)")
    ids, step, times, req, got, fin = [], [], [], [], [], []
    origin = time.time()
    iterator = iter(dataset)
    while steps is None or len(req) < steps:
        t = time.time() if req else origin  # the first request also made the iterator
        try:
            value, trace = next(iterator)
        except StopIteration:
            break
        req.append(t)
        got.append(time.time())
        if train_step is not None:
            train_step(value)
        elif step_time:
            time.sleep(step_time)
        fin.append(time.time())
        i = np.reshape(trace["id"].numpy(), -1)
        ids.append(i)
        step.append(np.full(len(i), len(req) - 1))
        keys = sorted(k for k in trace if _KEY.match(k))
        times.append(np.stack([np.reshape(trace[k].numpy(), (-1, 2)) for k in keys], 1)
                     if keys else np.zeros((len(i), 0, 2)))
    t = np.concatenate(times) - origin if times else np.zeros((0, len(names), 2))
    cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dt))
    return Timeline(names, cat(ids, np.int64), cat(step, np.int64), t[..., 0], t[..., 1],
                    np.array(req) - origin, np.array(got) - origin, np.array(fin) - origin)


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
    lanes, out = [], np.zeros(len(start), np.int64)
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
    """Total time, mean wait fraction and each stage's peak parallelism, as plain numbers."""
    out = {"seconds": float(tl.finished[-1]) if len(tl.finished) else 0.0,
           "steps": len(tl.received),
           "mean_wait_fraction": float(tl.wait_fraction().mean()) if len(tl.received) else 0.0}
    for s, name in enumerate(tl.stages):
        b0, b1, _ = bars(tl, s)
        out[f"{name}_parallelism"] = int(sub_lanes(b0, b1).max() + 1) if len(b0) else 0
    return out


def plot_timeline(tl: Timeline, ax=None, *, title: str = "Timeline", occupancy_ax: bool = True):
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
        for name, b0, b1, st in lanes + [("train step", tl.received, tl.finished,
                                         np.arange(len(tl.received)))]:
            sub = sub_lanes(b0, b1) if len(b0) else np.zeros(0, int)
            n = int(sub.max() + 1) if len(sub) else 1
            for a, b, k, s in zip(b0, b1, sub, st):
                ax.barh(y + k, max(b - a, 1e-4), left=a, height=0.8,
                        color=plotting.epoch_color(int(s)), edgecolor="white", linewidth=0.5)
            ticks.append(y + (n - 1) / 2)
            labels.append(name if n == 1 else f"{name} (x{n})")
            if name == "train step" and len(tl.received):
                labels[-1] += f"\nwaits {tl.wait_fraction().mean():.0%}"

            y += n + 0.6
        if len(tl.received):  # consumer waiting: hatched bars on the consumer lane
            ax.barh([y - 1.6] * len(tl.received), tl.received - tl.requested,
                    left=tl.requested, height=0.8, color="none", edgecolor=plotting.MUTED,
                    hatch="////", linewidth=0, label="consumer waiting for input")
            ax.legend(loc="lower right", fontsize=8)
        ax.set_yticks(ticks, labels)
        ax.invert_yaxis()
        ax.set_title(title)
        if not (ax.get_subplotspec() and ax.get_subplotspec().get_geometry()[0] > 1):
            ax.set_xlabel("time (s)")
    return ax


def plot_occupancy(tl: Timeline, ax=None):
    """Elements produced but not yet taken by the consumer, over time."""
    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(8, 1.5))
        t, n = occupancy(tl)
        ax.step(np.concatenate([[0.0], t]), np.concatenate([[0], n]), where="post",
                color=plotting.PALETTE[0])
        ax.set_ylabel("ready,\nnot taken")
        ax.set_ylim(bottom=0)
        ax.set_xlabel("time (s)")
    return ax
