"""Two small things every benchmark's report needs: a median that tolerates nothing measured,
and the machine's load average."""

from __future__ import annotations

import os
import statistics


def median(xs) -> float:
    """The median of ``xs`` (``None`` left out); NaN when nothing is left.

    >>> median([3, 1, None, 2]), median([])
    (2, nan)
    """
    kept = [x for x in xs if x is not None]
    return statistics.median(kept) if kept else float("nan")


def load_average() -> float:
    """The 1-minute load average; NaN where the system has none (Windows)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
