"""cpu_cores honours a container's CPU quota; TensorFlow's own count (affinity_cores) does not."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from datakit.core import cores


def test_no_quota_is_the_affinity(tmp_path):
    assert cores.cpu_cores(tmp_path) == cores.affinity_cores() >= 1


@pytest.mark.parametrize(("line", "expected"), [
    ("max 100000", None), ("100000 100000", 1), ("150000 100000", 2), ("400000 100000", 4),
    ("50000 100000", 1), ("", None),
    # what cannot be parsed is no limit, never an error
    ("100000 max", None), ("abc", None), ("100000 x", None), ("1.5 100000", None),
])
def test_quota_lines(line, expected):
    assert cores.quota_cores(line) == expected


def test_v2_quota_caps_the_count(tmp_path):
    """A cgroup v2 tree as a container mounts it: cpu.max at the root binds every process in it."""
    (tmp_path / "cgroup.controllers").write_text("cpu memory\n")
    (tmp_path / "cpu.max").write_text("100000 100000\n")
    assert cores.cpu_cores(tmp_path) == 1


def test_v1_quota_caps_the_count(tmp_path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cores.cpu_cores(tmp_path) == 1
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")  # v1's "no limit"
    assert cores.cpu_cores(tmp_path) == cores.affinity_cores()


@pytest.mark.parametrize("period", ["missing", "unreadable", "garbled", "empty"])
def test_a_v1_quota_beside_a_period_that_cannot_be_read_is_no_limit(tmp_path, period):
    """A quota with its period file gone, unreadable (a folder here) or garbled: no limit
    known, so the affinity (it raised ``int('max')``, and ``import datakit.doctor`` failed)."""
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    target = tmp_path / "cpu" / "cpu.cfs_period_us"
    if period == "unreadable":
        target.mkdir()
    elif period != "missing":
        target.write_text({"garbled": "1e5\n", "empty": ""}[period])
    assert cores.cpu_cores(tmp_path) == cores.affinity_cores()


def test_a_v2_cpu_max_that_cannot_be_read_is_no_limit(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu memory\n")
    (tmp_path / "cpu.max").write_text("\x00\x01 garbage\n")
    assert cores.cpu_cores(tmp_path) == cores.affinity_cores()


CPU_V1 = Path("/sys/fs/cgroup/cpu")
CAN_MAKE_GROUPS = sys.platform == "linux" and os.geteuid() == 0 and os.access(CPU_V1, os.W_OK)


@pytest.mark.skipif(not CAN_MAKE_GROUPS, reason="needs root and a writable cgroup v1 cpu hierarchy")
def test_a_real_cgroup_with_one_cpu_of_quota(tmp_path):
    """A child process moved into a real cgroup limited to 1 CPU counts 1 core."""
    group = CPU_V1 / f"datakit-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    try:
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text("100000")
        code = ("from datakit.core.cores import cpu_cores, affinity_cores;"
                " print(cpu_cores(), affinity_cores())")
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
            preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
        quota_count, affinity = map(int, out.stdout.split())
        assert (quota_count, affinity) == (1, cores.affinity_cores())
    finally:
        group.rmdir()
