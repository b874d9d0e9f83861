"""notebooks/GLOSSARY.md: every link goes to a notebook that exists and names the term.

A row is ``| English | 한국어 | [NN](NN_name.ipynb), ... |``. A linked notebook "names the
term" when it holds one of the row's English keys: a name in backticks (``list_files``),
found whole, or one of the comma- or slash-separated terms before the first parenthesis,
each of its words found by its stem, the word less its last five letters but at least four
letters long (so "shuffling" finds "shuffle", "leakage" "leaks", "overfitting" "overfits")."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
GLOSSARY = NOTEBOOKS / "GLOSSARY.md"
LINK = re.compile(r"\[(\d+)\]\(([^)]+)\)")


def rows() -> list[tuple[str, list[tuple[str, str]]]]:
    """(English term, [(label, target)]) for each table row that links a notebook."""
    found = []
    for line in GLOSSARY.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 3 and LINK.search(cells[2]):
            found.append((cells[0], LINK.findall(cells[2])))
    return found


def normal(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.lower())


def keys(english: str) -> list[tuple[str, bool]]:
    """(key, is code): the names in backticks, then the terms before the first parenthesis."""
    code = [(normal(k), True) for k in re.findall(r"`([^`]+)`", english)]
    plain = re.sub(r"`[^`]*`", "", english.split("(")[0])
    return code + [(normal(t), False) for t in re.split(r",|/|\bvs\b", plain) if t.strip()]


def names(key: tuple[str, bool], text: str) -> bool:
    """A name in backticks is found whole; a term's words by their stems."""
    term, is_code = key
    if is_code:
        return term.strip() in text
    words = [w for w in re.findall(r"\w+", term) if len(w) >= 2]
    return bool(words) and all(w[:max(4, len(w) - 5)] in text for w in words)


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {p.name: normal("\n".join(c.source for c in nbformat.read(p, as_version=4).cells))
            for p in NOTEBOOKS.glob("*.ipynb")}


def test_the_glossary_has_its_rows():
    assert len(rows()) >= 110


def test_each_link_goes_to_a_notebook_that_names_the_term(texts):
    wrong = []
    for english, links in rows():
        for label, target in links:
            if target not in texts or not target.startswith(f"{label}_"):
                wrong.append(f"{english}: [{label}]({target}) is no notebook")
            elif not any(names(k, texts[target]) for k in keys(english)):
                wrong.append(f"{english}: {target} names none of {keys(english)}")
    assert not wrong, "\n".join(wrong)
