"""fit() fed as fast as the model eats? Each feed's step against the memory-fed step, on the CPU.

    python -m benchmarks.fit_overhead [--quick] [--steps 10]

The model and the feeds of ``benchmarks/accelerator.py`` (a small 3D CNN,
16 frames of 112x112, batches of 8; the direct reader decoding the videos, the
shards, and the same clips held in memory), trained with ``fit()`` on the CPU.
For each feed: its step time, the ratio to the memory-fed step (1.00: the input
costs the step nothing; 1.25: it adds a quarter), and the cores each side takes:

- the **model's** cores: the whole process's CPU time over the wall time while
  it trains from memory (the input then costs nothing);
- the **input's** cores: the feed drained alone (no model), its CPU time per
  batch divided by the memory-fed step, i.e. the cores the input needs to
  deliver one batch per model step.

Each step time is taken inside one ``fit()`` call, from the end of its third
step to the end of its last, by a callback: ending a ``fit()`` call can wait
seconds for tf.data's autotuning thread, which is no step's cost. Within a
setting's process the feeds train in an order rotated round by round, so that
no feed always goes first.

When the two add up to no more than the cores, both fit side by side and the
feed can cost the step nothing; when they add up to more, the step cannot be
shorter than all the CPU work of a step spread over every core, and the ratio
shows how close the feed comes to that floor (the *floor* column).

Each TensorFlow threading setting runs in its own process (the thread pools are
fixed when TensorFlow starts), rounds alternating them: TensorFlow's defaults
(inter- and intra-op pools of one thread per core, the decoders on the
inter-op pool), the direct reader's decoders on a private pool of one thread per
core (``tf.data.Options().threading.private_threadpool_size``), and one
intra-op thread fewer than the cores (a core left to the decoders). The table
goes to ``benchmarks/RESULTS_accelerator.md`` (its own section; not with
``--quick``), with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from benchmarks.stats import median as _med

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "RESULTS_accelerator.md"
SECTION = "## fit() on the CPU: each feed against the memory-fed step"
DIRECT, SHARDS, MEMORY = ("direct (video_dataset_from_directory)", "shards (clip_dataset)",
                          "memory (the same clips)")


def settings(cores: int) -> dict[str, list[str]]:
    """The threading settings compared: a name, and the child's command-line flags."""
    out = {"TensorFlow's defaults": [], "decoders on a private pool": ["--private-pool"]}
    if cores > 1:
        out[f"intra-op threads {cores - 1} (a core for the decoders)"] = [
            "--intra", str(cores - 1)]
    return out


def _drain_cpu(ds, batches: int) -> float:
    """CPU seconds (the whole process) per batch, the feed drained alone as fit() drains."""
    from benchmarks.accelerator import drained
    return drained(ds, batches)[1] / batches


def child(args) -> dict:
    """One threading setting: each feed's fit() step and cores, and each file feed's CPU."""
    import tensorflow as tf
    if args.intra:
        tf.config.threading.set_intra_op_parallelism_threads(args.intra)
    import keras

    from benchmarks.accelerator import bench_data, clip_feeds, model_3d, timed_fit
    from datakit.core.cores import cpu_cores
    folder, shards, work, _ = bench_data(args)
    feeds = clip_feeds(folder, shards, work, batches=min(args.steps, 24))
    if args.private_pool:
        opts = tf.data.Options()
        opts.threading.private_threadpool_size = cpu_cores()
        feeds[DIRECT] = feeds[DIRECT].with_options(opts)
    out: dict = {"feeds": {}}
    names = list(feeds)
    for name in names[args.round % len(names):] + names[:args.round % len(names)]:
        ds = feeds[name]
        keras.utils.set_random_seed(0)
        model = model_3d(work.clip_len, work.size, classes=2)  # compiled
        step, cores = timed_fit(model, ds, args.steps)  # after 3 steps that build and trace
        out["feeds"][name] = {"step_s": step, "cores": cores}
    for name in (DIRECT, SHARDS):
        out["feeds"][name]["input_cpu_per_batch"] = _drain_cpu(feeds[name], args.steps)
    return out


def report(runs: dict[str, list[dict]], cores: int) -> str:
    """The Markdown table: per setting and feed, medians over rounds (ratios per round)."""
    lines = ["| threading | feed | step ms | x memory, median (min) | cores busy | model's "
             "cores | input's cores | floor x memory |", "|---|---|--:|--:|--:|--:|--:|--:|"]
    for setting, results in runs.items():
        ok = [r for r in results if "error" not in r]
        if not ok:
            lines.append(f"| {setting} | error: {results[0]['error']} | | | | | | |")
            continue
        for name in (DIRECT, SHARDS, MEMORY):
            rows = [r["feeds"][name] for r in ok]
            mems = [r["feeds"][MEMORY] for r in ok]
            ratio = [f["step_s"] / m["step_s"] for f, m in zip(rows, mems, strict=True)]
            model = _med(m["cores"] for m in mems)
            if name == MEMORY:
                inp, floor = "0", "1.00"
            else:
                need = _med(f["input_cpu_per_batch"] / m["step_s"] for f, m in zip(
                    rows, mems, strict=True))
                inp, floor = f"{need:.2f}", f"{max(1.0, (model + need) / cores):.2f}"
            lines.append(f"| {setting} | {name.split(' (')[0]} | "
                         f"{_med(f['step_s'] for f in rows) * 1e3:,.0f} | {_med(ratio):.2f} "
                         f"({min(ratio):.2f}) | {_med(f['cores'] for f in rows):.2f} | "
                         f"{model:.2f} | {inp} | {floor} |")
    return "\n".join(lines) + "\n"


