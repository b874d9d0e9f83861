"""The CI workflow for the public repository: valid, and running what the README says it runs.

``make test`` also runs check-jsonschema on it (GitHub's workflow schema, shipped with the
package: no network); this test runs the same check and reads what the matrix covers.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"


@pytest.mark.timeout(120)
def test_the_workflow_passes_the_github_workflow_schema():
    pytest.importorskip("check_jsonschema", reason="check-jsonschema (the test extra) missing")
    run = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                          "vendor.github-workflows", str(WORKFLOW)],
                         capture_output=True, text=True, timeout=100)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_matrix_runs_the_unit_tests_and_notebooks_01_and_10_from_the_wheel_on_three_oses():
    text = WORKFLOW.read_text()
    assert "os: [ubuntu-latest, macos-latest, windows-latest]" in text
    assert "python -m pytest tests " in text
    assert "python -m pip wheel --no-deps" in text and 'python" -m datakit notebooks' in text
    assert "for nb in 01_datasets 10_your_own_videos; do" in text
    readme = (ROOT / "README.md").read_text()
    assert "(.github/workflows/ci.yml)" in readme  # the platform table links to it
    makefile = (ROOT / "Makefile").read_text()
    assert "check_jsonschema --builtin-schema vendor.github-workflows" in makefile
    assert shutil.which("bash") or sys.platform == "win32"
