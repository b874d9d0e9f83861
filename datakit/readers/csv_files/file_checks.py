"""Check CSV files before reading them: every problem found up front, named with its file.

:func:`csv_file_set` (or :func:`check_files`, its answer as a pair) resolves
paths and glob patterns and reports, up front,
missing files, patterns that match nothing, empty files, differing headers
and files that disagree with their manifest (:mod:`datakit.core.manifest`: a
truncated, changed, missing or extra file is an error, never a short epoch);
:func:`check_header` a header that names a column twice or holds another
separator than commas; :func:`check_one_row_per_line` a quoted field that
holds a line break. Blank lines are skipped, as the ``csv`` module and pandas do.

>>> import tempfile, os
>>> from datakit.readers.csv_files.shards import write_shards
>>> d = tempfile.mkdtemp()
>>> paths = write_shards({"x": [1.0, 2.0, None, 4.0], "y": [10.0, 20.0, 30.0, 40.0]},
...                      d, num_shards=2, prefix="toy")
>>> found = csv_file_set(os.path.join(d, "toy_*.csv"))
>>> found.shape, sorted(found.rows.values()), len(found.entries)
(['x', 'y'], [2, 2], 2)
>>> check_files(os.path.join(d, "toy_*.csv"))[1]
['x', 'y']
"""

from __future__ import annotations

import csv as _csv
import warnings

from datakit.core.errors import DataError
from datakit.core.paths import FilesArg
from datakit.readers.csv_files.dialect import COMMA, Dialect
from datakit.readers.tables.file_set import FileFacts, FileSet, check_file_set

__all__ = ["check_files", "data_lines"]


def is_blank(line: str | bytes) -> bool:
    """Whether a line is blank (ASCII whitespace only): skipped, as the csv module does."""
    if isinstance(line, bytes):
        return not line.strip(b" \t\r\n\v\f")
    return not line.strip(" \t\r\n\v\f")


def data_lines(data: bytes, header_lines: int = 1) -> int:
    """The number of rows in a CSV file's bytes: non-blank lines after the header (if any)."""
    lines = data.split(b"\n")
    return sum(1 for line in lines[header_lines:] if not is_blank(line))


#: What a message says to do about a quoted field holding a line break.
_ONE_ROW_PER_LINE = ("the kit's readers read one row per line (tf.data reads lines), so a line "
                     "break inside a field would tear the row apart: replace the line breaks "
                     "inside fields (pandas: df[col].str.replace('\\n', ' ')) and write the "
                     "file again")


def check_one_row_per_line(path: str, lines: list[str], dialect: Dialect = COMMA) -> None:
    """Refuse a file where a quoted field holds a line break (a row over several lines).

    Only a line with an odd number of quotes is looked at: if the ``csv``
    module reads a complete row of the header's width from it over several
    lines (strictly: each quote closed), that row spans lines. A lone stray
    quote is left to the reader's bad-line check.

    Raises:
        DataError: naming the line where the row starts and where it ends.
    """
    sep, names = dialect.delimiter, dialect.column_names
    width = len(names) if names else len(next(_csv.reader([lines[0]], delimiter=sep), []))
    for i, line in enumerate(lines[dialect.header_lines:], start=dialect.header_lines):
        if line.count('"') % 2 == 0:
            continue
        reader = _csv.reader(lines[i:i + 1000], strict=True, delimiter=sep)
        try:
            row = next(reader)
        except _csv.Error:
            continue
        if reader.line_num > 1 and len(row) == width:
            raise DataError(path, f"a quoted field holds a line break (this row goes on to line "
                            f"{i + reader.line_num}); {_ONE_ROW_PER_LINE}", line=i + 1)


def check_files(filepaths: FilesArg, *, counts: dict | None = None,
                blank: set | None = None,
                dialect: Dialect = COMMA) -> tuple[list[str], list[str]]:
    """Resolve paths and glob patterns; return ``(sorted files, header columns)``.

    :func:`csv_file_set` with the answer as a pair. ``counts`` and ``blank``
    (deprecated: use :func:`csv_file_set`'s ``rows`` and ``blank``), if given,
    receive each file's rows and the files holding a blank line.
    """
    if counts is not None or blank is not None:
        warnings.warn("check_files(counts=..., blank=...) is deprecated: csv_file_set(...) "
                      "returns the rows and the blank-line files (.rows, .blank)",
                      DeprecationWarning, stacklevel=2)
    found = csv_file_set(filepaths, dialect=dialect)
    if counts is not None:
        counts.update(found.rows)
    if blank is not None:
        blank.update(found.blank)
    return found.files, found.shape


def _utf8_text(path: str, data: bytes) -> bytes:
    """``data`` without a UTF-8 byte order mark, once it is known to be UTF-8 text."""
    if data.startswith(b"\x1f\x8b"):
        raise DataError(path, "is gzip-compressed (starts with 1f 8b): the CSV reader reads "
                        "plain text; decompress it first (gunzip, or pandas.read_csv then "
                        "to_csv), or convert it to Parquet or TFRecord shards")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a UTF-8 byte order mark: not part of the first column's name
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataError(path, f"byte {data[e.start]:#04x} is not UTF-8 ({e.reason}); save "
                        "the file as UTF-8 (e.g. pandas: encoding='latin-1' to read, then "
                        "to_csv)", line=line, offset=e.start) from None
    return data


