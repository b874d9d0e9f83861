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

How far a shuffle of a given buffer size mixes the data is measured and
drawn in :mod:`datakit.mixing`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from datakit import plotting
from datakit.glassbox import Dataset, Step, _check_count


def _check_buffer_size(buffer_size: Any) -> int:
    b = _check_count("buffer_size", buffer_size)
    if b < 1:
        raise ValueError(f"buffer_size={b} is invalid: the buffer must hold at least one "
                         "element, so pass buffer_size >= 1 (1 means no shuffling).")
    return b


# ---------------------------------------------------------------- TensorFlow's algorithm


class Pick(NamedTuple):
    """One output step of the shuffle buffer."""

    position: int          # input position of the element emitted
    value: Any
    slot: int              # slot it was taken from
    slots: tuple           # input position in every slot before the pick (None: empty)
    entered: tuple         # input positions that came in just before this pick
    offset: int            # the random draw: slot = (head + offset) % buffer_size
    size: int              # elements held when picking


# pick(n, slots, head) -> offset in [0, n)
Chooser = Callable[[int, tuple, int], int]


def buffer_steps(values: Iterable[Any], buffer_size: int, choose: Chooser) -> Iterator[Pick]:
    """Run TensorFlow's shuffle-buffer algorithm; ``choose`` makes the random draws.

    >>> [p.value for p in buffer_steps("abcd", 2, replay_picks([1, 0, 1, 0]))]
    ['b', 'a', 'd', 'c']
    >>> # pick slot 1 ('b'): 'a' (the head) moves into slot 1, 'c' enters slot 0
    >>> [p.slots for p in buffer_steps("abc", 2, replay_picks([1, 0, 0]))]
    [(0, 1), (2, 0), (2, None)]
    """
    size = _check_buffer_size(buffer_size)
    it = iter(values)
    slots: list[int | None] = [None] * size
    live: dict[int, Any] = {}
    head = tail = 0
    exhausted = False
    while True:
        entered = []
        while not exhausted and tail - head < size:
            try:
                x = next(it)
            except StopIteration:
                exhausted = True
                break
            slots[tail % size] = tail
            live[tail] = x
            entered.append(tail)
            tail += 1
        n = tail - head
        if n == 0:
            return
        before = tuple(slots)
        offset = int(choose(n, before, head))
        if not 0 <= offset < n:
            raise ValueError(f"a pick must be in [0, {n}) with {n} elements held, got {offset}")
        slot = (head + offset) % size
        pos = slots[slot]
        slots[slot], slots[head % size] = slots[head % size], None
        head += 1
        yield Pick(pos, live.pop(pos), slot, before, tuple(entered), offset, n)


def replay_picks(picks: Iterable[int]) -> Chooser:
    """A chooser that replays recorded draws (e.g. ``BufferTrace.offsets`` of TF)."""
    it = iter(picks)

    def choose(n, _slots, _head):
        try:
            return next(it)
        except StopIteration:
            raise ValueError("picks ran out: pass one pick per output element") from None

    return choose


def _rng_chooser(rng: np.random.Generator) -> Chooser:
    return lambda n, _slots, _head: int(rng.integers(n))


# ---------------------------------------------------------------- the glass-box op


@dataclass
class ShuffleStep(Step):
    """A glass-box shuffle output, with the buffer it was picked from."""

    slots: tuple = ()      # input position in each slot before the pick (None: empty)
    slot: int = -1         # the slot picked
    entered: tuple = ()    # input positions that entered just before this pick


