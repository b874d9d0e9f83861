"""On a machine with a GPU: does the input keep it busy? A small 3D CNN fed by each video path.

    python -m benchmarks.accelerator [--steps 60] [--batch 8]

Trains the same small 3D CNN (16 frames of 112x112) three times, each for
``--steps`` steps after a warm-up: fed by ``video_dataset_from_directory``
(decoding the videos), by ``clip_dataset`` (the converted shards), and by the
same clips held in memory (``from_tensor_slices``: the input costs nothing,
so its step time is the model's own). It prints each feed's step time, the
ratio to the memory-fed step (1.0: the input is free; 3.0: the accelerator
waits two thirds of the time) and the GPU's kernel-time share sampled by
``nvidia-smi`` every 100 ms (the share of time any kernel ran, not how busy the
device was). The videos are those of ``benchmarks/video_peers.py`` (12 of 60 s
at 320x240, made once).

Where no GPU is visible it prints why it skips and exits 0. ``--cpu`` runs the
same three trainings on the CPU (tiny settings with ``--quick``), to check the
script where there is no GPU; the kernel-time share is then not measured. Each feed's
line also gives the CPU cores the whole process kept busy while it trained.

GPU machines may have no TensorFlow. Then split the question in two:

- there, ``python3 benchmarks/gpu_step.py --json gpu.json`` (PyTorch alone)
  times the same model's step and prints the clips a second the GPU eats;
- here, ``python -m benchmarks.accelerator --per-core [--gpu-result gpu.json]``
  measures each feed's clips per CPU second (one decoder, drained as ``fit()``
  drains) and divides: the cores each feed needs to keep that GPU busy. It
  writes ``benchmarks/RESULTS_accelerator.md`` (not with ``--quick``).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = Path(__file__).resolve().parent.parent


def no_gpu_reason() -> str | None:
    """Why this machine cannot run the comparison, or ``None`` when TensorFlow sees a GPU."""
    if shutil.which("nvidia-smi") is None and not glob.glob("/dev/nvidia[0-9]*"):
        return ("no GPU on this machine: no NVIDIA device (/dev/nvidia0) and no nvidia-smi; "
                "run it where TensorFlow sees one (`--cpu` checks the script on the CPU)")
    import tensorflow as tf
    if not tf.config.list_physical_devices("GPU"):
        return ("TensorFlow sees no GPU (tf.config.list_physical_devices('GPU') is empty): "
                "install a CUDA build, e.g. pip install 'tensorflow[and-cuda]'")
    return None


def model_3d(clip_len: int, size: int, classes: int):
    """The reference 3D CNN of ``python -m datakit.bench``, compiled (``uint8`` clips in)."""
    from datakit.bench.reference import reference_model
    return reference_model(clip_len, size, classes)


def clip_feeds(folder: Path, shards: Path, work, batches: int) -> dict:
    """The three datasets, each repeating forever: direct, shards, memory."""
    import numpy as np
    import tensorflow as tf

    from datakit.readers.video import clip_dataset, video_dataset_from_directory
    kw = dict(clip_len=work.clip_len, frame_step=work.step, clips_per_video=work.clips_per_video,
              batch_size=work.batch, seed=work.seed)
    direct = video_dataset_from_directory(folder, frame_size=(work.size, work.size),
                                          verbose=False, **kw)
    shard = clip_dataset(shards / "train", **kw)
    held = list(shard.repeat().take(batches).as_numpy_iterator())
    x, y = np.concatenate([b[0] for b in held]), np.concatenate([b[1] for b in held])
    memory = tf.data.Dataset.from_tensor_slices((x, y)).batch(work.batch).repeat().prefetch(2)
    return {"direct (video_dataset_from_directory)": direct.repeat(),
            "shards (clip_dataset)": shard.repeat(), "memory (the same clips)": memory}


def timed_fit(model, ds, steps: int, warmup: int = 3, gpu=None) -> tuple[float, float]:
    """Seconds a step and cores busy over ``steps`` steps of one ``fit()`` call, after ``warmup``.

    Timed from the end of the last warm-up step to the end of the last step (a
    callback), so that neither the iterator's start nor its teardown counts:
    ending a ``fit()`` call can wait seconds for tf.data's autotuning thread.
    ``gpu`` (a :class:`datakit.bench.device.GpuSampler`) samples over the same steps.
    """
    import keras
    marks: list[tuple[float, float]] = []

    class Clock(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            marks.append((time.perf_counter(), time.process_time()))
            if gpu is not None and batch == warmup - 1:
                gpu.start()
            elif gpu is not None and batch == warmup + steps - 1:
                gpu.stop()

    model.fit(ds, steps_per_epoch=warmup + steps, epochs=1, verbose=0, callbacks=[Clock()])
    (t0, c0), (t1, c1) = marks[warmup - 1], marks[-1]
    return (t1 - t0) / steps, (c1 - c0) / (t1 - t0)


def train(folder: Path, shards: Path, steps: int, work, say) -> dict:
    """Step time, GPU kernel-time share and CPU cores busy for each feed; the model is rebuilt
    for each."""
    import keras

    from datakit.bench.device import GpuSampler
    out = {}
    for name, ds in clip_feeds(folder, shards, work, batches=min(steps, 24)).items():
        keras.utils.set_random_seed(0)
        model = model_3d(work.clip_len, work.size, classes=2)
        gpu = GpuSampler()
        try:
            step, cores = timed_fit(model, ds, steps, gpu=gpu)  # (sampled after the warm-up)
        finally:
            gpu.stop()
        out[name] = (step, gpu.kernel_share, cores)
        say(f"  {name}: {step * 1e3:,.0f} ms a step, {cores:.2f} cores busy")
    return out


_DRAIN = []


def drain(it, n):
    """Take ``n`` batches of ``(clips, labels)`` from ``it`` in one ``tf.function``, as fit() does.

    One traced function for every benchmark that drains a feed; it returns a
    checksum of the clips so that nothing is optimized away.
    """
    if not _DRAIN:
        import tensorflow as tf

        @tf.function
        def drain_(it, n):
            total = tf.constant(0, tf.int64)
            for _ in tf.range(n):
                x, _y = next(it)
                total += tf.reduce_sum(tf.cast(x[:, 0, 0, 0], tf.int64))
            return total

        _DRAIN.append(drain_)
    return _DRAIN[0](it, n)


def drained(ds, batches: int) -> tuple[float, float]:
    """Wall and CPU seconds (the whole process) of ``batches`` batches of ``ds`` drained as
    ``fit()`` drains them, after 2 untimed ones (the kit's ``drained_alone``, in totals)."""
    from datakit.doctor.input_wait import drained_alone
    cpu, wall = drained_alone(ds, batches)
    return wall * batches, cpu * batches


def per_core(folder: Path, shards: Path, work, batches: int, say) -> dict[str, float]:
    """Clips per CPU second of each file feed with one decoder, drained as ``fit()`` drains.

    The process's CPU time (all its threads) over the clips delivered: what one
    core moves, independent of how busy the machine is.
    """
    from datakit.readers.video import clip_dataset, video_dataset_from_directory
    kw = dict(clip_len=work.clip_len, frame_step=work.step, clips_per_video=work.clips_per_video,
              batch_size=work.batch, seed=work.seed)
    feeds = {
        "direct (video_dataset_from_directory)": video_dataset_from_directory(
            folder, frame_size=(work.size, work.size), verbose=False, num_parallel_calls=1,
            decoder_threads=1, **kw),
        "shards (clip_dataset)": clip_dataset(shards / "train", **kw),
    }
    out = {}
    for name, ds in feeds.items():
        wall, cpu = drained(ds.repeat(), batches)
        clips = batches * work.batch
        out[name] = clips / cpu
        say(f"  {name}: {clips / wall:.1f} clips/s, {clips / cpu:.1f} clips per CPU second "
            f"({cpu / wall:.2f} cores busy)")
    return out


def cores_needed(per_cpu_s: dict[str, float], gpu: dict | None) -> str:
    """A Markdown table: each feed's clips per CPU second and the cores it needs per GPU row."""
    rows = gpu["rows"] if gpu else []
    head = "| feed | clips per CPU s |" + "".join(
        f" cores for batch {r['batch']} ({r['clips_per_s']:.0f} clips/s) |" for r in rows)
    lines = [head, "|---|---:|" + "---:|" * len(rows)]
    for name, rate in per_cpu_s.items():
        lines.append(f"| {name} | {rate:.1f} |" + "".join(
            f" {r['clips_per_s'] / rate:.2f} |" for r in rows))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.accelerator",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--cpu", action="store_true", help="run on the CPU (to check the script)")
    ap.add_argument("--quick", action="store_true", help="4 videos of 3 s at 160x120, 4 steps")
    ap.add_argument("--per-core", action="store_true",
                    help="clips per CPU second of each feed, and the cores a GPU needs")
    ap.add_argument("--gpu-result", default=None,
                    help="the JSON written by benchmarks/gpu_step.py --json on a GPU machine")
    args = ap.parse_args(argv)
    if args.per_core:
        return per_core_main(args)
    reason = None if args.cpu else no_gpu_reason()
    if reason:
        print(f"SKIPPED: {reason}", flush=True)
        return 0
    folder, shards, work, (n, secs, w, h, steps) = bench_data(args)
    print(f"a small 3D CNN, {steps} steps of {work.batch} clips ({work.clip_len}x{work.size}x"
          f"{work.size}) per feed, {n} videos of {secs} s at {w}x{h}:", flush=True)
    res = train(folder, shards, steps, work, lambda s: print(s, flush=True))
    mem = res["memory (the same clips)"][0]
    print(f"\n{'feed':<40} {'step ms':>8} {'x memory':>9} {'kernel %':>9} {'cores':>6}")
    for name, (step, busy, cores) in res.items():
        shown = f"{busy:.0%}" if busy is not None else "n/a"
        print(f"{name:<40} {step * 1e3:>8,.0f} {step / mem:>9.2f} {shown:>9} {cores:>6.2f}")
    return 0


