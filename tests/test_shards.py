"""CSV shards: the atomic writer with its manifest, the train/valid/test split, a truncated file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from csv_cases import housing_parts

import datakit
from datakit.readers.csv_files import file_checks, shards

pytestmark = pytest.mark.timeout(300)


def test_split_writes_every_row_once_atomically(tmp_path):
    parts = housing_parts(tmp_path / "a")
    assert {k: len(v) for k, v in parts.items()} == {"train": 20, "valid": 10, "test": 10}
    folder = os.path.dirname(parts["train"][0])
    files = [f for p in parts.values() for f in p]
    sets = json.load(open(os.path.join(folder, "manifest.json")))["sets"]
    assert sum(s["totals"]["rows"] for s in sets.values()) == 20640
    assert not [f for f in os.listdir(folder) if f.endswith(".tmp")]
    lines = [line for f in files for line in open(f).read().splitlines()[1:]]
    original = open(datakit.data_path("housing", "housing.csv")).read().splitlines()
    assert sorted(lines) == sorted(original[1:])
    assert all(open(f).readline().strip() == original[0] for f in files)
    again = shards.split_into_shards(datakit.data_path("housing", "housing.csv"), tmp_path / "b",
                                     seed=42)
    assert open(again["valid"][3]).read() == open(parts["valid"][3]).read()  # same seed, same split


def test_write_shards_from_arrays_and_frames(tmp_path):
    paths = shards.write_shards(np.arange(12.0).reshape(6, 2), tmp_path, num_shards=4,
                                columns=["a", "b"])
    assert [len(open(p).read().splitlines()) - 1 for p in paths] == [2, 2, 1, 1]
    with pytest.raises(ValueError, match="columns="):
        shards.write_shards(np.arange(6.0).reshape(3, 2), tmp_path, num_shards=2)
    with pytest.raises(ValueError, match="num_shards"):
        shards.write_shards({"a": [1]}, tmp_path, num_shards=0)


@pytest.mark.parametrize("kwargs, error, text", [
    pytest.param({"num_shards": 50}, ValueError, r"num_shards=50 is more than the table's 20 "
                 r"row\(s\), so 30 shard\(s\) would hold no row: pass num_shards <= 20",
                 id="more-shards-than-rows"),
    pytest.param({"prefix": "a/b"}, ValueError, r"prefix='a/b': .*\(no '/'", id="prefix-slash"),
    pytest.param({"columns": ["x", "zz"]}, ValueError, r"columns=\['x', 'zz'\] names the "
                 "columns of a 2-D array", id="columns-beside-a-frame"),
])
def test_write_shards_refuses_what_it_would_ignore_or_misplace(tmp_path, kwargs, error, text):
    """#47: each was taken (empty shards, a file in a sub-folder, columns ignored)."""
    table = {"x": np.arange(20.0), "y": np.arange(20.0)}
    with pytest.raises(error, match=text):
        shards.write_shards(table, tmp_path / "out", **{"num_shards": 2, **kwargs})
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_an_empty_table_is_one_shard_of_its_header(tmp_path):
    """Notebook 04 shows an empty file in an interleave: one shard, never more."""
    [path] = shards.write_shards({"id": np.arange(0)}, tmp_path, num_shards=1)
    assert open(path).read() == "id\n"
    with pytest.raises(ValueError, match="num_shards=2 is more than the table's 0 row"):
        shards.write_shards({"id": np.arange(0)}, tmp_path / "two", num_shards=2)


def test_truncated_shard_is_caught_by_the_manifest(tmp_path):
    paths = shards.write_shards({"a": np.arange(10.0), "b": np.arange(10.0)}, tmp_path,
                                num_shards=2)
    text = open(paths[1]).read().splitlines()
    open(paths[1], "w").write("\n".join(text[:-2]) + "\n")
    with pytest.raises(ValueError, match="part_01.csv: has .* bytes, manifest says"):
        file_checks.check_files(paths)


def test_split_checks_every_shard_count_before_writing(tmp_path):
    table = {"x": np.arange(20)}
    with pytest.raises(ValueError, match="num_shards"):
        shards.split_into_shards(table, tmp_path, num_shards=(2, 0, 1))
    with pytest.raises(TypeError, match=r"num_shards\[1\] must be an int"):
        shards.split_into_shards(table, tmp_path, num_shards=(2, 2.5, 1))
    with pytest.raises(ValueError, match=r"fractions\[1\]=nan is invalid"):
        shards.split_into_shards(table, tmp_path, fractions=(0.8, float("nan"), 0.2))
    with pytest.raises(ValueError, match="names the part 'a' twice, so one part's rows"):
        shards.split_into_shards(table, tmp_path, num_shards=(1, 1, 1), names=("a", "a", "b"))
    assert list(tmp_path.iterdir()) == []


def test_split_takes_every_int64_seed(tmp_path):
    """The one seed rule: -1 is a seed (numpy gets the same bits, unsigned) (#47)."""
    table = {"x": np.arange(20)}
    parts = shards.split_into_shards(table, tmp_path / "a", num_shards=(1, 1, 1), seed=-1)
    again = shards.split_into_shards(table, tmp_path / "b", num_shards=(1, 1, 1), seed=-1)
    other = shards.split_into_shards(table, tmp_path / "c", num_shards=(1, 1, 1), seed=1)
    train = [open(p["train"][0]).read() for p in (parts, again, other)]
    assert train[0] == train[1] != train[2]
    with pytest.raises(ValueError, match="seed=18446744073709551616 is outside the int64"):
        shards.split_into_shards(table, tmp_path / "d", seed=2**64)


def test_check_files_reports_the_files_with_a_blank_line(tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n\n2\n")       # a blank line inside
    (tmp_path / "b.csv").write_text("x\n3\n4\n")         # only the final newline
    (tmp_path / "c.csv").write_text("x\n5\n \t\n6")      # whitespace-only line, no final newline
    found = file_checks.csv_file_set(str(tmp_path / "*.csv"))
    files, counts, blank = found.files, found.rows, found.blank
    assert sorted(Path(f).name for f in blank) == ["a.csv", "c.csv"]
    assert [counts[f] for f in files] == [2, 2, 2]
