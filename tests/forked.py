"""Scripts run each in a process of its own, forked from one that has imported TensorFlow.

A test that measures a process's RSS needs a process where nothing else ran: in a pytest
worker, memory an earlier test frees while a report runs shrinks the growth it measures.
A fresh Python gives that, at the price of importing TensorFlow again (3.5 s of CPU each,
10 s of wall time on a loaded machine). :class:`Forker` pays the import once: a fresh
Python imports TensorFlow (lean, :func:`datakit.tensorflow_logs.import_tensorflow_lean`:
without Keras' optimizers and JAX, which the scripts' pipelines never use; a script that
does loads them as usual) and the given modules, runs nothing else (no op, no dataset: no
runtime thread pool exists yet, so forking it is safe), and forks one child per script.
Each child starts from that state, as a fresh Python would after the same imports, runs
the script and ends: as soon as its output is flushed (``os._exit``: shutting down an
interpreter that loaded TensorFlow costs 1.2 s of CPU), or, for a script that checks its
exit, the ordinary way (``shutdown=True``: its interpreter shuts down, ``atexit`` runs, a
daemon thread left blocked must not hold the exit up, as in a fresh Python).

An environment variable TensorFlow reads while it loads (``TF_ENABLE_ONEDNN_OPTS``) must be
set before the import: :func:`forker` keeps one parent per environment.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

#: The parent's loop: import, then for each request fork a child that runs the script with
#: its standard output and error in files, wait for it, answer with its exit status.
_PARENT = r"""
import importlib, json, os, sys, traceback
sys.path.insert(0, sys.argv[1])
from datakit.tensorflow_logs import import_tensorflow_lean
import_tensorflow_lean()  # no script here trains: Keras' optimizers and JAX load if one does
for name in sys.argv[2:]:
    importlib.import_module(name)
answer = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # what an import prints goes to stderr, never into the answers
for line in sys.stdin:
    job = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
        sys.stdin.close()
        answer.close()
        sys.argv = ["-c", *job["args"]]
        code = 0
        try:
            exec(compile(job["script"], "<forked script>", "exec"), {"__name__": "__main__"})
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else int(e.code is not None)
        except BaseException:
            traceback.print_exc()
            code = 1
            if job["shutdown"]:  # as for an uncaught error: its traceback kept to the exit
                sys.last_type, sys.last_value, sys.last_traceback = sys.exc_info()
        if job["shutdown"]:
            sys.exit(code)  # the interpreter shuts down as a fresh one would
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    answer.write(json.dumps(os.waitstatus_to_exitcode(status)) + "\n")
    answer.flush()
os._exit(0)  # no request left: nothing of this parent's own needs a shutdown
"""


class Forker:
    """A parent process that has imported TensorFlow and ``modules`` (``folder`` importable),
    with ``env`` added to its environment; :meth:`run` forks a child for each script."""

    def __init__(self, folder: Path, modules: tuple[str, ...] = (), env: dict | None = None):
        self.folder = Path(folder)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _PARENT, str(folder), *modules],
            env={**os.environ, **(env or {})}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True)  # its children too
        self.count = 0

    def run(self, script: str, args: tuple[str, ...], scratch: Path, timeout: float,
            shutdown: bool = False) -> tuple[int, str, str]:
        """(exit status, stdout, stderr) of ``script`` run in a child (``sys.argv[1:]`` is
        ``args``); ``scratch`` holds its output files. After ``timeout`` seconds the parent
        and the child are killed (``subprocess.TimeoutExpired``). ``shutdown``: the child
        exits the ordinary way, its interpreter shut down (1.2 s of CPU with TensorFlow
        loaded), for a script that checks its exit; else it flushes its output and ends
        (``os._exit``)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.count += 1
        out, err = scratch / f"forked_{self.count}.out", scratch / f"forked_{self.count}.err"
        job = {"script": script, "args": list(args), "out": str(out), "err": str(err),
               "shutdown": shutdown}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        if not select.select([self.proc.stdout], [], [], timeout)[0]:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            said = err.read_text()[-3000:] if err.exists() else ""
            raise subprocess.TimeoutExpired(script[:200], timeout, said)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the forking parent ended (exit {self.proc.wait()})")
        return json.loads(line), out.read_text(), err.read_text()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a child that hangs (a test timed out)
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()  # its answers' pipe: no ResourceWarning at exit
