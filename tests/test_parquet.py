"""Parquet shards: written as a set, checked up front, read by row groups, stats equal pandas."""

from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf

import datakit
from datakit.core.errors import DataError
from datakit.readers.csv_files.stats import column_stats as csv_column_stats
from datakit.readers.parquet_files import parquet as dp

pytestmark = pytest.mark.timeout(300)
HOUSING = datakit.data_path("housing", "housing.csv")


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pq")
    paths = dp.write_parquet_shards(HOUSING, folder, num_shards=4, row_group_rows=2000)
    return paths, pd.read_csv(HOUSING, keep_default_na=False, na_values=[""])


def frame(ds) -> pd.DataFrame:
    parts = [{k: v.numpy() for k, v in batch.items()} for batch in ds]
    out = pd.DataFrame({k: np.concatenate([p[k] for p in parts]) for k in parts[0]})
    return out.map(lambda v: v.decode() if isinstance(v, bytes) else v)


def test_written_set_has_a_manifest_and_row_groups(housing):
    paths, df = housing
    assert [os.path.basename(p) for p in paths] == [f"part_{k:02d}.parquet" for k in range(4)]
    entries = datakit.core.manifest.check(os.path.dirname(paths[0]))
    assert sum(e["rows"] for e in entries) == len(df) == 20640
    assert {pq.ParquetFile(p).metadata.num_row_groups for p in paths} == {3}  # 5160 rows / 2000


def test_unshuffled_read_is_the_table_in_file_order(housing):
    paths, df = housing
    got = frame(dp.parquet_dataset(paths, batch_size=1000, shuffle_buffer_size=None,
                                   n_readers=1))
    assert list(got.columns) == list(df.columns)
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            np.testing.assert_array_equal(got[c].to_numpy(), df[c].to_numpy())
        else:  # floats as float32; the missing total_bedrooms stay nan
            np.testing.assert_array_equal(got[c].to_numpy(), df[c].to_numpy(np.float32))
    assert got["total_bedrooms"].isna().sum() == df["total_bedrooms"].isna().sum() > 0


def test_every_row_exactly_once_per_epoch_and_reshuffled(housing):
    paths, df = housing
    ds = dp.parquet_dataset(paths, columns=["longitude", "latitude", "median_house_value"],
                            batch_size=256, seed=3)
    assert len(ds) == -(-20640 // 256)
    want = np.sort(df["median_house_value"].to_numpy(np.float32))
    orders = []
    for _ in range(2):
        got = frame(ds)["median_house_value"].to_numpy()
        np.testing.assert_array_equal(np.sort(got), want)
        orders.append(got)
    assert not np.array_equal(orders[0], orders[1])
    rows = frame(ds)
    keys = set(zip(df["longitude"].astype(np.float32), df["latitude"].astype(np.float32),
                   df["median_house_value"].astype(np.float32), strict=True))
    assert len(rows) == 20640 and set(map(tuple, rows.to_numpy())) == keys


def test_same_seed_same_order_other_seed_other_order(housing):
    paths, _ = housing
    read = lambda seed: frame(dp.parquet_dataset(  # noqa: E731
        paths, columns=["median_income"], batch_size=512, seed=seed))["median_income"]
    np.testing.assert_array_equal(read(1), read(1))
    assert not np.array_equal(read(1), read(2))


def test_label_splits_off_and_repeat_counts(housing):
    paths, df = housing
    ds = dp.parquet_dataset(paths, columns=["median_income", "median_house_value"],
                            label="median_house_value", batch_size=100, repeat=2, seed=0)
    x, y = next(iter(ds))
    assert list(x) == ["median_income"] and y.shape == (100,)
    assert len(ds) == 2 * 20640 // 100 + 1
    assert sum(int(tf.size(y)) for _, y in ds) == 2 * 20640


def test_column_stats_equal_pandas_and_the_csv_pass(housing):
    paths, df = housing
    stats = dp.column_stats(paths)
    assert stats.rows == len(df)
    for c in df.columns:
        s = stats[c]
        if not pd.api.types.is_numeric_dtype(df[c]):
            counts = df[c].value_counts()
            assert s.kind == "text" and s.vocabulary == counts.to_dict()
            assert list(s.vocabulary) == sorted(counts.index, key=lambda v: (-counts[v], v))
        else:
            v = df[c].dropna()
            assert (s.count, s.missing) == (len(v), df[c].isna().sum())
            assert s.mean == pytest.approx(v.mean(), rel=1e-12)
            assert s.std == pytest.approx(v.std(ddof=0), rel=1e-9)
            assert (s.min, s.max) == (v.min(), v.max())
    from_csv = csv_column_stats(HOUSING)
    for c in df.columns:
        a, b = stats[c], from_csv[c]
        assert (a.kind, a.count, a.missing, a.vocabulary) == (b.kind, b.count, b.missing,
                                                              b.vocabulary)
        assert a.mean == pytest.approx(b.mean) if a.mean is not None else b.mean is None


def test_column_stats_cap_the_vocabulary_and_count_nan_and_empty_as_missing(tmp_path):
    table = {"x": [1.0, np.nan, np.inf, None, 5.0], "t": ["b", "a", "", None, "a"]}
    paths = dp.write_parquet_shards(table, tmp_path, num_shards=2)
    stats = dp.column_stats(paths, max_vocabulary=1)
    assert (stats["x"].count, stats["x"].missing, stats["x"].mean) == (2, 3, 3.0)
    assert (stats["t"].vocabulary, stats["t"].unknown, stats["t"].missing) == ({"a": 2}, 1, 2)


# -- bad input ---------------------------------------------------------------------


def test_problems_with_files_are_reported_up_front(tmp_path, housing):
    paths, _ = housing
    with pytest.raises(FileNotFoundError, match="nope.parquet: no such file"):
        dp.parquet_dataset(paths + [str(tmp_path / "nope.parquet")])
    with pytest.raises(FileNotFoundError, match="matches no file"):
        dp.parquet_dataset(str(tmp_path / "train_*.parquet"))
    (tmp_path / "empty.parquet").write_bytes(b"")
    with pytest.raises(DataError, match="empty.parquet: the file is empty"):
        dp.parquet_dataset(paths + [str(tmp_path / "empty.parquet")])
    (tmp_path / "text.parquet").write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="text.parquet: not a Parquet file"):
        dp.column_stats([str(tmp_path / "text.parquet")])
    pq.write_table(pa.table({"longitude": ["x"]}), tmp_path / "other.parquet")
    with pytest.raises(DataError, match="other.parquet: its schema differs .* column "
                       "'longitude' is string here, double there"):
        dp.parquet_dataset(paths + [str(tmp_path / "other.parquet")])


