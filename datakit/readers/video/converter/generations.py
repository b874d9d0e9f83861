"""A conversion's ``train/`` and ``validation/`` switched as one generation.

A rerun of :func:`~datakit.readers.video.converter.convert.write_video_shards` writes both sets
whole into ``out/.next/`` first; one small file, ``out/.next/COMMITTED`` (written
atomically, naming the sets), is the moment the new generation replaces the old; then
each set is moved into place. A run killed before that file leaves the old sets as
they were (the half-written ``.next/`` is removed by the next run); killed after it, in
the middle of the moves, the new generation is already the one read:
:func:`current` sends a reader of ``out/train`` or ``out/validation`` to where that
generation's set is now, and the next run finishes the moves. So a reader never sees
one set of a run beside the other set of another.

A reader that opened a generation finishes on it while later runs rewrite the
sets: the shards keep their names across runs, so each committed generation is
also pinned under ``out/.generations/<run>/`` (hard links to its files: no
copy), and :func:`current` sends a reader to that pinned copy while it is the
same files as ``out/<set>``. A rewrite then replaces ``out/<set>`` but not the
files a reader opened. A later writer removes a pinned generation once it has
been replaced for :data:`GRACE_S` seconds and is older than the one before the
current one: a reader still on it after that loses its files. The cost: the
generation before the current one stays on disk (its own bytes, as the current
one is new files) until the next run, and at least GRACE_S seconds.

>>> import tempfile
>>> out = Path(tempfile.mkdtemp())
>>> (out / "train").mkdir()
>>> current(out / "train") == out / "train"  # no switch under way: the folder itself
True
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from datakit.core.atomic import folder_lock, write_atomic
from datakit.core.errors import DataError

__all__: list[str] = []

_SETS = ("train", "validation")
_NEXT, _PREVIOUS, _COMMITTED = ".next", ".previous", "COMMITTED"
_PINNED, _ORDER = ".generations", "ORDER"
#: Pinned generations always kept: the current one and the one before it.
_KEEP = 2
#: Seconds an older pinned generation is kept after it was replaced (readers still on it).
GRACE_S = 600.0


@contextlib.contextmanager
def conversion_lock(out: Path) -> Iterator[None]:
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
    _finish_switch(out)
    nxt = Path(out) / _NEXT
    shutil.rmtree(nxt, ignore_errors=True)
    nxt.mkdir(parents=True)
    return nxt


def switch(out: Path, sets: list[str]) -> None:
    """Make the sets written in ``out/.next/`` the current generation, the others gone."""
    _pin(Path(out) / _NEXT, Path(out))  # pinned first: readers sent there mid-switch keep it
    write_atomic(Path(out) / _NEXT / _COMMITTED, json.dumps(sorted(sets)))  # the commit point
    _finish_switch(out)


def _finish_switch(out: Path) -> None:
    """Move a committed ``.next/`` into place (a no-op when no switch is under way)."""
    out = Path(out)
    nxt, previous = out / _NEXT, out / _PREVIOUS
    sets = _committed(nxt)
    if sets is None:
        return
    previous.mkdir(exist_ok=True)
    for name in _SETS:
        staged = nxt / name
        if (staged.exists() or name not in sets) and (out / name).exists():
            shutil.rmtree(previous / name, ignore_errors=True)  # (a switch cut short before)
            (out / name).rename(previous / name)  # the old generation's set goes
        if staged.exists():
            staged.rename(out / name)
    shutil.rmtree(nxt)
    shutil.rmtree(previous, ignore_errors=True)
    _pin(out, out)


def _run_of(folder: Path) -> str | None:
    """The ``run`` a set folder's manifest names (``write_video_shards`` sets), or None."""
    from datakit.core import manifest

    try:
        man = manifest.read_manifest(folder)
    except (DataError, OSError):
        return None
    runs = {s.get("run") for s in (man or {"sets": {}})["sets"].values()}
    runs.discard(None)
    return runs.pop() if len(runs) == 1 else None


