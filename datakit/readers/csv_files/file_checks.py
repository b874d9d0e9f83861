"""Check CSV files before reading them: every problem found up front, named with its file.

:func:`check_files` resolves paths and glob patterns and reports, up front,
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
>>> counts = {}
>>> files, columns = check_files(os.path.join(d, "toy_*.csv"), counts=counts)
>>> columns, sorted(counts.values())
(['x', 'y'], [2, 2])
"""

from __future__ import annotations

import csv as _csv
import os
import warnings
from pathlib import Path

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.core.paths import resolve_files
from datakit.readers.csv_files.dialect import COMMA, Dialect

__all__ = ["check_files", "check_header", "check_one_row_per_line", "is_blank", "data_lines",
           "glob_matched"]


def is_blank(line: str | bytes) -> bool:
    """Whether a line is blank (ASCII whitespace only): skipped, as the csv module does."""
    return not line.strip(b" \t\r\n\v\f" if isinstance(line, bytes) else " \t\r\n\v\f")


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


def check_files(filepaths: str | Path | list, *, counts: dict | None = None,
                blank: set | None = None,
                dialect: Dialect = COMMA) -> tuple[list[str], list[str]]:
    """Resolve paths and glob patterns; return ``(sorted files, header columns)``.

    Paths are resolved by :func:`datakit.core.paths.resolve_files` (an existing
    file literally, each file once). Raises, naming the file: a path that
    does not exist or is a folder, a pattern that matches nothing, an empty
    file, a header-only file, bytes that are not UTF-8, a header that differs
    from the first file's, a header naming a column twice or holding another
    separator than commas (:func:`check_header`), a file that disagrees with
    its ``manifest.json`` (rows, bytes, sha256, or a set that lists other
    files). Blank lines are skipped, as the ``csv`` module and pandas do.

    On purpose, and unlike a plain ``open``: a UTF-8 byte order mark at the
    start of a file is stripped (it is not part of the first column's name);
    a folder that a glob pattern matches is skipped (a folder named itself
    is an error), as are files left over by an interrupted writer that a
    pattern matches. ``counts``, if given,
    receives the number of rows of each file; ``blank``, if given, receives
    the files that hold a blank line between the header and the last line
    (so a reader knows, without reading them again, which files need it
    to skip blank lines). ``dialect``: the separator, and ``column_names``
    for files without a header line (then every line is a row, and the
    columns returned are those names).
    """
    files = resolve_files(filepaths)
    header = None
    manifests: dict[Path, dict | None] = {}  # each folder's manifest, read once
    kept, total = [], 0
    for path in files:
        folder, name = Path(path).parent, Path(path).name
        if folder not in manifests:
            manifests[folder] = manifest.read_manifest(folder)
        if name in manifest.ignored_names(manifests[folder]):
            if not glob_matched(path, filepaths):
                raise DataError(path, "left over by a writer that was interrupted; the "
                                f"folder's {manifest.MANIFEST} does not list it: write the set "
                                "again, or read the files it lists")
            continue  # a pattern matched a killed writer's file: not part of any set
        with open(path, "rb") as f:
            data = f.read()
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]  # a UTF-8 byte order mark: not part of the first column's name
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise DataError(path, f"byte {data[e.start]:#04x} is not UTF-8 ({e.reason}); save "
                            "the file as UTF-8 (e.g. pandas: encoding='latin-1' to read, then "
                            "to_csv)", line=line, offset=e.start) from None
        if not data.strip():
            raise DataError(path, "the file is empty; every shard needs a header line")
        first = data.split(b"\n", 1)[0].rstrip(b"\r").decode()
        if dialect.column_names:
            header = dialect.delimiter.join(dialect.column_names)  # no line of the files
        elif header is None:
            header, first_file = first, path
            check_header(path, first, dialect.delimiter)
        elif first != header:
            raise DataError(path, f"its header {_shown(first)} differs from {_shown(header)} in "
                            f"{first_file}; all shards must have the same columns", line=1)
        if b'"' in data:
            check_one_row_per_line(path, data.decode().split("\n"), dialect)
        rows = data_lines(data, dialect.header_lines)
        total += rows
        lines = data.split(b"\n")[dialect.header_lines:-1]
        if blank is not None and any(is_blank(line) for line in lines):
            blank.add(path)
        if manifest.set_of_file(manifests[folder], name) is not None:
            manifest.check(folder, files=[name], counts={name: rows}, man=manifests[folder])
        kept.append(path)
        if counts is not None:
            counts[path] = rows
    if not kept:
        raise FileNotFoundError(f"{filepaths!r}: only files left over by an interrupted writer "
                                "match; write the set again")
    if total == 0:
        raise DataError(kept[0], f"{'every file holds' if len(kept) > 1 else 'the file holds'} "
                        "a header but no rows: there is nothing to read", line=2)
    return sorted(kept), next(_csv.reader([header], delimiter=dialect.delimiter))


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
                      stacklevel=4)
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


def glob_matched(path: str, filepaths) -> bool:
    """Whether ``path`` came from a pattern rather than being named itself."""
    items = [filepaths] if isinstance(filepaths, (str, os.PathLike)) else list(filepaths)
    return not any(os.path.realpath(os.fspath(i)) == os.path.realpath(path) for i in items)
