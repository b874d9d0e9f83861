"""One tf.data service server process of a :class:`~datakit.cluster.local.LocalCluster`.

:class:`ServerProcess` runs ``python -m datakit.cluster dispatcher|worker ...``
(see :mod:`datakit.cluster.serve`) in its own process group, with its output
in a log file; it is ready once ``datakit.cluster: ready`` appears there.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["HOST", "free_port", "ServerProcess"]

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class ServerProcess:
    """One server process: its command, log file and ``subprocess.Popen``."""

    def __init__(self, name: str, args: list[str], port: int, logs: Path):
        self.name, self.args, self.port, self.log = name, args, port, logs / f"{name}.log"
        self.popen: subprocess.Popen | None = None
        self.pids: list[int] = []  # every pid this slot ever had (restarts add one)
        self.restart = False  # whether the supervisor starts it again when it is found dead

    def start(self) -> None:
        cmd = [sys.executable, "-m", "datakit.cluster", *self.args, "--exit-with-parent",
               str(os.getpid())]
        with open(self.log, "w") as log:  # the child writes "ready" here once it serves
            self.popen = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
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
        popen = self.popen
        if popen is not None and popen.poll() is None:  # alive()
            os.killpg(popen.pid, signal.SIGKILL)  # its own process group (start_new_session)
            popen.wait(timeout=30)
