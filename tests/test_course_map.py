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

from tests.course import (
    cell_text,
    estimate_minutes,
    exercises,
    exercises_cell,
    is_hidden,
    kit_calls,
    kit_names,
    markdown_words,
    no_space,
    solutions_cell,
    stated_minutes,
)

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
    nb = nbformat.read(path, as_version=4)
    assert int(stated.group(1)) == lesson_cells(nb)
    assert int(stated.group(2)) == len(exercises(nb)), f"{path.name}: {len(exercises(nb))}"
    minutes, estimate = stated_minutes(first), estimate_minutes(nb)
    assert minutes is not None, f"{path.name}: no 'about 1 h 15 min.' after the exercises"
    assert abs(minutes - estimate) <= 15, f"{path.name}: {minutes} min, estimated {estimate:.0f}"


def test_the_core_route_is_short_enough_to_finish():
    """At most 10 core notebooks, 500 cells in all, 60 in any one (a minute a cell)."""
    core = course_map()["Core route"]
    sizes = {stem: cells(stem) for stem, _ in core}
    assert len(core) <= 10, sizes
    assert sum(sizes.values()) <= 500, sum(sizes.values())
    assert max(sizes.values()) <= 60, {s: n for s, n in sizes.items() if n > 60}


def notebook(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)


def core_stems() -> list[str]:
    return [stem for stem, _ in course_map()["Core route"]]


def test_the_core_route_is_a_weekend():
    """At most 11,000 words of markdown (about 2 hours at a non-native reader's pace) and
    16 hours in all, each notebook's time estimated as tests/course.py says."""
    words = {stem: markdown_words(notebook(stem)) for stem in core_stems()}
    assert sum(words.values()) <= 11_000, words
    hours = sum(estimate_minutes(notebook(stem)) for stem in core_stems()) / 60
    assert hours <= 16, f"{hours:.1f} h"


def test_every_core_notebook_has_the_learner_write_code():
    """At least one "Write it yourself" exercise in each core notebook, four in notebook 10."""
    writes = {stem: sum(e.kind == "Write it yourself" for e in exercises(notebook(stem)))
              for stem in core_stems()}
    assert all(n >= 1 for n in writes.values()), writes
    assert writes["10_your_own_videos"] >= 4, writes


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_exercise_says_its_kind_and_hides_its_solution(path):
    nb = nbformat.read(path, as_version=4)
    found = exercises(nb)
    assert found or exercises_cell(nb) is None
    untyped = [e.text[:80] for e in found if e.kind is None]
    assert not untyped, f"items without **Write it yourself.** / **Find the bug.** / ...: {untyped}"
    assert [e.number for e in found] == list(range(1, len(found) + 1))
    unsolved = [e.number for e in found if not e.solution]
    assert not unsolved, f"exercises without a solution after '## Solutions': {unsolved}"
    if found:
        shown = [i for i, c in enumerate(nb.cells[solutions_cell(nb) + 1:]) if not is_hidden(c)]
        assert not shown, f"cells after '## Solutions' not hidden: {shown}"


@pytest.mark.parametrize("stem", [p.stem for p in NOTEBOOKS if p.stem < "11"])
def test_no_kit_drill_on_the_core_route(stem):
    """A core-route exercise has the learner write tf.data code: its solution calls no kit
    helper but the exercise checkers (``exercises.check`` / ``compare``) and plots."""
    nb = notebook(stem)
    names = kit_names(nb)
    drills = {e.number: sorted(set().union(*(kit_calls(c, names) for c in e.solution_code)))
              for e in exercises(nb)}
    assert not {n: used for n, used in drills.items() if used}, drills


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_debug_exercise_is_answered_above_it(path):
    """Each "Find the bug" exercise has a hidden hint, and the fix its solution names
    (``{"datakit": {"fix": ...}}``) appears in that solution and nowhere above it: not in
    the lesson's cells or outputs, not in the exercise list, not in its hint. Judged by
    meaning too: no one lesson cell above the exercises (source and outputs), nor the hint,
    holds all the fix's key identifiers (``"fix_keys"``), so the fix in other words or other
    names is caught (the exercise's own buggy cell may hold them: it is what gets fixed)."""
    nb = nbformat.read(path, as_version=4)
    at = exercises_cell(nb)
    above = no_space("\n".join(cell_text(c) for c in nb.cells[:at])) if at is not None else ""
    between = no_space("\n".join(cell_text(c) for c in nb.cells[at:solutions_cell(nb)])) \
        if at is not None else ""
    for e in exercises(nb):
        if e.kind != "Find the bug":
            continue
        assert e.hints, f"exercise {e.number}: no hidden hint cell (tagged 'hint', 'N. Hint:')"
        assert e.fix, f"exercise {e.number}: its solution code names no fix in its metadata"
        fix = no_space(e.fix)
        assert fix in no_space(e.solution_code[0].source), f"exercise {e.number}: {e.fix!r}"
        assert fix not in above, f"exercise {e.number}: its fix {e.fix!r} is stated above it"
        assert fix not in between, f"exercise {e.number}: its fix {e.fix!r} is in the exercises"
        assert fix not in no_space("".join(e.hints)), f"exercise {e.number}: the hint gives it"
        keys = [no_space(k) for k in e.fix_keys]
        assert keys or path.stem >= "11", f"exercise {e.number}: no fix_keys in its metadata"
        assert all(k in no_space(e.solution_code[0].source) for k in keys), e.fix_keys
        told = [i for i, c in enumerate(nb.cells[:at])  # the lesson, before the exercises
                if keys and all(k in no_space(cell_text(c)) for k in keys)]
        told += ["its hint"] * bool(keys and all(k in no_space("".join(e.hints)) for k in keys))
        assert not told, (f"exercise {e.number}: cells {told} show the fix's keys "
                          f"{e.fix_keys} together, above the solution")


#: The route's budgets (issue 61): markdown words and minutes by tests/course.py's formula,
#: per part of the route.
BUDGETS = {("01", "05"): (4_450, 6 * 60 + 30), ("06", "09"): (4_650, 5 * 60 + 45),
           ("10", "10"): (1_900, 3 * 60 + 45)}


@pytest.mark.parametrize("first, last", list(BUDGETS), ids=lambda s: s)
def test_each_part_of_the_route_keeps_its_budget(first, last):
    """01-05, 06-09 and 10 each within their words and hours; notebook 10's header within
    30 minutes of the formula's estimate."""
    words_at_most, minutes_at_most = BUDGETS[first, last]
    part = [stem for stem in core_stems() if first <= stem[:2] <= last]
    words = sum(markdown_words(notebook(stem)) for stem in part)
    minutes = sum(estimate_minutes(notebook(stem)) for stem in part)
    assert words <= words_at_most, f"{first}-{last}: {words} words"
    assert minutes <= minutes_at_most, f"{first}-{last}: {minutes:.0f} min"
    if last == "10":
        stated = stated_minutes(notebook("10_your_own_videos").cells[0].source)
        assert stated is not None and abs(stated - minutes) <= 30, (stated, minutes)
