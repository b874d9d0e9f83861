"""Each column's kind (number or text), judged from every row of the chosen columns.

:func:`infer_kinds` reads the files with the csv module and counts, per
chosen column, the values that are numbers and those that are not (an empty
field and a missing-value marker count for neither). A column whose values
are all numbers is a number column. A column with other values is text, as
pandas reads it (the Titanic passenger list's ``Ticket``: 74% numbers such as
``349909``, 26% codes such as ``A/5 21171``, each its own), except when they
are **strays** in a column of numbers: fewer than its numbers and at most
:data:`MAX_STRAYS` distinct values, such as a typo or an unknown missing-value
marker (``?``). That is refused by name, as read as text it would silently
become one one-hot slot per distinct number. Declaring a column settles its kind either way:
``text_columns`` for text, ``number_columns`` for numbers (then a value that
is not a number is a bad line, or a missing value if ``na_values`` names it).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
>>> rows = [f"{i},{'A/5 ' if i % 4 == 0 else ''}{2000 + i},x{i % 2}" for i in range(40)]
>>> _ = open(path, "w").write("id,ticket,code\\n" + "\\n".join(rows) + "\\n")
>>> infer_kinds(path)
{'id': 'number', 'ticket': 'text', 'code': 'text'}
>>> infer_kinds(path, number_columns=["ticket"])["ticket"]
'number'
"""

from __future__ import annotations

import csv as _csv
import re
import sys
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from datakit.core.errors import DataError
from datakit.readers.csv_files.dialect import COMMA, Dialect
from datakit.readers.csv_files.grammar import NUMBER_PATTERN
from datakit.readers.tables.column_choice import name_list
from datakit.readers.tables.table_stats import NUMBER, TEXT

__all__ = ["infer_kinds"]

#: A column with fewer other values than numbers, and at most this many distinct ones,
#: holds strays (refused by name); with more distinct ones, it is a text column.
MAX_STRAYS = 3


def _declared(columns: list[str], path: str | Path, text_columns: Sequence[str],
              number_columns: Sequence[str], chosen: Sequence[str] | None) -> None:
    for name, given in (("text_columns", text_columns), ("number_columns", number_columns),
                        ("columns", chosen or ())):
        unknown = [c for c in given if c not in columns]
        if unknown:
            raise ValueError(f"{name} {unknown} are not in {path}'s header {columns}.")
    both = sorted(set(text_columns) & set(number_columns))
    if both:
        raise ValueError(f"{both} are in both text_columns and number_columns: declare each "
                         "column one kind.")


@dataclass
class _Tally:
    """One judged column's count: numbers, other values, the first other value's place, and
    the distinct other values (kept up to one more than :data:`MAX_STRAYS`)."""

    numbers: int = 0
    others: int = 0
    first: tuple[str, int, str] | None = None
    distinct: set[str] = field(default_factory=set)

    def add(self, value: str, is_number: bool, path: str, line: int) -> None:
        if is_number:
            self.numbers += 1
            return
        self.others += 1
        if self.first is None:
            self.first = (path, line, value)
        if len(self.distinct) <= MAX_STRAYS:
            self.distinct.add(value)

    @property
    def strays(self) -> bool:
        """Whether the other values are strays in a number column: fewer than its numbers,
        and at most :data:`MAX_STRAYS` distinct values."""
        return 0 < self.others < self.numbers and len(self.distinct) <= MAX_STRAYS


def infer_kinds(paths: str | Path | Iterable[str | Path], *, text_columns: Sequence[str] = (),
                n_rows: int | None = None, dialect: Dialect = COMMA,
                columns: Sequence[str] | None = None, number_columns: Sequence[str] = (),
                bar: Any = None) -> dict[str, str]:
    """Each header column's kind, from every row of every file (see the module docstring).

    ``paths`` is one file or a list of them (all with the first one's header, as
    :func:`~datakit.readers.csv_files.file_checks.check_files` ensures), read
    whole: a column's kind does not depend on where its first odd value comes.
    ``columns``: the chosen columns (default: all); only they are judged, and a
    column left out is text (read, ignored), whatever it holds.
    ``text_columns`` / ``number_columns``: declared kinds, never guessed.
    A number column with strays (fewer values that are not numbers than numbers,
    at most :data:`MAX_STRAYS` distinct ones) is refused with a
    :class:`~datakit.core.errors.DataError` that names the first stray's file,
    line and column, says how many values are not numbers, and gives the fixes:
    ``text_columns`` if it is text, ``na_values`` if the value marks a missing
    one. ``n_rows`` reads at most that many rows per file (a quick guess). A
    UTF-8 byte order mark at the start of a file is stripped, as
    :func:`~datakit.readers.csv_files.file_checks.check_files` does.
    ``bar``: a progress bar (:func:`datakit.core.progress.progress_bar`) that counts the
    rows read, or ``None``.
    """
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    text_columns = name_list("text_columns", text_columns)
    number_columns = name_list("number_columns", number_columns)
    num, markers = re.compile(NUMBER_PATTERN), set(dialect.na_values) | {""}
    header: list[str] | None = None
    tallies: dict[int, _Tally] = {}
    for path in paths:
        rows = _rows(str(path), dialect, n_rows)
        names = next(rows)
        if header is None:
            header = names
            try:
                _declared(header, path, text_columns, number_columns, columns)
            except ValueError:
                rows.close()
                raise
            chosen = header if columns is None else list(columns)
            tallies = {j: _Tally() for j, c in enumerate(header) if c in chosen
                       and c not in text_columns and c not in number_columns}
        for line, row in _counted(rows, bar):
            for j, tally in tallies.items():
                v = row[j] if j < len(row) else ""
                if v not in markers:
                    tally.add(v, bool(num.fullmatch(v)), str(path), line)
    if header is None:
        raise ValueError("paths=[]: no file to infer the kinds from; pass a CSV file's path "
                         "or a list of them.")
    for j, tally in tallies.items():
        if tally.strays:
            _refuse_strays(header, j, tally, bool(dialect.column_names))
    return {c: NUMBER if c in number_columns or (j in tallies and not tallies[j].others)
            else TEXT for j, c in enumerate(header)}


