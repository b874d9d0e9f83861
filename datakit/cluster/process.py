"""One tf.data service server process of a :class:`~datakit.cluster.local.LocalCluster`.

:class:`ServerProcess` runs ``python -m datakit.cluster dispatcher|worker ...``
(see :mod:`datakit.cluster.serve`) in its own process group, with its output
in a log file; it is ready once ``datakit.cluster: ready`` appears there.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["free_port"]

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


#: The file a LocalCluster's server writes its process id to, in its own folder (its cwd).
PID_FILE = "datakit-server.pid"

#: What :func:`dispatcher_problem` says of a gRPC server that is not a dispatcher.
NOT_A_DISPATCHER = "a gRPC server answers there, but not a tf.data service dispatcher"


def host_port(service: str) -> str | None:
    """``"host:port"`` of ``service`` (``"grpc://host:port"`` or ``"host:port"``), or None
    when it has no host or no port in 1..65535 (gRPC would try port 443 without a word).

    >>> host_port("grpc://d0:5050"), host_port("127.0.0.1"), host_port("h:99999")
    ('d0:5050', None, None)
    """
    address = service.split("://", 1)[-1]
    host, sep, port = address.rpartition(":")
    ok = sep and host and port.isdigit() and 0 < int(port) < 65536
    return address if ok else None


def dispatcher_problem(address: str, seconds: float) -> str | None:
    """None if a tf.data service dispatcher answers at ``address`` (``host:port``) within
    ``seconds``; else why not, in words.

    It asks the dispatcher its version over gRPC: an open port is not enough (TensorFlow
    waits forever on a port where another program listens, or a worker's port).
    """
    import grpc

    channel = grpc.insecure_channel(address)
    try:
        ask = channel.unary_unary("/tensorflow.data.DispatcherService/GetVersion",
                                  request_serializer=bytes, response_deserializer=bytes)
        ask(b"", timeout=seconds, wait_for_ready=False)
        return None
    except grpc.RpcError as e:
        code = e.code() if hasattr(e, "code") else None
        if code == grpc.StatusCode.UNIMPLEMENTED:
            return f"{NOT_A_DISPATCHER} (a worker's port?)"
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"no answer in {seconds:g} s"
        details = e.details() if hasattr(e, "details") else str(e)
        return (details or str(code)).strip().splitlines()[0][:200]
    finally:
        channel.close()


class ServerProcess:
    """One server process: its command, log file and ``subprocess.Popen``."""

    def __init__(self, name: str, args: list[str], port: int, logs: Path):
        self.name, self.args, self.port, self.log = name, args, port, logs / f"{name}.log"
        self.popen: subprocess.Popen | None = None
        self.pids: list[int] = []  # every pid this slot ever had (restarts add one)
        self.restart = False  # whether the supervisor starts it again when it is found dead

    def start(self) -> None:
        """Start the server in a process group of its own (so that Ctrl-C in the notebook
        does not reach it), in its own folder (where it writes its process id for
        :func:`~datakit.cluster.measure.with_worker_pid` on systems without ``/proc``)."""
        cmd = [sys.executable, "-m", "datakit.cluster", *self.args, "--exit-with-parent",
               str(os.getpid())]
        home = self.log.with_suffix("")
        home.mkdir(exist_ok=True)
        own_group: dict = ({"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
                           if os.name == "nt" else {"start_new_session": True})
        with open(self.log, "w") as log:  # the child writes "ready" here once it serves
            self.popen = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, cwd=home, **own_group)
        self.pids.append(self.popen.pid)

    @property
    def pid(self) -> int:
        """The process id of the latest :meth:`start` (``ValueError`` before the first)."""
        if self.popen is None:
            raise ValueError(f"{self.name} was never started: call start() first")
        return self.popen.pid

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
        """Kill the server and every process it started, on every system (``psutil``:
        Windows has no ``os.killpg``)."""
        popen = self.popen
        if popen is not None and popen.poll() is None:  # alive()
            kill_tree(popen.pid)
            popen.wait(timeout=30)


def kill_tree(pid: int) -> None:
    """Kill process ``pid`` and its descendants (those already gone are skipped)."""
    import psutil

    try:
        root = psutil.Process(pid)
        tree = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for process in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(tree, timeout=30)
