"""How much memory a process holds: RSS now, its peak, sampled in the background, during fit().

The resident set size (RSS) is the memory the operating system counts against the
machine. :class:`RssSampler` tracks its peak while something runs (``bench`` uses
it); :func:`memory_logger` records the RSS after every step of ``fit()`` and
:func:`plot_rss_over_time` draws it; :func:`compare_rss_growth` sets a stream's RSS
growth beside that of data held in memory, per MB of data handed over. The all-in-memory
video baseline that streaming replaces is :mod:`datakit.readers.video.reading.in_memory`.

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import psutil

from datakit.core.arguments import check_count, check_number, check_ordered, check_seconds

if TYPE_CHECKING:
    import keras
    from matplotlib.axes import Axes

__all__ = ["rss_bytes", "memory_logger", "compare_rss_growth"]


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

    def __init__(self, every: float) -> None:
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

def memory_logger() -> keras.callbacks.Callback:
    """A Keras callback that records (seconds, RSS bytes) after every training step.

    Read ``callback.seconds`` and ``callback.rss`` after ``fit()``. Keras is imported here,
    not with the module: the memory report and the benchmark read RSS in processes that
    run pipelines only (a lean TensorFlow import, without Keras' optimizers and JAX).
    """
    import keras

    class MemoryLogger(keras.callbacks.Callback):
        def on_train_begin(self, logs: dict | None = None) -> None:
            self.t0, self.seconds, self.rss = time.perf_counter(), [0.0], [rss_bytes()]

        def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
            self.seconds.append(time.perf_counter() - self.t0)
            self.rss.append(rss_bytes())

    return MemoryLogger()


# ---- Pictures ---------------------------------------------------------------------------

def plot_rss_over_time(seconds: Sequence[float], rss: Sequence[float], ax: Axes | None = None,
                       *, label: str = "streaming from TFRecord shards",
                       color_index: int = 1) -> Axes:
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


@dataclass(frozen=True)
class RssGrowth:
    """What :func:`compare_rss_growth` measured; its ``str`` is the verdict in one line."""

    in_memory_slope: float  # MB of RSS per MB of data loaded into memory
    streamed_slope: float   # the stream's, fitted to the second half of its steps
    first_epoch_mb: float   # the stream's RSS growth in its first epoch
    later_mb: float         # its growth in the epochs after
    later_epochs: int
    frames_ratio: float     # MB handed over by the stream / MB held in memory
    floor_mb_per_epoch: float = 0.0  # the slope of each epoch's lowest RSS, last third

    def verdict(self, leak_bytes_per_epoch: float) -> str:
        """``"grows"`` if the stream's floor (each epoch's lowest RSS, fitted over the last
        third of the epochs, after the start-up costs) rose by ``leak_bytes_per_epoch`` or
        more per epoch, else ``"flat"``: a smaller leak passes as flat.

        >>> g = RssGrowth(1.0, 0.01, 5.0, 0.5, 10, 4.0, floor_mb_per_epoch=0.1)
        >>> g.verdict(0.3e6), g.verdict(0.1e6)
        ('flat', 'grows')
        """
        limit = check_number("leak_bytes_per_epoch", leak_bytes_per_epoch, positive=True)
        return "grows" if self.floor_mb_per_epoch * 1e6 >= limit else "flat"

    def __str__(self) -> str:
        return (f"stream: +{self.first_epoch_mb:.0f} MB in the first epoch, "
                f"+{self.later_mb:.0f} MB in the {self.later_epochs} after; second half: "
                f"{self.streamed_slope:.3f} MB per MB of frames; last third: floor "
                f"{self.floor_mb_per_epoch:+.2f} MB per epoch; "
                f"in memory: {self.in_memory_slope:.2f} MB per MB")


def compare_rss_growth(loaded_bytes: Sequence[float], loaded_rss: Sequence[float],
                       rss_before: int, streamed_rss: Sequence[float], *,
                       batch_bytes: int, steps_per_epoch: int,
                       predicted_bytes: float | None = None, plot: bool = True) -> RssGrowth:
    """RSS growth per MB handed over: data loaded into memory against a stream during ``fit()``.

    Args:
        loaded_bytes, loaded_rss: after each item loaded into memory, the bytes held so far
            and the RSS; ``rss_before``: the RSS before the first.
        streamed_rss: the RSS before the first step of ``fit()``, then after each step
            (``memory_logger().rss``); each step hands over ``batch_bytes`` of data.
        steps_per_epoch: the stream's steps in one epoch.
        predicted_bytes: what the stream is predicted to hold, drawn as a line (optional).
        plot: draw the two pictures: both growths on one pair of axes, and the stream
            after its first epoch, zoomed, with the line fitted to its second half.

    Both slopes are least-squares lines: over every item loaded, and over the second half
    of the stream's steps (after its start-up costs). The stream's floor per epoch (its
    lowest RSS in each epoch, fitted over the last third of the epochs) is what
    :meth:`RssGrowth.verdict` compares with a leak's size.
    """
    steps_per_epoch = check_count("steps_per_epoch", steps_per_epoch,
                                  fix="pass the stream's steps in one epoch (1 or more)")
    batch_bytes = check_count("batch_bytes", batch_bytes,
                              fix="pass the bytes of data one step hands over (1 or more)")
    before = check_number("rss_before", rss_before)
    loaded_bytes, loaded_rss = (check_ordered(name, value, "numbers") for name, value in
                                (("loaded_bytes", loaded_bytes), ("loaded_rss", loaded_rss)))
    streamed_rss = check_ordered("streamed_rss", streamed_rss, "numbers")
    if len(loaded_bytes) != len(loaded_rss):
        raise ValueError(f"loaded_bytes holds {len(loaded_bytes)} values, loaded_rss "
                         f"{len(loaded_rss)}: pass one of each per item loaded (append both "
                         "after each item).")
    if len(loaded_bytes) < 2 or len(streamed_rss) < 2 * steps_per_epoch:
        raise ValueError(f"{len(loaded_bytes)} items loaded, {max(len(streamed_rss) - 1, 0)} steps "
                         "streamed: pass two items or more, and two epochs of steps or more")
    loaded_mb = np.asarray(loaded_bytes, float) / 1e6
    loaded_growth = (np.asarray(loaded_rss, float) - before) / 1e6
    streamed_mb = batch_bytes / 1e6 * np.arange(len(streamed_rss))
    streamed_growth = (np.asarray(streamed_rss, float) - streamed_rss[0]) / 1e6
    half = len(streamed_mb) // 2
    in_memory_slope = float(np.polyfit(loaded_mb, loaded_growth, 1)[0])
    slope, intercept = np.polyfit(streamed_mb[half:], streamed_growth[half:], 1)
    first = streamed_growth[steps_per_epoch]
    epochs = (len(streamed_growth) - 1) // steps_per_epoch
    floors = streamed_growth[1:1 + epochs * steps_per_epoch].reshape(epochs, -1).min(axis=1)
    last = max(2, epochs // 3)  # a leak raises the floor; start-up costs are over by then
    floor_slope = float(np.polyfit(np.arange(last), floors[-last:], 1)[0])
    growth = RssGrowth(in_memory_slope, float(slope), float(first),
                       float(streamed_growth[-1] - first),
                       (len(streamed_mb) - 1) // steps_per_epoch - 1,
                       float(streamed_mb[-1] / loaded_mb[-1]), floor_slope)
    if plot:
        _plot_growths(loaded_mb, loaded_growth, streamed_mb, streamed_growth, steps_per_epoch,
                      (float(slope), float(intercept)), predicted_bytes)
    return growth


def _plot_growths(loaded_mb: np.ndarray, loaded_growth: np.ndarray, streamed_mb: np.ndarray,
                  streamed_growth: np.ndarray, steps_per_epoch: int,
                  line: tuple[float, float], predicted_bytes: float | None) -> None:
    import matplotlib.pyplot as plt

    from datakit import plotting  # here: measuring memory loads no Matplotlib

    slope, intercept = line
    half = len(streamed_mb) // 2
    with plotting.style():
        _, (both, alone) = plt.subplots(1, 2, figsize=(11, 4))
        both.plot(loaded_mb, loaded_growth, "o", ms=3, color=plotting.PALETTE[3],
                  label="every frame decoded into memory")
        both.plot(streamed_mb, streamed_growth, "-", color=plotting.PALETTE[0],
                  label="streamed into fit()")
        if predicted_bytes is not None:
            both.axhline(predicted_bytes / 1e6, ls=":", color="gray",
                         label="predicted: what the stream holds")
        both.set(xlabel="video frames handed over (MB)", ylabel="RSS growth (MB)",
                 title="In memory vs streamed")
        both.legend(loc="center right")
        later = slice(steps_per_epoch, None)
        alone.plot(streamed_mb[later], streamed_growth[later], "-", color=plotting.PALETTE[0],
                   label="streamed into fit(), after its first epoch")
        alone.plot(streamed_mb[half:], intercept + slope * streamed_mb[half:], "--",
                   color="black", label=f"second half: {slope:+.3f} MB per MB")
        alone.set(xlabel="video frames handed over (MB)", ylabel="RSS growth (MB)",
                  title="The stream after its first epoch (zoomed)")
        alone.legend(loc="lower right")
        plt.show()
