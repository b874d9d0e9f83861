"""A file copied over keeping its size and modification time is named by every reader.

``cp -p new old`` rewrites ``old`` in place and sets its modification time back;
``rsync -t`` writes a new file beside it and renames it over (a new inode), with
the old modification time. Either way the size and modification time are those
the reader saw, and only the one rule of :mod:`datakit.core.file_facts` (change
time and inode too, or the content where the kit hashes it) tells. Each test here
replaces one file in both ways, with other bytes of the same size, after a reader,
cache or converter looked at it, and expects the file named.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf

from datakit.core.errors import DataError
from datakit.core.file_facts import BUILD_AGAIN, change, file_stamp

pytestmark = pytest.mark.timeout(300)

WAYS = ["cp -p", "rsync -t"]


def copy_over(path, content: bytes, way: str) -> None:
    """Put ``content`` (the file's size, other bytes) in ``path`` as ``way`` would, keeping
    its modification time: in place (``cp -p``) or renamed over it (``rsync -t``)."""
    before = os.stat(path)
    assert len(content) == before.st_size and Path(path).read_bytes() != content
    if way == "cp -p":
        with open(path, "r+b") as f:
            f.write(content)
    else:
        Path(f"{path}.tmp").write_bytes(content)
        os.replace(f"{path}.tmp", path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert (after.st_ino != before.st_ino) == (way == "rsync -t")


def flipped(path, at: float = 0.5, n: int = 64) -> bytes:
    """The file's bytes with ``n`` of them, from the fraction ``at`` of its length, inverted."""
    data = bytearray(Path(path).read_bytes())
    start = int(len(data) * at)
    data[start:start + n] = bytes(b ^ 0xFF for b in data[start:start + n])
    return bytes(data)


@pytest.mark.parametrize("way", WAYS)
def test_the_rule_names_what_changed(tmp_path, way):
    path = tmp_path / "a.bin"
    path.write_bytes(b"abcdef")
    then = file_stamp(path)
    assert change(path, then) is None
    copy_over(path, b"ABCDEF", way)
    said = change(path, then)
    assert said is not None and said.startswith("the same size and modification time")
    assert ("replaced by another file" in said) == (way == "rsync -t")
    path.unlink()
    assert change(path, then).startswith("gone or unreadable")


@pytest.mark.parametrize("way", WAYS)
def test_parquet_reader(tmp_path, way):
    from datakit.readers.parquet_files import parquet as dp

    paths = [str(tmp_path / f"p{k}.parquet") for k in range(2)]
    for k, path in enumerate(paths):  # uncompressed: the size depends on the row count only
        pq.write_table(pa.table({"x": np.arange(100, dtype=np.float64) + 100 * k}), path,
                       row_group_size=10, compression="none", use_dictionary=False)
    it = iter(dp.parquet_dataset(paths, batch_size=10, shuffle_buffer_size=None, n_readers=1,
                                 prefetch=None))
    next(it)
    copy_over(paths[1], flipped(paths[1], at=0.3, n=8), way)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"p1\.parquet: the file changed since the reader checked it"):
        for _ in it:
            pass


@pytest.mark.parametrize("parse", ["line", "batch", "vectorized", "chunk", "arrow"])
@pytest.mark.parametrize("way", WAYS)
def test_csv_reader(tmp_path, way, parse):
    from datakit.readers import csv_files as dc

    paths = [str(tmp_path / f"part_{k}.csv") for k in range(2)]
    for path in paths:
        Path(path).write_text("x,y\n" + "".join(f"{v},{v}\n" for v in np.arange(100) % 10))
    ds = dc.csv_reader_dataset(paths, stats=dc.column_stats(paths), label="y", parse=parse,
                               n_readers=1, shuffle_buffer_size=None, batch_size=100,
                               n_parse_threads=1, prefetch=None)
    assert sum(len(y) for _, y in ds) == 200
    other = "x,y\n" + "".join(f"{v},{v}\n" for v in (np.arange(100) + 1) % 10)
    copy_over(paths[1], other.encode(), way)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"CSV file changed after it was checked.*part_1\.csv"):
        for _ in ds:  # the next epoch
            pass


