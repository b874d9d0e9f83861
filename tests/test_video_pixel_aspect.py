"""Non-square pixels (an HDV camera's 1440x1080, each pixel 4:3 wide, shown as 1920x1080): frames
read at the shape FFmpeg shows them, and cropped or padded on that shape.

A codec (or the container) states the pixels' shape, the sample aspect ratio (SAR); FFmpeg and
players show a ``w x h`` frame ``w * SAR`` wide. The judge is FFmpeg's own conversion,
``scale=iw*sar:ih,setsar=1`` in a filter graph (:func:`video_corpus.display_frames`: FFmpeg's
default bicubic scaler, the kit's is bilinear, so scaled frames differ by a level or two on
average: the squeezed frames the kit read before differ by tens). A video of square pixels is
read exactly as before: the decoder's frames, byte for byte.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import video_corpus

from datakit.readers import video
from datakit.readers.video.decoding import decoding

#: file -> (SAR, height and width shown)
SHOWN = {"h264_sar2.mp4": ((2, 1), 48, 64), "h264_sar_half.mkv": ((1, 2), 48, 48),
         "mpeg2_hdv.mov": ((4, 3), 36, 64), "h264_sar_rotated.mp4": ((2, 1), 64, 48),
         "h264.mp4": ((1, 1), 48, 64)}
#: Mean absolute difference (of 255 levels) allowed against FFmpeg's display: its bicubic
#: scaler against the kit's bilinear one (1.6-2.9 measured on these small frames with a
#: sharp-edged square; 2.1 for square pixels cropped, where the kit's frames are as before).
NEAR = 4.0
#: ... and between the converter's JPEGs (quality 90, 4:2:0) and the reader's frames: padded
#: 24x24 frames lose 6.6 levels to JPEG with square pixels too.
JPEG = 8.0


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    return video_corpus.good_files(tmp_path_factory.mktemp("sar"), list(SHOWN))


def _shown(path: Path, info) -> np.ndarray:
    """FFmpeg's display of ``path``'s frames, turned as its display matrix says."""
    theirs = video_corpus.display_frames(path)
    return np.rot90(theirs, k=info.rotation // 90, axes=(1, 2)) if info.rotation else theirs


def _stored(path: Path, info) -> np.ndarray:
    """The frames as stored (squeezed), turned: what the kit read before it knew the SAR."""
    import av

    with av.open(str(path)) as c:
        frames = np.stack([f.to_ndarray(format="rgb24") for f in c.decode(video=0)])
    return np.rot90(frames, k=info.rotation // 90, axes=(1, 2)) if info.rotation else frames


def _off(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(int) - b).mean())


@pytest.mark.timeout(120)
def test_the_probe_records_the_pixel_shape_and_the_size_shown(files):
    assert set(files) == set(SHOWN)  # (every encoder the corpus needs is in this build)
    for name, path in files.items():
        info = decoding.probe(path, cache=False)
        assert (info.sar, info.height, info.width) == SHOWN[name], name
        stored = decoding.probe(path)  # (into the cache, then out of it)
        assert decoding.probe(path) == stored and stored.sar == info.sar, name


@pytest.mark.timeout(60)
def test_an_entry_the_older_probe_cache_holds_is_probed_again(files, tmp_path, monkeypatch):
    monkeypatch.setenv("DATAKIT_PROBE_CACHE", str(tmp_path))
    path = files["h264_sar2.mp4"]
    info = decoding.probe(path)
    (entry,) = tmp_path.glob("*.json")
    old = json.loads(entry.read_text())
    old["version"] -= 1  # as the probe before the SAR wrote it: the stored width, no "sar"
    old["facts"]["width"] = 32
    del old["facts"]["sar"]
    entry.write_text(json.dumps(old))
    assert decoding.probe(path) == info


@pytest.mark.timeout(60)
def test_the_containers_word_wins_over_the_codecs_as_in_ffmpeg(files, tmp_path):
    """An MP4 whose ``pasp`` box says 4:3 over H.264 that says 2:1: FFmpeg (its command line
    sets each frame's SAR from the stream's, ``av_guess_sample_aspect_ratio`` alike) shows
    4:3, 32 pixels 42 wide (``scale=iw*sar:ih`` cuts 42.7 to 42); with the box gone, the
    codec's 2:1."""
    import struct

    data = files["h264_sar2.mp4"].read_bytes()
    at = data.find(b"pasp")
    assert struct.unpack(">II", data[at + 4:at + 12]) == (2, 1)  # (the file is as claimed)
    lying, silent = tmp_path / "lying.mp4", tmp_path / "silent.mp4"
    lying.write_bytes(data[:at + 4] + struct.pack(">II", 4, 3) + data[at + 12:])
    silent.write_bytes(data[:at] + b"free" + data[at + 4:])  # the box made padding
    for path, sar, width in ((lying, (4, 3), 42), (silent, (2, 1), 64)):
        info = decoding.probe(path, cache=False)
        assert (info.sar, info.height, info.width) == (sar, 48, width), path.name
        ours = decoding.decode_frames(info, range(info.frames), seek=False)
        theirs = _shown(path, info)
        assert ours.shape == theirs.shape and _off(ours, theirs) < NEAR, path.name


