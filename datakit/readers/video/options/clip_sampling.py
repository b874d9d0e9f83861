"""Which frames a clip takes: one sampler for the direct reader and the shards alike.

A clip is ``clip_len`` frames, ``frame_step`` apart, so it spans
``(clip_len - 1) * frame_step + 1`` frames of the video. Each sampler is one
record of :data:`SAMPLERS` (where its clips start, whether it takes a new key
each epoch, whether it fixes one clip per video), and the options, the direct
reader, the shards and ``clips_to_predict`` read the record, never the name:

- ``"random"``: a new seeded start per video and epoch (training). torchcodec's
  ``clips_at_random_indices`` draws its starts the same way (uniform over every
  possible start, with replacement), from torch's global generator rather than
  a key; PyTorchVideo's ``RandomClipSampler`` (one clip) and
  ``RandomMultiClipSampler`` draw a start time in seconds.
- ``"uniform"``: ``clips_per_video`` starts evenly spaced from the first
  possible to the last (evaluation over the whole video): torchcodec's
  ``clips_at_regular_indices`` (up to rounding) and PyTorchVideo's
  ``ConstantClipsPerVideoSampler`` (in seconds), except for one clip, which
  both start at frame 0 and this one takes from the middle.
  (PyTorchVideo's ``UniformClipSampler`` is another thing: every clip, one
  after another.)
- ``"center"``: the middle clip, the same every epoch (validation's default);
  neither library has a sampler of that name (``"uniform"`` with one clip).

>>> import tensorflow as tf
>>> clip_frames(tf.constant(20, tf.int64), tf.constant(0, tf.int64), 4, frame_step=2,
...             sampler="center").numpy().tolist()
[[6, 8, 10, 12]]
>>> clip_frames(tf.constant(20, tf.int64), tf.constant(0, tf.int64), 4, sampler="uniform",
...             clips_per_video=3)[:, 0].numpy().tolist()
[0, 8, 16]

A random clip's key is :func:`video_key` of the epoch's key and the video's
index, so the same video gets the same clip on both paths, whatever order
the files are read in.

The baselines that decode in NumPy use the same rule without TensorFlow:
:func:`random_start` is ``clip_frames``' one random clip for a key (the MP4
baseline), and :func:`random_starts` draws the starts from a NumPy generator
(the all-in-memory baseline):

>>> random_start(12345, 40, 8, frame_step=3), clip_span(8, 3)
(14, 22)
>>> random_starts(np.random.default_rng(0), np.array([10, 4]), 4).tolist()
[5, 0]

TensorFlow is imported by the functions that build its ops, not with the module:
:class:`~datakit.readers.video.options.clip_options.VideoOptions` checks a sampler
against :data:`SAMPLERS` in a conversion's process, which otherwise never needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from datakit.core.arguments import check_count

if TYPE_CHECKING:  # TensorFlow is imported by the functions that build its ops
    import tensorflow as tf

__all__ = ["clip_frames"]


@dataclass(frozen=True)
class ClipSampler:
    """One sampler: its clips' starts, and what a reader needs to know of it.

    ``starts(last, key, clips_per_video)``: the int64 first frames, given the
    last possible one; ``keyed``: it takes a new key per video and epoch (new
    clips each epoch: a reader draws epoch keys for it, and validation does not
    use it); ``one_clip``: it takes exactly one clip per video.
    """

    starts: Callable[[tf.Tensor, tf.Tensor, int], tf.Tensor]
    keyed: bool = False
    one_clip: bool = False


def _random(last: tf.Tensor, key: tf.Tensor, k: int) -> tf.Tensor:
    import tensorflow as tf

    if k == 1:
        return tf.reshape(tf.math.floormod(key, last + 1), [1])
    starts = tf.random.stateless_uniform([k], seed=tf.stack([key, tf.constant(1, tf.int64)]),
                                         minval=0, maxval=tf.int64.max, dtype=tf.int64)
    return tf.math.floormod(starts, last + 1)


def _uniform(last: tf.Tensor, key: tf.Tensor, k: int) -> tf.Tensor:
    import tensorflow as tf

    if k == 1:
        return _center(last, key, k)
    return tf.range(k, dtype=tf.int64) * last // (k - 1)


def _center(last: tf.Tensor, key: tf.Tensor, k: int) -> tf.Tensor:
    import tensorflow as tf

    return tf.reshape(last // 2, [1])


#: Every clip sampler, by its ``sampler=`` name (see the module's docstring).
SAMPLERS = {
    "random": ClipSampler(_random, keyed=True),
    "uniform": ClipSampler(_uniform),
    "center": ClipSampler(_center, one_clip=True),
}


def check_sampler(sampler: str, clip_len: int, frame_step: int, clips_per_video: int) -> None:
    """The sampler's arguments, checked (``TypeError`` / ``ValueError`` with the fix)."""
    check_count("clip_len", clip_len)
    check_count("frame_step", frame_step)
    check_count("clips_per_video", clips_per_video)
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler={sampler!r}: pass one of {tuple(SAMPLERS)}")
    if SAMPLERS[sampler].one_clip and clips_per_video != 1:
        several = tuple(name for name, s in SAMPLERS.items() if not s.one_clip)
        raise ValueError(f"sampler={sampler!r} takes one clip per video, not clips_per_video="
                         f"{clips_per_video}; use one of {several} for several")


def clip_span(clip_len: int, frame_step: int = 1) -> int:
    """How many consecutive frames a clip covers."""
    return (clip_len - 1) * frame_step + 1


def clip_frames(n_frames: int | tf.Tensor, key: int | tf.Tensor, clip_len: int, *,
                frame_step: int = 1, sampler: str = "random",
                clips_per_video: int = 1) -> tf.Tensor:
    """``(clips_per_video, clip_len)`` int64 frame indices into a video of ``n_frames`` frames.

    ``key``: an int64 (see :func:`video_key`), used by a keyed sampler only. The
    caller has checked ``n_frames >= clip_span(clip_len, frame_step)``.
    """
    import tensorflow as tf

    n_frames, key = tf.cast(n_frames, tf.int64), tf.cast(key, tf.int64)
    last = n_frames - clip_span(clip_len, frame_step)  # the last possible start
    starts = SAMPLERS[sampler].starts(last, key, clips_per_video)
    return starts[:, None] + frame_step * tf.range(clip_len, dtype=tf.int64)[None, :]


def epoch_keys(seed: int | None) -> tf.data.Dataset:
    """A dataset of one int64 per iteration: a new one each epoch, the same per ``seed``."""
    import tensorflow as tf

    return tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).take(1)


def video_key(epoch_key: int | tf.Tensor, index: int | tf.Tensor) -> tf.Tensor:
    """The random key of video ``index`` in the epoch of ``epoch_key`` (stateless)."""
    import tensorflow as tf

    seed = tf.stack([tf.cast(epoch_key, tf.int64), tf.cast(index, tf.int64)])
    return tf.random.stateless_uniform([], seed=seed, minval=0, maxval=tf.int64.max,
                                       dtype=tf.int64)


def random_start(key: int, n_frames: int, clip_len: int, frame_step: int = 1) -> int:
    """The first frame of ``clip_frames``' one ``"random"`` clip for ``key``, in plain Python."""
    return int(key) % (n_frames - clip_span(clip_len, frame_step) + 1)


def random_starts(rng: np.random.Generator, n_frames: np.ndarray, clip_len: int,
                  frame_step: int = 1) -> np.ndarray:
    """One random first frame per video of ``n_frames`` frames, drawn from ``rng``."""
    return rng.integers(0, np.asarray(n_frames) - clip_span(clip_len, frame_step) + 1)
