"""Where a pipeline's memory goes: each stage's holdings predicted, the RSS growth measured.

:func:`memory_report` walks the chain of any ``tf.data`` pipeline (as the time
doctor does) and predicts, for every stage, the host memory it can hold at most
from the bytes of its elements (read from the element spec, or measured on a
few elements): a ``shuffle`` holds ``buffer_size`` elements, a ``prefetch`` its
depth, a parallel ``map`` its calls in flight, an ``interleave`` one read buffer
per open file, a ``batch`` the batch in the making (its elements, then their
copy into one tensor), an in-memory ``cache`` the whole dataset,
``from_tensor_slices`` the tensors it was given. Then it runs the pipeline with
a consumer that takes ``step_time`` per element (so buffers fill, as during
``fit()``) and samples the process's resident memory (RSS) in the background:
the peak growth and the steady growth (the last half of the samples) stand
beside the prediction. ``tf.data.Options().autotune.ram_budget`` is reported.

Measured with the runtime's hidden help off (:func:`datakit.perf.synthetic.serial`:
no injected prefetch, no autotune), like the stage costs; ``as_built=True``
measures the pipeline as you built it. Before measuring, glibc's mmap threshold
is fixed at 128 KiB (``mallopt``): otherwise freed large buffers stay in the
process and RSS counts memory nobody holds. Margin of a prediction:
:data:`MARGIN` (25 % of the prediction plus 8 MB of the runtime's own noise).

>>> import tensorflow as tf
>>> ds = tf.data.Dataset.range(400).map(lambda i: tf.fill([250_000], i)).shuffle(40, seed=1)
>>> report = memory_report(ds, seconds=0.5)
>>> [(s.kind, round(s.predicted_bytes / 1e6)) for s in report.memory], report.biggest.kind
([('range', 0), ('map', 0), ('shuffle', 80)], 'shuffle')
>>> report.within_margin
True
"""

from __future__ import annotations

import ctypes
import statistics
import threading
import time
from dataclasses import dataclass, field

import numpy as np
import tensorflow as tf

from datakit.core.arguments import cpu_cores
from datakit.doctor.chain import (
    chain_of,
    graph_ops,
    held_tensors,
    input_of,
    kind_of,
    knob,
    name_of,
    setting,
)
from datakit.perf.memory import rss_bytes
from datakit.perf.synthetic import serial

__all__ = ["MARGIN", "READ_BUFFER", "MemoryStage", "MemoryReport", "element_bytes",
           "memory_report", "plot_memory"]

#: Allowed gap between a prediction and the measured growth: (fraction, bytes).
MARGIN = (0.25, 8e6)
#: The read buffer of TFRecordDataset and TextLineDataset when none is given (256 KiB).
READ_BUFFER = 256 * 1024
_READERS = ("TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset")


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
    measured_growth_bytes: float   # peak RSS growth while it ran
    steady_growth_bytes: float     # median growth over the last half of the run
    seconds: list = field(default_factory=list, repr=False)  # sample times
    rss: list = field(default_factory=list, repr=False)      # RSS growth at each, bytes
    elements: int = 0
    ram_budget: int | None = None  # tf.data.Options().autotune.ram_budget (None: TF's default)
    method: str = ""

    @property
    def within_margin(self) -> bool:
        """Is the measured peak within :data:`MARGIN` of the prediction (or above it, for an
        unbounded stage)?"""
        gap = MARGIN[0] * self.predicted_bytes + MARGIN[1]
        if not all(s.bounded for s in self.memory):
            return self.measured_growth_bytes >= self.predicted_bytes - gap
        return abs(self.measured_growth_bytes - self.predicted_bytes) <= gap

    def __str__(self) -> str:
        lines = [f"{'stage':24s} {'kind':18s} {'holds at most':>14s}  rule"]
        for s in self.memory:
            mark = "  <- biggest" if s is self.biggest else ""
            up = "" if s.bounded else "+"
            lines.append(f"{s.name[:24]:24s} {s.kind[:18]:18s} "
                         f"{s.predicted_bytes / 1e6:12,.1f}{up:1s}MB  {s.how}{mark}")
        budget = "TF's default" if self.ram_budget is None else f"{self.ram_budget / 1e6:,.0f} MB"
        lines += [f"the element your loop holds: {self.consumer_bytes / 1e6:,.1f} MB",
                  f"predicted {self.predicted_bytes / 1e6:,.1f} MB; measured RSS growth: peak "
                  f"{self.measured_growth_bytes / 1e6:,.1f} MB, steady "
                  f"{self.steady_growth_bytes / 1e6:,.1f} MB over {self.elements} elements "
                  f"({'within' if self.within_margin else 'OUTSIDE'} the margin of "
                  f"{MARGIN[0]:.0%} + {MARGIN[1] / 1e6:g} MB); autotune.ram_budget: {budget}"]
        return "\n".join(lines)


