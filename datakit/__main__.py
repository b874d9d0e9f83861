"""``python -m datakit notebooks [FOLDER]``: the course's notebooks, copied where you work.

The wheel ships the notebooks (their Korean edition in ``ko/``, the start page and the
glossary) beside the package, so a kit installed
from pip alone has them without a clone: this command copies them into ``FOLDER``
(default ``datakit-notebooks`` in the current folder), leaving a notebook already there
as it is (your edits stay), and prints the folder; then ``jupyter lab FOLDER``. A kit run
from a clone prints the clone's ``notebooks/`` folder instead (nothing to copy).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from datakit.core.shipped import shipped_folder

__all__: list[str] = []


def copy_notebooks(folder: Path) -> Path:
    """Copy the shipped notebooks into ``folder``; return the folder that holds them."""
    clone = Path(__file__).resolve().parent.parent / "notebooks"
    if (clone / "01_datasets.ipynb").is_file():  # a clone's notebooks/, not another package's
        return clone
    shipped = shipped_folder("notebooks")
    if shipped is None:
        raise SystemExit("this datakit was not installed from its wheel and has no notebooks "
                         "beside it: install it with pip (see the README), or clone the kit "
                         "and open its notebooks/ folder")
    for path in sorted(shipped.rglob("*")):  # the Korean edition too, in ko/
        target = folder / path.relative_to(shipped)
        if path.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return folder


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m datakit",
                                     description="The datakit course's commands.")
    commands = parser.add_subparsers(dest="command", required=True)
    notebooks = commands.add_parser("notebooks", help="copy the course's notebooks here")
    notebooks.add_argument("folder", nargs="?", default="datakit-notebooks",
                           help="where to copy them (default: datakit-notebooks)")
    args = parser.parse_args(argv)
    print(copy_notebooks(Path(args.folder).expanduser()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
