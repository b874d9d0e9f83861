"""The pipeline doctor: which stage of any ``tf.data`` pipeline limits it, measured.

:func:`diagnose` takes a dataset you built (not only the kit's), walks its
chain of transformations back to the source (every ``tf.data.Dataset`` keeps
its input and its Python function), and times each *prefix* of the chain
with the runtime's hidden help off (no injected prefetch, no automatic map
parallelization or fusion, autotune off; see :func:`datakit.perf.synthetic.serial`).
A stage's own cost is the time of its prefix minus the time of the prefix
before it, per element of the pipeline's output (each prefix is timed in
groups of elements, and the measuring loop's own time per element is
subtracted) (a ``cache`` is filled first,
so its cost can be negative: the time it saves). A cost below zero is printed as
0, with the figure measured and what it means (timing noise, or a cache's
saving). Then it times the pipeline
as you built it (runtime help on) and how long a consumer taking
``step_time`` per element waits. Stages are named by the ``name=`` you gave
(``ds.map(decode, name="decode")``), otherwise by kind and position.
:mod:`datakit.doctor.advice` proposes changes for the bottleneck and measures them;
one measured slower is listed apart, as not advised (``report.not_advised``), and one
whose copy raised when built or measured apart again (``report.failed``).

>>> import tensorflow as tf
>>> from datakit.perf.synthetic import work
>>> ds = tf.data.Dataset.range(40).map(lambda x: x + 1).map(work(0.004), name="slow")
>>> report = diagnose(ds.batch(4), seconds=0.2, advise=False)
>>> [s.name for s in report.stages], report.bottleneck.name
(['range #0', 'map #1', 'slow', 'batch #3'], 'slow')
>>> diagnose([1, 2, 3])
Traceback (most recent call last):
...
TypeError: diagnose() takes a tf.data.Dataset, got list
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from datakit.core.arguments import check_count, check_flag, check_seconds
from datakit.core.progress import check_progress, progress_bar
from datakit.doctor.advice import advise as measured_advice
from datakit.doctor.deadline import call_with_deadline, stalled_error
from datakit.doctor.prefixes import fan, group_size, overhead, time_run
from datakit.perf.chain import StageFacts, chain_of, stage_facts
from datakit.perf.synthetic import serial
from datakit.perf.throughput import Run, consumer_wait, measure

if TYPE_CHECKING:  # memory_use is imported when memory=True asks for it
    import tensorflow as tf
    from matplotlib.axes import Axes

    from datakit.doctor.memory_use import MemoryReport

__all__ = ["diagnose", "plot_report"]

METHOD = ("stage costs: each prefix of the chain timed alone with the runtime's hidden help off "
          "(inject_prefetch, map_parallelization, parallel_batch, map_and_batch_fusion, autotune); "
          "your own num_parallel_calls and prefetch kept. Whole pipeline: as you built it, "
          "runtime help on.")


@dataclass
class Stage:
    """One transformation of the chain and what it costs (seconds, per element)."""

    index: int
    name: str              # your name= if given, else "<kind> #<index>"
    kind: str              # map, batch, interleave, range, from_tensor_slices, ...
    detail: str            # knobs that matter: num_parallel_calls, batch size, py_function...
    per_output: float      # elements of this stage per element of the pipeline's output
    elements_per_s: float  # the prefix ending here, alone, in this stage's own elements
    prefix_s: float        # the prefix's time per output element of the pipeline
    cost_s: float          # this stage's own share: prefix_s minus the previous prefix_s
    exact: bool = True     # per_output known (whole epochs, kind, cardinality); False: sampled
    dataset: object = field(default=None, repr=False)  # the prefix, a tf.data.Dataset


@dataclass
class Report:
    """What :func:`diagnose` measured. ``stages`` run from the source to the output."""

    stages: list[Stage]
    bottleneck: Stage
    runner_up: Stage | None
    elements_per_s: float   # the whole pipeline as built (runtime help on)
    step_time: float
    wait_fraction: float    # of a consumer's time spent waiting, at step_time per element
    advice: list = field(default_factory=list)   # datakit.doctor.advice.Advice, bottleneck first
    not_advised: list = field(default_factory=list)  # changes tried and measured slower
    failed: list = field(default_factory=list)   # changes whose copy raised when measured
    method: str = METHOD
    elapsed_s: float = 0.0
    notes: list = field(default_factory=list)    # what the budget cut short, and why
    memory_report: MemoryReport | None = None   # with memory=True

    @property
    def memory(self) -> list:
        """Per stage, in chain order, what it holds in RAM (``memory=True``; else [])."""
        return self.memory_report.memory if self.memory_report is not None else []

    def __getattr__(self, name: str) -> Any:
        """``measured_growth_bytes``, ``biggest``, ``ram_budget``...: the memory report's."""
        memory = self.__dict__.get("memory_report")
        if memory is not None and not name.startswith("_") and hasattr(memory, name):
            return getattr(memory, name)
        raise AttributeError(f"Report has no {name!r} (the memory figures need memory=True)")

    def __str__(self) -> str:
        total = sum(max(s.cost_s, 0.0) for s in self.stages) or 1e-12
        lines = [f"{'stage':24s} {'kind':18s} {'own cost/elem':>14s} {'share':>6s}  detail"]
        for s in self.stages:
            mark = "  <- bottleneck" if s is self.bottleneck else ""
            approx = " " if s.exact else "~"
            lines.append(f"{s.name[:24]:24s} {s.kind[:18]:18s} {approx}"
                         f"{max(s.cost_s, 0.0) * 1e6:10,.0f} us "
                         f"{max(s.cost_s, 0) / total:6.0%}  "
                         f"{', '.join(x for x in (s.detail, _below_zero(s)) if x)}{mark}")
        if not all(s.exact for s in self.stages):
            lines.append("~: a stage upstream of it has an output count that was not known "
                         "or counted (1 per input assumed)")
        lines.append(f"whole pipeline as built: {self.elements_per_s:,.0f} elements/s; "
                     f"a consumer at {self.step_time * 1e3:g} ms/step waits "
                     f"{self.wait_fraction:.0%} of its time")
        lines += [str(a) for a in self.advice]
        if self.not_advised:
            lines.append("measured slower, so not advised:")
            lines += ["  " + str(a) for a in self.not_advised]
        if self.failed:
            lines.append("could not be measured (the copy raised), so not advised:")
            lines += ["  " + str(a) for a in self.failed]
        lines += [f"note: {n}" for n in self.notes]
        if self.memory_report is not None:
            lines += ["", "where the memory goes:", str(self.memory_report)]
        return "\n".join(lines)