def _videos(folder: Path, per: int = 2) -> list[Path]:
    from datakit.readers import video

    paths = []
    for c, name in enumerate(("a", "b")):
        for k in range(per):
            frames = video.make_video(c, size=16, min_frames=10, max_frames=10, seed=k).frames
            paths.append(video.write_video(frames, folder / name / f"{name}{k}.mp4"))
    return paths


@pytest.mark.parametrize("way", WAYS)
def test_direct_video_reader(tmp_path, way):
    from datakit.readers import video

    paths = _videos(tmp_path / "v")
    ds = video.video_dataset_from_directory(tmp_path / "v", clip_len=4, batch_size=1,
                                            shuffle=False, verbose=False)
    copy_over(paths[-1], flipped(paths[-1]), way)  # listed, not read yet
    read = 0
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"b1\.mp4: changed since the folder was listed \(the same size"):
        for _ in ds:
            read += 1
    assert read == 3  # the three unchanged videos, then the error: never a clip of the new one


@pytest.mark.parametrize("way", WAYS)
def test_video_converter_compares_each_video_with_its_listing(tmp_path, monkeypatch, way):
    from datakit.readers import video
    from datakit.readers.video.converter import conversion

    paths = _videos(tmp_path / "v")
    listed = conversion.list_videos

    def listed_then_replaced(*args, **kwargs):  # replaced between the listing and its worker
        folder = listed(*args, **kwargs)
        copy_over(paths[-1], flipped(paths[-1]), way)
        return folder

    monkeypatch.setattr(conversion, "list_videos", listed_then_replaced)
    with pytest.raises(DataError, match="changed since the folder was listed") as e:
        video.write_video_shards(tmp_path / "v", tmp_path / "o1", frame_size=(16, 16),
                                 processes=1, progress=False)
    assert e.value.path == str(paths[-1])
    paths = _videos(tmp_path / "w")
    r = video.write_video_shards(tmp_path / "w", tmp_path / "o2", frame_size=(16, 16),
                                 processes=1, progress=False, on_bad_file="skip")
    assert [p for p, _ in r["skipped"]] == [str(paths[-1])] and r["converted"] == 3


def test_video_converter_names_a_video_replaced_by_a_longer_one_while_it_is_read(
        tmp_path, monkeypatch):
    """The worker compares the video with its listing after its last frame too: a video
    replaced by a longer one while it is read would be cut to the listed frame count."""
    from datakit.readers import video
    from datakit.readers.video.converter import part_files

    paths = _videos(tmp_path / "v")
    victim = paths[0]
    read = part_files.iter_jpegs

    def read_then_replaced(info, **kwargs):
        yield from read(info, **kwargs)
        if info.path == str(victim):
            longer = video.make_video(0, size=16, min_frames=30, max_frames=30, seed=5).frames
            video.write_video(longer, victim)

    monkeypatch.setattr(part_files, "iter_jpegs", read_then_replaced)
    with pytest.raises(DataError, match=r"a0\.mp4: changed since the folder was listed \(now"):
        video.write_video_shards(tmp_path / "v", tmp_path / "o", frame_size=(16, 16),
                                 processes=1, progress=False)
    assert not list((tmp_path / "o" / ".parts").glob("*a0*"))  # no part of the cut video


@pytest.mark.parametrize("way", WAYS)
def test_video_probe_cache(tmp_path, way):
    from datakit.readers.video.decoding import decoding

    paths = _videos(tmp_path / "v", per=1)
    decoding.probe(paths[0])  # kept in the cache
    copy_over(paths[0], b"\0" * os.path.getsize(paths[0]), way)  # not a video any more
    with pytest.raises(DataError, match="not a video"):  # probed again, not from the cache
        decoding.probe(paths[0])


@pytest.mark.parametrize("way", WAYS)
def test_tf_transform_sources(tmp_path, way):
    from datakit.readers.tf_transform.transform_folder import check_unchanged, source_facts

    path = tmp_path / "a.csv"
    path.write_text("x,y\n1,2\n")
    made_from = source_facts([path])
    check_unchanged(made_from)
    copy_over(path, b"x,y\n3,4\n", way)
    with pytest.raises(DataError, match=r"a\.csv: changed while tf.Transform read it \(the same"):
        check_unchanged(made_from)


