"""What a glass-box op is, and what it records while a chain is traced.

An :class:`Op` is a generator function with its display name, its kind (the
``Dataset`` method that made it) and its arguments. Its generator takes the
parent's iterator factory and a recorder, yields values, and appends a
:class:`~datakit.glassbox.elements.Step` for each: when the chain is traced
the recorder keeps them, otherwise it is :data:`NO_RECORDER`, which drops
them, so no op asks whether it is being traced:

>>> def evens(parent, rec):
...     for pos, x in enumerate(parent()):
...         if x % 2 == 0:
...             rec.append(Step(x, (pos,)))
...             yield x
>>> rec = Recorder()
>>> list(evens(lambda: iter([3, 4, 6]), rec)), [s.sources for s in rec]
([4, 6], [(1,), (2,)])
>>> list(evens(lambda: iter([3, 4, 6]), NO_RECORDER))
[4, 6]

Where the glass box takes a ``tf.data`` argument it cannot honour, it says
so, as ``tf.data`` warns about the arguments it ignores (:func:`warn_ignored`).
This module imports only :mod:`datakit.glassbox.elements`, and no TensorFlow.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from datakit.glassbox.elements import Step

__all__ = ["Op"]

#: An op's input: ``parent()`` starts a pass over it (``None`` for a source).
Parent = Callable[[], Iterator[Any]] | None
#: An op's generator: ``run(parent, rec)``, ``parent()`` starting a pass over the input.
OpRun = Callable[[Parent, "Recorder"], Iterator[Any]]


@dataclass(frozen=True)
class Op:
    """One op of a chain: its generator, display name, kind and checked arguments."""

    run: OpRun
    name: str
    #: The ``Dataset`` method that made it (``"batch"``, ``"repeat"``, ...).
    kind: str
    #: The arguments that decide what it emits, after checking (see :class:`OpTrace`).
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class OpTrace:
    """What one op of a chain emitted, in order.

    ``args`` holds the arguments that decide which elements the op emits, as
    checked (counts, sizes, shapes, padding, seeds, weights, flags, file
    names): not the functions or datasets it takes (its ``name`` shows them),
    nor the speed settings (``num_parallel_calls``, ``deterministic``), nor
    ``name=``. It is empty for an op that has none (``map``, ``unbatch``).
    """

    name: str
    steps: list[Step] = field(default_factory=list)
    #: The method that made the op (``"batch"``, ``"repeat"``, ...).
    kind: str = ""
    #: Its arguments as passed (after checking), by name.
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def values(self) -> list[Any]:
        return [s.value for s in self.steps]


class Recorder(list):
    """The steps one op emitted while tracing.

    An op records ``sources`` as positions in its current pass over the
    input; ``offset`` (set when a pass starts) turns them into positions in
    the input's whole recorded stream.
    """

    offset = 0
    passes = 0

    def append(self, step: Step) -> None:
        if self.offset:
            step.sources = tuple(s + self.offset for s in step.sources)
        super().append(step)

    def iteration(self, started: list[int]) -> int:
        """The iteration a new pass is: a trace counts from ``started[0]`` without using it up."""
        self.passes += 1
        return started[0] + self.passes - 1


class _NoRecorder(Recorder):
    """The recorder of a chain that is iterated, not traced: it keeps nothing."""

    def append(self, step: Step) -> None:
        pass

    def iteration(self, started: list[int]) -> int:
        started[0] += 1
        return started[0] - 1

    def __setattr__(self, name: str, value: Any) -> None:
        pass  # shared by every op: a pass's offset is of no use to it


#: What every op records into when the chain is iterated rather than traced.
NO_RECORDER = _NoRecorder()


class Recorders(dict):
    """The recorder of every op of a chain being traced, by op."""

    def of(self, node: Any) -> Recorder:
        return self.setdefault(id(node), Recorder())


class _NotTracing(Recorders):
    """Recorders that keep nothing: every op gets :data:`NO_RECORDER`."""

    def of(self, node: Any) -> Recorder:
        return NO_RECORDER


#: The :class:`Recorders` of a chain that is iterated: :data:`NO_RECORDER` for every op.
NOT_TRACING = _NotTracing()


class IgnoredArgumentWarning(UserWarning):
    """The glass box was given a ``tf.data`` argument that it does not use."""


def warn_ignored(method: str, argument: str, value: Any, why: str, stacklevel: int = 1) -> None:
    """Warn that ``method`` ignores ``argument=value`` in the glass box, and why.

    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_ignored("map", "name", "parse", "tf.data names its graph op with it")
    >>> print(caught[0].message)
    map(name='parse'): the glass box ignores this argument (tf.data names its graph op with it).
    """
    warnings.warn(f"{method}({argument}={value!r}): the glass box ignores this argument "
                  f"({why}).", IgnoredArgumentWarning, stacklevel=stacklevel + 1)


# check_name <- the op's builder <- the Dataset method <- the learner's line (the warning's)
_CALLER = 4


def check_callable(method: str, arg: str, func: Any) -> None:
    """A ``TypeError`` naming ``arg`` when ``func`` cannot be called (as tf.data refuses it)."""
    if not callable(func):
        raise TypeError(f"{method}() {arg} must be a function, got {func!r}: pass e.g. "
                        f"lambda x: x * 2")


def check_name(method: str, name: str | None) -> None:
    """Warn when ``name=`` is given: the glass box has no graph to name an op in."""
    if name is not None:
        warn_ignored(method, "name", name, "tf.data uses it to name the op in its graph",
                     _CALLER)


def check_deterministic(method: str, deterministic: bool | None,
                        num_parallel_calls: int | None) -> None:
    """Warn about ``deterministic=``: the twin always keeps the order (tf.data warns too)."""
    if deterministic is None:
        return
    if num_parallel_calls is None:
        warn_ignored(method, "deterministic", deterministic, "as in tf.data, it has no effect "
                     "unless num_parallel_calls is given", _CALLER)
    elif not deterministic:
        warn_ignored(method, "deterministic", deterministic,
                     "the twin always keeps the input order, as deterministic=True does",
                     _CALLER)
