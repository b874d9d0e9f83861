"""Video out of core: peak memory of in-memory vs streaming training, clips/s, input wait.

    python -m benchmarks.video_bench [--videos 256] [--size 64] [--clip-len 16]

Rows:
- peak RSS of training from one in-memory array vs from ``clip_dataset``, at 1x
  and 4x the videos, each run in its own process (``ru_maxrss``), with the
  RSS measured before any data was touched (TensorFlow + model);
- clips/s of ``clip_dataset`` (TFRecord + JPEG) vs ``mp4_clip_dataset`` (PyAV);
- the fraction of each training step spent waiting for input
  (``datakit.perf.timeline`` for the TFRecord path, ``next()`` timed for MP4).
Data goes under ``benchmarks/work/video`` (ignored by git), made with fixed seeds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / "work" / "video"
MB = 1e-6


def _child(mode: str, folder: str, clip_len: int, size: int, steps: int) -> None:
    """Train in this process, print one JSON line with memory numbers."""
    import av  # noqa: F401  (its libraries count as "before" for both modes)
    import keras
    import numpy as np

    import datakit  # noqa: F401
    from datakit.perf import memory
    from datakit.readers import video
    from datakit.readers.video.reading import in_memory

    keras.utils.set_random_seed(0)
    model = video.small_video_model(clip_len, size)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x0 = np.zeros((16, clip_len, size, size, 3), np.uint8)
    model.train_on_batch(x0, np.zeros(16, np.int64))  # build and trace before measuring
    base = memory.rss_bytes()
    t0 = time.perf_counter()
    if mode == "in_memory":
        data = in_memory.load_videos_in_memory(folder)
        rng = np.random.default_rng(0)
        for _ in range(steps):
            model.train_on_batch(*data.sample_clips(16, clip_len, rng=rng))
        data_bytes = data.frames.nbytes
    else:
        ds = video.clip_dataset(folder, clip_len=clip_len, batch_size=16, seed=0)
        model.fit(ds.repeat(), steps_per_epoch=steps, epochs=1, verbose=0)
        data_bytes = 0
    print(json.dumps({"base_mb": base * MB, "peak_mb": memory.peak_rss_bytes() * MB,
                      "data_mb": data_bytes * MB, "seconds": time.perf_counter() - t0}))


def _run_child(mode: str, folder: Path, args) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.video_bench", "--child", mode, str(folder),
           "--clip-len", str(args.clip_len), "--size", str(args.size), "--steps", str(args.steps)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _make_data(n: int, size: int) -> None:
    """MP4 files for 1x and 4x (nested: 1x is the first n videos) and the same as shards."""
    from datakit.readers import video

    stamp = WORK / f"done-{n}-{size}-chunked"  # (shards of the one layout clip_dataset reads)
    if stamp.exists():
        return
    import shutil

    shutil.rmtree(WORK, ignore_errors=True)
    for scale in (1, 4):
        kw = dict(size=size, seed=0)
        video.write_mp4_videos(video.iter_videos(scale * n, **kw), WORK / f"mp4_{scale}x")
        video.write_video_records(video.iter_videos(scale * n, **kw), WORK / f"records_{scale}x",
                                  class_names=video.CLASSES)
    stamp.touch()


def _clips_per_s(make, steps: int, repeats: int = 3) -> float:
    from datakit.perf import bench

    return statistics.median(
        bench.benchmark(make().repeat(), steps, warmup=2, progress=False).elements_per_s
        for _ in range(repeats))


def _mp4_wait_fraction(model, ds, steps: int) -> float:
    it = iter(ds)
    model.train_on_batch(*next(it))
    wait = total = 0.0
    for _ in range(steps):
        t0 = time.perf_counter()
        x, y = next(it)
        t1 = time.perf_counter()
        model.train_on_batch(x, y)
        wait, total = wait + t1 - t0, total + time.perf_counter() - t0
    return wait / total


def main(argv: list[str] | None = None) -> None:
    """Print the video benchmark table (takes minutes at the default size)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--videos", type=int, default=256, help="videos at 1x (4x is four times)")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--clip-len", type=int, default=16)
    p.add_argument("--steps", type=int, default=30, help="training steps per memory run")
    p.add_argument("--child", nargs=2, metavar=("MODE", "FOLDER"), help=argparse.SUPPRESS)
    args = p.parse_args(argv if argv is not None else [])
    if args.child:
        return _child(args.child[0], args.child[1], args.clip_len, args.size, args.steps)

    import keras

    import datakit  # noqa: F401
    from datakit.perf import timeline
    from datakit.readers import video

    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    say(f"video: {args.videos} videos at 1x, {args.size}x{args.size}, clips of "
          f"{args.clip_len} frames; data in {WORK.relative_to(ROOT)}")
    _make_data(args.videos, args.size)
    rows = []
    for mode, kind in (("in_memory", "mp4"), ("streaming", "records")):
        for scale in (1, 4):
            r = _run_child(mode, WORK / f"{kind}_{scale}x", args)
            rows.append((mode, scale, r))
    say(f"\n{'training from':<12} {'data':>5} {'frames MB':>10} {'RSS before MB':>14} "
          f"{'peak RSS MB':>12} {'peak - before':>14}")
    for mode, scale, r in rows:
        say(f"{mode:<12} {scale:>4}x {r['data_mb']:>10,.0f} {r['base_mb']:>14,.0f} "
              f"{r['peak_mb']:>12,.0f} {r['peak_mb'] - r['base_mb']:>14,.0f}")
    for mode in ("in_memory", "streaming"):
        one, four = (r for m, s, r in rows if m == mode)
        growth = (four["peak_mb"] - four["base_mb"]) / max(one["peak_mb"] - one["base_mb"], 1)
        say(f"{mode}: peak RSS 4x / 1x = {four['peak_mb'] / one['peak_mb']:.2f} "
              f"(growth above 'before': {growth:.1f}x)")

    kw = dict(clip_len=args.clip_len, batch_size=16, seed=1)
    steps = args.steps
    rec = _clips_per_s(lambda: video.clip_dataset(WORK / "records_1x", **kw), steps)
    mp4 = _clips_per_s(lambda: video.mp4_clip_dataset(WORK / "mp4_1x", **kw), steps)
    say(f"\nclips/s (median of 3 runs of {steps} batches of 16): TFRecord+JPEG {rec:,.0f}, "
          f"MP4 via PyAV {mp4:,.0f} ({rec / mp4:.1f}x)")

    keras.utils.set_random_seed(0)
    model = video.small_video_model(args.clip_len, args.size)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    traced = video.clip_dataset(WORK / "records_1x", trace=True, **kw).repeat()
    tl = timeline.trace_timeline(traced, train_step=lambda b: model.train_on_batch(*b),
                                 steps=steps)
    waits = tl.wait_fraction()[1:]  # the first step also builds the iterator
    mp4 = video.mp4_clip_dataset(WORK / "mp4_1x", **kw).repeat()
    mp4_wait = _mp4_wait_fraction(model, mp4, steps - 1)
    say(f"input wait, fraction of each train_on_batch step ({steps - 1} steps, batch 16): "
          f"TFRecord {waits.mean():.0%}, MP4 {mp4_wait:.0%}")

    _write_results(lines)
    from benchmarks import video_files_bench  # your own videos: direct, seeking, shards

    video_files_bench.main([])


def _write_results(lines: list[str]) -> None:
    """Keep the printed table in RESULTS_video.md, with the machine it ran on."""
    import os
    import platform

    out = ROOT / "benchmarks" / "RESULTS_video.md"
    out.write_text(
        "# Benchmarks: the video that does not fit in memory\n\n"
        "Made by `make bench` (`python -m benchmarks.video_bench`) on "
        f"{time.strftime('%Y-%m-%d')}. "
        f"Machine: {os.cpu_count()} logical cores, {platform.machine()}; each memory run is "
        "its own process (peak RSS from getrusage).\n\n```\n" + "\n".join(lines) + "\n```\n")
    print(f"wrote {out.relative_to(ROOT)}")

if __name__ == "__main__":
    main(sys.argv[1:])
