# About 360 lines on purpose: the reader's one entry point and the functions it builds for
# the parse modes (features, preprocess, per-file readers) share the statistics and options.
"""Read CSV shards with ``tf.data``: the reader for ``fit()``.

:func:`csv_reader_dataset` reads shards (:mod:`datakit.readers.csv_files.shards`) into
``(features, label)`` batches for ``model.fit()``, with the training
statistics (:mod:`datakit.readers.csv_files.stats`). Its parse modes
(:mod:`datakit.readers.csv_files.modes`), same rows in the same order but the last:

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
  (:mod:`datakit.readers.tables.chunk_buffer`), then ``rebatch``: no per-row dataset work at
  all; every row once, mixing as the row buffer's, another order.

``trace=True`` builds the same chain with :mod:`datakit.perf.timeline` stages
(``lines``: from the parse asking for its input to its arrival, so time
blocked by back-pressure is a gap, not a bar; ``parse``), so a
timeline or a benchmark of the traced reader measures this very chain.

Numbers are standardized, ``(x - mean) / std``; a **missing number (an empty
field, a missing-value marker such as ``NA``, ``nan`` or ``inf``, as
``column_stats`` counts them) is filled with the training mean, so it becomes
0.0**; a text column becomes a one-hot block over ``["[UNK]"] + vocabulary``
(unseen or empty: ``[UNK]``). The files are read in the statistics' dialect
(``column_stats(delimiter=..., na_values=..., column_names=...)``): the same
separator, markers and header (or none).

A bad line (wrong number of fields, text in a number column, an unterminated
quote) raises an error naming the file, line number, column and raw line when
the reader parses it (before its row reaches the shuffle buffer);
:func:`~datakit.readers.csv_files.grammar.find_bad_lines` finds them all before
training; ``on_bad_line="skip"`` drops them and warns with a count per file.
No ``ignore_errors()``: it spins forever on a missing file in TF 2.21.

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

import os
from collections.abc import Callable, Iterable
from typing import Any

import tensorflow as tf

from datakit.core.arguments import PREFETCH
from datakit.core.errors import DataError
from datakit.core.paths import FilesArg
from datakit.readers.csv_files.cache import cache_prefix
from datakit.readers.csv_files.dialect import dialect_of
from datakit.readers.csv_files.file_checks import csv_file_set
from datakit.readers.csv_files.grammar import bad_lines_in, row_fields, warn_skipped
from datakit.readers.csv_files.line_decoding import (
    checked_decoder,
    checked_lines,
    decoded_chunks,
    fingerprint,
    row_matcher,
)
from datakit.readers.csv_files.modes import ReaderParts
from datakit.readers.csv_files.options import ReadOptions
from datakit.readers.csv_files.schema import kinds_for
from datakit.readers.tables.block_reading import shuffle_buffer
from datakit.readers.tables.file_set import FileSet
from datakit.readers.tables.graph_functions import as_written
from datakit.readers.tables.table_options import TABLE_FIELDS, TableOptions, table_options
from datakit.readers.tables.table_stats import NUMBER, TEXT, TableStats

__all__ = ["feature_names", "csv_reader_dataset"]

#: The one-hot slot for unknown (unseen or empty) text values.
OOV = "[UNK]"


def feature_names(stats: TableStats, label: str | None, output: str = "matrix") -> list[str]:
    """What each feature is: the matrix columns (numbers, then one-hot slots per text column),
    or with ``output="dict"`` the dict's keys (the kept columns, label left out).

    ``label=None``: the statistics' own label is left out (rows for prediction)."""
    label = stats.label if label is None else label
    if output == "dict":
        return [c for c in stats.columns if c != label]
    names = [c for c in stats.columns if c != label and stats[c].kind == NUMBER]
    for c in stats.columns:
        if c != label and stats[c].kind == TEXT:
            names += [f"{c}={v}" for v in [OOV] + list(stats[c].vocabulary or {})]
    return names


def _lookup(keys: list[str], first: int) -> tf.lookup.StaticHashTable:
    """A table: ``keys[i] -> first + i``; anything else -> ``first - 1``."""
    init = tf.lookup.KeyValueTensorInitializer(
        tf.constant(keys, tf.string), tf.range(first, len(keys) + first, dtype=tf.int64))
    return tf.lookup.StaticHashTable(init, default_value=first - 1)


