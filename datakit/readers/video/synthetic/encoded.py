"""Videos as people's files are: any codec and container, odd frame rates, sound, rotation.

:func:`write_video` encodes frames with any of PyAV's encoders (H.264, MPEG-4,
VP9, HEVC, MJPEG) into any container, at a fractional or variable frame
rate, with a silent audio track or a display rotation (as a phone writes
it). :func:`make_video_folder` writes the synthetic moving squares
(:mod:`datakit.readers.video.synthetic.moving_squares`) as a class-folder set that mixes all of
these, the set a learner's own videos look like.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from datakit.core.arguments import check_flags
from datakit.core.atomic import atomic_file
from datakit.core.made_once import make_folder_once
from datakit.core.paths import user_path
from datakit.readers.video.synthetic.moving_squares import CLASSES, make_video

__all__ = ["write_video", "make_video_folder"]

#: (encoder, container format, file ending) for each codec the lessons use.
CODECS = {"h264": ("libx264", "mp4", ".mp4"), "mpeg4": ("mpeg4", "avi", ".avi"),
          "vp9": ("libvpx-vp9", "webm", ".webm"), "hevc": ("libx265", "matroska", ".mkv"),
          "mjpeg": ("mjpeg", "mov", ".mov")}

#: Encoder settings that make the same frames give the same pixels on every run. x264's
#: MB-tree and x265's CU-tree only tune quality (not frames or times), and on small frames
#: both read memory they never wrote: x264 then encodes the same 32x32 video to other
#: pixels from run to run (6 results in 10 runs of one video), and x265 writes past its
#: buffer (40 or 48 pixels: valgrind shows it) so the process aborts later ("free():
#: invalid next size"). Without the trees: one result in 10 runs of each of 30 videos.
ENCODER_OPTIONS = {"h264": {"x264-params": "mbtree=0"},
                   "hevc": {"x265-params": "log-level=none:cutree=0"}}


def write_video(frames: np.ndarray, path: str | os.PathLike, *, codec: str = "h264",
                fps: float | Fraction = 25,
                frame_times: Sequence[float] | np.ndarray | None = None,
                rotation: int = 0, audio: bool = False, gop: int = 12,
                faststart: bool = False) -> Path:
    """Encode ``(length, H, W, 3)`` uint8 frames (even H and W) into ``path``, atomically.

    ``fps`` may be a ``Fraction`` (``Fraction(30000, 1001)`` is 29.97);
    ``frame_times``: each frame's time in seconds (a variable frame rate);
    ``rotation``: degrees counterclockwise for the display matrix; ``gop``:
    frames between keyframes; ``faststart``: an MP4's index at the start of the file
    (as for streaming) instead of its end.
    """
    import av

    if codec not in CODECS:
        raise ValueError(f"codec={codec!r}: pass one of {sorted(CODECS)}")
    check_flags(audio=audio, faststart=faststart)
    frames = np.asarray(frames)
    if not (frames.ndim == 4 and frames.shape[-1] == 3 and frames.dtype == np.uint8):
        raise ValueError(f"frames {frames.shape} {frames.dtype}: pass (length, H, W, 3) uint8")
    encoder, fmt, _ = CODECS[codec]
    path = Path(user_path(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"movflags": "faststart"} if faststart else {}
    with atomic_file(path) as tmp, av.open(str(tmp), "w", format=fmt, options=options) as out:
        stream = out.add_stream(encoder, rate=Fraction(fps).limit_denominator(100_000))
        stream.height, stream.width = frames.shape[1:3]
        stream.pix_fmt = "yuvj420p" if codec == "mjpeg" else "yuv420p"
        if codec != "mjpeg":
            stream.gop_size = gop
        if codec in ENCODER_OPTIONS:
            stream.options = dict(ENCODER_OPTIONS[codec])
        if frame_times is not None:
            stream.codec_context.time_base = Fraction(1, 1000)
        if rotation:
            stream.set_display_rotation(rotation)
        sound = out.add_stream("aac", rate=8000) if audio else None
        for t, f in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(f, format="rgb24")
            if frame_times is not None:
                frame.pts, frame.time_base = round(frame_times[t] * 1000), Fraction(1, 1000)
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
        if sound is not None:
            _write_silence(out, sound, seconds=len(frames) / float(fps))
    return path


def _write_silence(out: Any, sound: Any, seconds: float) -> None:
    """``seconds`` of silence on the audio stream ``sound``, in frames of the encoder's size."""
    import av

    size = sound.codec_context.frame_size or 1024
    for k in range(max(1, int(8000 * seconds) // size)):
        chunk = av.AudioFrame.from_ndarray(np.zeros((1, size), np.float32), format="fltp",
                                           layout="mono")
        chunk.sample_rate, chunk.pts = 8000, k * size
        out.mux(sound.encode(chunk))
    out.mux(sound.encode())


def make_video_folder(directory: str | os.PathLike, per_class: int = 3, *, size: int = 32,
                      min_frames: int = 30, max_frames: int = 60, seed: int = 0) -> list[Path]:
    """Write ``per_class`` videos per direction into ``directory/<class>/``, mixing formats.

    Video ``k`` uses codec ``k % 5`` (H.264 MP4, MPEG-4 AVI, VP9 WebM, HEVC
    MKV, MJPEG MOV); every 4th runs at 29.97 fps, every 6th at a variable
    rate (H.264 MP4, as phones write it), every 5th has an audio track, every
    7th but the HEVC ones is 8 pixels wider, and
    video 3 is stored rotated (its frames turned, with a display matrix that
    turns them back). Returns the paths.

    Safe when several processes make the same folder at once (two notebooks): it is made
    once, whole, in a temporary folder renamed into place, and a second call with the
    same arguments uses it (:func:`datakit.core.made_once.make_folder_once`).
    """
    recipe: dict[str, int] = dict(per_class=per_class, size=size, min_frames=min_frames,
                                  max_frames=max_frames, seed=seed)
    return make_folder_once(directory, lambda tmp: write_mixed_videos(tmp, **recipe),
                            recipe={"maker": "make_video_folder", **recipe})


def write_mixed_videos(directory: Path, *, per_class: int, size: int, min_frames: int,
                       max_frames: int, seed: int) -> list[Path]:
    """:func:`make_video_folder`'s videos written straight into ``directory`` (no lock)."""
    codecs = list(CODECS)
    by_class = {c: 0 for c in range(len(CLASSES))}
    paths, i = [], 0
    while min(by_class.values()) < per_class:
        v = make_video(i, size=size, min_frames=min_frames, max_frames=max_frames, seed=seed)
        i += 1
        if by_class[v.label] >= per_class:
            continue
        k = sum(by_class.values())
        by_class[v.label] += 1
        fps: int | Fraction = 25  # every 4th video: NTSC's 30000/1001
        frames, times, rotation = v.frames, None, 0
        if k % 7 == 6 and k % 5 != 3:  # (not the HEVC ones: the set stays as it was made)
            frames = np.concatenate([frames, frames[:, :, :8]], axis=2)
        if k % 4 == 3:
            fps = Fraction(30000, 1001)
        if k % 6 == 5:
            times = np.cumsum([0] + [0.03 if t % 2 else 0.05 for t in range(len(frames) - 1)])
        if k == 3:
            frames, rotation = np.rot90(frames, k=-1, axes=(1, 2)).copy(), 90
        codec = codecs[k % len(codecs)] if times is None else "h264"  # VFR: as phones write
        name = f"{CLASSES[v.label]}_{k:03d}{CODECS[codec][2]}"
        paths.append(write_video(frames, directory / CLASSES[v.label] / name, codec=codec,
                                 fps=fps, frame_times=times, rotation=rotation,
                                 audio=k % 5 == 4))
    return paths
