"""The Korean edition (``notebooks/ko/``): made from the English notebooks, kept in step by tests.

A Korean notebook ``notebooks/ko/NN_name.ipynb`` has the cells of ``notebooks/NN_name.ipynb``,
in the same order and with the same cell ids; its code cells, their outputs and execution
counts are copies. Each markdown cell is a translation and records in its metadata which
English text it translates: ``{"translation": {"sha": <12 hex digits of the SHA-256 of the
English cell's source>, "en": <that English source>}}``. When an English cell changes, its
translation is stale: the hashes differ, and ``en`` shows what changed. One cell has no
English twin: the reading guide (id ``ko-reading-guide``, after the first cell), the same text
in every Korean notebook (:data:`READING_GUIDE`).

The Korean notebooks are never executed: their code and outputs are the English notebook's,
which nbval runs and checks, and no code cell of the route reads the working directory (a
test checks), so running a Korean notebook from ``notebooks/ko/`` computes what the English
one stored.

Commands (from the repository's root)::

    python -m tests.translations           # list stale or missing translations; exit 1 if any
    python -m tests.translations sync      # after a re-execution or an edit of the English:
                                           # copy code and outputs, add and drop cells
    python -m tests.translations export 03 > todo.md   # the cells to translate, with the
                                           # English text and the English diff since the last
                                           # translation (all route notebooks without a number)
    python -m tests.translations import todo.md        # write the translations back, each
                                           # marked as translating the current English cell

Updating both editions in one change: edit the English notebook, re-execute it, run ``sync``,
``export`` the stale cells, translate them in the exported file (replace each cell's English
text below its ``<!-- cell ... -->`` line), ``import`` the file, and commit both notebooks.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
KO = NOTEBOOKS / "ko"
#: The core route: the notebooks with a Korean edition.
ROUTE = [p.name for p in sorted(NOTEBOOKS.glob("*.ipynb")) if int(p.name[:2]) <= 10]
GUIDE_ID = "ko-reading-guide"
HEADER = re.compile(r"^<!-- cell (?P<nb>\S+) (?P<id>\S+) -->$", re.M)

#: Read once in every Korean notebook: a checker's message, and the three lines tf.data and
#: Keras print most often in the route (the same text in every notebook; a test checks it).
READING_GUIDE = """\
> **이 노트북을 읽는 법 (한국어판)**
>
> 설명은 한국어로, 코드와 출력은 영어판과 똑같습니다. 코드의 이름(`map`, `batch` 등)과 키트가 출력하는 메시지는 영어 그대로 둡니다. 키트의 메시지는 API의 일부이기 때문입니다.
> 용어는 [용어집(GLOSSARY)](../GLOSSARY.md)을 따르고, 노트북에서 처음 쓸 때 영어 용어를 괄호 안에 적습니다.
>
> **채점기(checker)의 메시지 읽기.** `exercises.check(...)`는 한 줄로 답합니다.
> - `correct: ...` 정답입니다. 뒤에는 무엇을 비교했는지 나옵니다 (예: `correct: 3 elements, each equal to the reference's` = 원소 3개가 모두 정답과 같음).
> - `not yet: ...` 아직 아닙니다. 뒤에 첫 번째 차이가 나옵니다. `yours`는 여러분의 값, `expected`나 `the reference`는 정답의 값입니다. `element 0 differs`는 0번 원소가 다르다는 뜻입니다.
> - 코드에서 예외가 나면 `reading your answer raised ...`처럼 그 예외를 보여 줍니다. 함수가 아무것도 반환하지 않으면 `return`을 잊었는지 묻습니다.
>
> **tf.data와 케라스가 자주 출력하는 세 줄.** 오류가 아니라 알림입니다.
> - `Filling up shuffle buffer (this may take a while)`: 셔플 버퍼를 채우는 중입니다. 버퍼가 크면 첫 원소가 나오기까지 시간이 걸립니다 (노트북 03).
> - `The calling iterator did not fully read the dataset being cached`: `cache()`한 데이터셋을 끝까지 읽지 않아 캐시를 버렸다는 뜻입니다. `take()`를 `cache()` 앞에 두세요 (노트북 06).
> - `Your input ran out of data; interrupting training`: 에포크 도중 데이터가 끝났습니다. `steps_per_epoch`가 데이터보다 크거나 `repeat()`가 빠졌습니다 (노트북 05).
"""


def sha(text: str) -> str:
    """The 12 hex digits a translation records of the English source it translates."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def guide_cell() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(READING_GUIDE)
    cell.id = GUIDE_ID
    cell.metadata = {"translation": {"ko_only": True}}
    return cell


