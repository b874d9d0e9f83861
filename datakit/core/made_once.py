"""A folder of generated data that several processes may ask for at once: made once, whole.

Two notebooks (or two processes of any kind) that want the same generated data set in
the kit's per-user data folder must not both write into it: one would read a file the
other is still writing, or delete it. :func:`make_folder_once` makes such a folder
under a lock file beside it (``.<name>.lock``, the ``filelock`` package: Linux, macOS
and Windows), into a hidden temporary folder that is renamed to the final name only
when complete; a note beside it (``.<name>.made.json``: the recipe and the files made)
is written last. The first process makes it; the others wait for the lock, find it
made with the same recipe, and use it. A process killed while making leaves only its
temporary folder, which the next maker removes. Nothing is added inside the folder, so
code that lists it sees only the data.

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


def _move_into(made: Path, folder: Path, *, ours: bool) -> None:
    """Put a made folder at ``folder``: one rename, or file by file into a folder of yours."""
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()  # an empty folder (a fresh temporary one): take its place
    if not folder.exists():
        os.replace(made, folder)
    elif ours:  # made here before with another recipe: replace it whole
        aside = temporary_path(folder)
        os.replace(folder, aside)
        os.replace(made, folder)
        shutil.rmtree(aside, ignore_errors=True)
    else:  # a folder that holds other files: each made file replaces its name, atomically
        for path in sorted(made.rglob("*")):
            if path.is_file():
                target = folder / path.relative_to(made)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)


def make_folder_once(folder: str | os.PathLike, make: Callable[[Path], list] | None, *,
                     recipe: dict) -> list[Path]:
    """Make ``folder`` with ``make(temporary folder)`` unless it was made with ``recipe``.

    ``make`` writes the data set into the empty folder it is given and returns the
    paths of the files it wrote there; the call returns the same paths under ``folder``.
    ``recipe`` (JSON-able: what the data set is made from) is noted beside the folder
    (:func:`stamp_path`): a later call with the same recipe uses the folder as it is
    (when every file made is still there), one with another recipe makes it again.
    While one process makes it, another waits for the lock, then uses what the first
    made. If ``folder`` exists and holds files that no maker put there, the made files
    are moved in file by file (each atomically).
    """
    folder = Path(folder)
    if not isinstance(recipe, dict):
        raise TypeError(f"recipe must be a dict of what the data is made from, got "
                        f"{type(recipe).__name__}")
    wanted = json.loads(json.dumps(recipe, sort_keys=True, default=str))
    folder.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(folder.parent / f".{folder.name}.lock"):
        stamp = _stamp(folder)
        if stamp is not None and stamp.get("recipe") == wanted and folder.is_dir() and all(
                (folder / name).is_file() for name in stamp.get("files", [])):
            return [folder / name for name in stamp["files"]]
        if make is None:
            raise FileNotFoundError(f"{folder}: not made with recipe {wanted}, and no maker "
                                    "was given: pass the function that makes it")
        _remove_dead_makers(folder)
        tmp = temporary_path(folder)
        tmp.mkdir()
        try:
            names = [Path(p).resolve().relative_to(tmp.resolve()).as_posix() for p in make(tmp)]
            stamp_path(folder).unlink(missing_ok=True)  # from here, not a made folder
            _move_into(tmp, folder, ours=stamp is not None)
            write_atomic(stamp_path(folder), json.dumps({"recipe": wanted, "files": names},
                                                        indent=1))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return [folder / name for name in names]
