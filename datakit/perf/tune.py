"""Tune a pipeline's knobs by measuring its throughput as ``fit()`` consumes it.

:func:`tune` searches knob values of a pipeline you build from keyword
arguments by measuring real throughput, and compares the best it found with
AUTOTUNE (everywhere, and knob by knob) and with your defaults, side by side.
On 2 shared cores AUTOTUNE often loses (with TF 2.21, ``map(num_parallel_calls=AUTOTUNE)``
ran the per-line CSV chain 1.5-2x slower than the same chain without it): measure.
Measuring is :func:`datakit.perf.throughput.measure`.

>>> import tensorflow as tf
>>> def build(num_parallel_calls=None, batch_size=8):
...     ds = tf.data.Dataset.range(2000).map(lambda x: x * 2, num_parallel_calls=num_parallel_calls)
...     return ds.batch(batch_size)
>>> result = tune(build, {"num_parallel_calls": [None, tf.data.AUTOTUNE], "batch_size": [8, 64]},
...               budget_s=6)
>>> result.best["batch_size"] in (8, 64), sorted(n for row in result.table
...                                              for n in row["config"].split(" = "))
(True, ['AUTOTUNE everywhere', 'defaults', 'doctor-tuned', 'num_parallel_calls=AUTOTUNE'])
>>> tune(build, {"cycle_length": [1, 2]})
Traceback (most recent call last):
...
ValueError: tune(): build() has no argument 'cycle_length' (it takes num_parallel_calls, batch_size)
"""

from __future__ import annotations

import inspect
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf

from datakit.core.arguments import AUTOTUNE, check_count, check_seconds
from datakit.core.progress import check_progress, progress_bar
from datakit.perf.throughput import measure

__all__ = ["tune"]

#: What :func:`tune` searches: a function that builds the pipeline from keyword knobs.
Build = Callable[..., tf.data.Dataset]


# -- tuning -------------------------------------------------------------------------------


def _show(v: object) -> str:
    return "AUTOTUNE" if v is AUTOTUNE or (isinstance(v, int) and not isinstance(v, bool)
                                           and v == AUTOTUNE) else repr(v)


def _label(knobs: dict) -> str:
    return ", ".join(f"{k}={_show(v)}" for k, v in knobs.items())


@dataclass
class TuneResult:
    """What :func:`tune` found. ``table``: one dict per configuration compared side by side."""

    best: dict
    defaults: dict
    autotune: dict
    table: list[dict]
    trials: list[dict] = field(default_factory=list)  # every search measurement, in order
    seconds: float = 0.0
    skipped: list[dict] = field(default_factory=list)  # combinations tf.data refused, and why

    def __str__(self) -> str:
        lines = ["| configuration | knobs | rows/s (median) "
                 "| × AUTOTUNE everywhere, median (min) |",
                 "|---|---|--:|--:|"]
        for r in self.table:
            lines.append(f"| {r['config']} | {_label(r['knobs'])} | {r['rows_per_s']:,.0f} | "
                         f"{r['vs_autotune']:.2f} ({r['vs_autotune_min']:.2f}) |")
        lines += [f"skipped (tf.data refused it): {_label(t['knobs'])}: {t['error']}"
                  for t in self.skipped]
        return "\n".join(lines)


def _check_space(build: Build, space: dict) -> list[str]:
    if not callable(build):
        raise TypeError(f"tune() takes a function that builds the pipeline, got "
                        f"{type(build).__name__}")
    if not isinstance(space, dict):
        raise TypeError(f"tune(): space must be a dict {{knob: [candidate values]}}, got "
                        f"{type(space).__name__}")
    if not space:
        raise ValueError("tune(): space must be a non-empty dict {knob: [candidate values]}")
    params = inspect.signature(build).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for knob, values in space.items():
        if not takes_any and knob not in params:
            raise ValueError(f"tune(): build() has no argument {knob!r} (it takes "
                             f"{', '.join(params)})")
        if not isinstance(values, (list, tuple)):
            raise TypeError(f"tune(): space[{knob!r}] must be a list of values, got "
                            f"{type(values).__name__}")
        if not values:
            raise ValueError(f"tune(): space[{knob!r}] must be a non-empty list of values")
        for v in values:
            _check_value(knob, v)
    return list(params)


#: The knobs whose values tf.data checks only when the pipeline runs, checked up front as
#: the arguments they stand for: (smallest int, None allowed, AUTOTUNE allowed, the fix).
_MORE = "use 1 or more, None or tf.data.AUTOTUNE"
KNOB_RULES = {
    "batch_size": (1, False, False, "a batch holds at least one element: use 1 or more"),
    "buffer_size": (1, False, True, "use 1 or more or tf.data.AUTOTUNE"),
    "shuffle_buffer_size": (1, True, False, "use 1 or more, or None for no shuffle"),
    "prefetch": (0, True, True, "use 0 or more, None or tf.data.AUTOTUNE"),
    "num_parallel_calls": (1, True, True, _MORE), "num_parallel_reads": (1, True, True, _MORE),
    "cycle_length": (1, True, True, _MORE), "block_length": (1, True, False, "use 1 or more"),
    "n_readers": (1, False, False, "use 1 or more files read at once"),
}


