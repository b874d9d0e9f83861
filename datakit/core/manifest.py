"""One manifest format for every set of files the kit writes, and one function that checks it.

A folder holds one ``manifest.json``; it can describe several *sets* (the
``train``, ``valid`` and ``test`` CSV shards, a set of TFRecord shards) under
their names, so writers of different sets never erase each other's entries::

    {"format": "datakit-manifest", "version": 1,
     "sets": {"part": {"kind": "csv", "unit": "rows", "generation": 1,
                       "pattern": "part_*.csv", "compression": null,
                       "files": [{"file": "part_00.csv", "rows": 2, "bytes": 25,
                                  "sha256": "..."}, ...],
                       "totals": {"files": 2, "rows": 4, "bytes": 50},
                       "replaced": []}},
     "pending": []}

Readers trust only the files a set lists. :func:`check` verifies, naming
the file: the totals agree with the entries, every listed file is there
with its byte size, sha256 and count, and no unlisted file of the set's
``pattern`` sits beside them. So a missing, extra, truncated or changed file
is a :class:`~datakit.core.errors.DataError`, never a short epoch. ``pending``
(files of a commit not yet switched to) and a set's ``replaced`` (files of the
previous generation, not yet deleted) are what a killed writer may leave:
readers ignore them, the next writer (:func:`write_set`) deletes them.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, ".a.tmp"), "w") as f:
...     _ = f.write("x,y\\n1,2\\n")
>>> write_set(d, "a", {"a_0.csv": os.path.join(d, ".a.tmp")}, {"a_0.csv": 1},
...           kind="csv", unit="rows", pattern="a_*.csv")
['a_0.csv']
>>> read_manifest(d)["sets"]["a"]["totals"]
{'files': 1, 'rows': 1, 'bytes': 8}
>>> [os.path.basename(e["path"]) for e in check(d)]
['a_0.csv']
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from datakit.core.atomic import (
    clean_leftovers,
    commit_set,
    folder_lock,
    fsync_folder,
    remove_unless_open,
    write_atomic,
)
from datakit.core.errors import DataError

__all__ = ["sha256", "check"]

MANIFEST = "manifest.json"
FORMAT = "datakit-manifest"
VERSION = 1


def sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file, read in 1 MB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(folder: str | os.PathLike) -> dict | None:
    """The folder's manifest, or None if it has none; a :class:`DataError` if it is unreadable."""
    path = Path(folder) / MANIFEST
    try:
        man = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(path, f"the manifest is not valid JSON ({e}); write the set again") \
            from None
    if not isinstance(man, dict) or man.get("format") != FORMAT:
        raise DataError(path, f"not a {FORMAT} manifest (written by an older datakit or by "
                        "hand); write the set again with the kit's writer")
    if man.get("version") != VERSION:
        raise DataError(path, f"manifest version {man.get('version')!r}; this kit reads "
                        f"version {VERSION}: write the set again")
    sets = man.get("sets")
    if not isinstance(sets, dict):
        raise DataError(path, "the manifest has no `sets`: it lists no files; write the set "
                        "again")
    for name, s in sets.items():
        if not isinstance(s, dict) or not isinstance(s.get("files"), list) \
                or not isinstance(s.get("totals"), dict) \
                or s.get("unit") not in ("rows", "records"):
            raise DataError(path, f"set {name!r} lacks `files`, `totals` or `unit`; write it "
                            "again")
    return man


def ignored_names(man: dict | None) -> set[str]:
    """Names a killed writer left (``pending`` or ``replaced``): no reader trusts them."""
    if not man:
        return set()
    return set(man.get("pending", [])) | {n for s in man["sets"].values()
                                          for n in s.get("replaced", [])}


def set_of_file(man: dict | None, name: str) -> str | None:
    """The name of the set that lists file ``name``, or None."""
    for set_name, s in (man or {"sets": {}})["sets"].items():
        if any(e.get("file") == name for e in s["files"]):
            return set_name
    return None


