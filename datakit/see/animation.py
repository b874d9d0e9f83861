"""One step at a time: a shuffle pick drawn, and stored animations for readers without a kernel.

:func:`plot_pick` draws the shuffle buffer of a real run (a
:class:`datakit.see.shuffle.BufferTrace`) just before output step ``step``: the
slot picked, the elements that just came in, the output so far. The
shuffle stepper widget (:mod:`datakit.see.widgets`) shows it frame by frame
under your control; :func:`shuffle_animation` and
:func:`interleave_animation` turn the same frames into a Matplotlib
animation as self-contained JS-HTML, which GitHub, nbviewer and an HTML
export play without a kernel (keep them small: tens of frames, low dpi).

>>> import tensorflow as tf
>>> from datakit.see import shuffle
>>> t = shuffle.trace_buffer(tf.data.Dataset.range(6), buffer_size=3, seed=42)
>>> describe_pick(t, 0).startswith("step 0: picked slot")
True
>>> html = shuffle_animation(t)
>>> html.count("<script") >= 1 and len(html) < 300_000
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from datakit import plotting
from datakit.core.arguments import check_int

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from datakit.see.interleave import SourceTrace
    from datakit.see.shuffle import BufferTrace

__all__ = ["shuffle_animation", "interleave_animation"]


def _label(x: Any) -> str:
    x = x.item() if isinstance(x, np.generic) else x
    return x.decode() if isinstance(x, bytes) else str(x)


def _check_step(trace: BufferTrace, step: Any) -> int:
    """``step`` as an output step of ``trace`` (``TypeError`` / ``ValueError`` otherwise)."""
    step = check_int("step", step)
    if not 0 <= step < len(trace.slots):
        raise ValueError(f"step={step} is outside the run: pass 0 <= step < {len(trace.slots)}")
    return step


def describe_pick(trace: BufferTrace, step: int) -> str:
    """One line saying what happens at output step ``step`` of a buffer trace."""
    step = _check_step(trace, step)
    p = trace.picked[step]
    came = ", ".join(_label(trace.inputs[i]) for i in trace.entered[step]) or "nothing"
    return (f"step {step}: picked slot {trace.picked_slot[step]} (value "
            f"{_label(trace.inputs[p])}, input position {p}) of {trace.sizes[step]} held; "
            f"came in just before: {came}")


def plot_pick(trace: BufferTrace, step: int, ax: Axes | None = None, *,
              title: str | None = None) -> Axes:
    """The buffer before output ``step`` (top row) and the output so far (bottom row).

    Cells are coloured by epoch when the trace knows epochs. The picked slot
    has a thick frame, elements that just came in carry a red star; the
    bottom row ends with the element this step emits.
    """
    import matplotlib.patches as mpatches

    step = _check_step(trace, step)
    b, n = trace.buffer_size, len(trace.slots)

    def color(p: int) -> str:
        return plotting.epoch_color(trace.epochs[p] if trace.epochs else 0)

    with plotting.style():
        width = max(b, min(n, 30))
        ax = plotting.new_axes(ax, figsize=(0.42 * width + 1.6, 2.4))
        new = set(trace.entered[step])
        for s, p in enumerate(trace.slots[step]):
            if p is None:
                ax.add_patch(mpatches.Rectangle((s, 0), 0.94, 1, fc="white", ec="#dddddd"))
                continue
            ax.add_patch(mpatches.Rectangle((s, 0), 0.94, 1, fc=color(p), alpha=0.35,
                                            ec="#888888"))
            if s == trace.picked_slot[step]:
                ax.add_patch(mpatches.Rectangle((s + .05, .07), .84, .86, fill=False,
                                                ec="black", lw=2.4))
            ax.text(s + .47, .5, _label(trace.inputs[p]), ha="center", va="center")
            if p in new:
                ax.text(s + .88, .25, "*", ha="right", va="center", color="#b00000")
        first = max(0, step + 1 - width)
        for k, t in enumerate(range(first, step + 1)):
            p = trace.picked[t]
            ax.add_patch(mpatches.Rectangle((k, 1.6), 0.94, 1, fc=color(p),
                                            alpha=0.9 if t == step else 0.5, ec="black"
                                            if t == step else "white"))
            ax.text(k + .47, 2.1, _label(trace.inputs[p]), ha="center", va="center",
                    color="white", fontweight="bold")
        ax.set_xlim(-0.1, width + 0.1)
        ax.set_ylim(2.7, -0.1)
        ax.set_yticks([0.5, 2.1], ["buffer", "output"])
        ax.set_xticks([s + .47 for s in range(b)], [str(s) for s in range(b)])
        ax.set_xlabel("buffer slot (frame: picked, *: just came in); bottom: output so far")
        ax.tick_params(length=0)
        ax.spines[["left", "bottom"]].set_visible(False)
        ax.set_title(title or f"shuffle(buffer_size={b}): output step {step} of {n}",
                     loc="left")
    return ax


def _to_html(fig: Figure, draw: Callable[[int], None], frames: int, interval: int) -> str:
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    anim = FuncAnimation(fig, draw, frames=frames, interval=interval, repeat=False)
    try:
        return anim.to_jshtml(default_mode="once", embed_frames=True)
    finally:
        plt.close(fig)


def shuffle_animation(trace: BufferTrace, *, steps: int | None = None, interval: int = 700,
                      dpi: int = 55) -> str:
    """The buffer of a real shuffle run, one pick per frame, as self-contained JS-HTML."""
    import matplotlib.pyplot as plt

    frames = len(trace.slots) if steps is None else min(steps, len(trace.slots))
    with plotting.style():
        fig, ax = plt.subplots(figsize=(0.42 * max(trace.buffer_size, min(frames, 30)) + 1.6,
                                        2.4), dpi=dpi, layout="tight")

    def draw(t: int) -> None:
        ax.clear()
        plot_pick(trace, t, ax=ax)

    return _to_html(fig, draw, frames, interval)


def interleave_animation(trace: SourceTrace, *, interval: int = 500, dpi: int = 55) -> str:
    """A real interleave's output (a ``SourceTrace`` of ``datakit.see.interleave``), per frame."""
    import copy

    import matplotlib.pyplot as plt

    from datakit.see.interleave import plot_sources

    n = len(trace.file)
    lanes = trace.cycle_length if trace.slot is not None else 1
    with plotting.style():
        fig, ax = plt.subplots(figsize=(min(12, 2.5 + 0.35 * n), 1.2 + 0.45 * lanes), dpi=dpi)

    def draw(k: int) -> None:
        part = copy.copy(trace)
        part.file, part.line = trace.file[:k + 1], trace.line[:k + 1]
        part.slot = None if trace.slot is None else trace.slot[:k + 1]
        part.events = [e for e in trace.events if e.opened <= k + 1]
        ax.clear()
        plot_sources(part, ax=ax, title=f"interleave: cycle_length={trace.cycle_length}, "
                                        f"block_length={trace.block_length}: element {k}")
        ax.set_xlim(-0.3, n + 0.3)

    return _to_html(fig, draw, n, interval)
