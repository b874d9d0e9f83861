"""One video clip in a notebook: its frames as a grid, or a small animation that needs no kernel.

A clip is what the video readers yield: ``(frames, height, width, channels)``,
``uint8`` or ``float32`` values 0-255, RGB or grayscale (a NumPy array or a
tensor). :func:`plot_clip` draws the frames in rows into one Axes and returns
it (it never calls ``plt.show()``); :func:`plot_fit_choices` shows one frame fitted to
a model's size three ways (squashed, cropped, padded); :func:`clip_animation` returns the clip as
self-contained JS-HTML (``IPython.display.HTML(...)`` shows it; GitHub and an
HTML export play it too):

>>> import numpy as np
>>> clip = np.zeros((6, 8, 8, 3), np.uint8)
>>> clip[:, :, :4] = 255
>>> ax = plot_clip(clip, columns=3)
>>> ax.get_images()[0].get_array().shape  # 2 rows of 3 frames, 1-pixel gaps
(17, 26, 3)
>>> html = clip_animation(clip)
>>> html.count("<script") >= 1 and len(html) < 300_000
True
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from datakit import plotting
from datakit.core.arguments import check_count

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_clip", "clip_animation", "plot_fit_choices"]


def _frames(clip: npt.ArrayLike) -> np.ndarray:
    """The clip as ``(frames, height, width, 3)`` uint8 (grayscale repeated, floats rounded)."""
    frames = np.asarray(clip)
    if frames.ndim == 5 and frames.shape[0] == 1:
        frames = frames[0]  # a batch of one clip
    if frames.ndim != 4 or frames.shape[-1] not in (1, 3):
        raise ValueError(f"clip of shape {frames.shape}: pass one clip, (frames, height, width, "
                         "channels) with 1 or 3 channels (e.g. clips[0] of a batch)")
    if frames.dtype != np.uint8:
        frames = np.clip(np.round(frames.astype(np.float32)), 0, 255).astype(np.uint8)
    return np.repeat(frames, 3, axis=-1) if frames.shape[-1] == 1 else frames


def clip_grid(clip: npt.ArrayLike, columns: int | None = None, gap: int = 1) -> np.ndarray:
    """The clip's frames tiled in rows of ``columns`` (default: up to 8), ``gap`` white pixels
    between them, as one ``uint8`` image."""
    frames = _frames(clip)
    n, h, w, _ = frames.shape
    columns = min(n, 8) if columns is None else check_count("columns", columns)
    rows = math.ceil(n / columns)
    grid = np.full((rows * (h + gap) - gap, columns * (w + gap) - gap, 3), 255, np.uint8)
    for k, frame in enumerate(frames):
        r, c = divmod(k, columns)
        grid[r * (h + gap):r * (h + gap) + h, c * (w + gap):c * (w + gap) + w] = frame
    return grid


def plot_clip(clip: npt.ArrayLike, ax: Axes | None = None, *, columns: int | None = None,
              title: str | None = None) -> Axes:
    """The clip's frames in reading order, left to right and down; returns the Axes."""
    grid = clip_grid(clip, columns)
    n = len(_frames(clip))
    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(min(12, 1 + grid.shape[1] / 40),
                                            min(8, 0.6 + grid.shape[0] / 40)))
        ax.imshow(grid, interpolation="nearest")
        ax.set_axis_off()
        ax.set_title(title or f"{n} frames, left to right", loc="left")
    return ax


def clip_animation(clip: npt.ArrayLike, *, interval: int = 120, dpi: int = 60,
                   title: str | None = None) -> str:
    """The clip, one frame per step, as self-contained JS-HTML (keep clips short and small)."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    frames = _frames(clip)
    h, w = frames.shape[1:3]
    with plotting.style():
        fig, ax = plt.subplots(figsize=(2.4 * w / max(h, w) + 0.2, 2.4 * h / max(h, w) + 0.4),
                               dpi=dpi)
        shown = ax.imshow(frames[0], interpolation="nearest")
        ax.set_axis_off()

    def draw(t: int) -> None:
        shown.set_data(frames[t])
        ax.set_title(f"{title + ': ' if title else ''}frame {t}", loc="left")

    anim = FuncAnimation(fig, draw, frames=len(frames), interval=interval)
    try:  # as datakit.see.animation stores its animations: embedded, played by JS
        return anim.to_jshtml(default_mode="loop", embed_frames=True)
    finally:
        plt.close(fig)


def plot_fit_choices(stored: np.ndarray, upright: np.ndarray, size: int) -> np.ndarray:
    """One frame as stored, turned upright, then fitted to ``size x size`` three ways.

    Squashed (each side scaled on its own), cropped (the short side fits, the centre is
    cut) and padded (the long side fits, black bars around), side by side, each titled
    with its size, width first as video tools print it. Returns the figure's Axes (it
    never calls ``plt.show()``).
    """
    import matplotlib.pyplot as plt

    from datakit.readers.video.decoding.decoding import fit_frame

    shown = {"as stored": stored, "turned": upright,
             "squashed": fit_frame(upright, (size, size)),
             "cropped": fit_frame(upright, (size, size), crop_to_aspect_ratio=True),
             "padded": fit_frame(upright, (size, size), pad_to_aspect_ratio=True)}
    with plotting.style():
        _, axes = plt.subplots(1, len(shown), figsize=(9, 2.4))
        for ax, (title, rgb) in zip(axes, shown.items(), strict=True):
            ax.imshow(rgb)
            ax.set(title=f"{title}\n{rgb.shape[1]} wide, {rgb.shape[0]} tall", xticks=[],
                   yticks=[])
    return axes
