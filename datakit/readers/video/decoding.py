"""Any video file PyAV opens, decoded frame by frame: probed, resampled by time, seeked, resized.

:func:`probe` reads a file's video stream once without decoding it (one
packet per frame: the timestamps count the frames even when the header says
0, as WebM and Matroska headers do), decodes its first frame (for the rotation
a phone writes in the display matrix) and its last group of frames (from the
last keyframe to the end), and compares the frames found with the count the
index lists: a file cut short at its start or at its end is found here.
:func:`output_frames` maps the frames of the wanted frame rate to the file's
frames *by timestamp*, so 29.97 fps and variable frame rates come out right.
:func:`decode_frames` seeks to the keyframe before the first frame wanted and
decodes only up to the last one. Nothing here imports TensorFlow, so worker
processes (:mod:`datakit.readers.video.convert`) start fast.

FFmpeg's decoders run in C with Python's GIL released (PyAV drops it around
each decode call), which is why several files decode at once on several cores
when threads call :func:`decode_frames` in parallel.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from datakit.core.errors import DataError

__all__ = ["VIDEO_EXTENSIONS", "VideoInfo", "probe", "output_frames", "decode_frames",
           "fit_frame", "encode_jpegs"]

#: The file name endings read as videos (any container FFmpeg opens would do).
VIDEO_EXTENSIONS = (".mp4", ".m4v", ".avi", ".webm", ".mkv", ".mov")


@dataclass(frozen=True)
class VideoInfo:
    """What :func:`probe` learned: ``pts`` (sorted, in ``time_base`` units), one per frame."""

    path: str
    pts: tuple
    time_base: float
    height: int  # as displayed (rotation applied)
    width: int
    rotation: int  # degrees counterclockwise, as FFmpeg's display matrix says
    codec: str
    rate: float = 0.0  # the container's average frame rate, 0 if it has none

    @property
    def frames(self) -> int:
        return len(self.pts)

    @property
    def times(self) -> np.ndarray:
        return (np.asarray(self.pts, np.float64) - self.pts[0]) * self.time_base

    @property
    def fps(self) -> float:
        """The container's average frame rate, else frames over the time they span."""
        if self.rate:
            return self.rate
        t = self.times
        return (len(t) - 1) / t[-1] if len(t) > 1 and t[-1] > 0 else 0.0


#: What to do about a bad file, by when it is found. While the folder is listed
#: (probed), ``on_bad_file='skip'`` leaves it out. Once clips are read or a
#: conversion runs, a file that fails is dropped and counted under ``'skip'``
#: (by the reader or the converter), so these fixes are for ``'raise'``.
_WHEN_LISTED = "remove the file or pass on_bad_file='skip'"
_WHILE_READING = ("remove or re-encode the file and build the dataset again (it broke after "
                 "the folder was listed)")
_WHILE_CONVERTING = ("remove or re-encode the file and run write_video_shards again (the videos "
                    "already converted are kept)")


def _open(path: str, fix: str = _WHEN_LISTED):
    import av

    try:
        return av.open(path)
    except (av.error.FFmpegError, OSError, UnicodeDecodeError) as e:
        raise DataError(path, f"not a video FFmpeg can open ({type(e).__name__}: {e}); "
                        f"{fix}") from None


def _check_link(path: str) -> None:
    """A link that leads nowhere (dangling, or looping back on itself) named as such."""
    import errno
    import os

    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as e:
            kind = "loops back on itself" if e.errno == errno.ELOOP else "points to nothing"
            raise DataError(path, f"is a link that {kind} ({os.readlink(path)!r}); fix or "
                            "remove the link, or pass on_bad_file='skip'") from None


def probe(path: str | Path) -> VideoInfo:
    """Timestamps, size, rotation and codec of a video file; a :class:`DataError` naming it."""
    import av

    path = str(path)
    _check_link(path)
    with _open(path) as container:
        if not container.streams.video:
            raise DataError(path, "has no video stream (an audio-only file?); remove it or pass "
                            "on_bad_file='skip'")
        stream = container.streams.video[0]
        listed = stream.frames  # the index's count (MP4, MOV), 0 where the header has none
        try:
            packets = [(p.pts, p.is_keyframe) for p in container.demux(stream)
                       if p.pts is not None and p.size]
            pts = sorted(p for p, _ in packets)
            container.seek(0)
            first = next(container.decode(stream), None)
            if listed and len(pts) < listed:
                raise DataError(path, f"is truncated: its index lists {listed} frames, the file "
                                f"holds {len(pts)}; remove it or pass on_bad_file='skip'")
            if first is not None and len(pts) > 1:
                _decode_tail(container, stream, packets)
        except av.error.FFmpegError as e:
            raise DataError(path, f"cannot be read ({e}): a damaged or truncated file; remove "
                            "it or pass on_bad_file='skip'") from None
        if first is None or not pts:
            raise DataError(path, "holds no decodable frame (empty or truncated); remove it "
                            "or pass on_bad_file='skip'")
        rotation = int(round(first.rotation or 0)) % 360
        h, w = first.height, first.width
        if rotation in (90, 270):
            h, w = w, h
        rate = stream.average_rate or stream.guessed_rate
        return VideoInfo(path, tuple(pts), float(stream.time_base), h, w, rotation,
                         stream.codec_context.name, float(rate) if rate else 0.0)


def _decode_tail(container, stream, packets) -> None:
    """Decode from the last keyframe to the end: a file cut short fails here, not in epoch 9."""
    keys = [p for p, key in packets if key]
    if keys:
        container.seek(keys[-1], stream=stream, backward=True, any_frame=False)
    for _ in container.decode(stream):
        pass


