"""Runs of a pipeline that can be abandoned: a deadline instead of a wait that never ends.

A ``for`` loop over a pipeline that never yields (a ``filter`` that drops every element
of an endless input, a generator that blocks) waits forever. :func:`bounded_run` takes
the elements in a worker thread, each through a ``tf.function`` call that TensorFlow's
eager cancellation can stop; when no element comes within ``patience`` seconds it
cancels the call, which ends any loop inside the runtime (no thread is left spinning),
and says so (``stalled``). :func:`call_with_deadline` does the same for any function
that runs a pipeline inside a ``tf.function`` (``measure``). Python code of yours that
blocks (a generator waiting on a socket) cannot be cancelled: its thread is a daemon,
stays blocked without using the CPU, and does not hold up the interpreter's exit.
:func:`stuck_stage` names the first stage of a chain that yields nothing in time.

The cancellation context TensorFlow offers is one for the process: while a run waits,
``tf.function`` calls made in other threads could be cancelled with it. The memory
report runs nothing else meanwhile.

>>> import tensorflow as tf
>>> bounded_run(tf.data.Dataset.range(5), patience=5.0).count
5
>>> never = tf.data.Dataset.range(1).repeat().filter(lambda x: x < 0, name="drop_all")
>>> run = bounded_run(never, patience=2.0)
>>> run.count, run.ended, run.stalled
(0, False, True)
>>> from datakit.perf.chain import chain_of, stage_facts
>>> stuck_stage(stage_facts(chain_of(never)), patience=2.0)
(2, 'drop_all')
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf
from tensorflow.python.eager import cancellation

from datakit.perf.chain import StageFacts
from datakit.perf.synthetic import serial

__all__ = ["stuck_stage"]


class Stalled(TimeoutError):
    """No element came within the time the caller gave: the pipeline waits, or spins."""


@dataclass
class BoundedRun:
    """What a :func:`bounded_run` got."""

    count: int = 0
    ended: bool = False      # the pipeline ended
    stalled: bool = False    # no element came within ``patience``: the wait was cancelled
    seconds: float = 0.0     # from the start to the last element
    kept: list = field(default_factory=list)  # the first ``keep`` elements: their NumPy parts
    error: BaseException | None = None


def _finish(worker: threading.Thread, manager: Any, progress: Callable[[], float],
            patience: float) -> bool:
    """Wait for ``worker`` while it makes progress; cancel it after ``patience`` without any.

    True when it was cancelled (stalled)."""
    while worker.is_alive():
        worker.join(min(0.05, patience))
        if worker.is_alive() and time.perf_counter() - progress() > patience:
            manager.start_cancel()
            worker.join(1.0)  # a cancelled runtime call returns at once; Python code may not
            _leave_context(manager)
            return True
    return False


def _leave_context(manager: Any) -> None:
    """Leave ``manager``'s cancellation context for a worker stuck in Python code (a
    generator that blocks): it never leaves it itself, and the context is the process's,
    so every ``tf.function`` called after, in any thread, would start cancelled."""
    if cancellation.context() is manager:
        with cancellation.CancellationManagerContext(None):  # its exit sets no context
            pass


def call_with_deadline(fn: Callable[[], Any], patience: float) -> tuple[Any, bool]:
    """``(fn(), False)``, or ``(None, True)`` when it did not return within ``patience``
    seconds (its ``tf.function`` calls are then cancelled). Its errors are raised here."""
    manager = cancellation.CancellationManager()
    out: dict = {}
    start = time.perf_counter()

    def work() -> None:
        try:
            with cancellation.CancellationManagerContext(manager):
                out["value"] = fn()
        except BaseException as e:  # handed to the caller's thread
            out["error"] = e

    worker = threading.Thread(target=work, daemon=True, name="datakit-deadline")
    worker.start()
    if _finish(worker, manager, lambda: start, patience):
        return None, True
    if "error" in out:
        raise out["error"]
    return out["value"], False


def _one_step(spec: Any) -> Any:
    """A function that takes one element of an iterator (as an optional)."""
    return tf.function(lambda it: it.get_next_as_optional()).get_concrete_function(
        tf.data.IteratorSpec(spec))


def _many_steps(spec: Any) -> Any:
    """A function that takes up to ``k`` elements of an iterator, inside the runtime:
    ``(taken, more)`` (``more`` False once it ended)."""
    def drain(it: Any, k: tf.Tensor) -> Any:
        def body(i: tf.Tensor, more: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            got = it.get_next_as_optional().has_value()
            return i + tf.cast(got, tf.int64), got
        return tf.while_loop(lambda i, more: more & (i < k), body,
                             (tf.constant(0, tf.int64), tf.constant(True)))
    return tf.function(drain).get_concrete_function(
        tf.data.IteratorSpec(spec), tf.TensorSpec([], tf.int64))


class _Taker:
    """Takes the elements for :func:`bounded_run`: one by one while paced, then in chunks
    sized to last about 0.1 s each (so that ``patience`` still sees progress)."""

    def __init__(self, dataset: tf.data.Dataset, run: BoundedRun, manager: Any, keep: int,
                 fast: bool, keep_as: Callable[[list], Any] | None = None) -> None:
        self.run, self.manager, self.keep, self.chunk = run, manager, keep, 16
        self.keep_as = keep_as or (lambda parts: parts)
        self.one = _one_step(dataset.element_spec)  # traced before any measuring starts
        self.many = _many_steps(dataset.element_spec) if fast else None

    def take_one(self, it: Any) -> bool:
        with cancellation.CancellationManagerContext(self.manager):
            got = self.one(it)
        if not got.has_value():
            return False
        self.run.count += 1
        if len(self.run.kept) < self.keep:
            self.run.kept.append(self.keep_as([t.numpy() for t in tf.nest.flatten(
                got.get_value(), expand_composites=True)]))
        return True

    def take_many(self, it: Any) -> bool:
        assert self.many is not None  # made with fast=True
        t0 = time.perf_counter()
        with cancellation.CancellationManagerContext(self.manager):
            n, more = self.many(it, tf.constant(self.chunk, tf.int64))
        self.run.count += int(n)
        took = time.perf_counter() - t0
        self.chunk = min(self.chunk * 2, 1 << 16) if took < 0.05 else \
            max(self.chunk // 2, 1) if took > 0.2 else self.chunk
        return bool(more)


def _pause(seconds: float, stop: threading.Event, last: list) -> None:
    """Wait ``seconds`` on purpose, keeping ``last`` (the progress mark) fresh: not a stall."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end and not stop.is_set():
        time.sleep(0.01)
        last[0] = time.perf_counter()


