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

>>> from datakit.doctor.rebuild import assemble as rebuilt
>>> assemble is rebuilt   # rebuilding a chain has its own module; the old import works
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import tensorflow as tf

from datakit.core.cores import cpu_cores
from datakit.core.progress import check_progress, progress_bar
from datakit.doctor.rebuild import Candidate, assemble, reapply
from datakit.perf.chain import chain_of, graph_ops, kind_of, knob, name_of, uses_py_function
from datakit.perf.throughput import consumer_wait, measure

__all__ = ["advise", "assemble", "compare", "reapply"]

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

    @property
    def advised(self) -> bool:
        """False when the copy was measured slower than the original (``gain < 1``)."""
        return self.gain is None or not self.gain < 1.0

    def __str__(self) -> str:
        gain = f"{self.gain:.2f}x measured" if self.gain is not None else "not measured"
        alters = f"; ALTERS {self.alters}" if self.alters else ""
        note = f" ({self.note})" if self.note else ""
        return f"- {self.stage}: {self.change}: {gain}{note}{alters}"


# -- measuring a change ---------------------------------------------------------------------


def _batched(chain) -> bool:
    kinds = [kind_of(d) for d in chain]
    return "batch" in kinds and "unbatch" not in kinds[kinds.index("batch"):]


def compare(original, copy, *, seconds: float, rounds: int = 2, rows: bool = True,
            fill: float = 0.0) -> float:
    """Best rate of ``copy`` / best rate of ``original``, measured alternately ``rounds`` times.

    ``fill > 0``: first drain each one (up to ``fill`` seconds, or to its end) so that a
    ``cache`` is full (advice that adds a cache is only made for finite pipelines).
    """
    if fill:
        for ds in (original, copy):
            measure(ds, fill)
    best = [0.0, 0.0]
    for _ in range(rounds):
        for i, ds in enumerate((original, copy)):
            r = measure(ds, seconds)
            best[i] = max(best[i], r.rows_per_s if rows else r.elements_per_s)
    return best[1] / best[0] if best[0] else float("nan")


# -- the advice -----------------------------------------------------------------------------


def _random(stage) -> bool:
    ops = graph_ops(stage, library=False)
    if ops is None:
        return kind_of(stage) == "shuffle"
    return any("Random" in op for op in ops)


def _copy(base, steps: list) -> Callable[[], tf.data.Dataset]:
    """Builds ``assemble(base, steps)`` when called: the copy a candidate change makes."""
    return lambda: assemble(base, steps)


def _with(stage, **changes) -> Callable[[tf.data.Dataset], tf.data.Dataset]:
    """A step for :func:`assemble`: ``stage`` re-applied to its input with ``changes``."""
    return lambda inp: reapply(stage, inp, **changes)


def _cached(inp: tf.data.Dataset) -> tf.data.Dataset:
    """A step for :func:`assemble`: an in-memory ``cache()``."""
    return inp.cache()


def _reading_candidates(chain, k) -> list[Candidate]:
    """Read in parallel (unless it does already), or more files at once, for interleave ``k``."""
    s, rest, out = chain[k], chain[k + 1:], []
    cycle = knob(s, "cycle_length")
    cycle = cycle if cycle and cycle > 0 else _CORES
    par = min(cycle, _CORES)
    calls = knob(s, "num_parallel_calls")
    # never what it has already, and never "parallel" with one call (cycle_length=1, or 1 core)
    if par >= 2 and (calls is None or 0 < calls < par):
        out.append(Candidate(
            f"read in parallel: interleave(..., num_parallel_calls={par})", "",
            _copy(chain[k - 1], [_with(s, num_parallel_calls=par, deterministic=True)]
                  + rest)))
    wider = min(2 * cycle, _CORES)
    both = f" and read {wider} in parallel" if wider >= 2 else ""
    knobs = {"num_parallel_calls": wider} if wider >= 2 else {}
    out.append(Candidate(
        f"raise cycle_length to {2 * cycle}{both}", "order: rows of more files are mixed",
        _copy(chain[k - 1], [_with(s, cycle_length=2 * cycle, deterministic=True, **knobs)]
              + rest)))
    return out


