"""One seed rule across readers: the video entry points take ``seed=None`` as the table readers do.

``None`` lets TensorFlow draw the seeds (new ones each build, the same again under
``tf.random.set_seed``); an int must fit in int64, as
:func:`datakit.core.arguments.check_seed` says, and a shuffled split still needs one
(Keras' rule).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import tensorflow as tf

from datakit.readers import video
from datakit.readers.csv_files.reader import csv_reader_dataset
from datakit.readers.parquet_files.parquet import parquet_dataset
from datakit.readers.records.tfrecords import read_records

ENTRY_POINTS = [video.clip_dataset, video.video_dataset_from_directory, video.mp4_clip_dataset,
                video.write_video_shards, video.write_video_shards_beam]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("seeds")
    for c, name in enumerate(["a", "b"]):
        for k in range(3):
            frames = np.full((12, 16, 16, 3), 40 * c + 10 * k, np.uint8)
            video.write_video(frames, d / name / f"{k}.mp4")
    return d


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_every_video_entry_point_defaults_to_seed_none_like_the_table_readers(entry):
    for table_reader in (csv_reader_dataset, parquet_dataset, read_records):
        assert inspect.signature(table_reader).parameters["seed"].default is None
    assert inspect.signature(entry).parameters["seed"].default is None


@pytest.mark.parametrize("read", [
    lambda seed: video.clip_dataset("nowhere", seed=seed),
    lambda seed: video.mp4_clip_dataset("nowhere", seed=seed),
    lambda seed: video.video_dataset_from_directory("nowhere", seed=seed)],
    ids=["clip_dataset", "mp4_clip_dataset", "video_dataset_from_directory"])
def test_a_seed_outside_int64_is_refused_before_any_file_is_opened(read):
    with pytest.raises(ValueError, match=r"seed=18446744073709551616 is outside the int64 range"):
        read(2**64)
    with pytest.raises(TypeError, match="seed"):
        read(1.5)


@pytest.mark.timeout(180)
def test_seed_none_draws_from_tensorflow_and_repeats_under_its_global_seed(folder, tmp_path):
    shards = video.write_video_shards(folder, tmp_path / "s", processes=1, progress=False)["train"]

    def picked(make):
        tf.random.set_seed(7)
        ds = make()
        return [(int(i), int(f[0])) for b in ds for i, f in zip(b[0], b[1], strict=True)]

    direct = lambda: video.video_dataset_from_directory(  # noqa: E731
        folder, clip_len=4, batch_size=2, with_ids=True, verbose=False).map(
        lambda d: (d["video"], d["frames"]))
    converted = lambda: video.clip_dataset(shards, clip_len=4, batch_size=2,  # noqa: E731
                                           with_ids=True).map(lambda d: (d["id"], d["frames"]))
    for make in (direct, converted):
        first = picked(make)
        assert len(first) == 6 and picked(make) == first


@pytest.mark.timeout(120)
def test_a_shuffled_split_still_needs_a_seed(folder):
    with pytest.raises(ValueError, match="you must provide a `seed`"):
        video.video_dataset_from_directory(folder, validation_split=0.5, subset="both",
                                           verbose=False)
    train, val = video.video_dataset_from_directory(folder, clip_len=4, validation_split=0.5,
                                                    subset="both", seed=0, verbose=False)
    assert len(train.file_paths) == len(val.file_paths) == 3