# -- sizes ---------------------------------------------------------------------------------


def _nbytes(value) -> int:
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        return int(sum(len(v) for v in arr.reshape(-1))) if arr.dtype.kind == "O" \
            else arr.nbytes
    return arr.nbytes


def element_bytes(dataset, sample=None) -> float:
    """Bytes of one element of ``dataset``: from its spec when every shape is fixed and no
    tensor holds strings, else the mean of a few elements of ``sample`` (default: itself)."""
    specs = tf.nest.flatten(dataset.element_spec)
    if all(isinstance(s, tf.TensorSpec) and s.shape.is_fully_defined() and s.dtype != tf.string
           for s in specs):
        return float(sum(s.shape.num_elements() * s.dtype.size for s in specs))
    seen = [sum(_nbytes(v) for v in tf.nest.flatten(x))
            for x in serial(sample if sample is not None else dataset).take(3)
            .as_numpy_iterator()]
    return float(statistics.mean(seen)) if seen else 0.0


def _without_shuffles(chain, k):
    """Stage ``k`` rebuilt with its shuffle buffers left out (sampling it fills none)."""
    from datakit.doctor.advice import assemble
    try:
        return assemble(chain[0], [(lambda i: i) if kind_of(d) == "shuffle" else d
                                   for d in chain[1:k + 1]])
    except NotImplementedError:
        return chain[k]


def _count(dataset, seconds: float) -> float | None:
    n = int(dataset.cardinality())
    if n >= 0:
        return float(n)
    if n == tf.data.INFINITE_CARDINALITY:
        return None
    from datakit.perf.throughput import measure
    run = measure(serial(dataset), seconds)
    return float(run.count) if run.exhausted else None


