"""The CSV field grammar as regular expressions, and the diagnosis of a line that breaks it.

A row is valid when it matches :func:`row_pattern` (one pattern per column,
its kind's: a number, bare or quoted, or a text field, quoted with doubled
quotes inside, or bare without commas or quotes). The reader checks whole
chunks of lines against it in TensorFlow; only a line that fails is looked at
again in Python, by :func:`describe_bad_line`, to say which column and why.
Every pattern runs in time linear in the line's length (no two quantifiers
compete for the same characters), so a long malformed line cannot stall it.

>>> import re
>>> bool(re.fullmatch(row_pattern(["a", "b"], {"a": NUMBER, "b": TEXT}, set()), '1.5,"x, y"'))
True
>>> describe_bad_line('1,"x', ["a", "b"], {"a": NUMBER, "b": TEXT})
('b (2 of 2)', 'unterminated quote')
"""

from __future__ import annotations

import csv as _csv
import os
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from datakit.core.paths import FilesArg
from datakit.readers.csv_files.dialect import COMMA, Dialect, dialect_of
from datakit.readers.csv_files.file_checks import csv_file_set, is_blank
from datakit.readers.csv_files.schema import kinds_for, label_classes
from datakit.readers.tables.running_stats import FLOAT32_MAX
from datakit.readers.tables.table_stats import NUMBER, TEXT, TableStats

__all__ = ["BadLine", "describe_bad_line", "find_bad_lines"]

#: A number as ``decode_csv`` reads it (optionally quoted in a row), ``nan`` and ``inf``
#: included. Each alternative starts differently and no two quantifiers compete for the
#: same characters, so matching (and failing) takes time linear in the line's length.
NUMBER_PATTERN = (r" *[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                  r"|(?i:nan|inf(?:inity)?)) *")
#: A label's number: finite (a label is never missing, and ``nan`` is missing).
FINITE_PATTERN = r" *[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)? *"
def _patterns(dialect: Dialect) -> dict[str, str]:
    """A field's pattern by kind, in ``dialect`` (a number may also be a marker)."""
    number = NUMBER_PATTERN
    if dialect.marker_pattern:
        number = f"(?:{NUMBER_PATTERN}|{dialect.marker_pattern})"
    sep = dialect.separator
    return {NUMBER: f'(?:{number}|"{number}")',
            TEXT: f'(?:"(?:[^"]|"")*"|[^"{sep}]*)',
            "label": f'(?:{FINITE_PATTERN}|"{FINITE_PATTERN}")',
            # A column the reader ignores: also a bare field with a quote after its first
            # character (`5" tall`), as pandas reads it. Neither branch matches the empty
            # field, so the `?` gives the engine one way to match it.
            _IGNORED: f'(?:"(?:[^"]|"")*"|[^"{sep}][^{sep}]*)?'}


#: The pattern name of a column the reader reads but ignores (left out by ``columns=``).
_IGNORED = "ignored"
#: How much of a bad line an error message shows.
RAW_SHOWN = 200


@dataclass
class BadLine:
    """A line that does not parse: where it is, which column, why.

    :func:`find_bad_lines` returns them; the reader raises with the same text:

    >>> print(BadLine("a.csv", 7, "b (2 of 3)", "expected a number, got `ab`", "1,ab,x"))
    bad CSV line: a.csv, line 7, column b (2 of 3): expected a number, got `ab`; raw line: `1,ab,x`
    """

    file: str
    line: int
    column: str | None
    reason: str
    raw: str

    def __str__(self) -> str:
        col = f", column {self.column}" if self.column else ""
        raw = self.raw if len(self.raw) <= RAW_SHOWN else (
            f"{self.raw[:RAW_SHOWN]}... ({len(self.raw):,} characters)")
        return (f"bad CSV line: {self.file}, line {self.line}{col}: {self.reason}; "
                f"raw line: `{raw}`")


def _field_pattern(kind: str, required: bool, dialect: Dialect) -> str:
    # A text field already matches the empty string: a `?` on it would give the regex
    # engine two ways to match each empty field, and a bad line exponential backtracking.
    patterns = _patterns(dialect)
    if required and kind == NUMBER:
        return patterns["label"]
    return patterns[kind] + ("" if required or kind == TEXT else "?")