def glassbox_shuffle(ds: Dataset, buffer_size: int, seed: int | None = None,
                     reshuffle_each_iteration: bool = True, *,
                     picks: Iterable[int] | None = None) -> Dataset:
    """The glass-box shuffle; ``picks`` replays given draws instead of its own RNG.

    Own RNG: NumPy seeded with ``(seed, iteration)`` (iteration 0 every time if
    ``reshuffle_each_iteration`` is false), so it is deterministic per seed but
    not TensorFlow's order. ``picks`` (e.g. TF's, from :func:`trace_buffer`)
    are replayed at every iteration.

    >>> gb = glassbox_shuffle(Dataset.range(5), 2, picks=[1, 1, 0, 1, 0])
    >>> [int(x) for x in gb]
    [1, 2, 0, 4, 3]
    >>> a = Dataset.range(9).shuffle(4, seed=1)
    >>> [int(x) for x in a] == [int(x) for x in Dataset.range(9).shuffle(4, seed=1)]
    True
    """
    size = _check_buffer_size(buffer_size)
    if seed is not None:  # any int64, as tf.data takes (-1 included): as an unsigned seed
        seed = _check_count("seed", seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError(f"seed={seed}: pass an int that fits in 64 bits")
    picks = None if picks is None else list(picks)
    base = seed % 2**64 if seed is not None else np.random.SeedSequence().entropy
    passes = [0]  # iterations started so far; a trace() runs on a copy of it

    def op(parent, rec):
        if rec is None:
            k, passes[0] = passes[0], passes[0] + 1
        else:  # tracing: the passes a fresh iteration would make, without using them up
            k = passes[0] + getattr(rec, "passes", 0)
            rec.passes = getattr(rec, "passes", 0) + 1
        k = k if reshuffle_each_iteration else 0
        choose = (replay_picks(picks) if picks is not None
                  else _rng_chooser(np.random.default_rng([base, k])))
        for p in buffer_steps(parent(), size, choose):
            if rec is not None:
                rec.append(ShuffleStep(p.value, (p.position,), None, p.slots, p.slot, p.entered))
            yield p.value

    args = [str(size)] + ([f"seed={seed}"] if seed is not None else [])
    if not reshuffle_each_iteration:
        args.append("reshuffle_each_iteration=False")
    return ds._chain(op, f"shuffle({', '.join(args)})")


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


def trace_buffer(dataset, buffer_size: int, seed: int | None = None,
                 reshuffle_each_iteration: bool = True, *,
                 epoch_size: int | None = None, iteration: int = 0) -> BufferTrace:
    """Run TensorFlow's ``dataset.shuffle(...)`` on a tagged copy and rebuild its buffer.

    The input is tagged with ``enumerate()`` (so equal values are told apart;
    tagging does not change the order for a given seed), TensorFlow shuffles
    it, and the buffer at each step follows from input and output order; slots
    come from replaying TensorFlow's algorithm with its observed picks.
    ``epoch_size`` (e.g. 10 for ``range(10).repeat(3)``) records each input's
    epoch for colouring. ``iteration=k`` traces the (k+1)-th pass over the
    shuffled dataset (what ``shuffle(...).repeat()`` gives as epoch k). Pass a
    ``seed`` to compare with an untagged run.

    >>> import tensorflow as tf
    >>> t = trace_buffer(tf.data.Dataset.range(3).repeat(2), 2, seed=7, epoch_size=3)
    >>> t.epochs, sorted(t.picked)
    ([0, 0, 0, 1, 1, 1], [0, 1, 2, 3, 4, 5])
    """
    import tensorflow as tf

    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError("trace_buffer() needs a tf.data.Dataset; for the glass box call "
                        "glassbox.Dataset(...).shuffle(...).trace() instead.")
    size = _check_buffer_size(buffer_size)
    if epoch_size is not None and _check_count("epoch_size", epoch_size) < 1:
        raise ValueError("epoch_size must be >= 1: the number of elements in one epoch.")
    if int(dataset.cardinality()) == int(tf.data.INFINITE_CARDINALITY):
        raise ValueError("trace_buffer() needs a finite dataset: take(n) a part of it first.")
    tagged = dataset.enumerate().shuffle(size, seed=seed,
                                         reshuffle_each_iteration=reshuffle_each_iteration)
    for _ in range(_check_count("iteration", iteration)):
        for _ in tagged:
            pass
    picked, outputs = [], []
    for i, x in tagged.as_numpy_iterator():
        picked.append(int(i))
        outputs.append(x)
    inputs = [outputs[i] for i in np.argsort(picked)]
    order = iter(picked)

    def observed(_n, slots, head):
        return (slots.index(next(order)) - head) % size

    steps = list(buffer_steps(inputs, size, observed))
    epochs = None if epoch_size is None else [i // epoch_size for i in range(len(inputs))]
    return BufferTrace(size, inputs, outputs, picked, [p.slots for p in steps],
                       [p.slot for p in steps], [p.entered for p in steps],
                       [p.offset for p in steps], epochs)


# ---------------------------------------------------------------- pictures


def plot_buffer(trace: BufferTrace, ax=None, steps: int | None = None, title: str | None = None):
    """The buffer step by step: one row per output, one cell per slot.

    Cells show the values held before the pick (colour: epoch); the picked
    cell has a thick black frame, its value also appears in the output column;
    cells whose element just came in are marked with a star.
    """
    import matplotlib.patches as mpatches

    n = len(trace.slots) if steps is None else min(steps, len(trace.slots))
    b = trace.buffer_size

    def color(p):  # colour of input position p: its epoch
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
