"""One atomic write and one set commit: nothing half-written is ever visible."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from datakit.core import atomic

pytestmark = pytest.mark.timeout(60)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    atomic.write_atomic(tmp_path / "a.txt", "old")
    with pytest.raises(RuntimeError):
        with atomic.atomic_file(tmp_path / "a.txt") as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert (tmp_path / "a.txt").read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]


def test_temporary_names_are_unique_hidden_and_carry_the_pid(tmp_path):
    a, b = (atomic.temporary_path(tmp_path / "x.csv") for _ in range(2))
    assert a != b and a.name.startswith(".x.csv.") and atomic.is_temporary(a.name)
    assert f".{os.getpid()}-" in a.name


def test_leftovers_of_dead_writers_are_removed_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (tmp_path / f".a.csv.{dead}-00ff.tmp").write_text("x")
    mine = atomic.temporary_path(tmp_path / "b.csv")
    mine.write_text("y")
    assert atomic.clean_leftovers(tmp_path) == [f".a.csv.{dead}-00ff.tmp"]
    assert sorted(os.listdir(tmp_path)) == [mine.name]


def test_commit_set_tags_names_still_trusted_and_deletes_the_old_set(tmp_path):
    for name in ("p_00.csv", "p_01.csv"):
        (tmp_path / name).write_text("old")
    staged = {}
    for name in ("p_00.csv", "p_01.csv"):
        staged[name] = atomic.temporary_path(tmp_path / name)
        staged[name].write_text("new")
    seen = []
    finals = atomic.commit_set(tmp_path, staged, listed=["p_00.csv", "p_01.csv"], generation=2,
                               announce=seen.append,
                               switch=lambda names: seen.append(sorted(os.listdir(tmp_path))))
    assert finals == ["p_00.g2.csv", "p_01.g2.csv"]
    # at the switch, old and new are both complete; after it, only the new set is left
    assert seen == [finals, ["p_00.csv", "p_00.g2.csv", "p_01.csv", "p_01.g2.csv"]]
    assert sorted(os.listdir(tmp_path)) == finals
    assert atomic.generation_name("p_00.g2.csv", 3) == "p_00.g3.csv"


# ---- a full disk: a real small filesystem (tmpfs), mounted in a private mount namespace
FULL_DISK = r"""
import errno, json, os, subprocess, sys
import numpy as np
import pandas as pd
disk, videos, vdisk = sys.argv[1:4]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", disk], check=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", vdisk], check=True)
import datakit
from datakit.core import manifest
from datakit.readers.records import tfrecord_writer, tfrecords
from datakit.readers import video
from datakit.readers.csv_files.shards import split_into_shards, write_shards
from datakit.readers.parquet_files.parquet import write_parquet_shards
out = {}
def attempt(name, before, write, folder):
    before()  # a small previous set, which must stay readable
    old = [(e["file"], open(e["path"], "rb").read()) for e in manifest.check(folder)]
    try:
        write()
        out[name] = {"error": None}
    except OSError as e:
        out[name] = {"error": str(e), "errno": e.errno, "left": sorted(os.listdir(folder)),
                     "kept": old == [(e["file"], open(e["path"], "rb").read())
                                     for e in manifest.check(folder)] and bool(old)}
    # the space is free again: a small write in the same process works
    where = os.path.dirname(os.path.dirname(folder)) if name == "video" else disk
    with open(os.path.join(where, name + ".small"), "wb") as f:
        f.write(b"x" * 20_000)
    os.remove(os.path.join(where, name + ".small"))
def records(n, **kw):
    with tfrecord_writer.ShardWriter(os.path.join(disk, "rec"), num_shards=2, **kw) as w:
        for _ in range(n):
            w.write(b"x" * 1000)
small = pd.DataFrame({"a": np.arange(6), "b": ["x"] * 6})
big = pd.DataFrame({"a": np.arange(20_000), "b": ["xxxxxxxxxx"] * 20_000})
floats = pd.DataFrame({"a": np.random.default_rng(0).random(20_000)})
attempt("tfrecord", lambda: records(2), lambda: records(200, overwrite=True),
        os.path.join(disk, "rec"))
attempt("write_shards", lambda: write_shards(small, os.path.join(disk, "csv"), num_shards=2),
        lambda: write_shards(big, os.path.join(disk, "csv"), num_shards=2),
        os.path.join(disk, "csv"))
