"""The one file-set check every reader runs before its first element: files, rows, manifest.

:func:`check_file_set` resolves paths and glob patterns
(:func:`datakit.core.paths.resolve_files`), reads each folder's
``manifest.json`` once (:class:`FolderManifests`), leaves out files a killed
writer left (an error when such a file is named itself), hands each file to
the format's own check (``check_file(path) -> FileFacts``: its rows, whether it
holds blank lines, what every file must share), checks each file a manifest
lists against it (rows, bytes, sha256: a truncated, changed or extra file is an
error, never a short epoch), and returns a :class:`FileSet`:

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> for name, rows in (("a.txt", 2), ("b.txt", 3)):
...     _ = open(os.path.join(d, name), "w").write("row\\n" * rows)
>>> def lines(path):
...     return FileFacts(rows=open(path).read().count("\\n"), shape="lines")
>>> found = check_file_set(os.path.join(d, "*.txt"), lines)
>>> [os.path.basename(f) for f in found.files], found.total, found.shape
(['a.txt', 'b.txt'], 5, 'lines')
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.core.paths import FilesArg, resolve_files

__all__ = ["FileSet", "check_file_set"]


@dataclass(frozen=True)
class FileFacts:
    """What a format's check of one file found."""

    #: Rows (records) in the file; ``None``: not counted by this check.
    rows: int | None = None
    #: Whether the file holds a blank line among its rows (text formats).
    blank: bool = False
    #: What every file of the set must share (a header's columns, a schema).
    shape: Any = None


@dataclass(frozen=True)
class FileSet:
    """Checked files: sorted, with their rows, blank-line files and manifest entries."""

    files: list[str]
    #: ``{file: rows}`` for every file whose rows the check counted.
    rows: dict[str, int] = field(default_factory=dict)
    #: The files holding a blank line among their rows (a reader must skip them).
    blank: frozenset[str] = frozenset()
    #: ``{file: its manifest entry, with its set's name under "set"}`` for the listed files.
    entries: dict[str, dict] = field(default_factory=dict)
    #: What the files share (the first file's ``FileFacts.shape``).
    shape: Any = None

    @property
    def total(self) -> int:
        """Rows in one pass over the files (the counted ones)."""
        return sum(self.rows.values())


class FolderManifests:
    """Each folder's ``manifest.json``, read once however many of its files are looked at."""

    def __init__(self) -> None:
        self._by_folder: dict[Path, dict | None] = {}

    def of(self, path: str | os.PathLike) -> dict | None:
        """The manifest of the folder holding ``path`` (``None`` if it has none)."""
        folder = Path(path).parent
        if folder not in self._by_folder:
            self._by_folder[folder] = manifest.read_manifest(folder)
        return self._by_folder[folder]

    def entry(self, path: str | os.PathLike) -> dict | None:
        """The manifest entry of ``path`` (with its set's name and options), or ``None``."""
        man, name = self.of(path), Path(path).name
        set_name = manifest.set_of_file(man, name)
        if man is None or set_name is None:  # no manifest lists no set
            return None
        s = man["sets"][set_name]
        found = next(e for e in s["files"] if e["file"] == name)
        return dict(found, set=set_name, compression=s.get("compression"))


def check_file_set(filepaths: FilesArg, check_file: Callable[[str], FileFacts] | None = None, *,
                   no_rows: Callable[[list[str]], Exception] | None = None,
                   sort: bool = True, suffix: str = ".csv") -> FileSet:
    """Resolve and check a set of files up front; see the module docstring.

    Args:
        filepaths: a path, a glob pattern, or a list of them.
        check_file: the format's check of one file (raises, naming it); ``None``:
            the files are only resolved and matched with their manifests.
        no_rows: the error to raise when the files hold no row at all (given the
            files kept); ``None``: an empty set is the caller's business.
        sort: return the files sorted (else in the order given).
        suffix: the files' suffix, for the pattern a folder's message suggests.

    Raises:
        FileNotFoundError: a path or pattern names no file, or only a killed
            writer's files match.
        DataError: a file the format's check refuses, a killed writer's file
            named itself, a file that disagrees with its manifest, or ``no_rows``.
    """
    files = resolve_files(filepaths, suffix=suffix)
    manifests = FolderManifests()
    kept: list[str] = []
    rows: dict[str, int] = {}
    blank: set[str] = set()
    entries: dict[str, dict] = {}
    shape: Any = None
    for path in files:
        man, name = manifests.of(path), Path(path).name
        if name in manifest.ignored_names(man):
            if named_itself(path, filepaths):
                raise DataError(path, "left over by a writer that was interrupted; the "
                                f"folder's {manifest.MANIFEST} does not list it: write the set "
                                "again, or read the files it lists")
            continue  # a pattern matched a killed writer's file: not part of any set
        facts = check_file(path) if check_file else FileFacts()
        entry = manifests.entry(path)
        if entry is not None:
            entries[path] = entry
            if check_file is not None:
                manifest.check(Path(path).parent, files=[name],
                               counts=None if facts.rows is None else {name: facts.rows},
                               man=man)
        if facts.rows is not None:
            rows[path] = facts.rows
        if facts.blank:
            blank.add(path)
        shape = facts.shape if not kept else shape
        kept.append(path)
    if not kept:
        raise FileNotFoundError(f"{filepaths!r}: only files left over by an interrupted writer "
                                "match; write the set again")
    if no_rows is not None and rows and not sum(rows.values()):
        raise no_rows(kept)
    return FileSet(sorted(kept) if sort else kept, rows, frozenset(blank), entries, shape)


def named_itself(path: str, filepaths: FilesArg) -> bool:
    """Whether ``path`` was named itself in ``filepaths`` rather than matched by a pattern."""
    items = [filepaths] if isinstance(filepaths, (str, os.PathLike)) else list(filepaths)
    return any(os.path.realpath(os.fspath(i)) == os.path.realpath(path) for i in items)
