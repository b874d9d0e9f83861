"""The Korean edition (notebooks/ko/) is current: tests/translations.py's rules, checked.

Its notebooks are not executed (the suite would grow by the route's run time): their code
cells and outputs are checked equal to the English notebooks', which nbval runs, and no
code cell of the route reads the working directory, so the same code run from
``notebooks/ko/`` computes the same outputs. A stale translation fails here, naming the cell
and showing the English diff; ``python -m tests.translations`` lists the same."""

from __future__ import annotations

import copy
import re

import pytest
import translations as tr

ROUTE = tr.ROUTE


def markdown(name: str) -> str:
    """A Korean notebook's markdown, the reading guide left out (it is the same everywhere)."""
    nb = tr.read(tr.ko_path(name))
    return "\n".join(c.source for c in nb.cells
                     if c.cell_type == "markdown" and c.get("id") != tr.GUIDE_ID)


def test_the_route_has_ten_notebooks_and_so_does_the_korean_edition():
    assert len(ROUTE) == 10
    assert sorted(p.name for p in tr.KO.glob("*.ipynb")) == ROUTE


@pytest.mark.parametrize("name", ROUTE)
def test_each_korean_notebook_is_current(name):
    """Same cells and ids; code, outputs and tags equal; every markdown cell translated from
    the current English text (its recorded hash) and holding Korean."""
    found = tr.problems(tr.read(tr.NOTEBOOKS / name), tr.read(tr.ko_path(name)), name)
    assert not found, "\n".join(found)


def test_a_changed_english_sentence_is_named_with_its_diff():
    en, ko = tr.read(tr.NOTEBOOKS / ROUTE[2]), tr.read(tr.ko_path(ROUTE[2]))
    changed = copy.deepcopy(en)
    k = next(i for i, c in enumerate(changed.cells)
             if c.cell_type == "markdown" and i > 2 and "." in c.source)
    old_sentence = changed.cells[k].source.split(".")[0]
    changed.cells[k].source = changed.cells[k].source.replace(old_sentence, "A new sentence", 1)
    found = tr.problems(changed, ko, ROUTE[2])
    assert len(found) == 1 and f"cell {k} (id {en.cells[k].id}): stale" in found[0], found
    assert "+A new sentence" in found[0] and "English when translated" in found[0]
    changed.cells[k + 1 if en.cells[k + 1].cell_type == "code" else k].cell_type = "code"
    assert tr.problems(changed, ko, ROUTE[2])


def test_a_changed_output_or_a_missing_cell_is_named():
    en, ko = tr.read(tr.NOTEBOOKS / ROUTE[0]), tr.read(tr.ko_path(ROUTE[0]))
    k = next(i for i, c in enumerate(en.cells) if c.cell_type == "code" and c.outputs)
    other = copy.deepcopy(en)
    other.cells[k].outputs = []
    assert any(f"cell {k}" in p and "outputs" in p for p in tr.problems(other, ko, ROUTE[0]))
    other = copy.deepcopy(en)
    other.cells.insert(3, copy.deepcopy(en.cells[3]))
    other.cells[3].id = "new-cell"
    assert "no Korean cell for ['new-cell']" in tr.problems(other, ko, ROUTE[0])[0]


def test_sync_keeps_translations_and_copies_everything_else():
    en, ko = tr.read(tr.NOTEBOOKS / ROUTE[1]), tr.read(tr.ko_path(ROUTE[1]))
    again = tr.sync(en, ko)
    assert [c.source for c in again.cells] == [c.source for c in ko.cells]
    assert tr.problems(en, again, ROUTE[1]) == tr.problems(en, ko, ROUTE[1])


