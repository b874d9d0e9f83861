"""Synthetic videos, MP4 round trip, video shards and the clip pipelines, on tiny sizes."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf
from video_cases import KW, MAX_F, MIN_F, SIZE, N

from datakit.core.errors import DataError
from datakit.readers import video
from datakit.readers.video.synthetic.mp4 import list_mp4, mp4_frame_count, read_mp4

JPEG_TOL = 12  # mean absolute error allowed after JPEG (quality 90) on these frames


@pytest.fixture(scope="module")
def shards(videos, tmp_path_factory):
    d = tmp_path_factory.mktemp("shards")
    video.write_video_records(videos, d, class_names=video.CLASSES, num_shards=3)
    return d


def test_generator_is_deterministic_per_seed():
    a, b = video.make_videos(6, **KW), video.make_videos(6, **KW)
    assert all(np.array_equal(x.frames, y.frames) and x.label == y.label
               for x, y in zip(a, b, strict=True))
    c = video.make_videos(6, **{**KW, "seed": 4})
    assert any(x.frames.shape != y.frames.shape or not np.array_equal(x.frames, y.frames)
               for x, y in zip(a, c, strict=True))


def test_lengths_in_range_and_labels_balanced():
    vs = list(video.iter_videos(400, size=8, min_frames=5, max_frames=9, seed=0))
    lengths = [len(v.frames) for v in vs]
    assert min(lengths) >= 5 and max(lengths) <= 9 and len(set(lengths)) == 5
    counts = Counter(v.label for v in vs)
    assert set(counts) == {0, 1, 2, 3}
    assert all(60 <= c <= 140 for c in counts.values()), counts  # 100 expected each


def test_the_square_moves_in_the_labelled_direction(videos):
    for v in videos:
        bright = v.frames.max(axis=-1) >= 150  # the square is bright, the background dark
        rows0, rows1 = np.nonzero(bright[0].any(1))[0], np.nonzero(bright[1].any(1))[0]
        cols0, cols1 = np.nonzero(bright[0].any(0))[0], np.nonzero(bright[1].any(0))[0]
        moved_rows = set(rows0) != set(rows1)
        moved_cols = set(cols0) != set(cols1)
        # right/left move columns only, down/up rows only (speed >= 1.5 px per frame)
        assert (moved_cols, moved_rows) == ((True, False) if v.label < 2 else (False, True))


def test_bad_arguments_say_how_to_fix():
    with pytest.raises(ValueError, match="min_frames"):
        video.make_videos(1, min_frames=10, max_frames=5)
    with pytest.raises(ValueError, match="clip_len"):
        video.clip_dataset("nowhere", clip_len=0)


@pytest.mark.timeout(120)
def test_mp4_round_trip(videos, mp4_dir):
    paths, labels = list_mp4(mp4_dir)
    assert len(paths) == N and sorted(labels) == sorted(v.label for v in videos)
    for p, label in zip(paths, labels, strict=True):
        v = videos[int(p.rsplit("_", 1)[1][:-4])]
        assert label == v.label
        frames = read_mp4(p)
        assert frames.shape == v.frames.shape == (mp4_frame_count(p), SIZE, SIZE, 3)
        assert np.abs(frames.astype(int) - v.frames).mean() < JPEG_TOL
        part = read_mp4(p, 2, 5)
        assert np.array_equal(part, frames[2:5])


@pytest.mark.timeout(120)
def test_every_video_is_in_the_shards_exactly_once(videos, shards):
    from datakit.readers.records import tf_example, tfrecords

    ds = tfrecords.read_records(shards).map(lambda s: tf_example.parse_sequence_example(
        s, {"id": tf.int64, "label": tf.int64, "length": tf.int64}, {"frames": tf.string}))
    got = {}
    for ctx, seq in ds:
        i = int(ctx["id"])
        assert i not in got
        got[i] = (int(ctx["label"]), int(ctx["length"]), len(seq["frames"]))
    assert got == {v.id: (v.label, len(v.frames), len(v.frames)) for v in videos}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("clip_len", [1, 5, MIN_F])
def test_clips_are_consecutive_frames_of_their_video(videos, shards, clip_len):
    ds = video.clip_dataset(shards, clip_len=clip_len, batch_size=5, with_ids=True, seed=1)
    seen = []
    for batch in ds:
        assert batch["clip"].shape[1:] == (clip_len, SIZE, SIZE, 3)
        for clip, label, i, start in zip(*(batch[k].numpy() for k in
                                           ("clip", "label", "id", "start")), strict=True):
            v = videos[i]
            assert label == v.label and 0 <= start <= len(v.frames) - clip_len
            err = np.abs(clip.astype(int) - v.frames[start:start + clip_len]).mean(axis=(1, 2, 3))
            assert (err < JPEG_TOL).all(), err
            seen.append(int(i))
    assert sorted(seen) == list(range(N))  # one clip per video per epoch


@pytest.mark.timeout(120)
def test_clip_dataset_for_fit_shapes_labels_and_seeds(videos, shards):
    ds = video.clip_dataset(shards, clip_len=4, batch_size=5, seed=7)
    x_spec, y_spec = ds.element_spec
    assert x_spec.shape.as_list() == [None, 4, SIZE, SIZE, 3] and x_spec.dtype == tf.uint8
    batches = list(ds)
    assert [len(y) for _, y in batches] == [5, 5, 2]
    labels = Counter(int(y) for _, ys in batches for y in ys)
    assert labels == Counter(v.label for v in videos)

    def starts(seed):
        d = video.clip_dataset(shards, clip_len=4, batch_size=N, seed=seed, with_ids=True)
        return [(int(i), int(s)) for b in d for i, s in zip(b["id"], b["start"], strict=True)]

    assert starts(7) == starts(7)
    assert starts(7) != starts(8)
    d = video.clip_dataset(shards, clip_len=4, batch_size=N, seed=7, with_ids=True)
    epochs = [sorted(zip(b["id"].numpy(), b["start"].numpy(), strict=True))
              for _ in range(2) for b in d]
    assert epochs[0] != epochs[1]  # a new clip (and order) each epoch


@pytest.mark.timeout(120)
def test_validation_clips_are_fixed_middle_clips_in_file_order(videos, shards):
    def clips(seed):
        d = video.clip_dataset(shards, clip_len=4, batch_size=5, seed=seed, with_ids=True,
                               training=False)
        return [(int(i), int(s)) for _ in range(2) for b in d
                for i, s in zip(b["id"], b["start"], strict=True)]

    both_epochs = clips(7)
    first, second = both_epochs[:N], both_epochs[N:]
    assert first == second == clips(8)[:N]  # every epoch, whatever the seed
    lengths = {v.id: len(v.frames) for v in videos}
    assert all(s == (lengths[i] - 4) // 2 for i, s in first)
    assert sorted(i for i, _ in first) == list(range(N))
    # in the manifest's order (by id), not the shards' (round robin put video i in shard i % 3)
    assert [i for i, _ in first] == list(range(N))


@pytest.mark.timeout(120)
def test_clip_longer_than_a_video_is_an_error(shards):
    with pytest.raises(DataError, match="fewer than the .* one clip spans.*clip_len"):
        video.clip_dataset(shards, clip_len=MAX_F + 1, batch_size=2)


@pytest.mark.timeout(120)
def test_a_short_video_is_named_by_its_file(tmp_path):
    vs = [video.Video(i, 0, video.make_video(i, **KW).frames[:n], source=f"/videos/v{i}.mp4")
          for i, n in enumerate((12, 3))]
    video.write_video_records(vs, tmp_path, class_names=video.CLASSES, num_shards=1)
    with pytest.raises(DataError, match="/videos/v1.mp4: 3 frames"):  # when it is built
        video.clip_dataset(tmp_path, clip_len=4, shuffle_buffer_size=0)


def test_the_writer_refuses_two_frame_sizes_naming_the_video(tmp_path):
    small = video.make_video(0, **KW)
    big = video.make_video(1, **{**KW, "size": SIZE * 2})
    big.source = "/videos/big.mp4"
    with pytest.raises(ValueError, match="big.mp4.*resize"):
        video.write_video_records([small, big], tmp_path, class_names=video.CLASSES)
    assert not list(tmp_path.glob("*.tfrecord"))  # nothing half-written


@pytest.mark.timeout(120)
def test_shards_of_one_record_per_video_are_refused_by_name(tmp_path):
    from datakit.readers.records import tf_example, tfrecord_writer

    with tfrecord_writer.ShardWriter(tmp_path, prefix="videos", num_shards=1) as w:
        for i in range(2):  # the layout an earlier write_video_records wrote: a record a video
            v = video.make_video(i, **KW)
            jpegs = [tf.io.encode_jpeg(f).numpy() for f in v.frames]
            w.write(tf_example.to_sequence_example(
                {"id": i, "label": v.label, "length": len(jpegs)}, {"frames": jpegs}))
    with pytest.raises(DataError, match="earlier write_video_records.*write_video_records"):
        video.clip_dataset(tmp_path, clip_len=4)


@pytest.mark.timeout(180)
def test_a_set_the_last_conversion_removed_is_named_as_such_not_an_old_layout(tmp_path):
    for k in range(4):
        frames = video.make_video(k % 2, size=16, min_frames=8, max_frames=8, seed=k).frames
        video.write_video(frames, tmp_path / "v" / "ab"[k % 2] / f"v{k}.mp4")
    kw = dict(processes=1, progress=False)
    out = tmp_path / "out"
    video.write_video_shards(tmp_path / "v", out, validation_split=0.5, seed=1, **kw)
    video.clip_dataset(out / "validation", clip_len=4)  # read while it is there
    video.write_video_shards(tmp_path / "v", out, **kw)  # no validation_split: train only
    with pytest.raises(FileNotFoundError, match=r"validation: is not part of the last "
                       r"write_video_shards into .*out \(it wrote train only.*validation_split"):
        video.clip_dataset(out / "validation", clip_len=4)


def test_the_records_writer_writes_the_converters_layout(videos, shards):
    from datakit.core import manifest
    from datakit.readers.video.converter.part_files import CHUNK_FRAMES

    meta = manifest.read_manifest(shards)["sets"]["videos"]
    assert meta["chunk_frames"] == CHUNK_FRAMES and meta["class_names"] == list(video.CLASSES)
    by_id = {v["id"]: v for v in meta["videos"]}
    for v in videos:  # a record per 64 frames, where the manifest says, holding those frames
        row = by_id[v.id]
        assert (row["frames"], row["label"]) == (len(v.frames), v.label)
        assert len(row["chunks"]) == -(-len(v.frames) // CHUNK_FRAMES)
        with open(shards / row["shard"], "rb") as f:
            f.seek(row["chunks"][0])
            n = int.from_bytes(f.read(8), "little")
            f.read(4)
            se = tf.train.SequenceExample.FromString(f.read(n))
        assert se.context.feature["id"].int64_list.value == [v.id]
        assert se.context.feature["first"].int64_list.value == [0]


@pytest.mark.timeout(180)
def test_mp4_clip_dataset_matches_the_videos(videos, mp4_dir):
    ds = video.mp4_clip_dataset(mp4_dir, clip_len=5, batch_size=4, seed=2)
    assert ds.element_spec[0].shape.as_list() == [None, 5, SIZE, SIZE, 3]
    n = 0
    for clips, labels in ds:
        for clip, label in zip(clips.numpy(), labels.numpy(), strict=True):
            # find the video and start this clip came from: best match among same-label videos
            best = min((np.abs(clip.astype(int) - v.frames[s:s + 5]).mean(), v.label)
                       for v in videos for s in range(len(v.frames) - 4))
            assert best[0] < JPEG_TOL and best[1] == label
            n += 1
    assert n == N


def test_small_video_model_trains_one_step():
    model = video.small_video_model(4, SIZE)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x = np.zeros((2, 4, SIZE, SIZE, 3), np.uint8)
    assert np.isfinite(model.train_on_batch(x, np.array([0, 3])))
    assert model.output_shape == (None, 4)


def test_class_names_are_the_writers_never_a_default(videos, shards, tmp_path):
    assert video.clip_dataset(shards, clip_len=4).class_names == list(video.CLASSES)
    with pytest.raises(ValueError, match="leave class_names out"):
        video.clip_dataset(shards, clip_len=4, class_names=("a", "b", "c", "d"))
    with pytest.raises(TypeError, match="class_names"):
        video.write_video_records(videos, tmp_path)  # no default: a wrong one would mislabel
    with pytest.raises(ValueError, match="label 3.*2 names"):
        video.write_video_records([v for v in videos if v.label == 3], tmp_path,
                                  class_names=["a", "b"])


def test_clip_dataset_takes_cycle_length_quietly_and_gives_the_same_clips(shards):
    def labels(ds):
        return [int(y) for _, ys in ds for y in ys]

    new = labels(video.clip_dataset(shards, clip_len=4, batch_size=4, n_readers=2, seed=3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # interleave's cycle_length: tf.data's word, no warning
        same = video.clip_dataset(shards, clip_len=4, batch_size=4, cycle_length=2, seed=3)
    assert labels(same) == new