def _candidates(chain, k):
    """The :class:`Candidate` changes for stage ``k`` of ``chain``."""
    s, kind = chain[k], kind_of(chain[k])
    kinds = [kind_of(d) for d in chain]
    rest = chain[k + 1:]
    out: list[Candidate] = []
    if kind == "map" and knob(s, "num_parallel_calls") in (None, 1) and _CORES >= 2:
        out.append(Candidate(
            f"parallelize it: map(..., num_parallel_calls={_CORES})", "",
            _copy(chain[k - 1], [_with(s, num_parallel_calls=_CORES, deterministic=True)]
                  + rest)))
    if kind == "map" and "batch" in kinds[k:]:
        b = k + kinds[k:].index("batch")
        between = kinds[k + 1:b]
        if all(x in ("map", "prefetch", "shuffle") for x in between):
            alters = ("order: the shuffle then mixes whole batches, not rows"
                      if "shuffle" in between else "")
            out.append(Candidate(
                f"vectorize: batch({knob(chain[b], 'batch_size')}) before this map, so "
                "the function runs once per batch", alters,
                _copy(chain[k - 1], [chain[b]] + chain[k:b] + chain[b + 1:]),
                requires="the function must accept a batch"))
    finite = all(int(d.cardinality()) != tf.data.INFINITE_CARDINALITY for d in (s, chain[-1]))
    if finite and kind not in ("cache", "prefetch", "shuffle", "batch") and rest \
            and "cache" not in kinds[k + 1:]:  # a later cache already spares this stage
        order = "shuffle" in kinds[:k + 1]
        rand = any(_random(d) for d in chain[:k + 1])
        python = any(uses_py_function(d) for d in chain[:k + 1])
        alters = "; ".join(x for x in (
            "order: every epoch repeats the first epoch's order up to here" if order else "",
            "content: random work before it is frozen after the first epoch" if rand else
            "content, if your py_function is not deterministic: its first results are "
            "frozen" if python else "") if x)
        old = [c for c in range(1, k) if kinds[c] == "cache"]
        if old:
            c = old[-1]
            out.append(Candidate(
                f"move the cache from stage #{c} to right after this stage", alters,
                _copy(chain[c - 1], chain[c + 1:k + 1] + [_cached] + rest),
                "timed after one epoch filled the cache", fill=True))
        else:
            out.append(Candidate(
                "add cache() right after this stage (in memory: the data must fit)", alters,
                _copy(chain[k], [_cached] + rest),
                "timed after one epoch filled the cache", fill=True))
    if kind == "interleave":
        out += _reading_candidates(chain, k)
    if "batch" in kinds[1:k + 1] and kind != "prefetch":
        b = max(j for j in range(1, k + 1) if kinds[j] == "batch")
        size = knob(chain[b], "batch_size")
        if size:
            out.append(Candidate(
                f"a bigger batch: batch({4 * size}) instead of batch({size})",
                "content: each batch holds 4x the rows (adjust the learning rate)",
                _copy(chain[b - 1], [_with(chain[b], batch_size=4 * size)] + chain[b + 1:]),
                "rows/s"))
    if uses_py_function(s):
        out.append(Candidate(
            "replace the tf.py_function by TensorFlow ops (it holds the GIL and is "
            "never parallelized by the runtime)", "", None,
            "needs your rewrite; measure it with diagnose() afterwards"))
    return out


def advise(report, dataset, *, seconds: float = 0.5, rounds: int = 2,
           chain: list | None = None, progress: bool | None = None) -> list[Advice]:
    """Changes for the bottleneck and runner-up of ``report``, each measured on a copy.

    Every change tried is returned; one measured slower has ``advised`` False
    (:func:`~datakit.doctor.diagnosis.diagnose` lists it apart, as not advised).

    ``chain``: ``chain_of(dataset)`` when it was read already (:func:`diagnose
    <datakit.doctor.diagnosis.diagnose>` passes its own down: a chain is read once).
    ``progress``: a bar over the changes tried (:mod:`datakit.core.progress`): ``None``
    (default) shows it in a notebook or a terminal once the advice lasts a second,
    ``True`` always, ``False`` never.
    """
    check_progress(progress)
    chain = chain_of(dataset) if chain is None else chain
    options = dataset.options()
    rows = _batched(chain)
    targets = [s for s in (report.bottleneck, report.runner_up) if s is not None]
    tries = [(stage, c) for stage in targets for c in _candidates(chain, stage.index)]
    end = kind_of(chain[-1]) != "prefetch"  # the final prefetch: one more change tried
    bar = progress_bar(len(tries) + end, "advise", progress=progress, unit="change")
    advice: list[Advice] = []
    for stage, c in tries:
        a = Advice(stage.name, c.change, c.alters, None, c.note or c.requires)
        if c.make is not None:
            try:
                a.dataset = c.make().with_options(options)
                a.gain = compare(dataset, a.dataset, seconds=seconds, rounds=rounds,
                                 rows=rows, fill=min(60.0, 20 * seconds) if c.fill else 0.0)
                a.note = c.note
            except Exception as e:  # a change that does not apply to this pipeline
                a.note = (f"{c.note or c.requires}: {type(e).__name__}: "
                          f"{str(e).splitlines()[0][:120]}")
                a.dataset = None
        advice.append(a)
        bar.update()
    if end:
        last = name_of(chain[-1]) or f"{kind_of(chain[-1])} #{len(chain) - 1}"
        a = Advice(f"{last} (the end)",
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


