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
>>> from datakit.readers.csv_files.schema import NUMBER
>>> path = os.path.join(tempfile.mkdtemp(), "a.csv")
>>> _ = open(path, "w").write("a,b\\n1,2\\n3,4\\n")
>>> decode = checked_decoder(["a", "b"], {"a": NUMBER, "b": NUMBER}, set(), [[0.0], [0.0]])
>>> [c.numpy().tolist() for c in next(iter(decoded_chunks(path, decode)))]
[[1.0, 3.0], [2.0, 4.0]]
"""

from __future__ import annotations

import tensorflow as tf

from datakit.readers.csv_files.grammar import BadLine, describe_bad_line, row_pattern
from datakit.readers.text_lines import numbered_lines

__all__ = ["LINES_PER_CHUNK", "checked_decoder", "blank", "unchanged", "decoded_chunks",
           "checked_lines"]

#: How many lines the fast reader (and ``column_stats``) decodes in one call, per file.
LINES_PER_CHUNK = 1024


def checked_decoder(columns, kinds, required, defaults, *, skip: bool = False, classes=None):
    """``decode(lines, numbers, paths)``: ``decode_csv`` that names the first bad line.

    ``numbers`` and ``paths`` give each line's line number and file, in the
    same shape as ``lines``; they are only read when a line is bad, to raise
    ``InvalidArgumentError`` with a :class:`BadLine` message. ``skip=True``
    (a 1-D chunk only): drop bad lines instead. ``classes``: a text label's values.
    """
    pattern = row_pattern(columns, kinds, required, classes)

    def message(line, number, path):
        raw = line.decode("utf-8", "replace")
        column, reason = describe_bad_line(raw, columns, kinds, required, classes) or (
            None, "bad line")
        return str(BadLine(path.decode(), int(number), column, reason, raw)).encode()

    def fail(lines, numbers, paths):
        ok = tf.reshape(tf.strings.regex_full_match(lines, pattern), [-1])
        i = tf.argmin(tf.cast(ok, tf.int32))
        row = [tf.gather(tf.reshape(t, [-1]), i) for t in (lines, numbers, paths)]
        # Stateless (it keeps nothing between calls), so an iterator over the reader can be
        # saved in a checkpoint as it is: a stateful py_function makes TensorFlow refuse.
        text = tf.numpy_function(message, row, tf.string, stateful=False)
        return tf.debugging.Assert(False, [text], name="bad_csv_line") or tf.constant(False)

    def decode(lines, numbers, paths):
        if skip:
            return tf.io.decode_csv(tf.boolean_mask(
                lines, tf.strings.regex_full_match(lines, pattern)), defaults)
        ok = tf.reduce_all(tf.strings.regex_full_match(lines, pattern))
        checked = tf.cond(ok, lambda: tf.constant(True), lambda: fail(lines, numbers, paths))
        with tf.control_dependencies([checked]):
            return tf.io.decode_csv(tf.identity(lines), defaults)

    return decode


def blank(lines):
    """Which of ``lines`` (a string tensor) are blank: whitespace only."""
    return tf.equal(tf.strings.length(tf.strings.strip(lines)), 0)


def unchanged(path, expected, element) -> tf.data.Dataset:
    """A dataset of no element (like ``element``) that fails if ``path`` changed since its check.

    ``expected = (bytes, rows)`` tensors. When iteration reaches it (put it
    first: ``unchanged(...).concatenate(lines)``), the file is read once more
    (a few ms per MB) and compared: rows removed, cut short or appended after
    ``check_files`` are an error naming the file, never a short or long epoch.
    """
    size, rows = expected

    def check(*_):
        content = tf.io.read_file(path)
        found = tf.strings.split(content, "\n")[1:]  # after the header
        n = tf.reduce_sum(tf.cast(tf.logical_not(blank(found)), tf.int64))
        got = tf.cast(tf.strings.length(content), tf.int64)
        ok = tf.logical_and(tf.equal(got, size), tf.equal(n, rows))
        assertion = tf.debugging.Assert(ok, [
            "CSV file changed after it was checked:", path, "now has", got, "bytes and", n,
            "rows; when checked it had", size, "bytes and", rows,
            "rows. Do not change files while reading them; build the dataset again."],
            name="csv_file_changed")
        with tf.control_dependencies([assertion]):
            return tf.constant(False)

    return tf.data.Dataset.from_tensors(element).filter(check)


def decoded_chunks(path, decode, *, chunk: int = LINES_PER_CHUNK, num_parallel_calls=None,
                   expected=None):
    """The data lines of one file (header and blank lines skipped), ``decode``-d ``chunk`` at once.

    Chunk ``k`` holds lines ``2 + k * chunk`` onwards: the line numbers come
    from the chunk's index, so no per-line bookkeeping is needed. Blank lines
    are masked out of each chunk. ``expected``: see :func:`unchanged`.
    """

    def decode_chunk(k, lines):
        n = tf.size(lines, out_type=tf.int64)
        keep = tf.logical_not(blank(lines))
        numbers = tf.boolean_mask(2 + k * chunk + tf.range(n), keep)
        lines = tf.boolean_mask(lines, keep)
        return decode(lines, numbers, tf.fill(tf.shape(lines), path))

    lines = tf.data.TextLineDataset(path)
    if expected is not None:
        lines = unchanged(path, expected, tf.constant("")).concatenate(lines)
    lines = lines.skip(1).batch(chunk)
    return lines.enumerate().map(decode_chunk, num_parallel_calls=num_parallel_calls)


def checked_lines(path, expected=None, *, skip_blank: bool = False):
    """:func:`datakit.readers.text_lines.numbered_lines`, checked first, blank lines dropped if asked."""
    out = numbered_lines(path)
    if expected is not None:
        out = unchanged(path, expected, (tf.constant(""), tf.constant(0, tf.int64), path)
                        ).concatenate(out)
    return out.filter(lambda line, *_: tf.logical_not(blank(line))) if skip_blank else out
