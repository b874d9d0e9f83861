"""A folder of class subfolders of videos: listed, probed, split by video, as Keras lists images.

``directory/<class name>/*.mp4|avi|webm|mkv|mov``: the class names are the
subfolders in sorted order (any names), label ``i`` is ``class_names[i]``.
Every file is probed once (:func:`datakit.readers.video.decoding.probe`); a bad
file raises a :class:`~datakit.core.errors.DataError` naming it, or, with
``on_bad_file="skip"``, is left out and counted. The train/validation split is
by video, never by clip: the files are shuffled with ``seed`` and the last
``validation_split`` of them are the validation set, as in
``keras.utils.image_dataset_from_directory``.

>>> split_indices(10, 0.2, seed=1)
([8, 4, 7, 0, 1, 2, 5, 9], [6, 3])
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from datakit.core.arguments import cpu_cores
from datakit.core.errors import DataError
from datakit.readers.video.decoding import VIDEO_EXTENSIONS, VideoInfo, probe

__all__ = ["VideoFolder", "list_videos", "split_indices", "check_split"]


@dataclass
class VideoFolder:
    """The probed videos of a class-folder set; ``skipped``: ``(path, reason)`` of bad files."""

    class_names: list[str]
    infos: list[VideoInfo]
    labels: list[int]
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _class_folders(directory: Path, class_names) -> list[str]:
    if not directory.is_dir():
        raise DataError(directory, "is not a folder; pass the folder that holds one "
                        "subfolder of videos per class")
    found = sorted(p.name for p in directory.iterdir() if p.is_dir() and not
                   p.name.startswith("."))
    if class_names is None:
        if not found:
            raise DataError(directory, "holds no class subfolders; put each class's videos in "
                            "directory/<class name>/")
        return found
    missing = [c for c in class_names if c not in found]
    if missing:
        raise DataError(directory, f"class_names {missing} have no folder here (folders: "
                        f"{found}); pass the names of existing subfolders")
    return list(class_names)


def _class_files(directory: Path, names: list[str], on_bad_file: str):
    """The video files of each class folder, sorted, their labels, and the empty folders."""
    paths, labels, skipped = [], [], []
    for label, name in enumerate(names):
        files = sorted(p for p in (directory / name).iterdir()
                       if (p.is_file() or p.is_symlink())  # a broken link is probed, named
                       and p.suffix.lower() in VIDEO_EXTENSIONS)
        if not files:
            reason = (f"class folder {name!r} holds no video ({', '.join(VIDEO_EXTENSIONS)}); "
                      "add videos, remove the folder, or pass class_names without it")
            if on_bad_file == "raise":
                raise DataError(directory / name, reason)
            skipped.append((str(directory / name), reason))
        paths += [str(p) for p in files]
        labels += [label] * len(files)
    return paths, labels, skipped


def list_videos(directory, *, class_names=None, on_bad_file: str = "raise",
                workers: int | None = None) -> VideoFolder:
    """Every video of ``directory/<class>/``, sorted, probed (``workers`` files at a time)."""
    if on_bad_file not in ("raise", "skip"):
        raise ValueError(f"on_bad_file={on_bad_file!r}: pass 'raise' or 'skip'")
    directory = Path(directory)
    names = _class_folders(directory, class_names)
    paths, labels, skipped = _class_files(directory, names, on_bad_file)

    def probe_or_reason(path):
        try:
            return probe(path)
        except DataError as e:
            if on_bad_file == "raise":
                raise
            reason = e.reason  # without the advice to skip: it was taken
            head, _, fix = reason.rpartition("; ")
            reason = head if head and "on_bad_file" in fix else reason
            print(f"skipped {path}: {reason}")  # as the readers' docstrings say
            return reason

    with ThreadPoolExecutor(workers or cpu_cores()) as pool:  # demuxing drops the GIL
        probed = list(pool.map(probe_or_reason, paths))
    infos, kept = [], []
    for path, label, p in zip(paths, labels, probed, strict=True):
        if isinstance(p, str):
            skipped.append((path, p))
        else:
            infos.append(p)
            kept.append(label)
    if not infos:
        raise DataError(directory, "holds no readable video in its class folders"
                        + (f" ({len(skipped)} skipped)" if skipped else ""))
    return VideoFolder(names, infos, kept, skipped)


def check_split(validation_split, subset) -> None:
    """Keras' rules for ``validation_split`` and ``subset``, with the fix in each message."""
    if validation_split is not None and not (isinstance(validation_split, float)
                                             and 0 < validation_split < 1):
        raise ValueError(f"validation_split={validation_split!r}: pass a float between 0 and 1 "
                         "(e.g. 0.2), or None")
    if subset not in (None, "training", "validation", "both"):
        raise ValueError(f"subset={subset!r}: pass 'training', 'validation' or 'both'")
    if (subset is None) != (validation_split is None):
        raise ValueError("pass validation_split and subset together (e.g. validation_split=0.2, "
                         "subset='both'), or neither")


def split_indices(n: int, validation_split: float | None, seed: int) -> tuple[list, list]:
    """Training and validation video indices: disjoint, together all ``n``, the same per seed."""
    order = np.random.default_rng(seed).permutation(n).tolist()
    n_val = int(validation_split * n) if validation_split else 0
    return order[:n - n_val], order[n - n_val:]
