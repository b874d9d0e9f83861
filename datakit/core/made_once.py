"""A folder of generated data that several processes may ask for at once: made once, whole.

Two notebooks (or two processes of any kind) that want the same generated data set in
the kit's per-user data folder must not both write into it: one would read a file the
other is still writing, or delete it. :func:`make_folder_once` makes such a folder
under a lock file beside it (``.<name>.lock``, the ``filelock`` package: Linux, macOS
and Windows), into a hidden temporary folder that is renamed to the final name only
when complete; a note beside it (``.<name>.made.json``: the recipe and the files made)
is written last. The first process makes it; the others wait for the lock, find it
made with the same recipe, and use it. A folder found made with the same recipe is only
read: no lock taken, nothing written, so a made folder on a read-only share can be used.
A process killed while making leaves only its temporary folder, which the next maker
removes. Nothing is added inside the folder, so code that lists it sees only the data;
files that you add to it stay there when it is made again with another recipe (the note
says which files the kit made).

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> def make(tmp):
...     (tmp / "a.txt").write_text("made")
...     return [tmp / "a.txt"]
>>> [p.relative_to(d).as_posix() for p in make_folder_once(d / "set", make, recipe={"n": 1})]
['set/a.txt']
>>> make_folder_once(d / "set", None, recipe={"n": 1})[0].read_text()  # made: not again
'made'

This module imports nothing from the kit but :mod:`datakit.core.atomic`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from datakit.core.atomic import file_lock, process_alive, temporary_path, write_atomic

__all__: list[str] = []

#: The name of the note beside a made folder (``.<name>`` + this): its recipe and its files.
STAMP = ".made.json"


def stamp_path(folder: str | os.PathLike) -> Path:
    """Where the note of ``folder`` is: ``.<name>.made.json`` beside it."""
    folder = Path(folder)
    return folder.parent / f".{folder.name}{STAMP}"


def _stamp(folder: Path) -> dict | None:
    try:
        stamp = json.loads(stamp_path(folder).read_text())
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def _remove_dead_makers(folder: Path) -> None:
    """Remove the temporary folders of makers of ``folder`` that died (killed mid-way)."""
    pattern = re.compile(rf"^\.{re.escape(folder.name)}\.(\d+)-[0-9a-f]+\.tmp$")
    for entry in os.scandir(folder.parent):
        m = pattern.match(entry.name)
        if m and not process_alive(int(m.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)


def _made_files(folder: Path, wanted: dict | None = None) -> list[Path] | None:
    """The files of ``folder`` if it was made (with recipe ``wanted``, when given) and every
    file made is still there; else None. Only reads: no lock, nothing created."""
    stamp = _stamp(folder)
    if stamp is None or (wanted is not None and stamp.get("recipe") != wanted) \
            or not folder.is_dir():
        return None
    files = [folder / name for name in stamp.get("files", [])]
    return files if all(p.is_file() for p in files) else None


def _move_into(made: Path, folder: Path, names: list[str], stamp: dict | None) -> None:
    """Put the made files ``names`` (in ``made``) at ``folder``: one rename for a missing or
    empty folder; else file by file, each atomically, keeping every file no maker put there.

    The kit's files are those the note ``stamp`` lists (a remake with another recipe
    deletes those the new recipe does not make). A file of yours where a made one goes is
    refused, naming it, before anything changes. While the files move, the note lists the
    old and the new ones with no recipe: a maker killed meanwhile leaves a folder that the
    next one remakes, knowing which files were the kit's.
    """
    ours = set(stamp.get("files", [])) if stamp else set()
    yours = [n for n in names if n not in ours and (folder / n).exists()]
    if yours:
        raise FileExistsError(
            f"{folder}: {len(yours)} file(s) there that no maker put there would be replaced "
            f"by made ones ({', '.join(yours[:5])}{', ...' if len(yours) > 5 else ''}): move "
            "them out of the folder, or make the data in another folder (nothing was changed)")
    write_atomic(stamp_path(folder), json.dumps({"recipe": None,
                                                 "files": sorted(ours | set(names))}, indent=1))
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()  # an empty folder (a fresh temporary one): take its place
    if not folder.exists():
        os.replace(made, folder)
        return
    for name in names:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(made / name, target)
    for name in sorted(ours - set(names)):  # the previous recipe's, not made again
        old = folder / name
        old.unlink(missing_ok=True)
        for parent in old.parents:  # the folders that held only the kit's files
            if parent == folder or not parent.is_relative_to(folder) or any(parent.iterdir()):
                break
            parent.rmdir()


def make_folder_once(folder: str | os.PathLike, make: Callable[[Path], list] | None, *,
                     recipe: dict) -> list[Path]:
    """Make ``folder`` with ``make(temporary folder)`` unless it was made with ``recipe``.

    ``make`` writes the data set into the empty folder it is given and returns the
    paths of the files it wrote there; the call returns the same paths under ``folder``.
    ``recipe`` (JSON-able: what the data set is made from) is noted beside the folder
    (:func:`stamp_path`): a later call with the same recipe uses the folder as it is
    (when every file made is still there), reading only (no lock, nothing written: a made
    folder on a read-only share can be used), and one with another recipe makes it again.
    While one process makes it, another waits for the lock, then uses what the first
    made. Files in ``folder`` that no maker put there (a video you added) stay, through
    every remake; the made files are then moved in file by file (each atomically), and a
    file of yours where a made one would go is refused (:class:`FileExistsError`, naming
    it).
    """
    folder = Path(folder)
    if not isinstance(recipe, dict):
        raise TypeError(f"recipe must be a dict of what the data is made from, got "
                        f"{type(recipe).__name__}")
    wanted = json.loads(json.dumps(recipe, sort_keys=True, default=str))
    made = _made_files(folder, wanted)
    if made is not None:  # made already: no lock to take (the share may be read-only)
        return made
    folder.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(folder.parent / f".{folder.name}.lock"):
        made = _made_files(folder, wanted)  # another process may have made it meanwhile
        if made is not None:
            return made
        if make is None:
            raise FileNotFoundError(f"{folder}: not made with recipe {wanted}, and no maker "
                                    "was given: pass the function that makes it")
        _remove_dead_makers(folder)
        tmp = temporary_path(folder)
        tmp.mkdir()
        try:
            names = [Path(p).resolve().relative_to(tmp.resolve()).as_posix() for p in make(tmp)]
            _move_into(tmp, folder, names, _stamp(folder))
            write_atomic(stamp_path(folder), json.dumps({"recipe": wanted, "files": names},
                                                        indent=1))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return [folder / name for name in names]
