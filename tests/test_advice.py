"""The doctor's advice: applied to copies, measured, elements kept or the change flagged."""

import pytest
import tensorflow as tf

from datakit.doctor import diagnosis
from datakit.doctor.rebuild import assemble
from datakit.perf.chain import chain_of, kind_of, knob, stage_facts
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
    tried = report.advice + report.not_advised  # a final prefetch can measure within noise
    assert any(a.change == "add a final prefetch(1)" for a in tried)
    assert all(a.gain is None or a.gain >= 1 for a in report.advice)
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


def _changes(ds, k):
    from datakit.doctor.advice import SPEED_RULES
    stages = stage_facts(chain_of(ds))
    return [c.change for rule in SPEED_RULES for c in rule(stages, k)]


def test_no_cache_is_proposed_where_a_later_stage_caches_already():
    # "add cache() right after range" was proposed on a pipeline that caches one stage later
    ds = tf.data.Dataset.range(50).map(times_two, name="double").cache().batch(5)
    assert not [c for c in _changes(ds, 0) if "cache" in c]
    assert not [c for c in _changes(ds, 1) if "cache" in c]
    without = tf.data.Dataset.range(50).map(times_two).batch(5)
    assert any(c.startswith("add cache()") for c in _changes(without, 1))


def test_parallel_reading_is_not_proposed_to_an_interleave_that_reads_in_parallel():
    from datakit.core.cores import cpu_cores
    par = min(2, cpu_cores())
    files = tf.data.Dataset.range(4)
    read = files.interleave(lambda i: tf.data.Dataset.range(i), cycle_length=2,
                            num_parallel_calls=par)
    assert not [c for c in _changes(read, 1) if c.startswith("read in parallel")]
    serial = files.interleave(lambda i: tf.data.Dataset.range(i), cycle_length=2)
    assert [c for c in _changes(serial, 1) if c.startswith("read in parallel")]


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_no_advice_reads_or_maps_in_parallel_with_one_call(monkeypatch, cores):
    # notebook 06's doctor advised "read in parallel: interleave(..., num_parallel_calls=1)"
    # to an interleave of cycle_length=1: parallel with one call is no change at all
    from datakit.doctor import advice
    monkeypatch.setattr(advice, "_CORES", cores)
    files = tf.data.Dataset.range(2)
    one = files.interleave(lambda i: tf.data.Dataset.range(5), cycle_length=1).map(times_two)
    changes = _changes(one, 1) + _changes(one, 2)
    assert not [c for c in changes if "num_parallel_calls=1" in c or "read 1 in" in c], changes
    raise_it = [c for c in _changes(one, 1) if c.startswith("raise cycle_length to 2")]
    wider = " and read 2 in parallel" if cores >= 2 else ""
    assert raise_it == ["raise cycle_length to 2" + wider]
    parallel = [c for c in changes if "parallel" in c]
    assert bool(parallel) == (cores >= 2), changes  # offered wherever it can mean >= 2 calls


def test_the_final_prefetch_advice_names_the_last_stage_as_the_learner_named_it():
    ds = tf.data.Dataset.range(6).map(times_two, name="parse")
    report = diagnosis.diagnose(ds, seconds=0.05, repeats=1)
    tried = report.advice + report.not_advised
    assert [a.stage for a in tried if a.change == "add a final prefetch(1)"] == ["parse (the end)"]


def test_a_change_measured_slower_is_listed_apart_as_not_advised():
    from datakit.doctor.advice import Advice
    ds = tf.data.Dataset.range(8).map(times_two).batch(4)
    report = diagnosis.diagnose(ds, seconds=0.05, repeats=1, advise=False)
    slower = Advice("map #1", "parallelize it", gain=0.41)
    assert not slower.advised and Advice("map #1", "x", gain=1.3).advised
    assert Advice("map #1", "replace it").advised  # not measurable: still proposed
    report.not_advised = [slower]
    text = str(report)
    assert "measured slower, so not advised:\n  - map #1: parallelize it: 0.41x" in text


