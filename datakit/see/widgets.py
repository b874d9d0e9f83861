"""Touch the pipeline: ipywidgets that re-run a real ``tf.data`` pipeline when you move a control.

Every widget here drives a real ``tf.data`` run, never a simulation. Each
one is two halves: a ``*_data`` function (parameters in, plain data out:
what the picture is drawn from, tested against ``tf.data`` without a
browser) and a widget that calls it and draws the result with the plot
function of the concept's own module.

>>> bt = batch_data(5, repeat=2, batch_size=4, drop_remainder=True)
>>> [int(v) for v in bt.values], bt.batch_of
([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], [0, 0, 0, 0, 1, 1, 1, 1, None, None])
>>> it = interleave_data([2, 0, 3], cycle_length=2)
>>> it.file.tolist(), it.slot.tolist()
([0, 0, 2, 2, 2], [0, 0, 1, 1, 1])

=====================  =====================================  ==========================
widget                 controls                               data from
=====================  =====================================  ==========================
shuffle_stepper        step / play, buffer_size, seed,        :func:`stepper_data`
                       reshuffle_each_iteration, iteration
mixing_explorer        buffer_size                            :func:`mixing_data`
batch_explorer         repeat, batch_size, drop_remainder,    :func:`batch_data`
                       order
interleave_explorer    cycle_length, block_length             :func:`interleave_data`
timeline_explorer      num_parallel_calls, prefetch,          :func:`timeline_data`
                       step time
=====================  =====================================  ==========================
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["stepper_data", "shuffle_stepper", "MixingView", "mixing_data", "mixing_explorer",
           "batch_data", "batch_explorer", "interleave_data", "interleave_explorer",
           "UNEVEN_LENGTHS", "timeline_data", "timeline_explorer"]


# ---------------------------------------------------------------- the logic: plain data


@functools.lru_cache(maxsize=64)
def stepper_data(n: int = 12, buffer_size: int = 4, seed: int = 42,
                 reshuffle_each_iteration: bool = True, iteration: int = 0):
    """The buffer of a real ``range(n).shuffle(...)`` run, pass ``iteration`` (a BufferTrace)."""
    import tensorflow as tf

    from datakit.see.shuffle import trace_buffer

    return trace_buffer(tf.data.Dataset.range(n), buffer_size, seed,
                        reshuffle_each_iteration, iteration=iteration)


@dataclass
class MixingView:
    """What the mixing explorer draws for one buffer size."""

    mixing: Any            # datakit.see.mixing.MixingMap with one buffer size
    label_counts: np.ndarray  # [batch, label] counts of the sorted-by-label data, shuffled
    stats: Any             # datakit.see.mixing.MixingStats of the same runs


@functools.lru_cache(maxsize=64)
def mixing_data(buffer_size: int, n: int = 100, runs: int = 50, n_labels: int = 5,
                batch_size: int = 10, seed: int = 42) -> MixingView:
    """Real shuffles of ``range(n)`` (sorted by ``n_labels`` labels) with one buffer size."""
    from datakit.see import mixing

    labels = np.repeat(np.arange(n_labels), -(-n // n_labels))[:n]
    orders = mixing.shuffled_orders(n, buffer_size, runs, seed=seed)
    probs = np.zeros((1, n, n))
    np.add.at(probs[0], (orders, np.arange(n)), 1)
    view = mixing.MixingMap(n, runs, [buffer_size], probs / runs)
    counts = mixing.label_batches(labels, buffer_size, batch_size, seed=seed)
    return MixingView(view, counts, mixing.mixing_stats(orders, labels, batch_size))


def batch_data(n: int = 10, repeat: int = 3, batch_size: int = 7, drop_remainder: bool = False,
               order: str = "repeat, batch"):
    """A :class:`datakit.see.batches.BatchTrace` read off a real ``tf.data`` run.

    ``order`` is ``"repeat, batch"`` (``range(n).repeat(r).batch(b)``) or
    ``"batch, repeat"`` (``range(n).batch(b).repeat(r)``). Each element is
    tagged with its position in the repeated stream before batching, so the
    batches say where every element went.
    """
    import tensorflow as tf

    from datakit.see.batches import BatchTrace

    if order not in ("repeat, batch", "batch, repeat"):
        raise ValueError(f"order={order!r}: pass 'repeat, batch' or 'batch, repeat'")
    if min(n, repeat, batch_size) < 1:
        raise ValueError("n, repeat and batch_size must be >= 1")
    values = list(range(n)) * repeat
    batch_of: list[int | None] = [None] * len(values)
    if order == "repeat, batch":
        ds = tf.data.Dataset.range(n).repeat(repeat).enumerate().batch(
            batch_size, drop_remainder=drop_remainder)
        name = f"range({n}).repeat({repeat}).batch({batch_size}"
    else:
        per_epoch = tf.data.Dataset.range(n).enumerate().batch(batch_size,
                                                               drop_remainder=drop_remainder)
        ds = per_epoch.repeat(repeat)
        name = f"range({n}).batch({batch_size}"
    epoch, last = 0, -1  # batch-then-repeat: positions restart each epoch
    for j, (pos, vals) in enumerate(ds.as_numpy_iterator()):
        for p, v in zip(pos.tolist(), vals.tolist()):
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
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)  # atomic: a reader never sees half a file
        paths.append(os.fspath(path))
    return tuple(paths)


def interleave_data(lengths=UNEVEN_LENGTHS, cycle_length: int = 2, block_length: int = 1):
    """A real interleave over CSV files with ``lengths`` data lines (a SourceTrace with slots)."""
    return _interleave(tuple(int(n) for n in lengths), cycle_length, block_length)


@functools.lru_cache(maxsize=64)
def _interleave(lengths: tuple[int, ...], cycle_length: int, block_length: int):
    from datakit.see.interleave import trace_sources

    return trace_sources(list(_uneven_files(lengths)), cycle_length=cycle_length,
                         block_length=block_length)


def timeline_pipeline(num_parallel_calls: int = 1, prefetch: int = 0, *, parse_time: float = 0.015,
                      open_time: float = 0.03, read_time: float = 0.01, files: int = 2,
                      rows: int = 5):
    """The sleeping source of notebook 06 + a traced parse, runtime help off (what you set is all)."""
    from datakit.perf import synthetic, timeline

    ds = synthetic.synthetic_files(files, rows, open_time=open_time, read_time=read_time)
    ds = ds.map(timeline.timed("parse", synthetic.work(parse_time)),
                num_parallel_calls=num_parallel_calls)
    if prefetch:
        ds = ds.prefetch(prefetch)
    return synthetic.serial(ds)


def timeline_data(num_parallel_calls: int = 1, prefetch: int = 0, step_time: float = 0.01,
                  **pipeline: Any):
    """Run :func:`timeline_pipeline` once as a training loop would: a Timeline (~0.3-0.5 s)."""
    from datakit.perf import timeline

    return timeline.trace_timeline(timeline_pipeline(num_parallel_calls, prefetch, **pipeline),
                                   step_time=step_time)


# ---------------------------------------------------------------- the widgets


def _show(out, draw) -> None:
    """Redraw the Output widget ``out`` with ``draw()`` (which draws one figure)."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    with out:
        out.clear_output(wait=True)
        draw()  # makes its own figure
        display(plt.gcf())
        plt.close("all")


