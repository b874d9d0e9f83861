"""SQLite tables as datasets: a query run by ``SqlDataset`` after checking the file and the query.

:func:`sql_dataset` raises :class:`datakit.core.errors.DataError` naming the file when the
file, the table or a value does not fit; :func:`write_sqlite` makes such a file (atomically)
to try it on.
"""

from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import tensorflow as tf

from datakit.core.atomic import atomic_file
from datakit.core.errors import DataError
from datakit.core.file_facts import file_facts
from datakit.core.paths import PathArg, user_path
from datakit.core.progress import check_progress, with_progress
from datakit.readers.tables.unchanged_files import read_checked

__all__ = ["write_sqlite", "sql_dataset"]


#: What the error for a database changed after the build tells the user to do.
_BUILD_AGAIN = ("build the dataset again after the database changes (a query's rows are "
                "checked when it is built), and write to a copy rather than while it is read")

_SQL_TYPES = {"i": "INTEGER", "u": "INTEGER", "b": "INTEGER", "f": "REAL", "U": "TEXT",
              "S": "BLOB", "O": "TEXT"}


def write_sqlite(path: PathArg, table: str, columns: Mapping[str, Iterable], *,
                 progress: bool | None = None) -> Path:
    """Write ``columns`` (name -> equal-length values) as table ``table`` of a new SQLite file.

    ``progress``: a bar over the rows written (:mod:`datakit.core.progress`): ``None``
    (default) shows it in a notebook or a terminal once writing lasts a second, ``True``
    always, ``False`` never.

    >>> import tempfile
    >>> p = write_sqlite(Path(tempfile.mkdtemp()) / "t.db", "t", {"id": [1, 2], "name": ["a", "b"]})
    >>> p.read_bytes()[:15]
    b'SQLite format 3'
    """
    check_progress(progress)
    if not isinstance(columns, Mapping):
        raise TypeError(f"columns must be a dict of column name -> values, got "
                        f"{type(columns).__name__}")
    if not re.fullmatch(r"[A-Za-z_]\w*", table) or not all(
            re.fullmatch(r"[A-Za-z_]\w*", c) for c in columns):
        raise ValueError("table and column names must be identifiers (letters, digits, '_')")
    cols = {c: np.asarray(v) for c, v in columns.items()}
    if len({len(v) for v in cols.values()}) != 1:
        raise ValueError("all columns must have the same length")
    path = Path(user_path(path))
    with atomic_file(path) as tmp:
        con = sqlite3.connect(tmp)
        try:
            decl = ", ".join(f"{c} {_SQL_TYPES.get(v.dtype.kind, 'BLOB')}"
                             for c, v in cols.items())
            con.execute(f"CREATE TABLE {table} ({decl})")
            rows = with_progress(zip(*(v.tolist() for v in cols.values()), strict=True),
                                 "sqlite rows", progress=progress, unit="row",
                                 total=len(next(iter(cols.values()))))
            con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", rows)
            con.commit()
        finally:
            con.close()
    return path


