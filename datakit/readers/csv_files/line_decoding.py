"""Checked decoding: ``decode_csv`` that names the first bad line, file by file, chunk by chunk.

- :func:`checked_decoder` wraps ``tf.io.decode_csv``: the lines are matched
  against the row grammar (:mod:`datakit.readers.csv_files.grammar`) first,
  and a line that fails raises ``InvalidArgumentError`` with its file, line
  number, column and raw text, before its row goes anywhere.
- :func:`decoded_chunks` decodes a file ``LINES_PER_CHUNK`` lines per call,
  the line numbers computed from the chunk's index; :func:`checked_lines`
  hands its lines out one by one with their numbers.
- :func:`row_matcher` matches lines against a row's pattern a group of columns at a
  time when the whole would be too long for RE2's fast engine (a CSV of 1,500 number
  columns took 70 s a chunk and printed "DFA out of memory" once per line).
- :func:`unchanged` makes both fail when the file changed after it was
  checked (rows removed, cut short or appended): an error naming the file,
  never a short or long epoch.

>>> import tempfile, os
>>> from datakit.readers.tables.table_stats import NUMBER
>>> path = os.path.join(tempfile.mkdtemp(), "a.csv")
>>> _ = open(path, "w").write("a,b\\n1,2\\n3,4\\n")
>>> decode = checked_decoder(["a", "b"], {"a": NUMBER, "b": NUMBER}, set(), [[0.0], [0.0]])
>>> [c.numpy().tolist() for c in next(iter(decoded_chunks(path, decode)))]
[[1.0, 3.0], [2.0, 4.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import tensorflow as tf

from datakit.core.exit_guard import release_iterators_at_exit
from datakit.readers.csv_files.dialect import COMMA, Dialect
from datakit.readers.csv_files.grammar import (
    NUMBER_PATTERN,
    BadLine,
    column_pattern,
    describe_bad_line,
    row_fields,
)
from datakit.readers.small_sources.text_lines import numbered_lines, without_bom
from datakit.readers.tables.graph_functions import as_written
from datakit.readers.tables.table_stats import NUMBER

__all__ = ["blank", "unchanged"]

#: A number without ``nan`` (a line holding one is read as text: ``nan`` may be a marker).
_NO_NAN = NUMBER_PATTERN.replace("nan|", "")
#: How many lines the fast reader (and ``column_stats``) decodes in one call, per file.
LINES_PER_CHUNK = 1024
#: The longest pattern TensorFlow's regex ops are given at once. RE2 gives a pattern's fast
#: engine (its DFA) a fixed 8 MB that TensorFlow cannot raise: a row pattern of about
#: 30,000 characters (70 number columns) outgrows it, and RE2 falls back to its slow engine
#: for each line (0.3 s a line at 1,500 columns), printing "DFA out of memory" each time.
MAX_PATTERN = 12_000
#: ``decode(lines, numbers, paths)``: the decoded columns of ``lines`` (each line's number
#: and file locate a bad one).
Decode = Callable[[tf.Tensor, tf.Tensor, tf.Tensor], Any]


def checked_decoder(columns: Sequence[str], kinds: dict[str, str], required: AbstractSet[str],
                    defaults: list, *, skip: bool = False,
                    classes: dict[str, list[str]] | None = None,
                    ignored: AbstractSet[str] = frozenset(),
                    dialect: Dialect = COMMA) -> Decode:
    """``decode(lines, numbers, paths)``: ``decode_csv`` that names the first bad line.

    ``numbers`` and ``paths`` give each line's line number and file, in the
    same shape as ``lines``; they are only read when a line is bad, to raise
    ``InvalidArgumentError`` with a :class:`BadLine` message. ``skip=True``
    (a 1-D chunk only): drop bad lines instead. ``classes``: a text label's values;
    ``ignored``: the columns left out of the statistics (named as such in a message).
    ``dialect``: the separator (``decode_csv``'s ``field_delim``) and the
    missing-value markers: a marker in a number column (but a required one)
    gets the column's default, as an empty field does.
    """
    sep = dialect.separator
    pattern = row_fields(columns, kinds, required, classes, dialect=dialect, ignored=ignored)
    matches = row_matcher(pattern, sep)
    strict, emptied = _emptier(columns, kinds, required, classes, dialect, ignored)
    markers = {i for i, c in enumerate(columns) if kinds[c] == NUMBER and c not in required}
    if not dialect.na_values:
        markers = set()
    # A line without a marker matches the grammar without markers, and without `nan` (which
    # may be one): decode_csv reads its numbers as floats at once, in one regex pass.
    plain = row_matcher([f.replace(NUMBER_PATTERN, _NO_NAN) for f in row_fields(
        columns, kinds, required, classes,
        dialect=Dialect(dialect.delimiter, (), dialect.column_names))], sep)  # ignored: strict

    fail = _failer(matches, columns, kinds, required, classes, ignored, dialect)

    unmarked, read = _readers(defaults, markers, dialect)
    pack, unpack = _packing(defaults)

    def lenient(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        ok = tf.reduce_all(matches(lines))
        check = tf.cond(ok, lambda: tf.constant(True), lambda: fail(lines, numbers, paths))
        with tf.control_dependencies([check]):
            return pack(read(emptied(tf.identity(lines))))

    def checked(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        if strict is None:
            return lenient(lines, numbers, paths)
        # Most chunks match the strict pattern (no quote in an ignored field): one match.
        return tf.cond(tf.reduce_all(strict(lines)),
                       lambda: pack(read(lines)), lambda: lenient(lines, numbers, paths))

    def decoded(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        if skip:
            ok = matches(lines)
            lines, numbers, paths = (tf.boolean_mask(t, ok) for t in (lines, numbers, paths))
            return read(emptied(lines)), lines, numbers, paths
        if not markers:
            return unpack(checked(lines, numbers, paths)), lines, numbers, paths
        # Lines without a marker (most) are read as floats; only lines holding one as text.
        return unpack(tf.cond(tf.reduce_all(plain(lines)),
                              lambda: pack(unmarked(lines)),
                              lambda: checked(lines, numbers, paths))), lines, numbers, paths

    # A number label the grammar accepts but float32 cannot hold (a 1e39) decodes to inf:
    # refused naming its line (under on_bad_line='skip' too: the line counts were made by
    # the grammar), never delivered (issue 60).
    labels = [i for i, c in enumerate(columns) if c in required
              and tf.convert_to_tensor(defaults[i]).dtype == tf.float32]

    def decode(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        out, lines, numbers, paths = decoded(lines, numbers, paths)
        for i in labels:
            finite = tf.math.is_finite(out[i])
            check = tf.cond(tf.reduce_all(finite), lambda: tf.constant(True),
                            lambda f=finite: fail(lines, numbers, paths, f))
            with tf.control_dependencies([check]):
                out[i] = tf.identity(out[i])
        return out

    return decode


def _packing(defaults: list) -> tuple[Callable[[list], tuple], Callable[[tuple], list]]:
    """``(pack, unpack)``: a row's columns as one matrix per dtype, and back. A ``tf.cond``
    between two ways to read a chunk returns the matrices: a cond with an output per column
    (1,500 of them) took TensorFlow a minute to build and optimize."""
    groups: dict[tf.DType, list[int]] = {}
    for i, d in enumerate(defaults):
        groups.setdefault(tf.convert_to_tensor(d).dtype, []).append(i)

    def pack(columns: list) -> tuple:
        return tuple(tf.stack([columns[i] for i in cols], axis=-1) for cols in groups.values())

    def unpack(packed: tuple) -> list:
        columns: list = [None] * len(defaults)
        for cols, matrix in zip(groups.values(), packed, strict=True):
            for i, column in zip(cols, tf.unstack(matrix, num=len(cols), axis=-1), strict=True):
                columns[i] = column
        return columns

    return pack, unpack


def _few_tensors(tensors: list) -> Callable[[], list]:
    """``tensors`` (``decode_csv``'s defaults, one per column) made inside a function from
    one constant per dtype and shape: captured one by one, 1,500 columns' defaults were
    3,000 nodes of the reading function's graph, which TensorFlow optimizes node by node."""
    given = [tf.convert_to_tensor(t) for t in tensors]
    groups: dict[tuple, list[int]] = {}
    for i, t in enumerate(given):
        groups.setdefault((t.dtype, tuple(t.shape)), []).append(i)
    stacked = [(cols, tf.stack([given[i] for i in cols])) for cols in groups.values()]

    def made() -> list:
        out: list = [None] * len(given)
        for cols, matrix in stacked:
            for i, t in zip(cols, tf.unstack(matrix, num=len(cols)), strict=True):
                out[i] = t
        return out

    return made


def _readers(defaults: list, markers: set[int],
             dialect: Dialect) -> tuple[Callable[[tf.Tensor], list], Callable[[tf.Tensor], list]]:
    """``(unmarked, read)``: ``decode_csv`` of lines without a missing-value marker, and of
    any lines (the ``markers`` columns read as text, then as numbers with their default)."""
    read_as = [tf.constant([""]) if i in markers else d for i, d in enumerate(defaults)]
    as_given, as_text = _few_tensors(defaults), _few_tensors(read_as)
    # The marker columns of one dtype are parsed as one matrix: a few ops in all, where a
    # few ops per column made a graph of 40,000 ops for 1,500 columns (a minute to build).
    by_dtype: dict[tf.DType, list[int]] = {}
    for i in sorted(markers):
        by_dtype.setdefault(tf.convert_to_tensor(defaults[i]).dtype, []).append(i)
    fills = {dtype: tf.constant([np.asarray(defaults[i]).reshape(-1)[0] for i in cols], dtype)
             for dtype, cols in by_dtype.items()}

    def unmarked(lines: tf.Tensor) -> list:
        return tf.io.decode_csv(lines, as_given(), field_delim=dialect.delimiter)

    def marked(lines: tf.Tensor) -> list:
        fields = tf.io.decode_csv(lines, as_text(), field_delim=dialect.delimiter)
        for dtype, cols in by_dtype.items():
            text = tf.stack([fields[i] for i in cols], axis=-1)
            numbers = tf.unstack(_numbers(text, fills[dtype], dialect.na_values),
                                 num=len(cols), axis=-1)
            for i, column in zip(cols, numbers, strict=True):
                fields[i] = column
        return fields

    return unmarked, (marked if markers else unmarked)


def _failer(matches: Callable[[tf.Tensor], tf.Tensor], columns: Sequence[str],
            kinds: dict[str, str], required: AbstractSet[str],
            classes: dict[str, list[str]] | None, ignored: AbstractSet[str],
            dialect: Dialect) -> Callable[..., tf.Tensor]:
    """``fail(lines, numbers, paths, ok=None)``: raise ``InvalidArgumentError`` naming the
    first line of ``lines`` that ``matches`` (:func:`row_matcher`) refuses (or that ``ok``
    marks bad), as a :class:`BadLine`."""
    release_iterators_at_exit()  # the message is built in Python: no hang at exit
    def message(line: bytes, number: np.int64, path: bytes) -> bytes:
        raw = line.decode("utf-8", "replace")
        column, reason = describe_bad_line(raw, columns, kinds, required, classes,
                                           ignored=ignored, dialect=dialect) or (
            None, "bad line")
        return str(BadLine(path.decode(), int(number), column, reason, raw)).encode()

    def fail(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor,
             ok: tf.Tensor | None = None) -> tf.Tensor:
        """``ok``: which lines are good (default: those ``matches`` accepts)."""
        ok = tf.reshape(matches(lines) if ok is None else ok, [-1])
        i = tf.argmin(tf.cast(ok, tf.int32))
        row = [tf.gather(tf.reshape(t, [-1]), i) for t in (lines, numbers, paths)]
        # Stateless (it keeps nothing between calls), so an iterator over the reader can be
        # saved in a checkpoint as it is: a stateful py_function makes TensorFlow refuse.
        text = tf.numpy_function(message, row, tf.string, stateful=False)
        return tf.debugging.Assert(False, [text], name="bad_csv_line") or tf.constant(False)

    return fail


def _emptier(columns: Sequence[str], kinds: dict[str, str], required: AbstractSet[str],
             classes: dict[str, list[str]] | None, dialect: Dialect,
             ignored: AbstractSet[str]
             ) -> tuple[Callable[[tf.Tensor], tf.Tensor] | None, Callable[[tf.Tensor], tf.Tensor]]:
    """``(strict, emptied)``: the row matcher (:func:`row_matcher`) of the lines that
    ``decode_csv`` can read (ignored columns as plain text) and ``lines -> lines`` with
    every ignored field emptied, for lines whose ignored field holds a quote ``decode_csv``
    refuses (`5" tall`) though the row pattern accepts it (one regex pass per ignored
    column). ``(None, identity)`` when no column is ignored."""
    quoted = [k for k, c in enumerate(columns) if c in ignored]
    if not quoted:
        return None, lambda lines: lines
    sep = dialect.separator
    fields = [column_pattern(c, kinds, required, classes, dialect, ignored) for c in columns]
    passes = [f"^((?:{sep.join(fields[:k])}{sep if k else ''}))(?:{fields[k]})"
              f"((?:{sep}.*)?)$" for k in quoted]

    def emptied(lines: tf.Tensor) -> tf.Tensor:
        for pattern in passes:
            lines = tf.strings.regex_replace(lines, pattern, r"\1\2", replace_global=False)
        return lines

    return row_matcher(row_fields(columns, kinds, required, classes, dialect=dialect),
                       sep), emptied


def row_matcher(fields: Sequence[str], separator: str) -> Callable[[tf.Tensor], tf.Tensor]:
    """``matches(lines)``: which of ``lines`` (a string tensor) match the row pattern whose
    columns' patterns are ``fields``, joined by ``separator`` (a regex).

    A row pattern longer than :data:`MAX_PATTERN` is matched in groups of columns, each
    group's pattern short enough for RE2's fast engine: each pass takes the next group
    of fields off the start of the line, then the last must end it. The columns'
    patterns never match a bare separator (it splits a row one way only), so this is
    the whole pattern's answer. A line's prefix counts the groups taken, so a line whose
    group failed is never matched by a later group.

    >>> wide = row_matcher(["(?:[0-9]+|" + "z" * 3000 + ")"] * 20, ",")  # 60,000 characters
    >>> wide(tf.constant(["1," * 19 + "2", "1," * 19 + "x", "1," * 18 + "2"])).numpy()
    array([ True, False, False])
    """
    groups: list[list[str]] = [[]]
    for f in fields:
        if groups[-1] and len(separator.join([*groups[-1], f])) > MAX_PATTERN:
            groups.append([])
        groups[-1].append(f)
    if len(groups) == 1:
        pattern = separator.join(fields)
        return lambda lines: tf.strings.regex_full_match(lines, pattern)
    taken = [rf"^\x01{{{k}}}\x02(?:{separator.join(g)}){separator}"
             for k, g in enumerate(groups[:-1])]
    last = rf"\x01{{{len(groups) - 1}}}\x02(?:{separator.join(groups[-1])})"

    def matches(lines: tf.Tensor) -> tf.Tensor:
        rest = tf.strings.join(["\x02", lines])  # no group taken yet
        for k, pattern in enumerate(taken):
            rest = tf.strings.regex_replace(rest, pattern, "\x01" * (k + 1) + "\x02",
                                            replace_global=False)
        return tf.strings.regex_full_match(rest, last)

    return matches


def _numbers(fields: tf.Tensor, defaults: tf.Tensor, na_values: Sequence[str]) -> tf.Tensor:
    """Number columns read as text (``fields``: one column per last index): empty fields and
    markers get their column's default (``defaults``, one per column), the rest parsed."""
    missing = tf.logical_or(tf.equal(fields, ""), tf.reduce_any(
        tf.equal(tf.expand_dims(fields, -1), tf.constant(list(na_values))), axis=-1))
    values = tf.strings.to_number(tf.where(missing, "0", fields), defaults.dtype)
    return tf.where(missing, defaults, values)


def blank(lines: tf.Tensor) -> tf.Tensor:
    """Which of ``lines`` (a string tensor) are blank: whitespace only."""
    return tf.equal(tf.strings.length(tf.strings.strip(lines)), 0)


def fingerprint(content: tf.Tensor) -> tf.Tensor:
    """A file's content (a string tensor) as one int64 (``tf.fingerprint``, farmhash): what
    :func:`unchanged` compares, computed the same way when the reader is built."""
    return tf.bitcast(tf.fingerprint(tf.reshape(content, [1]))[0], tf.int64)


def unchanged(path: str | tf.Tensor, expected: Sequence[tf.Tensor], element: Any, *,
              header_lines: int = 1) -> tf.data.Dataset:
    """A dataset of no element (like ``element``) that fails if ``path`` changed since its check.

    ``expected = (bytes, rows)`` or ``(bytes, rows, fingerprint)`` tensors. When
    iteration reaches it (put it first: ``unchanged(...).concatenate(lines)``),
    the file is read once more (a few ms per MB) and compared: rows removed, cut
    short, appended or rewritten (another :func:`fingerprint`, even at the same
    size) after ``check_files`` are an error naming the file, never a short or
    long epoch, nor one that mixes old and new rows.
    """
    size, rows = expected[0], expected[1]

    @as_written
    def check(*_: tf.Tensor) -> tf.Tensor:
        content = tf.io.read_file(path)
        found = tf.strings.split(content, "\n")[header_lines:]  # after the header
        n = tf.reduce_sum(tf.cast(tf.logical_not(blank(found)), tf.int64))
        got = tf.cast(tf.strings.length(content), tf.int64)
        ok = tf.logical_and(tf.equal(got, size), tf.equal(n, rows))
        same = tf.constant(True) if len(expected) < 3 else tf.equal(fingerprint(content),
                                                                       expected[2])
        assertion = tf.debugging.Assert(tf.logical_and(ok, same), [
            "CSV file changed after it was checked:", path, "now has", got, "bytes and", n,
            "rows; when checked it had", size, "bytes and", rows,
            "rows. Same content now:", same, ". One epoch would mix old and new rows: build "
            "the dataset again after files change, and never change files while they are "
            "read."], name="csv_file_changed")
        with tf.control_dependencies([assertion]):
            return tf.constant(False)

    return tf.data.Dataset.from_tensors(element).filter(check)


def decoded_chunks(path: str | tf.Tensor, decode: Decode, *, chunk: int = LINES_PER_CHUNK,
                   num_parallel_calls: int | None = None,
                   expected: Sequence[tf.Tensor] | None = None,
                   header_lines: int = 1) -> tf.data.Dataset:
    """The data lines of one file (header and blank lines skipped), ``decode``-d ``chunk`` at once.

    Chunk ``k`` holds lines ``2 + k * chunk`` onwards: the line numbers come
    from the chunk's index, so no per-line bookkeeping is needed. Blank lines
    are masked out of each chunk. ``expected``: see :func:`unchanged`;
    ``header_lines``: 0 for a file without a header (``column_names``).
    """

    @as_written
    def decode_chunk(k: tf.Tensor, lines: tf.Tensor) -> Any:
        if not header_lines:  # line 1 is a row: a byte order mark is not part of it
            lines = tf.cond(tf.equal(k, 0), lambda: tf.concat(
                [without_bom(lines[:1]), lines[1:]], 0), lambda: lines)
        n = tf.size(lines, out_type=tf.int64)
        keep = tf.logical_not(blank(lines))
        numbers = tf.boolean_mask(1 + header_lines + k * chunk + tf.range(n), keep)
        lines = tf.boolean_mask(lines, keep)
        return decode(lines, numbers, tf.fill(tf.shape(lines), path))

    lines = tf.data.TextLineDataset(path)
    if expected is not None:
        lines = unchanged(path, expected, tf.constant(""), header_lines=header_lines
                          ).concatenate(lines)
    lines = lines.skip(header_lines).batch(chunk)
    return lines.enumerate().map(decode_chunk, num_parallel_calls=num_parallel_calls)


def checked_lines(path: str | tf.Tensor, expected: Sequence[tf.Tensor] | None = None, *,
                  skip_blank: bool = False, header_lines: int = 1) -> tf.data.Dataset:
    """A file's ``(line, number, path)`` elements (``text_lines.numbered_lines``), checked first.

    ``expected``: see :func:`unchanged`; ``skip_blank``: drop blank lines;
    ``header_lines``: 0 for a file without a header.
    """
    out = numbered_lines(path, skip_header=bool(header_lines))
    if expected is not None:
        out = unchanged(path, expected, (tf.constant(""), tf.constant(0, tf.int64), path),
                        header_lines=header_lines).concatenate(out)
    if not skip_blank:
        return out
    return out.filter(as_written(lambda line, *_: tf.logical_not(blank(line))))