def _check_value(knob: str, value: object) -> None:
    """A candidate value checked as the argument ``knob`` stands for (see :data:`KNOB_RULES`),
    before anything runs: tf.data would refuse it only inside a trial, or not at all."""
    rule = KNOB_RULES.get(knob)
    if rule is None:  # a knob of your own: build() checks it
        return
    minimum, none, autotune, fix = rule
    try:
        check_count(knob, value, minimum, none=none, autotune=autotune, fix=fix)
    except (TypeError, ValueError) as e:
        raise type(e)(f"tune(): the search space's {knob!r} holds {value!r}, which {knob} "
                      f"cannot be ({e}). Remove it from space[{knob!r}].") from None


def _rate(build: Build, knobs: dict, seconds: float, skipped: list, bar: Any) -> float | None:
    """Rows/s of ``build(**knobs)``, or None (noted in ``skipped``) for a combination that
    tf.data refuses; each configuration measured is counted on ``bar``."""
    try:
        ds = build(**knobs)
        if not isinstance(ds, tf.data.Dataset):
            raise TypeError(f"tune(): build({_label(knobs)}) returned {type(ds).__name__}, not "
                            "a tf.data.Dataset: end build() with `return dataset`")
        run = measure(ds, seconds)
    except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError) as e:
        text = re.sub(r"^\{\{[^}]*\}\}\s*", "", e.message).splitlines()[0]
        skipped.append({"knobs": dict(knobs), "error": text[:200]})
        bar.update()  # measured, and refused
        return None
    if not run.count:
        raise ValueError(f"tune(): build({_label(knobs)}) gave a dataset without elements: "
                         "nothing to measure")
    r = run.rows_per_s if run.elements else 0.0
    bar.set_postfix_str(f"{_label(knobs)}: {r:,.0f} rows/s", refresh=False)
    bar.update()
    return r


def _defaults(build: Build, params: list[str], space: dict) -> dict:
    """Each knob's default in ``build``'s signature, else its first candidate value."""
    sig = inspect.signature(build).parameters
    return {k: sig[k].default if k in params and sig[k].default is not inspect.Parameter.empty
            else v[0] for k, v in space.items()}


def _one_knob_at_a_time(space: dict, best: dict, rate: Callable[[dict], float],
                        until: float) -> dict:
    """Coordinate search from ``best``: each candidate value of each knob in turn, a change
    kept when ``rate(knobs)`` beats the best so far; up to 3 passes, none past ``until``."""
    best_rate = rate(best)
    for _ in range(3):  # passes over the knobs, while the budget lasts
        changed = False
        for knob, values in space.items():
            for v in values:
                if time.perf_counter() > until:
                    break
                if v == best[knob] and type(v) is type(best[knob]):
                    continue
                r = rate({**best, knob: v})
                if r > best_rate:
                    best, best_rate, changed = {**best, knob: v}, r, True
        if not changed or time.perf_counter() > until:
            break
    return best


def _selected(build: Build, trials: list[dict], autotune: dict, defaults: dict,
              seconds: float, bar: Any) -> dict | None:
    """The fastest of the search's three fastest, AUTOTUNE everywhere and the defaults,
    measured again side by side (None: only one of them, nothing to choose)."""
    ranked = [t["knobs"] for t in sorted(trials, key=lambda t: -t["rows_per_s"])]
    top = list({_label(k): k for k in [*ranked[:3], autotune, defaults]}.values())
    if len(top) < 2:
        return None
    again = [_rate(build, knobs, seconds, [], bar) or -1.0 for knobs in top]
    return top[max(range(len(again)), key=again.__getitem__)]


def _compared(space: dict, best: dict, autotune: dict, defaults: dict) -> dict[str, dict]:
    """The configurations the table compares, by name."""
    configs = {"doctor-tuned": best, "AUTOTUNE everywhere": autotune}
    for knob, values in space.items():
        if AUTOTUNE in values:
            configs[f"{knob}=AUTOTUNE"] = {**best, knob: AUTOTUNE}
    configs["defaults"] = defaults
    return configs


def _side_by_side(build: Build, knobs_of: dict[str, dict], distinct: list[str], seconds: float,
                  rounds: int, until: float, bar: Any) -> dict[str, list[float]]:
    """Rows/s of each configuration per round, in rotated order; >= 2 rounds even past
    ``until``."""
    runs: dict[str, list[float]] = {lab: [] for lab in distinct}
    for r in range(rounds):
        if r >= 2 and time.perf_counter() > until:
            break
        for lab in distinct[r % len(distinct):] + distinct[:r % len(distinct)]:
            runs[lab].append(_rate(build, knobs_of[lab], seconds, [], bar) or 0.0)
    return runs


