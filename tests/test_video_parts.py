"""The converter's part files (written without TensorFlow) and its shards (assembled as parts
come in, in any order), against TensorFlow's own writer and reader."""

from __future__ import annotations

import random

import tensorflow as tf

from datakit.core import manifest
from datakit.readers import tf_example
from datakit.readers.video import generations
from datakit.readers.video.part_files import sequence_example_bytes, write_part
from datakit.readers.video.shard_sets import ShardSets


def test_a_part_is_the_record_tensorflow_writes(tmp_path):
    jpegs = [bytes([k]) * (k * 37 % 300) for k in range(40)]  # some empty, some > 127 bytes
    context = {"id": 2**40 + 3, "label": -1, "length": len(jpegs),
               "source": "vidéo/ä b.mp4".encode()}
    ours = sequence_example_bytes(context, jpegs)
    theirs = tf_example.to_sequence_example(context, {"frames": jpegs})
    assert tf.train.SequenceExample.FromString(ours) == theirs

    write_part(tmp_path / "p.tfrecord", source="vidéo/ä b.mp4", i=2**40 + 3, label=-1,
               jpegs=jpegs)
    written = tmp_path / "tf.tfrecord"
    with tf.io.TFRecordWriter(str(written)) as w:
        w.write(ours)
    assert (tmp_path / "p.tfrecord").read_bytes() == written.read_bytes()  # CRCs and all
    read = [r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "p.tfrecord"))]
    assert read == [ours]


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
        write_part(parts / name, source=f"v{i}.mp4", i=i, label=i % 2, jpegs=[b"j"] * 3)
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
    # shard k holds ids[k::3], in order; the reader lists shards by name
    assert _ids(out / "train") == [0, 5, 9, 2, 6, 3, 8]
    # validation's shards 1 and 2 held only failed videos: left out, the other renumbered
    assert _ids(out / "validation") == [1]
    files = manifest.read_manifest(out / "validation")["sets"]["videos"]["files"]
    assert [(f["file"], f["records"]) for f in files] == [("videos-00000-of-00001.tfrecord", 1)]
    assert not (out / ".next").exists()


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