def test_export_then_import_round_trip(tmp_path, monkeypatch):
    """What a contributor does: export the stale cells, translate, import."""
    name = ROUTE[3]
    monkeypatch.setattr(tr, "KO", tmp_path)
    en = tr.read(tr.NOTEBOOKS / name)
    stale = tr.sync(en, None)  # nothing translated yet
    tr.write(stale, tmp_path / name)
    text = tr.export([name])
    n_markdown = sum(c.cell_type == "markdown" for c in en.cells)
    assert text.count("<!-- cell ") == n_markdown
    translated = re.sub(r"(<!-- cell \S+ \S+ -->\n)", r"\1번역된 문장입니다.\n", text)
    assert len(tr.import_(translated)) == n_markdown
    assert tr.problems(en, tr.read(tmp_path / name), name) == []


def test_no_code_cell_of_the_route_reads_the_working_directory():
    """Why the Korean notebooks need no run of their own (see the module's docstring)."""
    cwd = re.compile(r"os\.getcwd|Path\.cwd|relpath|os\.chdir|Path\(\s*['\"]\.|"
                     r"\bopen\(\s*['\"](?!/)|(?:glob\.|gfile\.|list_files)\w*\(\s*['\"](?!/)|"
                     r"\.\./")
    found = [f"{name} cell {k}: {m.group(0)}" for name in ROUTE
             for k, c in enumerate(tr.read(tr.NOTEBOOKS / name).cells)
             if c.cell_type == "code" for m in cwd.finditer(c.source)]
    assert not found, found


@pytest.mark.parametrize("name", ROUTE)
def test_each_edition_links_the_other_and_every_link_resolves(name):
    en, ko = tr.read(tr.NOTEBOOKS / name), tr.read(tr.ko_path(name))
    assert f"](ko/{name})" in en.cells[0].source
    assert f"](../{name})" in ko.cells[0].source
    wrong = [target for c in ko.cells if c.cell_type == "markdown"
             for target in re.findall(r"\]\(([^)#\s]+)", c.source)
             if not target.startswith(("http://", "https://"))
             and not (tr.KO / target).exists()]
    assert not wrong, f"links from notebooks/ko/{name} to nothing: {wrong}"


def test_the_glossary_links_every_route_notebook_in_both_editions():
    text = tr.GLOSSARY.read_text(encoding="utf-8")
    for name in ROUTE:
        assert f"]({name})" in text and f"](ko/{name})" in text, name
    assert all("](../GLOSSARY.md)" in c.source for name in ROUTE
               for c in tr.read(tr.ko_path(name)).cells if c.get("id") == tr.GUIDE_ID)


def test_the_korean_notebooks_use_the_glossary_terms():
    """One term, one translation: each glossary row's Korean word is the one its route
    notebooks use, with the English in parentheses at its first use, and the guides'
    variant word the row names is not used."""
    wrong = []
    texts = {name: markdown(name) for name in ROUTE}
    for english, head, route, others in tr.glossary_terms():
        for name in route:
            why = tr.first_use(head, texts[name])
            if why:
                wrong.append(f"{name}: {head} ({english}): {why}")
        for other in others:
            wrong += [f"{name}: {other!r} used; the glossary's word is {head!r}"
                      for name in ROUTE if other in texts[name]]
    assert not wrong, "\n".join(wrong)


def test_first_use_rule():
    assert tr.first_use("원소", "각 원소(element)는 ... 원소") is None
    assert tr.first_use("원소", "각 원소 (element)는") is None
    assert "parentheses" in tr.first_use("원소", "원소는 ... 원소(element)")
    assert tr.first_use("원소", "없음") == "not used"
    assert tr.first_use("TFRecord 포맷", "TFRecord 포맷은") is None


def test_the_start_page_offers_both_editions_of_every_route_notebook():
    """notebooks/START.md: where `make lab` and the README open."""
    text = (tr.NOTEBOOKS / "START.md").read_text(encoding="utf-8")
    for name in ROUTE:
        assert f"]({name})" in text and f"](ko/{name})" in text, name
    wrong = [t for t in re.findall(r"\]\(([^)#\s]+)", text)
             if not t.startswith("http") and not (tr.NOTEBOOKS / t).exists()]
    assert not wrong, wrong
