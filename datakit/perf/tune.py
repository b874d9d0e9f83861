"""Measure a pipeline's throughput as ``fit()`` consumes it, and tune its knobs by measuring.

:func:`measure` drains a dataset inside a ``tf.function`` (as Keras ``fit()``
does: no Python loop per batch, which at batch 32 costs more than a fast
reader) and times it from the first element to the last one taken.
:func:`tune` searches knob values of a pipeline you build from keyword
arguments by measuring real throughput, and compares the best it found with
AUTOTUNE (everywhere, and knob by knob) and with your defaults, side by side.
On 2 shared cores AUTOTUNE often loses (with TF 2.21, ``map(num_parallel_calls=AUTOTUNE)``
ran the per-line CSV chain 1.5-2x slower than the same chain without it): measure.

>>> import tensorflow as tf
>>> def build(num_parallel_calls=None, batch_size=8):
...     ds = tf.data.Dataset.range(2000).map(lambda x: x * 2, num_parallel_calls=num_parallel_calls)
...     return ds.batch(batch_size)
>>> result = tune(build, {"num_parallel_calls": [None, tf.data.AUTOTUNE], "batch_size": [8, 64]},
...               budget_s=6)
>>> result.best["batch_size"] in (8, 64), [row["config"] for row in result.table]
(True, ['doctor-tuned', 'AUTOTUNE everywhere', 'num_parallel_calls=AUTOTUNE', 'defaults'])
>>> tune(build, {"cycle_length": [1, 2]})
Traceback (most recent call last):
...
ValueError: tune(): build() has no argument 'cycle_length' (it takes num_parallel_calls, batch_size)
"""

from __future__ import annotations

import inspect
import logging
import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE


# -- measuring ------------------------------------------------------------------------------


def _summary(x):
    """(rows, a value to sum) of one element: its first tensor's leading dimension and sum."""
    comps = [c for c in tf.nest.flatten(x) if isinstance(c, tf.Tensor)]
    if not comps:
        return tf.constant(1, tf.int64), tf.constant(0.0, tf.float64)
    c = comps[0]
    rows = tf.concat([tf.shape(c, out_type=tf.int64), [1]], 0)[0]  # 1 for a scalar
    if c.dtype == tf.string:
        c = tf.strings.length(c)
    elif not (c.dtype.is_numpy_compatible and (c.dtype.is_bool or c.dtype.is_integer
                                               or c.dtype.is_floating)):
        return rows, tf.constant(0.0, tf.float64)
    return rows, tf.reduce_sum(tf.cast(c, tf.float64))


@dataclass
class Run:
    """One timed run: elements and rows after the first element, and how long they took."""

    elements: int
    rows: int
    seconds: float
    first_s: float      # to the first element (start-up, shuffle buffer filling...)
    exhausted: bool     # the dataset ended before the time ran out
    count: int = 0      # every element taken, the first one included
    total_rows: int = 0  # their rows, the first element's included

    @property
    def elements_per_s(self) -> float:
        return self.elements / self.seconds if self.seconds > 0 else float("nan")

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else float("nan")


def _drainer(dataset, seconds: float, limit: int):
    """A ``tf.function`` that drains ``dataset`` for about ``seconds`` (a new iterator per call)."""
    def drain():
        it = iter(dataset)
        t0 = tf.timestamp()
        zero = tf.constant(0, tf.int64)

        def cond(n, rows, first_rows, acc, t1, t2, more):
            return more & (n < limit) & ((n < 2) | (t2 - t1 < seconds))

        def body(n, rows, first_rows, acc, t1, t2, more):
            opt = it.get_next_as_optional()

            def take():
                r, v = _summary(opt.get_value())
                now = tf.timestamp()
                first = tf.equal(n, 0)
                return (n + 1, tf.where(first, rows, rows + r), tf.where(first, r, first_rows),
                        acc + v, tf.where(first, now, t1), now)

            out = tf.cond(opt.has_value(), take,
                          lambda: (n, rows, first_rows, acc, t1, t2))
            return (*out, opt.has_value())

        n, rows, first_rows, acc, t1, t2, more = tf.while_loop(
            cond, body, (zero, zero, zero, tf.constant(0.0, tf.float64), t0, t0,
                         tf.constant(True)))
        return n, rows, first_rows, acc, t0, t1, t2, more

    return tf.function(drain)