def _table(mapping: dict) -> tf.lookup.StaticHashTable:
    init = tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(mapping), tf.string), tf.constant(list(mapping.values()), tf.int64))
    return tf.lookup.StaticHashTable(init, default_value=-1)


def build_features(opts: ReadOptions, kinds: dict[str, str]) -> Callable[[dict], Any]:
    """``features(fields) -> (features, label)``: scale, encode and look up decoded columns.

    ``fields`` maps each kept column to its decoded tensor (numbers as float32,
    missing ones already the mean; text as strings), one row or a batch. With
    ``label=None`` (rows for prediction) it returns the features alone.
    """
    stats, label, classes, features = opts.stats, opts.label, opts.classes, opts.features
    nums = [c for c in features if kinds[c] == NUMBER]
    mean = tf.constant([stats[c].mean for c in nums], tf.float32)
    std = tf.constant([stats[c].std or 1.0 for c in nums], tf.float32)
    vocabularies = {c: list(stats[c].vocabulary or {}) for c in features if kinds[c] == TEXT}
    tables = {c: (_lookup(v, 1), len(v) + 1) for c, v in vocabularies.items()}
    label_table = _lookup(classes[label], 0) if classes and label is not None else None

    def to_features(fields: dict) -> Any:
        scaled = None
        if nums:  # an infinite number counts as missing, as in column_stats: the mean, 0.0
            stacked = tf.stack([fields[c] for c in nums], axis=-1)
            stacked = tf.where(tf.math.is_finite(stacked), stacked,
                               tf.broadcast_to(mean, tf.shape(stacked)))
            scaled = (stacked - mean) / std
        if opts.output == "dict":
            x = {c: scaled[..., nums.index(c)] if scaled is not None and c in nums else fields[c]
                 for c in features}
        else:
            x = tf.concat([scaled] * bool(nums) + [
                tf.one_hot(table.lookup(fields[c]), depth, dtype=tf.float32)
                for c, (table, depth) in tables.items()], axis=-1)
        if label is None:  # rows for prediction
            return x
        y = (label_table.lookup(fields[label]) if label_table is not None
             else fields[label] / opts.label_scale)
        return x, y

    return to_features


def build_preprocess(opts: ReadOptions, columns: list[str],
                     kinds: dict[str, str]) -> Callable[..., Any]:
    """``preprocess(lines, numbers, paths) -> (features, label)``: decode, check, scale, encode.

    Works on one line or a batch of lines; ``numbers`` and ``paths`` locate
    a bad line in the error (or, for a mode that decodes chunks, with
    ``on_bad_line="skip"``, bad lines are dropped).
    """
    stats, label, classes, features = opts.stats, opts.label, opts.classes, opts.features
    nums = [c for c in features if kinds[c] == NUMBER]
    defaults = [tf.constant([], tf.string if classes else tf.float32) if c == label else
                tf.constant([stats[c].mean], tf.float32) if c in nums else
                tf.constant([""]) for c in columns]
    decode = checked_decoder(columns, kinds, set() if label is None else {label}, defaults,
                             skip=opts.skip and opts.mode.decodes_chunks, classes=classes,
                             ignored=ignored_columns(columns, opts), dialect=dialect_of(stats))
    to_features = build_features(opts, kinds)

    @as_written
    def preprocess(lines: tf.Tensor, numbers: tf.Tensor, paths: tf.Tensor) -> Any:
        return to_features(dict(zip(columns, decode(lines, numbers, paths), strict=True)))

    return preprocess


def ignored_columns(columns: Iterable[str], opts: ReadOptions) -> set[str]:
    """The columns of a file's header that the reader reads but does not keep: those the
    statistics left out (``columns=``), and with ``label=None`` (rows for prediction) the
    statistics' label when the file still has it (any value, even empty or ``?``)."""
    return {c for c in columns if c not in opts.features and c != opts.label}