def _listed(folder: Path) -> list[str]:
    from datakit.core import manifest

    man = manifest.read_manifest(folder) or {"sets": {}}
    return [manifest.MANIFEST] + [e["file"] for s in man["sets"].values() for e in s["files"]]


def _pin(holder: Path, out: Path) -> None:
    """Hard-link the sets in ``holder`` (``out`` or ``out/.next``) under
    ``out/.generations/<run>/``; remove the pinned generations replaced long ago. Where hard
    links cannot be made (some network or FAT file systems), nothing is pinned and readers
    read ``out/<set>``."""
    pinned = out / _PINNED
    runs = {name: _run_of(holder / name) for name in _SETS if (holder / name).is_dir()}
    run = next(iter(set(runs.values())), None) if len(set(runs.values())) == 1 else None
    if run is None:
        return
    target = pinned / run
    if not target.exists():
        staging = pinned / f".{run}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            for name in runs:
                (staging / name).mkdir(parents=True)
                for f in _listed(holder / name):
                    os.link(holder / name / f, staging / name / f)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return
        staging.rename(target)
    try:  # [run, the time it was replaced or None], oldest first
        order = [list(o) for o in json.loads((pinned / _ORDER).read_text())]
    except (OSError, ValueError, TypeError):
        order = []
    now = time.time()
    order = [[r, t if t is not None else now] for r, t in order if r != run] + [[run, None]]
    kept = [o for k, o in enumerate(order)
            if k >= len(order) - _KEEP or now - o[1] < GRACE_S]
    write_atomic(pinned / _ORDER, json.dumps(kept))
    names = {r for r, _ in kept} | {_ORDER}
    for entry in os.scandir(pinned):  # replaced long ago, or a pin a killed writer left
        if entry.name not in names:
            shutil.rmtree(entry.path, ignore_errors=True)


def _pinned_copy(directory: Path, out: Path) -> Path:
    """``directory``'s pinned copy in ``out/.generations/`` when it holds the very files
    ``directory`` holds now (the same inodes: nothing was changed by hand since), else
    ``directory`` itself."""
    for _ in range(5):  # a switch between reading the run and comparing: look again
        run = _run_of(directory)
        if run is None:
            return directory
        copy = out / _PINNED / run / directory.name
        try:
            if all(os.path.samefile(directory / f, copy / f) for f in _listed(directory)):
                return copy
        except (OSError, DataError):
            pass
        if _run_of(directory) == run:  # not switched meanwhile: changed by hand, or not pinned
            break
    return directory


def current(directory: str | os.PathLike) -> Path:
    """Where the current generation's set named like ``directory`` is, for a reader to keep:
    its pinned copy (the same files, under a name no later run reuses), ``directory``
    itself, or, while a committed switch is under way, its copy in ``.next/``."""
    directory = Path(directory)
    sets = _committed(directory.parent / _NEXT)
    if sets is None or directory.name not in _SETS:
        return _pinned_copy(directory, directory.parent) if directory.name in _SETS \
            else directory
    if directory.name not in sets:
        raise DataError(str(directory), "is not part of the last conversion into "
                        f"{directory.parent} (it wrote {' and '.join(sets)} only); read those, "
                        "or run write_video_shards again with a validation_split")
    staged = directory.parent / _NEXT / directory.name
    return _pinned_copy(staged if staged.exists() else directory, directory.parent)


def switching_in(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` is a set that a committed switch, stopped half done, has not
    moved into place yet (its copy still in ``.next/``: :func:`current` reads it there)."""
    directory = Path(directory)
    sets = _committed(directory.parent / _NEXT)
    return sets is not None and directory.name in sets and (directory.parent / _NEXT /
                                                            directory.name).is_dir()


def _committed(nxt: Path) -> list[str] | None:
    """The sets a committed ``.next/`` holds; ``None`` if there is no commit under way."""
    try:
        return list(json.loads((nxt / _COMMITTED).read_text()))
    except FileNotFoundError:
        return None
