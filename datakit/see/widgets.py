"""Touch the pipeline: ipywidgets that re-run a real ``tf.data`` pipeline when you move a control.

Every widget here drives a real ``tf.data`` run, never a simulation. Each
one is two halves: a ``*_data`` function of :mod:`datakit.see.widget_data`
(parameters in, plain data out: what the picture is drawn from, tested
against ``tf.data`` without a browser) and a widget here that calls it and
draws the result with the plot function of the concept's own module.

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

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from datakit.see.widget_data import (
    UNEVEN_LENGTHS,
    batch_data,
    interleave_data,
    mixing_data,
    stepper_data,
    timeline_data,
)

if TYPE_CHECKING:
    import ipywidgets

__all__ = ["shuffle_stepper", "mixing_explorer", "batch_explorer", "interleave_explorer",
           "timeline_explorer"]


# ---------------------------------------------------------------- the widgets


def _show(out: ipywidgets.Output, draw: Callable[[], object]) -> None:
    """Redraw the Output widget ``out`` with ``draw()`` (which draws one figure)."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    with out:
        out.clear_output(wait=True)
        draw()  # makes its own figure
        display(plt.gcf())
        plt.close("all")


def _panel(controls: list, draw_from: dict, draw: Callable[..., None]) -> ipywidgets.VBox:
    """Controls over an Output widget; any change calls ``draw(**values)``."""
    import ipywidgets as w

    out = w.Output()

    def redraw(_change: object = None) -> None:
        values = {k: c.value for k, c in draw_from.items()}
        _show(out, lambda: draw(**values))

    for c in draw_from.values():
        c.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox(controls[i:i + 3]) for i in range(0, len(controls), 3)] + [out])


def shuffle_stepper(n: int = 12, buffer_size: int = 4, seed: int = 42) -> ipywidgets.VBox:
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

    def draw(step: int, buffer_size: int, seed: int, reshuffle: bool, iteration: int) -> None:
        trace = stepper_data(n, buffer_size, seed, reshuffle, iteration)
        ax = plot_pick(trace, step)
        ax.figure.text(0.01, 0.01, describe_pick(trace, step), fontsize=8)

    return _panel([play, step, size, sd, it, resh],
                  dict(step=step, buffer_size=size, seed=sd, reshuffle=resh, iteration=it), draw)


def mixing_explorer(n: int = 100, runs: int = 50, n_labels: int = 5,
                    batch_size: int = 10) -> ipywidgets.VBox:
    """A ``buffer_size`` slider over the mixing heat map and the labels in each batch."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from datakit.see import mixing

    size = w.SelectionSlider(options=[1, 2, 5, 10, 20, 50, 100], value=10,
                             description="buffer_size")

    def draw(buffer_size: int) -> None:
        v = mixing_data(buffer_size, n, runs, n_labels, batch_size)
        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4), constrained_layout=True)
        mixing.plot_mixing(v.mixing, axes=np.array([a]))
        mixing.plot_label_batches({buffer_size: v.label_counts}, axes=np.array([b]))
        fig.suptitle(f"{runs} real shuffles: rank correlation {v.stats.rank_correlation:.2f}, "
                     f"{v.stats.labels_per_batch:.1f} of {n_labels} labels per batch")

    return _panel([size], dict(buffer_size=size), draw)


def batch_explorer(n: int = 10) -> ipywidgets.VBox:
    """``repeat``, ``batch``, ``drop_remainder`` and their order, on a real ``range(n)``."""
    import ipywidgets as w

    from datakit.see.batches import plot_batches

    rep = w.IntSlider(3, 1, 4, description="repeat")
    size = w.IntSlider(7, 1, 12, description="batch_size")
    drop = w.Checkbox(False, description="drop_remainder")
    order = w.ToggleButtons(options=["repeat, batch", "batch, repeat"])
    # A Label beside the buttons: ToggleButtons' own description wraps above them, clipped.
    labelled_order = w.HBox([w.Label("order"), order])

    def draw(repeat: int, batch_size: int, drop_remainder: bool, order: str) -> None:
        plot_batches(batch_data(n, repeat, batch_size, drop_remainder, order))

    return _panel([rep, size, drop, labelled_order],
                  dict(repeat=rep, batch_size=size, drop_remainder=drop, order=order), draw)


def interleave_explorer(lengths: tuple[int, ...] = UNEVEN_LENGTHS) -> ipywidgets.VBox:
    """``cycle_length`` and ``block_length`` over files of unequal length, one empty."""
    import ipywidgets as w

    from datakit.see.interleave import plot_sources

    cyc = w.IntSlider(2, 1, len(lengths), description="cycle_length")
    blk = w.IntSlider(1, 1, 4, description="block_length")
    names = [f"{n} lines" for n in lengths]

    def draw(cycle_length: int, block_length: int) -> None:
        plot_sources(interleave_data(tuple(lengths), cycle_length, block_length), labels=names)

    return _panel([cyc, blk], dict(cycle_length=cyc, block_length=blk), draw)


def timeline_explorer() -> ipywidgets.VBox:
    """``num_parallel_calls``, ``prefetch`` and the training step time, re-run on each change."""
    import ipywidgets as w

    from datakit.perf import timeline

    npc = w.IntSlider(1, 1, 4, description="num_parallel_calls")
    pf = w.IntSlider(0, 0, 3, description="prefetch")
    st = w.IntSlider(10, 0, 40, step=5, description="step (ms)")

    def draw(num_parallel_calls: int, prefetch: int, step_ms: int) -> None:
        tl = timeline_data(num_parallel_calls, prefetch, step_ms / 1000)
        timeline.plot_timeline(tl, title=f"map(num_parallel_calls={num_parallel_calls})"
                               + (f".prefetch({prefetch})" if prefetch else ", no prefetch")
                               + f": {tl.finished[-1]:.2f} s")

    return _panel([npc, pf, st], dict(num_parallel_calls=npc, prefetch=pf, step_ms=st), draw)
