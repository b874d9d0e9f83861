"""The kit's fast CSV reader against pandas-in-memory, consumed as ``fit()`` consumes a dataset.

    python -m benchmarks.fit_reader [--rounds 3] [--quick]

Keras ``fit()`` pulls batches inside a ``tf.function``: no Python loop per
batch. At batch 32 a Python ``for`` loop costs more per batch than a fast
reader (about 100 us a batch here, a ceiling near 314k rows/s), so a Python-loop
benchmark measures the loop.
Here each contender (from ``benchmarks.contenders``) runs in its own process
and is timed twice on fresh pipelines: drained inside a ``tf.function``
(``datakit.perf.tune.measure``, which also sums each batch so nothing is
optimized away) and from a Python ``for`` loop (``datakit.perf.bench.benchmark``),
over the same number of rows after the same warm-up. Rounds alternate the
contenders; ratios to pandas are taken within a round.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from benchmarks.tuning import cli, run_child

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONTENDERS = ("kit_chunk", "kit_fast", "pandas_in_memory", "kit_classic")


def kit_chunk(paths, stats, batch_size, seed):
    """The kit's reader with parse="chunk": parsed chunks shuffled a chunk at a time."""
    from benchmarks.data import LABEL
    from datakit.readers import csv_files as kcsv
    return kcsv.csv_reader_dataset(paths, stats=stats, label=LABEL, batch_size=batch_size,
                                   seed=seed, parse="chunk")
BATCHES = (32, 1024)


def one(job: dict) -> dict:
    import tensorflow as tf  # noqa: F401

    import datakit  # noqa: F401
    from benchmarks.contenders import CONTENDERS as BUILD
    from benchmarks.data import load_stats
    from datakit.perf.bench import benchmark
    from datakit.perf.memory import peak_rss_bytes
    from datakit.perf.tune import measure
    stats = load_stats(job["stats"])
    batch, steps = job["batch"], job["steps"]
    warmup = max(2, 10_000 // batch)
    build = kit_chunk if job["name"] == "kit_chunk" else BUILD[job["name"]]
    ds = build(job["paths"], stats, batch, 42)
    # tf.function: skip the warm-up batches, then time `steps` batches (first one excluded)
    fn = measure(ds.skip(warmup), seconds=600, limit=steps + 1)
    ds = build(job["paths"], stats, batch, 42)
    loop = benchmark(ds, steps=steps, warmup=warmup, progress=False)
    return {"tf_function_rows_per_s": fn.rows_per_s, "python_loop_rows_per_s": loop.elements_per_s,
            "rows": fn.rows, "peak_rss_mb": peak_rss_bytes() / 1e6}


def run(rounds: int, rows: int, log=print) -> dict:
    from benchmarks.data import make_csv
    paths, stats_path = make_csv(rows, 20)
    timed = min(131_072, rows // 4)
    results: dict[tuple[str, int], list[dict]] = {}
    for r in range(rounds):
        for batch in BATCHES:
            for name in CONTENDERS:
                steps = timed // batch if name != "kit_classic" else timed // (4 * batch)
                job = {"name": name, "batch": batch, "steps": steps, "paths": paths,
                       "stats": str(stats_path)}
                res = run_child("benchmarks.fit_reader", json.dumps(job), timeout=900)
                results.setdefault((name, batch), []).append(res)
                log(f"fit-style round {r + 1} batch {batch} {name}: "
                    + (f"{res['tf_function_rows_per_s']:,.0f} rows/s in tf.function, "
                       f"{res['python_loop_rows_per_s']:,.0f} in a Python loop"
                       if "error" not in res else f"ERROR {res['error']}"))
    return {"results": results, "rows": rows, "rounds": rounds, "timed": timed}


def report(out: dict) -> str:
    res = out["results"]

    def ratios(name, batch, key):
        a, b = res.get((name, batch), []), res.get(("pandas_in_memory", batch), [])
        return [x[key] / y[key] for x, y in zip(a, b, strict=False)
                if "error" not in x and "error" not in y]

    L = ["\n## The reader as `fit()` consumes it (inside a `tf.function`) vs a Python loop "
         "(issue 15)\n",
         f"{out['rows']:,} generated rows in 20 files; each contender in its own process, "
         f"{out['timed']:,} rows timed after a ~10,000-row warm-up (the classic chain: a "
         f"quarter of that), first drained inside a `tf.function` (`datakit.perf.tune.measure`, as "
         f"Keras `fit()` pulls batches), then from a Python `for` loop on a fresh pipeline. "
         f"{out['rounds']} rounds alternating the contenders; *× pandas* is the per-round "
         f"ratio, median (min). The machine was shared (about 8 people on 2 cores).\n",
         "| batch | pipeline | rows/s in tf.function (median) | × pandas | rows/s in a Python "
         "loop (median) | × pandas | peak RSS (MB) |", "|--:|---|--:|--:|--:|--:|--:|"]
    for batch in BATCHES:
        for name in CONTENDERS:
            ok = [r for r in res.get((name, batch), []) if "error" not in r]
            if not ok:
                L.append(f"| {batch} | {name} | error | | | | |")
                continue
            fr = ratios(name, batch, "tf_function_rows_per_s")
            pr = ratios(name, batch, "python_loop_rows_per_s")
            L.append(f"| {batch} | {name} | "
                     f"{statistics.median(r['tf_function_rows_per_s'] for r in ok):,.0f} | "
                     f"{statistics.median(fr):.2f} ({min(fr):.2f}) | "
                     f"{statistics.median(r['python_loop_rows_per_s'] for r in ok):,.0f} | "
                     f"{statistics.median(pr):.2f} ({min(pr):.2f}) | "
                     f"{statistics.median(r['peak_rss_mb'] for r in ok):,.0f} |")
    return "\n".join(L) + "\n"


def main(argv=None) -> int:
    return cli("python -m benchmarks.fit_reader", argv, lambda a: one(json.loads(a.one)),
               lambda a: report(run(1 if a.quick else a.rounds,
                                    100_000 if a.quick else 1_000_000)), rounds=3)


if __name__ == "__main__":
    sys.exit(main())
