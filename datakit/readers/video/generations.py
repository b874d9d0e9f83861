"""A conversion's ``train/`` and ``validation/`` switched as one generation.

A rerun of :func:`~datakit.readers.video.convert.write_video_shards` writes both sets
whole into ``out/.next/`` first; one small file, ``out/.next/COMMITTED`` (written
atomically, naming the sets), is the moment the new generation replaces the old; then
each set is moved into place. A run killed before that file leaves the old sets as
they were (the half-written ``.next/`` is removed by the next run); killed after it, in
the middle of the moves, the new generation is already the one read:
:func:`current` sends a reader of ``out/train`` or ``out/validation`` to where that
generation's set is now, and the next run finishes the moves. So a reader never sees
one set of a run beside the other set of another.

>>> import tempfile
>>> out = Path(tempfile.mkdtemp())
>>> (out / "train").mkdir()
>>> current(out / "train") == out / "train"  # no switch under way: the folder itself
True
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

from datakit.core.atomic import folder_lock, write_atomic
from datakit.core.errors import DataError

__all__ = ["SETS", "conversion_lock", "next_folder", "switch", "finish_switch", "current"]

SETS = ("train", "validation")
_NEXT, _PREVIOUS, _COMMITTED = ".next", ".previous", "COMMITTED"


@contextlib.contextmanager
def conversion_lock(out: Path):
    """Hold ``out`` for one conversion: another one into it, started meanwhile, is refused.

    Two conversions into one folder would share its parts and its commit; the second is
    refused by name at once (:class:`~datakit.core.atomic.FolderBusy`), before any work.
    """
    if out.exists() and not out.is_dir():
        raise DataError(out, "is a file; pass a folder for the converted sets "
                        "(train/ and validation/ go in it)")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with folder_lock(out, busy="another conversion into this folder is running; let it "
                         "finish, or convert into another folder"):
            yield
    except BaseException:
        if created and not any(out.iterdir()):  # refused before any work: leave no folder
            out.rmdir()
        raise


def next_folder(out: Path) -> Path:
    """``out/.next/``, empty: where a run writes its sets before :func:`switch`.

    A switch an earlier run left half done is finished first; a ``.next/`` that was
    never committed (a run killed while writing it) is removed.
    """
    finish_switch(out)
    nxt = Path(out) / _NEXT
    shutil.rmtree(nxt, ignore_errors=True)
    nxt.mkdir(parents=True)
    return nxt


def switch(out: Path, sets: list[str]) -> None:
    """Make the sets written in ``out/.next/`` the current generation, the others gone."""
    write_atomic(Path(out) / _NEXT / _COMMITTED, json.dumps(sorted(sets)))  # the commit point
    finish_switch(out)


def finish_switch(out: Path) -> None:
    """Move a committed ``.next/`` into place (a no-op when no switch is under way)."""
    out = Path(out)
    nxt, previous = out / _NEXT, out / _PREVIOUS
    sets = _committed(nxt)
    if sets is None:
        return
    previous.mkdir(exist_ok=True)
    for name in SETS:
        staged = nxt / name
        if (staged.exists() or name not in sets) and (out / name).exists():
            shutil.rmtree(previous / name, ignore_errors=True)  # (a switch cut short before)
            (out / name).rename(previous / name)  # the old generation's set goes
        if staged.exists():
            staged.rename(out / name)
    shutil.rmtree(nxt)
    shutil.rmtree(previous, ignore_errors=True)


def current(directory) -> Path:
    """Where the current generation's set named like ``directory`` is: ``directory``
    itself, or, while a committed switch is under way, its copy in ``.next/``."""
    directory = Path(directory)
    sets = _committed(directory.parent / _NEXT)
    if sets is None or directory.name not in SETS:
        return directory
    if directory.name not in sets:
        raise DataError(str(directory), "is not part of the last conversion into "
                        f"{directory.parent} (it wrote {' and '.join(sets)} only); read those, "
                        "or run write_video_shards again with a validation_split")
    staged = directory.parent / _NEXT / directory.name
    return staged if staged.exists() else directory


def _committed(nxt: Path) -> list[str] | None:
    """The sets a committed ``.next/`` holds; ``None`` if there is no commit under way."""
    try:
        return list(json.loads((nxt / _COMMITTED).read_text()))
    except FileNotFoundError:
        return None
