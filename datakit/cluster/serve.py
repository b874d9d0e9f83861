"""The command line that runs one tf.data service server: the same on loopback and on real machines.

    python -m datakit.cluster dispatcher --port 5050 [--work-dir DIR] [--worker-address H:P ...]
    python -m datakit.cluster worker --dispatcher HOST:5050 --port 5051 [--host NAME]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m datakit.cluster dispatcher|worker ...``: serve until killed (Ctrl-C stops).

    ``dispatcher --port N [--work-dir D] [--worker-address HOST:PORT ...]`` and
    ``worker --dispatcher HOST:PORT --port M [--host NAME]``; ``--host`` is the
    name clients use to reach this machine (default: its fully qualified name).
    """
    parser = argparse.ArgumentParser(prog="python -m datakit.cluster", description=(
        "Run one tf.data service server until killed (Ctrl-C stops it)."))
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

