"""The CSV files people have: each dialect read right, or refused by name with the fix."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from csv_cases import read_all

from datakit.core.errors import DataError
from datakit.readers import csv_files as dc
from datakit.readers.csv_files.dialect import dialect_of
from datakit.readers.tables.table_stats import NUMBER, TEXT, TableStats

pytestmark = pytest.mark.timeout(300)

PARSES = ["line", "batch", "vectorized", "chunk", "arrow"]

# What does not depend on the parse mode (the files, their statistics, find_bad_lines,
# pandas' reading) is computed once per module, in a fixture, and checked in a test of its
# own; each parse mode's case checks only what its reader yields or raises.


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("dialects")


# -- a label is never missing -------------------------------------------------------


@pytest.fixture(scope="module")
def nan_labels(folder):
    train = write(folder, "train.csv", "x,y\n1,10\n2,20\n3,30\n")
    new = write(folder, "new.csv", "x,y\n1,10\n2,nan\n3,NaN\n4,40\n5,inf\n6,-Infinity\n")
    return new, dc.column_stats(train)


def test_a_nan_or_inf_label_is_a_located_bad_line(nan_labels):
    new, stats = nan_labels
    assert [b.reason for b in dc.find_bad_lines(new, stats, label="y")] == [
        f"the label is `{y}`, not a finite number (a label is never missing)"
        for y in ("nan", "NaN", "inf", "-Infinity")]


@pytest.mark.parametrize("parse", PARSES)
def test_a_nan_or_inf_label_is_a_located_bad_line_or_a_counted_skip(nan_labels, parse):
    new, stats = nan_labels  # arrow took an inf label
    with pytest.raises(tf.errors.InvalidArgumentError, match="new.csv, line 3, column y"):
        read_all(dc.csv_reader_dataset(new, stats=stats, label="y", parse=parse,
                                       shuffle_buffer_size=None))
    with pytest.warns(UserWarning, match=r"skipping 4 bad line\(s\) \(new.csv: 4\)"):
        ds = dc.csv_reader_dataset(new, stats=stats, label="y", parse=parse,
                                   on_bad_line="skip", shuffle_buffer_size=None)
    assert read_all(ds)[1].tolist() == [10.0, 40.0]


# -- headers ------------------------------------------------------------------------


def test_old_mac_line_ends_are_refused_naming_the_file_and_the_fix(tmp_path):
    """Excel for Mac's 'CSV (Macintosh)': lines end in \\r alone (the csv module's own error
    named no file and spoke of universal-newline mode)."""
    path = tmp_path / "mac.csv"
    path.write_bytes(b"a,b,y\r1,2,0\r3,4,1\r")
    for column_names in (None, ["a", "b", "y"]):
        with pytest.raises(DataError, match=r"mac.csv, line 1: its lines end in a carriage "
                           r"return alone .* save it as 'CSV UTF-8'"):
            dc.column_stats([str(path)], label="y", column_names=column_names)
    path.write_bytes(b"a,b,y\r\n1,2,0\r\n3,4,1\r\n")  # Windows line ends: read
    assert dc.column_stats([str(path)], label="y")["a"].mean == 2.0


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


@pytest.fixture(scope="module")
def multiline(folder):
    good = write(folder, "good.csv", 'id,note,y\n1,"one line",10\n')
    return write(folder, "multi.csv", MULTILINE), dc.column_stats(good)


MULTILINE_NAMED = "multi.csv, line 3: a quoted field holds a line break"


def test_a_line_break_inside_a_field_is_refused_by_the_statistics(multiline):
    multi, stats = multiline
    for call in (lambda: dc.column_stats(multi), lambda: dc.find_bad_lines(multi, stats)):
        with pytest.raises(DataError, match=MULTILINE_NAMED):
            call()


@pytest.mark.parametrize("parse", PARSES)
def test_a_line_break_inside_a_field_is_refused_by_the_reader(multiline, parse):
    multi, stats = multiline
    with pytest.raises(DataError, match=MULTILINE_NAMED):
        dc.csv_reader_dataset(multi, stats=stats, label="y", parse=parse)


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
    assert stats["day"].kind == TEXT


# -- a table with the dialects that read right round-trips like pandas ---------------


#: How a round-tripped table is written: the separator, and how a missing number is marked.
DIALECTS = [(",", ""), (";", "NA"), ("\t", "n/a")]


@pytest.fixture(scope="module", params=DIALECTS, ids=["comma", "semicolon-NA", "tab-n/a"])
def round_trip(request, tmp_path_factory):
    """The table's shards in one dialect, their statistics, and pandas' reading of them."""
    sep, marker = request.param
    tmp_path = tmp_path_factory.mktemp("round_trip")
    table = pd.DataFrame({
        "name": ['Rice, Mrs. "Ellen"', "김 민준", "", "O'Brien", 'a ""b""', "x"] * 5,
        "age": [22.0, None, 35.5, 1.0, float("nan"), 80.0] * 5,
        "city": ["서울", "Paris, TX", "", "rome", "rome", "paris"] * 5,
        "note": ["a;b", "tab\there", "NA", "", "n/a", "c,d"] * 5,  # text: markers stay values
        "y": ["b", "a", "c", "a", "b", "c"] * 5})
    if marker:  # a file written elsewhere: its own separator, missing numbers marked
        source = tmp_path / "source.csv"
        table.to_csv(source, sep=sep, na_rep=marker, index=False)
        table = source
    paths = dc.write_shards(table, tmp_path / "shards", num_shards=3, delimiter=sep)
    stats = dc.column_stats(paths, label="y", delimiter=sep)
    back = pd.concat([pd.read_csv(p, sep=sep, keep_default_na=False,
                                  na_values={"age": list(dc.DEFAULT_NA_VALUES) + [""]})
                      for p in paths])
    return paths, stats, back


def test_a_table_with_quotes_commas_empties_and_unicode_has_the_statistics_of_pandas(
        round_trip):
    _, stats, back = round_trip
    assert back["name"].fillna("").tolist() == ['Rice, Mrs. "Ellen"', "김 민준", "", "O'Brien",
                                                'a ""b""', "x"] * 5
    assert stats["age"].kind == NUMBER and stats["age"].missing == 10


@pytest.mark.parametrize("parse", PARSES)
def test_a_table_with_quotes_commas_empties_and_unicode_round_trips_as_pandas(round_trip,
                                                                              parse):
    paths, stats, back = round_trip
    ds = dc.csv_reader_dataset(paths, stats=stats, label="y", output="dict", parse=parse,
                               n_readers=1, shuffle_buffer_size=None, batch_size=7)
    features, ys = [], []
    for x, y in ds:
        features.append({k: v.numpy() for k, v in x.items()})
        ys += y.numpy().tolist()
    got = {k: np.concatenate([f[k] for f in features]) for k in features[0]}
    for column in ("name", "city", "note"):
        assert [v.decode() for v in got[column]] == back[column].fillna("").tolist()
    age = back["age"].fillna(stats["age"].mean)
    np.testing.assert_allclose(got["age"], (age - stats["age"].mean) / stats["age"].std,
                               rtol=1e-5, atol=1e-6)
    assert ys == [sorted("abc").index(v) for v in back["y"]]


@pytest.fixture(scope="module")
def stray_quotes(folder):
    # A bare field with a quote inside (`5" tall`), as pandas reads it, in a column that
    # columns= leaves out; and a quote that opens a field and never closes it.
    path = write(folder, "notes.csv",
                 'x,note,y\n1,fine,10\n2,"ok",20\n3,5" tall,30\n4,"a, ""b""",40\n')
    broken = write(folder, "broken.csv", 'x,note,y\n1,fine,10\n3,"5 tall,30\n')
    stats = dc.column_stats(write(folder, "stray_train.csv", "x,note,y\n1,a,1\n3,b,2\n"),
                            columns=["x", "y"])
    return path, broken, stats


