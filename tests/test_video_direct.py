"""The direct reader's decoding: the same frames as before, at the least decoding, checked files.

Real H.264 files written with a known keyframe interval (PyAV), small and short.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
import tensorflow as tf

from datakit.core.errors import DataError
from datakit.core.file_facts import file_stamp
from datakit.readers import video
from datakit.readers.video.decoding import decoding, frame_reading, probe_cache
from datakit.readers.video.options.clip_sampling import clip_frames, video_key


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test probes into a cache folder of its own (never the user's)."""
    monkeypatch.setenv("DATAKIT_PROBE_CACHE", str(tmp_path / "cache"))


def frames_of(n, size=16, seed=0):
    """``n`` frames, each a different picture (a bar that moves, a shade that changes)."""
    out = np.full((n, size, size, 3), 60, np.uint8)
    for t in range(n):
        out[t, :, (t * 3) % size] = 250
        out[t, : size // 4] = (t * 7) % 200
    return out


def write_h264(frames, path, *, fmt="mp4", keyint=30, bframes=0):
    """H.264 with a keyframe every ``keyint`` frames exactly (no scene cuts) and ``bframes``."""
    import av

    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream("libx264", rate=25, options={"x264-params": (
            f"keyint={keyint}:min-keyint={keyint}:scenecut=0:bframes={bframes}:b-adapt=0:"
            "log-level=none")})
        stream.height, stream.width = frames.shape[1:3]
        stream.pix_fmt = "yuv420p"
        for f in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
        out.mux(stream.encode())
    return path


def sequential(path):
    """Every frame decoded front to back with no seek: the order frames are shown in."""
    import av
    with av.open(str(path)) as c:
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(video=0)])


def key_before(keys, k):
    return max(x for x in keys if x <= k)


@pytest.mark.timeout(60)
def test_each_clip_decodes_from_its_keyframe_at_most(tmp_path):
    path = write_h264(frames_of(150), tmp_path / "v.mp4", keyint=30)
    info = decoding.probe(path)
    assert info.keys == (0, 30, 60, 90, 120)
    cases = [  # clips far apart seek; a clip just after the last runs on
        [range(95, 105, 2), range(36, 46, 2)],
        [range(10, 20), range(22, 28)],
        [range(5, 9), range(125, 149, 3), range(62, 66)],
    ]
    for clips in cases:
        wanted = np.concatenate([list(c) for c in clips])
        stats = {}
        got = frame_reading.read_frames(info, wanted, stats=stats)
        budget = sum(max(c) - key_before(info.keys, min(c)) + 1 for c in clips)
        assert stats["decoded"] <= budget, (clips, stats)
        assert np.array_equal(got, decoding.decode_frames(info, wanted, seek=False))
        small = frame_reading.read_frames(info, wanted, threads=1, frame_size=(24, 40))
        for threads in (0, 3):  # FFmpeg's threads (decoding and converting) change the CPU
            # a clip takes, never its frames, at the file's size or another
            assert np.array_equal(frame_reading.read_frames(info, wanted, threads=threads), got)
            assert np.array_equal(frame_reading.read_frames(
                info, wanted, threads=threads, frame_size=(24, 40)), small)
    stats = {}
    frame_reading.read_frames(info, [95, 97, 99], stats=stats)
    assert stats == {"decoded": 10, "packets": stats["packets"], "seeks": 1}  # frames 90 to 99


@pytest.mark.timeout(60)
def test_one_conversion_fits_frames_as_before(tmp_path):
    frames = frames_of(20, size=32)
    frames[:, :, :8] = 0  # a picture that is not square once cut
    path = video.write_video(frames[:, :, :24], tmp_path / "v.mp4", rotation=90)
    info = decoding.probe(path)
    assert (info.height, info.width) == (24, 32)
    full = decoding.decode_frames(info, [3, 7])
    for fit in [dict(frame_size=(12, 16)), dict(frame_size=(16, 16), crop_to_aspect_ratio=True),
                dict(frame_size=(16, 16), pad_to_aspect_ratio=True)]:
        once = decoding.decode_frames(info, [3, 7], **fit)  # YUV to the size in one step
        twice = np.stack([decoding.fit_frame(f, **fit) for f in full])  # RGB, then resized
        assert once.shape == twice.shape == (2, *fit["frame_size"], 3)
        assert np.abs(once.astype(int) - twice).mean() < 6, fit


