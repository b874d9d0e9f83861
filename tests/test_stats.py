"""Full-pass column statistics equal pandas (housing, quoted fields); a bad line is located."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from csv_cases import five_files, housing_parts

from datakit.core.errors import DataError
from datakit.readers.csv_files import stats as ds
from datakit.readers.tables.table_stats import NUMBER, TEXT

pytestmark = pytest.mark.timeout(300)


def assert_stats_equal_pandas(stats, df):
    assert stats.rows == len(df)
    for c in stats.columns:
        s = stats[c]
        assert s.missing == df[c].isna().sum() + (df[c] == "").sum(), c
        if s.kind == NUMBER:
            v = df[c].astype(float)
            assert s.count == v.count()
            for got, want in [(s.mean, v.mean()), (s.std, v.std(ddof=0)), (s.min, v.min()),
                              (s.max, v.max())]:
                assert got == pytest.approx(want, rel=1e-6), c
        else:
            assert s.vocabulary == df[c].dropna()[df[c].dropna() != ""].value_counts().to_dict()


def test_column_stats_equal_pandas_on_housing(tmp_path):
    parts = housing_parts(tmp_path)
    stats = ds.column_stats(parts["train"])
    df = pd.concat([pd.read_csv(f) for f in parts["train"]])
    assert_stats_equal_pandas(stats, df)
    assert stats["total_bedrooms"].missing > 0 and stats["ocean_proximity"].kind == TEXT
    small = ds.column_stats(parts["train"], batch_size=100)  # chunks end mid-file: same result
    pd.testing.assert_frame_equal(small.to_frame(), stats.to_frame(), rtol=1e-9)
    assert small["ocean_proximity"].vocabulary == stats["ocean_proximity"].vocabulary


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
    stats = ds.column_stats(str(tmp_path / "g*.csv"))
    df = pd.concat([pd.read_csv(tmp_path / f"g{i}.csv") for i in range(3)])
    assert stats.kinds() == {"x": "number", "word": "text", "k": "number"}
    assert "with, comma" in stats["word"].vocabulary and 'say "hi"' in stats["word"].vocabulary
    assert_stats_equal_pandas(stats, df)


def test_column_stats_reports_a_bad_line_too(tmp_path):
    paths = five_files(tmp_path, "1,2")  # a field short: found by the statistics pass
    with pytest.raises(tf.errors.InvalidArgumentError, match="part_2.csv, line 6"):
        ds.column_stats(paths)


def test_a_number_column_with_a_stray_word_is_refused_wherever_it_comes(tmp_path):
    # Kinds come from every row: the word in the third file's sixth line is found before
    # any statistics, named by file, line and column, with both fixes.
    paths = five_files(tmp_path, "1,abc,x")
    with pytest.raises(DataError, match=r"part_2.csv, line 6, column b \(2 of 3\): `abc` is "
                       r"not a number, but 45 of the column's 46 values are") as e:
        ds.column_stats(paths)
    assert "text_columns=['b']" in str(e.value) and "na_values" in str(e.value)
    assert ds.column_stats(paths, text_columns=["b"]).kinds()["b"] == "text"
    marked = ds.column_stats(paths, na_values=["abc"])
    assert marked["b"].missing == 1 and marked["b"].count == 45  # count: the numbers


def test_a_late_word_in_a_text_column_of_numbers_keeps_it_text(tmp_path):
    # Mostly words with a few numbers (a code column): text, from the whole file.
    path = tmp_path / "codes.csv"
    path.write_text("code,y\n" + "".join(f"{'A' if i % 3 else ''}{i},{i % 2}\n"
                                          for i in range(2000)))
    assert ds.column_stats([str(path)]).kinds() == {"code": "text", "y": "number"}


def test_infer_kinds_of_no_file_says_to_pass_one():
    from datakit.readers.csv_files.column_kinds import infer_kinds
    with pytest.raises(ValueError, match="pass a CSV file's path"):  # was a bare TypeError
        infer_kinds([])


def test_bad_arguments_and_empty_files_get_a_fix(tmp_path):
    from datakit.readers.csv_files import stats as st
    from datakit.readers.csv_files.column_kinds import infer_kinds
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="needs a header line"):
        infer_kinds(str(empty))
    good = tmp_path / "good.csv"
    good.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="batch_size"):
        st.column_stats([str(good)], batch_size=0)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        st.column_stats([str(good)], batch_size=2.5)


# -- choosing columns, capping vocabularies (#16) -------------------------------------


def test_columns_keeps_those_in_that_order_and_ignores_the_rest(tmp_path):
    from datakit.readers.csv_files.demo_tables import passengers
    from datakit.readers.csv_files.shards import write_shards
    paths = write_shards(passengers(120, seed=2), tmp_path, num_shards=3)
    stats = ds.column_stats(paths, columns=["fare", "class", "age"])
    assert stats.columns == ["fare", "class", "age"] and list(stats.stats) == stats.columns
    assert stats.header[:3] == ["id", "survived", "class"] and len(stats.header) == 12
    df = pd.concat([pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in paths])
    assert_stats_equal_pandas(stats, df)
    assert list(stats.to_frame().index) == stats.columns


def test_unknown_column_is_an_error_that_lists_the_header(tmp_path):
    paths = five_files(tmp_path, "1,2,x")
    with pytest.raises(ValueError, match=r"\['zz'\] not in the header .*\['a', 'b', 'c'\]"):
        ds.column_stats(paths, columns=["a", "zz"])
    with pytest.raises(TypeError, match="list of column names"):
        ds.column_stats(paths, columns="a")


def test_max_vocabulary_keeps_the_most_frequent_ties_broken_by_value(tmp_path):
    words = ["b"] * 3 + ["a"] * 3 + ["d"] * 2 + ["c"] * 2 + ["e"] + [""]
    (tmp_path / "w.csv").write_text("w,k\n" + "".join(f"{w},{i}\n" for i, w in enumerate(words)))
    stats = ds.column_stats(str(tmp_path / "w.csv"), max_vocabulary=3)
    assert stats["w"].vocabulary == {"a": 3, "b": 3, "c": 2}  # c before d: a tie, by value
    assert stats["w"].unknown == 3 and stats["w"].missing == 1 and stats["w"].count == 11
    per_column = ds.column_stats(str(tmp_path / "w.csv"), max_vocabulary={"w": 1})
    assert per_column["w"].vocabulary == {"a": 3}
    with pytest.raises(ValueError, match="not kept text columns"):
        ds.column_stats(str(tmp_path / "w.csv"), max_vocabulary={"k": 1})
    with pytest.raises(ValueError, match="int >= 1"):
        ds.column_stats(str(tmp_path / "w.csv"), max_vocabulary=0)
    with pytest.raises(TypeError, match=r"max_vocabulary\['w'\] must be an int"):
        ds.column_stats(str(tmp_path / "w.csv"), max_vocabulary={"w": 2.5})


@pytest.mark.parametrize("parse", ["line", "batch", "chunk", "arrow"])
def test_a_label_beyond_float32_is_refused_naming_file_line_and_value(tmp_path, parse):
    """A ``1e39`` label matches the number grammar but is infinite in float32, the label's
    tensor: every parse mode refuses it naming the file, line and value, never ``inf``."""
    from datakit.readers.csv_files.reader import csv_reader_dataset

    path = tmp_path / "n.csv"
    path.write_text("x,y\n" + "".join(f"{i},{'1e39' if i == 3 else i}\n" for i in range(8)))
    stats = ds.column_stats(str(path))
    reader = csv_reader_dataset(str(path), stats=stats, label="y", parse=parse,
                                shuffle_buffer_size=None)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"n\.csv, line 5, column y.*`1e39`, beyond float32"):
        list(reader)


@pytest.mark.parametrize("parse", ["batch", "arrow"])
def test_numbers_beyond_float32_are_missing_not_nan_nor_a_constant_column(tmp_path, parse):
    """A ``9.99e99`` missing-value sentinel and a ``1e39`` are infinite in float32, the
    readers' numbers: the statistics leave them out (missing, then the mean), so no feature
    is NaN and no column collapses to zeros."""
    from datakit.readers.csv_files.reader import csv_reader_dataset

    rows = [(9.99e99 if i % 4 == 0 else float(i), 1e39 if i % 5 == 0 else 2.0 * i, i % 2)
            for i in range(40)]
    path = tmp_path / "a.csv"
    path.write_text("sentinel,big,y\n" + "".join(f"{a!r},{b!r},{y}\n" for a, b, y in rows))
    stats = ds.column_stats([str(path)], label="y")
    assert (stats["sentinel"].missing, stats["big"].missing) == (10, 8)
    frame = pd.read_csv(path)[["sentinel", "big"]]
    kept = frame.where(frame.abs() <= np.finfo(np.float32).max)  # what float32 can hold
    np.testing.assert_allclose([stats[c].mean for c in kept], kept.mean(), rtol=1e-6)
    np.testing.assert_allclose([stats[c].std for c in kept], kept.std(ddof=0), rtol=1e-6)
    expected = ((kept.fillna(kept.mean()) - kept.mean()) / kept.std(ddof=0)).to_numpy()
    x = np.concatenate([b[0].numpy() for b in csv_reader_dataset(
        [str(path)], stats=stats, label="y", parse=parse, shuffle_buffer_size=None,
        batch_size=16)])
    assert not np.isnan(x).any() and (x.std(axis=0) > 0.5).all()
    np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-6)
