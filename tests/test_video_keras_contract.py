"""Keras' directory-loader tests (image_dataset_utils_test, dataset_utils_test), ported to videos.

One folder of tiny videos (2 classes, 3 videos each, one of them in a nested
subfolder, plus a hidden file and a macOS ``._`` file) is written once per module.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from datakit.core.errors import DataError
from datakit.readers import video

KW = dict(clip_len=4, verbose=False)


def _write(path, n=8, value=0):
    frames = np.full((n, 16, 16, 3), value, np.uint8)
    frames[:, :, :8] = 200  # a left half bright
    return video.write_video(frames, path)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("keras")
    for c, name in enumerate(["class_0", "class_1"]):
        _write(d / name / "a.mp4", value=40 * c)
        _write(d / name / "b.mp4", value=40 * c)
        _write(d / name / "nested" / "c.mp4", value=40 * c)  # Keras reads nested folders
        (d / name / "._a.mp4").write_bytes(b"\0" * 10)  # a macOS resource file: not a video
        (d / name / ".hidden.mp4").write_bytes(b"\0" * 10)
    return d


def _labels(ds):
    return [int(y) for _, ys in ds for y in ys.numpy()]


@pytest.mark.timeout(120)
def test_nested_files_are_read_and_hidden_files_ignored(folder):
    ds = video.video_dataset_from_directory(folder, batch_size=8, shuffle=False, **KW)
    assert ds.class_names == ["class_0", "class_1"]
    assert [p.split("keras")[-1][2:] for p in ds.file_paths] == [
        "class_0/a.mp4", "class_0/b.mp4", "class_0/nested/c.mp4",
        "class_1/a.mp4", "class_1/b.mp4", "class_1/nested/c.mp4"]
    assert _labels(ds) == [0, 0, 0, 1, 1, 1] and not ds.skipped


@pytest.mark.timeout(120)
def test_label_modes(folder):
    x, y = next(iter(video.video_dataset_from_directory(folder, batch_size=6, **KW)))
    assert x.shape == (6, 4, 16, 16, 3) and x.dtype == tf.uint8 and y.dtype == tf.int64
    x, y = next(iter(video.video_dataset_from_directory(folder, batch_size=6,
                                                        label_mode="categorical", **KW)))
    assert y.shape == (6, 2) and y.dtype == tf.float32
    assert sorted(np.argmax(y, 1).tolist()) == [0, 0, 0, 1, 1, 1]
    x, y = next(iter(video.video_dataset_from_directory(folder, batch_size=6,
                                                        label_mode="binary", **KW)))
    assert y.shape == (6, 1) and y.dtype == tf.float32
    x = next(iter(video.video_dataset_from_directory(folder, batch_size=6, label_mode=None,
                                                     **KW)))
    assert x.shape == (6, 4, 16, 16, 3)
    with pytest.raises(ValueError, match="`label_mode` must be one of"):
        video.video_dataset_from_directory(folder, label_mode="other", **KW)


@pytest.mark.timeout(120)
def test_binary_needs_two_classes(folder, tmp_path):
    for name in "abc":
        _write(tmp_path / name / "v.mp4")
    with pytest.raises(ValueError, match='label_mode="binary"`, there must be exactly 2'):
        video.video_dataset_from_directory(tmp_path, label_mode="binary", **KW)


@pytest.mark.timeout(120)
def test_labels_as_a_list_and_none_on_a_flat_folder(folder, tmp_path):
    ds = video.video_dataset_from_directory(folder, labels=[5, 1, 5, 0, 0, 1], batch_size=6,
                                            shuffle=False, **KW)
    assert _labels(ds) == [5, 1, 5, 0, 0, 1] and ds.class_names == ["0", "1", "5"]
    one_hot = video.video_dataset_from_directory(folder, labels=[5, 1, 5, 0, 0, 1],
                                                 label_mode="categorical", batch_size=6,
                                                 shuffle=False, **KW)
    assert np.argmax(next(iter(one_hot))[1], 1).tolist() == [5, 1, 5, 0, 0, 1]
    with pytest.raises(ValueError, match="Expected the lengths of `labels` to match"):
        video.video_dataset_from_directory(folder, labels=[0, 1], **KW)
    with pytest.raises(ValueError, match="`labels` argument should be a list/tuple"):
        video.video_dataset_from_directory(folder, labels="auto", **KW)
    with pytest.raises(ValueError, match="You can only pass `class_names`"):
        video.video_dataset_from_directory(folder, labels=[0] * 6, class_names=["a"], **KW)
    for i in range(3):
        _write(tmp_path / f"v{i}.mp4")
    flat = video.video_dataset_from_directory(tmp_path, labels=None, batch_size=8, **KW)
    assert flat.class_names is None and len(flat.file_paths) == 3
    assert next(iter(flat)).shape == (3, 4, 16, 16, 3)
    with pytest.raises(ValueError, match="class_names` cannot be specified"):
        video.video_dataset_from_directory(tmp_path, labels=None, class_names=["a"], **KW)


@pytest.mark.timeout(120)
def test_a_negative_or_out_of_range_label_in_a_list_is_refused_by_position(folder):
    with pytest.raises(ValueError, match="label -1 at position 2 is negative"):
        video.video_dataset_from_directory(folder, labels=[0, 1, -1, 0, 0, 1], **KW)
    with pytest.raises(ValueError, match=r"label 5 at position 3 is outside "
                                         r"label_mode='binary''s 2 classes"):
        video.video_dataset_from_directory(folder, labels=[0, 1, 1, 5, 0, 1],
                                           label_mode="binary", **KW)
    binary = video.video_dataset_from_directory(folder, labels=[0, 1, 1, 0, 0, 1],
                                                label_mode="binary", batch_size=6,
                                                shuffle=False, **KW)
    assert next(iter(binary))[1].numpy().ravel().tolist() == [0, 1, 1, 0, 0, 1]


@pytest.mark.timeout(120)
def test_batch_size_none_grayscale_and_float32(folder):
    ds = video.video_dataset_from_directory(folder, batch_size=None, color_mode="grayscale",
                                            dtype="float32", **KW)
    x, y = next(iter(ds))
    assert x.shape == (4, 16, 16, 1) and x.dtype == tf.float32 and y.shape == ()
    assert float(tf.reduce_max(x)) > 150 and len(list(ds)) == 6
    with pytest.raises(ValueError, match="`color_mode` must be one of"):
        video.video_dataset_from_directory(folder, color_mode="rgba", **KW)


@pytest.mark.timeout(120)
def test_shuffle_false_keeps_the_listing_order_and_takes_the_last_for_validation(folder):
    train, val = video.video_dataset_from_directory(
        folder, batch_size=8, shuffle=False, validation_split=0.34, subset="both", seed=None,
        **KW)
    listing = [str(folder / c / f) for c in ["class_0", "class_1"]
               for f in ["a.mp4", "b.mp4", "nested/c.mp4"]]
    assert train.file_paths == listing[:4] and val.file_paths == listing[4:]
    assert _labels(train) == [0, 0, 0, 1] and _labels(val) == [1, 1]


@pytest.mark.timeout(120)
def test_a_shuffled_split_needs_a_seed_and_subsets_are_disjoint(folder, capsys):
    with pytest.raises(ValueError, match="you must provide a `seed`.*seed=42"):
        video.video_dataset_from_directory(folder, validation_split=0.5, subset="training",
                                           seed=None, **KW)
    train, val = video.video_dataset_from_directory(
        folder, validation_split=0.5, subset="both", seed=7, clip_len=4)
    out = capsys.readouterr().out
    assert "Found 6 videos belonging to 2 classes." in out
    assert "Using 3 videos for training." in out and "Using 3 videos for validation." in out
    assert not set(train.file_paths) & set(val.file_paths)


@pytest.mark.timeout(120)
def test_follow_links(folder, tmp_path):
    (tmp_path / "set").mkdir()
    for name in ["class_0", "class_1"]:
        (tmp_path / "set" / name).mkdir()
        (tmp_path / "set" / name / "linked").symlink_to(folder / name / "nested")
    with pytest.raises(DataError, match="holds no video"):
        video.video_dataset_from_directory(tmp_path / "set", **KW)
    ds = video.video_dataset_from_directory(tmp_path / "set", follow_links=True, **KW)
    assert len(ds.file_paths) == 2 and ds.class_names == ["class_0", "class_1"]


@pytest.mark.timeout(120)
def test_with_ids_file_index_names_the_clip_s_file(folder):
    ds = video.video_dataset_from_directory(folder, batch_size=3, with_ids=True, seed=3,
                                            validation_split=0.5, subset="training", **KW)
    for b in ds:
        for f, label in zip(b["file"].numpy(), b["label"].numpy(), strict=True):
            assert ds.file_paths[f].split("class_")[1][0] == str(label)


@pytest.mark.timeout(120)
def test_short_videos_that_empty_a_class_are_an_error_naming_it(tmp_path, capsys):
    _write(tmp_path / "long" / "a.mp4", n=12)
    _write(tmp_path / "short" / "a.mp4", n=4)
    with pytest.raises(DataError, match="fewer than the 8") as e:
        video.video_dataset_from_directory(tmp_path, clip_len=8, verbose=False)
    assert "on_bad_file='skip'" in str(e.value)
    with pytest.raises(DataError, match="class 'short' has no video long enough") as e:
        video.video_dataset_from_directory(tmp_path, clip_len=8, on_bad_file="skip")
    assert e.value.path.endswith("short") and "on_bad_file" not in str(e.value)
    # nothing was printed (the error comes before Keras' lines): the message says it all
    assert "(1 too short, the longest 4 frames)" in str(e.value) and not capsys.readouterr().out
    _write(tmp_path / "short" / "b.mp4", n=12)
    ds = video.video_dataset_from_directory(tmp_path, clip_len=8, on_bad_file="skip")
    out = capsys.readouterr().out
    assert f"Skipped {tmp_path / 'short' / 'a.mp4'}: 4 frames" in out
    assert "Found 2 videos belonging to 2 classes (1 bad files skipped)." in out
    assert ds.class_names == ["long", "short"] and len(ds.skipped) == 1


def test_a_random_sampler_validates_on_fixed_clips(folder):
    _, val = video.video_dataset_from_directory(
        folder, sampler="random", validation_split=0.5, subset="both", seed=1, with_ids=True,
        **KW)
    frames = [sorted(b["frames"].numpy().tolist()) for _ in range(2) for b in val]
    assert frames[0] == frames[1]
    with pytest.raises(ValueError, match="center"):
        video.video_dataset_from_directory(folder, sampler="center", clips_per_video=3, **KW)


@pytest.mark.timeout(120)
def test_clips_to_predict_are_made_like_the_training_clips(folder):
    ds = video.video_dataset_from_directory(folder, batch_size=None, shuffle=False,
                                            sampler="center", color_mode="grayscale",
                                            dtype="float32", frame_size=(8, 8), **KW)
    clip, _ = next(iter(ds))
    got = video.clips_to_predict(ds.file_paths[0], like=ds, sampler="center")
    assert got.shape == (1, 4, 8, 8, 1) and got.dtype == np.float32
    assert np.array_equal(got[0], clip.numpy())
    assert video.clips_to_predict(ds.file_paths[0], like=ds, clips_per_video=3).shape[0] == 3
    with pytest.raises(ValueError, match="`sampler` must be one of"):
        video.clips_to_predict(ds.file_paths[0], like=ds, sampler="random")
    with pytest.raises(DataError, match="fewer than the 20"):
        video.clips_to_predict(ds.file_paths[0], clip_len=20)


def test_a_missing_pyav_is_one_error_naming_the_extra(folder, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "av", None)  # as if PyAV were not installed
    with pytest.raises(ModuleNotFoundError, match=r'pip install "tf-datakit\[video\]"'):
        video.video_dataset_from_directory(folder, **KW)


@pytest.mark.timeout(120)
def test_a_link_back_to_a_parent_lists_each_video_once(folder, tmp_path):
    d = tmp_path / "set"
    for name in ["class_0", "class_1"]:
        (d / name).mkdir(parents=True)
        (d / name / "a.mp4").symlink_to(folder / name / "a.mp4")
        (d / name / "loop").symlink_to(d / name)  # a link to its own folder
    ds = video.video_dataset_from_directory(d, follow_links=True, **KW)
    assert len(ds.file_paths) == len(set(ds.file_paths)) == 2


@pytest.mark.timeout(120)
def test_short_videos_left_out_do_not_move_the_split(tmp_path):
    for name in ("a", "b"):
        for k in range(5):
            _write(tmp_path / name / f"{k}.mp4", n=12 if k else 6)  # each class: one short
    kw = dict(validation_split=0.4, seed=1, on_bad_file="skip", verbose=False)
    short = {str(tmp_path / n / "0.mp4") for n in ("a", "b")}
    for clip_len in (4, 8):  # 8: the short videos are left out
        val = video.video_dataset_from_directory(tmp_path, clip_len=clip_len,
                                                 subset="validation", **kw).file_paths
        if clip_len == 4:
            all_val = set(val)
        assert set(val) == all_val - (short if clip_len == 8 else set())


@pytest.mark.timeout(120)
def test_a_split_that_leaves_a_subset_empty_is_refused(folder):
    with pytest.raises(ValueError, match=r"validation_split=0.1 leaves no video for validation"):
        video.video_dataset_from_directory(folder, validation_split=0.1, subset="validation",
                                           seed=1, **KW)


def test_both_names_of_the_readers_knob_are_refused(tmp_path):
    with pytest.raises(TypeError, match="got cycle_length= and n_readers=: pass only one"):
        video.clip_dataset(tmp_path, n_readers=4, cycle_length=2)