def sync(en: nbformat.NotebookNode, ko: nbformat.NotebookNode | None) -> nbformat.NotebookNode:
    """The Korean notebook for ``en``: ``ko``'s translations kept, everything else copied.

    A markdown cell keeps its Korean text and its record (stale or not) while its English
    twin exists; a new English markdown cell comes in English with no record (untranslated);
    a cell gone from the English is dropped; code cells are the English ones.
    """
    if any("id" not in c for c in en.cells):
        raise ValueError("the English notebook's cells have no ids: upgrade it to nbformat 4.5")
    old = {c.id: c for c in (ko.cells if ko is not None else [])}
    out = copy.deepcopy(en)
    out.metadata = copy.deepcopy(en.metadata)
    cells = []
    for i, cell in enumerate(out.cells):
        if cell.cell_type == "markdown":
            was = old.get(cell.id)
            if was is not None and was.cell_type == "markdown" and "translation" in was.metadata:
                cell.source = was.source
                cell.metadata["translation"] = copy.deepcopy(was.metadata["translation"])
            else:
                cell.metadata.pop("translation", None)
        cells.append(cell)
        if i == 0:
            cells.append(guide_cell())
    out.cells = cells
    return out


def ko_path(name: str) -> Path:
    return KO / name


def problems(en: nbformat.NotebookNode, ko: nbformat.NotebookNode, name: str) -> list[str]:
    """What keeps ``ko`` from being a current translation of ``en``; one line per cell.

    A stale cell's line shows the English diff since its translation.
    """
    found = []
    ko_cells = [c for c in ko.cells if c.get("id") != GUIDE_ID]
    guides = [c for c in ko.cells if c.get("id") == GUIDE_ID]
    if len(guides) != 1 or guides[0].source != READING_GUIDE:
        found.append(f"{name}: the reading guide is missing or differs from READING_GUIDE "
                     "(run: python -m tests.translations sync)")
    en_ids = [c.get("id") for c in en.cells]
    ko_ids = [c.get("id") for c in ko_cells]
    if en_ids != ko_ids:
        missing = [i for i in en_ids if i not in ko_ids]
        extra = [i for i in ko_ids if i not in en_ids]
        found.append(f"{name}: the cells differ from the English notebook's (no Korean cell "
                     f"for {missing}, no English cell for {extra}, or another order; run: "
                     "python -m tests.translations sync)")
        return found
    for k, (e, c) in enumerate(zip(en.cells, ko_cells, strict=True)):
        where = f"{name} cell {k} (id {e.id})"
        if e.cell_type != c.cell_type:
            found.append(f"{where}: {c.cell_type} here, {e.cell_type} in English")
        elif e.cell_type == "code":
            for field in ("source", "outputs", "execution_count"):
                if e.get(field) != c.get(field):
                    found.append(f"{where}: the code cell's {field} differs from the English "
                                 "(run: python -m tests.translations sync)")
            if e.metadata != c.metadata:
                found.append(f"{where}: the code cell's metadata (tags) differ from the English")
        else:
            record = c.metadata.get("translation")
            if not record or "sha" not in record:
                found.append(f"{where}: not translated yet")
            elif record["sha"] != sha(e.source):
                diff = "\n".join(difflib.unified_diff(
                    record.get("en", "").splitlines(), e.source.splitlines(),
                    "English when translated", "English now", lineterm="", n=0))
                found.append(f"{where}: stale: the English cell changed after its "
                             f"translation:\n{diff}")
            elif re.search(r"[A-Za-z]", e.source) and not re.search(r"[가-힣]", c.source):
                found.append(f"{where}: recorded as translated, but holds no Korean")
    return found


def check_all() -> list[str]:
    found = []
    for name in ROUTE:
        if not ko_path(name).exists():
            found.append(f"{name}: no Korean edition at notebooks/ko/{name}")
            continue
        found += problems(read(NOTEBOOKS / name), read(ko_path(name)), name)
    return found


