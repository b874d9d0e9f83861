"""The pipelines compared: each yields ``(features, label)`` batches of the generated CSV.

Every contender standardizes the 8 feature columns with the same training
statistics, so they all deliver the same thing; all TensorFlow ones shuffle
with a 10,000-line buffer (seeded). The PyTorch one does not shuffle (see
RESULTS.md). Builders take ``(paths, stats, batch_size, seed)``.
"""

from __future__ import annotations

import numpy as np

from benchmarks.data import COLUMNS, LABEL

BUFFER = 10_000
READERS = 5


def _mean_std(stats):
    feats = [c for c in COLUMNS if c != LABEL]
    return (np.array([stats[c].mean for c in feats], np.float32),
            np.array([stats[c].std for c in feats], np.float32))


def kit_fast(paths, stats, batch_size, seed):
    """The kit's fast variant: each reader parses chunks of its file, rows go to the shuffle."""
    from datakit.readers import csv_files as kcsv
    return kcsv.csv_reader_dataset(paths, stats=stats, label=LABEL, batch_size=batch_size,
                                   seed=seed, parse="batch")


def kit_chunk(paths, stats, batch_size, seed):
    """The kit's reader with parse="chunk": parsed chunks shuffled a chunk at a time."""
    from datakit.readers import csv_files as kcsv
    return kcsv.csv_reader_dataset(paths, stats=stats, label=LABEL, batch_size=batch_size,
                                   seed=seed, parse="chunk")


def kit_arrow(paths, stats, batch_size, seed, cache=None, label=LABEL):
    """The kit's reader with parse="arrow": pyarrow parses blocks, shuffled a block at a time."""
    from datakit.readers import csv_files as kcsv
    return kcsv.csv_reader_dataset(paths, stats=stats, label=label, batch_size=batch_size,
                                   seed=seed, parse="arrow", cache=cache)


def kit_arrow_per_file(paths, stats, batch_size, seed, label=LABEL):
    """parse="arrow" as it was before issue 49: a parse map per file, inside the interleave.

    The same blocks, parser and tail (so the same batches); only where the parse
    runs differs: each file's blocks are parsed by a map of its own, started when
    the interleave first reaches the file.
    """
    from unittest import mock

    from datakit.readers.csv_files import arrow, csv_reader_dataset
    from datakit.readers.tables.block_reading import blocks_dataset

    def per_file(files, parts, opts):
        plan_of, parse = arrow.block_reading(parts, opts)
        return blocks_dataset(
            files, lambda p: plan_of(p).map(parse, num_parallel_calls=opts.n_parse_threads),
            opts, parts.rows, cache=parts.cached)

    with mock.patch.object(arrow, "arrow_batches", per_file):
        return csv_reader_dataset(paths, stats=stats, label=label, batch_size=batch_size,
                                  seed=seed, parse="arrow")


def kit_classic(paths, stats, batch_size, seed):
    """The classic per-line chain (map per line, then batch), as csv_reader_dataset builds it."""
    from datakit.readers import csv_files as kcsv
    return kcsv.csv_reader_dataset(paths, stats=stats, label=LABEL, batch_size=batch_size,
                                   seed=seed, parse="line")


def classic_plain(paths, stats, batch_size, seed):
    """The textbook per-line chain with no bad-line location (TensorFlow's "record 0" errors)."""
    import tensorflow as tf
    mean, std = _mean_std(stats)
    defaults = [tf.constant([], tf.float32)] * len(COLUMNS)

    def parse_line(line):
        cols = tf.io.decode_csv(line, defaults)
        return (tf.stack(cols[:-1], -1) - mean) / std, cols[-1]

    ds = tf.data.Dataset.list_files(paths, shuffle=True, seed=seed).interleave(
        lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=READERS)
    ds = ds.shuffle(BUFFER, seed=seed).map(parse_line, num_parallel_calls=5)
    return ds.batch(batch_size).prefetch(1)


def _kit_vectorized(paths, stats, batch_size, seed, trace):
    """The kit's batch-then-parse chain, traced for timelines or not: one builder, one flag."""
    from datakit.readers import csv_files as kcsv
    return kcsv.csv_reader_dataset(paths, stats=stats, label=LABEL, batch_size=batch_size,
                                   seed=seed, parse="vectorized", n_parse_threads=1, trace=trace)


def timeline_untraced(paths, stats, batch_size, seed):
    return _kit_vectorized(paths, stats, batch_size, seed, trace=False)


def timeline_traced(paths, stats, batch_size, seed):
    return _kit_vectorized(paths, stats, batch_size, seed, trace=True)


