"""Throughput measured as fit() consumes it, and the knob tuner against AUTOTUNE."""

import pytest
import tensorflow as tf

from datakit.perf.synthetic import work
from datakit.perf.throughput import measure
from datakit.perf.tune import tune

AUTOTUNE = tf.data.AUTOTUNE


@pytest.mark.parametrize("call, error", [
    pytest.param(lambda: tune(3, {"x": [1]}), TypeError, id="build-not-callable"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": []}), ValueError, id="no-candidates"),
    pytest.param(lambda: tune(lambda x=1: None, [("x", [1])]), TypeError, id="space-not-dict"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": 1}), TypeError, id="values-not-list"),
    pytest.param(lambda: tune(lambda x=1: None, {}), ValueError, id="empty-space"),
    pytest.param(lambda: tune(lambda x=1: None, {"y": [1]}), ValueError, id="unknown-knob"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": [1]}, budget_s=0), ValueError,
                 id="no-budget"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": [1]}, budget_s=float("nan")), ValueError,
                 id="nan-budget"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": [1]}, seconds=-1), ValueError,
                 id="negative-seconds"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": [1]}, budget_s=2), TypeError,
                 id="build-returns-none"),
    pytest.param(lambda: tune(lambda x=1: tf.data.Dataset.range(0), {"x": [1]}, budget_s=2),
                 ValueError, id="empty-dataset"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": [1]}, rounds=0), ValueError,
                 id="no-rounds"),
    pytest.param(lambda: tune(lambda batch_size=8: None, {"batch_size": [8, 0]}), ValueError,
                 id="batch-size-0"),
    pytest.param(lambda: tune(lambda num_parallel_calls=1: None,
                              {"num_parallel_calls": [None, "2"]}), TypeError,
                 id="text-num-parallel-calls"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": [1]}, rounds="2"), TypeError,
                 id="text-rounds"),
    pytest.param(lambda: measure(tf.data.Dataset.range(3), seconds=float("nan")), ValueError,
                 id="measure-nan-seconds"),
    pytest.param(lambda: measure(tf.data.Dataset.range(3), seconds="1"), TypeError,
                 id="measure-text-seconds"),
])
def test_bad_arguments_are_rejected(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.timeout(120)
def test_tune_returns_a_best_within_the_space_and_a_table_against_autotune():
    def build(num_parallel_calls=None, batch_size=4, prefetch=0):
        ds = tf.data.Dataset.range(400).map(work(0.001), num_parallel_calls=num_parallel_calls)
        ds = ds.batch(batch_size)
        return ds.prefetch(prefetch) if prefetch else ds

    space = {"num_parallel_calls": [None, 2, AUTOTUNE], "batch_size": [4, 16],
             "prefetch": [0, 1, AUTOTUNE]}
    result = tune(build, space, budget_s=8, seconds=0.15, rounds=2)
    tuned = next(r for r in result.table if "doctor-tuned" in r["config"].split(" = "))
    assert tuned["knobs"] == result.best  # the table measures the configuration returned
    assert result.defaults == {"num_parallel_calls": None, "batch_size": 4, "prefetch": 0}
    assert result.autotune == {"num_parallel_calls": AUTOTUNE, "batch_size": 4,
                               "prefetch": AUTOTUNE}
    names = [n for r in result.table for n in r["config"].split(" = ")]
    assert sorted(names) == ["AUTOTUNE everywhere", "defaults", "doctor-tuned",
                             "num_parallel_calls=AUTOTUNE", "prefetch=AUTOTUNE"]
    labels = [tuple(sorted(r["knobs"].items(), key=str)) for r in result.table]
    assert len(set(labels)) == len(labels)  # one row per distinct configuration
    auto = next(r for r in result.table if "AUTOTUNE everywhere" in r["config"].split(" = "))
    assert auto["vs_autotune"] == pytest.approx(1.0)
    assert all(r["rows_per_s"] > 0 and len(r["runs"]) >= 1 for r in result.table)
    assert str(result).count("\n") == len(result.table) + 1


def test_measure_counts_rows_and_stops_at_the_end():
    r = measure(tf.data.Dataset.range(50).batch(10), seconds=5.0)
    assert (r.elements, r.rows, r.exhausted) == (4, 40, True)


def test_combinations_that_tf_data_refuses_are_skipped_and_reported():
    def build(cycle_length=1, num_parallel_calls=None):  # parallel calls > cycle: refused
        files = tf.data.Dataset.range(4)
        return files.interleave(lambda i: tf.data.Dataset.range(20), cycle_length=cycle_length,
                                num_parallel_calls=num_parallel_calls)

    result = tune(build, {"num_parallel_calls": [None, 2]}, budget_s=4, seconds=0.1, rounds=2)
    assert [t["knobs"] for t in result.skipped] == [{"num_parallel_calls": 2}]
    assert "num_parallel_calls" in result.skipped[0]["error"]
    assert result.best == {"num_parallel_calls": None}
    assert [r["knobs"] for r in result.table] == [{"num_parallel_calls": None}]
    assert "skipped (tf.data refused it): num_parallel_calls=2" in str(result)


def test_a_search_space_value_is_refused_before_any_run_naming_knob_and_value():
    built = []

    def build(batch_size=8, buffer_size=1):
        built.append(batch_size)
        return tf.data.Dataset.range(10).batch(batch_size).prefetch(buffer_size)

    with pytest.raises(ValueError, match=r"search space's 'batch_size' holds 0.*batch_size=0 "
                                         r"is invalid.*Remove it from space\['batch_size'\]"):
        tune(build, {"batch_size": [8, 0]}, budget_s=2)
    with pytest.raises(ValueError, match=r"'buffer_size' holds -2"):
        tune(build, {"buffer_size": [tf.data.AUTOTUNE, -2]}, budget_s=2)
    assert built == []   # nothing built, nothing measured
