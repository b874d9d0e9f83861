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
that reads only those frames
(:func:`~datakit.readers.video.frame_reading.read_frames`: a seek to the
keyframe before each clip when that decodes fewer frames, each kept frame
converted once to the target size), ``num_parallel_calls`` videos at once ->
batch -> prefetch. FFmpeg decodes with the GIL released and the Python left
around it is a few per cent of a clip, so the calls run on several cores. Each
video's size and modification time are checked when it is read: a video
replaced after the folder was listed is an error naming it, never a mix of
old and new frames in one epoch.

(About 350 lines: the Keras contract's arguments, and what a clip costs, are
documented here in full.)
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count, check_shuffle_buffer
from datakit.core.cores import cpu_cores
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
from datakit.readers.video.keras_arguments import (
    check_choice,
    check_labels,
    check_split_seed,
    to_grayscale,
    with_label_mode,
)

__all__ = ["video_dataset_from_directory"]


def video_dataset_from_directory(
        directory, labels="inferred", class_names=None, batch_size: int | None = 8, *,
        label_mode: str | None = "int", color_mode: str = "rgb", dtype: str = "uint8",
        clip_len: int = 16, frame_size=None, fps: float | None = None, frame_step: int = 1,
        sampler: str | None = None, clips_per_video: int = 1, shuffle: bool = True,
        seed: int | None = 0, validation_split: float | None = None, subset: str | None = None,
        crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
        follow_links: bool = False, num_parallel_calls: int | None = None, seek: bool = True,
        on_bad_file: str = "raise", with_ids: bool = False, verbose: bool = True,
        options: VideoOptions | None = None):
    """Batches of ``(clips, labels)`` from ``directory/<class name>/<video files>``.

    Args:
        directory: one subfolder per class (sorted names are the classes); videos
            in nested subfolders of a class folder are read too; hidden files and
            macOS' ``._*`` files are left out.
        labels: ``"inferred"`` (from the folders), ``None`` (clips only: every
            video under ``directory``, a flat folder too; ``class_names`` is then
            ``None``) or a list of int labels, one per video file in sorted path order.
        label_mode: ``"int"``, ``"categorical"`` (one-hot, float32), ``"binary"``
            (float32 of shape ``(1,)``, two classes) or ``None`` (clips only).
        class_names: the subfolders to use, in label order (default: all, sorted);
            only with ``labels="inferred"``.
        color_mode: ``"rgb"`` (3 channels) or ``"grayscale"`` (1).
        dtype: the clips' dtype: ``"uint8"`` (the default: a quarter of the memory,
            the same as the shards' clips) or ``"float32"`` (values 0-255, as Keras
            gives images).
        batch_size: clips per batch; ``None``: unbatched clips.
        clip_len: frames per clip; frame_step: frames between a clip's frames.
        frame_size: ``(height, width)`` to resize to (default: the videos' own,
            which must then all be the same); crop_to_aspect_ratio /
            pad_to_aspect_ratio: as in Keras, instead of stretching.
        fps: the frame rate clips are sampled at (by timestamps); ``None``: the file's.
        sampler: ``"random"`` (default for training), ``"uniform"`` or
            ``"center"``; validation always takes fixed clips (``"center"``, or
            ``"uniform"`` when asked for); clips_per_video: clips per video per
            epoch (``"uniform"``, ``"random"``).
        shuffle, seed: shuffle the videos each epoch; ``seed`` also seeds the
            split and the random clips (the same frames per seed, epoch by epoch).
            ``shuffle=False``: the listing's order, and the last videos are the
            validation set, as Keras does. A split needs a seed (as in Keras).
        validation_split, subset: split *by video*: ``"training"``,
            ``"validation"`` or ``"both"`` (a pair of datasets).
        follow_links: follow symbolic links to folders, as Keras does.
        num_parallel_calls: videos decoded at once (default: the cores).
        seek: seek to the keyframe before each clip (``False``: decode from the
            first frame, to measure what seeking saves).
        on_bad_file: ``"raise"`` or ``"skip"`` (each skipped file is printed with
            its reason, and listed in the dataset's ``skipped``: ``(path, reason)``
            pairs; videos shorter than one clip included; a class left with no
            video is an error naming it).
        with_ids: elements are dicts with ``clip``, ``label`` (the int label),
            ``video`` (the video's index in the folder's sorted listing, the ``id``
            ``write_video_shards`` gives it), ``file`` (its index in this dataset's
            ``file_paths``: ``ds.file_paths[file]`` is the clip's video) and
            ``frames`` (the indices chosen).
        options: a :class:`~datakit.readers.video.clip_options.VideoOptions`
            instead of its keywords (clip_len to clips_per_video, crop or pad).

    Returns:
        A dataset (or two, for ``subset="both"``) with ``class_names``,
        ``file_paths`` (in the order read with ``shuffle=False``) and ``skipped``
        attributes (and what :func:`~datakit.readers.video.predict_clips.clips_to_predict`
        takes from ``like=ds`` to make a new video's clips the same way).
        Clips are ``(clip_len, height, width, channels)`` of ``dtype``;
        ``"int"`` labels are int64 (Keras gives int32: int64 is what the shards'
        reader yields too, so one model trains on either path). Into ``fit()``,
        ``fit(ds.repeat(), steps_per_epoch=len(ds))`` keeps one iterator for the
        run: with a new one each epoch, TensorFlow 2.21 can stall at the epoch's
        end until its autotuning thread next wakes (see the README).

    What a clip costs, and why: a video stores a full picture (a keyframe)
    every so often, often every 250 frames, and only changes in between, so a
    clip that starts at frame ``k`` costs decoding from the keyframe before
    ``k`` to its last frame. The reader seeks there for each clip (unless the
    previous clip ended closer), lets the decoder skip the frames before the
    clip that no other frame refers to (most B-frames), decodes nothing after
    the clip's last frame, and converts only the ``clip_len`` frames kept, each
    once, straight from the decoder's pixels to ``frame_size`` RGB. A clip
    costs about the same however far into the file it is. Measured roughly
    here (60 s videos of 320x240 H.264, keyframes every 250 frames, 2 random
    clips of 16 frames, step 2, per video, to 112x112, on 2 shared cores):
    about 100 frames decoded and 20-25 ms of CPU per clip (one run across a
    video's two clips, converted at full size first, decoded 370 frames for
    55-65 ms), the ``tf.data`` pipeline adding next to nothing, and 2 parallel
    calls giving about 1.5x the clips/s of one (FFmpeg decodes and resizes
    with the GIL released; the rest was other work on the machine). Keyframes
    closer together make clips cheaper; converting once to shards
    (``write_video_shards``) makes them cheaper still when the videos are read
    for many epochs. The facts each file's probe finds (frames, timestamps,
    keyframes) are cached per file under the user's cache folder, keyed by
    its path, size and modification time, so a second run's first batch does
    not wait for every file to be probed again.

    Raises:
        DataError: a bad file, naming it (see ``on_bad_file``), a video
            shorter than a clip, an empty class folder, no videos at all, a
            video changed since the folder was listed (when it is read).
        TypeError, ValueError: a bad argument (named, as Keras' messages do).
    """
    opts = video_options(options, clip_len=clip_len, frame_step=frame_step, fps=fps,
                         frame_size=frame_size, crop_to_aspect_ratio=crop_to_aspect_ratio,
                         pad_to_aspect_ratio=pad_to_aspect_ratio, sampler=sampler,
                         clips_per_video=clips_per_video)
    label_mode = check_labels(labels, label_mode, class_names)
    check_choice("color_mode", color_mode, ("rgb", "grayscale"))
    check_choice("dtype", dtype, ("uint8", "float32"))
    check_count("batch_size", batch_size, none=True)
    check_count("num_parallel_calls", num_parallel_calls, none=True)
    check_split(validation_split, subset)
    seed = check_split_seed(validation_split, shuffle, seed)
    release_iterators_at_exit()  # an error must not leave Python hanging at exit
    folder = list_videos(directory, class_names=class_names, on_bad_file=on_bad_file,
                         labels=labels, follow_links=follow_links)
    opts.check_videos(folder.infos)
    # (class_names is None only with labels=None, and then label_mode is None)
    if label_mode == "binary" and len(folder.class_names or ()) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={folder.class_names}; pass "
                         "label_mode='int' or 'categorical' for more classes")
    kept, timelines = _keep_long_enough(folder, opts, on_bad_file, directory)
    # split every listed video, then leave out the short ones: the same split as
    # write_video_shards', whatever clip_len, frame_step or fps
    long_enough = set(kept)
    all_train, all_val = split_indices(len(folder.infos), validation_split, seed, shuffle)
    train = [i for i in all_train if i in long_enough]
    val = [i for i in all_val if i in long_enough]
    for name, part in (("training", train), ("validation", val)):
        if subset in (name, "both") and not part:
            raise ValueError(f"validation_split={validation_split} leaves no video for "
                             f"{name} (of {len(kept)} videos long enough for a clip); pass a "
                             "validation_split that leaves videos on both sides")
    if verbose:
        for path, reason in folder.skipped:
            print(f"Skipped {path}: {reason}")
        n_classes = "" if folder.class_names is None else \
            f" belonging to {len(folder.class_names)} classes"
        print(f"Found {len(kept)} videos{n_classes}"
              + (f" ({len(folder.skipped)} bad files skipped)." if folder.skipped else "."))
        for name, part in (("training", train), ("validation", val)):
            if subset in (name, "both"):
                print(f"Using {len(part)} videos for {name}.")
    read = _Reading(opts, batch_size=batch_size, seed=seed, seek=seek, with_ids=with_ids,
                    label_mode=label_mode, on_bad_file=on_bad_file,
                    num_parallel_calls=num_parallel_calls or cpu_cores(),
                    channels=1 if color_mode == "grayscale" else 3, dtype=dtype)
    if subset is None:
        return _subset(folder, sorted(train), timelines, read, training=True, shuffle=shuffle)
    made = {"training": lambda: _subset(folder, train, timelines, read, training=True,
                                        shuffle=shuffle),
            "validation": lambda: _subset(folder, val, timelines, read, training=False,
                                          shuffle=False)}
    if subset == "both":
        return made["training"](), made["validation"]()
    return made[subset]()


