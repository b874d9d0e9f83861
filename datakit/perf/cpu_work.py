"""A stand-in decoder that does CPU work: it holds a core, as a real decoder does.

:func:`datakit.perf.synthetic.work` sleeps: a sleep holds a thread, not a core, so a pool
of sleeping "decoders" keeps up on a 2-core machine where real decoders would not.
:func:`burn` spends a set amount of CPU time instead (small matrix products in TensorFlow's
runtime, no Python lock), calibrated once per process on this machine. Parallel calls
overlap only as far as there are cores, exactly like decoding.

>>> import tensorflow as tf
>>> ds = tf.data.Dataset.range(4).map(burn(0.002))
>>> [int(x) for x in ds]
[0, 1, 2, 3]
>>> 0.5 < cpu_seconds_per_call(burn(0.02)) / 0.02 < 2.0
True
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from datakit.core.arguments import check_seconds

__all__ = ["burn"]

_SIDE = 64  # one round: a 64x64 matrix product, ~0.5 MFLOP
_ROUNDS_PER_S: list[float] = []


def _rounds(x: Any, n: int) -> Any:
    """``n`` matrix products chained from a matrix that depends on ``x`` (nothing folds)."""
    seed = tf.cast(tf.size(x), tf.float32) * 0 + 1 / _SIDE
    m = tf.fill([_SIDE, _SIDE], seed)

    def body(i: Any, a: Any) -> tuple[Any, Any]:
        return i + 1, tf.matmul(a, m)

    _, a = tf.while_loop(lambda i, a: i < n, body, (tf.constant(0, tf.int64), m))
    return a[0, 0]


@tf.autograph.experimental.do_not_convert
def cpu_seconds_per_call(fn: Callable[[Any], Any], calls: int = 8) -> float:
    """The CPU seconds one call of the map function ``fn`` costs, in a one-call-at-a-time
    pipeline (the whole process's CPU time over ``calls`` calls)."""
    ds = tf.data.Dataset.range(calls).map(fn)
    list(ds.take(1))  # trace
    c0 = time.process_time()
    for _ in ds:
        pass
    return (time.process_time() - c0) / calls


@tf.autograph.experimental.do_not_convert
def _rounds_per_second() -> float:
    """Rounds a CPU second on this machine, measured once (eagerly, even when ``burn`` is
    first called while a ``map`` function is being traced)."""
    if not _ROUNDS_PER_S:
        probe = 400
        with tf.init_scope():
            seconds = cpu_seconds_per_call(lambda x: _rounds(x, probe) + tf.cast(x, tf.float32))
        _ROUNDS_PER_S.append(probe / max(seconds, 1e-6))
    return _ROUNDS_PER_S[0]


def burn(seconds: float) -> Callable[[Any], Any]:
    """A stand-in map function (a numeric tensor in, the same out) that keeps a core busy
    about ``seconds`` of CPU a call."""
    check_seconds("seconds", seconds)
    n = max(1, round(seconds * _rounds_per_second()))

    def fn(x: Any) -> Any:  # the result feeds the output (a control dependency alone may be pruned)
        return x + tf.cast(tf.minimum(_rounds(x, n), 0.0), x.dtype)  # + 0: the work stays

    return fn