class _NoRetracingWarning(logging.Filter):
    """Drop TensorFlow's "triggered tf.function retracing" warning: each call of
    :func:`measure` traces a new drain for a new pipeline, as intended."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "triggered tf.function retracing" not in record.getMessage()


@contextmanager
def _expected_tracing():
    log, quiet = tf.get_logger(), _NoRetracingWarning()
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def measure(dataset, seconds: float = 0.5, *, repeats: int = 1, limit: int = 2**62) -> Run:
    """Drain ``dataset`` inside a ``tf.function`` (as ``fit()`` consumes) for about ``seconds``.

    Timed from the first element to the last one taken (not to teardown);
    each element's first tensor is summed so nothing is optimized away.
    With ``repeats > 1``, the fastest run counts (on a shared machine the
    minimum time is the signal).

    >>> r = measure(tf.data.Dataset.range(100).batch(10), seconds=1.0)
    >>> r.elements, r.rows, r.exhausted
    (9, 90, True)
    """
    fn = _drainer(dataset, seconds, limit)
    runs = []
    for _ in range(repeats):
        with _expected_tracing():
            out = fn()
        n, rows, first_rows, _, t0, t1, t2, more = (v.numpy() for v in out)
        runs.append(Run(max(int(n) - 1, 0), int(rows), float(t2 - t1), float(t1 - t0),
                        not bool(more), int(n), int(rows + first_rows)))
    return max(runs, key=lambda r: r.elements_per_s if r.elements else -1.0)


def consumer_wait(dataset, step_time: float, seconds: float) -> float:
    """Fraction of a Python consumer's time spent waiting for elements, at ``step_time`` each."""
    waited = total = 0.0
    start = time.perf_counter()
    it = iter(dataset)
    for k in range(10**9):
        t = time.perf_counter()
        try:
            next(it)
        except StopIteration:
            break
        if k:  # the first element is start-up
            waited += time.perf_counter() - t
        if step_time:
            time.sleep(step_time)
        if k:
            total += time.perf_counter() - t
        if time.perf_counter() - start > seconds and k > 2:
            break
    return waited / total if total else 1.0


# -- tuning -------------------------------------------------------------------------------


def _show(v) -> str:
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

    def __str__(self) -> str:
        lines = ["| configuration | knobs | rows/s (median) "
                 "| × AUTOTUNE everywhere, median (min) |",
                 "|---|---|--:|--:|"]
        for r in self.table:
            lines.append(f"| {r['config']} | {_label(r['knobs'])} | {r['rows_per_s']:,.0f} | "
                         f"{r['vs_autotune']:.2f} ({r['vs_autotune_min']:.2f}) |")
        return "\n".join(lines)


def _check_space(build, space: dict) -> list[str]:
    if not callable(build):
        raise TypeError(f"tune() takes a function that builds the pipeline, got "
                        f"{type(build).__name__}")
    if not isinstance(space, dict) or not space:
        raise ValueError("tune(): space must be a non-empty dict {knob: [candidate values]}")
    params = inspect.signature(build).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for knob, values in space.items():
        if not takes_any and knob not in params:
            raise ValueError(f"tune(): build() has no argument {knob!r} (it takes "
                             f"{', '.join(params)})")
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"tune(): space[{knob!r}] must be a non-empty list of values")
    return list(params)


