"""CSV shards on disk: write a table into N files atomically, and check files before reading.

- :func:`write_shards` writes the rows of a table into N CSV files, a header
  line each, under a temporary name then renamed, and records the row counts
  in ``manifest.json``; :func:`split_into_shards` shuffles the rows with a
  seed and splits them into train / valid / test shards.
- :func:`check_files` resolves paths and glob patterns and reports, up front,
  missing files, patterns that match nothing, empty files, differing headers
  and files shorter than their manifest says (a truncated file is an error,
  never a short epoch).

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
import glob
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from datakit.checks import check_count

__all__ = ["write_shards", "split_into_shards", "check_files"]

# -- writing -------------------------------------------------------------------


def write_shards(table: Any, folder: str | Path, *, num_shards: int, prefix: str = "part",
                 columns: list[str] | None = None) -> list[str]:
    """Write the rows of ``table`` into ``num_shards`` CSV files, a header line each.

    Each file is written under a temporary name, then renamed; the row counts
    go to ``folder/manifest.json``. Returns the paths, in order.

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
    paths, counts = [], {}
    for i, chunk in enumerate(np.array_split(np.arange(len(lines)), num_shards)):
        path = folder / f"{prefix}_{i:02d}.csv"
        _atomic_write(path, "".join([header + "\n"] + [lines[j] + "\n" for j in chunk]))
        paths.append(str(path))
        counts[path.name] = len(chunk)
    _update_manifest(folder, counts)
    return paths


def split_into_shards(table: Any, folder: str | Path, *, fractions=(0.8, 0.1, 0.1),
                      num_shards=(20, 10, 10), names=("train", "valid", "test"),
                      seed: int = 42, columns: list[str] | None = None) -> dict[str, list[str]]:
    """Shuffle the rows with ``seed``, split them by ``fractions``, write each part as shards.

    Returns ``{"train": [paths], "valid": [...], "test": [...]}``; every row
    goes to exactly one file.

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
    out = {}
    for name, n, lo, hi in zip(names, num_shards, bounds[:-1], bounds[1:]):
        part = _Lines(header, [lines[j] for j in order[lo:hi]])
        out[name] = write_shards(part, folder, num_shards=n, prefix=name)
    return out


@dataclass
class _Lines:
    header: str
    lines: list[str]


def _table_lines(table: Any, columns: list[str] | None) -> tuple[str, list[str]]:
    if isinstance(table, _Lines):
        return table.header, table.lines
    if isinstance(table, (str, Path)):
        with open(table, newline="") as f:
            text = f.read().splitlines()
        if not text:
            raise ValueError(f"{table}: the file is empty; a CSV needs a header line.")
        return text[0], [line for line in text[1:]]
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


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def _update_manifest(folder: Path, counts: dict[str, int]) -> None:
    path = folder / "manifest.json"
    old = json.loads(path.read_text()) if path.exists() else {"rows": {}}
    old["rows"].update(counts)
    _atomic_write(path, json.dumps(old, indent=1, sort_keys=True) + "\n")


# -- checking files up front ---------------------------------------------------


def check_files(filepaths: str | Path | list, *, counts: dict | None = None
                ) -> tuple[list[str], list[str]]:
    """Resolve paths and glob patterns; return ``(sorted files, header columns)``.

    Raises, naming the file: a path that does not exist, a pattern that
    matches nothing, an empty file (not even a header), a header that differs
    from the first file's, a file with fewer rows than its ``manifest.json``.
    ``counts``, if given, receives the number of data lines of each file.
    """
    items = [filepaths] if isinstance(filepaths, (str, Path)) else list(filepaths)
    if not items:
        raise ValueError("No files given: pass a path, a glob pattern, or a list of them.")
    files: list[str] = []
    for item in map(str, items):
        if glob.has_magic(item):
            found = sorted(glob.glob(item))
            if not found:
                raise FileNotFoundError(f"The pattern {item!r} matches no file; check the folder "
                                        "and that the shards were written.")
            files += found
        elif not os.path.isfile(item):
            raise FileNotFoundError(f"{item}: no such file.")
        else:
            files.append(item)
    files = list(dict.fromkeys(files))  # in the order given: the first file sets the header
    header = None
    manifests: dict[Path, dict | None] = {}  # each folder's manifest, read once
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        if not data.strip():
            raise ValueError(f"{path}: the file is empty; every shard needs a header line.")
        first = data.split(b"\n", 1)[0].rstrip(b"\r").decode()
        if header is None:
            header, first_file = first, path
        elif first != header:
            raise ValueError(f"{path}: its header `{first}` differs from `{header}` in "
                             f"{first_file}; all shards must have the same columns.")
        rows = data.count(b"\n") + (not data.endswith(b"\n")) - 1
        _check_manifest(path, rows, manifests)
        if counts is not None:
            counts[path] = rows
    return sorted(files), next(_csv.reader([header]))


def _check_manifest(path: str, rows: int, manifests: dict[Path, dict | None]) -> None:
    manifest = Path(path).parent / "manifest.json"
    if manifest not in manifests:
        manifests[manifest] = json.loads(manifest.read_text()) if manifest.exists() else None
    if manifests[manifest] is None:
        return
    expected = manifests[manifest]["rows"].get(Path(path).name)
    if expected is not None and rows != expected:
        raise ValueError(f"{path}: {rows} rows, but {manifest.name} says {expected}; "
                         "the file is truncated or was changed after writing. Write it again.")
