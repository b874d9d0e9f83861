"""A clip error from MP4 files never leaves the interpreter hanging at exit.

Each run is a fresh interpreter with a hard timeout, on a folder whose third
file is damaged: the error is left uncaught (exit status 1), or caught and
kept in a variable to the end (exit status 0). Issue 26 asks for 50 runs in a
row; the suite runs ``DATAKIT_EXIT_RUNS`` (default 4) to stay in its time
budget, two interpreters at a time: ``DATAKIT_EXIT_RUNS=50 pytest tests/test_video_exit.py``
runs them all.
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
MODES = ("uncaught", "kept")

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
    for first in range(0, RUNS, 2):  # two interpreters at a time, one of each mode
        runs = range(first, min(first + 2, RUNS))
        procs = {run: subprocess.Popen([sys.executable, "-c", SCRIPT, str(d), MODES[run % 2]],
                                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
                 for run in runs}
        for run, proc in procs.items():
            mode = MODES[run % 2]
            try:
                stdout, stderr = proc.communicate(timeout=150)
            except subprocess.TimeoutExpired:
                for p in procs.values():
                    p.kill()
                pytest.fail(f"run {run} ({mode}): the interpreter hung at exit")
            assert proc.returncode == (1 if mode == "uncaught" else 0), (run, stderr[-1500:])
            assert str(victim) in (stderr if mode == "uncaught" else stdout), run


HELD = """
import sys
from datakit.readers import video
ds = video.video_dataset_from_directory(sys.argv[1], clip_len=4, batch_size=2,
                                        frame_size=(16, 16), seed=0, verbose=False)
it = iter(ds.repeat())  # held by the module to the end, its decoders still busy
next(it)
print("READ", flush=True)
"""


@pytest.mark.timeout(400)
def test_the_interpreter_exits_with_a_direct_readers_iterator_still_held(tmp_path):
    """Without the exit hook freeing live iterators, this script hung at exit (4 runs in 5)."""
    for k in range(2):
        video.write_mp4_videos(video.make_videos(6, size=32, min_frames=40, max_frames=40,
                                                 seed=k), tmp_path / f"class_{k}")
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    for run in range(2):
        proc = subprocess.Popen([sys.executable, "-c", HELD, str(tmp_path)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"run {run}: the interpreter hung at exit")
        assert proc.returncode == 0 and "READ" in stdout, (run, stderr[-1500:])
