"""A real ``tf.data`` service on loopback: a dispatcher and workers as separate processes.

:class:`LocalCluster` starts them with ``python -m datakit.cluster`` (the
command you run on real machines, see :func:`main`), waits until each one
serves, and stops every process it started when the ``with`` block ends,
raises or is interrupted. Code written against ``cluster.target`` runs on a
real cluster by changing only the target. Measuring what a trainer receives
(:func:`tally`, :func:`read_concurrently`, :func:`with_worker_pid`) and
drawing it (:func:`plot_delivery`) live here too.

>>> t = tally([0, 2, 2, 3], expected=range(4))
>>> t.missing, t.duplicated, t.exactly_once
([1], [2], False)
>>> LocalCluster(workers=0)
Traceback (most recent call last):
...
ValueError: workers=0: a cluster needs at least 1 worker
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LocalCluster", "free_port", "main", "sleepy_range", "with_worker_pid",
           "read_concurrently", "Tally", "tally", "plot_delivery"]

HOST = "127.0.0.1"
_LIVE: set[LocalCluster] = set()  # stopped at interpreter exit, whatever happened


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class _Proc:
    """One server process: its command, log file and ``subprocess.Popen``."""

    def __init__(self, name: str, args: list[str], port: int, logs: Path):
        self.name, self.args, self.port, self.log = name, args, port, logs / f"{name}.log"
        self.popen: subprocess.Popen | None = None
        self.pids: list[int] = []  # every pid this slot ever had (restarts add one)
        self.wanted = True  # False once stopped or killed without a restart wanted

    def start(self) -> None:
        cmd = [sys.executable, "-m", "datakit.cluster", *self.args, "--exit-with-parent",
               str(os.getpid())]
        with open(self.log, "w") as log:  # the child writes "ready" here once it serves
            self.popen = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
        self.pids.append(self.popen.pid)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "datakit.cluster: ready" in self.log.read_text(errors="replace"):
                return
            if not self.alive():
                break
            time.sleep(0.1)
        tail = self.log.read_text(errors="replace")[-2000:]
        state = "exited" if not self.alive() else f"not ready after {timeout:.0f} s"
        raise RuntimeError(f"{self.name} on port {self.port} {state}; its log ends with:\n{tail}")

    def kill(self) -> None:
        if self.alive():
            os.killpg(self.popen.pid, signal.SIGKILL)  # its own process group (start_new_session)
            self.popen.wait(timeout=30)


class LocalCluster:
    """A ``tf.data`` service dispatcher and ``workers`` workers, each its own process.

    Args:
        workers: how many workers to start (>= 1).
        static_sharding: list the workers' addresses in the dispatcher, as the
            static sharding policies (FILE, DATA, FILE_OR_DATA, HINT) require;
            :meth:`add_worker` is then refused.
        fault_tolerant: journal the dispatcher's state in ``work_dir`` (a
            temporary folder when None) so a restarted dispatcher resumes its jobs.
        worker_timeout: seconds without a heartbeat before the dispatcher drops a worker.
        restart_workers: restart a worker that dies on the same address (what
            turns a dead worker into a bounded loss instead of a stuck trainer).
        start_timeout: seconds each process may take to serve (importing TF is most of it).

    Raises:
        ValueError: ``workers < 1``, or a ``work_dir`` without ``fault_tolerant``.
    """

    def __init__(self, workers: int = 2, *, static_sharding: bool = False,
                 fault_tolerant: bool = False, work_dir: str | Path | None = None,
                 worker_timeout: float = 5.0, restart_workers: bool = True,
                 start_timeout: float = 180.0):
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers={workers}: a cluster needs at least 1 worker")
        if work_dir is not None and not fault_tolerant:
            raise ValueError("work_dir is where fault-tolerant mode keeps its journal: "
                             "pass fault_tolerant=True too, or drop work_dir")
        if worker_timeout <= 0:
            raise ValueError(f"worker_timeout={worker_timeout}: pass seconds > 0")
        self.num_workers, self.static_sharding = workers, static_sharding
        self.fault_tolerant, self.work_dir = fault_tolerant, work_dir
        self.worker_timeout, self.restart_workers = worker_timeout, restart_workers
        self.start_timeout = start_timeout
        self.dispatcher: _Proc | None = None
        self.workers: list[_Proc] = []
        self._tmp: Path | None = None
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.restarts = 0  # how many times the supervisor restarted a dead worker

    # ---- life cycle ---------------------------------------------------------------------
    def __enter__(self) -> LocalCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Start the dispatcher, then the workers, and wait until all of them serve."""
        self._tmp = Path(tempfile.mkdtemp(prefix="datakit-cluster-"))
        _LIVE.add(self)
        port = free_port()
        ports = [free_port() for _ in range(self.num_workers)]
        args = ["dispatcher", "--port", str(port), "--host", HOST,
                "--worker-timeout-ms", str(int(self.worker_timeout * 1000))]
        if self.fault_tolerant:
            self.work_dir = self.work_dir or self._tmp / "work_dir"
            args += ["--work-dir", str(self.work_dir)]
        if self.static_sharding:
            for p in ports:
                args += ["--worker-address", f"{HOST}:{p}"]
        self.dispatcher = _Proc("dispatcher", args, port, self._tmp)
        self.dispatcher.start()
        self.dispatcher.wait_ready(self.start_timeout)
        for p in ports:
            self._new_worker(p)
        for w in self.workers:
            w.wait_ready(self.start_timeout)
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)
        self._supervisor.start()

    def _new_worker(self, port: int) -> _Proc:
        args = ["worker", "--dispatcher", self.dispatcher_address, "--port", str(port),
                "--host", HOST]
        w = _Proc(f"worker{len(self.workers)}", args, port, self._tmp)
        w.start()
        self.workers.append(w)
        return w

    def stop(self) -> None:
        """Kill every process this cluster started and remove its temporary files."""
        self._stopping.set()
        with self._lock:
            for proc in [*self.workers, self.dispatcher]:
                if proc is not None:
                    proc.wanted = False
                    proc.kill()
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(timeout=5)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
        _LIVE.discard(self)

    def _supervise(self) -> None:
        while not self._stopping.wait(0.2):
            for i, w in enumerate(list(self.workers)):
                with self._lock:
                    dead = w.wanted and not w.alive() and not self._stopping.is_set()
                    if dead and self.restart_workers:
                        w.start()
                        self.restarts += 1
                if dead and self.restart_workers:
                    try:
                        w.wait_ready(self.start_timeout)
                    except RuntimeError:
                        pass  # tried again on the next round

    # ---- what a trainer needs -------------------------------------------------------------
    @property
    def dispatcher_address(self) -> str:
        """``"127.0.0.1:PORT"``: what workers are given."""
        return f"{HOST}:{self.dispatcher.port}"

    @property
    def target(self) -> str:
        """``"grpc://127.0.0.1:PORT"``: the ``service=`` of ``tf.data.experimental.service.distribute``."""
        return f"grpc://{self.dispatcher_address}"

    @property
    def worker_addresses(self) -> list[str]:
        return [f"{HOST}:{w.port}" for w in self.workers]

    def pids(self) -> list[int]:
        """Process ids of every server of this cluster that is running now."""
        return [p.popen.pid for p in [self.dispatcher, *self.workers] if p and p.alive()]

    def ports(self) -> list[int]:
        return [p.port for p in [self.dispatcher, *self.workers] if p]

    def worker_index(self, pid: int) -> int:
        """Which worker slot a process id (see :func:`with_worker_pid`) belonged to."""
        for i, w in enumerate(self.workers):
            if pid in w.pids:
                return i
        raise ValueError(f"pid {pid} is not one of this cluster's workers")

    # ---- faults and scaling ---------------------------------------------------------------
    def kill_worker(self, i: int, *, restart: bool | None = None) -> None:
        """SIGKILL worker ``i`` (a crash); it comes back on the same address if ``restart``
        (default: the cluster's ``restart_workers``)."""
        restart = self.restart_workers if restart is None else restart
        with self._lock:
            self.workers[i].wanted = restart
            self.workers[i].kill()

    def restart_worker(self, i: int, *, wait: bool = True) -> None:
        """Start worker ``i`` again on its address (after a kill without restart)."""
        with self._lock:
            w = self.workers[i]
            if w.alive():
                raise ValueError(f"worker {i} is running: kill_worker({i}) first")
            w.wanted = True
            w.start()
        if wait:
            w.wait_ready(self.start_timeout)

    def wait_workers(self) -> None:
        """Block until every worker that should run serves (e.g. after a restart)."""
        for w in self.workers:
            if w.wanted:
                deadline = time.monotonic() + self.start_timeout
                while not w.alive() and time.monotonic() < deadline:
                    time.sleep(0.1)
                w.wait_ready(self.start_timeout)

    def add_worker(self) -> int:
        """Start one more worker and return its index (not with ``static_sharding``)."""
        if self.static_sharding:
            raise ValueError("static sharding fixes the list of workers: start a LocalCluster "
                             "with more workers instead of adding one")
        with self._lock:
            w = self._new_worker(free_port())
        w.wait_ready(self.start_timeout)
        return len(self.workers) - 1

    def kill_dispatcher(self) -> None:
        """SIGKILL the dispatcher (jobs survive a restart only in fault-tolerant mode)."""
        self.dispatcher.kill()

    def restart_dispatcher(self) -> None:
        """Start the dispatcher again on its port (and ``work_dir``)."""
        self.dispatcher.start()
        self.dispatcher.wait_ready(self.start_timeout)

    def __repr__(self) -> str:
        state = "running" if self.dispatcher and self.dispatcher.alive() else "stopped"
        return f"LocalCluster(workers={len(self.workers) or self.num_workers}, {state})"


