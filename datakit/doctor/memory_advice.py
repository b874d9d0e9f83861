"""The doctor's memory advice: what to change where a pipeline holds the most, each measured.

:func:`memory_advice` looks at the stages of a
:class:`datakit.doctor.memory_use.MemoryReport` that hold the most and proposes
what the ``tf.data`` guides propose: a smaller ``shuffle`` buffer (with the
file names shuffled as well, to win back mixing; the cost in mixing is measured
with :mod:`datakit.glassbox.shuffle_stats`), ``cache(filename)`` on disk instead of in
memory, a bounded ``prefetch``, fewer parallel calls, and a
``tf.data.Options().autotune.ram_budget``. Each change is made on a copy of the
pipeline, rebuilt from the same functions (:func:`datakit.doctor.rebuild.assemble`),
and measured: its peak memory growth (:func:`datakit.doctor.memory_use.memory_report`) and
its rows/s (:func:`datakit.perf.throughput.measure`), beside the original's.

>>> import tensorflow as tf
>>> from datakit.doctor.memory_use import memory_report
>>> ds = tf.data.Dataset.range(300).map(lambda i: tf.fill([250_000], i)).shuffle(40, seed=1)
>>> advice = memory_advice(memory_report(ds, seconds=0.5), ds, seconds=0.5)
>>> [a.change.split(":")[0] for a in advice]
['a smaller shuffle buffer', 'a RAM budget for the autotuner']
>>> advice[0].growth_bytes < advice[0].was_bytes, "rows/s (was" in str(advice[-1])
(True, True)
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import tensorflow as tf

from datakit.core.arguments import check_seconds
from datakit.core.progress import check_progress, progress_bar
from datakit.doctor.deadline import Stalled, call_with_deadline
from datakit.doctor.memory_use import MemoryReport, memory_report
from datakit.doctor.rebuild import Candidate, assemble, reapply
from datakit.glassbox.shuffle_stats import mixing_stats
from datakit.perf.chain import chain_of, graph_ops, kind_of, knob, name_of, setting
from datakit.perf.shuffle_runs import shuffled_orders
from datakit.perf.throughput import measure

__all__ = ["cache_folder", "memory_advice"]


def _mb(n: float | None) -> str:
    """``n`` bytes in MB, or ``?`` when it was not measured."""
    return "?" if n is None else f"{n / 1e6:,.0f}"


@dataclass
class MemoryAdvice:
    """One change, and the peak memory growth and rows/s of a copy that makes it."""

    stage: str
    change: str
    alters: str = ""
    growth_bytes: float | None = None   # the copy's measured peak memory growth
    was_bytes: float | None = None      # the original's, measured the same way
    rows_per_s: float | None = None
    was_rows_per_s: float | None = None
    note: str = ""
    dataset: object = field(default=None, repr=False)

    def __str__(self) -> str:
        if self.growth_bytes is None:
            got = "not measured"
        else:
            got = (f"peak {self.growth_bytes / 1e6:,.0f} MB (was {_mb(self.was_bytes)}), "
                   f"{self.rows_per_s:,.0f} rows/s (was {self.was_rows_per_s:,.0f})")
        alters = f"; ALTERS {self.alters}" if self.alters else ""
        note = f" ({self.note})" if self.note else ""
        return f"- {self.stage}: {self.change}: {got}{note}{alters}"


def _mixing(n: int, buffer_size: int) -> float:
    """Mean displacement of an element, for ``shuffle(buffer_size)`` on ``n`` elements."""
    return mixing_stats(shuffled_orders(n, buffer_size, runs=10, seed=0)).mean_displacement


def _candidates(chain, k, folder: Path):
    """The :class:`~datakit.doctor.rebuild.Candidate` changes for stage ``k``."""
    s, kind, rest = chain[k], kind_of(chain[k]), chain[k + 1:]
    n = knob(s, "buffer_size")
    if kind == "shuffle" and n and n > 1:
        small = max(1, n // 10)
        epoch = int(chain[k - 1].cardinality())
        epoch = min(epoch, 2000) if epoch > 0 else min(10 * n, 2000)
        note = (f"elements move {_mixing(epoch, small):,.0f} places on average instead of "
                f"{_mixing(epoch, n):,.0f} (on {epoch:,} elements); shuffle the file names "
                "too (list_files(shuffle=True)) to win mixing back")
        yield Candidate(f"a smaller shuffle buffer: shuffle({small}) instead of shuffle({n})",
                        "order: it mixes less", lambda: assemble(chain[k - 1], [lambda i: reapply(
                            s, i, buffer_size=small)] + rest), note)
    if kind == "cache" and not setting(s, "filename").numpy():
        path = str(folder / f"cache_{k}")
        folder.mkdir(parents=True, exist_ok=True)
        _clear(folder, k)
        yield Candidate(f"cache({path!r}) on disk instead of in memory", "", lambda: assemble(
            chain[k - 1], [lambda i: i.cache(path)] + rest), "timed on its first epoch")
    if kind == "prefetch" and (n == -1 or (n or 0) > 2):
        depth = "AUTOTUNE" if n == -1 else n
        yield Candidate(f"a bounded prefetch: prefetch(1) instead of prefetch({depth})", "",
                        lambda: assemble(chain[k - 1], [lambda i: i.prefetch(1)] + rest))
    calls = knob(s, "num_parallel_calls")
    if kind in ("map", "interleave") and calls is not None and (calls == -1 or calls > 1):
        yield Candidate("fewer parallel calls: num_parallel_calls=1", "", lambda: assemble(
            chain[k - 1], [lambda i: reapply(s, i, num_parallel_calls=1)] + rest))


def _stage_key(stage) -> str:
    knobs = {k: knob(stage, k) for k in ("batch_size", "buffer_size", "cycle_length",
                                         "num_parallel_calls", "count")}
    return repr((kind_of(stage), name_of(stage), str(stage.element_spec), knobs,
                 graph_ops(stage, library=False)))


def cache_folder(dataset, chain: list | None = None) -> Path:
    """The one folder, in the temporary folder, where the advice's ``cache(filename)`` copies
    of ``dataset`` write. It is named by the pipeline's stages (kinds, names, knobs, element
    specs, the ops of their functions), so every call for the same pipeline, even rebuilt by
    the same code, reuses it instead of leaving a new folder behind each time. ``chain``:
    ``chain_of(dataset)`` when it was read already. The folder is made when a copy writes."""
    chain = chain_of(dataset) if chain is None else chain
    key = hashlib.sha256("|".join(map(_stage_key, chain)).encode()).hexdigest()
    return Path(tempfile.gettempdir()) / f"datakit_cache_{key[:16]}"


def _checked(report, dataset, seconds, folder, chain) -> tuple[list, Path]:
    if not isinstance(report, MemoryReport):
        raise TypeError(f"memory_advice() takes the MemoryReport of memory_report(dataset) "
                        f"first, got {type(report).__name__}")
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"memory_advice() takes the tf.data.Dataset the report describes, got "
                        f"{type(dataset).__name__}")
    check_seconds("seconds", seconds, positive=True, func="memory_advice")
    if folder is not None and not isinstance(folder, (str, PathLike)):
        raise TypeError(f"memory_advice(): folder must be a path (str or Path) or None, got "
                        f"{folder!r}")
    if folder is not None and not str(folder):
        raise ValueError("memory_advice(): folder='' names no folder: pass a path, or None "
                         "for one folder per pipeline in the temporary folder.")
    if chain is not None and not isinstance(chain, list):
        raise TypeError(f"memory_advice(): chain must be chain_of(dataset) or None, got "
                        f"{type(chain).__name__}")
    chain = chain_of(dataset) if chain is None else chain
    return chain, Path(folder) if folder is not None else cache_folder(dataset, chain)


def _rate(dataset, seconds: float, patience: float = 15.0) -> float:
    """Rows/s of ``dataset`` over ``seconds``; :class:`Stalled` when no element comes within
    ``patience`` seconds more (the wait is cancelled, not left running)."""
    run, stalled = call_with_deadline(lambda: measure(dataset, seconds), seconds + patience)
    if stalled:
        raise Stalled(f"memory_advice(): no element came in {seconds + patience:g} s while "
                      "timing a copy of the pipeline: memory_report(dataset) names the stage "
                      "that waits")
    return run.rows_per_s


def _clear(folder: Path, k: int) -> None:
    """Remove the files an earlier call's ``cache_{k}`` copy wrote: each copy is measured
    writing its cache, never reading an old one."""
    for old in folder.glob(f"cache_{k}*"):
        old.unlink(missing_ok=True)


def memory_advice(report, dataset, *, seconds: float = 1.0, folder=None,
                  chain: list | None = None, progress: bool | None = None) -> list[MemoryAdvice]:
    """Changes for the stages of ``report`` that hold the most, each measured on a copy.

    Args:
        report: the :class:`datakit.doctor.memory_use.MemoryReport` of ``dataset``.
        dataset: the pipeline it describes (copies are rebuilt from its chain).
        seconds: how long each copy's memory and speed are measured.
        folder: where a ``cache(filename)`` copy writes (default: one folder per pipeline
            in the temporary folder, :func:`cache_folder`: a second call reuses it).
        chain: ``chain_of(dataset)`` when it was read already (it is read once, and passed
            down to the memory reports of ``dataset``; each copy is a pipeline of its own).
        progress: a bar over the changes tried (:mod:`datakit.core.progress`; the memory
            reports it makes show none of their own): ``None`` (default) shows it in a
            notebook or a terminal once the advice lasts a second, ``True`` always,
            ``False`` never.

    Raises:
        TypeError: ``report`` not a MemoryReport, ``dataset`` not a dataset, ``seconds`` not
            a number (a bool is not), ``folder`` not a path, ``progress`` not ``True``,
            ``False`` or ``None``.
        ValueError: ``seconds`` not > 0 (or not finite), ``folder=""``.
    """
    chain, folder = _checked(report, dataset, seconds, folder, chain)
    check_progress(progress)
    total = report.predicted_bytes or 1.0
    targets = [s for s in report.memory if s is report.biggest or s.predicted_bytes > total / 4]
    tries = [(stage, c) for stage in targets for c in _candidates(chain, stage.index, folder)]
    bar = progress_bar(len(tries) + 1, "memory_advice", progress=progress, unit="change")
    was_rate = _rate(dataset, seconds)
    out = []
    for stage, c in tries:
        a = MemoryAdvice(stage.name, c.change, c.alters, None, report.measured_growth_bytes,
                         None, was_rate, c.note)
        a.dataset = c.make().with_options(dataset.options())
        a.growth_bytes = memory_report(a.dataset, seconds=seconds,
                                       progress=False).measured_growth_bytes
        a.rows_per_s = _rate(a.dataset, seconds)
        out.append(a)
        bar.update()
    budget = int(max(report.predicted_bytes / 4, 16e6))
    options = tf.data.Options()
    options.autotune.ram_budget = budget
    a = MemoryAdvice("the whole pipeline", f"a RAM budget for the autotuner: "
                     f"autotune.ram_budget={budget:,}", "", note="as built, runtime help on: "
                     "the budget bounds what AUTOTUNE may buffer, not your own buffers")
    a.dataset = dataset.with_options(options)
    a.was_bytes = memory_report(dataset, seconds=seconds, as_built=True,
                                chain=chain, progress=False).measured_growth_bytes
    a.growth_bytes = memory_report(a.dataset, seconds=seconds, as_built=True,  # same chain
                                   chain=chain, progress=False).measured_growth_bytes
    a.rows_per_s, a.was_rows_per_s = _rate(a.dataset, seconds), was_rate
    out.append(a)
    bar.update()
    bar.close()
    return out
