"""The course's conventions, read from the notebooks: words, exercises, hints, fixes, time.

An exercise list is a markdown cell that starts ``## Exercises``; each item starts with its
kind in bold: ``1. **Write it yourself.** ...``, ``**Find the bug.**``, ``**Predict.**`` or
``**Explain.**``. After ``## Solutions`` come hidden cells: for each item ``N`` its solution
(a markdown cell starting ``N.`` and the code cells after it) and, for a "Find the bug"
item, first a hint (a hidden markdown cell tagged ``hint`` starting ``N. Hint:``). The
solution's first code cell names the fix in its metadata, ``{"datakit": {"fix": "..."}}``:
the code that fixes the bug, which must not be stated anywhere above the exercise, and
``"fix_keys"``, the identifiers or fragments that mean the fix, which no one cell above may
show together. On the route (notebooks 01-10) the same metadata names each "Write it
yourself" and "Find the bug" exercise's checker, ``"checker"``: an exercise registered in
``datakit.exercises`` (checked with ``exercises.check(name, ...)``), ``"compare"``
(``exercises.compare(yours, reference)``) or ``"plain"`` (a number or a sentence the
notebook checks in plain code).

A notebook's time is estimated at a non-native reader's pace: its markdown at 100 words a
minute (half a native reader's pace), its lesson code at 4 lines a minute (read, run, look
at the output), and per exercise 5 minutes plus a minute per line of its solution's code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import nbformat

KINDS = ("Write it yourself", "Find the bug", "Predict", "Explain")
ITEM = re.compile(r"^\s{0,3}(\d+)\.\s+(.*)$", re.M)
KIND = re.compile(r"\*\*(" + "|".join(KINDS) + r")\.\*\*")
WORDS_PER_MINUTE = 100
CODE_LINES_PER_MINUTE = 4
CHECKED = ("Write it yourself", "Find the bug")  # the kinds that name a checker on the route
STATED_TIME = re.compile(r"about\s+(?:(\d+)\s*h)?\s*(?:(\d+)\s*min)?\.", re.I)


@dataclass
class Exercise:
    number: int
    kind: str | None  # None: the item does not start with a known kind
    text: str
    hints: list[str] = field(default_factory=list)
    solution: list[nbformat.NotebookNode] = field(default_factory=list)

    @property
    def solution_code(self) -> list[nbformat.NotebookNode]:
        return [c for c in self.solution if c.cell_type == "code"]

    @property
    def meta(self) -> dict:
        """The ``datakit`` metadata of the solution's first code cell."""
        code = self.solution_code
        return dict(code[0].metadata.get("datakit", {})) if code else {}

    @property
    def fix(self) -> str | None:
        return self.meta.get("fix")

    @property
    def fix_keys(self) -> list[str]:
        return list(self.meta.get("fix_keys", []))

    @property
    def checker(self) -> str | None:
        return self.meta.get("checker")


def is_install(cell) -> bool:
    return "install-kit" in cell.metadata.get("tags", [])


def is_hidden(cell) -> bool:
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


#: The first cell's link to the other edition: navigation, not reading.
EDITION_LINK = re.compile(r"^\*한국어판 \(Korean edition\): .*$", re.M)


def markdown_words(nb) -> int:
    return sum(len(EDITION_LINK.sub("", c.source).split()) for c in nb.cells
               if c.cell_type == "markdown")


def exercises_cell(nb) -> int | None:
    """The index of the cell that starts ``## Exercises`` (None: the notebook has none)."""
    found = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "markdown" and c.source.lstrip().startswith("## Exercises")]
    assert len(found) <= 1, f"{len(found)} cells start '## Exercises'"
    return found[0] if found else None


def solutions_cell(nb) -> int | None:
    found = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "markdown" and re.match(r"#+ Solutions", c.source.lstrip())]
    return found[0] if found else None


def exercises(nb) -> list[Exercise]:
    """The notebook's exercises, each with its kind, hints and hidden solution cells."""
    at = exercises_cell(nb)
    if at is None:
        return []
    items = {}
    matches = list(ITEM.finditer(nb.cells[at].source))
    for m, after in zip(matches, matches[1:] + [None], strict=True):
        text = nb.cells[at].source[m.start():after.start() if after else None]
        kind = KIND.match(m.group(2))
        items[int(m.group(1))] = Exercise(int(m.group(1)), kind.group(1) if kind else None, text)
    start = solutions_cell(nb)
    current: Exercise | None = None
    for cell in nb.cells[start + 1:] if start is not None else []:
        if cell.cell_type == "markdown":
            head = re.match(r"\s*(\d+)\.", cell.source)
            if head and int(head.group(1)) in items:
                current = items[int(head.group(1))]
                if "hint" in cell.metadata.get("tags", []):
                    current.hints.append(cell.source)
                    continue
        if current is not None:
            current.solution.append(cell)
    return [items[n] for n in sorted(items)]


