"""tf.data's interleave cycle in plain Python: which input, position and slot each element has.

:func:`interleave_steps` keeps ``cycle_length`` slots; it takes
``block_length`` elements from the slot it is at, then moves to the next
slot. An empty slot is filled with the next input when the cycle reaches it;
an exhausted one is closed and the cycle moves on (the next input takes that
slot on the next visit). ``cycle_length=None`` means AUTOTUNE: the number of
CPU cores (:func:`datakit.core.arguments.default_cycle_length`).

>>> steps = list(interleave_steps([3, 1, 2], lambda n: range(10 * n, 10 * n + n),
...                               cycle_length=2, block_length=2))
>>> [s.value for s in steps]
[30, 31, 10, 32, 20, 21]
>>> [(s.input, s.position, s.slot) for s in steps][:3]
[(0, 0, 0), (0, 1, 0), (1, 0, 1)]
>>> interleave_steps([1], range, cycle_length=1,  # doctest: +NORMALIZE_WHITESPACE
...                  num_parallel_calls=2)
Traceback (most recent call last):
    ...
ValueError: num_parallel_calls=2 is more than cycle_length=1: at most one call per open input; lower
it or pass tf.data.AUTOTUNE.

The glass box's ``Dataset.interleave`` runs it; :mod:`datakit.see.interleave`
traces and draws real ``tf.data`` runs. This module sits at the bottom of the
import graph: it imports only :mod:`datakit.core.arguments`, and no TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from datakit.core.arguments import interleave_lengths

__all__ = ["interleave_steps"]


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
    """An input's stay in a slot: opened before output ``opened``, closed before ``closed``."""

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
    cycle, block, _ = interleave_lengths(cycle_length, block_length, None)
    events: list[SlotEvent] = []
    for _ in cycle_steps(list(lengths), range, cycle, block, events):
        pass
    return events


def interleave_steps(inputs: Iterable[Any], map_func: Callable[[Any], Iterable[Any]],
                     cycle_length: int | None = None, block_length: int | None = 1,
                     num_parallel_calls: int | None = None) -> Iterator[InterleaveStep]:
    """tf.data's interleave order: yield each element with its input, position and slot.

    Arguments are checked when called, before iterating.

    Args:
        inputs: the input elements (e.g. file names).
        map_func: makes an iterable (the "dataset") of each input.
        cycle_length: inputs open at once; ``None`` or AUTOTUNE: tf.data's choice.
        block_length: elements taken from an input before moving on.
        num_parallel_calls: matters only for what ``cycle_length=None``
            becomes (:func:`datakit.core.arguments.default_cycle_length`); the order is
            the same, parallel or not.

    Raises:
        TypeError, ValueError: see :func:`datakit.core.arguments.interleave_lengths`.
    """
    cycle, block, _ = interleave_lengths(cycle_length, block_length, num_parallel_calls)
    return cycle_steps(inputs, map_func, cycle, block)


def cycle_steps(inputs: Iterable[Any], map_func: Callable[[Any], Iterable[Any]],
                cycle: int, block: int, events: list | None = None) -> Iterator[InterleaveStep]:
    """The cycle itself, for lengths already checked (by ``interleave_lengths``).

    ``events``, if a list, collects a :class:`SlotEvent` for every input opened.
    """
    source = iter(enumerate(inputs))
    slots: list[tuple[int, Iterator[Any], list[int]] | None] = [None] * cycle
    end_of_input, n_open, index, in_block, emitted = False, 0, 0, 0, 0
    opened: dict[int, SlotEvent] = {}

    def advance() -> None:
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
