"""CSV shards: writer, up-front checks, column_stats == pandas, the reader, bad lines."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

import datakit
from datakit import csv as dc

LABEL = "median_house_value"
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    folder = tmp_path_factory.mktemp("housing")
    parts = dc.split_into_shards(datakit.data_path("housing", "housing.csv"), folder, seed=42)
    return parts, dc.column_stats(parts["train"])


def read_all(ds):
    xs, ys = [], []
    for x, y in ds:
        xs.append(x.numpy())
        ys.append(y.numpy())
    return np.concatenate(xs), np.concatenate(ys)


def expected_rows(files, stats):
    """What the reader must yield for ``files`` in order, computed with pandas and NumPy."""
    df = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in files])
    cols = []
    for c in stats.columns:
        s = stats[c]
        if c == LABEL:
            continue
        if s.kind == dc.NUMBER:
            v = df[c].astype(np.float32).fillna(np.float32(s.mean))  # documented fill: the mean
            cols.append(((v - np.float32(s.mean)) / np.float32(s.std)).to_numpy()[:, None])
    for c in stats.columns:
        s = stats[c]
        if c != LABEL and s.kind == dc.TEXT:
            slots = [dc.OOV] + list(s.vocabulary)
            idx = df[c].map(lambda v: slots.index(v) if v in slots[1:] else 0)
            cols.append(np.eye(len(slots), dtype=np.float32)[idx.to_numpy()])
    return np.hstack(cols), df[LABEL].to_numpy(np.float32)


def sorted_rows(x, y):
    rows = np.c_[x, y]
    return rows[np.lexsort(rows.T[::-1])]


# -- writer ----------------------------------------------------------------------


def test_split_writes_every_row_once_atomically(housing, tmp_path):
    parts, _ = housing
    assert {k: len(v) for k, v in parts.items()} == {"train": 20, "valid": 10, "test": 10}
    folder = os.path.dirname(parts["train"][0])
    files = [f for p in parts.values() for f in p]
    manifest = json.load(open(os.path.join(folder, "manifest.json")))["rows"]
    assert sum(manifest.values()) == 20640
    assert not [f for f in os.listdir(folder) if f.endswith(".tmp")]
    lines = [line for f in files for line in open(f).read().splitlines()[1:]]
    original = open(datakit.data_path("housing", "housing.csv")).read().splitlines()
    assert sorted(lines) == sorted(original[1:])
    assert all(open(f).readline().strip() == original[0] for f in files)
    again = dc.split_into_shards(datakit.data_path("housing", "housing.csv"), tmp_path, seed=42)
    assert open(again["valid"][3]).read() == open(parts["valid"][3]).read()  # same seed, same split


def test_write_shards_from_arrays_and_frames(tmp_path):
    paths = dc.write_shards(np.arange(12.0).reshape(6, 2), tmp_path, n_shards=4, columns=["a", "b"])
    assert [len(open(p).read().splitlines()) - 1 for p in paths] == [2, 2, 1, 1]
    with pytest.raises(ValueError, match="columns="):
        dc.write_shards(np.arange(6.0).reshape(3, 2), tmp_path, n_shards=2)
    with pytest.raises(ValueError, match="n_shards"):
        dc.write_shards({"a": [1]}, tmp_path, n_shards=0)


# -- statistics ------------------------------------------------------------------


def assert_stats_equal_pandas(stats, df):
    assert stats.rows == len(df)
    for c in stats.columns:
        s = stats[c]
        assert s.missing == df[c].isna().sum() + (df[c] == "").sum(), c
        if s.kind == dc.NUMBER:
            v = df[c].astype(float)
            assert s.count == v.count()
            for got, want in [(s.mean, v.mean()), (s.std, v.std(ddof=0)), (s.min, v.min()),
                              (s.max, v.max())]:
                assert got == pytest.approx(want, rel=1e-6), c
        else:
            assert s.vocabulary == df[c].dropna()[df[c].dropna() != ""].value_counts().to_dict()


def test_column_stats_equal_pandas_on_housing(housing):
    parts, stats = housing
    df = pd.concat([pd.read_csv(f) for f in parts["train"]])
    assert_stats_equal_pandas(stats, df)
    assert stats["total_bedrooms"].missing > 0 and stats["ocean_proximity"].kind == dc.TEXT


def test_column_stats_on_quoted_fields_with_commas_and_empty_fields(tmp_path):
    rng = np.random.default_rng(7)
    words = ['plain', 'with, comma', 'say ""hi""', '', 'a,b,c']
    for i in range(3):
        rows = []
        for _ in range(50):
            x = "" if rng.random() < 0.2 else repr(float(rng.normal(3, 2)))
            w = words[rng.integers(len(words))]
            q = f'"{x}"' if x and rng.random() < 0.3 else x  # quoted numbers too
            rows.append(f'{q},"{w}",{rng.integers(0, 9)}' if w else f"{q},,{rng.integers(0, 9)}")
        (tmp_path / f"g{i}.csv").write_text("x,word,k\n" + "\n".join(rows) + "\n")
    stats = dc.column_stats(str(tmp_path / "g*.csv"))
    df = pd.concat([pd.read_csv(tmp_path / f"g{i}.csv") for i in range(3)])
    assert stats.kinds() == {"x": "number", "word": "text", "k": "number"}
    assert "with, comma" in stats["word"].vocabulary and 'say "hi"' in stats["word"].vocabulary
    assert_stats_equal_pandas(stats, df)


# -- the reader ------------------------------------------------------------------


def test_reader_values_equal_pandas_after_fill_and_scaling(housing):
    parts, stats = housing
    files = sorted(parts["valid"])
    x, y = read_all(dc.csv_reader_dataset(files, stats=stats, label=LABEL, n_readers=1,
                                          shuffle_buffer_size=None, batch_size=100))
    ex, ey = expected_rows(files, stats)
    np.testing.assert_allclose(x, ex, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y, ey)
    missing = pd.concat([pd.read_csv(f) for f in files])["total_bedrooms"].isna().to_numpy()
    col = dc.feature_names(stats, LABEL).index("total_bedrooms")
    assert missing.any() and (x[missing, col] == 0).all()  # filled with the mean -> 0.0


def test_every_row_exactly_once_per_epoch(housing):
    parts, stats = housing
    files = [f for p in parts.values() for f in p]
    ex, ey = read_all(dc.csv_reader_dataset(files, stats=stats, label=LABEL, n_readers=1,
                                            shuffle_buffer_size=None, batch_size=1000))
    assert len(ey) == 20640
    wx, wy = expected_rows(sorted(files), stats)  # unshuffled, one reader: sorted file order
    np.testing.assert_allclose(ex, wx, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ey, wy)
    want = sorted_rows(ex, ey)
    # parse="line" gives the same rows in the same order: test_fast_variant_...
    ds = dc.csv_reader_dataset(files, stats=stats, label=LABEL, seed=3, parse="batch",
                               batch_size=256)
    assert len(ds) == -(-20640 // 256)
    orders = []
    for _ in range(2):  # two epochs: iterate the same dataset twice
        x, y = read_all(ds)
        np.testing.assert_array_equal(sorted_rows(x, y), want)
        orders.append(y)
    assert not np.array_equal(orders[0], orders[1])  # reshuffled


def test_fast_variant_gives_the_same_rows_in_the_same_order(housing):
    parts, stats = housing
    kw = dict(stats=stats, label=LABEL, seed=5, batch_size=64, shuffle_buffer_size=1000,
              repeat=2)
    xl, yl = read_all(dc.csv_reader_dataset(parts["train"], parse="line", **kw))
    xb, yb = read_all(dc.csv_reader_dataset(parts["train"], parse="batch", prefetch=0, **kw))
    assert len(yl) == 2 * 16512
    np.testing.assert_array_equal(xl, xb)
    np.testing.assert_array_equal(yl, yb)


def test_same_seed_same_order_other_seed_other_order(housing):
    parts, stats = housing
    kw = dict(stats=stats, label=LABEL, batch_size=512, parse="batch")
    a = read_all(dc.csv_reader_dataset(parts["test"], seed=1, **kw))[1]
    b = read_all(dc.csv_reader_dataset(parts["test"], seed=1, **kw))[1]
    c = read_all(dc.csv_reader_dataset(parts["test"], seed=2, **kw))[1]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_unknown_and_empty_text_go_to_the_unk_slot(tmp_path):
    (tmp_path / "train.csv").write_text("x,city,y\n1,paris,1\n2,rome,2\n3,paris,3\n")
    (tmp_path / "new.csv").write_text("x,city,y\n4,oslo,4\n,,5\n5,\"rome\",6\n")
    stats = dc.column_stats(str(tmp_path / "train.csv"))
    assert dc.feature_names(stats, "y") == ["x", "city=[UNK]", "city=paris", "city=rome"]
    x, y = read_all(dc.csv_reader_dataset(str(tmp_path / "new.csv"), stats=stats, label="y",
                                          shuffle_buffer_size=None))
    assert x[:, 1:].tolist() == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    assert x[1, 0] == 0.0 and y.tolist() == [4, 5, 6]


# -- bad input -------------------------------------------------------------------


def five_files(tmp_path, bad_line):
    rows = iter(range(1000))
    paths = []
    for i in range(5):
        lines = [f"{next(rows)},{next(rows) * 0.5},\"t{i}\"" for _ in range(9)]
        if i == 2:
            lines.insert(4, bad_line)  # line 6 of the file (after the header and 4 rows)
        path = tmp_path / f"part_{i}.csv"
        path.write_text("a,b,c\n" + "\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


BAD = [("1,2", None, "found 2 field(s), expected 3"),
       ("1,2,x,4", None, "found 4 fields, expected 3"),
       ("1,abc,x", "b (2 of 3)", "expected a number, got `abc`"),
       ('1,2,"open', "c (3 of 3)", "unterminated quote")]


@pytest.mark.parametrize("parse", ["line", "batch"])
@pytest.mark.parametrize("raw, column, reason", BAD)
def test_bad_line_error_names_file_line_column_and_raw_line(tmp_path, parse, raw, column, reason):
    paths = five_files(tmp_path, raw)
    stats = dc.column_stats(paths[:2])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        read_all(dc.csv_reader_dataset(paths, stats=stats, label="a", parse=parse, seed=0))
    msg = str(info.value).replace('\\"', '"')  # TensorFlow escapes quotes
    assert f"{paths[2]}, line 6" in msg and reason in msg and f"`{raw}`" in msg
    assert column is None or column in msg
    bad = dc.find_bad_lines(paths, stats, label="a")  # the same check, before training
    assert [(b.file, b.line, b.column, b.reason, b.raw) for b in bad] == [
        (paths[2], 6, column, reason, raw)]


def test_column_stats_reports_a_bad_line_too(tmp_path):
    paths = five_files(tmp_path, "1,abc,x")
    with pytest.raises(tf.errors.InvalidArgumentError, match="part_2.csv, line 6"):
        dc.column_stats(paths)


def test_empty_label_is_a_bad_line(tmp_path):
    paths = five_files(tmp_path, ",2,x")
    stats = dc.column_stats(paths[:2])
    assert [b.reason for b in dc.find_bad_lines(paths, stats, label="a")] == ["the label is empty"]


def test_skip_bad_lines_warns_per_file_and_keeps_the_rest(tmp_path):
    paths = five_files(tmp_path, "1,abc,x")
    with open(paths[4], "a") as f:
        f.write("2,3\n9,zzz,t\n")
    stats = dc.column_stats(paths[:2])
    with pytest.warns(UserWarning, match=r"skipping 3 bad line\(s\) \(part_2.csv: 1, part_4.csv: 2\)"):
        ds = dc.csv_reader_dataset(paths, stats=stats, label="a", on_bad_line="skip", seed=0)
    assert sorted(read_all(ds)[1].tolist()) == [float(2 * k) for k in range(45)]


def test_problems_with_files_are_reported_up_front(tmp_path):
    good = five_files(tmp_path, "1,2,x")[:2]
    stats = dc.column_stats(good[:1])
    read = lambda files: dc.csv_reader_dataset(files, stats=stats, label="a")  # noqa: E731
    with pytest.raises(FileNotFoundError, match="nope.csv: no such file"):
        read(good + [str(tmp_path / "nope.csv")])
    with pytest.raises(FileNotFoundError, match="matches no file"):
        read(str(tmp_path / "train_*.csv"))
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty.csv: the file is empty"):
        read(good + [str(tmp_path / "empty.csv")])
    (tmp_path / "other.csv").write_text("a,b,d\n1,2,x\n")
    with pytest.raises(ValueError, match="other.csv: its header `a,b,d` differs"):
        read(good + [str(tmp_path / "other.csv")])


def test_truncated_shard_is_caught_by_the_manifest(tmp_path):
    paths = dc.write_shards({"a": np.arange(10.0), "b": np.arange(10.0)}, tmp_path, n_shards=2)
    text = open(paths[1]).read().splitlines()
    open(paths[1], "w").write("\n".join(text[:-2]) + "\n")
    with pytest.raises(ValueError, match="part_01.csv: 3 rows, but manifest.json says 5"):
        dc.check_files(paths)


@pytest.mark.parametrize("kwargs, fix", [
    ({"batch_size": 0}, "batch_size=0"), ({"n_readers": 0}, "n_readers=0"),
    ({"shuffle_buffer_size": -3}, "shuffle_buffer_size"), ({"parse": "fast"}, "parse="),
    ({"label": "zzz"}, "not a column"), ({"label": "c"}, "text column"),
    ({"n_parse_threads": 0}, "AUTOTUNE"), ({"on_bad_line": "ignore"}, "skip"),
    ({"prefetch": -5}, "prefetch"), ({"n_read_threads": 6}, "n_read_threads=6")])
def test_bad_arguments_say_how_to_fix(tmp_path, kwargs, fix):
    paths = five_files(tmp_path, "1,2,x")
    stats = dc.column_stats(paths[0])
    kwargs = {"label": "a", **kwargs}
    with pytest.raises(ValueError, match=fix):
        dc.csv_reader_dataset(paths, stats=stats, **kwargs)


# -- training ----------------------------------------------------------------------


def test_fit_on_the_reader_lowers_validation_loss(housing):
    parts, stats = housing
    tf.keras.utils.set_random_seed(42)
    kw = dict(stats=stats, label=LABEL, label_scale=100_000, parse="batch")
    train = dc.csv_reader_dataset(parts["train"], seed=42, batch_size=64, **kw)
    valid = dc.csv_reader_dataset(parts["valid"], shuffle_buffer_size=None, batch_size=512, **kw)
    n = len(dc.feature_names(stats, LABEL))
    model = tf.keras.Sequential([tf.keras.Input((n,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer=tf.keras.optimizers.Adam(1e-2))
    before = model.evaluate(valid, verbose=0)
    history = model.fit(train, validation_data=valid, epochs=2, verbose=0)
    assert history.history["val_loss"][-1] < before / 2
