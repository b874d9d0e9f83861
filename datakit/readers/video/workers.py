"""The conversion's worker processes: started without importing the caller's script.

``spawn`` starts a fresh interpreter per worker and re-imports the caller's
``__main__`` from its file: a script without an ``if __name__ == "__main__":``
guard then runs again in every worker, which starts workers of its own and
fails, and a ``multiprocessing.Pool`` restarts the dead workers forever.
:func:`convert_all` hides the main module while its workers start (their
preparation data then names no main file or module, so they import only the
kit), runs them in a ``ProcessPoolExecutor`` (a dead worker breaks the pool,
it is never restarted) and names the video a dead worker was converting.
Workers ignore Ctrl-C: the caller's process stops them and says what is kept.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import types
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from datakit.core.errors import DataError

__all__ = ["convert_all"]


@contextmanager
def _main_hidden():
    """``__main__`` replaced by an empty module (no file, no spec) while workers start."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _ignore_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _outcome(work, item):
    """``work(item)``, or the :class:`DataError` it raised (returned, to be skipped or raised)."""
    try:
        return work(item)
    except DataError as e:
        return e


def convert_all(work, items, todo, processes: int):
    """Yield ``(i, work(items[i]) or its DataError)`` for each ``i`` in ``todo``, as they finish.

    At most ``2 * processes`` videos are in flight, so memory holds only their
    results. A worker that dies is a :class:`DataError` naming its video.
    """
    if processes <= 1:
        for i in todo:
            yield i, _outcome(work, items[i])
        return
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_ignore_interrupt)
    pending: dict = {}  # future -> the index of its video
    queue = list(reversed(todo))
    try:
        while queue or pending:
            while queue and len(pending) < 2 * processes:
                i = queue.pop()
                with _main_hidden():  # a submit may start a worker
                    pending[pool.submit(_outcome, work, items[i])] = i
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                i = pending.pop(future)
                try:
                    yield i, future.result()
                except BrokenProcessPool:
                    raise DataError(getattr(items[i], "path", str(items[i])),
                                    "a worker process died while converting this video "
                                    "(out of memory, or a crash in its decoder); "
                                    "run write_video_shards again with processes=1 to see "
                                    "the error (the videos already converted are kept)"
                                    ) from None
    except BaseException:
        for p in list((pool._processes or {}).values()):  # stop now, not after the queue
            p.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