def csv_file_set(filepaths: FilesArg, *, dialect: Dialect = COMMA) -> FileSet:
    """Check CSV files up front: a :class:`~datakit.readers.tables.file_set.FileSet` of them.

    Its ``shape`` is the header's columns, ``rows`` each file's rows, ``blank``
    the files that hold a blank line between the header and the last line (so a
    reader knows, without reading them again, which files need it to skip blank
    lines). Paths are resolved, and each folder's manifest read once, by
    :func:`~datakit.readers.tables.file_set.check_file_set`. Raises, naming the
    file: a path that does not exist or is a folder, a pattern that matches
    nothing, an empty file, a header-only file, bytes that are not UTF-8, a
    header that differs from the first file's, a header naming a column twice or
    holding another separator than commas (:func:`check_header`), a file that
    disagrees with its ``manifest.json`` (rows, bytes, sha256, or a set that
    lists other files), lines that end in a carriage return alone (old Mac line
    ends). Blank lines are skipped, as the ``csv`` module and pandas do.

    On purpose, and unlike a plain ``open``: a UTF-8 byte order mark at the
    start of a file is stripped (it is not part of the first column's name);
    a folder that a glob pattern matches is skipped (a folder named itself
    is an error), as are files left over by an interrupted writer that a
    pattern matches. ``dialect``: the separator, and ``column_names`` for
    files without a header line (then every line is a row, and the columns
    are those names).
    """
    first: list[tuple[str, str]] = []  # (path, header) of the first file

    def check_file(path: str) -> FileFacts:
        with open(path, "rb") as f:
            data = f.read()
        data = _utf8_text(path, data)
        if not data.strip():
            raise DataError(path, "the file is empty; every shard needs a header line")
        line1 = data.split(b"\n", 1)[0].rstrip(b"\r").decode()
        if "\r" in line1:  # (a header is never a quoted field broken over lines)
            raise DataError(path, "its lines end in a carriage return alone (\\r, as Excel for "
                            "Mac's 'CSV (Macintosh)' writes), not \\n or \\r\\n: the readers "
                            "would see one line; save it as 'CSV UTF-8', or convert the line "
                            "ends (tr '\\r' '\\n' < old.csv > new.csv)", line=1)
        if dialect.column_names:
            header = dialect.delimiter.join(dialect.column_names)  # no line of the files
        elif not first:
            header = line1
            check_header(path, line1, dialect.delimiter)
        elif line1 != first[0][1]:
            raise DataError(path, f"its header {_shown(line1)} differs from "
                            f"{_shown(first[0][1])} in {first[0][0]}; all shards must have the "
                            "same columns", line=1)
        else:
            header = line1
        first[:] = first or [(path, header)]
        if b'"' in data:
            check_one_row_per_line(path, data.decode().split("\n"), dialect)
        lines = data.split(b"\n")[dialect.header_lines:-1]
        return FileFacts(rows=data_lines(data, dialect.header_lines),
                         blank=any(is_blank(line) for line in lines),
                         shape=next(_csv.reader([header], delimiter=dialect.delimiter)))

    def no_rows(kept: list[str]) -> DataError:
        return DataError(kept[0], f"{'every file holds' if len(kept) > 1 else 'the file holds'}"
                         " a header but no rows: there is nothing to read", line=2)

    return check_file_set(filepaths, check_file, no_rows=no_rows)


#: Separators a one-column header may hide, by the name a message gives them.
_OTHER_SEPARATORS = {",": "commas", ";": "';'", "\t": "a tab", "|": "'|'"}


def check_header(path: str, line: str, delimiter: str = ",") -> list[str]:
    """The header line's column names, checked: each name once, and ``delimiter`` between them.

    Warns (``UserWarning``) when every name is a number: the file may have no
    header (then pass ``column_names=``).

    Raises:
        DataError: a name appears more than once, or the header is one column
            whose name holds another separator (``,``, ``;``, a tab, ``|``): a file
            separated by something else than ``delimiter`` (pass ``delimiter=``).
    """
    names = next(_csv.reader([line], delimiter=delimiter), [])
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        times = {c: names.count(c) for c in repeated}
        said = ", ".join(f"{c!r} {'twice' if n == 2 else f'{n} times'}" for c, n in times.items())
        raise DataError(path, f"the header names {said}; every column needs its own name: "
                        "rename the repeated ones in line 1", line=1)
    if all(_is_number(c) for c in names):
        warnings.warn(f"{path}: every name in line 1 (`{line}`) is a number: does the file lack "
                      "a header? The kit reads line 1 as the header; for a file without one, "
                      "name the columns: column_stats(..., column_names=[...]).",
                      stacklevel=6)  # the caller of column_stats or csv_reader_dataset
    found = [(sep, name) for sep, name in _OTHER_SEPARATORS.items()
             if len(names) == 1 and sep != delimiter and sep in line]
    if found:
        sep, name = found[0]
        used = _OTHER_SEPARATORS.get(delimiter, repr(delimiter))
        raise DataError(path, f"the header is one column named {_shown(line)}: the fields look "
                        f"separated by {name}, not by {used}; pass delimiter={sep!r} "
                        f"(column_stats(..., delimiter={sep!r}))", line=1)
    return names


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _shown(header: str) -> str:
    """A header in backticks, or its repr when a difference would not be visible."""
    return f"`{header}`" if header.isprintable() and header == header.strip() else repr(header)
