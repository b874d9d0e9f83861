"""A full disk for real: a script run with small tmpfs folders, in a private mount namespace.

``on_small_disk(script, {folder: size}, *args)`` mounts a tmpfs of ``size`` on each
folder (``unshare -rm``: no root needed, nothing seen outside), runs ``script`` with
the folders, then ``args``, as its arguments, and returns the JSON its last line
prints. The test is skipped where the machine cannot mount one.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

MOUNT = """
import subprocess, sys
_n = int(sys.argv.pop(1))
for _folder, _size in zip(sys.argv[1:2 * _n:2], sys.argv[2:2 * _n + 1:2]):
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={_size}", "tmpfs", _folder],
                   check=True)
del sys.argv[2:2 * _n + 1:2]  # the script sees its folders, then its other arguments
"""


def on_small_disk(script: str, folders: dict, *args: str, timeout: float = 290) -> dict:
    """Run ``script`` with each folder a tmpfs of its size (``"128k"``): ``sys.argv`` holds
    the folders, then ``args``; returns its last line of output, read as JSON."""
    mounts = [str(a) for f, size in folders.items() for a in (f, size)]
    try:
        run = subprocess.run(["unshare", "-rm", sys.executable, "-c", MOUNT + script,
                              str(len(folders)), *mounts, *args],
                             capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        pytest.skip("no `unshare` here to mount a small tmpfs")
    if run.returncode != 0 and "mount" in run.stderr and "Operation not permitted" in run.stderr:
        pytest.skip("mounting a tmpfs is not permitted here")
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])
