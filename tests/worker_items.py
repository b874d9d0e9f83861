"""Videos for tests of the converter's worker processes: their "conversion" sleeps, or
kills its own worker once the others are in flight (as the out-of-memory killer would).

A worker imports this module to run them (only the standard library and the kit's
``workers`` module, which it has loaded already), so it is kept apart from the tests.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    path: str  # what an error names, as a video's path
    kill_with: int = 0  # a signal: the worker sends it to itself; 0: it sleeps
    in_flight: int = 0  # videos that must have started (this one too) before the signal


def run(item: Item) -> None:
    """The work of the test's "videos": sleep a minute (until the pool ends the worker), or
    wait until ``item.in_flight`` videos are in flight and send ``item.kill_with`` to
    this worker."""
    from datakit.readers.video.converter import workers

    if not item.kill_with:
        time.sleep(60)
        return
    while sum(pid > 0 for pid in workers._started) < item.in_flight:
        time.sleep(0.01)
    os.kill(os.getpid(), item.kill_with)