def test_a_stray_quote_in_a_column_left_out_is_counted_by_no_check(stray_quotes):
    path, broken, stats = stray_quotes
    assert dc.find_bad_lines(path, stats, label="y") == []
    assert dc.column_stats(path, columns=["x", "y"])["x"].count == 4
    # A quote that opens a field and never closes it still breaks the line: named as such.
    [bad] = dc.find_bad_lines(broken, stats, label="y")
    assert (bad.line, bad.column) == (3, "note (2 of 3)")
    assert "columns= leaves this column out, but every field of a line is still parsed" in (
        bad.reason)


@pytest.mark.parametrize("parse", PARSES)
def test_a_stray_quote_in_a_column_left_out_never_rejects_the_line(stray_quotes, parse):
    path, broken, stats = stray_quotes  # the line is read, in every mode
    x, y = read_all(dc.csv_reader_dataset(path, stats=stats, label="y", parse=parse,
                                          shuffle_buffer_size=None, n_readers=1))
    assert y.tolist() == [10.0, 20.0, 30.0, 40.0] and x.ravel().tolist() == [-1, 0, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="columns= leaves this column out"):
        read_all(dc.csv_reader_dataset(broken, stats=stats, label="y", parse=parse,
                                       shuffle_buffer_size=None))
    with pytest.warns(UserWarning, match="skipping 1 bad line"):
        ds = dc.csv_reader_dataset(broken, stats=stats, label="y", on_bad_line="skip",
                                   parse=parse)
    assert sorted(read_all(ds)[1].tolist()) == [10.0]