def _reader_parts(checked: FileSet, opts: ReadOptions) -> ReaderParts:
    """The reader's functions for these files: preprocess, line and chunk readers, skipping."""
    files, columns, counts, blank = checked.files, checked.shape, checked.rows, checked.blank
    ignored = ignored_columns(columns, opts)
    kinds = {c: TEXT if c in ignored else k
             for c, k in kinds_for(opts.stats, columns, files[0]).items()}
    if opts.label is not None and opts.label not in columns:
        raise ValueError(f"label={opts.label!r} is not in the header of {files[0]}: to read "
                         "rows without the label (for prediction), pass label=None.")
    empty = [c for c in columns if c in opts.features and kinds[c] == NUMBER
             and opts.stats[c].mean is None]
    if empty:
        raise DataError(opts.stats.files[0] if opts.stats.files else files[0],
                        "no value at all in the statistics' files, so there is no mean to "
                        "fill it with: drop the column, or pass it in text_columns",
                        column=empty[0])
    expect_bytes = _table({f: os.path.getsize(f) for f in files})
    expect_rows = _table(dict(counts))
    # Each file's content as one number, compared when a pass opens the file.
    expect_print = _table({f: int(fingerprint(tf.io.read_file(f))) for f in files})
    bad = bad_lines_in(files, columns, opts.stats, label=opts.label,
                       ignore=ignored) if opts.skip else []
    if opts.skip:
        warn_skipped(bad)
        counts = {f: n - sum(b.file == f for b in bad) for f, n in counts.items()}
    preprocess = build_preprocess(opts, columns, kinds)
    dialect = dialect_of(opts.stats)
    matches = row_matcher(row_fields(columns, kinds, set() if opts.label is None else
                                     {opts.label}, opts.classes, dialect=dialect,
                                     ignored=ignored), dialect.separator)

    def expected(path: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        return (expect_bytes.lookup(path), expect_rows.lookup(path),
                expect_print.lookup(path))

    def drop_bad(lines: tf.data.Dataset) -> tf.data.Dataset:
        if not opts.skip:
            return lines
        return lines.filter(as_written(lambda line, *_: matches(line)))

    rows = sum(counts.values())
    return ReaderParts(
        preprocess=preprocess,
        lines_of=as_written(lambda p: checked_lines(p, expected(p), skip_blank=bool(blank),
                                                    header_lines=dialect.header_lines)),
        chunks_of=as_written(lambda p: decoded_chunks(p, preprocess, expected=expected(p),
                                                      num_parallel_calls=opts.n_parse_threads,
                                                      header_lines=dialect.header_lines)),
        drop_bad=drop_bad,
        buffer=shuffle_buffer(opts, rows),
        rows=rows, to_features=build_features(opts, kinds), files=tuple(files),
        columns=tuple(columns), kinds=kinds, blank=frozenset(blank), bad=tuple(bad),
        cached=_cached(files, columns, opts), trace=opts.trace)


def _cached(files: list[str], columns: list[str],
            opts: ReadOptions) -> Callable[[tf.data.Dataset], tf.data.Dataset] | None:
    """The ``cache=`` option: parsed rows cached under a name keyed by the files' contents."""
    if opts.cache is None:
        return None
    prefix = cache_prefix(opts.cache, files, columns=columns, stats=opts.stats,
                          label=opts.label, label_scale=opts.label_scale, output=opts.output,
                          on_bad_line=opts.on_bad_line, parse=opts.parse)
    return lambda parsed: parsed.cache(prefix).repeat(opts.repeat)


def csv_reader_dataset(filepaths: FilesArg, repeat: int | None = 1, n_readers: int = 5,
                       n_read_threads: int | None = None, shuffle_buffer_size: int | None = 10_000,
                       n_parse_threads: int | None = 5, batch_size: int = 32, *,
                       stats: TableStats, label: str | None, seed: int | None = None,
                       parse: str = "line", label_scale: float = 1.0,
                       on_bad_line: str = "raise", prefetch: int | None = PREFETCH,
                       trace: bool = False, output: str = "matrix",
                       cache: str | os.PathLike | None = None,
                       options: TableOptions | None = None,
                       **tf_names: Any) -> tf.data.Dataset:
    """Read CSV shards into ``(features, label)`` batches for ``model.fit()``.

    The dataset knows its length (``len(ds)``, from the files' line counts),
    which ``fit()`` uses, and checks it: a short read is an error. Each pass
    checks a file when it opens it against what the dataset was built from
    (size, rows and a fingerprint of the content; ``parse="arrow"``: size and
    modification time at each block): a file replaced, grown or rewritten since
    is an error naming it, never an epoch that mixes old and new rows.

    For serving, save the statistics beside the model (``stats.save(path)``)
    and load them where it predicts (``TableStats.load(path)``), so new rows are
    preprocessed exactly as the training rows.

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
            are read (the others are skipped). Its dialect (separator,
            missing-value markers, ``column_names`` for files without a header)
            is the files' dialect.
        label: the target column, never empty nor ``nan`` (such a line is a bad
            line). A number is divided by ``label_scale``. Text labels are
            accepted too: a text label becomes a class index, its position in the
            label's classes in ``stats``, sorted (:func:`class_names`), so
            training and serving agree; a value outside them is a bad line.
            ``None``: rows for prediction, in every parse mode (the statistics
            must name their label: ``column_stats(..., label=...)``); the
            elements are then the features alone. A file that still has the
            label column is read too: its values (valid, empty or ``?``) are ignored.
        seed: seeds the file order and the shuffle.
        parse: ``"line"``, the classic map-per-line chain; ``"batch"``, each
            reader decodes chunks of lines (``n_parse_threads`` chunks at a
            time per reader); ``"vectorized"``, batch lines then parse each
            batch. Same rows in the same order. ``"chunk"``: the ``"batch"``
            readers' chunks shuffled a chunk at a time
            (:func:`~datakit.readers.tables.chunk_buffer.shuffle_chunks`), another order.
            ``"arrow"``: pyarrow's C++ CSV reader parses blocks of each file (one
            Python call per block, :mod:`datakit.readers.csv_files.arrow`), shuffled
            through the same row buffer a block at a time: the same rows and
            statistics, bad lines judged and located by the same rule, fastest; it
            runs Python, so it cannot run on tf.data service workers (TensorFlow
            fails there naming the op ``arrow.SERVICE_HINT``).
        label_scale: labels are divided by it (> 0).
        on_bad_line: ``"raise"``, or ``"skip"`` (drop bad lines, warn with a
            count per file).
        prefetch: the buffer of the final ``prefetch`` (``tf.data.AUTOTUNE``; 0 or
            None: none).
        trace: add :mod:`datakit.perf.timeline` stages; elements become
            ``((features, label), trace)``, for ``timeline.trace_timeline``.
        output: ``"matrix"``, features as one float32 matrix (:func:`feature_names`
            says what each column is); ``"dict"``, ``{column: tensor}`` with
            standardized numbers and the raw strings of text columns, for Keras
            preprocessing layers or ``keras.utils.FeatureSpace``.
        cache: a folder (``parse="arrow"`` or ``"chunk"``): the first pass parses and
            writes the parsed rows there (``Dataset.cache``, before the shuffle, so
            every pass is still shuffled), later passes and epochs read them back.
            The cache is named after the files' sha256 and the options that shape
            the rows (:mod:`datakit.readers.csv_files.cache`): a changed file gets a
            new cache, never a stale one; a pass cut short leaves none.
        options: a :class:`~datakit.readers.tables.table_options.TableOptions`, whole,
            instead of (or beside) ``repeat`` ... ``batch_size``, ``seed`` and
            ``prefetch`` as keywords, not both for one field.
        **tf_names: tf.data's names for the knobs (``cycle_length``,
            ``num_parallel_reads``, ``num_parallel_calls``, ``buffer_size``), taken
            quietly; never two names for one knob.

    Raises:
        TypeError: a count is not an int.
        ValueError: a bad argument value, a label that is not a kept column, a text
            label whose classes ``max_vocabulary`` cut, or no feature column.
        DataError: a file the up-front checks refuse (``check_files``), named.
        FileNotFoundError: no file matches a path or pattern.
        BadLine: (as ``InvalidArgumentError`` while iterating) a line that does
            not parse, named with its file, line number and column.
    """
    table, knobs = table_options(csv_reader_dataset, options, dict(
        repeat=repeat, n_readers=n_readers, n_read_threads=n_read_threads,
        shuffle_buffer_size=shuffle_buffer_size, n_parse_threads=n_parse_threads,
        batch_size=batch_size, seed=seed, prefetch=prefetch), tf_names)
    with knobs.as_written():
        opts = ReadOptions(stats, label, **{f: getattr(table, f) for f in TABLE_FIELDS},
                           parse=parse, label_scale=label_scale, on_bad_line=on_bad_line,
                           trace=trace, output=output, cache=cache)
    # One read of each file: rows, blank lines, header, manifest (checked and hashed once).
    checked = csv_file_set(filepaths, dialect=dialect_of(stats))
    parts = _reader_parts(checked, opts)
    # The mode reads the files in the tables' order, counts the batches and prefetches;
    # with a cache, the files are read once and the cached rows repeated (parts.cached).
    return opts.mode.build(checked.files, parts, opts)
