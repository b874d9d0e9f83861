"""The command line that runs one tf.data service server: the same on loopback and on real machines.

    python -m datakit.cluster dispatcher --port 5050 [--work-dir DIR] [--worker-address H:P ...]
    python -m datakit.cluster worker --dispatcher HOST:5050 --port 5051 [--host NAME]
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m datakit.cluster dispatcher|worker ...``: serve until killed (Ctrl-C stops).

    ``dispatcher --port N [--work-dir D] [--worker-address HOST:PORT ...]`` and
    ``worker --dispatcher HOST:PORT --port M [--host NAME]``; ``--host`` is the
    name clients use to reach this machine (default: its fully qualified name).

    TensorFlow is imported only once the arguments, the port and (for a worker) the
    dispatcher have passed their checks: ``--help`` and a refused argument answer at
    once, without its seconds of start. ``python -m datakit.cluster``, a process of its
    own, imports it without what a server never uses
    (:func:`~datakit.tensorflow_logs.import_tensorflow_lean`; :func:`serve_lean`).
    """
    _main(argv, lean=False)


def serve_lean(argv: Sequence[str] | None = None) -> None:
    """:func:`main` in a process of its own (``python -m datakit.cluster``): TensorFlow is
    imported without what a server never uses, once the arguments pass. Not for a process
    that goes on to train (the lean import leaves out Keras' optimizers)."""
    _main(argv, lean=True)


