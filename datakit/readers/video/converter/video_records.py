"""Videos already in memory (e.g. the synthetic ones) written as the converter's shards.

:func:`write_video_records` writes the one layout
:func:`datakit.readers.video.reading.clips.clip_dataset` reads, with the converter's own
pieces: each video's records of 64 frames
(:func:`~datakit.readers.video.converter.part_files.chunk_records`) and the set's manifest,
which says where each record starts
(:func:`~datakit.readers.video.converter.shard_sets.write_video_set`). Video files go
through :func:`~datakit.readers.video.converter.convert.write_video_shards` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np
import tensorflow as tf

from datakit.core import manifest
from datakit.core.arguments import check_count, check_flag
from datakit.core.atomic import Staging
from datakit.core.paths import user_path
from datakit.core.progress import check_progress, with_progress
from datakit.readers.video.converter.part_files import CHUNK_FRAMES, chunk_records
from datakit.readers.video.converter.shard_sets import shard_names, write_video_set
from datakit.readers.video.options.clip_options import check_one_frame_size, check_quality
from datakit.readers.video.synthetic.moving_squares import Video

__all__ = ["write_video_records"]

_RESIZE_FRAMES = ("resize the frames to one size (for video files: "
                  "write_video_shards(frame_size=(height, width)))")


def _name(v: Video) -> str:
    return f"{v.source} (video id {v.id})" if v.source else f"video id {v.id}"


def write_video_records(videos: Iterable[Video], directory: str | Path, *,
                        class_names: Sequence[str], num_shards: int = 4,
                        quality: int = 90, overwrite: bool = False,
                        progress: bool | None = None) -> list[Path]:
    """Write videos as ``write_video_shards`` does: records of 64 frames, a JPEG per frame.

    Video ``k`` goes whole into shard ``k % num_shards``; the manifest lists each
    video (id, label, frames, size, shard, where its records start) and the class names.

    Args:
        videos: :class:`Video` s, e.g. from :func:`iter_videos`, one at a time
            (only one is in memory at once).
        directory: where the shards and their manifest go.
        class_names: the name of each label, in label order (for the synthetic
            videos, :data:`CLASSES`; no default: a wrong one would name every
            clip's class wrongly).
        num_shards: TFRecord files to spread the videos over (fewer if fewer videos).
        quality: JPEG quality, 1..100.
        overwrite: replace shards already in ``directory``.
        progress: a bar over the videos written (:mod:`datakit.core.progress`): ``None``
            (default) shows it in a notebook or a terminal once writing lasts a second,
            ``True`` always, ``False`` never.

    Returns:
        The shard files.

    Raises:
        ValueError: a bad ``quality`` or ``num_shards``; a label with no class name.
        DataError: a video whose frames are another size than the first's
            (named; nothing is written).
        FileExistsError: ``directory`` already holds shards and ``overwrite`` is false.
    """
    check_quality(quality)
    check_count("num_shards", num_shards)
    check_progress(progress)
    check_flag("overwrite", overwrite)
    names = [str(c) for c in class_names]
    directory = Path(user_path(directory))
    directory.mkdir(parents=True, exist_ok=True)
    if not overwrite and (manifest.read_manifest(directory) is not None
                          or any(directory.glob("videos-*.tfrecord"))):
        raise FileExistsError(f"{directory} already holds shards; pass overwrite=True "
                              "or write to an empty folder")
    encode = tf.function(lambda frames: tf.map_fn(  # one call per video, not per frame
        lambda f: tf.io.encode_jpeg(f, quality=quality), frames, fn_output_signature=tf.string),
        input_signature=[tf.TensorSpec((None, None, None, 3), tf.uint8)])
    with Staging(directory) as stage:
        shards = [stage.file(f"shard-{k}") for k in range(num_shards)]
        files = [open(p, "wb") for p in shards]  # closed below
        counts, entries, first = [0] * num_shards, [], None
        try:
            for k, v in enumerate(with_progress(videos, "video records", progress=progress,
                                                unit="video")):
                first = first or v
                entry = _write_video(v, files[k % num_shards], names, encode, first)
                entries.append(entry | {"shard": k % num_shards})
                counts[k % num_shards] += len(entry["chunks"])
        finally:
            for f in files:
                f.close()
        full = shard_names(len(entries), num_shards)  # shard k: videos k, k + n, ...
        for e in entries:
            e["shard"] = full[e["shard"]]
        write_video_set(directory, {f: shards[k] for k, f in enumerate(full)},
                        {f: counts[k] for k, f in enumerate(full)}, class_names=names,
                        videos=entries, quality=quality, chunk_frames=CHUNK_FRAMES,
                        overwrite=overwrite)  # checked again under the folder's lock
    return [directory / f for f in full]


def _write_video(v: Video, file: BinaryIO, names: list[str],
                 encode: Callable[[np.ndarray], tf.Tensor], first: Video) -> dict:
    """Video ``v`` appended to the open shard ``file``; its row of the manifest."""
    check_one_frame_size(_name(v), v.frames.shape[1:3], _name(first),  # clips batch
                         first.frames.shape[1:3], fix=_RESIZE_FRAMES)
    if not 0 <= v.label < len(names):
        raise ValueError(f"{_name(v)} has label {v.label}, but class_names has "
                         f"{len(names)} names: pass class_names=[...] with a name per label")
    at, chunks = file.tell(), []
    for record in chunk_records(source=v.source, i=v.id, label=v.label,
                                jpegs=list(encode(v.frames).numpy())):
        chunks.append(at)
        at += len(record)
        file.write(record)
    height, width = v.frames.shape[1:3]
    entry = {"id": int(v.id), "label": int(v.label), "frames": len(v.frames),
             "height": int(height), "width": int(width), "chunks": chunks}
    return entry | ({"source": v.source} if v.source else {})
