"""Checked decoding: ``decode_csv`` that names the first bad line, file by file, chunk by chunk.

- :func:`checked_decoder` wraps ``tf.io.decode_csv``: the lines are matched
  against the row grammar (:mod:`datakit.readers.csv_files.grammar`) first,
  and a line that fails raises ``InvalidArgumentError`` with its file, line
  number, column and raw text, before its row goes anywhere.
- :func:`decoded_chunks` decodes a file ``LINES_PER_CHUNK`` lines per call,
  the line numbers computed from the chunk's index; :func:`checked_lines`
  hands its lines out one by one with their numbers.
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
    row_pattern,
)
from datakit.readers.small_sources.text_lines import numbered_lines, without_bom
from datakit.readers.tables.table_stats import NUMBER

__all__ = ["blank", "unchanged"]

#: A number without ``nan`` (a line holding one is read as text: ``nan`` may be a marker).
_NO_NAN = NUMBER_PATTERN.replace("nan|", "")
#: How many lines the fast reader (and ``column_stats``) decodes in one call, per file.
LINES_PER_CHUNK = 1024
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
    pattern = row_pattern(columns, kinds, required, classes, dialect=dialect, ignored=ignored)
    strict, emptied = _emptier(columns, kinds, required, classes, dialect, ignored)
    markers = {i for i, c in enumerate(columns) if kinds[c] == NUMBER and c not in required}
    if not dialect.na_values:
        markers = set()
    # A line without a marker matches the grammar without markers, and without `nan` (which
    # may be one): decode_csv reads its numbers as floats at once, in one regex pass.
    plain = row_pattern(columns, kinds, required, classes,
                        dialect=Dialect(dialect.delimiter, (), dialect.column_names)
                        ).replace(NUMBER_PATTERN, _NO_NAN)  # ignored columns: as text, strict

    fail = _failer(pattern, columns, kinds, required, classes, ignored, dialect)

    unmarked, read = _readers(defaults, markers, dialect)

    def lenient(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        ok = tf.reduce_all(tf.strings.regex_full_match(lines, pattern))
        check = tf.cond(ok, lambda: tf.constant(True), lambda: fail(lines, numbers, paths))
        with tf.control_dependencies([check]):
            return read(emptied(tf.identity(lines)))

    def checked(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        if strict is None:
            return lenient(lines, numbers, paths)
        # Most chunks match the strict pattern (no quote in an ignored field): one match.
        return tf.cond(tf.reduce_all(tf.strings.regex_full_match(lines, strict)),
                       lambda: read(lines), lambda: lenient(lines, numbers, paths))

    def decode(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        if skip:
            lines = tf.boolean_mask(lines, tf.strings.regex_full_match(lines, pattern))
            return read(emptied(lines))
        if not markers:
            return checked(lines, numbers, paths)
        # Lines without a marker (most) are read as floats; only lines holding one as text.
        return tf.cond(tf.reduce_all(tf.strings.regex_full_match(lines, plain)),
                       lambda: unmarked(lines), lambda: checked(lines, numbers, paths))

    return decode


def _readers(defaults: list, markers: set[int],
             dialect: Dialect) -> tuple[Callable[[tf.Tensor], list], Callable[[tf.Tensor], list]]:
    """``(unmarked, read)``: ``decode_csv`` of lines without a missing-value marker, and of
    any lines (the ``markers`` columns read as text, then as numbers with their default)."""
    read_as = [tf.constant([""]) if i in markers else d for i, d in enumerate(defaults)]

    def unmarked(lines: tf.Tensor) -> list:
        return tf.io.decode_csv(lines, defaults, field_delim=dialect.delimiter)

    def marked(lines: tf.Tensor) -> list:
        fields = tf.io.decode_csv(lines, read_as, field_delim=dialect.delimiter)
        return [_numbers(f, defaults[i], dialect.na_values) if i in markers else f
                for i, f in enumerate(fields)]

    return unmarked, (marked if markers else unmarked)


def _failer(pattern: str, columns: Sequence[str], kinds: dict[str, str], required: AbstractSet[str],
            classes: dict[str, list[str]] | None, ignored: AbstractSet[str],
            dialect: Dialect) -> Callable[[tf.Tensor, tf.Tensor, tf.Tensor], tf.Tensor]:
    """``fail(lines, numbers, paths)``: raise ``InvalidArgumentError`` naming the first line of
    ``lines`` that does not match ``pattern``, as a :class:`BadLine`."""
    release_iterators_at_exit()  # the message is built in Python: no hang at exit
    def message(line: bytes, number: np.int64, path: bytes) -> bytes:
        raw = line.decode("utf-8", "replace")
        column, reason = describe_bad_line(raw, columns, kinds, required, classes,
                                           ignored=ignored, dialect=dialect) or (
            None, "bad line")
        return str(BadLine(path.decode(), int(number), column, reason, raw)).encode()

    def fail(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> tf.Tensor:
        ok = tf.reshape(tf.strings.regex_full_match(lines, pattern), [-1])
        i = tf.argmin(tf.cast(ok, tf.int32))
        row = [tf.gather(tf.reshape(t, [-1]), i) for t in (lines, numbers, paths)]
        # Stateless (it keeps nothing between calls), so an iterator over the reader can be
        # saved in a checkpoint as it is: a stateful py_function makes TensorFlow refuse.
        text = tf.numpy_function(message, row, tf.string, stateful=False)
        return tf.debugging.Assert(False, [text], name="bad_csv_line") or tf.constant(False)

    return fail


def _emptier(columns: Sequence[str], kinds: dict[str, str], required: AbstractSet[str],
             classes: dict[str, list[str]] | None, dialect: Dialect,
             ignored: AbstractSet[str]) -> tuple[str | None, Callable[[tf.Tensor], tf.Tensor]]:
    """``(strict, emptied)``: the row pattern that ``decode_csv`` can read (ignored columns as
    plain text) and ``lines -> lines`` with every ignored field emptied, for lines whose
    ignored field holds a quote ``decode_csv`` refuses (`5" tall`) though the row pattern
    accepts it (one regex pass per ignored column). ``(None, identity)`` when no column is
    ignored."""
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

    return row_pattern(columns, kinds, required, classes, dialect=dialect), emptied


def _numbers(fields: tf.Tensor, default: tf.Tensor, na_values: Sequence[str]) -> tf.Tensor:
    """A number column read as text: empty fields and markers get ``default``, the rest parsed."""
    missing = tf.logical_or(tf.equal(fields, ""), tf.reduce_any(
        tf.equal(tf.expand_dims(fields, -1), tf.constant(list(na_values))), axis=-1))
    default = tf.convert_to_tensor(default)
    values = tf.strings.to_number(tf.where(missing, "0", fields), default.dtype)
    return tf.where(missing, default[0], values)


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
    return out.filter(lambda line, *_: tf.logical_not(blank(line))) if skip_blank else out
