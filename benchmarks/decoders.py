"""Every core decoding: the direct reader's clips/s with 1, 2, 4, ... decoders, and the GIL's share.

    python -m benchmarks.decoders [--quick] [--rounds 3] [--batches 30]

Three measurements, on the videos of ``benchmarks/video_peers.py`` (12 of 60 s
at 320x240; ``--quick``: 4 of 3 s at 160x120), clips of 16 frames, step 2, at
112x112:

- **scaling**: ``video_dataset_from_directory(num_parallel_calls=n)`` for
  n = 1, 2, 4, ... up to the cores (:func:`datakit.core.cores.cpu_cores`),
  drained in a ``tf.function`` as ``fit()`` drains it, each decoder with one
  FFmpeg thread (``decoder_threads=1``: one core a decoder, the scaling's unit),
  with the reader's default where it differs (the cores shared among the
  decoders), and with a decoder on every core running as many FFmpeg threads
  (FFmpeg's own choice is about one a core), on an epoch of the videos listed
  4 times (hard links: with 12 videos an epoch the pipeline restarts every 3
  batches, and each restart leaves a decoder idle while the epoch's last video
  finishes: rows of their own show that cost); each run takes a fresh iterator
  (the same clips for every setting, timed after its first batches), rounds
  rotate the order, and each run's clips/s is divided by one one-thread
  decoder's on the same epoch in the same round (median, min over rounds). 1.0
  per added decoder is linear.
- **threads against processes**: the same clips decoded by the kit's
  ``read_frames`` with one FFmpeg thread (what each decoder calls) in n
  threads of one process and in n processes, side by side: the GIL can only
  cost the threads. Their ratio at n = cores is what the GIL takes from the
  scaling.
- **the GIL's share of a decode**: one thread decodes the clips, timed by
  its own CPU clock (another process's load does not count), plainly and
  then under cProfile: the time inside PyAV's calls that release the GIL
  (opening, seeking, decoding, scaling) against the plain run's whole. The
  rest holds the GIL; at a share ``g`` held, threads cannot go past about
  ``1 / g`` decoders' worth.

``--quick`` checks the harness in under a minute. The table goes to
``benchmarks/RESULTS_decoders.md`` (not with ``--quick``), with the machine's
load average at the start and the end: on a shared machine read the ratios,
not the rates.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from benchmarks.stats import load_average as _load
from benchmarks.stats import median as _med
from benchmarks.video_peers import listed_times

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "RESULTS_decoders.md"


def decoder_counts(cores: int) -> list[int]:
    """1, 2, 4, ... below ``cores``, then ``cores``.

    >>> decoder_counts(1), decoder_counts(2), decoder_counts(6), decoder_counts(16)
    ([1], [1, 2], [1, 2, 4, 6], [1, 2, 4, 8, 16])
    """
    out, n = [], 1
    while n < cores:
        out.append(n)
        n *= 2
    return [*out, cores]


# -- the clips every decoder in the threads/processes runs decode ------------------------


def _clips(folder: Path, work, n: int) -> list[tuple]:
    """``n`` seeded clips: ``(VideoInfo, frame indices)``, spread over the videos."""
    import numpy as np

    from benchmarks.video_peer_loaders import videos
    from datakit.readers.video.decoding.decoding import probe
    infos = [probe(p) for p, _ in videos(folder)]
    rng = np.random.default_rng(0)
    out = []
    for j in range(n):
        info = infos[j % len(infos)]
        start = int(rng.integers(0, info.frames - work.span + 1))
        out.append((info, start + work.step * np.arange(work.clip_len)))
    return out


def _decode(clip, size: int = 112) -> int:
    from datakit.readers.video.decoding.frame_reading import read_frames
    info, frames = clip
    return int(read_frames(info, frames, threads=1, frame_size=(size, size)).shape[0])


def _warm(_: int) -> int:
    import datakit.readers.video.decoding.frame_reading  # noqa: F401  (import before the clock runs)
    return os.getpid()


def threads_and_processes(clips: list, counts: list[int], rounds: int, say) -> dict:
    """``{("threads"|"processes", n): [clips/s per round]}``: the same clips both ways."""
    import multiprocessing

    out: dict[tuple[str, int], list[float]] = {}
    ctx = multiprocessing.get_context("spawn")  # TensorFlow may be loaded: never fork it
    pools = {n: ProcessPoolExecutor(n, mp_context=ctx) for n in counts}
    try:
        for n, pool in pools.items():  # start and import in every worker before timing
            list(pool.map(_warm, range(4 * n)))
            list(pool.map(_decode, clips[:n]))
        _decode(clips[0])
        jobs = [(kind, n) for n in counts for kind in ("threads", "processes")]
        for r in range(rounds):
            for kind, n in jobs[r % len(jobs):] + jobs[:r % len(jobs)]:
                t0 = time.perf_counter()
                if kind == "threads":
                    with ThreadPoolExecutor(n) as pool:
                        list(pool.map(_decode, clips))
                else:
                    list(pools[n].map(_decode, clips, chunksize=1))
                out.setdefault((kind, n), []).append(len(clips) / (time.perf_counter() - t0))
            say(f"  round {r + 1}/{rounds}: " + ", ".join(
                f"{k} {n}: {v[-1]:.1f}" for (k, n), v in out.items()) + " clips/s")
    finally:
        for pool in pools.values():
            pool.shutdown()
    return out


#: PyAV's calls that drop the GIL around FFmpeg's work (PyAV 18's sources: ``with nogil``
#: around avformat_open_input, av_seek_frame, avcodec_send_packet/receive_frame, sws_scale).
RELEASING = ("open", "seek", "decode", "reformat")


def gil_share(clips: list, rounds: int, say) -> list[float]:
    """The share of a decoding thread's CPU time spent holding the GIL, per round.

    Each round decodes each clip twice in this thread, timed by its own CPU
    clock (other processes' load does not count): once plainly, for the CPU a
    clip takes, and once under cProfile, for the time inside the PyAV calls that
    release the GIL (:data:`RELEASING`; each lasts from tens of microseconds to
    milliseconds, so the profiler's own cost, a microsecond or so a call, hardly
    touches them). The share held is 1 minus that time over the plain run's.
    The demuxer's ``next()`` (``av_read_frame``, also without the GIL) cannot be
    told apart from the loop around it and counts as held: an upper bound.
    """
    import cProfile
    import pstats

    _decode(clips[0])
    out = []
    for r in range(rounds):
        prof, plain = cProfile.Profile(time.thread_time), 0.0
        for clip in clips:  # clip by clip, so that a busy moment hits both runs alike
            c0 = time.thread_time()
            _decode(clip)
            plain += time.thread_time() - c0
            prof.enable()
            _decode(clip)
            prof.disable()
        stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        free = sum(v[2] for (file, _, name), v in stats.items()
                   if file == "~" and "av." in name and any(
                       f"'{c}'" in name or f".{c}>" in name for c in RELEASING))
        out.append(max(0.0, 1 - free / plain))
        say(f"  round {r + 1}/{rounds}: {plain / len(clips) * 1e3:.1f} ms of CPU a clip, "
            f"{out[-1]:.1%} of it holding the GIL")
    return out


# -- the direct reader, n decoders -------------------------------------------------------


#: How many times the videos are listed in an epoch for the scaling's main rows: 12 videos
#: an epoch restart the pipeline every 3 batches, and each restart leaves a decoder idle
#: while the epoch's last video finishes (the bench shows that cost in rows of its own).
TIMES = 4


def reader_configs(cores: int) -> list[tuple[int, int]]:
    """``(decoders, FFmpeg threads each)``: one thread each, the default where it differs, and
    a decoder on every core with as many FFmpeg threads each (what the default replaced).

    >>> reader_configs(1), reader_configs(2), reader_configs(4)
    ([(1, 1)], [(1, 1), (2, 1), (1, 2), (2, 2)], [(1, 1), (2, 1), (4, 1), (1, 4), (2, 2), (4, 4)])
    """
    counts = decoder_counts(cores)
    return ([(n, 1) for n in counts] + [(n, cores // n) for n in counts if cores // n > 1]
            + ([(cores, cores)] if cores > 1 else []))


def scaling_runs(cores: int) -> list[tuple[int, int, int]]:
    """``(decoders, FFmpeg threads, times listed)``: :func:`reader_configs` on an epoch of the
    videos listed :data:`TIMES` times, and the one-thread decoders on the videos once.

    >>> scaling_runs(2)
    [(1, 1, 4), (2, 1, 4), (1, 2, 4), (2, 2, 4), (1, 1, 1), (2, 1, 1)]
    """
    return ([(n, t, TIMES) for n, t in reader_configs(cores)]
            + [(n, 1, 1) for n in decoder_counts(cores)])


def reader_scaling(folder: Path, work, configs: list[tuple[int, int, int]], batches: int,
                   rounds: int, say) -> dict:
    """``{(n, threads, times): [(clips/s, cores busy) per round]}`` of the direct reader, on
    ``folder``'s videos listed ``times`` times an epoch."""
    import tensorflow as tf

    from benchmarks.accelerator import drain
    from datakit.readers.video import video_dataset_from_directory

    sets = {(n, threads, times): video_dataset_from_directory(
        listed_times(folder, times), frame_size=(work.size, work.size),
        clip_len=work.clip_len, frame_step=work.step, clips_per_video=work.clips_per_video,
        batch_size=work.batch, seed=work.seed, verbose=False, num_parallel_calls=n,
        decoder_threads=threads).repeat() for n, threads, times in configs}
    out: dict[tuple[int, int, int], list[tuple[float, float]]] = {c: [] for c in configs}
    for r in range(rounds):
        for c in configs[r % len(configs):] + configs[:r % len(configs)]:
            # A fresh iterator per run, the same clips for every setting: a live one refills
            # its buffers after its turn, on the next setting's cores (one decoder then
            # showed up to 1.44 cores busy), and a full buffer drains faster than decoding.
            it = iter(sets[c])
            drain(it, tf.constant(3))  # open, fill; from here on the drain waits on decoding
            t0, c0 = time.perf_counter(), time.process_time()
            drain(it, tf.constant(batches))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            del it  # (its background work stops with it)
            gc.collect()
            out[c].append((batches * work.batch / wall, cpu / wall))
        say(f"  round {r + 1}/{rounds}: " + ", ".join(
            f"{n}x{t} ({x}x) {v[-1][0]:.1f} clips/s ({v[-1][1]:.2f} cores)"
            for (n, t, x), v in out.items()))
    return out


# -- the report ----------------------------------------------------------------------------


def report(scaling: dict, tp: dict, gil: list[float], cores: int, per_epoch: int) -> str:
    """The Markdown tables of the three measurements."""
    lines = ["| decoders | FFmpeg threads each | videos an epoch | clips/s (median) | x 1 "
             "one-thread decoder, median (min) | per decoder | cores busy | clips per CPU s |",
             "|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for (n, threads, times), runs in scaling.items():
        base = [c for c, _ in scaling[1, 1, times]]
        ratios = [c / b for (c, _), b in zip(runs, base, strict=True)]
        default = " (default)" if threads == max(1, cores // n) else ""
        lines.append(f"| {n} | {threads}{default} | {per_epoch * times} | "
                     f"{_med(c for c, _ in runs):.1f} | "
                     f"{_med(ratios):.2f} ({min(ratios):.2f}) | {_med(ratios) / n:.2f} | "
                     f"{_med(b for _, b in runs):.2f} | {_med(c / b for c, b in runs):.1f} |")
    lines += ["", "| workers | threads, clips/s | processes, clips/s | threads / processes, "
              "median (min) | threads x 1 | processes x 1 |", "|--:|--:|--:|--:|--:|--:|"]
    counts = sorted({n for _, n in tp})
    for n in counts:
        th, pr = tp[("threads", n)], tp[("processes", n)]
        tr = [a / b for a, b in zip(th, pr, strict=True)]
        lines.append(
            f"| {n} | {_med(th):.1f} | {_med(pr):.1f} | {_med(tr):.2f} ({min(tr):.2f}) | "
            f"{_med(a / b for a, b in zip(th, tp[('threads', 1)], strict=True)):.2f} | "
            f"{_med(a / b for a, b in zip(pr, tp[('processes', 1)], strict=True)):.2f} |")
    one = _med(b for _, b in scaling[1, 1, TIMES])
    lines += ["", f"One one-thread decoder keeps **{one:.2f}** cores busy: its decode, and the "
              f"pipeline's work around it on TensorFlow's threads. On {cores} cores the reader "
              f"can then give at most about **{cores / one:.2f}x** one decoder's clips/s, "
              f"however many decoders it runs."]
    held = _med(gil)
    lines += ["", f"GIL: one decoding thread holds it **{held:.1%}** of its CPU time (median of "
              f"{len(gil)}; {min(gil):.1%} to {max(gil):.1%}), an upper bound. Decoders that "
              f"hold it that share of a clip's time cannot, however many, deliver more than "
              f"about **{1 / max(held, 1e-9):.0f}** single decoders' clips/s: the GIL then "
              f"runs all the time."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.decoders",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small videos, 1 round: the harness")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", type=int, default=30, help="batches of 8 clips timed per run")
    args = ap.parse_args(argv)
    from benchmarks.accelerator import bench_data
    from datakit.core.cores import cpu_cores

    load0, started = _load(), time.time()
    folder, _shards, work, (nv, secs, w, h, _) = bench_data(argparse.Namespace(
        quick=args.quick, steps=0), shards=False)
    cores = cpu_cores()
    counts = decoder_counts(cores)
    rounds, batches = (1, 6) if args.quick else (args.rounds, args.batches)
    say = lambda s: print(s, flush=True)  # noqa: E731
    say(f"decoders: {nv} videos of {secs} s at {w}x{h}, clips of {work.clip_len} frames (step "
        f"{work.step}) at {work.size}x{work.size}; {cores} cores; load average {load0:.1f}")
    clips = _clips(folder, work, 8 if args.quick else 240)  # about 2 s a run at 2 decoders
    say("the GIL's share of one decoding thread (cProfile on the thread's CPU clock):")
    gil = gil_share(clips, rounds, say)
    say("the same clips decoded in threads and in processes (read_frames):")
    tp = threads_and_processes(clips, counts, rounds, say)
    say(f"the direct reader (decoders x FFmpeg threads), {batches} batches of {work.batch} "
        f"clips per run:")
    scaling = reader_scaling(folder, work, scaling_runs(cores), batches, rounds, say)
    table = report(scaling, tp, gil, cores, nv)
    load1 = _load()
    say("\n" + table + f"\nload average {load0:.1f} at the start, {load1:.1f} at the end")
    if not args.quick:
        import platform
        OUT.write_text(
            "# Every core decoding: the direct reader with 1 to all cores' decoders\n\n"
            f"Made by `python -m benchmarks.decoders` (also run by `make bench`) on "
            f"{time.strftime('%Y-%m-%d %H:%M')} UTC in {(time.time() - started) / 60:.0f} min. "
            f"Machine: {os.cpu_count()} logical cores ({cores} usable), {platform.machine()}; "
            f"load average **{load0:.1f}** at the start, **{load1:.1f}** at the end ("
            + ("above the cores: the machine was shared; read the ratios, taken within a "
               "round, not the rates" if max(load0, load1) > cores else "not above the "
               "cores: little else ran") + f"). {nv} videos of {secs} s at {w}x{h} (H.264, a "
            f"keyframe every 250 frames); "
            f"clips of {work.clip_len} frames, step {work.step}, at {work.size}x{work.size}, "
            f"{work.clips_per_video} per video, batches of {work.batch}; {rounds} rounds, "
            f"orders rotated.\n\n" + __doc__[__doc__.index("- **scaling**"):
                                          __doc__.index("``--quick`` checks")] + table)
        say(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
