"""``follow_links=True`` over link loops and cross links: every video listed once, under its class.

A link back to a parent (``a/loop -> ..``) would list the folders beside the
class folder again (class b's video under class a's label); a link from one
class folder into another (``a/more -> ../b``) would list b's videos twice.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from datakit.core.errors import DataError
from datakit.readers import video
from datakit.readers.video.index.folders import list_videos, video_files


@pytest.fixture
def looped(tmp_path):
    d = tmp_path / "v"
    for c, name in enumerate("ab"):
        frames = video.make_video(c, size=16, min_frames=8, max_frames=8, seed=c).frames
        video.write_video(frames, d / name / f"{name}0.mp4")
    (d / "a" / "loop").symlink_to("..")
    (d / "a" / "self").symlink_to(".")
    (d / "a" / "more").symlink_to("../b")
    (d / "b" / "deep").mkdir()
    (d / "b" / "deep" / "up").symlink_to("../..")
    return d


@pytest.mark.timeout(120)
def test_a_link_loop_is_followed_once_and_no_video_is_listed_twice(looped):
    listing = list_videos(looped, follow_links=True)
    got = sorted((os.path.relpath(i.path, looped), label)
                 for i, label in zip(listing.infos, listing.labels, strict=True))
    assert got == [("a/a0.mp4", 0), ("b/b0.mp4", 1)]
    flat = [p.relative_to(looped).as_posix() for p in video_files(looped, follow_links=True)]
    assert flat == ["a/a0.mp4", "b/b0.mp4"]
    ds = video.video_dataset_from_directory(looped, follow_links=True, clip_len=4,
                                            batch_size=1, shuffle=False, verbose=False)
    assert sorted(Path(p).relative_to(looped).as_posix() for p in ds.file_paths) == \
        ["a/a0.mp4", "b/b0.mp4"]


@pytest.mark.timeout(60)
def test_a_folder_reached_only_through_a_link_is_still_read(tmp_path):
    frames = video.make_video(0, size=16, min_frames=8, max_frames=8, seed=0).frames
    video.write_video(frames, tmp_path / "elsewhere" / "x.mp4")
    (tmp_path / "v" / "a").mkdir(parents=True)
    (tmp_path / "v" / "a" / "linked").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "v" / "a" / "twice").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "other").mkdir()
    (tmp_path / "elsewhere" / "other").symlink_to(tmp_path / "other")  # two folders outside
    (tmp_path / "other" / "back").symlink_to(tmp_path / "elsewhere")  # linked both ways
    assert [p.name for p in video_files(tmp_path / "v" / "a", follow_links=True)] == ["x.mp4"]
    assert video_files(tmp_path / "v" / "a") == []  # not followed by default


@pytest.mark.timeout(60)
@pytest.mark.parametrize("follow_links", [True, False])
def test_a_class_folder_linked_to_another_is_refused_naming_both(looped, follow_links):
    """``c -> a``: its videos are class a's; read under c as well, one video would be two
    classes (Keras reads it twice): refused by name, never an empty class without a word."""
    (looped / "c").symlink_to("a")
    for on_bad_file in ("raise", "skip"):
        with pytest.raises(DataError, match=r"class folder 'c' holds only videos of "
                           r"class folder 'a' \(it is a link to .*a\).*class_names") as e:
            list_videos(looped, follow_links=follow_links, on_bad_file=on_bad_file)
        assert e.value.path == str(looped / "c")
    listing = list_videos(looped, follow_links=follow_links, class_names=["b", "c"])
    assert [os.path.relpath(i.path, looped) for i in listing.infos] == ["b/b0.mp4", "c/a0.mp4"]


@pytest.mark.timeout(120)
def test_the_converter_follows_links_as_the_direct_reader_does(looped, tmp_path):
    """``write_video_shards(follow_links=)``: the direct reader's listing, the same default."""
    from datakit.readers.video.converter.convert import write_video_shards
    frames = video.make_video(0, size=16, min_frames=8, max_frames=8, seed=5).frames
    video.write_video(frames, tmp_path / "elsewhere" / "x.mp4")
    (looped / "a" / "linked").symlink_to(tmp_path / "elsewhere")
    sources = {}
    for follow_links in (False, True):
        out = write_video_shards(looped, tmp_path / f"out{follow_links}", processes=1,
                                 follow_links=follow_links, progress=False)
        listed = video.video_dataset_from_directory(looped, follow_links=follow_links,
                                                    clip_len=4, batch_size=1, verbose=False)
        sources[follow_links] = sorted(os.path.relpath(p, looped) for p in listed.file_paths)
        assert out["converted"] == len(sources[follow_links])
    assert sources == {False: ["a/a0.mp4", "b/b0.mp4"],
                       True: ["a/a0.mp4", "a/linked/x.mp4", "b/b0.mp4"]}
    with pytest.raises(TypeError, match="follow_links must be True or False"):
        write_video_shards(looped, tmp_path / "o", follow_links="yes")
