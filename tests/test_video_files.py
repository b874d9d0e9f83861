"""Your own videos: a class-folder set of mixed codecs read directly and converted to shards.

One small mixed folder (8 videos of 32x32, every codec, 29.97 fps, a variable
rate, sound, rotation, one wider video) is written once per module.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from datakit.core.errors import DataError
from datakit.readers import video
from datakit.readers.video.decoding import decoding
from datakit.readers.video.decoding.video_info import VideoInfo
from datakit.readers.video.index import folders

KW = dict(clip_len=6, frame_size=(32, 32), fps=15, seed=1)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("videos")
    video.make_video_folder(d, per_class=2, min_frames=24, max_frames=36, seed=0)
    return d


@pytest.fixture(scope="module")
def shards(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("converted")
    return video.write_video_shards(folder, out, frame_size=(32, 32), fps=15,
                                    validation_split=0.25, seed=1, processes=1, progress=False)


def chosen(ds, key):
    return sorted((int(i), tuple(f)) for b in ds
                  for i, f in zip(b[key].numpy(), b["frames"].numpy().tolist(), strict=True))


@pytest.mark.timeout(120)
def test_probe_counts_frames_the_header_does_not_and_reads_rate_and_rotation(folder):
    infos = {p.name: decoding.probe(p) for p in sorted(folder.glob("*/*"))}
    assert {i.codec for i in infos.values()} == {"h264", "mpeg4", "vp9", "hevc", "mjpeg"}
    for name, info in infos.items():
        decoded = decoding.decode_frames(info, range(info.frames), seek=False)
        assert len(decoded) == info.frames > 0, name  # WebM/MKV headers say 0
    assert {round(i.fps, 2) for i in infos.values()} == {25.0, 29.97}
    rotated = [i for i in infos.values() if i.rotation]
    assert [r.rotation for r in rotated] == [90]
    # the rotated file stores turned frames; read back, the square moves as labelled
    original = video.make_video(_source_index(rotated[0].path), size=32, min_frames=24,
                                max_frames=36, seed=0)
    back = decoding.decode_frames(rotated[0], [0, 1])
    assert np.abs(back.astype(int) - original.frames[:2]).mean() < 12


def _source_index(path):
    """make_video_folder writes synthetic video i as file k; find i for the file's class."""
    k = int(path.rsplit("_", 1)[1].split(".")[0])
    by_class, i, seen = {c: 0 for c in range(4)}, 0, 0
    while True:
        v = video.make_video(i, size=32, min_frames=24, max_frames=36, seed=0)
        if by_class[v.label] < 2:
            by_class[v.label] += 1
            if seen == k:
                return i
            seen += 1
        i += 1


def test_frames_at_a_rate_are_chosen_by_timestamp():
    ntsc = VideoInfo("a", tuple(range(0, 1001 * 30, 1001)), 1 / 30000, 2, 2, 0, "h264")
    # the frame on screen at j / 10 s is the last one that started at or before it
    assert decoding.output_frames(ntsc, 10).tolist() == [int(j / 10 * 30000 / 1001)
                                                          for j in range(10)]
    times = np.cumsum([0] + [0.03 if t % 2 else 0.05 for t in range(9)])  # variable rate
    vfr = VideoInfo("b", tuple(int(t * 1000) for t in times), 1 / 1000, 2, 2, 0, "h264")
    got = decoding.output_frames(vfr, 25)
    assert got.tolist() == [int(np.searchsorted(times, j / 25 + 1e-6, "right") - 1)
                            for j in range(len(got))]
    assert len(got) == 10  # 0.4 s at 25 fps: the same duration, evenly resampled