def bench_data(args, *, shards: bool = True):
    """The videos (made once), their shards (``shards``: written once) and the clip settings."""
    from benchmarks.video_peer_loaders import Work
    from benchmarks.video_peers import WORK, make_videos
    from datakit.readers.video import write_video_shards
    n, secs, (w, h), steps = (4, 3, (160, 120), 4) if args.quick else (12, 60, (320, 240),
                                                                         args.steps)
    base = WORK / f"{w}x{h}_{n}x{secs}s"
    folder, out, work = make_videos(base, n, secs, w, h), base / "accelerator_shards", Work()
    if shards and not (out / "train").exists():
        write_video_shards(folder, out, frame_size=(work.size, work.size), progress=False)
    return folder, out, work, (n, secs, w, h, steps)


def per_core_main(args) -> int:
    """``--per-core``: each feed's clips per CPU second, the cores a GPU needs, the results file."""
    import json
    import platform
    folder, shards, work, (n, secs, w, h, _) = bench_data(args)
    batches = 4 if args.quick else 40
    print(f"clips per CPU second, {batches} batches of {work.batch} clips ({work.clip_len}x"
          f"{work.size}x{work.size}) per feed, one decoder, {n} videos of {secs} s at {w}x{h}:",
          flush=True)
    rates = per_core(folder, shards, work, batches, lambda s: print(s, flush=True))
    gpu = json.loads(Path(args.gpu_result).read_text()) if args.gpu_result else None
    table = cores_needed(rates, gpu)
    print("\n" + table)
    if args.quick:
        return 0
    from benchmarks.stats import load_average
    load = load_average()
    gpu_line = (f"GPU: {gpu['name']} ({gpu['device']}, PyTorch {gpu['torch']}), from "
                f"`{args.gpu_result}`." if gpu else
                "**No GPU run exists yet**: no machine with a GPU was at hand. Run "
                "`python3 benchmarks/gpu_step.py --json gpu.json` on one (PyTorch alone), then "
                "`python -m benchmarks.accelerator --per-core --gpu-result gpu.json` here.")
    out = ROOT / "benchmarks" / "RESULTS_accelerator.md"
    before = out.read_text() if out.exists() else ""
    # the sections other benchmarks wrote below this one (fit_overhead's): kept as they are
    kept = "\n" + before[before.index("\n## ") + 1:] if "\n## " in before else ""
    out.write_text(
        "# Does the input keep an accelerator busy?\n\n"
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load:.1f} "
        "(`python -m benchmarks.accelerator --per-core`).\n\n"
        f"{gpu_line}\n\n"
        "Each feed's clips per CPU second (one decoder, drained in a `tf.function` as `fit()` "
        "drains); with a GPU run, the GPU's clips per second divided by it: the cores that "
        "feed needs to keep that GPU busy. When that is more cores than the machine has, "
        "convert to shards, use smaller frames, or decode on the GPU.\n\n"
        f"{table}\n" + kept)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