@dataclass(frozen=True)
class _Reading:
    """How a subset is read: the checked clip options and the reader's own settings."""

    options: VideoOptions
    batch_size: int | None
    seed: int
    seek: bool
    with_ids: bool
    label_mode: str | None
    on_bad_file: str
    num_parallel_calls: int
    channels: int = 3
    dtype: str = "uint8"


def _keep_long_enough(folder, opts: VideoOptions, on_bad_file, directory):
    """The listed videos long enough for one clip, and their frames at ``opts.fps``;
    the others raise, or are skipped (a class left without videos raises, naming it)."""
    span, fps = clip_span(opts.clip_len, opts.frame_step), opts.fps
    kept, timelines, before = [], {}, len(folder.skipped)
    for i, info in enumerate(folder.infos):
        frames = output_frames(info, fps)
        if len(frames) >= span:
            kept.append(i)
            timelines[i] = frames
            continue
        reason = (f"{len(frames)} frames" + (f" at fps={fps}" if fps else "") + f", fewer "
                  f"than the {span} one clip spans; pass a smaller clip_len or frame_step")
        if on_bad_file == "raise":
            raise DataError(info.path, reason + ", or on_bad_file='skip'")
        folder.skipped.append((info.path, reason))
    if not kept:
        raise DataError(folder.infos[0].path, "no video is long enough for one clip; pass a "
                        "smaller clip_len or frame_step")
    if folder.class_names is not None:
        left = {folder.labels[i] for i in kept}
        emptied = [c for c in sorted(set(folder.labels)) if c not in left]
        if emptied:
            name = folder.class_names[emptied[0]]
            raise DataError(Path(directory) / name, f"class {name!r} has no video long enough "
                            "for one clip "
                            f"({len(folder.skipped) - before} videos too short, see the lines "
                            "above); pass a smaller clip_len or frame_step, or class_names "
                            "without it")
    return kept, timelines