def sql_dataset(path: PathArg, query: str, output_types: list | tuple) -> tf.data.Dataset:
    """Run ``query`` on a SQLite file with ``tf.data.experimental.SqlDataset``, checked first.

    TensorFlow would silently *create* an empty database for a missing file and then fail
    with "no such table"; here the file and the query are checked with Python's sqlite3.
    The dataset's length is unknown (``len(ds)`` raises ``TypeError``): the query's rows
    are counted only by running it.

    "The file changed" means the database file: its stamp (size, modification and
    change times, inode: :mod:`datakit.core.file_facts`) when the dataset was built,
    after the checks, is compared with its stamp as each epoch starts, just before
    ``SqlDataset`` opens it (one ``stat`` per epoch). A write committed to it, or
    another file put in its place, is then an error naming it (TensorFlow's
    ``InvalidArgumentError``, while iterating), never an epoch of rows the checks did
    not see. A database in WAL mode keeps committed writes in its ``-wal`` file until a
    checkpoint copies them into the database file: such a write is found once it is
    checkpointed (the ``-wal`` file is not compared: SQLite itself empties and removes
    it when the last connection closes). The check is a Python call, so the dataset
    cannot run on tf.data service workers.

    >>> import tempfile
    >>> p = write_sqlite(Path(tempfile.mkdtemp()) / "t.db", "t", {"id": [1, 2], "x": [0.5, 1.5]})
    >>> ds = sql_dataset(p, "SELECT id, x FROM t", (tf.int64, tf.float64))
    >>> [(int(i), float(x)) for i, x in ds]
    [(1, 0.5), (2, 1.5)]
    """
    if not isinstance(output_types, (list, tuple)):  # a set or dict has no column order
        raise TypeError(f"output_types={output_types!r}: pass a list or tuple of dtypes, one "
                        "per column of the query, in its order")
    output_types = tuple(tf.as_dtype(t) for t in output_types)
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    query = query.strip().rstrip(";").rstrip()  # one statement; a final `;` is fine
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: database file is missing")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a folder: pass the SQLite database file")
    path = os.fspath(path)
    facts = file_facts([path])  # before the checks read it: the file they vouch for, or an error
    with open(path, "rb") as f:
        if f.read(16) != b"SQLite format 3\x00":
            raise DataError(path, "not a SQLite database file")
    # A URI (read-only: never creates a file), with the path quoted: `#` and `?` are
    # part of the file name, not a fragment or options.
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    try:
        try:
            cur = con.execute(f"SELECT * FROM ({query}) LIMIT 0")
        except sqlite3.Error as e:
            raise DataError(path, f"query fails: {e}") from None
        names = [d[0] for d in cur.description]
        if len(names) != len(output_types):
            raise ValueError(f"the query returns {len(names)} columns but output_types has "
                             f"{len(output_types)}: give one dtype per column")
        _check_values(con, path, query, names, output_types)
    finally:
        con.close()
    return read_checked(path, facts, lambda p: tf.data.experimental.SqlDataset(
        "sqlite", p, query, output_types), fix=_BUILD_AGAIN)


def _allowed(dtype: tf.dtypes.DType) -> tuple[str, str | None]:
    """SQL types a column may hold for ``dtype``, and a range test (None: no range)."""
    if dtype == tf.string:
        return "'text', 'blob', 'integer', 'real'", None
    if dtype.is_floating:
        return "'real', 'integer'", None
    if dtype == tf.bool:
        return "'integer'", "{c} NOT IN (0, 1)"
    if dtype.is_integer:
        return "'integer'", f"({{c}} < {dtype.min} OR {{c}} > {dtype.max})"
    raise ValueError(f"output type {dtype.name}: SqlDataset reads strings, ints, floats, bool")


def _check_values(con: sqlite3.Connection, path: PathArg, query: str, names: list[str],
                  output_types: tuple) -> None:
    """One pass in SQLite: values TensorFlow would silently turn into 0, '' or wrap around."""
    cols = [f"c{i}" for i in range(len(names))]
    tests = []
    for c, t in zip(cols, output_types, strict=True):
        kinds, out_of_range = _allowed(t)
        bad = f"{c} IS NULL OR typeof({c}) NOT IN ({kinds})"
        if out_of_range:
            bad += " OR " + out_of_range.format(c=c)
        tests.append(bad)
    with_q = f"WITH q({', '.join(cols)}) AS ({query}) "
    counts = con.execute(with_q + "SELECT " + ", ".join(f"SUM({b})" for b in tests)
                         + " FROM q").fetchone()
    for i, n in enumerate(counts):
        if not n:
            continue
        row, value = next((k, r[0]) for k, r in enumerate(
            con.execute(with_q + f"SELECT {cols[i]}, {tests[i]} FROM q"), start=1) if r[1])
        t = output_types[i]
        if value is None:
            fix = f"filter them out or use COALESCE({names[i]}, <default>) in the query"
            why = "is NULL"
        elif isinstance(value, int) and t.is_integer:
            fix = "pass tf.int64" if t != tf.int64 else "check the data"
            why = f"holds {value}, outside {t.name}'s range"
        else:
            fix = "CAST it in the query, clean the column, or read it as tf.string"
            why = f"holds {type(value).__name__} {value!r}, not a {t.name}"
        raise DataError(path, f"row {row} of the query {why} ({n} bad value(s) in this column): "
                        "TensorFlow "
                        f"would read it as a wrong value without an error; {fix}",
                        column=names[i])
