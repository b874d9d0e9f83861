"""Timing the prefixes of a chain: in groups, with the loop's own time taken out, and fans.

The doctor (:mod:`datakit.doctor.diagnosis`) times each prefix of a pipeline's
chain with the runtime's hidden help off. :func:`time_run` runs one prefix in groups
of :func:`group_size` elements (so the measuring loop's hand-off is paid once per
group); :func:`overhead` is that loop's own time per element, subtracted from a
prefix's; :func:`fan` is how many output elements a stage makes per input element
(counted on whole epochs, known from the kind or cardinality, or sampled).

>>> import tensorflow as tf
>>> from datakit.perf.chain import chain_of, stage_facts
>>> stages = stage_facts(chain_of(tf.data.Dataset.range(64).batch(8)))
>>> runs = [time_run(s.dataset, 0.2, 1) for s in stages]
>>> fan(stages[1], runs, 1, 0.2)
(0.125, True)
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from datakit.perf.chain import StageFacts
from datakit.perf.synthetic import serial
from datakit.perf.throughput import Run, measure

__all__: list[str] = []  # overhead() is shared inside the doctor, not taught


#: Largest group: each prefix is timed in groups of elements (``prefix.batch(group)``), so
#: that the measuring loop's hand-off per element (~100 us here, more than many stages) is
#: paid once per group, as a later ``batch`` would pay it. The group is sized from a short
#: probe to last about ``seconds / 8``; elements that cannot be grouped go one by one.
MAX_GROUP = 256
_OVERHEAD: dict[tuple, float] = {}


def group_size(dataset: tf.data.Dataset, seconds: float) -> int:
    """How many elements of ``dataset`` to time as one group (from a short probe)."""
    probe = measure(serial(dataset), seconds / 4)
    if not probe.elements:
        return 1
    return int(min(MAX_GROUP, max(1, seconds / 8 / (probe.seconds / probe.elements))))


def time_run(dataset: tf.data.Dataset, seconds: float, group: int) -> Run:
    """One run of ``dataset`` with the runtime's help off, counted in its own elements.

    A dataset known to hold no more than one group (its cardinality) goes one by one at
    once: grouped, it would give one element, too few to time, and be run again."""
    known = int(dataset.cardinality())
    if group > 1 and not 0 <= known <= group:
        try:
            r = measure(serial(dataset.batch(group)), seconds)
            if r.elements:  # else too short to group: one by one
                return Run(r.rows, r.rows, r.seconds, r.first_s, r.exhausted, r.total_rows,
                           r.total_rows)
        except (tf.errors.InvalidArgumentError, ValueError, TypeError):  # shapes differ
            pass
    return measure(serial(dataset), seconds)


def overhead(spec: Any, seconds: float = 0.3, group: int = 1) -> float:
    """Seconds per element that the measuring loop itself takes for elements shaped like ``spec``.

    Timed on an element of zeros repeated (in groups of ``group``), and subtracted
    from a prefix's time, so that a prefix of many small elements is not charged
    for the loop.
    """
    key = (repr(spec), group)
    if key not in _OVERHEAD:
        def zeros(s: tf.TensorSpec) -> tf.Tensor:
            shape = [d if d is not None else 1 for d in s.shape] if s.shape.rank is not None else []
            return tf.fill(shape, tf.constant("" if s.dtype == tf.string else 0, s.dtype))
        try:
            element = tf.nest.map_structure(zeros, spec)
        except (TypeError, ValueError, AttributeError):  # ragged, sparse, nested datasets...
            return 0.0
        run = time_run(tf.data.Dataset.from_tensors(element).repeat(), seconds, group)
        _OVERHEAD[key] = 1 / run.elements_per_s if run.elements else 0.0
    return _OVERHEAD[key]


def _sample_fan(stage: StageFacts, runs: list[Run], k: int, seconds: float) -> float | None:
    """Output elements per input element of an interleave, flat_map or filter, on a sample.

    The stage is re-applied to the first few elements of its input (2 files
    for a reader, 256 elements for a filter) and its output counted.
    """
    kind, fn = stage.kind, stage.function
    if fn is None or kind not in ("interleave", "flat_map", "filter"):
        return None
    m = 256 if kind == "filter" else 2
    if runs[k - 1].exhausted:
        m = min(m, runs[k - 1].count)
    if m < 1:
        return None
    upstream = stage.upstream
    assert upstream is not None  # stage k >= 1 has an input
    inp = upstream.take(m)
    if kind == "interleave":
        cycle = stage.knobs["cycle_length"]
        sample = inp.interleave(fn, cycle_length=cycle if cycle and cycle > 0 else None,
                                block_length=stage.knobs["block_length"])
    else:
        sample = getattr(inp, kind)(fn)
    run = measure(serial(sample), 10 * seconds)
    return run.count / m if run.exhausted else None


def fan(stage: StageFacts, runs: list[Run], k: int, seconds: float) -> tuple[float, bool]:
    """Output elements per input element of stage ``k`` (its record,
    :func:`datakit.perf.chain.stage_facts`), and whether it was counted exactly."""
    kind, upstream = stage.kind, stage.upstream
    assert upstream is not None  # stage k >= 1 has an input
    if runs[k].exhausted and runs[k - 1].exhausted and runs[k - 1].count:
        return runs[k].count / runs[k - 1].count, True
    if stage.one_to_one:
        return 1.0, True
    if kind == "batch" and (size := stage.knobs["batch_size"]):
        return 1.0 / size, True
    if kind == "unbatch":
        dims = [s.shape[0] for s in tf.nest.flatten(upstream.element_spec)
                if getattr(s, "shape", None) is not None and s.shape.rank]
        if dims and dims[0] is not None:
            return float(dims[0]), True
    a, b = int(upstream.cardinality()), stage.cardinality
    if a > 0 and b > 0:
        return b / a, True
    sampled = _sample_fan(stage, runs, k, seconds)
    return (sampled, False) if sampled else (1.0, False)