@pytest.mark.timeout(120)
def test_frames_are_read_as_ffmpeg_shows_them_and_square_pixels_as_before(files):
    import simplejpeg

    for name, path in files.items():
        info = decoding.probe(path, cache=False)
        theirs = _shown(path, info)
        ours = decoding.decode_frames(info, range(info.frames), seek=False)
        assert ours.shape == theirs.shape == (24, *SHOWN[name][1:], 3), name
        if info.sar == (1, 1):  # the decoder's frames, byte for byte, as before
            assert np.array_equal(ours, _stored(path, info)), name
        else:
            assert _off(ours, theirs) < NEAR, (name, _off(ours, theirs))
        wanted = [info.frames - 1, 0, 11]  # (seeking back and forth: the same frames)
        assert np.array_equal(decoding.decode_frames(info, wanted), ours[wanted]), name
        # the converter's JPEGs (frame_size=None: the size shown), decoded
        jpegs = np.stack([simplejpeg.decode_jpeg(j) for j in decoding.iter_jpegs(info)])
        assert jpegs.shape == theirs.shape and _off(jpegs, ours) < JPEG, name


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fit", [dict(frame_size=(24, 24), crop_to_aspect_ratio=True),
                                 dict(frame_size=(24, 24), pad_to_aspect_ratio=True),
                                 dict(frame_size=(16, 40), crop_to_aspect_ratio=True)],
                         ids=["crop", "pad", "crop_wide"])
def test_crop_and_pad_work_on_the_shape_shown(files, fit):
    import simplejpeg

    for name in ("h264_sar2.mp4", "h264_sar_half.mkv", "mpeg2_hdv.mov", "h264_sar_rotated.mp4"):
        path = files[name]
        info = decoding.probe(path, cache=False)
        want = np.stack([decoding.fit_frame(f, **fit) for f in _shown(path, info)])
        ours = decoding.decode_frames(info, range(info.frames), seek=False, **fit)
        squeezed = np.stack([decoding.fit_frame(f, **fit) for f in _stored(path, info)])
        assert ours.shape == want.shape, name
        assert _off(ours, want) < NEAR, (name, _off(ours, want))
        assert _off(squeezed, want) > 2 * NEAR, name  # (10-71 levels: the test tells them apart)
        jpegs = np.stack([simplejpeg.decode_jpeg(j) for j in decoding.iter_jpegs(info, **fit)])
        assert jpegs.shape == ours.shape and _off(jpegs, ours) < JPEG, name


@pytest.mark.timeout(300)
def test_the_direct_reader_and_the_shards_give_the_shape_shown(files, tmp_path):
    """``frame_size=None`` (the default): HDV's frames 64x36, in both paths; cropped to
    a square: the centre of the frame shown."""
    folder = tmp_path / "v" / "hdv"
    folder.mkdir(parents=True)
    shutil.copy(files["mpeg2_hdv.mov"], folder / "a.mov")
    info = decoding.probe(folder / "a.mov", cache=False)
    theirs = _shown(folder / "a.mov", info)
    ds = video.video_dataset_from_directory(tmp_path / "v", clip_len=24, batch_size=1,
                                            shuffle=False, verbose=False)
    (clips, _), = list(ds)
    assert clips.shape == (1, 24, 36, 64, 3)
    assert _off(clips.numpy()[0], theirs) < NEAR
    for fit in (dict(), dict(frame_size=(20, 20), crop_to_aspect_ratio=True)):
        out = tmp_path / f"out{len(fit)}"
        result = video.write_video_shards(tmp_path / "v", out, processes=1, progress=False,
                                          **fit)
        ds = video.clip_dataset(result["train"], clip_len=24, batch_size=1, training=False)
        (clips, _), = list(ds)
        want = np.stack([decoding.fit_frame(f, **fit) for f in theirs])
        assert clips.shape == (1, *want.shape)
        assert _off(clips.numpy()[0], want) < JPEG, fit