def _main(argv: Sequence[str] | None, *, lean: bool) -> None:
    parser = argparse.ArgumentParser(prog="python -m datakit.cluster", description=(
        "Run one tf.data service server until killed (Ctrl-C stops it)."))
    sub = parser.add_subparsers(dest="role", required=True)
    d = sub.add_parser("dispatcher", help="coordinate workers and trainers")
    d.add_argument("--port", type=_port, required=True)
    d.add_argument("--work-dir", help="journal for fault tolerance (shared storage)")
    d.add_argument("--worker-address", action="append", default=None,
                   help="HOST:PORT of each worker, for static sharding (repeat)")
    d.add_argument("--worker-timeout-ms", type=int, default=None)
    w = sub.add_parser("worker", help="run the input pipeline, stream elements to trainers")
    w.add_argument("--dispatcher", required=True, type=_address,
                   help="HOST:PORT of the dispatcher")
    w.add_argument("--port", type=_port, required=True)
    w.add_argument("--dispatcher-timeout", type=_seconds, default=120.0,
                   help="seconds to wait for the dispatcher to answer before giving up")
    for p in (d, w):
        p.add_argument("--host", default=socket.getfqdn())
        p.add_argument("--exit-with-parent", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    _check_port_free(args.port)
    if args.role == "worker":
        _wait_for_dispatcher(args.dispatcher, args.dispatcher_timeout)
    if lean:  # a server runs dataset graphs only
        from datakit.tensorflow_logs import import_tensorflow_lean
        import_tensorflow_lean()

    import tensorflow as tf

    try:
        server = _serve(tf.data.experimental.service, args)
    except Exception as e:  # TensorFlow's "Failed to add port", said plainly
        sys.exit(f"datakit.cluster: the {args.role} could not start on port {args.port} "
                 f"({type(e).__name__}: {str(e).strip()[:300]}); is the port in use? pass "
                 "another --port")
    if args.exit_with_parent is not None:  # started by a LocalCluster: its pid for the graph
        from datakit.cluster.process import PID_FILE
        with open(PID_FILE, "w") as f:  # (with_worker_pid, where there is no /proc)
            f.write(str(os.getpid()))
    parent = _parent(args.exit_with_parent)
    print(f"datakit.cluster: ready {args.role} on {args.host}:{args.port}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while parent is None or _alive(*parent):
            time.sleep(0.5)  # a Python loop, not server.join(): signals stay responsive
    except KeyboardInterrupt:
        pass
    finally:
        server.stop() if hasattr(server, "stop") else None


def _parent(pid: int | None) -> tuple[int, float] | None:
    """``(pid, its start time)`` of the process to end with, or None (no such process:
    the server ends at once, as when the parent dies later)."""
    if pid is None:
        return None
    import psutil

    try:
        return pid, psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return pid, -1.0


def _alive(pid: int, started: float) -> bool:
    """Whether the parent ``pid`` that started at ``started`` still runs, on every system.

    On Linux and macOS an orphan gets a new parent at once (``os.getppid()`` changes,
    even while the dead parent is a zombie); Windows gives it none, so there the parent
    is looked up with ``psutil`` (a pid reused by a later process has another start time).
    """
    if os.name != "nt":
        return os.getppid() == pid
    import psutil

    try:
        parent = psutil.Process(pid)
        return parent.create_time() == started and parent.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _port(text: str) -> int:
    """A TCP port, 1..65535 (argparse says which argument, and exits 2, otherwise)."""
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: pass a number in 1..65535")
    return int(text)


def _address(text: str) -> str:
    """``HOST:PORT`` (or ``grpc://HOST:PORT``): a missing port is refused, not tried as 443."""
    from datakit.cluster.process import host_port

    if host_port(text) is None:
        raise argparse.ArgumentTypeError(f"{text!r}: pass HOST:PORT, the dispatcher's port "
                                         "in 1..65535 (e.g. d0:5050)")
    return text


def _seconds(text: str) -> float:
    """A number of seconds > 0 (not nan, not inf)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: pass a number of seconds > 0")
    return seconds


def _check_port_free(port: int) -> None:
    """Exit with a message naming the port when something listens on it already."""
    for family, host in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                # as gRPC binds: a port whose old connections linger (TIME_WAIT) is free
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((host, port))
            return
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                sys.exit(f"datakit.cluster: port {port} is already in use (another server or "
                         "program listens on it); pass another --port, or stop that program")
            # no IPv6 here: try IPv4


def _wait_for_dispatcher(address: str, timeout: float) -> None:
    """Say that the worker waits, every 10 s, and give up after ``timeout`` seconds (at once
    when a gRPC server that is not a dispatcher answers there)."""
    from datakit.cluster.process import NOT_A_DISPATCHER, dispatcher_problem

    address = address.split("://", 1)[-1]
    start = said = time.monotonic()
    print(f"datakit.cluster: worker waiting for the dispatcher at {address}: a tf.data "
          f"service dispatcher must answer there; gives up after {timeout:g} s "
          "(--dispatcher-timeout)", flush=True)
    while True:
        problem = dispatcher_problem(address, max(0.5, min(2.0, start + timeout
                                                            - time.monotonic())))
        if problem is None:
            return
        now = time.monotonic()
        if now - start >= timeout or problem.startswith(NOT_A_DISPATCHER):
            sys.exit(f"datakit.cluster: no dispatcher answered at {address} in "
                     f"{timeout:g} s ({problem}): start the dispatcher first, or check "
                     "--dispatcher")
        if now - said >= 10:
            said = now
            print(f"datakit.cluster: still no dispatcher at {address} after "
                  f"{now - start:.0f} s ({problem}); gives up in "
                  f"{max(0.0, start + timeout - now):.0f} s", flush=True)
        time.sleep(0.5)


def _serve(service: Any, args: argparse.Namespace) -> Any:
    if args.role == "dispatcher":
        server = service.DispatchServer(service.DispatcherConfig(
            port=args.port, work_dir=args.work_dir, fault_tolerant_mode=bool(args.work_dir),
            worker_addresses=args.worker_address, worker_timeout_ms=args.worker_timeout_ms))
    else:
        server = service.WorkerServer(service.WorkerConfig(
            dispatcher_address=args.dispatcher, worker_address=f"{args.host}:{args.port}",
            port=args.port, heartbeat_interval_ms=500))
    return server

