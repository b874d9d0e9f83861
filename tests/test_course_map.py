"""The README's course map is the course: every notebook in it once, with its real size.

A notebook's size is its lesson cells: its install cell (the first code cell, tagged
``install-kit``, see tests/test_install_cell.py) is set-up and is not counted.

The core route is what a learner with one goal reads in order, each notebook saying at
its top what it needs and how long it takes; deeper chapters say after which core
notebook they come, what they add and when a learner needs them.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ROW = re.compile(r"^\| \[(\w+)\]\(notebooks/(\w+)\.ipynb\) \| (\d+) \|")


def course_map() -> dict[str, list[tuple[str, int]]]:
    """The README's "Core route" and "Deeper chapters" tables: section -> [(stem, cells)]."""
    tables: dict[str, list[tuple[str, int]]] = {}
    section = None
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("### "):
            section = line[4:].strip()
        match = ROW.match(line)
        if match and section:
            assert match.group(1) == match.group(2), line
            tables.setdefault(section, []).append((match.group(2), int(match.group(3))))
    return tables


def lesson_cells(nb: nbformat.NotebookNode) -> int:
    """A notebook's cells but its install cell (tagged ``install-kit``: set-up, not lesson)."""
    return sum("install-kit" not in c.metadata.get("tags", []) for c in nb.cells)


def cells(stem: str) -> int:
    return lesson_cells(nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4))


def test_every_notebook_is_on_the_map_once_with_its_real_cell_count():
    listed = [row for rows in course_map().values() for row in rows]
    assert sorted(stem for stem, _ in listed) == [p.stem for p in NOTEBOOKS]
    wrong = {stem: (n, cells(stem)) for stem, n in listed if n != cells(stem)}
    assert not wrong, f"README cell counts (stated, real): {wrong}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_says_where_it_stands(path):
    first = nbformat.read(path, as_version=4).cells[0].source
    core = {stem for stem, _ in course_map()["Core route"]}
    where = (r"Core\s+route,\s+notebook\s+\d+\s+of\s+\d+\.\s+Needs:" if path.stem in core
             else r"Deeper\s+chapter,\s+after\s+core\s+notebook\s+\d+\.")
    assert re.search(where, first), f"{path.name}: {first[:300]}"
    stated = re.search(r"About\s+(\d+)\s+cells\s+and\s+(\d+)\s+exercises?", first)
    assert stated, f"{path.name}: its first cell does not say how long it takes"
    assert int(stated.group(1)) == lesson_cells(nbformat.read(path, as_version=4))


def test_the_core_route_is_short_enough_to_finish():
    """At most 10 core notebooks, 500 cells in all, 60 in any one (a minute a cell)."""
    core = course_map()["Core route"]
    sizes = {stem: cells(stem) for stem, _ in core}
    assert len(core) <= 10, sizes
    assert sum(sizes.values()) <= 500, sum(sizes.values())
    assert max(sizes.values()) <= 60, {s: n for s, n in sizes.items() if n > 60}