# -- missing-value markers: missing in a number column, kinds from the whole pass ----


def marked_file(folder, n=1500, late=1200):
    """``x`` numbers with markers (one after row 1000), ``city`` text holding ``NA``, ``y``."""
    marks = {3: "NA", 7: "n/a", 11: "null", 15: "NaN", 19: "", late: "NA"}
    rows = [f"{marks.get(i, i % 10)},{'NA' if i % 4 == 0 else 'rome'},{i}" for i in range(n)]
    return write(folder, "marked.csv", "x,city,y\n" + "\n".join(rows) + "\n"), marks


@pytest.fixture(scope="module")
def marked(folder):
    path, marks = marked_file(folder)
    want = pd.read_csv(path, keep_default_na=False,
                       na_values={"x": list(dc.DEFAULT_NA_VALUES) + [""]})
    return path, marks, dc.column_stats(path, label="y"), want


def test_missing_value_markers_in_a_number_column_are_missing_in_the_statistics(marked):
    _, marks, stats, want = marked
    assert stats["x"].kind == NUMBER and stats["x"].missing == len(marks)
    assert stats["x"].mean == pytest.approx(want["x"].mean())
    assert stats["x"].std == pytest.approx(want["x"].std(ddof=0))
    assert stats["city"].vocabulary == {"rome": 1125, "NA": 375}  # text: a marker stays a value


@pytest.mark.parametrize("parse", PARSES)
def test_missing_value_markers_in_a_number_column_read_as_missing(marked, parse):
    path, marks, stats, want = marked
    x, y = read_all(dc.csv_reader_dataset(path, stats=stats, label="y", parse=parse,
                                          shuffle_buffer_size=None, n_readers=1))
    filled = (want["x"].fillna(stats["x"].mean) - stats["x"].mean) / stats["x"].std
    np.testing.assert_allclose(x[:, 0], filled, rtol=1e-5, atol=1e-6)
    assert y.tolist() == list(range(1500)) and x[sorted(marks), 0].tolist() == [0.0] * 6


@pytest.fixture(scope="module")
def late_marker(folder):
    rows = ["NA" if i == 1300 else str(i % 7) for i in range(1500)]
    path = write(folder, "late.csv", "x,y\n" + "".join(f"{v},{i}\n" for i, v in
                                                     enumerate(rows)))
    return path, dc.column_stats(path, label="y")


def test_a_first_marker_after_row_1000_is_missing_in_the_statistics(late_marker):
    _, stats = late_marker
    assert (stats["x"].kind, stats["x"].missing, stats["x"].count) == (NUMBER, 1, 1499)