def test_a_frame_is_found_by_its_timestamp_without_a_table_per_video():
    from datakit.readers.video.decoding.video_info import frame_at

    info = VideoInfo("a", (0, 1001, 2002, 2002, 4004), 1 / 30000, 2, 2, 0, "h264")
    # as a {timestamp: index} dict found them: the last of two frames sharing a timestamp
    assert [frame_at(info, p) for p in info.pts] == [0, 1, 3, 3, 4]
    assert [frame_at(info, p) for p in (-1, 500, 3003, 5005, None)] == [None] * 5
    assert not hasattr(info, "frame_of")  # no cached table kept per video read


@pytest.mark.timeout(120)
def test_seeking_returns_the_frames_decoding_from_the_start_does(tmp_path):
    v = video.make_video(0, size=32, min_frames=60, max_frames=60, seed=0)
    path = video.write_video(v.frames, tmp_path / "a.webm", codec="vp9", gop=8)
    info = decoding.probe(path)
    wanted = [50, 51, 59, 17]
    assert np.array_equal(decoding.decode_frames(info, wanted),
                          decoding.decode_frames(info, wanted, seek=False))


@pytest.mark.timeout(180)
def test_both_paths_choose_the_same_frames_each_epoch(folder, shards):
    direct_train, direct_val = video.video_dataset_from_directory(
        folder, **KW, batch_size=3, validation_split=0.25, subset="both", with_ids=True,
        verbose=False)
    from_shards = video.clip_dataset(shards["train"], clip_len=6, batch_size=3, seed=1,
                                     with_ids=True)
    first = chosen(direct_train, "video")
    assert first == chosen(from_shards, "id")
    second = chosen(direct_train, "video")
    assert second != first and second == chosen(from_shards, "id")  # a new clip per epoch
    val = video.clip_dataset(shards["validation"], clip_len=6, batch_size=3, with_ids=True,
                             training=False)
    assert chosen(direct_val, "video") == chosen(val, "id") == chosen(val, "id")
    assert direct_train.class_names == from_shards.class_names == ["down", "left", "right", "up"]
    # the pixels agree too, up to the shards' JPEG
    a = {int(i): c for b in direct_val for i, c in zip(b["video"], b["clip"].numpy(), strict=True)}
    b = {int(i): c for b in val for i, c in zip(b["id"], b["clip"].numpy(), strict=True)}
    assert all(np.abs(a[i].astype(int) - b[i]).mean() < 6 for i in a)


@pytest.mark.timeout(120)
def test_uniform_sampler_and_frame_step_agree_on_both_paths(folder, shards):
    kw = dict(sampler="uniform", clips_per_video=2, frame_step=2, clip_len=4)
    direct = video.video_dataset_from_directory(
        folder, frame_size=(32, 32), fps=15, batch_size=4, seed=1, validation_split=0.25,
        subset="training", with_ids=True, verbose=False, **kw)
    conv = video.clip_dataset(shards["train"], batch_size=4, seed=1, with_ids=True, **kw)
    got = chosen(direct, "video")
    assert got == chosen(conv, "id") and len(got) == 12  # 6 videos, 2 clips each
    assert all(np.all(np.diff(f) == 2) for _, f in got)


def test_split_is_by_video_disjoint_and_seeded():
    train, val = folders.split_indices(40, 0.25, seed=3)
    assert len(val) == 10 and not set(train) & set(val) and sorted(train + val) == list(range(40))
    assert (train, val) == folders.split_indices(40, 0.25, seed=3)
    assert val != folders.split_indices(40, 0.25, seed=4)[1]


def test_manifest_holds_class_names_and_each_video(shards, folder):
    from datakit.core import manifest

    s = manifest.read_manifest(shards["train"])["sets"]["videos"]
    assert s["class_names"] == ["down", "left", "right", "up"]
    assert len(s["videos"]) == 6 and {v["height"] for v in s["videos"]} == {32}
    for v in s["videos"]:
        info = decoding.probe(v["source"])
        assert v["frames"] == len(decoding.output_frames(info, 15)) and v["fps"] == 15


