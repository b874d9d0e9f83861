"""Timeline data invariants on small real pipelines (no wall-clock assertions)."""

from __future__ import annotations

import random
from collections import Counter

import matplotlib
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from datakit.perf import synthetic as S
from datakit.perf import timeline as T

matplotlib.use("Agg")

N_PIPELINES = 16


def random_traced_pipeline(rng: random.Random):
    """A small traced pipeline, the stage names it records, and how often each id must appear."""
    files, rows = rng.randint(1, 3), rng.randint(1, 5)
    cycle = rng.randint(1, 3)
    par = rng.choice([None, cycle, tf.data.AUTOTUNE])
    ds = S.synthetic_files(files, rows, open_time=0.001, read_time=0.0005,
                           cycle_length=cycle, num_parallel_calls=par)
    stages, epochs = ["open", "read"], 1
    if rng.random() < 0.5:
        ds = ds.shuffle(rng.randint(1, 6), seed=rng.randint(0, 99))
    ds = ds.map(T.timed("parse", S.work(0.0005)), num_parallel_calls=rng.choice([None, 3]))
    stages.append("parse")
    if rng.random() < 0.4:
        ds, epochs = ds.cache().repeat(2), 2  # the second epoch replays stale open/read/parse
    if rng.random() < 0.5:
        ds = ds.batch(rng.randint(1, 4)).map(T.timed("vectorized", lambda x: x * 2))
        stages.append("vectorized")
    else:
        ds = ds.map(T.timed("stamp"))
        stages.append("stamp")
    if rng.random() < 0.5:
        ds = ds.prefetch(rng.randint(1, 3))
    if rng.random() < 0.5:
        ds = S.serial(ds)
    return ds, stages, Counter({i: epochs for i in range(files * rows)})


def check_invariants(tl: T.Timeline, stages: list[str], expected: Counter) -> None:
    assert tl.stages == stages
    assert Counter(tl.ids.tolist()) == expected  # every element appears once per epoch
    n, s = len(tl.ids), len(stages)
    assert tl.start.shape == tl.end.shape == (n, s)
    assert (tl.start <= tl.end).all()
    assert (tl.start[:, 1:] >= tl.end[:, :-1]).all(), "a stage started before the previous ended"
    assert (np.diff(tl.step) >= 0).all() and set(tl.step.tolist()) == set(range(len(tl.received)))
    assert (tl.requested <= tl.received).all() and (tl.received <= tl.finished).all()
    assert (tl.requested[1:] >= tl.finished[:-1]).all()
    assert (tl.ready <= tl.received + 1e-3).all(), "consumed before it was produced"
    times, occ = T.occupancy(tl)
    assert (occ >= 0).all() and occ[-1] == 0 and (np.diff(times) >= 0).all()
    wait = tl.wait_fraction()
    assert ((wait >= 0) & (wait <= 1)).all()


@pytest.mark.timeout(300)
def test_generated_pipelines_keep_timeline_invariants():
    rng = random.Random(5)
    for _ in range(N_PIPELINES):
        ds, stages, expected = random_traced_pipeline(rng)
        tl = T.trace_timeline(ds, step_time=0.0005)
        check_invariants(tl, stages, expected)
    print(f"timeline invariants hold on {N_PIPELINES} generated traced pipelines")


def test_tracing_does_not_change_values():
    plain = tf.data.Dataset.range(10).map(lambda x: x * 3).batch(4)
    traced = T.tag(tf.data.Dataset.range(10)).map(T.timed("triple", lambda x: x * 3)).batch(4)
    got = [v.numpy().tolist() for v, _ in traced]
    assert got == [b.tolist() for b in plain.as_numpy_iterator()]


def test_tuple_elements_are_unpacked_like_map():
    ds = T.tag(tf.data.Dataset.from_tensor_slices(([1, 2], [10, 20])))
    ds = ds.map(T.timed("add", lambda a, b: a + b))
    assert [int(v) for v, _ in ds] == [11, 22]


def test_steps_limits_the_run_and_train_step_sees_plain_values():
    seen = []
    ds = T.tag(tf.data.Dataset.range(100)).map(T.timed("id"))
    tl = T.trace_timeline(ds, steps=3, train_step=lambda x: seen.append(int(x)))
    assert seen == [0, 1, 2] and tl.ids.tolist() == [0, 1, 2]