def code_lines(cell) -> int:
    return sum(bool(line.strip()) and not line.strip().startswith("#")
               for line in cell.source.splitlines())


def estimate_minutes(nb) -> float:
    """Prose at 100 words a minute, lesson code at 4 lines a minute, each exercise's size."""
    lesson_code = sum(code_lines(c) for c in nb.cells
                      if c.cell_type == "code" and not is_install(c) and not is_hidden(c))
    work = sum(5 + sum(code_lines(c) for c in e.solution_code) for e in exercises(nb))
    return markdown_words(nb) / WORDS_PER_MINUTE + lesson_code / CODE_LINES_PER_MINUTE + work


def stated_minutes(first_cell: str) -> int | None:
    """``about 1 h 15 min.`` / ``about 45 min.`` / ``about 2 h.`` in a header, in minutes."""
    found = re.search(r"About\s+\d+\s+cells\s+and\s+\d+\s+exercises?,\s+" + STATED_TIME.pattern,
                      first_cell, re.I)
    if not found or not (found.group(1) or found.group(2)):
        return None
    return 60 * int(found.group(1) or 0) + int(found.group(2) or 0)


def no_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


def cell_text(cell) -> str:
    """What a reader sees of a cell: its source and the text of its outputs."""
    parts = [cell.source]
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(out["text"])
        parts.append(out.get("data", {}).get("text/plain", ""))
        parts.extend(out.get("traceback", []))
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def kit_names(nb) -> set[str]:
    """The names a notebook binds to datakit modules and helpers (``from datakit... import x``)."""
    names = set()
    for cell in nb.cells:
        if cell.cell_type != "code" or is_install(cell):
            continue
        try:
            tree = ast.parse(re.sub(r"^\s*[%!].*$", "", cell.source, flags=re.M))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("datakit"):
                names |= {(a.asname or a.name) for a in node.names}
            elif isinstance(node, ast.Import):
                names |= {(a.asname or a.name.split(".")[0]) for a in node.names
                          if a.name.startswith("datakit")}
    return names


def kit_calls(cell, names: set[str]) -> set[str]:
    """Which of the kit's names a cell uses (``datakit.exercises`` and ``exercises`` aside)."""
    source = re.sub(r"\bdatakit\.(exercises|see)\b", r"\1", cell.source)
    try:
        tree = ast.parse(re.sub(r"^\s*[%!].*$", "", source, flags=re.M))
    except SyntaxError:
        return set()
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            used.add(node.id)
    return used - {"exercises", "see", "check", "compare"}


def header_time(minutes: float) -> str:
    """``about 1 h 15 min`` for a header: the estimate rounded to a quarter hour."""
    quarter = max(15, 15 * round(minutes / 15))
    hours, rest = divmod(quarter, 60)
    return "about " + " ".join(filter(None, [f"{hours} h" if hours else "",
                                              f"{rest} min" if rest else ""]))


def route_paths() -> list:
    """The route's notebooks, 01-10."""
    from pathlib import Path
    return sorted(p for p in (Path(__file__).resolve().parent.parent / "notebooks")
                  .glob("*.ipynb") if p.stem < "11")


def checked_exercises() -> list[tuple[str, Exercise]]:
    """Every write and debug exercise of the route, as ``("01.4", exercise)``."""
    return [(f"{path.stem[:2]}.{e.number}", e) for path in route_paths()
            for e in exercises(nbformat.read(path, as_version=4)) if e.kind in CHECKED]


if __name__ == "__main__":  # python -m tests.course [--exercises | notebooks...]
    import sys
    from pathlib import Path

    if sys.argv[1:] == ["--exercises"]:  # each write and debug exercise with its checker
        for name, e in checked_exercises():
            print(f"{name:6} {e.kind:18} {e.checker or '(no checker)'}")
        sys.exit(0)
    paths = sys.argv[1:] or sorted(str(p) for p in Path("notebooks").glob("*.ipynb"))
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        kinds = [e.kind or "?" for e in exercises(nb)]
        print(f"{Path(path).stem}: {markdown_words(nb)} words, {len(kinds)} exercises {kinds}, "
              f"{header_time(estimate_minutes(nb))} ({estimate_minutes(nb):.0f} min)")
