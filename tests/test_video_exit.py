"""A clip error from MP4 files never leaves the interpreter hanging at exit.

Each run is a fresh interpreter with a hard timeout, on a folder whose third
file is damaged: the error is left uncaught (exit status 1), or caught and
kept in a variable to the end (exit status 0). Issue 26 asks for 50 runs in a
row; the suite runs ``DATAKIT_EXIT_RUNS`` (default 4) to stay in its time
budget: ``DATAKIT_EXIT_RUNS=50 pytest tests/test_video_exit.py`` runs them all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from datakit.readers import video

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("DATAKIT_EXIT_RUNS", "4"))

SCRIPT = """
import sys
from datakit.readers import video
ds = video.mp4_clip_dataset(sys.argv[1], clip_len=4, batch_size=2, shuffle_buffer_size=0)
if sys.argv[2] == "uncaught":
    for batch in ds:
        pass
try:
    for batch in ds:
        pass
except Exception as e:  # kept to the end of the program, with its traceback and iterator
    kept = e
print("KEPT", type(kept).__name__, str(kept).splitlines()[0])
"""


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    d = tmp_path_factory.mktemp("exit")
    paths = sorted(video.write_mp4_videos(
        video.make_videos(4, size=16, min_frames=8, max_frames=8, seed=0), d))
    paths[2].write_bytes(paths[2].read_bytes()[:300])
    return d, paths[2]


@pytest.mark.timeout(160 * RUNS)
def test_the_interpreter_exits_after_a_clip_error(damaged):
    d, victim = damaged
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    for run in range(RUNS):
        mode = ("uncaught", "kept")[run % 2]
        try:
            proc = subprocess.run([sys.executable, "-c", SCRIPT, str(d), mode], env=env,
                                  capture_output=True, text=True, timeout=150)
        except subprocess.TimeoutExpired:
            pytest.fail(f"run {run} ({mode}): the interpreter hung at exit")
        assert proc.returncode == (1 if mode == "uncaught" else 0), (run, proc.stderr[-1500:])
        assert str(victim) in (proc.stderr if mode == "uncaught" else proc.stdout), run