@pytest.mark.timeout(120)
def test_the_direct_reader_takes_the_sampler_frames_decoded_in_order(tmp_path):
    for i, n in enumerate([90, 70, 100]):
        (tmp_path / "set" / f"c{i % 2}").mkdir(parents=True, exist_ok=True)
        write_h264(frames_of(n, seed=i), tmp_path / "set" / f"c{i % 2}" / f"v{i}.mp4")
    ds = video.video_dataset_from_directory(
        tmp_path / "set", clip_len=5, frame_step=2, clips_per_video=2, batch_size=None,
        with_ids=True, seed=3, verbose=False, num_parallel_calls=2, decoder_threads=3)
    epoch_key = next(iter(tf.data.Dataset.random(seed=3, rerandomize_each_iteration=True)
                          .take(1))).numpy()
    seen = 0
    for d in ds:
        i, frames = int(d["video"]), d["frames"].numpy()
        info = decoding.probe(ds.file_paths[i])
        picked = clip_frames(info.frames, video_key(epoch_key, i), 5, frame_step=2,
                             clips_per_video=2).numpy()
        assert any(np.array_equal(frames, row) for row in picked)  # the sampler's indices
        assert np.array_equal(d["clip"].numpy(), sequential(info.path)[frames])
        seen += 1
    assert seen == 6


@pytest.mark.timeout(60)
def test_b_frames_in_avi_come_in_the_order_shown(tmp_path):
    path = write_h264(frames_of(60, size=32), tmp_path / "b.avi", fmt="avi", keyint=20,
                      bframes=3)
    info = decoding.probe(path)
    assert info.reordered  # AVI keeps decode-order timestamps: frames are counted
    shown = _ffmpeg_frames(path) if shutil.which("ffmpeg") else sequential(path)
    assert len(shown) == info.frames == 60
    wanted = list(range(60)) + [45, 3, 59, 21]
    assert np.array_equal(decoding.decode_frames(info, wanted), shown[wanted])
    assert np.array_equal(decoding.decode_frames(info, wanted, seek=False), shown[wanted])


def test_the_converter_keeps_b_frame_avi_frames_in_the_order_shown(tmp_path):
    """Each JPEG the converter encodes is nearest to the frame shown at its place."""
    import io

    from PIL import Image

    path = write_h264(frames_of(60, size=32), tmp_path / "b.avi", fmt="avi", keyint=20,
                      bframes=3)
    info = decoding.probe(path)
    shown = sequential(path).astype(np.int16)
    jpegs = list(decoding.iter_jpegs(info, quality=95))
    assert len(jpegs) == 60
    for k, jpeg in enumerate(jpegs):
        got = np.asarray(Image.open(io.BytesIO(jpeg)), np.int16)
        assert np.abs(shown - got).mean(axis=(1, 2, 3)).argmin() == k


@pytest.mark.timeout(60)
def test_b_frames_skipped_before_a_clip_change_no_frame(tmp_path):
    path = write_h264(frames_of(90, size=32), tmp_path / "b.mp4", keyint=45, bframes=3)
    info = decoding.probe(path)
    assert not info.reordered
    shown = sequential(path)
    for clips in ([range(30, 40, 2), range(80, 88)], [range(12, 14), range(52, 60, 3)]):
        wanted = np.concatenate([list(c) for c in clips])
        stats = {}
        assert np.array_equal(frame_reading.read_frames(info, wanted, stats=stats),
                              shown[wanted])
        budget = sum(max(c) - key_before(info.keys, min(c)) + 1 for c in clips)
        assert stats["decoded"] < budget  # unreferenced frames before a clip: not decoded


