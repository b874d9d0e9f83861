"""The kit's video paths and converter against torchcodec, decord, the TF tutorial and a floor.

    python -m benchmarks.video_peers [--quick] [--rounds 3] [--sizes 320x240,640x480]

The same work for every contender: 12 generated videos of 60 s at 30 fps
(H.264, a keyframe every 250 frames as x264 makes them by default, seeded);
per epoch 2 random clips of 16 frames, step 2, per video, resized to 112x112,
batches of 8; the second epoch is timed to its last batch (the iterator's
teardown after it is printed apart). Each contender runs in its own
process (``benchmarks/video_peer_worker.py``), 3 rounds in rotated order so a
busy moment of a shared machine hits them alike. Printed: clips/s, the ratio
to torchcodec within each round (median and min), CPU seconds per clip of the
whole process tree; the converter's frames/s and cores kept busy against
(cores x PyAV's one-core rate). A peer that does not install or import is
SKIPPED with its reason. Results go to ``benchmarks/RESULTS_video_peers.md``.
``--quick`` (4 videos of 3 s at 160x120, 1 round) checks the harness in seconds.
Videos are cached under ``benchmarks/work/video_peers`` (git-ignored).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import shutil
import sys
import time
from pathlib import Path

from benchmarks.processes import run_in_process
from benchmarks.stats import median as _med
from benchmarks.video_peer_loaders import Work

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / "work" / "video_peers"
OUT = ROOT / "benchmarks" / "RESULTS_video_peers.md"
# "convert" first: round 1's conversion writes the shards "kit shards" reads.
CONTENDERS = ("convert", "kit direct", "kit shards", "torchcodec", "decord", "tutorial", "floor",
              "decode")
READERS = ("kit direct", "kit shards", "torchcodec", "decord", "tutorial", "floor")
LABELS = {
    "kit direct": "kit direct (`video_dataset_from_directory`)",
    "kit shards": "kit shards (`clip_dataset`)",
    "torchcodec": "torchcodec + `DataLoader(num_workers=2)`",
    "decord": "decord + `DataLoader(num_workers=2)`",
    "tutorial": "TF tutorial's OpenCV `FrameGenerator`",
    "floor": "floor: PyAV, seek per clip, straight to 112x112 RGB",
}


def make_videos(folder: Path, n: int, seconds: int, width: int, height: int,
                seed: int = 0) -> Path:
    """``n`` seeded H.264 videos in two class folders of ``folder/videos`` (made once): the
    kit's own bench set, :func:`datakit.bench.reference.bench_videos`."""
    from datakit.bench.reference import bench_videos

    return bench_videos(folder / "videos", n, seconds, (width, height), seed=seed)


def listed_times(folder: Path, times: int) -> Path:
    """``folder``'s class folders with each video listed ``times`` times (hard links, made
    once beside it): an epoch ``times`` as long, the same files decoded."""
    if times == 1:
        return folder
    out = folder.parent / f"{folder.name}_x{times}"
    videos = sorted(folder.glob("*/*.mp4"))

    def stamp(p: Path) -> tuple[int, int]:
        st = p.stat()
        return st.st_size, st.st_mtime_ns

    if out.exists() and any(not (out / v.parent.name / f"0_{v.name}").exists()
                            or stamp(out / v.parent.name / f"0_{v.name}") != stamp(v)
                            for v in videos):
        shutil.rmtree(out)  # the videos were made again since: list the new ones
    if not out.exists():
        tmp = folder.parent / f".{out.name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        for video in videos:
            (tmp / video.parent.name).mkdir(parents=True, exist_ok=True)
            for k in range(times):
                try:
                    os.link(video, tmp / video.parent.name / f"{k}_{video.name}")
                except OSError:  # no hard links here
                    shutil.copy2(video, tmp / video.parent.name / f"{k}_{video.name}")
        tmp.rename(out)
    return out


def run_job(job: dict, timeout: int = 1800) -> dict:
    """One contender in its own process; its RESULT dict, or {'error': ...}."""
    return run_in_process("benchmarks.video_peer_worker", job, timeout)


def _job(name: str, folder: Path, shards: Path, work: Work, first_round: bool) -> dict:
    if name == "convert":
        out = shards if first_round else shards.with_name("convert_scratch")
        return {"kind": "convert", "folder": str(folder), "out": str(out), "size": work.size,
                "keep": first_round}
    if name == "decode":
        return {"kind": "decode", "folder": str(folder), "size": work.size}
    return {"kind": "clips", "name": name, "folder": str(folder), "shards": str(shards),
            "work": dataclasses.asdict(work)}


