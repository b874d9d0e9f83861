"""Every argument used or refused (#47): seeds, lists of names, class ids, sizes."""

from __future__ import annotations

import pytest

from datakit.core.arguments import check_seed
from datakit.core.class_ids import check_class_ids

pytestmark = pytest.mark.timeout(300)

TOO_BIG = 2**64


def _seed_calls():
    """Every public call that takes a seed, with a seed outside int64."""
    from datakit.glassbox import Dataset
    from datakit.perf.shuffle_runs import shuffled_orders
    from datakit.readers.checkpoints.checkpoint import shuffled_range
    from datakit.readers.tables.table_options import TableOptions
    from datakit.see import mixing, sampling, shuffle, widget_data

    def tf_range():
        import tensorflow as tf
        return tf.data.Dataset.range(4)

    return {
        "shuffled_range": lambda s: shuffled_range(5, 5, seed=s),
        "shuffled_orders": lambda s: shuffled_orders(5, 5, runs=2, seed=s),
        "TableOptions": lambda s: TableOptions(seed=s),
        "glassbox.shuffle": lambda s: Dataset.range(5).shuffle(3, seed=s),
        "glassbox.sample_from_datasets": lambda s: Dataset.sample_from_datasets(
            [Dataset.range(2), Dataset.range(2)], seed=s),
        "glassbox.list_files": lambda s: Dataset.list_files(__file__, seed=s),
        "measure_mixing": lambda s: mixing.measure_mixing(4, [2], runs=2, seed=s),
        "label_batches": lambda s: mixing.label_batches([0, 1], 2, 1, seed=s),
        "epoch_order": lambda s: mixing.epoch_order(3, 2, 2, seed=s),
        "trace_sample": lambda s: sampling.trace_sample([tf_range()], seed=s),
        "resampled_labels": lambda s: sampling.resampled_labels([0, 1], [0.5, 0.5], seed=s),
        "trace_buffer": lambda s: shuffle.trace_buffer(tf_range(), 2, seed=s),
        "stepper_data": lambda s: widget_data.stepper_data(4, 2, seed=s),
    }


@pytest.mark.parametrize("call", sorted(_seed_calls()))
@pytest.mark.parametrize("seed", [TOO_BIG, 2**63, -2**63 - 1])
def test_a_seed_outside_int64_is_refused_everywhere(call, seed):
    with pytest.raises(ValueError, match=rf"seed={seed} is outside the int64 range"):
        _seed_calls()[call](seed)


def test_read_records_refuses_a_seed_outside_int64(tmp_path):
    from datakit.readers.records.tf_example import to_example
    from datakit.readers.records.tfrecord_writer import ShardWriter
    from datakit.readers.records.tfrecords import read_records
    with ShardWriter(tmp_path, num_shards=1) as w:
        w.write(to_example({"id": 1}).SerializeToString())
    with pytest.raises(ValueError, match="seed=18446744073709551616 is outside"):
        read_records(tmp_path, shuffle_files=True, seed=TOO_BIG)


@pytest.mark.parametrize("parse", ["line", "arrow", "chunk", "batch", "parquet"])
def test_the_table_readers_refuse_a_seed_outside_int64(tmp_path, parse):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from datakit.readers.csv_files import csv_reader_dataset
    from datakit.readers.csv_files.stats import column_stats
    from datakit.readers.parquet_files import parquet
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    pq.write_table(pa.table({"a": [1, 3], "b": [2, 4]}), tmp_path / "t.parquet")
    with pytest.raises(ValueError, match="seed=18446744073709551616 is outside"):
        if parse == "parquet":
            parquet.parquet_dataset([str(tmp_path / "t.parquet")], seed=TOO_BIG)
        else:
            csv_reader_dataset([str(path)], stats=column_stats([str(path)]), label="a",
                               seed=TOO_BIG, parse=parse)


@pytest.mark.parametrize("seed", [0, -1, 2**63 - 1, -2**63])
def test_every_int64_seed_is_taken(seed):
    assert check_seed(seed) == seed


@pytest.mark.parametrize("labels, message", [
    pytest.param([0, 1, -1], "label -1 at position 2 is negative", id="negative"),
    pytest.param([0, 1, 2], "label 2 at position 2 is outside target_dist's 2 classes",
                 id="out-of-range"),
])
def test_resampled_labels_refuses_a_label_out_of_range(labels, message):
    from datakit.see.sampling import resampled_labels
    with pytest.raises(ValueError, match=message):
        resampled_labels(labels, [0.5, 0.5], seed=0)


def test_label_batches_refuses_a_negative_label_by_position():
    from datakit.see.mixing import label_batches
    with pytest.raises(ValueError, match="label -3 at position 1 is negative"):
        label_batches([0, -3, 1], 2, 1)


@pytest.mark.parametrize("labels", [{0, 1}, {0: 1}, (i for i in range(2))])
def test_class_ids_refuse_what_has_no_row_order(labels):
    with pytest.raises(TypeError, match="labels must be a list"):
        check_class_ids(labels)