def _bad_folder(tmp_path, name, make):
    d = tmp_path / name
    good = video.make_video(0, size=16, min_frames=12, max_frames=12, seed=0).frames
    video.write_video(good, d / "a" / "ok.mp4")
    bad = d / "a" / "bad.mp4"
    make(bad, good)
    return d, bad


def _audio_only(path, _):
    import av

    with av.open(str(path), "w", format="mp4") as out:
        s = out.add_stream("aac", rate=8000)
        for k in range(8):  # frames of the encoder's size (1024 samples)
            f = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp",
                                           layout="mono")
            f.sample_rate, f.pts = 8000, 1024 * k
            out.mux(s.encode(f))
        out.mux(s.encode())


def _truncated(path, frames):
    video.write_video(frames, path)
    path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])


BAD = {"not_a_video": (lambda p, _: p.write_text("hello"), "FFmpeg can open"),
       "audio_only": (_audio_only, "no video stream"),
       "truncated": (_truncated, "FFmpeg can open|truncated|damaged"),
       "short": (lambda p, f: video.write_video(f[:3], p), "fewer than")}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_are_named_or_skipped_and_counted(tmp_path, case):
    make, message = BAD[case]
    d, bad = _bad_folder(tmp_path, case, make)
    with pytest.raises(DataError, match=message) as e:
        video.video_dataset_from_directory(d, clip_len=6, verbose=False)
    assert e.value.path == str(bad)
    ds = video.video_dataset_from_directory(d, clip_len=6, on_bad_file="skip", verbose=False)
    assert [p for p, _ in ds.skipped] == [str(bad)] and len(ds.file_paths) == 1
    assert sum(len(y) for _, y in ds) == 1


def test_empty_class_folder_and_folder_without_videos(tmp_path):
    (tmp_path / "empty" / "cats").mkdir(parents=True)
    (tmp_path / "empty" / "dogs").mkdir()
    video.write_video(np.zeros((8, 16, 16, 3), np.uint8), tmp_path / "empty" / "dogs" / "d.mp4")
    with pytest.raises(DataError, match="holds no video") as e:
        video.video_dataset_from_directory(tmp_path / "empty", clip_len=4, verbose=False)
    assert e.value.path.endswith("cats")
    ds = video.video_dataset_from_directory(tmp_path / "empty", clip_len=4, on_bad_file="skip",
                                            verbose=False)
    assert ds.class_names == ["cats", "dogs"] and len(ds.skipped) == 1
    (tmp_path / "flat").mkdir()
    with pytest.raises(DataError, match="no class subfolders"):
        video.video_dataset_from_directory(tmp_path / "flat", verbose=False)


def test_two_frame_sizes_are_refused_naming_the_video(folder, tmp_path):
    with pytest.raises(DataError, match="pass frame_size") as e:
        video.write_video_shards(folder, tmp_path / "x", processes=1, progress=False)
    assert decoding.probe(e.value.path).width == 40  # the wider video is named
    with pytest.raises(DataError, match="pass frame_size"):
        video.video_dataset_from_directory(folder, clip_len=4, verbose=False)


@pytest.mark.timeout(120)
def test_utf8_class_names_and_rate_fraction(tmp_path):
    frames = video.make_video(1, size=16, min_frames=20, max_frames=20, seed=0).frames
    for name in ("고양이", "chien"):
        video.write_video(frames, tmp_path / name / "v.mkv", codec="hevc",
                          fps=Fraction(30000, 1001))
    ds = video.video_dataset_from_directory(tmp_path, clip_len=4, batch_size=2, verbose=False)
    assert ds.class_names == ["chien", "고양이"]
    assert sorted(int(y) for _, ys in ds for y in ys) == [0, 1]


