"""Rebuilding a pipeline's chain: the same stages re-applied, some of them changed.

:func:`reapply` applies one stage of a chain (its record, read once by
:func:`datakit.perf.chain.stage_facts`, or the stage itself) to another input, with the
same Python function and knobs, any ``changes`` winning;
:func:`assemble` applies a list of stages and functions in order; a :class:`Candidate`
is one proposed change with the function that builds its copy. The doctor's time
advice (:mod:`datakit.doctor.advice`), its memory advice and the memory holdings
(:mod:`datakit.doctor.holdings`) build their copies of a pipeline with them.

>>> import tensorflow as tf
>>> from datakit.perf.chain import chain_of, stage_facts
>>> ds = tf.data.Dataset.range(6).map(lambda x: x * 2, name="double").batch(4)
>>> stages = stage_facts(chain_of(ds))
>>> [s.kind for s in stages]
['range', 'map', 'batch']
>>> copy = assemble(stages[0].dataset, [lambda inp: inp.map(lambda x: x * 3), stages[2]])
>>> [b.tolist() for b in copy.as_numpy_iterator()]
[[0, 3, 6, 9], [12, 15]]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tensorflow as tf

from datakit.perf.chain import StageFacts, stage_facts

__all__ = ["assemble", "reapply"]


@dataclass(frozen=True)
class Candidate:
    """One change the advice proposes for a stage, and how to build the changed copy."""

    change: str                          # what to do
    alters: str                          # "" if the elements stay the same, else what changes
    make: Callable[[], tf.data.Dataset] | None  # builds the changed copy; None: not buildable
    note: str = ""       # how it is measured (kept in the advice's note)
    fill: bool = False   # drain the original and the copy first, so that a cache is full
    requires: str = ""   # what the change needs of your code: said when it is not measured


def reapply(stage: StageFacts | tf.data.Dataset, inp: tf.data.Dataset,  # noqa: C901 -- one
            **changes: Any) -> tf.data.Dataset:  # branch per stage kind reads best whole
    """Apply ``stage``'s transformation to ``inp``: same function and knobs, ``changes`` win.

    ``stage``: its record (:class:`~datakit.perf.chain.StageFacts`), or the stage itself
    (then read here)."""
    s = stage if isinstance(stage, StageFacts) else stage_facts([stage])[0]
    kind, name = s.kind, s.name
    knobs = {k: changes.get(k, s.knobs[k])
            for k in ("num_parallel_calls", "cycle_length", "block_length", "batch_size",
                      "buffer_size", "count")}
    deterministic = changes.get("deterministic", s.deterministic)
    if kind == "map":
        return inp.map(s.function, num_parallel_calls=knobs["num_parallel_calls"],
                       deterministic=deterministic, name=name)
    if kind == "interleave":
        return inp.interleave(s.function, cycle_length=knobs["cycle_length"],
                              block_length=knobs["block_length"],
                              num_parallel_calls=knobs["num_parallel_calls"],
                              deterministic=deterministic, name=name)
    if kind in ("filter", "flat_map"):
        return getattr(inp, kind)(s.function, name=name)
    if kind == "batch":
        return inp.batch(knobs["batch_size"], drop_remainder=s.drop_remainder,
                         num_parallel_calls=knobs["num_parallel_calls"], name=name)
    if kind == "prefetch":
        return inp.prefetch(knobs["buffer_size"], name=name)
    if kind == "cache":
        return inp.cache(s.filename, name=name)
    if kind == "shuffle":  # same buffer; the seed is not recoverable, so the order differs
        return inp.shuffle(knobs["buffer_size"], seed=changes.get("seed"),
                           reshuffle_each_iteration=s.reshuffle, name=name)
    if kind in ("repeat", "take", "skip"):
        count = knobs["count"]
        return getattr(inp, kind)(None if kind == "repeat" and count == -1 else count, name=name)
    if kind == "unbatch":
        return inp.unbatch(name=name)
    if kind == "assert_cardinality":  # the count may change with the copy: leave it out
        return inp
    raise NotImplementedError(f"cannot rebuild a {kind} stage")


def assemble(base: tf.data.Dataset, steps: list) -> tf.data.Dataset:
    """``base`` with ``steps`` applied in order: each a stage of a chain, as its record or
    itself (re-applied as it was built, :func:`reapply`), or a function ``inp -> dataset``
    (a changed or new stage)."""
    ds = base
    for step in steps:
        ds = step(ds) if callable(step) and not isinstance(step, tf.data.Dataset) \
            else reapply(step, ds)
    return ds
