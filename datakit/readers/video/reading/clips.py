"""Clips streamed into ``model.fit()`` from ``SequenceExample`` shards.

:func:`clip_dataset` reads the one layout of the converter's shards, written by
:func:`datakit.readers.video.converter.convert.write_video_shards` (video files) or
:func:`datakit.readers.video.converter.video_records.write_video_records` (videos in
memory): records of 64 frames, the manifest saying where each starts. It reads
only the records each clip spans and decodes only its frames. The baselines it
replaces: MP4 files decoded whole
(:func:`datakit.readers.video.reading.mp4_clips.mp4_clip_dataset`) and every frame in
memory (:func:`datakit.readers.video.reading.in_memory.load_videos_in_memory`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count, check_flags, check_on_bad, check_seed
from datakit.core.errors import DataError
from datakit.core.keywords import keywords
from datakit.core.paths import one_folder, user_path
from datakit.perf import timeline
from datakit.readers.records import tfrecords
from datakit.readers.video.converter import generations
from datakit.readers.video.converter.shard_sets import video_set
from datakit.readers.video.index.video_index import index_manifest
from datakit.readers.video.options.clip_options import VIDEO_FIELDS, VideoOptions, video_options
from datakit.readers.video.options.clip_sampling import (
    clip_frames,
    epoch_keys,
    video_key,
)
from datakit.readers.video.reading.clip_shards import (
    check_chunk_offsets,
    check_one_run,
    refuse_missing_set,
    shard_class_names,
    shard_frame_size,
    shards_present,
)
from datakit.readers.video.reading.clip_tail import check_clip_counts, clip_tail

__all__ = ["clip_dataset"]


def clip_dataset(directory: str | Path, *, batch_size: int = 8, shuffle_buffer_size: int = 64,
                 n_readers: int | None = None, seed: int | None = None,
                 drop_remainder: bool = False,
                 with_ids: bool = False, trace: bool = False, training: bool = True,
                 class_names: Sequence[str] | None = None, options: VideoOptions | None = None,
                 on_bad_file: str = "raise", **clip_options: Any) -> tf.data.Dataset:
    """Stream batches of ``clip_len``-frame clips from TFRecord shards of ``SequenceExample`` s.

    Videos in a new seeded order each epoch -> choose the clip's frames from the
    video's length (the sampler) -> read only the records (of 64 frames, their
    places in the manifest) the clip spans (``TFRecordDatasetV2``'s
    ``byte_offsets``) -> decode only the clip's JPEGs -> the clip tail the direct
    reader ends with too (count, shuffle, batch, prefetch:
    :mod:`~datakit.readers.video.reading.clip_tail`). A new clip each epoch.

    Args:
        directory: the shards, from
            :func:`~datakit.readers.video.converter.convert.write_video_shards` or
            :func:`~datakit.readers.video.converter.video_records.write_video_records`.
        batch_size: clips per batch.
        shuffle_buffer_size: clips in the shuffle buffer (0 or 1: no shuffle).
        n_readers: videos read at once, each by its own thread (``None``: 2; the name
            every reader of the kit uses; tf.data's ``cycle_length=`` is taken too, not
            both).
        seed: seeds the video order, the clip starts and the shuffle (an int in
            the int64 range); ``None`` (the default, as the table readers take it):
            TensorFlow draws them, new ones at each build, the same again under
            ``tf.random.set_seed`` or ``keras.utils.set_random_seed``.
        drop_remainder: drop a last, smaller batch.
        with_ids: elements are dicts that also hold each clip's video ``id``,
            first frame ``start`` and ``frames`` (the indices chosen); otherwise
            ``(clips, labels)`` with clips ``(batch, clip_len, H, W, 3)`` uint8.
        trace: add a :mod:`datakit.perf.timeline` trace (stage "decode") to each element.
        training: ``False`` for validation: videos in order, no shuffling, and
            the ``"center"`` sampler (one clip per video) unless another is asked.
        class_names: leave out: the shards carry their own (the manifest's);
            names that differ from them are a ``ValueError``.
        options: a :class:`~datakit.readers.video.options.clip_options.VideoOptions`, or
        **clip_options: its clip fields as keywords (``clip_len``, ``frame_step``,
            ``sampler``, ``clips_per_video``, ``prefetch``; see
            :mod:`~datakit.readers.video.options.clip_sampling`), not both ways for one
            field, and tf.data's names for the knobs (``cycle_length``,
            ``buffer_size``). Its frame fields (``frame_size``, ``fps``, a crop or a
            pad) were fixed when the shards were written: one equal to the shards'
            is taken (so one ``VideoOptions`` serves the direct reader too), another
            is a ``ValueError`` naming both. A random clip depends on the video and
            the epoch only, so it is the clip the direct reader picks.
        on_bad_file: a video shorter than one clip (the converter keeps every
            video: it does not know your clip length) is refused by name when the
            dataset is built (``"raise"``), or left out (``"skip"``) and listed in
            ``skipped``, with the direct reader's message
            (:mod:`~datakit.readers.video.index.video_index`); ``len(ds)`` stays known.

    Returns:
        The dataset, with ``class_names`` (the manifest's) and ``skipped``.
        Into ``fit()``: ``fit(ds.repeat(), steps_per_epoch=len(ds))``, one
        iterator for the run (a new one each epoch can stall at the epoch's end
        in TensorFlow 2.21; see the README). The clips are drawn anew each epoch
        inside the dataset, so a ``.cache()`` after it freezes the first epoch's
        clips for every epoch after. A cache belongs before the clip choice, and
        the shards already are one: the decoded frames, kept as JPEGs.

    Raises:
        TypeError: a count is not an int.
        ValueError: a count is out of range; ``class_names`` that differ from the manifest's;
            a frame size, fps, crop or pad other than the shards were written with.
        FileNotFoundError: no such folder (a set the last conversion did not write: said).
        DataError: a video shorter than a clip, under ``"raise"``; a folder with no
            manifest of videos, or shards of an earlier layout (one record per
            video), named with the call that writes them again; a manifest whose chunk
            offset is not where a record starts, naming the shard and the video.
        RecordFileError: a shard is damaged (see
            :func:`datakit.readers.records.tfrecords.read_records`).
        InvalidArgumentError (while reading): a shard replaced or changed since the
            build, naming the shard and the video, when a clip's records there are
            missing, damaged (their CRC) or another video's; a shard gone, or written
            again at another size, at an epoch's start, naming the set.

    A shard changed after the build is found by what the clip reads and by its size at
    each epoch's start, not by the file's stamp (:mod:`datakit.core.file_facts`: its
    size, times and inode): no TensorFlow op reads a file's stamp, and the pipeline stays
    one without Python, which tf.data service workers run (notebook 18). So a change that
    leaves a clip's records intact (a copy of the same bytes, a ``touch``) is not an
    error: the clip is the one written.
    """
    # None marks n_readers as not given, so n_readers=2 beside cycle_length=3 is both
    knobs = keywords("clip_dataset", {"n_readers": n_readers,
                                      "shuffle_buffer_size": shuffle_buffer_size},
                     clip_options, takes=VIDEO_FIELDS,
                     defaults={"n_readers": None, "shuffle_buffer_size": 64})
    with knobs.as_written():  # a message names each knob as the caller wrote it
        n_readers = 2 if knobs["n_readers"] is None else check_count("n_readers",
                                                                     knobs["n_readers"])
        shuffle_buffer_size = knobs["shuffle_buffer_size"]
        opts = video_options(options, {f: knobs[f] for f in VIDEO_FIELDS if f in knobs},
                             where="clip_dataset")
        check_clip_counts(batch_size, shuffle_buffer_size, n_readers)
        check_on_bad("on_bad_file", on_bad_file)
        seed = check_seed(seed)  # None: TensorFlow draws one
    check_flags(drop_remainder=drop_remainder, with_ids=with_ids, trace=trace, training=training)
    directory = user_path(directory)  # ~/shards: the home folder's
    try:
        asked = Path(one_folder(directory, holds="the shards write_video_shards wrote"))
    except FileNotFoundError:
        asked = Path(directory)
        if not generations.switching_in(asked):  # mid-switch, the set waits in .next/
            refuse_missing_set(asked)  # a set the last conversion left out: said so
            raise
    directory = generations.current(directory)  # its pinned copy; mid-switch the new one
    meta = video_set(directory)
    if meta is None:
        _refuse_converter_root(asked)
    if meta is None or not _indexed(meta):
        raise DataError(str(directory), _NOT_INDEXED.format(parent=str(asked.parent))
                        if meta is not None else _NO_VIDEOS)
    check_one_run(directory, meta)  # the other set of the generation read, not a newer one
    _check_shard_options(opts, meta, asked)
    names = shard_class_names(directory, meta, class_names)
    index = index_manifest(directory, meta, opts, on_bad_file)
    sampler = opts.sampler_for(training)
    k = opts.clips_for(sampler)
    decode = _clip_decoder(opts, k, shard_frame_size(meta))
    by_id = {int(v["id"]): v for v in meta["videos"]}
    videos = [by_id[index.ids[p]] for p in index.kept]
    # sizes, record counts and sha256, as read_records does, and from the same walk over
    # each shard's headers, each chunk where a record starts
    offsets = tfrecords.shards_with_offsets(directory)[1]
    check_chunk_offsets(directory, asked, meta, videos, offsets)
    used = {v["shard"] for v in videos}
    ds = _spanned_records(directory, videos, int(meta["chunk_frames"]), opts, sampler, k,
                          seed=seed, training=training, n_readers=n_readers,
                          present=shards_present(directory, asked, {
                              f["file"]: int(f["bytes"]) for f in meta["files"]
                              if f["file"] in used}))
    ds = timeline.tag(ds).map(timeline.timed("decode", decode)) if trace else ds.map(decode)
    if k > 1:
        ds = ds.unbatch()
    ds = clip_tail(ds, count=len(index.kept) * k, batch_size=batch_size,
                   shuffle_buffer_size=shuffle_buffer_size if training else 0, seed=seed,
                   prefetch=opts.prefetch, drop_remainder=drop_remainder,
                   label=None if with_ids else _with_trace(trace, lambda d: (d["clip"],
                                                                            d["label"])))
    ds.class_names = names
    ds.skipped = index.skipped
    return ds


def _refuse_converter_root(folder: Path) -> None:
    """A ``DataError`` saying which subfolder to pass, for the converter's output root."""
    sets = [n for n in ("train", "validation") if (folder / n).is_dir()
            and video_set(generations.current(folder / n)) is not None]
    if sets:
        raise DataError(str(folder), f"is the converter's output folder, which holds the sets "
                        f"{sets}: pass one of them, e.g. clip_dataset({str(folder / sets[0])!r})")


def _with_trace(trace: bool, fn: Callable[[dict], Any]) -> Callable[..., Any]:
    """``fn`` for ``map``, on the element beside its timeline trace when ``trace``."""
    return (lambda d, t: (fn(d), t)) if trace else fn


def _check_shard_options(opts: VideoOptions, meta: dict, directory: Path) -> None:
    """The frame fields of ``opts`` (``frame_size``, ``fps``, a crop or a pad) that differ
    from what the shards were written with (the manifest ``meta``): a ``ValueError`` naming
    both values. One equal to the shards' is taken, so that one ``VideoOptions`` serves the
    direct reader and ``clip_dataset`` alike; a field left at its default is not compared.
    """
    written = _written_with(meta)
    for name in ("frame_size", "fps", "crop_to_aspect_ratio", "pad_to_aspect_ratio"):
        asked, held = getattr(opts, name), written[name]
        if asked is None or asked is False or _same(asked, held):
            continue
        raise ValueError(f"{name}={asked!r}, but the shards in {directory} were written with "
                         f"{_said(name, held)}: clip_dataset reads the frames as they were "
                         f"written. Pass {name}={held!r} (or leave it out), or convert again "
                         f"with write_video_shards({name}={asked!r})")


def _written_with(meta: dict) -> dict:
    """The frame fields the shards of ``meta`` hold: the frame size of every video (the
    writers check they share one), the frame rate (the one asked for, else the videos'
    own when they share one; ``None``: they differ, or a set from frames in memory, which
    records none) and the crop or pad."""
    fps = meta.get("fps")
    if fps is None:
        rates = {v.get("fps") for v in meta["videos"]}
        fps = rates.pop() if len(rates) == 1 else None
    return {"frame_size": shard_frame_size(meta), "fps": fps,
            "crop_to_aspect_ratio": bool(meta.get("crop_to_aspect_ratio")),
            "pad_to_aspect_ratio": bool(meta.get("pad_to_aspect_ratio"))}


def _said(name: str, value: Any) -> str:
    """A written frame field in words.

    >>> _said("frame_size", (32, 32)), _said("fps", 12.5), _said("fps", None)
    ('32x32 frames', 'fps=12.5', 'no one frame rate (each video its own)')
    """
    if name == "frame_size":
        return f"{value[0]}x{value[1]} frames"
    if name == "fps":
        return "no one frame rate (each video its own)" if value is None else f"fps={value:g}"
    return f"{name}={value}"


def _same(asked: Any, held: Any) -> bool:
    """An asked field equal to the written one (a frame rate the manifest rounded too)."""
    if isinstance(asked, (float, int)) and not isinstance(asked, bool) and held is not None:
        return math.isclose(float(asked), float(held), rel_tol=1e-4)
    return bool(asked == held)


_NO_VIDEOS = ("holds no manifest of videos (shards of an earlier write_video_records, one "
              "record per video, are no longer read): write the shards with write_video_shards "
              "(video files) or write_video_records (videos in memory)")
_NOT_INDEXED = ("was written by an earlier write_video_shards or write_video_records (one "
                "record per video, no chunk offsets in its manifest), which this clip_dataset "
                "no longer reads; write the shards again: write_video_shards(<the class "
                "folders>, {parent!r}), or write_video_records(<the videos>, <this folder>, "
                "overwrite=True)")


def _indexed(meta: dict) -> bool:
    """A converted set whose manifest gives each video's shard and chunk offsets."""
    return "chunk_frames" in meta and all("chunks" in v and "shard" in v
                                          for v in meta["videos"])


_CHUNK = {"id": tf.io.FixedLenFeature((), tf.int64),
          "first": tf.io.FixedLenFeature((), tf.int64, default_value=0)}
_READ_BUFFER = 1 << 16  # bytes read at a time from a record's offset (a record of 64 frames
#                         at 112x112 is about 300 KB): little is read past the records needed


def _spanned_records(directory: str | Path, videos: list[dict], chunk_frames: int,
                     opts: VideoOptions, sampler: str, k: int, *, seed: int | None,
                     training: bool, n_readers: int,
                     present: Callable[[tf.Tensor], tf.Tensor]) -> tf.data.Dataset:
    """Each video's clip(s) as JPEGs, reading only the records (chunks) they span.

    The manifest gives each video's shard and where each of its chunks starts;
    the clip is drawn from the video's length (the same frames as from a whole
    record), and ``TFRecordDatasetV2``'s ``byte_offsets`` reads from the first
    chunk it spans. Videos come in a seeded new order each epoch when training.
    """
    clip_len, frame_step = opts.clip_len, opts.frame_step
    starts = np.cumsum([0] + [len(v["chunks"]) for v in videos])[:-1]
    offsets = tf.constant([o for v in videos for o in v["chunks"]] or [0], tf.int64)
    table = tf.data.Dataset.from_tensor_slices({
        "file": tf.constant([str(Path(directory) / v["shard"]) for v in videos], tf.string),
        "name": tf.constant([str(v.get("source", f"video id {v['id']} of {directory}"))
                             for v in videos], tf.string),  # typed: the list may be empty
        "id": np.array([v["id"] for v in videos], np.int64),
        "label": np.array([v["label"] for v in videos], np.int64),
        "length": np.array([v["frames"] for v in videos], np.int64),
        "start": starts.astype(np.int64)})
    if training:
        table = table.shuffle(max(len(videos), 1), seed=seed)

    def with_clip(v: dict, epoch_key: tf.Tensor) -> dict:
        """The clip's frames, and the records they span."""
        frames = clip_frames(v["length"], video_key(epoch_key, v["id"]), clip_len,
                             frame_step=frame_step, sampler=sampler, clips_per_video=k)
        first = tf.reduce_min(frames) // chunk_frames
        n = tf.reduce_max(frames) // chunk_frames - first + 1
        return dict(v, frames=frames, first=first, n=n,
                    offset=tf.gather(offsets, v["start"] + first))

    def read(v: dict) -> tf.data.Dataset:
        """The n records from the first one the clip spans, as one batch."""
        records = tf.data.experimental.from_variant(tf.raw_ops.TFRecordDatasetV2(
            filenames=tf.reshape(v["file"], [1]), compression_type="",
            buffer_size=tf.constant(_READ_BUFFER, tf.int64),
            byte_offsets=tf.reshape(v["offset"], [1])), tf.TensorSpec([], tf.string))
        # A record TensorFlow cannot read (a shard replaced or changed since the build: a
        # CRC that fails, the file shorter) ends the clip's records here, and ``pick``
        # names the shard for the records missing, where TensorFlow's DataLossError
        # would name no file. (An empty batch stands in when none was read.)
        got = records.ignore_errors().take(v["n"]).batch(v["n"])
        got = got.concatenate(tf.data.Dataset.from_tensors(tf.zeros([0], tf.string))).take(1)
        return got.map(lambda r: (v, r))

    def pick(v: dict, records: tf.Tensor) -> dict:
        said = [v["file"], "does not hold video", v["id"], "(", v["name"], ") where its "
                "manifest says (its records there are missing, damaged or another video's): "
                "the shard was replaced or changed since this dataset was built. If the set "
                "was written again, build the dataset again; if the shard was changed by "
                "hand, convert the videos again"]
        whole = tf.debugging.Assert(tf.equal(tf.size(records, out_type=tf.int64), v["n"]),
                                    said, name="records_at_offset")
        with tf.control_dependencies([whole]):  # all n read, before they are parsed
            records = tf.identity(records)
        ctx, seq = tf.io.parse_sequence_example(records, context_features=_CHUNK,
                                                sequence_features=_FRAMES)[:2]
        wanted = (v["first"] + tf.range(v["n"])) * chunk_frames
        got = tf.debugging.Assert(tf.reduce_all(tf.equal(ctx["id"], v["id"])) & tf.reduce_all(
            tf.equal(ctx["first"], wanted)), said, name="chunk_at_offset")
        with tf.control_dependencies([got]):  # the chunks' frames, in order from first's
            jpegs = tf.gather(seq["frames"].flat_values, v["frames"] - v["first"] * chunk_frames)
        return {"jpegs": jpegs, "frames": v["frames"], "label": v["label"], "id": v["id"],
                "name": v["name"]}

    keyed = epoch_keys(seed).map(present).flat_map(  # each epoch: its shards still there
        lambda e: table.map(lambda v: with_clip(v, e)))
    return keyed.interleave(read, cycle_length=n_readers, num_parallel_calls=n_readers,
                            deterministic=True).map(pick)


_FRAMES = {"frames": tf.io.RaggedFeature(tf.string)}  # a video's last chunk is shorter


def _clip_decoder(opts: VideoOptions, k: int,
                  size: tuple[int, int]) -> Callable[[dict], dict]:
    """``decode(picked)``: the picked JPEGs decoded into ``(k, clip_len, H, W, 3)`` (or one
    clip), checked to be the first video's frame size."""
    clip_len, (height, width) = opts.clip_len, size

    def decode(picked: dict) -> dict:
        clip = tf.map_fn(lambda b: tf.io.decode_jpeg(b, channels=3),
                         tf.reshape(picked["jpegs"], [-1]), fn_output_signature=tf.uint8)
        got = tf.shape(clip)[1:3]
        same = tf.debugging.Assert(tf.reduce_all(tf.equal(got, [height, width])), [
            picked["name"], "has frames of", got, f"but the first video's are {height}x{width}: "
            "clips of one batch need one size; convert with write_video_shards(frame_size="
            "(height, width))"], name="frame_size")
        with tf.control_dependencies([same]):
            clip = tf.reshape(clip, (k, clip_len, height, width, 3))
        frames = picked["frames"]
        d = {"clip": clip, "label": tf.fill([k], picked["label"]),
             "id": tf.fill([k], picked["id"]), "start": frames[:, 0], "frames": frames}
        return d if k > 1 else {key_: v[0] for key_, v in d.items()}

    return decode
