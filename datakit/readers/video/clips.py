"""Clips streamed into ``model.fit()``: from ``SequenceExample`` shards, or from MP4 files.

Two ways: :func:`clip_dataset` reads TFRecord shards of ``SequenceExample`` s
(one JPEG per frame, written by :func:`datakit.readers.video.video_records.write_video_records`)
and decodes only the frames of each clip; :func:`mp4_clip_dataset` decodes MP4
files (written by :func:`datakit.readers.video.mp4.write_mp4_videos`) with PyAV
inside ``from_generator``. The starting point they replace, every frame in one
NumPy array, is :func:`datakit.readers.video.in_memory.load_videos_in_memory`.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from datakit.core import manifest
from datakit.core.arguments import check_count, check_shuffle_buffer
from datakit.core.errors import DataError
from datakit.perf import timeline
from datakit.readers import tf_example, tfrecords
from datakit.readers.video.clip_sampling import (
    check_sampler,
    clip_frames,
    clip_span,
    epoch_keys,
    video_key,
)
from datakit.readers.video.exit_guard import release_iterators_at_exit
from datakit.readers.video.moving_squares import CLASSES
from datakit.readers.video.mp4 import list_mp4, mp4_frame_count, read_mp4

__all__ = ["clip_dataset", "mp4_clip_dataset"]


def _finish(ds, batch_size: int, shuffle_buffer_size: int, seed: int, drop_remainder: bool,
            known: int | None = None):
    shuffle_buffer_size = check_shuffle_buffer(shuffle_buffer_size, known, what="videos")
    if shuffle_buffer_size > 1:
        ds = ds.shuffle(shuffle_buffer_size, seed=seed)
    return ds.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)


def _check_pipeline_args(clip_len, batch_size, shuffle_buffer_size, cycle_length):
    check_count("clip_len", clip_len)
    check_count("batch_size", batch_size)
    check_count("shuffle_buffer_size", shuffle_buffer_size, 0)  # 0: no shuffle
    check_count("cycle_length", cycle_length)
    check_shuffle_buffer(shuffle_buffer_size, what="videos")


def clip_dataset(directory: str | Path, *, clip_len: int = 16, batch_size: int = 8,
                 shuffle_buffer_size: int = 64, cycle_length: int = 2, seed: int = 0,
                 drop_remainder: bool = False, with_ids: bool = False, trace: bool = False,
                 training: bool = True, sampler: str | None = None, frame_step: int = 1,
                 clips_per_video: int = 1):
    """Stream batches of ``clip_len``-frame clips from TFRecord shards of ``SequenceExample`` s.

    shards -> interleave -> parse -> choose the clip's frames (the sampler) ->
    decode only those JPEGs -> shuffle -> batch -> prefetch. A new clip each epoch.

    Args:
        directory: the shards, from :func:`~datakit.readers.video.video_records.write_video_records`
            or :func:`~datakit.readers.video.convert.write_video_shards`.
        clip_len: frames per clip; frame_step: frames between a clip's frames.
        batch_size: clips per batch.
        shuffle_buffer_size: clips in the shuffle buffer (0 or 1: no shuffle).
        cycle_length: shards read at once, each by its own thread.
        seed: seeds the file order, the clip starts and the shuffle.
        drop_remainder: drop a last, smaller batch.
        with_ids: elements are dicts that also hold each clip's video ``id``,
            first frame ``start`` and ``frames`` (the indices chosen); otherwise
            ``(clips, labels)`` with clips ``(batch, clip_len, H, W, 3)`` uint8.
        trace: add a :mod:`datakit.perf.timeline` trace (stage "decode") to each element.
        training: ``False`` for validation: files in order, no shuffling, and
            the ``"center"`` sampler unless another is asked.
        sampler, clips_per_video: see :mod:`datakit.readers.video.clip_sampling`
            (default ``"random"`` when training). On shards from
            ``write_video_shards`` a random clip depends on the video and the
            epoch only, so it is the clip the direct reader picks.

    Returns:
        The dataset, with ``class_names`` (from the manifest; the synthetic
        set's :data:`~datakit.readers.video.moving_squares.CLASSES` otherwise).

    Raises:
        TypeError: a count is not an int.
        ValueError: a count is out of range.
        RecordFileError: a shard is damaged (see :func:`datakit.readers.tfrecords.read_records`).
        InvalidArgumentError (while reading): a video shorter than a clip, or
            frames of another size than the first video's, naming the video.
    """
    _check_pipeline_args(clip_len, batch_size, shuffle_buffer_size, cycle_length)
    sampler = sampler or ("random" if training else "center")
    check_sampler(sampler, clip_len, frame_step, clips_per_video)
    k, span = clips_per_video, clip_span(clip_len, frame_step)
    raw = tfrecords.read_records(directory, shuffle_files=training, seed=seed,
                                 cycle_length=cycle_length, num_parallel_reads=cycle_length)
    context_spec = {"id": tf.int64, "label": tf.int64, "length": tf.int64}
    source_spec = {"source": tf.io.FixedLenFeature((), tf.string, default_value="")}
    sequence_spec = {"frames": tf.string}  # one JPEG per step
    # The frame size, for static shapes Keras can use. Peek with a reader of its own:
    # iterating `raw` would use up the first shuffle of the file order.
    first = next(iter(tfrecords.read_records(directory, check_manifest=False, verify=False)
                      .take(1)))
    _, seq = tf_example.parse_sequence_example(first, context_spec, sequence_spec)
    height, width, _ = tf.io.decode_jpeg(seq["frames"][0], channels=3).shape
    meta = _video_set(directory)
    per_video = meta is not None  # shards of your own videos: clips keyed by video

    def name_of(ctx):  # the video's file if the writer knew it, else its id
        by_id = tf.strings.join(["video id ", tf.strings.as_string(ctx["id"]),
                                 f" of {directory}"])
        return tf.where(tf.equal(ctx["source"], ""), by_id, ctx["source"])

    def parse_clip(serialized, key):
        ctx, seq = tf_example.parse_sequence_example(serialized, context_spec, sequence_spec)
        ctx.update(tf.io.parse_single_sequence_example(serialized, source_spec)[0])
        n = tf.shape(seq["frames"], out_type=tf.int64)[0]
        short = tf.debugging.Assert(n >= span, [
            name_of(ctx), "has", n, f"frames, fewer than clip_len={clip_len} needs ({span} "
            f"frames at frame_step={frame_step}): pass a smaller clip_len or leave the video "
            "out"], name="short_video")
        with tf.control_dependencies([short]):
            frames = clip_frames(n, video_key(key, ctx["id"]) if per_video else key, clip_len,
                                 frame_step=frame_step, sampler=sampler, clips_per_video=k)
        chosen = tf.gather(seq["frames"], tf.reshape(frames, [-1]))  # decode these only
        clip = tf.map_fn(lambda b: tf.io.decode_jpeg(b, channels=3), chosen,
                         fn_output_signature=tf.uint8)
        got = tf.shape(clip)[1:3]
        same = tf.debugging.Assert(tf.reduce_all(tf.equal(got, [height, width])), [
            name_of(ctx), "has frames of", got, f"but the first video's are {height}x{width}: "
            "clips of one batch need one size; convert with write_video_shards(frame_size="
            "(height, width))"], name="frame_size")
        with tf.control_dependencies([same]):
            clip = tf.reshape(clip, (k, clip_len, height, width, 3))
        d = {"clip": clip, "label": tf.fill([k], ctx["label"]), "id": tf.fill([k], ctx["id"]),
             "start": frames[:, 0], "frames": frames}
        return d if k > 1 else {key_: v[0] for key_, v in d.items()}

    def stage(serialized, r):
        d = parse_clip(serialized, r)
        return d if with_ids else (d["clip"], d["label"])

    if per_video:  # one key per epoch, mixed with each video's id
        ds = epoch_keys(seed).flat_map(
            lambda e: raw.map(lambda s: (s, e)))
    else:  # the synthetic shards: a random number per record, in reading order
        ds = tf.data.Dataset.zip(raw, tf.data.Dataset.random(seed=seed,
                                                             rerandomize_each_iteration=True))
    total = None
    try:  # the manifest's record count tells fit() how many steps an epoch has
        total = tfrecords.read_manifest(directory)["records"]
        ds = ds.apply(tf.data.experimental.assert_cardinality(total))
    except (tfrecords.RecordFileError, OSError):  # no manifest
        pass
    if trace:
        ds = timeline.tag(ds).map(timeline.timed("decode", stage))
    else:
        ds = ds.map(stage)
    if k > 1:
        ds = ds.unbatch()
        if total:
            ds = ds.apply(tf.data.experimental.assert_cardinality(total * k))
    ds = _finish(ds, batch_size, shuffle_buffer_size if training else 0, seed, drop_remainder,
                 total * k if total else None)
    ds.class_names = list(meta["class_names"]) if per_video else list(CLASSES)
    return ds


def _video_set(directory) -> dict | None:
    """The manifest's set written by ``write_video_shards`` (class names, videos), or None."""
    try:
        man = manifest.read_manifest(directory)
    except (DataError, OSError):
        return None
    for s in (man or {"sets": {}})["sets"].values():
        if "videos" in s and "class_names" in s:
            return s
    return None


def mp4_clip_dataset(directory: str | Path, *, clip_len: int = 16, batch_size: int = 8,
                     shuffle_buffer_size: int = 64, cycle_length: int = 2, seed: int = 0,
                     drop_remainder: bool = False):
    """Like :func:`clip_dataset`, from MP4 files decoded by PyAV, ``cycle_length`` at once.

    Decoding has to run from the first frame up to the clip's last one (no
    JPEG-per-frame shortcut), in a ``tf.numpy_function`` mapped over the files.
    (:mod:`~datakit.readers.video.exit_guard` keeps an error from leaving the
    interpreter hanging at exit.)

    Args:
        directory: ``<class>/*.mp4`` folders, from :func:`write_mp4_videos`.
        clip_len, batch_size, shuffle_buffer_size, cycle_length, seed,
            drop_remainder: as in :func:`clip_dataset` (``cycle_length``: files
            decoded at once).

    Raises:
        TypeError: a count is not an int.
        ValueError: a count is out of range, or no MP4 files are found.
        InvalidArgumentError (while reading): a file that is damaged or shorter
            than a clip, naming it.
    """
    _check_pipeline_args(clip_len, batch_size, shuffle_buffer_size, cycle_length)
    release_iterators_at_exit()
    paths, labels = list_mp4(directory)
    height, width = read_mp4(paths[0], stop=1).shape[1:3]

    def decode_clip(path, r):
        path = path.decode()
        try:
            n = mp4_frame_count(path)
            if n < clip_len:
                raise ValueError(f"{n} frames, shorter than clip_len={clip_len}: pass a "
                                 "smaller clip_len or leave the video out")
            start = int(r) % (n - clip_len + 1)
            clip = read_mp4(path, start, start + clip_len)
            if clip.shape != (clip_len, height, width, 3):
                raise ValueError(f"decoded {clip.shape[0]} frames of shape {clip.shape[1:]}, "
                                 f"expected {clip_len} of {(height, width, 3)}: the file is "
                                 "damaged or its frames differ in size")
        except Exception as e:  # noqa: BLE001 - reworded with the file's name
            reason = str(e).replace(f"{path}: ", "")
            raise ValueError(f"{path}: cannot read a clip: {type(e).__name__}: {reason}") \
                from None
        return clip

    def load(path, label, r):
        clip = tf.numpy_function(decode_clip, [path, r], tf.uint8, stateful=False,
                                 name="mp4_clip")
        return tf.ensure_shape(clip, (clip_len, height, width, 3)), label

    files = tf.data.Dataset.from_tensor_slices((paths, tf.constant(labels, tf.int64)))
    files = files.shuffle(len(paths), seed=seed)
    rand = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    ds = tf.data.Dataset.zip(files, rand).map(lambda pl, r: load(pl[0], pl[1], r),
                                              num_parallel_calls=cycle_length,
                                              deterministic=True)
    ds = ds.apply(tf.data.experimental.assert_cardinality(len(paths)))  # one clip per file
    return _finish(ds, batch_size, shuffle_buffer_size, seed, drop_remainder, len(paths))
