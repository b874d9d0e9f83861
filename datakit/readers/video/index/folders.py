"""A folder of class subfolders of videos: listed, probed, split by video, as Keras lists images.

``directory/<class name>/*.mp4|avi|webm|mkv|mov``: the class names are the
subfolders in sorted order (any names), label ``i`` is ``class_names[i]``; as
Keras lists images, videos in nested subfolders of a class folder count too,
hidden files and folders (macOS' ``._*`` among them) do not, links to folders
are followed with ``follow_links=True``, and ``labels=None`` (or a list of
labels, one per file in sorted path order) reads every video under
``directory``, a flat folder too.
Every file is probed once (:func:`datakit.readers.video.decoding.decoding.probe`); a bad
file raises a :class:`~datakit.core.errors.DataError` naming it, or, with
``on_bad_file="skip"``, is left out and counted. So is a link that leads
nowhere (dangling, or looping back on itself), whether it stands for a video
or for a class folder: never left out without a word. A class folder that is a
link to another class folder (all its videos another class's) is refused naming
both: a video counts under one label. The train/validation split is
by video, never by clip: the files are shuffled with ``seed`` and the last
``validation_split`` of them are the validation set, as in
``keras.utils.image_dataset_from_directory``.

>>> split_indices(10, 0.2, seed=1)
([8, 4, 7, 0, 1, 2, 5, 9], [6, 3])
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from datakit.core.arguments import check_flag, check_on_bad
from datakit.core.cores import cpu_cores
from datakit.core.errors import DataError
from datakit.core.paths import one_folder, user_path
from datakit.core.progress import check_progress, with_progress
from datakit.readers.video.decoding.decoding import VIDEO_EXTENSIONS, probe
from datakit.readers.video.decoding.video_info import VideoInfo
from datakit.readers.video.options.keras_arguments import (
    Labels,
    check_class_names,
    check_split_seed,
)

__all__: list[str] = []


@dataclass
class VideoFolder:
    """The probed videos of a class-folder set; ``skipped``: ``(path, reason)`` of bad files."""

    class_names: list[str] | None  # None when read with labels=None
    infos: list[VideoInfo]
    labels: list[int]
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _hidden(name: str) -> bool:
    return name.startswith(".")  # also macOS' "._*" resource files


def _class_folders(directory: Path, class_names: Sequence[str] | None) -> list[str]:
    found = sorted(p.name for p in directory.iterdir() if p.is_dir() and not _hidden(p.name))
    if class_names is None:
        if not found:
            raise DataError(directory, "holds no class subfolders; put each class's videos in "
                            "directory/<class name>/, or pass labels=None to read its videos "
                            "without labels")
        return found
    missing = [c for c in class_names if c not in found]
    if missing:
        raise DataError(directory, f"class_names {missing} have no folder here (folders: "
                        f"{found}); pass the names of existing subfolders")
    return list(class_names)


def video_files(folder: Path, follow_links: bool = False) -> list[Path]:
    """The video files under ``folder``, in its nested subfolders too (as Keras reads
    images), sorted by path; hidden files and folders (and macOS' ``._*``) are left out.
    With ``follow_links``, a folder reached twice (a link to a parent, two links to one
    folder) is read once, where it is reached without a link if it is, and a link to a
    folder that holds ``folder`` (``loop -> ..``) is not read at all (it would list the
    folders beside it, other classes), so no video is listed twice, and a link that
    leads nowhere and could stand for a folder (a name without an ending) is listed, so that the
    probe names it (it may have held videos)."""
    found, seen = [], set()
    top = os.path.realpath(folder)
    direct = {r for r, _, _ in os.walk(folder)} if follow_links else set()  # no link on the way
    direct_real = {os.path.realpath(r) for r in direct}
    for root, dirs, files in os.walk(folder, followlinks=follow_links):
        real = os.path.realpath(root)
        if root not in direct and (real in seen or real in direct_real  # read, or read later
                                   or top.startswith(real.rstrip(os.sep) + os.sep)):  # a loop
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        found += [Path(root) / f for f in files
                  if not _hidden(f) and (Path(f).suffix.lower() in VIDEO_EXTENSIONS or (
                      follow_links and not Path(f).suffix
                      and _link_fault(Path(root) / f) is not None))]
    return sorted(found)


def _link_fault(path: Path) -> str | None:
    """Why the link ``path`` leads nowhere (dangling, or looping), or ``None``."""
    if not path.is_symlink():
        return None
    try:
        path.stat()
    except OSError as e:
        kind = "loops back on itself" if e.errno == errno.ELOOP else "points to nothing"
        return f"is a link that {kind} ({os.readlink(path)!r})"
    return None


def _broken_class_links(directory: Path, class_names: Sequence[str] | None,
                        on_bad_file: str) -> list[tuple[str, str]]:
    """Links in ``directory`` that lead nowhere where a class folder could be: an error
    naming them, or under ``"skip"`` their ``(path, reason)`` (never left out unsaid)."""
    broken = []
    for p in sorted(directory.iterdir()):
        fault = None if _hidden(p.name) else _link_fault(p)
        if fault and (class_names is None or p.name in class_names):
            broken.append((str(p), f"{fault}: a class folder that cannot be read"))
    if broken and (on_bad_file == "raise" or class_names is not None):
        path, reason = broken[0]  # a class asked for by name is never skipped: labels shift
        others = f" ({len(broken) - 1} more such links here)" if len(broken) > 1 else ""
        fix = ("fix or remove the link, or pass on_bad_file='skip'" if class_names is None
               else "fix the link, or pass class_names without it")
        raise DataError(path, f"{reason}{others}; {fix}")
    return broken


def _class_files(directory: Path, names: list[str], on_bad_file: str, follow_links: bool
                 ) -> tuple[list[str], list[int], list[tuple[str, str]]]:
    """The video files of each class folder, sorted, their labels, and the empty folders."""
    paths, labels, skipped = [], [], []
    for label, name in enumerate(names):
        files = video_files(directory / name, follow_links)  # a broken link is probed, named
        if not files:
            reason = (f"class folder {name!r} holds no video ({', '.join(VIDEO_EXTENSIONS)}); "
                      "add videos, remove the folder, or pass class_names without it")
            if on_bad_file == "raise":
                raise DataError(directory / name, reason)
            skipped.append((str(directory / name), reason))
        paths += [str(p) for p in files]
        labels += [label] * len(files)
    kept_paths, kept_labels = _each_file_once(paths, labels)
    _check_no_class_lost(directory, names, (paths, labels), (kept_paths, kept_labels))
    return kept_paths, kept_labels, skipped


def _check_no_class_lost(directory: Path, names: list[str], listed: tuple, kept: tuple) -> None:
    """A class folder whose every video another class holds (``c -> a``, a link to another
    class folder, under ``follow_links=True``) is refused naming both: read under both
    labels, one video would be two classes (and on both sides of a split)."""
    lost = sorted(set(listed[1]) - set(kept[1]))
    if not lost:
        return
    real = {os.path.realpath(p): label for p, label in zip(*kept, strict=True)}
    video = next(p for p, label in zip(*listed, strict=True) if label == lost[0])
    other, folder = names[real[os.path.realpath(video)]], directory / names[lost[0]]
    via = f"it is a link to {os.path.realpath(folder)}" \
        if os.path.realpath(folder) != os.path.abspath(folder) else "through links"
    raise DataError(folder, f"class folder {names[lost[0]]!r} holds only videos of class "
                    f"folder {other!r} ({via}); each video counts under one label: remove "
                    "the link, or pass class_names without one of them")


def _each_file_once(paths: list[str], labels: list[int]) -> tuple[list[str], list[int]]:
    """A file that followed links list in two class folders (``a/b_link -> ../b``) kept
    once: where its own folder holds it (no link on the way), else where listed first."""
    by_file: dict[str, int] = {}
    for k, p in enumerate(paths):
        real = os.path.realpath(p)
        if real not in by_file or (_is_direct(p) and not _is_direct(paths[by_file[real]])):
            by_file[real] = k
    keep = sorted(by_file.values())
    return [paths[k] for k in keep], [labels[k] for k in keep]


def _is_direct(path: str) -> bool:
    folder = os.path.dirname(path)
    return os.path.realpath(folder) == os.path.abspath(folder)


def _listed(directory: Path, labels: Labels, class_names: Sequence[str] | None, on_bad_file: str,
            follow_links: bool
            ) -> tuple[list[str] | None, list[str], list[int], list[tuple[str, str]]]:
    """``(class names, paths, labels, skipped)`` for ``labels`` as Keras takes them:
    ``"inferred"`` (class subfolders), ``None`` (every video, a flat folder too) or a list
    of ints, one per video file in sorted path order."""
    one_folder(directory, holds="the videos")  # missing: FileNotFoundError, as a file's
    if labels == "inferred":
        broken = _broken_class_links(directory, class_names, on_bad_file)
        names = _class_folders(directory, class_names)
        paths, labels_in, skipped = _class_files(directory, names, on_bad_file, follow_links)
        return names, paths, labels_in, broken + skipped
    paths = [str(p) for p in video_files(directory, follow_links)]
    if labels is None:
        return None, paths, [0] * len(paths), []
    if len(labels) != len(paths):
        raise ValueError(f"Expected the lengths of `labels` to match the number of files in the "
                         f"target directory. len(labels) is {len(labels)} while we found "
                         f"{len(paths)} files in directory {directory}; pass one int label per "
                         "video file, in sorted path order")
    return ([str(c) for c in sorted(set(labels))], paths, [int(x) for x in labels], [])


def check_classes_kept(directory: Path, names: Sequence[str], labels: list[int],
                       kept_labels: list[int], skipped: list[tuple[str, str]]) -> None:
    """A class whose every video was skipped is an error naming it (never an empty class)."""
    emptied = [names[c] for c in sorted(set(labels) - set(kept_labels))]
    if emptied:  # (the listing is never returned, and may not be printed: name the files)
        folder = directory / emptied[0]
        mine = [f"{Path(p).relative_to(directory)}: {reason}" for p, reason in skipped
                if Path(p).is_relative_to(folder)]
        first = mine[0] if mine else f"{len(skipped)} skipped in all"
        more = f"; and {len(mine) - 1} more" if len(mine) > 1 else ""
        raise DataError(folder, f"class {emptied[0]!r} has no video left: all of its videos "
                        f"were skipped ({first}{more}); fix or replace them, or pass "
                        "class_names without it")


def list_videos(directory: str | os.PathLike, *, class_names: Sequence[str] | None = None,
                on_bad_file: str = "raise", workers: int | None = None,
                labels: Labels = "inferred",
                follow_links: bool = False, progress: bool | None = None,
                verify_frames: bool = False) -> VideoFolder:
    """Every video of ``directory/<class>/`` (nested subfolders too), sorted, probed
    (``workers`` files at a time). ``labels``: ``"inferred"``, ``None`` (``class_names``
    is then ``None``) or one int per file, as Keras takes them. ``progress``: a bar over
    the files probed (:mod:`datakit.core.progress`: ``None`` shows it in a notebook or a
    terminal once probing lasts a second, ``True`` always, ``False`` never).
    ``verify_frames``: every frame of each file decoded once as well
    (:mod:`~datakit.readers.video.decoding.frame_check`; cached), a file that fails being bad."""
    check_on_bad("on_bad_file", on_bad_file)
    check_flag("verify_frames", verify_frames)
    check_flag("follow_links", follow_links)
    check_progress(progress)
    check_class_names(class_names)
    require_pyav()
    directory = Path(user_path(directory))
    names, paths, labels_in, skipped = _listed(directory, labels, class_names, on_bad_file,
                                               follow_links)

    def probe_or_reason(path: str) -> VideoInfo | str:
        try:
            return probe(path, verify_frames=verify_frames)
        except DataError as e:
            if on_bad_file == "raise":
                raise
            reason = e.reason  # without the advice to skip: it was taken
            head, _, fix = reason.rpartition("; ")
            return head if head and "on_bad_file" in fix else reason  # the readers print it

    with ThreadPoolExecutor(workers or cpu_cores()) as pool:  # demuxing drops the GIL
        probed = list(with_progress(pool.map(probe_or_reason, paths),
                                    "decoding videos" if verify_frames else "probing videos",
                                    progress=progress, total=len(paths), unit="video"))
    infos, kept = [], []
    for path, label, p in zip(paths, labels_in, probed, strict=True):
        if isinstance(p, str):
            skipped.append((path, p))
        else:
            infos.append(p)
            kept.append(label)
    if not infos:
        raise DataError(directory, "holds no readable video"
                        + (" in its class folders" if labels == "inferred" else "")
                        + (f" ({len(skipped)} skipped)" if skipped else ""))
    if labels == "inferred":
        assert names is not None  # inferred labels: the class folders' names
        check_classes_kept(directory, names, labels_in, kept, skipped)
    return VideoFolder(names, infos, kept, skipped)


def require_pyav() -> None:
    """One clear error when PyAV (the ``video`` extra) is missing, before any worker starts.
    PyAV is looked for, not imported: a conversion whose probes are cached never uses it in
    the caller's process, and importing it there took 0.04 CPU s (its workers import it).
    A PyAV that is installed but broken (its FFmpeg libraries missing) fails at its first
    import, with the system's own reason."""
    import importlib.util

    if importlib.util.find_spec("av") is None:
        raise ModuleNotFoundError('reading video files needs PyAV, which is not installed: '
                                  'pip install "tf-datakit[video]" (or pip install av)',
                                  name="av")


def check_split(validation_split: float | None, subset: str | None) -> None:
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


def split_indices(n: int, validation_split: float | None, seed: int | None,
                  shuffle: bool = True) -> tuple[list, list]:
    """Training and validation video indices: disjoint, together all ``n``, the same per seed.

    A shuffled split needs a seed (an int >= 0), as in Keras: without one, two
    calls (training, then validation) would draw two splits and share videos.

    With ``shuffle=False`` the order is the listing's and the last videos are the
    validation set, as Keras takes them:

    >>> split_indices(5, 0.4, seed=None, shuffle=False)
    ([0, 1, 2], [3, 4])
    """
    seed = check_split_seed(validation_split, shuffle, seed)  # a split is drawn from a seed
    n_val = int(validation_split * n) if validation_split else 0
    order = np.random.default_rng(seed).permutation(n).tolist() if shuffle and validation_split \
        else list(range(n))  # (no split: nothing to draw)
    return order[:n - n_val], order[n - n_val:]