def _panel(controls: list, draw_from: dict, draw) -> Any:
    """Controls over an Output widget; any change calls ``draw(**values)``."""
    import ipywidgets as w

    out = w.Output()

    def redraw(_change=None):
        values = {k: c.value for k, c in draw_from.items()}
        _show(out, lambda: draw(**values))

    for c in draw_from.values():
        c.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox(controls[i:i + 3]) for i in range(0, len(controls), 3)] + [out])


def shuffle_stepper(n: int = 12, buffer_size: int = 4, seed: int = 42):
    """Step (or play) through a real run's shuffle buffer, one pick at a time."""
    import ipywidgets as w

    from datakit.see.animation import describe_pick, plot_pick

    size = w.IntSlider(buffer_size, 1, n, description="buffer_size")
    sd = w.IntSlider(seed, 0, 100, description="seed")
    resh = w.Checkbox(True, description="reshuffle_each_iteration")
    it = w.IntSlider(0, 0, 2, description="iteration")
    step = w.IntSlider(0, 0, n - 1, description="step")
    play = w.Play(0, 0, n - 1, interval=800, description="play")
    w.jslink((play, "value"), (step, "value"))

    def draw(step, buffer_size, seed, reshuffle, iteration):
        trace = stepper_data(n, buffer_size, seed, reshuffle, iteration)
        ax = plot_pick(trace, step)
        ax.figure.text(0.01, 0.01, describe_pick(trace, step), fontsize=8)

    return _panel([play, step, size, sd, it, resh],
                  dict(step=step, buffer_size=size, seed=sd, reshuffle=resh, iteration=it), draw)


