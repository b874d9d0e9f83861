"""TensorFlow's shuffle-buffer algorithm in plain Python, with pluggable random draws.

``Dataset.shuffle(buffer_size)`` keeps a buffer of ``buffer_size`` slots. It
fills the buffer with the first elements, then, for every output, picks a
random slot, emits its element and lets the next input element in; at the
end of the input it drains what is left. :func:`buffer_steps` runs it and
yields every pick with the buffer it was made from; ``choose`` makes the
draws (:func:`replay_picks` replays recorded ones, e.g. TensorFlow's):

>>> [p.value for p in buffer_steps("abcd", 2, replay_picks([1, 0, 1, 0]))]
['b', 'a', 'd', 'c']
>>> list(buffer_steps("abc", 0, replay_picks([])))  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
ValueError: buffer_size=0 is invalid: the buffer must hold at least one element, so pass buffer_size
>= 1 (1 means no shuffling).

The glass box's ``Dataset.shuffle`` runs it (:func:`shuffle_op` builds the op,
whose steps are :class:`ShuffleStep`); :mod:`datakit.see.shuffle` traces and
draws real ``tf.data`` runs with it. This module imports only
:mod:`datakit.core.arguments` and the glass box's bottom modules, and no TensorFlow.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from datakit.core.arguments import check_count, check_seed
from datakit.glassbox.elements import Step
from datakit.glassbox.recording import Op, Recorder, check_name

__all__ = ["Pick"]


def check_buffer_size(buffer_size: Any) -> int:
    """``buffer_size`` as an int >= 1 (``TypeError`` / ``ValueError`` otherwise)."""
    return check_count("buffer_size", buffer_size, fix="the buffer must hold at least one "
                       "element, so pass buffer_size >= 1 (1 means no shuffling)")


class Pick(NamedTuple):
    """One output step of the shuffle buffer."""

    position: int          # input position of the element emitted
    value: Any
    slot: int              # slot it was taken from
    slots: tuple           # input position in every slot before the pick (None: empty)
    entered: tuple         # input positions that came in just before this pick
    offset: int            # the random draw: slot = (head + offset) % buffer_size
    size: int              # elements held when picking


#: ``choose(n, slots, head) -> offset`` in ``[0, n)``.
Chooser = Callable[[int, tuple, int], int]


def buffer_steps(values: Iterable[Any], buffer_size: int, choose: Chooser) -> Iterator[Pick]:
    """Run TensorFlow's shuffle-buffer algorithm; ``choose`` makes the random draws.

    >>> # pick slot 1 ('b'): 'a' (the head) moves into slot 1, 'c' enters slot 0
    >>> [p.slots for p in buffer_steps("abc", 2, replay_picks([1, 0, 0]))]
    [(0, 1), (2, 0), (2, None)]
    """
    size = check_buffer_size(buffer_size)
    return _steps(values, size, choose)


def _steps(values: Iterable[Any], size: int, choose: Chooser) -> Iterator[Pick]:
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
        assert pos is not None, "the n slots from the head on all hold an element"
        slots[slot], slots[head % size] = slots[head % size], None
        head += 1
        yield Pick(pos, live.pop(pos), slot, before, tuple(entered), offset, n)


def replay_picks(picks: Iterable[int]) -> Chooser:
    """A chooser that replays recorded draws (e.g. ``BufferTrace.offsets`` of TF)."""
    it = iter(picks)

    def choose(n: int, _slots: Any, _head: Any) -> int:
        try:
            return next(it)
        except StopIteration:
            raise ValueError("picks ran out: pass one pick per output element") from None

    return choose


def rng_chooser(rng: np.random.Generator) -> Chooser:
    """A chooser that draws uniformly with a NumPy generator."""
    return lambda n, _slots, _head: int(rng.integers(n))


@dataclass
class ShuffleStep(Step):
    """A glass-box shuffle output, with the buffer it was picked from."""

    slots: tuple = ()      # input position in each slot before the pick (None: empty)
    slot: int = -1         # the slot picked
    entered: tuple = ()    # input positions that entered just before this pick


def shuffle_op(buffer_size: int, seed: int | None = None, reshuffle_each_iteration: bool = True,
               *, picks: Iterable[int] | None = None, name: str | None = None) -> Op:
    """The glass box's ``shuffle``: NumPy draws from ``(seed, iteration)``, or ``picks`` replayed.

    >>> shuffle_op(4, seed=2**64)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: seed=18446744073709551616 is outside the int64 range TensorFlow stores seeds in ...
    """
    size = check_buffer_size(buffer_size)
    seed = check_seed(seed)  # any int64, as tf.data takes (-1 included): as an unsigned seed
    check_name("shuffle", name)
    picks = None if picks is None else list(picks)
    base = seed % 2**64 if seed is not None else secrets.randbits(128)  # SeedSequence()'s entropy
    started = [0]  # iterations started so far; a trace() does not use them up

    def run(parent: Callable[[], Iterator[Any]] | None, rec: Recorder) -> Iterator[Any]:
        assert parent is not None  # a shuffle has an input
        k = rec.iteration(started)
        choose = (replay_picks(picks) if picks is not None else rng_chooser(
            np.random.default_rng([base, k if reshuffle_each_iteration else 0])))
        for p in buffer_steps(parent(), size, choose):
            rec.append(ShuffleStep(p.value, (p.position,), None, p.slots, p.slot, p.entered))
            yield p.value

    shown = [str(size)] + ([f"seed={seed}"] if seed is not None else [])
    if not reshuffle_each_iteration:
        shown.append("reshuffle_each_iteration=False")
    return Op(run, f"shuffle({', '.join(shown)})", "shuffle",
              dict(buffer_size=size, seed=seed,
                   reshuffle_each_iteration=bool(reshuffle_each_iteration)))