def column_pattern(col: str, kinds: dict[str, str], required: AbstractSet[str],
                   classes: dict[str, list[str]] | None = None, dialect: Dialect = COMMA,
                   ignored: AbstractSet[str] = frozenset()) -> str:
    """One column's pattern; a text label's is the list of its classes, bare or quoted."""
    if col in ignored:
        return _patterns(dialect)[_IGNORED]
    if classes and col in classes:
        values = classes[col]
        bare = [re.escape(v) for v in values]
        quoted = ['"' + re.escape(v.replace('"', '""')) + '"' for v in values]
        return "(?:" + "|".join(bare + quoted) + ")"
    return _field_pattern(kinds[col], col in required, dialect)


def row_pattern(columns: Sequence[str], kinds: dict[str, str], required: AbstractSet[str],
                classes: dict[str, list[str]] | None = None, *,
                dialect: Dialect = COMMA, ignored: AbstractSet[str] = frozenset()) -> str:
    """The regular expression a valid row matches (``required``: columns never empty;
    ``ignored``: columns read but not kept, whose bare fields may hold a quote)."""
    return dialect.separator.join(row_fields(columns, kinds, required, classes,
                                             dialect=dialect, ignored=ignored))


def row_fields(columns: Sequence[str], kinds: dict[str, str], required: AbstractSet[str],
               classes: dict[str, list[str]] | None = None, *,
               dialect: Dialect = COMMA, ignored: AbstractSet[str] = frozenset()) -> list[str]:
    """:func:`row_pattern` as its columns' patterns, one each (joined by the separator, the
    row's): a wide row's pattern is matched a group of columns at a time
    (:func:`datakit.readers.csv_files.line_decoding.row_matcher`)."""
    return [column_pattern(c, kinds, required, classes, dialect, ignored) for c in columns]


def describe_bad_line(raw: str, columns: Sequence[str], kinds: dict[str, str],
                      required: AbstractSet[str] = frozenset(),
                      classes: dict[str, list[str]] | None = None, *,
                      ignored: AbstractSet[str] = frozenset(), dialect: Dialect = COMMA
                      ) -> tuple[str | None, str] | None:
    """Why ``raw`` does not parse: ``(column or None, reason)``, or None if it is fine.

    ``classes`` maps a text label to the values it may take; ``ignored`` names
    the columns the statistics left out (still parsed, so the message says so);
    ``dialect`` the files' separator and missing-value markers.

    >>> describe_bad_line('1,abc', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    ('b (2 of 2)', 'expected a number, got `abc`')
    >>> describe_bad_line('1', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    (None, 'found 1 field(s), expected 2')
    >>> describe_bad_line('1,cat', ["a", "y"], {"a": NUMBER, "y": TEXT}, {"y"}, {"y": ["dog"]})
    ('y (2 of 2)', "`cat` is not one of the label's classes ['dog']")
    """
    pos, n, sep = 0, len(columns), dialect.separator
    for k, col in enumerate(columns):
        where = f"{col} ({k + 1} of {n})"
        pat = re.compile(column_pattern(col, kinds, required, classes, dialect, ignored) +
                         f"(?={sep}|$)")
        m = pat.match(raw, pos)
        if not m:
            reason = _field_reason(raw, pos, col, kinds, required, classes, dialect)
            if col in ignored:
                reason += (" (columns= leaves this column out, but every field of a line is "
                           "still parsed: a quote opening a field must close it; fix the "
                           "quote, or skip the line with on_bad_line='skip')")
            return where, reason
        beyond = _label_beyond_float32(m.group(0), col, kinds, required, classes)
        if beyond:
            return where, beyond
        pos = m.end()
        if k < n - 1:
            if pos >= len(raw):
                return None, f"found {k + 1} field(s), expected {n}"
            pos += 1
    if pos != len(raw):
        extra = len(next(_csv.reader([raw[pos + 1:]], delimiter=dialect.delimiter)))
        return None, f"found {n + extra} fields, expected {n}"
    return None


