"""How far a shuffle mixes the data, measured on real ``tf.data`` runs, and pictures of it.

A shuffle buffer of ``buffer_size`` slots lets an element out at most
``buffer_size - 1`` places earlier than it went in, but arbitrarily later.
:func:`~datakit.perf.shuffle_runs.shuffled_orders` runs the real shuffle many times;
:func:`measure_mixing` turns that into P(output position | input position),
:func:`~datakit.glassbox.shuffle_stats.mixing_stats` into numbers to compare buffer
sizes by (displacement, rank correlation, labels per batch; it imports no Matplotlib).
Import those two from their own modules. :func:`label_batches` counts labels per
batch of data sorted by label, :func:`epoch_order` shows where epochs meet
for ``repeat().shuffle()`` vs ``shuffle().repeat()``, :func:`buffer_bytes` is
what a full buffer costs in memory; the ``plot_*`` functions draw them.

>>> from datakit.glassbox.shuffle_stats import mixing_stats
>>> from datakit.perf.shuffle_runs import shuffled_orders
>>> orders = shuffled_orders(10, buffer_size=3, runs=20, seed=0)
>>> mixing_stats(orders).max_forward <= 3 - 1
True
>>> mixing_stats([list(range(10))[::-1]]).rank_correlation   # reversed order
-1.0

The buffer itself, step by step, is in :mod:`datakit.see.shuffle`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf
from matplotlib.axes import Axes
from matplotlib.colors import BoundaryNorm, ListedColormap

from datakit import plotting
from datakit.core.arguments import (
    check_count,
    check_fits_in_memory,
    check_ordered,
    check_seed,
)
from datakit.core.class_ids import check_class_ids
from datakit.glassbox.shuffle_buffer import check_buffer_size
from datakit.perf.shuffle_runs import shuffled_orders

__all__ = ["measure_mixing", "mixing_map", "label_batches",
           "epoch_order", "buffer_bytes", "plot_mixing", "plot_epochs", "plot_label_batches"]

# ---------------------------------------------------------------- mixing, from real runs


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
    >>> m.probs[0].diagonal().tolist()    # buffer 1: nothing moves
    [1.0, 1.0, 1.0, 1.0]
    >>> m.probs[1].sum(axis=1).round(9).tolist()   # each input lands somewhere (sums of tenths)
    [1.0, 1.0, 1.0, 1.0]
    """
    sizes = [check_buffer_size(b) for b in check_ordered("buffer_sizes", buffer_sizes,
                                                         "buffer sizes")]
    seed = check_seed(seed)
    n = check_count("n", n)
    check_fits_in_memory(f"measure_mixing(n={n:,}) over {len(sizes)} buffer sizes",
                         8.0 * len(sizes) * n * n, fix="its map holds n x n probabilities per "
                         "buffer size: pass a smaller n (a few hundred shows the picture)")
    return mixing_map({b: shuffled_orders(n, b, runs, seed=seed) for b in sizes})


