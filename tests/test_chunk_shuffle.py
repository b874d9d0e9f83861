"""The chunk-at-a-time row buffer: every row once, mixing as the row buffer's, and the CSV reader
built on it (``csv_reader_dataset(parse="chunk")``)."""

import numpy as np
import pytest
import tensorflow as tf

from datakit.glassbox.shuffle_stats import mixing_stats
from datakit.readers.csv_files.reader import csv_reader_dataset
from datakit.readers.csv_files.shards import write_shards
from datakit.readers.csv_files.stats import column_stats
from datakit.readers.tables.chunk_buffer import shuffle_chunks


def rows_of(ds):
    return np.concatenate([np.asarray(c) for c in ds.as_numpy_iterator()])


@pytest.mark.parametrize("n, chunk, buffer", [
    pytest.param(100, 7, 10, id="buffer-bigger-than-chunks"),
    pytest.param(100, 32, 5, id="buffer-smaller-than-a-chunk"),
    pytest.param(10, 4, 1000, id="buffer-bigger-than-the-data"),
])
def test_every_row_leaves_exactly_once(n, chunk, buffer):
    out = rows_of(shuffle_chunks(tf.data.Dataset.range(n).batch(chunk), buffer, seed=3))
    assert sorted(out.tolist()) == list(range(n))


def test_same_seed_same_order_and_a_new_order_each_iteration():
    chunks = tf.data.Dataset.range(200).batch(16)
    a, b = shuffle_chunks(chunks, 50, seed=7), shuffle_chunks(chunks, 50, seed=7)
    first = rows_of(a).tolist()
    assert first == rows_of(b).tolist()
    assert rows_of(a).tolist() != first  # second iteration: reshuffled
    assert rows_of(shuffle_chunks(chunks, 50, seed=8)).tolist() != first


def test_components_stay_together():
    x = tf.data.Dataset.range(60).map(lambda i: (tf.fill([3], i), i * 10)).batch(8)
    for xs, ys in shuffle_chunks(x, 20, seed=0):
        assert (xs.numpy()[:, 0] * 10 == ys.numpy()).all()


def test_mixing_is_the_row_buffers():
    n, buffer = 20_000, 2_000
    ids = tf.data.Dataset.range(n)
    rows = [rows_of(ids.shuffle(buffer, seed=s).batch(1000)) for s in range(2)]
    chunked = [rows_of(shuffle_chunks(ids.batch(256), buffer, seed=s)) for s in range(2)]
    row_stats = mixing_stats(np.stack(rows))
    chunk_stats = mixing_stats(np.stack(chunked))
    assert chunk_stats.mean_displacement == pytest.approx(row_stats.mean_displacement, rel=0.1)
    assert abs(chunk_stats.rank_correlation - row_stats.rank_correlation) < 0.05


@pytest.mark.timeout(120)
def test_the_chunk_reader_delivers_the_same_rows_as_the_classic_one(tmp_path):
    n = 3000
    table = {"id": np.arange(n, dtype=float), "x": np.linspace(0, 1, n), "y": np.arange(n) * 2.0}
    paths = write_shards(table, tmp_path, num_shards=3)
    stats = column_stats(paths)
    args = dict(stats=stats, label="y", seed=5, batch_size=64, shuffle_buffer_size=500)
    chunk = csv_reader_dataset(paths, parse="chunk", **args)
    classic = csv_reader_dataset(paths, parse="line", **args)
    got = [(x.numpy(), y.numpy()) for x, y in chunk]
    assert len(got) == len(chunk) == -(-n // 64)
    assert [len(y) for _, y in got[:-1]] == [64] * (len(got) - 1)
    ys = np.concatenate([y for _, y in got])
    assert sorted(ys.tolist()) == sorted(np.concatenate([y for _, y in classic]).tolist())
    assert ys.tolist() != sorted(ys.tolist())


def test_a_buffer_size_that_is_not_an_int_is_a_type_error():
    chunks = tf.data.Dataset.range(8).batch(4)
    with pytest.raises(TypeError, match="buffer_size must be an int"):
        shuffle_chunks(chunks, 2.5)
    with pytest.raises(ValueError, match="buffer_size=0 is invalid"):
        shuffle_chunks(chunks, 0)
