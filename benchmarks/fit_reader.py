"""The kit's CSV readers against pandas-in-memory and the parse floor, consumed as ``fit()`` does.

    python -m benchmarks.fit_reader [--rounds 3] [--quick]

Keras ``fit()`` pulls batches inside a ``tf.function``: no Python loop per
batch. At batch 32 a Python ``for`` loop costs more per batch than a fast
reader (about 100 us a batch here, a ceiling near 314k rows/s), so a Python-loop
benchmark measures the loop.
Here each contender (from ``benchmarks.contenders``) runs in its own process
and is timed twice on fresh pipelines: drained inside a ``tf.function``
(``datakit.perf.throughput.measure``, which also sums each batch so nothing is
optimized away) and from a Python ``for`` loop (``datakit.perf.bench.benchmark``),
over the same number of rows after the same warm-up. Rounds alternate the
contenders; ratios to pandas are taken within a round. Then, in the same run:
pyarrow's and polars' own CSV readers on the same files (the parse floor), the
binary cache (``parse="arrow", cache=...``: the first epoch parses and writes,
the second reads tensors back; and ``Dataset.save``/``load``), and peak RSS over
one whole epoch at two sizes.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from benchmarks.processes import cli, run_child

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONTENDERS = ("kit_arrow", "kit_chunk", "kit_fast", "pandas_in_memory", "kit_classic")
BATCHES = (32, 1024)
ROWS = 400_000  # the data set: 20 files of 9 number columns
#: Where ``python -m benchmarks --fit-only`` puts this file's section of RESULTS.md.
TITLE = "## The reader as `fit()` consumes it"


def _speed(job: dict, stats) -> dict:
    from benchmarks.contenders import CONTENDERS as BUILD
    from datakit.perf.bench import benchmark
    from datakit.perf.throughput import measure
    batch, steps = job["batch"], job["steps"]
    warmup = max(2, 10_000 // batch)
    build = BUILD[job["name"]]
    ds = build(job["paths"], stats, batch, 42)
    # tf.function: skip the warm-up batches, then time `steps` batches (first one excluded)
    fn = measure(ds.skip(warmup), seconds=600, limit=steps + 1)
    ds = build(job["paths"], stats, batch, 42)
    loop = benchmark(ds, steps=steps, warmup=warmup, progress=False)
    return {"tf_function_rows_per_s": fn.rows_per_s, "python_loop_rows_per_s": loop.elements_per_s,
            "rows": fn.rows}


def _cache(job: dict, stats) -> dict:
    """Two epochs of ``parse="arrow", cache=``, then ``Dataset.save`` / ``load`` of the same."""
    import tempfile

    import tensorflow as tf

    from benchmarks.contenders import kit_arrow
    from datakit.perf.throughput import measure
    batch = job["batch"]
    with tempfile.TemporaryDirectory(dir=HERE / "work") as d:
        ds = kit_arrow(job["paths"], stats, batch, 42, cache=d)
        first, second = measure(ds, seconds=600), measure(ds, seconds=600)
        plain = kit_arrow(job["paths"], stats, batch, 42)
        plain.save(f"{d}/saved")
        loaded = tf.data.Dataset.load(f"{d}/saved")
        load = measure(loaded.prefetch(1), seconds=600)
    return {"epoch1_rows_per_s": first.rows_per_s, "epoch2_rows_per_s": second.rows_per_s,
            "load_rows_per_s": load.rows_per_s, "rows": first.total_rows}


def one(job: dict) -> dict:
    import tensorflow as tf  # noqa: F401

    import datakit  # noqa: F401
    from benchmarks.data import load_stats
    from datakit.perf.memory import peak_rss_bytes
    stats = load_stats(job["stats"])
    if job["kind"] == "floor":
        from benchmarks.contenders import parse_floor
        out = {"rows_per_s": parse_floor(job["name"], job["paths"])}
    elif job["kind"] == "cache":
        out = _cache(job, stats)
    elif job["kind"] == "memory":
        from benchmarks.contenders import CONTENDERS as BUILD
        from datakit.perf.throughput import measure
        run = measure(BUILD[job["name"]](job["paths"], stats, 1024, 42), seconds=600)
        out = {"rows": run.total_rows, "rows_per_s": run.rows_per_s}
    else:
        out = _speed(job, stats)
    return {**out, "peak_rss_mb": peak_rss_bytes() / 1e6}


def run(rounds: int, rows: int = ROWS, log=print) -> dict:
    from benchmarks.data import make_csv
    paths, stats_path = make_csv(rows, 20)
    timed = min(131_072, rows // 4)
    base = {"paths": paths, "stats": str(stats_path)}
    results: dict[tuple[str, int], list[dict]] = {}

    def job(**kw):
        res = run_child("benchmarks.fit_reader", json.dumps({**base, **kw}), timeout=900)
        return res

    for r in range(rounds):
        for batch in BATCHES:
            for name in CONTENDERS:
                steps = timed // batch if name != "kit_classic" else timed // (4 * batch)
                res = job(kind="speed", name=name, batch=batch, steps=steps)
                results.setdefault((name, batch), []).append(res)
                log(f"fit-style round {r + 1} batch {batch} {name}: "
                    + (f"{res['tf_function_rows_per_s']:,.0f} rows/s in tf.function, "
                       f"{res['python_loop_rows_per_s']:,.0f} in a Python loop"
                       if "error" not in res else f"ERROR {res['error']}"))
        for name in ("pyarrow", "polars"):
            res = job(kind="floor", name=name)
            results.setdefault((name, 0), []).append(res)
            log(f"floor round {r + 1} {name}: {res}")
    cache = {b: job(kind="cache", batch=b) for b in BATCHES}
    log(f"cache: {cache}")
    memory = {}
    for n_files in (5, 20):
        for name in ("kit_arrow", "pandas_in_memory"):
            memory[(name, n_files * rows // 20)] = res = job(kind="memory", name=name,
                                                              paths=paths[:n_files])
            log(f"memory {name} {n_files * rows // 20:,} rows: {res}")
    return {"results": results, "cache": cache, "memory": memory, "rows": rows,
            "rounds": rounds, "timed": timed}


def _median(runs, key):
    ok = [r[key] for r in runs if "error" not in r]
    return statistics.median(ok) if ok else float("nan")


def _ratios(res, a, b, batch, key="tf_function_rows_per_s", b_batch=None):
    xs, ys = res.get((a, batch), []), res.get((b, batch if b_batch is None else b_batch), [])
    other = key if b_batch is None else "rows_per_s"
    return [x[key] / y[other] for x, y in zip(xs, ys, strict=False)
            if "error" not in x and "error" not in y]


def _ratio_text(rs):
    return f"{statistics.median(rs):.2f} ({min(rs):.2f})" if rs else "n/a"


def report(out: dict) -> str:
    res = out["results"]
    L = [f"\n{TITLE} (inside a `tf.function`) vs a Python loop, and the parse floor "
         "(issues 15, 25)\n",
         f"{out['rows']:,} generated rows (9 number columns) in 20 files; each contender in its "
         f"own process, {out['timed']:,} rows timed after a ~10,000-row warm-up (the classic "
         f"chain: a quarter of that), first drained inside a `tf.function` "
         f"(`datakit.perf.throughput.measure`, as Keras `fit()` pulls batches), then from a Python "
         f"`for` loop on a fresh pipeline. {out['rounds']} rounds alternating the contenders; "
         f"*× pandas* is the per-round ratio, median (min). Peak RSS is the process's "
         f"high-water mark (TensorFlow alone is ~600 MB of it). The machine was shared "
         f"(several people on 2 cores): compare ratios, not rows/s across tables.\n",
         "| batch | pipeline | rows/s in tf.function (median) | × pandas | rows/s in a Python "
         "loop (median) | × pandas | peak RSS (MB) |", "|--:|---|--:|--:|--:|--:|--:|"]
    for batch in BATCHES:
        for name in CONTENDERS:
            ok = [r for r in res.get((name, batch), []) if "error" not in r]
            if not ok:
                err = (res.get((name, batch)) or [{"error": "not run"}])[0].get("error")
                L.append(f"| {batch} | {name} | error: {err} | | | | |")
                continue
            fr = _ratios(res, name, "pandas_in_memory", batch)
            pr = _ratios(res, name, "pandas_in_memory", batch, "python_loop_rows_per_s")
            L.append(f"| {batch} | {name} | {_median(ok, 'tf_function_rows_per_s'):,.0f} | "
                     f"{_ratio_text(fr)} | {_median(ok, 'python_loop_rows_per_s'):,.0f} | "
                     f"{_ratio_text(pr)} | {_median(ok, 'peak_rss_mb'):,.0f} |")
    L += ["\nThe parse floor: each library's own CSV reader on the same 20 files (all cores, "
          "best of 3 reads per process), into its own table, no `tf.data`:\n",
          "| reader | rows/s (median over rounds) | kit_arrow at batch 1024 / it, median (min) |",
          "|---|--:|--:|"]
    for name in ("pyarrow", "polars"):
        runs = res.get((name, 0), [])
        L.append(f"| {name} | {_median(runs, 'rows_per_s'):,.0f} | "
                 f"{_ratio_text(_ratios(res, 'kit_arrow', name, 1024, b_batch=0))} |")
    cache = out["cache"]
    L += ["\nThe binary cache (`csv_reader_dataset(parse=\"arrow\", cache=folder)`): one whole "
          "epoch each, drained in a `tf.function`; the second epoch reads the tensors the first "
          "wrote. `Dataset.load`: the same reader's batches written once with `Dataset.save`, "
          "read back (no shuffle, no parse).\n",
          "| batch | epoch 1 (parse + write), rows/s | epoch 2 (from the cache), rows/s | "
          "epoch 2 / epoch 1 | `Dataset.load`, rows/s |", "|--:|--:|--:|--:|--:|"]
    for batch, c in cache.items():
        if "error" in c:
            L.append(f"| {batch} | error: {c['error']} | | | |")
            continue
        L.append(f"| {batch} | {c['epoch1_rows_per_s']:,.0f} | {c['epoch2_rows_per_s']:,.0f} | "
                 f"{c['epoch2_rows_per_s'] / c['epoch1_rows_per_s']:.2f} | "
                 f"{c['load_rows_per_s']:,.0f} |")
    L += ["\nPeak RSS over one whole epoch at batch 1024, at two sizes (the first 5 files, "
          "then all 20):\n", "| pipeline | rows | peak RSS (MB) | rows/s |", "|---|--:|--:|--:|"]
    for (name, n), r in sorted(out["memory"].items()):
        L.append(f"| {name} | {n:,} | error: {r['error']} | |" if "error" in r else
                 f"| {name} | {n:,} | {r['peak_rss_mb']:,.0f} | {r['rows_per_s']:,.0f} |")
    L.append(_verdicts(out))
    return "\n".join(L) + "\n"


def _verdicts(out: dict) -> str:
    """Issue 25's targets, checked on this run's medians of per-round ratios."""
    res = out["results"]
    med = lambda rs: statistics.median(rs) if rs else float("nan")  # noqa: E731
    checks = [
        ("kit_arrow >= 2x pandas at batch 1024",
         med(_ratios(res, "kit_arrow", "pandas_in_memory", 1024)), 2.0),
        ("kit_arrow >= 1.2x pandas at batch 32",
         med(_ratios(res, "kit_arrow", "pandas_in_memory", 32)), 1.2),
        ("kit_arrow at batch 1024 >= half of pyarrow's own rate",
         med(_ratios(res, "kit_arrow", "pyarrow", 1024, b_batch=0)), 0.5)]
    for batch, c in out["cache"].items():
        if "error" not in c:
            checks.append((f"cached epoch 2 >= 2x epoch 1 at batch {batch}",
                           c["epoch2_rows_per_s"] / c["epoch1_rows_per_s"], 2.0))
    L = ["\nIssue 25's targets in this run:\n", "| target | measured | met? |", "|---|--:|:-:|"]
    L += [f"| {t} | {v:.2f} | {'yes' if v >= goal else 'no'} |" for t, v, goal in checks]
    return "\n".join(L)


def update_results(path: Path, *, quick: bool = False, rounds: int = 3, log=print) -> None:
    """Replace this file's section of ``path`` (up to the next section), keeping the rest."""
    old = path.read_text() if path.exists() else ""
    text = report(run(1 if quick else rounds, 100_000 if quick else ROWS, log=log))
    head, sep, tail = old.partition("\n" + TITLE)
    rest = tail.split("\n## ", 1)[1] if sep and "\n## " in tail else ""
    path.write_text(head.rstrip("\n") + "\n" + text + ("\n## " + rest if rest else ""))


def main(argv=None) -> int:
    return cli("python -m benchmarks.fit_reader", argv, lambda a: one(json.loads(a.one)),
               lambda a: report(run(1 if a.quick else a.rounds,
                                    100_000 if a.quick else ROWS)), rounds=3)


if __name__ == "__main__":
    sys.exit(main())