def mixing_map(orders: dict[int, np.ndarray]) -> MixingMap:
    """The :class:`MixingMap` of shuffled orders (``[run, step] -> input position``) by buffer size.

    >>> mixing_map({2: np.array([[1, 0], [0, 1]])}).probs[0].tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    sizes = list(orders)
    runs, n = np.atleast_2d(orders[sizes[0]]).shape
    probs = np.zeros((len(sizes), n, n))
    for k, b in enumerate(sizes):
        # one count per (run, output position t) at [input position, t]
        np.add.at(probs[k], (np.atleast_2d(orders[b]), np.arange(n)), 1)
    return MixingMap(n, runs, sizes, probs / max(runs, 1))


def label_batches(labels: Any, buffer_size: int, batch_size: int, *, seed: int = 0
                  ) -> np.ndarray:
    """Label counts per batch of a real ``from_tensor_slices(labels).shuffle().batch()``.

    >>> label_batches([0, 0, 1, 1], buffer_size=1, batch_size=2).tolist()
    [[2, 0], [0, 2]]
    """
    seed = check_seed(seed)
    labels = check_class_ids(labels)
    k = int(labels.max()) + 1
    ds = tf.data.Dataset.from_tensor_slices(labels).shuffle(
        check_buffer_size(buffer_size), seed=seed).batch(check_count("batch_size", batch_size))
    return np.stack([np.bincount(b, minlength=k) for b in ds.as_numpy_iterator()])


def epoch_order(n: int, epochs: int, buffer_size: int, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Epoch of every output of real ``repeat().shuffle()`` and ``shuffle().repeat()`` runs.

    >>> e = epoch_order(4, 2, 4, seed=0)
    >>> e["shuffle then repeat"].tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """
    size = check_buffer_size(buffer_size)
    n, epochs = check_count("n", n), check_count("epochs", epochs)  # repeat(-1): endless
    seed = check_seed(seed)
    check_fits_in_memory(f"epoch_order(n={n:,}, epochs={epochs:,})", 2 * 8.0 * n * epochs,
                         fix="it keeps the epoch of every element of both orders: pass a "
                         "smaller n or fewer epochs")
    base = tf.data.Dataset.range(n)
    mixed = base.repeat(epochs).enumerate().shuffle(size, seed=seed)
    per_epoch = base.shuffle(size, seed=seed).repeat(epochs).enumerate()
    return {"repeat then shuffle": np.array([i // n for i, _ in mixed.as_numpy_iterator()]),
            "shuffle then repeat": np.array([i // n for i, _ in per_epoch.as_numpy_iterator()])}


def buffer_bytes(element_spec: Any, buffer_size: int) -> int:
    """Memory a full buffer holds: ``buffer_size`` x bytes of one element.

    >>> import tensorflow as tf
    >>> buffer_bytes(tf.TensorSpec([224, 224, 3], tf.float32), 1000)
    602112000
    """
    per = 0
    for spec in tf.nest.flatten(element_spec):
        if not spec.shape.is_fully_defined() or spec.dtype == tf.string:
            raise ValueError(f"cannot size {spec}: give a spec with a full shape and a "
                             "fixed-size dtype (measure one element's nbytes instead).")
        per += spec.shape.num_elements() * spec.dtype.size
    return per * check_buffer_size(buffer_size)


# ---------------------------------------------------------------- pictures

#: Where a picture of several panels draws: one Axes, several, or None (a new row of them).
Panels = Axes | Sequence[Axes] | np.ndarray | None


def _panels(axes: Panels, k: int, width: float, height: float) -> np.ndarray:
    """``axes`` as an array, or a new row of ``k`` panels sharing the y axis."""
    if axes is None:
        _, axes = plt.subplots(1, k, figsize=(width * k + 1, height), sharey=True,
                               constrained_layout=True)
    return np.atleast_1d(np.asarray(axes, dtype=object))


def plot_mixing(mixing: MixingMap, axes: Panels = None) -> np.ndarray:
    """P(output position | input position), one heat map per buffer size, side by side."""
    k = len(mixing.buffer_sizes)
    with plotting.style():
        axes = _panels(axes, k, 3.0, 3.4)
        levels = np.array([0, .5, 1, 2, 4, 8, 16]) / mixing.n  # multiples of uniform chance
        levels = levels[levels < 1]  # probabilities end at 1 (small n: 16 / n is more)
        norm = BoundaryNorm(np.append(levels, 1.0), 256, extend="neither")
        for ax, b, p in zip(axes, mixing.buffer_sizes, mixing.probs, strict=False):
            im = ax.imshow(p.T, origin="lower", cmap="magma_r", norm=norm, interpolation="nearest",
                           extent=(-.5, mixing.n - .5, -.5, mixing.n - .5), aspect="equal")
            x = np.arange(mixing.n)
            (edge,) = ax.plot(x, np.maximum(x - (b - 1), 0), color="#00b4d8", lw=1.5, ls="--")
            ax.set_title(f"buffer_size={b}")
            ax.set_xlabel("input position")
        axes[0].set_ylabel("output position")
        bar = axes[0].figure.colorbar(im, ax=list(axes), shrink=.8,
                                      label=f"probability ({mixing.runs} runs)")
        bar.set_ticks(levels[1:], labels=[f"{x:.2g}" for x in levels[1:]])
        axes[0].figure.legend([edge], ["earliest possible output: input - (buffer_size - 1)"],
                              loc="outside lower center", fontsize=9, frameon=False)
    return axes


def plot_epochs(orders: dict[str, np.ndarray], ax: Axes | None = None) -> Axes:
    """Epoch of each output element, one strip per pipeline."""
    with plotting.style():
        ax = plotting.new_axes(ax, figsize=(8, 1.0 + 0.5 * len(orders)))
        names = list(orders)
        grid = np.stack([orders[k] for k in names])
        e = int(grid.max()) + 1
        ax.imshow(grid, aspect="auto", cmap=ListedColormap(plotting.PALETTE[:e]),
                  vmin=-.5, vmax=e - .5, interpolation="nearest")
        ax.set_yticks(range(len(names)), [f"{k.split()[0]}().{k.split()[-1]}()" for k in names])
        ax.set_xlabel("output position")
        ax.set_title("Which epoch each output comes from")
        ax.legend(handles=[mpatches.Patch(color=plotting.epoch_color(i), label=f"epoch {i}")
                           for i in range(e)], loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def plot_label_batches(counts: dict[int, np.ndarray], axes: Panels = None) -> np.ndarray:
    """Label composition of every batch, one panel per buffer size."""
    with plotting.style():
        axes = _panels(axes, len(counts), 2.8, 2.8)
        for ax, (b, c) in zip(axes, counts.items(), strict=False):
            plotting.stacked_bars(ax, c, "label")
            ax.set_title(f"buffer_size={b}")
            ax.set_xlabel("batch")
        axes[0].set_ylabel("elements per label")
        axes[-1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return axes
