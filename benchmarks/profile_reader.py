"""Where the kit's fast CSV reader loses time: one pipeline change at a time, in one process.

    python -m benchmarks.profile_reader 32    (or 1024; needs the data `python -m benchmarks` makes)

Variants run in one process, rounds interleaved (``--rounds N``, default 3);
prints median and best rows/s. A is the kit's reader as it is; B is the plain
batch-then-parse chain with no bad-line bookkeeping; C-D the kit's earlier
fast design (every line zipped with its line number and file); E-H the
chunked design (each reader parses chunks of its file, rows are unbatched
before the shuffle) with its knobs, and I a row as one tensor instead of an
``(x, y)`` pair; P is pandas in memory + from_tensor_slices; Q and R the kit's
``parse="chunk"`` and ``parse="arrow"``.
"""

from __future__ import annotations

import argparse
import glob
import statistics

import tensorflow as tf

import datakit  # noqa: F401  (quiets TensorFlow)
from benchmarks import contenders as C
from benchmarks.data import LABEL, WORK, load_stats
from datakit.perf import bench
from datakit.readers.csv_files import line_decoding
from datakit.readers.csv_files.file_checks import check_files
from datakit.readers.small_sources.text_lines import numbered_lines


def variants(paths, stats, B):
    mean, std = C._mean_std(stats)
    files, columns = check_files(paths)
    defaults = [tf.constant([], tf.float32)] * len(columns)
    decode = line_decoding.checked_decoder(columns, stats.kinds(), {LABEL}, defaults)

    def parse(lines):
        cols = tf.io.decode_csv(lines, defaults)
        return (tf.stack(cols[:-1], -1) - mean) / std, cols[-1]

    def parse3(lines, numbers, paths_):
        cols = decode(lines, numbers, paths_)
        return (tf.stack(cols[:-1], -1) - mean) / std, cols[-1]

    def plain_lines(f):
        return tf.data.TextLineDataset(f).skip(1)

    def files_ds():
        return tf.data.Dataset.list_files(files, shuffle=True, seed=42)

    def lines():
        return files_ds().interleave(plain_lines, cycle_length=C.READERS)

    def numbered():
        return files_ds().interleave(numbered_lines, cycle_length=C.READERS)

    def chunked(chunk=line_decoding.LINES_PER_CHUNK, inner=None, readers=None, check=True):
        def rows_of(f):
            fn = parse3 if check else (lambda lines, numbers, paths_: parse(lines))
            return line_decoding.decoded_chunks(f, fn, chunk=chunk,
                                                num_parallel_calls=inner).unbatch()
        ds = files_ds().interleave(rows_of, cycle_length=C.READERS, num_parallel_calls=readers)
        return ds.shuffle(C.BUFFER, seed=42).batch(B).prefetch(1)

    def one_tensor_rows(f):  # features and label in one row tensor, split after batch
        def parse_rows(lines, numbers, paths_):
            x, y = parse3(lines, numbers, paths_)
            return tf.concat([x, y[:, None]], axis=-1)
        return line_decoding.decoded_chunks(f, parse_rows, num_parallel_calls=5).unbatch()

    def split(rows):
        return rows[:, :-1], rows[:, -1]

    def one_tensor():
        ds = files_ds().interleave(one_tensor_rows, cycle_length=C.READERS)
        return ds.shuffle(C.BUFFER, seed=42).batch(B).map(split).prefetch(1)

    return {
        "A kit_fast (csv_reader_dataset parse=batch, defaults)": lambda: C.kit_fast(
            paths, stats, B, 42),
        "B plain: lines>shuffle>batch>map(parse), no bad-line check": lambda: lines().shuffle(
            C.BUFFER, seed=42).batch(B).map(parse).prefetch(1),
        "C old design: B + zip(line no., path) per line + check": lambda: numbered().shuffle(
            C.BUFFER, seed=42).batch(B).map(parse3).prefetch(1),
        "D old design as shipped (C, 5 parse threads)": lambda: numbered().shuffle(
            C.BUFFER, seed=42).batch(B).map(parse3, num_parallel_calls=5).prefetch(1),
        "E chunked, 1 parse call at a time per reader": lambda: chunked(),
        "F chunked, no bad-line check": lambda: chunked(check=False),
        "G chunked, 2 parallel parse calls per reader": lambda: chunked(inner=2),
        "H chunked, 2 read threads": lambda: chunked(readers=2),
        "I chunked, 5 parse calls, one tensor per row (split after batch)": one_tensor,
        "P pandas in memory + from_tensor_slices": lambda: C.pandas_in_memory(paths, stats, B, 42),
        "Q kit parse=chunk (chunks shuffled a chunk at a time)": lambda: C.kit_chunk(
            paths, stats, B, 42),
        "R kit parse=arrow (pyarrow blocks, shuffled a block at a time)": lambda: C.kit_arrow(
            paths, stats, B, 42),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.profile_reader")
    ap.add_argument("batch", type=int, nargs="?", default=32)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    paths = sorted(glob.glob(str(WORK / "csv_1000000" / "part_*.csv")))
    stats = load_stats(WORK / "csv_1000000" / "stats.pkl")
    B = args.batch
    V = variants(paths, stats, B)
    res = {k: [] for k in V}
    for _ in range(args.rounds):
        for k, f in V.items():
            res[k].append(bench.benchmark(f(), steps=65536 // B, warmup=max(2, 10000 // B),
                                          progress=False).elements_per_s)
    print(f"| variant (batch {B}) | rows/s median | best |")
    print("|---|--:|--:|")
    for k, v in res.items():
        print(f"| {k} | {statistics.median(v):,.0f} | {max(v):,.0f} |")


if __name__ == "__main__":
    main()
