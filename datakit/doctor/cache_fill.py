"""How many elements a loop must take before every in-memory ``cache()`` of a chain is full.

An in-memory cache holds nothing at first and the whole of its input once its first
pass ends: a memory report that stops after a second or two measures a cache of
300 MB at a few MB. :func:`fill_target` counts, for each in-memory cache, the elements
that the end of the chain delivers for one pass of the cache's input (the stages after
it rebuilt without their ``repeat``, so that TensorFlow's cardinality counts one pass),
plus one: the element that asks the cache for more, when it learns that its input ended.

>>> import tensorflow as tf
>>> from datakit.perf.chain import chain_of, stage_facts
>>> def stages(ds):
...     return stage_facts(chain_of(ds))
>>> ds = tf.data.Dataset.range(30).cache(name="memo").repeat().batch(4)
>>> fill_target(stages(ds), {}, seconds=1.0, patience=5.0)
(9, ['memo'])
>>> fill_target(stages(tf.data.Dataset.range(30).batch(4)), {}, seconds=1.0, patience=5.0)
(0, [])
"""

from __future__ import annotations

import tensorflow as tf

from datakit.doctor.deadline import BoundedRun, stage_label
from datakit.doctor.holdings import epoch_count
from datakit.doctor.rebuild import assemble
from datakit.perf.chain import StageFacts

__all__: list[str] = []


def in_memory_caches(chain: list[StageFacts]) -> list[int]:
    """Indices of the chain's ``cache()`` stages without a file name."""
    return [k for k, s in enumerate(chain) if s.kind == "cache" and not s.filename]


def _one_pass(chain: list[StageFacts], k: int, n: int) -> int | None:
    """Elements the chain's end delivers while cache ``k`` reads its ``n`` inputs once."""
    rest = [s for s in chain[k + 1:] if s.kind != "repeat"]
    try:
        tail = assemble(chain[k].dataset.apply(tf.data.experimental.assert_cardinality(n)), rest)
    except (NotImplementedError, TypeError, ValueError):
        return None
    got = int(tail.cardinality())
    return got if got >= 0 else None


def fill_target(chain: list[StageFacts], counted: dict, *, seconds: float, patience: float
                ) -> tuple[int | None, list[str]]:
    """``(elements to take, the caches' labels)``: 0 and [] without an in-memory cache of an
    input that ends; None when the stages after a cache leave the count unknown (a
    ``filter``). ``chain``: its stage records (:func:`datakit.perf.chain.stage_facts`);
    ``counted``: epochs counted already (:func:`~datakit.doctor.holdings.
    epoch_count`), by ``id`` of the dataset."""
    target: int | None = 0
    labels = []
    for k in in_memory_caches(chain):
        n = epoch_count(chain[k].upstream, seconds, patience, counted)
        if n is None:
            continue  # an endless input: the cache grows without bound, it never fills
        labels.append(stage_label(chain, k))
        one = _one_pass(chain, k, int(n))
        target = None if one is None or target is None else max(target, one + 1)
    return target, labels


def fill_note(target: int | None, labels: list[str], run: BoundedRun, budget: float) -> str:
    """What the report says of its caches after ``run``
    (a :class:`~datakit.doctor.deadline.BoundedRun`) that aimed at ``target`` elements."""
    if not labels:
        return ""
    caches = ", ".join(repr(x) for x in labels)
    if target is None:
        return (f"in-memory cache {caches}: the stages after it hide how many elements fill "
                f"it; the run took {run.count} (it may not be full)")
    if run.ended or run.count >= target:
        return f"in-memory cache {caches}: filled (the run took {run.count} elements)"
    return (f"in-memory cache {caches}: NOT full, the run took {run.count} of the {target} "
            f"elements that fill it in the budget of {budget:g} s; its growth is measured "
            "part-filled: pass a longer budget=")