@atexit.register
def _stop_all() -> None:
    for c in list(_LIVE):
        c.stop()


# ---- measuring what trainers receive ------------------------------------------------------
def sleepy_range(n: int, seconds: float):
    """``Dataset.range(n)`` whose elements each take ``seconds`` to make, in the graph.

    A sleep holds a thread, not a core, and unlike a ``py_function`` (see
    :mod:`datakit.synthetic`) it runs on a service worker, which has no Python.
    """
    import tensorflow as tf
    from tensorflow.python.data.experimental.ops import testing  # tf.data's own sleep op

    if n < 0 or seconds < 0:
        raise ValueError(f"sleepy_range({n}, {seconds}): pass n >= 0 and seconds >= 0")
    return tf.data.Dataset.range(n).apply(testing.sleep(int(seconds * 1e6)))


def with_worker_pid(dataset):
    """Pair each element with the id of the process that made it: ``(element, pid)``.

    The pid is read on the worker (``/proc/self/stat``, Linux); turn it into a
    worker number with :meth:`LocalCluster.worker_index`.
    """
    import tensorflow as tf

    def tag(x):
        stat = tf.io.read_file("/proc/self/stat")
        return x, tf.strings.to_number(tf.strings.split(stat, " ")[0], tf.int64)

    return dataset.map(tag)


