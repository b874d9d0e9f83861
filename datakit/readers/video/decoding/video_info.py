"""What a video file is, as the probe found it, and how it is opened (errors named).

:class:`VideoInfo` holds the probe's facts (:func:`datakit.readers.video.decoding.decoding.probe`);
:func:`sample_aspect_ratio` and :func:`display_width` give a frame's shape as shown;
:func:`open_video` opens a file with PyAV, a file FFmpeg cannot open (or a pipe,
a socket, a device: never waited on) being a
:class:`~datakit.core.errors.DataError` that names it and says what to do at
that moment (while listing, reading or converting); :func:`video_stream` picks the
stream FFmpeg reads, and :func:`frame_order` numbers the frames as FFmpeg shows them.
"""

from __future__ import annotations

import bisect
import os
import stat
from dataclasses import dataclass
from typing import Any

import numpy as np

from datakit.core.errors import DataError

__all__ = ["VideoInfo"]


@dataclass(frozen=True)
class VideoInfo:
    """What the probe learned: ``pts`` (sorted, in ``time_base`` units), one per frame."""

    path: str
    pts: tuple
    time_base: float
    height: int  # as displayed (the pixel aspect ratio and the rotation applied)
    width: int
    rotation: int  # degrees counterclockwise, as FFmpeg's display matrix says
    codec: str
    rate: float = 0.0  # the container's average frame rate, 0 if it has none
    keys: tuple = ()  # the keyframes, as frame indices (empty: not known)
    reordered: bool = False  # frames counted as decoded (AVI with B-frames, joined recordings)
    stamp: tuple = ()  # the file's stamp when probed (datakit.core.file_facts)
    digest: int | None = None  # the file's CRC-32 then, to tell a touch from an edit
    sar: tuple = (1, 1)  # the sample (pixel) aspect ratio, width to height, as FFmpeg guesses it
    verified: bool = False  # every frame decoded at the listing (verify_frames=True)

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


def video_stream(container: Any) -> Any:
    """The video stream FFmpeg reads (``av_find_best_stream``: the one flagged default, of
    several frames, before the first listed), never an attached picture (cover art, a
    still): ``None`` when the file has no other video stream."""
    pictures = [s for s in container.streams.video
                if s.disposition & s.disposition.__class__.attached_pic]
    videos = [s for s in container.streams.video if s not in pictures]
    if not videos:
        return None
    best = container.streams.best("video")
    return best if best is not None and best.index in {s.index for s in videos} else videos[0]


def sample_aspect_ratio(stream: Any) -> tuple[int, int]:
    """The shape of ``stream``'s pixels, ``(width, height)`` in lowest terms, as FFmpeg and
    players take it (``av_guess_sample_aspect_ratio``): the container's (an MP4's ``pasp``
    box, Matroska's display size), else the codec's (H.264's VUI, MPEG-2's aspect code:
    an MPEG-TS has no field of its own); ``(1, 1)``, square, where neither says (``0/1``).
    Read after a frame is decoded, so that the codec's is known."""
    from fractions import Fraction

    sar = stream.sample_aspect_ratio or stream.codec_context.sample_aspect_ratio
    if not sar or sar <= 0:
        return (1, 1)
    sar = Fraction(sar)
    return (sar.numerator, sar.denominator)