def _subset(folder, idx, timelines, read: _Reading, *, training: bool, shuffle: bool):
    opts = read.options
    sampler = opts.sampler_for(training)
    k, clip_len, seed, channels = opts.clips_for(sampler), opts.clip_len, read.seed, read.channels
    height, width = opts.frame_size or one_frame_size([folder.infos[i] for i in idx])

    skipped = list(folder.skipped)  # grows while reading under on_bad_file="skip"

    decode = _clip_decoder(folder, timelines, read, (k, clip_len, height, width, channels),
                           skipped)

    # The paths ride along (unused) so that the pipeline's graph names its files: an
    # iterator checkpoint then records them and refuses a resume after one changed.
    videos = tf.data.Dataset.from_tensor_slices((
        tf.constant(idx, tf.int64), tf.constant([folder.labels[i] for i in idx], tf.int64),
        tf.constant([len(timelines[i]) for i in idx], tf.int64),
        tf.range(len(idx), dtype=tf.int64),
        tf.constant([os.path.abspath(folder.infos[i].path) for i in idx])))
    if shuffle:
        videos = videos.shuffle(len(idx), seed=seed)

    def choose(epoch_key):
        def frames_of(i, label, n, file, _path):
            key = video_key(epoch_key, i) if sampler == "random" else tf.constant(0, tf.int64)
            return i, label, file, clip_frames(n, key, clip_len, frame_step=opts.frame_step,
                                               sampler=sampler, clips_per_video=k)
        return videos.map(frames_of)

    ds = epoch_keys(seed).flat_map(choose) if sampler == "random" else choose(0)

    def load(i, label, file, frames):
        clips = tf.numpy_function(decode, [i, frames], tf.uint8, stateful=False, name="decode")
        if read.on_bad_file == "skip":  # a clip that cannot be decoded comes out as none
            clips = tf.ensure_shape(clips, (None, clip_len, height, width, channels))
            n = tf.shape(clips)[0]
        else:
            clips = tf.ensure_shape(clips, (k, clip_len, height, width, channels))
            n = k
        if read.dtype == "float32":
            clips = tf.cast(clips, tf.float32)
        return {"clip": clips, "label": tf.fill([n], label), "video": tf.fill([n], i),
                "file": tf.fill([n], file), "frames": frames[:n]}

    ds = ds.map(load, num_parallel_calls=read.num_parallel_calls, deterministic=True).unbatch()
    if read.on_bad_file == "raise":  # under "skip" a clip dropped while reading is not there
        ds = ds.apply(tf.data.experimental.assert_cardinality(len(idx) * k))
    return _finish(ds, folder, idx, read, k=k, shuffle=shuffle, frame_size=(height, width),
                   skipped=skipped)


