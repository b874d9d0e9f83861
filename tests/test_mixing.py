"""Mixing, from real runs: how far a shuffle moves elements, labels per batch, epochs, memory."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from datakit.glassbox.shuffle_stats import mixing_stats
from datakit.perf.shuffle_runs import shuffled_orders
from datakit.see import mixing as mx


def test_elements_move_forward_at_most_buffer_size_minus_one():
    for b in [1, 3, 10]:
        orders = shuffled_orders(30, b, runs=40, seed=b)
        assert all(sorted(o) == list(range(30)) for o in orders.tolist())
        stats = mixing_stats(orders)
        assert stats.max_forward <= b - 1
        if b == 1:
            assert stats.mean_displacement == 0 and stats.rank_correlation == 1


def test_bigger_buffers_mix_more():
    labels = np.repeat(np.arange(4), 25)
    stats = [mixing_stats(shuffled_orders(100, b, runs=30, seed=0), labels, 5)
             for b in [1, 10, 100]]
    assert stats[0].single_label_batches == 1.0
    assert stats[0].rank_correlation > stats[1].rank_correlation > stats[2].rank_correlation
    assert stats[0].single_label_batches > stats[1].single_label_batches \
        > stats[2].single_label_batches


def test_mixing_map_is_a_distribution_per_input_position():
    m = mx.measure_mixing(12, [1, 4, 12], runs=25, seed=3)
    assert m.probs.shape == (3, 12, 12)
    np.testing.assert_allclose(m.probs.sum(axis=2), 1.0)
    np.testing.assert_allclose(m.probs.sum(axis=1), 1.0)
    np.testing.assert_array_equal(m.probs[0], np.eye(12))
    for k, b in enumerate(m.buffer_sizes):  # nothing leaves more than b - 1 places early
        i, j = np.nonzero(m.probs[k])
        assert (j >= i - (b - 1)).all()


def test_label_batches_and_epoch_order():
    labels = np.repeat(np.arange(3), 10)
    counts = mx.label_batches(labels, 8, 4, seed=1)
    assert counts.sum() == 30 and counts.sum(axis=0).tolist() == [10, 10, 10]
    assert counts.sum(axis=1).tolist() == [4] * 7 + [2]
    e = mx.epoch_order(10, 3, 5, seed=42)
    assert e["shuffle then repeat"].tolist() == sorted(e["repeat then shuffle"].tolist())
    # an element of epoch k cannot come out before position 10k - (buffer_size - 1)
    pos = np.arange(30)
    assert (pos >= e["repeat then shuffle"] * 10 - 4).all()


def test_buffer_bytes():
    spec = (tf.TensorSpec([32, 32, 3], tf.uint8), tf.TensorSpec([], tf.int64))
    assert mx.buffer_bytes(spec, 100) == 100 * (32 * 32 * 3 + 8)
    with pytest.raises(ValueError, match="full shape"):
        mx.buffer_bytes(tf.TensorSpec([None, 3], tf.float32), 10)




def test_plots_return_axes():
    import matplotlib.pyplot as plt

    assert len(mx.plot_mixing(mx.measure_mixing(6, [1, 3], runs=5))) == 2
    assert mx.plot_epochs(mx.epoch_order(4, 2, 3)).get_title()
    assert len(mx.plot_label_batches({1: np.eye(2, dtype=int)})) == 1
    plt.close("all")


def test_plot_mixing_draws_small_datasets():
    import matplotlib.pyplot as plt

    for n in [1, 2, 6, 16, 40]:
        axes = mx.plot_mixing(mx.measure_mixing(n, [1, 2], runs=3))
        axes[0].figure.canvas.draw()  # the colour scale is checked only when drawn
        bounds = axes[0].images[0].norm.boundaries
        assert (np.diff(bounds) > 0).all() and bounds[-1] == 1.0
    plt.close("all")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("call", [
    pytest.param(lambda: shuffled_orders(5, 2, runs=-1), id="runs-negative"),
    pytest.param(lambda: shuffled_orders(0, 2, runs=3), id="n-0"),
    pytest.param(lambda: mx.epoch_order(5, -1, 2), id="epochs-negative"),
    pytest.param(lambda: mx.label_batches([0, 1, 1], buffer_size=2, batch_size=0),
                 id="batch_size-0"),
    pytest.param(lambda: mx.label_batches([-1, 1], buffer_size=2, batch_size=1),
                 id="negative-label"),
])
def test_bad_counts_are_refused_up_front_instead_of_running_forever(call):
    with pytest.raises(ValueError, match="invalid|is negative"):
        call()


@pytest.mark.parametrize("call, error, text", [
    pytest.param(lambda: mx.measure_mixing(20, buffer_sizes={5, 2}, runs=5), TypeError,
                 "buffer_sizes must be a list of buffer sizes, got set", id="sizes-set"),
    pytest.param(lambda: mixing_stats(np.zeros((0, 0), dtype=int)), ValueError,
                 "orders has shape \\(0, 0\\)", id="empty-orders"),
    pytest.param(lambda: mixing_stats(np.array([[0, 1, 2, 3]]), labels=[0, 1], batch_size=2),
                 ValueError, "labels has 2 values for orders of 4 positions", id="labels-short"),
])
def test_unordered_or_mismatched_inputs_are_named(call, error, text):
    """#47: a set was taken in hash order; an empty array or short labels were NumPy's errors."""
    with pytest.raises(error, match=text):
        call()
