"""Other files ``tf.data`` reads: fixed-length binary records and SQLite databases.

Older data sets (CIFAR-10's binary version, MNIST's IDX files) are arrays on disk with
no framing and no checksums: :func:`fixed_length_dataset` cuts them into records after
checking that the file holds a whole number of them. :func:`sql_dataset` runs a query on
a SQLite file with ``SqlDataset`` after checking the file and the query. Both raise
:class:`datakit.errors.DataError` naming the file; :func:`write_fixed_length` and
:func:`write_sqlite` make such files (atomically) to try them on.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import tensorflow as tf

from datakit.errors import DataError

__all__ = ["write_fixed_length", "fixed_length_dataset", "write_sqlite", "sql_dataset"]


# ---------------------------------------------------------------- fixed-length records
def write_fixed_length(path, array, header: bytes = b"") -> Path:
    """Write ``array`` (one row a record) as raw little-endian bytes after ``header``, atomically.

    >>> import tempfile
    >>> p = write_fixed_length(Path(tempfile.mkdtemp()) / "x.bin", np.arange(6, dtype=np.int16).reshape(3, 2))
    >>> p.stat().st_size
    12
    """
    path, arr = Path(path), np.ascontiguousarray(array)
    if arr.ndim < 1 or arr.shape[0] == 0:
        raise ValueError("array must hold at least one record (its first axis)")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(bytes(header) + arr.astype(arr.dtype.newbyteorder("<")).tobytes())
    os.replace(tmp, path)
    return path


def fixed_length_dataset(path, record_shape, dtype, header_bytes: int = 0,
                         footer_bytes: int = 0) -> tf.data.Dataset:
    """Read a file of fixed-size binary records as a dataset of arrays of ``record_shape``.

    The file size is checked first: bytes left over after the last whole record mean a wrong
    ``record_shape``/``dtype``/header, or a truncated file.

    >>> import tempfile
    >>> p = write_fixed_length(Path(tempfile.mkdtemp()) / "x.bin", np.arange(6, dtype=np.int16).reshape(3, 2))
    >>> [r.tolist() for r in fixed_length_dataset(p, [2], np.int16).as_numpy_iterator()]
    [[0, 1], [2, 3], [4, 5]]
    """
    dtype = tf.as_dtype(dtype)
    record_bytes = int(np.prod(record_shape, dtype=np.int64)) * dtype.size
    if record_bytes < 1:
        raise ValueError(f"record_shape={record_shape!r} gives empty records")
    if header_bytes < 0 or footer_bytes < 0:
        raise ValueError(f"header_bytes={header_bytes}, footer_bytes={footer_bytes}: "
                         "pass byte counts >= 0.")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: file is missing")
    body = os.path.getsize(path) - header_bytes - footer_bytes
    if body <= 0 or body % record_bytes:
        raise DataError(path, f"{body} bytes between header and footer is not a whole "
                              f"number of {record_bytes}-byte records: check record_shape, "
                              "dtype and header_bytes, or the file is truncated")
    ds = tf.data.FixedLengthRecordDataset(os.fspath(path), record_bytes, header_bytes,
                                          footer_bytes)
    shape = list(record_shape)
    return ds.map(lambda r: tf.reshape(tf.io.decode_raw(r, dtype, little_endian=True), shape))


# ---------------------------------------------------------------- SQLite
_SQL_TYPES = {"i": "INTEGER", "u": "INTEGER", "b": "INTEGER", "f": "REAL", "U": "TEXT",
              "S": "BLOB", "O": "TEXT"}


def write_sqlite(path, table: str, columns: Mapping[str, Iterable]) -> Path:
    """Write ``columns`` (name -> equal-length values) as table ``table`` of a new SQLite file.

    >>> import tempfile
    >>> p = write_sqlite(Path(tempfile.mkdtemp()) / "t.db", "t", {"id": [1, 2], "name": ["a", "b"]})
    >>> p.read_bytes()[:15]
    b'SQLite format 3'
    """
    if not re.fullmatch(r"[A-Za-z_]\w*", table) or not all(
            re.fullmatch(r"[A-Za-z_]\w*", c) for c in columns):
        raise ValueError("table and column names must be identifiers (letters, digits, '_')")
    cols = {c: np.asarray(v) for c, v in columns.items()}
    if len({len(v) for v in cols.values()}) != 1:
        raise ValueError("all columns must have the same length")
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    try:
        decl = ", ".join(f"{c} {_SQL_TYPES.get(v.dtype.kind, 'BLOB')}" for c, v in cols.items())
        con.execute(f"CREATE TABLE {table} ({decl})")
        rows = zip(*(v.tolist() for v in cols.values()))
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", rows)
        con.commit()
    finally:
        con.close()
    os.replace(tmp, path)
    return path


def sql_dataset(path, query: str, output_types) -> tf.data.Dataset:
    """Run ``query`` on a SQLite file with ``tf.data.experimental.SqlDataset``, checked first.

    TensorFlow would silently *create* an empty database for a missing file and then fail
    with "no such table"; here the file and the query are checked with Python's sqlite3.

    >>> import tempfile
    >>> p = write_sqlite(Path(tempfile.mkdtemp()) / "t.db", "t", {"id": [1, 2], "x": [0.5, 1.5]})
    >>> [(int(i), float(x)) for i, x in sql_dataset(p, "SELECT id, x FROM t", (tf.int64, tf.float64))]
    [(1, 0.5), (2, 1.5)]
    """
    output_types = tuple(output_types)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: database file is missing")
    with open(path, "rb") as f:
        if f.read(16) != b"SQLite format 3\x00":
            raise DataError(path, "not a SQLite database file")
    con = sqlite3.connect(f"file:{os.fspath(path)}?mode=ro", uri=True)
    try:
        cur = con.execute(f"SELECT * FROM ({query}) LIMIT 0")
        ncols = len(cur.description)
    except sqlite3.Error as e:
        raise DataError(path, f"query fails: {e}") from None
    finally:
        con.close()
    if ncols != len(output_types):
        raise ValueError(f"the query returns {ncols} columns but output_types has "
                         f"{len(output_types)}: give one dtype per column")
    return tf.data.experimental.SqlDataset("sqlite", os.fspath(path), query, output_types)
