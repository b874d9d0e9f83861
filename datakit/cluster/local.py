# About 340 lines on purpose: one class, LocalCluster, whose supervisor, fault injection
# (kill/restart) and shutdown share its process table; the process plumbing itself is in
# datakit.cluster.process.
"""LocalCluster: a tf.data service dispatcher and workers, each its own process, on loopback.

Each process runs ``python -m datakit.cluster dispatcher|worker`` (see
:mod:`datakit.cluster.serve`) in its own process group, writes ``ready`` to
its log once it serves, and exits with the process that started it. The
cluster stops them all on ``stop()``, at the end of a ``with`` block (also
on an exception or Ctrl-C) and at interpreter exit.

Clients reach the servers on loopback (``127.0.0.1``), but TensorFlow 2.21
gives its servers no bind address: they listen on every interface (``::``),
so on a machine others can reach, keep the ports behind a firewall.
"""

from __future__ import annotations

import atexit
import math
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from datakit.cluster.measure import abandon_trainers
from datakit.cluster.process import HOST, ServerProcess, free_port
from datakit.core.arguments import check_flags

__all__ = ["LocalCluster"]

_LIVE: set[LocalCluster] = set()  # stopped at interpreter exit, whatever happened


def _seconds(name: str, value: Any) -> float:
    """``value`` as a number of seconds > 0, or a TypeError/ValueError that says so."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}={value!r}: pass a number of seconds (an int or a float)")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}={value!r}: pass a finite number of seconds > 0")
    return float(value)


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
        start_timeout: seconds each process may take to serve (loading TensorFlow's
            runtime is most of it).

    Raises:
        TypeError: ``workers`` is not an int.
        ValueError: ``workers < 1``, or a ``work_dir`` without ``fault_tolerant``.

    What a trainer sees when a worker dies mid-epoch (measured with TF 2.21): the
    epoch does not end until a worker comes back on the dead one's address, however
    short ``worker_timeout`` is (the dispatcher drops the worker, the job still
    waits for it). Then ``distributed_epoch`` (DYNAMIC) has delivered each element
    at most once (the few the dead worker held are lost), while ``parallel_epochs``
    (OFF) and the static policies start the restarted worker's part again from the
    beginning (what it had sent arrives twice). Fault-tolerant mode changes none of
    this; it lets a restarted *dispatcher* resume its jobs, where without it the
    trainer gets a ``NotFoundError``.
    """

    def __init__(self, workers: int = 2, *, static_sharding: bool = False,
                 fault_tolerant: bool = False, work_dir: str | Path | None = None,
                 worker_timeout: float = 5.0, restart_workers: bool = True,
                 start_timeout: float = 180.0):
        if not isinstance(workers, int) or isinstance(workers, bool):
            raise TypeError(f"workers={workers!r}: pass an int, the number of workers")
        if workers < 1:
            raise ValueError(f"workers={workers}: a cluster needs at least 1 worker")
        check_flags(static_sharding=static_sharding, fault_tolerant=fault_tolerant,
                    restart_workers=restart_workers)
        if work_dir is not None and not fault_tolerant:
            raise ValueError("work_dir is where fault-tolerant mode keeps its journal: "
                             "pass fault_tolerant=True too, or drop work_dir")
        if work_dir is not None:
            blocked = next((p for p in (Path(work_dir), *Path(work_dir).parents)
                            if p.exists() and not p.is_dir()), None)
            if blocked is not None:
                raise NotADirectoryError(f"work_dir={str(work_dir)!r}: {blocked} is a file; pass "
                                         "a folder for the dispatcher's journal (it is created "
                                         "if needed)")
        worker_timeout = _seconds("worker_timeout", worker_timeout)
        start_timeout = _seconds("start_timeout", start_timeout)
        self.num_workers, self.static_sharding = workers, static_sharding
        self.fault_tolerant, self.work_dir = fault_tolerant, work_dir
        self.worker_timeout, self.restart_workers = worker_timeout, restart_workers
        self.start_timeout = start_timeout
        self.dispatcher: ServerProcess | None = None
        self.workers: list[ServerProcess] = []
        self._tmp: Path | None = None
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.restarts = 0  # how many times the supervisor restarted a dead worker
        self._warned: set[int] = set()  # pids of dead workers already warned about

    # ---- life cycle ---------------------------------------------------------------------
    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the dispatcher, then the workers, and wait until all of them serve.

        Outside a ``with`` block, call :meth:`stop` when done (or let the interpreter's exit
        do it); if starting fails, whatever had started is stopped before the error is raised.
        """
        if self.dispatcher is not None:
            raise ValueError("this LocalCluster was started already: make a new one")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
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
        self.dispatcher = ServerProcess("dispatcher", args, port, self._tmp)
        self.dispatcher.restart = True
        self.dispatcher.start()
        self.dispatcher.wait_ready(self.start_timeout)
        for p in ports:
            self._new_worker(p)
        for w in self.workers:
            w.wait_ready(self.start_timeout)
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)
        self._supervisor.start()

    def _started(self) -> tuple[ServerProcess, Path]:
        """The dispatcher and the folder of the logs; ``ValueError`` before :meth:`start`."""
        if self.dispatcher is None or self._tmp is None:
            raise ValueError("this LocalCluster is not started: call start() first, or use it "
                             "in a with-block")
        return self.dispatcher, self._tmp

    def _new_worker(self, port: int) -> ServerProcess:
        args = ["worker", "--dispatcher", self.dispatcher_address, "--port", str(port),
                "--host", HOST]
        w = ServerProcess(f"worker{len(self.workers)}", args, port, self._started()[1])
        w.start()
        w.restart = self.restart_workers
        self.workers.append(w)
        return w

    def stop(self) -> None:
        """Kill every process this cluster started and remove its temporary files.

        A :class:`~datakit.cluster.measure.Trainer` still reading from this cluster
        ends with a ``RuntimeError`` (its ``join`` raises it) instead of waiting forever.
        """
        self._stopping.set()
        if self.dispatcher is not None:
            abandon_trainers(self.dispatcher_address, "the LocalCluster it read from was "
                             "stopped (its with-block ended, or stop() was called) before the "
                             "epoch ended")
        with self._lock:
            for proc in [*self.workers, self.dispatcher]:
                if proc is not None:
                    proc.restart = False
                    proc.kill()
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(timeout=5)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
        _LIVE.discard(self)

    def _supervise(self) -> None:
        warned = self._warned
        while not self._stopping.wait(0.2):
            self._supervise_dispatcher()
            for i, w in enumerate(list(self.workers)):
                with self._lock:
                    dead = not w.alive() and not self._stopping.is_set()
                    if dead and not w.restart and w.pid not in warned:
                        warned.add(w.pid)
                        warnings.warn(_left_dead(i), RuntimeWarning, stacklevel=1)
                    dead = dead and w.restart
                    if dead:  # counted first: a reader that checks mid-restart sees it
                        self.restarts += 1
                        w.start()
                if dead:
                    warnings.warn(f"worker {i} died and was restarted on its address: in "
                                  "parallel_epochs and the static sharding policies its part "
                                  "of a running epoch starts again (what it had sent arrives "
                                  "twice); in distributed_epoch its in-flight elements are "
                                  "lost", RuntimeWarning, stacklevel=1)
                    try:
                        w.wait_ready(self.start_timeout)
                    except RuntimeError:
                        pass  # tried again on the next round

    def _supervise_dispatcher(self) -> None:
        """A dead dispatcher is started again on its port (jobs resume in fault-tolerant
        mode; otherwise trainers get TensorFlow's NotFoundError instead of waiting forever),
        unless ``kill_dispatcher(restart=False)``: then trainers reading it are ended."""
        d = self.dispatcher
        with self._lock:
            if d is None or d.alive() or self._stopping.is_set():
                return
            if not d.restart:
                abandon_trainers(self.dispatcher_address, "the dispatcher died and is not "
                                 "restarted (kill_dispatcher(restart=False)); call "
                                 "restart_dispatcher() before reading again")
                return
            d.start()
        try:
            d.wait_ready(self.start_timeout)
        except RuntimeError:
            pass  # tried again on the next round

    # ---- what a trainer needs -------------------------------------------------------------
    @property
    def dispatcher_address(self) -> str:
        """``"127.0.0.1:PORT"``: what workers are given."""
        return f"{HOST}:{self._started()[0].port}"

    @property
    def target(self) -> str:
        """``"grpc://127.0.0.1:PORT"``: the ``service`` to pass to ``distribute``."""
        return f"grpc://{self.dispatcher_address}"

    @property
    def worker_addresses(self) -> list[str]:
        return [f"{HOST}:{w.port}" for w in self.workers]

    def pids(self) -> list[int]:
        """Process ids of every server of this cluster that is running now."""
        return [p.pid for p in [self.dispatcher, *self.workers] if p and p.alive()]

    def ports(self) -> list[int]:
        return [p.port for p in [self.dispatcher, *self.workers] if p]

    def worker_index(self, pid: int) -> int:
        """Which worker slot a process id (see :func:`with_worker_pid`) belonged to."""
        for i, w in enumerate(self.workers):
            if pid in w.pids:
                return i
        raise ValueError(f"pid {pid} is not one of this cluster's workers")

    # ---- faults and scaling ---------------------------------------------------------------
    def _worker(self, i: int) -> ServerProcess:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"i={i!r}: pass a worker's index, an int")
        if not 0 <= i < len(self.workers):
            raise ValueError(f"worker {i}: this cluster has {len(self.workers)} worker(s), "
                             f"indices 0 to {len(self.workers) - 1}")
        return self.workers[i]

    def kill_worker(self, i: int, *, restart: bool | None = None) -> None:
        """SIGKILL worker ``i`` (a crash); it comes back on the same address if ``restart``
        (default: the cluster's ``restart_workers``). Without a restart a ``RuntimeWarning``
        says that an epoch it serves cannot end until :meth:`restart_worker`."""
        restart = self.restart_workers if restart is None else restart
        w = self._worker(i)
        with self._lock:
            w.restart = restart
            if w.popen is not None:
                self._warned.add(w.popen.pid)
            w.kill()
        if not restart:
            warnings.warn(_left_dead(i), RuntimeWarning, stacklevel=2)

    def restart_worker(self, i: int, *, wait: bool = True) -> None:
        """Start worker ``i`` again on its address (after a kill without restart)."""
        w = self._worker(i)
        with self._lock:
            if w.alive():
                raise ValueError(f"worker {i} is running: kill_worker({i}) first")
            w.start()
            w.restart = self.restart_workers
        if wait:
            w.wait_ready(self.start_timeout)

    def wait_workers(self) -> None:
        """Block until every worker that should run serves (e.g. after a restart)."""
        for w in self.workers:
            if w.restart or w.alive():
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

    def kill_dispatcher(self, *, restart: bool = True) -> None:
        """SIGKILL the dispatcher; the supervisor starts it again on its port (jobs survive
        that only in fault-tolerant mode: otherwise trainers get a ``NotFoundError``).

        With ``restart=False`` it stays dead and trainers reading it end with a
        ``RuntimeError`` (TensorFlow alone would leave them waiting forever).
        """
        dispatcher = self._started()[0]
        with self._lock:
            dispatcher.restart = restart
            dispatcher.kill()

    def restart_dispatcher(self) -> None:
        """Start the dispatcher again on its port (and ``work_dir``), if it is not running."""
        dispatcher = self._started()[0]
        with self._lock:
            dispatcher.restart = True
            if not dispatcher.alive():
                dispatcher.start()
        dispatcher.wait_ready(self.start_timeout)

    def __repr__(self) -> str:
        state = "running" if self.dispatcher and self.dispatcher.alive() else "stopped"
        return f"LocalCluster(workers={len(self.workers) or self.num_workers}, {state})"


def _left_dead(i: int) -> str:
    return (f"worker {i} is dead and will not be restarted: an epoch it was serving cannot "
            f"end (TensorFlow waits for it, whatever worker_timeout is) until "
            f"restart_worker({i})")


@atexit.register
def _stop_all() -> None:
    for c in list(_LIVE):
        c.stop()
