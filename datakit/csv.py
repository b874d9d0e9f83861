"""Read CSV shards with ``tf.data``: decode, locate bad lines, and the reader for ``fit()``.

:func:`csv_reader_dataset` reads shards (:mod:`datakit.shards`) into
``(features, label)`` batches for ``model.fit()``, with the training
statistics (:mod:`datakit.stats`). Two variants, same rows, same order:

- ``parse="line"``, the classic chain: ``list_files -> interleave(
  TextLineDataset(f).skip(1)) -> shuffle -> map(parse one line) -> batch ->
  prefetch``: one function call (~25 us here) per line.
- ``parse="batch"``: each reader decodes its file ``LINES_PER_CHUNK`` lines
  per call and hands out rows (``unbatch``), so interleave, shuffle and batch
  see the classic chain's sequence of rows, for one call per chunk.
- ``parse="vectorized"``: batch-then-parse, the performance guide's
  vectorized map: ``... -> shuffle -> batch -> map(parse a batch of lines)``,
  one call per batch.
- ``parse="chunk"``: the ``"batch"`` readers' parsed chunks stay whole,
  shuffled a chunk at a time through a row buffer of the same size
  (:mod:`datakit.chunkshuffle`), then ``rebatch``: no per-row dataset work at
  all; every row once, mixing as the row buffer's, another order.

``trace=True`` builds the same chain with :mod:`datakit.timeline` stages
(``lines``: how long the parse waited for its input; ``parse``), so a
timeline or a benchmark of the traced reader measures this very chain.

Numbers are standardized, ``(x - mean) / std``; a **missing number is filled
with the training mean, so it becomes 0.0**; a text column becomes a one-hot
block over ``["[UNK]"] + vocabulary`` (unseen or empty: ``[UNK]``).

A bad line (wrong number of fields, text in a number column, an unterminated
quote) raises an error naming the file, line number, column and raw line when
the reader parses it (before its row reaches the shuffle buffer);
:func:`find_bad_lines` finds them all before training; ``on_bad_line="skip"``
drops them and warns with a count per file. No ``ignore_errors()``: it spins
forever on a missing file in TF 2.21.

>>> import tempfile
>>> from datakit.shards import write_shards
>>> from datakit.stats import column_stats
>>> paths = write_shards({"x": [1.0, 2.0, None, 4.0], "y": [10.0, 20.0, 30.0, 40.0]},
...                      tempfile.mkdtemp(), num_shards=2)
>>> stats = column_stats(paths)
>>> ds = csv_reader_dataset(paths, stats=stats, label="y", shuffle_buffer_size=None, batch_size=4)
>>> x, y = next(iter(ds))
>>> [round(float(v), 3) for v in x.numpy().ravel()], y.numpy().tolist()
([-1.069, 0.0, -0.267, 1.336], [10.0, 30.0, 20.0, 40.0])
"""

from __future__ import annotations

import csv as _csv
import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING


import tensorflow as tf

from datakit import timeline
from datakit.checks import check_count, interleave_lengths
from datakit.chunkshuffle import shuffle_chunks
from datakit.lines import numbered_lines
from datakit.shards import check_files

__all__ = ["NUMBER", "TEXT", "OOV", "LINES_PER_CHUNK", "NUMBER_PATTERN", "BadLine",
           "describe_bad_line", "find_bad_lines", "checked_decoder", "decoded_chunks",
           "feature_names", "csv_reader_dataset"]

if TYPE_CHECKING:
    from datakit.stats import CsvStats

NUMBER, TEXT = "number", "text"
#: The one-hot slot for unknown (unseen or empty) text values.
OOV = "[UNK]"
#: How many lines the fast reader (and ``column_stats``) decodes in one call, per file.
LINES_PER_CHUNK = 1024
#: A number as ``decode_csv`` reads it (optionally quoted in a row).
NUMBER_PATTERN = r" *[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)? *"
_PATTERNS = {NUMBER: f'(?:{NUMBER_PATTERN}|"{NUMBER_PATTERN}")',
             TEXT: r'(?:"(?:[^"]|"")*"|[^",]*)'}


# -- bad lines -------------------------------------------------------------------


@dataclass
class BadLine:
    """A line that does not parse: where it is, which column, why.

    :func:`find_bad_lines` returns them; the reader raises with the same text:

    >>> print(BadLine("a.csv", 7, "b (2 of 3)", "expected a number, got `abc`", "1,abc,x"))
    bad CSV line: a.csv, line 7, column b (2 of 3): expected a number, got `abc`; raw line: `1,abc,x`
    """

    file: str
    line: int
    column: str | None
    reason: str
    raw: str

    def __str__(self) -> str:
        col = f", column {self.column}" if self.column else ""
        return (f"bad CSV line: {self.file}, line {self.line}{col}: {self.reason}; "
                f"raw line: `{self.raw}`")


