"""What a set of clip shards says about itself: its manifest's videos, class names and frame
size, and whether ``train/`` and ``validation/`` beside it are one run.

:func:`~datakit.readers.video.clips.clip_dataset` reads these before it builds its
pipeline, so a mismatch is an error naming the folder, never a surprise mid-epoch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.core.paths import PathArg
from datakit.readers.video import generations

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
    generation (:mod:`~datakit.readers.video.generations`)."""
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


def video_set(directory: PathArg) -> dict | None:
    """The manifest's set written by ``write_video_shards`` (class names, videos), or None."""
    try:
        man = manifest.read_manifest(directory)
    except (DataError, OSError):
        return None
    for s in (man or {"sets": {}})["sets"].values():
        if "videos" in s and "class_names" in s:
            return s
    return None
