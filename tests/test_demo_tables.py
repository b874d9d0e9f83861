"""datakit.readers.csv_files.demo_tables: the generated passenger list survives a CSV round trip, per seed."""

from __future__ import annotations

import pandas as pd
import pytest

from datakit.readers.csv_files.demo_tables import passengers


def test_same_seed_same_table_other_seed_other_table():
    assert passengers(50, seed=3).equals(passengers(50, seed=3))
    assert not passengers(50, seed=3).equals(passengers(50, seed=4))


def test_csv_round_trip_keeps_quoted_commas_and_empty_cells(tmp_path):
    table = passengers(200, seed=1)
    path = tmp_path / "p.csv"
    table.to_csv(path, index=False)
    back = pd.read_csv(path, keep_default_na=False, na_values={"age": [""]})
    assert back["name"].tolist() == table["name"].tolist()
    assert any('"' in name for name in table["name"])  # quotes inside quoted fields
    assert (back["cabin"] == "").sum() > 100 and back["age"].isna().sum() > 10
    assert set(table["class"]) == {"first", "second", "third"}


def test_bad_size_says_how_to_fix():
    with pytest.raises(ValueError, match="int >= 1"):
        passengers(0)
    with pytest.raises(TypeError, match="n must be an int"):
        passengers(2.5)