def _row_pattern(columns: list[str], kinds: dict[str, str], required: set[str]) -> str:
    return ",".join(_PATTERNS[kinds[c]] + ("" if c in required else "?") for c in columns)


def describe_bad_line(raw: str, columns: list[str], kinds: dict[str, str],
                      required: set[str] = frozenset()) -> tuple[str | None, str] | None:
    """Why ``raw`` does not parse: ``(column or None, reason)``, or None if it is fine.

    >>> describe_bad_line('1,abc', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    ('b (2 of 2)', 'expected a number, got `abc`')
    >>> describe_bad_line('1', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    (None, 'found 1 field(s), expected 2')
    """
    pos, n = 0, len(columns)
    for k, col in enumerate(columns):
        where = f"{col} ({k + 1} of {n})"
        pat = re.compile(_PATTERNS[kinds[col]] + ("" if col in required else "?") + "(?=,|$)")
        m = pat.match(raw, pos)
        if not m:
            field = raw[pos:].split(",", 1)[0]
            if field.startswith('"') and raw.count('"', pos) % 2:
                return where, "unterminated quote"
            if kinds[col] == TEXT:
                return where, 'a quote inside a field must be doubled ("") and the field quoted'
            if not field:
                return where, "the label is empty" if col in required else "expected a number"
            return where, f"expected a number, got `{field}`"
        pos = m.end()
        if k < n - 1:
            if pos >= len(raw):
                return None, f"found {k + 1} field(s), expected {n}"
            pos += 1
    if pos != len(raw):
        extra = len(next(_csv.reader([raw[pos + 1:]])))
        return None, f"found {n + extra} fields, expected {n}"
    return None


def _kinds_for(stats: CsvStats, columns: list[str], path: str) -> dict[str, str]:
    if list(stats.columns) != list(columns):
        raise ValueError(f"{path}: columns {columns} differ from the statistics' columns "
                         f"{stats.columns}; compute column_stats on files with the same header.")
    return stats.kinds()


def find_bad_lines(filepaths, stats: CsvStats, *, label: str | None = None) -> list[BadLine]:
    """Every line of ``filepaths`` that the reader would reject (pure Python, before training).

    The test is the reader's own: the same regular expression per row.
    """
    files, columns = check_files(filepaths)
    kinds = _kinds_for(stats, columns, files[0])
    pattern = re.compile(_row_pattern(columns, kinds, {label} if label else set()))
    bad = []
    for path in files:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                line = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
                if number > 1 and not pattern.fullmatch(line):
                    column, reason = describe_bad_line(line, columns, kinds, {label} - {None})
                    bad.append(BadLine(path, number, column, reason, line))
    return bad


def _warn_skipped(bad: list[BadLine]) -> None:
    if bad:
        per_file = Counter(b.file for b in bad)
        detail = ", ".join(f"{os.path.basename(f)}: {n}" for f, n in sorted(per_file.items()))
        warnings.warn(f"skipping {len(bad)} bad line(s) ({detail}); first: {bad[0]}",
                      stacklevel=3)


# -- decoding with locations --------------------------------------------------------


def checked_decoder(columns, kinds, required, defaults, *, skip: bool = False):
    """``decode(lines, numbers, paths)``: ``decode_csv`` that names the first bad line.

    ``numbers`` and ``paths`` give each line's line number and file, in the
    same shape as ``lines``; they are only read when a line is bad, to raise
    ``InvalidArgumentError`` with a :class:`BadLine` message. ``skip=True``
    (a 1-D chunk only): drop bad lines instead.
    """
    pattern = _row_pattern(columns, kinds, required)

    def message(line, number, path):
        raw = line.numpy().decode("utf-8", "replace")
        column, reason = describe_bad_line(raw, columns, kinds, required) or (None, "bad line")
        return str(BadLine(path.numpy().decode(), int(number), column, reason, raw))

    def fail(lines, numbers, paths):
        ok = tf.reshape(tf.strings.regex_full_match(lines, pattern), [-1])
        i = tf.argmin(tf.cast(ok, tf.int32))
        row = [tf.gather(tf.reshape(t, [-1]), i) for t in (lines, numbers, paths)]
        text = tf.py_function(message, row, tf.string)
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


