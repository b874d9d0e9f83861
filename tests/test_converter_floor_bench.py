"""benchmarks/converter_floor.py: the harness runs and prints the converter against its floor."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

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
    busy, busy4 = (float(cells[k].split()[0]) for k in (5, 8))
    assert 0 < busy <= 2 * os.cpu_count() and 0 < busy4 <= 2 * os.cpu_count()
    assert float(cells[7].rstrip("x")) > 0  # 4x the videos: converter / floor
    # a call's fixed CPU s and the rate beyond it are numbers (their sign is noise on the
    # quick work's milliseconds; the test below checks the arithmetic)
    float(cells[9]), float(cells[10].rstrip("x"))
    assert "4x the videos" in results and "a call's fixed CPU s" in results
    summary = next(line for line in results.splitlines() if line.startswith("- the converter"))
    assert "per CPU second" in summary and "cores busy" in summary and "decode alone" in summary
    longer = next(line for line in results.splitlines() if line.startswith("- on the 4 listed"))
    assert "(16 videos, one call)" in longer and "fixed cost" in longer and "beyond it" in longer


def test_a_calls_fixed_cost_and_its_rate_beyond_it_fit_both_calls():
    from benchmarks.converter_floor import fixed_and_rate

    def call(frames):  # 0.25 CPU s a call, then 4,900 frames per CPU s
        return {"frames": frames, "cpu_s": 0.25 + frames / 4900}

    fixed, rate = fixed_and_rate(call(21_600), call(86_400))
    assert fixed == pytest.approx(0.25) and rate == pytest.approx(4900)