def _fresh(folder: Path) -> dict:
    try:
        man = read_manifest(folder)
    except DataError:  # an older layout or a damaged file: this writer starts a new one
        man = None
    return man or {"format": FORMAT, "version": VERSION, "sets": {}}


def write_set(folder: str | os.PathLike, name: str, staged: dict, counts: dict, *, kind: str,
              unit: str, pattern: str, overwrite: bool = True, **extra: Any) -> list[str]:
    """Commit the complete temporary files ``staged`` (wanted name -> temp path) as set ``name``.

    ``counts``: wanted name -> rows or records; ``pattern``: a glob that
    every file of the set matches (and no other); ``digests`` (optional): wanted
    name -> the SHA-256 of its staged file, where the writer hashed it while writing
    (the file is then not read again here). The previous generation of
    the set, and whatever a killed writer left in the folder, is deleted;
    other sets in the manifest are kept. Returns the new file names: the wanted
    names, the same across rewrites (the set's ``generation`` counts them).
    ``overwrite=False``: refuse (:class:`FileExistsError`, nothing changed) when the
    folder already holds the set, looked at under the folder's lock, so that of two
    writers started into one empty folder the second to commit fails instead of
    silently replacing the first one's files.
    """
    spec = dict(staged=staged, counts=counts, kind=kind, unit=unit, pattern=pattern, **extra)
    return write_sets(folder, {name: spec}, overwrite=overwrite)[name]


def write_sets(folder: str | os.PathLike, specs: dict, *,
               overwrite: bool = True) -> dict[str, list[str]]:
    """Commit several sets (name -> ``write_set`` keywords) in one switch of the manifest."""
    folder = Path(folder)
    with folder_lock(folder):
        man = _fresh(folder)
        _check_overwrite(folder, man, specs, overwrite)
        clean_leftovers(folder, ignored_names(man))
        man["pending"] = []
        for s in man["sets"].values():
            s["replaced"] = []
        staged, listed, generations = {}, [], {}
        for name, spec in specs.items():
            old = man["sets"].get(name)
            listed += [e["file"] for e in old["files"]] if old else []
            generations[name] = old.get("generation", 1) + 1 if old else 1
            for w, tmp in spec["staged"].items():
                if w in staged:
                    raise ValueError(f"{w}: two sets would write the same file name")
                staged[w] = tmp
        owner = {w: name for name, spec in specs.items() for w in spec["staged"]}
        entries = {w: {"file": None, specs[owner[w]]["unit"]: int(specs[owner[w]]["counts"][w]),
                       "bytes": os.path.getsize(t),
                       "sha256": specs[owner[w]].get("digests", {}).get(w) or sha256(t)}
                   for w, t in staged.items()}
        finals_of: dict[str, list[str]] = {}

        def announce(finals: list[str]) -> None:
            man["pending"] = finals
            write_atomic(folder / MANIFEST, _dump(man))

        def switch(finals: list[str]) -> None:
            man["pending"] = []
            final = dict(zip(staged, finals, strict=True))
            for name, spec in specs.items():
                unit = spec["unit"]
                extra = {k: v for k, v in spec.items()
                         if k not in ("staged", "counts", "digests")}
                files = [dict(entries[w], file=final[w]) for w in spec["staged"]]
                totals = {"files": len(files), unit: sum(e[unit] for e in files),
                          "bytes": sum(e["bytes"] for e in files)}
                old = man["sets"].get(name)
                gone = sorted({e["file"] for e in old["files"]} - set(finals)) if old else []
                man["sets"][name] = dict(extra, generation=generations[name], files=files,
                                         totals=totals, replaced=gone)
                finals_of[name] = [final[w] for w in spec["staged"]]
            write_atomic(folder / MANIFEST, _dump(man))

        finals = commit_set(folder, staged, listed=listed,
                            generation=max(generations.values()), announce=announce,
                            switch=switch)
        _settle_names(folder, list(staged), finals, announce, switch)
        trusted = {e["file"] for s in man["sets"].values() for e in s["files"]}
        for entry in os.scandir(folder):  # strays of these sets' patterns (an older writer's)
            if entry.name not in trusted and any(
                    fnmatch.fnmatchcase(entry.name, spec["pattern"]) for spec in specs.values()):
                remove_unless_open(Path(entry.path))
        return finals_of


