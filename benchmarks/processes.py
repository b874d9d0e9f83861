"""Each contender in its own process: a worker module run with a JSON job, its RESULT read back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_in_process(module: str, job: dict, timeout: int) -> dict:
    """``python -m module '<job as JSON>'``; the dict on its ``RESULT `` line, or
    ``{'error': ...}`` (its last line of stderr, or the timeout)."""
    cmd = [sys.executable, "-m", module, json.dumps(job)]
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (p.stderr.strip().splitlines() or ["no output"])[-1][:300]}