@pytest.mark.parametrize("whole", [True, False], ids=["hashed", "large"])
@pytest.mark.parametrize("way", WAYS)
def test_checkpoint_inputs(tmp_path, way, whole):
    """Hashed whole, the content tells; a large input (hashed at its ends only), the stamp."""
    from datakit.readers.checkpoints import checkpoint_fingerprint as fp

    path = tmp_path / "long.bin"
    path.write_bytes(bytes(range(256)) * 40_000)  # 10 MB: its middle beyond the ends hashed
    saved = {str(path): fp.input_fingerprint(str(path), whole)}
    assert fp.input_changes(saved) is None
    copy_over(path, flipped(path), way)
    changed = fp.input_changes(saved)
    assert changed is not None and changed[0] == str(path)
    assert ("another sha256" if whole else "another inode change time") in changed[1]


def test_a_touch_that_changes_no_byte_is_no_change_where_the_content_is_known(
        tmp_path, monkeypatch):
    from datakit.core import file_facts

    path = tmp_path / "a.bin"
    path.write_bytes(b"abcdef")
    then, digest = file_stamp(path), file_facts.content_digest(path)
    os.utime(path, ns=(1, 1))
    assert change(path, then) is not None  # without the content: changed, to be safe
    assert change(path, then, digest=digest) is None
    with monkeypatch.context() as m:  # the same stamp again: not read again
        m.setattr(file_facts, "content_digest", lambda p: pytest.fail("read again"))
        assert change(path, then, digest=digest) is None
    copy_over(path, b"abcdeF", "rsync -t")
    assert change(path, then, digest=digest).endswith("its bytes differ")
    path.write_bytes(b"abcdefg")  # another size: changed, no need to read it
    with monkeypatch.context() as m:
        m.setattr(file_facts, "content_digest", lambda p: pytest.fail("read"))
        assert change(path, then, digest=digest).startswith("now 7 bytes, then 6")


def test_touched_videos_are_read_and_converted_as_listed(tmp_path, monkeypatch):
    """``touch`` after the listing (a sync tool, a backup restoring times) changes no byte:
    the direct reader reads on and the converter converts, each comparing the content."""
    from datakit.readers import video
    from datakit.readers.video.converter import conversion

    paths = _videos(tmp_path / "v")
    ds = video.video_dataset_from_directory(tmp_path / "v", clip_len=4, batch_size=1,
                                            shuffle=False, verbose=False)
    assert sum(1 for _ in ds) == 4
    for p in paths:
        os.utime(p)
    assert sum(1 for _ in ds) == 4  # the next epoch: each video read, none refused
    listed = conversion.list_videos

    def listed_then_touched(*args, **kwargs):
        folder = listed(*args, **kwargs)
        for p in paths:
            os.utime(p)
        return folder

    monkeypatch.setattr(conversion, "list_videos", listed_then_touched)
    r = video.write_video_shards(tmp_path / "v", tmp_path / "o", frame_size=(16, 16),
                                 processes=1, progress=False)
    assert r["converted"] == 4 and r["skipped"] == []


@pytest.mark.parametrize("way", WAYS)
def test_mp4_clip_reader(tmp_path, way):
    from datakit.readers import video

    paths = sorted(video.write_mp4_videos(
        video.make_videos(4, size=16, min_frames=8, max_frames=8, seed=0), tmp_path))
    ds = video.mp4_clip_dataset(tmp_path, clip_len=4, batch_size=1, shuffle_buffer_size=0)
    assert sum(1 for _ in ds) == 4
    copy_over(paths[2], flipped(paths[2]), way)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"{paths[2].name}: the file changed since the reader checked it "
                             r"\(the same size.*old and new clips\. Build the dataset again"):
        for _ in ds:
            pass


def _epochs_then_changed(ds, path, way, content: bytes | None = None) -> str:
    """One whole epoch, then ``path`` copied over (other bytes, its size kept, ``way``):
    the next epoch's error message."""
    first = [x for x in ds]
    assert first and len([x for x in ds]) == len(first)  # a second epoch: nothing refused
    copy_over(path, flipped(path) if content is None else content, way)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        for _ in ds:
            pass
    return str(e.value)


@pytest.mark.parametrize("way", WAYS)
def test_record_reader(tmp_path, way):
    from datakit.readers.records.tfrecord_writer import ShardWriter
    from datakit.readers.records.tfrecords import read_records

    with ShardWriter(tmp_path, num_shards=2) as w:
        for i in range(20):
            w.write(f"record {i:03d}".encode())
    said = _epochs_then_changed(read_records(tmp_path, n_readers=2), w.paths[1], way)
    assert re.search(rf"{re.escape(str(w.paths[1]))}: the file changed since the reader "
                     r"checked it \(the same size and modification time.*old and new "
                     r"records\. Build the dataset again", said), said


