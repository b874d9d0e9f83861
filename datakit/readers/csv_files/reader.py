"""Read CSV shards with ``tf.data``: decode, locate bad lines, and the reader for ``fit()``.

:func:`csv_reader_dataset` reads shards (:mod:`datakit.readers.csv_files.shards`) into
``(features, label)`` batches for ``model.fit()``, with the training
statistics (:mod:`datakit.readers.csv_files.stats`). Two variants, same rows, same order:

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
  (:mod:`datakit.readers.csv_files.chunk_shuffle`), then ``rebatch``: no per-row dataset work at
  all; every row once, mixing as the row buffer's, another order.

``trace=True`` builds the same chain with :mod:`datakit.perf.timeline` stages
(``lines``: from the parse asking for its input to its arrival, so time
blocked by back-pressure is a gap, not a bar; ``parse``), so a
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
>>> from datakit.readers.csv_files.shards import write_shards
>>> from datakit.readers.csv_files.stats import column_stats
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

import tensorflow as tf

from datakit.core.arguments import check_count, interleave_lengths
from datakit.core.errors import DataError
from datakit.perf import timeline
from datakit.readers.csv_files.chunk_shuffle import shuffle_chunks
from datakit.readers.csv_files.schema import NUMBER, TEXT, CsvStats
from datakit.readers.csv_files.shards import check_files, is_blank
from datakit.readers.text_lines import numbered_lines

__all__ = ["NUMBER", "TEXT", "OOV", "LINES_PER_CHUNK", "NUMBER_PATTERN", "BadLine",
           "describe_bad_line", "find_bad_lines", "checked_decoder", "decoded_chunks",
           "feature_names", "class_names", "csv_reader_dataset"]

#: The one-hot slot for unknown (unseen or empty) text values.
OOV = "[UNK]"
#: How many lines the fast reader (and ``column_stats``) decodes in one call, per file.
LINES_PER_CHUNK = 1024
#: A number as ``decode_csv`` reads it (optionally quoted in a row), ``nan`` and ``inf``
#: included. Each alternative starts differently and no two quantifiers compete for the
#: same characters, so matching (and failing) takes time linear in the line's length.
NUMBER_PATTERN = (r" *[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                  r"|(?i:nan|inf(?:inity)?)) *")
_PATTERNS = {NUMBER: f'(?:{NUMBER_PATTERN}|"{NUMBER_PATTERN}")',
             TEXT: r'(?:"(?:[^"]|"")*"|[^",]*)'}
#: How much of a bad line an error message shows.
RAW_SHOWN = 200


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
        raw = self.raw if len(self.raw) <= RAW_SHOWN else (
            f"{self.raw[:RAW_SHOWN]}... ({len(self.raw):,} characters)")
        return (f"bad CSV line: {self.file}, line {self.line}{col}: {self.reason}; "
                f"raw line: `{raw}`")


def _field_pattern(kind: str, required: bool) -> str:
    # A text field already matches the empty string: a `?` on it would give the regex
    # engine two ways to match each empty field, and a bad line exponential backtracking.
    return _PATTERNS[kind] + ("" if required or kind == TEXT else "?")


def _column_pattern(col: str, kinds: dict[str, str], required, classes=None) -> str:
    """One column's pattern; a text label's is the list of its classes, bare or quoted."""
    if classes and col in classes:
        values = classes[col]
        bare = [re.escape(v) for v in values]
        quoted = ['"' + re.escape(v.replace('"', '""')) + '"' for v in values]
        return "(?:" + "|".join(bare + quoted) + ")"
    return _field_pattern(kinds[col], col in required)


def _row_pattern(columns: list[str], kinds: dict[str, str], required: set[str],
                 classes: dict[str, list[str]] | None = None) -> str:
    return ",".join(_column_pattern(c, kinds, required, classes) for c in columns)


def describe_bad_line(raw: str, columns: list[str], kinds: dict[str, str],
                      required: set[str] = frozenset(),
                      classes: dict[str, list[str]] | None = None) -> tuple[str | None, str] | None:
    """Why ``raw`` does not parse: ``(column or None, reason)``, or None if it is fine.

    ``classes`` maps a text label to the values it may take.

    >>> describe_bad_line('1,abc', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    ('b (2 of 2)', 'expected a number, got `abc`')
    >>> describe_bad_line('1', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    (None, 'found 1 field(s), expected 2')
    >>> describe_bad_line('1,cat', ["a", "y"], {"a": NUMBER, "y": TEXT}, {"y"}, {"y": ["dog"]})
    ('y (2 of 2)', "`cat` is not one of the label's classes ['dog']")
    """
    pos, n = 0, len(columns)
    for k, col in enumerate(columns):
        where = f"{col} ({k + 1} of {n})"
        pat = re.compile(_column_pattern(col, kinds, required, classes) + "(?=,|$)")
        m = pat.match(raw, pos)
        if not m:
            field = raw[pos:].split(",", 1)[0]
            if field.startswith('"') and raw.count('"', pos) % 2:
                return where, "unterminated quote"
            if classes and col in classes:
                value = next(_csv.reader([raw[pos:]]), [""])[0] if raw[pos:] else ""
                return where, ("the label is empty" if not value else
                               f"`{value}` is not one of the label's classes {classes[col]}")
            if kinds[col] == TEXT:
                return where, 'a quote inside a field must be doubled ("") and the field quoted'
            if not field:
                return where, "the label is empty" if col in required else "expected a number"
            shown = field if len(field) <= 40 else f"{field[:40]}... ({len(field):,} characters)"
            return where, f"expected a number, got `{shown}`"
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
    if list(stats.header) != list(columns):
        raise ValueError(f"{path}: columns {columns} differ from the statistics' header "
                         f"{stats.header}; compute column_stats on files with the same header.")
    return stats.kinds()


def _label_classes(stats: CsvStats, label: str | None) -> dict[str, list[str]]:
    """``{label: its classes}`` for a text label (its vocabulary in the statistics), else {}."""
    if label is None or label not in stats.stats or stats[label].kind != TEXT:
        return {}
    return {label: list(stats[label].vocabulary)}


def class_names(stats: CsvStats, label: str) -> list[str]:
    """A text label's classes: class index ``i`` is ``class_names(stats, label)[i]``."""
    classes = _label_classes(stats, label)
    if not classes:
        raise ValueError(f"label={label!r} is not a text column of the statistics.")
    return classes[label]


def find_bad_lines(filepaths, stats: CsvStats, *, label: str | None = None) -> list[BadLine]:
    """Every line of ``filepaths`` that the reader would reject (pure Python, before training).

    The test is the reader's own: the same regular expression per row (in
    time linear in each line's length). Blank lines are skipped, as the
    reader skips them.
    """
    files, columns = check_files(filepaths)
    kinds = _kinds_for(stats, columns, files[0])
    classes = _label_classes(stats, label)
    pattern = re.compile(_row_pattern(columns, kinds, {label} if label else set(), classes))
    bad = []
    for path in files:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                line = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
                if number > 1 and not is_blank(line) and not pattern.fullmatch(line):
                    column, reason = describe_bad_line(line, columns, kinds, {label} - {None},
                                                       classes)
                    bad.append(BadLine(path, number, column, reason, line))
    return bad


def _warn_skipped(bad: list[BadLine]) -> None:
    if bad:
        per_file = Counter(b.file for b in bad)
        detail = ", ".join(f"{os.path.basename(f)}: {n}" for f, n in sorted(per_file.items()))
        warnings.warn(f"skipping {len(bad)} bad line(s) ({detail}); first: {bad[0]}",
                      stacklevel=3)


# -- decoding with locations --------------------------------------------------------


def checked_decoder(columns, kinds, required, defaults, *, skip: bool = False, classes=None):
    """``decode(lines, numbers, paths)``: ``decode_csv`` that names the first bad line.

    ``numbers`` and ``paths`` give each line's line number and file, in the
    same shape as ``lines``; they are only read when a line is bad, to raise
    ``InvalidArgumentError`` with a :class:`BadLine` message. ``skip=True``
    (a 1-D chunk only): drop bad lines instead. ``classes``: a text label's values.
    """
    pattern = _row_pattern(columns, kinds, required, classes)

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


def _blank(lines):
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
        n = tf.reduce_sum(tf.cast(tf.logical_not(_blank(found)), tf.int64))
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
        keep = tf.logical_not(_blank(lines))
        numbers = tf.boolean_mask(2 + k * chunk + tf.range(n), keep)
        lines = tf.boolean_mask(lines, keep)
        return decode(lines, numbers, tf.fill(tf.shape(lines), path))

    lines = tf.data.TextLineDataset(path)
    if expected is not None:
        lines = unchanged(path, expected, tf.constant("")).concatenate(lines)
    lines = lines.skip(1).batch(chunk)
    return lines.enumerate().map(decode_chunk, num_parallel_calls=num_parallel_calls)


def _numbered_lines(path, expected=None, *, skip_blank: bool = False):
    """:func:`datakit.readers.text_lines.numbered_lines`, checked first, blank lines dropped if asked."""
    out = numbered_lines(path)
    if expected is not None:
        out = unchanged(path, expected, (tf.constant(""), tf.constant(0, tf.int64), path)
                        ).concatenate(out)
    return out.filter(lambda line, *_: tf.logical_not(_blank(line))) if skip_blank else out


# -- the reader ------------------------------------------------------------------


def feature_names(stats: CsvStats, label: str, output: str = "matrix") -> list[str]:
    """What each feature is: the matrix columns (numbers, then one-hot slots per text column),
    or with ``output="dict"`` the dict's keys (the kept columns, label left out)."""
    if output == "dict":
        return [c for c in stats.columns if c != label]
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


#: The largest shuffle buffer TensorFlow takes (larger ones crash it).
MAX_BUFFER = 2**31 - 1


def _table(mapping: dict):
    init = tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(mapping), tf.string), tf.constant(list(mapping.values()), tf.int64))
    return tf.lookup.StaticHashTable(init, default_value=-1)


