"""Which frames a clip takes: one sampler for the direct reader and the shards alike.

A clip is ``clip_len`` frames, ``frame_step`` apart, so it spans
``(clip_len - 1) * frame_step + 1`` frames of the video. The samplers, as
PyTorchVideo, torchcodec and TF Model Garden name them:

- ``"random"``: a new seeded start per video and epoch (training);
- ``"uniform"``: ``clips_per_video`` starts evenly spaced from the first
  possible to the last (evaluation over the whole video);
- ``"center"``: the middle clip (validation's default: the same every epoch).

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
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count

__all__ = ["clip_frames"]

_SAMPLERS = ("random", "uniform", "center")


def check_sampler(sampler: str, clip_len: int, frame_step: int, clips_per_video: int) -> None:
    """The sampler's arguments, checked (``TypeError`` / ``ValueError`` with the fix)."""
    check_count("clip_len", clip_len)
    check_count("frame_step", frame_step)
    check_count("clips_per_video", clips_per_video)
    if sampler not in _SAMPLERS:
        raise ValueError(f"sampler={sampler!r}: pass one of {_SAMPLERS}")
    if sampler == "center" and clips_per_video != 1:
        raise ValueError(f"sampler='center' takes one clip per video, not clips_per_video="
                         f"{clips_per_video}; use sampler='uniform' for several")


def clip_span(clip_len: int, frame_step: int = 1) -> int:
    """How many consecutive frames a clip covers."""
    return (clip_len - 1) * frame_step + 1


def clip_frames(n_frames, key, clip_len: int, *, frame_step: int = 1, sampler: str = "random",
                clips_per_video: int = 1):
    """``(clips_per_video, clip_len)`` int64 frame indices into a video of ``n_frames`` frames.

    ``key``: an int64 (see :func:`video_key`), used by ``"random"`` only. The
    caller has checked ``n_frames >= clip_span(clip_len, frame_step)``.
    """
    n_frames, key = tf.cast(n_frames, tf.int64), tf.cast(key, tf.int64)
    last = n_frames - clip_span(clip_len, frame_step)  # the last possible start
    if sampler == "random" and clips_per_video == 1:
        starts = tf.reshape(tf.math.floormod(key, last + 1), [1])
    elif sampler == "random":
        starts = tf.random.stateless_uniform(
            [clips_per_video], seed=tf.stack([key, tf.constant(1, tf.int64)]),
            minval=0, maxval=tf.int64.max, dtype=tf.int64)
        starts = tf.math.floormod(starts, last + 1)
    elif sampler == "uniform" and clips_per_video > 1:
        steps = tf.range(clips_per_video, dtype=tf.int64)
        starts = steps * last // (clips_per_video - 1)
    else:  # "center", or "uniform" with one clip
        starts = tf.reshape(last // 2, [1])
    return starts[:, None] + frame_step * tf.range(clip_len, dtype=tf.int64)[None, :]


def epoch_keys(seed: int | None):
    """A dataset of one int64 per iteration: a new one each epoch, the same per ``seed``."""
    return tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).take(1)


def video_key(epoch_key, index):
    """The random key of video ``index`` in the epoch of ``epoch_key`` (stateless)."""
    seed = tf.stack([tf.cast(epoch_key, tf.int64), tf.cast(index, tf.int64)])
    return tf.random.stateless_uniform([], seed=seed, minval=0, maxval=tf.int64.max,
                                       dtype=tf.int64)


def random_start(key: int, n_frames: int, clip_len: int, frame_step: int = 1) -> int:
    """The first frame of ``clip_frames``' one ``"random"`` clip for ``key``, in plain Python."""
    return int(key) % (n_frames - clip_span(clip_len, frame_step) + 1)


def random_starts(rng: np.random.Generator, n_frames, clip_len: int,
                  frame_step: int = 1) -> np.ndarray:
    """One random first frame per video of ``n_frames`` frames, drawn from ``rng``."""
    return rng.integers(0, np.asarray(n_frames) - clip_span(clip_len, frame_step) + 1)