def read_concurrently(datasets: Sequence, *, timeout: float = 300.0) -> list[list]:
    """Iterate several datasets at once, one thread each (like trainers), and return their
    elements as Python values, in the order each one received them.

    Raises:
        TimeoutError: a dataset did not finish within ``timeout`` seconds.
    """
    results: list[list] = [[] for _ in datasets]
    errors: list[BaseException] = []

    def run(i, ds):
        try:
            for x in ds.as_numpy_iterator():
                results[i].append(x.item() if hasattr(x, "item") else x)
        except BaseException as e:  # noqa: BLE001 (re-raised below, in the caller's thread)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i, ds), daemon=True)
               for i, ds in enumerate(datasets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        if t.is_alive():
            raise TimeoutError(f"a dataset did not finish in {timeout:.0f} s "
                               "(is a worker dead and not restarted?)")
    if errors:
        raise errors[0]
    return results


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
    got, want = Counter(received), set(expected)
    return Tally(delivered=sum(got.values()), distinct=len(got),
                 missing=sorted(want - set(got)),
                 duplicated=sorted(x for x, c in got.items() if c > 1),
                 unexpected=sorted(set(got) - want))


def plot_delivery(rows: Mapping[str, Iterable[int]], num_elements: int, *, ax=None,
                  title: str = "What each reader received"):
    """One row per reader (trainer, worker...), one column per element: how often it came.

    Returns the Axes. White: never came; one colour per count.
    """
    import numpy as np
    from matplotlib.colors import ListedColormap

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
        ax.set_xlabel("element")
        ax.set_title(title)
        for k in range(1, top + 1):  # a legend entry per count that occurs
            if (counts == k).any():
                ax.bar(0, 0, color=cmap(k), label=f"{k}x")
        if (counts == 0).any():
            ax.bar(0, 0, color="white", edgecolor=MUTED, label="never")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


# ---- the command line: the same servers on real machines -----------------------------------
def main(argv: Sequence[str] | None = None) -> None:
    """``python -m datakit.cluster dispatcher|worker ...``: serve until killed (Ctrl-C stops).

    ``dispatcher --port N [--work-dir D] [--worker-address HOST:PORT ...]`` and
    ``worker --dispatcher HOST:PORT --port M [--host NAME]``; ``--host`` is the
    name clients use to reach this machine (default: its fully qualified name).
    """
    parser = argparse.ArgumentParser(prog="python -m datakit.cluster", description=main.__doc__)
    sub = parser.add_subparsers(dest="role", required=True)
    d = sub.add_parser("dispatcher", help="coordinate workers and trainers")
    d.add_argument("--port", type=int, required=True)
    d.add_argument("--work-dir", help="journal for fault tolerance (shared storage)")
    d.add_argument("--worker-address", action="append", default=None,
                   help="HOST:PORT of each worker, for static sharding (repeat)")
    d.add_argument("--worker-timeout-ms", type=int, default=None)
    w = sub.add_parser("worker", help="run the input pipeline, stream elements to trainers")
    w.add_argument("--dispatcher", required=True, help="HOST:PORT of the dispatcher")
    w.add_argument("--port", type=int, required=True)
    for p in (d, w):
        p.add_argument("--host", default=socket.getfqdn())
        p.add_argument("--exit-with-parent", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    import tensorflow as tf

    service = tf.data.experimental.service
    if args.role == "dispatcher":
        server = service.DispatchServer(service.DispatcherConfig(
            port=args.port, work_dir=args.work_dir, fault_tolerant_mode=bool(args.work_dir),
            worker_addresses=args.worker_address, worker_timeout_ms=args.worker_timeout_ms))
    else:
        server = service.WorkerServer(service.WorkerConfig(
            dispatcher_address=args.dispatcher, worker_address=f"{args.host}:{args.port}",
            port=args.port, heartbeat_interval_ms=500))
    print(f"datakit.cluster: ready {args.role} on {args.host}:{args.port}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while args.exit_with_parent is None or os.getppid() == args.exit_with_parent:
            time.sleep(0.5)  # a Python loop, not server.join(): signals stay responsive
    except KeyboardInterrupt:
        pass
    finally:
        server.stop() if hasattr(server, "stop") else None


if __name__ == "__main__":
    main()
