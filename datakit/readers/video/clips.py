"""Clips streamed into ``model.fit()``: from ``SequenceExample`` shards, or from MP4 files.

Two ways: :func:`clip_dataset` reads TFRecord shards of ``SequenceExample`` s
(one JPEG per frame, written by :func:`datakit.readers.video.shards.write_video_records`)
and decodes only the frames of each clip; :func:`mp4_clip_dataset` decodes MP4
files (written by :func:`datakit.readers.video.mp4.write_mp4_videos`) with PyAV
inside ``from_generator``. The starting point they replace, every frame in one
NumPy array, is :func:`datakit.readers.video.in_memory.load_videos_in_memory`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count, check_shuffle_buffer
from datakit.perf import timeline
from datakit.readers import tf_example, tfrecords
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
                 training: bool = True):
    """Stream batches of random ``clip_len``-frame clips, one per video, from TFRecord shards.

    shards -> interleave -> parse -> pick a random start -> decode only those
    ``clip_len`` JPEGs -> shuffle -> batch -> prefetch. A new clip each epoch.

    Args:
        directory: the shards, from :func:`write_video_records`.
        clip_len: frames per clip (every video must have at least that many).
        batch_size: clips per batch.
        shuffle_buffer_size: clips in the shuffle buffer (0 or 1: no shuffle).
        cycle_length: shards read at once, each by its own thread.
        seed: seeds the file order, the clip starts and the shuffle.
        drop_remainder: drop a last, smaller batch.
        with_ids: elements are dicts that also hold each clip's video ``id``
            and first frame ``start``; otherwise ``(clips, labels)`` with clips
            ``(batch, clip_len, H, W, 3)`` uint8, ready for ``model.fit()``.
        trace: add a :mod:`datakit.perf.timeline` trace (stage "decode") to each element.
        training: ``False`` for validation: the same clips every epoch (each
            video's middle clip, start ``(length - clip_len) // 2``), files in
            order, no shuffling.

    Raises:
        TypeError: a count is not an int.
        ValueError: a count is out of range.
        RecordFileError: a shard is damaged (see :func:`datakit.readers.tfrecords.read_records`).
    """
    _check_pipeline_args(clip_len, batch_size, shuffle_buffer_size, cycle_length)
    raw = tfrecords.read_records(directory, shuffle_files=training, seed=seed,
                               cycle_length=cycle_length, num_parallel_reads=cycle_length)
    context_spec = {"id": tf.int64, "label": tf.int64, "length": tf.int64}
    sequence_spec = {"frames": tf.string}  # one JPEG per step
    # The frame size, for static shapes Keras can use. Peek with a reader of its own:
    # iterating `raw` would use up the first shuffle of the file order.
    first = next(iter(tfrecords.read_records(directory, check_manifest=False, verify=False)
                      .take(1)))
    _, seq = tf_example.parse_sequence_example(first, context_spec, sequence_spec)
    height, width, _ = tf.io.decode_jpeg(seq["frames"][0], channels=3).shape

    def parse_clip(serialized, r):
        ctx, seq = tf_example.parse_sequence_example(serialized, context_spec, sequence_spec)
        n = tf.shape(seq["frames"], out_type=tf.int64)[0]
        tf.debugging.Assert(n >= clip_len, [
            f"{directory}: video id", ctx["id"], "has", n, f"frames, fewer than clip_len="
            f"{clip_len}: pass a smaller clip_len or leave the video out"], name="short_video")
        start = tf.math.floormod(r, n - clip_len + 1) if training else (n - clip_len) // 2
        chosen = seq["frames"][start:start + clip_len]  # decode these frames only
        clip = tf.map_fn(lambda b: tf.io.decode_jpeg(b, channels=3), chosen,
                         fn_output_signature=tf.uint8)
        clip = tf.ensure_shape(clip, (clip_len, height, width, 3))
        return {"clip": clip, "label": ctx["label"], "id": ctx["id"], "start": start}

    def stage(serialized, r):
        d = parse_clip(serialized, r)
        return d if with_ids else (d["clip"], d["label"])

    rand = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    ds = tf.data.Dataset.zip(raw, rand)
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
    return _finish(ds, batch_size, shuffle_buffer_size if training else 0, seed,
                   drop_remainder, total)


_ATEXIT: list = []


def _release_iterators_at_exit() -> None:
    """Free, before the interpreter shuts down, an iterator kept by an uncaught error.

    Python keeps the last uncaught exception (``sys.last_traceback``, and with it the
    frames that still hold a ``tf.data`` iterator) until it tears modules down. An
    iterator over ``from_generator`` destroyed that late waits for generator threads that
    can no longer run Python: the process never exits. Dropping the traceback at
    ``atexit`` (while Python still runs) lets the iterator stop its threads.
    """
    if _ATEXIT:
        return
    import atexit
    import gc
    import sys

    def release():
        for name in ("last_exc", "last_value", "last_traceback", "last_type"):
            if hasattr(sys, name):
                setattr(sys, name, None)
        gc.collect()

    atexit.register(release)
    _ATEXIT.append(release)


def mp4_clip_dataset(directory: str | Path, *, clip_len: int = 16, batch_size: int = 8,
                     shuffle_buffer_size: int = 64, cycle_length: int = 2, seed: int = 0,
                     drop_remainder: bool = False):
    """Like :func:`clip_dataset`, from MP4 files decoded by PyAV, ``cycle_length`` at once.

    Decoding has to run from the first frame up to the clip's last one (no
    JPEG-per-frame shortcut), in Python, inside ``from_generator``.

    Args:
        directory: ``<class>/*.mp4`` folders, from :func:`write_mp4_videos`.
        clip_len, batch_size, shuffle_buffer_size, cycle_length, seed,
            drop_remainder: as in :func:`clip_dataset`.

    Raises:
        TypeError: a count is not an int.
        ValueError: a count is out of range, or no MP4 files are found.
    """
    _check_pipeline_args(clip_len, batch_size, shuffle_buffer_size, cycle_length)
    _release_iterators_at_exit()
    paths, labels = list_mp4(directory)
    height, width = read_mp4(paths[0], stop=1).shape[1:3]

    empty = np.zeros((clip_len, height, width, 3), np.uint8)

    def decode_clip(path, label, r):
        # No exception may leave this generator: one raised inside from_generator's thread
        # can leave the interpreter hanging at exit. A failure travels as a message,
        # and a TensorFlow op raises it (naming the file) after the generator returned.
        path = path.decode()
        try:
            n = mp4_frame_count(path)
            if n < clip_len:
                raise ValueError(f"{n} frames, shorter than clip_len={clip_len}: pass a "
                                 "smaller clip_len or leave the video out")
            start = int(r) % (n - clip_len + 1)
            clip = read_mp4(path, start, start + clip_len)
            if clip.shape != empty.shape:
                raise ValueError(f"decoded {clip.shape[0]} frames of shape {clip.shape[1:]}, "
                                 f"expected {clip_len} of {empty.shape[1:]}: the file is "
                                 "damaged or its frames differ in size")
        except Exception as e:  # noqa: BLE001 - every failure is reported, below
            reason = str(e).replace(f"{path}: ", "")
            yield empty, label, f"{path}: cannot read a clip: {type(e).__name__}: {reason}"
            return
        yield clip, label, ""

    def check(clip, label, error):
        ok = tf.debugging.Assert(tf.equal(error, ""), [error], name="mp4_clip")
        with tf.control_dependencies([ok]):
            return tf.identity(clip), label

    spec = (tf.TensorSpec((clip_len, height, width, 3), tf.uint8), tf.TensorSpec((), tf.int64),
            tf.TensorSpec((), tf.string))
    files = tf.data.Dataset.from_tensor_slices((paths, tf.constant(labels, tf.int64)))
    files = files.shuffle(len(paths), seed=seed)
    rand = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    ds = tf.data.Dataset.zip(files, rand).interleave(
        lambda pl, r: tf.data.Dataset.from_generator(
            decode_clip, args=(pl[0], pl[1], r), output_signature=spec),
        cycle_length=cycle_length, num_parallel_calls=cycle_length, deterministic=True)
    ds = ds.map(check)
    ds = ds.apply(tf.data.experimental.assert_cardinality(len(paths)))  # one clip per file
    return _finish(ds, batch_size, shuffle_buffer_size, seed, drop_remainder, len(paths))
