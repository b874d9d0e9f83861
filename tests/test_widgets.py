"""The data behind every widget's picture equals what a real tf.data run gives (no browser)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import tensorflow as tf

from datakit.glassbox.dataset import Dataset
from datakit.perf import timeline
from datakit.see import animation, batches, interleave, widget_data, widgets

matplotlib.use("Agg")


@pytest.mark.parametrize("n, size, seed, reshuffle, iteration", [
    pytest.param(12, 4, 42, True, 0, id="default"),
    pytest.param(12, 4, 42, True, 1, id="second-pass-reshuffled"),
    pytest.param(10, 3, 7, False, 2, id="third-pass-same-order"),
    pytest.param(8, 1, 0, True, 0, id="buffer-1-keeps-order"),
    pytest.param(9, 9, 5, True, 0, id="buffer-holds-all"),
])
def test_stepper_data_is_the_real_shuffle(n, size, seed, reshuffle, iteration):
    trace = widget_data.stepper_data(n, size, seed, reshuffle, iteration)
    real = tf.data.Dataset.range(n).shuffle(size, seed=seed, reshuffle_each_iteration=reshuffle)
    for _ in range(iteration):
        list(real)
    assert [int(x) for x in trace.outputs] == [int(x) for x in real]
    assert all(trace.slots[t][trace.picked_slot[t]] == trace.picked[t] for t in range(n))
    for t in range(n):  # every pick is drawable and says what it shows
        assert f"step {t}: picked slot {trace.picked_slot[t]}" in animation.describe_pick(trace, t)


def test_stepper_reshuffle_off_repeats_the_order():
    a = widget_data.stepper_data(10, 3, 1, False, 0).outputs
    b = widget_data.stepper_data(10, 3, 1, False, 1).outputs
    c = widget_data.stepper_data(10, 3, 1, True, 1).outputs
    assert [int(x) for x in a] == [int(x) for x in b] != [int(x) for x in c]


@pytest.mark.parametrize("size", [1, 10, 50])
def test_mixing_data_counts_real_shuffles(size):
    v = widget_data.mixing_data(size, n=40, runs=10, n_labels=4, batch_size=8)
    labels = np.repeat(np.arange(4), 10)
    real = tf.data.Dataset.from_tensor_slices(labels).shuffle(size, seed=42).batch(8)
    assert v.label_counts.tolist() == [np.bincount(b, minlength=4).tolist() for b in real]
    orders = np.stack(list(tf.data.Dataset.range(40).shuffle(size, seed=42).repeat(10).batch(40)))
    assert np.allclose(v.mixing.probs[0].sum(axis=1), 1.0)
    assert np.allclose(v.mixing.probs[0][orders[0], np.arange(40)] > 0, True)
    if size == 1:
        assert v.stats.rank_correlation == 1.0 and v.stats.mean_displacement == 0.0


@pytest.mark.parametrize("n, rep, size, drop, order", [
    pytest.param(10, 3, 7, False, "repeat, batch", id="repeat-batch"),
    pytest.param(10, 3, 7, True, "repeat, batch", id="repeat-batch-drop"),
    pytest.param(10, 3, 7, False, "batch, repeat", id="batch-repeat"),
    pytest.param(5, 2, 4, True, "batch, repeat", id="batch-repeat-drop"),
    pytest.param(3, 1, 5, True, "repeat, batch", id="everything-dropped"),
])
def test_batch_data_is_the_real_batches_and_the_glass_box(n, rep, size, drop, order):
    bt = widget_data.batch_data(n, rep, size, drop, order)
    if order == "repeat, batch":
        real = tf.data.Dataset.range(n).repeat(rep).batch(size, drop_remainder=drop)
        glass = Dataset.range(n).repeat(rep).batch(size, drop_remainder=drop)
    else:
        real = tf.data.Dataset.range(n).batch(size, drop_remainder=drop).repeat(rep)
        glass = Dataset.range(n).batch(size, drop_remainder=drop).repeat(rep)
    real_batches = [b.tolist() for b in real.as_numpy_iterator()]
    rebuilt = [[bt.values[i] for i, b in enumerate(bt.batch_of) if b == j]
               for j in range(len(real_batches))]
    assert rebuilt == real_batches
    gb = batches.trace_batches(glass)
    if order == "repeat, batch":  # the glass box traces the same stream
        assert (gb.values, gb.epochs, gb.batch_of) == (bt.values, bt.epochs, bt.batch_of)


def test_batch_data_rejects_an_unknown_order():
    with pytest.raises(ValueError, match="order"):
        widget_data.batch_data(order="shuffle")


@pytest.mark.parametrize("cycle, block", [(1, 1), (2, 1), (3, 2), (5, 1), (2, 4)])
def test_interleave_data_is_the_real_interleave_with_one_lane_per_slot(cycle, block):
    trace = widget_data.interleave_data(widget_data.UNEVEN_LENGTHS, cycle, block)
    files = tf.data.Dataset.from_tensor_slices(trace.files)
    plain = files.interleave(lambda f: tf.data.TextLineDataset(f).skip(1),
                             cycle_length=cycle, block_length=block)
    ids = [int(x) for x in plain]  # each file's lines are 100 * file + row
    assert ids == [100 * f + (ln - 2) for f, ln in zip(trace.file, trace.line, strict=False)]
    assert trace.slot is not None and set(trace.slot.tolist()) <= set(range(cycle))
    empty = [e for e in trace.events if e.opened == e.closed]
    assert [e.input for e in empty] == [widget_data.UNEVEN_LENGTHS.index(0)]  # the empty file shows
    ax = interleave.plot_sources(trace)
    assert len(ax.get_yticks()) == cycle
    matplotlib.pyplot.close("all")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("calls, prefetch", [(1, 0), (3, 2)])
def test_timeline_data_runs_the_real_pipeline(calls, prefetch):
    tl = widget_data.timeline_data(calls, prefetch, 0.002, parse_time=0.002, open_time=0.001,
                               read_time=0.001)
    untraced = widget_data.timeline_pipeline(calls, prefetch, parse_time=0.002).map(lambda v, t: v)
    assert tl.ids.tolist() == [int(x) for x in untraced] == list(range(10))
    assert tl.stages == ["open", "read", "parse"]
    assert 1 <= timeline.summary(tl)["parse_parallelism"] <= calls


def test_animations_are_small_self_contained_html():
    html = animation.shuffle_animation(widget_data.stepper_data(12, 4, 42, True, 0))
    assert "<script" in html and len(html) < 300_000
    trace = widget_data.interleave_data(widget_data.UNEVEN_LENGTHS, 2, 1)
    html = animation.interleave_animation(trace)
    assert "<script" in html and len(html) < 300_000


def test_widgets_build_and_redraw_without_a_browser(capsys):
    ipywidgets = pytest.importorskip("ipywidgets")
    box = widgets.batch_explorer()
    assert isinstance(box, ipywidgets.VBox)
    slider = box.children[0].children[1]  # batch_size
    slider.value = 3  # re-runs tf.data and redraws (no kernel: the figure repr goes to stdout)
    assert "Figure" in capsys.readouterr().out
    assert isinstance(widgets.shuffle_stepper(), ipywidgets.VBox)
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("call, error, words", [
    pytest.param(lambda: widget_data.stepper_data(iteration=-1), ValueError, "iteration=-1",
                 id="stepper-negative-iteration"),
    pytest.param(lambda: widget_data.stepper_data(buffer_size=0), ValueError, "buffer_size=0",
                 id="stepper-empty-buffer"),
    pytest.param(lambda: widget_data.stepper_data(n=4.0), TypeError, "n must be an int",
                 id="stepper-float-n"),
    pytest.param(lambda: widget_data.interleave_data(lengths=(-2, 3)), ValueError,
                 "lengths[0]=-2", id="interleave-negative-length"),
    pytest.param(lambda: widget_data.interleave_data(lengths=()), ValueError, "lengths is empty",
                 id="interleave-no-files"),
    pytest.param(lambda: widget_data.interleave_data(lengths=5), TypeError, "sequence of ints",
                 id="interleave-lengths-not-a-sequence"),
    pytest.param(lambda: widget_data.interleave_data(cycle_length=0), ValueError,
                 "cycle_length=0", id="interleave-cycle-0"),
    pytest.param(lambda: widget_data.mixing_data(10, n_labels=0), ValueError, "n_labels=0",
                 id="mixing-no-labels"),
    pytest.param(lambda: widget_data.mixing_data(10, runs="5"), TypeError, "runs must be an int",
                 id="mixing-runs-text"),
    pytest.param(lambda: widget_data.batch_data(batch_size=2.5), TypeError,
                 "batch_size must be an int", id="batch-size-float"),
    pytest.param(lambda: widget_data.batch_data(repeat=0), ValueError, "repeat=0",
                 id="batch-repeat-0"),
    pytest.param(lambda: widget_data.timeline_data(step_time=float("nan")), ValueError,
                 "step_time=nan", id="timeline-nan-step"),
    pytest.param(lambda: widget_data.timeline_data(step_time="0.01"), TypeError,
                 "step_time must be a number", id="timeline-text-step"),
    pytest.param(lambda: widget_data.timeline_data(prefetch=-1), ValueError, "prefetch=-1",
                 id="timeline-negative-prefetch"),
])
def test_widget_data_refuses_bad_arguments_by_name(call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)


@pytest.mark.parametrize("step, error", [(99, ValueError), (-1, ValueError), (1.5, TypeError)])
def test_describe_pick_names_a_step_outside_the_run(step, error):
    trace = widget_data.stepper_data(6, 2, 0, True, 0)
    with pytest.raises(error, match="step"):
        animation.describe_pick(trace, step)
    with pytest.raises(error, match="step"):
        animation.plot_pick(trace, step)
