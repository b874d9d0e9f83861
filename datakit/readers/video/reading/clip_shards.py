"""What a set of clip shards says about itself: its manifest's videos, class names and frame
size, whether ``train/`` and ``validation/`` beside it are one run, and, for a folder
that is gone, whether the last conversion left it out.

:func:`~datakit.readers.video.reading.clips.clip_dataset` reads these before it builds its
pipeline, so a mismatch is an error naming the folder, never a surprise mid-epoch
(:func:`check_chunk_offsets`: each chunk the manifest places starts a record); and
:func:`shards_present` checks, as each epoch starts, that its shard files are still there
(a generation removed by later runs) and of the size written (a set written again where no
pinned copy is kept), naming the set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import tensorflow as tf

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.core.paths import PathArg
from datakit.readers.records.record_framing import record_offsets
from datakit.readers.video.converter import generations
from datakit.readers.video.converter.shard_sets import video_set

__all__: list[str] = []


def shard_class_names(directory: PathArg, meta: dict,
                      class_names: Sequence[str] | None) -> list[str] | None:
    """The manifest's class names; ``class_names`` given must be the same."""
    given = None if class_names is None else [str(c) for c in class_names]
    if given is not None and given != list(meta["class_names"]):
        raise ValueError(f"class_names={given}, but the shards of {directory} were written "
                         f"with {meta['class_names']}: leave class_names out")
    return list(meta["class_names"])


def shard_frame_size(meta: dict) -> tuple[int, int]:
    """The first video's frame size (every video's: the writers check it), for static shapes
    Keras can use."""
    first = meta["videos"][0] if meta["videos"] else {"height": 0, "width": 0}
    return int(first["height"]), int(first["width"])


def check_one_run(directory: Path, meta: dict) -> None:
    """A :class:`DataError` when ``train/`` and ``validation/`` beside it come from two
    conversions (copied together by hand, or written by a kit that committed them one after
    the other): their videos may overlap. ``write_video_shards`` switches both as one
    generation (:mod:`~datakit.readers.video.converter.generations`)."""
    if "run" not in meta or directory.name not in ("train", "validation"):
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


def refuse_missing_set(folder: Path) -> None:
    """A ``FileNotFoundError`` saying so when ``folder``, missing, is a set the last
    conversion into its parent did not write (``validation/`` after a run without
    ``validation_split``): not a folder of an earlier layout, nor one never written."""
    if folder.name not in ("train", "validation") or folder.exists():
        return
    sets = [n for n in ("train", "validation") if (folder.parent / n).is_dir()
            and video_set(generations.current(folder.parent / n)) is not None]
    if sets:
        raise FileNotFoundError(f"{folder}: is not part of the last write_video_shards into "
                                f"{folder.parent} (it wrote {' and '.join(sets)} only: "
                                f"{folder.name}/ was removed with the run before); read "
                                f"{str(folder.parent / sets[0])!r}, or run write_video_shards "
                                "again with a validation_split")


def check_chunk_offsets(directory: Path, asked: Path, meta: dict, videos: Sequence[dict],
                        offsets: Mapping[str, Sequence[int]] | None = None) -> None:
    """A :class:`DataError` naming the shard (in the set ``asked``, not the pinned copy
    ``directory`` read) and the video when a chunk offset of the
    manifest is not where a record of its shard starts (``manifest.json`` edited by hand, or
    copied beside other shards): TensorFlow would read from inside a record and fail
    mid-epoch with ``DataLossError: corrupted record at <offset>``, naming no file.
    ``offsets``: ``{shard path: where its records start}`` from the walk that checked the
    shards (:func:`~datakit.readers.records.tfrecords.shards_with_offsets`); a shard not
    in it is walked here (a seek per record)."""
    if meta.get("compression"):
        return  # a compressed shard's offsets are not file offsets
    starts: dict[str, set[int]] = {}
    for v in videos:
        shard = str(Path(directory) / v["shard"])
        if shard not in starts:
            known = (offsets or {}).get(shard)
            starts[shard] = set(record_offsets(shard) if known is None else known)
        wrong = next(((k, at) for k, at in enumerate(v["chunks"]) if at not in starts[shard]),
                     None)
        if wrong is not None:
            raise DataError(str(Path(asked) / v["shard"]), f"no record starts at byte "
                            f"{wrong[1]}, where its manifest.json places chunk {wrong[0]} of "
                            f"video {v['id']} ({v.get('source', 'no source named')}): the "
                            "manifest was changed by hand, or belongs to other shards; "
                            "convert the videos again with write_video_shards")


