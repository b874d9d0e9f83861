"""parse="arrow": pyarrow parses blocks; the rows, statistics and bad lines of the other modes.

And the binary cache (``cache=``): two epochs alike, a changed source never read stale,
a partial epoch or a killed writer never leaving a short cache.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from csv_cases import LABEL, five_files, read_all, sorted_rows

from datakit.readers import csv_files as dc
from datakit.readers.csv_files import arrow
from datakit.readers.csv_files.shards import write_shards
from datakit.readers.csv_files.stats import column_stats

pytestmark = pytest.mark.timeout(300)


def test_blocks_cover_every_data_line_once(tmp_path):
    path = tmp_path / "a.csv"
    lines = [f"{i},x" for i in range(2500)]
    path.write_text("a,b\r\n" + "\r\n".join(lines))  # CRLF, no newline at the end
    plan = arrow.block_ranges(str(path), 1024)
    assert plan[:, 3].tolist() == [1024, 1024, 452] and plan[:, 2].tolist() == [2, 1026, 2050]
    data = path.read_bytes()
    blocks = [data[s:e].decode() for s, e in plan[:, :2]]
    assert "".join(blocks).split("\r\n") == lines
    assert plan[0, 0] == len("a,b\r\n") and plan[-1, 1] == len(data)


def test_values_and_order_equal_the_batch_reader_unshuffled(housing):
    parts, stats = housing
    kw = dict(stats=stats, label=LABEL, n_readers=1, shuffle_buffer_size=None, batch_size=100)
    xa, ya = read_all(dc.csv_reader_dataset(parts["valid"], parse="arrow", **kw))
    xb, yb = read_all(dc.csv_reader_dataset(parts["valid"], parse="batch", **kw))
    np.testing.assert_array_equal(xa, xb)  # pyarrow's floats are decode_csv's, bit for bit
    np.testing.assert_array_equal(ya, yb)
    col = dc.feature_names(stats, LABEL).index("total_bedrooms")
    assert (xa[:, col] == 0).sum() > 0  # missing -> the mean -> 0.0


def test_every_row_exactly_once_per_epoch_reshuffled_same_seed_same_order(housing):
    parts, stats = housing
    files = [f for p in parts.values() for f in p]
    kw = dict(stats=stats, label=LABEL, batch_size=256)
    want = sorted_rows(*read_all(dc.csv_reader_dataset(files, parse="chunk", seed=1, **kw)))
    ds = dc.csv_reader_dataset(files, parse="arrow", seed=3, **kw)
    assert len(ds) == -(-20640 // 256)
    orders = []
    for _ in range(2):
        x, y = read_all(ds)
        np.testing.assert_array_equal(sorted_rows(x, y), want)
        orders.append(y)
    assert not np.array_equal(orders[0], orders[1])
    again = read_all(dc.csv_reader_dataset(files, parse="arrow", seed=3, **kw))[1]
    other = read_all(dc.csv_reader_dataset(files, parse="arrow", seed=4, **kw))[1]
    np.testing.assert_array_equal(again, orders[0])
    assert not np.array_equal(other, orders[0])


def test_rows_are_mixed_across_files_within_batches(housing):
    parts, stats = housing
    ds = dc.csv_reader_dataset(parts["train"], stats=stats, label=LABEL, parse="arrow", seed=0,
                               batch_size=32, shuffle_buffer_size=10_000)
    files = {}  # each row's file, by its label and features (unique rows in housing)
    for i, f in enumerate(sorted(parts["train"])):
        x, y = read_all(dc.csv_reader_dataset(f, stats=stats, label=LABEL, batch_size=1000,
                                              shuffle_buffer_size=None, parse="arrow"))
        files.update({r.tobytes(): i for r in np.c_[x, y]})
    per_batch = [len({files[r.tobytes()] for r in np.c_[x, y]}) for x, y in
                 ds.take(100).as_numpy_iterator()]
    assert np.mean(per_batch) > 4  # a batch of 32 draws from many of the 20 files


@pytest.mark.parametrize("output", ["matrix", "dict"])
def test_text_columns_text_label_and_dict_output_equal_the_chunk_reader(tmp_path, output):
    from datakit.readers.csv_files.demo_tables import passengers
    from datakit.readers.csv_files.shards import split_into_shards
    parts = split_into_shards(passengers(891, seed=0), tmp_path, num_shards=(4, 2, 2), seed=1)
    keep = ["class", "sex", "age", "siblings", "parents", "fare", "cabin", "port"]
    stats = column_stats(parts["train"], columns=keep, max_vocabulary={"cabin": 5})
    kw = dict(stats=stats, label="class", n_readers=1, shuffle_buffer_size=None,
              batch_size=64, output=output)
    a = list(dc.csv_reader_dataset(parts["train"], parse="arrow", **kw).as_numpy_iterator())
    b = list(dc.csv_reader_dataset(parts["train"], parse="chunk", **kw).as_numpy_iterator())
    assert len(a) == len(b) and sum(len(y) for _, y in a) == 713
    for (xa, ya), (xb, yb) in zip(a, b, strict=True):
        np.testing.assert_array_equal(ya, yb)
        if output == "dict":
            assert list(xa) == list(xb)
            for c in xa:
                np.testing.assert_array_equal(xa[c], xb[c])
        else:
            np.testing.assert_array_equal(xa, xb)


def test_blank_lines_are_skipped_as_the_other_modes_skip_them(tmp_path):
    path = tmp_path / "gaps.csv"
    path.write_text("a,b,c\n1,2,x\n\n   \n3,4,y\n\t\n5,6,\"z\"\n")
    stats = column_stats(str(path))
    kw = dict(stats=stats, label="a", shuffle_buffer_size=None)
    xa, ya = read_all(dc.csv_reader_dataset(str(path), parse="arrow", **kw))
    xb, yb = read_all(dc.csv_reader_dataset(str(path), parse="batch", **kw))
    assert ya.tolist() == yb.tolist() == [1, 3, 5]
    np.testing.assert_array_equal(xa, xb)


# -- bad input -------------------------------------------------------------------


@pytest.fixture(scope="module")
def five_stats(tmp_path_factory):
    """The statistics of the first two of ``five_files``: every such set's (its bad line is
    in the third file)."""
    return column_stats(five_files(tmp_path_factory.mktemp("five"), "1,2,x")[:2])


BAD = [("1,2", None, "found 2 field(s), expected 3"),
       ("1,2,x,4", None, "found 4 fields, expected 3"),
       ("1,abc,x", "b (2 of 3)", "expected a number, got `abc`"),
       ('1,2,"open', "c (3 of 3)", "unterminated quote"),
       ('1,2,a"b', "c (3 of 3)", 'a quote inside a field must be doubled'),
       ("1,\t2,x", "b (2 of 3)", "expected a number, got `\t2`"),
       (",2,x", "a (1 of 3)", "the label is empty")]


@pytest.mark.parametrize("raw, column, reason", [pytest.param(*b, id=b[2].split(",")[0][:20])
                                                 for b in BAD])
def test_bad_line_error_names_file_line_column_and_raw_line(tmp_path, five_stats, raw, column,
                                                            reason):
    """What pyarrow would accept (a bare quote, a tab before a number) is bad here too."""
    paths, stats = five_files(tmp_path, raw), five_stats
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        read_all(dc.csv_reader_dataset(paths, stats=stats, label="a", parse="arrow", seed=0))
    msg = str(info.value).replace('\\"', '"').replace("\\t", "\t")
    assert f"{paths[2]}, line 6" in msg and reason in msg and f"`{raw}`" in msg
    assert column is None or column in msg
    assert [(b.line, b.column, b.reason) for b in dc.find_bad_lines(paths, stats, label="a")] == [
        (6, column, reason if "quote inside" not in reason else
         'a quote inside a field must be doubled ("") and the field quoted')]


def test_parsing_after_the_interleave_gives_the_batches_of_a_parse_map_per_file(tmp_path):
    """The blocks' descriptions are interleaved, then parsed: the same blocks in the same order
    as parsing each file's blocks inside the interleave, so the same seeded batches."""
    from unittest import mock

    from datakit.readers.tables.block_reading import blocks_dataset
    n = 3 * 2 * arrow.BLOCK_LINES + 77  # 3 files of 2+ blocks each
    paths = write_shards({"x": np.arange(n * 1.0), "y": np.arange(n * 1.0)}, tmp_path / "d",
                         num_shards=3)
    stats = column_stats(paths)

    def per_file(files, parts, opts):
        plan_of, parse = arrow.block_reading(parts, opts)
        return blocks_dataset(files, lambda p: plan_of(p).map(parse, num_parallel_calls=2),
                              opts, parts.rows)

    kw = dict(stats=stats, label="y", parse="arrow", batch_size=1000, seed=7, repeat=2)
    x, y = read_all(dc.csv_reader_dataset(paths, **kw))
    with mock.patch.object(arrow, "arrow_batches", per_file):
        x_before, y_before = read_all(dc.csv_reader_dataset(paths, **kw))
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_array_equal(y, y_before)
    assert sorted(y.tolist()) == sorted(2 * list(range(n)))