def test_a_changed_or_extra_file_disagrees_with_the_manifest(tmp_path):
    paths = dp.write_parquet_shards({"x": np.arange(100.0)}, tmp_path, num_shards=2)
    pq.write_table(pa.table({"x": np.arange(50.0) * 2}), paths[1])  # same rows, other bytes
    with pytest.raises(DataError, match="part_01.parquet: has .* bytes|part_01.parquet: sha256"):
        dp.parquet_dataset(paths)
    paths = dp.write_parquet_shards({"x": np.arange(100.0)}, tmp_path, num_shards=2)
    pq.write_table(pa.table({"x": [1.0]}), tmp_path / "part_07.parquet")
    with pytest.raises(DataError, match="part_07.parquet: matches set 'part'"):
        dp.parquet_dataset(str(tmp_path / "part_*.parquet"))


def test_rewriting_the_set_replaces_it_whole(tmp_path):
    dp.write_parquet_shards({"x": np.arange(10.0)}, tmp_path, num_shards=3)
    paths = dp.write_parquet_shards({"x": np.arange(4.0)}, tmp_path, num_shards=2)
    assert sorted(os.listdir(tmp_path)) == sorted(
        [os.path.basename(p) for p in paths] + ["manifest.json"])
    assert sorted(frame(dp.parquet_dataset(paths, seed=0))["x"].tolist()) == [0, 1, 2, 3]


def test_missing_integer_is_an_error_naming_file_row_group_and_column(tmp_path):
    # A file written without statistics does not say it holds a missing value: the column
    # stays an integer one, and the missing value is an error naming where it is.
    path = str(tmp_path / "bare.parquet")
    pq.write_table(pa.table({"n": pa.array([1, None, 3], pa.int64())}), path,
                   write_statistics=False)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"bare.parquet, row group 0, column n: 1 missing value"):
        list(dp.parquet_dataset([path]))


