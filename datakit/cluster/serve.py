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
    own, loads only TensorFlow's server library (:func:`serve_lean`).
    """
    _main(argv, lean=False)


def serve_lean(argv: Sequence[str] | None = None) -> None:
    """:func:`main` in a process of its own (``python -m datakit.cluster``): once the
    arguments pass, it loads TensorFlow's server library alone (:func:`servers_alone`),
    not TensorFlow's Python API. Not for a process that goes on to use TensorFlow."""
    _main(argv, lean=True)


#: The packages above TensorFlow's server library whose ``__init__`` would import all of
#: TensorFlow's Python API (``tensorflow/__init__.py`` and ``tensorflow/python/data``'s).
_ABOVE_SERVER_LIB = ("", "python", "python/data", "python/data/experimental",
                     "python/data/experimental/service")


def servers_alone() -> Any:
    """TensorFlow's ``server_lib`` (``DispatchServer``, ``WorkerServer`` and their configs,
    the very classes of ``tf.data.experimental.service``), loaded without the rest of
    TensorFlow's Python, in a server process that never imports TensorFlow itself.

    A server runs the dataset graphs trainers send it in TensorFlow's C++ runtime, which
    loading ``server_lib`` loads whole (every op and kernel): none of TensorFlow's Python
    API runs there. Loading it alone takes about 1.5 CPU s, where ``import tensorflow``
    (even :func:`~datakit.tensorflow_logs.import_tensorflow_lean`) takes about 3; each
    server a LocalCluster starts or restarts saves the difference. The packages above it
    are entered without running their ``__init__`` (each would import all of TensorFlow),
    so after this call ``import tensorflow`` in this process gives a bare package.

    It also loads the two modules a ``tf.py_function`` sent to a server meets (the eager
    context and TensorFlow's registry of Python functions, which holds none of a trainer's),
    so that one fails as on a server that imported all of TensorFlow, with TensorFlow's own
    error (the function lives in the trainer's process): without them the server crashed
    (``py_func.cc``: no eager context). That context is told to see no GPU (a worker runs
    dataset graphs on its CPU), so that a server takes no GPU memory (not yet checked on a
    GPU machine). On a
    TensorFlow whose files are laid out otherwise, it imports TensorFlow whole, without
    what a server never uses, and says so in the server's log.
    """
    if "tensorflow" in sys.modules:  # imported already (main() in a learner's process)
        import tensorflow as tf

        return tf.data.experimental.service
    import importlib.util
    import types

    spec = importlib.util.find_spec("tensorflow")
    root = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else ""
    entered = []
    try:
        for folder in _ABOVE_SERVER_LIB:
            name = ".".join(["tensorflow", *folder.split("/")]) if folder else "tensorflow"
            package = types.ModuleType(name)
            package.__path__ = [os.path.join(root, folder)]
            sys.modules[name] = package
            entered.append(name)
        from tensorflow.python.data.experimental.service import server_lib
        from tensorflow.python.eager import context
        from tensorflow.python.ops import script_ops  # noqa: F401  (registers its registry)
    except (ImportError, AttributeError, OSError) as e:
        for name in [*entered, *(m for m in sys.modules if m.startswith("tensorflow."))]:
            sys.modules.pop(name, None)
        print(f"datakit.cluster: TensorFlow's server library did not load alone "
              f"({type(e).__name__}: {e}); importing all of TensorFlow", flush=True)
        from datakit.tensorflow_logs import import_tensorflow_lean
        import_tensorflow_lean()
        import tensorflow as tf

        return tf.data.experimental.service
    eager = context.context()  # what a py_function sent here needs to fail as it should
    eager.set_visible_devices([], "GPU")  # it runs no op: no GPU memory taken by a server
    eager.ensure_initialized()
    return server_lib


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
    if lean:  # a server runs dataset graphs only, in TensorFlow's C++ runtime
        service = servers_alone()
    else:
        import tensorflow as tf

        service = tf.data.experimental.service
    try:
        server = _serve(service, args)
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

