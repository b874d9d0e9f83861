"""The device's side: how many clips a second the model eats, and how busy the GPU was.

:func:`appetite` trains the model on ``uint8`` clips already in memory (the input costs
nothing), at each batch size: its clips a second, the most any feed must deliver.
:class:`GpuSampler` reads ``nvidia-smi``'s ``utilization.gpu`` every 100 ms: that is the
**share of time any kernel ran** on the GPU, not how busy the device was (one small kernel
at a time reads 100%). :func:`device_idle` reads a TensorFlow profiler trace instead: the
share of the profiled time no kernel ran on GPU 0, from the trace's kernel events.

>>> import keras
>>> from datakit.bench.reference import reference_model
>>> rates = appetite(reference_model(clip_len=2, size=8), (2,), steps=2, warmup=1)
>>> list(rates), rates[2] > 0
([2], True)
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from datakit.doctor.input_wait import fastest_run, timed_steps

__all__ = ["GpuSampler", "appetite", "device_idle"]


class GpuSampler:
    """``nvidia-smi``'s GPU utilization every 100 ms from :meth:`start` to :meth:`stop`, or
    while a ``with`` block runs.

    ``kernel_share`` is the mean of those samples: the share of time a kernel ran, which
    a device doing little in each kernel reports as busy; ``None`` without ``nvidia-smi``.
    """

    MEASURES = "kernel-time share (nvidia-smi utilization.gpu: time any kernel ran)"

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        if self.proc is None and shutil.which("nvidia-smi"):
            self.proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                 "-lms", "100", "-i", "0"], stdout=subprocess.PIPE, text=True)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            out, _ = self.proc.communicate(timeout=10)
            self.samples = [float(x) for x in out.split() if x.strip().isdigit()]
            self.proc = None

    def __enter__(self) -> GpuSampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def kernel_share(self) -> float | None:
        return statistics.mean(self.samples) / 100 if self.samples else None


def _clips(model: Any, batch: int, seed: int) -> Any:
    """A batch of random clips of the model's input shape and dtype, and labels."""
    shape = tuple(model.inputs[0].shape[1:])
    dtype = str(model.inputs[0].dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (batch, *shape)).astype(dtype)
    classes = int(model.outputs[0].shape[-1] or 2)
    return x, rng.integers(0, classes, batch)


def appetite(model: Any, batch_sizes: Sequence[int] = (8, 32), *, steps: int = 20, warmup: int = 3,
             seed: int = 0, sampler: dict | None = None) -> dict[int, float]:
    """Clips a second ``model`` trains on when fed from memory, per batch size.

    ``sampler``: a dict that gets each batch size's :class:`GpuSampler` kernel share.
    """
    import tensorflow as tf
    out = {}
    for batch in batch_sizes:
        x, y = _clips(model, batch, seed)
        feed = tf.data.Dataset.from_tensors((x, y)).repeat()
        with GpuSampler() as gpu:
            per_step, _cores = timed_steps(model, feed, steps, warmup)
        if sampler is not None:
            sampler[batch] = gpu.kernel_share
        out[batch] = batch / fastest_run(per_step, 1)
    return out


def _union_ns(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def device_idle(logdir: str | Path) -> float | None:
    """The share of the profiled time no kernel ran on GPU 0, from the newest TensorFlow
    profiler trace (``*.xplane.pb``) under ``logdir``; ``None`` when it holds no GPU plane.

    The profiled time runs from the first to the last event of the host's plane; a kernel
    is an event on one of the GPU plane's stream lines.
    """
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    traces = sorted(Path(logdir).rglob("*.xplane.pb"), key=lambda p: p.stat().st_mtime)
    if not traces:
        return None
    space = xplane_pb2.XSpace()
    space.ParseFromString(traces[-1].read_bytes())

    def events(plane: Any, keep: Any = lambda line: True) -> list[tuple[float, float]]:
        return [(line.timestamp_ns + e.offset_ps / 1e3,
                 line.timestamp_ns + (e.offset_ps + e.duration_ps) / 1e3)
                for line in plane.lines if keep(line) for e in line.events]

    gpu = [p for p in space.planes if p.name == "/device:GPU:0"]
    host = [p for p in space.planes if p.name.startswith("/host:CPU")]
    if not gpu or not host:
        return None
    kernels = events(gpu[0], lambda line: line.name.startswith("Stream"))
    spans = events(host[0])
    if not spans:
        return None
    window = max(e for _, e in spans) - min(s for s, _ in spans)
    return max(0.0, 1 - _union_ns(kernels) / window) if window > 0 else None
