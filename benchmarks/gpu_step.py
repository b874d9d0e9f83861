"""How many clips a second a GPU eats: the reference 3D CNN's training step, in PyTorch alone.

    python3 benchmarks/gpu_step.py [--device cuda] [--steps 50] [--warmup 5] [--json out.json]

GPU machines often come without TensorFlow and without a package index (an
image with PyTorch only). This script needs nothing but Python and PyTorch:
copy this one file there and run it. It trains the same small 3D CNN as
``benchmarks/accelerator.py`` (``model_3d``: three Conv3D blocks, global
pooling, a dense softmax; 16 frames of 112x112 RGB, the course's clip) on
random uint8 clips already on the device, so the input costs nothing, and
prints the clips per second one training step consumes at batch 8 and 32.

Divide that figure by a feed's clips per second per CPU core (``python -m
benchmarks.accelerator --per-core`` on a machine with TensorFlow and the kit)
to get the cores the feed needs to keep this GPU busy: ``--json`` writes the
figures for ``--per-core --gpu-result FILE`` to read. Where TensorFlow is installed,
``python -m datakit.bench`` times the same model's step in Keras (``uint8`` in) instead.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

CLIP_LEN, SIZE, CLASSES = 16, 112, 2


def model_3d(torch):
    """The same layers as ``benchmarks/accelerator.model_3d``, channels first."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv3d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool3d((1, 2, 2)),
        nn.Conv3d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool3d(2),
        nn.Conv3d(32, 64, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(64, CLASSES))


def step_time(torch, device: str, batch: int, steps: int, warmup: int = 5) -> float:
    """Median seconds of one training step at ``batch`` (uint8 clips rescaled on the device)."""
    torch.manual_seed(0)
    model = model_3d(torch).to(device)
    opt = torch.optim.Adam(model.parameters())
    loss_fn = torch.nn.CrossEntropyLoss()
    clips = torch.randint(0, 256, (batch, CLIP_LEN, SIZE, SIZE, 3), dtype=torch.uint8,
                          device=device)
    labels = torch.randint(0, CLASSES, (batch,), device=device)

    def one_step():
        x = clips.permute(0, 4, 1, 2, 3).float() / 255  # as Rescaling(1/255) on the device
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), labels)
        loss.backward()
        opt.step()

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for _ in range(warmup):
        one_step()
    sync()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        one_step()
        sync()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 benchmarks/gpu_step.py",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--device", default=None, help="cuda (default when one is seen) or cpu")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5,
                    help="untimed steps first, per batch size (cuDNN's autotuning, the allocator)")
    ap.add_argument("--batches", default="8,32", help="comma-separated batch sizes")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args(argv)
    import torch
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name(0) if device.startswith("cuda") else platform.processor()
    print(f"PyTorch {torch.__version__} on {device} ({name or 'CPU'}): the reference 3D CNN, "
          f"clips of {CLIP_LEN}x{SIZE}x{SIZE}x3 uint8, {args.steps} timed steps", flush=True)
    rows = []
    for batch in (int(b) for b in args.batches.split(",")):
        step = step_time(torch, device, batch, args.steps, args.warmup)
        rows.append({"batch": batch, "step_s": step, "clips_per_s": batch / step})
        print(f"  batch {batch:>3}: {step * 1e3:8.1f} ms a step, {batch / step:8.1f} clips/s",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "name": name, "torch": torch.__version__,
                       "clip": [CLIP_LEN, SIZE, SIZE, 3], "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