def csv_reader_dataset(filepaths, repeat: int | None = 1, n_readers: int = 5,
                       n_read_threads: int | None = None, shuffle_buffer_size: int | None = 10_000,
                       n_parse_threads: int | None = 5, batch_size: int = 32, *,
                       stats: CsvStats, label: str, seed: int | None = None,
                       parse: str = "line", label_scale: float = 1.0,
                       on_bad_line: str = "raise", prefetch: int | None = 1,
                       trace: bool = False, output: str = "matrix"):
    """Read CSV shards into ``(features, label)`` batches for ``model.fit()``.

    The dataset knows its length (``len(ds)``, from the files' line counts),
    which ``fit()`` uses, and checks it: a short read is an error.

    Checkpoints: an iterator over it can be saved mid-epoch with
    ``tf.train.Checkpoint(iterator=it)`` and restored, in another process too,
    to give the rest of the epoch exactly once (``tests/test_checkpoint.py``).
    Its bad-line message is built in Python by a ``tf.numpy_function`` declared
    stateless; a stateful ``tf.py_function`` would make TensorFlow refuse.

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
        stats: from ``column_stats`` on the *training* files; only its ``columns``
            are read (the others are skipped).
        label: the target column, never empty. A number is divided by
            ``label_scale``; a text label becomes a class index, its position in
            the label's vocabulary in ``stats`` (:func:`class_names`), so training
            and serving agree; a value outside it is a bad line.
        seed: seeds the file order and the shuffle.
        parse: ``"line"``, the classic map-per-line chain; ``"batch"``, each
            reader decodes chunks of lines (``n_parse_threads`` chunks at a
            time per reader); ``"vectorized"``, batch lines then parse each
            batch. Same rows in the same order. ``"chunk"``: the ``"batch"``
            readers' chunks shuffled a chunk at a time
            (:func:`datakit.readers.csv_files.chunk_shuffle.shuffle_chunks`): fastest, another order.
        label_scale: labels are divided by it (> 0).
        on_bad_line: ``"raise"``, or ``"skip"`` (drop bad lines, warn with a
            count per file).
        prefetch: the buffer of the final ``prefetch`` (0 or None: none).
        trace: add :mod:`datakit.perf.timeline` stages; elements become
            ``((features, label), trace)``, for ``timeline.trace_timeline``.
        output: ``"matrix"``, features as one float32 matrix (:func:`feature_names`
            says what each column is); ``"dict"``, ``{column: tensor}`` with
            standardized numbers and the raw strings of text columns, for Keras
            preprocessing layers or ``keras.utils.FeatureSpace``.

    Raises:
        TypeError: a count is not an int.
        ValueError: a bad argument value, or a label that is not a kept column.
        FileNotFoundError: no file matches a path or pattern.
        BadLine: (as ``InvalidArgumentError`` while iterating) a line that does
            not parse, named with its file, line number and column.
    """
    counts: dict[str, int] = {}
    blank: set[str] = set()  # files holding a blank line: the one read of check_files tells
    files, columns = check_files(filepaths, counts=counts, blank=blank)
    sizes, file_rows = {f: os.path.getsize(f) for f in files}, dict(counts)
    with_blanks = [f for f in files if f in blank]
    kinds = _kinds_for(stats, columns, files[0])
    if label not in stats.columns:
        raise ValueError(f"label={label!r} is not a column of the statistics; they have "
                         f"{stats.columns}.")
    classes = _label_classes(stats, label)
    if classes and label_scale != 1.0:
        raise ValueError(f"label_scale={label_scale!r}: {label!r} is a text label (a class "
                         "index); leave label_scale at 1.")
    if output not in ("matrix", "dict"):
        raise ValueError(f"output={output!r}: use 'matrix' (one float32 matrix) or 'dict' "
                         "(a tensor per column, for Keras preprocessing layers).")
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
    if shuffle_buffer_size is not None and shuffle_buffer_size > MAX_BUFFER:
        raise ValueError(f"shuffle_buffer_size={shuffle_buffer_size}: TensorFlow cannot hold "
                         f"more than {MAX_BUFFER:,} elements in a shuffle buffer; pass at most "
                         "the number of rows (a larger buffer shuffles no better).")
    empty = [c for c in columns if c != label and kinds[c] == NUMBER and stats[c].mean is None]
    if empty:
        raise DataError(stats.files[0] if stats.files else files[0],
                        "no value at all in the statistics' files, so there is no mean to "
                        "fill it with: drop the column, or pass it in text_columns",
                        column=empty[0])
    skip = on_bad_line == "skip"
    if skip:
        bad = find_bad_lines(files, stats, label=label)
        _warn_skipped(bad)
        counts = {f: n - sum(b.file == f for b in bad) for f, n in counts.items()}

    features = [c for c in stats.columns if c != label]
    nums = [c for c in features if kinds[c] == NUMBER]
    mean = tf.constant([stats[c].mean for c in nums], tf.float32)
    std = tf.constant([stats[c].std or 1.0 for c in nums], tf.float32)
    defaults = [tf.constant([], tf.string if classes else tf.float32) if c == label else
                tf.constant([stats[c].mean], tf.float32) if c in nums else
                tf.constant([""]) for c in columns]

    def lookup(keys, first):  # value -> first, first + 1, ...; anything else -> first - 1
        init = tf.lookup.KeyValueTensorInitializer(
            tf.constant(keys, tf.string), tf.range(first, len(keys) + first, dtype=tf.int64))
        return tf.lookup.StaticHashTable(init, default_value=first - 1)

    tables = {c: (lookup(list(stats[c].vocabulary), 1), len(stats[c].vocabulary) + 1)
              for c in features if kinds[c] == TEXT}
    chunked = parse in ("batch", "chunk")
    label_table = lookup(classes[label], 0) if classes else None
    decode = checked_decoder(columns, kinds, {label}, defaults, skip=skip and chunked,
                             classes=classes)

    def preprocess(lines, numbers, paths):
        fields = dict(zip(columns, decode(lines, numbers, paths)))
        y = label_table.lookup(fields[label]) if classes else fields[label] / label_scale
        scaled = (tf.stack([fields[c] for c in nums], axis=-1) - mean) / std if nums else None
        if output == "dict":
            named = {c: scaled[..., nums.index(c)] if c in nums else fields[c] for c in features}
            return named, y
        x = [scaled] if nums else []
        for c, (table, depth) in tables.items():
            x.append(tf.one_hot(table.lookup(fields[c]), depth, dtype=tf.float32))
        return tf.concat(x, axis=-1), y

    expect_bytes = _table({f: sizes[f] for f in files})
    expect_rows = _table(file_rows)

    def expected(path):
        return expect_bytes.lookup(path), expect_rows.lookup(path)

    def lines_of(path):
        return _numbered_lines(path, expected(path), skip_blank=bool(with_blanks))

    def rows_of(path):  # the fast variant's reader: parse chunks, hand out rows
        chunks = decoded_chunks(path, preprocess, num_parallel_calls=n_parse_threads,
                                expected=expected(path))
        return chunks.unbatch()

    def chunks_of(path):  # the chunk variant's reader: the same parsed chunks, kept whole
        return decoded_chunks(path, preprocess, num_parallel_calls=n_parse_threads,
                              expected=expected(path))

    shuffle = bool(shuffle_buffer_size)
    total = sum(counts.values())
    if shuffle:  # a buffer larger than what it can ever hold only costs memory
        shuffle_buffer_size = min(shuffle_buffer_size, max(1, total * (repeat or 1)))
    # Not list_files: it globs its input again, so `run[1].csv` would read `run1.csv`.
    dataset = tf.data.Dataset.from_tensor_slices(sorted(files))
    if shuffle:
        dataset = dataset.shuffle(len(files), seed=seed)  # what list_files(shuffle=True) does
    dataset = dataset.repeat(repeat)
    reader = {"batch": rows_of, "chunk": chunks_of}.get(parse, lines_of)
    dataset = dataset.interleave(reader, cycle_length=n_readers, block_length=1,
                                 num_parallel_calls=n_read_threads)
    if parse == "chunk":  # no per-row dataset work: see datakit.readers.csv_files.chunk_shuffle
        if shuffle:
            dataset = shuffle_chunks(dataset, shuffle_buffer_size, seed=seed)
        dataset = dataset.rebatch(batch_size)
    if skip and not chunked:
        pattern = _row_pattern(columns, kinds, {label}, classes)
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
        batches = -(-total * repeat // batch_size)
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
    return dataset.prefetch(prefetch) if prefetch else dataset