def _rule(chain, k, sizes, built, seconds):
    """(predicted bytes, how, bounded) of stage ``k``."""
    d, kind = chain[k], kind_of(chain[k])
    out = sizes[k]
    inp = sizes[k - 1] if k else 0.0
    mb = f"{out / 1e6:,.2f} MB"
    if kind in ("from_tensor_slices", "from_tensors"):
        held = float(sum(_nbytes(t) for t in held_tensors(d)))
        if built:  # NumPy converted while the build ran: TF 2.21 keeps a temporary copy
            return 2 * held, f"its tensors, {held / 1e6:,.1f} MB, twice while built", True
        return held, f"its tensors ({held / 1e6:,.1f} MB, held since it was built)", True
    if kind == "shuffle":
        n = knob(d, "buffer_size")
        epoch = _count(input_of(d), seconds)
        n = min(n, epoch) if epoch is not None else n
        return n * inp, f"buffer of {n:,.0f} x {inp / 1e6:,.2f} MB", True
    if kind == "prefetch":
        n = knob(d, "buffer_size")
        if n == -1:
            return out, (f"AUTOTUNE: 1 x {mb} to start, doubled whenever the consumer "
                         "finds it empty, up to the RAM budget"), False
        return (n + 1) * out, f"{n} ready + 1 being made, x {mb}", True
    if kind == "cache":
        name = setting(d, "filename")
        if name is not None and name.numpy():
            return 0.0, f"on disk ({name.numpy().decode()})", True
        n = _count(input_of(d), seconds)
        if n is None:
            return 0.0, "the whole input, which does not end: grows without bound", False
        return n * out, f"the whole dataset: {n:,.0f} x {mb}", True
    calls = knob(d, "num_parallel_calls")
    calls = cpu_cores() if calls == -1 else calls or 1
    if kind in ("batch", "padded_batch"):
        n = knob(d, "batch_size")
        return n * inp + out, f"{n} elements of {inp / 1e6:,.2f} MB, then their copy", True
    if kind in ("interleave", "flat_map", "parallel_interleave"):
        cycle = knob(d, "cycle_length") or 1
        cycle = cpu_cores() if cycle == -1 else cycle
        cycle = 1 if kind == "flat_map" else cycle
        reads = any(op.startswith(_READERS) for op in graph_ops(d) or ())
        buf = READ_BUFFER if reads else 0
        extra = calls * out if calls > 1 else 0.0
        return (cycle * buf + extra, f"{cycle} open input(s) x {buf / 1024:g} KiB read buffer"
                + (f", {calls} x {mb} in flight" if extra else ""), True)
    if kind == "map" and calls > 1:
        return calls * out, f"{calls} calls in flight x {mb}", True
    if kind == "unbatch":
        return inp, f"the batch it splits ({inp / 1e6:,.2f} MB)", True
    if kind in ("TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset"):
        return float(READ_BUFFER), "1 read buffer of 256 KiB", True
    return 0.0, "nothing between elements", True


# -- measuring -----------------------------------------------------------------------------


