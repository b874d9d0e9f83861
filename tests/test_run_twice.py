"""Every route notebook (01-10) runs twice in a row in one kernel without an error: a learner
re-runs a notebook, or a cell, and must not meet ``FileExistsError``, a list that grew twice,
or a folder that holds last run's files.

The notebook runs top to bottom, then every code cell runs once more in the same kernel
(cells tagged ``raises-exception`` may raise, both times). The first run's outputs are
nbval's business (the stored notebook); this test only asks that the second run raises
nothing. Cost: one more run of each route notebook, minus its kernel start and imports.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
ROUTE = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if p.stem < "11")

pytestmark = pytest.mark.timeout(900)


def twice(path: Path) -> nbformat.NotebookNode:
    """The notebook's cells, then its code cells again: the second run in the same kernel."""
    nb = nbformat.read(path, as_version=4)
    again = [nbformat.v4.new_code_cell(c.source, metadata={"tags": c.metadata.get("tags", [])})
             for c in nb.cells if c.cell_type == "code"
             and "install-kit" not in c.metadata.get("tags", [])]
    nb.cells = nb.cells + again
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


@pytest.mark.parametrize("path", ROUTE, ids=lambda p: p.stem)
def test_the_notebook_runs_twice_in_one_kernel(path, monkeypatch):
    monkeypatch.setenv("DATAKIT_PROGRESS", "0")
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = twice(path)
    first = sum(c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except CellExecutionError as error:
        code = [c for c in nb.cells if c.cell_type == "code"]
        failed = next((i for i, c in enumerate(code) if any(
            o.output_type == "error" for o in c.get("outputs", []))
            and "raises-exception" not in c.metadata.get("tags", [])), None)
        when = "first" if failed is not None and failed < first else "second"
        pytest.fail(f"{path.name}: the {when} run raised: {str(error)[-600:]}")
