"""``video_dataset_from_directory``: your own class folders of videos, read directly into ``fit()``.

Shaped like ``keras.utils.image_dataset_from_directory`` (same argument names
where they apply, class folders in sorted order, ``class_names`` on the
dataset), plus what video needs: ``clip_len``, ``frame_step``, ``fps``
(resampled by timestamps), ``frame_size``, and a clip ``sampler``
(:mod:`datakit.readers.video.clip_sampling`, the one
:func:`~datakit.readers.video.clips.clip_dataset` uses on converted shards, so
both paths pick the same frames).

The pipeline: video list -> shuffle (training) -> each video's frame indices
(the sampler, a new seeded key per epoch) -> ``map`` a ``tf.numpy_function``
that seeks and decodes only those frames, ``num_parallel_calls`` videos at
once (FFmpeg decodes with the GIL released, so they run on several cores;
the Python around it still takes the GIL: two threads decoded 1.4x the frames/s
of one on 2 cores, ``benchmarks/RESULTS_video_files.md``) -> batch -> prefetch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count, check_shuffle_buffer, cpu_cores
from datakit.core.errors import DataError
from datakit.readers.video.clip_options import VideoOptions, one_frame_size, video_options
from datakit.readers.video.clip_sampling import (
    clip_frames,
    clip_span,
    epoch_keys,
    video_key,
)
from datakit.readers.video.decoding import decode_frames, output_frames
from datakit.readers.video.exit_guard import release_iterators_at_exit
from datakit.readers.video.folders import check_split, list_videos, split_indices

__all__ = ["video_dataset_from_directory"]


def video_dataset_from_directory(
        directory, labels="inferred", class_names=None, batch_size: int = 8, *,
        clip_len: int = 16, frame_size=None, fps: float | None = None, frame_step: int = 1,
        sampler: str | None = None, clips_per_video: int = 1, shuffle: bool = True,
        seed: int = 0, validation_split: float | None = None, subset: str | None = None,
        crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
        num_parallel_calls: int | None = None, seek: bool = True, on_bad_file: str = "raise",
        with_ids: bool = False, verbose: bool = True, options: VideoOptions | None = None):
    """Batches of ``(clips, labels)`` from ``directory/<class name>/<video files>``.

    Args:
        directory: one subfolder per class (sorted names are the classes).
        labels: ``"inferred"`` (from the folders) or ``None`` (clips only).
        class_names: the subfolders to use, in label order (default: all, sorted).
        batch_size: clips per batch.
        clip_len: frames per clip; frame_step: frames between a clip's frames.
        frame_size: ``(height, width)`` to resize to (default: the videos' own,
            which must then all be the same); crop_to_aspect_ratio /
            pad_to_aspect_ratio: as in Keras, instead of stretching.
        fps: the frame rate clips are sampled at (by timestamps); ``None``: the file's.
        sampler: ``"random"`` (default for training), ``"uniform"`` or
            ``"center"`` (default for validation); clips_per_video: clips per
            video per epoch (``"uniform"``, ``"random"``).
        shuffle, seed: shuffle the videos each epoch; ``seed`` also seeds the
            split and the random clips (the same frames per seed, epoch by epoch).
        validation_split, subset: split *by video*: ``"training"``,
            ``"validation"`` or ``"both"`` (a pair of datasets).
        num_parallel_calls: videos decoded at once (default: the cores).
        seek: seek to the keyframe before each clip (``False``: decode from the
            first frame, to measure what seeking saves).
        on_bad_file: ``"raise"`` or ``"skip"`` (skipped files are printed and
            listed in the dataset's ``skipped``: ``(path, reason)`` pairs).
        with_ids: elements are dicts with ``clip``, ``label``, ``video`` (the
            index in the sorted listing) and ``frames`` (the indices chosen).
        options: a :class:`~datakit.readers.video.clip_options.VideoOptions`
            instead of its keywords (clip_len to clips_per_video, crop or pad).

    Returns:
        A dataset (or two, for ``subset="both"``) with ``class_names``,
        ``file_paths`` and ``skipped`` attributes.

    Raises:
        DataError: a bad file, naming it (see ``on_bad_file``), a video
            shorter than a clip, an empty class folder, no videos at all.
        TypeError, ValueError: a bad argument.
    """
    opts = video_options(options, clip_len=clip_len, frame_step=frame_step, fps=fps,
                         frame_size=frame_size, crop_to_aspect_ratio=crop_to_aspect_ratio,
                         pad_to_aspect_ratio=pad_to_aspect_ratio, sampler=sampler,
                         clips_per_video=clips_per_video)
    if labels not in ("inferred", None):
        raise ValueError(f"labels={labels!r}: pass 'inferred' (from the class folders) or None")
    check_count("batch_size", batch_size)
    check_count("num_parallel_calls", num_parallel_calls, none=True)
    check_split(validation_split, subset)
    release_iterators_at_exit()  # an error must not leave Python hanging at exit
    folder = list_videos(directory, class_names=class_names, on_bad_file=on_bad_file)
    train, val = split_indices(len(folder.infos), validation_split, seed)
    if verbose:
        print(f"Found {len(folder.infos)} videos belonging to {len(folder.class_names)} classes"
              + (f" ({len(folder.skipped)} bad files skipped)." if folder.skipped else "."))
    read = _Reading(opts, batch_size=batch_size, seed=seed, seek=seek, with_ids=with_ids,
                    with_labels=labels is not None, on_bad_file=on_bad_file,
                    num_parallel_calls=num_parallel_calls or cpu_cores())
    if subset is None:
        return _subset(folder, sorted(train), read, training=True, shuffle=shuffle)
    made = {"training": lambda: _subset(folder, train, read, training=True, shuffle=shuffle),
            "validation": lambda: _subset(folder, val, read, training=False, shuffle=False)}
    if verbose and subset in ("training", "validation"):
        print(f"Using {len(train if subset == 'training' else val)} videos for {subset}.")
    if subset == "both":
        return made["training"](), made["validation"]()
    return made[subset]()


@dataclass(frozen=True)
class _Reading:
    """How a subset is read: the checked clip options and the reader's own settings."""

    options: VideoOptions
    batch_size: int
    seed: int
    seek: bool
    with_ids: bool
    with_labels: bool
    on_bad_file: str
    num_parallel_calls: int


def _keep_long_enough(folder, idx, span, fps, on_bad_file):
    kept, timelines = [], {}
    for i in idx:
        frames = output_frames(folder.infos[i], fps)
        if len(frames) >= span:
            kept.append(i)
            timelines[i] = frames
            continue
        reason = (f"{len(frames)} frames" + (f" at fps={fps}" if fps else "") + f", fewer "
                  f"than the {span} one clip spans; pass a smaller clip_len or frame_step, or "
                  "on_bad_file='skip'")
        if on_bad_file == "raise":
            raise DataError(folder.infos[i].path, reason)
        folder.skipped.append((folder.infos[i].path, reason))
    if not kept:
        raise DataError(folder.infos[idx[0]].path if idx else "(no videos)",
                        "no video of this subset is long enough for one clip")
    return kept, timelines


def _subset(folder, idx, read: _Reading, *, training: bool, shuffle: bool):
    opts = read.options
    sampler = opts.sampler_for(training)
    k, clip_len, seed = opts.clips_for(sampler), opts.clip_len, read.seed
    idx, timelines = _keep_long_enough(folder, list(idx), clip_span(clip_len, opts.frame_step),
                                       opts.fps, read.on_bad_file)
    height, width = opts.frame_size or one_frame_size([folder.infos[i] for i in idx])
    fit = opts.fit

    skipped = list(folder.skipped)  # grows while reading under on_bad_file="skip"

    def decode(i, frames):  # runs in a tf.data thread; FFmpeg drops the GIL while decoding
        try:
            clips = decode_frames(folder.infos[int(i)], timelines[int(i)][frames.reshape(-1)],
                                  seek=read.seek, **fit)
        except DataError as e:  # broke after listing: dropped and counted under "skip"
            if read.on_bad_file == "raise":
                raise
            if e.path not in {p for p, _ in skipped}:
                reason = e.reason.split("; ")[0] + " (found while reading: its clips dropped)"
                print(f"skipped {e.path}: {reason}")
                skipped.append((e.path, reason))
            return np.zeros((0, clip_len, height, width, 3), np.uint8)
        return clips.reshape(k, clip_len, height, width, 3)

    videos = tf.data.Dataset.from_tensor_slices((
        tf.constant(idx, tf.int64), tf.constant([folder.labels[i] for i in idx], tf.int64),
        tf.constant([len(timelines[i]) for i in idx], tf.int64)))
    if shuffle:
        videos = videos.shuffle(len(idx), seed=seed)

    def choose(epoch_key):
        def frames_of(i, label, n):
            key = video_key(epoch_key, i) if sampler == "random" else tf.constant(0, tf.int64)
            return i, label, clip_frames(n, key, clip_len, frame_step=opts.frame_step,
                                         sampler=sampler, clips_per_video=k)
        return videos.map(frames_of)

    ds = epoch_keys(seed).flat_map(choose) if sampler == "random" else choose(0)

    def load(i, label, frames):
        clips = tf.numpy_function(decode, [i, frames], tf.uint8, stateful=False, name="decode")
        if read.on_bad_file == "skip":  # a clip that cannot be decoded comes out as none
            clips = tf.ensure_shape(clips, (None, clip_len, height, width, 3))
            n = tf.shape(clips)[0]
            return {"clip": clips, "label": tf.fill([n], label), "video": tf.fill([n], i),
                    "frames": frames[:n]}
        clips = tf.ensure_shape(clips, (k, clip_len, height, width, 3))
        return {"clip": clips, "label": tf.fill([k], label), "video": tf.fill([k], i),
                "frames": frames}

    ds = ds.map(load, num_parallel_calls=read.num_parallel_calls, deterministic=True).unbatch()
    if read.on_bad_file == "raise":  # under "skip" a clip dropped while reading is not there
        ds = ds.apply(tf.data.experimental.assert_cardinality(len(idx) * k))
    if shuffle and k > 1:  # one video's clips come out together: spread them
        ds = ds.shuffle(check_shuffle_buffer(k * read.batch_size, len(idx) * k), seed=seed)
    if not read.with_ids:
        ds = ds.map(lambda d: (d["clip"], d["label"]) if read.with_labels else d["clip"])
    ds = ds.batch(read.batch_size).prefetch(tf.data.AUTOTUNE)
    ds.class_names = list(folder.class_names)
    ds.file_paths = [folder.infos[i].path for i in idx]
    ds.skipped = skipped
    return ds
