"""The starting point streaming replaces: every frame of every video in one NumPy array.

:func:`load_videos_in_memory` decodes every MP4 (see :mod:`datakit.readers.video.synthetic.mp4`)
into one array, measuring the resident memory (:mod:`datakit.perf.memory`) after
each video; :func:`plot_memory_vs_data` draws how memory grows with the data.

>>> data = InMemoryVideos(np.arange(10, dtype=np.uint8)[:, None, None, None],
...                       starts=np.array([0, 6]), lengths=np.array([6, 4]),
...                       labels=np.array([1, 3]))
>>> clips, labels = data.sample_clips(4, 3, rng=np.random.default_rng(0))
>>> clips.shape, [int(c[1, 0, 0, 0] - c[0, 0, 0, 0]) for c in clips]  # consecutive frames
((4, 3, 1, 1, 1), [1, 1, 1, 1])
>>> data.sample_clips(4, 5)
Traceback (most recent call last):
    ...
ValueError: clip_len=5: pass 1 <= clip_len <= 4 (the shortest video's frames).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from datakit import plotting
from datakit.perf.memory import rss_bytes
from datakit.readers.video.options.clip_sampling import random_starts
from datakit.readers.video.synthetic.mp4 import list_mp4, mp4_frame_count, read_mp4

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__: list[str] = []


@dataclass
class InMemoryVideos:
    """All frames of all videos in one array, with where each video starts.

    ``data_bytes[k]`` and ``rss[k]`` were measured after loading ``k + 1`` videos,
    ``rss_before`` before the first.
    """

    frames: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    labels: np.ndarray
    rss_before: int = 0
    data_bytes: list[int] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)

    def sample_clips(self, batch_size: int, clip_len: int, *, seed: int | None = None,
                     rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
        """A batch ``(clips, labels)`` of random clips from random videos.

        Pass ``rng`` to draw batch after batch from one generator, or ``seed``.
        """
        if not 1 <= clip_len <= self.lengths.min():
            raise ValueError(f"clip_len={clip_len}: pass 1 <= clip_len <= "
                             f"{self.lengths.min()} (the shortest video's frames).")
        rng = rng if rng is not None else np.random.default_rng(seed)
        idx = rng.integers(len(self.labels), size=batch_size)
        offs = random_starts(rng, self.lengths[idx], clip_len)
        starts = self.starts[idx] + offs
        clips = self.frames[starts[:, None] + np.arange(clip_len)]
        return clips, self.labels[idx]


def load_videos_in_memory(directory: str | Path) -> InMemoryVideos:
    """Decode every MP4 under ``directory`` into one ``(total_frames, H, W, 3)`` array."""
    paths, labels = list_mp4(directory)
    lengths = np.array([mp4_frame_count(p) for p in paths])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    first = read_mp4(paths[0], stop=1)
    frames = np.empty((int(lengths.sum()),) + first.shape[1:], np.uint8)  # pages not touched yet
    out = InMemoryVideos(frames, starts, lengths, np.array(labels), rss_bytes())
    for p, s, n in zip(paths, starts, lengths, strict=True):
        frames[s:s + n] = read_mp4(p)
        out.data_bytes.append(int((s + n) * frames[0].nbytes))
        out.rss.append(rss_bytes())
    return out


def plot_memory_vs_data(loaded: InMemoryVideos, total_memory: int,
                        ax: Axes | None = None) -> Axes:
    """Memory taken by loading (RSS growth) against frames loaded, extended to the machine's RAM.

    The red line is ``total_memory`` minus the RSS before loading: the most the
    frames could take even if nothing else ran (not the memory free right now).
    """
    mb = 1e-6
    x = np.array(loaded.data_bytes) * mb
    y = (np.array(loaded.rss) - loaded.rss_before) * mb
    free = (total_memory - loaded.rss_before) * mb  # the most the data could ever take
    slope = max(np.polyfit(x, y, 1)[0] if len(x) > 1 else 1.0, 1e-3)
    x_ext = np.geomspace(x[-1], free / slope, 50)
    with plotting.style():
        ax = plotting.new_axes(ax)
        ax.plot(x, np.maximum(y, x[0] / 10), "o", ms=3, color=plotting.PALETTE[0],
                label="measured while loading into one array")
        ax.plot(x_ext, slope * x_ext, "--", color=plotting.PALETTE[0],
                label=f"the same trend ({slope:.1f} MB per MB), extended")
        ax.axhline(free, color=plotting.PALETTE[3],
                   label="total RAM minus the process before loading")
        ax.set(xscale="log", yscale="log", xlabel="video frames loaded (MB)",
               ylabel="resident memory added (MB)",
               title="All frames in memory: memory grows with the data")
        ax.legend(loc="upper left")
    return ax