def test_a_cost_below_zero_is_shown_as_zero_with_what_it_means():
    stages = [diagnosis.Stage(0, "range #0", "range", "", 1.0, 1e5, 1e-5, 1e-5),
              diagnosis.Stage(1, "shuffle #1", "shuffle", "buffer_size=4", 1.0, 1e5, 9e-6,
                              -444e-6),
              diagnosis.Stage(2, "cache #2", "cache", "filled", 1.0, 1e5, 9e-6, -1e-6)]
    report = diagnosis.Report(stages, stages[0], None, 1e5, 0.0, 0.0)
    lines = str(report).splitlines()
    assert "-444" not in lines[2].split("buffer_size")[0]  # the cost column
    assert " 0 us" in lines[2] and "measured -444 us (timing noise" in lines[2]
    assert "measured -1 us (what reading from it saves, or timing noise)" in lines[3]


def scalar_only(x):
    # refuses a batch (the vectorized copy cannot be built); costly enough to be the bottleneck
    busy = tf.reduce_sum(tf.sin(tf.range(200_000, dtype=tf.float32)))
    return tf.reshape(x, []) * 2 + tf.cast(busy * 0, tf.int64)


def test_a_change_whose_copy_raised_is_listed_apart_from_the_advice():
    ds = tf.data.Dataset.range(40).map(scalar_only, name="scalar").batch(4)
    # the map must come out as the bottleneck or runner-up for its advice to be tried: two runs
    # of 0.2 s per prefix, the fastest counting, so a busy machine cannot hide it (one run of
    # 0.05 s did, once, in a full suite on 2 loaded cores)
    report = diagnosis.diagnose(ds, seconds=0.2, repeats=2)
    failed = [a for a in report.failed if a.change.startswith("vectorize")]
    assert failed and failed[0].error and not failed[0].advised, str(report)
    assert not [a for a in report.advice + report.not_advised if a.change.startswith("vectorize")]
    assert "could not be measured (the copy raised), so not advised:\n  - scalar: vectorize" \
        in str(report)
    assert "raised " in str(failed[0])


@pytest.mark.parametrize("flag", ["advise", "memory"])
def test_a_yes_no_switch_of_the_diagnosis_takes_only_a_bool(flag):
    ds = tf.data.Dataset.range(8)
    with pytest.raises(TypeError, match=f"{flag} must be True or False, got 'no'"):
        diagnosis.diagnose(ds, seconds=0.05, **{flag: "no"})


def test_the_stage_record_reads_kind_name_and_knobs_once():
    ds = tf.data.Dataset.range(8).map(times_two, num_parallel_calls=2, name="double") \
        .cache().batch(4)
    facts = stage_facts(chain_of(ds))
    assert [(f.label, f.kind) for f in facts] == [("range #0", "range"), ("double", "map"),
                                                  ("cache #2", "cache"), ("batch #3", "batch")]
    assert facts[1].knobs["num_parallel_calls"] == 2 and facts[1].detail == \
        "num_parallel_calls=2"
    assert facts[3].knobs["batch_size"] == 4 and facts[2].filename == ""
    assert [f.cardinality for f in facts] == [8, 8, 8, 2]


def test_a_fill_drains_the_original_only_when_it_needs_one():
    """compare(fill=...) drains the copy, and the original unless fill_original=False (what
    advise() passes once the original's caches were drained, or when it has none): epochs
    counted by a Python side effect of the original's map."""
    from datakit.doctor.advice import compare

    made = []

    def count(x):
        made.append(int(x))
        return x

    original = tf.data.Dataset.range(20).map(lambda x: tf.py_function(count, [x], tf.int64))
    copy = tf.data.Dataset.range(20).cache()
    for fill_original, epochs in ((True, 2), (False, 1)):  # the fill's drain, then one round
        made.clear()
        compare(original, copy, seconds=5.0, rounds=1, rows=False, fill=5.0,
                fill_original=fill_original)
        assert sorted(made) == sorted(list(range(20)) * epochs)