def _fix_malloc() -> bool:
    """Make freed large buffers go back to the OS at once (glibc): RSS then counts what is
    held, not what malloc keeps for later. False where there is no glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD: also stops its dynamic growth
        libc.malloc_trim(0)
        return True
    except (OSError, AttributeError):
        return False


class _Sampler(threading.Thread):
    """RSS every ``every`` seconds, as (seconds, bytes) from the start."""

    def __init__(self, every: float):
        super().__init__(daemon=True)
        self.every, self.stop, self.t0 = every, threading.Event(), time.perf_counter()
        self.seconds, self.rss = [0.0], [rss_bytes()]

    def run(self) -> None:
        while not self.stop.wait(self.every):
            self.seconds.append(time.perf_counter() - self.t0)
            self.rss.append(rss_bytes())


_WARM = []


def _consume(dataset, step_time: float, seconds: float) -> int:
    n, start = 0, time.perf_counter()
    for x in dataset:
        n += 1
        del x
        if step_time:
            time.sleep(step_time)
        if time.perf_counter() - start > seconds:
            break
    return n


def memory_report(dataset, *, seconds: float = 1.5, step_time: float = 0.002,
                  as_built: bool = False, every: float = 0.002) -> MemoryReport:
    """Predict what each stage of ``dataset`` holds in RAM, then measure the RSS growth.

    Args:
        dataset: a ``tf.data.Dataset``, or a function without arguments that builds one
            (then building it is measured too: a big ``from_tensor_slices`` copies its array).
        seconds: how long the consumer runs (less if the dataset ends first).
        step_time: seconds the consumer waits per element, so that buffers fill.
        as_built: measure with the runtime's help (injected prefetch, autotune) as you
            built it; default off, as for the stage costs.
        every: seconds between RSS samples.

    Raises:
        TypeError: ``dataset`` is neither a dataset nor a function.
        ValueError: ``seconds`` or ``every`` not > 0, ``step_time`` < 0 (or not a number).
    """
    for label, v, low in (("seconds", seconds, 0), ("every", every, 0)):
        if not isinstance(v, (int, float)) or not v > low:
            raise ValueError(f"memory_report(): {label}={v!r}: pass a number > 0")
    if not isinstance(step_time, (int, float)) or not step_time >= 0:
        raise ValueError(f"memory_report(): step_time={step_time!r}: pass a number >= 0")
    build = dataset if callable(dataset) and not isinstance(dataset, tf.data.Dataset) else None
    fixed = _fix_malloc()
    if not _WARM:  # the runtime's first iteration allocates its own pools: not the pipeline's
        _consume(serial(tf.data.Dataset.range(64).map(lambda i: i + 1).batch(4)), 0.0, 1.0)
        _WARM.append(True)
    sampler = None
    if build is not None:
        sampler = _Sampler(every)
        sampler.start()
        dataset = build()
        if not isinstance(dataset, tf.data.Dataset):
            sampler.stop.set()
            raise TypeError(f"memory_report(): build() returned {type(dataset).__name__}, "
                            "not a tf.data.Dataset: end it with `return dataset`")
    chain = chain_of(dataset)
    sizes = [element_bytes(d, _without_shuffles(chain, k)) for k, d in enumerate(chain)]
    stages = []
    for k, d in enumerate(chain):
        pred, how, bounded = _rule(chain, k, sizes, build is not None, seconds)
        stages.append(MemoryStage(k, name_of(d) or f"{kind_of(d)} #{k}", kind_of(d), sizes[k],
                                  float(pred), how, bounded))
    if sampler is None:
        if fixed:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        sampler = _Sampler(every)
        sampler.start()
    n = _consume(dataset if as_built else serial(dataset), step_time, seconds)
    time.sleep(2 * every)
    sampler.stop.set()
    sampler.join()
    base = sampler.rss[0]
    growth = [max(r - base, 0) for r in sampler.rss]
    ram_budget = dataset.options().autotune.ram_budget
    total = sum(s.predicted_bytes for s in stages) + sizes[-1]
    method = ("as built (runtime help on)" if as_built else "runtime help off") + \
        ("" if fixed else "; malloc not fixed (no glibc): RSS may count freed memory")
    return MemoryReport(stages, max(stages, key=lambda s: s.predicted_bytes), sizes[-1], total,
                        float(max(growth)), float(statistics.median(growth[len(growth) // 2:])),
                        sampler.seconds, growth, n, ram_budget, method)


def plot_memory(report: MemoryReport, axes=None):
    """Predicted bytes per stage as one stacked bar beside the measured RSS growth over time.

    Returns the two Axes (bar, timeline).
    """
    import matplotlib.pyplot as plt

    from datakit import plotting
    with plotting.style():
        if axes is None:
            _, axes = plt.subplots(1, 2, figsize=(10, 4), width_ratios=(1, 3), sharey=True)
        bar, line = axes
        bottom = 0.0
        for i, s in enumerate([*report.memory, None]):
            mb = (report.consumer_bytes if s is None else s.predicted_bytes) / 1e6
            if mb <= 0:
                continue
            bar.bar(0, mb, bottom=bottom, color=plotting.epoch_color(i),
                    label="your loop's element" if s is None else s.name,
                    hatch="" if s is None or s.bounded else "//")
            bottom += mb
        bar.set(xticks=[0], xticklabels=["predicted"], ylabel="memory held (MB)",
                title="Held by each stage")
        bar.legend(loc="upper left", fontsize="small", bbox_to_anchor=(0, -0.08))
        line.plot(report.seconds, np.array(report.rss) / 1e6, "-", color=plotting.epoch_color(3),
                  label="measured RSS growth")
        line.axhline(report.predicted_bytes / 1e6, color="k", ls="--", label="predicted total")
        line.set(xlabel="seconds", title=f"Measured: peak {report.measured_growth_bytes / 1e6:,.0f}"
                 f" MB; biggest stage: {report.biggest.name}")
        line.set_ylim(bottom=0)
        line.legend(loc="lower right")
    return axes
