"""``write_video_shards``: a class-folder set of videos converted to ``SequenceExample`` shards.

Each video becomes ``SequenceExample`` s of 64 frames each (context: ``id``,
``label``, ``length``, ``first``, ``source``; one JPEG per frame, at the chosen
``frame_size`` and ``fps``), the form
:func:`datakit.readers.video.clips.clip_dataset` reads, reading only the
records each clip spans (the manifest says where each starts) and decoding only
the clip's frames. The conversion:

- streams one video at a time, so memory holds one video's JPEGs, never its
  decoded frames (worker processes decode, encode and write each video's part,
  one video each, on every core; :mod:`~datakit.readers.video.part_files`);
- is resumable by content: each finished video is kept as its own small file
  in ``out/.parts/``, named by a digest of what made it (source path, size and
  modification time, options); a rerun reuses only the parts whose source and
  options are unchanged (with this run's id and label), converts the rest and
  drops the parts of removed or edited videos; the manifest lists each video
  with that record (and its label and class name);
- runs its workers as processes that never import the caller's script (see
  :mod:`datakit.readers.video.workers`), so it works from a script without an
  ``if __name__ == "__main__":`` guard, from ``python -c`` and from a notebook;
- under ``on_bad_file="skip"`` leaves a video that fails to decode out of the
  set, printed and listed in the result's and the manifest's ``skipped``;
- assembles each set's shards while the workers convert (a part joins its
  shard as soon as those before it have: :mod:`~datakit.readers.video.shard_sets`)
  and commits the sets (``out/train/``, ``out/validation/``) with the kit's set
  commit (:mod:`datakit.core.manifest`), so a reader sees the complete set or
  none. The manifest stores the class names and, per video, its source
  path, frame count, fps and size.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from functools import partial
from pathlib import Path

import tensorflow as tf
from tqdm.auto import tqdm

from datakit.core.arguments import check_count
from datakit.core.atomic import atomic_file, write_atomic
from datakit.core.cores import cpu_cores
from datakit.core.errors import DataError
from datakit.readers.video import generations
from datakit.readers.video.clip_options import VideoOptions, one_frame_size, video_options
from datakit.readers.video.decoding import output_frames
from datakit.readers.video.folders import (
    check_classes_kept,
    check_split,
    list_videos,
    split_indices,
)
from datakit.readers.video.keras_arguments import check_split_seed
from datakit.readers.video.part_files import CHUNK_FRAMES, PartJob, convert_part
from datakit.readers.video.shard_sets import ShardSets
from datakit.readers.video.workers import convert_all

__all__ = ["PARTS", "write_video_shards", "list_for_conversion", "shard_sets", "commit_run"]

PARTS = ".parts"


def _parts_folder(out: Path, options: dict) -> Path:
    parts = out / PARTS
    sig = parts / "options.json"
    if parts.exists() and _made_with(sig) != options:
        shutil.rmtree(parts)  # converted with other options: nothing can be reused
    parts.mkdir(parents=True, exist_ok=True)
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


def _record(info, i: int, label: int, class_names, options: dict) -> dict:
    """What part ``i`` is made from: its source file as it is now, its label and the options."""
    st = os.stat(info.path)
    return {"source": info.path, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "id": i,
            "label": label, "class_name": class_names[label], "options": options}


def _key(record: dict) -> str:
    """A part's name carries the digest of its source and options: reused only if unchanged.

    The id, label and class name are not in it: a video added before it or
    class names reordered change them, and :func:`_relabel` sets them anew.
    """
    made_of = {k: record[k] for k in ("source", "size", "mtime_ns", "options")}
    text = json.dumps(made_of, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _relabel(part: Path, i: int, label: int) -> None:
    """Part ``part`` rewritten in place with this run's ``id`` and ``label``, if they changed.

    Its name (the digest of its source and options) still holds: id and label are not in it.
    In place, so that a set never needs the disk space of its parts twice.
    """
    chunks = [tf.train.SequenceExample.FromString(r.numpy())
              for r in tf.data.TFRecordDataset(str(part))]
    if all(list(se.context.feature["id"].int64_list.value) == [i] and
           list(se.context.feature["label"].int64_list.value) == [label] for se in chunks):
        return
    with atomic_file(part) as tmp, tf.io.TFRecordWriter(str(tmp)) as w:
        for se in chunks:
            se.context.feature["id"].int64_list.value[:] = [i]
            se.context.feature["label"].int64_list.value[:] = [label]
            w.write(se.SerializeToString())


def shard_sets(out: Path, folder, names: list[str], *, seed, validation_split,
               num_shards: int, reused) -> ShardSets:
    """The sets to fill (:class:`ShardSets`, split by ``seed``), after relabelling the parts
    ``reused`` from an earlier run: the local and the Beam converters' shared start."""
    parts = out / PARTS
    for i in reused:  # a reused part may carry an earlier run's id or label
        _relabel(parts / names[i], i, folder.labels[i])
    train, val = split_indices(len(folder.infos), validation_split, seed)
    return ShardSets(out, {"train": sorted(train), "validation": sorted(val)}, parts, names,
                     num_shards)


