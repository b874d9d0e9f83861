"""The reader's parse modes: one short builder each, and the registry that names them.

A builder turns the dataset of file names (already shuffled and repeated)
into ``(features, label)`` batches, from a :class:`Plan`: what the reader
learned of the files (rows per epoch, the capped shuffle buffer) and the
functions it built for them (``preprocess``, per-file line and chunk
readers). A new mode is one builder and one entry in :data:`PARSE_MODES`.

- ``"line"``: ``interleave(lines) -> shuffle -> map(parse one line) -> batch``.
- ``"batch"``: each reader decodes chunks of its file and hands out rows
  (``unbatch``): the same sequence of rows as ``"line"``, one call per chunk.
- ``"vectorized"``: ``interleave(lines) -> shuffle -> batch -> map(parse a batch)``.
- ``"chunk"``: the ``"batch"`` readers' chunks kept whole and shuffled a chunk
  at a time through a row buffer (:mod:`datakit.readers.csv_files.chunk_shuffle`),
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

from datakit.perf import timeline
from datakit.readers.csv_files.chunk_shuffle import shuffle_chunks

__all__ = ["Plan", "ParseMode", "PARSE_MODES"]


@dataclass(frozen=True)
class Plan:
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
    features: Callable | None = None
    #: The files (sorted), their header, each column's kind, the files holding blank
    #: lines, and the bad lines ``on_bad_line="skip"`` drops.
    files: tuple = ()
    columns: tuple = ()
    kinds: dict | None = None
    blank: frozenset = frozenset()
    bad: tuple = ()
    #: ``parsed -> parsed``: the ``cache=`` option, applied after the parse, before the shuffle.
    cached: Callable = None  # type: ignore[assignment]  # None: as it is


    def cache(self, parsed: tf.data.Dataset) -> tf.data.Dataset:
        """``parsed`` through the ``cache=`` option (as it is without one)."""
        return self.cached(parsed) if self.cached else parsed


@dataclass(frozen=True)
class ParseMode:
    """A parse mode: its builder, what it is, and what the options may ask of it."""

    build: Callable  # (files, plan, options) -> batches
    about: str
    #: Whether bad lines reach ``decode`` in chunks (so ``skip`` drops them there).
    decodes_chunks: bool = False
    #: Whether ``trace=True`` can time its rows.
    traced: bool = True
    #: Whether it parses before the shuffle, so ``cache=`` can keep parsed rows.
    caches: bool = False


def _interleave(files, reader, opts):
    return files.interleave(reader, cycle_length=opts.n_readers, block_length=1,
                            num_parallel_calls=opts.n_read_threads)


def _shuffled(rows, plan, opts):
    return rows.shuffle(plan.buffer, seed=opts.seed) if plan.buffer else rows


def _traced(ds, stage, opts):
    return ds.apply(timeline.between(stage)) if opts.trace else ds


def _parsed(ds, plan, opts):
    fn = timeline.timed("parse", plan.preprocess) if opts.trace else plan.preprocess
    return ds.map(fn, num_parallel_calls=opts.n_parse_threads)


def _build_line(files: tf.data.Dataset, plan: Plan, opts) -> tf.data.Dataset:
    lines = _shuffled(plan.drop_bad(_interleave(files, plan.lines_of, opts)), plan, opts)
    return _parsed(_traced(lines, "lines", opts), plan, opts).batch(opts.batch_size)


def _build_batch(files: tf.data.Dataset, plan: Plan, opts) -> tf.data.Dataset:
    rows = _shuffled(_interleave(files, lambda p: plan.chunks_of(p).unbatch(), opts), plan, opts)
    return _traced(rows, "rows", opts).batch(opts.batch_size)


def _build_vectorized(files: tf.data.Dataset, plan: Plan, opts) -> tf.data.Dataset:
    lines = _shuffled(plan.drop_bad(_interleave(files, plan.lines_of, opts)), plan, opts)
    return _parsed(_traced(lines.batch(opts.batch_size), "lines", opts), plan, opts)


def _build_chunk(files: tf.data.Dataset, plan: Plan, opts) -> tf.data.Dataset:
    chunks = plan.cache(_interleave(files, plan.chunks_of, opts))
    if plan.buffer:
        chunks = shuffle_chunks(chunks, plan.buffer, seed=opts.seed)
    return chunks.rebatch(opts.batch_size)


def _build_arrow(files: tf.data.Dataset, plan: Plan, opts) -> tf.data.Dataset:
    from datakit.readers.csv_files import arrow  # pyarrow is imported for this mode only
    return arrow.build(files, plan, opts)


#: Every parse mode, by its ``parse=`` name.
PARSE_MODES = {
    "line": ParseMode(_build_line, "classic"),
    "batch": ParseMode(_build_batch, "each reader parses chunks", decodes_chunks=True),
    "vectorized": ParseMode(_build_vectorized, "batch, then parse"),
    "chunk": ParseMode(_build_chunk, "parsed chunks shuffled a chunk at a time",
                       decodes_chunks=True, traced=False, caches=True),
    "arrow": ParseMode(_build_arrow, "pyarrow parses blocks, shuffled a block at a time",
                       traced=False, caches=True),
}