def decoded_chunks(path, decode, *, chunk: int = LINES_PER_CHUNK, num_parallel_calls=None):
    """The data lines of one file (header skipped), ``decode``-d ``chunk`` lines per call.

    Chunk ``k`` holds lines ``2 + k * chunk`` onwards: the line numbers come
    from the chunk's index, so no per-line bookkeeping is needed.
    """

    def decode_chunk(k, lines):
        n = tf.size(lines, out_type=tf.int64)
        return decode(lines, 2 + k * chunk + tf.range(n), tf.fill([n], path))

    lines = tf.data.TextLineDataset(path).skip(1).batch(chunk)
    return lines.enumerate().map(decode_chunk, num_parallel_calls=num_parallel_calls)


# -- the reader ------------------------------------------------------------------


def feature_names(stats: CsvStats, label: str) -> list[str]:
    """The names of the reader's feature columns: numbers, then one-hot slots per text column."""
    names = [c for c in stats.columns if c != label and stats[c].kind == NUMBER]
    for c in stats.columns:
        if c != label and stats[c].kind == TEXT:
            names += [f"{c}={v}" for v in [OOV] + list(stats[c].vocabulary)]
    return names


def _check_arguments(**args) -> None:
    auto = ("n_parse_threads", "prefetch")
    lows = {"shuffle_buffer_size": 0, "prefetch": 0}
    for name, v in args.items():
        check_count(name, v, lows.get(name, 1), none=name not in ("n_readers", "batch_size"),
                    autotune=name in auto)


