"""The bad-input sweep (issue #10): bad files, changed files, killed writers, bad arguments.

Each case builds its input in its own folder and returns what the kit delivered
(a multiset of rows) or raises. ``expect`` is either the multiset (a sorted list)
or ``(exception type, [substrings the message must hold])``, where the
substrings name the file (and line, column or offset where one exists). Cases
that could crash, hang or be killed run in a process of their own with a hard timeout
(:func:`run_script`); the others run in this process under pytest's timeout.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from datakit import glassbox
from datakit.core.errors import DataError
from datakit.readers import csv_files as dc
from datakit.readers import video
from datakit.readers.csv_files import shards
from datakit.readers.csv_files.stats import column_stats
from datakit.readers.records import record_framing, tf_example, tfrecord_writer, tfrecords
from datakit.readers.records.record_framing import RecordFileError
from datakit.readers.small_sources import fixed_length, sqlite
from datakit.readers.tables.table_stats import NUMBER, TEXT

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]
GOOD = "x,y\n" + "".join(f"{i * 0.5},{i}\n" for i in range(1, 6))  # labels 1..5
LABELS = [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.fixture(scope="module")
def stats(tmp_path_factory):
    """Statistics of the x,y schema, computed once and shared by the CSV cases."""
    p = tmp_path_factory.mktemp("stats") / "good.csv"
    p.write_text(GOOD)
    return column_stats(str(p))


def labels(ds) -> list[float]:
    return sorted(float(v) for _, y in ds for v in y.numpy())


def read(files, stats, **kw):
    kw = {"shuffle_buffer_size": None, "batch_size": 64, **kw}
    return labels(dc.csv_reader_dataset(files, stats=stats, label="y", **kw))


def write(d: Path, name: str, data) -> str:
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(p)


#: What the forking parent imports once (every script's imports): each child starts there.
PRELOAD = ("datakit.core.atomic", "datakit.readers.csv_files.shards",
           "datakit.readers.records.tf_example", "datakit.readers.records.tfrecord_writer",
           "datakit.readers.records.tfrecords", "datakit.readers.video",
           "datakit.readers.video.synthetic.mp4")
_PARENT: list = []  # the forking parent (tests/forked.py), started by the first script


@pytest.fixture(scope="module", autouse=True)
def _forking_parent_closed():
    yield
    for parent in _PARENT:
        parent.close()


def run_script(code: str, d: Path, timeout: float = 90,
               shutdown: bool = False) -> subprocess.CompletedProcess:
    """Run ``code`` in a process of its own (repo on the path); a hang fails the case.

    A script that must crash or be killed runs forked from one that imported TensorFlow and
    the kit once (:mod:`forked`), as clean as a fresh interpreter after the same imports: a
    fresh one per script paid TensorFlow's import again (about 4 CPU s each). A script whose
    exit is the point (``shutdown``) runs in a fresh interpreter: a forked child's shutdown
    is not a fresh one's (the short-video case below exited in 3 s forked with the kit's exit
    hook disabled, and hung fresh), so only a fresh one shows a hook that stopped working.
    Its output goes beside ``d``."""
    if shutdown:
        env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3")
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    from forked import Forker
    if not _PARENT or _PARENT[0].proc.poll() is not None:  # none yet, or killed by a hang
        for dead in _PARENT:
            dead.close()
        _PARENT[:] = [Forker(ROOT / "tests", PRELOAD,
                             {"PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"})]
    code, out, err = _PARENT[0].run(textwrap.dedent(code), (), d.parent, timeout=timeout)
    return subprocess.CompletedProcess(["forked"], code, out, err)


# ---------------------------------------------------------------- CSV
def csv_good(d, st):
    return read(write(d, "a.csv", GOOD), st)


def csv_blank_trailing(d, st):
    return read(write(d, "a.csv", GOOD + "\n\n"), st)


def csv_blank_middle(d, st):
    return read(write(d, "a.csv", GOOD.replace("\n3,", "\n\n \t\n3,", 1) + "6,6\n"), st,
                parse="batch")


def csv_bom(d, st):
    return read(write(d, "a.csv", b"\xef\xbb\xbf" + GOOD.encode()), st)


def csv_bom_stats(d, st):
    return column_stats(write(d, "a.csv", b"\xef\xbb\xbf" + GOOD.encode())).columns


def csv_crlf(d, st):
    return read(write(d, "a.csv", GOOD.replace("\n", "\r\n")), st)


def csv_no_final_newline(d, st):
    return read(write(d, "a.csv", GOOD.rstrip("\n")), st)


def csv_nan_inf(d, st):
    p = write(d, "a.csv", "x,y\nnan,1\ninf,2\n-inf,3\n1.5,4\n")
    kinds = column_stats(p).kinds()
    return [kinds["x"]] + read(p, st)


def csv_header_only(d, st):
    return read(write(d, "a.csv", "x,y\n"), st)


def csv_empty(d, st):
    return read(write(d, "a.csv", ""), st)


def csv_directory(d, st):
    (d / "folder").mkdir()
    return read(str(d / "folder"), st)


def csv_missing(d, st):
    return read(str(d / "nope.csv"), st)


def csv_pattern_nothing(d, st):
    return read(str(d / "train_*.csv"), st)


def csv_glob_chars_literal(d, st):
    write(d, "run1.csv", "x,y\n1,100\n")
    return read(write(d, "run[1].csv", GOOD), st)


def csv_two_spellings(d, st):
    p = write(d, "a.csv", GOOD)
    return read([p, str(d / "." / "a.csv")], st)


def csv_symlink(d, st):
    p = write(d, "a.csv", GOOD)
    os.symlink(p, d / "b.csv")
    return read([p, str(d / "b.csv")], st)


def csv_stats_count_once(d, st):
    p = write(d, "a.csv", GOOD)
    return [column_stats([p, str(d / "." / "a.csv")]).rows]


def csv_gzip(d, st):  # was "not UTF-8 ... save the file as UTF-8"
    import gzip
    return read(write(d, "a.csv.gz", gzip.compress(GOOD.encode())), st)


def csv_fifo(d, st):  # a path that exists but is no file: was "no such file"
    os.mkfifo(d / "a.csv")
    return read(str(d / "a.csv"), st)


def parquet_folder(d, st):  # its message suggested '*.csv'
    from datakit.readers.parquet_files.parquet import parquet_file_set
    (d / "shards").mkdir()
    return parquet_file_set(str(d / "shards"))


def _stats_named(d, names):  # column_names on a file that has a header line
    return column_stats(write(d, "h.csv", "a,b,c\n1,2,3\n4,5,6\n"), column_names=names).header


def csv_names_on_a_header(d, st):  # blamed a stray `a` and told to pass text_columns
    return _stats_named(d, ["a", "b", "c"])


def csv_names_too_few(d, st):
    return _stats_named(d, ["x", "y"])


def csv_names_other_than_header(d, st):
    return _stats_named(d, ["x", "y", "z"])


def csv_latin1(d, st):
    return read(write(d, "a.csv", GOOD.encode() + b"\xe9,6\n"), st)


def csv_long_field(d, st):
    p = write(d, "a.csv", "t,y\n" + "a" * 200_000 + ",1\nb,2\n")
    s = column_stats(p)
    return sorted(float(v) for _, y in dc.csv_reader_dataset(
        p, stats=s, label="y", shuffle_buffer_size=None) for v in y.numpy())


def csv_long_bad_line(d, st):
    return read(write(d, "a.csv", GOOD + "9" * 10_000_000 + "x,1\n"), st)


def csv_long_bad_line_find(d, st):
    bad = dc.find_bad_lines(write(d, "a.csv", GOOD + "1," + "9" * 2_000_000 + "x\n"), st)
    return [(b.line, b.column, len(str(b)) < 1000) for b in bad]


def csv_describe_long(d, st):
    return [dc.describe_bad_line("1," + "9" * 10_000_000 + "x", ["x", "y"],
                                 {"x": NUMBER, "y": NUMBER})[0]]


def csv_many_empty_text_fields(d, st):  # exponential backtracking with optional text fields
    cols = [f"t{i}" for i in range(40)]
    return [dc.describe_bad_line("," * 39 + '"', cols, dict.fromkeys(cols, TEXT))[1]]


def csv_text_in_number(d, st):
    return read(write(d, "a.csv", GOOD + "abc,6\n"), st)


def csv_wrong_field_count(d, st):
    return read(write(d, "a.csv", GOOD + "1,2,3\n"), st, parse="batch")


def csv_unterminated_quote(d, st):
    return read(write(d, "a.csv", GOOD + '"1,6\n'), st)


def csv_empty_label(d, st):
    return read(write(d, "a.csv", GOOD + "1,\n"), st)


def csv_skip_bad(d, st):
    with pytest.warns(UserWarning, match="skipping 1 bad line"):
        return read(write(d, "a.csv", GOOD + "abc,6\n7,7\n"), st, on_bad_line="skip")


def csv_header_differs(d, st):
    return read([write(d, "a.csv", GOOD), write(d, "b.csv", "x,z\n1,1\n")], st)


def csv_header_invisible(d, st):
    return read([write(d, "a.csv", GOOD), write(d, "b.csv", "x,y \n1,1\n")], st)


def _changed(d, st, change):
    p = write(d, "a.csv", "x,y\n" + "".join(f"1,{i}\n" for i in range(100)))
    ds = dc.csv_reader_dataset(p, stats=st, label="y", shuffle_buffer_size=None)
    text = Path(p).read_text()
    Path(p).write_text(change(text))
    return labels(ds)


def csv_changed_rows_removed(d, st):
    return _changed(d, st, lambda t: "".join(t.splitlines(True)[:-3]))


def csv_changed_line_cut(d, st):
    return _changed(d, st, lambda t: t[:-2])  # "1,99\n" -> "1,9"


def csv_changed_rows_appended(d, st):
    return _changed(d, st, lambda t: t + "1,100\n1,101\n1,102\n")


def csv_shuffle_too_big(d, st):
    return read(write(d, "a.csv", GOOD), st, shuffle_buffer_size=2**31)


def csv_shuffle_capped(d, st):
    return read(write(d, "a.csv", GOOD), st, shuffle_buffer_size=10**8, seed=1)


def csv_empty_column(d, st):
    p = write(d, "a.csv", "x,y\n,1\n,2\n")
    return read(p, column_stats(p))


def csv_wrong_type_arg(d, st):
    return read(write(d, "a.csv", GOOD), st, n_readers="2")


# ---------------------------------------------------------------- CSV sets and manifests
def _set(d):
    return shards.write_shards({"x": np.arange(10.0), "y": np.arange(10.0)}, d, num_shards=2)


def set_good(d, st):
    return read(_set(d), st)


def set_truncated(d, st):
    paths = _set(d)
    Path(paths[1]).write_text("".join(Path(paths[1]).read_text().splitlines(True)[:-2]))
    return read(str(d / "part_*.csv"), st)


def set_extra_file(d, st):
    _set(d)
    write(d, "part_02.csv", "x,y\n1,1\n")
    return read(str(d / "part_*.csv"), st)


def set_totals_edited(d, st):
    _set(d)
    man = json.loads((d / "manifest.json").read_text())
    man["sets"]["part"]["files"].pop()
    (d / "manifest.json").write_text(json.dumps(man))
    return read(str(d / "part_00.csv"), st)


def set_manifest_not_json(d, st):
    _set(d)
    (d / "manifest.json").write_text("{not json")
    return read(str(d / "part_*.csv"), st)


def set_manifest_no_sets(d, st):
    _set(d)
    (d / "manifest.json").write_text(json.dumps({"format": "datakit-manifest", "version": 1}))
    return read(str(d / "part_*.csv"), st)


def set_overwrite_fewer(d, st):  # the old third shard must not be read with the new set
    shards.write_shards({"x": np.arange(9.0), "y": np.arange(9.0)}, d, num_shards=3)
    paths = shards.write_shards({"x": [1.0, 2.0], "y": [1.0, 2.0]}, d, num_shards=2)
    return read(str(d / "part_*.csv"), st) + [len(paths)]


KILL_SPLIT = """
    import os, signal, numpy as np
    from datakit.core import atomic
    from datakit.readers.csv_files import shards
    d = {d!r}
    table = {{"x": np.arange(40.0), "y": np.arange(40.0)}}
    shards.split_into_shards(table, d, num_shards=(3, 2, 2), seed=1)
    calls, real = [0], os.replace
    def replace(a, b):
        calls[0] += 1
        if calls[0] == {k} and not {after}:
            os.kill(os.getpid(), signal.SIGKILL)
        real(a, b)
        if calls[0] == {k} and {after}:
            os.kill(os.getpid(), signal.SIGKILL)
    atomic.os.replace = replace
    shards.split_into_shards(table, d, num_shards=(2, 3, 1), seed=2)
