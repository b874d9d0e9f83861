"""The shuffle buffer: trace_buffer agrees with tf.data, the glass box replays it.

Slot placement is checked against TensorFlow itself, not against our own
replay: the draws that :func:`trace_buffer` infers from TensorFlow's output
order must equal TensorFlow's Philox random stream (recomputed here from the
op seeds, as ``shuffle_dataset_op.cc`` and ``random_seed_ops.cc`` do). A wrong
slot model would infer different draws.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import tensorflow as tf
from pipelines import assert_same_elements
from tensorflow.python.data.util import random_seed as tf_data_seed

from datakit.glassbox.dataset import Dataset, glassbox_shuffle
from datakit.see import shuffle as sh

# (n, repeat before shuffle) x buffer sizes (1, small, equal to input, larger) x seeds x reshuffle
SOURCES = [(0, 1), (1, 1), (2, 1), (5, 1), (7, 1), (4, 3), (10, 3)]
SEEDS = [0, 1, 42, 2**31 - 1]


def generated_cases():
    rng = random.Random(3)
    for (n, reps), seed, reshuffle in itertools.product(SOURCES, SEEDS, [True, False]):
        total = n * reps
        for b in sorted({1, 2, 3, max(total, 1), total + rng.randrange(1, 6)}):
            yield n, reps, b, seed, reshuffle


CASES = list(generated_cases())


def source(n, reps):
    return tf.data.Dataset.range(n).repeat(reps)


# -- Philox4x32-10 and TensorFlow's seed handling (the independent oracle) ----

_M = 0xFFFFFFFF


def philox_stream(seed_lo, seed_hi):
    """uint32 draws of ``SingleSampleAdapter<PhiloxRandom(seed_lo, seed_hi)>``."""
    key = (seed_lo & _M, (seed_lo >> 32) & _M)
    ctr = [0, 0, seed_hi & _M, (seed_hi >> 32) & _M]
    while True:
        c, k0, k1 = list(ctr), *key
        for _ in range(10):
            p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
            c = [((p1 >> 32) ^ c[1] ^ k0) & _M, p1 & _M, ((p0 >> 32) ^ c[3] ^ k1) & _M, p0 & _M]
            k0, k1 = (k0 + 0x9E3779B9) & _M, (k1 + 0xBB67AE85) & _M
        yield from c
        for i in range(4):  # 128-bit counter + 1
            ctr[i] = (ctr[i] + 1) & _M
            if ctr[i]:
                break


def tf_draws(seed, reshuffle, iteration=0):
    """TensorFlow's Random() stream for pass ``iteration`` of ``shuffle(seed=seed)``."""
    s1, s2 = (int(s) for s in tf_data_seed.get_seed(seed))
    if reshuffle:  # RandomSeedGenerator: two draws per new iterator
        g = philox_stream(s1, s2)
        for _ in range(iteration + 1):
            s1, s2 = next(g), next(g)
    return philox_stream(s1, s2)


# -- trace_buffer against tf.data ---------------------------------------------


def test_generated_cases_match_tensorflow():
    assert len(CASES) > 150
    for n, reps, b, seed, reshuffle in CASES:
        ctx = f"range({n}).repeat({reps}).shuffle({b}, seed={seed}, reshuffle={reshuffle})"
        t = sh.trace_buffer(source(n, reps), b, seed, reshuffle, epoch_size=max(n, 1))
        total = n * reps
        # same order as TensorFlow's own, untagged shuffle
        expected = list(source(n, reps).shuffle(b, seed=seed, reshuffle_each_iteration=reshuffle)
                        .as_numpy_iterator())
        assert_same_elements(expected, t.outputs, context=ctx)
        # each element leaves exactly once; every output was in its step's buffer
        assert sorted(t.picked) == list(range(total)), ctx
        for step, (p, slots, slot) in enumerate(zip(t.picked, t.slots, t.picked_slot,
                                                    strict=False)):
            assert p in t.buffer_positions[step] and slots[slot] == p, ctx
        # fill, steady state, drain
        assert t.sizes == [min(b, total - step) for step in range(total)], ctx
        if total:
            assert list(t.entered[0]) == list(range(min(b, total))), ctx
        for step in range(1, total):
            assert list(t.entered[step]) == ([b + step - 1] if b + step - 1 < total else []), ctx
        # the buffer holds exactly what came in and has not left yet
        for step in range(total):
            came = set(range(min(b + step, total)))
            assert set(t.buffer_positions[step]) == came - set(t.picked[:step]), ctx
        # slot placement: inferred draws are TensorFlow's Philox draws
        draws = tf_draws(seed, reshuffle)
        assert t.offsets == [next(draws) % s for s in t.sizes], ctx


def test_glassbox_replaying_tensorflow_picks_gives_same_slots_and_order():
    for n, reps, b, seed, reshuffle in CASES[::3]:
        t = sh.trace_buffer(source(n, reps), b, seed, reshuffle)
        gb = glassbox_shuffle(Dataset.range(n).repeat(reps), b, picks=t.offsets)
        ops = gb.trace()
        steps = ops[-1].steps
        assert [s.slots for s in steps] == t.slots
        assert [s.slot for s in steps] == t.picked_slot
        assert [s.entered for s in steps] == t.entered
        assert [s.sources[0] for s in steps] == t.picked
        assert_same_elements(t.outputs, ops[-1].values, context=f"{n} {reps} {b} {seed}")


