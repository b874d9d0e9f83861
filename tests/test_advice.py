"""The doctor's advice: applied to copies, measured, elements kept or the change flagged."""

import pytest
import tensorflow as tf

from datakit.doctor import diagnosis
from datakit.doctor.advice import assemble
from datakit.perf.chain import chain_of, kind_of, knob
from datakit.perf.synthetic import work

SLOW = 0.006


def times_two(x):
    return x * 2


@pytest.mark.timeout(180)
def test_advice_parallelizes_the_bottleneck_and_keeps_the_elements():
    ds = tf.data.Dataset.range(120).map(work(SLOW), name="decode").batch(4)
    report = diagnosis.diagnose(ds, step_time=0.001, seconds=0.15, repeats=1)
    changes = {a.change.split(":")[0]: a for a in report.advice if a.stage == "decode"}
    par = changes["parallelize it"]
    assert par.gain is not None and not par.alters  # measured, and the same elements
    decode = [d for d in chain_of(par.dataset) if kind_of(d) == "map"]
    assert [knob(d, "num_parallel_calls") not in (None, 1) for d in decode] == [True]
    assert [b.tolist() for b in par.dataset.as_numpy_iterator()] == [
        b.tolist() for b in ds.as_numpy_iterator()]
    vec = changes["vectorize"]  # the sleep runs once per batch instead of once per element
    assert vec.gain is not None and not vec.alters
    assert any(a.change == "add a final prefetch(1)" for a in report.advice)
    # work() sleeps inside the runtime (tf.data's testing sleep), no Python: nothing to replace
    assert "py_function" not in " ".join(a.change for a in report.advice)
    assert "bottleneck" in str(report)


def test_vectorize_moves_the_batch_before_the_map_with_the_same_elements():
    ds = tf.data.Dataset.range(10).map(times_two).batch(4)
    chain = chain_of(ds)
    copy = assemble(chain[0], [chain[2], chain[1]])
    assert [kind_of(d) for d in chain_of(copy)] == ["range", "batch", "map"]
    assert [b.tolist() for b in copy.as_numpy_iterator()] == [
        b.tolist() for b in ds.as_numpy_iterator()]
