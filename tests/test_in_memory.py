"""Tests for datakit.readers.video.reading.in_memory: the all-in-memory baseline and its plot."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from video_cases import SIZE, N

from datakit.readers import video
from datakit.readers.video.reading import in_memory

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def loaded(mp4_dir):
    return in_memory.load_videos_in_memory(mp4_dir)


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
    assert all(b > a for a, b in zip(loaded.data_bytes, loaded.data_bytes[1:], strict=False))


def test_plot_returns_its_axes(loaded):
    ax = in_memory.plot_memory_vs_data(loaded, total_memory=loaded.rss_before + 10**9)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.get_legend().get_texts()) == 3


def test_sample_clips_takes_a_seed_and_checks_clip_len(loaded):
    a = loaded.sample_clips(4, 3, seed=5)
    b = loaded.sample_clips(4, 3, seed=5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="clip_len"):
        loaded.sample_clips(2, int(loaded.lengths.min()) + 1, seed=0)
