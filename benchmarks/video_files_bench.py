"""Your own videos: long files of several codecs, read directly (with and without seeking),
from converted shards, and the TF tutorial's FrameGenerator way; conversion against decoding.

    python -m benchmarks.video_files_bench [--seconds 60] [--width 320] [--height 240]

Rows (all measured side by side in one run, one process):
- clips/s and peak RSS above the start, for: ``video_dataset_from_directory``
  seeking to the keyframe before each clip; the same with ``seek=False``
  (decoding from the first frame); ``clip_dataset`` over ``write_video_shards``
  output; a ``from_generator`` that decodes from the start like the tutorial's
  ``FrameGenerator``;
- conversion frames/s (``write_video_shards``, one process per core) against
  the pure PyAV decode rate of the same files (the floor it cannot beat), and that
  decode in two Python threads (what the direct reader's parallel calls rely on:
  FFmpeg decoding with the GIL released);
- the cost of one clip at the end of a video against one at its start (seeking).
Data goes under ``benchmarks/work/video_files`` (ignored by git), made with fixed seeds.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / "work" / "video_files"
CODECS = ("h264", "hevc", "mpeg4", "vp9")


def _make(seconds: int, width: int, height: int) -> Path:
    import numpy as np

    from datakit.readers import video
    from datakit.readers.video.synthetic.encoded import CODECS as FORMATS

    folder = WORK / "videos"
    if folder.exists():
        return folder
    n = seconds * 30
    y, x = np.mgrid[:height, :width]
    base = np.stack([x % 256, y % 256, (x + y) % 256], -1).astype(np.uint8)
    for k, codec in enumerate(CODECS):
        frames = np.stack([np.roll(base, 3 * t * (1 if k % 2 else -1), axis=1)
                           for t in range(n)])
        video.write_video(frames, folder / f"class{k % 2}" / f"{codec}{FORMATS[codec][2]}",
                          codec=codec, fps=30, gop=60)
    return folder


def _rate(make, epochs: int = 2) -> tuple[float, float]:
    """Clips per second over ``epochs`` (after one warm-up batch), and peak RSS growth in MB."""
    from datakit.perf.memory import RssSampler, rss_bytes

    ds = make()
    next(iter(ds))
    base, sampler = rss_bytes(), RssSampler(0.05)
    sampler.start()
    t0, clips = time.perf_counter(), 0
    for _ in range(epochs):
        for x, _y in ds:
            clips += len(x)
    seconds = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    return clips / seconds, (sampler.peak - base) / 1e6


def _frame_generator(folder: Path, clip_len: int, clips: int):
    """The tutorial's way: pick a start (here seeded, for a fair count), decode up to it."""
    import random

    import av
    import numpy as np
    import tensorflow as tf

    files = sorted(str(p) for p in folder.glob("*/*"))

    def gen():
        rng = random.Random(0)
        for path in files:
            for _ in range(clips):
                with av.open(path) as c:
                    n = sum(1 for p in c.demux(video=0) if p.size)
                start, out = rng.randint(0, n - clip_len), []
                with av.open(path) as c:
                    for t, f in enumerate(c.decode(video=0)):
                        if t >= start:
                            out.append(f.to_ndarray(format="rgb24"))
                        if len(out) == clip_len:
                            break
                yield np.stack(out), 0

    first = next(gen())[0]
    spec = (tf.TensorSpec(first.shape, tf.uint8), tf.TensorSpec((), tf.int64))
    return tf.data.Dataset.from_generator(gen, output_signature=spec).batch(4)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--clip-len", type=int, default=16)
    ap.add_argument("--clips", type=int, default=4, help="random clips per video per epoch")
    args = ap.parse_args(argv)

    import datakit  # noqa: F401
    from datakit.readers import video
    from datakit.readers.video.decoding import decoding

    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    folder = _make(args.seconds, args.width, args.height)
    infos = [decoding.probe(p) for p in sorted(folder.glob("*/*"))]
    say(f"your own videos: {len(infos)} files ({', '.join(i.codec for i in infos)}), "
        f"{args.seconds} s at 30 fps, {args.width}x{args.height}; clips of {args.clip_len} "
        f"frames, {args.clips} random clips per video per epoch, 2 epochs")
    kw = dict(clip_len=args.clip_len, batch_size=4, clips_per_video=args.clips, seed=0,
              verbose=False)
    out = WORK / "shards"
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    video.write_video_shards(folder, out, progress=False)
    convert_s = time.perf_counter() - t0
    frames = sum(i.frames for i in infos)
    t0 = time.perf_counter()
    for info in infos:  # the floor: decode every frame to RGB, nothing else
        decoding.decode_frames(info, range(info.frames), seek=False)
    decode_s = time.perf_counter() - t0
    from concurrent.futures import ThreadPoolExecutor
    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:  # the same decodes, two Python threads at once
        list(pool.map(lambda i: decoding.decode_frames(i, range(i.frames), seek=False), infos))
    threaded_s = time.perf_counter() - t0
    rows = {
        "direct, seeking": lambda: video.video_dataset_from_directory(folder, **kw),
        "direct, from the start": lambda: video.video_dataset_from_directory(
            folder, seek=False, **kw),
        "shards (clip_dataset)": lambda: video.clip_dataset(
            out / "train", clip_len=args.clip_len, batch_size=4, clips_per_video=args.clips),
        "FrameGenerator-like": lambda: _frame_generator(folder, args.clip_len, args.clips),
    }
    measured = {name: _rate(make) for name, make in rows.items()}
    say(f"\n{'path':<24} {'clips/s':>8} {'peak RSS growth MB':>19}")
    for name, (rate, mb) in measured.items():
        say(f"{name:<24} {rate:>8,.1f} {mb:>19,.0f}")
    seek, start = measured["direct, seeking"][0], measured["direct, from the start"][0]
    say(f"seeking / decoding from the start: {seek / start:.1f}x clips/s")
    say(f"\nconversion: {frames / convert_s:,.0f} frames/s (all cores) against a pure PyAV "
        f"decode of {frames / decode_s:,.0f} frames/s (one core)")
    say(f"the same decode in 2 Python threads: {frames / threaded_s:,.0f} frames/s, "
        f"{decode_s / threaded_s:.1f}x one thread (on 2 cores, 2.0x: the GIL never waits; "
        "1.0x: it serializes them)")
    info = infos[0]
    def clip_cost(first):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            decoding.decode_frames(info, range(first, first + args.clip_len))
            times.append(time.perf_counter() - t0)
        return statistics.median(times)
    at_start, at_end = clip_cost(0), clip_cost(info.frames - args.clip_len)
    say(f"one clip ({info.codec}) at the end: {at_end * 1e3:.0f} ms, at the start: "
        f"{at_start * 1e3:.0f} ms ({at_end / at_start:.1f}x; median of 5)")
    _write_results(lines, argv)


def _write_results(lines: list[str], argv) -> None:
    import os
    import platform

    out = ROOT / "benchmarks" / "RESULTS_video_files.md"
    command = " ".join(["python -m benchmarks.video_files_bench", *(argv or [])])
    out.write_text(
        "# Benchmarks: your own videos, read directly or converted\n\n"
        f"Made by `{command}` on {time.strftime('%Y-%m-%d')} (also run by `make bench`). "
        f"Machine: {os.cpu_count()} logical cores, {platform.machine()}, shared with other "
        "work: read the ratios, not the absolute rates.\n\n```\n" + "\n".join(lines) + "\n```\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
