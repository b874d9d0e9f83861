"""How far a shuffle mixed a sequence: numbers to compare shuffle buffer sizes by.

:func:`mixing_stats` takes orders (``orders[run, t]`` is the input position emitted at
step t, e.g. from :func:`datakit.perf.shuffle_runs.shuffled_orders`) and gives the mean
and largest displacement, the furthest an element came out earlier than it went in, the
rank correlation of input and output order and, with labels, how many batches hold one
label. Plain NumPy: the doctor's advice and :mod:`datakit.see.mixing` (which draws it)
both use it without loading Matplotlib.

>>> mixing_stats([list(range(10))[::-1]]).rank_correlation   # reversed order
-1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from datakit.core.arguments import check_count

__all__ = ["mixing_stats"]


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
    size = 0   # rows per batch, checked when labels are given
    if labels is not None:
        size = check_count("batch_size", batch_size, none=False,
                              fix="with labels, pass batch_size >= 1 to count labels per batch")
    orders = np.atleast_2d(np.asarray(orders))
    if orders.ndim != 2 or orders.size == 0:
        raise ValueError(f"orders has shape {orders.shape}: pass [run, step] input positions, "
                         "at least one run of one step (shuffled_orders(n, buffer_size, runs))")
    runs, n = orders.shape
    if labels is not None and len(labels) != n:
        raise ValueError(f"labels has {len(labels)} values for orders of {n} positions: pass "
                         "one label per input position, in input order.")
    moved = np.arange(n) - orders              # > 0: came out later than it went in
    distance = np.abs(moved)
    rho = (1 - 6 * (moved.astype(float) ** 2).sum(axis=1) / (n * (n * n - 1)) if n > 1
           else np.ones(runs))
    single = distinct = None
    if labels is not None:
        lab = np.asarray(labels)[orders]
        batches = [lab[:, i:i + size] for i in range(0, n, size)]
        single = float(np.mean([(b == b[:, :1]).all(axis=1).mean() for b in batches]))
        distinct = float(np.mean([len(set(row)) for b in batches for row in b.tolist()]))
    return MixingStats(float(distance.mean()), int(distance.max()),
                       int(max(0, -moved.min())), float(rho.mean()), single, distinct)
