"""The conversion's worker processes: started without importing the caller's script.

``spawn`` starts a fresh interpreter per worker and re-imports the caller's
``__main__`` from its file: a script without an ``if __name__ == "__main__":``
guard then runs again in every worker, which starts workers of its own and
fails, and a ``multiprocessing.Pool`` restarts the dead workers forever.
:func:`convert_all` hides the main module while its workers start (their
preparation data then names no main file or module, so they import only the
kit), runs them in a ``ProcessPoolExecutor`` (a dead worker breaks the pool,
it is never restarted) and names the video a dead worker was converting (each
worker notes in shared memory which video it is on; the pool's break fails every
video in flight at once, so that, not the first failure seen, says whose it was).
Workers ignore Ctrl-C: the caller's process stops them and says what is kept;
SIGTERM (``kill``, ``timeout``) is taken as Ctrl-C while the videos convert; one that
comes while workers start is held until they have started (cut off mid-start, a worker
printed an ``EOFError`` traceback under the caller's message).
Workers end with the caller's process however it ends (SIGTERM, SIGKILL, a
crash): on Linux the kernel kills them when it dies (``PR_SET_PDEATHSIG``), and
everywhere a thread in each worker waits on a pipe whose other end only the
caller holds, and ends the worker when it closes. With the workers gone, the
``multiprocessing`` resource tracker they share ends too (its pipe closes).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.connection import Connection
from types import FrameType
from typing import Any

from datakit.core.cores import pool_workers
from datakit.core.errors import DataError

__all__: list[str] = []


@contextmanager
def _main_hidden() -> Iterator[None]:
    """``__main__`` replaced by an empty module (no file, no spec) while workers start."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


#: ``prctl``'s option that makes the kernel signal a process when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1


#: Set (unless set already) in each worker before NumPy loads: a worker does no linear
#: algebra, and the BLAS thread a core that NumPy started took a worker's imports from 0.10
#: to 0.18 CPU s on 2 cores (more on more).
_ONE_BLAS_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


#: In a worker: the caller's shared array where the worker notes, for the ``k``-th video
#: given out, its PID when it starts it and minus its PID when it is done with it, so that
#: the caller can name the video of a worker that dies (:func:`_died`).
_started: Any = None


def _start_worker(parent: int, lifeline: Connection, started: Any) -> None:
    """A worker's first step: ignore Ctrl-C (the caller handles it), one BLAS thread
    (:data:`_ONE_BLAS_THREAD`), note its videos in ``started`` (:data:`_started`), and end
    with the caller (pid ``parent``): the kernel's death signal on Linux, and ``lifeline``,
    the read end of a pipe only the caller writes to, watched on every system."""
    global _started
    _started = started
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in _ONE_BLAS_THREAD:
        os.environ.setdefault(name, "1")
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):  # no prctl: the pipe below still ends the worker
            pass
    if os.getppid() != parent:  # the caller died before the death signal was set
        os._exit(1)
    threading.Thread(target=_end_with, args=(lifeline,), daemon=True,
                     name="datakit-parent-watch").start()


