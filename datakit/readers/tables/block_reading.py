"""The one reading tail of the row readers: files -> blocks of rows -> shuffled batches.

A format gives one function, ``blocks_of(path) -> dataset of blocks of rows``
(CSV chunks, Arrow blocks, Parquet row groups); :func:`blocks_dataset` does
the rest, the same way for each:

``file order (shuffled with the seed) -> repeat -> interleave(blocks_of) ->
[parse] -> [cache] -> shuffle_chunks (a row buffer, capped at the rows it can
ever hold) -> rebatch -> cardinality -> prefetch``

so every row comes once per pass, the dataset knows its length, and the same
seed gives the same order.

A format whose parse is one costly call per block (Arrow) gives instead, from
``blocks_of``, each block's description (a few numbers, no parse) and the
``parse`` that turns a description into its block: the interleave then orders
descriptions only, and one parallel ``map`` keeps ``parse_calls`` parses
running ahead across file boundaries. Parsed inside the interleave (a ``map``
per file), a file's first block is started only when the interleave first asks
the file for a block, so every new file stalls the pipeline for one whole parse
(``benchmarks/profile_reader.py``, variant S). The blocks, and their order, are
the same either way.

>>> import tensorflow as tf
>>> def blocks_of(path):  # every "file" holds two blocks of three rows
...     return tf.data.Dataset.from_tensor_slices([[0, 1, 2], [3, 4, 5]])
>>> opts = TableOptions(batch_size=4, shuffle_buffer_size=None, n_readers=1)
>>> ds = blocks_dataset(["a"], blocks_of, opts, rows=6)
>>> len(ds), [b.numpy().tolist() for b in ds]
(2, [[0, 1, 2, 3], [4, 5]])
>>> def plan_of(path):  # or: two block descriptions per file, parsed after the interleave
...     return tf.data.Dataset.range(2)
>>> parsed = blocks_dataset(["a"], plan_of, opts, 6, parse=lambda k: tf.range(3 * k, 3 * k + 3))
>>> [b.numpy().tolist() for b in parsed]
[[0, 1, 2, 3], [4, 5]]
>>> shuffled = blocks_dataset(["a", "b"], blocks_of, TableOptions(batch_size=4, seed=1), rows=12)
>>> sorted(int(r) for b in shuffled for r in b)
[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from datakit.core.arguments import check_shuffle_buffer
from datakit.readers.tables.chunk_buffer import shuffle_chunks
from datakit.readers.tables.table_options import TableOptions

__all__ = ["shuffle_buffer", "file_order", "counted", "blocks_dataset"]


def shuffle_buffer(options: TableOptions, rows: int) -> int:
    """The shuffle buffer in rows, capped at the rows a run can ever hold; 0: no shuffle."""
    if not options.shuffle_buffer_size:
        return 0
    return check_shuffle_buffer(options.shuffle_buffer_size, rows * (options.repeat or 1),
                                what="rows")


def file_order(files: list[str], options: TableOptions, *,
               repeat: bool = True) -> tf.data.Dataset:
    """The file names, shuffled with the seed when rows are, and repeated (unless ``repeat``
    is false: a cache repeats the rows instead)."""
    # Not list_files: it globs its input again, so `run[1].csv` would read `run1.csv`.
    names = tf.data.Dataset.from_tensor_slices(list(files))
    if options.shuffled:
        names = names.shuffle(len(files), seed=options.seed)  # list_files(shuffle=True)'s
    return names.repeat(options.repeat) if repeat else names


def counted(batches: tf.data.Dataset, options: TableOptions, rows: int) -> tf.data.Dataset:
    """``batches`` with their number asserted (a short read is an error), then prefetched."""
    if options.repeat is not None:
        total = -(-rows * options.repeat // options.batch_size)
        batches = batches.apply(tf.data.experimental.assert_cardinality(total))
    return batches.prefetch(options.prefetch) if options.prefetch else batches


def interleave_files(names: tf.data.Dataset, read: Callable,
                     options: TableOptions) -> tf.data.Dataset:
    """``read`` (``path tensor -> dataset``) over the file ``names``: ``options.n_readers``
    files at a time, one element of each in turn, ``options.n_read_threads`` reading at once.
    The one interleave of every table reader."""
    return names.interleave(read, cycle_length=options.n_readers, block_length=1,
                            num_parallel_calls=options.n_read_threads)


def blocks_dataset(files: list[str], blocks_of: Callable, options: TableOptions, rows: int, *,
                   cache: Callable | None = None, parse: Callable | None = None,
                   parse_calls: int | None = None) -> tf.data.Dataset:
    """Batches of rows from ``blocks_of(path)`` of each file; see the module docstring.

    Args:
        files: the checked files, sorted.
        blocks_of: ``path tensor -> dataset of blocks`` (every component with a
            leading row dimension).
        options: the shared options (:class:`TableOptions`).
        rows: rows in one pass over ``files``.
        cache: ``blocks -> blocks`` applied after the interleave and ``parse`` (a
            ``Dataset.cache`` that repeats itself ``options.repeat`` times), or
            ``None``.
        parse: ``description -> block``, mapped over what ``blocks_of`` gives,
            after the interleave (in order), with ``parse_calls`` calls at
            once; ``None``: ``blocks_of`` gives the blocks themselves.
    """
    names = file_order(files, options, repeat=cache is None)
    blocks = interleave_files(names, blocks_of, options)
    if parse is not None:
        blocks = blocks.map(parse, num_parallel_calls=parse_calls)  # in order (tf.data default)
    if cache is not None:
        blocks = cache(blocks)
    buffer = shuffle_buffer(options, rows)
    if buffer:
        blocks = shuffle_chunks(blocks, buffer, seed=options.seed)
    return counted(blocks.rebatch(options.batch_size), options, rows)
