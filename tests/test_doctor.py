"""The doctor names the slow stage it was not told about; advice and tuning run on copies.

Planted costs are sleeps (``synthetic.work``: a sleep holds a thread, not a
core) at least ~10x every other stage's, so the answer does not depend on a
busy shared machine. No test asserts a time, only which stage was named.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from datakit import doctor  # noqa: E402
from datakit.advice import assemble  # noqa: E402
from datakit.synthetic import synthetic_files, work  # noqa: E402
from datakit.tune import AUTOTUNE, measure, tune  # noqa: E402

SLOW = 0.006  # seconds per element of a planted stage; light stages cost ~25-100 us


def plus_one(x):
    return x + 1


def times_two(x):
    return x * 2


def heavy_map_among_light():
    ds = tf.data.Dataset.range(200).map(plus_one).map(times_two, name="scale")
    return ds.map(work(SLOW), name="decode").map(plus_one).batch(8)


def heavy_interleave_body():
    def read(f):
        return tf.data.Dataset.range(40).map(work(SLOW))
    ds = tf.data.Dataset.range(6).interleave(read, cycle_length=2, name="read_files")
    return ds.map(plus_one).batch(8).map(times_two)


def heavy_work_after_batch():
    ds = tf.data.Dataset.range(800).map(plus_one).map(times_two).batch(16)
    return ds.map(work(16 * SLOW), name="augment").prefetch(1)


def slow_reader():
    ds = synthetic_files(4, 50, open_time=0.0, read_time=SLOW)
    return ds.map(lambda i, trace: i + 1).map(times_two).batch(10)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("build, expected", [
    pytest.param(heavy_map_among_light, "decode", id="heavy-map-among-light"),
    pytest.param(heavy_interleave_body, "read_files", id="heavy-interleave-body"),
    pytest.param(heavy_work_after_batch, "augment", id="heavy-work-after-batch"),
    pytest.param(slow_reader, "interleave #1", id="slow-reader"),
])
def test_diagnose_names_the_planted_slow_stage(build, expected):
    report = doctor.diagnose(build(), seconds=0.15, repeats=3, advise=False)
    assert report.bottleneck.name == expected, str(report)
    assert report.bottleneck.cost_s == max(s.cost_s for s in report.stages)
    assert report.stages[-1].per_output == pytest.approx(1.0)


def test_the_chain_is_recovered_with_names_kinds_and_knobs():
    ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0]).map(times_two, num_parallel_calls=2,
                                                             name="double")
    ds = ds.cache().shuffle(4, seed=1).batch(2).prefetch(1).with_options(tf.data.Options())
    chain = doctor.chain_of(ds)
    assert [doctor.kind_of(d) for d in chain] == [
        "from_tensor_slices", "map", "cache", "shuffle", "batch", "prefetch"]
    assert chain[1]._name == "double" and doctor.function_of(chain[1]) is times_two
    assert doctor.describe(chain[1]) == "num_parallel_calls=2"
    assert doctor.describe(chain[4]) == "batch_size=2"


def test_py_function_is_spotted():
    ds = tf.data.Dataset.range(3).map(work(0.0)).map(plus_one)
    chain = doctor.chain_of(ds)
    assert [doctor.uses_py_function(d) for d in chain] == [False, True, False]


def test_per_output_counts_batches_and_filters():
    ds = tf.data.Dataset.range(64).filter(lambda x: x % 2 == 0).batch(8)
    report = doctor.diagnose(ds, seconds=0.5, repeats=1, advise=False)
    assert [round(s.per_output) for s in report.stages] == [16, 8, 1]
    assert all(s.exact for s in report.stages)


@pytest.mark.timeout(180)
def test_advice_parallelizes_the_bottleneck_and_keeps_the_elements():
    ds = tf.data.Dataset.range(120).map(work(SLOW), name="decode").batch(4)
    report = doctor.diagnose(ds, step_time=0.001, seconds=0.15, repeats=1)
    changes = {a.change.split(":")[0]: a for a in report.advice if a.stage == "decode"}
    par = changes["parallelize it"]
    assert par.gain is not None and par.gain > 0 and not par.alters
    assert [b.tolist() for b in par.dataset.as_numpy_iterator()] == [
        b.tolist() for b in ds.as_numpy_iterator()]
    vec = changes["vectorize"]  # the sleep runs once per batch instead of once per element
    assert vec.gain is not None and not vec.alters
    assert any(a.change == "add a final prefetch(1)" for a in report.advice)
    assert "py_function" in " ".join(a.change for a in report.advice)
    assert "bottleneck" in str(report)


def test_vectorize_moves_the_batch_before_the_map_with_the_same_elements():
    ds = tf.data.Dataset.range(10).map(times_two).batch(4)
    chain = doctor.chain_of(ds)
    copy = assemble(chain[0], [chain[2], chain[1]])
    assert [doctor.kind_of(d) for d in doctor.chain_of(copy)] == ["range", "batch", "map"]
    assert [b.tolist() for b in copy.as_numpy_iterator()] == [
        b.tolist() for b in ds.as_numpy_iterator()]


def test_plot_report_draws_one_bar_per_stage():
    report = doctor.diagnose(tf.data.Dataset.range(20).map(plus_one).batch(5), seconds=0.1,
                             repeats=1, advise=False)
    fig, ax = plt.subplots()
    assert doctor.plot_report(report, ax=ax) is ax
    assert len(ax.patches) == 3 and ax.get_title() and ax.get_xlabel()
    plt.close(fig)


@pytest.mark.parametrize("call, error", [
    pytest.param(lambda: doctor.diagnose([1, 2]), TypeError, id="not-a-dataset"),
    pytest.param(lambda: doctor.diagnose(tf.data.Dataset.range(3), step_time=-1), ValueError,
                 id="negative-step-time"),
    pytest.param(lambda: tune(3, {"x": [1]}), TypeError, id="build-not-callable"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": []}), ValueError, id="no-candidates"),
    pytest.param(lambda: tune(lambda x=1: None, {"y": [1]}), ValueError, id="unknown-knob"),
    pytest.param(lambda: tune(lambda x=1: None, {"x": [1]}, budget_s=0), ValueError,
                 id="no-budget"),
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
    assert all(result.best[k] in v for k, v in space.items())
    assert result.defaults == {"num_parallel_calls": None, "batch_size": 4, "prefetch": 0}
    assert result.autotune == {"num_parallel_calls": AUTOTUNE, "batch_size": 4,
                               "prefetch": AUTOTUNE}
    assert [r["config"] for r in result.table] == [
        "doctor-tuned", "AUTOTUNE everywhere", "num_parallel_calls=AUTOTUNE",
        "prefetch=AUTOTUNE", "defaults"]
    auto = result.table[1]
    assert auto["vs_autotune"] == pytest.approx(1.0)
    assert all(r["rows_per_s"] > 0 and len(r["runs"]) >= 1 for r in result.table)
    assert str(result).count("\n") == len(result.table) + 1


def test_measure_counts_rows_and_stops_at_the_end():
    r = measure(tf.data.Dataset.range(50).batch(10), seconds=5.0)
    assert (r.elements, r.rows, r.exhausted) == (4, 40, True)
