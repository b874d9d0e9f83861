"""Pictures of the first ops: where ``batch`` cuts a repeated stream, what
``filter`` keeps and ``map`` changes.

Measuring and drawing are separate. ``trace_batches`` and ``trace_lineage``
run a :class:`datakit.glassbox.Dataset` once and return plain data;
``plot_batches`` and ``plot_lineage`` draw it.

>>> from datakit.glassbox.dataset import Dataset
>>> bt = trace_batches(Dataset.range(4).repeat(2).batch(3, drop_remainder=True))
>>> [int(v) for v in bt.values], bt.epochs
([0, 1, 2, 3, 0, 1, 2, 3], [0, 0, 0, 0, 1, 1, 1, 1])
>>> bt.batch_of
[0, 0, 0, 1, 1, 1, None, None]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle

from datakit import plotting
from datakit.glassbox.dataset import Dataset
from datakit.glassbox.recording import OpTrace

__all__ = ["trace_batches", "plot_batches", "trace_lineage", "plot_lineage"]


@dataclass
class BatchTrace:
    """The stream that goes into ``batch``, and what became of each element."""

    pipeline: str
    #: Values entering batch, in order.
    values: list[Any]
    #: For each of them, the pass of ``repeat`` it belongs to (0 without repeat).
    epochs: list[int]
    #: For each of them, the batch it went into, or None if drop_remainder dropped it.
    batch_of: list[int | None]
    batch_size: int


def _owner_maps(ops: list[OpTrace], k: int, r: int) -> list[int]:
    """For each step of op k (k < r), the index of the step of op r it flows into."""
    owner = list(range(len(ops[k].steps)))
    for m in range(k + 1, r + 1):
        into = {}
        for j, s in enumerate(ops[m].steps):
            for src in s.sources:
                into[src] = j
        owner = [into.get(o, -1) if o >= 0 else -1 for o in owner]
    return owner


def _epochs(ops: list[OpTrace], k: int) -> list[int]:
    """The repeat epoch of every step of op k (0 when there is no repeat)."""
    reps = [i for i, op in enumerate(ops) if op.kind == "repeat"]
    n = len(ops[k].steps)
    if not reps:
        return [0] * n
    r = reps[-1]
    # every step of a repeat op records its epoch (Step.epoch is None for other ops only)
    epochs = [s.epoch or 0 for s in ops[r].steps]
    if r <= k:  # walk back from k to the repeat op
        out = []
        for j in range(n):
            m, pos = k, j
            while m > r:
                pos = ops[m].steps[pos].sources[0]
                m -= 1
            out.append(epochs[pos])
        return out
    owner = _owner_maps(ops, k, r)
    return [epochs[o] if o >= 0 else 0 for o in owner]


def trace_batches(dataset: Dataset) -> BatchTrace:
    """Run a glass-box pipeline that ends in ``batch`` and say where each element went."""
    ops = dataset.trace()
    b = max((i for i, op in enumerate(ops) if op.kind == "batch"), default=None)
    if b is None or b == 0:
        raise ValueError(f"{dataset!r} has no batch() op: add one, e.g. .batch(4).")
    inputs = ops[b - 1]
    batch_of: list[int | None] = [None] * len(inputs.steps)
    for j, s in enumerate(ops[b].steps):
        for src in s.sources:
            batch_of[src] = j
    size = ops[b].args["batch_size"]
    return BatchTrace(repr(dataset), inputs.values, _epochs(ops, b - 1), batch_of, size)


def _label(v: Any) -> str:
    v = np.asarray(v)
    if v.ndim == 0:
        return str(v.item() if not isinstance(v.item(), float) else round(v.item(), 2))
    return "[" + " ".join(_label(x) for x in v) + "]"


def plot_batches(bt: BatchTrace, ax: Axes | None = None, title: str | None = None) -> Axes:
    """One cell per element, coloured by epoch, with the batches drawn around them.

    Elements that ``drop_remainder`` dropped are grey and hatched.
    """
    with plotting.style():
        n = len(bt.values)
        ax = plotting.new_axes(ax, figsize=(max(6, 0.32 * n + 1), 1.9))
        for i, (v, e, b) in enumerate(zip(bt.values, bt.epochs, bt.batch_of, strict=True)):
            dropped = b is None
            ax.add_patch(Rectangle((i, 0), 0.94, 1, facecolor=plotting.MUTED if dropped
                                   else plotting.epoch_color(e), hatch="//" if dropped else None,
                                   edgecolor="white"))
            ax.text(i + 0.47, 0.5, _label(v), ha="center", va="center", fontsize=8,
                    color="black" if dropped else "white", fontweight="bold")
        batches = sorted({b for b in bt.batch_of if b is not None})
        for b in batches:
            members = [i for i, x in enumerate(bt.batch_of) if x == b]
            lo, hi = members[0], members[-1] + 0.94
            short = len(members) < bt.batch_size
            ax.plot([lo, lo, hi, hi], [-0.12, -0.3, -0.3, -0.12], color="black", lw=1.2)
            ax.text((lo + hi) / 2, -0.55, f"batch {b}" + (" (short)" if short else ""),
                    ha="center", va="top", fontsize=8)
        if None in bt.batch_of:
            first = bt.batch_of.index(None)
            ax.text((first + n) / 2, -0.55, "dropped", ha="center", va="top", fontsize=8,
                    color="grey")
        epochs = sorted(set(bt.epochs))
        handles = [Patch(color=plotting.epoch_color(e), label=f"epoch {e}") for e in epochs]
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0),
                  ncol=len(handles) + 1, fontsize=8)
        ax.set_xlim(-0.2, n + 0.2)
        ax.set_ylim(-1.1, 1.1)
        ax.axis("off")
        ax.set_title(title or bt.pipeline, loc="right", fontsize=9)
    return ax


@dataclass
class LineageTrace:
    """For a chain of one-to-one ops (map, filter, take, skip), each op's output
    placed under the source element it came from."""

    ops: list[str]
    #: rows[k][i]: the value op k made from source element i, or None if it was dropped.
    rows: list[list[Any]]


def trace_lineage(dataset: Dataset) -> LineageTrace:
    """Run a chain of one-to-one ops and line each output up under its source.

    >>> lt = trace_lineage(Dataset.range(5).filter(lambda x: x % 2 == 0).map(lambda x: x * 10))
    >>> [[None if v is None else int(v) for v in row] for row in lt.rows]
    [[0, 1, 2, 3, 4], [0, None, 2, None, 4], [0, None, 20, None, 40]]
    """
    ops = dataset.trace()
    for op in ops[1:]:
        if any(len(s.sources) != 1 for s in op.steps):
            raise ValueError(f"trace_lineage() draws one-to-one ops only; {op.name} is not. "
                             "Use trace_batches() for batch.")
    n = len(ops[0].steps)
    rows, root = [ops[0].values], list(range(n))
    for op in ops[1:]:
        root = [root[s.sources[0]] for s in op.steps]
        row: list[Any] = [None] * n
        for r, s in zip(root, op.steps, strict=True):
            row[r] = s.value
        rows.append(row)
    return LineageTrace([op.name for op in ops], rows)


def plot_lineage(lt: LineageTrace, ax: Axes | None = None, title: str | None = None) -> Axes:
    """One row per op; an element that an op dropped leaves a grey gap below it."""
    with plotting.style():
        n, k = len(lt.rows[0]), len(lt.rows)
        ax = plotting.new_axes(ax, figsize=(max(6, 0.45 * n + 2.5), 0.55 * k + 0.6))
        for r, row in enumerate(lt.rows):
            y = k - 1 - r
            for i, v in enumerate(row):
                gone = v is None
                ax.add_patch(Rectangle((i, y), 0.92, 0.8, edgecolor="white",
                                       facecolor=(plotting.MUTED if gone
                                                  else plotting.epoch_color(r))))
                ax.text(i + 0.46, y + 0.4, "" if gone else _label(v), ha="center",
                        va="center", fontsize=8, color="white", fontweight="bold")
            ax.text(-0.3, y + 0.4, lt.ops[r], ha="right", va="center", fontsize=9)
        ax.set_xlim(-0.2, n)
        ax.set_ylim(-0.1, k)
        ax.axis("off")
        ax.set_title(title or "Each op's output under the element it came from (grey: gone)",
                     loc="left", fontsize=10)
    return ax
