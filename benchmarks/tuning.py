"""The tuning table: defaults, AUTOTUNE everywhere and doctor-tuned knobs, side by side.

    python -m benchmarks.tuning [--budget 90] [--quick]

Four pipelines, each tuned by ``datakit.perf.tune.tune`` in its own process (so
one does not heat the next one's caches): the kit's CSV reader
(``parse="batch"``) at batch 32 and 1024 on the benchmark's generated rows,
the TFRecord video clip pipeline (``datakit.readers.video.reading.clips.clip_dataset``, its knobs
changed on a copy with ``datakit.doctor.advice``), and the sleeping synthetic
pipeline (``datakit.perf.synthetic``). Throughput is consumed inside a
``tf.function`` (as ``fit()`` does); the final comparison alternates the
configurations, and ratios to AUTOTUNE are taken within a round.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from benchmarks.processes import cli, run_child

HERE = Path(__file__).resolve().parent
PIPELINES = ("csv_batch32", "csv_batch1024", "video_tfrecord", "synthetic_sleeping")


def _csv(batch):
    import tensorflow as tf

    from benchmarks.data import LABEL, load_stats, make_csv
    from datakit.readers.csv_files.reader import csv_reader_dataset
    paths, stats_path = make_csv(1_000_000, 20)
    stats = load_stats(stats_path)

    def build(n_read_threads=None, n_parse_threads=5, prefetch=1):
        return csv_reader_dataset(paths, repeat=None, stats=stats, label=LABEL,
                                  batch_size=batch, seed=42, parse="batch",
                                  n_read_threads=n_read_threads, n_parse_threads=n_parse_threads,
                                  prefetch=prefetch)
    A = tf.data.AUTOTUNE
    # n_read_threads: the reader accepts None or an int (not AUTOTUNE) since the merge of main
    return build, {"n_read_threads": [None, 2], "n_parse_threads": [1, 2, 5, A],
                   "prefetch": [0, 1, 2, A]}


def video_folder() -> Path:
    """TFRecord shards of 48 synthetic 64x64 videos (written once, fixed seed)."""
    from datakit.readers import video
    folder = HERE / "work" / "doctor_videos"
    made = folder / "manifest.json"
    if not made.exists() or "chunk_frames" not in made.read_text():  # none, or an old layout
        video.write_video_records(video.make_videos(48, size=64, min_frames=24, max_frames=48,
                                                    seed=0), folder, class_names=video.CLASSES,
                                  num_shards=4, overwrite=True)
    return folder


def _video():
    import tensorflow as tf

    from datakit.doctor.rebuild import assemble, reapply
    from datakit.perf.chain import chain_of, kind_of
    from datakit.readers import video
    folder = video_folder()

    def build(num_parallel_calls=None, prefetch=tf.data.AUTOTUNE, cycle_length=2):
        chain = chain_of(video.clip_dataset(folder, n_readers=cycle_length, batch_size=8)
                         .repeat())
        k = [kind_of(d) for d in chain].index("map")
        steps = [lambda i: reapply(chain[k], i, num_parallel_calls=num_parallel_calls)]
        steps += [d for d in chain[k + 1:] if kind_of(d) not in ("prefetch", "repeat")]
        ds = assemble(chain[k - 1], steps).repeat()
        return ds.prefetch(prefetch) if prefetch else ds
    A = tf.data.AUTOTUNE
    return build, {"num_parallel_calls": [None, 2, A], "prefetch": [0, 1, A],
                   "cycle_length": [1, 2, 4]}


def _synthetic():
    import tensorflow as tf

    from datakit.perf.synthetic import synthetic_files, work
    A = tf.data.AUTOTUNE

    def build(cycle_length=1, read_threads=None, map_calls=None, prefetch=0):
        reads = read_threads if read_threads in (None, A) else min(read_threads, cycle_length)
        ds = synthetic_files(8, 100, open_time=0.01, read_time=0.002, cycle_length=cycle_length,
                             num_parallel_calls=reads).repeat()
        ds = ds.map(lambda i, trace: i).map(work(0.002), num_parallel_calls=map_calls).batch(16)
        return ds.prefetch(prefetch) if prefetch else ds
    return build, {"cycle_length": [1, 2, 4], "read_threads": [None, 2, A],
                   "map_calls": [None, 2, 4, A], "prefetch": [0, 1, A]}


BUILDERS = {"csv_batch32": lambda: _csv(32), "csv_batch1024": lambda: _csv(1024),
            "video_tfrecord": _video, "synthetic_sleeping": _synthetic}


def one(name: str, budget: float) -> dict:
    import datakit  # noqa: F401  (quiet TensorFlow)
    from datakit.perf.tune import tune
    build, space = BUILDERS[name]()
    r = tune(build, space, budget_s=budget, rounds=3)
    show = {k: ("AUTOTUNE" if v == -1 else v) for k, v in r.best.items()}
    return {"pipeline": name, "best": show, "seconds": r.seconds, "trials": len(r.trials),
            "table": [{**row, "knobs": {k: ("AUTOTUNE" if v == -1 else v)
                                        for k, v in row["knobs"].items()}} for row in r.table]}


def run_all(budget: float, log=print) -> list[dict]:
    out = []
    for name in PIPELINES:
        t = time.time()
        res = run_child("benchmarks.tuning", name, "--budget", str(budget), timeout=20 * budget)
        res.setdefault("pipeline", name)
        out.append(res)
        log(f"tuning {name}: {time.time() - t:.0f} s, "
            + (f"best {res['best']}" if "error" not in res else f"ERROR {res['error']}"))
    return out


def report(results: list[dict]) -> str:
    L = ["\n## Tuning: defaults, AUTOTUNE everywhere, doctor-tuned (issue 15)\n",
         "`datakit.perf.tune.tune(build, space, budget_s=...)` per pipeline, each in its own "
         "process: a search one knob at a time from the defaults, then the configurations measured "
         "side by side, alternating, 3 rounds; rows/s drained inside a `tf.function` (as "
         "`fit()` consumes). *× AUTOTUNE* is the per-round ratio to the same pipeline with "
         "every knob that accepts it set to `tf.data.AUTOTUNE`, median (min) over rounds. "
         "The machine was shared (about 8 people on 2 cores): compare ratios, not rows/s "
         "across tables.\n",
         "| pipeline | configuration | knobs | rows/s (median) | × AUTOTUNE, median (min) |",
         "|---|---|---|--:|--:|"]
    for res in results:
        if "error" in res:
            L.append(f"| {res['pipeline']} | error: {res['error']} | | | |")
            continue
        for row in res["table"]:  # a row equal to another is one row, named by both (" = ")
            if {"doctor-tuned", "AUTOTUNE everywhere", "defaults"} & set(
                    row["config"].split(" = ")):
                knobs = ", ".join(f"{k}={v}" for k, v in row["knobs"].items())
                L.append(f"| {res['pipeline']} | {row['config']} | {knobs} | "
                         f"{row['rows_per_s']:,.0f} | {row['vs_autotune']:.2f} "
                         f"({row['vs_autotune_min']:.2f}) |")
    L.append("\nKnob by knob (the tuned configuration with one knob set to AUTOTUNE):\n")
    L.append("| pipeline | knob = AUTOTUNE | × AUTOTUNE everywhere, median (min) |")
    L.append("|---|---|--:|")
    for res in results:
        for row in res.get("table", []):
            if any(n.endswith("=AUTOTUNE") for n in row["config"].split(" = ")):
                L.append(f"| {res['pipeline']} | {row['config']} | {row['vs_autotune']:.2f} "
                         f"({row['vs_autotune_min']:.2f}) |")
    return "\n".join(L) + "\n"


MARKER = ("<!-- issue 15: tuning table and fit()-style reader; "
          "python -m benchmarks --doctor-only -->")


def sections(*, quick: bool = False, log=print) -> str:
    """Run the tuning table and the fit()-style reader comparison; their RESULTS.md sections."""
    from benchmarks import fit_reader
    t = time.time()
    text = report(run_all(20 if quick else 120, log=log))
    text += fit_reader.report(fit_reader.run(1 if quick else 3, 100_000 if quick else 1_000_000,
                                             log=log))
    return (f"\n{MARKER}\n\n_These sections: {time.strftime('%Y-%m-%d %H:%M')}, "
            f"{(time.time() - t) / 60:.0f} min._\n" + text)


def update_results(path: Path, *, quick: bool = False, log=print) -> None:
    """Replace (or append) the doctor's sections of ``path``, keeping everything else."""
    old = path.read_text() if path.exists() else ""
    keep = old.split("\n" + MARKER)[0].rstrip("\n") + "\n"
    path.write_text(keep + sections(quick=quick, log=log))


def main(argv=None) -> int:
    return cli("python -m benchmarks.tuning", argv, lambda a: one(a.one, a.budget),
               lambda a: report(run_all(20 if a.quick else a.budget)), budget=90.0)


if __name__ == "__main__":
    sys.exit(main())
