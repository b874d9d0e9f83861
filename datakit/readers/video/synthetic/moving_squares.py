"""Synthetic videos: a square moving in one of four directions; the direction is the label.

Videos have different lengths, and video ``i`` is the same whatever ``n``, for
a given ``seed``:

>>> videos = make_videos(3, size=16, min_frames=5, max_frames=9, seed=0)
>>> [v.frames.shape for v in videos]
[(8, 16, 16, 3), (9, 16, 16, 3), (5, 16, 16, 3)]
>>> [CLASSES[v.label] for v in videos]
['up', 'down', 'up']
>>> again = make_video(2, size=16, min_frames=5, max_frames=9, seed=0)
>>> bool((again.frames == videos[2].frames).all())
True
>>> make_videos(1, size=15)
Traceback (most recent call last):
...
ValueError: size=15: pass an even size >= 8 (MP4 needs even)

They are written as MP4 files by :mod:`datakit.readers.video.synthetic.mp4` and as
``SequenceExample`` shards by :mod:`datakit.readers.video.converter.video_records`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CLASSES", "Video", "make_video", "iter_videos", "make_videos"]

#: Label names, by label number: the direction the square moves.
CLASSES = ("right", "left", "down", "up")
_STEP = {0: (0, 1), 1: (0, -1), 2: (1, 0), 3: (-1, 0)}  # (dy, dx) per label


@dataclass
class Video:
    """One video: ``frames`` is ``(length, height, width, 3)`` uint8; ``source``, its file."""

    id: int
    label: int
    frames: np.ndarray
    source: str = ""  # the file it was read from, if any (named in errors)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def make_video(i: int, *, size: int = 64, min_frames: int = 40, max_frames: int = 120,
               seed: int = 0) -> Video:
    """Video number ``i`` of the synthetic set made with ``seed``."""
    rng = np.random.default_rng([seed, i])
    label = int(rng.integers(4))
    length = int(rng.integers(min_frames, max_frames + 1))
    # A dark, textured background that stays still; a bright square that moves.
    bg = rng.integers(0, 60, size=3) + rng.normal(0, 8, size=(size, size, 3))
    bg = np.clip(bg, 0, 255).astype(np.uint8)
    side = int(rng.integers(max(2, size // 6), max(3, size // 4) + 1))
    color = rng.integers(150, 256, size=3).astype(np.uint8)
    speed = rng.uniform(1.5, 3.0)  # pixels per frame
    y, x = rng.uniform(0, size, size=2)
    dy, dx = _STEP[label]
    frames = np.repeat(bg[None], length, axis=0)
    span = np.arange(side)
    for t in range(length):  # the square wraps around the edges
        rows = (int(y + dy * speed * t) + span) % size
        cols = (int(x + dx * speed * t) + span) % size
        frames[t][np.ix_(rows, cols)] = color
    return Video(i, label, frames)


def iter_videos(n: int, *, size: int = 64, min_frames: int = 40, max_frames: int = 120,
                seed: int = 0) -> Iterator[Video]:
    """Yield videos ``0 .. n-1`` one at a time (nothing else stays in memory)."""
    _check(n >= 0, f"n={n}: pass a number of videos >= 0")
    _check(size >= 8 and size % 2 == 0, f"size={size}: pass an even size >= 8 (MP4 needs even)")
    _check(1 <= min_frames <= max_frames,
           f"min_frames={min_frames}, max_frames={max_frames}: need 1 <= min_frames <= max_frames")
    for i in range(n):
        yield make_video(i, size=size, min_frames=min_frames, max_frames=max_frames, seed=seed)


def make_videos(n: int, **kwargs: Any) -> list[Video]:
    """A list of ``n`` synthetic videos (see :func:`make_video` for the keywords)."""
    return list(iter_videos(n, **kwargs))
