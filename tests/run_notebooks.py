"""Re-execute notebooks from a fresh kernel and store them with their outputs.

    python tests/run_notebooks.py notebooks/02_chaining.ipynb [...]

This is how every stored output is made (never typed in): each notebook runs
top to bottom in a new kernel, from its own folder, then volatile metadata
(timestamps, widget state) is stripped. Outputs and execution counts stay:
nbval needs both. A cell that raises stops the run unless it is tagged
``raises-exception``.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

# Where this checkout's Python lives, and where the checkout is, in a traceback:
# "/work/x/.venv/lib/python3.11/site-packages/tensorflow/..." and "/work/x/datakit/...".
SITE_PACKAGES = re.compile(r"(?:/[^\s/\x1b:]+)+/site-packages/")
CHECKOUT = re.compile(r"(?:/[^\s/\x1b:]+)+/(?=datakit/)")
# The standard library's files, "/usr/lib/python3.11/contextlib.py" or, as IPython shortens
# the home folder, "~/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py".
STDLIB = re.compile(r"(?:~|(?:/[^\s/\x1b:<>]+)+)(?:/[^\s/\x1b:<>]+)*/lib/python3\.\d+/")
TEMPORARY = [(re.compile(r"/tmp/ipykernel_\d+/\d+\.py"), "<notebook cell>"),
             (re.compile(r"/tmp/__autograph_generated_file\w+\.py"), "<autograph file>")]


def _strip_paths(line: str) -> str:
    line = CHECKOUT.sub("", SITE_PACKAGES.sub("<site-packages>/", line))
    line = STDLIB.sub("<python>/", line)
    for pattern, name in TEMPORARY:
        line = pattern.sub(name, line)
    return line


def clean(nb: nbformat.NotebookNode) -> None:
    """Strip volatile metadata and this machine's paths.

    TensorFlow's start-up lines never reach a stored output: every notebook's setup cell
    calls ``datakit.quiet_tensorflow()``, which hides them as the learner's run does
    (``tests/notebook_setup.py``).

    Paths go from tracebacks and from printed text (a warning's ``/work/x/datakit/...:193``
    or ``/tmp/ipykernel_1234/56.py:10`` line), so a stored output reads the same from any
    checkout."""
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("execution", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)
        if cell.metadata.get("tags") == []:
            del cell.metadata["tags"]
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                out.traceback = [_strip_paths(line) for line in out.traceback]
                out.evalue = "".join(_strip_paths(line)
                                     for line in out.evalue.splitlines(keepends=True))
            elif out.output_type == "stream":
                out.text = "".join(_strip_paths(line)
                                   for line in out.text.splitlines(keepends=True))


def run(path: Path, timeout: int = 900) -> float:
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    clean(nb)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    os.environ.pop("MPLBACKEND", None)  # kernels draw inline, as in JupyterLab (and under nbval)
    os.environ["DATAKIT_PROGRESS"] = "0"  # no bar's changing text in a stored output
    paths = [Path(a) for a in argv] or sorted(Path("notebooks").glob("*.ipynb"))
    for p in paths:
        print(f"{p}: {run(p):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
