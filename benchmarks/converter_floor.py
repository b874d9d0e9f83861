"""The converter against its work's floor: frames per CPU second, and the cores it keeps busy.

    python -m benchmarks.converter_floor [--quick] [--rounds 3] [--sizes 320x240,640x480]

The work: every frame of 12 generated H.264 videos of 60 s (the videos of
``benchmarks/video_peers.py``) decoded, scaled to 112x112 and encoded as a
JPEG of quality 90. Two contenders, each in its own process, alternated
round by round so that a busy moment of a shared machine hits both:

- *convert*: ``write_video_shards(..., frame_size=(112, 112))`` on all cores,
  the whole call timed (listing, workers, shards, commit), with the CPU of
  the whole process tree (its workers included);
- *floor*: the same videos in one thread of one process, nothing but the
  work: PyAV decoding (one decoder thread), one scaler reused for every frame
  (to full-range YUV 4:2:0) and libjpeg-turbo encoding from those planes
  (``simplejpeg``); beside it, decode alone and decode + scale, for where
  the CPU goes. The floor reads every video the converter reads: their
  decode rates differ (the easy ones are small files with little motion).

Printed per size: the converter's frames per CPU second against the floor's
(the ratio taken within each round: median and min over rounds), its cores
busy (CPU s / wall s of the call), and the machine's load average around each
round. The converter runs twice a round: on the 12 videos, and on the 12 each
listed :data:`TIMES` times (hard links: the same files, a set four times the
size). A call has a fixed cost (two workers started, the resource tracker, the
listing), which a 2 s conversion of small videos feels and a learner's set does
not: the two calls give it (CPU s = fixed + frames / rate, solved for both) and
the rate beyond it, against the floor. The probe cache is warm (a first
conversion of a new folder probes each file once: see
``datakit.readers.video.decoding.probe_cache``). Results go to
``benchmarks/RESULTS_converter.md``; ``--quick`` (4 videos of 3 s at 160x120,
1 round) checks the harness and writes under ``--work``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from benchmarks.processes import run_in_process
from benchmarks.stats import median as _med

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "RESULTS_converter.md"
SIZE, QUALITY = 112, 90

#: The longer set: each video listed this many times (see the module's docstring).
TIMES = 4


# -- the contenders, each run in its own process (``python -m benchmarks.converter_floor JOB``) --


def _tree_cpu() -> float:
    from benchmarks.video_peer_worker import tree_cpu
    return tree_cpu()


def convert(job: dict) -> dict:
    """``write_video_shards`` on all cores: frames, wall and CPU seconds of the whole call."""
    from datakit.readers.video import write_video_shards
    from datakit.readers.video.decoding.decoding import probe
    folder, out = Path(job["folder"]), Path(job["out"])
    videos = sorted(folder.glob("*/*.mp4"))
    frames = sum(probe(p).frames for p in videos)
    shutil.rmtree(out, ignore_errors=True)
    t0, c0 = time.perf_counter(), _tree_cpu()
    write_video_shards(folder, out, frame_size=(SIZE, SIZE), quality=QUALITY,
                       progress=False)  # (on all cores)
    wall, cpu = time.perf_counter() - t0, _tree_cpu() - c0
    shutil.rmtree(out, ignore_errors=True)
    return {"videos": len(videos), "frames": frames, "wall_s": wall, "cpu_s": cpu,
            "frames_per_cpu_s": frames / cpu,
            "frames_per_s": frames / wall, "cores_busy": cpu / wall}


def floor(job: dict) -> dict:
    """One thread: decode alone, decode + one reused scaler, and + the JPEG (the floor)."""
    import av
    import numpy as np
    import simplejpeg
    from av.video.reformatter import VideoReformatter

    paths = [str(p) for p in sorted(Path(job["folder"]).glob("*/*.mp4"))]
    scaler = VideoReformatter()

    def run(scale: bool, jpeg: bool, paths=paths) -> float:
        c0, n = _tree_cpu(), 0
        for path in paths:
            with av.open(path) as c:
                s = c.streams.video[0]
                s.codec_context.thread_count = 1
                for frame in c.decode(s):
                    n += 1
                    if not scale:
                        continue
                    small = scaler.reformat(frame, width=SIZE, height=SIZE, format="yuv420p",
                                            dst_color_range="JPEG", interpolation="BILINEAR",
                                            threads=1)
                    if jpeg:
                        planes = [np.frombuffer(memoryview(p), np.uint8)
                                  .reshape(p.height, p.line_size)[:, :p.width]
                                  for p in small.planes]
                        simplejpeg.encode_jpeg_yuv_planes(*planes, quality=QUALITY)
        return n / (_tree_cpu() - c0)

    run(True, True, paths[:1])  # warm-up: the libraries loaded
    return {"decode_frames_per_cpu_s": run(False, False),
            "scale_frames_per_cpu_s": run(True, False),
            "frames_per_cpu_s": run(True, True)}


# -- the report -----------------------------------------------------------------------------


def measure(folder: Path, longer: Path, rounds: int, work: Path, log) -> list[dict]:
    """Each round: the converter on ``folder`` and on ``longer`` (its videos listed
    :data:`TIMES` times), and the floor, in alternating order, with the load around."""
    jobs = {"convert": ("convert", folder), "convert_longer": ("convert", longer),
            "floor": ("floor", folder)}
    out = []
    for r in range(rounds):
        load0 = os.getloadavg()[0]
        order = list(jobs) if r % 2 == 0 else list(jobs)[::-1]
        res = {}
        for name in order:
            kind, videos = jobs[name]
            job = {"kind": kind, "folder": str(videos), "out": str(work / "shards")}
            res[name] = run_in_process("benchmarks.converter_floor", job, 1800)
            log(f"round {r + 1}/{rounds} {name}: {res[name]}")
        res["load"] = (load0, os.getloadavg()[0])
        out.append(res)
    return out


def fixed_and_rate(short: dict, long: dict) -> tuple[float, float]:
    """A call's fixed CPU seconds and its frames per CPU second beyond them, from two calls
    of ``frames`` and ``cpu_s`` (CPU s = fixed + frames / rate).

    >>> fixed_and_rate({"frames": 100, "cpu_s": 1.5}, {"frames": 400, "cpu_s": 4.5})
    (0.5, 100.0)
    """
    per_frame = (long["cpu_s"] - short["cpu_s"]) / (long["frames"] - short["frames"])
    return short["cpu_s"] - per_frame * short["frames"], 1 / per_frame


def section(rounds: list[dict], size: str, cores: int) -> list[str]:
    kinds = ("convert", "convert_longer", "floor")
    ok = [r for r in rounds if all("error" not in r[k] for k in kinds)]
    if not ok:
        errors = {k: r[k]["error"] for r in rounds for k in kinds if "error" in r[k]}
        return [f"\n## {size}\n", f"ERROR: {errors}"]

    def ratio(r: dict, key: str) -> float:
        return r[key]["frames_per_cpu_s"] / r["floor"]["frames_per_cpu_s"]

    beyond = [fixed_and_rate(r["convert"], r["convert_longer"]) for r in ok]
    L = [f"\n## {size}\n",
         "| round | load average (start, end) | converter frames per CPU s | floor frames per "
         "CPU s (decode alone, decode + scale) | converter / floor | converter cores busy "
         f"| converter frames/s | {TIMES}x the videos: converter / floor | {TIMES}x: cores "
         "busy | a call's fixed CPU s | beyond it: converter / floor |",
         "|--:|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for k, (r, (fixed, rate)) in enumerate(zip(ok, beyond, strict=True), 1):
        c, f, c4 = r["convert"], r["floor"], r["convert_longer"]
        L.append(f"| {k} | {r['load'][0]:.1f}, {r['load'][1]:.1f} | "
                 f"{c['frames_per_cpu_s']:,.0f} | {f['frames_per_cpu_s']:,.0f} "
                 f"({f['decode_frames_per_cpu_s']:,.0f}, {f['scale_frames_per_cpu_s']:,.0f}) | "
                 f"{ratio(r, 'convert'):.2f}x | {c['cores_busy']:.2f} of {cores} | "
                 f"{c['frames_per_s']:,.0f} | {ratio(r, 'convert_longer'):.2f}x | "
                 f"{c4['cores_busy']:.2f} of {cores} | {fixed:.2f} | "
                 f"{rate / f['frames_per_cpu_s']:.2f}x |")
    floor_ = _med([r["floor"]["frames_per_cpu_s"] for r in ok])
    decode = _med([r["floor"]["decode_frames_per_cpu_s"] for r in ok])
    one, four = ([ratio(r, key) for r in ok] for key in ("convert", "convert_longer"))
    busy, busy4 = ([r[key]["cores_busy"] for r in ok] for key in ("convert", "convert_longer"))
    fixed = [x for x, _ in beyond]
    rate = [b / r["floor"]["frames_per_cpu_s"] for (_, b), r in zip(beyond, ok, strict=True)]
    videos = ok[0]["convert"]["videos"]
    L += ["", f"- the converter against its work's floor on the {videos} videos: "
          f"**{_med(one):.2f}x** per CPU second (min {min(one):.2f}, {len(ok)} round(s)), "
          f"**{_med(busy):.2f} of {cores} cores busy** (min {min(busy):.2f}); the floor "
          f"{floor_:,.0f} frames per CPU s, decode alone {decode:,.0f} ({floor_ / decode:.2f}x "
          "of it)",
          f"- on the {videos} listed {TIMES} times ({TIMES * videos} videos, one call): "
          f"**{_med(four):.2f}x** (min {min(four):.2f}), **{_med(busy4):.2f} of {cores} cores "
          f"busy** (min {min(busy4):.2f}); a call's fixed cost {_med(fixed):.2f} CPU s "
          f"(the {videos} videos' call is {_med([r['convert']['cpu_s'] for r in ok]):.2f}), "
          f"and beyond it **{_med(rate):.2f}x** of the floor (min {min(rate):.2f})"]
    return L


def main(argv: list[str] | None = None) -> int:
    from benchmarks.video_peers import (
        listed_times,
        log,
        video_args,
        video_parser,
        video_sets,
    )
    args, out = video_args(video_parser("python -m benchmarks.converter_floor", __doc__, OUT),
                           argv, OUT)

    cores, started = _cores(), time.time()
    L: list[str] = []
    for w, h, base, folder in video_sets(args):
        longer = listed_times(folder, TIMES)
        _warm_probes(folder)
        _warm_probes(longer)
        part = section(measure(folder, longer, args.rounds, base, log), f"{w}x{h}", cores)
        print("\n".join(part), flush=True)
        L += part
    command = "python -m benchmarks.converter_floor" + (" --quick" if args.quick else "")
    head = [
        "# Benchmarks: the converter against its work's floor\n",
        f"Made by `{command}` (also run by `make bench`) on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, in "
        f"{(time.time() - started) / 60:.0f} min. Machine: {cores} cores for this process "
        "(`datakit.core.cores.cpu_cores`), shared with other work: the load average is "
        "printed around each round; read the ratios taken within a round.\n",
        f"Work: every frame of {args.videos} generated H.264 videos of {args.seconds} s at "
        f"30 fps, decoded, scaled to {SIZE}x{SIZE} and encoded as JPEG (quality {QUALITY}). "
        "*converter*: `write_video_shards` on all cores, the whole call (listing with a warm "
        "probe cache, worker processes, shards, commit), CPU of the whole process tree. "
        "*floor*: one thread of one process doing nothing but the work (PyAV's decoder on one "
        "thread, one scaler reused for every frame, libjpeg-turbo from the scaled YUV planes), "
        "over the same videos (their decode rates differ); beside it decode "
        "alone and decode + scale. Cores busy: the converter's CPU seconds over its wall seconds. "
        f"The converter also runs on the videos each listed {TIMES} times (hard links, one "
        "call on a set that much larger): from the two calls, a call's fixed CPU seconds "
        "(its workers' start, the listing) and its rate beyond them (CPU s = fixed + frames "
        "/ rate).",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(head + L) + "\n")
    log(f"wrote {out}")
    return 0


def _cores() -> int:
    from datakit.core.cores import cpu_cores
    return cpu_cores()


def _warm_probes(folder: Path) -> None:
    from datakit.readers.video.decoding.decoding import probe
    for p in sorted(folder.glob("*/*.mp4")):
        probe(p)


def _job_main(job: dict) -> int:
    result = {"convert": convert, "floor": floor}[job["kind"]](job)
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("{"):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        sys.exit(_job_main(json.loads(sys.argv[1])))
    sys.exit(main(sys.argv[1:]))