def make_csv_dataset(paths, stats, batch_size, seed):
    import tensorflow as tf
    mean, std = _mean_std(stats)
    feats = [c for c in COLUMNS if c != LABEL]
    ds = tf.data.experimental.make_csv_dataset(
        paths, batch_size, column_defaults=[tf.float32] * len(COLUMNS), label_name=LABEL,
        num_epochs=1, shuffle=True, shuffle_buffer_size=BUFFER, shuffle_seed=seed)
    return ds.map(lambda x, y: ((tf.stack([x[c] for c in feats], -1) - mean) / std, y))


def csv_dataset(paths, stats, batch_size, seed):
    import tensorflow as tf
    mean, std = _mean_std(stats)
    ds = tf.data.Dataset.list_files(paths, shuffle=True, seed=seed).interleave(
        lambda f: tf.data.experimental.CsvDataset(f, [tf.float32] * len(COLUMNS), header=True),
        cycle_length=READERS)
    ds = ds.shuffle(BUFFER, seed=seed).batch(batch_size)
    return ds.map(lambda *cols: ((tf.stack(cols[:-1], -1) - mean) / std, cols[-1])).prefetch(1)


def pandas_in_memory(paths, stats, batch_size, seed):
    import pandas as pd
    import tensorflow as tf
    mean, std = _mean_std(stats)
    df = pd.concat([pd.read_csv(p, dtype=np.float32) for p in paths], ignore_index=True)
    x = (df.drop(columns=LABEL).to_numpy(np.float32) - mean) / std
    ds = tf.data.Dataset.from_tensor_slices((x, df[LABEL].to_numpy(np.float32)))
    return ds.shuffle(BUFFER, seed=seed).batch(batch_size).prefetch(1)


def torch_dataloader(paths, stats, batch_size, seed):
    import torch
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info
    mean, std = _mean_std(stats)

    class CsvRows(IterableDataset):
        """Each worker reads every other file, line by line (no shuffling)."""

        def __iter__(self):
            info = get_worker_info()
            mine = paths[info.id::info.num_workers] if info else paths
            for path in mine:
                with open(path) as f:
                    next(f)
                    for line in f:
                        v = np.array(line.split(","), np.float32)
                        yield torch.from_numpy((v[:-1] - mean) / std), v[-1]

    return DataLoader(CsvRows(), batch_size=batch_size, num_workers=2)


def floor_read(paths, stats, batch_size, seed):
    """Lines in batches, no parsing, no shuffling: what reading alone costs."""
    import tensorflow as tf
    ds = tf.data.Dataset.list_files(paths, shuffle=True, seed=seed).interleave(
        lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=READERS)
    return ds.batch(batch_size).prefetch(1)


def floor_parse(paths, stats, batch_size, seed, rows=262_144):
    """Decode + standardize batches of lines already in memory: what parsing alone costs."""
    import tensorflow as tf
    mean, std = _mean_std(stats)
    lines = []
    with open(paths[0]) as f:
        next(f)
        lines = [line.rstrip("\n") for line in f]
    lines = (lines * (rows // len(lines) + 1))[: rows - rows % batch_size]
    batches = tf.constant(np.array(lines, dtype=object).reshape(-1, batch_size))
    defaults = [tf.constant([], tf.float32)] * len(COLUMNS)

    def parse(b):
        cols = tf.io.decode_csv(b, defaults)
        return (tf.stack(cols[:-1], -1) - mean) / std, cols[-1]

    return tf.data.Dataset.from_tensor_slices(batches).map(parse).prefetch(1)


def parse_floor(name: str, paths) -> float:
    """Rows/s of pyarrow's or polars' own CSV reader on ``paths`` (all cores), best of 3."""
    import time
    if name == "pyarrow":
        import pyarrow.csv as pacsv
        read = lambda p: pacsv.read_csv(p).num_rows  # noqa: E731
    else:
        import polars as pl
        read = lambda p: pl.read_csv(p).height  # noqa: E731
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        rows = sum(read(p) for p in paths)
        best = max(best, rows / (time.perf_counter() - t))
    return best


def floor_loop(paths, stats, batch_size, seed, rows=262_144):
    """A Python loop over ready batches (nothing to read or parse): the loop's own cost."""
    import tensorflow as tf
    x = tf.zeros([batch_size, len(COLUMNS) - 1])
    y = tf.zeros([batch_size])
    return tf.data.Dataset.from_tensors((x, y)).repeat(rows // batch_size)


CONTENDERS = {
    "kit_fast": kit_fast,
    "kit_chunk": kit_chunk,
    "kit_arrow": kit_arrow,
    "kit_classic": kit_classic,
    "classic_plain": classic_plain,
    "make_csv_dataset": make_csv_dataset,
    "CsvDataset_interleave": csv_dataset,
    "pandas_in_memory": pandas_in_memory,
    "torch_DataLoader_2w": torch_dataloader,
    "floor_read_lines": floor_read,
    "floor_parse_in_memory": floor_parse,
    "floor_python_loop": floor_loop,
    "timeline_untraced": timeline_untraced,
    "timeline_traced": timeline_traced,
}