attempt("split_into_shards",
        lambda: split_into_shards(small, os.path.join(disk, "split"), num_shards=(1, 1, 1)),
        lambda: split_into_shards(big, os.path.join(disk, "split")),
        os.path.join(disk, "split"))
attempt("parquet",
        lambda: write_parquet_shards(small, os.path.join(disk, "pq"), num_shards=1),
        lambda: write_parquet_shards(floats, os.path.join(disk, "pq"), num_shards=2),
        os.path.join(disk, "pq"))
convert = dict(frame_size=(32, 32), fps=15, processes=1, progress=False)
video.make_video_folder(os.path.join(videos, "few"), per_class=1, min_frames=12, max_frames=12,
                        seed=0)
video.make_video_folder(os.path.join(videos, "many"), per_class=2, min_frames=24,
                        max_frames=36, seed=0)
attempt("video",
        lambda: video.write_video_shards(os.path.join(videos, "few"), os.path.join(vdisk, "v"),
                                         **convert),
        lambda: video.write_video_shards(os.path.join(videos, "many"), os.path.join(vdisk, "v"),
                                         **convert),
        os.path.join(vdisk, "v", "train"))
# the reader's cache (Dataset.cache, written by TensorFlow): a full disk is said by TensorFlow,
# naming the file, and the half-written cache is gone; a finished cache beside it is kept
import tensorflow as tf
from datakit.readers import csv_files as dc
src, cache = os.path.join(videos, "csv"), os.path.join(disk, "cache")
def cached(rows):
    paths = write_shards({"x": np.arange(rows * 1.0), "y": np.arange(rows * 1.0)},
                         os.path.join(src, str(rows)), num_shards=2)
    return dc.csv_reader_dataset(paths, stats=dc.column_stats(paths), label="y", parse="arrow",
                                 batch_size=100, cache=cache)
def listing():
    return {f: open(os.path.join(cache, f), "rb").read() for f in sorted(os.listdir(cache))}
def labels(ds):
    return sorted(y for b in ds for y in b[1].numpy().tolist())
small_cache = labels(cached(10))
before = listing()
try:
    for _ in cached(40_000):
        pass
    out["cache"] = {"error": None}
except tf.errors.ResourceExhaustedError as e:
    out["cache"] = {"error": str(e), "left": sorted(os.listdir(cache)),
                    "kept": listing() == before and labels(cached(10)) == small_cache
                    and listing() == before}
print(json.dumps(out))
"""


@pytest.mark.timeout(300)
def test_a_full_disk_is_named_and_its_temporary_files_are_removed(tmp_path):
    """Every writer of a set (CSV, TFRecord, Parquet, video shards): a full disk is said to be
    one, naming the folder; no temporary file stays and the previous set is still whole."""
    disk, videos, vdisk = tmp_path / "disk", tmp_path / "videos", tmp_path / "vdisk"
    for d in (disk, videos, vdisk):
        d.mkdir()
    try:
        run = subprocess.run(["unshare", "-rm", sys.executable, "-c", FULL_DISK, str(disk),
                              str(videos), str(vdisk)],
                             capture_output=True, text=True, timeout=290)
    except FileNotFoundError:
        pytest.skip("no `unshare` here to mount a small tmpfs")
    if run.returncode != 0 and "mount" in run.stderr and "Operation not permitted" in run.stderr:
        pytest.skip("mounting a tmpfs is not permitted here")
    assert run.returncode == 0, run.stderr[-2000:]
    out = __import__("json").loads(run.stdout.strip().splitlines()[-1])
    for name, folder in [("tfrecord", disk / "rec"), ("write_shards", disk / "csv"),
                         ("split_into_shards", disk / "split"), ("parquet", disk / "pq"),
                         ("video", vdisk / "v" / "train")]:
        got = out[name]
        assert got["errno"] == 28, (name, got)
        assert f"no space left on the device of {folder}" in got["error"], got
        assert "temporary file(s) of this write removed" in got["error"]
        assert not [f for f in got["left"] if atomic.is_temporary(f)], (name, got["left"])
        assert got["kept"], (name, got)  # the previous set: still listed, whole and unchanged
    got = out["cache"]  # TensorFlow's words, naming the cache file; nothing of it is left
    assert "No space left on device" in got["error"] and str(disk / "cache") in got["error"]
    assert got["kept"] and len(got["left"]) == 2, got  # the finished cache: .index and .data