def test_bad_line_in_a_later_block_has_its_own_line_number(tmp_path, five_stats):
    n = 2 * arrow.BLOCK_LINES + 50
    lines = [f"{i},{i * 0.5},t" for i in range(n)]
    lines[2 * arrow.BLOCK_LINES + 7] = "1,oops,t"  # file line 2 * BLOCK + 9
    path = tmp_path / "long.csv"
    path.write_text("a,b,c\n" + "\n".join(lines) + "\n")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=f"long.csv, line {2 * arrow.BLOCK_LINES + 9}, column b"):
        read_all(dc.csv_reader_dataset(str(path), stats=five_stats, label="a", parse="arrow"))


def test_skip_bad_lines_warns_per_file_and_keeps_the_rest(tmp_path, five_stats):
    paths = five_files(tmp_path, "1,abc,x")
    with open(paths[4], "a") as f:
        f.write("2,3\n9,zzz,t\n")
    stats = five_stats
    with pytest.warns(UserWarning, match=r"skipping 3 bad line\(s\) \(part_2.csv: 1, "
                      r"part_4.csv: 2\)"):
        ds = dc.csv_reader_dataset(paths, stats=stats, label="a", on_bad_line="skip", seed=0,
                                   parse="arrow")
    assert sorted(read_all(ds)[1].tolist()) == [float(2 * k) for k in range(45)]


