"""The converter's part files (written without TensorFlow) and its shards (assembled as parts
come in, in any order), against TensorFlow's own writer and reader."""

from __future__ import annotations

import random
import struct

import pytest
import tensorflow as tf

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.readers.records import tf_example
from datakit.readers.records.record_framing import record_offsets
from datakit.readers.video.converter import generations
from datakit.readers.video.converter.part_files import sequence_example_bytes, write_part
from datakit.readers.video.converter.shard_sets import ShardSets


def test_a_part_is_the_records_tensorflow_writes_one_per_chunk(tmp_path):
    jpegs = [bytes([k]) * (k * 37 % 300) for k in range(40)]  # some empty, some > 127 bytes
    context = {"id": 2**40 + 3, "label": -1, "length": len(jpegs),
               "source": "vidéo/ä b.mp4".encode()}
    ours = sequence_example_bytes(context, jpegs)
    theirs = tf_example.to_sequence_example(context, {"frames": jpegs})
    assert tf.train.SequenceExample.FromString(ours) == theirs

    write_part(tmp_path / "p.tfrecord", source="vidéo/ä b.mp4", i=2**40 + 3, label=-1,
               jpegs=jpegs, chunk_frames=16)
    written = tmp_path / "tf.tfrecord"
    contexts = [{"id": 2**40 + 3, "label": -1, "length": 40, "first": first,
                 "source": "vidéo/ä b.mp4".encode()} for first in (0, 16, 32)]
    ours = [sequence_example_bytes(c, jpegs[c["first"]:c["first"] + 16]) for c in contexts]
    with tf.io.TFRecordWriter(str(written)) as w:
        for record in ours:
            w.write(record)
    assert (tmp_path / "p.tfrecord").read_bytes() == written.read_bytes()  # CRCs and all
    read = [tf.train.SequenceExample.FromString(r.numpy())
            for r in tf.data.TFRecordDataset(str(tmp_path / "p.tfrecord"))]
    assert read == [tf_example.to_sequence_example(c, {"frames": jpegs[c["first"]:][:16]})
                    for c in contexts]  # the last chunk holds the 8 frames left
    sizes = [len(r) + 16 for r in ours]
    assert record_offsets(tmp_path / "p.tfrecord") == [0, sizes[0], sizes[0] + sizes[1]]


def test_a_part_from_an_iterator_holds_one_record_of_jpegs_at_a_time(tmp_path):
    live, peak = [0], [0]

    class Jpeg(bytes):  # counts the JPEGs alive
        def __del__(self):
            live[0] -= 1

    def jpegs(n):
        for k in range(n):
            live[0] += 1
            peak[0] = max(peak[0], live[0])
            yield Jpeg(bytes([k]) * (k % 7 * 40))

    write_part(tmp_path / "it.tfrecord", source="v.mp4", i=1, label=0, jpegs=jpegs(150),
               frames=150, chunk_frames=16)
    write_part(tmp_path / "list.tfrecord", source="v.mp4", i=1, label=0,
               jpegs=[bytes([k]) * (k % 7 * 40) for k in range(150)], chunk_frames=16)
    assert (tmp_path / "it.tfrecord").read_bytes() == (tmp_path / "list.tfrecord").read_bytes()
    assert peak[0] == 16 and live[0] == 0  # one record's JPEGs at most, never the video's


def test_a_part_whose_jpegs_fail_or_miscount_is_not_written(tmp_path):
    def failing():
        yield from [b"j"] * 20
        raise DataError("v.mp4", "decoding failed (test)")

    closed = []

    def video(n):  # a video's JPEGs, its file open until the generator ends
        try:
            yield from [b"j"] * n
        finally:
            closed.append(n)

    for jpegs, frames, error in [(failing(), 30, DataError), (video(29), 30, ValueError),
                                 (video(31), 30, ValueError)]:
        with pytest.raises(error, match="v.mp4") as raised:
            write_part(tmp_path / "p.tfrecord", source="v.mp4", i=0, label=0, jpegs=jpegs,
                       frames=frames, chunk_frames=8)
        assert list(tmp_path.iterdir()) == []  # no part, no temporary file
        assert raised.traceback  # (kept: its frames still hold the JPEGs' generator)
    assert closed == [29, 31]  # one more than said: its video closed then, not left open


def _ids(folder):
    return [int(tf.train.SequenceExample.FromString(r.numpy()).context.feature["id"]
                .int64_list.value[0])
            for f in sorted(folder.glob("videos-*.tfrecord")) for r in tf.data.TFRecordDataset(
                str(f))]