"""


def _kill_split(d, st, k, after=False):
    proc = run_script(KILL_SPLIT.format(d=str(d), k=k, after=after), d)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    got = {part: read(str(d / f"{part}_*.csv"), st) for part in ("train", "valid", "test")}
    rows = sorted(v for part in got.values() for v in part)
    assert rows == list(map(float, range(40)))  # each row exactly once, across the parts
    shards.write_shards({"x": [1.0], "y": [1.0]}, d, num_shards=1, prefix="other")  # a writer
    left = sorted(n for n in os.listdir(d) if n.endswith(".tmp"))
    old, new = (np.random.default_rng(seed).permutation(40) for seed in (1, 2))
    which = ["old" if got["train"] == sorted(map(float, old[:32])) else
             "new" if got["train"] == sorted(map(float, new[:32])) else "mixed"]
    return which + [left]


def kill_split_before_commit(d, st):
    return _kill_split(d, st, 1)  # the first replace: announcing the new generation


def kill_split_mid_renames(d, st):
    return _kill_split(d, st, 4)  # 1 announce, 6 shards (2..7), 8 the switch


def kill_split_at_switch(d, st):
    return _kill_split(d, st, 8)


def kill_split_after_switch(d, st):
    return _kill_split(d, st, 8, after=True)  # before the old files are deleted


# ---------------------------------------------------------------- TFRecord
def _records(d, n=7, num_shards=3, **kw):
    with tfrecord_writer.ShardWriter(d, num_shards=num_shards, **kw) as w:
        for i in range(n):
            w.write(tf_example.to_example({"id": i}))
    return w.paths


def ids(ds) -> list[int]:
    return sorted(int(tf_example.parse_example(s, {"id": tf.int64})["id"]) for s in ds)


def tfr_good(d, st):
    _records(d)
    return ids(tfrecords.read_records(d))


def tfr_truncated_boundary(d, st):
    p = _records(d)[1]
    p.write_bytes(p.read_bytes()[:record_framing.record_offsets(p)[1]])
    return ids(tfrecords.read_records(d))


def tfr_cut_mid_record_no_manifest(d, st):
    p = _records(d)[1]
    p.write_bytes(p.read_bytes()[:-3])
    return ids(tfrecords.read_records(d, check_manifest=False))


def tfr_flipped_no_manifest(d, st):
    p = _records(d)[0]
    (d / "manifest.json").unlink()
    data = bytearray(p.read_bytes())
    data[14] ^= 0x55
    p.write_bytes(bytes(data))
    return ids(tfrecords.read_records(d))


def tfr_zero_records(d, st):
    _records(d, n=0)
    return ids(tfrecords.read_records(d))


def tfr_manifest_lists_fewer(d, st):
    _records(d)
    man = json.loads((d / "manifest.json").read_text())
    s = man["sets"]["shard"]
    gone = s["files"].pop()
    s["totals"] = {"files": 2, "records": s["totals"]["records"] - gone["records"],
                   "bytes": s["totals"]["bytes"] - gone["bytes"]}
    (d / "manifest.json").write_text(json.dumps(man))
    return ids(tfrecords.read_records(d))


def tfr_manifest_totals(d, st):
    _records(d)
    man = json.loads((d / "manifest.json").read_text())
    man["sets"]["shard"]["totals"]["records"] = 3
    (d / "manifest.json").write_text(json.dumps(man))
    return ids(tfrecords.read_records(d))


def tfr_beside_csv_set(d, st):
    csv_paths = _set(d)
    _records(d)
    return ids(tfrecords.read_records(d)) + read(csv_paths, st)


def tfr_missing_shard(d, st):
    _records(d)[2].unlink()
    return ids(tfrecords.read_records(d))


def tfr_empty_file(d, st):
    write(d, "a.tfrecord", b"")
    return ids(tfrecords.read_records(d / "a.tfrecord"))


def tfr_gzip_as_plain(d, st):
    _records(d, compression="GZIP")
    return ids(tfrecords.read_records(d, compression=None))


def tfr_n_readers_str(d, st):
    _records(d)
    return ids(tfrecords.read_records(d, n_readers="2"))


KILL_WRITER = """
    import os, signal
    from datakit.core import atomic
    from datakit.readers.records import tf_example, tfrecord_writer, tfrecords
    d = {d!r}
    with tfrecord_writer.ShardWriter(d, num_shards=2) as w:
        for i in range(20):
            w.write(tf_example.to_example({{"id": i}}))
    calls, real = [0], os.replace
    def replace(a, b):
        calls[0] += 1
        if calls[0] == {k}:
            os.kill(os.getpid(), signal.SIGKILL)
        real(a, b)
    atomic.os.replace = replace
    with tfrecord_writer.ShardWriter(d, num_shards=3, overwrite=True) as w:
        for i in range(100, 160):
            if i == {mid_write}:
                os.kill(os.getpid(), signal.SIGKILL)
            w.write(tf_example.to_example({{"id": i}}))