def tune(build, space: dict, *, budget_s: float = 60, seconds: float | None = None,
         rounds: int = 3, progress: bool | None = None) -> TuneResult:
    """Search ``space`` for the knob values of ``build(**knobs)`` with the most rows/s.

    Args:
        build: a function that returns a ``tf.data.Dataset`` from keyword knobs.
        space: ``{knob: [candidate values]}``; include ``tf.data.AUTOTUNE`` among a
            knob's values to compare with it (and let the search pick it).
        budget_s: seconds for the search (about half: one knob at a time from the
            defaults), then the three fastest, AUTOTUNE everywhere and the defaults
            measured again to pick the best, then a separate side-by-side comparison
            (at least 2 rounds, even past the budget) that the table reports.
        seconds: how long each measurement runs (default: from the budget, 0.3-2 s).
        rounds: alternating rounds of the final comparison.
        progress: print one line per trial (None or False: quiet).

    Raises:
        TypeError: ``build`` is not callable. ValueError: a knob that ``build``
        does not take, an empty list of values, or ``budget_s <= 0``.
    """
    params = _check_space(build, space)
    if not budget_s > 0 or rounds < 1:
        raise ValueError(f"tune(): budget_s={budget_s} and rounds={rounds}: pass budget_s > 0 "
                         "and rounds >= 1")
    start = time.perf_counter()
    n_configs = sum(len(v) for v in space.values())
    n_table = 2 + sum(AUTOTUNE in v for v in space.values()) + 5
    seconds = seconds or min(2.0, max(0.3, budget_s / (2.5 * (n_configs + rounds * n_table))))
    sig = inspect.signature(build).parameters
    defaults = {k: sig[k].default if k in params and sig[k].default is not inspect.Parameter.empty
                else v[0] for k, v in space.items()}
    autotune = {k: AUTOTUNE if AUTOTUNE in v else defaults[k] for k, v in space.items()}
    trials: list[dict] = []
    seen: dict[tuple, float] = {}

    def rate(knobs: dict) -> float:
        r = measure(build(**knobs), seconds).rows_per_s
        key = tuple(sorted((k, repr(v)) for k, v in knobs.items()))
        seen[key] = max(seen.get(key, 0.0), r)
        trials.append({"knobs": dict(knobs), "rows_per_s": r})
        if progress:
            print(f"{_label(knobs)}: {r:,.0f} rows/s", flush=True)
        return seen[key]

    best, best_rate = dict(defaults), rate(defaults)
    search_until = start + 0.5 * budget_s
    for _ in range(3):  # passes over the knobs, while the budget lasts
        changed = False
        for knob, values in space.items():
            for v in values:
                if time.perf_counter() > search_until:
                    break
                if v == best[knob] and type(v) is type(best[knob]):
                    continue
                r = rate({**best, knob: v})
                if r > best_rate:
                    best, best_rate, changed = {**best, knob: v}, r, True
        if not changed or time.perf_counter() > search_until:
            break

    # selection: the three fastest configurations of the search, AUTOTUNE everywhere and the
    # defaults, measured again side by side; the fastest of this round is the result
    top, labels = [], set()
    ranked = [t["knobs"] for t in sorted(trials, key=lambda t: -t["rows_per_s"])]
    for knobs in ranked[:3] + [autotune, defaults]:
        if _label(knobs) not in labels:
            labels.add(_label(knobs))
            top.append(knobs)
    if len(top) > 1:
        again = [measure(build(**knobs), seconds).rows_per_s for knobs in top]
        best = top[max(range(len(again)), key=again.__getitem__)]

    # confirmation, apart from the selection: every configuration in rotated order, >= 2 rounds
    configs = {"doctor-tuned": best, "AUTOTUNE everywhere": autotune}
    for knob, values in space.items():
        if AUTOTUNE in values:
            configs[f"{knob}=AUTOTUNE"] = {**best, knob: AUTOTUNE}
    configs["defaults"] = defaults
    distinct = list(dict.fromkeys(_label(k) for k in configs.values()))
    knobs_of = {_label(k): k for k in configs.values()}
    runs: dict[str, list[float]] = {lab: [] for lab in distinct}
    for r in range(rounds):
        if r >= 2 and time.perf_counter() > start + budget_s:
            break
        for lab in distinct[r % len(distinct):] + distinct[:r % len(distinct)]:
            runs[lab].append(measure(build(**knobs_of[lab]), seconds).rows_per_s)
    ref = runs[_label(autotune)]
    table = []
    for name, knobs in configs.items():
        mine = runs[_label(knobs)]
        ratios = [a / b for a, b in zip(mine, ref) if b > 0]
        table.append({"config": name, "knobs": knobs, "rows_per_s": statistics.median(mine),
                      "vs_autotune": statistics.median(ratios) if ratios else float("nan"),
                      "vs_autotune_min": min(ratios) if ratios else float("nan"),
                      "runs": mine})
    return TuneResult(best, defaults, autotune, table, trials, time.perf_counter() - start)


__all__ = ["AUTOTUNE", "Run", "TuneResult", "consumer_wait", "measure", "tune"]
