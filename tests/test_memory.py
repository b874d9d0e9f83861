"""Tests for datakit.memory: the all-in-memory baseline, RSS during fit(), the two plots."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import tensorflow as tf

from datakit import memory, video
from video_cases import N, SIZE, mp4_dir, videos  # noqa: F401 (fixtures)

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def loaded(mp4_dir):
    return memory.load_videos_in_memory(mp4_dir)


@pytest.mark.timeout(120)
def test_in_memory_loader_and_clip_sampling(videos, loaded):
    data = loaded
    assert len(data.frames) == sum(len(v.frames) for v in videos)
    assert len(data.rss) == len(data.data_bytes) == N
    assert data.data_bytes[-1] == data.frames.nbytes
    x, y = data.sample_clips(6, 3, rng=np.random.default_rng(0))
    assert x.shape == (6, 3, SIZE, SIZE, 3) and y.shape == (6,)


def test_loader_keeps_each_video_where_it_says(videos, loaded):
    # sorted by class folder, then id: the order list_mp4 gives
    order = sorted(videos, key=lambda v: (video.CLASSES[v.label], v.id))
    assert loaded.lengths.tolist() == [len(v.frames) for v in order]
    assert loaded.labels.tolist() == [v.label for v in order]
    assert loaded.starts.tolist() == np.cumsum([0] + loaded.lengths.tolist()[:-1]).tolist()
    assert all(b > a for a, b in zip(loaded.data_bytes, loaded.data_bytes[1:]))


@pytest.mark.timeout(120)
def test_memory_logger_records_once_per_step():
    model = video.small_video_model(4, SIZE)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x = np.zeros((6, 4, SIZE, SIZE, 3), np.uint8)
    ds = tf.data.Dataset.from_tensor_slices((x, np.arange(6) % 4)).batch(2)  # 3 steps
    logger = memory.memory_logger()
    model.fit(ds, epochs=2, callbacks=[logger], shuffle=False, verbose=0)
    assert len(logger.seconds) == len(logger.rss) == 1 + 2 * 3  # a start, then each step
    assert logger.seconds[0] == 0 and logger.seconds == sorted(logger.seconds)
    assert min(logger.rss) > 0


def test_plots_return_their_axes(loaded):
    ax = memory.plot_memory_vs_data(loaded, total_memory=loaded.rss_before + 10**9)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.get_legend().get_texts()) == 3
    ax = memory.plot_rss_over_time([0.0, 1.0, 2.0], [1e8, 2e8, 2e8])
    assert ax.lines[0].get_ydata().tolist() == [100.0, 200.0, 200.0]
    assert ax.get_ylim()[0] == 0


def test_sample_clips_takes_a_seed_and_checks_clip_len(mp4_dir):
    data = memory.load_videos_in_memory(mp4_dir)
    a = data.sample_clips(4, 3, seed=5)
    b = data.sample_clips(4, 3, seed=5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="clip_len"):
        data.sample_clips(2, int(data.lengths.min()) + 1, seed=0)
