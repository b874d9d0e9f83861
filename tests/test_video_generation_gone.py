"""A clip dataset whose shards are gone says so, naming the set, at the next epoch's start.

Without the check, TensorFlow's ``NotFoundError`` named a hidden
``.generations/`` file (a pinned generation removed by later runs), or a shard
of the set itself (where no pinned copy was kept: ``.generations/`` removed by
hand, or a file system without hard links).
"""

from __future__ import annotations

import os
import shutil

import pytest
import tensorflow as tf

from datakit.readers import video
from datakit.readers.video.converter import generations

KW = dict(num_shards=2, processes=1, progress=False)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("videos")
    for k in range(4):
        frames = video.make_video(k % 2, size=16, min_frames=70, max_frames=90, seed=k).frames
        video.write_video(frames, d / "ab"[k % 2] / f"v{k}.mp4")
    return d


def _epoch(ds) -> int:
    return sum(int(tf.shape(x)[0]) for x, _ in ds)


@pytest.mark.timeout(300)
def test_a_generation_removed_by_later_runs_is_named_at_the_next_epoch(folder, tmp_path,
                                                                      monkeypatch):
    out = tmp_path / "out"
    video.write_video_shards(folder, out, seed=1, **KW)
    ds = video.clip_dataset(out / "train", clip_len=8, batch_size=2, seed=0)
    assert _epoch(ds) == 4
    monkeypatch.setattr(generations, "GRACE_S", 0.0)  # (ten minutes: the test cannot wait)
    for seed in (2, 3, 4):  # the last two generations are kept: the first goes
        video.write_video_shards(folder, out, seed=seed, **KW)
    with pytest.raises(tf.errors.OpError, match=r"out/train: the generation of shards this "
                       r"dataset was built on .* was removed: later runs of write_video_shards"):
        _epoch(ds)
    assert _epoch(video.clip_dataset(out / "train", clip_len=8, batch_size=2, seed=0)) == 4


@pytest.mark.timeout(300)
def test_shards_gone_where_none_is_pinned_are_named_at_the_next_epoch(folder, tmp_path):
    out = tmp_path / "out"
    video.write_video_shards(folder, out, seed=1, **KW)
    shutil.rmtree(out / ".generations")  # removed by hand: the set itself is read
    ds = video.clip_dataset(out / "train", clip_len=8, batch_size=2, seed=0)
    assert _epoch(ds) == 4
    shutil.rmtree(out / ".generations", ignore_errors=True)
    video.write_video_shards(folder, out, **dict(KW, num_shards=1))  # shard 2 of 2 goes
    with pytest.raises(tf.errors.OpError, match=r"out/train: a shard is gone since this "
                       r"dataset was built .* build the dataset again"):
        _epoch(ds)


@pytest.mark.timeout(300)
def test_shards_written_again_in_place_are_named_at_the_next_epoch(folder, tmp_path):
    """No pinned copy (``.generations/`` removed by hand, or no hard links): the set's own
    shards are rewritten, and a read at the old offsets was ``DataLossError: corrupted
    record at <offset>``, naming no file."""
    out = tmp_path / "out"
    video.write_video_shards(folder, out, seed=1, **KW)
    shutil.rmtree(out / ".generations")
    ds = video.clip_dataset(out / "train", clip_len=8, batch_size=2, seed=0)
    assert _epoch(ds) == 4
    shutil.rmtree(out / ".generations", ignore_errors=True)
    video.write_video_shards(folder, out, quality=40, **KW)  # two shards again, other sizes
    with pytest.raises(tf.errors.OpError, match=r"out/train: a shard was written again since "
                       r"this dataset was built .* build the dataset again.*The shard:.*"
                       r"videos-0000[01]-of-00002.tfrecord"):
        _epoch(ds)
    assert _epoch(video.clip_dataset(out / "train", clip_len=8, batch_size=2, seed=0)) == 4


def test_a_manifest_offset_inside_a_record_is_named_when_the_dataset_is_built(folder,
                                                                              tmp_path):
    """TensorFlow read from inside the record and failed mid-epoch naming no file."""
    import json

    from datakit.core.errors import DataError

    out = tmp_path / "out"
    video.write_video_shards(folder, out, seed=1, **KW)
    shutil.rmtree(out / ".generations")  # the manifest edited is the one read
    path = out / "train" / "manifest.json"
    man = json.loads(path.read_text())
    first = man["sets"]["videos"]["videos"][0]
    first["chunks"][0] += 1000
    path.write_text(json.dumps(man))
    with pytest.raises(DataError, match=rf"out/train/{first['shard']}: no record starts at "
                       rf"byte {first['chunks'][0]}, where its manifest.json places chunk 0 of "
                       r"video 0 .*v0.mp4\): the manifest was changed by hand"):
        video.clip_dataset(out / "train", clip_len=8, batch_size=2, seed=0)


@pytest.mark.timeout(300)
def test_building_a_clip_dataset_walks_each_shard_once(folder, tmp_path, monkeypatch):
    """The shard check counts each shard's records by walking its headers; the chunk offset
    check reuses that walk's offsets rather than walking every shard a second time."""
    from collections import Counter

    from datakit.readers.records import tfrecords
    from datakit.readers.video.reading import clip_shards

    out = tmp_path / "out"
    video.write_video_shards(folder, out, seed=1, **KW)
    walked: Counter = Counter()
    real = tfrecords.record_offsets

    def counted(path):
        walked[str(path)] += 1
        return real(path)

    monkeypatch.setattr(tfrecords, "record_offsets", counted)
    monkeypatch.setattr(clip_shards, "record_offsets", counted)
    ds = video.clip_dataset(out / "train", clip_len=8, batch_size=2, seed=0)
    shards = {p.name for p in generations.current(out / "train").glob("*.tfrecord")}
    assert shards and {os.path.basename(p) for p in walked} == shards
    assert set(walked.values()) == {1}, walked
    assert _epoch(ds) > 0
