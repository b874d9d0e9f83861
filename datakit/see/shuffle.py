"""The shuffle buffer opened up: TensorFlow's algorithm, the glass box, traces of real runs.

``Dataset.shuffle(buffer_size)`` keeps a buffer of ``buffer_size`` slots. It
fills the buffer with the first elements, then, for every output, picks a
random slot, emits its element and lets the next input element in; at the
end of the input it drains what is left. :func:`trace_buffer` runs the real
``tf.data`` shuffle and shows, for every output step, what the buffer held:

>>> import tensorflow as tf
>>> t = trace_buffer(tf.data.Dataset.range(6), buffer_size=3, seed=42)
>>> [int(x) for x in t.outputs] == [int(x) for x in tf.data.Dataset.range(6).shuffle(3, seed=42)]
True
>>> t.sizes                      # fill (3), steady state (3), drain (3, 2, 1)
[3, 3, 3, 3, 2, 1]
>>> all(p in b for p, b in zip(t.picked, t.buffer_positions))
True

Slot placement follows TensorFlow's kernel (``ShuffleDatasetOpBase::Iterator``
in ``tensorflow/core/kernels/data/shuffle_dataset_op.cc``, the source of the
TF 2.13-2.15 era with ``FillBuffer``/``ClearEmptySlices``; checked against
TF 2.21 by the tests, which recompute TF's Philox random stream). The buffer is
a ring: the head is the oldest element, a new element always goes in at the
tail, ``slot = count % buffer_size``. A pick takes slot ``(head + r) %
buffer_size`` with ``r = Random() % n`` (``n`` = elements held); the head's
element moves into the picked slot and the head slot is freed, so in a full
buffer the newcomer lands in the old head slot, not in the picked one.
Before every pick the buffer is topped up. ``shuffle().repeat()`` is fused
by TensorFlow into one op that already loads the next epoch during the drain
but never picks from it before the current epoch is empty (at most 3 epochs
are held); each epoch draws fresh seeds when ``reshuffle_each_iteration`` is
true, the same seeds otherwise, so the order equals that of the unfused chain.

The algorithm itself (:func:`buffer_steps`, :func:`replay_picks`) lives in
:mod:`datakit.glassbox.shuffle_buffer` and the glass-box op
(:func:`~datakit.glassbox.dataset.glassbox_shuffle`, which replays a trace's picks) in
:mod:`datakit.glassbox.dataset`. How far a shuffle of a given buffer
size mixes the data is measured and drawn in :mod:`datakit.see.mixing`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import matplotlib.patches as mpatches
import numpy as np
import tensorflow as tf
from matplotlib.axes import Axes

from datakit import plotting
from datakit.core.arguments import check_count, check_int, check_seed
from datakit.glassbox.shuffle_buffer import buffer_steps, check_buffer_size

__all__ = ["trace_buffer", "plot_buffer"]


# ---------------------------------------------------------------- buffers of a real tf.data run


@dataclass
class BufferTrace:
    """What a real ``tf.data`` shuffle held at every output step."""

    buffer_size: int
    inputs: list            # values in input order
    outputs: list           # values in TensorFlow's output order
    picked: list[int]       # input position of each output
    slots: list[tuple]      # per step: input position in each slot (None: empty)
    picked_slot: list[int]
    entered: list[tuple]    # per step: input positions that came in before the pick
    offsets: list[int]      # TensorFlow's draws, Random() % size: replay these
    epochs: list[int] | None = None  # epoch of each input position, if known

    @property
    def buffer_positions(self) -> list[list[int]]:
        """Per step: input positions in the buffer, in slot order."""
        return [[p for p in s if p is not None] for s in self.slots]

    @property
    def buffers(self) -> list[list]:
        """Per step: the values in the buffer, in slot order."""
        return [[self.inputs[p] for p in b] for b in self.buffer_positions]

    @property
    def sizes(self) -> list[int]:
        return [len(b) for b in self.buffer_positions]


def trace_buffer(dataset: tf.data.Dataset, buffer_size: int, seed: int | None = None,
                 reshuffle_each_iteration: bool = True, *,
                 epoch_size: int | None = None, iteration: int = 0) -> BufferTrace:
    """Run TensorFlow's ``dataset.shuffle(...)`` on a tagged copy and rebuild its buffer.

    The input is tagged with ``enumerate()`` (so equal values are told apart;
    tagging does not change the order for a given seed), TensorFlow shuffles
    it, and the buffer at each step follows from input and output order; slots
    come from replaying TensorFlow's algorithm with its observed picks.

    Args:
        dataset: a finite ``tf.data.Dataset``.
        buffer_size, seed, reshuffle_each_iteration: as in ``Dataset.shuffle``;
            pass a ``seed`` to compare with an untagged run.
        epoch_size: elements per epoch (e.g. 10 for ``range(10).repeat(3)``),
            to record each input's epoch for colouring.
        iteration: trace the (k+1)-th pass over the shuffled dataset (what
            ``shuffle(...).repeat()`` gives as epoch k).

    Raises:
        TypeError: ``dataset`` is not a ``tf.data.Dataset`` (or a count not an int).
        ValueError: ``buffer_size < 1``, ``epoch_size < 1``, or an endless dataset.

    >>> import tensorflow as tf
    >>> t = trace_buffer(tf.data.Dataset.range(3).repeat(2), 2, seed=7, epoch_size=3)
    >>> t.epochs, sorted(t.picked)
    ([0, 0, 0, 1, 1, 1], [0, 1, 2, 3, 4, 5])
    """
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError("trace_buffer() needs a tf.data.Dataset; for the glass box call "
                        "glassbox.Dataset(...).shuffle(...).trace() instead.")
    size, seed = check_buffer_size(buffer_size), check_seed(seed)
    check_count("epoch_size", epoch_size, none=True,
                fix="epoch_size must be >= 1: the number of elements in one epoch")
    if int(dataset.cardinality()) == int(tf.data.INFINITE_CARDINALITY):
        raise ValueError("trace_buffer() needs a finite dataset: take(n) a part of it first.")
    tagged = dataset.enumerate().shuffle(size, seed=seed,
                                         reshuffle_each_iteration=reshuffle_each_iteration)
    for _ in range(check_int("iteration", iteration)):
        for _ in tagged:
            pass
    picked, outputs = [], []
    for i, x in tagged.as_numpy_iterator():
        picked.append(int(i))
        outputs.append(x)
    inputs = [outputs[i] for i in np.argsort(picked)]
    order = iter(picked)

    def observed(_n: int, slots: tuple, head: int) -> int:
        return (slots.index(next(order)) - head) % size

    steps = list(buffer_steps(inputs, size, observed))
    epochs = None if epoch_size is None else [i // epoch_size for i in range(len(inputs))]
    return BufferTrace(size, inputs, outputs, picked, [p.slots for p in steps],
                       [p.slot for p in steps], [p.entered for p in steps],
                       [p.offset for p in steps], epochs)


# ---------------------------------------------------------------- pictures


def plot_buffer(trace: BufferTrace, ax: Axes | None = None, steps: int | None = None,
                title: str | None = None) -> Axes:
    """The buffer step by step: one row per output, one cell per slot.

    Cells show the values held before the pick (colour: epoch); the picked
    cell has a thick black frame, its value also appears in the output column;
    cells whose element just came in are marked with a star.
    """
    n = len(trace.slots) if steps is None else min(steps, len(trace.slots))
    b = trace.buffer_size

    def color(p: int) -> str:  # colour of input position p: its epoch
        return plotting.epoch_color(trace.epochs[p] if trace.epochs else 0)

    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(0.5 * (b + 2) + 1.5, 0.32 * n + 1.2))
        for t in range(n):
            new = set(trace.entered[t])
            for s, p in enumerate(trace.slots[t]):
                if p is None:
                    ax.add_patch(mpatches.Rectangle((s, t), 1, 1, fc="white", ec="#dddddd"))
                    continue
                picked = s == trace.picked_slot[t]
                ax.add_patch(mpatches.Rectangle((s, t), 1, 1, fc=color(p), alpha=0.35,
                                                ec="#888888"))
                if picked:
                    ax.add_patch(mpatches.Rectangle((s + .04, t + .06), .92, .88, fill=False,
                                                    ec="black", lw=2.2))
                ax.text(s + .5, t + .5, _label(trace.inputs[p]), ha="center", va="center",
                        fontweight="bold" if picked else "normal")
                if p in new:
                    ax.text(s + .93, t + .22, "*", ha="right", va="center", color="#b00000")
            p = trace.picked[t]
            ax.add_patch(mpatches.Rectangle((b + .6, t), 1, 1, fc=color(p), alpha=0.6, ec="black"))
            ax.text(b + 1.1, t + .5, _label(trace.inputs[p]), ha="center", va="center")
        ax.set_xlim(0, b + 1.7)
        ax.set_ylim(n, 0)
        ax.set_xticks([s + .5 for s in range(b)] + [b + 1.1], [str(s) for s in range(b)] + ["out"])
        ax.set_yticks([t + .5 for t in range(n)], [str(t) for t in range(n)])
        ax.set_xlabel("buffer slot")
        ax.set_ylabel("output step")
        ax.tick_params(length=0)
        ax.spines[["left", "bottom"]].set_visible(False)
        handles = [mpatches.Patch(fc="white", ec="black", lw=2, label="picked"),
                   mpatches.Patch(fc="white", ec="white", label="* just came in")]
        handles += [mpatches.Patch(fc=plotting.epoch_color(e), alpha=.5, label=f"epoch {e}")
                    for e in sorted(set(trace.epochs or []))]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_title(title or f"Shuffle buffer of size {b}, before every pick")
    return ax


def _label(x: Any) -> str:
    x = x.item() if isinstance(x, np.generic) else x
    return x.decode() if isinstance(x, bytes) else str(x)