def _below_zero(s: Stage) -> str:
    """What a stage's cost below zero means, shown as 0 (a difference of two timed prefixes)."""
    if not s.cost_s < 0:
        return ""
    why = "what reading from it saves, or timing noise" if s.kind == "cache" else \
        "timing noise: its cost is too small to measure"
    return f"measured {s.cost_s * 1e6:,.0f} us ({why})"


# -- the diagnosis --------------------------------------------------------------------------


def _stages(facts: list[StageFacts], runs: list[Run], fans: list[tuple[float, bool]],
            groups: list[int], notes: dict[int, str], seconds: float) -> list[Stage]:
    stages, prev = [], 0.0
    for k, f in enumerate(facts):
        d, kind = f.dataset, f.kind
        per_output, exact = 1.0, True
        for fanout, ok in fans[k + 1:]:
            per_output /= fanout
            exact = exact and ok
        rate = runs[k].elements_per_s
        if runs[k].exhausted and runs[k].count <= 1:  # one element (from_tensors...): no rate
            own, rate = 0.0, float("nan")
        else:
            own = 1 / rate - overhead(d.element_spec, seconds, groups[k]) if rate > 0 \
                else float("inf")
        prefix = per_output * max(own, 0.0)
        if kind == "repeat":
            notes.setdefault(k, "its cost is the start-up of each epoch of the stages above")
        detail = ", ".join(x for x in (f.detail, notes.get(k, "")) if x)
        stages.append(Stage(k, f.label, kind, detail, per_output, rate, prefix, prefix - prev,
                            exact, d))
        prev = prefix
    return stages


