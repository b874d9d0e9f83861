"""The reader's parse modes: one short builder each, and the registry that names them.

A builder turns the checked files into ``(features, label)`` batches (counted
and prefetched), from :class:`ReaderParts`: what the reader learned of the
files (rows per epoch, the capped shuffle buffer) and the functions it built
for them (``preprocess``, per-file line and chunk readers). The modes that
shuffle blocks (``"chunk"``, ``"arrow"``) hand their "one file -> blocks of
rows" function to the tables' one reading tail
(:func:`~datakit.readers.tables.block_reading.blocks_dataset`), as Parquet does;
the row modes use its file order and count. A new mode is one builder and one
entry in :data:`PARSE_MODES`.

- ``"line"``: ``interleave(lines) -> shuffle -> map(parse one line) -> batch``.
- ``"batch"``: each reader decodes chunks of its file and hands out rows
  (``unbatch``): the same sequence of rows as ``"line"``, one call per chunk.
- ``"vectorized"``: ``interleave(lines) -> shuffle -> batch -> map(parse a batch)``.
- ``"chunk"``: the ``"batch"`` readers' chunks kept whole and shuffled a chunk
  at a time through a row buffer (:mod:`datakit.readers.tables.chunk_buffer`),
  then ``rebatch``: no per-row dataset work, another order.
- ``"arrow"``: pyarrow's C++ reader parses blocks of each file (one Python call
  per block, :mod:`datakit.readers.csv_files.arrow`), shuffled as ``"chunk"``'s
  chunks are, a block at a time: the same rows, another order; not on tf.data
  service workers (they cannot run Python).

>>> sorted(PARSE_MODES)
['arrow', 'batch', 'chunk', 'line', 'vectorized']
>>> PARSE_MODES["chunk"].traced, PARSE_MODES["chunk"].decodes_chunks
(False, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import tensorflow as tf

from datakit.readers.tables.block_reading import (
    blocks_dataset,
    counted,
    file_order,
    interleave_files,
)
from datakit.readers.tables.graph_functions import as_written
from datakit.readers.tables.table_options import TableOptions

__all__ = ["PARSE_MODES"]


@dataclass(frozen=True)
class ReaderParts:
    """What the builders read: the reader's functions for these files, and their row count."""

    #: ``(lines, numbers, paths) -> (features, label)``, on one line or a batch of lines.
    preprocess: Callable
    #: ``path -> (line, number, path)`` elements, checked against the file's size first.
    lines_of: Callable
    #: ``path -> preprocessed chunks`` of ``LINES_PER_CHUNK`` lines.
    chunks_of: Callable
    #: ``lines -> lines`` without bad ones (``on_bad_line="skip"``), else as they are.
    drop_bad: Callable
    #: The shuffle buffer, capped at the rows it can ever hold; 0: no shuffle.
    buffer: int
    #: Rows in one pass over the files (bad lines skipped left out).
    rows: int
    #: ``{column: tensor} -> (features, label)``: ``preprocess`` after its decode, for a
    #: mode that decodes its own way (``"arrow"``).
    to_features: Callable | None = None
    #: The files (sorted), their header, each column's kind, the files holding blank
    #: lines, and the bad lines ``on_bad_line="skip"`` drops.
    files: tuple = ()
    columns: tuple = ()
    kinds: dict | None = None
    blank: frozenset = frozenset()
    bad: tuple = ()
    #: ``parsed -> parsed``: the ``cache=`` option, applied after the parse, before the
    #: shuffle (it repeats the cached rows itself); ``None``: no cache.
    cached: Callable | None = None
    #: ``trace=True``: time the rows with :mod:`datakit.perf.timeline` stages.
    trace: bool = False


@dataclass(frozen=True)
class ParseMode:
    """A parse mode: its builder, what it is, and what the options may ask of it."""

    build: Callable  # (files, parts, options) -> batches, counted and prefetched
    about: str
    #: Whether bad lines reach ``decode`` in chunks (so ``skip`` drops them there).
    decodes_chunks: bool = False
    #: Whether ``trace=True`` can time its rows.
    traced: bool = True
    #: Whether it parses before the shuffle, so ``cache=`` can keep parsed rows.
    caches: bool = False


def _shuffled(rows: tf.data.Dataset, parts: ReaderParts,
              opts: TableOptions) -> tf.data.Dataset:
    return rows.shuffle(parts.buffer, seed=opts.seed) if parts.buffer else rows


def _traced(ds: tf.data.Dataset, stage: str, parts: ReaderParts) -> tf.data.Dataset:
    if not parts.trace:
        return ds
    from datakit.perf import timeline  # and Matplotlib with it: only for trace=True

    return ds.apply(timeline.between(stage))


def _parsed(ds: tf.data.Dataset, parts: ReaderParts, opts: TableOptions) -> tf.data.Dataset:
    fn = parts.preprocess
    if parts.trace:
        from datakit.perf import timeline

        fn = timeline.timed("parse", fn)
    return ds.map(fn, num_parallel_calls=opts.n_parse_threads)


def _row_mode(build: Callable) -> Callable:
    """A row mode's builder: ``build(file names, parts, opts)`` between the tables' file order
    and count (the same as :func:`blocks_dataset`'s)."""
    def builder(files: list[str], parts: ReaderParts, opts: TableOptions) -> tf.data.Dataset:
        return counted(build(file_order(files, opts), parts, opts), opts, parts.rows)
    return builder


def _build_line(names: tf.data.Dataset, parts: ReaderParts, opts: TableOptions) -> tf.data.Dataset:
    lines = _shuffled(parts.drop_bad(interleave_files(names, parts.lines_of, opts)), parts, opts)
    return _parsed(_traced(lines, "lines", parts), parts, opts).batch(opts.batch_size)


def _build_batch(names: tf.data.Dataset, parts: ReaderParts, opts: TableOptions) -> tf.data.Dataset:
    read = as_written(lambda p: parts.chunks_of(p).unbatch())
    rows = _shuffled(interleave_files(names, read, opts), parts, opts)
    return _traced(rows, "rows", parts).batch(opts.batch_size)


def _build_vectorized(names: tf.data.Dataset, parts: ReaderParts,
                      opts: TableOptions) -> tf.data.Dataset:
    lines = _shuffled(parts.drop_bad(interleave_files(names, parts.lines_of, opts)), parts, opts)
    return _parsed(_traced(lines.batch(opts.batch_size), "lines", parts), parts, opts)


def _build_chunk(files: list[str], parts: ReaderParts, opts: TableOptions) -> tf.data.Dataset:
    return blocks_dataset(files, parts.chunks_of, opts, parts.rows, cache=parts.cached)


def _build_arrow(files: list[str], parts: ReaderParts, opts: TableOptions) -> tf.data.Dataset:
    from datakit.readers.csv_files import arrow  # pyarrow is imported for this mode only
    return arrow.arrow_batches(files, parts, opts)


#: Every parse mode, by its ``parse=`` name.
PARSE_MODES = {
    "line": ParseMode(_row_mode(_build_line), "classic"),
    "batch": ParseMode(_row_mode(_build_batch), "each reader parses chunks",
                       decodes_chunks=True),
    "vectorized": ParseMode(_row_mode(_build_vectorized), "batch, then parse"),
    "chunk": ParseMode(_build_chunk, "parsed chunks shuffled a chunk at a time",
                       decodes_chunks=True, traced=False, caches=True),
    "arrow": ParseMode(_build_arrow, "pyarrow parses blocks, shuffled a block at a time",
                       traced=False, caches=True),
}
