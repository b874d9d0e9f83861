"""Every notebook runs from pip alone, or stops at its first cell saying what to do.

The first code cell (tag ``install-kit``) is written by ``tests/notebook_setup.py`` from one
template and the kit's one address (``[tool.datakit] install`` in pyproject.toml): where
``import datakit`` fails it installs the kit with the extras that notebook needs; where
that cannot work it raises one error naming the fix, so nothing after it runs; where a
``datakit`` that is not this kit is imported (``datakit-core`` installs one) it names it.
Where the kit is installed (a clone's ``make lab``, the tests), it does nothing and prints
nothing, so stored outputs stay valid (nbval runs it like any other cell).
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from notebook_setup import ON_DEMAND, address, extras_needed, install_cell

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def readme_addresses() -> list[str]:
    """Every install address the README's "Run it without a clone" section gives."""
    section = (ROOT / "README.md").read_text().split("## Run it without a clone", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r'"(tf-datakit(?:\[[\w,]+\])? @ \S+)"', section)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_first_code_cell_installs_the_kit_with_the_extras_the_notebook_needs(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [c for c in code if "install-kit" in c.metadata.get("tags", [])]
    assert tagged == code[:1], "one install cell (tag install-kit), the first code cell"
    assert code[0].outputs == [], "where the kit imports, the install cell prints nothing"
    extras = extras_needed(nb)
    assert code[0].source == install_cell(extras), "run python tests/notebook_setup.py"
    table = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1]
    declared = set(re.findall(r"^(\w+) = \[", table.split("\n[", 1)[0], re.M))
    assert extras <= declared and {"video", "notebook", "transform", "backends"} <= declared
    assert "%pip install --quiet \"datakit" not in code[0].source  # never a bare index name


def test_the_readme_gives_the_one_address_of_pyproject():
    name, url = address().split(" @ ")
    found = readme_addresses()
    assert found and {a.split(" @ ")[1] for a in found} == {url}
    assert all(a.startswith(name) for a in found)


@pytest.mark.parametrize("stem", ["14_full_pass_tf_transform", "24_keras_backends"])
def test_a_chapter_with_a_heavy_extra_says_so_and_installs_it_on_demand(stem):
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    extra = stem.split("_")[-1] if stem.startswith("24") else "transform"
    assert f"**Needs the `{extra}` extra**" in nb.cells[0].source
    assert "`make lab` leaves out" in nb.cells[0].source
    cell = next(c for c in nb.cells if c.cell_type == "code")
    # with the kit there but not the extra (a clone's `make lab`): the extra's requirements
    # as the installed kit declares them, whichever way it was installed
    assert f"if not all(importlib.util.find_spec(m) for m in {ON_DEMAND[extra]!r}):" in cell.source
    makefile = (ROOT / "Makefile").read_text()
    assert "\nlab: $(VENV)/.installed-notebook+video\n" in makefile
    assert "\ntest: $(VENV)/.installed-test+video+transform+backends\n" in makefile


#: Put first on a kernel's path: `datakit` cannot be imported there, as in a fresh venv.
NO_KIT = textwrap.dedent("""
    import importlib.abc, sys

    class NoKit(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "datakit" or name.startswith("datakit."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, NoKit())
""")


def _run_first_cells(tmp_path: Path, monkeypatch, path_first: Path) -> tuple:
    """Notebook 05's install cell, then a cell that would print, in a kernel whose path
    starts with ``path_first``; no index, no network for pip."""
    nb = nbformat.read(ROOT / "notebooks" / "05_csv_pipeline.ipynb", as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    nb.cells = [first, nbformat.v4.new_code_cell("print('the next cell ran')")]
    monkeypatch.setenv("PYTHONPATH", str(path_first))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    client = NotebookClient(nb, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(CellExecutionError) as raised:
        client.execute()
    return raised.value, nb.cells[1].outputs


@pytest.mark.timeout(300)
def test_without_the_kit_and_the_network_the_install_cell_stops_naming_the_fix(tmp_path,
                                                                                monkeypatch):
    hide = tmp_path / "path"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(NO_KIT)
    error, next_outputs = _run_first_cells(tmp_path, monkeypatch, hide)
    assert error.ename == "ModuleNotFoundError"
    text = " ".join(error.evalue.split())
    assert text.startswith("datakit is not installed in this kernel and cannot be installed "
                           "from git+https://github.com/OWNER/datakit (OWNER: not published")
    assert "python -m pip wheel --no-deps -w dist ." in text and "make lab" in text
    assert '%pip install "tf_datakit-' in text and "run this cell again" in text
    assert next_outputs == []  # nothing cascades: the run stopped at the install cell


@pytest.mark.timeout(300)
def test_a_foreign_datakit_first_on_the_path_is_named_with_the_fix(tmp_path, monkeypatch):
    foreign = tmp_path / "path"
    (foreign / "datakit").mkdir(parents=True)
    (foreign / "datakit" / "__init__.py").write_text('"""Another project\'s datakit."""\n')
    info = foreign / "datakit_core-0.5.4.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: datakit-core\n"
                                   "Version: 0.5.4\n")
    (info / "top_level.txt").write_text("datakit\n")
    (info / "RECORD").write_text("datakit/__init__.py,,\n")
    error, next_outputs = _run_first_cells(tmp_path, monkeypatch, foreign)
    assert error.ename == "ImportError"
    text = " ".join(error.evalue.split())
    assert f"the datakit imported here ({foreign / 'datakit' / '__init__.py'}) is not this " \
           "kit: it is installed by datakit-core, another project" in text
    assert "Uninstall it (pip uninstall datakit-core)" in text
    assert next_outputs == []
    assert os.environ["PIP_NO_INDEX"] == "1"


def test_the_readme_route_for_tensorflow_cpu_lists_every_other_dependency():
    """``pip install --no-deps`` then the rest: the rest is pyproject's list less tensorflow."""
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("\ndependencies = [", 1)[1].split("\n]", 1)[0]
    wanted = {d for d in re.findall(r'^\s*"([^"]+)"', block, re.M)
              if d.split(">")[0] != "tensorflow"}
    readme = (ROOT / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("pip install numpy "))
    listed = {w.strip('"') for w in line.split()[2:]}
    assert listed == wanted
    assert f'pip install --no-deps "{address()}"' in readme
