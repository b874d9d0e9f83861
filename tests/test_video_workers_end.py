"""The converter's worker processes end with the process that started them, however it ends.

A conversion runs in a child process (``parent`` below); it is killed with
SIGTERM, with SIGKILL, or crashes (``os.abort``), and within seconds none of
its worker processes, nor the ``multiprocessing`` resource tracker, is left.
SIGTERM is taken as Ctrl-C: one line says what is kept and that a rerun
resumes, and the rerun leaves no temporary file behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from datakit.readers import video

ROOT = Path(__file__).resolve().parent.parent

#: A parent whose two workers each sleep (time.sleep is the work: importable by any worker).
SLEEPING = """
import sys, time
from datakit.readers.video.converter.workers import convert_all
if sys.argv[1] == "crash":
    import os, threading
    threading.Timer(float(sys.argv[2]), os.abort).start()
for i, out in convert_all(time.sleep, [60.0] * 4, range(4), 2):
    pass
"""


def _start(code: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _descendants_once_started(proc: subprocess.Popen, at_least: int) -> list[psutil.Process]:
    """The processes ``proc`` started, once ``at_least`` of them run (polled, with a deadline)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        kids = psutil.Process(proc.pid).children(recursive=True)
        if len(kids) >= at_least:
            return kids
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError(f"{at_least} processes were not started in 60 s")


def _left(procs: list[psutil.Process], seconds: float = 10) -> list[psutil.Process]:
    """Those of ``procs`` still running after ``seconds`` at most (polled)."""
    deadline = time.monotonic() + seconds
    alive = procs
    while alive and time.monotonic() < deadline:
        _, alive = psutil.wait_procs(alive, timeout=0.2)
    return alive


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "crash"])
def test_no_worker_outlives_its_parent(how):
    parent = _start(SLEEPING, "crash" if how == "crash" else "-", "4")
    try:
        kids = _descendants_once_started(parent, 3)  # 2 workers and the resource tracker
        names = {k.pid: " ".join(k.cmdline()) for k in kids}
        assert any("resource_tracker" in c for c in names.values()), names
        if how != "crash":
            parent.send_signal(getattr(signal, how))
        parent.wait(timeout=60)
        left = _left(kids)
        assert not left, [names[k.pid] for k in left]
    finally:
        parent.kill()
        parent.communicate()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("many")
    for k in range(24):
        frames = video.make_video(k % 2, size=32, min_frames=120, max_frames=120, seed=k).frames
        video.write_video(frames, d / "ab"[k % 2] / f"v{k:02d}.mp4")
    return d


CONVERT = """
import sys
from datakit.readers import video
video.write_video_shards(sys.argv[1], sys.argv[2], processes=2, progress=False)
"""


@pytest.mark.timeout(300)
def test_sigterm_is_taken_as_ctrl_c_and_a_rerun_resumes_and_cleans_up(folder, tmp_path):
    out = tmp_path / "out"
    parent = _start(CONVERT, str(folder), str(out))
    try:
        kids = _descendants_once_started(parent, 3)
        deadline = time.monotonic() + 60  # wait until a part is written: work under way
        while not list(out.glob(".parts*/**/*.tfrecord")) and time.monotonic() < deadline:
            time.sleep(0.05)
        parent.send_signal(signal.SIGTERM)
        _, err = parent.communicate(timeout=60)
        assert parent.returncode != 0
        last = err.strip().splitlines()[-1]  # the useful line, not above a traceback
        assert last.startswith("KeyboardInterrupt: write_video_shards interrupted (signal 15")
        assert "are kept in" in last and last.endswith("run it again to resume"), last
        assert not _left(kids)
    finally:
        parent.kill()
        parent.communicate()
    assert not (out / "train").exists()  # stopped before the commit point
    result = video.write_video_shards(folder, out, processes=2, progress=False)
    assert result["reused"] >= 1 and result["converted"] + result["reused"] == 24
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                  if p.relative_to(out).parts[0].startswith(".")
                  and p.relative_to(out).parts[0] != ".generations")  # (readers' pinned copy)
    assert left == [], left  # no .next/, no .parts/, no temporary file


@pytest.mark.timeout(300)
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.02])
def test_a_kill_as_the_workers_start_says_what_is_kept_last_and_no_worker_fails(folder,
                                                                                 tmp_path, delay):
    """SIGTERM while the pool starts its workers: raised in the middle of a start, it cut a
    worker's preparation data short, and the worker's ``EOFError`` traceback was printed
    below the caller's message; the interrupt now waits until the workers have started."""
    out = tmp_path / "out"
    parent = _start(CONVERT, str(folder), str(out))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not out.exists():  # its imports (seconds)
            assert parent.poll() is None, parent.communicate()
            time.sleep(0.01)
        # `out` is made as the conversion takes its lock, before it lists and probes the 24
        # videos (0.07 CPU s or more): from here on, polled without a pause, to see the first
        # worker at once
        while time.monotonic() < deadline and not _a_worker_started(parent):
            assert parent.poll() is None, parent.communicate()
        time.sleep(delay)
        parent.send_signal(signal.SIGTERM)
        _, err = parent.communicate(timeout=60)
    finally:
        parent.kill()
        parent.communicate()
    assert "EOFError" not in err and "Traceback" in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("KeyboardInterrupt: write_video_shards interrupted"), err[-3000:]
    assert last.endswith("run it again to resume")


def _a_worker_started(proc: subprocess.Popen) -> bool:
    """Whether a worker process of ``proc``'s pool has started (``spawn``'s command line)."""
    try:
        kids = psutil.Process(proc.pid).children()
    except psutil.Error:
        return False
    for kid in kids:
        try:
            if "spawn_main" in " ".join(kid.cmdline()):
                return True
        except psutil.Error:  # ended already (a zombie), or another short-lived process
            continue
    return False
