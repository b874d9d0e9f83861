"""``python -m benchmarks``: run every comparison side by side and write benchmarks/RESULTS.md.

Options: ``--rounds N`` (default 3), ``--rows-timed N`` rows timed per
throughput run (default 131,072, after a ~10,000-row warm-up),
``--quick`` (a 100,000-row data set, 1 round: to check the harness),
``--no-video`` (skip the video benchmark that follows the CSV one),
``--no-doctor`` / ``--doctor-only`` (skip, or run only, the tuning table and
the fit()-style reader comparison of ``benchmarks/tuning.py``), ``--fit-only``
(run only the fit()-style comparison with the parse floor, the binary cache and
memory at two sizes, ``benchmarks/fit_reader.py``, replacing its section of --out),
``--arrow-only`` (run only ``parse="arrow"`` against pyarrow's own reader on the
numeric and the housing-like table, ``benchmarks/arrow_tables.py``, replacing its
section of --out; the full run writes it before the tuning sections),
``--video-peers-only`` (run only the kit's video paths against torchcodec, decord,
the TF tutorial and the decode floor, ``benchmarks/video_peers.py``; with
``--quick``, its seconds-long check), ``--converter-only`` (run only the converter
against its work's floor, frames per CPU second and cores busy,
``benchmarks/converter_floor.py``, a few minutes). The video part ends with
``benchmarks/accelerator.py``: each video feed's clips per CPU second
(``RESULTS_accelerator.md``) and, where a GPU is seen, the training step it feeds;
then ``benchmarks/decoders.py`` (the direct reader with 1, 2, 4, ... up to all cores'
decoders, threads against processes, the GIL's share: ``RESULTS_decoders.md``) and
``benchmarks/fit_overhead.py`` (``fit()`` on the CPU: each feed's step against the
memory-fed step, the cores each side takes, TensorFlow's thread settings compared).
Each measurement runs in its own process, so peak RSS is that pipeline's
own; rounds interleave the contenders so that a busy moment on a shared
machine hits them alike. Ratios are taken within a round, then summarized
as median and min over rounds.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.contenders import CONTENDERS
from benchmarks.data import WORK, make_csv
from benchmarks.processes import run_in_process
from benchmarks.stats import median as _med

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BATCHES = (32, 1024)
SEED = 42


def run_job(job: dict, timeout: int = 900) -> dict:
    """Run one worker process; return its result dict (or {'error': ...})."""
    out = run_in_process("benchmarks.worker", job, timeout)
    return out if "error" in out else out["result"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows-timed", type=int, default=131_072)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--no-video", action="store_true", help="skip benchmarks/video_bench.py")
    ap.add_argument("--no-doctor", action="store_true",
                    help="skip the tuning table and the fit()-style reader (benchmarks/tuning.py)")
    ap.add_argument("--no-memory", action="store_true", help="skip benchmarks/memory.py")
    ap.add_argument("--doctor-only", action="store_true",
                    help="run only those, replacing their sections of --out")
    ap.add_argument("--fit-only", action="store_true",
                    help="run only benchmarks/fit_reader.py, replacing its section of --out")
    ap.add_argument("--arrow-only", action="store_true",
                    help="run only benchmarks/arrow_tables.py, replacing its section of --out")
    ap.add_argument("--video-peers-only", action="store_true",
                    help="run only benchmarks/video_peers.py (RESULTS_video_peers.md)")
    ap.add_argument("--converter-only", action="store_true",
                    help="run only benchmarks/converter_floor.py (RESULTS_converter.md)")
    args = ap.parse_args(argv)
    if args.converter_only:
        from benchmarks import converter_floor
        return converter_floor.main(["--quick"] if args.quick else [])
    if args.video_peers_only:
        from benchmarks import video_peers
        return video_peers.main(["--quick"] if args.quick else [])
    if args.fit_only:
        from benchmarks import fit_reader
        fit_reader.update_results(Path(args.out), quick=args.quick, rounds=args.rounds, log=log)
        return 0
    if args.arrow_only:
        from benchmarks import arrow_tables
        arrow_tables.update_results(Path(args.out), quick=args.quick, rounds=args.rounds, log=log)
        return 0
    if args.doctor_only:
        from benchmarks import tuning
        tuning.update_results(Path(args.out), quick=args.quick, log=log)
        return 0
    rows = 100_000 if args.quick else 1_000_000
    rounds = 1 if args.quick else args.rounds
    rows_timed = min(args.rows_timed, rows // 4)
    started = time.time()
    log(f"generating {rows:,} rows in 20 files under {WORK.name}/ (once)")
    paths, stats_path = make_csv(rows, 20)
    base = {"paths": paths, "stats": str(stats_path), "seed": SEED}

    speed: dict[tuple[str, int], list[dict]] = {}
    for r in range(rounds):
        for batch in BATCHES:
            for name in CONTENDERS:
                warmup = max(2, 10_000 // batch)
                job = {**base, "kind": "speed", "name": name, "batch": batch,
                       "warmup": warmup, "steps": rows_timed // batch}
                res = run_job(job)
                speed.setdefault((name, batch), []).append(res)
                log(f"round {r + 1}/{rounds} batch {batch:4d} {name:24s} "
                    + (f"{res['elements_per_s']:>10,.0f} rows/s  "
                       f"peak RSS {res['maxrss_mb']:,.0f} MB"
                       if "error" not in res else f"ERROR {res['error']}"))

    memory = {}
    for n_files in (4, 20):
        for name in ("kit_fast", "pandas_in_memory"):
            job = {**base, "paths": paths[:n_files], "kind": "speed", "name": name, "batch": 1024,
                   "warmup": 2, "steps": None}
            memory[(name, n_files * rows // 20)] = res = run_job(job)
            log(f"memory {name} {n_files * rows // 20:,} rows: {res.get('maxrss_mb', res)}")

    mixing = {}
    subset = paths[:4]
    for name in ("kit_fast", "kit_classic", "make_csv_dataset", "CsvDataset_interleave"):
        mixing[name] = run_job({**base, "paths": subset, "kind": "mixing", "name": name,
                                "batch": 32})
        log(f"mixing {name}: {mixing[name]}")
    from benchmarks.worker import mixing_figures
    n = len(subset) * rows // 20
    perm = np.random.default_rng(SEED).permutation(n)
    mixing["full random permutation"] = {"rows": n, **mixing_figures(
        perm, np.arange(n) // (rows // 20), 32)}

    overlap = [run_job({"kind": "overlap", "cost": 0.02, "n": 100}) for _ in range(rounds)]
    log(f"overlap: {overlap}")

    text = report(speed, memory, mixing, overlap, rows=rows, rounds=rounds,
                  rows_timed=rows_timed, minutes=(time.time() - started) / 60)
    from benchmarks import arrow_tables  # before the tuning sections (--doctor-only keeps it)
    text += arrow_tables.section(quick=args.quick, rounds=rounds, log=log)
    if not args.no_doctor:
        from benchmarks import tuning
        text += tuning.sections(quick=args.quick, log=log)
    Path(args.out).write_text(text)
    print(text)
    log(f"wrote {args.out}")

    if not args.no_memory:  # the memory report's table: benchmarks/RESULTS_memory.md
        from benchmarks import memory
        memory.main([])
    if not args.no_video and importlib.util.find_spec("benchmarks.video_bench") is not None:
        from benchmarks import video_bench
        video_bench.main()
    if not args.no_video:  # the kit's video paths against the peers: RESULTS_video_peers.md
        from benchmarks import video_peers
        video_peers.main(["--quick"] if args.quick else [])
    if not args.no_video:  # the converter against its work's floor: RESULTS_converter.md
        from benchmarks import converter_floor
        converter_floor.main(["--quick"] if args.quick else [])
    if not args.no_video:  # does the input keep an accelerator busy? RESULTS_accelerator.md
        from benchmarks import accelerator
        accelerator.main(["--per-core", "--quick"] if args.quick else ["--per-core"])
        accelerator.main(["--quick"] if args.quick else [])  # trains where a GPU is
        # the direct reader with 1, 2, 4, ... decoders and the GIL's share: RESULTS_decoders.md
        from benchmarks import decoders, fit_overhead
        decoders.main(["--quick"] if args.quick else [])
        # fit() on the CPU: each feed's step against the memory-fed step, TF's threads compared
        fit_overhead.main(["--quick"] if args.quick else [])
    return 0


# -- the report ---------------------------------------------------------------------------


def _ok(runs):
    return [r for r in runs if "error" not in r]


def _ratios(speed, name, ref, batch):
    """Per-round rows/s ratio name / ref (rounds where both ran)."""
    a, b = speed.get((name, batch), []), speed.get((ref, batch), [])
    return [x["elements_per_s"] / y["elements_per_s"] for x, y in zip(a, b, strict=False)
            if "error" not in x and "error" not in y]


def _versions() -> str:
    out = [f"Python {platform.python_version()}"]
    for mod in ("tensorflow", "torch", "pandas", "numpy"):
        try:
            dist = mod if mod != "tensorflow" else "tensorflow-cpu"
            out.append(f"{mod} {__import__('importlib.metadata').metadata.version(dist)}")
        except Exception:
            try:
                out.append(f"{mod} {__import__('importlib.metadata').metadata.version(mod)}")
            except Exception:
                pass
    return ", ".join(out)


def report(speed, memory, mixing, overlap, *, rows, rounds, rows_timed, minutes) -> str:
    import psutil
    L = []
    L.append("# Benchmarks: CSV input pipelines side by side\n")
    L.append(f"Made by `make bench` (`python -m benchmarks`) on "
             f"{datetime.date.today().isoformat()}, in {minutes:.0f} min. Machine: "
             f"**{os.cpu_count()} logical cores** ({psutil.cpu_count(logical=False)} physical), "
             f"{psutil.virtual_memory().total / 1e9:.0f} GB RAM, {platform.machine()}; "
             f"load average at the end {os.getloadavg()[0]:.1f} (the machine was shared). "
             f"{_versions()}.\n")
    L.append(f"Data: {rows:,} generated rows (9 numeric columns, fixed seed) in 20 CSV files. "
             f"Each throughput run is its own process, times {rows_timed:,} rows after a "
             f"~10,000-row warm-up, iterating from a Python `for` loop as a training loop would; "
             f"{rounds} rounds, contenders interleaved. *× classic* is the per-round ratio to "
             f"`kit_classic` (the classic per-line chain), median (min) over rounds. Peak RSS is "
             f"the highest RSS sampled every 5 ms from building the pipeline to its last batch "
             f"(plus DataLoader workers' RSS; TensorFlow alone is ~600 MB of it); *growth* is "
             f"above the RSS after importing TensorFlow / PyTorch.\n")
    for batch in BATCHES:
        L.append(f"\n## Throughput, batch {batch}\n")
        L.append("| pipeline | rows/s (median) | rows/s (best) | × classic | first batch (s) "
                 "| peak RSS (MB) | RSS growth (MB) |")
        L.append("|---|--:|--:|--:|--:|--:|--:|")
        for name in CONTENDERS:
            runs = _ok(speed.get((name, batch), []))
            if not runs:
                err = speed.get((name, batch), [{"error": "not run"}])[0].get("error")
                L.append(f"| {name} | error: {err} | | | | | |")
                continue
            rates = [r["elements_per_s"] for r in runs]
            ratio = _ratios(speed, name, "kit_classic", batch)
            L.append(f"| {name} | {_med(rates):,.0f} | {max(rates):,.0f} | "
                     f"{_med(ratio):.2f} ({min(ratio) if ratio else float('nan'):.2f}) | "
                     f"{_med([r['first_element_s'] + r['build_s'] for r in runs]):.2f} | "
                     f"{_med([r['maxrss_mb'] for r in runs]):,.0f} | "
                     f"{_med([r['maxrss_growth_mb'] for r in runs]):,.0f} |")
    L.append("\n## Peak memory vs number of rows (batch 1024, one whole epoch)\n")
    L.append("| pipeline | rows | peak RSS (MB) | growth (MB) | rows/s |")
    L.append("|---|--:|--:|--:|--:|")
    for (name, n), r in sorted(memory.items()):
        if "error" in r:
            L.append(f"| {name} | {n:,} | error: {r['error']} | | |")
        else:
            L.append(f"| {name} | {n:,} | {r['maxrss_mb']:,.0f} | {r['maxrss_growth_mb']:,.0f} "
                     f"| {r['elements_per_s']:,.0f} |")
    L.append("\n## Tracing overhead (datakit.perf.timeline on the batch-then-parse chain)\n")
    L.append("`csv_reader_dataset(parse=\"vectorized\", trace=True)` vs the same chain with "
             "`trace=False`: rows/s ratio per round (1.00 = free).\n")
    L.append("| batch | traced / untraced rows/s, median (min) | overhead (median) |")
    L.append("|--:|--:|--:|")
    for batch in BATCHES:
        rr = _ratios(speed, "timeline_traced", "timeline_untraced", batch)
        if rr:
            L.append(f"| {batch} | {_med(rr):.2f} ({min(rr):.2f}) | {1 / _med(rr) - 1:+.0%} |")
    L.append("\n## Overlap efficiency (producer and consumer of equal cost)\n")
    L.append("A producer `map` that takes 20 ms per element (a sleep: no core is held) and a "
             "consumer step of 20 ms, 100 elements, runtime optimizations off "
             "(`synthetic.serial`). Ideal = the larger of the two sides' measured total work "
             "(from the timeline: a 20 ms "
             "sleep takes longer on a loaded machine); efficiency = ideal / measured.\n")
    L.append("| variant | efficiency, median (min) | consumer waiting (mean fraction) |")
    L.append("|---|--:|--:|")
    for v in ("no_prefetch", "prefetch(1)", "prefetch(4)"):
        ok = [o[v] for o in overlap if v in o]
        if ok:
            eff = [o["efficiency"] for o in ok]
            L.append(f"| {v} | {_med(eff):.2f} ({min(eff):.2f}) | "
                     f"{_med([o['mean_wait_fraction'] for o in ok]):.2f} |")
    L.append("\n## Shuffle thoroughness (one epoch over the first 4 files, 200,000 rows in "
             "the 1M run; batch 32)\n")
    L.append("Row ids are numbered in file order. Measured with "
             "`datakit.glassbox.shuffle_stats.mixing_stats` on the order the rows came out: mean "
             "displacement (rows), Spearman rank correlation "
             "between input and output order (1 = unshuffled, 0 = no trace of the order), and "
             "distinct files per batch of 32. All TensorFlow readers use a 10,000-line buffer "
             "after interleaving 5 files.\n")
    L.append("| pipeline | mean displacement | rank correlation | files per batch |")
    L.append("|---|--:|--:|--:|")
    for name, m in mixing.items():
        if "error" in m:
            L.append(f"| {name} | error: {m['error']} | | |")
        else:
            L.append(f"| {name} | {m['mean_displacement']:,.0f} | {m['rank_correlation']:.3f} | "
                     f"{m['labels_per_batch']:.2f} |")
    L.append("\n## Notes\n")
    L.append("- PyTorch: a `DataLoader(batch_size=B, num_workers=2)` over an `IterableDataset` "
             "whose workers each read every other file line by line and parse with NumPy; it "
             "does not shuffle (which favours it). Its peak RSS adds the largest worker's.")
    L.append("- `classic_plain`: the textbook per-line chain (`map(decode_csv)` per line, then "
             "`batch`) without the kit's bad-line location; `kit_classic` is the kit's own "
             "classic chain, which checks and locates every line.")
    L.append("- `pandas_in_memory` reads every file into one DataFrame first (its first-batch "
             "time), then streams from memory; its rows/s excludes that load.")
    L.append("- Floors: `floor_read_lines` (lines in batches, no parsing, no shuffle), "
             "`floor_parse_in_memory` (decode + standardize batches of lines held in memory), "
             "`floor_python_loop` (a `for` loop over ready batches): no pipeline that reads and "
             "parses can beat the slowest of them.")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
