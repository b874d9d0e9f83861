"""CSV shards on disk: write a table into N files atomically, with a manifest.

:func:`write_shards` writes the rows of a table into N CSV files, a header
line each, under a temporary name then renamed, and records the row counts
in ``manifest.json``; :func:`split_into_shards` shuffles the rows with a
seed and splits them into train / valid / test shards. Readers check the
files up front (:mod:`datakit.readers.csv_files.file_checks`).

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> paths = write_shards({"x": [1.0, 2.0, None, 4.0], "y": [10.0, 20.0, 30.0, 40.0]},
...                      d, num_shards=2, prefix="toy")
>>> [os.path.basename(p) for p in paths]
['toy_00.csv', 'toy_01.csv']
>>> open(paths[1]).read().splitlines()
['x,y', ',30.0', '4.0,40.0']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from datakit.core import manifest
from datakit.core.arguments import check_count, check_number, check_seed
from datakit.core.atomic import Staging
from datakit.core.paths import user_path
from datakit.core.progress import check_progress, progress_bar
from datakit.readers.csv_files.dialect import Dialect
from datakit.readers.csv_files.file_checks import check_one_row_per_line, is_blank

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["write_shards", "split_into_shards"]

# -- writing -------------------------------------------------------------------


def write_shards(table: Any, folder: str | Path, *, num_shards: int, prefix: str = "part",
                 columns: list[str] | None = None, delimiter: str = ",",
                 progress: bool | None = None) -> list[str]:
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
        num_shards: how many files (1 to the number of rows; an empty table makes one
            file of its header); rows are split evenly, in order.
        prefix: file names are ``{prefix}_00.csv``, ``{prefix}_01.csv``, ... (letters,
            digits, ``_``, ``-``, ``.``)
        columns: column names for a 2-D array, or for a CSV file without a
            header line (then its line 1 is a row, and the shards get a header
            of these names).
        delimiter: the one character between fields: what the shards are
            written with (read them with ``column_stats(..., delimiter=...)``),
            or for a CSV file, what it is written with (its lines are copied).
        progress: a bar over the shards written (:mod:`datakit.core.progress`): ``None``
            (default) shows it in a notebook or a terminal once writing lasts a second,
            ``True`` always, ``False`` never.

    Raises:
        TypeError: ``num_shards`` is not an int; ``progress`` not a bool or ``None``.
        ValueError: ``num_shards < 1`` or more than the rows, a ``prefix`` that is not a
            plain name, ``columns`` beside a table that names its own, or a table
            without a header.
    """
    check_progress(progress)
    check_count("num_shards", num_shards)
    _check_prefix("prefix", prefix)
    header, lines = _table_lines(table, columns, delimiter)
    if num_shards > max(1, len(lines)):  # extra shards would hold a header and no row
        raise ValueError(f"num_shards={num_shards} is more than the table's {len(lines)} "
                         f"row(s), so {num_shards - max(1, len(lines))} shard(s) would hold no "
                         f"row: pass num_shards <= {max(1, len(lines))}.")
    folder = Path(user_path(folder))
    folder.mkdir(parents=True, exist_ok=True)
    bar = progress_bar(num_shards, "csv shards", progress=progress, unit="shard")
    with Staging(folder) as stage, bar:  # the set commit: nothing of it stays but the new set
        spec = _stage(stage, prefix, header, lines, range(len(lines)), num_shards, bar)
        written = manifest.write_sets(folder, {prefix: spec})
    return [str(folder / n) for n in written[prefix]]


def _stage(stage: Staging, prefix: str, header: str, lines: list[str],
           order: Sequence[int] | np.ndarray, num_shards: int, bar: Any) -> dict:
    """Write one part's shards as complete temporary files of ``stage``, each counted on
    ``bar``; the set's keywords."""
    staged: dict[str, Path] = {}
    counts: dict[str, int] = {}
    for chunk in np.array_split(np.asarray(order, dtype=np.int64), num_shards):
        name = f"{prefix}_{len(staged):02d}.csv"
        with open(tmp := stage.file(name), "w", newline="", encoding="utf-8") as f:
            f.write("".join([header + "\n"] + [lines[j] + "\n" for j in chunk]))
        staged[name], counts[name] = tmp, len(chunk)
        bar.update()
    return dict(staged=staged, counts=counts, kind="csv", unit="rows",
                pattern=f"{prefix}_[0-9][0-9]*.csv")


