"""The table floor: one options check, one file-set check, one column check, one reading tail."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.readers import csv_files, tables
from datakit.readers.csv_files import file_checks
from datakit.readers.parquet_files import parquet
from datakit.readers.tables import block_reading

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("kwargs, error, fix", [
    ({"batch_size": 0}, ValueError, "batch_size=0"),
    ({"n_readers": 2, "n_read_threads": 3}, ValueError, "n_read_threads=3 is more than"),
    ({"shuffle_buffer_size": 2**31}, ValueError, "shuffle_buffer_size=2147483648"),
    ({"seed": "1"}, TypeError, "seed must be an int"),
    ({"columns": "x"}, TypeError, "list of column names"),
    ({"columns": ["x", "x"]}, ValueError, "pass each name once"),
])
def test_parquet_refuses_its_arguments_before_opening_any_file(tmp_path, kwargs, error, fix):
    missing = str(tmp_path / "nothing_*.parquet")  # opening it would be FileNotFoundError
    with pytest.raises(error, match=fix):
        parquet.parquet_dataset(missing, **kwargs)


def test_table_options_are_the_csv_options_base():
    assert issubclass(csv_files.ReadOptions, tables.TableOptions)


def test_tf_datas_knob_name_is_quiet_and_reads_the_same_rows(tmp_path):
    paths = parquet.write_parquet_shards({"x": np.arange(10.0)}, tmp_path, num_shards=2,
                                         row_group_rows=3)
    new = parquet.parquet_dataset(paths, n_parse_threads=2, shuffle_buffer_size=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # map's num_parallel_calls: tf.data's word, no warning
        same = parquet.parquet_dataset(paths, num_parallel_calls=2, shuffle_buffer_size=None)
    assert [b["x"].numpy().tolist() for b in same] == [b["x"].numpy().tolist() for b in new]
    with pytest.raises(TypeError, match="got num_parallel_calls= and n_parse_threads="):
        parquet.parquet_dataset(paths, num_parallel_calls=2, n_parse_threads=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        parquet.parquet_dataset(paths, nope=1)


def test_check_files_out_parameters_still_fill_but_warn(tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n\n2\n")
    counts, blank = {}, set()
    with pytest.warns(DeprecationWarning, match="csv_file_set"):
        files, columns = file_checks.check_files(str(tmp_path / "a.csv"), counts=counts,
                                                 blank=blank)
    found = file_checks.csv_file_set(str(tmp_path / "a.csv"))
    assert (files, columns, counts, blank) == (found.files, found.shape, found.rows,
                                               set(found.blank))


def test_skipping_bad_lines_checks_and_hashes_each_file_once(tmp_path, monkeypatch):
    paths = csv_files.write_shards({"x": np.arange(8.0), "y": np.arange(8.0)}, tmp_path,
                                   num_shards=2)
    stats = csv_files.column_stats(paths)
    hashed = []
    real = manifest.sha256
    monkeypatch.setattr(manifest, "sha256", lambda p: hashed.append(p) or real(p))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no bad line: nothing to warn about
        ds = csv_files.csv_reader_dataset(paths, stats=stats, label="y", on_bad_line="skip",
                                          shuffle_buffer_size=None, parse="chunk")
    assert sorted(map(str, hashed)) == sorted(paths)
    assert sum(len(y) for _, y in ds) == 8


def test_one_column_check_for_csv_parquet_and_the_stats(tmp_path):
    csvs = csv_files.write_shards({"x": [1.0, 2.0], "y": [3.0, 4.0]}, tmp_path / "c",
                                  num_shards=1)
    pqs = parquet.write_parquet_shards({"x": [1.0, 2.0], "y": [3.0, 4.0]}, tmp_path / "p",
                                       num_shards=1)
    with pytest.raises(ValueError, match=r"\['z'\] not in the header \['x', 'y'\] of "):
        csv_files.column_stats(csvs, columns=["x", "z"])
    with pytest.raises(ValueError, match=r"\['z'\] not in the columns \['x', 'y'\] of "):
        parquet.column_stats(pqs, columns=["x", "z"])
    with pytest.raises(ValueError, match=r"columns=\[\]: keep at least one column"):
        parquet.parquet_dataset(pqs, columns=[])


def test_file_set_leaves_a_killed_writers_file_out_unless_named(tmp_path):
    paths = csv_files.write_shards({"x": [1.0, 2.0, 3.0]}, tmp_path, num_shards=1)
    man = manifest.read_manifest(tmp_path)
    left = tmp_path / "part_99.csv"
    left.write_text("x\n9\n")
    man["pending"] = [left.name]  # what a writer killed before its commit leaves
    assert left.name in manifest.ignored_names(man)
    (tmp_path / manifest.MANIFEST).write_text(json.dumps(man))
    found = file_checks.csv_file_set(str(tmp_path / "*.csv"))
    assert found.files == paths and found.total == 3
    with pytest.raises(DataError, match="left over by a writer that was interrupted"):
        file_checks.csv_file_set([str(left)])


def test_blocks_dataset_gives_every_row_once_per_pass_whatever_the_knobs():
    import tensorflow as tf

    def blocks_of(path):
        first = tf.strings.to_number(path, tf.int64) * 10
        return tf.data.Dataset.range(first, first + 7).batch(3)

    files = [str(k) for k in range(4)]
    for opts in (tables.TableOptions(batch_size=5, seed=3, repeat=2, shuffle_buffer_size=4),
                 tables.TableOptions(batch_size=2, n_readers=2, n_read_threads=2,
                                     shuffle_buffer_size=None, prefetch=0)):
        ds = block_reading.blocks_dataset(files, blocks_of, opts, rows=28)
        rows = [int(r) for b in ds for r in b]
        assert len(ds) == -(-28 * opts.repeat // opts.batch_size)
        assert sorted(rows) == sorted([f * 10 + i for f in range(4) for i in range(7)]
                                      * opts.repeat)


def test_tfrecords_takes_tf_datas_own_names_without_a_warning(tmp_path):
    from datakit.readers.records import tfrecord_writer, tfrecords

    with tfrecord_writer.ShardWriter(tmp_path, num_shards=3) as w:
        for i in range(9):
            w.write(str(i).encode())
    new = [r.numpy() for r in tfrecords.read_records(tmp_path, n_readers=2, n_read_threads=2)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # interleave's and TFRecordDataset's names: no warning
        same = tfrecords.read_records(tmp_path, cycle_length=2, num_parallel_reads=2)
    assert [r.numpy() for r in same] == new
    with pytest.raises(TypeError, match="num_parallel_reads= and n_read_threads="):
        tfrecords.read_records(tmp_path, num_parallel_reads=2, n_read_threads=2)
    # a message names each keyword as the caller wrote it (#47)
    with pytest.raises(ValueError, match="num_parallel_reads=3 is more than cycle_length=2"):
        tfrecords.read_records(tmp_path, cycle_length=2, num_parallel_reads=3)


def test_the_table_floor_knows_no_format_and_keeps_the_dialect_layout_it_saved(tmp_path):
    import json
    from dataclasses import fields
    assert not {f.name for f in fields(tables.TableStats)} & {"delimiter", "na_values",
                                                               "column_names"}
    stats = tables.TableStats(["x"], dialect={"delimiter": ";", "na_values": ["?"],
                                              "column_names": None})
    path = stats.save(tmp_path / "s.json")
    saved = json.loads(open(path).read())
    assert saved["delimiter"] == ";" and "dialect" not in saved  # as saved before: old files load
    assert tables.TableStats.load(path) == stats
