"""The interleave cycle, opened up: which input (file) and which line each element came from.

:func:`interleave_steps` is ``tf.data``'s interleave algorithm in plain Python
(the glass box's ``Dataset.interleave`` calls it). It keeps ``cycle_length``
slots; it takes ``block_length`` elements from the slot it is at, then moves
to the next slot. An empty slot is filled with the next input when the cycle
reaches it; an exhausted one is closed and the cycle moves on (the next input
takes that slot on the next visit). ``cycle_length=None`` means AUTOTUNE:
the number of CPU cores.

>>> steps = list(interleave_steps([3, 1, 2], lambda n: range(10 * n, 10 * n + n),
...                               cycle_length=2, block_length=2))
>>> [s.value for s in steps]
[30, 31, 10, 32, 20, 21]
>>> [(s.input, s.position, s.slot) for s in steps][:3]
[(0, 0, 0), (0, 1, 0), (1, 0, 1)]

:func:`trace_sources` does the same bookkeeping for a *real* ``tf.data``
pipeline over text files (it tags every line with its file and line
number), and :func:`plot_sources` draws the result as a strip, one colour per
file, so you can see the cycle and the blocks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from datakit import plotting
from datakit.glassbox import AUTOTUNE



def cpu_cores() -> int:
    """The number of CPU cores this process may use (TensorFlow's ``MaxParallelism``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def default_cycle_length(num_parallel_calls: int | None = None) -> int:
    """What ``cycle_length=None`` (AUTOTUNE) becomes in TensorFlow 2.21.

    Sequential interleave: the number of cores. ``num_parallel_calls=n``:
    ``min(n, cores)``. ``num_parallel_calls=AUTOTUNE``: ``ceil(cores / 3)``
    (each cycle slot gets ~3 threads: its own and 2 prefetching the next
    inputs), so on a 2-core machine just 1.

    >>> default_cycle_length(1)
    1
    """
    cores = cpu_cores()
    if num_parallel_calls is None:
        return cores
    if num_parallel_calls == AUTOTUNE:
        return -(-cores // 3)
    return min(int(num_parallel_calls), cores)


def check_arguments(cycle_length: int | None, block_length: int | None,
                    num_parallel_calls: int | None = None) -> tuple[int, int]:
    """Validate interleave arguments; return the effective ``(cycle_length, block_length)``."""
    if num_parallel_calls is not None and _check(
            "num_parallel_calls", num_parallel_calls, allow_auto=True) != AUTOTUNE:
        num_parallel_calls = int(num_parallel_calls)
    block = 1 if block_length is None else _check("block_length", block_length, allow_auto=False)
    if cycle_length is None or _check("cycle_length", cycle_length, allow_auto=True) == AUTOTUNE:
        return default_cycle_length(num_parallel_calls), block
    if num_parallel_calls not in (None, AUTOTUNE) and num_parallel_calls > cycle_length:
        raise ValueError(
            f"num_parallel_calls={num_parallel_calls} is more than cycle_length={cycle_length}: "
            "at most one call per open input; lower it or pass tf.data.AUTOTUNE.")
    return int(cycle_length), block


@dataclass
class InterleaveStep:
    """One output element of an interleave and where it came from."""

    value: Any
    #: Position of the input element (e.g. the file) in the input stream.
    input: int
    #: Position of the value within that input's dataset.
    position: int
    #: The cycle slot it was read from.
    slot: int


@dataclass
class SlotEvent:
    """An input's stay in a cycle slot: opened before output ``opened``, closed before ``closed``."""

    input: int
    slot: int
    opened: int   # outputs emitted before it was opened
    closed: int   # outputs emitted before it was found exhausted (== opened: it gave nothing)


def cycle_events(lengths: Iterable[int], cycle_length: int | None = None,
                 block_length: int | None = 1) -> list[SlotEvent]:
    """Which slot each input occupied, and when, for inputs of the given lengths.

    An empty input is opened and closed at once: it still takes its turn.

    >>> [(e.input, e.slot, e.opened, e.closed) for e in cycle_events([2, 0, 1], 2)]
    [(0, 0, 0, 3), (1, 1, 1, 1), (2, 1, 2, 3)]
    """
    cycle, block = check_arguments(cycle_length, block_length)
    events: list[SlotEvent] = []
    for _ in _steps(list(lengths), range, cycle, block, events):
        pass
    return events


def _check(name: str, value: Any, allow_auto: bool) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if int(value) < 1 and not (allow_auto and int(value) == AUTOTUNE):
        raise ValueError(f"{name}={value} is invalid: pass an int >= 1"
                         + (" (or None / tf.data.AUTOTUNE)." if allow_auto else "."))
    return int(value)


def interleave_steps(inputs: Iterable[Any], map_func: Callable[[Any], Iterable[Any]],
                     cycle_length: int | None = None, block_length: int | None = 1,
                     num_parallel_calls: int | None = None) -> Iterator[InterleaveStep]:
    """tf.data's interleave order: yield each element with its input, position and slot.

    ``num_parallel_calls`` matters only for what ``cycle_length=None`` becomes
    (:func:`default_cycle_length`); the order is the same, parallel or not.
    """
    cycle, block = check_arguments(cycle_length, block_length, num_parallel_calls)
    return _steps(inputs, map_func, cycle, block)


def _steps(inputs, map_func, cycle: int, block: int,
           events: list | None = None) -> Iterator[InterleaveStep]:
    """The algorithm; ``events`` (if a list) collects a :class:`SlotEvent` per input opened."""
    source = iter(enumerate(inputs))
    slots: list[tuple[int, Iterator[Any], list[int]] | None] = [None] * cycle
    end_of_input, n_open, index, in_block, emitted = False, 0, 0, 0, 0
    opened: dict[int, SlotEvent] = {}

    def advance():
        nonlocal index, in_block
        index, in_block = (index + 1) % cycle, 0

    while not end_of_input or n_open > 0:
        current = slots[index]
        if current is not None:
            pos, it, count = current
            try:
                value = next(it)
            except StopIteration:
                slots[index] = None
                n_open -= 1
                if events is not None:
                    opened[pos].closed = emitted
                advance()
                continue
            yield InterleaveStep(value, pos, count[0], index)
            emitted += 1
            count[0] += 1
            in_block += 1
            if in_block == block:
                advance()
        elif not end_of_input:
            try:
                pos, x = next(source)
            except StopIteration:
                end_of_input = True
                continue
            slots[index] = (pos, iter(map_func(x)), [0])
            n_open += 1
            if events is not None:
                opened[pos] = SlotEvent(pos, index, emitted, emitted)
                events.append(opened[pos])
        else:
            advance()


# -- a real tf.data pipeline ------------------------------------------------------


@dataclass
class SourceTrace:
    """For each element a real interleave emitted: the file (index into ``files``) and line."""

    files: list[str]
    file: np.ndarray
    line: np.ndarray
    cycle_length: int
    block_length: int
    #: The cycle slot of each element, and each file's stay in its slot (:class:`SlotEvent`),
    #: from the interleave algorithm, kept only when it gives the order observed (None if not).
    slot: np.ndarray | None = None
    events: list = field(default_factory=list)


def numbered_lines(path, skip_header: bool = True):
    """``(path, line number, line)`` for each line of a text file (1-based numbers)."""
    import tensorflow as tf
    lines = tf.data.TextLineDataset(path)
    numbers = tf.data.Dataset.range(1, np.iinfo(np.int64).max)
    paths = tf.data.Dataset.from_tensors(path).repeat()
    ds = tf.data.Dataset.zip((paths, numbers, lines))
    return ds.skip(1) if skip_header else ds


def trace_sources(files, *, cycle_length: int | None = None, block_length: int = 1,
                  num_parallel_calls: int | None = None, deterministic: bool | None = None,
                  skip_header: bool = True, max_elements: int | None = None) -> SourceTrace:
    """Run ``from_tensor_slices(files).interleave(lines of each file)`` and record the sources.

    ``files`` are read in the order given (use ``tf.data.Dataset.list_files``
    and a seed, or ``sorted``, to choose it). Each file gets a colour; lines
    are numbered from 1 (the header, when skipped, is line 1).
    """
    import tensorflow as tf
    files = [str(f) for f in files]
    for f in files:
        if not os.path.isfile(f):
            raise FileNotFoundError(f"{f}: no such file.")
    cycle, _ = check_arguments(cycle_length, block_length, num_parallel_calls)
    ds = tf.data.Dataset.from_tensor_slices(files).interleave(
        lambda f: numbered_lines(f, skip_header), cycle_length=cycle, block_length=block_length,
        num_parallel_calls=num_parallel_calls, deterministic=deterministic)
    if max_elements is not None:
        ds = ds.take(max_elements)
    index = {f: i for i, f in enumerate(files)}
    file, line = [], []
    for path, number, _ in ds.as_numpy_iterator():
        file.append(index[path.decode()])
        line.append(int(number))
    trace = SourceTrace(files, np.array(file, dtype=int), np.array(line, dtype=int),
                        cycle, block_length)
    _add_slots(trace, skip_header)
    return trace


def _add_slots(trace: SourceTrace, skip_header: bool) -> None:
    """Fill ``trace.slot``/``events`` from the algorithm if it reproduces the observed order."""
    lengths = []
    for f in trace.files:
        with open(f, "rb") as fh:
            lengths.append(max(sum(1 for _ in fh) - int(skip_header), 0))
    events: list[SlotEvent] = []
    steps = list(_steps(lengths, range, trace.cycle_length, trace.block_length, events))
    steps = steps[:len(trace.file)]
    expected = [(s.input, s.position + 1 + int(skip_header)) for s in steps]
    if expected == list(zip(trace.file.tolist(), trace.line.tolist())):
        trace.slot = np.array([s.slot for s in steps], dtype=int)
        trace.events = [e for e in events if e.opened <= len(steps)]


def plot_sources(trace: SourceTrace, ax=None, *, labels: list[str] | None = None,
                 title: str | None = None):
    """Draw the output order: one lane per cycle slot, one cell per element, coloured by file.

    The number in each cell is the line number within its file. A file that
    gave nothing (empty) is drawn as a hatched mark where it took its slot.
    Without slot information (``deterministic=False``) all cells share one lane.
    """
    from matplotlib.patches import Patch
    with plotting.style():
        n = len(trace.file)
        lanes = trace.cycle_length if trace.slot is not None else 1
        ax = plotting.new_axes(ax, figsize=(min(12, 2.5 + 0.35 * n), 1.2 + 0.45 * lanes))
        names = labels or [os.path.basename(f) for f in trace.files]
        slot = trace.slot if trace.slot is not None else np.zeros(n, dtype=int)
        for i, (f, ln, k) in enumerate(zip(trace.file, trace.line, slot)):
            ax.add_patch(plotting.plt.Rectangle((i, k), 1, 0.9, facecolor=plotting.epoch_color(f),
                                                edgecolor="white", linewidth=1.5))
            if n <= 40:
                ax.text(i + 0.5, k + 0.45, str(ln), ha="center", va="center", color="white",
                        fontsize=8, fontweight="bold")
        empty = [e for e in trace.events if e.closed == e.opened] if trace.slot is not None else []
        for e in empty:
            ax.add_patch(plotting.plt.Rectangle((e.opened - 0.15, e.slot), 0.3, 0.9,
                                                facecolor="white", hatch="xxx",
                                                edgecolor=plotting.epoch_color(e.input)))
            ax.text(e.opened, e.slot - 0.05, f"{names[e.input]}: empty", ha="center",
                    va="bottom", fontsize=7, color=plotting.epoch_color(e.input))
        ax.set_xlim(-0.3, max(n, 1) + 0.3)
        ax.set_ylim(lanes + 0.1, -0.45)
        if trace.slot is not None:
            ax.set_yticks([k + 0.45 for k in range(lanes)], [f"slot {k}" for k in range(lanes)])
            ax.tick_params(axis="y", length=0)
        else:
            ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.set_xlabel("output position (number in a cell: line number in its file)")
        ax.set_title(title or f"interleave: cycle_length={trace.cycle_length}, "
                              f"block_length={trace.block_length}")
        used = sorted(set(trace.file.tolist()) | {e.input for e in empty})
        ax.legend(handles=[Patch(color=plotting.epoch_color(i), label=names[i]) for i in used],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return ax