@pytest.mark.parametrize("way", WAYS)
def test_sqlite_reader(tmp_path, way):
    from datakit.readers.small_sources.sqlite import sql_dataset, write_sqlite

    path = write_sqlite(tmp_path / "t.db", "t", {"id": list(range(50)), "x": [0.5] * 50})
    other = write_sqlite(tmp_path / "o.db", "t", {"id": list(range(50)), "x": [1.5] * 50})
    ds = sql_dataset(path, "SELECT id, x FROM t", ["int64", "float64"])
    said = _epochs_then_changed(ds, path, way, other.read_bytes())
    assert re.search(r"t\.db: the file changed since the reader checked it \(the same size",
                     said), said


def test_sqlite_reader_names_a_write_committed_to_the_database(tmp_path):
    import sqlite3

    from datakit.readers.small_sources.sqlite import sql_dataset, write_sqlite

    path = write_sqlite(tmp_path / "t.db", "t", {"id": list(range(5)), "x": [0.5] * 5})
    ds = sql_dataset(path, "SELECT id, x FROM t", ["int64", "float64"])
    assert [float(x) for _, x in ds] == [0.5] * 5
    with sqlite3.connect(path) as con:  # a NULL the build's checks would have refused
        con.execute("UPDATE t SET x = NULL WHERE id = 3")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"t\.db: the file changed since the reader checked it.*Build the "
                             r"dataset again after the database changes"):
        for _ in ds:
            pass


@pytest.mark.parametrize("way", WAYS)
def test_numbered_lines(tmp_path, way):
    from datakit.readers.small_sources.text_lines import numbered_lines

    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(40)))
    said = _epochs_then_changed(numbered_lines(path), path, way)
    assert re.search(r"lines\.txt: the file changed since the reader checked it \(the same "
                     r"size.*old and new lines", said), said


@pytest.fixture(scope="module")
def transform_run_made(tmp_path_factory):
    """One tf.Transform run (a Beam pipeline: seconds), copied by each test that changes it."""
    pytest.importorskip("tensorflow_transform", reason="needs the transform extra")
    from datakit.readers.csv_files import write_shards
    from datakit.readers.tf_transform import transform

    made = tmp_path_factory.mktemp("transform")
    table = {"x": np.arange(40, dtype=np.float64), "y": np.arange(40, dtype=np.float64)}
    plan = transform.plan_transform(write_shards(table, made / "csv", num_shards=2), label="y")
    transform.run_transform(plan, made / "run", workers=1)
    return made / "run"


def _transform_run_copy(made, tmp_path):
    """A copy of the made run in ``tmp_path`` and its first transformed file."""
    import shutil
    shutil.copytree(made, tmp_path / "run")
    return tmp_path / "run", sorted((tmp_path / "run").glob("*/transformed-*"))[0]


@pytest.mark.parametrize("way", WAYS)
def test_transform_run(tmp_path, way, transform_run_made):
    from datakit.readers.tf_transform.transform_run import TransformRun

    run, victim = _transform_run_copy(transform_run_made, tmp_path)
    said = _epochs_then_changed(TransformRun(run).dataset(batch_size=8), victim, way)
    assert re.search(rf"{victim.name}: the file changed since the reader checked it \(the "
                     r"same size.*Build TransformRun\(output_dir\)\.dataset\(\) again", said), said


def test_clip_dataset_names_a_shard_whose_records_changed(tmp_path):
    """The clip reader stays a graph without Python (tf.data service workers run it), so it
    finds a changed shard by what it reads (the records' CRCs, each chunk's video and
    first frame), not by the file's stamp: a ``touch`` is no change, other bytes are."""
    from datakit.readers import video

    video.write_video_records(video.make_videos(4, size=16, min_frames=8, max_frames=8, seed=0),
                              tmp_path, class_names=video.CLASSES, num_shards=2)
    victim = sorted(tmp_path.glob("**/*.tfrecord*"))[0]
    ds = video.clip_dataset(tmp_path, clip_len=4, batch_size=1, seed=0)
    n = sum(1 for _ in ds)
    os.utime(victim)
    assert sum(1 for _ in ds) == n
    data = victim.read_bytes()  # every record's bytes but the first's length: each CRC fails
    copy_over(victim, data[:8] + bytes(b ^ 0xFF for b in data[8:]), "cp -p")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"{re.escape(str(victim))}\] \[does not hold video.*replaced or "
                             r"changed since this dataset was built"):
        for _ in ds:
            pass