def bounded_run(dataset: tf.data.Dataset, *, patience: float,
                until: Callable[[int, float], bool] | None = None,
                keep: int = 0, step_time: float = 0.0, paced_for: float = math.inf,
                fast: bool = False, before: Callable[[], object] | None = None,
                fill_pause: float = 0.0,
                keep_as: Callable[[list], Any] | None = None) -> BoundedRun:
    """Take the elements of ``dataset`` until it ends, ``until(count, seconds)`` is true, or
    no element comes for ``patience`` seconds (then ``stalled``).

    For the first ``paced_for`` seconds it takes them one at a time, waiting ``step_time``
    after each (as a training loop would); then, with ``fast``, in chunks inside the runtime
    (``until`` is asked between chunks). ``before`` is called once its functions are traced,
    just before the first element is asked for (the memory report starts measuring there).
    ``keep_as``: what is kept of each of the first ``keep`` elements (default: its NumPy
    parts; a size, so that only one element is held at a time). ``fill_pause``: seconds it
    waits after the first element, as a first training step
    (traced, slow) does, so that the pipeline's buffers fill.
    Errors of the pipeline are raised here, in the caller's thread."""
    manager = cancellation.CancellationManager()
    run, stop = BoundedRun(), threading.Event()
    taker = _Taker(dataset, run, manager, keep, fast, keep_as)
    if before is not None:
        before()
    start = time.perf_counter()
    last = [start]

    def work() -> None:
        try:
            it = iter(dataset)
            while not stop.is_set():
                paced = run.seconds < paced_for
                more = taker.take_many(it) if fast and not paced else taker.take_one(it)
                last[0] = time.perf_counter()
                run.seconds = last[0] - start
                if not more:
                    run.ended = True
                    return
                if until is not None and until(run.count, run.seconds):
                    return
                if fill_pause and run.count == 1:
                    _pause(fill_pause, stop, last)
                if step_time and paced:
                    time.sleep(step_time)
                    last[0] = time.perf_counter()
        except BaseException as e:  # handed to the caller's thread
            run.error = e

    worker = threading.Thread(target=work, daemon=True, name="datakit-bounded-run")
    worker.start()
    run.stalled = _finish(worker, manager, lambda: last[0], patience)
    stop.set()
    if run.error is not None and not run.stalled:
        raise run.error
    return run


def stage_label(chain: list[StageFacts], k: int) -> str:
    """The stage's ``name=``, else its kind and place: ``"filter #2"`` (``from_generator``
    by that name, not as the ``flat_map`` TensorFlow builds it with). ``chain``: the stage
    records of a chain (:func:`datakit.perf.chain.stage_facts`)."""
    kind = "from_generator" if chain[k].generator else chain[k].kind
    return chain[k].name or f"{kind} #{k}"


def stalled_error(func: str, error: object, chain: list[StageFacts], patience: float,
                  deadline: float, budget_name: str = "budget") -> Stalled:
    """The error of ``func``'s run that waited in vain, naming the first stage that yields
    nothing (looked for in what is left of the budget, at least half a second a stage)."""
    patience = max(0.5, min(patience, deadline - time.perf_counter()))
    stuck = stuck_stage(chain, patience)
    where = (f"the first stage that yields nothing in {patience:.1f} s is {stuck[1]!r}"
             if stuck else "each stage alone yields its first element in time: the wait "
             "comes later in the epoch")
    return Stalled(f"{func}(): {error}; {where}. A loop over this pipeline would wait "
                   "as long: look at that stage (a filter that drops every element of an "
                   f"endless input, a generator that blocks), or pass a longer {budget_name}= "
                   "if its elements are only slow. Nothing was measured.")


def stuck_stage(chain: list[StageFacts], patience: float) -> tuple[int, str] | None:
    """``(index, label)`` of the first stage of ``chain`` whose first element does not come
    within ``patience`` seconds, or None when each stage yields one (or ends) in time."""
    for k in range(len(chain)):
        if bounded_run(serial(chain[k].dataset), patience=patience,
                       until=lambda n, _: n >= 1).stalled:
            return k, stage_label(chain, k)
    return None
