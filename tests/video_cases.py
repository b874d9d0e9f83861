"""Tiny videos the video and memory tests share (16 px, 12 to 24 frames, seed 3)."""

from __future__ import annotations

import pytest

from datakit import video

SIZE, MIN_F, MAX_F, N = 16, 12, 24, 12
KW = dict(size=SIZE, min_frames=MIN_F, max_frames=MAX_F, seed=3)


@pytest.fixture(scope="module")
def videos():
    return video.make_videos(N, **KW)


@pytest.fixture(scope="module")
def mp4_dir(videos, tmp_path_factory):
    d = tmp_path_factory.mktemp("mp4")
    video.write_mp4_videos(videos, d)
    return d