def _replaced_after(monkeypatch, owner, name: str, path, way: str,
                    content: bytes | None = None) -> None:
    """``owner.name`` (a reader's check, run for real) with ``path`` copied over (other
    bytes, its size kept, ``way``) right after its first call returns: a file replaced
    while or just after the build checked it. The stamp the epochs compare with must be
    taken before the check, or it is the new file's and the new bytes are read unnamed."""
    real = getattr(owner, name)
    done = []

    def checked_then_replaced(*args, **kwargs):
        out = real(*args, **kwargs)
        if not done:
            done.append(True)
            copy_over(path, flipped(path) if content is None else content, way)
        return out

    monkeypatch.setattr(owner, name, checked_then_replaced)


def _first_epoch_refused(ds, path) -> str:
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        for _ in ds:
            pass
    assert re.search(rf"{re.escape(str(path))}: the file changed since the reader checked it",
                     str(e.value)), str(e.value)
    return str(e.value)


@pytest.mark.parametrize("way", WAYS)
def test_record_reader_names_a_shard_replaced_just_after_its_check(tmp_path, monkeypatch, way):
    from datakit.readers.records import tfrecords
    from datakit.readers.records.tfrecord_writer import ShardWriter

    with ShardWriter(tmp_path, num_shards=2) as w:
        for i in range(20):
            w.write(f"record {i:03d}".encode())
    _replaced_after(monkeypatch, tfrecords, "check_shards", w.paths[1], way)
    said = _first_epoch_refused(tfrecords.read_records(tmp_path, n_readers=2), w.paths[1])
    assert "old and new records" in said


@pytest.mark.parametrize("way", WAYS)
def test_sqlite_reader_names_a_database_replaced_just_after_its_check(tmp_path, monkeypatch,
                                                                      way):
    from datakit.readers.small_sources import sqlite

    path = sqlite.write_sqlite(tmp_path / "t.db", "t", {"id": list(range(50)), "x": [0.5] * 50})
    other = sqlite.write_sqlite(tmp_path / "o.db", "t",
                                {"id": list(range(50)), "x": [1.5] * 50})
    _replaced_after(monkeypatch, sqlite, "_check_values", path, way, other.read_bytes())
    _first_epoch_refused(sqlite.sql_dataset(path, "SELECT id, x FROM t", ["int64", "float64"]),
                         path)


@pytest.mark.parametrize("way", WAYS)
def test_numbered_lines_names_a_file_replaced_just_after_its_check(tmp_path, monkeypatch, way):
    from datakit.readers.small_sources import text_lines

    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(40)))
    _replaced_after(monkeypatch, text_lines, "_refuse_binary", path, way)
    said = _first_epoch_refused(text_lines.numbered_lines(path), path)
    assert "old and new lines. " + BUILD_AGAIN.capitalize() in said  # the one-file fix, shared


@pytest.mark.parametrize("way", WAYS)
def test_fixed_length_names_a_file_replaced_just_after_its_size_check(tmp_path, monkeypatch,
                                                                      way):
    from datakit.readers.small_sources import fixed_length

    path = fixed_length.write_fixed_length(tmp_path / "x.bin",
                                           np.arange(40, dtype=np.int16).reshape(20, 2))
    _replaced_after(monkeypatch, fixed_length, "_whole_records", path, way)
    said = _first_epoch_refused(fixed_length.fixed_length_dataset(path, [2], np.int16), path)
    assert "old and new records. " + BUILD_AGAIN.capitalize() in said


def test_transform_run_names_a_file_replaced_just_after_its_check(tmp_path, monkeypatch,
                                                                 transform_run_made):
    from datakit.readers.tf_transform.transform_run import TransformRun

    run, victim = _transform_run_copy(transform_run_made, tmp_path)
    _replaced_after(monkeypatch, TransformRun, "_transformed_files", victim, "rsync -t")
    _first_epoch_refused(TransformRun(run).dataset(batch_size=8), victim)
