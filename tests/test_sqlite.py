"""Tests for readers.small_sources.sqlite: SQLite queries as datasets; errors name the file."""

from __future__ import annotations

import sqlite3

import pytest
import tensorflow as tf
from error_cases import raises_naming

from datakit.readers.small_sources import sqlite


@pytest.mark.timeout(60)
def test_sql_round_trip_and_errors(tmp_path):
    p = sqlite.write_sqlite(tmp_path / "t.db", "people", {"id": [1, 2, 3],
                                                           "name": ["ann", "bo", "cy"],
                                                           "h": [1.5, 1.75, 2.0]})
    with sqlite3.connect(p) as con:
        assert con.execute("SELECT count(*) FROM people").fetchone() == (3,)
    ds = sqlite.sql_dataset(p, "SELECT id, name, h FROM people ORDER BY id",
                             (tf.int64, tf.string, tf.float64))
    assert [(int(i), n.numpy(), float(h)) for i, n, h in ds] == [
        (1, b"ann", 1.5), (2, b"bo", 1.75), (3, b"cy", 2.0)]
    missing = tmp_path / "nope.db"
    with pytest.raises(FileNotFoundError, match="nope.db"):
        sqlite.sql_dataset(missing, "SELECT id FROM people", (tf.int64,))
    assert not missing.exists()
    raises_naming(p, sqlite.sql_dataset, p, "SELECT id FROM nobody", (tf.int64,))
    with pytest.raises(ValueError, match="one dtype per column"):
        sqlite.sql_dataset(p, "SELECT id, name FROM people", (tf.int64,))
