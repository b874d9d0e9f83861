"""Tests for datakit.sources: fixed-length records and SQLite; errors name the file."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
import tensorflow as tf

from datakit import sources
from datakit.errors import DataError


def raises_naming(path, fn, *args, **kw):
    with pytest.raises(DataError) as info:
        fn(*args, **kw)
    assert info.value.path == str(path) and str(path) in str(info.value)
    return info.value


@pytest.mark.timeout(60)
def test_fixed_length_round_trip_and_truncation(tmp_path):
    arr = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    p = sources.write_fixed_length(tmp_path / "x.bin", arr, header=b"HDR!")
    got = np.stack(list(sources.fixed_length_dataset(p, [2, 3], np.float32, header_bytes=4)
                        .as_numpy_iterator()))
    np.testing.assert_array_equal(got, arr)
    p.write_bytes(p.read_bytes()[:-5])
    raises_naming(p, sources.fixed_length_dataset, p, [2, 3], np.float32, header_bytes=4)


@pytest.mark.timeout(60)
def test_sql_round_trip_and_errors(tmp_path):
    p = sources.write_sqlite(tmp_path / "t.db", "people", {"id": [1, 2, 3],
                                                           "name": ["ann", "bo", "cy"],
                                                           "h": [1.5, 1.75, 2.0]})
    with sqlite3.connect(p) as con:
        assert con.execute("SELECT count(*) FROM people").fetchone() == (3,)
    ds = sources.sql_dataset(p, "SELECT id, name, h FROM people ORDER BY id",
                             (tf.int64, tf.string, tf.float64))
    assert [(int(i), n.numpy(), float(h)) for i, n, h in ds] == [
        (1, b"ann", 1.5), (2, b"bo", 1.75), (3, b"cy", 2.0)]
    missing = tmp_path / "nope.db"
    with pytest.raises(FileNotFoundError, match="nope.db"):
        sources.sql_dataset(missing, "SELECT id FROM people", (tf.int64,))
    assert not missing.exists()
    raises_naming(p, sources.sql_dataset, p, "SELECT id FROM nobody", (tf.int64,))
    with pytest.raises(ValueError, match="one dtype per column"):
        sources.sql_dataset(p, "SELECT id, name FROM people", (tf.int64,))