def write_video_shards(directory, out, *, frame_size=None, fps: float | None = None,
                       validation_split: float | None = None, seed: int = 0, class_names=None,
                       crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
                       quality: int = 90, num_shards: int = 4, processes: int | None = None,
                       on_bad_file: str = "raise", progress: bool = True,
                       options: VideoOptions | None = None) -> dict:
    """Convert ``directory/<class>/<videos>`` into shards in ``out/train`` (and ``out/validation``).

    Args:
        directory: one subfolder per class, as for
            :func:`~datakit.readers.video.directory.video_dataset_from_directory`.
        out: where ``train/`` and ``validation/`` go.
        frame_size, fps, crop_to_aspect_ratio, pad_to_aspect_ratio, class_names:
            as for the direct reader (``frame_size=None`` needs one size for all).
        validation_split, seed: the split by video, the same as the direct
            reader's for the same ``seed`` (``None``: everything in ``train/``).
        quality: JPEG quality, 1..100; num_shards: TFRecord files per set.
        processes: worker processes (default: the cores; 1: in this process).
        on_bad_file: ``"raise"`` or ``"skip"``: a file that fails at the probe or
            while converting is left out, printed with its reason and listed
            in the result's and the manifest's ``skipped``.
        progress: show a tqdm progress bar.
        options: a :class:`~datakit.readers.video.clip_options.VideoOptions`
            instead of frame_size, fps, crop_to_aspect_ratio and
            pad_to_aspect_ratio (its clip settings are the reader's business).

    Returns:
        ``{"train": folder, "validation": folder or None, "class_names",
        "converted": n, "reused": n, "skipped": [(path, reason), ...]}``.
    """
    opts = video_options(options, frame_size=frame_size, fps=fps,
                         crop_to_aspect_ratio=crop_to_aspect_ratio,
                         pad_to_aspect_ratio=pad_to_aspect_ratio)
    if not 1 <= check_count("quality", quality) <= 100:
        raise ValueError(f"quality={quality}: pass a JPEG quality in 1..100")
    check_count("num_shards", num_shards)
    check_count("processes", processes, none=True)
    check_split(validation_split, "both" if validation_split is not None else None)
    seed = check_split_seed(validation_split, True, seed)
    out = Path(out)
    with generations.conversion_lock(out):
        folder, made_with, parts = list_for_conversion(directory, out, opts, quality, class_names,
                                                       on_bad_file)
        size, fit, fps = opts.frame_size, opts.fit, opts.fps
        n = len(folder.infos)
        records = [_record(info, i, folder.labels[i], folder.class_names, made_with)
                   for i, info in enumerate(folder.infos)]
        names, todo = _reusable_parts(parts, [_key(r) for r in records])
        work = partial(convert_part, fps=fps, quality=quality, **fit)
        processes = min(processes or cpu_cores(), max(1, len(todo)))
        reused = sorted(set(range(n)) - set(todo))
        with shard_sets(out, folder, names, seed=seed, validation_split=validation_split,
                        num_shards=num_shards, reused=reused) as sets:
            for i in reused:
                sets.ready(i)
            failed = _convert(work, folder, todo, parts, names, processes, on_bad_file,
                              progress, sets)
            return commit_run(directory, out, folder, failed, records, names, sets, size=size,
                              fps=fps, made_with=made_with, seed=seed,
                              converted=len(todo) - len(failed), reused=len(reused))