"""


def _kill_writer(d, st, k=0, mid_write=0):
    proc = run_script(KILL_WRITER.format(d=str(d), k=k, mid_write=mid_write), d)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    hidden = [n for n in os.listdir(d) if n.endswith(".tmp")]
    got = ids(tfrecords.read_records(d))
    with tfrecord_writer.ShardWriter(d, num_shards=1, prefix="next") as w:  # the next writer
        w.write(b"x")
    left = [n for n in os.listdir(d) if n.endswith(".tmp")]
    return [got == list(range(20)) or got == list(range(100, 160)), bool(hidden), left]


def kill_tfr_mid_write(d, st):
    return _kill_writer(d, st, mid_write=130)


def kill_tfr_mid_commit(d, st):
    return _kill_writer(d, st, k=3)  # announce, first shard renamed, killed at the second


# ---------------------------------------------------------------- fixed-length and SQLite
def fixed_good(d, st):
    p = fixed_length.write_fixed_length(d / "x.bin", np.arange(6, dtype=np.int16).reshape(3, 2))
    return sorted(r.tolist() for r in fixed_length.fixed_length_dataset(p, [2], np.int16)
                  .as_numpy_iterator())


def fixed_truncated(d, st):
    p = fixed_length.write_fixed_length(d / "x.bin", np.arange(6, dtype=np.int16).reshape(3, 2))
    p.write_bytes(p.read_bytes()[:-1])
    return list(fixed_length.fixed_length_dataset(p, [2], np.int16))


def fixed_missing(d, st):
    return list(fixed_length.fixed_length_dataset(d / "nope.bin", [2], np.int16))


def _db(d, name="t.db"):
    p = d / name
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (id INTEGER, x REAL, s TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                    [(1, 0.5, "a"), (2, 1.5, "b"), (3_000_000_000, "abc", None)])
    con.commit()
    con.close()
    return p


def sql_rows(p, query, types):
    return sorted(tuple(v.item() if hasattr(v, "item") else v for v in r)
                  for r in sqlite.sql_dataset(p, query, types).as_numpy_iterator())


def sql_text_in_real(d, st):
    return sql_rows(_db(d), "SELECT x FROM t", (tf.float64,))


def sql_null(d, st):
    return sql_rows(_db(d), "SELECT s FROM t", (tf.string,))


def sql_int_overflow(d, st):
    return sql_rows(_db(d), "SELECT id FROM t", (tf.int32,))


def sql_trailing_semicolon(d, st):
    return sql_rows(_db(d), "SELECT id FROM t WHERE id < 3;  ", (tf.int64,))


def sql_path_hash_question(d, st):
    p = _db(d, "a#b?.db")
    rows = sql_rows(p, "SELECT id, x FROM t WHERE id < 3", (tf.int64, tf.float64))
    return rows + sorted(os.listdir(d))


def sql_missing(d, st):
    p = d / "nope#1.db"
    try:
        return sql_rows(p, "SELECT 1", (tf.int64,))
    finally:
        assert os.listdir(d) == []


def sql_not_a_db(d, st):
    return sql_rows(write(d, "x.db", "hello"), "SELECT 1", (tf.int64,))


def sql_bad_query(d, st):
    return sql_rows(_db(d), "SELECT nope FROM t", (tf.int64,))


# ---------------------------------------------------------------- Examples
def example_2_63(d, st):
    return tf_example.to_example({"a": 2**63})


def example_list_2_63(d, st):
    return tf_example.to_example({"a": [7, 2**63]})


def example_uint64(d, st):
    return tf_example.to_example({"a": np.array([2**64 - 1], np.uint64)})


def example_int64_edges(d, st):
    ex = tf_example.to_example({"a": [-2**63, 2**63 - 1]})
    return list(ex.features.feature["a"].int64_list.value)


# ---------------------------------------------------------------- video
VIDEO = """
    import sys
    from pathlib import Path
    from datakit.readers import video
    from datakit.readers.video.synthetic.mp4 import write_mp4
    d = Path({d!r})
    paths = sorted(video.write_mp4_videos(video.make_videos(6, size=16, min_frames=12,
                                                            max_frames=14, seed=0), d))
    victim = paths[3]
    if {short}:
        write_mp4(video.make_video(9, size=16, min_frames=3, max_frames=3).frames, victim)
    else:
        victim.write_bytes(victim.read_bytes()[:300])
    print("VICTIM", victim, flush=True)
    for batch in video.mp4_clip_dataset(d, clip_len=8, batch_size=2, shuffle_buffer_size=0):
        pass  # the error is not caught here: the interpreter must still exit
