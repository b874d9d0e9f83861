"""How much a process's memory grows while a pipeline runs: the memory report's measuring.

:class:`GrowthSampler` samples, in the background, the larger of the growth of the
process's resident memory (RSS; its peak exact on Linux, from the kernel's high-water
mark, :func:`reset_peak`) and of the bytes of tensors TensorFlow's CPU allocator holds
(:func:`tensor_bytes`). :func:`fix_malloc` makes glibc give freed large buffers back at
once, so that RSS counts what is held; :func:`consume` runs a pipeline as a training
loop would; :func:`warm_up` pays the runtime's first-iteration pools before any
measurement. :mod:`datakit.doctor.memory_use` predicts and reports.

>>> sampler = GrowthSampler(0.001)
>>> sampler.start(); sampler.stop.set(); sampler.join()
>>> sampler.seconds[0], all(g >= 0 for g in sampler.growth)
(0.0, True)
"""

from __future__ import annotations

import ctypes
import gc
import threading
import time

import tensorflow as tf

from datakit.perf.memory import rss_bytes
from datakit.perf.synthetic import serial

__all__ = ["warm_up"]


def fix_malloc() -> bool:
    """Make freed large buffers go back to the OS at once (glibc): RSS then counts what is
    held, not what malloc keeps for later. False where there is no glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD: also stops its dynamic growth
        libc.malloc_trim(0)
        return True
    except (OSError, AttributeError):
        return False


def reset_peak() -> bool:
    """Reset the kernel's high-water mark of this process's RSS to its RSS now (Linux >= 4.0).

    The peak is then exact: a sampler thread that is not scheduled in time (a loaded
    machine, a short run) cannot miss it. False where the kernel does not offer it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def kernel_peak() -> int:
    """VmHWM: the most resident memory this process held since the last reset, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmHWM in /proc/self/status")


def tensor_bytes() -> tuple[int, int] | None:
    """(current, peak) bytes of tensors held by TensorFlow's CPU allocator, or None."""
    try:
        info = tf.config.experimental.get_memory_info("CPU:0")
        return int(info["current"]), int(info["peak"])
    except (ValueError, RuntimeError, KeyError):
        return None


class GrowthSampler(threading.Thread):
    """Growth every ``every`` seconds, as (seconds, bytes) from the start: the larger of the
    RSS growth and the growth of the tensors TensorFlow's CPU allocator holds. Both
    baselines, and both peaks (the kernel's and the allocator's), are reset when it is made."""

    def __init__(self, every: float):
        super().__init__(daemon=True)
        try:
            tf.config.experimental.reset_memory_stats("CPU:0")
        except (ValueError, RuntimeError):
            pass
        self.exact = reset_peak()
        self.every, self.stop, self.t0 = every, threading.Event(), time.perf_counter()
        tensors = tensor_bytes()
        self.rss0, self.tensors0 = rss_bytes(), None if tensors is None else tensors[0]
        self.seconds, self.growth, self.rss_peak = [0.0], [0], 0

    def sample(self) -> None:
        rss = rss_bytes() - self.rss0
        held = rss
        tensors = None if self.tensors0 is None else tensor_bytes()
        if tensors is not None and self.tensors0 is not None:
            held = max(rss, tensors[0] - self.tensors0)
        self.seconds.append(time.perf_counter() - self.t0)
        self.growth.append(max(held, 0))
        self.rss_peak = max(self.rss_peak, rss)

    def run(self) -> None:
        while not self.stop.wait(self.every):
            self.sample()

    def peaks(self) -> tuple[int, int | None]:
        """(RSS peak growth, the allocator's peak growth or None), once the run is over."""
        rss = max(self.rss_peak, kernel_peak() - self.rss0 if self.exact else 0, 0)
        now = None if self.tensors0 is None else tensor_bytes()
        if now is None or self.tensors0 is None:
            return rss, None
        return rss, now[1] - self.tensors0


def consume(dataset: tf.data.Dataset, step_time: float, seconds: float) -> int:
    n, start = 0, time.perf_counter()
    for x in dataset:
        n += 1
        del x
        if step_time:
            time.sleep(step_time)
        if time.perf_counter() - start > seconds:
            break
    return n


def trim_malloc() -> None:
    """Give the memory glibc's malloc keeps for later back to the OS (after ``fix_malloc``)."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)


_WARM: list[bool] = []


def warm_up() -> None:
    """Run a small pipeline once per process: the runtime's first iteration allocates its own
    pools, which are not the measured pipeline's."""
    if not _WARM:
        consume(serial(tf.data.Dataset.range(64).map(lambda i: i + 1).batch(4)), 0.0, 1.0)
        _WARM.append(True)


def start_sampler(every: float, fixed: bool, *, collect: bool = True) -> GrowthSampler:
    """A started sampler; with ``collect``, after freeing what earlier pipelines left (their
    memory freed during the run would hide this one's growth)."""
    if collect:
        gc.collect()
        if fixed:
            trim_malloc()
    sampler = GrowthSampler(every)
    sampler.start()
    return sampler


def start_once(samplers: list, every: float, fixed: bool) -> None:
    """Start the sampler, unless building the dataset started it already."""
    if not samplers:
        samplers.append(start_sampler(every, fixed))
