"""Every route notebook runs twice in a row in one kernel (the root conftest's
``run_route_twice``): after its last cell, each code cell runs once more, as "Cell N again",
in the same nbval kernel. Deeper chapters (11-24) run once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def collected(*paths: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *paths], cwd=ROOT, capture_output=True,
                         text=True, timeout=120).stdout
    return [line for line in out.splitlines() if "::Cell " in line]


def test_a_route_notebook_runs_each_cell_again_after_its_last_and_a_chapter_does_not():
    ids = collected("notebooks/01_datasets.ipynb", "notebooks/11_shuffle_mixing.ipynb")
    route = [i for i in ids if "01_datasets" in i]
    first = [i for i in route if not i.endswith(" again")]
    assert first and route == first + [f"{i} again" for i in first], route
    assert ids and not any(i.endswith(" again") for i in ids if "11_shuffle" in i)