def csv_reader_dataset(filepaths, repeat: int | None = 1, n_readers: int = 5,
                       n_read_threads: int | None = None, shuffle_buffer_size: int | None = 10_000,
                       n_parse_threads: int | None = 5, batch_size: int = 32, *,
                       stats: CsvStats, label: str, seed: int | None = None,
                       parse: str = "line", label_scale: float = 1.0,
                       on_bad_line: str = "raise", prefetch: int | None = 1,
                       trace: bool = False):
    """Read CSV shards into ``(features, label)`` batches for ``model.fit()``.

    The dataset knows its length (``len(ds)``, from the files' line counts),
    which ``fit()`` uses, and checks it: a short read is an error.

    Args:
        filepaths: paths or glob patterns, checked up front (``check_files``).
        repeat: passes over the files (``None``: forever).
        n_readers: files read at once (``interleave``'s ``cycle_length``).
        n_read_threads: threads reading them (``None``, at most ``n_readers``,
            or ``tf.data.AUTOTUNE``).
        shuffle_buffer_size: rows in the shuffle buffer; ``None`` (or 0) reads
            files in sorted order, unshuffled.
        n_parse_threads: parallel parse calls (``None``, an int or AUTOTUNE).
        batch_size: rows per batch.
        stats: from ``column_stats`` on the *training* files.
        label: the target column (divided by ``label_scale``; never empty).
        seed: seeds the file order and the shuffle.
        parse: ``"line"``, the classic map-per-line chain; ``"batch"``, each
            reader decodes chunks of lines (``n_parse_threads`` chunks at a
            time per reader); ``"vectorized"``, batch lines then parse each
            batch. Same rows in the same order. ``"chunk"``: the ``"batch"``
            readers' chunks shuffled a chunk at a time
            (:func:`datakit.chunkshuffle.shuffle_chunks`): fastest, another order.
        label_scale: labels are divided by it (> 0).
        on_bad_line: ``"raise"``, or ``"skip"`` (drop bad lines, warn with a
            count per file).
        prefetch: the buffer of the final ``prefetch`` (0 or None: none).
        trace: add :mod:`datakit.timeline` stages; elements become
            ``((features, label), trace)``, for ``timeline.trace_timeline``.

    Raises:
        TypeError: a count is not an int.
        ValueError: a bad argument value, or a label that is not a number column.
        FileNotFoundError: no file matches a path or pattern.
        BadLine: (as ``InvalidArgumentError`` while iterating) a line that does
            not parse, named with its file, line number and column.
    """
    counts: dict[str, int] = {}
    files, columns = check_files(filepaths, counts=counts)
    kinds = _kinds_for(stats, columns, files[0])
    if label not in columns:
        raise ValueError(f"label={label!r} is not a column; the columns are {columns}.")
    if kinds[label] != NUMBER:
        raise ValueError(f"label={label!r} is a text column; this reader predicts a number.")
    _check_arguments(n_readers=n_readers, batch_size=batch_size, repeat=repeat,
                     shuffle_buffer_size=shuffle_buffer_size, n_read_threads=n_read_threads,
                     n_parse_threads=n_parse_threads, prefetch=prefetch)
    interleave_lengths(n_readers, 1, n_read_threads, names=("n_readers", "n_read_threads"))
    if parse not in ("line", "batch", "vectorized", "chunk"):
        raise ValueError(f"parse={parse!r}: use 'line' (classic), 'batch' (each reader parses "
                         "chunks), 'vectorized' (batch, then parse) or 'chunk' (parsed chunks "
                         "shuffled a chunk at a time).")
    if trace and parse == "chunk":
        raise ValueError("trace=True traces rows; parse='chunk' has no per-row stage: "
                         "use parse='batch' to trace the same readers.")
    if not label_scale > 0:
        raise ValueError(f"label_scale={label_scale!r}: labels are divided by it, so pass a "
                         "number > 0 (1 keeps them as they are).")
    if on_bad_line not in ("raise", "skip"):
        raise ValueError(f"on_bad_line={on_bad_line!r}: use 'raise' or 'skip'.")
    skip = on_bad_line == "skip"
    if skip:
        bad = find_bad_lines(files, stats, label=label)
        _warn_skipped(bad)
        counts = {f: n - sum(b.file == f for b in bad) for f, n in counts.items()}

    features = [c for c in columns if c != label]
    nums = [c for c in features if kinds[c] == NUMBER]
    mean = tf.constant([stats[c].mean for c in nums], tf.float32)
    std = tf.constant([stats[c].std or 1.0 for c in nums], tf.float32)
    defaults = [tf.constant([], tf.float32) if c == label else
                tf.constant([stats[c].mean], tf.float32) if kinds[c] == NUMBER else
                tf.constant([""]) for c in columns]
    tables = {}
    for c in features:
        if kinds[c] == TEXT:
            keys = list(stats[c].vocabulary)
            init = tf.lookup.KeyValueTensorInitializer(
                tf.constant(keys, tf.string), tf.range(1, len(keys) + 1, dtype=tf.int64))
            tables[c] = (tf.lookup.StaticHashTable(init, default_value=0), len(keys) + 1)
    chunked = parse in ("batch", "chunk")
    decode = checked_decoder(columns, kinds, {label}, defaults, skip=skip and chunked)

    def preprocess(lines, numbers, paths):
        fields = dict(zip(columns, decode(lines, numbers, paths)))
        x = [(tf.stack([fields[c] for c in nums], axis=-1) - mean) / std] if nums else []
        for c, (table, depth) in tables.items():
            x.append(tf.one_hot(table.lookup(fields[c]), depth, dtype=tf.float32))
        return tf.concat(x, axis=-1), fields[label] / label_scale

    def rows_of(path):  # the fast variant's reader: parse chunks, hand out rows
        chunks = decoded_chunks(path, preprocess, num_parallel_calls=n_parse_threads)
        return chunks.unbatch()

    def chunks_of(path):  # the chunk variant's reader: the same parsed chunks, kept whole
        return decoded_chunks(path, preprocess, num_parallel_calls=n_parse_threads)

    shuffle = bool(shuffle_buffer_size)
    dataset = tf.data.Dataset.list_files(files, shuffle=shuffle, seed=seed).repeat(repeat)
    reader = {"batch": rows_of, "chunk": chunks_of}.get(parse, numbered_lines)
    dataset = dataset.interleave(reader, cycle_length=n_readers, block_length=1,
                                 num_parallel_calls=n_read_threads)
    if parse == "chunk":  # no per-row dataset work: see datakit.chunkshuffle
        if shuffle:
            dataset = shuffle_chunks(dataset, shuffle_buffer_size, seed=seed)
        dataset = dataset.rebatch(batch_size)
    if skip and not chunked:
        pattern = _row_pattern(columns, kinds, {label})
        dataset = dataset.filter(lambda line, *_: tf.strings.regex_full_match(line, pattern))
    if shuffle and parse != "chunk":
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    if parse == "vectorized":
        dataset = dataset.batch(batch_size)
    if trace:
        dataset = dataset.apply(timeline.between("rows" if parse == "batch" else "lines"))
    if not chunked:
        parse_fn = timeline.timed("parse", preprocess) if trace else preprocess
        dataset = dataset.map(parse_fn, num_parallel_calls=n_parse_threads)
    if parse in ("line", "batch"):
        dataset = dataset.batch(batch_size)
    if repeat is not None:
        batches = -(-sum(counts.values()) * repeat // batch_size)
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
    return dataset.prefetch(prefetch) if prefetch else dataset