def test_parallel_work_shows_as_sub_lanes():
    ds = T.tag(tf.data.Dataset.range(8)).map(T.timed("slow", S.work(0.05)), num_parallel_calls=4)
    tl = T.trace_timeline(ds.prefetch(4), step_time=0.0)
    b0, b1, _ = T.bars(tl, 0)
    assert len(b0) == 8
    assert T.summary(tl)["slow_parallelism"] >= 2  # 4 sleeping calls overlap even on one core


def test_cached_stages_are_drawn_once():
    ds = S.synthetic_files(1, 3, open_time=0.001, read_time=0.001).cache().repeat(2)
    tl = T.trace_timeline(ds.map(T.timed("after")))
    assert len(tl.ids) == 6
    assert len(T.bars(tl, 1)[0]) == 3  # reads happened once, epoch 2 replays their timestamps
    assert len(T.bars(tl, 2)[0]) == 6


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 20)), max_size=30))
def test_sub_lanes_never_overlap_and_use_as_few_lanes_as_possible(spans):
    start = np.array([a for a, _ in spans], float)
    end = np.array([a + d for a, d in spans], float)
    lane = T.sub_lanes(start, end)
    for k in set(lane.tolist()):
        idx = np.argsort(start[lane == k], kind="stable")
        s, e = start[lane == k][idx], end[lane == k][idx]
        assert (s[1:] >= e[:-1]).all()
    # As many lanes as the most intervals open at one instant (half-open [a, b)).
    depth = max((sum(1 for a, b in zip(start, end, strict=False) if a <= t < b) for t in start),
                default=0)
    assert (lane.max() + 1 if len(lane) else 0) == max(depth, 1 if len(lane) else 0)


def test_plots_return_axes_with_one_lane_label_per_stage():
    tl = T.trace_timeline(S.synthetic_files(2, 2, open_time=0.001, read_time=0.001))
    ax = T.plot_timeline(tl, title="t")
    assert len(ax.get_yticklabels()) == 3  # open, read, train step
    assert T.plot_occupancy(tl).get_ylabel()
    matplotlib.pyplot.close("all")


def test_errors_say_how_to_fix_the_call():
    with pytest.raises(TypeError, match="timeline.tag"):
        T.trace_timeline(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match="timeline.tag"):
        next(iter(tf.data.Dataset.range(3).map(lambda x: (x, {"t": x})).map(T.timed("f"))))
    with pytest.raises(ValueError, match="stage name"):
        T.between("a,b")
    with pytest.raises(ValueError, match="stage name"):
        T.timed("")
    with pytest.raises(TypeError, match="stage name must be a str"):
        T.timed(3)


def test_between_tags_untraced_data_and_spans_request_to_arrival():
    ds = (tf.data.Dataset.range(7).batch(3).apply(T.between("batch"))
          .map(T.timed("sum", tf.reduce_sum)))
    tl = T.trace_timeline(ds)
    check_invariants(tl, ["batch", "sum"], Counter(range(3)))
    assert (tl.start[1:, 0] >= tl.end[:-1, 0]).all()  # asked only after the previous arrived
    assert [int(v) for v in ds.map(lambda v, t: v)] == [3, 12, 6]  # values untouched


def test_between_leaves_a_gap_while_downstream_is_busy():
    """Back-pressure: a slow stage downstream asks late, so the bars have gaps, not work."""
    from datakit.perf import synthetic
    ds = tf.data.Dataset.range(6).apply(T.between("src")).map(
        T.timed("slow", synthetic.work(0.02)))
    tl = T.trace_timeline(synthetic.serial(ds))
    gaps = tl.start[1:, 0] - tl.end[:-1, 0]
    assert (gaps >= tl.end[:-1, 1] - tl.start[:-1, 1]).all()  # the source waited for "slow"
    assert T.busy_fraction(tl, 0) < T.busy_fraction(tl, 1)


def test_busy_fraction_is_the_union_of_bars():
    tl = T.Timeline(["s"], np.arange(3), np.arange(3), np.array([[0.], [1.], [3.]]),
                    np.array([[2.], [2.5], [4.]]), np.zeros(3), np.zeros(3), np.zeros(3))
    assert T.busy_fraction(tl, 0) == pytest.approx(3.5 / 4.0)  # [0, 2.5] and [3, 4] of [0, 4]
