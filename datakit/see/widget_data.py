"""The data behind every widget: parameters in, plain data out, each from a real ``tf.data`` run.

Each widget of :mod:`datakit.see.widgets` calls one of these and draws the
result with the plot function of the concept's own module, so what it shows
is tested against ``tf.data`` without a browser. Arguments are checked as
the pipelines' own are (wrong types ``TypeError``, bad values ``ValueError``):

>>> bt = batch_data(5, repeat=2, batch_size=4, drop_remainder=True)
>>> [int(v) for v in bt.values], bt.batch_of
([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], [0, 0, 0, 0, 1, 1, 1, 1, None, None])
>>> it = interleave_data([2, 0, 3], cycle_length=2)
>>> it.file.tolist(), it.slot.tolist()
([0, 0, 2, 2, 2], [0, 0, 1, 1, 1])
>>> interleave_data([-2, 3])
Traceback (most recent call last):
    ...
ValueError: lengths[0]=-2 is invalid: pass an int >= 0.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from datakit.core.arguments import check_count, check_seconds, check_seed
from datakit.core.atomic import write_atomic
from datakit.glassbox.shuffle_buffer import check_buffer_size

if TYPE_CHECKING:
    import tensorflow as tf

    from datakit.perf.timeline import Timeline
    from datakit.see.batches import BatchTrace
    from datakit.see.interleave import SourceTrace
    from datakit.see.shuffle import BufferTrace

__all__: list[str] = []


def stepper_data(n: int = 12, buffer_size: int = 4, seed: int = 42,
                 reshuffle_each_iteration: bool = True, iteration: int = 0) -> BufferTrace:
    """The buffer of a real ``range(n).shuffle(...)`` run, pass ``iteration`` (a BufferTrace).

    >>> stepper_data(iteration=-1)
    Traceback (most recent call last):
        ...
    ValueError: iteration=-1 is invalid: pass an int >= 0.
    """
    return _stepper(check_count("n", n), check_buffer_size(buffer_size), check_seed(seed),
                    bool(reshuffle_each_iteration), check_count("iteration", iteration, 0))


@functools.lru_cache(maxsize=64)
def _stepper(n: int, buffer_size: int, seed: int, reshuffle: bool,
             iteration: int) -> BufferTrace:
    import tensorflow as tf

    from datakit.see.shuffle import trace_buffer

    return trace_buffer(tf.data.Dataset.range(n), buffer_size, seed, reshuffle,
                        iteration=iteration)


@dataclass
class MixingView:
    """What the mixing explorer draws for one buffer size."""

    mixing: Any            # datakit.see.mixing.MixingMap with one buffer size
    label_counts: np.ndarray  # [batch, label] counts of the sorted-by-label data, shuffled
    stats: Any             # datakit.see.mixing.MixingStats of the same runs


def mixing_data(buffer_size: int, n: int = 100, runs: int = 50, n_labels: int = 5,
                batch_size: int = 10, seed: int = 42) -> MixingView:
    """Real shuffles of ``range(n)`` (sorted by ``n_labels`` labels) with one buffer size.

    >>> mixing_data(10, n_labels=0)
    Traceback (most recent call last):
        ...
    ValueError: n_labels=0 is invalid: pass an int >= 1.
    """
    return _mixing(check_buffer_size(buffer_size), check_count("n", n), check_count("runs", runs),
                   check_count("n_labels", n_labels), check_count("batch_size", batch_size),
                   check_seed(seed))


@functools.lru_cache(maxsize=64)
def _mixing(buffer_size: int, n: int, runs: int, n_labels: int, batch_size: int,
            seed: int) -> MixingView:
    from datakit.glassbox.shuffle_stats import mixing_stats
    from datakit.perf.shuffle_runs import shuffled_orders
    from datakit.see import mixing

    labels = np.repeat(np.arange(n_labels), -(-n // n_labels))[:n]
    orders = shuffled_orders(n, buffer_size, runs, seed=seed)
    counts = mixing.label_batches(labels, buffer_size, batch_size, seed=seed)
    return MixingView(mixing.mixing_map({buffer_size: orders}), counts,
                      mixing_stats(orders, labels, batch_size))


def batch_data(n: int = 10, repeat: int = 3, batch_size: int = 7, drop_remainder: bool = False,
               order: str = "repeat, batch") -> BatchTrace:
    """A :class:`datakit.see.batches.BatchTrace` read off a real ``tf.data`` run.

    ``order`` is ``"repeat, batch"`` (``range(n).repeat(r).batch(b)``) or
    ``"batch, repeat"`` (``range(n).batch(b).repeat(r)``). Each element is
    tagged with its position in the repeated stream before batching, so the
    batches say where every element went.

    >>> batch_data(batch_size=2.5)
    Traceback (most recent call last):
        ...
    TypeError: batch_size must be an int, got 2.5
    """
    import tensorflow as tf

    from datakit.see.batches import BatchTrace

    if order not in ("repeat, batch", "batch, repeat"):
        raise ValueError(f"order={order!r}: pass 'repeat, batch' or 'batch, repeat'")
    n, repeat = check_count("n", n), check_count("repeat", repeat)
    batch_size = check_count("batch_size", batch_size)
    values = list(range(n)) * repeat
    batch_of: list[int | None] = [None] * len(values)
    tagged = tf.data.Dataset.range(n)
    if order == "repeat, batch":
        ds = tagged.repeat(repeat).enumerate().batch(batch_size, drop_remainder=drop_remainder)
        name = f"range({n}).repeat({repeat}).batch({batch_size}"
    else:
        ds = tagged.enumerate().batch(batch_size, drop_remainder=drop_remainder).repeat(repeat)
        name = f"range({n}).batch({batch_size}"
    epoch, last = 0, -1  # batch-then-repeat: positions restart each epoch
    for j, (pos, vals) in enumerate(ds.as_numpy_iterator()):
        for p, v in zip(pos.tolist(), vals.tolist(), strict=True):
            if order == "batch, repeat":
                if p <= last:
                    epoch += 1
                last = p
                p = epoch * n + p
            if values[p] != v:
                raise AssertionError(f"element {p} is {v}, expected {values[p]}")
            batch_of[p] = j
    name += ", drop_remainder=True)" if drop_remainder else ")"
    if order == "batch, repeat":
        name += f".repeat({repeat})"
    return BatchTrace(name, values, [i // n for i in range(len(values))], batch_of, batch_size)


#: File lengths (data lines) for the interleave explorer: unequal, one empty.
UNEVEN_LENGTHS = (2, 6, 0, 3, 4)


@functools.lru_cache(maxsize=8)
def _uneven_files(lengths: tuple[int, ...]) -> tuple[str, ...]:
    """CSV files (header ``id``) with ``lengths`` data lines, under data/generated (git-ignored)."""
    from datakit import DATA_DIR

    folder = DATA_DIR / "generated" / "widgets_interleave"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, n in enumerate(lengths):
        path = folder / f"file{i}_len{n}.csv"
        text = "id\n" + "".join(f"{i * 100 + r}\n" for r in range(n))
        if not path.exists() or path.read_text() != text:
            write_atomic(path, text)  # a reader never sees half a file
        paths.append(str(path))
    return tuple(paths)


def interleave_data(lengths: Iterable[int] = UNEVEN_LENGTHS, cycle_length: int = 2,
                    block_length: int = 1) -> SourceTrace:
    """A real interleave over CSV files with ``lengths`` data lines (a SourceTrace with slots)."""
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__iter__"):
        raise TypeError(f"lengths must be a sequence of ints (data lines per file), got "
                        f"{lengths!r}")
    sizes = tuple(check_count(f"lengths[{i}]", n, 0) for i, n in enumerate(lengths))
    if not sizes:
        raise ValueError("lengths is empty: give the data lines of at least one file")
    return _interleave(sizes, check_count("cycle_length", cycle_length),
                       check_count("block_length", block_length))


@functools.lru_cache(maxsize=64)
def _interleave(lengths: tuple[int, ...], cycle_length: int,
                block_length: int) -> SourceTrace:
    from datakit.see.interleave import trace_sources

    return trace_sources(list(_uneven_files(lengths)), cycle_length=cycle_length,
                         block_length=block_length)


def timeline_pipeline(num_parallel_calls: int = 1, prefetch: int = 0, *, parse_time: float = 0.015,
                      open_time: float = 0.03, read_time: float = 0.01, files: int = 2,
                      rows: int = 5) -> tf.data.Dataset:
    """The sleeping source of notebook 06 and a traced parse, runtime help off (yours is all)."""
    from datakit.perf import synthetic, timeline

    calls = check_count("num_parallel_calls", num_parallel_calls, autotune=True)
    prefetch = check_count("prefetch", prefetch, 0)
    ds = synthetic.synthetic_files(files, rows, open_time=open_time, read_time=read_time)
    ds = ds.map(timeline.timed("parse", synthetic.work(parse_time)), num_parallel_calls=calls)
    if prefetch:
        ds = ds.prefetch(prefetch)
    return synthetic.serial(ds)


def timeline_data(num_parallel_calls: int = 1, prefetch: int = 0, step_time: float = 0.01,
                  **pipeline: Any) -> Timeline:
    """Run :func:`timeline_pipeline` once as a training loop would: a Timeline (~0.3-0.5 s).

    >>> timeline_data(step_time=float("nan"))
    Traceback (most recent call last):
        ...
    ValueError: step_time=nan is invalid: pass seconds >= 0 (a finite number).
    """
    from datakit.perf import timeline

    step_time = check_seconds("step_time", step_time)
    return timeline.trace_timeline(timeline_pipeline(num_parallel_calls, prefetch, **pipeline),
                                   step_time=step_time)