def _show(name: str, r: dict) -> str:
    if "skipped" in r:
        return f"SKIPPED {name}: {r['skipped']}"
    if "error" in r:
        return f"ERROR {name}: {r['error']}"
    if "clips_per_s" in r:
        return (f"{name}: {r['clips_per_s']:.1f} clips/s, {r['cpu_per_clip']:.3f} CPU s per clip, "
                f"first batch {r['first_batch_s']:.1f} s")
    if "frames_per_s" in r:
        return f"{name}: {r['frames_per_s']:,.0f} frames/s, {r['cores_busy']:.2f} cores busy"
    return f"{name}: " + ", ".join(f"{k} {v:,.0f}" for k, v in r.items())


def measure(folder: Path, shards: Path, work: Work, rounds: int, only, log) -> dict:
    """``{contender: [result per round]}``; a contender skipped once is not run again."""
    names = [n for n in CONTENDERS if not only or n in only]
    runs: dict[str, list[dict]] = {n: [] for n in names}
    shutil.rmtree(shards, ignore_errors=True)  # the shards of the kit as it is now
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if runs[name] and "skipped" in runs[name][0]:
                continue
            if name == "kit shards" and not shards.exists():
                runs[name].append(run_job(_job("convert", folder, shards, work, True)))
                if "error" in runs[name][-1]:
                    log(_show("kit shards (its conversion)", runs[name][-1]))
                    continue
                runs[name].pop()
            res = run_job(_job(name, folder, shards, work, r == 0))
            runs[name].append(res)
            log(f"round {r + 1}/{rounds} " + _show(name, res))
    return runs


def _ok(runs: list[dict]) -> list[dict]:
    return [x for x in runs if "error" not in x and "skipped" not in x]


def _ratio(runs, a: str, b: str, key: str = "clips_per_s") -> list[float]:
    """Per-round ratio a / b over the rounds where both ran."""
    return [x[key] / y[key] for x, y in zip(runs.get(a, []), runs.get(b, []), strict=False)
            if x.get(key) and y.get(key)]


def table(runs: dict, cores: int) -> list[str]:
    """The markdown table of one frame size, the conversion line and the ratios."""
    L = ["| path | clips/s | x torchcodec, median (min) | CPU s per clip | first batch (s) "
         "| run's end (s) |",
         "|---|--:|--:|--:|--:|--:|"]
    for name in READERS:
        if name not in runs:
            continue
        ok = _ok(runs[name])
        if not ok:
            why = runs[name][0] if runs[name] else {"error": "not run"}
            L.append(f"| {LABELS[name]} | {'SKIPPED' if 'skipped' in why else 'ERROR'}: "
                     f"{why.get('skipped') or why.get('error')} | | | | |")
            continue
        cpu = _med(x["cpu_per_clip"] for x in ok)
        rate = f"{_med(x['clips_per_s'] for x in ok):.1f}"
        if name == "floor":  # one process, one thread: what the cores could do
            rate = f"{cores / cpu:.1f} on {cores} idle cores ({rate} in one thread)"
        rr = _ratio(runs, name, "torchcodec")
        vs = f"{_med(rr):.2f} ({min(rr):.2f})" if rr and name != "floor" else ""
        end = f"{_med(x['end_s'] for x in ok):.2f}" if "end_s" in ok[0] else ""
        L.append(f"| {LABELS[name]} | {rate} | {vs} | {cpu:.3f} | "
                 f"{_med(x['first_batch_s'] for x in ok):.1f} | {end} |")
    L.append("")
    conv, dec = _ok(runs.get("convert", [])), _ok(runs.get("decode", []))
    if conv and dec:
        one = _med(x["decode_convert_frames_per_cpu_s"] for x in dec)
        fps = _med(x["frames_per_s"] for x in conv)
        L.append(f"- conversion (`write_video_shards`, 112x112 JPEGs, all cores): "
                 f"**{fps:,.0f} frames/s**, {_med(x['cores_busy'] for x in conv):.2f} of "
                 f"{cores} cores busy; PyAV on one core decodes and converts to 112x112 "
                 f"{one:,.0f} frames per CPU s (decodes alone "
                 f"{_med(x['decode_only_frames_per_cpu_s'] for x in dec):,.0f}): "
                 f"**{fps / (cores * one):.2f}x** (cores x that rate), "
                 f"{_med(x['frames_per_cpu_s'] for x in conv) / one:.2f}x per CPU second")
    for a, b in (("kit direct", "decord"), ("kit direct", "torchcodec"),
                 ("kit direct", "tutorial"), ("kit shards", "torchcodec")):
        rr = _ratio(runs, a, b)
        if rr:
            L.append(f"- {a} / {b}: {_med(rr):.2f}x clips/s (min {min(rr):.2f}, "
                     f"{len(rr)} rounds)")
    return L


def _versions() -> str:
    from importlib import metadata
    out = [f"Python {platform.python_version()}"]
    for dist in ("tensorflow", "av", "torch", "torchcodec", "decord", "opencv-python-headless"):
        try:
            out.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist} not installed")
    return ", ".join(out)