def _fill_caches(facts: list[StageFacts], seconds: float, budget: float) -> dict[int, str]:
    """Drain each ``cache`` stage first, for its steady state (later prefixes share it);
    the note each one's detail gets, by stage index."""
    notes = {}
    for k, f in enumerate(facts):
        if f.kind == "cache":
            fill = min(max(20 * seconds, 30.0), budget / 2)
            filled = measure(serial(f.dataset), fill).exhausted
            notes[k] = "filled, timed from memory" if filled else \
                f"not filled in {fill:g} s: timed while filling"
    return notes


def _fastest_runs(chain: list, groups: list, seconds: float, repeats: int, *, start: float,
                  budget: float, report_notes: list[str], bar: Any) -> list[Run]:
    """Each prefix's fastest of ``repeats`` timed runs, in rounds over all prefixes (a busy
    moment hits them alike); no new round once half the budget is used (noted). Each run
    is counted on ``bar``."""
    runs = []
    for k, d in enumerate(chain):
        runs.append(time_run(d, seconds, groups[k]))
        bar.update()
    for r in range(1, repeats):
        if time.perf_counter() - start > budget / 2:
            report_notes.append(f"{r} of {repeats} rounds: the budget of {budget:g} s was "
                                "half used (pass budget_s= for more)")
            bar.total -= (repeats - r) * len(chain)  # the rounds left out: not to come
            break
        for k, d in enumerate(chain):
            run = time_run(d, seconds, groups[k])
            bar.update()
            if run.elements_per_s > runs[k].elements_per_s:
                runs[k] = run
    return runs


def _add_advice(report: Report, dataset: tf.data.Dataset, chain: list, seconds: float,
                budget: float, start: float, progress: bool | None) -> None:
    """Measured advice in ``report``, or a note when the diagnosis used its budget already."""
    if time.perf_counter() - start > budget:
        report.notes.append(f"no advice: the diagnosis used its budget of {budget:g} s "
                            "(pass budget_s= for more)")
    else:
        tried = measured_advice(report, dataset, seconds=seconds, chain=chain,
                                progress=progress)
        report.advice = [a for a in tried if a.advised]
        report.not_advised = [a for a in tried if not a.advised and not a.error]
        report.failed = [a for a in tried if a.error]