UNORDERED = [
    pytest.param({"a", "b"}, "a set has no order", id="set"),
    pytest.param({"a": 1, "b": 2}, "a dict is not a list", id="dict"),
    pytest.param((c for c in ["a", "b"]), "a generator", id="generator"),
]


@pytest.mark.parametrize("columns, why", UNORDERED)
def test_csv_columns_must_be_a_list(tmp_path, columns, why):
    from datakit.readers.csv_files.stats import column_stats
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(TypeError, match=f"columns must be a list of column names, got .*{why}"):
        column_stats([str(path)], columns=columns)


@pytest.mark.parametrize("argument", ["text_columns", "number_columns"])
@pytest.mark.parametrize("names, why", UNORDERED[:2] + [
    pytest.param("a", "a str is not a sequence of column names", id="string")])
def test_csv_declared_kinds_must_be_a_list(tmp_path, argument, names, why):
    from datakit.readers.csv_files.stats import column_stats
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(TypeError, match=f"{argument} must be a list of column names, got .*{why}"):
        column_stats([str(path)], **{argument: names})


@pytest.mark.parametrize("columns, why", UNORDERED)
def test_parquet_columns_must_be_a_list(tmp_path, columns, why):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from datakit.readers.parquet_files import parquet
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2], "b": [3, 4]}), path)
    with pytest.raises(TypeError, match=f"columns must be a list of column names, got .*{why}"):
        parquet.parquet_dataset([str(path)], columns=columns)
    with pytest.raises(TypeError, match=f"columns must be a list of column names, got .*{why}"):
        parquet.column_stats([str(path)], columns=columns)


def test_shuffled_orders_too_big_for_memory_is_refused_before_any_work():
    from datakit.perf.shuffle_runs import shuffled_orders
    with pytest.raises(ValueError, match=r"would build 8,000,000,000,000 bytes .* pass fewer runs"):
        shuffled_orders(10**6, 10, runs=10**6)


@pytest.mark.parametrize("kwargs, said", [
    pytest.param({"cycle_length": 0}, "cycle_length=0 is invalid", id="cycle_length"),
    pytest.param({"cycle_length": 2, "num_parallel_reads": 3},
                 "num_parallel_reads=3 is more than cycle_length=2", id="both-tf-data"),
    pytest.param({"n_readers": 0}, "n_readers=0 is invalid", id="new-name"),
])
def test_read_records_names_the_keyword_as_passed(tmp_path, kwargs, said):
    # read_records(cycle_length=0) said "n_readers=0 is invalid", a name the caller never wrote
    from datakit.readers.records.tf_example import to_example
    from datakit.readers.records.tfrecord_writer import ShardWriter
    from datakit.readers.records.tfrecords import read_records
    with ShardWriter(tmp_path, num_shards=1) as w:
        w.write(to_example({"id": 1}).SerializeToString())
    with pytest.raises(ValueError, match=said):
        read_records(tmp_path, **kwargs)


def test_parquet_names_num_parallel_calls_as_passed(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from datakit.readers.parquet_files import parquet
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), path)
    with pytest.raises(ValueError, match="num_parallel_calls=0 is invalid"):
        parquet.parquet_dataset([str(path)], num_parallel_calls=0)


def _too_big(name):
    from datakit.readers.csv_files.demo_tables import passengers
    from datakit.see import mixing
    return {"measure_mixing": lambda: mixing.measure_mixing(10**6, [1, 10], runs=2),
            "epoch_order": lambda: mixing.epoch_order(10**9, 10**4, 10),
            "passengers": lambda: passengers(10**13)}[name]


@pytest.mark.parametrize("name", ["measure_mixing", "epoch_order", "passengers"])
def test_outputs_too_big_for_memory_are_refused_before_any_work(name):
    with pytest.raises(ValueError, match="would build .* bytes .* more than this machine's"):
        _too_big(name)()


@pytest.mark.parametrize("types", [
    pytest.param("set", id="set"), pytest.param("dict", id="dict"),
    pytest.param("generator", id="generator")])
def test_sql_dataset_output_types_must_be_a_list(tmp_path, types):
    import tensorflow as tf

    from datakit.readers.small_sources.sqlite import sql_dataset, write_sqlite
    path = write_sqlite(tmp_path / "t.db", "t", {"a": [1, 2], "b": [0.5, 1.5]})
    given = {"set": {tf.int64, tf.float64}, "dict": {"a": tf.int64, "b": tf.float64},
             "generator": (t for t in (tf.int64, tf.float64))}[types]
    with pytest.raises(TypeError, match="output_types=.*pass a list or tuple of dtypes"):
        sql_dataset(path, "SELECT a, b FROM t", given)


def test_write_sqlite_columns_must_be_a_dict(tmp_path):
    from datakit.readers.small_sources.sqlite import write_sqlite
    with pytest.raises(TypeError, match="columns must be a dict of column name -> values, got set"):
        write_sqlite(tmp_path / "t.db", "t", {"a", "b"})