def output_frames(info: VideoInfo, fps: float | None = None) -> np.ndarray:
    """For each frame at ``fps`` (``None``: the file's own frames), the file frame shown then.

    Output frame ``j`` is at time ``j / fps``; it shows the last file frame
    whose timestamp is at or before that time. The video ends one average
    frame after its last timestamp.

    >>> info = VideoInfo("v.mp4", tuple(range(0, 1001 * 30, 1001)), 1 / 30000, 2, 2, 0, "h264")
    >>> round(float(info.fps), 3), output_frames(info, 10).tolist()  # 29.97 fps to 10
    (29.97, [0, 2, 5, 8, 11, 14, 17, 20, 23, 26])
    """
    if fps is None:
        return np.arange(info.frames)
    times = info.times
    end = times[-1] + (1 / info.fps if info.fps else 1 / fps)
    n = int(np.floor(end * fps + 1e-6))
    wanted = np.arange(n) / fps
    return np.searchsorted(times, wanted + 1e-6, side="right") - 1


def fit_frame(rgb: np.ndarray, frame_size=None, *, crop_to_aspect_ratio: bool = False,
              pad_to_aspect_ratio: bool = False) -> np.ndarray:
    """Resize an ``(H, W, 3)`` frame to ``frame_size=(height, width)``, as Keras' image loader.

    Stretched by default; ``crop_to_aspect_ratio`` cuts the centre to the
    target's aspect ratio first, ``pad_to_aspect_ratio`` adds black bars.
    """
    if frame_size is None:
        return rgb
    import av

    th, tw = frame_size
    h, w = rgb.shape[:2]
    if crop_to_aspect_ratio:
        ch, cw = min(h, round(w * th / tw)), min(w, round(h * tw / th))
        y, x = (h - ch) // 2, (w - cw) // 2
        rgb = rgb[y:y + ch, x:x + cw]
    inner = (th, tw)
    if pad_to_aspect_ratio:
        scale = min(th / h, tw / w)
        inner = (max(1, round(h * scale)), max(1, round(w * scale)))
    if rgb.shape[:2] != inner:
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        rgb = frame.reformat(width=inner[1], height=inner[0], interpolation="BILINEAR") \
            .to_ndarray(format="rgb24")
    if inner != (th, tw):
        out = np.zeros((th, tw, 3), np.uint8)
        y, x = (th - inner[0]) // 2, (tw - inner[1]) // 2
        out[y:y + inner[0], x:x + inner[1]] = rgb
        rgb = out
    return rgb


def _rgb(frame, rotation: int) -> np.ndarray:
    rgb = frame.to_ndarray(format="rgb24")
    return np.rot90(rgb, k=rotation // 90) if rotation else rgb


def decode_frames(info: VideoInfo, wanted, *, seek: bool = True, **fit) -> np.ndarray:
    """The file frames ``wanted`` (indices, any order, repeats allowed) as ``(n, H, W, 3)`` uint8.

    With ``seek`` it jumps to the keyframe before the first frame wanted;
    without, it decodes from the first frame. ``fit``: keywords of
    :func:`fit_frame`. A frame that cannot be decoded is a :class:`DataError`.
    """
    import av

    wanted = np.asarray(wanted, np.int64)
    need = set(wanted.tolist())
    index = {p: k for k, p in enumerate(info.pts)}
    got: dict[int, np.ndarray] = {}
    with _open(info.path, _WHILE_READING) as container:
        stream = container.streams.video[0]
        try:
            if seek and min(need) > 0:
                container.seek(info.pts[min(need)], stream=stream, backward=True,
                               any_frame=False)
            for frame in container.decode(stream):
                k = index.get(frame.pts)
                if k is not None and k in need:
                    got[k] = fit_frame(_rgb(frame, info.rotation), **fit)
                if k is not None and k >= max(need) and len(got) == len(need):
                    break
        except av.error.FFmpegError as e:
            raise DataError(info.path, f"decoding failed ({e}): a damaged or truncated file; "
                            f"{_WHILE_READING}") from None
    missing = sorted(need - set(got))
    if missing and seek:  # a seek that landed past a frame wanted: decode from the start
        return decode_frames(info, wanted, seek=False, **fit)
    if missing:
        raise DataError(info.path, f"frames {missing[:5]} of {info.frames} could not be "
                        f"decoded (a truncated file?); {_WHILE_READING}")
    return np.stack([got[k] for k in wanted.tolist()])


def encode_jpegs(info: VideoInfo, fps: float | None = None, quality: int = 90,
                 **fit) -> list[bytes]:
    """The video at ``fps``, one JPEG per output frame, decoded front to back.

    Only the JPEGs stay in memory, never the decoded frames, so memory does
    not grow with the video's length in decoded frames.
    """
    import io

    import av
    from PIL import Image

    timeline = output_frames(info, fps)
    index = {p: k for k, p in enumerate(info.pts)}
    jpegs, j = [], 0
    with _open(info.path, _WHILE_CONVERTING) as container:
        try:
            for frame in container.decode(container.streams.video[0]):
                k = index.get(frame.pts)
                if k is None or j >= len(timeline) or timeline[j] != k:
                    continue
                buf = io.BytesIO()
                Image.fromarray(fit_frame(_rgb(frame, info.rotation), **fit)).save(
                    buf, "JPEG", quality=quality)
                while j < len(timeline) and timeline[j] == k:  # a frame shown twice at fps
                    jpegs.append(buf.getvalue())
                    j += 1
        except av.error.FFmpegError as e:
            raise DataError(info.path, f"decoding failed ({e}): a damaged or truncated file; "
                            f"{_WHILE_CONVERTING}") from None
    if j < len(timeline):
        raise DataError(info.path, f"only {j} of {len(timeline)} frames decoded (a truncated "
                        f"file?); {_WHILE_CONVERTING}")
    return jpegs
