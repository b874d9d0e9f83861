"""The doctor's advice: concrete changes for a pipeline's bottleneck, each measured on a copy.

:func:`advise` looks at the two costliest stages of a :class:`datakit.doctor.diagnosis.Report`
and proposes what the ``tf.data`` guides propose (parallelize a ``map``,
vectorize by batching first, add or move ``cache``, raise ``cycle_length``
or read in parallel, a bigger batch, replace a ``py_function``, a final
``prefetch``). Each change it can make, it makes on a *copy* of the
pipeline, rebuilt from the same Python functions (:mod:`datakit.doctor.rebuild`),
and measures: the original and the copy run side by side, alternating, and the
gain is the ratio of their best rates (rows/s when the pipeline batches).
A change that alters the elements (their order, or what a batch holds) says
so in ``alters``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf

from datakit.core.cores import cpu_cores
from datakit.core.progress import check_progress, progress_bar
from datakit.doctor.rebuild import Candidate, assemble, reapply
from datakit.perf.chain import StageFacts, chain_of, stage_facts
from datakit.perf.throughput import consumer_wait, measure

__all__ = ["advise", "compare"]

#: The cores this process may use (CPU affinity respected): the parallelism advice asks for.
_CORES = cpu_cores()


@dataclass
class Advice:
    """One proposed change, and what it gave when applied to a copy of the pipeline."""

    stage: str               # the stage it targets
    change: str              # what to do
    alters: str = ""         # "" if the elements stay the same, else what changes
    gain: float | None = None  # measured rate of the copy / rate of the original
    note: str = ""           # how it was measured, or why it was not
    dataset: object = field(default=None, repr=False)  # the changed copy
    error: str = ""          # why building or measuring the copy raised ("" if it did not)

    @property
    def advised(self) -> bool:
        """False when the copy was measured slower than the original (``gain < 1``), or
        when building or measuring it raised (``error``)."""
        return not self.error and (self.gain is None or not self.gain < 1.0)

    def __str__(self) -> str:
        gain = f"{self.gain:.2f}x measured" if self.gain is not None else \
            f"raised {self.error}" if self.error else "not measured"
        alters = f"; ALTERS {self.alters}" if self.alters else ""
        note = f" ({self.note})" if self.note else ""
        return f"- {self.stage}: {self.change}: {gain}{note}{alters}"


# -- measuring a change ---------------------------------------------------------------------


def _batched(stages: list[StageFacts]) -> bool:
    kinds = [s.kind for s in stages]
    return "batch" in kinds and "unbatch" not in kinds[kinds.index("batch"):]


def compare(original: tf.data.Dataset, copy: tf.data.Dataset, *, seconds: float,
            rounds: int = 2, rows: bool = True, fill: float = 0.0,
            fill_original: bool = True) -> float:
    """Best rate of ``copy`` / best rate of ``original``, measured alternately ``rounds`` times.

    ``fill > 0``: first drain each one (up to ``fill`` seconds, or to its end) so that a
    ``cache`` is full (advice that adds a cache is only made for finite pipelines);
    ``fill_original=False`` drains only the copy (the original has no cache, or was
    drained already: an in-memory cache keeps only a whole epoch, so a second drain
    adds nothing).
    """
    if fill:
        for ds in (original, copy) if fill_original else (copy,):
            measure(ds, fill)
    best = [0.0, 0.0]
    for _ in range(rounds):
        for i, ds in enumerate((original, copy)):
            r = measure(ds, seconds)
            best[i] = max(best[i], r.rows_per_s if rows else r.elements_per_s)
    return best[1] / best[0] if best[0] else float("nan")


# -- the advice: one small rule per change, tried in the order of SPEED_RULES ---------------
#
# A rule takes the chain's stage records (perf.chain.stage_facts) and the index k of the
# stage to speed up, and returns the Candidate changes it proposes there (maybe none).


def _copy(base: tf.data.Dataset, steps: list) -> Callable[[], tf.data.Dataset]:
    """Builds ``assemble(base, steps)`` when called: the copy a candidate change makes."""
    return lambda: assemble(base, steps)


def _with(stage: StageFacts, **changes: Any) -> Callable[[tf.data.Dataset], tf.data.Dataset]:
    """A step for :func:`assemble`: ``stage`` re-applied to its input with ``changes``."""
    return lambda inp: reapply(stage, inp, **changes)


def _cached(inp: tf.data.Dataset) -> tf.data.Dataset:
    """A step for :func:`assemble`: an in-memory ``cache()``."""
    return inp.cache()


def _steps(stages: list[StageFacts]) -> list:
    """Stages as steps for :func:`assemble` (each re-applied from its record, not read again)."""
    return list(stages)


def _parallel_map(stages: list[StageFacts], k: int) -> list[Candidate]:
    """A serial ``map``: run it on every core."""
    s = stages[k]
    if s.kind != "map" or s.knobs["num_parallel_calls"] not in (None, 1) or _CORES < 2:
        return []
    return [Candidate(f"parallelize it: map(..., num_parallel_calls={_CORES})", "",
                      _copy(stages[k - 1].dataset,
                            [_with(s, num_parallel_calls=_CORES, deterministic=True)]
                            + _steps(stages[k + 1:])))]


def _vectorize(stages: list[StageFacts], k: int) -> list[Candidate]:
    """A ``map`` before a ``batch``: batch first, so the function runs once per batch."""
    kinds = [s.kind for s in stages]
    if kinds[k] != "map" or "batch" not in kinds[k:]:
        return []
    b = k + kinds[k:].index("batch")
    between = kinds[k + 1:b]
    if not all(x in ("map", "prefetch", "shuffle") for x in between):
        return []
    alters = "order: the shuffle then mixes whole batches, not rows" if "shuffle" in between \
        else ""
    chain = _steps(stages)
    return [Candidate(
        f"vectorize: batch({stages[b].knobs['batch_size']}) before this map, so the function "
        "runs once per batch", alters,
        _copy(stages[k - 1].dataset, [chain[b]] + chain[k:b] + chain[b + 1:]),
        requires="the function must accept a batch")]


def _cache(stages: list[StageFacts], k: int) -> list[Candidate]:
    """A finite pipeline: cache right after the stage (or move an earlier cache there)."""
    s, kinds, chain = stages[k], [x.kind for x in stages], _steps(stages)
    finite = all(x.cardinality != tf.data.INFINITE_CARDINALITY for x in (s, stages[-1]))
    if not finite or s.kind in ("cache", "prefetch", "shuffle", "batch") or k + 1 == len(stages) \
            or "cache" in kinds[k + 1:]:  # a later cache already spares this stage
        return []
    order = "shuffle" in kinds[:k + 1]
    rand = any(x.random for x in stages[:k + 1])
    python = any(x.python for x in stages[:k + 1])
    alters = "; ".join(x for x in (
        "order: every epoch repeats the first epoch's order up to here" if order else "",
        "content: random work before it is frozen after the first epoch" if rand else
        "content, if your py_function is not deterministic: its first results are "
        "frozen" if python else "") if x)
    old = [c for c in range(1, k) if kinds[c] == "cache"]
    if old:
        c = old[-1]
        return [Candidate(f"move the cache from stage #{c} to right after this stage", alters,
                          _copy(stages[c - 1].dataset,
                                chain[c + 1:k + 1] + [_cached] + chain[k + 1:]),
                          "timed after one epoch filled the cache", fill=True)]
    return [Candidate("add cache() right after this stage (in memory: the data must fit)",
                      alters, _copy(s.dataset, [_cached] + chain[k + 1:]),
                      "timed after one epoch filled the cache", fill=True)]


def _reading(stages: list[StageFacts], k: int) -> list[Candidate]:
    """An ``interleave``: read in parallel (unless it does already), or more files at once."""
    s, rest, out = stages[k], _steps(stages[k + 1:]), []
    if s.kind != "interleave":
        return []
    base = stages[k - 1].dataset
    cycle = s.knobs["cycle_length"]
    cycle = cycle if cycle and cycle > 0 else _CORES
    par = min(cycle, _CORES)
    calls = s.knobs["num_parallel_calls"]
    # never what it has already, and never "parallel" with one call (cycle_length=1, or 1 core)
    if par >= 2 and (calls is None or 0 < calls < par):
        out.append(Candidate(
            f"read in parallel: interleave(..., num_parallel_calls={par})", "",
            _copy(base, [_with(s, num_parallel_calls=par, deterministic=True)] + rest)))
    wider = min(2 * cycle, _CORES)
    both = f" and read {wider} in parallel" if wider >= 2 else ""
    knobs = {"num_parallel_calls": wider} if wider >= 2 else {}
    out.append(Candidate(
        f"raise cycle_length to {2 * cycle}{both}", "order: rows of more files are mixed",
        _copy(base, [_with(s, cycle_length=2 * cycle, deterministic=True, **knobs)]
              + rest)))
    return out


def _bigger_batch(stages: list[StageFacts], k: int) -> list[Candidate]:
    """A stage at or after a ``batch``: 4x the batch."""
    kinds = [s.kind for s in stages]
    if "batch" not in kinds[1:k + 1] or kinds[k] == "prefetch":
        return []
    b = max(j for j in range(1, k + 1) if kinds[j] == "batch")
    size = stages[b].knobs["batch_size"]
    if not size:
        return []
    return [Candidate(f"a bigger batch: batch({4 * size}) instead of batch({size})",
                      "content: each batch holds 4x the rows (adjust the learning rate)",
                      _copy(stages[b - 1].dataset,
                            [_with(stages[b], batch_size=4 * size)]
                            + _steps(stages[b + 1:])), "rows/s")]


def _python(stages: list[StageFacts], k: int) -> list[Candidate]:
    """A ``py_function`` of yours: rewrite it in TensorFlow ops (not measured)."""
    if not stages[k].python:
        return []
    return [Candidate("replace the tf.py_function by TensorFlow ops (it holds the GIL and is "
                      "never parallelized by the runtime)", "", None,
                      "needs your rewrite; measure it with diagnose() afterwards")]


#: The speed advice: each rule proposes its changes for one stage, in this order.
SPEED_RULES = (_parallel_map, _vectorize, _cache, _reading, _bigger_batch, _python)


def advise(report: Any, dataset: tf.data.Dataset, *, seconds: float = 0.5, rounds: int = 2,
           chain: list | None = None, progress: bool | None = None) -> list[Advice]:
    """Changes for the bottleneck and runner-up of ``report``, each measured on a copy.

    Every change tried is returned; one measured slower, or whose copy raised when built
    or measured (``error``), has ``advised`` False (:func:`~datakit.doctor.diagnosis.diagnose`
    lists them apart, as not advised and as not measured).

    ``chain``: ``chain_of(dataset)``, or its stage records (:func:`~datakit.perf.chain.
    stage_facts`), when it was read already (:func:`diagnose
    <datakit.doctor.diagnosis.diagnose>` passes its records down: a chain is read once).
    ``progress``: a bar over the changes tried (:mod:`datakit.core.progress`): ``None``
    (default) shows it in a notebook or a terminal once the advice lasts a second,
    ``True`` always, ``False`` never.
    """
    check_progress(progress)
    options = dataset.options()
    stages = stage_facts(chain_of(dataset) if chain is None else chain)  # each stage read once
    rows = _batched(stages)
    targets = [s for s in (report.bottleneck, report.runner_up) if s is not None]
    tries = [(stage, c) for stage in targets for rule in SPEED_RULES
             for c in rule(stages, stage.index)]
    end = stages[-1].kind != "prefetch"  # the final prefetch: one more change tried
    bar = progress_bar(len(tries) + end, "advise", progress=progress, unit="change")
    advice: list[Advice] = []
    # the original's caches need one drain, before the first copy that fills its own
    unfilled = any(s.kind == "cache" for s in stages)
    for stage, c in tries:
        a = Advice(stage.name, c.change, c.alters, None, c.note or c.requires)
        if c.make is not None:
            try:
                a.dataset = c.make().with_options(options)
                a.gain = compare(dataset, a.dataset, seconds=seconds, rounds=rounds,
                                 rows=rows, fill=min(60.0, 20 * seconds) if c.fill else 0.0,
                                 fill_original=unfilled)
                unfilled = unfilled and not c.fill
                a.note = c.note
            except Exception as e:  # a change that does not apply to this pipeline
                a.error = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:120]}"
                a.note, a.dataset, a.gain = c.note or c.requires, None, None
        advice.append(a)
        bar.update()
    if end:
        a = Advice(f"{stages[-1].label} (the end)",
                   "add a final prefetch(1)", "", None,
                   "pass step_time to measure it" if not report.step_time else
                   f"consumer waiting, at step_time={report.step_time:g} s")
        a.dataset = dataset.prefetch(1)
        if report.step_time:
            before = consumer_wait(dataset, report.step_time, 2 * seconds)
            after = consumer_wait(a.dataset, report.step_time, 2 * seconds)
            a.gain = (1 - after) / (1 - before)  # rate = (1 - waiting fraction) / step
            a.note += f": waiting {before:.0%} -> {after:.0%} of the time"
        advice.append(a)
        bar.update()
    bar.close()
    return advice