def _end_with(lifeline: Connection) -> None:
    """Block until the caller's end of the pipe closes (it died, or the pool shut down), then
    end this worker at once."""
    try:
        lifeline.recv_bytes()
    except (EOFError, OSError):
        pass
    os._exit(1)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raised as ``KeyboardInterrupt`` in the caller while its workers run, so that a
    ``kill`` stops them and says what is kept, as Ctrl-C does (only from the main thread,
    and only where no handler of the caller's own is set)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        if _held is not None:  # workers are starting: raised once they have
            _held.append(signum)
            return
        raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


#: While workers start, the interrupts (SIGTERM, and Ctrl-C in the main thread) that came.
_held: list[int] | None = None


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held while a submit starts workers, then raised: raised in the middle
    of a start, the caller's ``KeyboardInterrupt`` cut a worker's preparation data short,
    and the worker printed an ``EOFError`` traceback below the caller's message."""
    global _held
    main = threading.current_thread() is threading.main_thread()
    own = main and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    _held = []
    if own:
        signal.signal(signal.SIGINT, lambda signum, frame: _held.append(signum)
                      if _held is not None else None)
    try:
        yield
    finally:
        if own:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        came, _held = _held, None
    if came:
        raise KeyboardInterrupt("" if came[0] == signal.SIGINT else
                                f"signal {came[0]} (SIGTERM)")


def _outcome(work: Callable[[Any], Any], item: Any) -> Any:
    """``work(item)``, or the :class:`DataError` it raised (returned, to be skipped or raised)."""
    try:
        return work(item)
    except DataError as e:
        return e


def _in_worker(work: Callable[[Any], Any], item: Any, k: int) -> Any:
    """:func:`_outcome` in a worker process, for the ``k``-th item given out (noted in
    :data:`_started` while it runs). After its first item, the objects the worker
    holds (nearly all of them the modules the work imported) are frozen out of the garbage
    collector's sight (``gc.freeze``): the collections at the worker's exit no longer walk
    them (its exit took 0.018 CPU s, 0.006 with them frozen). Frozen without a collection
    first: what the first video left in reference cycles, a few objects, is kept until
    the worker ends."""
    assert _started is not None  # set by _start_worker
    _started[k] = os.getpid()
    try:
        return _outcome(work, item)
    finally:
        _started[k] = -os.getpid()
        if not gc.get_freeze_count():
            gc.freeze()


def convert_all(work: Callable[[Any], Any], items: Mapping[int, Any] | Sequence[Any],
                todo: Sequence[int], processes: int) -> Iterator[tuple[int, Any]]:
    """Yield ``(i, work(items[i]) or its DataError)`` for each ``i`` in ``todo``, as they finish.

    At most ``2 * processes`` videos are in flight, so memory holds only their
    results. A worker that dies is a :class:`DataError` naming its video.
    """
    with _terminate_as_interrupt():
        if processes <= 1:
            for i in todo:
                yield i, _outcome(work, items[i])
        else:
            yield from _in_workers(work, items, todo, processes)


def _in_workers(work: Callable[[Any], Any], items: Mapping[int, Any] | Sequence[Any],
                todo: Sequence[int], processes: int) -> Iterator[tuple[int, Any]]:
    context = multiprocessing.get_context("spawn")
    lifeline, held = context.Pipe(duplex=False)  # workers watch `lifeline`; `held` stays here
    started = context.Array("q", max(1, len(todo)), lock=False)  # see _started
    pool = ProcessPoolExecutor(pool_workers(processes),  # Windows refuses more than 61
                               mp_context=context, initializer=_start_worker,
                               initargs=(os.getpid(), lifeline, started))
    # every worker started at the first submit, before the pool's watcher thread: started
    # one per submit (its default with `spawn`), the last is often missing from the
    # processes the watcher waits on, and its death was seen only when another video ended
    pool._safe_to_dynamically_spawn_children = False  # type: ignore[attr-defined]
    workers = pool._processes  # pid -> process (the pool's own dict): their exit codes
    pending: dict = {}  # future -> (k, the index of its video): the k-th given out
    queue = list(reversed(list(enumerate(todo))))
    try:
        while queue or pending:
            while queue and len(pending) < 2 * processes:
                k, i = queue.pop()
                with _interrupts_held(), _main_hidden():  # a submit may start a worker
                    pending[pool.submit(_in_worker, work, items[i], k)] = (k, i)
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                k, i = pending.pop(future)
                try:
                    yield i, future.result()
                except BrokenProcessPool:
                    pool.shutdown(wait=True)  # every worker ended: their exit codes are final
                    raise _died(items, [(k, i), *pending.values()], started, workers) \
                        from None
        pool.shutdown(wait=True)
    except BaseException:
        for p in list((pool._processes or {}).values()):  # stop now, not after the queue
            p.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        held.close()  # (the workers are gone by now; a worker still there would end)
        lifeline.close()


def _exit_said(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


def _died(items: Mapping[int, Any] | Sequence[Any], broken: list[tuple[int, int]],
          started: Any, workers: Mapping[int, Any] | None) -> DataError:
    """The error for a pool broken by a worker that died, naming the video it was converting.

    ``broken``: ``(k, index)`` of each video whose result the break lost, ``started`` the
    workers' notes (:data:`_started`), ``workers`` pid -> process. The pool terminates the
    other workers (``SIGTERM``) once one is dead, so a worker that ended otherwise (killed
    by ``SIGKILL``, as the out-of-memory killer does; a crash; an exit) is the one that
    died. When no such worker was converting one of them (a worker ended with ``SIGTERM``
    by hand), every video then in flight is listed as a suspect.
    """
    def path(i: int) -> str:
        return str(getattr(items[i], "path", items[i]))

    codes = {pid: p.exitcode for pid, p in (workers or {}).items()}
    broken = sorted(broken)  # in the order given out
    in_flight = [(k, i) for k, i in broken if started[k] > 0]  # started, not done
    dead = [(i, codes[started[k]]) for k, i in in_flight
            if codes.get(started[k]) not in (None, -signal.SIGTERM)]
    fix = ("run write_video_shards again with processes=1 to see the error (the videos "
           "already converted are kept)")
    if dead:
        (i, code), *others = dead
        also = "".join(f"; another ({_exit_said(c)}) while converting {path(j)}"
                       for j, c in others)
        return DataError(path(i), f"a worker process died while converting this video "
                         f"({_exit_said(code)}: the system's out-of-memory killer sends "
                         f"SIGKILL; else a crash in its decoder){also}; {fix}")
    suspects = [i for _, i in in_flight] or [i for _, i in broken]
    return DataError(path(suspects[0]), f"a worker process died while converting this video "
                     f"or another of the {len(suspects)} then in flight "
                     f"({', '.join(path(i) for i in suspects)}): which one is not known (out "
                     f"of memory, or a crash in a decoder); {fix}")
