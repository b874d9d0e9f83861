"""The interleave cycle, opened up: which input (file) and which line each element came from.

:func:`~datakit.glassbox.interleave_cycle.interleave_steps` is ``tf.data``'s interleave
algorithm in plain Python (import it from :mod:`datakit.glassbox.interleave_cycle`; the
glass box's ``Dataset.interleave`` calls it): ``cycle_length`` slots, ``block_length``
elements from one slot before moving to the next. Two files of three lines,
read two at a time, one line at a time, alternate:

>>> from datakit.glassbox.interleave_cycle import interleave_steps
>>> [(s.input, s.position) for s in interleave_steps(["a", "b"], lambda f: range(3),
...                                                  cycle_length=2)]
[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]

:func:`trace_sources` does the same bookkeeping for a *real* ``tf.data``
pipeline over text files (it tags every line with its file and line
number), and :func:`plot_sources` draws the result as a strip, one colour per
file, so you can see the cycle and the blocks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf
from matplotlib.patches import Patch

from datakit import plotting
from datakit.core.arguments import check_ordered, interleave_lengths
from datakit.glassbox.interleave_cycle import SlotEvent, cycle_steps
from datakit.readers.small_sources.text_lines import numbered_lines

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["trace_sources", "plot_sources"]


# -- a real tf.data pipeline ------------------------------------------------------


@dataclass
class SourceTrace:
    """For each element a real interleave emitted: the file (index into ``files``) and line."""

    files: list[str]
    file: np.ndarray
    line: np.ndarray
    cycle_length: int
    block_length: int
    #: The cycle slot of each element, and each file's stay in its slot (:class:`SlotEvent`),
    #: from the interleave algorithm, kept only when it gives the order observed (None if not).
    slot: np.ndarray | None = None
    events: list = field(default_factory=list)


def trace_sources(files: list[str], *, cycle_length: int | None = None, block_length: int = 1,
                  num_parallel_calls: int | None = None, deterministic: bool | None = None,
                  skip_header: bool = True, max_elements: int | None = None) -> SourceTrace:
    """Run ``from_tensor_slices(files).interleave(lines of each file)`` and record the sources.

    Args:
        files: text files, read in the order given (use
            ``tf.data.Dataset.list_files`` and a seed, or ``sorted``, to choose it).
        cycle_length, block_length, num_parallel_calls, deterministic: as in
            ``tf.data.Dataset.interleave`` (checked by
            :func:`datakit.core.arguments.interleave_lengths`).
        skip_header: drop each file's first line (lines are numbered from 1
            either way, so the first data line is line 2).
        max_elements: stop after that many elements.

    Raises:
        FileNotFoundError: a file does not exist.
        TypeError, ValueError: bad interleave arguments.
    """
    files = [str(f) for f in check_ordered("files", files, "paths")]
    for f in files:
        if not os.path.isfile(f):
            raise FileNotFoundError(f"{f}: no such file.")
    cycle, _, _ = interleave_lengths(cycle_length, block_length, num_parallel_calls)
    ds = tf.data.Dataset.from_tensor_slices(files).interleave(
        lambda f: numbered_lines(f, skip_header=skip_header), cycle_length=cycle,
        block_length=block_length,
        num_parallel_calls=num_parallel_calls, deterministic=deterministic)
    if max_elements is not None:
        ds = ds.take(max_elements)
    index = {f: i for i, f in enumerate(files)}
    file, line = [], []
    for _, number, path in ds.as_numpy_iterator():
        file.append(index[path.decode()])
        line.append(int(number))
    trace = SourceTrace(files, np.array(file, dtype=int), np.array(line, dtype=int),
                        cycle, block_length)
    _add_slots(trace, skip_header)
    return trace


def _add_slots(trace: SourceTrace, skip_header: bool) -> None:
    """Fill ``trace.slot``/``events`` from the algorithm if it reproduces the observed order."""
    lengths = []
    for f in trace.files:
        with open(f, "rb") as fh:
            lengths.append(max(sum(1 for _ in fh) - int(skip_header), 0))
    events: list[SlotEvent] = []
    steps = list(cycle_steps(lengths, range, trace.cycle_length, trace.block_length, events))
    steps = steps[:len(trace.file)]
    expected = [(s.input, s.position + 1 + int(skip_header)) for s in steps]
    if expected == list(zip(trace.file.tolist(), trace.line.tolist(), strict=True)):
        trace.slot = np.array([s.slot for s in steps], dtype=int)
        trace.events = [e for e in events if e.opened <= len(steps)]


def plot_sources(trace: SourceTrace, ax: Axes | None = None, *, labels: list[str] | None = None,
                 title: str | None = None) -> Axes:
    """Draw the output order: one lane per cycle slot, one cell per element, coloured by file.

    The number in each cell is the line number within its file. A file that
    gave nothing (empty) is drawn as a hatched mark where it took its slot.
    Without slot information (``deterministic=False``) all cells share one lane.
    """
    with plotting.style():
        n = len(trace.file)
        lanes = trace.cycle_length if trace.slot is not None else 1
        ax = plotting.new_axes(ax, figsize=(min(12, 2.5 + 0.35 * n), 1.2 + 0.45 * lanes))
        names = labels or [os.path.basename(f) for f in trace.files]
        slot = trace.slot if trace.slot is not None else np.zeros(n, dtype=int)
        for i, (f, ln, k) in enumerate(zip(trace.file, trace.line, slot, strict=True)):
            ax.add_patch(plotting.plt.Rectangle((i, k), 1, 0.9, facecolor=plotting.epoch_color(f),
                                                edgecolor="white", linewidth=1.5))
            if n <= 40:
                ax.text(i + 0.5, k + 0.45, str(ln), ha="center", va="center", color="white",
                        fontsize=8, fontweight="bold")
        empty = [e for e in trace.events if e.closed == e.opened] if trace.slot is not None else []
        for e in empty:
            ax.add_patch(plotting.plt.Rectangle((e.opened - 0.15, e.slot), 0.3, 0.9,
                                                facecolor="white", hatch="xxx",
                                                edgecolor=plotting.epoch_color(e.input)))
            ax.text(e.opened, e.slot - 0.05, f"{names[e.input]}: empty", ha="center",
                    va="bottom", fontsize=7, color=plotting.epoch_color(e.input))
        ax.set_xlim(-0.3, max(n, 1) + 0.3)
        ax.set_ylim(lanes + 0.1, -0.45)
        if trace.slot is not None:
            ax.set_yticks([k + 0.45 for k in range(lanes)], [f"slot {k}" for k in range(lanes)])
            ax.tick_params(axis="y", length=0)
        else:
            ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("output position (number in a cell: line number in its file)")
        ax.set_title(title or f"interleave: cycle_length={trace.cycle_length}, "
                              f"block_length={trace.block_length}")
        used = sorted(set(trace.file.tolist()) | {e.input for e in empty})
        ax.legend(handles=[Patch(color=plotting.epoch_color(i), label=names[i]) for i in used],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return ax
