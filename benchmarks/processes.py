"""Each contender in its own process: a worker module run with a job, its RESULT line read back.

:func:`run_in_process` passes a JSON job; :func:`run_child` runs ``--one X`` of a
benchmark whose command line :func:`cli` builds.
"""

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


def run_child(module: str, one: str, *extra: str, timeout: float) -> dict:
    """``python -m <module> --one <one> ...`` in a fresh process; its RESULT line, or an error."""
    cmd = [sys.executable, "-m", module, "--one", one, *extra]
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    return next((json.loads(line[7:]) for line in p.stdout.splitlines()
                 if line.startswith("RESULT ")), None) or {
        "error": (p.stderr.strip().splitlines() or ["no output"])[-1][:300]}


def cli(prog: str, argv, one, full, **options) -> int:
    """A benchmark's command line: ``--one X`` prints one RESULT line, else the full report."""
    import argparse
    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("--one")
    ap.add_argument("--quick", action="store_true")
    for name, default in options.items():
        ap.add_argument(f"--{name}", type=type(default), default=default)
    args = ap.parse_args(argv)
    print("RESULT " + json.dumps(one(args)) if args.one else full(args), flush=True)
    return 0
