"""Every notebook's setup, written from one template: ``python tests/notebook_setup.py``.

The setup code cell (the second code cell, after the install cell) starts with the two
lines of :data:`SETUP_LINES`: ``import datakit``, then ``datakit.quiet_tensorflow()``
before anything imports TensorFlow (``import datakit`` itself changes nothing of the
learner's). The setup markdown's sentence about it is :data:`SETUP_SENTENCE`.

Run it after merging a branch that re-executed notebooks: it rewrites only what differs
from the template (run twice, it changes nothing the second time) and never touches a
stored output, so a notebook it changed must be re-executed
(``python tests/run_notebooks.py notebooks/NN_x.ipynb``) when its outputs depend on the
change. ``tests/test_notebook_setup.py`` checks every notebook matches the template.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: The setup cell's first lines, before any other import.
SETUP_LINES = ("import datakit\n"
               "datakit.quiet_tensorflow()  # first: loads TensorFlow without its start-up lines\n")
#: What the setup markdown says of them, where it says anything.
SETUP_SENTENCE = ("`datakit.quiet_tensorflow()` comes first: it loads TensorFlow without its "
                  "start-up lines.")
#: The sentences the setup markdown said before (``import datakit`` quieted TensorFlow).
OLD_SENTENCES = re.compile(
    r"Import `datakit` first(?:: it quiets TensorFlow's start-up logs\.|"
    r" \(it quiets TensorFlow's start-up logs\), then TensorFlow\.)")
#: The lines the setup cell started with before: ``import datakit  # ...`` and the call.
OLD_FIRST = re.compile(
    r"\A(?:import datakit(?:  #[^\n]*)?\n|datakit\.quiet_tensorflow\(\)[^\n]*\n)+")


def setup_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The setup code cell: the code cell after the install cell (tag ``install-kit``)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return code[1]


def setup_markdown(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The markdown cell just before the install cell (the "## Setup" section)."""
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    return nb.cells[first_code - 1]


def apply(nb: nbformat.NotebookNode) -> bool:
    """Rewrite ``nb``'s setup cell and markdown from the template; True if anything changed."""
    cell, text = setup_cell(nb), setup_markdown(nb)
    source = SETUP_LINES + OLD_FIRST.sub("", cell.source)
    markdown = OLD_SENTENCES.sub(SETUP_SENTENCE, text.source)
    changed = (source, markdown) != (cell.source, text.source)
    cell.source, text.source = source, markdown
    return changed


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or NOTEBOOKS
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if apply(nb):
            nbformat.write(nb, path)
            print(f"{path}: setup rewritten from the template")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