def _confirmation(build: Build, configs: dict[str, dict], skipped: list[dict], seconds: float,
                  rounds: int, until: float, ref_labels: tuple[str, str],
                  bar: Any) -> list[dict]:
    """The table: every distinct configuration (named by all its names) measured side by
    side, each round's rate relative to AUTOTUNE everywhere (else to the tuned one)."""
    names: dict[str, list[str]] = {}  # one row per distinct configuration, named by all
    for name, knobs in configs.items():
        names.setdefault(_label(knobs), []).append(name)
    knobs_of = {_label(k): k for k in configs.values()}
    refused = {_label(t["knobs"]) for t in skipped}
    distinct = [lab for lab in names if lab not in refused]
    runs = _side_by_side(build, knobs_of, distinct, seconds, rounds, until, bar)
    ref = runs.get(ref_labels[0]) or runs[ref_labels[1]]
    table = []
    for lab in distinct:
        mine = runs[lab]
        ratios = [a / b for a, b in zip(mine, ref, strict=True) if b > 0]
        table.append({"config": " = ".join(names[lab]), "knobs": knobs_of[lab],
                      "rows_per_s": statistics.median(mine),
                      "vs_autotune": statistics.median(ratios) if ratios else float("nan"),
                      "vs_autotune_min": min(ratios) if ratios else float("nan"),
                      "runs": mine})
    return table


def tune(build: Build, space: dict, *, budget_s: float = 60, seconds: float | None = None,
         rounds: int = 3, progress: bool | None = None) -> TuneResult:
    """Search ``space`` for the knob values of ``build(**knobs)`` with the most rows/s.

    Args:
        build: a function that returns a ``tf.data.Dataset`` from keyword knobs.
        space: ``{knob: [candidate values]}``; include ``tf.data.AUTOTUNE`` among a
            knob's values to compare with it (and let the search pick it).
        budget_s: seconds for the search (about half: one knob at a time from the
            defaults), then the three fastest, AUTOTUNE everywhere and the defaults
            measured again to pick the best, then a separate side-by-side comparison
            (at least 2 rounds, even past the budget) that the table reports. A
            configuration that coincides with another is one row, named by both.
        seconds: how long each measurement runs (default: from the budget, 0.3-2 s).
        rounds: alternating rounds of the final comparison.
        progress: a bar over the configurations measured, the last one's rate beside
            it (:mod:`datakit.core.progress`): ``None`` (default) shows it in a notebook
            or a terminal once tuning lasts a second, ``True`` always, ``False`` never.

    Combinations that tf.data refuses (``cycle_length=1`` with ``num_parallel_calls=2``)
    are skipped and listed in ``result.skipped``. The values of the knobs named in
    :data:`KNOB_RULES` (``batch_size``, ``buffer_size``, ``num_parallel_calls``, ...) are
    checked before anything runs, as the arguments they stand for: a ``batch_size`` of 0
    is refused, naming the knob and the value.

    Raises:
        TypeError: ``build`` is not callable or returns no dataset; a number as text;
        ``rounds`` not an int; ``space`` not a dict of lists; ``progress`` not ``True``,
        ``False`` or ``None``.
        ValueError: a knob that ``build`` does not take, an empty list of values, a
        value its argument cannot take (``batch_size`` 0),
        ``budget_s`` or ``seconds`` not > 0, ``rounds < 1``, or a dataset without elements.
    """
    params = _check_space(build, space)
    check_seconds("budget_s", budget_s, positive=True, func="tune")
    if seconds is not None:
        check_seconds("seconds", seconds, positive=True, func="tune")
    check_count("rounds", rounds, fix="tune() compares at least one round: pass 1 or more")
    check_progress(progress)
    start = time.perf_counter()
    n_configs = sum(len(v) for v in space.values())
    n_table = 2 + sum(AUTOTUNE in v for v in space.values()) + 5
    seconds = seconds or min(2.0, max(0.3, budget_s / (2.5 * (n_configs + rounds * n_table))))
    defaults = _defaults(build, params, space)
    autotune = {k: AUTOTUNE if AUTOTUNE in v else defaults[k] for k, v in space.items()}
    trials: list[dict] = []
    skipped: list[dict] = []
    seen: dict[str, float] = {}

    bar = progress_bar(None, "tune", progress=progress, unit="config")

    def rate(knobs: dict) -> float:
        r = _rate(build, knobs, seconds, skipped, bar)
        if r is None:
            return -1.0
        seen[_label(knobs)] = max(seen.get(_label(knobs), 0.0), r)
        trials.append({"knobs": dict(knobs), "rows_per_s": r})
        return seen[_label(knobs)]

    with bar:
        best = _one_knob_at_a_time(space, dict(defaults), rate, start + 0.5 * budget_s)
        if not trials:
            raise ValueError(f"tune(): tf.data refused every configuration tried: "
                             f"{skipped[:3]}")
        # selection: the three fastest configurations of the search, AUTOTUNE everywhere and
        # the defaults, measured again side by side; the fastest of this round is the result
        best = _selected(build, trials, autotune, defaults, seconds, bar) or best
        # confirmation, apart from the selection: every configuration in rotated order,
        # >= 2 rounds
        table = _confirmation(build, _compared(space, best, autotune, defaults), skipped,
                              seconds, rounds, start + budget_s,
                              (_label(autotune), _label(best)), bar)
    return TuneResult(best, defaults, autotune, table, trials, time.perf_counter() - start,
                      skipped)

