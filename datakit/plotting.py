"""One plotting style for every datakit figure, and ``save_fig``.

Nothing here changes Matplotlib's global state on import. Plot helpers use
:func:`style` as a context manager, take ``ax=None`` and return the Axes:

>>> import matplotlib
>>> before = dict(matplotlib.rcParams)
>>> with style():
...     ax = new_axes()
>>> dict(matplotlib.rcParams) == before
True
>>> epoch_color(0) != epoch_color(1)
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType  # the rcParams names, for the type checker

__all__ = ["epoch_color", "style", "new_axes", "save_fig"]

#: rcParams applied inside :func:`style`.
STYLE: dict[RcKeyType, Any] = {
    "figure.dpi": 80,
    "savefig.dpi": 100,
    "figure.figsize": (8, 3),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "font.size": 9,
    "legend.frameon": False,
}

#: Qualitative colours, one per epoch / file / stage (tab10 without the grey).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#bcbd22", "#17becf"]

#: Colour of what was dropped or skipped.
MUTED = "#c7c7c7"


def epoch_color(i: int) -> str:
    """The colour of epoch (or file, or stage) number ``i``."""
    return PALETTE[i % len(PALETTE)]


@contextmanager
def style() -> Iterator[None]:
    """Draw with datakit's style, leaving global rcParams as they were."""
    with plt.rc_context(STYLE):
        yield


def new_axes(ax: Axes | None = None, figsize: tuple[float, float] | None = None) -> Axes:
    """Return ``ax``, or the Axes of a new figure when ``ax`` is None."""
    if ax is not None:
        return ax
    fig, ax = plt.subplots(figsize=figsize or STYLE["figure.figsize"])
    return ax


def stacked_bars(ax: Axes, counts: np.ndarray, label: str) -> Axes:
    """One bar per row of ``counts`` (``[bar, part]``), its parts stacked, ``f"{label} {part}"``.

    >>> with style():
    ...     ax = stacked_bars(new_axes(), np.array([[2, 1], [0, 3]]), "label")
    >>> [round(p.get_height()) for p in ax.patches], ax.get_legend_handles_labels()[1]
    ([2, 0, 1, 3], ['label 0', 'label 1'])
    """
    counts = np.asarray(counts)
    bottom = np.zeros(len(counts))
    for j in range(counts.shape[1]):
        ax.bar(np.arange(len(counts)), counts[:, j], bottom=bottom, width=1.0,
               color=epoch_color(j), ec="white", lw=.3, label=f"{label} {j}")
        bottom += counts[:, j]
    return ax


def save_fig(fig: Figure | Axes, path: str | Path, *, tight: bool = True) -> Path:
    """Save a figure (or the figure of an Axes) as PNG, creating its folder.

    Returns the path written.
    """
    # an Axes' figure may be a SubFigure, which cannot save: its .figure is the whole one
    figure = fig.figure.figure if isinstance(fig, Axes) else fig
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with style():
        figure.savefig(path, bbox_inches="tight" if tight else None)
    return path