def files_held(folder: Path, man: dict[str, Any] | None, name: str,
               pattern: str) -> int | None:
    """How many files of set ``name`` (its files match ``pattern``) ``folder`` holds, or
    ``None`` when it does not hold the set: those its manifest ``man`` lists (a set listed
    with no file, 0, is held), else those of the set's exact pattern that no killed writer
    left. The one "already holds the set" rule: a writer's look before it writes and the
    commit's look under the folder's lock ask it alike, so a set ``a-b`` beside is never
    taken for set ``a``.
    """
    if man and name in man["sets"]:
        return len(man["sets"][name]["files"])
    left = ignored_names(man)
    there = sum(1 for e in os.scandir(folder)
                if fnmatch.fnmatchcase(e.name, pattern) and e.name not in left)
    return there or None


def _check_overwrite(folder: Path, man: dict[str, Any], specs: dict[str, Any],
                     overwrite: bool) -> None:
    """Unless ``overwrite``, a :class:`FileExistsError` if ``folder`` holds one of the sets
    ``specs`` (in its manifest, or files of its pattern that no killed writer left); the
    caller holds the folder's lock."""
    if overwrite:
        return
    for name, spec in specs.items():
        held = files_held(folder, man, name, spec["pattern"])
        if held is not None:
            raise FileExistsError(
                f"{folder} already holds set {name!r} ({held} file(s)), written by another "
                f"writer while this one wrote (overwrite=False): this writer's "
                f"{len(spec['staged'])} new file(s) are discarded and the set there is kept; "
                "pass overwrite=True to replace it, or write to another folder")


def _settle_names(folder: Path, wanted: list[str], finals: list[str],
                  announce: Callable[[list[str]], object],
                  switch: Callable[[list[str]], object]) -> None:
    """Give a rewritten set its names back: ``part_00.g2.csv`` becomes ``part_00.csv`` again.

    A second switch, as safe as the first: the wanted names (free since the old
    files went) are announced as not yet trusted, made hard links to the tagged
    files (same bytes, no copy), the manifest switches to them, then the tagged
    names go. A writer killed at any step leaves a manifest whose files are all
    there with the content it lists. So a name never changes across rewrites,
    and what it holds is told by the set's ``generation`` (which a checkpoint
    records: see :mod:`datakit.readers.checkpoints.checkpoint_fingerprint`).
    """
    # a wanted name a reader still holds open (Windows refuses to delete it) keeps its
    # tagged file: the set stays whole under the names the manifest lists
    moved = [(w, f) for w, f in zip(wanted, finals, strict=True)
             if w != f and remove_unless_open(folder / w)]  # not trusted by any manifest now
    if not moved:
        return
    names = [w if (w, f) in moved else f for w, f in zip(wanted, finals, strict=True)]
    announce(names)
    for w, f in moved:
        try:
            os.link(folder / f, folder / w)
        except OSError:  # no hard links here (some network or FAT file systems)
            shutil.copy2(folder / f, folder / w)
    fsync_folder(folder)
    switch(names)
    for _, f in moved:
        remove_unless_open(folder / f)
    fsync_folder(folder)


def _dump(man: dict) -> str:
    return json.dumps(man, indent=1) + "\n"


def check_entry(path: str | os.PathLike, entry: dict, *, unit: str, count: int | None = None,
                hash: bool = True) -> None:
    """Raise :class:`DataError` naming ``path`` if it disagrees with its manifest ``entry``:
    another byte size, another ``count`` of ``unit`` (when given) or another sha256."""
    size = os.path.getsize(path)
    if size != entry["bytes"]:
        raise DataError(path, f"has {size} bytes, manifest says {entry['bytes']}: "
                        "truncated or changed after writing")
    if count is not None and count != entry[unit]:
        raise DataError(path, f"{count} {unit}, but {MANIFEST} says {entry[unit]}: the file is "
                        "truncated or was changed after writing; write it again")
    if hash and sha256(path) != entry["sha256"]:
        raise DataError(path, "sha256 differs from the manifest: the file is corrupted")


