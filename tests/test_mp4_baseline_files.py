"""The MP4 baseline (``mp4_clip_dataset``) with files outside the synthetic set: a named pipe
in a class folder (refused by name, never waited on) and files FFmpeg reads whose header
counts no frames (MPEG-TS joined, a still track listed first), read like any other."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import video_corpus

from datakit.readers import video
from datakit.readers.video.synthetic.moving_squares import CLASSES
from datakit.readers.video.synthetic.mp4 import mp4_frame_count, read_mp4

PIPE = """
import sys
from datakit.readers import video
try:
    video.mp4_clip_dataset(sys.argv[1], clip_len=4, batch_size=2)
except Exception as e:
    print("REFUSED", e)
"""


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "vids"
    videos = video.make_videos(2, size=16, min_frames=8, max_frames=10, seed=0)
    video.write_mp4_videos(videos, folder)
    return folder


def test_a_named_pipe_is_refused_by_name_not_waited_on(tmp_path):
    folder = _folder(tmp_path)
    cls = next(p for p in folder.iterdir() if p.is_dir())
    os.mkfifo(cls / "a.mp4")  # sorted first: the build's first file
    # (in a child: without the check, av.open waits on the pipe for ever)
    proc = subprocess.run([sys.executable, "-c", PIPE, str(folder)], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).parents[1])
    assert "REFUSED" in proc.stdout, proc.stderr[-2000:]
    assert "a.mp4" in proc.stdout and "named pipe" in proc.stdout


@pytest.fixture(scope="module")
def ffmpeg_only(tmp_path_factory):
    return video_corpus.ffmpeg_only_files(tmp_path_factory.mktemp("ffonly"))


@pytest.mark.parametrize("name", ["ts_joined_back.mp4", "ts_joined_repeat.mp4",
                                  "still_first.mkv"])
def test_mp4_frame_count_counts_frames_the_header_does_not(ffmpeg_only, name):
    path = ffmpeg_only[name]
    n = mp4_frame_count(path)
    assert n >= 4
    frames = read_mp4(path)
    assert len(frames) == n  # every counted frame decodes, from the stream FFmpeg reads
    assert frames.shape[1:3] != (32, 32) or name != "still_first.mkv"


@pytest.mark.parametrize("name", ["ts_joined_back.mp4", "ts_joined_repeat.mp4"])
def test_baseline_reads_joined_ts_files(ffmpeg_only, tmp_path, name):
    cls = tmp_path / "vids" / CLASSES[0]
    cls.mkdir(parents=True)
    (cls / "v.mp4").write_bytes(ffmpeg_only[name].read_bytes())
    ds = video.mp4_clip_dataset(tmp_path / "vids", clip_len=4, batch_size=8)
    clips = [np.asarray(x) for x, _ in ds]
    assert [c.shape[:2] for c in clips] == [(1, 4)]  # one clip of 4 frames, not refused
