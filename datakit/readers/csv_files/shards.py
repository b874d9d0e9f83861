"""CSV shards on disk: write a table into N files atomically, and check files before reading.

- :func:`write_shards` writes the rows of a table into N CSV files, a header
  line each, under a temporary name then renamed, and records the row counts
  in ``manifest.json``; :func:`split_into_shards` shuffles the rows with a
  seed and splits them into train / valid / test shards.
- :func:`check_files` resolves paths and glob patterns and reports, up front,
  missing files, patterns that match nothing, empty files, differing headers
  and files that disagree with their manifest (:mod:`datakit.core.manifest`: a
  truncated, changed, missing or extra file is an error, never a short epoch).
  Blank lines are skipped, as the ``csv`` module and pandas do.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> paths = write_shards({"x": [1.0, 2.0, None, 4.0], "y": [10.0, 20.0, 30.0, 40.0]},
...                      d, num_shards=2, prefix="toy")
>>> [os.path.basename(p) for p in paths]
['toy_00.csv', 'toy_01.csv']
>>> counts = {}
>>> files, columns = check_files(os.path.join(d, "toy_*.csv"), counts=counts)
>>> columns, sorted(counts.values())
(['x', 'y'], [2, 2])
"""

from __future__ import annotations

import csv as _csv
import os
from pathlib import Path
from typing import Any

import numpy as np

from datakit.core import manifest
from datakit.core.arguments import check_count
from datakit.core.atomic import removed_on_error, temporary_path
from datakit.core.errors import DataError
from datakit.core.paths import resolve_files

__all__ = ["write_shards", "split_into_shards", "check_files", "is_blank", "data_lines"]

# -- writing -------------------------------------------------------------------


def write_shards(table: Any, folder: str | Path, *, num_shards: int, prefix: str = "part",
                 columns: list[str] | None = None) -> list[str]:
    """Write the rows of ``table`` into ``num_shards`` CSV files, a header line each.

    The files are committed as one set (:func:`datakit.core.manifest.write_set`):
    a reader sees the previous set or this one, never a mix, and the row
    counts, sizes and sha256 go to ``folder/manifest.json``. Blank lines are
    dropped. Returns the paths, in order: the same names on every
    rewrite (the manifest's ``generation`` tells the versions apart).

    Args:
        table: a pandas DataFrame, a dict of columns, a 2-D array (give
            ``columns``), or the path of a CSV file (its lines are copied verbatim).
        folder: where the shards go (created if needed).
        num_shards: how many files (>= 1); rows are split evenly, in order.
        prefix: file names are ``{prefix}_00.csv``, ``{prefix}_01.csv``, ...
        columns: column names for a 2-D array.

    Raises:
        TypeError: ``num_shards`` is not an int.
        ValueError: ``num_shards < 1``, or a table without a header.
    """
    header, lines = _table_lines(table, columns)
    check_count("num_shards", num_shards)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with removed_on_error(folder) as made:  # a full disk: named, and its space freed
        spec = _stage(folder, prefix, header, lines, range(len(lines)), num_shards, made)
        return [str(folder / n) for n in _commit(folder, {prefix: spec})[prefix]]


def _stage(folder: Path, prefix: str, header: str, lines: list[str], order, num_shards: int,
           made: list) -> dict:
    """Write one part's shards as complete temporary files (each added to ``made`` first);
    the set's manifest keywords."""
    staged, counts = {}, {}
    for chunk in np.array_split(np.asarray(order, dtype=np.int64), num_shards):
        name = f"{prefix}_{len(staged):02d}.csv"
        staged[name] = tmp = temporary_path(folder / name)
        made.append(tmp)
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            f.write("".join([header + "\n"] + [lines[j] + "\n" for j in chunk]))
        counts[name] = len(chunk)
    return dict(staged=staged, counts=counts, kind="csv", unit="rows",
                pattern=f"{prefix}_[0-9][0-9]*.csv")


def _commit(folder: Path, specs: dict) -> dict[str, list[str]]:
    try:
        return manifest.write_sets(folder, specs)
    finally:  # on success they were renamed; on failure nothing of them stays
        for spec in specs.values():
            for tmp in spec["staged"].values():
                tmp.unlink(missing_ok=True)


def split_into_shards(table: Any, folder: str | Path, *, fractions=(0.8, 0.1, 0.1),
                      num_shards=(20, 10, 10), names=("train", "valid", "test"),
                      seed: int = 42, columns: list[str] | None = None) -> dict[str, list[str]]:
    """Shuffle the rows with ``seed``, split them by ``fractions``, write each part as shards.

    Returns ``{"train": [paths], "valid": [...], "test": [...]}``; every row
    goes to exactly one file. All parts are committed in one switch of the
    manifest, so a re-split that is killed leaves the old split whole.

    Args:
        table, columns: as in :func:`write_shards`.
        folder: where all parts' shards go.
        fractions: the share of rows per part (>= 0, summing to 1).
        num_shards: files per part, one int >= 1 each.
        names: the parts' names (and file prefixes).
        seed: seeds the row shuffle.

    Raises:
        ValueError: parts of different lengths, bad fractions or shard counts
            (all checked before anything is written).
    """
    if not len(fractions) == len(num_shards) == len(names):
        raise ValueError("fractions, num_shards and names need one entry per part.")
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-9:
        raise ValueError(f"fractions={fractions} must be >= 0 and sum to 1.")
    if any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in num_shards):
        raise ValueError(f"num_shards={num_shards}: pass one int >= 1 per part "
                         "(checked before anything is written).")
    header, lines = _table_lines(table, columns)
    order = np.random.default_rng(seed).permutation(len(lines))
    bounds = np.round(np.cumsum((0,) + tuple(fractions)) * len(lines)).astype(int)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with removed_on_error(folder) as made:  # a full disk: named, and its space freed
        specs = {name: _stage(folder, name, header, lines, order[lo:hi], n, made)  # one switch
                 for name, n, lo, hi in zip(names, num_shards, bounds[:-1], bounds[1:],
                                            strict=True)}
        return {name: [str(folder / f) for f in files]
                for name, files in _commit(folder, specs).items()}