def split_into_shards(table: Any, folder: str | Path, *,
                      fractions: Sequence[float] = (0.8, 0.1, 0.1),
                      num_shards: Sequence[int] = (20, 10, 10),
                      names: Sequence[str] = ("train", "valid", "test"),
                      seed: int = 42, columns: list[str] | None = None,
                      delimiter: str = ",", progress: bool | None = None
                      ) -> dict[str, list[str]]:
    """Shuffle the rows with ``seed``, split them by ``fractions``, write each part as shards.

    Returns ``{"train": [paths], "valid": [...], "test": [...]}``; every row
    goes to exactly one file. All parts are committed in one switch of the
    manifest, so a re-split that is killed leaves the old split whole.

    Args:
        table, columns, delimiter: as in :func:`write_shards`.
        folder: where all parts' shards go.
        fractions: the share of rows per part (>= 0, summing to 1).
        num_shards: files per part, one int >= 1 each.
        names: the parts' names (and file prefixes), each once.
        seed: seeds the row shuffle (any int64, as every seed of the kit).
        progress: a bar over all parts' shards, as in :func:`write_shards`.

    Raises:
        TypeError: a shard count is not an int; ``progress`` not a bool or ``None``.
        ValueError: parts of different lengths, bad fractions or shard counts
            (all checked before anything is written).
    """
    if not len(fractions) == len(num_shards) == len(names):
        raise ValueError("fractions, num_shards and names need one entry per part.")
    shares = [check_number(f"fractions[{i}]", f) for i, f in enumerate(fractions)]
    if any(f < 0 for f in shares) or abs(sum(shares) - 1) > 1e-9:
        raise ValueError(f"fractions={fractions} must be >= 0 and sum to 1.")
    for i, k in enumerate(num_shards):  # all checked before anything is written
        check_count(f"num_shards[{i}]", k)
    for i, name in enumerate(names):
        _check_prefix(f"names[{i}]", name)
    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:  # the second part's shards would replace the first's
        raise ValueError(f"names={tuple(names)} names the part {twice[0]!r} twice, so one "
                         "part's rows would be lost: give each part its own name.")
    seed = check_seed(seed)
    check_progress(progress)
    header, lines = _table_lines(table, columns, delimiter)
    # the one seed rule (any int64, TensorFlow's): numpy takes it as the same bits, unsigned
    order = np.random.default_rng(seed % 2**64).permutation(len(lines))
    bounds = np.round(np.cumsum((0,) + tuple(fractions)) * len(lines)).astype(int)
    folder = Path(user_path(folder))
    folder.mkdir(parents=True, exist_ok=True)
    bar = progress_bar(sum(num_shards), "csv shards", progress=progress, unit="shard")
    with Staging(folder) as stage, bar:  # the set commit: nothing of it stays but the new sets
        specs = {name: _stage(stage, name, header, lines, order[lo:hi], n, bar)  # one switch
                 for name, n, lo, hi in zip(names, num_shards, bounds[:-1], bounds[1:],
                                            strict=True)}
        written = manifest.write_sets(folder, specs)
    return {name: [str(folder / f) for f in files] for name, files in written.items()}


def _check_prefix(name: str, prefix: Any) -> None:
    """A file-name prefix: letters, digits, '_', '-' or '.' (no folder, no separator)."""
    if not isinstance(prefix, str) or not re.fullmatch(r"[\w.-]+", prefix):
        raise ValueError(f"{name}={prefix!r}: the shards are named {{{name}}}_00.csv, ...: use "
                         "letters, digits, '_', '-' or '.' (no '/': pass the folder as "
                         "folder=).")


def _table_lines(table: Any, columns: list[str] | None,
                 delimiter: str = ",") -> tuple[str, list[str]]:
    dialect = Dialect(delimiter, (), columns if isinstance(table, (str, Path)) else None)
    if isinstance(table, (str, Path)):
        with open(table, newline="", encoding="utf-8-sig") as f:
            text = [line.rstrip("\r") for line in f.read().split("\n")]
        if not text[0]:
            raise ValueError(f"{table}: the file is empty; a CSV needs a header line.")
        check_one_row_per_line(str(table), text, dialect)
        header = delimiter.join(columns) if columns else text[0]
        return header, [line for line in text[dialect.header_lines:] if not is_blank(line)]
    import pandas as pd
    if columns is not None and not isinstance(table, np.ndarray):
        raise ValueError(f"columns={columns!r} names the columns of a 2-D array or of a CSV "
                         f"file without a header; a {type(table).__name__} names its own: leave "
                         "columns out (to write some columns, select them first: "
                         "table[['x', 'y']]).")
    if isinstance(table, np.ndarray):
        if table.ndim != 2 or columns is None or len(columns) != table.shape[1]:
            raise ValueError("A NumPy table must be 2-D; pass columns=[one name per column].")
        table = pd.DataFrame(table, columns=columns)
    elif isinstance(table, dict):
        table = pd.DataFrame(table)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"Cannot write a {type(table).__name__}: pass a DataFrame, a dict of "
                        "columns, a 2-D array with columns=..., or a CSV path.")
    _refuse_line_breaks(table)
    text = table.to_csv(index=False, lineterminator="\n", sep=delimiter).split("\n")[:-1]
    return text[0], text[1:]


def _refuse_line_breaks(table: pd.DataFrame) -> None:
    """A ``ValueError`` naming the first text value holding a line break (one row per line)."""
    for c in table.columns:
        if table[c].dtype == object or str(table[c].dtype).startswith("str"):
            breaks = table[c].str.contains("[\r\n]", regex=True, na=False).to_numpy(bool)
            if breaks.any():
                raise ValueError(f"column {c!r}, row {int(breaks.argmax())}: a value holds a line "
                                 f"break ({table[c].iloc[int(breaks.argmax())]!r}); the kit's "
                                 "readers read one row per line, so replace line breaks "
                                 f"first (table[{c!r}].str.replace('\\n', ' ')).")