def _ffmpeg_frames(path):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, 32, 32, 3)


@pytest.mark.timeout(120)
def test_a_video_replaced_after_listing_is_refused_by_name(tmp_path):
    for i in range(3):
        video.write_video(frames_of(30, seed=i), tmp_path / "set" / "a" / f"v{i}.mp4")
    ds = video.video_dataset_from_directory(tmp_path / "set", clip_len=4, batch_size=1,
                                            shuffle=False, verbose=False)
    later = tmp_path / "set" / "a" / "v2.mp4"  # listed, not read yet: replaced by another
    video.write_video(frames_of(30, seed=9)[:, ::-1].copy(), later)
    read = []
    with pytest.raises(tf.errors.InvalidArgumentError) as e:  # DataError, through tf.data
        for clip, _ in ds:
            read.append(clip)
    assert len(read) == 2  # the two unchanged videos, then the error: never a mix
    assert str(later) in str(e.value) and "changed since the folder was listed" in str(e.value)
    info = decoding.probe(tmp_path / "set" / "a" / "v1.mp4")
    first = decoding.decode_frames(info, [0])
    os.utime(info.path, ns=(1, 1))  # touched, no byte changed: compared by content, read
    np.testing.assert_array_equal(decoding.decode_frames(info, [0]), first)
    data = bytearray(open(info.path, "rb").read())
    data[-8:] = bytes(b ^ 0xFF for b in data[-8:])  # the same size, other bytes
    open(info.path, "wb").write(bytes(data))
    with pytest.raises(DataError, match="changed since.*its bytes differ"):
        decoding.decode_frames(info, [0])


@pytest.mark.timeout(60)
def test_probe_facts_are_cached_by_path_and_stamp(tmp_path, monkeypatch):
    path = video.write_video(frames_of(40), tmp_path / "v.mp4", gop=10, fps=Fraction(30))
    first = decoding.probe(path)
    assert probe_cache.load(str(path), file_stamp(str(path))) is not None
    with monkeypatch.context() as m:  # the file unchanged: its facts come from the cache
        m.setattr(decoding, "_probe_file", lambda p: pytest.fail("probed again"))
        assert decoding.probe(path) == first
    stamp = os.stat(path)
    data = path.read_bytes()
    path.write_bytes(b"\0" * len(data))  # rewritten keeping size and time (cp -p): probed
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    with pytest.raises(DataError, match="not a video"):
        decoding.probe(path)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1))  # touched: probed again
    with pytest.raises(DataError, match="not a video"):
        decoding.probe(path)
    path.write_bytes(data)
    assert decoding.probe(path, cache=False).pts == first.pts


@pytest.mark.timeout(120)
def test_a_cache_after_the_clip_choice_freezes_the_clips_and_the_docstrings_say_so(tmp_path):
    """What the readers' docstrings warn of, shown: ``.cache()`` after the random clip
    choice gives the first epoch's clips again; without it, each epoch draws new ones."""
    from datakit.readers.video.reading.clips import clip_dataset
    from datakit.readers.video.reading.mp4_clips import mp4_clip_dataset

    for fn in (video.video_dataset_from_directory, clip_dataset, mp4_clip_dataset):
        doc = " ".join(fn.__doc__.split())
        assert "a ``.cache()`` after it freezes the first epoch's clips" in doc, fn.__name__
        assert "before the clip choice" in doc, fn.__name__
    (tmp_path / "v" / "a").mkdir(parents=True)
    write_h264(frames_of(90), tmp_path / "v" / "a" / "a.mp4")
    ds = video.video_dataset_from_directory(tmp_path / "v", clip_len=2, batch_size=None,
                                            seed=3, verbose=False, with_ids=True)

    def two_epochs(d):
        it = d.repeat(2).as_numpy_iterator()
        return [next(it)["frames"].tolist() for _ in range(2)]

    first, second = two_epochs(ds)
    assert first != second  # a new random clip each epoch
    frozen = two_epochs(ds.cache())
    assert frozen[0] == frozen[1]