def shards_present(directory: Path, asked: Path,
                   sizes: dict[str, int]) -> Callable[[tf.Tensor], tf.Tensor]:
    """``check(epoch_key) -> epoch_key``, for the epoch's start, in the graph (no Python: the
    pipeline stays one a tf.data service worker can run): an error naming the set ``asked``
    when a shard file of ``directory`` (the generation read: its pinned copy, or ``asked``
    itself) is gone since the dataset was built, where TensorFlow's ``NotFoundError`` would
    name a hidden ``.generations/`` file; or when a shard's size is not the ``sizes``
    (shard name: bytes) its manifest gave, where TensorFlow's ``DataLossError: corrupted
    record at <offset>`` would name no file (the set written again in place: no pinned copy
    where ``.generations/`` was removed by hand or the file system has no hard links). A
    shard written again at the same size is not told by this check."""
    files = sorted({str(Path(directory) / f) for f in sizes})
    patterns = tf.constant([_literal(f) for f in files] or [""], tf.string)
    names = tf.constant(files or [""], tf.string)
    # the last byte of each file read as a footer's first: one record iff the size is right
    footers = tf.constant([sizes[Path(f).name] - 1 for f in files] or [0], tf.int64)
    if Path(directory) != Path(asked):
        said = (f"{asked}: the generation of shards this dataset was built on ({directory}) "
                f"was removed: later runs of write_video_shards into {Path(asked).parent} "
                "replaced it (the last two are kept for readers, ten minutes at least); build "
                f"the dataset again: clip_dataset({str(asked)!r}, ...)")
    else:
        said = (f"{asked}: a shard is gone since this dataset was built (write_video_shards "
                f"ran into {Path(asked).parent} again, or the files were moved); build the "
                f"dataset again: clip_dataset({str(asked)!r}, ...)")
    resized = (f"{asked}: a shard was written again since this dataset was built (its size "
               f"is not the one its manifest gave; write_video_shards ran into "
               f"{Path(asked).parent} again, where no pinned copy of the old generation is "
               "kept: .generations/ removed, or a file system without hard links); build the "
               f"dataset again: clip_dataset({str(asked)!r}, ...). The shard:")

    def one_record(file: tf.Tensor, footer: tf.Tensor) -> tf.Tensor:
        bytes_ = tf.data.FixedLengthRecordDataset(file, record_bytes=1, footer_bytes=footer,
                                                  buffer_size=1)  # not 256 KB a shard
        return tf.equal(bytes_.take(2).reduce(0, lambda n, _: n + 1), 1)

    def check(key: tf.Tensor) -> tf.Tensor:
        found = tf.size(tf.io.matching_files(patterns)) if files else tf.constant(0)
        there = tf.debugging.Assert(tf.equal(found, len(files)), [said], name="shards_present")
        if not files:
            return tf.identity(key)
        with tf.control_dependencies([there]):  # a gone file is said so, not read
            same = tf.map_fn(lambda f: one_record(f[0], f[1]), (names, footers),
                             fn_output_signature=tf.bool)
        first = tf.gather(names, tf.argmin(tf.cast(same, tf.int32)))
        sized = tf.debugging.Assert(tf.reduce_all(same), [resized, first], name="shard_sizes")
        with tf.control_dependencies([sized]):
            return tf.identity(key)

    return check


def _literal(path: str) -> str:
    """``path`` as a glob pattern that matches only itself (``[``, ``*``, ``?`` escaped)."""
    return "".join(f"[{c}]" if c in "[*?" else c for c in path)
