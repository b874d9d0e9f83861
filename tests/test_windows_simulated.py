"""The cluster and the converter where the system is like Windows: no ``os.killpg``,
``os.setsid``, ``os.fork``, nor ``/proc`` for the kit's own code.

A fresh interpreter has those removed (``/proc`` refused to the kit's modules only:
``psutil`` reads it on Linux as Windows' API on Windows), then starts a ``LocalCluster``,
reads a dataset through it with each element's worker named (the pid from the server's
own file, not ``/proc``), stops it and checks every server gone, and converts a folder of
videos with 2 worker processes. The worker cap is checked with a faked 64-core Windows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from datakit.core import cores

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import builtins, json, os, sys, tempfile

    for name in ("killpg", "setsid", "fork"):
        delattr(os, name)  # as on Windows
    real_open, real_exists = builtins.open, os.path.exists

    def kits(depth=2):
        return sys._getframe(depth).f_globals.get("__name__", "").startswith("datakit")

    def no_proc_open(file, *args, **kwargs):
        if str(file).startswith("/proc") and kits():
            raise FileNotFoundError(2, "No such file or directory (simulated Windows)", file)
        return real_open(file, *args, **kwargs)

    def no_proc_exists(path):
        return False if str(path).startswith("/proc") and kits() else real_exists(path)

    builtins.open, os.path.exists = no_proc_open, no_proc_exists

    import psutil
    import tensorflow as tf
    from datakit.cluster import LocalCluster, measure_delivery
    from datakit.readers import video

    out = {}
    with LocalCluster(1) as cluster:
        pids = cluster.pids()
        rows = measure_delivery(cluster, tf.data.Dataset.range(6), "parallel_epochs")
        out["rows"] = {k: sorted(int(x) for x in v) for k, v in rows.items()}
    out["gone"] = [not psutil.pid_exists(p) or psutil.Process(p).status() == "zombie"
                   for p in pids]

    folder = tempfile.mkdtemp()
    video.write_mp4_videos(video.make_videos(4, size=16, min_frames=12, max_frames=16, seed=3),
                           folder + "/videos")
    made = video.write_video_shards(folder + "/videos", folder + "/shards", processes=2,
                                    num_shards=2, seed=0, progress=False)
    out["converted"] = made["converted"]
    print(json.dumps(out))
""")


@pytest.mark.timeout(400)
def test_a_local_cluster_and_a_two_worker_conversion_without_killpg_setsid_fork_and_proc():
    pytest.importorskip("av", reason="the video extra is not installed")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=380)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["rows"] == {"worker 0": [0, 1, 2, 3, 4, 5]}
    assert out["gone"] and all(out["gone"])
    assert out["converted"] == 4


def test_a_64_core_windows_box_gets_at_most_61_workers(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setitem(sys.modules, "psutil", None)  # no affinity to read: every core
    assert cores.affinity_cores() == 64
    assert cores.pool_workers(cores.affinity_cores(), "win32") == 61
    assert cores.pool_workers(cores.affinity_cores(), "linux") == 64
    assert cores.pool_workers(0, "win32") == 1


def test_windows_affinity_is_read_through_psutil(monkeypatch):
    psutil = pytest.importorskip("psutil")
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(psutil.Process, "cpu_affinity", lambda self: [0, 2, 4], raising=False)
    assert cores.affinity_cores() == 3


def test_a_data_path_shown_relative_falls_back_to_absolute_across_drives(monkeypatch):
    import datakit

    assert not datakit.data_path("generated", relative=True).is_absolute()

    def across_drives(path, start=os.curdir):
        raise ValueError(f"path is on mount 'D:', start on mount 'C:': {path}")

    monkeypatch.setattr(os.path, "relpath", across_drives)
    shown = datakit.data_path("generated", "x.csv", relative=True)
    assert shown == datakit.DATA_DIR / "generated" / "x.csv" and shown.is_absolute()


def test_a_set_rewritten_while_a_reader_holds_the_old_files_open_under_windows_rules(
        tmp_path, monkeypatch):
    """Windows refuses to delete (or rename over) a file that a reader holds open. The
    rewrite commits all the same: the new files keep their generation-tagged names where the
    old name cannot be freed, the manifest lists only new files, the held files keep their old
    bytes for the reader; once closed, the next write removes them."""
    import builtins

    import pandas as pd

    from datakit.core import manifest
    from datakit.readers.csv_files.shards import write_shards

    held: dict[str, object] = {}
    real_unlink, real_replace, real_open = os.unlink, os.replace, builtins.open

    def refuse_if_held(path):
        if os.path.abspath(path) in held:
            raise PermissionError(13, "The process cannot access the file because it is being "
                                      "used by another process (simulated Windows)", str(path))

    def unlink(path, *args, **kwargs):
        refuse_if_held(path)
        return real_unlink(path, *args, **kwargs)

    def replace(src, dst, *args, **kwargs):
        refuse_if_held(src), refuse_if_held(dst)
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "remove", unlink)
    monkeypatch.setattr(os, "replace", replace)
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    first = write_shards(frame, tmp_path, num_shards=2)
    old = {path: real_open(path, "rb").read() for path in first}
    for path in first:  # a reader opens the old set
        held[os.path.abspath(path)] = real_open(path, "rb")
    second = write_shards(frame * 10, tmp_path, num_shards=2)
    listed = [os.path.join(tmp_path, e["file"]) for e in manifest.check(tmp_path)]
    assert sorted(listed) == sorted(second) and not set(second) & set(first)
    assert [pd.read_csv(p)["x"].tolist() for p in sorted(second)] == [[10.0, 20.0], [30.0, 40.0]]
    assert all(held[os.path.abspath(p)].read() == old[p] for p in first)  # the reader's bytes
    for f in held.values():
        f.close()
    held.clear()
    third = write_shards(frame, tmp_path, num_shards=2)  # nothing held: names settle again
    assert sorted(os.path.basename(p) for p in third) == ["part_00.csv", "part_01.csv"]
    assert sorted(p for p in os.listdir(tmp_path) if p.endswith(".csv")) == [
        "part_00.csv", "part_01.csv"]


def test_a_server_tells_its_parent_gone_without_getppid_as_on_windows(monkeypatch):
    """Windows gives an orphan no new parent: the server looks its parent up by pid and
    start time (a dead one, or a pid reused by a later process, is gone)."""
    import psutil

    from datakit.cluster import serve

    monkeypatch.setattr(serve.os, "name", "nt")
    me = serve._parent(os.getpid())
    assert me == (os.getpid(), psutil.Process().create_time()) and serve._alive(*me)
    assert not serve._alive(os.getpid(), me[1] - 5)  # the pid, reused by another process
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    assert not serve._alive(*serve._parent(int(done.stdout)))
