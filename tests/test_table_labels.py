"""A label that is missing, nan or infinite is refused on every table path, by file, row, column.

A row whose label is ``nan`` trains nothing (its loss is nan) and a missing
label read as ``nan`` poisons the whole batch: the CSV line path, the Arrow
path and the Parquet reader refuse it naming where it is (#47).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf
from csv_cases import five_files, read_all

from datakit.readers import csv_files as dc
from datakit.readers.csv_files.stats import column_stats
from datakit.readers.parquet_files import parquet

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("parse", ["line", "arrow"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", ""])
def test_csv_refuses_a_label_that_is_not_a_finite_number(tmp_path, parse, value):
    paths = five_files(tmp_path, f"{value},2,x")
    stats = column_stats(paths[:2])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        read_all(dc.csv_reader_dataset(paths, stats=stats, label="a", parse=parse, seed=0))
    msg = str(info.value)
    assert f"{paths[2]}, line 6" in msg and "a (1 of 3)" in msg


def _write(tmp_path, column, *, rows_per_group=3) -> str:
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": list(range(len(column))), "y": column}), path,
                   row_group_size=rows_per_group)
    return path


@pytest.mark.parametrize("column, shown", [
    pytest.param([0, 1, 2, 3, None, 5], "missing (null)", id="int-null"),
    pytest.param([0.0, 1, 2, 3, None, 5], "missing (null)", id="float-null"),
    pytest.param([0.0, 1, 2, 3, float("nan"), 5], "nan", id="nan"),
    pytest.param([0.0, 1, 2, 3, float("inf"), 5], "inf", id="inf"),
    pytest.param(["a", "b", "a", "b", None, "a"], "missing (null)", id="text-null"),
])
def test_parquet_refuses_a_missing_or_nan_label_by_file_row_and_column(tmp_path, column, shown):
    path = _write(tmp_path, column)
    ds = parquet.parquet_dataset([path], label="y", batch_size=2, shuffle_buffer_size=None)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        list(ds)
    msg = str(info.value)
    assert f"{path}, column y, row 5: the label is {shown}" in msg
    assert "label=None" in msg  # the fix


def test_parquet_with_a_null_in_a_feature_still_reads_it_as_nan(tmp_path):
    path = _write(tmp_path, [0, 1, 2, 3, 4, 5])
    pq.write_table(pa.table({"x": [1.0, None], "y": [0, 1]}), path)
    (x, y), = list(parquet.parquet_dataset([path], label="y", batch_size=2,
                                           shuffle_buffer_size=None))
    assert y.numpy().tolist() == [0, 1] and str(x["x"].numpy()[1]) == "nan"
