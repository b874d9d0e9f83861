"""The doctor names the slow stage it was not told about; advice and tuning run on copies.

Planted costs are sleeps (``synthetic.work``: a sleep holds a thread, not a
core) at least ~10x every other stage's, so the answer does not depend on a
busy shared machine. No test asserts a time, only which stage was named.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import tensorflow as tf

from datakit.doctor import diagnosis
from datakit.perf.synthetic import synthetic_files, work

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
    report = diagnosis.diagnose(build(), seconds=0.15, repeats=3, advise=False)
    assert report.bottleneck.name == expected, str(report)
    assert report.bottleneck.cost_s == max(s.cost_s for s in report.stages)
    assert report.stages[-1].per_output == pytest.approx(1.0)


def test_per_output_counts_batches_and_filters():
    ds = tf.data.Dataset.range(64).filter(lambda x: x % 2 == 0).batch(8)
    report = diagnosis.diagnose(ds, seconds=0.5, repeats=1, advise=False)
    assert [round(s.per_output) for s in report.stages] == [16, 8, 1]
    assert all(s.exact for s in report.stages)


def test_plot_report_draws_one_bar_per_stage():
    report = diagnosis.diagnose(tf.data.Dataset.range(20).map(plus_one).batch(5), seconds=0.1,
                             repeats=1, advise=False)
    fig, ax = plt.subplots()
    assert diagnosis.plot_report(report, ax=ax) is ax
    assert len(ax.patches) == 3 and ax.get_title() and ax.get_xlabel()
    plt.close(fig)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: diagnosis.diagnose(tf.data.Dataset.range(3), step_time=-1),
                 id="negative-step-time"),
    pytest.param(lambda: diagnosis.diagnose(tf.data.Dataset.range(3), repeats=0), id="no-repeats"),
])
def test_bad_values_are_rejected(call):
    with pytest.raises(ValueError):
        call()


def test_repeats_of_a_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="repeats must be an int"):
        diagnosis.diagnose(tf.data.Dataset.range(3), repeats=2.0)


def test_not_a_dataset_is_rejected():
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        diagnosis.diagnose([1, 2])


@pytest.mark.parametrize("call, error", [
    pytest.param(lambda: diagnosis.diagnose(tf.data.Dataset.range(3), seconds=float("nan")),
                 ValueError, id="nan-seconds"),
    pytest.param(lambda: diagnosis.diagnose(tf.data.Dataset.range(3), seconds=-1), ValueError,
                 id="negative-seconds"),
    pytest.param(lambda: diagnosis.diagnose(tf.data.Dataset.range(3), step_time="0.01"),
                 TypeError, id="text-step-time"),
])
def test_bad_durations_are_named(call, error):
    with pytest.raises(error, match="diagnose\\(\\)"):
        call()


def test_an_empty_dataset_is_refused_by_name():
    with pytest.raises(ValueError, match="no element"):
        diagnosis.diagnose(tf.data.Dataset.range(10).filter(lambda x: x > 100), seconds=0.1)


@pytest.mark.timeout(120)
def test_a_generator_source_is_not_blamed_for_its_one_element():
    def rows():
        yield from range(300)

    ds = tf.data.Dataset.from_generator(rows, output_signature=tf.TensorSpec([], tf.int64))
    ds = ds.map(work(SLOW), name="decode").batch(4)
    report = diagnosis.diagnose(ds, seconds=0.15, repeats=1, advise=False)
    assert report.bottleneck.name == "decode", str(report)
    assert all(abs(s.cost_s) != float("inf") for s in report.stages)


@pytest.mark.timeout(120)
def test_repeat_is_never_the_bottleneck_its_cost_is_epoch_start_up():
    ds = tf.data.Dataset.range(3).map(work(SLOW / 2), name="decode").batch(1).repeat()
    report = diagnosis.diagnose(ds, seconds=0.15, repeats=1, advise=False)
    assert report.bottleneck.kind != "repeat"
    assert "start-up of each epoch" in report.stages[-1].detail


@pytest.mark.timeout(120)
def test_an_endless_pipeline_gets_no_advice_that_drains_it():
    ds = tf.data.Dataset.range(50).map(work(SLOW), name="decode").repeat().batch(4)
    report = diagnosis.diagnose(ds, seconds=0.1, repeats=1, advise=True)
    assert report.advice and not any("cache" in a.change for a in report.advice)