def _command(args) -> str:
    """The command that made the results, without where the files went."""
    parts = ["python -m benchmarks.video_peers"]
    if args.quick:
        parts.append("--quick")
    else:
        for flag, value, default in (("--rounds", args.rounds, 3),
                                     ("--sizes", args.sizes, "320x240,640x480"),
                                     ("--videos", args.videos, 12),
                                     ("--seconds", args.seconds, 60)):
            if value != default:
                parts.append(f"{flag} {value}")
    return " ".join(parts + ([f"--only {args.only!r}"] if args.only else []))


def video_parser(prog: str, doc: str, results: Path) -> argparse.ArgumentParser:
    """The options of the benchmarks on these videos: how many, how long, what size, rounds."""
    ap = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 videos of 3 s, 160x120, 1 round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="320x240,640x480")
    ap.add_argument("--videos", type=int, default=12)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--work", default=str(WORK), help="where the videos and shards go")
    ap.add_argument("--out", help=f"the results file (default {results.name}; with --quick, "
                    f"{results.stem}_quick.md under --work)")
    return ap


def video_args(ap: argparse.ArgumentParser, argv: list[str] | None,
               results: Path) -> tuple[argparse.Namespace, Path]:
    """The parsed options (``--quick`` sets the small videos) and the results file."""
    args = ap.parse_args(argv)
    if args.quick:
        args.videos, args.seconds, args.sizes, args.rounds = 4, 3, "160x120", 1
    quick = Path(args.work) / f"{results.stem}_quick.md"
    return args, Path(args.out or (quick if args.quick else results))


def log(msg: str) -> None:
    """A timestamped progress line on stderr."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def video_sets(args: argparse.Namespace):
    """Per ``--sizes`` entry: ``(width, height, work folder, videos folder)``, made once."""
    for size in args.sizes.split(","):
        w, h = (int(v) for v in size.split("x"))
        base = Path(args.work) / f"{w}x{h}_{args.videos}x{args.seconds}s"
        log(f"{size}: making {args.videos} videos of {args.seconds} s (once) under {base}")
        yield w, h, base, make_videos(base, args.videos, args.seconds, w, h)


def main(argv: list[str] | None = None) -> int:
    ap = video_parser("python -m benchmarks.video_peers", __doc__, OUT)
    ap.add_argument("--only", help="comma-separated contenders (default: all)")
    args, out = video_args(ap, argv, OUT)
    only = set(args.only.split(",")) if args.only else None
    cores, work, started = os.cpu_count() or 1, Work(), time.time()
    load0 = os.getloadavg()

    L: list[str] = []
    for w, h, base, folder in video_sets(args):
        runs = measure(folder, base / "shards", work, args.rounds, only, log)
        part = [f"\n## {w}x{h}\n", *table(runs, cores)]
        print("\n".join(part), flush=True)
        L += part
    minutes = (time.time() - started) / 60
    head = [
        "# Benchmarks: the kit's video paths against torchcodec, decord and the TF tutorial\n",
        f"Made by `{_command(args)}`"
        + f" (also run by `make bench`) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        f", in {minutes:.0f} min. Machine: {cores} logical cores, {platform.machine()}, "
        f"**shared with other work**: load average {load0[0]:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end; read the ratios taken within a round, not the "
        f"absolute rates. {_versions()}.\n",
        f"Work: {args.videos} generated H.264 videos of {args.seconds} s at 30 fps (a keyframe "
        f"every 250 frames) in 2 class folders; per epoch {work.clips_per_video} random clips "
        f"of {work.clip_len} frames, step {work.step}, per video, resized to "
        f"{work.size}x{work.size} RGB, batches of {work.batch}; the second epoch timed "
        f"({args.videos * work.clips_per_video} clips) from the end of the first to its last "
        "batch, a third after it; each contender in its own process, over one iterator for "
        "the three epochs, as a "
        "training loop runs it (the TensorFlow paths as `fit(ds.repeat(), steps_per_epoch=...)` "
        "consumes them, the DataLoaders with `persistent_workers=True`; a new TensorFlow "
        "iterator per epoch can stall at the epoch's end: see NOTES.md), "
        f"{args.rounds} round(s) in rotated order. *CPU s per clip*: the whole process tree "
        "(DataLoader workers, converter workers included). *first batch*: from building the "
        "pipeline to its first batch in epoch 1. *run's end*: after the last batch, the "
        "iterator's teardown (a DataLoader's workers stopping, TensorFlow's threads), once "
        "per run. "
        "torchcodec decodes with `seek_mode=\"approximate\"` and its `Resize` transform, "
        "decord with `width`/`height` (both "
        "resize while decoding); the tutorial's generator pads to 112x112 "
        "(`resize_with_pad`) and yields float32, as it is written. The floor runs in one "
        "thread of one process: its clips/s is the cores over its CPU s per clip.",
    ]
    text = "\n".join(head + L) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
