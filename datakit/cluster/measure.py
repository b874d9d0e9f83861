"""What trainers receive from a tf.data service, measured and drawn.

:func:`with_worker_pid` tags each element with the process that made it,
:class:`Trainer` reads a dataset in the background (and can pause at a fixed
element to let you kill a worker), :func:`tally` compares a multiset with
what was expected, :func:`plot_delivery` draws who received what.

>>> t = tally([0, 2, 2, 3], expected=range(4))
>>> t.missing, t.duplicated, t.exactly_once, t.at_most_once
([1], [2], False, False)
"""

from __future__ import annotations

import os
import threading
import time
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from datakit.cluster.process import NOT_A_DISPATCHER, PID_FILE, dispatcher_problem, host_port
from datakit.core.arguments import check_seconds

if TYPE_CHECKING:  # TensorFlow and Matplotlib are imported where a function needs them
    import tensorflow as tf
    from matplotlib.axes import Axes

__all__ = ["sleepy_range", "with_worker_pid", "distribute", "Trainer", "read_concurrently",
           "measure_delivery", "tally", "plot_delivery", "plot_scaling"]

_READING: weakref.WeakSet = weakref.WeakSet()  # Trainers whose epoch has not ended


def check_dispatcher(service: str, *, timeout: float = 30.0) -> str:
    """Raise ``ConnectionError`` unless something answers at ``service`` within ``timeout`` s.

    TensorFlow's ``distribute()`` blocks forever, before any timeout of yours can act,
    when no dispatcher serves the address it is given (nothing listens there, or another
    program, or a worker): check it first. It asks the dispatcher its version over gRPC
    until it answers or ``timeout`` seconds have passed (a non-dispatcher that answers
    is refused at once). Returns
    ``"host:port"``. ``service`` is ``"grpc://host:port"`` or ``"host:port"``.
    """
    if not isinstance(service, str):
        raise TypeError(f"service={service!r} must be a str: pass 'grpc://HOST:PORT' "
                        "(cluster.target), e.g. 'grpc://localhost:5050'")
    address = host_port(service)
    if address is None:
        raise ValueError(f"service={service!r}: pass 'grpc://HOST:PORT' (cluster.target), "
                         "a port in 1..65535")
    timeout = check_seconds("timeout", timeout, positive=True, func="check_dispatcher")
    deadline = time.monotonic() + timeout
    while True:
        problem = dispatcher_problem(address, max(0.5, min(2.0, deadline - time.monotonic())))
        if problem is None:
            return address
        if time.monotonic() >= deadline or problem.startswith(NOT_A_DISPATCHER):
            raise ConnectionError(f"no tf.data service dispatcher answers at {address} "
                                  f"({problem}) after {timeout:g} s: start it, or check "
                                  "the address (cluster.target)")
        time.sleep(0.2)


def distribute(processing_mode: str | tf.data.experimental.service.ShardingPolicy,
               service: str, *, timeout: float = 30.0,
               **kwargs: Any) -> Callable[[tf.data.Dataset], tf.data.Dataset]:
    """``tf.data.experimental.service.distribute(...)``, after :func:`check_dispatcher`.

    Use it with ``dataset.apply(distribute("distributed_epoch", cluster.target))``.
    """
    import tensorflow as tf

    check_dispatcher(service, timeout=timeout)
    return tf.data.experimental.service.distribute(processing_mode, service, **kwargs)


def abandon_trainers(address: str, reason: str) -> int:
    """End every running :class:`Trainer` whose pipeline reads the dispatcher at ``address``.

    Its ``join`` then raises ``RuntimeError(reason)`` instead of waiting for an epoch
    that cannot end (the reading thread itself stays blocked in TensorFlow; it is a
    daemon thread). Returns how many were ended.
    """
    key = address.encode()
    ended = 0
    for t in list(_READING):
        if not t.done.is_set() and key in t._graph:
            t.error = RuntimeError(f"{reason}; {len(t.received)} element(s) had arrived")
            t.paused.set()
            t.done.set()
            ended += 1
    return ended


def sleepy_range(n: int, seconds: float) -> tf.data.Dataset:
    """``Dataset.range(n)`` whose elements each take ``seconds`` to make, in the graph.

    A sleep holds a thread, not a core, and unlike a ``py_function`` (see
    :mod:`datakit.perf.synthetic`) it runs on a service worker, which has no Python.
    """
    import tensorflow as tf

    from datakit.perf.chain import testing_sleep

    if n < 0 or seconds < 0:
        raise ValueError(f"sleepy_range({n}, {seconds}): pass n >= 0 and seconds >= 0")
    return tf.data.Dataset.range(n).apply(testing_sleep(int(seconds * 1e6)))


#: Where Linux tells a process its own pid (the first field).
_PROC_STAT = "/proc/self/stat"