def _clip_decoder(folder, timelines, read: _Reading, shape: tuple, skipped: list):
    """The function that decodes one video's ``shape`` clips at the frames the sampler chose.

    It runs in a tf.data thread (FFmpeg drops the GIL while decoding). Under
    ``on_bad_file="skip"`` a video that breaks only now is printed, added to
    ``skipped`` and gives no clip.
    """
    k, clip_len, height, width, channels = shape

    def decode(i, frames):
        try:
            clips = decode_frames(folder.infos[int(i)], timelines[int(i)][frames.reshape(-1)],
                                  seek=read.seek, **read.options.fit)
        except DataError as e:  # broke after listing: dropped and counted under "skip"
            if read.on_bad_file == "raise":
                raise
            if e.path not in {p for p, _ in skipped}:
                reason = e.reason.split("; ")[0] + " (found while reading: its clips dropped)"
                print(f"skipped {e.path}: {reason}")
                skipped.append((e.path, reason))
            return np.zeros((0, clip_len, height, width, channels), np.uint8)
        if channels == 1:
            clips = to_grayscale(clips)
        return clips.reshape(k, clip_len, height, width, channels)

    return decode


def _finish(ds, folder, idx, read: _Reading, *, k: int, shuffle: bool, frame_size, skipped):
    """``_subset``'s clips spread, labelled, batched and prefetched, with what says how."""
    if shuffle and k > 1:  # one video's clips come out together: spread them
        ds = ds.shuffle(check_shuffle_buffer(k * (read.batch_size or 1), len(idx) * k),
                        seed=read.seed)
    if not read.with_ids:
        # labels=<list>: its largest label may exceed its distinct values
        n_classes = max(len(folder.class_names or ()), max(folder.labels) + 1)
        ds = ds.map(lambda d: with_label_mode(d["clip"], d["label"], read.label_mode,
                                              n_classes))
    if read.batch_size is not None:
        ds = ds.batch(read.batch_size)
    ds = ds.prefetch(tf.data.AUTOTUNE)
    ds.class_names = None if folder.class_names is None else list(folder.class_names)
    ds.file_paths = [folder.infos[i].path for i in idx]
    ds.skipped = skipped
    # what clips_to_predict(path, like=ds) needs to make a new video's clips the same way
    ds.clip_options = dataclasses.replace(read.options, frame_size=frame_size)
    ds.color_mode, ds.clip_dtype = ("grayscale" if read.channels == 1 else "rgb"), read.dtype
    return ds