@pytest.mark.parametrize("reshuffle", [True, False])
def test_repeat_after_shuffle_is_one_traced_pass_per_epoch(reshuffle):
    ds = tf.data.Dataset.range(7)
    for b, seed in [(1, 3), (3, 3), (7, 5), (20, 42)]:
        got = [int(x) for x in ds.shuffle(b, seed=seed, reshuffle_each_iteration=reshuffle)
               .repeat(3)]
        passes = [sh.trace_buffer(ds, b, seed, reshuffle, iteration=k) for k in range(3)]
        assert got == [int(x) for t in passes for x in t.outputs]
        for k, t in enumerate(passes):
            draws = tf_draws(seed, reshuffle, iteration=k)
            assert t.offsets == [next(draws) % s for s in t.sizes]
        if not reshuffle:
            assert passes[0].picked == passes[1].picked == passes[2].picked


def test_tagging_does_not_change_the_order():
    strings = tf.data.Dataset.from_tensor_slices([f"s{i}" for i in range(9)])
    pairs = tf.data.Dataset.from_tensor_slices(({"a": np.arange(9.0)}, np.arange(9) % 2))
    for ds in [strings, pairs, tf.data.Dataset.range(9).repeat(2)]:
        for b, seed in [(2, 1), (4, 42), (30, 7)]:
            plain = list(ds.shuffle(b, seed=seed).as_numpy_iterator())
            assert_same_elements(plain, sh.trace_buffer(ds, b, seed).outputs, context=str(ds))
            zipped = tf.data.Dataset.zip((ds, tf.data.Dataset.range(10**6))).shuffle(b, seed=seed)
            assert_same_elements(plain, [x for x, _ in zipped.as_numpy_iterator()])


def test_different_seeds_give_different_orders():
    orders = {tuple(sh.trace_buffer(tf.data.Dataset.range(20), 5, s).picked) for s in range(6)}
    assert len(orders) == 6


def test_trace_buffer_validates_arguments():
    with pytest.raises(ValueError, match="buffer_size >= 1"):
        sh.trace_buffer(tf.data.Dataset.range(3), 0)
    with pytest.raises(ValueError, match="finite"):
        sh.trace_buffer(tf.data.Dataset.range(3).repeat(), 2)
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        sh.trace_buffer(Dataset.range(3), 2)
    with pytest.raises(TypeError, match="int"):
        sh.trace_buffer(tf.data.Dataset.range(3), 2.5)


# -- the glass box with its own random numbers --------------------------------


def test_glassbox_shuffle_is_deterministic_per_seed_and_keeps_elements():
    for n, b in [(0, 3), (1, 1), (6, 2), (10, 4), (10, 30)]:
        ds = Dataset.range(n).repeat(2)
        a = [int(x) for x in ds.shuffle(b, seed=7)]
        assert a == [int(x) for x in ds.shuffle(b, seed=7)]
        assert sorted(a) == sorted(int(x) for x in tf.data.Dataset.range(n).repeat(2))
    orders = {tuple(int(x) for x in Dataset.range(20).shuffle(5, seed=s)) for s in range(6)}
    assert len(orders) == 6
    assert [int(x) for x in Dataset.range(5).shuffle(1, seed=3)] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("reshuffle", [True, False])
def test_glassbox_reshuffle_each_iteration(reshuffle):
    ds = Dataset.range(30).shuffle(10, seed=1, reshuffle_each_iteration=reshuffle)
    first, second = [int(x) for x in ds], [int(x) for x in ds]
    assert (first == second) is (not reshuffle)
    # repeat after shuffle: every epoch is drained before the next starts
    out = [int(x) for x in ds.repeat(3)]
    assert all(sorted(out[k * 30:(k + 1) * 30]) == list(range(30)) for k in range(3))


def test_glassbox_trace_gives_the_buffer_before_every_pick():
    ops = Dataset.range(6).shuffle(3, seed=0).trace()
    steps = ops[-1].steps
    assert [sum(p is not None for p in s.slots) for s in steps] == [3, 3, 3, 3, 2, 1]
    assert all(s.slots[s.slot] == s.sources[0] for s in steps)
    assert repr(Dataset.range(6).shuffle(3, seed=0)) == "Dataset.range(6).shuffle(3, seed=0)"


def test_glassbox_shuffle_validates_arguments():
    with pytest.raises(ValueError, match="buffer_size >= 1"):
        Dataset.range(3).shuffle(0)
    with pytest.raises(ValueError, match="picks ran out"):
        list(glassbox_shuffle(Dataset.range(3), 2, picks=[0]))
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        list(glassbox_shuffle(Dataset.range(3), 2, picks=[5, 0, 0]))


def test_plot_buffer_returns_axes():
    import matplotlib.pyplot as plt

    t = sh.trace_buffer(tf.data.Dataset.range(4).repeat(2), 3, seed=1, epoch_size=4)
    assert sh.plot_buffer(t).get_title()
    plt.close("all")