def diagnose(dataset: tf.data.Dataset, *, step_time: float = 0.0, seconds: float = 0.5,
             repeats: int = 2, advise: bool = True, memory: bool = False,
             budget_s: float | None = None, progress: bool | None = None) -> Report:
    """Find where ``dataset``'s time goes: each stage's own cost, the bottleneck, measured advice.

    Args:
        dataset: any ``tf.data.Dataset`` (its chain is recovered from it).
        step_time: seconds your training step takes per element of ``dataset``.
        seconds: how long each measurement runs (each prefix ``repeats`` times).
        repeats: runs per prefix; the fastest counts.
        advise: also propose changes for the bottleneck and runner-up and measure
            each on a copy of the pipeline (:func:`datakit.doctor.advice.advise`).
        memory: also predict and measure what each stage holds in RAM
            (:func:`datakit.doctor.memory_use.memory_report`; ``report.memory``),
            first, before any timing (which fills caches and grows the process), so
            it measures what ``memory_report(dataset)`` alone measures.
        budget_s: the whole diagnosis's time (default ``120 * seconds``, at least 60 s):
            past it, no more repeats and no advice, and ``report.notes`` says so
            (a stage whose first element is slow, e.g. a shuffle buffer that refills for
            every prefix, can use it up).
        progress: a bar over the timed runs (each prefix, ``repeats`` times, then the
            whole pipeline and the consumer's wait), and the bars of the memory report
            and of the advice, one after the other (:mod:`datakit.core.progress`):
            ``None`` (default) shows them in a notebook or a terminal once a part lasts
            a second, ``True`` always, ``False`` never.

    ``repeat`` is never the bottleneck: its cost is the start-up of each new epoch of
    the stages above it, which its detail says.

    Raises:
        TypeError: ``dataset`` is not a ``tf.data.Dataset``; a number given as text;
            ``repeats`` not an int; ``advise`` or ``memory`` not ``True`` or ``False``
            (``"no"`` would be taken as yes); ``progress`` not ``True``, ``False`` or ``None``.
        ValueError: ``step_time < 0``, ``seconds <= 0`` (or not finite), ``repeats < 1``,
            or a dataset without elements.
        Stalled: (a ``TimeoutError``) no element came in half of ``budget_s``; it names
            the first stage that yields nothing.
    """
    chain = chain_of(dataset)
    check_seconds("step_time", step_time, func="diagnose")
    check_seconds("seconds", seconds, positive=True, func="diagnose")
    check_count("repeats", repeats, fix="diagnose() times each prefix at least once: pass 1 or "
                "more")
    budget = max(120 * seconds, 60.0) if budget_s is None else \
        check_seconds("budget_s", budget_s, positive=True, func="diagnose")
    check_progress(progress)
    advise, memory = check_flag("advise", advise), check_flag("memory", memory)
    start = time.perf_counter()
    held = None
    facts = stage_facts(chain)  # each stage read once, passed down to the memory and advice
    if memory:  # first, in a fresh state: the timing below fills caches and grows the process
        from datakit.doctor.memory_use import memory_report
        held = memory_report(dataset, seconds=max(4 * seconds, 1.0), chain=facts,
                             progress=progress)
    first, stalled = call_with_deadline(lambda: measure(serial(dataset), seconds, limit=2),
                                        patience=budget / 2)
    if stalled:
        raise stalled_error("diagnose", f"no element came in {budget / 2:g} s", facts,
                            budget / 2, start + budget, budget_name="budget_s")
    if not first.count:
        raise ValueError("diagnose(): the dataset delivered no element: nothing to diagnose "
                         "(check its files, its filter, or a take()/skip() that empties it)")
    # a bar over the timed runs (an error leaves it to be closed when it is collected)
    bar = progress_bar(len(chain) * repeats + 2, "diagnose", progress=progress, unit="run")
    notes = _fill_caches(facts, seconds, budget)
    groups = [group_size(d, seconds) for d in chain]
    report_notes: list[str] = []
    runs = _fastest_runs(chain, groups, seconds, repeats, start=start, budget=budget,
                         report_notes=report_notes, bar=bar)
    slow = max(range(len(chain)), key=lambda k: runs[k].first_s)
    if runs[slow].first_s > seconds:
        report_notes.append(f"the first element of {facts[slow].name or facts[slow].kind}"
                            f" takes {runs[slow].first_s:.1f} s, paid by every prefix from it")
    fans = [(1.0, True)] + [fan(facts[k], runs, k, seconds) for k in range(1, len(chain))]
    stages = _stages(facts, runs, fans, groups, notes, seconds)
    ranked = sorted((s for s in stages if s.kind != "repeat"), key=lambda s: -s.cost_s) or stages
    whole = measure(dataset, seconds, repeats=repeats)
    bar.update()
    wait = consumer_wait(dataset, step_time, seconds)
    bar.update()
    bar.close()
    report = Report(stages, ranked[0], ranked[1] if len(ranked) > 1 else None,
                    whole.elements_per_s, step_time, wait, notes=report_notes)
    if advise:
        _add_advice(report, dataset, facts, seconds, budget, start, progress)
    report.memory_report = held
    report.elapsed_s = time.perf_counter() - start
    if report.elapsed_s > 1.5 * budget:
        report.notes.append(f"took {report.elapsed_s:.0f} s for a budget of {budget:g} s")
    return report


def plot_report(report: Report, ax: Axes | None = None) -> Axes:
    """Bars of each stage's own cost per output element (us), the bottleneck in red; the Axes."""
    import matplotlib.pyplot as plt
    ax = ax or plt.subplots(figsize=(7, 0.45 * len(report.stages) + 1.5))[1]
    names = [s.name for s in report.stages][::-1]
    costs = [max(s.cost_s, 0.0) * 1e6 for s in report.stages][::-1]
    colors = ["tab:red" if s is report.bottleneck else "tab:blue" for s in report.stages][::-1]
    ax.barh(names, costs, color=colors)
    if report.step_time:
        ax.axvline(report.step_time * 1e6, color="k", ls="--", label="your step time")
        ax.legend(loc="lower right")
    ax.set_xlabel("own cost per output element (us), runtime help off")
    ax.set_ylabel("stage (source at the top)")
    ax.set_title(f"Where the time goes: bottleneck {report.bottleneck.name!r}")
    return ax
