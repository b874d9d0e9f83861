"""The interleave cycle, opened up: which input (file) and which line each element came from.

:func:`interleave_steps` is ``tf.data``'s interleave algorithm in plain Python
(it lives in :mod:`datakit.interleave_cycle`, re-exported here; the glass
box's ``Dataset.interleave`` calls it): ``cycle_length`` slots, ``block_length``
elements from one slot before moving to the next. Two files of three lines,
read two at a time, one line at a time, alternate:

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
from dataclasses import dataclass

import numpy as np
import tensorflow as tf
from matplotlib.patches import Patch

from datakit import plotting
from datakit.checks import cpu_cores, default_cycle_length, interleave_lengths
from datakit.interleave_cycle import InterleaveStep, interleave_steps
from datakit.lines import numbered_lines

__all__ = ["SourceTrace", "trace_sources", "plot_sources",
           # re-exported: the cycle and its rule, for the lesson
           "InterleaveStep", "interleave_steps", "cpu_cores", "default_cycle_length"]


# -- a real tf.data pipeline ------------------------------------------------------


@dataclass
class SourceTrace:
    """For each element a real interleave emitted: the file (index into ``files``) and line."""

    files: list[str]
    file: np.ndarray
    line: np.ndarray
    cycle_length: int
    block_length: int


def trace_sources(files, *, cycle_length: int | None = None, block_length: int = 1,
                  num_parallel_calls: int | None = None, deterministic: bool | None = None,
                  skip_header: bool = True, max_elements: int | None = None) -> SourceTrace:
    """Run ``from_tensor_slices(files).interleave(lines of each file)`` and record the sources.

    Args:
        files: text files, read in the order given (use
            ``tf.data.Dataset.list_files`` and a seed, or ``sorted``, to choose it).
        cycle_length, block_length, num_parallel_calls, deterministic: as in
            ``tf.data.Dataset.interleave`` (checked by
            :func:`datakit.checks.interleave_lengths`).
        skip_header: drop each file's first line (lines are numbered from 1
            either way, so the first data line is line 2).
        max_elements: stop after that many elements.

    Raises:
        FileNotFoundError: a file does not exist.
        TypeError, ValueError: bad interleave arguments.
    """
    files = [str(f) for f in files]
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
    return SourceTrace(files, np.array(file, dtype=int), np.array(line, dtype=int),
                       cycle, block_length)


def plot_sources(trace: SourceTrace, ax=None, *, labels: list[str] | None = None,
                 title: str | None = None):
    """Draw the output order as a strip: one cell per element, coloured by its file.

    The number in each cell is the line number within its file.
    """
    with plotting.style():
        n = len(trace.file)
        ax = plotting.new_axes(ax, figsize=(min(12, 1.5 + 0.35 * n), 1.9))
        names = labels or [os.path.basename(f) for f in trace.files]
        for i, (f, ln) in enumerate(zip(trace.file, trace.line)):
            ax.add_patch(plotting.plt.Rectangle((i, 0), 1, 1, facecolor=plotting.epoch_color(f),
                                                edgecolor="white", linewidth=1.5))
            if n <= 40:
                ax.text(i + 0.5, 0.5, str(ln), ha="center", va="center", color="white",
                        fontsize=8, fontweight="bold")
        ax.set_xlim(0, max(n, 1))
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("output position (number in a cell: line number in its file)")
        ax.set_title(title or f"interleave: cycle_length={trace.cycle_length}, "
                              f"block_length={trace.block_length}")
        used = sorted(set(trace.file.tolist()))
        ax.legend(handles=[Patch(color=plotting.epoch_color(i), label=names[i]) for i in used],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return ax