def _field_reason(raw: str, pos: int, col: str, kinds: dict[str, str],
                  required: AbstractSet[str], classes: dict[str, list[str]] | None,
                  dialect: Dialect) -> str:
    """Why the field of ``col`` starting at ``pos`` does not match its pattern."""
    field = raw[pos:].split(dialect.delimiter, 1)[0]
    if field.startswith('"') and raw.count('"', pos) % 2:
        return "unterminated quote"
    if classes and col in classes:
        value = next(_csv.reader([raw[pos:]], delimiter=dialect.delimiter), [""])[0] \
            if raw[pos:] else ""
        return ("the label is empty" if not value else
                f"`{value}` is not one of the label's classes {classes[col]}")
    if kinds[col] == TEXT:
        return 'a quote inside a field must be doubled ("") and the field quoted'
    if not field:
        return "the label is empty" if col in required else "expected a number"
    if col in required and re.fullmatch(_patterns(dialect)[NUMBER], field):
        value = field.strip(' "')
        return f"the label is `{value}`, not a finite number (a label is never missing)"
    shown = field if len(field) <= 40 else f"{field[:40]}... ({len(field):,} characters)"
    return f"expected a number, got `{shown}`"


def _label_beyond_float32(field: str, col: str, kinds: dict[str, str],
                          required: AbstractSet[str],
                          classes: dict[str, list[str]] | None) -> str | None:
    """Why a number label that the grammar accepts is refused all the same: beyond
    float32's range (a ``1e39``), the label's float32 tensor would hold ``inf``; else None.
    (The reader finds such a label after decoding it; this names it.)"""
    if col not in required or kinds.get(col) != NUMBER or (classes and col in classes):
        return None
    value = field.strip(' "')
    try:
        beyond = abs(float(value)) > FLOAT32_MAX
    except ValueError:
        return None
    return (f"the label is `{value}`, beyond float32's range (±{FLOAT32_MAX:.4g}), where "
            "it is infinite: a label must be a finite float32") if beyond else None


def find_bad_lines(filepaths: FilesArg, stats: TableStats, *,
                   label: str | None = None) -> list[BadLine]:
    """Every line of ``filepaths`` that the reader would reject (pure Python, before training).

    The test is the reader's own: the same regular expression per row (in
    time linear in each line's length). Blank lines are skipped, as the
    reader skips them.
    """
    checked = csv_file_set(filepaths, dialect=dialect_of(stats))
    return bad_lines_in(checked.files, checked.shape, stats, label=label)


def bad_lines_in(files: list[str], columns: list[str], stats: TableStats, *,
                 label: str | None = None,
                 ignore: AbstractSet[str] = frozenset()) -> list[BadLine]:
    """:func:`find_bad_lines` of files already checked (``csv_file_set``), header ``columns``.

    A reader that has checked (and hashed) its files calls this, so they are not
    checked twice. ``ignore``: more columns the reader reads but does not keep
    (the statistics' label, when it reads rows for prediction).
    """
    dialect = dialect_of(stats)
    ignored = (set(columns) - set(stats.columns)) | set(ignore)
    kinds = kinds_for(stats, columns, files[0])
    classes = label_classes(stats, label)
    pattern = re.compile(row_pattern(columns, kinds, {label} if label else set(), classes,
                                     dialect=dialect, ignored=ignored))
    bad = []
    for path in files:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                if number == 1:
                    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte order mark: not text
                line = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
                if number > dialect.header_lines and not is_blank(line) and \
                        not pattern.fullmatch(line):
                    column, reason = describe_bad_line(
                        line, columns, kinds, set() if label is None else {label}, classes,
                        ignored=ignored, dialect=dialect) or (None, "bad line")
                    bad.append(BadLine(path, number, column, reason, line))
    return bad


def warn_skipped(bad: list[BadLine]) -> None:
    """Warn that ``bad`` lines are skipped, with a count per file and the first one."""
    if bad:
        per_file = Counter(b.file for b in bad)
        detail = ", ".join(f"{os.path.basename(f)}: {n}" for f, n in sorted(per_file.items()))
        warnings.warn(f"skipping {len(bad)} bad line(s) ({detail}); first: {bad[0]}",
                      stacklevel=5)  # the caller of csv_reader_dataset
