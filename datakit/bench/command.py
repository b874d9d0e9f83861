"""``python -m datakit.bench``: is my GPU fed, on my videos and my saved Keras model?

    python -m datakit.bench [FOLDER] [--model saved.keras] [--batch 8] [--profile DIR]

``FOLDER`` holds one subfolder of videos per class (default: 12 generated videos of 20 s
at 320x240, made once in the kit's data folder); ``--model`` a Keras model saved with
``model.save("m.keras")``, compiled (default: the reference 3D CNN). It prints each feed's
clips per CPU second, the model's clips a second fed from memory at two batch sizes (and
the GPU's kernel-time share), the cores each feed needs, and ``doctor.input_wait`` of the
model on each feed. ``--profile DIR`` also traces the direct feed's steps with
TensorFlow's profiler and reads the device's idle share from the trace.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _positive_int(text: str) -> int:
    """An argparse type: an int >= 1 (``--batches -1`` read without end, ``--steps 0``
    failed after the whole run), refused before any work, argparse naming the option."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give one >= 1") \
            from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is not >= 1; give a positive whole number")
    return n


def _batch_sizes(text: str) -> list[int]:
    """An argparse type: comma-separated batch sizes, each an int >= 1, at least one."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or not all(items):
        raise argparse.ArgumentTypeError(f"{text!r}: give batch sizes separated by commas, "
                                         "e.g. 8,32")
    return [_positive_int(t) for t in items]


def _json_file(text: str) -> Path:
    """An argparse type: a file whose folder exists (checked before the minutes of work, not
    after them, when the figures would be lost)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name in it, e.g. "
                                         f"{path / 'bench.json'}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: its folder {str(path.parent)!r} does not "
                                         "exist; create it first, or give a file in a folder "
                                         "that exists")
    return path


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m datakit.bench", description=(
        "Is my GPU fed? Each feed's clips per CPU second, the model's clips a second fed from "
        "memory, the cores each feed needs, and doctor.input_wait, on your videos and model."))
    ap.add_argument("folder", nargs="?", default=None,
                    help="videos in one subfolder per class (default: a generated set)")
    ap.add_argument("--model", default=None,
                    help="a compiled Keras model saved as .keras (default: the reference "
                         "3D CNN); its input shape sets the clips (frames, height, width)")
    ap.add_argument("--batch", type=_positive_int, default=8, help="clips a batch for the feeds")
    ap.add_argument("--batch-sizes", type=_batch_sizes, default=[8, 32],
                    help="batch sizes of the memory-fed step, comma-separated")
    ap.add_argument("--batches", type=_positive_int, default=20, help="batches timed per feed")
    ap.add_argument("--steps", type=_positive_int, default=10,
                    help="training steps timed per run (input_wait runs twice as many: the "
                    "first half drain the pipeline's buffers)")
    ap.add_argument("--shards", default=None,
                    help="where the converted shards go, kept (default: a temporary folder)")
    ap.add_argument("--profile", default=None, metavar="DIR",
                    help="trace the direct feed's steps with TensorFlow's profiler into DIR")
    ap.add_argument("--quick", action="store_true",
                    help="2 generated videos of 2 s at 160x120, clips of 4x32x32 (a check)")
    ap.add_argument("--json", type=_json_file, default=None,
                    help="write the figures to this file (its folder must exist)")
    return ap


def _model(args: argparse.Namespace) -> Any:
    from datakit.bench.reference import reference_model
    if args.model is None:
        return reference_model(*((4, 32) if args.quick else (16, 112)))
    import keras
    path = Path(args.model)
    if not path.is_file():
        raise FileNotFoundError(f"--model {path}: no such file; save your model with "
                                "model.save('model.keras') and pass that path")
    model = keras.models.load_model(path)
    shape = tuple(model.inputs[0].shape[1:])
    if len(shape) != 4 or None in shape or shape[1] != shape[2]:
        raise ValueError(f"--model {path}: its input is {shape}, not clips of (frames, size, "
                         "size, channels) with every size known: give the model "
                         "keras.Input((frames, size, size, 3))")
    return model


def _folder(args: argparse.Namespace) -> Path:
    if args.folder is not None:
        folder = Path(args.folder)
        if not folder.is_dir():
            raise FileNotFoundError(f"FOLDER {folder}: no such folder; give a folder holding "
                                    "one subfolder of videos per class")
        return folder
    from datakit import data_path
    from datakit.bench.reference import bench_videos
    n, secs, size = (2, 2, (160, 120)) if args.quick else (12, 20, (320, 240))
    return bench_videos(data_path(f"generated/bench_videos_{n}x{secs}s_{size[0]}x{size[1]}"),
                        n, secs, size)


def _profiled_idle(model: Any, feed: Any, steps: int, logdir: str, say: Any) -> float | None:
    import tensorflow as tf

    from datakit.bench.device import device_idle
    from datakit.doctor.input_wait import timed_steps
    tf.profiler.experimental.start(logdir)
    try:
        timed_steps(model, feed, steps, warmup=2)
    finally:
        tf.profiler.experimental.stop()
    idle = device_idle(logdir)
    say(f"profiler trace in {logdir}: device idle "
        + (f"{idle:.0%} of the profiled time" if idle is not None else "n/a (no GPU in it)")
        + f"; open it with `tensorboard --logdir {logdir}` (pip install tensorboard "
        "tensorboard-plugin-profile), Profile tab, input-pipeline analyzer")
    return idle


def run(args: argparse.Namespace, say: Any = print) -> dict:
    """Every measurement of the command, printed with ``say``, returned as a dict."""
    # imported here, so that --help answers without loading TensorFlow
    from datakit.bench.device import GpuSampler, appetite
    from datakit.bench.per_core import ClipWork, cores_needed, feeds, per_core
    from datakit.doctor.input_wait import input_wait
    model = _model(args)
    shape = tuple(model.inputs[0].shape[1:])
    work = ClipWork(clip_len=shape[0], size=shape[1], batch=args.batch)
    folder = _folder(args)
    shards = Path(args.shards) if args.shards else Path(tempfile.mkdtemp(prefix="bench_"))
    try:
        say(f"clips of {work.clip_len}x{work.size}x{work.size} from {folder}; one decoder, "
            f"{args.batches} batches of {work.batch} per feed:")
        rates = per_core(folder, shards, work, args.batches, say)
        sizes = args.batch_sizes
        kernel: dict = {}
        eats = appetite(model, sizes, steps=args.steps, sampler=kernel)
        say(f"\n{model.name} fed from memory (uint8 in):")
        for b, rate in eats.items():
            share = (f", {GpuSampler.MEASURES} {kernel[b]:.0%}" if kernel[b] is not None
                     else "")
            say(f"  batch {b}: {rate:,.1f} clips/s{share}")
        table = cores_needed(rates, eats)
        say("\n" + table)
        waits = {}
        for name, ds in feeds(folder, shards, work).items():
            report = input_wait(model, ds, steps=2 * args.steps)  # half drain buffers
            waits[name] = report.wait_share
            say(f"\ninput_wait, {name}:\n{report}")
        idle = None
        if args.profile:
            direct = next(iter(feeds(folder, shards, work).values()))
            idle = _profiled_idle(model, direct.repeat(), args.steps, args.profile, say)
    finally:
        if not args.shards:
            shutil.rmtree(shards, ignore_errors=True)
    return {"per_cpu_s": rates, "appetite": eats, "kernel_share": kernel, "wait_share": waits,
            "device_idle": idle, "table": table}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    result = run(args, lambda s: print(s, flush=True))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