KILL = """
import os, signal, sys
from datakit.readers import video
from datakit.readers.video.converter import part_files

write_record, made = part_files._write_record, []


def die_in_the_fourth_part(f, pieces):  # a kill -9 while the 4th video's part is being written
    made.append(1)
    if len(made) == 4:
        os.kill(os.getpid(), signal.SIGKILL)
    return write_record(f, pieces)


part_files._write_record = die_in_the_fourth_part
if __name__ == "__main__":
    video.write_video_shards(sys.argv[1], sys.argv[2], frame_size=(32, 32), processes=1,
                             progress=False)
"""


@pytest.mark.timeout(240)
def test_a_killed_conversion_resumes_without_redoing_finished_videos(folder, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", KILL, str(folder), str(out)], timeout=180)
    assert proc.returncode == -signal.SIGKILL
    parts = out / ".parts"
    assert len(list(parts.glob("0*.tfrecord"))) == 3 and not (out / "train").exists()
    result = video.write_video_shards(folder, out, frame_size=(32, 32), processes=2,
                                      progress=False)
    assert (result["reused"], result["converted"]) == (3, 5)
    assert sum(len(y) for _, y in video.clip_dataset(result["train"], clip_len=4)) == 8
    assert not parts.exists()  # the commit removes the parts folder, leftovers and all


@pytest.mark.timeout(240)
def test_conversion_memory_stays_flat_on_a_long_video(tmp_path):
    import gc

    from datakit.perf.memory import RssSampler, rss_bytes

    size, n = 160, 1500  # decoded, these frames are 115 MB
    y, x = np.mgrid[:size, :size]
    base_frame = np.stack([x, y, (x + y) // 2], -1).astype(np.uint8)
    frames = np.stack([np.roll(base_frame, t, axis=1) for t in range(n)])
    video.write_video(frames, tmp_path / "long" / "a" / "v.mp4", gop=30)
    video.write_video(frames[:8], tmp_path / "warm" / "a" / "v.mp4")
    del frames
    gc.collect()
    video.write_video_shards(tmp_path / "warm", tmp_path / "w", processes=1, progress=False)
    base = rss_bytes()
    sampler = RssSampler(0.02)
    sampler.start()
    video.write_video_shards(tmp_path / "long", tmp_path / "out", processes=1, progress=False)
    sampler.stop.set()
    sampler.join()
    assert (sampler.peak - base) < 40e6, (sampler.peak - base) / 1e6
    assert video.clip_dataset(tmp_path / "out" / "train", clip_len=4).cardinality() == 1


def test_bad_arguments_say_how_to_fix(folder):
    with pytest.raises(ValueError, match="sampler"):
        video.video_dataset_from_directory(folder, sampler="middle", verbose=False)
    with pytest.raises(ValueError, match="subset"):
        video.video_dataset_from_directory(folder, validation_split=0.2, verbose=False)
    with pytest.raises(TypeError, match="clip_len"):
        video.video_dataset_from_directory(folder, clip_len=2.0, verbose=False)
    with pytest.raises(ValueError, match="center"):
        video.clip_dataset(folder, sampler="center", clips_per_video=3)
    assert tf.data.AUTOTUNE == -1


@pytest.mark.timeout(120)
def test_errors_after_listing_advise_what_applies_then(tmp_path):
    frames = video.make_video(0, size=16, min_frames=40, max_frames=40, seed=0).frames
    path = video.write_video(frames, tmp_path / "a" / "v.mp4", gop=8)
    info = decoding.probe(path)
    path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 3])  # broken after listing
    for call, fix in [(lambda: decoding.decode_frames(info, [30, 35]), "build the dataset again"),
                      (lambda: list(decoding.iter_jpegs(info)), "run write_video_shards again")]:
        with pytest.raises(DataError) as e:
            call()
        assert e.value.path == str(path) and fix in str(e.value), str(e.value)
        assert "on_bad_file" not in str(e.value)  # it applies while the folder is listed only
    path.unlink()
    with pytest.raises(DataError, match="build the dataset again"):
        decoding.decode_frames(info, [0])


def test_class_names_passed_to_clip_dataset_must_match_the_manifest(shards):
    assert video.clip_dataset(shards["train"], clip_len=4, class_names=["down", "left", "right",
                                                                        "up"]).class_names == \
        ["down", "left", "right", "up"]
    with pytest.raises(ValueError, match="were written with.*leave class_names out"):
        video.clip_dataset(shards["train"], clip_len=4, class_names=["cat", "dog"])


def test_options_object_reads_the_same_clips_as_the_keywords(folder, shards):
    from datakit.readers.video.options.clip_options import VideoOptions

    opts = VideoOptions(clip_len=6, frame_size=(32, 32), fps=15, sampler="uniform",
                        clips_per_video=2)
    kw = dict(seed=1, with_ids=True, verbose=False, validation_split=0.25, subset="training")
    by_options = video.video_dataset_from_directory(folder, options=opts, **kw)
    by_keywords = video.video_dataset_from_directory(
        folder, clip_len=6, frame_size=(32, 32), fps=15, sampler="uniform", clips_per_video=2,
        **kw)
    assert chosen(by_options, "video") == chosen(by_keywords, "video")
    from_shards = video.clip_dataset(shards["train"], seed=1, with_ids=True,
                                     options=VideoOptions(clip_len=6, sampler="uniform",
                                                          clips_per_video=2))
    assert chosen(from_shards, "id") == chosen(by_options, "video")


def test_a_converted_video_shorter_than_a_clip_is_named_or_skipped_and_listed(shards):
    from datakit.core import manifest
    from datakit.core.errors import DataError

    videos = manifest.read_manifest(shards["train"])["sets"]["videos"]["videos"]
    shortest = min(v["frames"] for v in videos)
    short = {v["id"]: v["source"] for v in videos if v["frames"] == shortest}
    with pytest.raises(DataError, match=re.escape(Path(next(iter(short.values()))).name)):
        video.clip_dataset(shards["train"], clip_len=shortest + 1)  # before any tracing
    ds = video.clip_dataset(shards["train"], clip_len=shortest + 1, on_bad_file="skip",
                            training=False, with_ids=True, batch_size=2)
    assert [source for source, _ in ds.skipped] == sorted(short.values())
    read = sorted(int(i) for b in ds for i in b["id"].numpy())
    assert read == sorted(v["id"] for v in videos if v["id"] not in short)
    assert int(ds.cardinality()) == -(-len(read) // 2)
    longest = max(v["frames"] for v in videos)
    with pytest.raises(DataError, match="no video is long enough for one clip") as e:
        video.clip_dataset(shards["train"], clip_len=longest + 1, on_bad_file="skip")
    assert f"({len(videos)} too short, the longest {longest} frames" in str(e.value)


@pytest.fixture(scope="module")
def long_videos(tmp_path_factory):
    """4 videos of 150-200 frames: three or four chunks of 64 frames each."""
    d = tmp_path_factory.mktemp("long")
    video.make_video_folder(d, per_class=1, size=16, min_frames=150, max_frames=200, seed=2)
    out = video.write_video_shards(d, tmp_path_factory.mktemp("long_shards"),
                                   frame_size=(16, 16), processes=1, progress=False)
    return d, out["train"]


@pytest.mark.timeout(180)
def test_clips_across_chunks_are_the_direct_readers_frames(long_videos):
    folder, train = long_videos
    kw = dict(clip_len=8, frame_step=3, sampler="uniform", clips_per_video=5, seed=3)
    direct = video.video_dataset_from_directory(folder, frame_size=(16, 16), batch_size=4,
                                                with_ids=True, verbose=False, **kw)
    conv = video.clip_dataset(train, batch_size=4, with_ids=True, **kw)
    got = chosen(conv, "id")
    assert got == chosen(direct, "video") and len(got) == 20
    assert any(f[0] // 64 != f[-1] // 64 for _, f in got)  # some clips span two chunks
    a = {(int(i), f[0]): c for b in direct for i, f, c in
         zip(b["video"], b["frames"].numpy(), b["clip"].numpy(), strict=True)}
    b = {(int(i), f[0]): c for b in conv for i, f, c in
         zip(b["id"], b["frames"].numpy(), b["clip"].numpy(), strict=True)}
    assert a.keys() == b.keys()
    assert all(np.abs(a[k].astype(int) - b[k]).mean() < 6 for k in a)  # up to the JPEG


@pytest.mark.timeout(180)
def test_a_clip_reads_only_the_chunks_it_spans(long_videos, tmp_path):
    """Chunks no clip spans are damaged (their CRCs fail, the manifest made to agree): the
    clips still come; a damaged chunk that a clip spans is read and refused, naming its shard."""
    import json
    import shutil

    from datakit.core import manifest

    train = tmp_path / "train"
    shutil.copytree(long_videos[1], train)
    center = dict(clip_len=8, frame_step=3, training=False, batch_size=4, with_ids=True)
    before = {int(i): c for b in video.clip_dataset(train, **center)
              for i, c in zip(b["id"], b["clip"].numpy(), strict=True)}
    man = json.loads((train / "manifest.json").read_text())
    videos, files = man["sets"]["videos"]["videos"], man["sets"]["videos"]["files"]

    def damage(keep):
        for v in videos:
            middle = v["frames"] - 22 + 1  # the center clip spans frames middle//2 .. +21
            spanned = {(middle // 2) // 64, (middle // 2 + 21) // 64}
            raw = bytearray((train / v["shard"]).read_bytes())
            for k, at in enumerate(v["chunks"]):
                if (k in spanned) != keep:
                    raw[at + 40] ^= 0xFF  # a byte of the chunk's record: its CRC fails
            (train / v["shard"]).write_bytes(bytes(raw))
        for f in files:  # the manifest made to agree, so only a read of a record can tell
            f["sha256"] = manifest.sha256(train / f["file"])
        (train / "manifest.json").write_text(json.dumps(man))

    damage(keep=True)
    assert all(len(v["chunks"]) >= 3 for v in videos)  # so each video has chunks left unread
    after = {int(i): c for b in video.clip_dataset(train, **center)
             for i, c in zip(b["id"], b["clip"].numpy(), strict=True)}
    assert after.keys() == before.keys() and all(np.array_equal(after[i], before[i])
                                                 for i in before)
    damage(keep=False)  # read, its CRC fails: the clip's records are missing, named by shard
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"videos-0000\d-of-00004\.tfrecord\] \[does not hold video.*damaged"):
        list(video.clip_dataset(train, **center))


def test_clip_dataset_refuses_a_seed_that_is_not_an_int(shards):
    with pytest.raises(TypeError, match="seed must be an int, got True"):
        video.clip_dataset(shards["train"], clip_len=6, seed=True)  # was taken as seed 1
    assert len(chosen(video.clip_dataset(shards["train"], clip_len=6, seed=None, with_ids=True),
                      "id")) == 6  # None: a seed of TensorFlow's, as the direct reader takes


@pytest.mark.timeout(60)
def test_a_video_replaced_by_a_shorter_one_while_converted_is_said_to_have_changed(tmp_path):
    """Not "a truncated file?": the file changed since it was listed (and probed)."""
    import os

    path = tmp_path / "v.mp4"
    video.write_video(np.zeros((30, 16, 16, 3), np.uint8), path)
    info = decoding.probe(path, cache=False)
    video.write_video(np.zeros((10, 16, 16, 3), np.uint8), path)
    os.utime(path, ns=(info.stamp[1] + 10**9,) * 2)
    with pytest.raises(DataError, match=r"v.mp4: changed since the folder was listed "
                       r".*run write_video_shards again"):
        list(decoding.iter_jpegs(info))