def mixing_explorer(n: int = 100, runs: int = 50, n_labels: int = 5, batch_size: int = 10):
    """A ``buffer_size`` slider over the mixing heat map and the labels in each batch."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from datakit.see import mixing

    size = w.SelectionSlider(options=[1, 2, 5, 10, 20, 50, 100], value=10,
                             description="buffer_size")

    def draw(buffer_size):
        v = mixing_data(buffer_size, n, runs, n_labels, batch_size)
        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4), constrained_layout=True)
        mixing.plot_mixing(v.mixing, axes=np.array([a]))
        mixing.plot_label_batches({buffer_size: v.label_counts}, axes=np.array([b]))
        fig.suptitle(f"{runs} real shuffles: rank correlation {v.stats.rank_correlation:.2f}, "
                     f"{v.stats.labels_per_batch:.1f} of {n_labels} labels per batch")

    return _panel([size], dict(buffer_size=size), draw)


def batch_explorer(n: int = 10):
    """``repeat``, ``batch``, ``drop_remainder`` and their order, on a real ``range(n)``."""
    import ipywidgets as w

    from datakit.see.batches import plot_batches

    rep = w.IntSlider(3, 1, 4, description="repeat")
    size = w.IntSlider(7, 1, 12, description="batch_size")
    drop = w.Checkbox(False, description="drop_remainder")
    order = w.ToggleButtons(options=["repeat, batch", "batch, repeat"])
    # A Label beside the buttons: ToggleButtons' own description wraps above them, clipped.
    labelled_order = w.HBox([w.Label("order"), order])

    def draw(repeat, batch_size, drop_remainder, order):
        plot_batches(batch_data(n, repeat, batch_size, drop_remainder, order))

    return _panel([rep, size, drop, labelled_order],
                  dict(repeat=rep, batch_size=size, drop_remainder=drop, order=order), draw)


def interleave_explorer(lengths: tuple[int, ...] = UNEVEN_LENGTHS):
    """``cycle_length`` and ``block_length`` over files of unequal length, one empty."""
    import ipywidgets as w

    from datakit.see.interleave import plot_sources

    cyc = w.IntSlider(2, 1, len(lengths), description="cycle_length")
    blk = w.IntSlider(1, 1, 4, description="block_length")
    names = [f"{n} lines" for n in lengths]

    def draw(cycle_length, block_length):
        plot_sources(interleave_data(tuple(lengths), cycle_length, block_length), labels=names)

    return _panel([cyc, blk], dict(cycle_length=cyc, block_length=blk), draw)


def timeline_explorer():
    """``num_parallel_calls``, ``prefetch`` and the training step time, re-run on each change."""
    import ipywidgets as w

    from datakit.perf import timeline

    npc = w.IntSlider(1, 1, 4, description="num_parallel_calls")
    pf = w.IntSlider(0, 0, 3, description="prefetch")
    st = w.IntSlider(10, 0, 40, step=5, description="step (ms)")

    def draw(num_parallel_calls, prefetch, step_ms):
        tl = timeline_data(num_parallel_calls, prefetch, step_ms / 1000)
        timeline.plot_timeline(tl, title=f"map(num_parallel_calls={num_parallel_calls})"
                               + (f".prefetch({prefetch})" if prefetch else ", no prefetch")
                               + f": {tl.finished[-1]:.2f} s")

    return _panel([npc, pf, st], dict(num_parallel_calls=npc, prefetch=pf, step_ms=st), draw)
