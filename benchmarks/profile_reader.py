"""Where the kit's fast CSV reader and the tracing lose time: one pipeline change at a time.

    python -m benchmarks.profile_reader 32     (or 1024; needs the data `python -m benchmarks` makes)

Variants run in one process, 3 rounds interleaved; prints median and best rows/s.
"""

import datakit, statistics, sys
import tensorflow as tf
import numpy as np
from benchmarks.data import load_stats, COLUMNS, LABEL
from benchmarks import contenders as C
from datakit import csv as kcsv, timeline as T, bench
import glob
def main():
    from benchmarks.data import WORK
    paths = sorted(glob.glob(str(WORK / "csv_1000000" / "part_*.csv")))
    stats = load_stats(WORK / "csv_1000000" / "stats.pkl")
    B = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    mean, std = C._mean_std(stats)
    files, columns = kcsv.check_files(paths)
    kinds = stats.kinds()
    defaults = [tf.constant([], tf.float32)] * 9
    def parse(lines):
        cols = tf.io.decode_csv(lines, defaults)
        return (tf.stack(cols[:-1], -1) - mean) / std, cols[-1]
    decode = kcsv._checked_decoder(columns, kinds, {LABEL}, defaults)
    def parse3(lines, numbers, paths_):
        cols = decode(lines, numbers, paths_)
        return (tf.stack(cols[:-1], -1) - mean) / std, cols[-1]
    def parse3_nocheck(lines, numbers, paths_):
        return parse(lines)
    def lines():
        return tf.data.Dataset.list_files(files, shuffle=True, seed=42).interleave(lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=5)
    def numbered():
        return tf.data.Dataset.list_files(files, shuffle=True, seed=42).interleave(kcsv._numbered_lines, cycle_length=5)
    V = {
     "A kit_fast (csv.py parse=batch)": lambda: C.kit_fast(paths, stats, B, 42),
     "B plain chain: lines>shuffle>batch>map(parse)>prefetch": lambda: lines().shuffle(10000, seed=42).batch(B).map(parse).prefetch(1),
     "C B + zip(line no., path) per line": lambda: numbered().shuffle(10000, seed=42).batch(B).map(parse3_nocheck).prefetch(1),
     "D C + regex check (= kit_fast, 1 parse thread)": lambda: numbered().shuffle(10000, seed=42).batch(B).map(parse3).prefetch(1),
     "E D with 5 parse threads": lambda: numbered().shuffle(10000, seed=42).batch(B).map(parse3, num_parallel_calls=5).prefetch(1),
     "F B traced (between + timed)": lambda: T.traced_csv_reader(paths, stats=stats, label=LABEL, batch_size=B, seed=42),
     "G B + timed parse only (tag by enumerate)": lambda: T.tag(lines().shuffle(10000, seed=42).batch(B)).map(T.timed("parse", parse), num_parallel_calls=1).prefetch(1),
     "H B + one extra scalar per batch to Python": lambda: lines().shuffle(10000, seed=42).batch(B).map(lambda l: (parse(l), tf.constant(0.0, tf.float64))).prefetch(1),
    }
    res = {k: [] for k in V}
    for r in range(3):
        for k, f in V.items():
            res[k].append(bench.benchmark(f(), steps=65536 // B, warmup=max(2, 10000 // B), progress=False).elements_per_s)
    print(f"| variant (batch {B}) | rows/s median | best |")
    print("|---|--:|--:|")
    for k, v in res.items():
        print(f"| {k} | {statistics.median(v):,.0f} | {max(v):,.0f} |")


if __name__ == "__main__":
    main()
