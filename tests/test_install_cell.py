"""Every notebook runs from pip alone: its first code cell installs the kit when it is missing.

On Colab or in a fresh environment, ``import datakit`` fails; the cell then installs the
kit with the extras that notebook needs. Where the kit is installed (a clone's
``make lab``, the tests), it does nothing and prints nothing, so stored outputs stay
valid (nbval runs it like any other cell).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
INSTALL = re.compile(r'^    %pip install --quiet "datakit(?:\[([\w,]+)\])? @ (\S+)"$', re.M)

#: What a notebook's code uses -> the extra that installs it.
NEEDS = {"video": r"\bimport av\b|datakit\.readers\.video|from datakit\.readers import video",
         "notebook": r"\bwidgets\.|ipywidgets",
         "transform": r"tensorflow_transform|apache_beam|readers import transform",
         "backends": r"\bjax\b|\btorch\b|\bgrain\b"}


def readme_url() -> str:
    """The install address the README's "Run it without a clone" section gives."""
    section = (ROOT / "README.md").read_text().split("## Run it without a clone", 1)[1]
    return re.search(r'"datakit\[[\w,]+\] @ (\S+)"', section).group(1)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_first_code_cell_installs_the_kit_with_the_extras_the_notebook_needs(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [c for c in code if "install-kit" in c.metadata.get("tags", [])]
    assert tagged == code[:1], "one install cell (tag install-kit), the first code cell"
    cell = code[0]
    assert cell.outputs == [], "where the kit imports, the install cell prints nothing"
    assert "\ntry:\n    import datakit\nexcept ImportError:\n    %pip install" in cell.source
    match = INSTALL.search(cell.source)
    assert match, cell.source
    extras = set(filter(None, (match.group(1) or "").split(",")))
    assert match.group(2) == readme_url()
    rest = "\n".join(c.source for c in code[1:])
    needed = {extra for extra, pattern in NEEDS.items() if re.search(pattern, rest)}
    assert extras == needed
    table = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1]
    declared = set(re.findall(r"^(\w+) = \[", table.split("\n[", 1)[0], re.M))
    assert extras <= declared and {"video", "notebook", "transform", "backends"} <= declared


#: The chapters whose extra `make lab` leaves out, and the modules that tell it is there.
ON_DEMAND = {"14_full_pass_tf_transform": ("transform", ("tensorflow_transform", "apache_beam")),
             "24_keras_backends": ("backends", ("jax", "torch", "grain"))}


@pytest.mark.parametrize("stem", ON_DEMAND)
def test_a_chapter_with_a_heavy_extra_says_so_and_installs_it_on_demand(stem):
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    extra, modules = ON_DEMAND[stem]
    assert f"**Needs the `{extra}` extra**" in nb.cells[0].source
    assert "`make lab` leaves out" in nb.cells[0].source
    cell = next(c for c in nb.cells if c.cell_type == "code")
    # with the kit there but not the extra (a clone's `make lab`): pip adds the extra's
    # packages to the installed kit, whichever way it was installed
    assert (f"if not all(importlib.util.find_spec(m) for m in {modules!r}):\n"
            f'    %pip install --quiet "datakit[{extra}]"') in cell.source
    makefile = (ROOT / "Makefile").read_text()
    assert "\nlab: $(VENV)/.installed-notebook+video\n" in makefile
    assert "\ntest: $(VENV)/.installed-test+video+transform+backends\n" in makefile
