"""``clips_to_predict``: one new video file as the batch of clips a model trained on a folder takes.

The clips are made exactly as
:func:`~datakit.readers.video.reading.directory.video_dataset_from_directory` made the
training clips: the same frame size (crop or pad), frame rate, clip length and
step, color mode and dtype. Pass the training dataset as ``like=`` to take
them from it, or the same keywords; the sampler is ``"uniform"`` (several
clips spread over the whole video, e.g. to average the model's predictions) or
``"center"`` (the middle clip, as validation takes it)::

    clips = video.clips_to_predict("new.mp4", like=train_ds, clips_per_video=4)
    probs = model.predict(clips).mean(axis=0)   # one video: the clips' mean
    train_ds.class_names[probs.argmax()]

>>> import tempfile, numpy as np
>>> from pathlib import Path
>>> from datakit.readers.video.synthetic.encoded import write_video
>>> path = write_video(np.zeros((30, 16, 24, 3), np.uint8), Path(tempfile.mkdtemp()) / "v.mp4")
>>> clips_to_predict(path, clip_len=8, frame_size=(16, 16), clips_per_video=3).shape
(3, 8, 16, 16, 3)
>>> clips_to_predict(path, clip_len=8, sampler="center", dtype="float32").dtype
dtype('float32')
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from datakit.core.errors import DataError
from datakit.core.paths import PathArg, one_file
from datakit.readers.video.index.video_index import short_reason
from datakit.readers.video.options.clip_options import VideoOptions, video_options
from datakit.readers.video.options.clip_sampling import SAMPLERS, clip_frames, clip_span
from datakit.readers.video.options.keras_arguments import check_choice, to_grayscale

__all__ = ["clips_to_predict"]


def clips_to_predict(path: PathArg, like: Any = None, *, color_mode: str = "rgb",
                     dtype: str = "uint8",
                     options: VideoOptions | None = None, **clip_options: Any) -> np.ndarray:
    """``(clips_per_video, clip_len, height, width, channels)`` clips of the video ``path``.

    Args:
        path: one video file (any format PyAV opens).
        like: a dataset made by ``video_dataset_from_directory``: its frame size,
            fps, clip length, step, crop or pad, color mode and dtype are used
            (then pass none of those here: one given beside ``like=`` is a
            ``TypeError`` naming both).
        color_mode, dtype, options, **clip_options: as
            ``video_dataset_from_directory`` takes them; ``sampler``: ``"uniform"``
            (the default: ``clips_per_video`` clips evenly spread) or ``"center"``
            (one, the middle clip).

    Returns:
        A NumPy array, a batch for ``model.predict``.

    Raises:
        DataError: the file cannot be read, or is shorter than one clip.
        TypeError, ValueError: a bad argument.
    """
    from datakit.readers.video.decoding.decoding import decode_frames, output_frames, probe
    from datakit.readers.video.index.folders import require_pyav

    sampler = clip_options.pop("sampler", "uniform")
    clips_per_video = clip_options.pop("clips_per_video", 1)
    # a prediction takes fixed clips: a sampler with no per-epoch key
    check_choice("sampler", sampler, tuple(n for n, s in SAMPLERS.items() if not s.keyed))
    if like is not None:
        if not hasattr(like, "clip_options"):
            raise TypeError("like must be a dataset made by video_dataset_from_directory, got "
                            f"{type(like).__name__}; or pass clip_len, frame_size, ... instead")
        beside = sorted(clip_options) + (["options"] if options is not None else []) + [
            name for name, value, default in (("color_mode", color_mode, "rgb"),
                                              ("dtype", dtype, "uint8")) if value != default]
        if beside:
            raise TypeError(f"clips_to_predict() got {beside[0]} beside like=: like= gives "
                            f"{beside[0]} already (the training set's); pass one of them")
        opts, color_mode, dtype = like.clip_options, like.color_mode, like.clip_dtype
    else:
        check_choice("color_mode", color_mode, ("rgb", "grayscale"))
        check_choice("dtype", dtype, ("uint8", "float32"))
        opts = video_options(options, clip_options, where="clips_to_predict")
    opts = dataclasses.replace(opts, sampler=sampler, clips_per_video=(
        1 if SAMPLERS[sampler].one_clip else clips_per_video))
    require_pyav()
    info = probe(_one_video(path))
    timeline = output_frames(info, opts.fps)
    span = clip_span(opts.clip_len, opts.frame_step)
    if len(timeline) < span:
        raise DataError(info.path, f"{short_reason(len(timeline), span, opts.fps)}; the model "
                        f"takes clips of clip_len={opts.clip_len}: pass a longer video")
    k = opts.clips_per_video
    wanted = clip_frames(len(timeline), 0, opts.clip_len, frame_step=opts.frame_step,
                         sampler=sampler, clips_per_video=k).numpy()
    frames = decode_frames(info, timeline[wanted.reshape(-1)], **opts.fit)
    if color_mode == "grayscale":
        frames = to_grayscale(frames)
    clips = frames.reshape(k, opts.clip_len, *frames.shape[1:])
    return clips.astype(np.float32) if dtype == "float32" else clips


def _one_video(path: Any) -> str:
    """``path`` as text once it names one file; else the error names ``path=`` (a list, a
    missing file, a folder), before PyAV is asked."""
    if isinstance(path, (list, tuple, set)):
        raise TypeError(f"path={path!r}: clips_to_predict takes one video file; for several, "
                        "call it once per file")
    try:
        return one_file(path)
    except (FileNotFoundError, IsADirectoryError, TypeError) as e:
        raise type(e)(f"clips_to_predict(path=...): {e}") from None
