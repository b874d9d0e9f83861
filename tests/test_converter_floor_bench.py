"""benchmarks/converter_floor.py: the harness runs and prints the converter against its floor."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_run_prints_the_floor_beside_decode_alone_and_the_cores_busy(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "benchmarks.converter_floor", "--quick", "--work",
                        str(tmp_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    results = (tmp_path / "RESULTS_converter_quick.md").read_text()
    assert "## 160x120" in p.stdout and "## 160x120" in results
    rows = [line for line in results.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == 1, results  # one round
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    load = [float(x) for x in cells[1].split(",")]
    assert len(load) == 2 and min(load) >= 0
    conv, floor = (float(cells[k].split()[0].replace(",", "")) for k in (2, 3))
    decode, scale = (float(x.replace(",", "")) for x in re.findall(r"[\d,]+", cells[3])[1:3])
    assert min(floor, scale, decode) > 0  # (not ordered: the quick work is milliseconds)
    assert conv > 0 and abs(float(cells[4].rstrip("x")) - conv / floor) < 0.02  # (rounded)
    busy = float(cells[5].split()[0])
    assert 0 < busy <= 2 * os.cpu_count()
    summary = next(line for line in results.splitlines() if line.startswith("- the converter"))
    assert "per CPU second" in summary and "cores busy" in summary and "decode alone" in summary