def _table_lines(table: Any, columns: list[str] | None) -> tuple[str, list[str]]:
    if isinstance(table, (str, Path)):
        with open(table, newline="", encoding="utf-8-sig") as f:
            text = [line.rstrip("\r") for line in f.read().split("\n")]
        if not text[0]:
            raise ValueError(f"{table}: the file is empty; a CSV needs a header line.")
        return text[0], [line for line in text[1:] if not is_blank(line)]
    import pandas as pd
    if isinstance(table, np.ndarray):
        if table.ndim != 2 or columns is None or len(columns) != table.shape[1]:
            raise ValueError("A NumPy table must be 2-D; pass columns=[one name per column].")
        table = pd.DataFrame(table, columns=columns)
    elif isinstance(table, dict):
        table = pd.DataFrame(table)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"Cannot write a {type(table).__name__}: pass a DataFrame, a dict of "
                        "columns, a 2-D array with columns=..., or a CSV path.")
    text = table.to_csv(index=False, lineterminator="\n").splitlines()
    return text[0], text[1:]


# -- checking files up front ---------------------------------------------------


def is_blank(line: str | bytes) -> bool:
    """Whether a line is blank (ASCII whitespace only): skipped, as the csv module does."""
    return not line.strip(b" \t\r\n\v\f" if isinstance(line, bytes) else " \t\r\n\v\f")


def data_lines(data: bytes) -> int:
    """The number of rows in a CSV file's bytes: non-blank lines after the header."""
    lines = data.split(b"\n")
    return sum(1 for line in lines[1:] if not is_blank(line))


def check_files(filepaths: str | Path | list, *, counts: dict | None = None,
                blank: set | None = None) -> tuple[list[str], list[str]]:
    """Resolve paths and glob patterns; return ``(sorted files, header columns)``.

    Paths are resolved by :func:`datakit.core.paths.resolve_files` (an existing
    file literally, each file once). Raises, naming the file: a path that
    does not exist or is a folder, a pattern that matches nothing, an empty
    file, a header-only file, bytes that are not UTF-8, a header that differs
    from the first file's, a file that disagrees with its ``manifest.json``
    (rows, bytes, sha256, or a set that lists other files). Blank lines are
    skipped, as the ``csv`` module and pandas do. ``counts``, if given,
    receives the number of rows of each file; ``blank``, if given, receives
    the files that hold a blank line between the header and the last line
    (so a reader knows, without reading them again, which files need it
    to skip blank lines).
    """
    files = resolve_files(filepaths)
    header = None
    manifests: dict[Path, dict | None] = {}  # each folder's manifest, read once
    kept, total = [], 0
    for path in files:
        folder, name = Path(path).parent, Path(path).name
        if folder not in manifests:
            manifests[folder] = manifest.read_manifest(folder)
        if name in manifest.ignored_names(manifests[folder]):
            if not glob_matched(path, filepaths):
                raise DataError(path, "left over by a writer that was interrupted; the "
                                f"folder's {manifest.MANIFEST} does not list it: write the set "
                                "again, or read the files it lists")
            continue  # a pattern matched a killed writer's file: not part of any set
        with open(path, "rb") as f:
            data = f.read()
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]  # a UTF-8 byte order mark: not part of the first column's name
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise DataError(path, f"byte {data[e.start]:#04x} is not UTF-8 ({e.reason}); save "
                            "the file as UTF-8 (e.g. pandas: encoding='latin-1' to read, then "
                            "to_csv)", line=line, offset=e.start) from None
        if not data.strip():
            raise DataError(path, "the file is empty; every shard needs a header line")
        first = data.split(b"\n", 1)[0].rstrip(b"\r").decode()
        if header is None:
            header, first_file = first, path
        elif first != header:
            raise DataError(path, f"its header {_shown(first)} differs from {_shown(header)} in "
                            f"{first_file}; all shards must have the same columns", line=1)
        rows = data_lines(data)
        total += rows
        if blank is not None and any(is_blank(line) for line in data.split(b"\n")[1:-1]):
            blank.add(path)
        if manifest.set_of_file(manifests[folder], name) is not None:
            manifest.check(folder, files=[name], counts={name: rows}, man=manifests[folder])
        kept.append(path)
        if counts is not None:
            counts[path] = rows
    if not kept:
        raise FileNotFoundError(f"{filepaths!r}: only files left over by an interrupted writer "
                                "match; write the set again")
    if total == 0:
        raise DataError(kept[0], f"{'every file holds' if len(kept) > 1 else 'the file holds'} "
                        "a header but no rows: there is nothing to read", line=2)
    return sorted(kept), next(_csv.reader([header]))


def _shown(header: str) -> str:
    """A header in backticks, or its repr when a difference would not be visible."""
    return f"`{header}`" if header.isprintable() and header == header.strip() else repr(header)


def glob_matched(path: str, filepaths) -> bool:
    """Whether ``path`` came from a pattern rather than being named itself."""
    items = [filepaths] if isinstance(filepaths, (str, os.PathLike)) else list(filepaths)
    return not any(os.path.realpath(os.fspath(i)) == os.path.realpath(path) for i in items)
