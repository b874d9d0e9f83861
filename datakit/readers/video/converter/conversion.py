"""The converter core: "convert these videos" once, for the local and the Beam converters.

:func:`convert_videos` is the one procedure both
:func:`~datakit.readers.video.converter.convert.write_video_shards` (worker processes on this
machine) and :func:`~datakit.readers.video.converter.convert_beam.write_video_shards_beam`
(an Apache Beam pipeline) run: check the call, take the lock, list and probe the
folder, find the parts an earlier run already converted (each finished video is
its own small file in ``out/.parts/``, named by a digest of its source path, its stamp
as listed (size, modification and change times, inode: :mod:`datakit.core.file_facts`,
so a video copied over keeping its size and time is converted again) and the options),
relabel the reused ones, fill the shard sets and commit them as one generation. A rerun
that finds ``out`` holding this very conversion, complete (the same videos, each with the
stamp and options its part was made from, the same split, labels and shards), says so and
returns it without converting anything (``overwrite=True`` converts every video anew). Only
the step in the middle differs: the ``convert`` callable each converter passes, which
turns the videos still to do into their parts and says which failed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from datakit.core.arguments import check_count, check_flag, check_on_bad
from datakit.core.atomic import atomic_file, clean_leftovers, write_atomic
from datakit.core.file_facts import file_stamp
from datakit.core.paths import user_path
from datakit.readers.video.converter import generations
from datakit.readers.video.converter.part_files import CHUNK_FRAMES
from datakit.readers.video.converter.shard_sets import ShardSets, shard_names, video_set
from datakit.readers.video.decoding.decoding import output_frames
from datakit.readers.video.decoding.video_info import VideoInfo
from datakit.readers.video.index.folders import (
    VideoFolder,
    check_classes_kept,
    check_split,
    list_videos,
    split_indices,
)
from datakit.readers.video.options.clip_options import VideoOptions, check_quality, one_frame_size
from datakit.readers.video.options.keras_arguments import check_split_seed

__all__: list[str] = []

_PARTS = ".parts"


@dataclass
class Conversion:
    """What a converter's ``convert`` step is given: the listed videos, where each one's
    part goes (``parts / names[i]``), the ones ``todo``, and the options to convert with."""

    folder: VideoFolder
    parts: Path
    names: list[str]
    todo: list[int]
    options: VideoOptions
    quality: int
    on_bad_file: str


def convert_videos(directory: str | os.PathLike, out: str | os.PathLike, options: VideoOptions,
                   *, quality: int, num_shards: int, seed: int | None,
                   validation_split: float | None, class_names: Sequence[str] | None,
                   on_bad_file: str,
                   convert: Callable[[Conversion, ShardSets], dict[int, str]],
                   progress: bool | None = None, follow_links: bool = False,
                   overwrite: bool = False) -> dict:
    """List ``directory``, convert what no earlier run left (with ``convert``), commit.

    ``convert(job, sets)`` turns ``job.todo``'s videos into their parts, calls
    ``sets.ready(i)`` (or ``sets.failed(i)``) for each, and returns the reason of
    each video that failed (under ``on_bad_file="skip"``). The result is the
    converters': ``{"train", "validation", "class_names", "converted", "reused",
    "skipped"}``. ``progress``: a bar over the videos probed while the folder is
    listed (:func:`~datakit.readers.video.index.folders.list_videos`); ``convert`` shows its own.
    ``follow_links``: the direct reader's (the same listing). ``overwrite``: convert every
    video again, even when ``out`` holds this conversion complete (by default it is returned
    as it is, :func:`_finished`).
    """
    check_quality(quality)
    check_on_bad("on_bad_file", on_bad_file)
    check_count("num_shards", num_shards)
    check_flag("overwrite", overwrite)
    check_split(validation_split, "both" if validation_split is not None else None)
    seed = check_split_seed(validation_split, True, seed)
    out, directory = Path(user_path(out)), user_path(directory)
    _check_out_outside(directory, out)
    with generations.conversion_lock(out):
        folder = list_videos(directory, class_names=class_names, on_bad_file=on_bad_file,
                             progress=progress, follow_links=follow_links)
        assert folder.class_names is not None  # labels inferred: the class folders' names
        options.check_videos(folder.infos)
        for path, reason in folder.skipped:
            print(f"skipped {path}: {reason}")
        if options.frame_size is None:  # one shape per set: clips batch, Keras needs it static
            one_frame_size(folder.infos)
        made_with = dict(fps=options.fps, quality=quality, chunk_frames=CHUNK_FRAMES,
                         **{k: (list(v) if k == "frame_size" and v else v)
                            for k, v in options.fit.items()})
        records = [_record(info, i, folder.labels[i], folder.class_names, made_with)
                   for i, info in enumerate(folder.infos)]
        train, val = split_indices(len(folder.infos), validation_split, seed)
        split = {"train": sorted(train), "validation": sorted(val)}
        done = None if overwrite else _finished(out, folder, records, split, num_shards,
                                                dict(made_with, seed=seed))
        if done is not None:
            return done
        if overwrite and (out / _PARTS).exists():
            shutil.rmtree(out / _PARTS)  # every video converted anew
        parts = _parts_folder(out, made_with)
        names, todo = _reusable_parts(parts, [_key(r) for r in records])
        reused: list[int] = []
        for i in sorted(set(range(len(records))) - set(todo)):  # read back whole, with this
            whole = _reuse(parts / names[i], i, folder.labels[i],  # run's id and label
                           len(output_frames(folder.infos[i], options.fps)))
            (reused if whole else todo).append(i)
        todo.sort()
        with ShardSets(out, split, parts, names, num_shards) as sets:
            for i in reused:
                sets.ready(i)
            job = Conversion(folder, parts, names, todo, options, quality, on_bad_file)
            failed = convert(job, sets)
            return _commit(directory, out, job, failed, records, sets, made_with=made_with,
                           seed=seed, reused=len(reused))


def _finished(out: Path, folder: VideoFolder, records: list[dict], split: dict[str, list[int]],
              num_shards: int, options: dict) -> dict | None:
    """The result of the conversion ``out`` already holds, complete, if it is this one, else
    ``None``: each set's videos are the ids ``split`` gives, each made from the part this
    run would make (its digest: source path, stamp and options), with this run's label and
    class name; the sets' options and seed are this run's, and their shards are all there,
    at their sizes. Said so in one line (a rerun converted everything again)."""
    sets = {}
    for name, ids in split.items():
        meta = video_set(out / name) if (out / name).is_dir() else None
        if meta is None and not ids:
            continue
        if meta is None or not _same_set(out / name, meta, ids, folder, records, num_shards,
                                         options):
            return None
        sets[name] = meta
    if "train" not in sets:
        return None
    n = sum(len(m["videos"]) for m in sets.values())
    print(f"{out} holds this conversion already, complete ({n} videos, each unchanged since "
          "it was converted, with the same options and split): nothing to convert; pass "
          "overwrite=True to convert them again")
    skipped = [tuple(s) for s in sets["train"].get("skipped", [])]
    return {"train": out / "train",
            "validation": out / "validation" if "validation" in sets else None,
            "class_names": folder.class_names, "converted": 0, "reused": n,
            "skipped": skipped}


def _same_set(folder: Path, meta: dict, ids: list[int], listed: VideoFolder,
              records: list[dict], num_shards: int, options: dict) -> bool:
    """Whether the set ``meta`` in ``folder`` is the one this run would write (see
    :func:`_finished`)."""
    videos = meta["videos"]
    if sorted(int(v["id"]) for v in videos) != ids or meta["class_names"] != listed.class_names \
            or any(meta.get(k) != v for k, v in options.items()) \
            or len(meta["files"]) != len(shard_names(len(ids), num_shards)):
        return False
    for v in videos:
        r = records[int(v["id"])]
        if (_part_key(Path(str(v.get("part", "")))), v["label"], v["class_name"]) != (
                _key(r), r["label"], r["class_name"]):
            return False
    return all((folder / f["file"]).is_file()
               and (folder / f["file"]).stat().st_size == int(f["bytes"])
               for f in meta["files"])


def _check_out_outside(directory: str | os.PathLike, out: Path) -> None:
    """Refuse an ``out`` that is the videos' folder or inside it: the next listing of the
    folder would meet the shards (a class named ``train``, or files inside a class)."""
    if not isinstance(directory, (str, os.PathLike)):
        return  # list_videos names it
    src, dst = Path(directory).resolve(), out.resolve()
    if dst == src or src in dst.parents:
        where = "is the videos' folder" if dst == src else "is inside the videos' folder"
        beside = str(src.parent / (src.name + "_shards"))
        raise ValueError(f"out={str(out)!r} {where} (directory={str(directory)!r}): the "
                         "shards would be listed as videos or classes on the next run; pass "
                         f"an out folder outside it, e.g. {beside!r}")


def _parts_folder(out: Path, options: dict) -> Path:
    """``out/.parts/``, emptied if its parts were made with other ``options``, and rid of
    the temporary parts of workers that died (a worker writes its part while it decodes,
    so a run stopped or killed leaves one a worker: a long video's, at full size, is
    large)."""
    parts = out / _PARTS
    sig = parts / "options.json"
    if parts.exists() and _made_with(sig) != options:
        shutil.rmtree(parts)  # converted with other options: nothing can be reused
    parts.mkdir(parents=True, exist_ok=True)
    clean_leftovers(parts)  # (this run holds the folder's lock: no writer of ours is busy)
    if not sig.exists():
        write_atomic(sig, json.dumps(options))
    return parts


def _made_with(sig: Path) -> dict | None:
    """The options the parts were made with; ``None`` if not recorded or unreadable."""
    try:
        return json.loads(sig.read_text())
    except (OSError, ValueError):  # missing, or cut by a kill: the parts cannot be trusted
        return None


def _part_key(part: Path) -> str:
    """The digest in a part's name, ``<id>-<digest>.tfrecord`` ("" for another name)."""
    return part.stem.split("-", 1)[1] if "-" in part.stem else ""


