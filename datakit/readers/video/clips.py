"""Synthetic videos, written as MP4 files or TFRecord shards, streamed as clips.

Each video shows a square that moves in one of four directions; the
direction is the label. Videos have different lengths, and video ``i`` is
the same whatever ``n``, for a given ``seed``:

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

Two ways to stream them into ``model.fit()``: :func:`clip_dataset` reads
TFRecord shards of ``SequenceExample`` s (one JPEG per frame) written by
:func:`write_video_records` and decodes only the frames of each clip;
:func:`mp4_clip_dataset` decodes MP4 files (written by :func:`write_mp4_videos`)
with PyAV inside ``from_generator``. The starting point they replace, every
frame in one NumPy array, is :func:`datakit.readers.video.in_memory.load_videos_in_memory`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
from keras import layers

from datakit.core.arguments import check_count
from datakit.core.atomic import atomic_file
from datakit.perf import timeline
from datakit.readers import tf_example, tfrecords

__all__ = ["CLASSES", "Video", "make_video", "iter_videos", "make_videos", "write_mp4", "read_mp4",
           "mp4_frame_count", "write_mp4_videos", "list_mp4", "write_video_records",
           "clip_dataset", "mp4_clip_dataset", "small_video_model"]

#: Label names, by label number: the direction the square moves.
CLASSES = ("right", "left", "down", "up")
_STEP = {0: (0, 1), 1: (0, -1), 2: (1, 0), 3: (-1, 0)}  # (dy, dx) per label


@dataclass
class Video:
    """One synthetic video: ``frames`` is ``(length, size, size, 3)`` uint8."""

    id: int
    label: int
    frames: np.ndarray


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


def make_videos(n: int, **kwargs) -> list[Video]:
    """A list of ``n`` synthetic videos (see :func:`make_video` for the keywords)."""
    return list(iter_videos(n, **kwargs))


# ---- MP4 files, the way a learner's own videos arrive -----------------------------------

def write_mp4(frames: np.ndarray, path: str | Path, *, fps: int = 25, crf: int = 18) -> Path:
    """Encode ``(length, H, W, 3)`` uint8 frames as an H.264 MP4 (atomic: temp name, rename)."""
    import av

    frames = np.asarray(frames)
    _check(frames.ndim == 4 and frames.shape[-1] == 3 and frames.dtype == np.uint8,
           f"frames {frames.shape} {frames.dtype}: pass a (length, H, W, 3) uint8 array")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as tmp, av.open(str(tmp), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.height, stream.width = frames.shape[1:3]
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": str(crf)}
        for f in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
        out.mux(stream.encode())
    return path


def read_mp4(path: str | Path, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Decode frames ``start .. stop-1`` of an MP4 (all by default) as uint8 RGB."""
    import av

    frames = []
    try:
        with av.open(str(path)) as container:
            for t, frame in enumerate(container.decode(video=0)):
                if stop is not None and t >= stop:
                    break
                if t >= start:
                    frames.append(frame.to_ndarray(format="rgb24"))
    except (av.error.FFmpegError, OSError) as e:
        raise OSError(f"{path}: cannot decode video: {e}") from e
    return np.stack(frames) if frames else np.zeros((0, 0, 0, 3), np.uint8)


def mp4_frame_count(path: str | Path) -> int:
    """The number of frames an MP4 says it holds (read from its header, nothing decoded)."""
    import av

    with av.open(str(path)) as container:
        return int(container.streams.video[0].frames)


def write_mp4_videos(videos, directory: str | Path, **kwargs) -> list[Path]:
    """Write each video as ``directory/<class name>/video_<id>.mp4``; return the paths."""
    directory = Path(directory)
    return [write_mp4(v.frames, directory / CLASSES[v.label] / f"video_{v.id:05d}.mp4", **kwargs)
            for v in videos]


