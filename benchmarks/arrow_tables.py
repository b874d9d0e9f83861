"""``parse="arrow"`` against pyarrow's own reader, on two tables, as ``fit()`` consumes (issue 49).

    python -m benchmarks.arrow_tables [--rounds 3] [--quick]

Two tables of 400,000 rows in 20 files (``--quick``: 100,000): the numeric
table (9 number columns, :func:`benchmarks.data.make_csv`) and the
housing-like table (rows drawn from ``data/housing``: 9 number columns, some
empty, and a text column, :func:`benchmarks.data.make_housing_like`). On each,
in its own process: the kit's reader (``parse="arrow"``, batch 1024, seed 42,
drained inside a ``tf.function`` as Keras ``fit()`` pulls batches:
``datakit.perf.throughput.measure``, one epoch after a ~10,000-row warm-up, best of 3), the
same reader
as it was before issue 49 (a parse map per file inside the interleave:
``contenders.kit_arrow_per_file``), the reader before its features moved into the parse
call (a tensor per column, text as strings, features in the graph:
:func:`kit_arrow_columns`), and pyarrow's and polars' own CSV readers
on the same files (``contenders.parse_floor``). Rounds alternate them; ratios
to pyarrow are taken within a round. The load average is read before and
after, since the machine is shared.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

from benchmarks.processes import cli, run_child

TABLES = ("numeric", "housing-like")
KITS = ("kit_arrow", "kit_arrow_columns", "kit_arrow_per_file")
FLOORS = ("pyarrow", "polars")
BATCH = 1024
WARMUP = max(2, 10_000 // BATCH)  # batches skipped before the clock starts
ROWS = 400_000
#: Where ``python -m benchmarks --arrow-only`` puts this file's section of RESULTS.md.
TITLE = "## `parse=\"arrow\"` against pyarrow's own reader, per table"
ABOUT = {"kit_arrow": "kit `parse=\"arrow\"` (parsed after the interleave)",
         "kit_arrow_columns": "the same, a tensor per column, features in the graph",
         "kit_arrow_per_file": "the same, a parse map per file (the stall before issue 49)"}


def kit_arrow_columns(paths, stats, batch_size, seed, label):
    """``parse="arrow"`` as it was before its features moved into the parse call: one
    tensor per column from the call (text as strings), standardized, looked up and one-hot
    encoded in the graph. The same blocks, order and batches (bit for bit)."""
    from unittest import mock

    from datakit.readers.csv_files import arrow, csv_reader_dataset
    fused = arrow.block_reading
    with mock.patch.object(arrow, "block_reading", lambda p, o: fused(p, o, fused=False)):
        return csv_reader_dataset(paths, stats=stats, label=label, batch_size=batch_size,
                                  seed=seed, parse="arrow")


def _table(name: str, rows: int):
    from benchmarks.data import HOUSING_LABEL, LABEL, make_csv, make_housing_like
    if name == "numeric":
        return (*make_csv(rows, 20), LABEL)
    return (*make_housing_like(rows, 20), HOUSING_LABEL)


def _cpu() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _floor(name: str, paths) -> dict:
    """pyarrow's or polars' own reader: rows/s best of 3 reads, and CPU per row over them."""
    from benchmarks.contenders import parse_floor
    c = _cpu()
    rate = parse_floor(name, paths)  # 3 reads of every file
    c = _cpu() - c
    rows = sum(sum(1 for _ in open(p, "rb")) - 1 for p in paths)  # lines, less the headers
    return {"rows_per_s": rate, "cpu_us_per_1024": c / (3 * rows) * 1024e6}


def _kit_cpu(ds) -> float:
    """CPU µs per 1,024 rows in the steady state, as ``fit(train.repeat(), ...)`` reads: the
    CPU of 3 epochs through one iterator less that of 1 (so the iterator's start-up, paid
    once per run, cancels), each drained inside a ``tf.function`` traced before."""
    import tensorflow as tf

    def rows(n, batch):
        return n + tf.shape(tf.nest.flatten(batch)[0], out_type=tf.int64)[0]

    one, three = (tf.function(lambda d=d: d.reduce(tf.constant(0, tf.int64), rows))
                  for d in (ds, ds.repeat(3)))
    one(), three()  # traced, and warm
    c = _cpu()
    n1 = int(one())
    c1, c = _cpu() - c, _cpu()
    n3 = int(three())
    c3 = _cpu() - c
    return (c3 - c1) / (n3 - n1) * 1024e6


def one(job: dict) -> dict:
    import datakit
    datakit.quiet_tensorflow()
    from benchmarks import contenders
    from benchmarks.data import load_stats
    paths, stats_path, label = _table(job["table"], job["rows"])
    if job["name"] in FLOORS:
        return _floor(job["name"], paths)
    from datakit.perf.throughput import measure
    build = (kit_arrow_columns if job["name"] == "kit_arrow_columns"
             else getattr(contenders, job["name"]))
    ds = build(paths, load_stats(stats_path), BATCH, 42, label=label)
    # Best of 3 drains (a new iterator each), as the floors are best of 3 reads.
    run = measure(ds.skip(WARMUP), seconds=600, limit=job["steps"] + 1, repeats=3)
    return {"rows_per_s": run.rows_per_s, "rows": run.rows, "cpu_us_per_1024": _kit_cpu(ds)}


def run(rounds: int, rows: int = ROWS, log=print) -> dict:
    from importlib.util import find_spec
    floors = [f for f in FLOORS if find_spec(f) is not None]  # polars: where installed
    load = [os.getloadavg()[0]]
    for t in TABLES:  # write the tables first, outside the timings
        _table(t, rows)
    steps = rows // BATCH - WARMUP - 1  # the whole epoch after the warm-up
    results: dict[tuple[str, str], list[dict]] = {}
    for r in range(rounds):
        for table in TABLES:
            for name in (*KITS, *floors):
                res = run_child("benchmarks.arrow_tables", json.dumps(
                    {"table": table, "name": name, "rows": rows, "steps": steps}), timeout=900)
                results.setdefault((table, name), []).append(res)
                log(f"arrow round {r + 1} {table} {name}: "
                    + (f"{res['rows_per_s']:,.0f} rows/s" if "error" not in res
                       else f"ERROR {res['error']}"))
    load.append(os.getloadavg()[0])
    return {"results": results, "rows": rows, "rounds": rounds, "steps": steps, "load": load,
            "missing": [f for f in FLOORS if f not in floors],
            "when": time.strftime("%Y-%m-%d %H:%M")}


def _ratios(res, table, a, b="pyarrow", key="rows_per_s"):
    return [x[key] / y[key] for x, y in
            zip(res.get((table, a), []), res.get((table, b), []), strict=False)
            if "error" not in x and "error" not in y]


def _median(runs, key="rows_per_s"):
    ok = [r[key] for r in runs if "error" not in r]
    return statistics.median(ok) if ok else float("nan")


def report(out: dict) -> str:
    res, (before, after) = out["results"], out["load"]
    L = [f"\n{TITLE} (issue 49)\n",
         f"Run {out['when']}, load average (1 min) {before:.1f} before and {after:.1f} after, "
         f"on {os.cpu_count()} logical cores (shared). Each table: {out['rows']:,} rows in 20 "
         f"files; *numeric*: 9 generated number columns; *housing-like*: rows drawn from "
         f"`data/housing` (9 number columns, some empty, one text column, one-hot encoded). "
         f"The kit's readers: batch {BATCH}, the epoch's {out['steps'] * BATCH:,} rows after a "
         f"~10,000-row warm-up, drained inside a `tf.function` (as `fit()` pulls batches), "
         f"best of 3 drains; "
         f"pyarrow and polars: their own `read_csv` of the same files into their own table "
         f"(all cores, best of 3 reads). Each in its own process, {out['rounds']} round(s) "
         f"alternating them; *× pyarrow* is the per-round ratio, median (min).\n",
         "*CPU per 1,024 rows*: the process's CPU time (all its threads) per 1,024 rows, median "
         "over rounds (the kit: 3 epochs through one iterator less 1, each drained in a "
         "`tf.function`, so neither tracing nor the iterator's start-up is counted, as in "
         "`fit(train.repeat(), ...)`; the floors: their 3 reads). On a machine whose cores "
         "are all busy, rows/s "
         "follows CPU per row, so *pyarrow's CPU / this one* is the ratio such a machine "
         "would give; on idle cores, the wall-clock ratio shows how well the work overlaps.\n",
         "| table | reader | rows/s (median) | × pyarrow, median (min) | CPU µs per 1,024 rows "
         "(median) | pyarrow's CPU / this one, median |", "|---|---|--:|--:|--:|--:|"]
    for table in TABLES:
        for name in [n for n in (*KITS, *FLOORS) if n not in out["missing"]]:
            runs = res.get((table, name), [])
            err = next((r["error"] for r in runs if "error" in r), None)
            rs = _ratios(res, table, name)
            ratio = f"{statistics.median(rs):.2f} ({min(rs):.2f})" if rs else "n/a"
            cpu = _median(runs, "cpu_us_per_1024")
            cr = _ratios(res, table, "pyarrow", name, "cpu_us_per_1024")
            L.append(f"| {table} | {ABOUT.get(name, name + ' `read_csv`')} | "
                     + (f"error: {err} | | | |" if err and not rs else
                        f"{_median(runs):,.0f} | {ratio} | {cpu:,.0f} | "
                        f"{statistics.median(cr) if cr else float('nan'):.2f} |"))
    if out["missing"]:
        L.append(f"\n(Not installed here, so not run: {', '.join(out['missing'])}.)")
    L += ["\nIssue 49's target in this run (median of the per-round ratios):\n",
          "| target | measured | met? |", "|---|--:|:-:|"]
    for table in TABLES:
        for what, rs in (("rows/s", _ratios(res, table, "kit_arrow")),
                         ("by CPU per row", _ratios(res, table, "pyarrow", "kit_arrow",
                                                    "cpu_us_per_1024"))):
            v = statistics.median(rs) if rs else float("nan")
            L.append(f"| {table}: kit `parse=\"arrow\"` >= 0.5x pyarrow at batch {BATCH}, {what} "
                     f"| {v:.2f} | {'yes' if v >= 0.5 else 'no'} |")
    return "\n".join(L) + "\n"


def section(*, quick: bool = False, rounds: int = 3, log=print) -> str:
    return report(run(1 if quick else rounds, 100_000 if quick else ROWS, log=log))


def update_results(path: Path, *, quick: bool = False, rounds: int = 3, log=print) -> None:
    """Replace this file's section of ``path`` (up to the next section or marker), or add it
    before the tuning sections' marker (or at the end)."""
    old = path.read_text() if path.exists() else ""
    text = section(quick=quick, rounds=rounds, log=log)
    head, sep, tail = old.partition("\n" + TITLE)
    if sep:
        ends = [i for i in (tail.find("\n## "), tail.find("\n<!--")) if i >= 0]
        rest = tail[min(ends):] if ends else ""
    else:
        from benchmarks.tuning import MARKER
        head, sep, rest = old.partition("\n" + MARKER)
        rest = sep + rest
    path.write_text(head.rstrip("\n") + "\n" + text + rest)


def main(argv=None) -> int:
    return cli("python -m benchmarks.arrow_tables", argv, lambda a: one(json.loads(a.one)),
               lambda a: section(quick=a.quick, rounds=a.rounds), rounds=3)


if __name__ == "__main__":
    sys.exit(main())
