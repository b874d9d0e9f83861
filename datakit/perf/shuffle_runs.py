"""Real ``tf.data`` shuffles, run many times: where each input position came out.

:func:`shuffled_orders` is what :mod:`datakit.see.mixing` pictures and what the doctor's
memory advice measures a smaller shuffle buffer's mixing on (with
:func:`datakit.glassbox.shuffle_stats.mixing_stats`); it imports no Matplotlib.

>>> from datakit.glassbox.shuffle_stats import mixing_stats
>>> mixing_stats(shuffled_orders(10, buffer_size=3, runs=20, seed=0)).max_forward <= 3 - 1
True
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count, check_fits_in_memory, check_seed
from datakit.glassbox.shuffle_buffer import check_buffer_size

__all__ = ["shuffled_orders"]


def shuffled_orders(n: int, buffer_size: int, runs: int = 200, *, seed: int = 0) -> np.ndarray:
    """``runs`` real TF shuffles of ``range(n)``: array ``[run, output step] -> input position``.

    One seeded ``shuffle(...).repeat(runs)``: every pass is reshuffled with fresh seeds.

    >>> o = shuffled_orders(5, 5, runs=3, seed=1)
    >>> o.shape, sorted(o[0].tolist())
    ((3, 5), [0, 1, 2, 3, 4])
    """
    size = check_buffer_size(buffer_size)
    n, runs = check_count("n", n), check_count("runs", runs)  # repeat(-1) would never end
    seed = check_seed(seed)
    check_fits_in_memory(f"shuffled_orders(n={n:,}, runs={runs:,})", 8.0 * n * runs,
                         fix="its result holds n x runs int64 positions; pass fewer runs or a "
                             "smaller n")
    ds = tf.data.Dataset.range(n).shuffle(size, seed=seed).repeat(runs).batch(n)
    return np.stack(list(ds.as_numpy_iterator()))