def test_missing_integers_and_booleans_stay_missing_as_pandas_reads_them(tmp_path):
    table = pa.table({"n": pa.array([1, None, 2**53, -4], pa.int64()),
                      "b": pa.array([True, None, False, True]),
                      "k": pa.array([7, 8, 9, 10], pa.int64()),
                      "ok": pa.array([False, True, True, False])})
    paths = dp.write_parquet_shards(table, tmp_path, num_shards=2, row_group_rows=1)
    ds = dp.parquet_dataset(paths, batch_size=4, shuffle_buffer_size=None, n_readers=1)
    assert {k: s.dtype for k, s in ds.element_spec.items()} == {
        "n": tf.float64, "b": tf.float32, "k": tf.int64, "ok": tf.bool}  # no missing: kept
    got, want = frame(ds), table.to_pandas()  # pandas: n float64 with NaN, b None
    np.testing.assert_array_equal(got["n"], want["n"])  # nan where pandas has NaN; 2**53 exact
    assert got["b"].tolist()[0] == 1.0 and np.isnan(got["b"][1]) and got["b"].tolist()[2:] == [
        0.0, 1.0]
    assert got["k"].tolist() == [7, 8, 9, 10] and got["ok"].tolist() == [False, True, True, False]
    stats = dp.column_stats(paths)
    assert stats["b"].missing == 1 and stats["n"].missing == 1 and stats["n"].count == 3


def test_unsigned_integers_above_int64_are_refused_naming_the_value(tmp_path):
    big = 2**63 + 5
    paths = dp.write_parquet_shards(pa.table({"u": pa.array([1, big], pa.uint64())}),
                                    tmp_path, num_shards=1)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"part_00.parquet, column u \(row group 0\): the value {big} "
                       "does not fit a int64 exactly"):
        list(dp.parquet_dataset(paths))
    small = dp.write_parquet_shards(pa.table({"u": pa.array([1, 2**63 - 1], pa.uint64())}),
                                    tmp_path / "small", num_shards=1)
    assert frame(dp.parquet_dataset(small))["u"].max() == 2**63 - 1  # exact


def _replace(path: str, table: pa.Table) -> None:
    """Write ``table`` beside ``path`` and move it over it, as a rerun of a writer would."""
    pq.write_table(table, path + ".new", row_group_size=10)
    os.replace(path + ".new", path)


def test_a_file_replaced_between_epochs_or_mid_epoch_is_refused_by_name(tmp_path):
    tables = [pa.table({"x": np.arange(k * 100, k * 100 + 100, dtype=np.float64)})
              for k in range(2)]
    paths = [str(tmp_path / f"p{k}.parquet") for k in range(2)]
    for path, table in zip(paths, tables, strict=True):
        pq.write_table(table, path, row_group_size=10)
    ds = dp.parquet_dataset(paths, batch_size=10, shuffle_buffer_size=None, n_readers=1,
                            prefetch=None)
    assert len(frame(ds)) == 200
    _replace(paths[0], pa.table({"x": np.arange(150, dtype=np.float64)}))  # grown
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"p0.parquet: the file changed since the reader checked it"):
        list(ds)  # the next epoch
    for path, table in zip(paths, tables, strict=True):
        pq.write_table(table, path, row_group_size=10)
    ds = dp.parquet_dataset(paths, batch_size=10, shuffle_buffer_size=None, n_readers=1,
                            prefetch=None)
    it = iter(ds)
    first = next(it)["x"].numpy()
    np.testing.assert_array_equal(first, np.arange(10.0))
    _replace(paths[1], pa.table({"x": -np.arange(100, dtype=np.float64)}))  # same rows
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"p1.parquet: the file changed since the reader checked it"):
        for _ in it:
            pass


def test_a_file_rewritten_in_place_mid_epoch_is_refused_by_name(tmp_path):
    """Same inode (truncated and written again, not moved over): still found at the open."""
    paths = [str(tmp_path / f"p{k}.parquet") for k in range(2)]
    for k, path in enumerate(paths):
        pq.write_table(pa.table({"x": np.arange(k * 100, k * 100 + 100, dtype=np.float64)}),
                       path, row_group_size=10)
    it = iter(dp.parquet_dataset(paths, batch_size=10, shuffle_buffer_size=None, n_readers=1,
                                 prefetch=None))
    np.testing.assert_array_equal(next(it)["x"].numpy(), np.arange(10.0))
    inode = os.stat(paths[1]).st_ino
    with open(paths[1], "r+b") as f:  # the same file, new content
        pq.write_table(pa.table({"x": -np.arange(100, dtype=np.float64)}), f,
                       row_group_size=10)
        f.truncate()
    assert os.stat(paths[1]).st_ino == inode
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"p1.parquet: the file changed since the reader checked it"):
        for batch in it:
            assert (batch["x"].numpy() >= 0).all()  # never a row of the new content