def display_width(width: int, sar: tuple[int, int]) -> int:
    """A frame ``width`` pixels wide as it is shown: each pixel ``sar[0] / sar[1]`` times as
    wide as it is tall, so ``width * sar`` square pixels wide (FFmpeg's ``scale=iw*sar:ih``,
    its value cut to an integer), the height kept.

    >>> display_width(1440, (4, 3)), display_width(64, (1, 2)), display_width(720, (32, 27))
    (1920, 32, 853)
    """
    return max(1, width * sar[0] // sar[1])


def frame_order(packets: list) -> tuple[list, bool]:
    """The frames' timestamps in the order FFmpeg shows them, from ``packets`` (``(pts, dts)``
    in file order), and whether the file is recordings joined end to end (``cat`` of
    MPEG-TS segments: the decode times go back or repeat where a part starts). FFmpeg
    shows each part after the one before it, so each part's timestamps are moved on to
    follow the last part's (one frame step later): the timestamps then rise through the
    file, and frame ``k`` is the ``k``-th frame decoded.

    >>> frame_order([(10, 10), (11, 11), (2, 2), (3, 3)])
    ([10, 11, 12, 13], True)
    >>> frame_order([(0, -1), (2, 0), (1, 1)])  # B-frames: shown in timestamp order
    ([0, 1, 2], False)
    """
    parts: list[list] = [[]]
    last = None
    for pts, dts in packets:
        if dts is not None and last is not None and dts <= last:
            parts.append([])
        parts[-1].append(pts)
        last = dts if dts is not None else last
    parts = [sorted(part) for part in parts if part]
    if len(parts) <= 1:
        return (parts[0] if parts else []), False
    steps = [d for part in parts for d in np.diff(part).tolist() if d > 0]
    step = int(np.median(steps)) if steps else 1
    out: list = []
    for part in parts:
        shift = out[-1] + step - part[0] if out else 0
        out += [p + shift for p in part]
    return out, True


def frame_at(info: VideoInfo, pts: int | None) -> int | None:
    """The index of the frame whose timestamp is ``pts`` (the last, where two share it), or
    ``None`` (no such frame, or ``pts`` is None): a bisection of the sorted ``info.pts``,
    so no table per video is kept while a reader reads.

    >>> info = VideoInfo("v.mp4", (0, 512, 1024), 1 / 12800, 2, 2, 0, "h264")
    >>> frame_at(info, 512), frame_at(info, 600), frame_at(info, None)
    (1, None, None)
    """
    if pts is None:
        return None
    k = bisect.bisect_right(info.pts, pts) - 1
    return k if k >= 0 and info.pts[k] == pts else None


#: What to do about a bad file, by when it is found. While the folder is listed
#: (probed), ``on_bad_file='skip'`` leaves it out. Once clips are read a file that
#: fails is an error under either (``len(ds)`` was promised to ``fit()``: see
#: :func:`~datakit.readers.video.decoding.frame_reading.damaged_error`); the converter drops and
#: counts it under ``'skip'``, so its fix is for ``'raise'``.
_WHEN_LISTED = "remove the file or pass on_bad_file='skip'"
WHILE_READING = "remove or re-encode the file, then build the dataset again"
WHILE_CONVERTING = ("remove or re-encode the file and run write_video_shards again (the videos "
                    "already converted are kept)")


#: What a path that is not a regular file is, by its ``stat.S_IFMT``.
_KINDS = {stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFDIR: "a folder"}


def special_kind(path: str) -> str | None:
    """What ``path`` is when it is no regular file (``"a named pipe (FIFO)"``, a socket, a
    device, a folder), else ``None`` (a path that cannot be stat'ed too: opening it names
    the reason). Checked before ``av.open``, which would wait forever on a pipe."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "a special file")


def open_video(path: str, fix: str = _WHEN_LISTED) -> Any:
    """``av.open(path)``; a file FFmpeg cannot open, or a path that is no regular file (a
    named pipe, a socket, a device), is a :class:`DataError` ending in ``fix``."""
    import av

    kind = special_kind(path)
    if kind is not None:  # a pipe nobody writes to would block av.open forever
        raise DataError(path, f"is {kind}, not a regular file: it is never read as a video; "
                        f"{fix}")
    try:
        return av.open(path)
    except (av.error.FFmpegError, OSError, UnicodeDecodeError) as e:
        raise DataError(path, f"not a video FFmpeg can open ({type(e).__name__}: {e}); "
                        f"{fix}") from None
