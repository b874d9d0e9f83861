"""One ``VideoOptions`` for every video entry point: a bad option refused before any file is opened.

Every folder handed to the entry points here is broken (a "video" that is
text, a "shard" that is not a TFRecord): had an entry point opened a file
before checking its arguments, the error would be a ``DataError`` or a record
error about that file, not the argument's message.
"""

from __future__ import annotations

import dataclasses

import pytest

from datakit.core.errors import DataError
from datakit.readers import video
from datakit.readers.video.options.clip_options import VideoOptions

#: (option, bad value): each refused by VideoOptions itself.
BAD = [
    ("clip_len", 0), ("clip_len", 2.0), ("frame_step", 0), ("frame_step", "2"),
    ("fps", 0), ("fps", -3.5), ("fps", "25"), ("fps", float("nan")),
    ("frame_size", (32,)), ("frame_size", (32, 0)), ("frame_size", (32.0, 32)),
    ("frame_size", 32), ("crop_to_aspect_ratio", "yes"), ("pad_to_aspect_ratio", 1),
    ("sampler", "middle"), ("clips_per_video", 0), ("clips_per_video", 1.5),
]

#: The options each entry point takes as keywords.
TAKES = {
    "video_dataset_from_directory": {"clip_len", "frame_step", "fps", "frame_size",
                                     "crop_to_aspect_ratio", "pad_to_aspect_ratio", "sampler",
                                     "clips_per_video"},
    "write_video_shards": {"fps", "frame_size", "crop_to_aspect_ratio", "pad_to_aspect_ratio"},
    "clip_dataset": {"clip_len", "frame_step", "sampler", "clips_per_video"},  # (and the
    # frame fields, compared with the shards' manifest: test_shards_take_the_direct_...)
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """A class folder of files that fail to probe, and a folder of shards that fail to read."""
    d = tmp_path_factory.mktemp("broken")
    (d / "videos" / "cats").mkdir(parents=True)
    (d / "videos" / "cats" / "a.mp4").write_text("not a video")
    (d / "shards").mkdir()
    (d / "shards" / "videos-00000-of-00001.tfrecord").write_text("not a record")
    return d


def _call(name, broken, tmp_path, **kw):
    if name == "video_dataset_from_directory":
        return video.video_dataset_from_directory(broken / "videos", verbose=False, **kw)
    if name == "write_video_shards":
        return video.write_video_shards(broken / "videos", tmp_path / "out", processes=1,
                                        progress=False, **kw)
    return video.clip_dataset(broken / "shards", **kw)


def _error(call):
    with pytest.raises((TypeError, ValueError)) as e:
        call()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("option, bad", BAD, ids=[f"{o}={b!r}" for o, b in BAD])
def test_each_entry_point_refuses_a_bad_option_first_with_the_same_message(option, bad, broken,
                                                                           tmp_path):
    want = _error(lambda: VideoOptions(**{option: bad}))
    for name, takes in TAKES.items():
        if option in takes:
            got = _error(lambda n=name: _call(n, broken, tmp_path, **{option: bad}))
            assert got == want, name
        got = _error(lambda n=name: _call(n, broken, tmp_path,
                                          options=VideoOptions(**{option: bad})))
        assert got == want, name  # (VideoOptions refuses it before the call)


def test_rules_between_options_are_refused_by_every_entry_point(broken, tmp_path):
    both = dict(crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    center = dict(sampler="center", clips_per_video=3)
    for kw, entry_points in [(both, ("video_dataset_from_directory", "write_video_shards")),
                             (center, ("video_dataset_from_directory", "clip_dataset"))]:
        want = _error(lambda kw=kw: VideoOptions(**kw))
        for name in entry_points:
            assert _error(lambda n=name, kw=kw: _call(n, broken, tmp_path, **kw)) == want, name


def test_options_or_keywords_not_both(broken, tmp_path):
    keyword = {"video_dataset_from_directory": ({"frame_step": 2}, 3),
               "write_video_shards": ({"fps": 10}, 12), "clip_dataset": ({"clip_len": 4}, 6)}
    for name, (kw, other) in keyword.items():
        (key, value), = kw.items()
        with pytest.raises(TypeError, match=f"{name}\\(\\) got {key} twice: {key}={value} "
                           "beside options="):
            _call(name, broken, tmp_path, options=VideoOptions(**{key: other}), **kw)
        with pytest.raises(TypeError, match="twice"):  # the same value twice is still twice
            _call(name, broken, tmp_path, options=VideoOptions(**kw), **kw)
        with pytest.raises(TypeError, match="VideoOptions"):
            _call(name, broken, tmp_path, options={"clip_len": 4})


@pytest.mark.timeout(180)
def test_shards_take_the_direct_readers_options_when_they_match_what_was_written(tmp_path):
    """One ``VideoOptions`` for both paths: frame fields equal to what the shards were
    written with are taken; another value is refused, naming both."""
    for c, name in enumerate(("a", "b")):
        frames = video.make_video(c, size=16, min_frames=24, max_frames=24, seed=c).frames
        video.write_video(frames, tmp_path / "v" / name / f"{name}.mp4")
    shared = VideoOptions(clip_len=4, frame_size=(8, 8), fps=12.5, crop_to_aspect_ratio=True)
    frame_fields = {f: getattr(shared, f) for f in ("frame_size", "fps", "crop_to_aspect_ratio")}
    out = video.write_video_shards(tmp_path / "v", tmp_path / "out", processes=1,
                                   progress=False, **frame_fields)
    direct = video.video_dataset_from_directory(tmp_path / "v", options=shared, verbose=False)
    shards = video.clip_dataset(out["train"], options=shared, training=False)
    assert shards.element_spec[0].shape[1:] == direct.element_spec[0].shape[1:] \
        == (4, 8, 8, 3)
    assert sum(int(len(y)) for _, y in shards) == 2
    video.clip_dataset(out["train"], clip_len=4, frame_size=(8, 8), fps=12.5)  # as keywords
    for field, other, written in [("frame_size", (16, 16), "8x8 frames"),
                                  ("fps", 25, "fps=12.5"),
                                  ("crop_to_aspect_ratio", False, None),
                                  ("pad_to_aspect_ratio", True, "pad_to_aspect_ratio=False")]:
        if written is None:  # False is the default: not compared (as not given)
            video.clip_dataset(out["train"], options=dataclasses.replace(shared,
                                                                         **{field: other}))
            continue
        opts = dataclasses.replace(shared, **{field: other}, **(
            {"crop_to_aspect_ratio": False} if field == "pad_to_aspect_ratio" else {}))
        with pytest.raises(ValueError) as e:
            video.clip_dataset(out["train"], options=opts)
        said = str(e.value)
        assert said.startswith(f"{field}={other!r}, but the shards in {out['train']} were "
                               f"written with {written}"), said
        assert f"write_video_shards({field}={other!r})" in said


def test_good_options_reach_the_files(broken, tmp_path):
    with pytest.raises(DataError, match="FFmpeg can open"):  # now the broken file is opened
        _call("video_dataset_from_directory", broken, tmp_path, clip_len=4, frame_size=(8, 8))
    with pytest.raises(DataError, match="FFmpeg can open"):
        _call("write_video_shards", broken, tmp_path, options=VideoOptions(fps=10))


def test_options_are_frozen_and_normalized():
    opts = VideoOptions(frame_size=[24, 32])
    assert opts.frame_size == (24, 32)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.clip_len = 4  # type: ignore[misc]


# ---- #47: arguments taken without a word, or named by the kit's knob instead of the caller's
def test_a_knob_under_both_names_or_tf_datas_name_is_named_as_given(broken):
    with pytest.raises(TypeError, match="got cycle_length= and n_readers=: pass only one"):
        video.clip_dataset(broken / "shards", n_readers=2, cycle_length=3)  # 2 is the default
    with pytest.raises(ValueError, match="cycle_length=0 is invalid"):
        video.clip_dataset(broken / "shards", cycle_length=0)


def test_the_converter_refuses_an_out_folder_in_its_source(broken):
    videos = broken / "videos"
    with pytest.raises(ValueError, match=r"out=.* is the videos' folder \(directory="):
        video.write_video_shards(videos, videos, processes=1, progress=False)
    with pytest.raises(ValueError, match=r"out=.*cats/out' is inside the videos' folder"):
        video.write_video_shards(videos, videos / "cats" / "out", processes=1, progress=False)
    assert not (videos / "cats" / "out").exists() and not (videos / "train").exists()


def test_a_frame_size_whose_batch_cannot_fit_is_refused_with_the_figure(broken):
    with pytest.raises(ValueError, match=r"frame_size=\(1000000, 1000000\).* would build "
                       r"[\d,]+ bytes \(\d+ GB\), more than this machine's"):
        video.video_dataset_from_directory(broken / "videos", frame_size=(10**6, 10**6),
                                           clip_len=4, verbose=False)


def test_clips_to_predict_names_path_for_a_list_or_a_missing_file(tmp_path):
    pytest.importorskip("av")
    with pytest.raises(TypeError, match="path=.*: clips_to_predict takes one video file"):
        video.clips_to_predict([str(tmp_path / "a.mp4"), str(tmp_path / "b.mp4")], clip_len=4)
    with pytest.raises(FileNotFoundError, match=r"clips_to_predict\(path=...\): .*gone.mp4"):
        video.clips_to_predict(str(tmp_path / "gone.mp4"), clip_len=4)


@pytest.mark.timeout(120)
def test_clip_dataset_on_the_converters_root_says_which_folder_to_pass(tmp_path):
    video.write_mp4_videos(video.make_videos(3, size=16, min_frames=12, max_frames=12, seed=3),
                           tmp_path / "v")
    video.write_video_shards(tmp_path / "v", tmp_path / "s", num_shards=1, processes=1,
                             progress=False)
    with pytest.raises(DataError, match=r"is the converter's output folder, which holds the "
                       r"sets \['train'\]: pass one of them, e.g. clip_dataset\(.*/s/train'\)"):
        video.clip_dataset(tmp_path / "s", clip_len=4)


@pytest.mark.timeout(120)
def test_an_8k_batch_with_the_videos_own_size_is_refused_as_with_that_size_given(tmp_path):
    """frame_size=None: the first listed video's size is checked, once the folder is listed
    and before any clip is read, as an explicit frame_size is checked before listing."""
    pytest.importorskip("av")
    import numpy as np

    from datakit.core.arguments import _physical_memory
    from datakit.readers.video.synthetic.encoded import write_video

    memory = _physical_memory()
    if not memory:
        pytest.skip("this system does not say how much memory it has")
    write_video(np.zeros((2, 4320, 7680, 3), np.uint8), tmp_path / "v" / "a" / "8k.mp4")
    batch_size = memory // (2 * 4320 * 7680 * 3) + 1  # one batch: just over the memory
    figure = f"would build {batch_size * 2 * 4320 * 7680 * 3:,} bytes"
    for size, said in ((None, r"frame_size=None \(the videos' 4320x7680\)"),
                       ((4320, 7680), r"frame_size=\(4320, 7680\)")):
        with pytest.raises(ValueError, match=said + r", clip_len=2, batch_size=\d+\) "
                           + figure + r" .* more than this machine's .* pass a smaller"):
            video.video_dataset_from_directory(tmp_path / "v", frame_size=size, clip_len=2,
                                               batch_size=batch_size, verbose=False)
