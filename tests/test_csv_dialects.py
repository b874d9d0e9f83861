"""The CSV files people have: each dialect read right, or refused by name with the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from csv_cases import read_all

from datakit.core.errors import DataError
from datakit.readers import csv_files as dc

pytestmark = pytest.mark.timeout(300)

PARSES = ["line", "batch", "vectorized", "chunk"]


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return str(path)


# -- a label is never missing -------------------------------------------------------


@pytest.mark.parametrize("parse", PARSES)
def test_a_nan_label_is_a_located_bad_line_or_a_counted_skip(tmp_path, parse):
    train = write(tmp_path, "train.csv", "x,y\n1,10\n2,20\n3,30\n")
    new = write(tmp_path, "new.csv", "x,y\n1,10\n2,nan\n3,NaN\n4,40\n")
    stats = dc.column_stats(train)
    assert [b.reason for b in dc.find_bad_lines(new, stats, label="y")] == [
        "the label is `nan`, not a finite number (a label is never missing)",
        "the label is `NaN`, not a finite number (a label is never missing)"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="new.csv, line 3, column y"):
        read_all(dc.csv_reader_dataset(new, stats=stats, label="y", parse=parse,
                                       shuffle_buffer_size=None))
    with pytest.warns(UserWarning, match=r"skipping 2 bad line\(s\) \(new.csv: 2\)"):
        ds = dc.csv_reader_dataset(new, stats=stats, label="y", parse=parse,
                                   on_bad_line="skip", shuffle_buffer_size=None)
    assert read_all(ds)[1].tolist() == [10.0, 40.0]


# -- headers ------------------------------------------------------------------------


def test_a_repeated_header_name_is_named(tmp_path):
    path = write(tmp_path, "dup.csv", "a,b,a\n1,2,3\n")
    for call in (lambda: dc.column_stats(path), lambda: dc.check_files(path)):
        with pytest.raises(DataError, match=r"dup.csv, line 1: the header names 'a' twice"):
            call()


@pytest.mark.parametrize("sep, shown", [(";", "';'"), ("\t", "a tab")])
def test_a_one_column_header_holding_another_separator_is_named(tmp_path, sep, shown):
    path = write(tmp_path, "semi.csv", f"a{sep}b{sep}c\n1{sep}2{sep}3\n")
    with pytest.raises(DataError, match=f"semi.csv, line 1: .*separated by {shown}"):
        dc.column_stats(path)


# -- the options of the statistics and the reader -----------------------------------


def test_no_columns_and_a_label_only_matrix_are_refused_up_front(tmp_path):
    path = write(tmp_path, "a.csv", "x,y\n1,10\n2,20\n")
    with pytest.raises(ValueError, match="columns=\\[\\]: keep at least one column"):
        dc.column_stats(path, columns=[])
    only_label = dc.column_stats(path, columns=["y"])
    with pytest.raises(ValueError, match="no feature column"):
        dc.csv_reader_dataset(path, stats=only_label, label="y")


# -- a quoted field holding a line break: refused by name everywhere ----------------

MULTILINE = 'id,note,y\n1,"one line",10\n2,"two\nlines",20\n3,plain,30\n'


def test_a_line_break_inside_a_field_is_refused_by_the_writer_and_the_splitter(tmp_path):
    table = pd.DataFrame({"id": [1, 2], "note": ["fine", "two\nlines"], "y": [1.0, 2.0]})
    for write_it in (lambda: dc.write_shards(table, tmp_path / "w", num_shards=1),
                     lambda: dc.split_into_shards(table, tmp_path / "s", num_shards=(1, 1, 1))):
        with pytest.raises(ValueError, match="column 'note', row 1: a value holds a line break"):
            write_it()
    source = write(tmp_path, "multi.csv", MULTILINE)
    with pytest.raises(DataError, match=r"multi.csv, line 3: a quoted field holds a line break "
                                        r"\(this row goes on to line 4\)"):
        dc.split_into_shards(source, tmp_path / "t", num_shards=(1, 1, 1))
    assert not (tmp_path / "w").exists() or not any((tmp_path / "w").glob("*.csv"))


@pytest.mark.parametrize("parse", PARSES)
def test_a_line_break_inside_a_field_is_refused_by_the_statistics_and_the_reader(tmp_path,
                                                                                 parse):
    good = write(tmp_path, "good.csv", 'id,note,y\n1,"one line",10\n')
    multi = write(tmp_path, "multi.csv", MULTILINE)
    stats = dc.column_stats(good)
    named = "multi.csv, line 3: a quoted field holds a line break"
    for call in (lambda: dc.column_stats(multi), lambda: dc.find_bad_lines(multi, stats),
                 lambda: dc.csv_reader_dataset(multi, stats=stats, label="y", parse=parse)):
        with pytest.raises(DataError, match=named):
            call()


def test_a_stray_quote_stays_a_located_bad_line(tmp_path):
    path = write(tmp_path, "stray.csv", 'a,b\n1,x\n2,"y\n3,z\n')
    stats = dc.column_stats(write(tmp_path, "ok.csv", "a,b\n1,x\n"))
    assert [(b.line, b.reason) for b in dc.find_bad_lines(path, stats)] == [
        (3, "unterminated quote")]


# -- headers that are not headers, dates --------------------------------------------


def test_a_header_of_numbers_warns_that_the_file_may_have_no_header(tmp_path):
    path = write(tmp_path, "noheader.csv", "1.5,2,3\n4,5,6\n")
    with pytest.warns(UserWarning, match="noheader.csv: every name in line 1 .* is a number"):
        dc.column_stats(path)


def test_a_date_column_is_warned_about(tmp_path):
    path = write(tmp_path, "dates.csv", "day,y\n2024-01-03,1\n2024-01-04,2\n2024-02-01,3\n")
    with pytest.warns(UserWarning, match="column 'day' holds dates"):
        stats = dc.column_stats(path)
    assert stats["day"].kind == dc.TEXT


# -- a table with the dialects that read right round-trips like pandas ---------------


@pytest.mark.parametrize("parse", PARSES)
def test_a_table_with_quotes_commas_empties_and_unicode_round_trips_as_pandas(tmp_path, parse):
    table = pd.DataFrame({
        "name": ['Rice, Mrs. "Ellen"', "김 민준", "", "O'Brien", 'a ""b""', "x"] * 5,
        "age": [22.0, None, 35.5, 1.0, float("nan"), 80.0] * 5,
        "city": ["서울", "Paris, TX", "", "rome", "rome", "paris"] * 5,
        "y": ["b", "a", "c", "a", "b", "c"] * 5})
    paths = dc.write_shards(table, tmp_path, num_shards=3)
    stats = dc.column_stats(paths, label="y")
    back = pd.concat([pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in paths])
    assert back["name"].fillna("").tolist() == table["name"].tolist()
    ds = dc.csv_reader_dataset(paths, stats=stats, label="y", output="dict", parse=parse,
                               n_readers=1, shuffle_buffer_size=None, batch_size=7)
    features, ys = [], []
    for x, y in ds:
        features.append({k: v.numpy() for k, v in x.items()})
        ys += y.numpy().tolist()
    got = {k: np.concatenate([f[k] for f in features]) for k in features[0]}
    assert [v.decode() for v in got["name"]] == back["name"].fillna("").tolist()
    assert [v.decode() for v in got["city"]] == back["city"].fillna("").tolist()
    age = back["age"].fillna(stats["age"].mean)
    np.testing.assert_allclose(got["age"], (age - stats["age"].mean) / stats["age"].std,
                               rtol=1e-5, atol=1e-6)
    assert ys == [sorted("abc").index(v) for v in back["y"]]


def test_a_stray_quote_in_a_column_left_out_says_the_column_is_still_parsed(tmp_path):
    path = write(tmp_path, "notes.csv", 'x,note,y\n1,fine,10\n2,"ok",20\n3,5" tall,30\n')
    stats = dc.column_stats(write(tmp_path, "train.csv", "x,note,y\n1,a,1\n"),
                            columns=["x", "y"])
    [bad] = dc.find_bad_lines(path, stats, label="y")
    assert (bad.line, bad.column) == (4, "note (2 of 3)")
    assert "columns= leaves this column out, but every field of a line is still parsed" in (
        bad.reason)
    with pytest.raises(tf.errors.InvalidArgumentError, match="columns= leaves this column out"):
        read_all(dc.csv_reader_dataset(path, stats=stats, label="y", shuffle_buffer_size=None))
    with pytest.warns(UserWarning, match="skipping 1 bad line"):
        ds = dc.csv_reader_dataset(path, stats=stats, label="y", on_bad_line="skip")
    assert sorted(read_all(ds)[1].tolist()) == [10.0, 20.0]