def test_a_file_rewritten_with_its_size_and_modification_time_kept_is_refused(tmp_path):
    """``cp -p`` of a same-sized file: the change time (which no program sets back) tells."""
    def write(values, where):  # plain and uncompressed: the size depends on the row count only
        pq.write_table(pa.table({"x": values.astype(np.float64)}), where, row_group_size=10,
                       compression="none", use_dictionary=False)

    paths = [str(tmp_path / f"p{k}.parquet") for k in range(2)]
    for k, path in enumerate(paths):
        write(np.arange(k * 100, k * 100 + 100), path)
    it = iter(dp.parquet_dataset(paths, batch_size=10, shuffle_buffer_size=None, n_readers=1,
                                 prefetch=None))
    next(it)
    before = os.stat(paths[1])
    with open(paths[1], "r+b") as f:  # the same file, other values
        write(1000 + np.arange(100), f)
        f.truncate()
    os.utime(paths[1], ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(paths[1])
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"p1.parquet: the file changed since the reader checked it \(the "
                             r"same size and modification time, but another inode change "
                             r"time: rewritten keeping them \(cp -p, rsync -t\)"):
        for batch in it:
            assert (batch["x"].numpy() < 1000).all()  # never a row of the new content


@pytest.mark.parametrize("kwargs, error, fix", [
    ({"batch_size": 0}, ValueError, "batch_size"), ({"columns": ["zzz"]}, ValueError, "not in"),
    ({"columns": "x"}, TypeError, "list of column names"),
    ({"label": "zzz"}, ValueError, "not one of the columns"),
    ({"shuffle_buffer_size": -1}, ValueError, "shuffle_buffer_size"),
    ({"batch_size": 2.5}, TypeError, "batch_size")])
def test_bad_arguments_say_how_to_fix(tmp_path, kwargs, error, fix):
    paths = dp.write_parquet_shards({"x": [1.0, 2.0]}, tmp_path, num_shards=1)
    with pytest.raises(error, match=fix):
        dp.parquet_dataset(paths, **kwargs)


def test_unsupported_column_type_is_named(tmp_path):
    table = pa.table({"when": pa.array([0, 1], pa.timestamp("s")), "x": [1.0, 2.0]})
    paths = dp.write_parquet_shards(table, tmp_path, num_shards=1)
    with pytest.raises(DataError, match="column 'when' has type timestamp"):
        dp.parquet_dataset(paths)
    assert len(list(dp.parquet_dataset(paths, columns=["x"]))) == 1


def test_a_file_with_two_columns_of_one_name_is_refused_naming_it(tmp_path):
    # pyarrow's KeyError "Column a does not exist in schema" named no file (#47)
    path = str(tmp_path / "dup.parquet")
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4]), pa.array([5, 6])],
                                        names=["a", "b", "a"]), path)
    said = re.escape("dup.parquet: has 2 columns named 'a' (columns 1, 3 of 3)")
    for call in (dp.parquet_dataset, dp.column_stats, dp.check_parquet_files):
        with pytest.raises(DataError, match=said):
            call([path])


def test_floats_beyond_float32_are_missing_and_such_a_label_refused(tmp_path):
    """float64 ``1e39`` and a ``9.99e99`` sentinel are infinite in float32, the reader's
    floats: as features they are missing (``nan``, as ``column_stats`` counts them), never
    ``inf``; as a label, an error naming the file, row and value."""
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": [1.0, 1e39, -9.99e99, 2.0, np.inf],
                             "y": [0.0, 1.0, 2.0, 3.0, 4.0]}), path)
    x = np.concatenate([el["x"].numpy() for el in dp.parquet_dataset(
        [path], shuffle_buffer_size=None, batch_size=2)])
    np.testing.assert_array_equal(x, np.float32([1.0, np.nan, np.nan, 2.0, np.inf]))
    assert dp.column_stats([path])["x"].missing == 3
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "y": [0.0, 1e39, 1.0]}), path)
    ds = dp.parquet_dataset([path], label="y", shuffle_buffer_size=None)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"t\.parquet.*y, row 2.*1e\+39, beyond float32's range"):
        list(ds)