def export(names: list[str]) -> str:
    """The stale and untranslated markdown cells of ``names``, as a file to translate."""
    parts = []
    for name in names:
        en, ko = read(NOTEBOOKS / name), read(ko_path(name))
        ko_by_id = {c.id: c for c in ko.cells}
        for cell in en.cells:
            if cell.cell_type != "markdown":
                continue
            record = ko_by_id[cell.id].metadata.get("translation", {})
            if record.get("sha") == sha(cell.source):
                continue
            note = ""
            if record.get("en"):
                diff = "\n".join(difflib.unified_diff(
                    record["en"].splitlines(), cell.source.splitlines(), lineterm="", n=1))
                note = ("<!-- the English diff since the last translation:\n"
                        + diff.replace("--", "- -") + "\n"
                        "the last translation:\n" + ko_by_id[cell.id].source + "\n-->\n")
            parts.append(f"<!-- cell {name} {cell.id} -->\n{note}{cell.source}\n")
    return "\n".join(parts)


def import_(text: str) -> list[str]:
    """Write the translations in ``text`` (an :func:`export` file, translated) into the
    Korean notebooks, each recorded as translating the current English cell. Returns what
    was written, one line per cell."""
    heads = list(HEADER.finditer(text))
    by_nb: dict[str, dict[str, str]] = {}
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        body = re.sub(r"^<!--.*?-->\n", "", text[m.end() + 1:end], flags=re.S).strip("\n")
        by_nb.setdefault(m["nb"], {})[m["id"]] = body
    done = []
    for name, cells in by_nb.items():
        en, ko = read(NOTEBOOKS / name), read(ko_path(name))
        english = {c.id: c.source for c in en.cells if c.cell_type == "markdown"}
        for cell in ko.cells:
            if cell.id in cells:
                if cell.id not in english:
                    raise ValueError(f"{name}: cell {cell.id} is no English markdown cell")
                cell.source = cells.pop(cell.id)
                cell.metadata["translation"] = {"sha": sha(english[cell.id]),
                                                "en": english[cell.id]}
                done.append(f"{name} {cell.id}")
        if cells:
            raise ValueError(f"{name}: no cells with ids {sorted(cells)}")
        write(ko, ko_path(name))
    return done


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "status"
    if command == "sync":
        for name in ROUTE:
            old = read(ko_path(name)) if ko_path(name).exists() else None
            write(sync(read(NOTEBOOKS / name), old), ko_path(name))
        command = "status"
    if command == "status":
        found = check_all()
        print("\n".join(found) or "every Korean notebook is current")
        return 1 if found else 0
    if command == "export":
        picked = [n for n in ROUTE if not argv[1:] or n[:2] in argv[1:]]
        print(export(picked))
        return 0
    if command == "import":
        print("\n".join(import_(Path(argv[1]).read_text(encoding="utf-8"))))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


GLOSSARY = NOTEBOOKS / "GLOSSARY.md"
ROUTE_LINK = re.compile(r"\[(\d\d)\]\((\d\d_\w+\.ipynb)\)")


def glossary_terms() -> list[tuple[str, str, list[str], list[str]]]:
    """(English, Korean head term, the route notebooks that teach it, the other words the
    row names for the same term) for each glossary row linking a route notebook.

    The head term is the Korean column up to its first `` (``, ``, `` or `` / ``: the word the
    Korean edition uses. Other words are the variants the row marks ``(텐서플로 가이드)``: the
    guides' word, which the Korean notebooks do not use (one term, one translation).
    """
    found = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if not (line.startswith("| ") and len(cells) == 3):
            continue
        route = [t for _, t in ROUTE_LINK.findall(cells[2]) if t in ROUTE]
        if route:
            head = re.split(r" \(|, | / ", cells[1])[0].strip()
            others = re.findall(r"(?:^|, )([^,()]+?) \(텐서플로 가이드\)", cells[1])
            found.append((cells[0], head, route, [o.strip() for o in others]))
    return found


def first_use(term: str, text: str) -> str | None:
    """Why ``text`` (a Korean notebook's markdown) does not introduce ``term`` as the course
    asks: found, and at its first use followed by the English in parentheses (a term that
    holds Latin letters already, such as ``TFRecord 포맷``, needs none). None when it does."""
    at = text.find(term)
    if at < 0:
        return "not used"
    if re.search(r"[A-Za-z]", term):
        return None
    after = text[at + len(term):at + len(term) + 80]
    if not re.match(r" ?\([^)]*[A-Za-z][^)]*\)", after):
        return f"first use without the English in parentheses: ...{text[at:at + 60]!r}"
    return None
