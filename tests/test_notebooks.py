"""Every notebook is stored as nbval needs it: executed in order, from a fresh
kernel, errors only where a cell is tagged to raise, no machine-specific noise.

nbval (run by the same pytest command) then re-executes each notebook and
compares the outputs; these checks catch what nbval would not.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
MACHINE_PATH = re.compile(r"(/root/|/tmp/|/work/|/home/\w+/|site-packages/)")
TRACEBACK_PATH = re.compile(r"(/root/|/tmp/|/work/|/home/\w+/|~/|/lib/python3\.\d+/)")
TF_STARTUP_LOG = re.compile(r"oneDNN|cpu_feature_guard|absl::|^[IWE]0000", re.M)


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """What is wrong with a stored notebook (empty list: nothing)."""
    found = []
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    counts = [c.execution_count for _, c in code]
    if any(n is None for n in counts):
        found.append(f"{counts.count(None)} code cell(s) stored unexecuted")
    elif counts != list(range(1, len(counts) + 1)):
        found.append(f"execution counts {counts} are not 1..{len(counts)}: "
                     "re-run from a fresh kernel")
    first = nb.cells[0] if nb.cells else None
    if first is None or first.cell_type != "markdown" or not first.source.startswith("# "):
        found.append("the first cell must be a markdown H1 title")
    for i, cell in code:
        tags = set(cell.metadata.get("tags", []))
        for out in cell.outputs:
            if out.output_type == "error" and "raises-exception" not in tags:
                found.append(f"cell {i}: error output ({out.ename}) "
                             "without the raises-exception tag")
            text = out.get("text", "") if out.output_type == "stream" else ""
            if out.output_type == "stream" and out.name == "stderr" and TF_STARTUP_LOG.search(text):
                found.append(f"cell {i}: TensorFlow start-up log stored (import datakit first)")
            if "AutoGraph could not transform" in text:
                found.append(f"cell {i}: AutoGraph warning stored (two lambdas on one line? "
                             "use named functions)")
            if out.output_type == "error" and TRACEBACK_PATH.search(
                    "\n".join([*out.traceback, out.evalue])):
                found.append(f"cell {i}: another checkout's path in a traceback "
                             "(re-run with tests/run_notebooks.py, which strips them)")
            blob = text + str(out.get("data", {}).get("text/plain", ""))
            if MACHINE_PATH.search(blob) and "nbval-ignore-output" not in tags:
                found.append(f"cell {i}: machine-specific path in a stored output")
            elif TRACEBACK_PATH.search(text):  # even where nbval ignores the output
                found.append(f"cell {i}: another checkout's path in printed text "
                             "(re-run with tests/run_notebooks.py, which strips them)")
        if "raises-exception" in tags and not any(o.output_type == "error" for o in cell.outputs):
            found.append(f"cell {i}: tagged raises-exception but stores no error")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_executed_and_clean(path):
    nb = nbformat.read(path, as_version=4)
    assert problems(nb) == []
    headings = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert any(h.startswith("## Setup") for h in headings), "a notebook opens with ## Setup"
    assert any("## Exercises" in h for h in headings), "a notebook ends with exercises"
    assert any("## Solutions" in h for h in headings), "exercises come with solutions"


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 2


# A folder under data/generated/ named in a notebook's code: `GENERATED / "x"`,
# `DATA_DIR / "generated" / "x"`, `data_path("generated", "x")` or "../data/generated/x"
# (not `data_path("generated", relative=True)`, a keyword).
GENERATED_FOLDER = re.compile(r"""(?:GENERATED\s*/\s*|["']generated["']\s*/\s*|"""
                              r"""data_path\(\s*["']generated["']\s*,\s*(?=["'])|"""
                              r"""data/generated/)"""
                              r"""["']?([\w.-]+)""")


def generated_folders(nb: nbformat.NotebookNode) -> set[str]:
    """The folders under data/generated/ that a notebook's code names."""
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    return set(GENERATED_FOLDER.findall(code))


def test_no_two_notebooks_write_the_same_generated_folder():
    """The browser test runs notebooks two at a time: one re-splitting a folder another reads
    made notebook 04 fail with a file gone (CI, stop 17). Each notebook owns its folders."""
    owners: dict[str, list[str]] = {}
    for path in NOTEBOOKS:
        for folder in generated_folders(nbformat.read(path, as_version=4)):
            owners.setdefault(folder, []).append(path.name)
    assert {f: names for f, names in owners.items() if len(names) > 1} == {}


def test_generated_folders_are_found_in_every_spelling():
    nb = _nb(new_code_cell('a = GENERATED / "one"\nb = DATA_DIR / "generated" / "two"\n'
                           'c = data_path("generated", "three")\n'
                           'd = Path("../data/generated/four")'))
    assert generated_folders(nb) == {"one", "two", "three", "four"}


# The checker itself must catch what it claims to catch.

def _nb(*cells):
    nb = new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), *cells]
    return nb


def _cell(count, outputs=(), tags=()):
    c = new_code_cell("x = 1", execution_count=count, outputs=list(outputs))
    if tags:
        c.metadata["tags"] = list(tags)
    return c


def test_checker_accepts_a_good_notebook():
    err = new_output("error", ename="ValueError", evalue="no", traceback=[])
    assert problems(_nb(_cell(1), _cell(2, [err], ["raises-exception"]))) == []


@pytest.mark.parametrize("nb, expected", [
    (_nb(_cell(1), _cell(None)), "unexecuted"),
    (_nb(_cell(2), _cell(1)), "not 1..2"),
    (_nb(_cell(1), _cell(3)), "not 1..2"),
    (_nb(_cell(1, [new_output("error", ename="KeyError", evalue="k", traceback=[])])),
     "without the raises-exception tag"),
    (_nb(_cell(1, tags=["raises-exception"])), "stores no error"),
    (_nb(_cell(1, [new_output("stream", name="stderr", text="I0000 00:00 cpu_feature_guard")])),
     "start-up log"),
    (_nb(_cell(1, [new_output("stream", name="stdout",
                              text="WARNING: AutoGraph could not transform <f>")])),
     "AutoGraph"),
    (_nb(_cell(1, [new_output("stream", name="stdout", text="saved to /tmp/x/y.csv")])),
     "machine-specific path"),
    (_nb(_cell(1, [new_output("error", ename="E", evalue="e", traceback=["File /work/a/b.py:1"])],
               ["raises-exception"])),
     "path in a traceback"),
])
def test_checker_catches(nb, expected):
    assert any(expected in p for p in problems(nb)), problems(nb)


def test_run_notebooks_strips_site_packages_from_tracebacks():
    from run_notebooks import clean
    where = "/work/wt/x/.venv/lib/python3.11/site-packages/tf/a.py:1"
    err = new_output("error", ename="E", evalue="e", traceback=[f"File \x1b[32m{where}"])
    nb = _nb(_cell(1, [err], ["raises-exception"]))
    clean(nb)
    assert nb.cells[1].outputs[0].traceback == ["File \x1b[32m<site-packages>/tf/a.py:1"]


def test_run_notebooks_strips_paths_from_printed_warnings():
    from run_notebooks import clean
    text = ("/work/wt/x/datakit/cluster/local.py:193: RuntimeWarning: worker 0 died\n"
            "/tmp/ipykernel_11762/3600048306.py:10: UserWarning: careful\n")
    nb = _nb(_cell(1, [new_output("stream", name="stderr", text=text)]))
    clean(nb)
    assert nb.cells[1].outputs[0].text == (
        "datakit/cluster/local.py:193: RuntimeWarning: worker 0 died\n"
        "<notebook cell>:10: UserWarning: careful\n")
