"""What a set of clip shards says about itself: its manifest's videos, class names, frame
size and record count, and whether ``train/`` and ``validation/`` beside it are one run.

:func:`~datakit.readers.video.clips.clip_dataset` reads these before it builds its
pipeline, so a mismatch is an error naming the folder, never a surprise mid-epoch.
"""

from __future__ import annotations

from pathlib import Path

import tensorflow as tf

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.readers.records import tf_example, tfrecords
from datakit.readers.video import generations

__all__ = ["video_set", "check_one_run", "shard_class_names", "shard_frame_size",
           "record_count"]


class _NoClassNames:
    """The ``class_names`` of shards that carry none: any use raises, naming the fix."""

    def __init__(self, directory):
        self.directory = str(directory)

    def _fail(self, *args):
        raise ValueError(f"{self.directory}: these shards carry no class names "
                         "(write_video_records does not store them); pass clip_dataset(..., "
                         "class_names=[...]) in label order, or convert the videos with "
                         "write_video_shards, which stores them")

    __getitem__ = __iter__ = __len__ = __contains__ = _fail

    def __bool__(self):
        return False

    def __repr__(self):
        return f"<no class names in {self.directory}: pass clip_dataset(..., class_names=...)>"


def shard_class_names(directory, meta: dict | None, class_names):
    """The manifest's class names, else the caller's; never another set's."""
    given = None if class_names is None else [str(c) for c in class_names]
    if meta is None:
        return _NoClassNames(directory) if given is None else given
    if given is not None and given != list(meta["class_names"]):
        raise ValueError(f"class_names={given}, but the shards of {directory} were written "
                         f"with {meta['class_names']}: leave class_names out")
    return list(meta["class_names"])


def shard_frame_size(directory, meta: dict | None) -> tuple[int, int]:
    """The first frame's size, for static shapes Keras can use: the manifest's, else a peek.

    Peeks with a reader of its own: iterating the pipeline's would use up the
    first shuffle of the file order.
    """
    if meta is not None and meta["videos"] and "height" in meta["videos"][0]:
        return int(meta["videos"][0]["height"]), int(meta["videos"][0]["width"])
    first = next(iter(tfrecords.read_records(directory, check_manifest=False, verify=False)
                      .take(1)))
    _, seq = tf_example.parse_sequence_example(first, {}, {"frames": tf.string})
    height, width, _ = tf.io.decode_jpeg(seq["frames"][0], channels=3).shape
    return height, width


def record_count(directory) -> int | None:
    try:
        return tfrecords.record_shards(directory)["records"]
    except (tfrecords.RecordFileError, OSError):  # no manifest
        return None


def check_one_run(directory: Path, meta: dict | None) -> None:
    """A :class:`DataError` when ``train/`` and ``validation/`` beside it come from two
    conversions (copied together by hand, or written by a kit that committed them one after
    the other): their videos may overlap. ``write_video_shards`` switches both as one
    generation (:mod:`~datakit.readers.video.generations`)."""
    if meta is None or "run" not in meta or directory.name not in ("train", "validation"):
        return
    other = directory.parent / ("validation" if directory.name == "train" else "train")
    try:
        other = generations.current(other)  # mid-switch: the new generation's copy in .next/
    except DataError:  # the committed generation has no such set: nothing to compare with
        return
    theirs = video_set(other) if (other / manifest.MANIFEST).exists() else None
    if theirs is not None and theirs.get("run") != meta["run"]:
        raise DataError(str(directory), f"and {other} were written by two different runs of "
                        "write_video_shards (one stopped between the two sets): their videos "
                        "may overlap. Run write_video_shards again into "
                        f"{directory.parent} (the videos already converted are reused).")


def video_set(directory) -> dict | None:
    """The manifest's set written by ``write_video_shards`` (class names, videos), or None."""
    try:
        man = manifest.read_manifest(directory)
    except (DataError, OSError):
        return None
    for s in (man or {"sets": {}})["sets"].values():
        if "videos" in s and "class_names" in s:
            return s
    return None