@pytest.mark.parametrize("parse", PARSES)
def test_a_first_marker_after_row_1000_is_missing_not_a_failure(late_marker, parse):
    path, stats = late_marker
    x, y = read_all(dc.csv_reader_dataset(path, stats=stats, label="y", parse=parse,
                                          shuffle_buffer_size=None, n_readers=1))
    assert x[1300, 0] == 0.0 and y.tolist() == list(range(1500))


def test_na_values_replaces_the_markers(tmp_path):
    path = write(tmp_path, "q.csv", "x,y\n1,1\n?,2\n3,3\nNA,4\n")
    with pytest.raises(DataError, match="line 5, column x .*`NA` is not a number"):
        dc.column_stats(path, na_values=["?"])  # NA no longer a marker: a stray word
    path = write(tmp_path, "q2.csv", "x,y\n1,1\n?,2\n3,3\n-999,4\n")
    stats = dc.column_stats(path, na_values=["?", "-999"])
    assert (stats["x"].kind, stats["x"].missing, stats["x"].mean) == (NUMBER, 2, 2.0)
    with pytest.raises(DataError, match="line 3, column x .*`\\?` is not a number"):
        dc.column_stats(path, na_values=[])
    with pytest.raises(TypeError, match="na_values='NA': pass a list of strings"):
        dc.column_stats(path, na_values="NA")
    back = TableStats.load(stats.save(tmp_path / "s.json"))
    assert back == stats and dialect_of(back).na_values == ("?", "-999")


@pytest.fixture(scope="module")
def marker_label(folder):
    stats = dc.column_stats(write(folder, "t.csv", "x,y\n1,10\n2,20\n"), label="y")
    return write(folder, "marker_label.csv", "x,y\nNA,10\n2,NA\n"), stats


@pytest.mark.parametrize("parse", PARSES)
def test_a_marker_as_a_label_is_a_bad_line(marker_label, parse):
    new, stats = marker_label
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="marker_label.csv, line 3, column y .*the label is `NA`"):
        read_all(dc.csv_reader_dataset(new, stats=stats, label="y", parse=parse,
                                       shuffle_buffer_size=None))


# -- delimiter= : ';' and tab separated files ----------------------------------------


@pytest.fixture(scope="module", params=[";", "\t"], ids=[";", "\t"])
def separated(request, tmp_path_factory):
    sep = request.param
    table = pd.DataFrame({"x": [1.5, None, 3.0, 4.0], "note": ["a;b", "t\tab", "c,d", ""],
                          "y": [1.0, 2.0, 3.0, 4.0]})
    path = tmp_path_factory.mktemp("separated") / "t.csv"
    table.to_csv(path, sep=sep, index=False)
    return sep, path, dc.column_stats(path, delimiter=sep)


def test_a_file_separated_by_another_character_is_named_and_read_with_delimiter(separated,
                                                                               tmp_path):
    sep, path, stats = separated
    with pytest.raises(DataError, match=re.escape(f"pass delimiter={sep!r}")):
        dc.column_stats(path)
    assert stats.columns == ["x", "note", "y"] and stats["x"].mean == pytest.approx(17 / 6)
    assert stats["note"].vocabulary == {"a;b": 1, "c,d": 1, "t\tab": 1}
    bad = write(tmp_path, "bad.csv", f"x{sep}note{sep}y\n1{sep}a{sep}1\n2,b{sep}2\n")
    assert [(b.line, b.reason) for b in dc.find_bad_lines(bad, stats)] == [
        (3, "expected a number, got `2,b`")]


@pytest.mark.parametrize("parse", PARSES)
def test_a_file_separated_by_another_character_reads_with_delimiter(separated, parse):
    _, path, stats = separated
    ds = dc.csv_reader_dataset(path, stats=stats, label="y", parse=parse, output="dict",
                               shuffle_buffer_size=None, batch_size=4)
    x, y = next(iter(ds))
    assert [v.decode() for v in x["note"].numpy()] == ["a;b", "t\tab", "c,d", ""]
    assert y.numpy().tolist() == [1.0, 2.0, 3.0, 4.0] and float(x["x"][1]) == 0.0


