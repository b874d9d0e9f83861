"""Every notebook's setup, written from one template: ``python tests/notebook_setup.py``.

The install cell (the first code cell, tag ``install-kit``) is :func:`install_cell`: where
``import datakit`` fails it installs the kit, with the extras the notebook needs, from the
kit's one address (``install`` under ``[tool.datakit]`` in ``pyproject.toml``, which the
README's "Run it without a clone" repeats), and where that cannot work (the address not
published yet, no network) it raises one error that says what to do, so "Run All" stops
there; where a ``datakit`` that is not this kit is imported, it names it and the fix. A
chapter whose extra ``make lab`` leaves out installs that extra's requirements as the
installed kit declares them (never a bare name from the package index).

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
#: The same for a notebook that measures memory (RSS): oneDNN's pool would hide what is held.
SETUP_LINES_MEMORY = ("import datakit\n"
                      "datakit.quiet_tensorflow(onednn=False)  # first; oneDNN off: RSS counts "
                      "what is held\n")
#: What the setup markdown says of them, where it says anything.
SETUP_SENTENCE = ("`datakit.quiet_tensorflow()` comes first: it loads TensorFlow without its "
                  "start-up lines.")
#: The sentences the setup markdown said before (``import datakit`` quieted TensorFlow).
OLD_SENTENCES = re.compile(
    r"Import `datakit` first(?:: it quiets TensorFlow's start-up logs\.|"
    r" \(it quiets TensorFlow's start-up logs\), then TensorFlow\.)")
#: The lines the setup cell started with before: ``import datakit  # ...`` and the call.
OLD_FIRST = re.compile(
    r"\A(?:import datakit(?:  #[^\n]*)?\n|datakit\.quiet_tensorflow\([^)\n]*\)[^\n]*\n)+")


def address() -> str:
    """The kit's one install address: ``install`` under ``[tool.datakit]`` in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^\[tool\.datakit\]\n(?:.*\n)*?install = "([^"]+)"', text, re.M).group(1)


#: The modules that tell a heavy extra is there, for the chapters that install it on demand.
ON_DEMAND = {"transform": ("tensorflow_transform", "apache_beam"),
             "backends": ("jax", "torch", "grain")}

INSTALL = """\
# Installs the kit when this kernel lacks it (Colab, a fresh venv); else does nothing
KIT = "{kit}"  # the kit's address: README.md
import importlib.metadata, importlib.util, subprocess, sys
try:
    import datakit
except ModuleNotFoundError:
    unpublished = "/OWNER/" in KIT  # the kit has no public address yet
    if unpublished or subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                                      KIT]).returncode:
        raise ModuleNotFoundError(
            "datakit is not installed in this kernel and cannot be installed from "
            + KIT.split(" @ ")[1] + (" (OWNER: not published yet)" if unpublished else "")
            + ". Open this notebook from a clone of the kit (make lab), or build the kit's "
            "wheel in a clone (python -m pip wheel --no-deps -w dist .), upload the .whl "
            'file here and run: %pip install "{wheel}"'
            ", then run this cell again.") from None
    importlib.invalidate_caches()
    import datakit
theirs = [d for d in importlib.metadata.packages_distributions().get("datakit", [])
          if d not in ("tf-datakit", "datakit")]
if theirs or not hasattr(datakit, "__path__") or not importlib.util.find_spec("datakit.exercises"):
    raise ImportError(
        f"the datakit imported here ({{datakit.__file__}}) is not this kit"
        + (": it is installed by " + ", ".join(theirs) if theirs else "")
        + ", another project with the same import name. Uninstall it (pip uninstall "
        + (theirs or ["datakit"])[0] + ") or use a fresh environment, then restart the "
        "kernel and run this cell again.")
"""

EXTRA = """\
# The {extra} extra, when missing: its requirements, as the installed kit declares them
if not all(importlib.util.find_spec(m) for m in {modules!r}):
    owner = importlib.metadata.packages_distributions()["datakit"][0]  # the installed kit
    needs = [r.replace(' and extra == "{extra}"', "").replace('; extra == "{extra}"', "")
             for r in importlib.metadata.requires(owner) or () if 'extra == "{extra}"' in r]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *needs], check=True)
"""


def install_cell(extras: set[str]) -> str:
    """The install cell of a notebook whose code needs ``extras``."""
    from datakit import __version__
    name, url = address().split(" @ ")
    listed = f"[{','.join(sorted(extras))}]" if extras else ""
    cell = INSTALL.format(kit=f"{name}{listed} @ {url}",
                          wheel=f"tf_datakit-{__version__}-py3-none-any.whl{listed}")
    for extra in sorted(set(ON_DEMAND) & extras):
        cell += EXTRA.format(extra=extra, modules=ON_DEMAND[extra])
    return cell.rstrip("\n")


def setup_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The setup code cell: the code cell after the install cell (tag ``install-kit``)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return code[1]


def setup_markdown(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The markdown cell just before the install cell (the "## Setup" section)."""
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    return nb.cells[first_code - 1]


#: What a notebook's code uses -> the extra that installs it.
NEEDS = {"video": r"\bimport av\b|datakit\.readers\.video|from datakit\.readers import video",
         "notebook": r"\bwidgets\.|ipywidgets",
         "transform": r"tensorflow_transform|apache_beam|readers import transform",
         "backends": r"\bjax\b|\btorch\b|\bgrain\b"}


def extras_needed(nb: nbformat.NotebookNode) -> set[str]:
    """The extras the notebook's code (its install cell aside) needs."""
    code = [c.source for c in nb.cells if c.cell_type == "code"
            and "install-kit" not in c.metadata.get("tags", [])]
    return {extra for extra, pattern in NEEDS.items() if re.search(pattern, "\n".join(code))}


def install(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The install cell: the first code cell."""
    return next(c for c in nb.cells if c.cell_type == "code")


#: A path shown relative to the notebook: ``os.path.relpath`` raises on Windows when the data
#: folder is on another drive; ``data_path(..., relative=True)`` falls back to the absolute.
RELPATH = re.compile(r'Path\(os\.path\.relpath\(datakit\.data_path\(("[^"]+")\)\)\)')


def apply(nb: nbformat.NotebookNode) -> bool:
    """Rewrite ``nb``'s install cell, setup cell and setup markdown from the template; True
    if anything changed."""
    first, cell, text = install(nb), setup_cell(nb), setup_markdown(nb)
    before = (first.source, cell.source, text.source)
    sources = [c.source for c in nb.cells]
    first.source = install_cell(extras_needed(nb))
    for code in (c for c in nb.cells if c.cell_type == "code"):
        code.source = RELPATH.sub(r"datakit.data_path(\1, relative=True)", code.source)
    lines = SETUP_LINES_MEMORY if "quiet_tensorflow(onednn=False)" in cell.source else SETUP_LINES
    cell.source = lines + OLD_FIRST.sub("", cell.source)
    text.source = OLD_SENTENCES.sub(SETUP_SENTENCE, text.source)
    return (first.source, cell.source, text.source) != before or sources != [
        c.source for c in nb.cells]


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
