"""``video_dataset_from_directory``: your own class folders of videos, read directly into ``fit()``.

Shaped like ``keras.utils.image_dataset_from_directory`` (same argument names
where they apply, class folders in sorted order, ``class_names`` on the
dataset), plus what video needs: ``clip_len``, ``frame_step``, ``fps``
(resampled by timestamps), ``frame_size``, and a clip ``sampler``
(:mod:`datakit.readers.video.options.clip_sampling`, the one
:func:`~datakit.readers.video.reading.clips.clip_dataset` uses on converted shards, so
both paths pick the same frames).

The pipeline: video list -> shuffle (training) -> each video's frame indices
(the sampler, a new seeded key per epoch) -> ``map`` a ``tf.numpy_function``
that reads only those frames
(:func:`~datakit.readers.video.decoding.frame_reading.read_frames`: a seek to the
keyframe before each clip when that decodes fewer frames, each kept frame
converted once to the target size), ``n_parse_threads`` videos at once ->
batch -> prefetch. FFmpeg decodes with the GIL released and the Python left
around it is a few per cent of a clip, so the calls run on several cores, each
decoding on one FFmpeg thread when they fill the cores (``decoder_threads``). Each
video's size and modification time are checked when it is read: a video
replaced after the folder was listed is an error naming it, never a mix of
old and new frames in one epoch.

What a clip costs: a video stores a full picture (a keyframe) every so often,
often every 250 frames, and only changes in between, so a clip starting at frame
``k`` costs decoding from the keyframe before ``k`` to its last frame. The reader
seeks there for each clip (unless the previous clip ended closer), lets the
decoder skip the frames no other frame refers to, decodes nothing after the
clip's last frame, and converts only the kept frames, each once, straight to
``frame_size`` RGB: a clip costs about the same however far into the file it is
(about 100 frames decoded and 20-25 ms of CPU a clip measured here on 60 s
320x240 H.264 videos, 2 clips of 16 frames, step 2, to 112x112). Converting once
to shards (``write_video_shards``) makes clips cheaper still over many epochs. The
facts each file's probe finds are cached per file (path, size, modification
time) under the user's cache folder.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsInt

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count, check_fits_in_memory, check_flags
from datakit.core.cores import cpu_cores
from datakit.core.exit_guard import release_iterators_at_exit
from datakit.core.keywords import keywords
from datakit.core.progress import check_progress
from datakit.readers.video.decoding.decoding import decode_frames
from datakit.readers.video.index.folders import check_split, split_indices
from datakit.readers.video.index.video_index import VideoIndex, index_folder
from datakit.readers.video.options.clip_options import (
    VIDEO_FIELDS,
    VideoOptions,
    one_frame_size,
    video_options,
)
from datakit.readers.video.options.clip_sampling import SAMPLERS, clip_frames, epoch_keys, video_key
from datakit.readers.video.options.keras_arguments import (
    Labels,
    check_choice,
    check_labels,
    check_split_seed,
    to_grayscale,
    with_label_mode,
)
from datakit.readers.video.reading.clip_tail import clip_tail

__all__ = ["video_dataset_from_directory"]


def video_dataset_from_directory(
        directory: str | os.PathLike, labels: Labels = "inferred",
        label_mode: str | None = "int", class_names: Sequence[str] | None = None,
        color_mode: str = "rgb", batch_size: int | None = 8, *, dtype: str = "uint8",
        shuffle: bool = True, seed: int | None = None, validation_split: float | None = None,
        subset: str | None = None, follow_links: bool = False,
        crop_to_aspect_ratio: bool | None = None, pad_to_aspect_ratio: bool | None = None,
        n_parse_threads: int | None = None, decoder_threads: int | None = None,
        seek: bool = True, on_bad_file: str = "raise", verify_frames: bool = False,
        with_ids: bool = False, verbose: bool = True, progress: bool | None = None,
        options: VideoOptions | None = None,
        **clip_options: Any) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
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
            validation set, as Keras does. A shuffled split needs a seed (an int
            >= 0, as in Keras); otherwise ``None`` (the default, as the table
            readers take it) lets TensorFlow draw the seeds, new ones at each
            build, the same again under ``tf.random.set_seed`` or
            ``keras.utils.set_random_seed``.
        validation_split, subset: split *by video*: ``"training"``,
            ``"validation"`` or ``"both"`` (a pair of datasets).
        follow_links: follow symbolic links to folders, as Keras does.
        n_parse_threads: videos decoded at once (default: the cores; the name every
            reader of the kit gives its parse calls; tf.data's ``num_parallel_calls=``
            is taken too, not both).
        decoder_threads: FFmpeg's threads per video decoded (default: the cores
            shared among the ``n_parse_threads`` decoders, at least one: one
            each at the default, where a single thread per video does the same
            work on less CPU than FFmpeg's own threads, which mostly wait on each
            other; ``python -m benchmarks.decoders`` measures both).
        seek: seek to the keyframe before each clip (``False``: decode from the
            first frame, to measure what seeking saves).
        on_bad_file: ``"raise"`` or ``"skip"``: bad files (and videos shorter
            than one clip) are found when the folder is listed, so ``len(ds)``
            is known either way; each skipped file is printed with its reason and
            listed in ``skipped`` (``(path, reason)`` pairs); a class left with no
            video is an error naming it. The listing decodes each file's first
            frames and last group of frames only: a file damaged between them is
            found when a clip is drawn there, and is then an error naming it and
            the frame, under either (the epoch's length was promised to ``fit()``),
            unless ``verify_frames=True`` found it at the listing.
        verify_frames: decode every frame of each file once while the folder is
            listed, so that a file damaged anywhere is named then (``"raise"``) or
            left out and counted in ``skipped`` with the frame where decoding fails
            (``"skip"``), never in a later epoch. It costs about one decode of the
            whole folder (every frame of every file, one file per core: for long
            videos many epochs' worth of clips), paid once per file: the result is
            kept in the probe cache, so listing the unchanged folder again decodes
            nothing (:mod:`~datakit.readers.video.decoding.frame_check`). Worth it for a
            folder you did not make (downloads, phone copies); ``False`` (default).
        with_ids: elements are dicts with ``clip``, ``label`` (the int label),
            ``video`` (the video's index in the folder's sorted listing, the ``id``
            ``write_video_shards`` gives it), ``file`` (its index in this dataset's
            ``file_paths``: ``ds.file_paths[file]`` is the clip's video) and
            ``frames`` (the indices chosen).
        verbose: print what was found (Keras' lines), and each skipped file.
        progress: a bar over the videos probed while the folder is listed
            (:mod:`datakit.core.progress`): ``None`` (default) shows it in a notebook or
            a terminal once listing lasts a second, ``True`` always, ``False`` never.
        options: a :class:`~datakit.readers.video.options.clip_options.VideoOptions`, or
        **clip_options: its fields as keywords (``clip_len``, ``frame_step``,
            ``fps``, ``frame_size``, ``sampler``, ``clips_per_video``, ``prefetch``,
            and ``crop_to_aspect_ratio`` / ``pad_to_aspect_ratio``, named in the
            signature as Keras names them; ``None``: the options' own, else
            ``False``), not both ways for one field (Keras' ``image_size`` is
            ``frame_size`` here).

    Returns:
        A dataset (or two, for ``subset="both"``) with ``class_names``,
        ``file_paths`` (in the order read with ``shuffle=False``) and ``skipped``
        attributes (and what :func:`~datakit.readers.video.reading.predict_clips.clips_to_predict`
        takes from ``like=ds`` to make a new video's clips the same way).
        Clips are ``(clip_len, height, width, channels)`` of ``dtype``;
        ``"int"`` labels are int64 (Keras gives int32: int64 is what the shards'
        reader yields too, so one model trains on either path). Into ``fit()``,
        ``fit(ds.repeat(), steps_per_epoch=len(ds))`` keeps one iterator for the
        run: with a new one each epoch, TensorFlow 2.21 can stall at the epoch's
        end until its autotuning thread next wakes (see the README).

        The random clips are drawn anew each epoch inside the dataset, so a
        ``.cache()`` after it freezes the first epoch's clips for every epoch
        after. A cache belongs before the clip choice: keep the decoded frames
        (``write_video_shards`` once, then ``clip_dataset``, or frames in memory)
        and choose the clips after it.

        Raises:
        DataError: a bad file, naming it (see ``on_bad_file``), a video
            shorter than a clip, an empty class folder, no videos at all; when a
            clip is read: a video changed since the folder was listed, or one
            damaged where the listing did not decode (see ``verify_frames``).
        TypeError, ValueError: a bad argument (named, as Keras' messages do).
    """
    for name, value in (("crop_to_aspect_ratio", crop_to_aspect_ratio),
                        ("pad_to_aspect_ratio", pad_to_aspect_ratio)):
        if value is not None:  # Keras' names, in the signature; VideoOptions' fields
            clip_options[name] = value
    knobs = keywords("video_dataset_from_directory", {"n_parse_threads": n_parse_threads},
                     clip_options, takes=VIDEO_FIELDS, defaults={"n_parse_threads": None})
    with knobs.as_written():  # a message names each knob as the caller wrote it
        opts = video_options(options, {f: knobs[f] for f in VIDEO_FIELDS if f in knobs},
                             where="video_dataset_from_directory")
        n_parse_threads = check_count("n_parse_threads", knobs["n_parse_threads"], none=True)
    label_mode = check_labels(labels, label_mode, class_names)
    check_choice("color_mode", color_mode, ("rgb", "grayscale"))
    check_choice("dtype", dtype, ("uint8", "float32"))
    check_count("batch_size", batch_size, none=True)
    check_count("decoder_threads", decoder_threads, none=True)
    check_progress(progress)
    check_flags(shuffle=shuffle, follow_links=follow_links, seek=seek,
                verify_frames=verify_frames, with_ids=with_ids, verbose=verbose)
    batch: dict = dict(clip_len=opts.clip_len, batch_size=batch_size, color_mode=color_mode,
                       dtype=dtype)
    if opts.frame_size is not None:  # one batch must fit, or the first element kills the process
        _check_batch_fits(opts.frame_size, own=False, **batch)
    check_split(validation_split, subset)
    seed = check_split_seed(validation_split, shuffle, seed)
    release_iterators_at_exit()  # an error must not leave Python hanging at exit
    index = index_folder(directory, opts, class_names=class_names, labels=labels,
                         follow_links=follow_links, on_bad_file=on_bad_file,
                         progress=progress, verify_frames=verify_frames)
    _check_own_size_fits(opts, index, batch)
    # (class_names is None only with labels=None, and then label_mode is None)
    if label_mode == "binary" and len(index.class_names or ()) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={index.class_names}; pass "
                         "label_mode='int' or 'categorical' for more classes")
    # split every listed video, then leave out the short ones: the same split as
    # write_video_shards', whatever clip_len, frame_step or fps
    long_enough = set(index.kept)
    all_train, all_val = split_indices(len(index.paths), validation_split, seed, shuffle)
    train = [i for i in all_train if i in long_enough]
    val = [i for i in all_val if i in long_enough]
    for name, part in (("training", train), ("validation", val)):
        if subset in (name, "both") and not part:
            raise ValueError(f"validation_split={validation_split} leaves no video for "
                             f"{name} (of {len(index.kept)} videos long enough for a clip); "
                             "pass a validation_split that leaves videos on both sides")
    if verbose:
        _say_found(index, subset, train, val)
    decoders = n_parse_threads or cpu_cores()
    read = _Reading(opts, batch_size=batch_size, seed=seed, seek=seek, with_ids=with_ids,
                    label_mode=label_mode, num_parallel_calls=decoders,
                    decoder_threads=decoder_threads or max(1, cpu_cores() // decoders),
                    channels=1 if color_mode == "grayscale" else 3, dtype=dtype)
    if subset is None:
        return _subset(index, sorted(train), read, training=True, shuffle=shuffle)
    made = {"training": lambda: _subset(index, train, read, training=True, shuffle=shuffle),
            "validation": lambda: _subset(index, val, read, training=False, shuffle=False)}
    if subset == "both":
        return made["training"](), made["validation"]()
    return made[subset]()


def _check_batch_fits(size: tuple[int, int], *, own: bool, clip_len: int, batch_size: int | None,
                      color_mode: str,
                      dtype: str) -> None:
    """One batch of ``size`` frames must fit in memory (or its first element kills the
    process): refused with the figure before any clip is read. ``own``: ``size`` is the
    videos' own (``frame_size=None``), not the caller's ``frame_size``."""
    h, w = size
    said = f"frame_size=None (the videos' {h}x{w})" if own else f"frame_size={(h, w)}"
    check_fits_in_memory(
        f"video_dataset_from_directory({said}, clip_len={clip_len}, batch_size={batch_size})",
        float(batch_size or 1) * clip_len * h * w * (3 if color_mode == "rgb" else 1)
        * (1 if dtype == "uint8" else 4),
        fix="pass a smaller frame_size (e.g. (224, 224)) or batch_size")


def _check_own_size_fits(opts: VideoOptions, index: VideoIndex, batch: dict) -> None:
    """With ``frame_size=None``, :func:`_check_batch_fits` on the first kept video's size,
    once the folder is listed (the size an explicit ``frame_size`` is checked at first)."""
    if opts.frame_size is None and index.kept:
        first = index.infos[index.kept[0]]
        _check_batch_fits((first.height, first.width), own=True, **batch)


def _say_found(index: VideoIndex, subset: str | None, train: list[int],
               val: list[int]) -> None:
    """Keras' lines: the videos found (and the files skipped), and each subset's."""
    for path, reason in index.skipped:
        print(f"Skipped {path}: {reason}")
    n_classes = "" if index.class_names is None else \
        f" belonging to {len(index.class_names)} classes"
    print(f"Found {len(index.kept)} videos{n_classes}"
          + (f" ({len(index.skipped)} bad files skipped)." if index.skipped else "."))
    for name, part in (("training", train), ("validation", val)):
        if subset in (name, "both"):
            print(f"Using {len(part)} videos for {name}.")


@dataclass(frozen=True)
class _Reading:
    """How a subset is read: the checked clip options and the reader's own settings."""

    options: VideoOptions
    batch_size: int | None
    seed: int | None
    seek: bool
    with_ids: bool
    label_mode: str | None
    num_parallel_calls: int
    decoder_threads: int
    channels: int = 3
    dtype: str = "uint8"


def _subset(index: VideoIndex, idx: list[int], read: _Reading, *, training: bool,
            shuffle: bool) -> tf.data.Dataset:
    opts = read.options
    sampler = opts.sampler_for(training)
    keyed = SAMPLERS[sampler].keyed  # a new key per epoch, hence per video
    k, clip_len, seed, channels = opts.clips_for(sampler), opts.clip_len, read.seed, read.channels
    height, width = opts.frame_size or one_frame_size([index.infos[i] for i in idx])
    decode = _clip_decoder(index, read, (k, clip_len, height, width, channels))

    # The paths ride along (unused) so that the pipeline's graph names its files: an
    # iterator checkpoint then records them and refuses a resume after one changed.
    videos = tf.data.Dataset.from_tensor_slices((
        tf.constant(idx, tf.int64), tf.constant([index.labels[i] for i in idx], tf.int64),
        tf.constant([index.lengths[i] for i in idx], tf.int64),
        tf.range(len(idx), dtype=tf.int64),
        tf.constant([os.path.abspath(index.paths[i]) for i in idx])))
    if shuffle:
        videos = videos.shuffle(len(idx), seed=seed)

    def choose(epoch_key: tf.Tensor | int) -> tf.data.Dataset:
        def frames_of(i: tf.Tensor, label: tf.Tensor, n: tf.Tensor, file: tf.Tensor,
                      _path: tf.Tensor) -> tuple:
            key = video_key(epoch_key, i) if keyed else tf.constant(0, tf.int64)
            return i, label, file, clip_frames(n, key, clip_len, frame_step=opts.frame_step,
                                               sampler=sampler, clips_per_video=k)
        return videos.map(frames_of)

    ds = epoch_keys(seed).flat_map(choose) if keyed else choose(0)

    def load(i: tf.Tensor, label: tf.Tensor, file: tf.Tensor, frames: tf.Tensor) -> dict:
        clips = tf.numpy_function(decode, [i, frames], tf.uint8, stateful=False, name="decode")
        clips = tf.ensure_shape(clips, (k, clip_len, height, width, channels))
        if read.dtype == "float32":
            clips = tf.cast(clips, tf.float32)
        return {"clip": clips, "label": tf.fill([k], label), "video": tf.fill([k], i),
                "file": tf.fill([k], file), "frames": frames}

    ds = ds.map(load, num_parallel_calls=read.num_parallel_calls, deterministic=True).unbatch()
    # labels=<list>: its largest label may exceed its distinct values
    n_classes = max(len(index.class_names or ()), max(index.labels) + 1)
    ds = clip_tail(ds, count=len(idx) * k, batch_size=read.batch_size,
                   shuffle_buffer_size=k * (read.batch_size or 1) if shuffle and k > 1 else 0,
                   seed=seed, prefetch=opts.prefetch,  # (one video's clips come out together)
                   label=None if read.with_ids else lambda d: with_label_mode(
                       d["clip"], d["label"], read.label_mode, n_classes))
    ds.class_names = None if index.class_names is None else list(index.class_names)
    ds.file_paths = [index.paths[i] for i in idx]
    ds.skipped = list(index.skipped)
    # what clips_to_predict(path, like=ds) needs to make a new video's clips the same way
    ds.clip_options = dataclasses.replace(opts, frame_size=(height, width))
    ds.color_mode, ds.clip_dtype = ("grayscale" if channels == 1 else "rgb"), read.dtype
    return ds


def _clip_decoder(index: VideoIndex, read: _Reading,
                  shape: tuple) -> Callable[[SupportsInt, np.ndarray], np.ndarray]:
    """The function that decodes one video's ``shape`` clips at the frames the sampler chose.

    It runs in a tf.data thread (FFmpeg drops the GIL while decoding). A video
    that fails only now (changed since the listing, or damaged where the listing's
    probe decoded nothing: ``verify_frames=False``) raises under either
    ``on_bad_file``, naming what happened
    (:func:`~datakit.readers.video.decoding.frame_reading.damaged_error`): leaving its clips
    out would make the epoch shorter than the ``len(ds)`` that
    ``fit(steps_per_epoch=len(ds))`` was told.
    """
    k, clip_len, height, width, channels = shape

    def decode(i: SupportsInt, frames: np.ndarray) -> np.ndarray:
        clips = decode_frames(index.infos[int(i)], index.timelines[int(i)][frames.reshape(-1)],
                              seek=read.seek, threads=read.decoder_threads,
                              **read.options.fit)
        if channels == 1:
            clips = to_grayscale(clips)
        return clips.reshape(k, clip_len, height, width, channels)

    return decode