def test_a_file_changed_after_the_check_is_an_error_not_a_short_epoch(tmp_path, five_stats):
    paths, stats = five_files(tmp_path, "1,2,x"), five_stats
    ds = dc.csv_reader_dataset(paths, stats=stats, label="a", parse="arrow", seed=0)
    with open(paths[1], "a") as f:
        f.write("7,8,z\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="part_1.csv now has"):
        read_all(ds)


def test_the_parse_runs_python_so_the_op_says_it_cannot_run_on_tf_data_service(tmp_path,
                                                                               five_stats):
    paths = five_files(tmp_path, "1,2,x")
    ds = dc.csv_reader_dataset(paths, stats=five_stats, label="a", parse="arrow")
    graph = ds._as_serialized_graph().numpy()  # what the service would send to its workers
    assert arrow.SERVICE_HINT.encode() in graph and b"PyFuncStateless" in graph


# -- the binary cache ----------------------------------------------------------------


def cache_files(folder):
    return sorted(f for f in os.listdir(folder) if f.startswith("csv-"))


def test_cache_second_epoch_reads_the_first_epochs_tensors(housing, tmp_path):
    parts, stats = housing
    kw = dict(stats=stats, label=LABEL, batch_size=512, seed=2, parse="arrow")
    ds = dc.csv_reader_dataset(parts["valid"], cache=tmp_path / "cache", **kw)
    first = read_all(ds)
    names = cache_files(tmp_path / "cache")
    assert any(n.endswith(".index") for n in names)
    second = read_all(ds)
    want = sorted_rows(*read_all(dc.csv_reader_dataset(parts["valid"], **kw)))
    for x, y in (first, second):
        np.testing.assert_array_equal(sorted_rows(x, y), want)
    assert not np.array_equal(first[1], second[1])  # the rows are still reshuffled
    again = dc.csv_reader_dataset(parts["valid"], cache=tmp_path / "cache", **kw)
    np.testing.assert_array_equal(sorted_rows(*read_all(again)), want)
    assert cache_files(tmp_path / "cache") == names  # found again, not written anew


def test_a_changed_source_never_reads_a_stale_cache(tmp_path):
    """Dataset.cache(filename) reads the old rows back; the kit's name changes with the files."""
    stale = tf.data.Dataset.range(10).cache(str(tmp_path / "plain"))
    assert len(list(stale)) == 10
    assert len(list(tf.data.Dataset.range(5).cache(str(tmp_path / "plain")))) == 10  # the pitfall
    data = tmp_path / "data"
    write_shards({"x": np.arange(100.0), "y": np.arange(100.0)}, data, num_shards=2)
    stats = column_stats(str(data / "part_*.csv"))
    read = lambda: read_all(dc.csv_reader_dataset(  # noqa: E731
        str(data / "part_*.csv"), stats=stats, label="y", parse="arrow", seed=0,
        cache=tmp_path / "cache"))[1]
    assert sorted(read().tolist()) == list(range(100))
    write_shards({"x": np.arange(60.0), "y": -np.arange(60.0)}, data, num_shards=2)
    assert sorted(read().tolist()) == sorted((-np.arange(60.0)).tolist())
    assert len([f for f in cache_files(tmp_path / "cache") if f.endswith(".index")]) == 2


def test_a_partial_epoch_leaves_no_short_cache(tmp_path):
    n = 6 * arrow.BLOCK_LINES  # more blocks than the pipeline reads ahead
    paths = write_shards({"x": np.arange(n * 1.0), "y": np.arange(n * 1.0)}, tmp_path / "d",
                         num_shards=2)
    stats = column_stats(paths)
    ds = dc.csv_reader_dataset(paths, stats=stats, label="y", parse="arrow", seed=0,
                               batch_size=100, cache=tmp_path / "cache")
    assert len(list(ds.take(3))) == 3  # e.g. fit(steps_per_epoch=3)
    assert not [f for f in cache_files(tmp_path / "cache") if f.endswith(".index")]
    assert sorted(read_all(ds)[1].tolist()) == list(range(n))
    assert [f for f in cache_files(tmp_path / "cache") if f.endswith(".index")]
    assert sorted(read_all(ds)[1].tolist()) == list(range(n))  # from the cache


def test_a_killed_writers_leftovers_are_removed_with_a_warning(tmp_path):
    n = 6 * arrow.BLOCK_LINES
    paths = write_shards({"x": np.arange(n * 1.0), "y": np.arange(n * 1.0)}, tmp_path / "d",
                         num_shards=2)
    stats_file = tmp_path / "stats.pkl"
    pd.to_pickle(column_stats(paths), stats_file)
    code = ("from datakit.tensorflow_logs import import_tensorflow_lean\n"
            "import_tensorflow_lean()  # trains nothing: no Keras optimizers, JAX\n"
            "import os, pandas as pd; import datakit\n"
            "from datakit.readers import csv_files as dc\n"
            f"ds = dc.csv_reader_dataset({paths!r}, stats=pd.read_pickle({str(stats_file)!r}), "
            f"label='y', parse='arrow', batch_size=100, cache={str(tmp_path / 'cache')!r})\n"
            "it = iter(ds)\nfor _ in range(30): next(it)\nos._exit(0)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=240,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert any(f.endswith(".lockfile") for f in cache_files(tmp_path / "cache"))
    with pytest.warns(UserWarning, match="unfinished cache"):
        ds = dc.csv_reader_dataset(paths, stats=pd.read_pickle(stats_file), label="y",
                                   parse="arrow", batch_size=100, cache=tmp_path / "cache")
    assert sorted(read_all(ds)[1].tolist()) == list(range(n))


def test_cache_needs_a_mode_that_parses_before_the_shuffle(tmp_path, five_stats):
    paths, stats = five_files(tmp_path, "1,2,x"), five_stats
    with pytest.raises(ValueError, match="cache=.*parse='arrow'"):
        dc.csv_reader_dataset(paths, stats=stats, label="a", parse="line", cache=tmp_path / "c")
    (tmp_path / "afile").write_text("")
    with pytest.raises(NotADirectoryError, match="is a file"):
        dc.csv_reader_dataset(paths, stats=stats, label="a", parse="arrow",
                              cache=tmp_path / "afile")
    with pytest.raises(NotADirectoryError, match=r"cache=.*afile/c' is under .*afile', a file"):
        dc.csv_reader_dataset(paths, stats=stats, label="a", parse="chunk",
                              cache=tmp_path / "afile" / "c")
    for empty in ("", "  "):  # a name for no folder: the files would land in the working folder
        with pytest.raises(ValueError, match="names no folder"):
            dc.csv_reader_dataset(paths, stats=stats, label="a", parse="arrow", cache=empty)


def test_an_iterator_checkpoint_resumes_the_epoch_in_another_process(housing, tmp_path):
    """The parse is a stateless numpy_function, so the iterator can be saved mid-epoch."""
    from pipelines import assert_same_elements

    from datakit.readers.checkpoints import checkpoint as ck
    parts, stats = housing
    recipe = "datakit.readers.csv_files.reader:csv_reader_dataset"
    kwargs = dict(filepaths=parts["valid"], stats=stats, label=LABEL, seed=1, parse="arrow",
                  batch_size=64, shuffle_buffer_size=500)
    whole = [ck.to_numpy(x) for x in ck.dataset_from_recipe(recipe, kwargs)]
    first, path = ck.save_midway(ck.dataset_from_recipe(recipe, kwargs), 7, tmp_path)
    rest = ck.resume_in_fresh_process(recipe, path, kwargs=kwargs)
    assert len(first) == 7 and len(rest) == len(whole) - 7
    assert_same_elements(whole, first + rest, context=recipe)


@pytest.mark.parametrize("label", ["y", None])
def test_features_computed_in_the_parse_call_equal_the_graphs_bit_for_bit(tmp_path, label):
    """The "matrix" output's (x, y), computed in NumPy inside the parse call, equals the
    graph's (a tensor per column, standardized, looked up and one-hot encoded by TensorFlow):
    missing, infinite and NaN numbers, an empty and an unseen word, rows for prediction."""
    from unittest import mock
    n = 2 * arrow.BLOCK_LINES + 300
    rng = np.random.default_rng(3)
    a = rng.normal(size=n).round(3).astype(object)
    a[::7], a[3::11], a[5::13] = "", "inf", "nan"
    words = rng.choice(["red", "green", "blue", "", "teal"], n)
    stats_rows = {"a": rng.normal(size=50).round(3), "w": ["red", "green", "blue"] * 16 + ["", ""],
                  "y": rng.normal(size=50)}
    stats = column_stats(write_shards(stats_rows, tmp_path / "s", num_shards=1),
                         text_columns=["w"], label="y")
    paths = write_shards({"a": a, "w": words, "y": rng.normal(size=n).round(2)},
                         tmp_path / "d", num_shards=2)
    kw = dict(stats=stats, label=label, parse="arrow", batch_size=500, seed=5, repeat=2,
              label_scale=1.0 if label is None else 3.0)
    original = arrow.block_reading

    def graph(parts, opts):  # as before: a tensor per column, the features in the graph
        return original(parts, opts, fused=False)

    now = list(dc.csv_reader_dataset(paths, **kw).as_numpy_iterator())
    with mock.patch.object(arrow, "block_reading", graph):
        before = list(dc.csv_reader_dataset(paths, **kw).as_numpy_iterator())
    assert len(now) == len(before) > 0
    for u, v in zip(now, before, strict=True):
        for p, q in zip(tf.nest.flatten(u), tf.nest.flatten(v), strict=True):
            assert p.dtype == q.dtype
            np.testing.assert_array_equal(p, q)
    x = np.concatenate([tf.nest.flatten(u)[0] for u in now])
    assert np.isfinite(x).all() and (x[:, 1:].sum(axis=1) == 1).all()  # one slot per row