"""


def _video(d, short):
    proc = run_script(VIDEO.format(d=str(d), short=short), d, timeout=150, shutdown=True)
    victim = proc.stdout.split("VICTIM ", 1)[1].split()[0]
    assert proc.returncode == 1, proc.stderr[-2000:]
    return [victim in proc.stderr, "Traceback" in proc.stderr]


def video_corrupt_mp4_exits(d, st):
    return _video(d, short=False)


def video_short_mp4_exits(d, st):
    return _video(d, short=True)


def _mp4(d):
    video.write_mp4_videos(video.make_videos(3, size=16, min_frames=12, max_frames=14), d)
    return d


def video_clip_len_float(d, st):
    return video.mp4_clip_dataset(_mp4(d), clip_len=2.5)


def video_n_readers_str(d, st):
    return video.mp4_clip_dataset(_mp4(d), n_readers="2")


def video_huge_buffer(d, st):
    return video.mp4_clip_dataset(_mp4(d), shuffle_buffer_size=2**31)


def video_short_tfrecord(d, st):
    video.write_video_records(video.make_videos(3, size=16, min_frames=4, max_frames=6), d,
                              class_names=video.CLASSES, num_shards=1)
    return [len(b[0]) for b in video.clip_dataset(d, clip_len=8, batch_size=3)]


def video_buffer_capped(d, st):
    video.write_video_records(video.make_videos(3, size=16, min_frames=9, max_frames=9), d,
                              class_names=video.CLASSES, num_shards=1)
    ds = video.clip_dataset(d, clip_len=8, batch_size=3, shuffle_buffer_size=10**8, with_ids=True)
    return sorted(int(i) for b in ds for i in b["id"].numpy())


# ---------------------------------------------------------------- glass box
def gb_trace_keeps_first_pass(d, st):
    ds = glassbox.Dataset.range(8).shuffle(4, seed=3)
    fresh = [int(x) for x in glassbox.Dataset.range(8).shuffle(4, seed=3)]
    traced = [int(s.value) for s in ds.trace()[-1].steps]
    return [traced == fresh, [int(x) for x in ds] == fresh]


def gb_shuffle_seed_minus_one(d, st):
    return sorted(int(x) for x in glassbox.Dataset.range(6).shuffle(3, seed=-1))


def gb_map_none(d, st):
    return list(glassbox.Dataset.range(3).map(lambda x: None))


def gb_seed_too_big(d, st):
    return list(glassbox.Dataset.range(3).shuffle(2, seed=2**70))


# ---------------------------------------------------------------- the table
def E(exc, *parts):  # an expected error
    return (exc, list(parts))


INV = tf.errors.InvalidArgumentError
CASES = [
    (csv_good, LABELS),
    (csv_blank_trailing, LABELS),
    (csv_blank_middle, LABELS + [6.0]),
    (csv_bom, LABELS),
    (csv_bom_stats, ["x", "y"]),
    (csv_crlf, LABELS),
    (csv_no_final_newline, LABELS),
    (csv_nan_inf, ["number", 1.0, 2.0, 3.0, 4.0]),
    (csv_header_only, E(DataError, "a.csv", "line 2", "no rows")),
    (csv_empty, E(DataError, "a.csv", "empty")),
    (csv_directory, E(IsADirectoryError, "folder", "is a folder")),
    (csv_missing, E(FileNotFoundError, "nope.csv")),
    (csv_pattern_nothing, E(FileNotFoundError, "train_*.csv", "matches no file")),
    (csv_glob_chars_literal, LABELS),
    # each file once (core.paths, #47): named twice is refused, naming it (it was read once)
    (csv_two_spellings, E(ValueError, "a.csv", "twice", "list it once")),
    (csv_symlink, E(ValueError, "a.csv", "b.csv", "twice", "list it once")),
    (csv_stats_count_once, E(ValueError, "a.csv", "twice", "list it once")),
    (csv_latin1, E(DataError, "a.csv", "line 7", "not UTF-8")),
    (csv_gzip, E(DataError, "a.csv.gz", "gzip-compressed", "decompress it")),
    (csv_names_on_a_header, E(DataError, "h.csv", "line 1 holds the column names given")),
    (csv_names_too_few, E(DataError, "h.csv", "3 fields, but column_names names 2")),
    (csv_names_other_than_header, E(DataError, "h.csv", "looks like a header line")),
    (csv_fifo, E(OSError, "a.csv", "not a regular file")),
    (parquet_folder, E(IsADirectoryError, "shards", "*.parquet")),
    (csv_long_field, [1.0, 2.0]),
    (csv_long_bad_line, E(INV, "a.csv", "line 7", "column x", "characters)")),
    (csv_long_bad_line_find, [(7, "y (2 of 2)", True)]),
    (csv_describe_long, ["y (2 of 2)"]),
    (csv_many_empty_text_fields, ["unterminated quote"]),
    (csv_text_in_number, E(INV, "a.csv", "line 7", "column x", "expected a number, got `abc`")),
    (csv_wrong_field_count, E(INV, "a.csv", "line 7", "found 3 fields, expected 2")),
    (csv_unterminated_quote, E(INV, "a.csv", "line 7", "unterminated quote")),
    (csv_empty_label, E(INV, "a.csv", "line 7", "the label is empty")),
    (csv_skip_bad, LABELS + [7.0]),
    (csv_header_differs, E(DataError, "b.csv", "line 1", "`x,z` differs")),
    (csv_header_invisible, E(DataError, "b.csv", "line 1", "'x,y '")),
    (csv_changed_rows_removed, E(INV, "a.csv", "changed after it was checked")),
    (csv_changed_line_cut, E(INV, "a.csv", "changed after it was checked")),
    (csv_changed_rows_appended, E(INV, "a.csv", "changed after it was checked")),
    (csv_shuffle_too_big, E(ValueError, "shuffle_buffer_size=2147483648", "TensorFlow")),
    (csv_shuffle_capped, LABELS),
    (csv_empty_column, E(DataError, "a.csv", "column x", "no value at all")),
    (csv_wrong_type_arg, E(TypeError, "n_readers", "'2'")),
    (set_good, [float(i) for i in range(10)]),
    (set_truncated, E(DataError, "part_01.csv", "manifest says")),
    (set_extra_file, E(DataError, "part_02.csv", "does not list it")),
    (set_totals_edited, E(DataError, "manifest.json", "totals")),
    (set_manifest_not_json, E(DataError, "manifest.json", "not valid JSON")),
    (set_manifest_no_sets, E(DataError, "manifest.json", "no `sets`")),
    (set_overwrite_fewer, [1.0, 2.0, 2]),
    (kill_split_before_commit, ["old", []]),
    (kill_split_mid_renames, ["old", []]),
    (kill_split_at_switch, ["old", []]),
    (kill_split_after_switch, ["new", []]),
    (tfr_good, list(range(7))),
    (tfr_truncated_boundary, E(RecordFileError, "shard-00001-of-00003.tfrecord",
                               "manifest says")),
    (tfr_cut_mid_record_no_manifest, E(RecordFileError, "shard-00001-of-00003.tfrecord",
                                       "at byte")),
    (tfr_flipped_no_manifest, E(RecordFileError, "shard-00000-of-00003.tfrecord",
                                "at byte 12", "corrupted record")),
    (tfr_zero_records, E(RecordFileError, "hold no records")),
    (tfr_manifest_lists_fewer, E(DataError, "shard-00002-of-00003.tfrecord",
                                 "does not list it")),
    (tfr_manifest_totals, E(DataError, "manifest.json", "totals")),
    (tfr_beside_csv_set, list(range(7)) + [float(i) for i in range(10)]),
    (tfr_missing_shard, E(RecordFileError, "shard-00002-of-00003.tfrecord", "missing")),
    (tfr_empty_file, E(RecordFileError, "a.tfrecord", "empty")),
    (tfr_gzip_as_plain, E(RecordFileError, "shard-00000-of-00003.tfrecord.gz", "GZIP")),
    (tfr_n_readers_str, E(TypeError, "n_readers")),
    (kill_tfr_mid_write, [True, True, []]),
    (kill_tfr_mid_commit, [True, True, []]),
    (fixed_good, [[0, 1], [2, 3], [4, 5]]),
    (fixed_truncated, E(DataError, "x.bin", "whole number")),
    (fixed_missing, E(FileNotFoundError, "nope.bin", "missing")),
    (sql_text_in_real, E(DataError, "t.db", "column x", "row 3", "'abc'")),
    (sql_null, E(DataError, "t.db", "column s", "row 3", "NULL")),
    (sql_int_overflow, E(DataError, "t.db", "column id", "row 3", "3000000000")),
    (sql_trailing_semicolon, [(1,), (2,)]),
    (sql_path_hash_question, [(1, 0.5), (2, 1.5), "a#b?.db"]),
    (sql_missing, E(FileNotFoundError, "nope#1.db", "missing")),
    (sql_not_a_db, E(DataError, "x.db", "not a SQLite")),
    (sql_bad_query, E(DataError, "t.db", "no such column")),
    (example_2_63, E(ValueError, "'a'", "9223372036854775808", "int64")),
    (example_list_2_63, E(ValueError, "'a'", "9223372036854775808", "int64")),
    (example_uint64, E(ValueError, "'a'", "18446744073709551615", "int64")),
    (example_int64_edges, [-2**63, 2**63 - 1]),
    (video_corrupt_mp4_exits, [True, True]),
    (video_short_mp4_exits, [True, True]),
    (video_clip_len_float, E(TypeError, "clip_len", "2.5")),
    (video_n_readers_str, E(TypeError, "n_readers", "'2'")),
    (video_huge_buffer, E(ValueError, "2147483648")),
    (video_short_tfrecord, E(DataError, "video id", "fewer than the 8 one clip spans")),
    (video_buffer_capped, [0, 1, 2]),
    (gb_trace_keeps_first_pass, [True, True]),
    (gb_shuffle_seed_minus_one, list(range(6))),
    (gb_map_none, E(TypeError, "returned None")),
    (gb_seed_too_big, E(ValueError, "seed=")),
]


# Video arguments: refused by name with the fix before any file is opened (the folder
# does not even exist), never from inside a traced function or a worker.
def _video_call(writer: bool, **kw):
    from datakit.readers import video
    kw = {"frame_size": (16, 16), **kw}
    def call(d, st):
        if writer:
            return video.write_video_shards(d / "none", d / "out", processes=1,
                                            progress=False, **kw)
        return video.video_dataset_from_directory(d / "none", clip_len=4, **kw)
    call.__name__ = ("shards_" if writer else "videos_") + "_".join(
        f"{k}_{v}" for k, v in kw.items() if k != "frame_size" or v != (16, 16))
    return call


for _writer in (False, True):
    CASES += [
        (_video_call(_writer, frame_size=32), E(TypeError, "frame_size=32", "(height, width)")),
        (_video_call(_writer, fps=float("inf")), E(ValueError, "fps=inf", "frame rate > 0")),
        (_video_call(_writer, validation_split=0.5, seed=-1,
                     **({} if _writer else {"subset": "training"})),
         E(ValueError, "seed=-1", "int >= 0")),
    ]


@pytest.mark.parametrize("case, expect", [pytest.param(f, e, id=f.__name__) for f, e in CASES])
def test_sweep(case, expect, stats, tmp_path):
    d = tmp_path / "case"
    d.mkdir()
    if isinstance(expect, tuple):
        exc, parts = expect
        with pytest.raises(exc) as info:
            case(d, stats)
        message = str(info.value)
        assert all(p in message for p in parts), message[:3000]
    else:
        assert case(d, stats) == expect


def test_the_sweep_is_large_enough():
    assert len(CASES) >= 60 and len({f.__name__ for f, _ in CASES}) == len(CASES)


# ---------------------------------------------------------------- an installed kit
INSTALLED = """
import os, datakit
print(datakit.DATA_DIR)
print(os.path.isdir(datakit.DATA_DIR), os.access(datakit.DATA_DIR, os.W_OK))
print(datakit.data_path("generated", "x"))
try:
    datakit.data_path("housing", "housing.csv")
except FileNotFoundError as e:
    print("FileNotFoundError:", e)
"""


@pytest.mark.timeout(60)
def test_an_installed_kit_has_a_data_folder_that_exists_and_names_missing_shipped_data(
        tmp_path):
    import shutil
    site = tmp_path / "site-packages"
    shutil.copytree(ROOT / "datakit", site / "datakit")   # no data/ beside it, as in a wheel
    env = {k: v for k, v in os.environ.items() if k != "DATAKIT_DATA_DIR"}
    env.update(PYTHONPATH=str(site), HOME=str(tmp_path / "home"), XDG_CACHE_HOME="")
    run = subprocess.run([sys.executable, "-c", INSTALLED], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.stderr
    folder, exists, generated, error = run.stdout.splitlines()
    assert folder == str((tmp_path / "home" / ".cache" / "datakit" / "data").resolve())
    assert exists == "True True" and generated == folder + "/generated/x"
    assert error.startswith(f"FileNotFoundError: {folder}/housing/housing.csv: this datakit has "
                            "no copy of the shipped data") and "DATAKIT_DATA_DIR" in error