def choose(runs: dict[str, list[dict]]) -> tuple[str, float]:
    """The setting whose direct feed trains fastest (its median step), and its ratio to the
    memory-fed step (a setting that slows the model too can show a small ratio and still lose)."""
    step = {s: _med(r["feeds"][DIRECT]["step_s"] for r in res if "error" not in r)
            for s, res in runs.items()}
    name = min((s for s in step if step[s] == step[s]), key=step.get, default="")
    ratio = _med(r["feeds"][DIRECT]["step_s"] / r["feeds"][MEMORY]["step_s"]
                 for r in runs.get(name, []) if "error" not in r)
    return name, ratio


def against_next(runs: dict[str, list[dict]], best: str) -> str:
    """Whether ``best``'s direct steps (over rounds) stand apart from the next fastest setting's:
    ``"ranges apart from <next>"`` or ``"within noise of <next>"`` (their ranges overlap)."""
    steps = {s: [r["feeds"][DIRECT]["step_s"] for r in res if "error" not in r]
             for s, res in runs.items()}
    others = [s for s in steps if s != best and steps[s]]
    if not steps.get(best) or not others:
        return "no other setting to compare"
    nxt = min(others, key=lambda s: _med(steps[s]))
    overlap = min(steps[nxt]) <= max(steps[best])
    return f"{'within noise of' if overlap else 'ranges apart from'} {nxt}"


def write_section(text: str) -> None:
    """Replace (or add) this benchmark's section of RESULTS_accelerator.md, keeping the rest."""
    old = RESULTS.read_text() if RESULTS.exists() else \
        "# Does the input keep an accelerator busy?\n"
    pattern = re.compile(re.escape(SECTION) + r".*?(?=\n## |\Z)", re.S)
    new = pattern.sub(lambda _: text.rstrip("\n"), old) if SECTION in old else \
        old.rstrip("\n") + "\n\n" + text
    RESULTS.write_text(new.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fit_overhead",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 short videos, 3 steps, 1 round")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--intra", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--private-pool", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.quick:
        args.steps, args.rounds = 3, 1
    if args.one:
        print("RESULT " + json.dumps(child(args)), flush=True)
        return 0
    from benchmarks.accelerator import bench_data
    from benchmarks.processes import run_child
    from datakit.core.cores import cpu_cores
    cores, load0, started = cpu_cores(), os.getloadavg()[0], time.time()
    _, _, work, (n, secs, w, h, _) = bench_data(args)  # videos and shards made once, here
    print(f"fit() on the CPU, {args.steps} steps of {work.batch} clips ({work.clip_len}x"
          f"{work.size}x{work.size}) per feed, {n} videos of {secs} s at {w}x{h}, {cores} cores, "
          f"load average {load0:.1f}:", flush=True)
    extra = ["--steps", str(args.steps)] + (["--quick"] if args.quick else [])
    runs: dict[str, list[dict]] = {s: [] for s in settings(cores)}
    for r in range(args.rounds):
        names = list(runs)
        for s in names[r % len(names):] + names[:r % len(names)]:
            res = run_child("benchmarks.fit_overhead", "setting", *extra, "--round", str(r),
                            *settings(cores)[s], timeout=1800)
            runs[s].append(res)
            print(f"  round {r + 1}/{args.rounds}, {s}: " + (res["error"] if "error" in res
                  else ", ".join(f"{k.split(' (')[0]} {v['step_s'] * 1e3:,.0f} ms"
                                 for k, v in res["feeds"].items())), flush=True)
    table = report(runs, cores)
    best, ratio = choose(runs)
    load1 = os.getloadavg()[0]
    verdict = (f"Fastest with the direct reader: **{best}** ({against_next(runs, best)}), "
               f"{ratio:.2f}x its memory-fed step ({ratio - 1:+.0%}). Load average {load0:.1f} "
               f"at the start, {load1:.1f} at the end.")
    print("\n" + table + "\n" + verdict, flush=True)
    if not args.quick:
        write_section(
            f"{SECTION}\n\nMeasured {time.strftime('%Y-%m-%d %H:%M')} UTC in "
            f"{(time.time() - started) / 60:.0f} min (`python -m benchmarks.fit_overhead "
            f"--steps {args.steps} --rounds {args.rounds}`; `make bench` runs the defaults) on "
            f"{cores} cores, load average **{load0:.1f}** at the start, "
            f"**{load1:.1f}** at the end; {args.steps} steps of {work.batch} clips per feed, "
            f"{args.rounds} rounds, settings alternating, each in its own process.\n\n"
            + __doc__.split("\n\n", 2)[2] + "\n" + table + "\n" + verdict + "\n")
        print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
