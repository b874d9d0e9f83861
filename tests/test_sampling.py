"""The real-run source tracer: tags survive a real sample_from_datasets; counts per batch."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

from datakit.see import sampling as sm


def test_trace_sample_tags_match_the_values():
    t = sm.trace_sample([tf.data.Dataset.range(50), tf.data.Dataset.range(1000, 1020)],
                        weights=[0.5, 0.5], seed=4)
    assert len(t.values) == 70
    for s, p, v in zip(t.sources, t.positions, t.values, strict=False):
        assert int(v) == (0 if s == 0 else 1000) + p
    assert Counter(t.sources.tolist()) == {0: 50, 1: 20}
    again = sm.trace_sample([tf.data.Dataset.range(50), tf.data.Dataset.range(1000, 1020)],
                            weights=[0.5, 0.5], seed=4)
    assert t.sources.tolist() == again.sources.tolist()   # same seed, same order


def test_balancing_label_sorted_data_puts_every_label_in_most_batches():
    labels = np.repeat(np.arange(4), 100)
    per_class = [tf.data.Dataset.from_tensor_slices(labels[labels == c]) for c in range(4)]
    t = sm.trace_sample(per_class, seed=0, stop_on_empty_dataset=True)
    counts = sm.source_counts(t.sources, batch_size=32, num_sources=4)
    assert (counts > 0).all(axis=1).mean() > 0.8
    sorted_counts = sm.source_counts(labels, batch_size=32)
    assert (sorted_counts > 0).sum(axis=1).max() <= 2


def test_stop_on_empty_and_max_elements():
    t = sm.trace_sample([tf.data.Dataset.range(3), tf.data.Dataset.range(10, 100)],
                        seed=0, stop_on_empty_dataset=True)
    assert 3 <= len(t.values) < 93 and Counter(t.sources.tolist())[0] <= 3
    assert len(sm.trace_sample([tf.data.Dataset.range(3).repeat()], max_elements=7).values) == 7


@pytest.mark.parametrize("call, error", [
    pytest.param(lambda: sm.tag_sources([[1, 2]]), TypeError, id="not-a-dataset"),
    pytest.param(lambda: sm.trace_sample([tf.data.Dataset.range(2)], weights=[1, 1]), ValueError,
                 id="weights"),
    pytest.param(lambda: sm.source_counts([0, -1], 2), ValueError, id="negative"),
    pytest.param(lambda: sm.source_counts([0, 1], 0), ValueError, id="batch-0"),
])
def test_bad_calls(call, error):
    with pytest.raises(error):
        call()


def test_plot_source_batches_draws_one_bar_group_per_source():
    import matplotlib
    matplotlib.use("Agg")
    ax = sm.plot_source_batches(sm.source_counts([0, 1, 1, 2], 2))
    assert ax.get_xlabel() == "batch" and len(ax.patches) == 2 * 3


def test_resampled_labels_are_balanced_and_silent(capfd):
    kept = sm.resampled_labels([0] * 1400 + [1] * 600, [0.5, 0.5], seed=1)
    assert 0.4 < kept.mean() < 0.6 and set(kept.tolist()) == {0, 1}
    assert "rejected by sampler" not in capfd.readouterr().err


@pytest.mark.parametrize("call, error, text", [
    pytest.param(lambda: sm.trace_sample([], seed=0), ValueError, "datasets=\\[\\] holds no source",
                 id="no-datasets"),
    pytest.param(lambda: sm.resampled_labels([0, 1, 0, 1], [1.0, 1.0], seed=0), ValueError,
                 "target_dist=\\[1.0, 1.0\\] must be probabilities .* sum to 2", id="sum-2"),
    pytest.param(lambda: sm.resampled_labels([0, 1], [float("nan"), 1.0]), ValueError,
                 "target_dist\\[0\\]=nan", id="nan"),
])
def test_bad_calls_name_the_argument(call, error, text):
    """#47: an empty list named tag_sources(); a target_dist summing to 2 was taken."""
    with pytest.raises(error, match=text):
        call()