def list_mp4(directory: str | Path) -> tuple[list[str], list[int]]:
    """The MP4 files under ``directory/<class name>/`` (sorted) and their labels."""
    directory = Path(directory)
    paths = sorted(directory.glob("*/*.mp4"))
    _check(bool(paths), f"{directory}: no <class>/*.mp4 files; write them with write_mp4_videos")
    for p in paths:
        _check(p.parent.name in CLASSES, f"{p}: folder must be one of {CLASSES}")
    return [str(p) for p in paths], [CLASSES.index(p.parent.name) for p in paths]


# ---- TFRecord shards of SequenceExamples ------------------------------------------------

def write_video_records(videos, directory: str | Path, *, num_shards: int = 4,
                        quality: int = 90, compression: str | None = None,
                        overwrite: bool = False) -> list[Path]:
    """Write videos as ``SequenceExample`` s (context id/label/length, one JPEG per frame).

    Args:
        videos: :class:`Video` s, e.g. from :func:`iter_videos`.
        directory: where the shards and their manifest go.
        num_shards: TFRecord files to spread the videos over.
        quality: JPEG quality, 1..100.
        compression: ``None`` or ``"GZIP"``.
        overwrite: replace shards already in ``directory``.

    Raises:
        ValueError: a bad ``quality`` (or writer argument).
        FileExistsError: ``directory`` already holds shards and ``overwrite`` is false.
    """
    _check(1 <= quality <= 100, f"quality={quality}: pass a JPEG quality in 1..100")
    encode = tf.function(lambda frames: tf.map_fn(  # one call per video, not per frame
        lambda f: tf.io.encode_jpeg(f, quality=quality), frames, fn_output_signature=tf.string),
        input_signature=[tf.TensorSpec((None, None, None, 3), tf.uint8)])
    with tfrecords.ShardWriter(directory, prefix="videos", num_shards=num_shards,
                             compression=compression, overwrite=overwrite) as writer:
        for v in videos:
            jpegs = list(encode(v.frames).numpy())
            example = tf_example.to_sequence_example(
                {"id": v.id, "label": v.label, "length": len(v.frames)}, {"frames": jpegs})
            writer.write(example)
    return [Path(p) for p in writer.paths]


def _finish(ds, batch_size: int, shuffle_buffer_size: int, seed: int, drop_remainder: bool,
            known: int | None = None):
    if known:  # a buffer larger than the clips of an epoch only costs memory
        shuffle_buffer_size = min(shuffle_buffer_size, known)
    if shuffle_buffer_size > 1:
        ds = ds.shuffle(shuffle_buffer_size, seed=seed)
    return ds.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)


def _check_pipeline_args(clip_len, batch_size, shuffle_buffer_size, cycle_length):
    check_count("clip_len", clip_len)
    check_count("batch_size", batch_size)
    check_count("shuffle_buffer_size", shuffle_buffer_size, 0)  # 0: no shuffle
    check_count("cycle_length", cycle_length)
    _check(shuffle_buffer_size < 2**31, f"shuffle_buffer_size={shuffle_buffer_size}: TensorFlow "
           "cannot hold 2**31 or more elements in a shuffle buffer; pass at most the number "
           "of videos")


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


# ---- A model that learns the task ------------------------------------------------------

def small_video_model(clip_len: int, size: int, *, num_classes: int = 4):
    """A small CNN that sees motion: the clip's frames are stacked as channels ("early fusion").

    Its first convolution looks at every frame of a patch at once, so it can tell
    which way the square moved; a 3-D CNN does the same but trains ~10x slower on a CPU.
    """
    return keras.Sequential([
        keras.Input((clip_len, size, size, 3)),
        layers.Rescaling(1 / 255),
        layers.Permute((2, 3, 1, 4)),  # (T, H, W, 3) -> (H, W, T, 3)
        layers.Reshape((size, size, clip_len * 3)),  # frames side by side as channels
        layers.Conv2D(16, 3, padding="same", activation="relu"),
        layers.MaxPool2D(),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.GlobalAveragePooling2D(),
        layers.Dense(num_classes, activation="softmax"),
    ], name="small_video_model")
