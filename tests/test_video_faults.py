"""Video folders and arguments that are not what they seem: named, counted or refused up front.

A link that leads nowhere where a class folder could be is named (``"raise"``)
or listed in ``skipped`` (``"skip"``), by the direct reader and the converter
alike; a shuffled split without a seed, a negative seed and a crop that leaves
nothing of a video are refused with the argument's name and the fix; a second
conversion into a folder another one is writing is refused by name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from datakit.core.atomic import FolderBusy
from datakit.core.errors import DataError
from datakit.readers import video
from datakit.readers.video.index.folders import list_videos
from datakit.readers.video.options.clip_options import VideoOptions

ROOT = Path(__file__).resolve().parent.parent
KW = dict(clip_len=4, batch_size=1, shuffle=False, verbose=False)


def _folder(d: Path, names=("a", "b"), per=2) -> Path:
    for c, name in enumerate(names):
        for k in range(per):
            frames = video.make_video(c, size=16, min_frames=8, max_frames=8, seed=k).frames
            video.write_video(frames, d / name / f"{name}{k}.mp4")
    return d


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return _folder(tmp_path_factory.mktemp("faults") / "v")


@pytest.fixture
def linked(tmp_path):
    """Two class folders of two videos; a dangling link ``c``, a looping one ``d`` beside them."""
    d = _folder(tmp_path / "v")
    (d / "c").symlink_to(tmp_path / "unmounted")
    (d / "d").symlink_to(d / "d")
    (d / ".hidden").symlink_to(tmp_path / "elsewhere")  # hidden: not a class, as in Keras
    return d


@pytest.mark.timeout(120)
def test_a_class_folder_link_that_leads_nowhere_is_named_under_raise(linked):
    for call in (lambda: list_videos(linked),
                 lambda: video.video_dataset_from_directory(linked, **KW),
                 lambda: video.write_video_shards(linked, linked.parent / "out", processes=1,
                                                  progress=False)):
        with pytest.raises(DataError, match=r"points to nothing.*1 more such link.*skip") as e:
            call()
        assert e.value.path == str(linked / "c")
    assert not (linked.parent / "out" / "train").exists()


@pytest.mark.timeout(180)
def test_a_class_folder_link_that_leads_nowhere_is_counted_under_skip(linked, capsys):
    want = [str(linked / "c"), str(linked / "d")]
    ds = video.video_dataset_from_directory(linked, on_bad_file="skip", **KW)
    assert [p for p, _ in ds.skipped] == want and ds.class_names == ["a", "b"]
    assert "points to nothing" in ds.skipped[0][1] and "loops back" in ds.skipped[1][1]
    assert sorted(int(y) for _, ys in ds for y in ys) == [0, 0, 1, 1]
    r = video.write_video_shards(linked, linked.parent / "out", processes=1, progress=False,
                                 on_bad_file="skip")
    assert [p for p, _ in r["skipped"]] == want and r["class_names"] == ["a", "b"]
    assert str(linked / "c") in capsys.readouterr().out
    # a class asked for by name is never skipped: the labels after it would shift
    with pytest.raises(DataError, match="class_names without it") as e:
        list_videos(linked, class_names=["a", "c", "b"], on_bad_file="skip")
    assert e.value.path == str(linked / "c")


@pytest.mark.timeout(120)
def test_a_shuffled_split_needs_a_seed_on_both_paths(videos, tmp_path):
    with pytest.raises(ValueError, match=r"provide a `seed`.*seed=42"):
        video.video_dataset_from_directory(videos, validation_split=0.5, subset="training",
                                           seed=None, verbose=False)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"provide a `seed`.*seed=42"):
        video.write_video_shards(videos, out, validation_split=0.5, seed=None, processes=1,
                                 progress=False)
    assert not out.exists()  # refused before any video was listed or converted
    r = video.write_video_shards(videos, out, validation_split=0.5, seed=1, processes=1,
                                 progress=False)
    assert (r["converted"], r["reused"]) == (4, 0)


@pytest.mark.timeout(120)
def test_a_negative_seed_is_refused_naming_it(videos, tmp_path):
    for kw in (dict(shuffle=True), dict(validation_split=0.5, subset="both")):
        with pytest.raises(ValueError, match=r"seed=-1: pass an int >= 0"):
            video.video_dataset_from_directory(videos, **{**KW, **kw, "seed": -1})
    with pytest.raises(ValueError, match=r"seed=-1: pass an int >= 0"):
        video.write_video_shards(videos, tmp_path / "out", validation_split=0.5, seed=-1,
                                 processes=1, progress=False)
    with pytest.raises(TypeError, match="seed must be an int"):
        video.video_dataset_from_directory(videos, **{**KW, "seed": 1.5})


@pytest.mark.timeout(120)
def test_a_crop_that_leaves_nothing_is_refused_before_decoding(videos):
    infos = list_videos(videos).infos  # 16x16 videos
    flat = VideoOptions(frame_size=(1, 100), crop_to_aspect_ratio=True)
    with pytest.raises(ValueError, match=r"crop_to_aspect_ratio=True, frame_size=\(1, 100\): "
                                         r".*a0.mp4 is 16x16.*is 0x16 pixels.*pad_to_aspect"):
        flat.check_videos(infos)
    VideoOptions(frame_size=(1, 100), pad_to_aspect_ratio=True).check_videos(infos)
    VideoOptions(frame_size=(8, 24), crop_to_aspect_ratio=True).check_videos(infos)  # 5x16


@pytest.mark.parametrize("names, error, words", [
    (["a", "a"], ValueError, "lists 'a' twice"),  # read twice, under two labels
    ("ab", TypeError, "class_names='ab': pass a list"),  # read as ['a', 'b']
    (["a", 1], TypeError, r"class_names=\['a', 1\]: pass a list"),
])
def test_class_names_are_distinct_folder_names_on_both_paths(videos, tmp_path, names, error,
                                                            words):
    with pytest.raises(error, match=words):
        video.video_dataset_from_directory(videos, class_names=names, **KW)
    with pytest.raises(error, match=words):
        video.write_video_shards(videos, tmp_path / "out", class_names=names, processes=1,
                                 progress=False)
    assert not (tmp_path / "out").exists()  # refused before any work


@pytest.mark.timeout(120)
def test_a_followed_folder_link_that_leads_nowhere_is_named(tmp_path):
    d = _folder(tmp_path / "v")
    (d / "a" / "more").symlink_to(tmp_path / "unmounted")  # was a folder of videos, maybe
    (d / "a" / "notes.txt").symlink_to(tmp_path / "gone.txt")  # not a video, not a folder
    kw = {**KW, "shuffle": True}
    assert len(video.video_dataset_from_directory(d, **kw).file_paths) == 4  # not followed
    with pytest.raises(DataError, match="points to nothing") as e:
        video.video_dataset_from_directory(d, follow_links=True, **kw)
    assert e.value.path == str(d / "a" / "more")
    ds = video.video_dataset_from_directory(d, follow_links=True, on_bad_file="skip", **kw)
    assert [p for p, _ in ds.skipped] == [str(d / "a" / "more")] and len(ds.file_paths) == 4


@pytest.mark.timeout(180)
def test_a_second_conversion_into_a_folder_in_use_is_refused_by_name(videos, tmp_path):
    """While one conversion holds ``out`` (here: its lock, held by another process), a second
    into it is refused at once, naming the folder, and touches nothing; after, it runs."""
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from datakit.readers.video.converter import generations\n"
         "with generations.conversion_lock(Path(sys.argv[1])):\n"
         "    print('held', flush=True)\n    time.sleep(120)\n", str(out)],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderBusy, match=rf"^{out}: another conversion into this folder is "
                                             r"running; let it finish, or convert into another"):
            video.write_video_shards(videos, out, processes=1, progress=False)
        assert sorted(p.name for p in out.iterdir()) == []  # no parts, no sets
    finally:
        holder.kill()
        holder.wait()
    assert video.write_video_shards(videos, out, processes=1, progress=False)["train"]
    (tmp_path / "a_file").write_text("")
    with pytest.raises(DataError, match="a_file: is a file; pass a folder for the converted"):
        video.write_video_shards(videos, tmp_path / "a_file", processes=1, progress=False)