@pytest.mark.parametrize("sep", [";", "\t"])
def test_the_writer_and_the_splitter_keep_the_delimiter(tmp_path, sep):
    table = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "note": ["a;b", "t\tab", "c,d", "e"]})
    paths = dc.write_shards(table, tmp_path / "w", num_shards=2, delimiter=sep)
    back = pd.concat([pd.read_csv(p, sep=sep) for p in paths])
    assert back.to_dict("list") == table.to_dict("list")
    source = tmp_path / "src.csv"
    table.to_csv(source, sep=sep, index=False)
    parts = dc.split_into_shards(source, tmp_path / "s", num_shards=(1, 1, 1), delimiter=sep)
    back = pd.concat([pd.read_csv(p, sep=sep) for ps in parts.values() for p in ps])
    assert sorted(back["note"]) == sorted(table["note"])
    assert dc.column_stats(parts["train"], delimiter=sep).header == ["x", "note"]


# -- column_names= : a file without a header -----------------------------------------


@pytest.fixture(scope="module")
def headerless(folder):
    path = write(folder, "raw.csv", "1.5,a,10\n2.5,b,20\n3.5,a,30\n")
    bad = write(folder, "headerless_bad.csv", "1,a,10\nx,b,20\n")
    return path, bad, dc.column_stats(path, column_names=["x", "c", "y"], label="y")


def test_a_file_without_a_header_has_statistics_with_column_names(headerless, tmp_path):
    _, bad, stats = headerless
    with pytest.warns(UserWarning, match=r"column_stats\(\.\.\., column_names=\[\.\.\.\]\)"):
        dc.column_stats(write(tmp_path, "nums.csv", "1.5,2,10\n2.5,3,20\n"))
    assert (stats.rows, stats["x"].mean, stats["c"].vocabulary) == (3, 2.5, {"a": 2, "b": 1})
    assert [b.line for b in dc.find_bad_lines(bad, stats, label="y")] == [2]


@pytest.mark.parametrize("parse", PARSES)
def test_a_file_without_a_header_reads_with_column_names(headerless, parse):
    path, bad, stats = headerless
    x, y = read_all(dc.csv_reader_dataset(path, stats=stats, label="y", parse=parse,
                                          shuffle_buffer_size=None))
    assert y.tolist() == [10.0, 20.0, 30.0] and len(x) == 3
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="headerless_bad.csv, line 2, column x"):
        read_all(dc.csv_reader_dataset(bad, stats=stats, label="y", parse=parse,
                                       shuffle_buffer_size=None))


@pytest.fixture(scope="module")
def bom(folder):
    path = folder / "bom.csv"
    path.write_bytes("\ufeff1.5,a,10\n2.5,b,20\n3.5,a,30\n".encode())
    df = pd.read_csv(path, header=None, names=["x", "c", "y"])
    return path, df, dc.column_stats(str(path), column_names=["x", "c", "y"], label="y")


def test_a_byte_order_mark_in_a_file_without_a_header_is_counted_as_pandas_counts(bom):
    path, df, stats = bom
    assert (stats["x"].count, stats["x"].mean) == (3, df["x"].mean())
    assert dc.find_bad_lines(str(path), stats, label="y") == []


@pytest.mark.parametrize("parse", PARSES)
def test_a_byte_order_mark_in_a_file_without_a_header_is_read_as_pandas_reads_it(bom, parse):
    path, df, stats = bom
    ds = dc.csv_reader_dataset(str(path), stats=stats, label="y", parse=parse, output="dict",
                               shuffle_buffer_size=None, n_readers=1)
    x, y = next(iter(ds))
    assert y.numpy().tolist() == df["y"].tolist()
    np.testing.assert_allclose(x["x"].numpy() * stats["x"].std + stats["x"].mean, df["x"],
                               rtol=1e-6)
    assert [v.decode() for v in x["c"].numpy()] == df["c"].tolist()


def test_the_writer_names_the_columns_of_a_file_without_a_header(tmp_path):
    path = write(tmp_path, "raw.csv", "1,a\n2,b\n3,c\n")
    [shard] = dc.write_shards(path, tmp_path / "w", num_shards=1, columns=["x", "c"])
    assert open(shard).read() == "x,c\n1,a\n2,b\n3,c\n"