def test_shards_come_out_in_order_whatever_order_the_parts_arrive(tmp_path):
    out, parts = tmp_path / "out", tmp_path / "out" / ".parts"
    parts.mkdir(parents=True)
    names = [f"{i:06d}-x.tfrecord" for i in range(10)]
    for i, name in enumerate(names):
        write_part(parts / name, source=f"v{i}.mp4", i=i, label=i % 2, jpegs=[b"j"] * (i + 1),
                   chunk_frames=4)  # videos 4..9: two or three chunks each
    sets = {"train": [0, 2, 3, 5, 6, 8, 9], "validation": [1, 4, 7]}
    order = list(range(10))
    random.Random(0).shuffle(order)
    entry = {i: {"id": i} for i in range(10)}
    with ShardSets(out, sets, parts, names, num_shards=3) as shards:
        for i in order:
            if i in (4, 7):  # failed (skipped)
                shards.failed(i)
            else:
                shards.ready(i)
        assert not (out / "train").exists()  # nothing of the run is seen before its commit
        written = shards.commit(entry, ["a", "b"], {"seed": 0})
    assert written == ["train", "validation"]
    # shard k holds ids[k::3], in order, each video's chunks one after the other
    assert _ids(out / "train") == [0, 5, 5, 9, 9, 9, 2, 6, 6, 3, 8, 8, 8]
    # the manifest says where each chunk is: reading from there gives that video's chunks
    for v in manifest.read_manifest(out / "train")["sets"]["videos"]["videos"]:
        raw = (out / "train" / v["shard"]).read_bytes()
        for k, at in enumerate(v["chunks"]):
            (length,) = struct.unpack("<Q", raw[at:at + 8])
            se = tf.train.SequenceExample.FromString(raw[at + 12:at + 12 + length])
            assert se.context.feature["id"].int64_list.value[0] == v["id"]
            assert se.context.feature["first"].int64_list.value[0] == 4 * k
        assert len(v["chunks"]) == -(-(v["id"] + 1) // 4)
    # validation's shards 1 and 2 held only failed videos: left out, the other renumbered
    assert _ids(out / "validation") == [1]
    files = manifest.read_manifest(out / "validation")["sets"]["videos"]["files"]
    assert [(f["file"], f["records"]) for f in files] == [("videos-00000-of-00001.tfrecord", 1)]
    assert not (out / ".next").exists()
    # each shard was hashed as it grew: the manifest's digest is the file's (renumbered too)
    for name in written:
        for f in manifest.read_manifest(out / name)["sets"]["videos"]["files"]:
            assert f["sha256"] == manifest.sha256(out / name / f["file"]), (name, f)
            assert "digests" not in manifest.read_manifest(out / name)["sets"]["videos"]


def test_a_run_stopped_before_its_commit_leaves_the_old_sets_and_no_next_folder(tmp_path):
    out, parts = tmp_path / "out", tmp_path / "out" / ".parts"
    parts.mkdir(parents=True)
    names = ["000000-x.tfrecord", "000001-x.tfrecord"]
    for i, name in enumerate(names):
        write_part(parts / name, source="v.mp4", i=i, label=0, jpegs=[b"j"])
    with ShardSets(out, {"train": [0, 1], "validation": []}, parts, names, 4) as shards:
        shards.ready(0)
        shards.ready(1)
        shards.commit({0: {}, 1: {}}, ["a"], {})
    try:
        with ShardSets(out, {"train": [1], "validation": [0]}, parts, names, 4) as shards:
            shards.ready(1)
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert _ids(generations.current(out / "train")) == [0, 1]
    assert not (out / "validation").exists() and not (out / ".next").exists()


def test_a_disk_error_in_a_background_fsync_stops_the_commit(tmp_path, monkeypatch):
    import errno

    from datakit.readers.video.converter import shard_sets
    out, parts = tmp_path / "out", tmp_path / "out" / ".parts"
    parts.mkdir(parents=True)
    names = ["000000-x.tfrecord", "000001-x.tfrecord"]
    for i, name in enumerate(names):
        write_part(parts / name, source="v.mp4", i=i, label=0, jpegs=[b"j"] * 70)

    calls = []

    def first_fails(fd):  # a lost write is reported once; a later fsync succeeds
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(shard_sets, "_sync", first_fails)
    try:
        with ShardSets(out, {"train": [0, 1], "validation": []}, parts, names, 1) as shards:
            shards.ready(0)  # synced while the shard grows: the error waits for the commit
            shard = next(iter(shards.shards["train"].values()))
            assert shard.synced is not None
            shard.synced.exception(timeout=30)  # the failed fsync is over before more comes
            shards.ready(1)
            shards.commit({0: {}, 1: {}}, ["a"], {})
    except OSError as e:
        assert e.errno == errno.EIO
        shard_file = str(out / "train" / "videos-00000-of-00001.tfrecord")
        assert e.filename == shard_file and f"shard {shard_file} (Input/output error)" in str(e)
        assert "run write_video_shards again" in str(e)
    else:
        raise AssertionError("the commit went ahead after a failed fsync")
    assert not (out / "train").exists() and not (out / ".next").exists()


def test_the_workers_take_the_longest_videos_first(tmp_path, monkeypatch):
    """Under several workers, the converter hands out the videos longest first (the last to
    finish is a short one); the shards come out the same, in the listed order."""
    from datakit.readers import video
    from datakit.readers.video.converter import convert

    for k, frames in enumerate((8, 40, 16, 24)):  # one class, four lengths
        clip = video.make_video(0, size=16, min_frames=frames, max_frames=frames, seed=k)
        video.write_video(clip.frames, tmp_path / "in" / "a" / f"v{k}.mp4", fps=10)
    handed = []

    def in_order(work, items, todo, processes):
        handed.extend(items[i].info.frames for i in todo)
        for i in todo:
            yield i, work(items[i])

    monkeypatch.setattr(convert, "convert_all", in_order)
    video.write_video_shards(tmp_path / "in", tmp_path / "out", processes=2, progress=False)
    assert handed == [40, 24, 16, 8]
    frames = [v["frames"] for v in manifest.read_manifest(tmp_path / "out" / "train")["sets"]
              ["videos"]["videos"]]
    assert frames == [8, 40, 16, 24]  # the listed order, whatever order they converted in
