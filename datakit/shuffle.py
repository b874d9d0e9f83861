"""The shuffle buffer opened up: TensorFlow's algorithm, traces of real runs, mixing.

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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
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


# ----------------------------------------------------------------------------
# The algorithm (TensorFlow's), on input positions
# ----------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------
# The glass-box op
# ----------------------------------------------------------------------------


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
    if seed is not None:
        _check_count("seed", seed)
    picks = None if picks is None else list(picks)
    base = seed if seed is not None else np.random.SeedSequence().entropy
    iteration = [0]

    def op(parent, rec):
        k = iteration[0] if reshuffle_each_iteration else 0
        iteration[0] += 1
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


# ----------------------------------------------------------------------------
# Buffers of a real tf.data run
# ----------------------------------------------------------------------------


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
    inputs: list = [None] * len(picked)
    for i, x in zip(picked, outputs):
        inputs[i] = x
    order = iter(picked)

    def observed(_n, slots, head):
        return (slots.index(next(order)) - head) % size

    steps = list(buffer_steps(inputs, size, observed))
    epochs = None
    if epoch_size is not None:
        e = _check_count("epoch_size", epoch_size)
        if e < 1:
            raise ValueError("epoch_size must be >= 1: the number of elements in one epoch.")
        epochs = [i // e for i in range(len(inputs))]
    return BufferTrace(size, inputs, outputs, picked, [p.slots for p in steps],
                       [p.slot for p in steps], [p.entered for p in steps],
                       [p.offset for p in steps], epochs)


# ----------------------------------------------------------------------------
# Mixing, from real runs
# ----------------------------------------------------------------------------


def shuffled_orders(n: int, buffer_size: int, runs: int = 200, *, seed: int = 0) -> np.ndarray:
    """``runs`` real TF shuffles of ``range(n)``: array ``[run, output step] -> input position``.

    One seeded ``shuffle(...).repeat(runs)``: every pass is reshuffled with fresh seeds.

    >>> o = shuffled_orders(5, 5, runs=3, seed=1)
    >>> o.shape, sorted(o[0].tolist())
    ((3, 5), [0, 1, 2, 3, 4])
    """
    import tensorflow as tf

    size = _check_buffer_size(buffer_size)
    ds = tf.data.Dataset.range(n).shuffle(size, seed=seed).repeat(runs).batch(n)
    return np.stack([b for b in ds.as_numpy_iterator()]) if runs else np.zeros((0, n), int)


@dataclass
class MixingMap:
    """P(output position | input position) for several buffer sizes."""

    n: int
    runs: int
    buffer_sizes: list[int]
    probs: np.ndarray = field(repr=False)  # [buffer size index, input pos, output pos]


def measure_mixing(n: int = 100, buffer_sizes: Iterable[int] = (1, 10, 50, 100),
                   runs: int = 200, *, seed: int = 0) -> MixingMap:
    """Where each input position ends up, over ``runs`` real shuffles per buffer size.

    >>> m = measure_mixing(4, [1, 4], runs=10, seed=0)
    >>> m.probs[0].diagonal().tolist(), m.probs[1].sum(axis=1).tolist()
    ([1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0])
    """
    sizes = [_check_buffer_size(b) for b in buffer_sizes]
    probs = np.zeros((len(sizes), n, n))
    for k, b in enumerate(sizes):
        orders = shuffled_orders(n, b, runs, seed=seed)
        for out_pos in range(n):
            np.add.at(probs[k, :, out_pos], orders[:, out_pos], 1)
    return MixingMap(n, runs, sizes, probs / max(runs, 1))


@dataclass
class MixingStats:
    """Numbers to compare buffer sizes by (averaged over runs)."""

    mean_displacement: float   # mean |output position - input position|
    max_displacement: int
    max_forward: int           # furthest an element came out *earlier* than it went in
    rank_correlation: float    # Spearman, input vs output order: 1 = not shuffled
    single_label_batches: float | None = None  # fraction of batches holding one label
    labels_per_batch: float | None = None      # mean number of distinct labels in a batch


def mixing_stats(orders: np.ndarray, labels: Any = None, batch_size: int | None = None
                 ) -> MixingStats:
    """Displacement, rank correlation and (with ``labels``) single-label batches.

    ``orders[run, t]`` is the input position emitted at step t (see
    :func:`shuffled_orders`).

    >>> s = mixing_stats(np.array([[0, 1, 2, 3]]), labels=[0, 0, 1, 1], batch_size=2)
    >>> s.mean_displacement, s.rank_correlation, s.single_label_batches, s.labels_per_batch
    (0.0, 1.0, 1.0, 1.0)
    """
    orders = np.atleast_2d(np.asarray(orders))
    runs, n = orders.shape
    step = np.broadcast_to(np.arange(n), orders.shape)
    moved = step - orders                      # > 0: came out later than it went in
    d = moved.astype(float)
    rho = 1 - 6 * (d ** 2).sum(axis=1) / (n * (n * n - 1)) if n > 1 else np.ones(runs)
    single = distinct = None
    if labels is not None:
        if batch_size is None or batch_size < 1:
            raise ValueError("with labels, pass batch_size >= 1 to count labels per batch")
        lab = np.asarray(labels)[orders]
        batches = [lab[:, i:i + batch_size] for i in range(0, n, batch_size)]
        single = float(np.mean([(b == b[:, :1]).all(axis=1).mean() for b in batches]))
        distinct = float(np.mean([len(set(row)) for b in batches for row in b.tolist()]))
    return MixingStats(float(np.abs(moved).mean()), int(np.abs(moved).max()),
                       int(max(0, -moved.min())), float(rho.mean()), single, distinct)


def label_batches(labels: Any, buffer_size: int, batch_size: int, *, seed: int = 0
                  ) -> np.ndarray:
    """Label counts per batch of a real ``from_tensor_slices(labels).shuffle().batch()``.

    >>> label_batches([0, 0, 1, 1], buffer_size=1, batch_size=2).tolist()
    [[2, 0], [0, 2]]
    """
    import tensorflow as tf

    labels = np.asarray(labels)
    k = int(labels.max()) + 1
    ds = tf.data.Dataset.from_tensor_slices(labels).shuffle(
        _check_buffer_size(buffer_size), seed=seed).batch(batch_size)
    return np.stack([np.bincount(b, minlength=k) for b in ds.as_numpy_iterator()])


def epoch_order(n: int, epochs: int, buffer_size: int, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Epoch of every output of real ``repeat().shuffle()`` and ``shuffle().repeat()`` runs.

    >>> e = epoch_order(4, 2, 4, seed=0)
    >>> e["shuffle then repeat"].tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """
    import tensorflow as tf

    base = tf.data.Dataset.range(n)
    mixed = base.repeat(epochs).enumerate().shuffle(buffer_size, seed=seed)
    per_epoch = base.shuffle(buffer_size, seed=seed).repeat(epochs).enumerate()
    return {"repeat then shuffle": np.array([i // n for i, _ in mixed.as_numpy_iterator()]),
            "shuffle then repeat": np.array([i // n for i, _ in per_epoch.as_numpy_iterator()])}


def buffer_bytes(element_spec: Any, buffer_size: int) -> int:
    """Memory a full buffer holds: ``buffer_size`` x bytes of one element.

    >>> import tensorflow as tf
    >>> buffer_bytes(tf.TensorSpec([224, 224, 3], tf.float32), 1000)
    602112000
    """
    import tensorflow as tf

    per = 0
    for spec in tf.nest.flatten(element_spec):
        if not spec.shape.is_fully_defined() or spec.dtype == tf.string:
            raise ValueError(f"cannot size {spec}: give a spec with a full shape and a "
                             "fixed-size dtype (measure one element's nbytes instead).")
        per += spec.shape.num_elements() * spec.dtype.size
    return per * _check_buffer_size(buffer_size)


# ----------------------------------------------------------------------------
# Pictures
# ----------------------------------------------------------------------------


def plot_buffer(trace: BufferTrace, ax=None, steps: int | None = None, title: str | None = None):
    """The buffer step by step: one row per output, one cell per slot.

    Cells show the values held before the pick (colour: epoch); the picked
    cell has a thick black frame, its value also appears in the output column;
    cells whose element just came in are marked with a star.
    """
    import matplotlib.patches as mpatches

    n = len(trace.slots) if steps is None else min(steps, len(trace.slots))
    b = trace.buffer_size
    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(0.5 * (b + 2) + 1.5, 0.32 * n + 1.2))
        for t in range(n):
            new = set(trace.entered[t])
            for s, p in enumerate(trace.slots[t]):
                if p is None:
                    ax.add_patch(mpatches.Rectangle((s, t), 1, 1, fc="white", ec="#dddddd"))
                    continue
                e = trace.epochs[p] if trace.epochs else 0
                picked = s == trace.picked_slot[t]
                ax.add_patch(mpatches.Rectangle((s, t), 1, 1, fc=plotting.epoch_color(e),
                                                alpha=0.35, ec="#888888"))
                if picked:
                    ax.add_patch(mpatches.Rectangle((s + .04, t + .06), .92, .88, fill=False,
                                                    ec="black", lw=2.2))
                ax.text(s + .5, t + .5, _label(trace.inputs[p]), ha="center", va="center",
                        fontweight="bold" if picked else "normal")
                if p in new:
                    ax.text(s + .93, t + .22, "*", ha="right", va="center", color="#b00000")
            p = trace.picked[t]
            e = trace.epochs[p] if trace.epochs else 0
            ax.add_patch(mpatches.Rectangle((b + .6, t), 1, 1, fc=plotting.epoch_color(e),
                                            alpha=0.6, ec="black"))
            ax.text(b + 1.1, t + .5, _label(trace.inputs[p]), ha="center", va="center")
        ax.set_xlim(0, b + 1.7)
        ax.set_ylim(n, 0)
        ax.set_xticks([s + .5 for s in range(b)] + [b + 1.1])
        ax.set_xticklabels([str(s) for s in range(b)] + ["out"])
        ax.set_yticks([t + .5 for t in range(n)])
        ax.set_yticklabels([str(t) for t in range(n)])
        ax.set_xlabel("buffer slot")
        ax.set_ylabel("output step")
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        handles = [mpatches.Patch(fc="white", ec="black", lw=2, label="picked")]
        handles.append(mpatches.Patch(fc="white", ec="white", label="* just came in"))
        for e in sorted(set(trace.epochs or [])):
            handles.append(mpatches.Patch(fc=plotting.epoch_color(e), alpha=.5,
                                          label=f"epoch {e}"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_title(title or f"Shuffle buffer of size {b}, before every pick")
    return ax


def _label(x: Any) -> str:
    x = x.item() if isinstance(x, np.generic) else x
    return x.decode() if isinstance(x, bytes) else str(x)


def plot_mixing(mixing: MixingMap, axes=None):
    """P(output position | input position), one heat map per buffer size, side by side."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm

    k = len(mixing.buffer_sizes)
    with plotting.style():
        if axes is None:
            _, axes = plt.subplots(1, k, figsize=(3.0 * k + 1, 3.4), sharey=True,
                                   constrained_layout=True)
        axes = np.atleast_1d(axes)
        levels = np.array([0, .5, 1, 2, 4, 8, 16]) / mixing.n  # multiples of uniform chance
        norm = BoundaryNorm(np.append(levels, 1.0), 256, extend="neither")
        for ax, b, p in zip(axes, mixing.buffer_sizes, mixing.probs):
            im = ax.imshow(p.T, origin="lower", cmap="magma_r", norm=norm, interpolation="nearest",
                           extent=(-.5, mixing.n - .5, -.5, mixing.n - .5), aspect="equal")
            x = np.arange(mixing.n)
            ax.plot(x, np.maximum(x - (b - 1), 0), color="#1f77b4", lw=1, ls="--")
            ax.set_title(f"buffer_size={b}")
            ax.set_xlabel("input position")
        axes[0].set_ylabel("output position")
        bar = axes[0].figure.colorbar(im, ax=list(axes), shrink=.8,
                                      label=f"probability ({mixing.runs} runs)")
        bar.set_ticks(levels[1:], labels=[f"{x:.2g}" for x in levels[1:]])
        axes[min(1, k - 1)].legend(["earliest possible output:\ninput - (buffer_size - 1)"],
                                   loc="upper left", fontsize=7)
    return axes


def plot_epochs(orders: dict[str, np.ndarray], ax=None):
    """Epoch of each output element, one strip per pipeline."""
    from matplotlib.colors import ListedColormap

    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(8, 1.0 + 0.5 * len(orders)))
        names = list(orders)
        grid = np.stack([orders[k] for k in names])
        e = int(grid.max()) + 1
        ax.imshow(grid, aspect="auto", cmap=ListedColormap(plotting.PALETTE[:e]),
                  vmin=-.5, vmax=e - .5, interpolation="nearest")
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels([f"{k.split()[0]}().{k.split()[-1]}()" for k in names])
        ax.set_xlabel("output position")
        ax.set_title("Which epoch each output comes from")
        import matplotlib.patches as mpatches
        ax.legend(handles=[mpatches.Patch(color=plotting.epoch_color(i), label=f"epoch {i}")
                           for i in range(e)], loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def plot_label_batches(counts: dict[int, np.ndarray], axes=None):
    """Label composition of every batch, one panel per buffer size."""
    import matplotlib.pyplot as plt

    with plotting.style():
        if axes is None:
            _, axes = plt.subplots(1, len(counts), figsize=(2.8 * len(counts) + 1, 2.8),
                                   sharey=True, constrained_layout=True)
        axes = np.atleast_1d(axes)
        for ax, (b, c) in zip(axes, counts.items()):
            bottom = np.zeros(len(c))
            for lab in range(c.shape[1]):
                ax.bar(np.arange(len(c)), c[:, lab], bottom=bottom, width=1.0,
                       color=plotting.epoch_color(lab), ec="white", lw=.3,
                       label=f"label {lab}")
                bottom += c[:, lab]
            ax.set_title(f"buffer_size={b}")
            ax.set_xlabel("batch")
        axes[0].set_ylabel("elements per label")
        axes[-1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return axes
