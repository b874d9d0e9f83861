"""The synthetic videos as TFRecord shards of ``SequenceExample`` s, one JPEG per frame.

:func:`datakit.readers.video.clips.clip_dataset` reads them, decoding only the
frames of each clip.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from datakit.readers.records import tf_example, tfrecords
from datakit.readers.video.clip_options import check_one_frame_size, check_quality

__all__ = ["write_video_records"]

_RESIZE_FRAMES = ("resize the frames to one size (for video files: "
                  "write_video_shards(frame_size=(height, width)))")


def _name(v) -> str:
    return f"{v.source} (video id {v.id})" if v.source else f"video id {v.id}"


def write_video_records(videos, directory: str | Path, *, num_shards: int = 4,
                        quality: int = 90, compression: str | None = None,
                        overwrite: bool = False) -> list[Path]:
    """Write videos as ``SequenceExample`` s (context id/label/length/source, a JPEG per frame).

    Args:
        videos: :class:`Video` s, e.g. from :func:`iter_videos`.
        directory: where the shards and their manifest go.
        num_shards: TFRecord files to spread the videos over.
        quality: JPEG quality, 1..100.
        compression: ``None`` or ``"GZIP"``.
        overwrite: replace shards already in ``directory``.

    Raises:
        ValueError: a bad ``quality`` (or writer argument).
        DataError: a video whose frames are another size than the first's
            (named; nothing is written).
        FileExistsError: ``directory`` already holds shards and ``overwrite`` is false.
    """
    check_quality(quality)
    encode = tf.function(lambda frames: tf.map_fn(  # one call per video, not per frame
        lambda f: tf.io.encode_jpeg(f, quality=quality), frames, fn_output_signature=tf.string),
        input_signature=[tf.TensorSpec((None, None, None, 3), tf.uint8)])
    with tfrecords.ShardWriter(directory, prefix="videos", num_shards=num_shards,
                             compression=compression, overwrite=overwrite) as writer:
        first = None
        for v in videos:
            first = first or v
            check_one_frame_size(_name(v), v.frames.shape[1:3], _name(first),  # clips batch
                                 first.frames.shape[1:3], fix=_RESIZE_FRAMES)
            jpegs = list(encode(v.frames).numpy())
            context = {"id": v.id, "label": v.label, "length": len(v.frames)}
            if v.source:
                context["source"] = v.source.encode()
            writer.write(tf_example.to_sequence_example(context, {"frames": jpegs}))
    return [Path(p) for p in writer.paths]
