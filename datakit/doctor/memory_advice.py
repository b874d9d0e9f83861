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
from collections.abc import Callable
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import tensorflow as tf

from datakit.core.arguments import check_seconds
from datakit.core.progress import check_progress, progress_bar
from datakit.doctor.deadline import Stalled, call_with_deadline
from datakit.doctor.memory_use import MemoryReport, memory_report
from datakit.doctor.rebuild import Candidate, assemble, reapply
from datakit.glassbox.shuffle_stats import mixing_stats
from datakit.perf.chain import StageFacts, chain_of, stage_facts
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


# -- the advice: one small rule per change, tried in the order of MEMORY_RULES --------------
#
# A rule takes the chain's stage records (perf.chain.stage_facts), the index k of a stage
# that holds much, and the folder a copy may write in; it returns its Candidate changes.


def _rebuilt(stages: list[StageFacts], k: int,
             step: Callable[[tf.data.Dataset], tf.data.Dataset]) -> Callable[[], tf.data.Dataset]:
    """Builds the chain with stage ``k`` replaced by ``step`` (``inp -> dataset``)."""
    rest: list = stages[k + 1:]  # re-applied from their records
    return lambda: assemble(stages[k - 1].dataset, [step] + rest)


def _smaller_shuffle(stages: list[StageFacts], k: int, folder: Path) -> list[Candidate]:
    """A ``shuffle``: a tenth of the buffer, with what it costs in mixing measured."""
    s, n = stages[k], stages[k].knobs["buffer_size"]
    if s.kind != "shuffle" or not n or n <= 1:
        return []
    small = max(1, n // 10)
    epoch = stages[k - 1].cardinality
    epoch = min(epoch, 2000) if epoch > 0 else min(10 * n, 2000)
    note = (f"elements move {_mixing(epoch, small):,.0f} places on average instead of "
            f"{_mixing(epoch, n):,.0f} (on {epoch:,} elements); shuffle the file names "
            "too (list_files(shuffle=True)) to win mixing back")
    return [Candidate(f"a smaller shuffle buffer: shuffle({small}) instead of shuffle({n})",
                      "order: it mixes less",
                      _rebuilt(stages, k, lambda i: reapply(s, i, buffer_size=small)),
                      note)]


def _cache_on_disk(stages: list[StageFacts], k: int, folder: Path) -> list[Candidate]:
    """An in-memory ``cache``: the same on disk (its files are deleted once measured)."""
    if stages[k].kind != "cache" or stages[k].filename:
        return []
    path, copy = str(folder / f"cache_{k}"), _rebuilt(stages, k, lambda i: i.cache(path))

    def make() -> tf.data.Dataset:
        folder.mkdir(parents=True, exist_ok=True)
        return copy()
    return [Candidate(f"cache({path!r}) on disk instead of in memory", "", make,
                      "timed on its first epoch")]


def _bounded_prefetch(stages: list[StageFacts], k: int, folder: Path) -> list[Candidate]:
    """A deep or autotuned ``prefetch``: one element ahead."""
    n = stages[k].knobs["buffer_size"]
    if stages[k].kind != "prefetch" or not (n == -1 or (n or 0) > 2):
        return []
    depth = "AUTOTUNE" if n == -1 else n
    return [Candidate(f"a bounded prefetch: prefetch(1) instead of prefetch({depth})", "",
                      _rebuilt(stages, k, lambda i: i.prefetch(1)))]


def _fewer_calls(stages: list[StageFacts], k: int, folder: Path) -> list[Candidate]:
    """A parallel ``map`` or ``interleave``: one call at a time."""
    s, calls = stages[k], stages[k].knobs["num_parallel_calls"]
    if s.kind not in ("map", "interleave") or calls is None or not (calls == -1 or calls > 1):
        return []
    return [Candidate("fewer parallel calls: num_parallel_calls=1", "",
                      _rebuilt(stages, k, lambda i: reapply(s, i, num_parallel_calls=1)))]


#: The memory advice: each rule proposes its changes for one stage, in this order.
MEMORY_RULES = (_smaller_shuffle, _cache_on_disk, _bounded_prefetch, _fewer_calls)


def _stage_key(stage: StageFacts) -> str:
    knobs = {k: stage.knobs[k] for k in ("batch_size", "buffer_size", "cycle_length",
                                         "num_parallel_calls", "count")}
    return repr((stage.kind, stage.name, str(stage.dataset.element_spec), knobs,
                 None if stage.ops is None else list(stage.ops)))


def cache_folder(dataset: tf.data.Dataset, chain: list | None = None) -> Path:
    """The one folder, in the temporary folder, where the advice's ``cache(filename)`` copies
    of ``dataset`` write. It is named by the pipeline's stages (kinds, names, knobs, element
    specs, the ops of their functions), so every call for the same pipeline, even rebuilt by
    the same code, reuses it instead of leaving a new folder behind each time. ``chain``:
    ``chain_of(dataset)`` when it was read already. The folder is made when a copy writes,
    and the copies' files are deleted once measured."""
    return _folder_of(stage_facts(chain_of(dataset) if chain is None else chain))


def _folder_of(stages: list[StageFacts]) -> Path:
    key = hashlib.sha256("|".join(map(_stage_key, stages)).encode()).hexdigest()
    return Path(tempfile.gettempdir()) / f"datakit_cache_{key[:16]}"


def _checked(report: Any, dataset: Any, seconds: float, folder: Any, chain: Any) -> list:
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
    return chain_of(dataset) if chain is None else chain


def _rate(dataset: tf.data.Dataset, seconds: float, patience: float = 15.0) -> float:
    """Rows/s of ``dataset`` over ``seconds``; :class:`Stalled` when no element comes within
    ``patience`` seconds more (the wait is cancelled, not left running)."""
    run, stalled = call_with_deadline(lambda: measure(dataset, seconds), seconds + patience)
    if stalled:
        raise Stalled(f"memory_advice(): no element came in {seconds + patience:g} s while "
                      "timing a copy of the pipeline: memory_report(dataset) names the stage "
                      "that waits")
    return run.rows_per_s


def _clear(folder: Path) -> None:
    """Remove the files the ``cache_{k}`` copies wrote (before: each copy is measured
    writing its cache, never reading an old one; after: no copy of your data is left)."""
    for old in folder.glob("cache_*"):
        old.unlink(missing_ok=True)


def memory_advice(report: Any, dataset: Any, *, seconds: float = 1.0, folder: Any = None,
                  chain: list | None = None, progress: bool | None = None) -> list[MemoryAdvice]:
    """Changes for the stages of ``report`` that hold the most, each measured on a copy.

    Args:
        report: the :class:`datakit.doctor.memory_use.MemoryReport` of ``dataset``.
        dataset: the pipeline it describes (copies are rebuilt from its chain).
        seconds: how long each copy's memory and speed are measured.
        folder: where a ``cache(filename)`` copy writes (default: one folder per pipeline
            in the temporary folder, :func:`cache_folder`: a second call reuses it).
        chain: ``chain_of(dataset)``, or its stage records (:func:`~datakit.perf.chain.
            stage_facts`), when it was read already (it is read once, and its records passed
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
    check_progress(progress)
    chain = _checked(report, dataset, seconds, folder, chain)
    stages = stage_facts(chain)  # each stage read once
    folder = Path(folder) if folder is not None else _folder_of(stages)
    total = report.predicted_bytes or 1.0
    targets = [s for s in report.memory if s is report.biggest or s.predicted_bytes > total / 4]
    tries = [(stage, c) for stage in targets for rule in MEMORY_RULES
             for c in rule(stages, stage.index, folder)]
    bar = progress_bar(len(tries) + 1, "memory_advice", progress=progress, unit="change")
    was_rate = _rate(dataset, seconds)
    out = []
    if folder.is_dir():
        _clear(folder)
    try:
        for stage, c in tries:
            a = MemoryAdvice(stage.name, c.change, c.alters, None, report.measured_growth_bytes,
                             None, was_rate, c.note)
            assert c.make is not None  # every memory rule builds its copy
            a.dataset = c.make().with_options(dataset.options())
            a.growth_bytes = memory_report(a.dataset, seconds=seconds,
                                           progress=False).measured_growth_bytes
            a.rows_per_s = _rate(a.dataset, seconds)
            out.append(a)
            bar.update()
    finally:
        if folder.is_dir():
            _clear(folder)
    budget = int(max(report.predicted_bytes / 4, 16e6))
    options = tf.data.Options()
    options.autotune.ram_budget = budget
    a = MemoryAdvice("the whole pipeline", f"a RAM budget for the autotuner: "
                     f"autotune.ram_budget={budget:,}", "", note="as built, runtime help on: "
                     "the budget bounds what AUTOTUNE may buffer, not your own buffers")
    a.dataset = dataset.with_options(options)
    a.was_bytes = memory_report(dataset, seconds=seconds, as_built=True,
                                chain=stages, progress=False).measured_growth_bytes
    a.growth_bytes = memory_report(a.dataset, seconds=seconds, as_built=True,  # same chain
                                   chain=stages, progress=False).measured_growth_bytes
    a.rows_per_s, a.was_rows_per_s = _rate(a.dataset, seconds), was_rate
    out.append(a)
    bar.update()
    bar.close()
    return out
