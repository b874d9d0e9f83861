"""What a video file is, as the probe found it, and how it is opened (errors named).

:class:`VideoInfo` holds the probe's facts (:func:`datakit.readers.video.decoding.probe`);
:func:`open_video` opens a file with PyAV, a file FFmpeg cannot open being a
:class:`~datakit.core.errors.DataError` that names it and says what to do at
that moment (while listing, reading or converting).
"""

from __future__ import annotations

import bisect
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
    height: int  # as displayed (rotation applied)
    width: int
    rotation: int  # degrees counterclockwise, as FFmpeg's display matrix says
    codec: str
    rate: float = 0.0  # the container's average frame rate, 0 if it has none
    keys: tuple = ()  # the keyframes, as frame indices (empty: not known)
    reordered: bool = False  # timestamps in decode order (AVI with B-frames): count frames
    stamp: tuple = ()  # the file's stamp when probed (datakit.core.file_facts)
    digest: int | None = None  # the file's CRC-32 then, to tell a touch from an edit

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
#: (probed), ``on_bad_file='skip'`` leaves it out. Once clips are read or a
#: conversion runs, a file that fails is dropped and counted under ``'skip'``
#: (by the reader or the converter), so these fixes are for ``'raise'``.
_WHEN_LISTED = "remove the file or pass on_bad_file='skip'"
WHILE_READING = ("remove or re-encode the file and build the dataset again (it broke after "
                 "the folder was listed)")
WHILE_CONVERTING = ("remove or re-encode the file and run write_video_shards again (the videos "
                    "already converted are kept)")


def open_video(path: str, fix: str = _WHEN_LISTED) -> Any:
    """``av.open(path)``; a file FFmpeg cannot open is a :class:`DataError` ending in ``fix``."""
    import av

    try:
        return av.open(path)
    except (av.error.FFmpegError, OSError, UnicodeDecodeError) as e:
        raise DataError(path, f"not a video FFmpeg can open ({type(e).__name__}: {e}); "
                        f"{fix}") from None
