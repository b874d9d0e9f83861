"""``VideoOptions``: what every video entry point is asked about its clips and frames, checked once.

:func:`~datakit.readers.video.reading.directory.video_dataset_from_directory`,
:func:`~datakit.readers.video.converter.convert.write_video_shards` and
:func:`~datakit.readers.video.reading.clips.clip_dataset` take these as keywords (or
as ``options=VideoOptions(...)``, never both ways for one field) and build one object
from them (:func:`video_options`), so a bad
value is refused before any file is opened, with the same message whichever
entry point was called:

>>> VideoOptions(clip_len=8, frame_size=(32, 32), fps=25)  # doctest: +NORMALIZE_WHITESPACE
VideoOptions(clip_len=8, frame_step=1, fps=25, frame_size=(32, 32), crop_to_aspect_ratio=False,
             pad_to_aspect_ratio=False, sampler=None, clips_per_video=1, prefetch=-1)
>>> VideoOptions(frame_size=(32, 0))
Traceback (most recent call last):
    ...
ValueError: frame_size=(32, 0): pass (height, width), two ints > 0
>>> VideoOptions(fps=0)
Traceback (most recent call last):
    ...
ValueError: fps=0: pass a frame rate > 0, or None for the file's own

``sampler=None`` means ``"random"`` when training and ``"center"`` (one clip
per video) for validation (see :mod:`datakit.readers.video.options.clip_sampling`):

>>> opts = VideoOptions(clips_per_video=4)
>>> opts.sampler_for(training=True), opts.clips_for("random"), opts.clips_for("center")
('random', 4, 1)

The one frame-size rule lives here too: the frames of a set share one size
(clips are batched, and Keras needs a static shape), or ``frame_size`` resizes
them to one (:func:`check_one_frame_size`, :func:`one_frame_size`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from datakit.core.arguments import PREFETCH, check_count, check_flag
from datakit.core.errors import DataError
from datakit.core.keywords import options_from, unexpected
from datakit.readers.video.options.clip_sampling import SAMPLERS, check_sampler

if TYPE_CHECKING:
    from datakit.readers.video.decoding.video_info import VideoInfo

__all__ = ["VideoOptions"]

#: How to make a set's frames one size, as every message about sizes says it.
_RESIZE_FIX = "pass frame_size=(height, width) to resize every video to one size"


@dataclass(frozen=True)
class VideoOptions:
    """Clip length, step, frame rate, frame size, crop or pad, sampler and clips per video.

    Attributes:
        clip_len: frames per clip; frame_step: frames between a clip's frames.
        fps: the frame rate clips are sampled at (by timestamps); ``None``: the file's.
        frame_size: ``(height, width)`` to resize to; ``None``: the videos' own
            (which must then all be one size).
        crop_to_aspect_ratio, pad_to_aspect_ratio: as in Keras, instead of stretching.
        sampler: ``"random"``, ``"uniform"``, ``"center"``, or ``None`` (the
            default for training or validation).
        clips_per_video: clips per video per epoch (one for ``"center"``).
        prefetch: batches the readers prepare ahead (``-1``: ``tf.data.AUTOTUNE``, the row
            and clip readers' default; 0: none).
    """

    clip_len: int = 16
    frame_step: int = 1
    fps: float | None = None
    frame_size: tuple[int, int] | None = None
    crop_to_aspect_ratio: bool = False
    pad_to_aspect_ratio: bool = False
    sampler: str | None = None
    clips_per_video: int = 1
    prefetch: int = PREFETCH

    def __post_init__(self) -> None:
        if self.frame_size is not None:
            object.__setattr__(self, "frame_size", _check_frame_size(self.frame_size))
        _check_fps(self.fps)
        if isinstance(self.prefetch, bool) or not isinstance(self.prefetch, int):
            raise TypeError(f"prefetch must be an int, got {self.prefetch!r}")
        if self.prefetch < -1:
            raise ValueError(f"prefetch={self.prefetch}: pass an int >= 0, or -1 "
                             "(tf.data.AUTOTUNE)")
        for name in ("crop_to_aspect_ratio", "pad_to_aspect_ratio"):  # a NumPy bool as bool
            object.__setattr__(self, name, check_flag(name, getattr(self, name)))
        if self.crop_to_aspect_ratio and self.pad_to_aspect_ratio:
            raise ValueError("pass crop_to_aspect_ratio or pad_to_aspect_ratio, not both")
        for sampler in {self.sampler or "random", self.sampler or "center"}:
            check_sampler(sampler, self.clip_len, self.frame_step,
                          self.clips_for(sampler) if self.sampler is None else
                          self.clips_per_video)

    def sampler_for(self, training: bool) -> str:
        """The sampler asked for, else ``"random"`` to train and ``"center"`` to validate.

        Validation always takes fixed clips: a keyed sampler (``"random"``, new
        clips each epoch) asked for training validates on ``"center"`` clips.

        >>> VideoOptions(sampler="random").sampler_for(training=False)
        'center'
        """
        if training:
            return self.sampler or "random"
        return "center" if self.sampler is None or SAMPLERS[self.sampler].keyed else self.sampler

    def clips_for(self, sampler: str) -> int:
        """Clips per video with ``sampler`` (one for a sampler that fixes one, ``"center"``)."""
        return 1 if SAMPLERS[sampler].one_clip else self.clips_per_video

    def check_videos(self, infos: Iterable[VideoInfo]) -> None:
        """Refuse, before any frame is decoded, a crop that leaves nothing of a video.

        ``crop_to_aspect_ratio`` cuts each frame's centre to ``frame_size``'s
        aspect ratio; a target far flatter or taller than a video leaves no row
        (or no column) of it. ``infos``: the probed videos (``.path``,
        ``.height``, ``.width`` as displayed).

        >>> from types import SimpleNamespace as Video
        >>> VideoOptions(frame_size=(1, 100), crop_to_aspect_ratio=True).check_videos(
        ...     [Video(path="a.mp4", height=16, width=16)])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        ValueError: crop_to_aspect_ratio=True, frame_size=(1, 100): a.mp4 is 16x16, and its...
        """
        if not (self.crop_to_aspect_ratio and self.frame_size):
            return
        th, tw = self.frame_size
        for info in infos:
            h, w = info.height, info.width
            ch, cw = _crop_size(h, w, self.frame_size)
            if ch < 1 or cw < 1:
                raise ValueError(
                    f"crop_to_aspect_ratio=True, frame_size={self.frame_size}: {info.path} is "
                    f"{h}x{w}, and its centre at the aspect ratio of {th}x{tw} is {ch}x{cw} "
                    "pixels, nothing to resize; pass a frame_size nearer the videos' shape, "
                    "or pad_to_aspect_ratio=True (black bars) instead of cropping")

    @property
    def fit(self) -> dict:
        """The resizing keywords of :func:`~datakit.readers.video.decoding.decoding.fit_frame`."""
        return dict(frame_size=self.frame_size, crop_to_aspect_ratio=self.crop_to_aspect_ratio,
                    pad_to_aspect_ratio=self.pad_to_aspect_ratio)


def _crop_size(height: int, width: int, frame_size: tuple[int, int]) -> tuple[int, int]:
    """The centre ``crop_to_aspect_ratio`` keeps of a ``height`` x ``width`` frame.

    >>> _crop_size(480, 640, (112, 112)), _crop_size(16, 16, (1, 100))
    ((480, 480), (0, 16))
    """
    th, tw = frame_size
    return min(height, round(width * th / tw)), min(width, round(height * tw / th))


def _check_frame_size(frame_size: Any) -> tuple[int, int]:
    message = f"frame_size={frame_size!r}: pass (height, width), two ints > 0"
    if not isinstance(frame_size, (tuple, list)):
        raise TypeError(message)
    if len(frame_size) != 2:
        raise ValueError(message)
    for s in frame_size:
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(message)
        if s <= 0:
            raise ValueError(message)
    return (int(frame_size[0]), int(frame_size[1]))


def _check_fps(fps: Any) -> None:
    if fps is None:
        return
    message = f"fps={fps!r}: pass a frame rate > 0, or None for the file's own"
    if isinstance(fps, bool) or not isinstance(fps, (int, float)):
        raise TypeError(message)
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(message)


#: Every field of :class:`VideoOptions`, in order.
VIDEO_FIELDS = tuple(f.name for f in fields(VideoOptions))

#: The fields the converters take: how frames are stored (clips are the reader's business).
FRAME_FIELDS = ("frame_size", "fps", "crop_to_aspect_ratio", "pad_to_aspect_ratio")


def video_options(options: VideoOptions | None, given: dict, *, where: str,
                  takes: tuple[str, ...] | None = None) -> VideoOptions:
    """The options of a call to ``where``: ``options``, and the fields ``given`` as keywords
    beside it (the one rule, :func:`~datakit.core.keywords.options_from`: a field set both
    ways is a ``TypeError``).

    ``takes``: the fields ``where`` accepts as keywords (default: all of them).

    >>> video_options(VideoOptions(clip_len=8), {"frame_size": (32, 32)},
    ...               where="clip_dataset")  # doctest: +ELLIPSIS
    VideoOptions(clip_len=8, frame_step=1, fps=None, frame_size=(32, 32), ...)
    >>> video_options(None, {"clip_lenn": 8}, where="clip_dataset")
    Traceback (most recent call last):
        ...
    TypeError: clip_dataset() got an unexpected keyword argument 'clip_lenn'
    """
    allowed = takes if takes is not None else VIDEO_FIELDS
    unknown = sorted(set(given) - set(allowed))
    if unknown:  # Keras' image_size and sequence_length point to the fields
        raise unexpected(where, unknown[0], allowed)
    return options_from(VideoOptions, options, given, where=where)


def check_quality(quality: int) -> int:
    """The one JPEG ``quality`` rule: an int in 1..100.

    >>> check_quality(101)
    Traceback (most recent call last):
        ...
    ValueError: quality=101: pass a JPEG quality in 1..100
    """
    if not 1 <= check_count("quality", quality) <= 100:
        raise ValueError(f"quality={quality}: pass a JPEG quality in 1..100")
    return quality


def check_one_frame_size(path: str | os.PathLike, size: Sequence[int], first_path: str,
                         first_size: Sequence[int], *, fix: str = _RESIZE_FIX) -> None:
    """The one frame-size rule: frames of ``size`` beside a set whose first video
    (``first_path``) has ``first_size``; a :class:`DataError` naming ``path`` and the fix.

    >>> check_one_frame_size("b.mp4", (64, 64), "a.mp4", (32, 32))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    datakit.core.errors.DataError: b.mp4: frames are 64x64 but a.mp4 has 32x32; pass frame_size...
    """
    if tuple(size) != tuple(first_size):
        raise DataError(path, f"frames are {size[0]}x{size[1]} but {first_path} has "
                        f"{first_size[0]}x{first_size[1]}; {fix}")


def one_frame_size(infos: Sequence[VideoInfo]) -> tuple[int, int]:
    """The one ``(height, width)`` of the probed videos ``infos`` (:func:`check_one_frame_size`)."""
    first = infos[0]
    for info in infos:
        check_one_frame_size(info.path, (info.height, info.width), first.path,
                             (first.height, first.width))
    return first.height, first.width
