"""Where the kit's fast CSV reader loses time: one pipeline change at a time, in one process.

    python -m benchmarks.profile_reader 32    (or 1024; --rows N, --timeline)

Variants run in one process, rounds interleaved (``--rounds N``, default 3);
prints median and best rows/s. A is the kit's reader as it is; B is the plain
batch-then-parse chain with no bad-line bookkeeping; C-D the kit's earlier
fast design (every line zipped with its line number and file); E-H the
chunked design (each reader parses chunks of its file, rows are unbatched
before the shuffle) with its knobs, and I a row as one tensor instead of an
``(x, y)`` pair; P is pandas in memory + from_tensor_slices; Q and R the kit's
``parse="chunk"`` and ``parse="arrow"``; S is ``parse="arrow"`` as it was before
issue 49 (a parse map per file inside the interleave: a file's first block is
parsed only when the interleave reaches the file); T is ``parse="arrow"`` with
one tensor per column from the parse call and the features computed in the
graph (before they moved into the call). ``--timeline`` prints, for R, S and
T, when each parse call ran (ms from the drain's start, its thread and block):
where the time between batches goes.
"""

from __future__ import annotations

import argparse
import statistics

import tensorflow as tf

import datakit  # noqa: F401
from benchmarks import contenders as C
from benchmarks.arrow_tables import kit_arrow_columns
from benchmarks.data import LABEL, load_stats, make_csv
from datakit.perf import bench
from datakit.readers.csv_files import line_decoding
from datakit.readers.csv_files.file_checks import check_files
from datakit.readers.small_sources.text_lines import numbered_lines


def variants(paths, stats, B):
    mean, std = C._mean_std(stats)
    files, columns = check_files(paths)
    defaults = [tf.constant([], tf.float32)] * len(columns)
    # the checked decoder fills a missing number with its default: one value each, as the
    # reader passes (the mean there); the label is required
    filled = [tf.constant([], tf.float32) if c == LABEL else tf.constant([0.0]) for c in columns]
    decode = line_decoding.checked_decoder(columns, stats.kinds(), {LABEL}, filled)

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
        "S kit parse=arrow before issue 49 (a parse map per file)": lambda: C.kit_arrow_per_file(
            paths, stats, B, 42),
        "T kit parse=arrow, a tensor per column (features in the graph)": lambda: (
            kit_arrow_columns(paths, stats, B, 42, LABEL)),
    }


def parse_timeline(build, B):
    """When each parse call of ``build()``'s first ~100 batches ran: (start ms, end ms,
    thread, first line of the block, file), from the drain's start."""
    import threading
    import time

    from datakit.perf.throughput import measure
    from datakit.readers.csv_files import arrow
    calls, call = [], arrow.BlockParser.__call__

    def timed(self, path, *args):
        t = time.perf_counter()
        try:
            return call(self, path, *args)
        finally:
            calls.append((t, time.perf_counter(), threading.get_ident() % 1000, int(args[2]),
                          path.decode().rsplit("/", 1)[-1]))

    ds = build()
    arrow.BlockParser.__call__ = timed
    try:
        t0 = time.perf_counter()
        run = measure(ds.skip(10), seconds=600, limit=100)
    finally:
        arrow.BlockParser.__call__ = call
    print(f"{run.rows_per_s:,.0f} rows/s; first batch after {run.first_s * 1e3:.0f} ms")
    for s, e, thread, first, name in sorted(calls):
        print(f"  {1e3 * (s - t0):7.1f} -> {1e3 * (e - t0):7.1f} ms  thread {thread:3d}  "
              f"{name} from line {first}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.profile_reader")
    ap.add_argument("batch", type=int, nargs="?", default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the numeric table")
    ap.add_argument("--timeline", action="store_true",
                    help="print when each parse call of R, S and T ran, and stop")
    args = ap.parse_args(argv)
    paths, stats_path = make_csv(args.rows, 20)  # written once
    stats = load_stats(stats_path)
    B = args.batch
    V = variants(paths, stats, B)
    if args.timeline:
        for k in [k for k in V if k[0] in "RST"]:
            print(k)
            parse_timeline(V[k], B)
        return
    res: dict[str, list[float]] = {k: [] for k in V}
    errors: dict[str, str] = {}
    for _ in range(args.rounds):
        for k, f in V.items():
            try:
                res[k].append(bench.benchmark(f(), steps=65536 // B, warmup=max(2, 10000 // B),
                                              progress=False).elements_per_s)
            except (ValueError, TypeError, tf.errors.OpError) as e:  # a variant the kit outgrew
                errors[k] = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    print(f"| variant (batch {B}) | rows/s median | best |")
    print("|---|--:|--:|")
    for k, v in res.items():
        print(f"| {k} | {statistics.median(v):,.0f} | {max(v):,.0f} |" if v else
              f"| {k} | error: {errors.get(k, 'not run')} | |")


if __name__ == "__main__":
    main()