def with_worker_pid(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Pair each element with the id of the process that made it: ``(element, pid)``.

    The pid is read on the worker, inside the graph (a service worker runs no Python):
    ``/proc/self/stat`` on Linux; elsewhere (macOS, Windows) the file a
    :class:`LocalCluster`'s server writes its pid to in its own folder. Turn it into a
    worker number with :meth:`LocalCluster.worker_index`.
    """
    import tensorflow as tf

    proc = _PROC_STAT if os.path.exists(_PROC_STAT) else None

    def tag(x: Any) -> tuple[Any, tf.Tensor]:
        if proc is None:  # the LocalCluster server's own folder is its working folder
            return x, tf.strings.to_number(tf.io.read_file(PID_FILE), tf.int64)
        stat = tf.io.read_file(proc)
        return x, tf.strings.to_number(tf.strings.split(stat, " ")[0], tf.int64)

    return dataset.map(tag)


class Trainer:
    """Read a dataset in a background thread, as a trainer would; watch it from outside.

    ``received`` grows as elements arrive (Python values); ``done`` is set at
    the end of the epoch, ``error`` holds what the iterator raised. With
    ``pause_after=k`` the reader stops after exactly ``k`` elements until
    :meth:`resume` (to act at a fixed point of an epoch, e.g. kill a worker).
    """

    def __init__(self, dataset: tf.data.Dataset, *, pause_after: int | None = None) -> None:
        self.received: list = []
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.paused = threading.Event()
        self._go = threading.Event()
        self._pause_after = pause_after
        from datakit.perf.chain import serialized_graph

        try:  # which dispatcher it reads (see abandon_trainers)
            self._graph = serialized_graph(dataset)
        except Exception:  # a dataset TF cannot serialize reads no service
            self._graph = b""
        _READING.add(self)
        self._thread = threading.Thread(target=self._run, args=(dataset,), daemon=True)
        self._thread.start()

    def _run(self, dataset: tf.data.Dataset) -> None:
        try:
            for x in dataset.as_numpy_iterator():
                self.received.append(_py(x))
                if len(self.received) == self._pause_after:
                    self.paused.set()
                    self._go.wait()
        except BaseException as e:  # kept for the caller: see .error, join()
            if not self.done.is_set():  # not already ended by abandon_trainers
                self.error = e
        finally:
            _READING.discard(self)
            self.paused.set()
            self.done.set()

    def resume(self) -> None:
        self._go.set()

    def join(self, timeout: float = 300.0) -> list:
        """Wait for the end of the epoch; return ``received`` (re-raise the reader's error).

        ``timeout`` starts when ``join`` is called: a dataset built with TensorFlow's own
        ``tf.data.experimental.service.distribute(...)`` against an address where no
        dispatcher answers blocks while it is *built*, before this ``Trainer`` exists, so
        no timeout here can fire. Build it with :func:`distribute` (which checks the
        dispatcher first, within its own ``timeout``).

        Raises:
            TimeoutError: the epoch did not end within ``timeout`` seconds.
        """
        self._go.set()
        if not self.done.wait(timeout):
            raise TimeoutError(f"the epoch did not end in {timeout:.0f} s with "
                               f"{len(self.received)} elements received (is a worker dead?)")
        if self.error is not None:
            raise self.error
        return self.received


def _py(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(_py(v) for v in x)
    return x.item() if hasattr(x, "item") and getattr(x, "ndim", 1) == 0 else x


def read_concurrently(datasets: Sequence, *, timeout: float = 300.0) -> list[list]:
    """Read several datasets at once, one :class:`Trainer` each; return what each received."""
    timeout = check_seconds("timeout", timeout, positive=True, func="read_concurrently")
    trainers = [Trainer(ds) for ds in datasets]
    return [t.join(timeout) for t in trainers]


class Cluster(Protocol):
    """What :func:`measure_delivery` reads of a cluster: a
    :class:`~datakit.cluster.local.LocalCluster` (named here by what it offers, as that
    module imports this one)."""

    @property
    def target(self) -> str: ...
    @property
    def workers(self) -> Sequence[object]: ...
    @property
    def restarts(self) -> int: ...
    def worker_index(self, pid: int) -> int: ...


def measure_delivery(cluster: Cluster, dataset: tf.data.Dataset,
                     processing_mode: str | tf.data.experimental.service.ShardingPolicy, *,
                     timeout: float = 300.0, pause_after: int | None = None,
                     on_pause: Callable[[], object] | None = None,
                     **distribute_kwargs: Any) -> dict[str, list]:
    """Run ``dataset`` on ``cluster`` (a ``LocalCluster``): the elements one trainer
    received, by the worker that made them (``{"worker 0": [...], ...}``, in order of arrival).

    To act at a fixed point of the epoch (say, kill a worker once it is serving), pass
    ``pause_after=k`` and ``on_pause``: the trainer stops after ``k`` elements, calls
    ``on_pause()``, then reads on.

    Warns (``RuntimeWarning``) when a worker was restarted during the epoch in a mode
    where that delivers elements twice: the cluster counted a restart, or one worker's
    elements came from two processes."""
    import tensorflow as tf

    if (pause_after is None) != (on_pause is None):
        raise ValueError("pass pause_after and on_pause together")
    dynamic = ("distributed_epoch", tf.data.experimental.service.ShardingPolicy.DYNAMIC)
    ds = with_worker_pid(dataset).apply(distribute(
        processing_mode, cluster.target, **distribute_kwargs))
    rows: dict[str, list] = {f"worker {i}": [] for i in range(len(cluster.workers))}
    pids: dict[str, set] = {name: set() for name in rows}
    restarts = cluster.restarts
    trainer = Trainer(ds, pause_after=pause_after)
    if on_pause is not None:
        if not trainer.paused.wait(timeout):  # also set when the reading ended or failed
            raise TimeoutError(f"the epoch did not reach element {pause_after} in "
                               f"{timeout:.0f} s ({len(trainer.received)} received)")
        if not trainer.done.is_set():
            on_pause()
    for x, pid in trainer.join(timeout):
        name = f"worker {cluster.worker_index(pid)}"
        rows[name].append(x)
        pids[name].add(pid)
    restarted = max([cluster.restarts - restarts, *(len(p) - 1 for p in pids.values())])
    if restarted and processing_mode not in dynamic:
        warnings.warn(f"{restarted} worker restart(s) during this epoch: "
                      f"with processing_mode={processing_mode!r} a restarted worker starts its "
                      "part again, so elements it had sent arrived twice (count them with "
                      "tally)", RuntimeWarning, stacklevel=2)
    return rows


@dataclass
class Tally:
    """How a received multiset compares with the expected elements."""

    delivered: int
    distinct: int
    missing: list
    duplicated: list
    unexpected: list

    @property
    def exactly_once(self) -> bool:
        return not (self.missing or self.duplicated or self.unexpected)

    @property
    def at_most_once(self) -> bool:
        return not (self.duplicated or self.unexpected)


def tally(received: Iterable, expected: Iterable) -> Tally:
    """Count what was delivered, missing and delivered more than once."""
    for name, value in (("received", received), ("expected", expected)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise TypeError(f"tally(): {name} must be the elements (a list), got {value!r}: "
                            "e.g. tally(received=[0, 1, 1], expected=range(3))")
    got, want = Counter(received), set(expected)
    return Tally(delivered=sum(got.values()), distinct=len(got),
                 missing=sorted(want - set(got)),
                 duplicated=sorted(x for x, c in got.items() if c > 1),
                 unexpected=sorted(set(got) - want))


def plot_delivery(rows: Mapping[str, Iterable[int]], num_elements: int, *, ax: Axes | None = None,
                  title: str = "What each reader received") -> Axes:
    """One row per reader (trainer, worker...), one column per element: how often it came.

    Returns the Axes. White: never came; one colour per count.
    """
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    from datakit.plotting import MUTED, PALETTE, new_axes, style

    counts = np.zeros((len(rows), num_elements), int)
    for r, values in enumerate(rows.values()):
        for v in values:
            counts[r, int(v)] += 1
    top = max(2, int(counts.max()))
    with style():
        ax = new_axes(ax, figsize=(8, 0.45 * len(rows) + 1.3))
        cmap = ListedColormap(["white", PALETTE[0], PALETTE[1], PALETTE[3], *PALETTE[4:]][:top + 1])
        ax.imshow(counts, aspect="auto", cmap=cmap, vmin=-0.5, vmax=top + 0.5,
                  interpolation="nearest")
        ax.set_yticks(range(len(rows)), list(rows))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # elements are whole numbers
        ax.set_xlabel("element")
        ax.set_title(title)
        # A legend entry per count that occurs: handles only, nothing drawn on the axes
        # (a zero-height bar with an edge left a grey tick at element 0).
        handles = [Patch(color=cmap(k), label=f"{k}x") for k in range(1, top + 1)
                   if (counts == k).any()]
        if (counts == 0).any():
            handles.append(Patch(facecolor="white", edgecolor=MUTED, label="never"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def plot_scaling(workers: Sequence[int], rates: Mapping[str, Sequence[float]], *,
                 ax: Axes | None = None,
                 title: str = "Throughput as workers are added") -> Axes:
    """Measured elements/s against the number of workers, one line per pipeline, each with
    its ideal (the first point times the number of workers, dotted). The y axis is
    logarithmic: pipelines tens of times apart in speed stay readable on one Axes, and
    equal ratios are equal heights. Returns the Axes."""
    from datakit.plotting import epoch_color, new_axes, style

    with style():
        ax = new_axes(ax)
        for k, (name, ys) in enumerate(rates.items()):
            color = epoch_color(k)
            ax.plot(workers, ys, "o-", color=color, label=name)
            ax.plot(workers, [ys[0] * w / workers[0] for w in workers], ":", color=color,
                    label=f"{name}: ideal")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(lambda y, _: f"{y:,.0f}")
        ax.set_xticks(list(workers))
        ax.set_xlabel("workers")
        ax.set_ylabel("elements / s (log scale)")
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax
