"""How much memory a process holds: RSS now, its peak, sampled in the background, during fit().

The resident set size (RSS) is the memory the operating system counts against the
machine. :class:`RssSampler` tracks its peak while something runs (``bench`` uses
it); :func:`memory_logger` records the RSS after every step of ``fit()`` and
:func:`plot_rss_over_time` draws it. The all-in-memory video baseline that
streaming replaces is :mod:`datakit.readers.video.in_memory`.

>>> rss_bytes() > 0, peak_rss_bytes() > 0  # both move while we look: compare with care
(True, True)
>>> sampler = RssSampler(0.001)
>>> sampler.start(); sampler.stop.set(); sampler.join()
>>> sampler.peak >= rss_bytes() // 2
True
"""

from __future__ import annotations

import sys
import threading
import time

import keras
import numpy as np
import psutil

from datakit.core.arguments import check_seconds

__all__ = ["rss_bytes", "memory_logger"]


def rss_bytes(children: bool = False) -> int:
    """Resident memory of this process, in bytes (what the OS counts against the machine).

    With ``children=True`` its child processes (e.g. ``DataLoader`` workers) are added.
    """
    proc = psutil.Process()
    total = proc.memory_info().rss
    for child in proc.children(recursive=True) if children else ():
        try:
            total += child.memory_info().rss
        except psutil.Error:  # the child ended while we looked
            pass
    return total


def peak_rss_bytes() -> int:
    """The kernel's high-water mark of this process's resident memory, in bytes.

    From ``getrusage`` on Linux and macOS; Windows has no ``resource`` module, and
    reports the same mark as the peak working set (through ``psutil``).
    """
    try:
        import resource  # POSIX only: imported here, so that the kit imports on Windows
    except ImportError:
        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss))  # (rss: a floor, on a rare system)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS reports bytes, Linux KiB


class RssSampler(threading.Thread):
    """Samples this process's RSS (plus its children's: DataLoader workers) in the background.

    ``start()`` it, ``stop.set()`` and ``join()`` it, then read ``peak`` (bytes).
    """

    def __init__(self, every: float):
        super().__init__(daemon=True)
        if not check_seconds("sample_every", every):
            raise ValueError("sample_every=0 would sample without a pause: pass seconds > 0, "
                             "e.g. 0.05.")
        self.every, self.stop = float(every), threading.Event()
        self.peak = rss_bytes(children=True)

    def run(self) -> None:
        while not self.stop.wait(self.every):
            self.peak = max(self.peak, rss_bytes(children=True))


# ---- Memory over time during fit() ------------------------------------------------------

def memory_logger():
    """A Keras callback that records (seconds, RSS bytes) after every training step.

    Read ``callback.seconds`` and ``callback.rss`` after ``fit()``.
    """

    class MemoryLogger(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.t0, self.seconds, self.rss = time.perf_counter(), [0.0], [rss_bytes()]

        def on_train_batch_end(self, batch, logs=None):
            self.seconds.append(time.perf_counter() - self.t0)
            self.rss.append(rss_bytes())

    return MemoryLogger()


# ---- Pictures ---------------------------------------------------------------------------

def plot_rss_over_time(seconds, rss, ax=None, *, label: str = "streaming from TFRecord shards",
                       color_index: int = 1):
    """Resident memory over the seconds of a run (e.g. from :func:`memory_logger`).

    Args:
        seconds, rss: the run's times and resident bytes, of equal length.
        ax: the Axes to draw on (a new figure if None); returned.
        label: the legend's text for this run.
        color_index: the palette colour (as for epochs), to tell runs apart.
    """
    from datakit import plotting  # here: measuring memory loads no Matplotlib

    with plotting.style():
        ax = plotting.new_axes(ax)
        ax.plot(seconds, np.array(rss) * 1e-6, "-", color=plotting.epoch_color(color_index),
                label=label)
        ax.set(xlabel="training time (s)", ylabel="resident memory (MB)",
               title="Resident memory during fit()")
        ax.set_ylim(bottom=0)
        ax.legend(loc="lower right")
    return ax
