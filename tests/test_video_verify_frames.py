"""A video damaged in its middle: found when listed with ``verify_frames=True``, said truly without.

The probe decodes a file's first frames and its last group of frames. An MP4
whose middle bytes were overwritten (a keyframe every 12 frames, 45-60% of the
file) passes it; FFmpeg's full decode stops part-way. With ``verify_frames=True``
the listing decodes every frame once, names the file and the frame where FFmpeg
stops (``"raise"``) or leaves it out and counts it (``"skip"``), and keeps that
result in the probe cache (an entry of an older cache version is never taken for
a checked file). Without it, the epoch that draws a clip there names the frame,
says the listing could not see it and points to ``verify_frames``, and says
"changed" only when the file's stamp changed (a ``touch`` keeping its bytes is
no change).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from datakit.core.errors import DataError
from datakit.core.file_facts import file_stamp
from datakit.readers import video
from datakit.readers.video.decoding import decoding, probe_cache

FRAMES = 120
KW = dict(clip_len=4, batch_size=4, verbose=False, seed=1)


def _damage_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    lo, hi = int(len(data) * 0.45), int(len(data) * 0.60)
    data[lo:hi] = b"\xff" * (hi - lo)
    path.write_bytes(bytes(data))


def _ffmpeg_frames_before_error(path: Path) -> tuple[int, bool]:
    """How many frames FFmpeg's full decode gives, and whether it stopped on an error."""
    import av

    n = 0
    with av.open(str(path)) as c:
        try:
            for _ in c.decode(c.streams.video[0]):
                n += 1
        except av.error.FFmpegError:
            return n, True
    return n, False


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """Two classes of two 120-frame videos (a keyframe every 12), ``a/a1.mp4`` damaged in its
    middle; a probe cache of this test's own."""
    monkeypatch.setenv("DATAKIT_PROBE_CACHE", str(tmp_path / "probes"))
    d = tmp_path / "v"
    for c, name in enumerate("ab"):
        for k in range(2):
            frames = video.make_video(c, size=32, min_frames=FRAMES, max_frames=FRAMES,
                                      seed=k).frames
            video.write_video(frames, d / name / f"{name}{k}.mp4", gop=12)
    _damage_middle(d / "a" / "a1.mp4")
    return d


def _bad(folder: Path) -> Path:
    return folder / "a" / "a1.mp4"


@pytest.mark.timeout(180)
def test_verify_frames_skips_and_counts_a_file_damaged_in_its_middle(folder):
    bad = _bad(folder)
    stop, failed = _ffmpeg_frames_before_error(bad)
    assert failed and 0 < stop < FRAMES  # FFmpeg stops part-way
    plain = video.video_dataset_from_directory(folder, on_bad_file="skip", **KW)
    assert plain.skipped == []  # the probe alone cannot see it: the reason for the option
    ds = video.video_dataset_from_directory(folder, on_bad_file="skip", verify_frames=True, **KW)
    assert [p for p, _ in ds.skipped] == [str(bad)]
    assert f"frame {stop} of {FRAMES} cannot be decoded" in ds.skipped[0][1]
    assert str(bad) not in ds.file_paths and len(ds.file_paths) == 3
    for _ in range(2):  # epochs end, with every clip promised
        assert sum(int(len(y)) for _, y in ds) == 3
    with pytest.raises(DataError, match=f"frame {stop} of {FRAMES} cannot be decoded.*"
                                        "remove or re-encode it, or pass on_bad_file='skip'") as e:
        video.video_dataset_from_directory(folder, verify_frames=True, **KW)
    assert e.value.path == str(bad)
    with pytest.raises(TypeError, match="verify_frames must be True or False"):
        video.video_dataset_from_directory(folder, verify_frames="yes", **KW)


def _read_every_clip(ds):
    for _ in ds:
        pass


@pytest.mark.timeout(180)
def test_without_it_the_epoch_names_the_frame_and_the_option_not_a_change(folder):
    import tensorflow as tf

    bad = _bad(folder)
    stop, _ = _ffmpeg_frames_before_error(bad)
    ds = video.video_dataset_from_directory(folder, on_bad_file="skip", sampler="uniform",
                                            clips_per_video=30, **KW)  # clips everywhere
    os.utime(bad)  # touched: a new stamp, the same bytes, so no change
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        _read_every_clip(ds)
    said = str(e.value)
    assert f"{bad}: frame {stop} of {FRAMES} cannot be decoded" in said
    assert "listing could not see it" in said and "verify_frames=True" in said
    assert "changed since" not in said and "broke after" not in said
    # its bytes changed since the listing: said to be a change, by the one rule
    data = bytearray(bad.read_bytes())
    data[10] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(tf.errors.InvalidArgumentError, match="changed since the folder was "
                                                             "listed.*bytes differ"):
        _read_every_clip(ds)


def _entry(path: Path) -> Path:
    entry = probe_cache._entry(str(path))
    assert entry is not None
    return entry


@pytest.mark.timeout(120)
def test_the_full_check_is_paid_once_and_kept_in_the_probe_cache(folder, monkeypatch):
    bad = _bad(folder)
    stop, _ = _ffmpeg_frames_before_error(bad)
    calls = []
    real = decoding.check_every_frame

    def counted(*args, **kw):
        calls.append(args[0])
        return real(*args, **kw)

    monkeypatch.setattr(decoding, "check_every_frame", counted)
    decoding.probe(bad)  # a probe only: its entry records no full check
    assert "verified" not in json.loads(_entry(bad).read_text())["facts"]
    for _ in range(2):
        with pytest.raises(DataError, match=f"frame {stop} of {FRAMES}"):
            decoding.probe(bad, verify_frames=True)
    assert calls == [str(bad)]  # decoded once, its failure kept
    stored = json.loads(_entry(bad).read_text())
    assert stored["version"] == probe_cache.VERSION
    assert stored["facts"]["verified"]["failed_at"] == stop
    good = folder / "b" / "b0.mp4"
    assert decoding.probe(good, verify_frames=True).verified
    assert decoding.probe(good, verify_frames=True).verified
    assert decoding.probe(good).verified  # a plain probe is served the checked entry
    assert calls == [str(bad), str(good)]


@pytest.mark.timeout(120)
def test_an_entry_of_an_older_cache_is_never_taken_for_a_checked_file(folder):
    """An entry the older cache wrote (version 4) for this very file and stamp, even one
    that says every frame decoded, is not read: the file is decoded again, and refused."""
    bad = _bad(folder)
    facts = decoding._probe_file(str(bad))
    facts["verified"] = {"frames": FRAMES, "failed_at": None, "error": None}
    entry = _entry(bad)
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(json.dumps({"version": 4,  # the cache before full checks were kept
                                 "path": os.path.abspath(bad),
                                 "stamp": list(file_stamp(bad)), "facts": facts}))
    with pytest.raises(DataError, match="cannot be decoded"):
        decoding.probe(bad, verify_frames=True)
    assert json.loads(entry.read_text())["version"] == probe_cache.VERSION  # replaced


@pytest.mark.timeout(120)
def test_a_good_file_passes_and_every_frame_then_reads(folder):
    good = folder / "b" / "b1.mp4"
    info = decoding.probe(good, cache=False, verify_frames=True)
    assert info.verified and info.frames == FRAMES == _ffmpeg_frames_before_error(good)[0]
    assert decoding.decode_frames(info, np.arange(FRAMES), seek=False).shape[0] == FRAMES
