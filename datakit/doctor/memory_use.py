"""Where a pipeline's memory goes: each stage's holdings predicted, the growth measured.

:func:`memory_report` walks the chain of any ``tf.data`` pipeline (as the time
doctor does) and predicts, for every stage, the host memory it can hold at most
(:func:`datakit.doctor.holdings.holding`). Then it runs the pipeline with a consumer
that takes ``step_time`` per element (so buffers fill, as during ``fit()``), then on
until every in-memory ``cache`` is full (:mod:`datakit.doctor.cache_fill`), within
``budget`` seconds; a pipeline that yields nothing is cancelled (:mod:`datakit.doctor.
deadline`) and the stage that waits is named. It measures two things while it runs:
the process's resident memory (RSS, what the OS counts;
its peak exact on Linux, from the kernel's high-water mark reset before the run)
and the bytes of tensors TensorFlow's CPU allocator holds
(``tf.config.experimental.get_memory_info("CPU:0")``). The growth is the larger of
the two: RSS alone misses memory the allocator reuses (TensorFlow's oneDNN builds,
the default on x86, keep freed tensors' memory in a pool, so a second pipeline in
the same process can hold 30 MB without RSS moving), the allocator alone misses
buffers that are not tensors (files' read buffers). RSS is the whole process's:
memory another thread frees or takes during the run (an earlier iterator whose threads
end late) moves it too, so measure in a quiet process. The peak growth and the steady
growth (the last half of the samples) stand beside the prediction, with
``tf.data.Options().autotune.ram_budget``. :func:`plot_memory` draws both.

Measured with the runtime's hidden help off (:func:`datakit.perf.synthetic.serial`:
no injected prefetch, no autotune), like the stage costs; ``as_built=True``
measures the pipeline as you built it (the runtime's own buffers then count too).
Before measuring, glibc's mmap threshold is fixed at 128 KiB (``mallopt``):
otherwise freed large buffers stay in the process and RSS counts memory nobody
holds (about twice the holdings, measured on TF 2.21). The margin of a prediction
is :data:`MARGIN`: 25 % of it plus 8 MB of the runtime's own noise.

>>> import tensorflow as tf
>>> ds = tf.data.Dataset.range(400).map(lambda i: tf.fill([250_000], i)).shuffle(40, seed=1)
>>> report = memory_report(ds, seconds=0.5)
>>> [(s.kind, round(s.predicted_bytes / 1e6)) for s in report.memory], report.biggest.kind
([('range', 0), ('map', 0), ('shuffle', 80)], 'shuffle')
>>> report.within_margin
True
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_flag, check_seconds
from datakit.core.progress import check_progress, progress_bar
from datakit.doctor.cache_fill import fill_note, fill_target
from datakit.doctor.deadline import BoundedRun, Stalled, bounded_run, stage_label, stalled_error
from datakit.doctor.holdings import element_bytes, holding, without_shuffles
from datakit.doctor.memory_growth import (
    GrowthSampler,
    fix_malloc,
    start_once,
    start_sampler,
    warm_up,
)
from datakit.perf.chain import StageFacts, chain_of, stage_facts
from datakit.perf.synthetic import serial

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["memory_report", "plot_memory"]

#: Allowed gap between a prediction and the measured growth: (fraction, bytes).
MARGIN = (0.25, 8e6)


@dataclass
class MemoryStage:
    """One stage and what it can hold (bytes)."""

    index: int
    name: str
    kind: str
    element_bytes: float     # one element of this stage's output
    predicted_bytes: float   # the most it holds
    how: str                 # the rule, with the numbers
    bounded: bool = True     # False: AUTOTUNE or a cache of an endless input, can grow past it


@dataclass
class MemoryReport:
    """What :func:`memory_report` predicted and measured. ``memory`` runs in chain order."""

    memory: list[MemoryStage]
    biggest: MemoryStage
    consumer_bytes: float          # the element your loop holds
    predicted_bytes: float         # all stages plus the consumer's element
    measured_growth_bytes: float   # peak growth while it ran: the larger of the two below
    steady_growth_bytes: float     # median growth over the last half of the run
    seconds: list = field(default_factory=list, repr=False)  # sample times
    rss: list = field(default_factory=list, repr=False)      # growth at each, bytes
    elements: int = 0
    ram_budget: int | None = None  # tf.data.Options().autotune.ram_budget (None: TF's default)
    method: str = ""
    rss_growth_bytes: float = 0.0  # peak RSS growth (what the OS counts)
    tensor_peak_bytes: float | None = None  # peak growth of TF's CPU allocator (its tensors)
    filled: str = ""  # whether the in-memory caches were full when it stopped ("": none)

    @property
    def within_margin(self) -> bool:
        """Is the measured peak within :data:`MARGIN` of the prediction (or above it, for an
        unbounded stage)?"""
        gap = MARGIN[0] * self.predicted_bytes + MARGIN[1]
        if not all(s.bounded for s in self.memory):
            return self.measured_growth_bytes >= self.predicted_bytes - gap
        return abs(self.measured_growth_bytes - self.predicted_bytes) <= gap

    def _sources(self) -> str:
        tensors = ("TF's tensors not counted" if self.tensor_peak_bytes is None
                   else f"TF's tensors {self.tensor_peak_bytes / 1e6:,.1f}")
        return f"RSS {self.rss_growth_bytes / 1e6:,.1f}, {tensors}"

    def __str__(self) -> str:
        lines = [f"{'stage':24s} {'kind':18s} {'holds at most':>14s}  rule"]
        for s in self.memory:
            mark = "  <- biggest" if s is self.biggest else ""
            up = "" if s.bounded else "+"
            lines.append(f"{s.name[:24]:24s} {s.kind[:18]:18s} "
                         f"{s.predicted_bytes / 1e6:12,.1f}{up:1s}MB  {s.how}{mark}")
        budget = "TF's default" if self.ram_budget is None else f"{self.ram_budget / 1e6:,.0f} MB"
        lines += [f"the element your loop holds: {self.consumer_bytes / 1e6:,.1f} MB",
                  f"predicted {self.predicted_bytes / 1e6:,.1f} MB; measured growth: peak "
                  f"{self.measured_growth_bytes / 1e6:,.1f} MB ({self._sources()}), steady "
                  f"{self.steady_growth_bytes / 1e6:,.1f} MB over {self.elements} elements "
                  f"({'within' if self.within_margin else 'OUTSIDE'} the margin of "
                  f"{MARGIN[0]:.0%} + {MARGIN[1] / 1e6:g} MB); autotune.ram_budget: {budget}"]
        lines += [self.filled] if self.filled else []
        return "\n".join(lines)


def _check(seconds: float, every: float, step_time: float, budget: float | None) -> float:
    """The budget, once every duration is checked (None: 30 s, or twice ``seconds``)."""
    check_seconds("seconds", seconds, positive=True, func="memory_report")
    check_seconds("every", every, positive=True, func="memory_report")
    check_seconds("step_time", step_time, func="memory_report")
    if budget is None:
        return max(30.0, 2.0 * seconds)
    check_seconds("budget", budget, positive=True, func="memory_report")
    if budget < seconds:
        raise ValueError(f"memory_report(): budget={budget:g} is less than seconds={seconds:g}:"
                         " the budget bounds the whole run; pass budget >= seconds.")
    return float(budget)


def _built(build: Callable[[], tf.data.Dataset], sampler: GrowthSampler) -> tf.data.Dataset:
    dataset = build()
    if not isinstance(dataset, tf.data.Dataset):
        sampler.stop.set()
        raise TypeError(f"memory_report(): build() returned {type(dataset).__name__}, "
                        "not a tf.data.Dataset: end it with `return dataset`")
    return dataset


def _predict(chain: list[StageFacts], build: Callable[[], tf.data.Dataset] | None, seconds: float,
             patience: float, counted: dict[int, float | None], bar: Any) -> list[MemoryStage]:
    sizes = []
    for k, s in enumerate(chain):  # each stage's element measured, counted on the bar
        sizes.append(element_bytes(s.dataset, without_shuffles(chain, k), patience=patience))
        bar.update()
    stages = []
    for k, s in enumerate(chain):
        pred, how, bounded = holding(chain, k, sizes, built=build is not None, seconds=seconds,
                                     patience=patience, counted=counted)
        stages.append(MemoryStage(k, stage_label(chain, k), s.kind, sizes[k],
                                  float(pred), how, bounded))
    return stages


def memory_report(dataset: tf.data.Dataset | Callable[[], tf.data.Dataset], *, seconds: float = 1.5,
                  step_time: float = 0.002, as_built: bool = False, every: float = 0.002,
                  chain: list | None = None, budget: float | None = None,
                  progress: bool | None = None) -> MemoryReport:
    """Predict what each stage of ``dataset`` holds in RAM, then measure what it grows.

    Args:
        dataset: a ``tf.data.Dataset``, or a function without arguments that builds one
            (then building it is measured too: a big ``from_tensor_slices`` copies its array).
        seconds: how long the consumer runs at least (less if the dataset ends first; longer,
            draining fast, until an in-memory ``cache()`` is full, within ``budget``).
        step_time: seconds the consumer waits per element, so that buffers fill (it also
            waits ``min(seconds / 3, 1)`` after the first element, as a first training step
            does, so a prefetch or a parallel map fills to what it holds at most).
        as_built: measure with the runtime's help (injected prefetch, autotune) as you
            built it; default off, as for the stage costs.
        every: seconds between RSS samples.
        chain: ``chain_of(dataset)``, or its stage records (:func:`~datakit.perf.chain.
            stage_facts`), when it was read already (the doctor passes its records down: a
            chain is read once); only with a dataset, not a function.
        budget: the most seconds the run takes to fill an in-memory cache; when no element
            comes for half of it, the report stops and names the stage that waits (default:
            30 s, or twice ``seconds`` if that is more).
        progress: a bar over the stages (each one's element size measured), then the
            measured run as one step (:mod:`datakit.core.progress`): ``None`` (default)
            shows it in a notebook or a terminal once the report lasts a second, ``True``
            always, ``False`` never.

    Raises:
        TypeError: ``dataset`` is neither a dataset nor a function; a number given as text
            or as a bool (``seconds=True``); ``progress`` not ``True``, ``False`` or ``None``.
        ValueError: ``seconds``, ``every`` or ``budget`` not > 0, ``step_time`` < 0 (or not
            finite), ``budget`` < ``seconds``.
        Stalled: (a ``TimeoutError``) no element came for ``budget / 2`` seconds; it names
            the first stage that yields nothing.
    """
    budget = _check(seconds, every, step_time, budget)
    check_progress(progress)
    check_flag("as_built", as_built)
    if not callable(dataset) and not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"memory_report() takes a tf.data.Dataset or a function that builds "
                        f"one, got {type(dataset).__name__}")
    build = dataset if callable(dataset) and not isinstance(dataset, tf.data.Dataset) else None
    deadline = time.perf_counter() + budget
    patience, counted = budget / 2, {}  # type: tuple[float, dict[int, float | None]]
    fixed = fix_malloc()
    warm_up()
    samplers: list[GrowthSampler] = []
    if build is not None:
        samplers.append(start_sampler(every, fixed, collect=False))
        dataset = _built(build, samplers[0])
    chain = stage_facts(chain_of(dataset) if chain is None or build is not None else chain)
    bar = progress_bar(len(chain) + 1, "memory_report", progress=progress, unit="step")
    try:
        stages = _predict(chain, build, seconds, patience, counted, bar)
        target, labels = fill_target(chain, counted, seconds=seconds, patience=patience)
        run = bounded_run(dataset if as_built else serial(dataset), patience=patience,
                          step_time=step_time, paced_for=seconds, fast=True,
                          until=lambda n, t: t >= seconds and (
                              target is None or n >= target or t >= budget),
                          before=lambda: start_once(samplers, every, fixed),
                          fill_pause=min(seconds / 3, 1.0))
        if run.stalled:
            raise Stalled(f"no element came in {patience:g} s (after {run.count} elements)")
        bar.update()  # the measured run
    except Stalled as e:
        raise stalled_error("memory_report", e, chain, patience, deadline) from None
    finally:
        bar.close()
        for sampler in samplers:
            sampler.stop.set()
    sampler = samplers[0]
    time.sleep(2 * every)
    sampler.join()
    sampler.sample()
    return _report(stages, sampler, run, dataset, as_built, fixed,
                   fill_note(target, labels, run, budget))


def _report(stages: list[MemoryStage], sampler: GrowthSampler, run: BoundedRun,
            dataset: tf.data.Dataset, as_built: bool, fixed: bool, filled: str) -> MemoryReport:
    growth = sampler.growth
    rss_peak, tensor_peak = sampler.peaks()
    peak = max(rss_peak, tensor_peak or 0)
    ram_budget = dataset.options().autotune.ram_budget
    consumer = stages[-1].element_bytes
    total = sum(s.predicted_bytes for s in stages) + consumer
    method = ("as built (runtime help on)" if as_built else "runtime help off") + \
        ("" if fixed else "; malloc not fixed (no glibc): RSS may count freed memory") + \
        ("; peak: the kernel's high-water mark" if sampler.exact else "; peak: sampled")
    return MemoryReport(stages, max(stages, key=lambda s: s.predicted_bytes), consumer, total,
                        float(peak), float(statistics.median(growth[len(growth) // 2:])),
                        sampler.seconds, growth, run.count, ram_budget, method, float(rss_peak),
                        None if tensor_peak is None else float(tensor_peak), filled)


def plot_memory(report: MemoryReport,
                axes: tuple[Axes, Axes] | None = None) -> tuple[Axes, Axes]:
    """Predicted bytes per stage as one stacked bar beside the measured growth over time.

    Returns the two Axes (bar, timeline).
    """
    import matplotlib.pyplot as plt

    from datakit import plotting
    with plotting.style():
        if axes is None:
            _, axes = plt.subplots(1, 2, figsize=(10, 4), width_ratios=(1, 3), sharey=True)
        bar, line = axes
        bottom = 0.0
        drawn = [(s, mb) for s in [*report.memory, None]
                 if (mb := (report.consumer_bytes if s is None else s.predicted_bytes) / 1e6) > 0]
        # one colour per drawn segment: the palette if it is enough, else a 20-colour map
        colors = (plotting.PALETTE if len(drawn) <= len(plotting.PALETTE)
                  else [plt.get_cmap("tab20")(k % 20) for k in range(len(drawn))])
        for color, (s, mb) in zip(colors, drawn, strict=False):
            bar.bar(0, mb, bottom=bottom, color=color,
                    label="your loop's element" if s is None else s.name,
                    hatch="" if s is None or s.bounded else "//")
            bottom += mb
        bar.set(xticks=[0], xticklabels=["predicted"], ylabel="memory held (MB)",
                title="Held by each stage")
        bar.legend(loc="upper left", fontsize="small", bbox_to_anchor=(0, -0.08))
        line.plot(report.seconds, np.array(report.rss) / 1e6, "-", color=plotting.epoch_color(3),
                  label="measured growth (RSS or TF's tensors)")
        line.axhline(report.predicted_bytes / 1e6, color="k", ls="--", label="predicted total")
        line.set(xlabel="seconds", title=f"Measured: peak {report.measured_growth_bytes / 1e6:,.0f}"
                 f" MB; biggest stage: {report.biggest.name}")
        line.set_ylim(bottom=0)
        line.legend(loc="lower right")
    return axes