def _record(info: VideoInfo, i: int, label: int, class_names: Sequence[str],
            options: dict) -> dict:
    """What part ``i`` is made from: its source file as listed (its stamp), its label and the
    options."""
    stamp = tuple(info.stamp) or file_stamp(info.path)
    return {"source": info.path, "size": stamp[0], "mtime_ns": stamp[1], "stamp": list(stamp),
            "id": i, "label": label, "class_name": class_names[label], "options": options}


def _key(record: dict) -> str:
    """A part's name carries the digest of its source and options: reused only if unchanged.

    The id, label and class name are not in it: a video added before it or
    class names reordered change them, and :func:`_reuse` sets them anew.
    """
    made_of = {k: record[k] for k in ("source", "stamp", "options")}
    text = json.dumps(made_of, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _reuse(part: Path, i: int, label: int, frames: int) -> bool:
    """Whether ``part`` reads back whole: every record's CRC, and ``frames`` frames in all.

    Parts are not ``fsync`` ed (:func:`~datakit.readers.video.converter.part_files.write_part`),
    so a power cut may leave one short, empty or damaged: it is deleted, and its
    video converted again. A whole part is rewritten with this run's ``id`` and
    ``label`` where they changed: its name (the digest of its source and options)
    still holds, as id and label are not in it. In place, so that a set never
    needs the disk space of its parts twice.
    """
    import tensorflow as tf  # only a rerun finding parts loads it
    from google.protobuf.message import DecodeError

    try:
        chunks = [tf.train.SequenceExample.FromString(r.numpy())
                  for r in tf.data.TFRecordDataset(str(part))]
    except (tf.errors.DataLossError, DecodeError):  # a record cut short, a CRC that fails
        chunks = None
    if chunks is None or frames != sum(len(se.feature_lists.feature_list["frames"].feature)
                                       for se in chunks):
        part.unlink()
        return False
    if all(list(se.context.feature["id"].int64_list.value) == [i] and
           list(se.context.feature["label"].int64_list.value) == [label] for se in chunks):
        return True
    with atomic_file(part) as tmp, tf.io.TFRecordWriter(str(tmp)) as w:
        for se in chunks:
            se.context.feature["id"].int64_list.value[:] = [i]
            se.context.feature["label"].int64_list.value[:] = [label]
            w.write(se.SerializeToString())
    return True


def _reusable_parts(parts: Path, keys: list[str]) -> tuple[list[str], list[int]]:
    """Each video's part name, and the videos to convert: those with no part of their key.

    Parts of a removed or edited video (or of other options) are deleted.
    """
    found = {_part_key(p): p for p in parts.glob("[0-9]*-*.tfrecord")}
    for p in parts.glob("*.tfrecord"):
        if found.get(_part_key(p)) != p or _part_key(p) not in keys:
            p.unlink()
    names = [found[k].name if k in found else f"{i:06d}-{k}.tfrecord"
             for i, k in enumerate(keys)]
    return names, [i for i, k in enumerate(keys) if k not in found]


def _entries(folder: VideoFolder, options: VideoOptions, records: list[dict],
             names: list[str]) -> dict[int, dict]:
    """Each video's row of the manifest."""
    entry = {}
    for i, info in enumerate(folder.infos):
        h, w = options.frame_size or (info.height, info.width)
        entry[i] = {"id": i, "label": folder.labels[i], "source": info.path,
                    "frames": len(output_frames(info, options.fps)),
                    "fps": options.fps or round(info.fps, 3), "height": h, "width": w,
                    "size": records[i]["size"], "mtime_ns": records[i]["mtime_ns"],
                    "class_name": records[i]["class_name"], "part": names[i]}
    return entry


def _commit(directory: str | os.PathLike, out: Path, job: Conversion, failed: dict,
            records: list[dict], sets: ShardSets, *, made_with: dict, seed: int | None,
            reused: int) -> dict:
    """Commit a conversion whose parts are all in ``out/.parts/`` and in ``sets``.

    The two sets are one generation (:mod:`~datakit.readers.video.converter.generations`):
    written whole into ``out/.next/``, then switched in at one commit point, so a
    reader gets the whole old pair or the whole new one, never one of each.
    """
    folder, names = job.folder, job.names
    skipped = list(folder.skipped) + [(folder.infos[i].path, r) for i, r in failed.items()]
    entry = _entries(folder, job.options, records, names)
    keep = set(range(len(folder.infos))) - set(failed)
    if folder.class_names is not None:  # a class whose every video failed: an error, by name
        check_classes_kept(Path(directory), folder.class_names, folder.labels,
                           [folder.labels[i] for i in keep], skipped)
    train, val = sets.kept("train"), sets.kept("validation")
    run = hashlib.sha256(json.dumps([names, seed, train, val, os.getpid(),
                                     time.time_ns()]).encode()).hexdigest()[:16]
    set_options = dict(made_with, seed=seed, skipped=[list(s) for s in skipped], run=run)
    assert folder.class_names is not None  # labels inferred (convert_videos)
    written = sets.commit(entry, folder.class_names, set_options)
    shutil.rmtree(job.parts)
    return {"train": out / "train",
            "validation": out / "validation" if "validation" in written else None,
            "class_names": folder.class_names, "converted": len(job.todo) - len(failed),
            "reused": reused, "skipped": skipped}