def list_for_conversion(directory, out: Path, opts: VideoOptions, quality: int, class_names,
                        on_bad_file: str):
    """The videos listed and checked (skips printed), what the parts are made with, and the
    parts folder: the first step of the local and the Beam converters."""
    folder = list_videos(directory, class_names=class_names, on_bad_file=on_bad_file)
    opts.check_videos(folder.infos)
    for path, reason in folder.skipped:
        print(f"skipped {path}: {reason}")
    if opts.frame_size is None:  # one shape per set: clips batch, and Keras needs it static
        one_frame_size(folder.infos)
    made_with = dict(fps=opts.fps, quality=quality, chunk_frames=CHUNK_FRAMES,
                     **{k: (list(v) if k == "frame_size" and v else v)
                        for k, v in opts.fit.items()})
    return folder, made_with, _parts_folder(out, made_with)


def _entries(folder, size, fps, records, names) -> dict[int, dict]:
    """Each video's row of the manifest."""
    entry = {}
    for i, info in enumerate(folder.infos):
        h, w = size or (info.height, info.width)
        entry[i] = {"id": i, "label": folder.labels[i], "source": info.path,
                    "frames": len(output_frames(info, fps)),
                    "fps": fps or round(info.fps, 3), "height": h, "width": w,
                    "size": records[i]["size"], "mtime_ns": records[i]["mtime_ns"],
                    "class_name": records[i]["class_name"], "part": names[i]}
    return entry


def commit_run(directory, out: Path, folder, failed: dict, records, names, sets: ShardSets, *,
               size, fps, made_with: dict, seed, converted: int, reused: int) -> dict:
    """Commit a conversion whose parts are all in ``out/.parts/`` and in ``sets`` (the local
    converter's and the Beam converter's last step): ``train/`` and ``validation/``.

    The two sets are one generation (:mod:`~datakit.readers.video.generations`):
    written whole into ``out/.next/``, then switched in at one commit point, so a
    reader gets the whole old pair or the whole new one, never one of each.
    """
    n, parts = len(folder.infos), out / PARTS
    skipped = list(folder.skipped) + [(folder.infos[i].path, r) for i, r in failed.items()]
    entry = _entries(folder, size, fps, records, names)
    keep = set(range(n)) - set(failed)
    if folder.class_names is not None:  # a class whose every video failed: an error, by name
        check_classes_kept(Path(directory), folder.class_names, folder.labels,
                            [folder.labels[i] for i in keep], skipped)
    train, val = sets.kept("train"), sets.kept("validation")
    run = hashlib.sha256(json.dumps([names, seed, train, val, os.getpid(),
                                     time.time_ns()]).encode()).hexdigest()[:16]
    set_options = dict(made_with, seed=seed, skipped=[list(s) for s in skipped], run=run)
    written = sets.commit(entry, folder.class_names, set_options)
    shutil.rmtree(parts)
    return {"train": out / "train",
            "validation": out / "validation" if "validation" in written else None,
            "class_names": folder.class_names, "converted": converted, "reused": reused,
            "skipped": skipped}


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


def _convert(work, folder, todo: list[int], parts: Path, names: list[str], processes: int,
             on_bad_file: str, progress: bool, sets: ShardSets) -> dict[int, str]:
    """Convert the ``todo`` videos into their parts, each joining its shard in ``sets`` when
    written; the reason of each that failed (skipped)."""
    n = len(folder.infos)
    failed: dict[int, str] = {}
    bar = tqdm(total=n, initial=n - len(todo), desc="videos", unit="video", disable=not progress)
    jobs = {i: PartJob(folder.infos[i], str(parts / names[i]), i, folder.labels[i])
            for i in todo}
    try:
        for i, done in convert_all(work, jobs, todo, processes):
            if isinstance(done, DataError):
                if on_bad_file == "raise":
                    raise done
                print(f"skipped {done.path}: {done.reason}")
                failed[i] = done.reason
                sets.failed(i)
                continue
            sets.ready(i)
            bar.update()
    except KeyboardInterrupt:
        bar.close()
        done = len(list(parts.glob("*.tfrecord")))
        print(f"write_video_shards interrupted: {done} of {n} videos converted are kept in "
              f"{parts}; run it again to resume", file=sys.stderr)
        raise
    bar.close()
    return failed