def _sets_to_check(all_sets: dict, sets: Sequence[str] | None, files: Collection[str] | None,
                   kind: str | None, where: Path) -> list[str]:
    """The names :func:`check` checks: ``sets`` as given (each one the manifest's), or the
    sets listing one of ``files``, else every set of ``kind``, else all."""
    if sets is None:
        return [n for n, s in all_sets.items()
                if (files is not None and any(e["file"] in files for e in s["files"]))
                or (files is None and (kind is None or s.get("kind") == kind))]
    if isinstance(sets, str) or not isinstance(sets, (list, tuple)):
        raise TypeError(f"sets must be a list of set names, got {sets!r}: e.g. sets=['train']")
    unknown = [n for n in sets if n not in all_sets]
    if unknown:
        raise ValueError(f"sets={list(sets)!r}: {where} has no set {unknown[0]!r}; its sets are "
                         f"{sorted(all_sets)}.")
    return list(sets)


def check(folder: str | os.PathLike, *, sets: Sequence[str] | None = None,
          files: Collection[str] | None = None, counts: dict[str, int] | None = None,
          kind: str | None = None, hash: bool = True, man: dict | None = None) -> list[dict]:
    """Check sets of ``folder`` against its manifest; return the entries, each with its ``path``.

    ``sets``: set names (default: those listing one of ``files``, else every
    set of ``kind``, else all). ``files``: the file names being read (default:
    every listed file); only these are sized, hashed and counted. ``counts``: file
    name -> rows or records found by the caller, compared with the entries.
    Raises :class:`DataError` naming the file: totals that disagree with the
    entries, a listed file missing or of another size, sha256 or count, an
    unlisted file matching a set's pattern. A ``sets`` that is not a list, or names a set
    the manifest has not, is a ``TypeError`` / ``ValueError`` listing its sets.
    """
    folder = Path(folder)
    man = man if man is not None else read_manifest(folder)
    where = folder / MANIFEST
    if man is None:
        raise DataError(where, "no manifest here; write the files with the kit's writers, or "
                        "pass the files themselves")
    all_sets = man["sets"]
    sets = _sets_to_check(all_sets, sets, files, kind, where)
    ignored = ignored_names(man)
    present = sorted(e.name for e in os.scandir(folder) if not e.name.startswith("."))
    out = []
    for set_name in sets:
        s = all_sets[set_name]
        unit, entries = s["unit"], s["files"]
        totals = {"files": len(entries), unit: sum(e[unit] for e in entries),
                  "bytes": sum(e["bytes"] for e in entries)}
        if {k: s["totals"].get(k) for k in totals} != totals:
            raise DataError(where, f"set {set_name!r}: its totals {s['totals']} disagree with "
                            f"its file entries {totals}; the manifest was edited or damaged: "
                            "write the set again")
        listed = {e["file"] for e in entries}
        extra = [n for n in present if fnmatch.fnmatchcase(n, s.get("pattern", "\0"))
                 and n not in listed and n not in ignored and n != MANIFEST]
        if extra:
            raise DataError(folder / extra[0], f"matches set {set_name!r} but {MANIFEST} does "
                            f"not list it ({len(extra)} such file(s)); remove it or write the "
                            "set again")
        for e in entries:
            path = folder / e["file"]
            if not path.is_file():
                raise DataError(path, f"file is missing (listed in {MANIFEST})")
            if files is not None and e["file"] not in files:
                continue
            check_entry(path, e, unit=unit, hash=hash,
                        count=None if counts is None else counts.get(e["file"]))
            out.append(dict(e, path=str(path), set=set_name, unit=unit,
                            compression=s.get("compression")))
    return out