def _counted(rows: Iterable[tuple[int, list[str]]], bar: Any,
             every: int = 1024) -> Iterator[tuple[int, list[str]]]:
    """``rows``, counted on ``bar`` (if not ``None``) ``every`` rows at a time."""
    if bar is None:
        yield from rows
        return
    n = 0
    try:
        for n, row in enumerate(rows, 1):
            yield row
            if n % every == 0:
                bar.update(every)
    finally:
        bar.update(n % every)


def _refuse_strays(header: list[str], j: int, tally: _Tally, named: bool) -> NoReturn:
    """Raise: column ``j``'s other values are strays among its numbers (``named``: the
    columns were named by ``column_names``, so line 1 may be a header line)."""
    c, (path, line, v) = header[j], tally.first or ("", 0, "")
    numbers, others = tally.numbers, tally.others
    header_line = ("Line 1 looks like a header line: if it is, leave column_names out (it is "
                   "for files without one). " if named and line == 1 else "")
    raise DataError(
        path, f"{header_line}`{v}` is not a number, but {numbers:,} of the column's "
        f"{numbers + others:,} values are ({others:,} {'is' if others == 1 else 'are'} not). "
        f"Fewer values that are not numbers than numbers, and at most {MAX_STRAYS} distinct "
        "ones, look like strays in a number column (a typo, an unknown missing-value "
        "marker): the kit stops rather than guess (a column with more kinds of them is read "
        f"as text, as pandas does). If the column is text, pass text_columns=[{c!r}]; if "
        f"`{v}` marks a missing value, add it to na_values (na_values=[*DEFAULT_NA_VALUES, "
        f"{v!r}], DEFAULT_NA_VALUES from datakit.readers.csv_files.dialect).", line=line,
        column=f"{c} ({j + 1} of {len(header)})")


def _rows(path: str, dialect: Dialect, n_rows: int | None) -> Generator[Any, None, None]:
    """A file read with the csv module: first its header, then ``(line number, row)`` pairs
    (blank rows skipped; at most ``n_rows`` unless None). The file stays open until the
    generator ends or is closed."""
    limit = _csv.field_size_limit(sys.maxsize)  # TensorFlow reads any field length; so do we
    reader = None
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:  # -sig: drop a byte order mark
            reader = _csv.reader(f, delimiter=dialect.delimiter)
            names = list(dialect.column_names) if dialect.column_names else next(reader, None)
            if names is None:
                raise DataError(path, "the file is empty; a CSV file needs a header line")
            yield names
            for k, row in enumerate(reader):
                if n_rows is not None and k >= n_rows:
                    return
                if dialect.column_names and k == 0 and row == names:
                    raise DataError(path, "line 1 holds the column names given: the file has "
                                    "a header line, so leave column_names out (it is for "
                                    "files without one)", line=1)
                if dialect.column_names and len(row) != len(names) and any(row):
                    raise DataError(path, f"{len(row)} fields, but column_names names "
                                    f"{len(names)} ({', '.join(names)}): pass one name per "
                                    "column", line=reader.line_num)
                if any(v.strip() for v in row):
                    yield reader.line_num, row
    except UnicodeDecodeError as e:
        raise DataError(path, f"bytes that are not UTF-8 ({e.reason}); save the file as UTF-8") \
            from None
    except _csv.Error as e:
        raise DataError(path, f"the csv module cannot read it: {e}",
                        line=reader.line_num if reader else None) from None
    finally:
        _csv.field_size_limit(limit)
