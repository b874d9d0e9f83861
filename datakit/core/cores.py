"""How many CPU cores this process may use: its affinity, capped by a container's CPU quota.

A pod limited to 4 CPUs on a 64-core node still sees 64 cores in
``os.sched_getaffinity``; the limit lives in the cgroup's CPU quota
(``cpu.max`` in cgroup v2, ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` in
v1). The kit sizes its own worker processes and decode threads with
:func:`cpu_cores`, which honours both. TensorFlow's own ``MaxParallelism``
(what sizes its thread pools and an ``AUTOTUNE`` interleave's cycle) counts
the affinity alone: :func:`affinity_cores`.

>>> 1 <= cpu_cores() <= affinity_cores()
True
>>> quota_cores("250000 100000")  # 2.5 CPUs of quota: 3 workers use all of it
3
>>> quota_cores("max 100000") is None  # no limit
True

This module imports nothing from the kit, nor TensorFlow.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

__all__ = ["cpu_cores"]

_CGROUP_ROOT = Path("/sys/fs/cgroup")


#: The most worker processes Windows lets one ``ProcessPoolExecutor`` wait on (its
#: ``WaitForMultipleObjects`` limit, less the pool's own handles): more is a ``ValueError``.
WINDOWS_MAX_WORKERS = 61


def affinity_cores() -> int:
    """The cores this process may be scheduled on (TensorFlow's ``MaxParallelism``): the
    affinity (Linux; Windows through ``psutil``), else every core (macOS has no affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        pass
    try:
        import psutil
        return len(psutil.Process().cpu_affinity()) or os.cpu_count() or 1
    except (ImportError, AttributeError, OSError):  # macOS: no cpu_affinity
        return os.cpu_count() or 1


def pool_workers(wanted: int, platform: str = sys.platform) -> int:
    """``wanted`` worker processes, capped where the system caps a process pool (61 on
    Windows, :data:`WINDOWS_MAX_WORKERS`); at least 1.

    >>> pool_workers(64, "win32"), pool_workers(64, "linux")
    (61, 64)
    """
    return max(1, min(wanted, WINDOWS_MAX_WORKERS) if platform == "win32" else wanted)


def cpu_cores(cgroup_root: Path | str = _CGROUP_ROOT) -> int:
    """The cores this process may keep busy: its affinity, capped by its cgroup's CPU quota.

    A fractional quota rounds up (2.5 CPUs: 3 workers share it); never less than 1.
    """
    cores = affinity_cores()
    quota = _cgroup_quota(Path(cgroup_root))
    return max(1, min(cores, quota)) if quota is not None else cores


def quota_cores(cpu_max: str) -> int | None:
    """The cores a cgroup v2 ``cpu.max`` line allows (``"QUOTA PERIOD"``), ``None`` for ``max``.

    A line that cannot be parsed (an unreadable file reads as ``max``, a v1 quota beside an
    unreadable period, garbage) counts as no limit: ``None``, never an error.
    """
    fields = cpu_max.split()
    try:
        quota = int(fields[0])
        period = int(fields[1]) if len(fields) > 1 else 100_000
    except (IndexError, ValueError):
        return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, math.ceil(quota / period))


def _cgroup_quota(root: Path) -> int | None:
    """The tightest CPU quota on this process's cgroup path (v2, then v1), or ``None``."""
    limits = []
    for folder in _cgroup_folders(root):
        if (folder / "cpu.max").is_file():
            limits.append(quota_cores(_read(folder / "cpu.max")))
        elif (folder / "cpu.cfs_quota_us").is_file():  # v1: -1, empty or unreadable: no limit
            quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
            limits.append(quota_cores(f"{quota or 'max'} {period or 'max'}"))
    found = [limit for limit in limits if limit is not None]
    return min(found) if found else None


def _cgroup_folders(root: Path) -> list[Path]:
    """The folders whose quota binds this process: its own cgroup and each one above it.

    ``/proc/self/cgroup`` names the process's path in each hierarchy
    (``0::/path`` for v2, ``N:cpu,cpuacct:/path`` for v1); a container that
    mounts its own cgroup at the root shows ``/``.
    """
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:  # not Linux
        return []
    folders: list[Path] = []
    for line in lines:
        if line.count(":") < 2:  # not a cgroup line: no limit read from it
            continue
        _, controllers, path = line.split(":", 2)
        names = controllers.split(",")
        if controllers == "":  # cgroup v2: mounted at the root, or beside v1 as unified/
            base = root if (root / "cgroup.controllers").is_file() else root / "unified"
        elif "cpu" in names:
            base = next((root / d for d in ("cpu", "cpu,cpuacct") if (root / d).is_dir()), root)
        else:
            continue
        parts = [p for p in path.split("/") if p]
        folders += [base.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]
    return folders


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:  # vanished or unreadable: no limit known
        return "max"
