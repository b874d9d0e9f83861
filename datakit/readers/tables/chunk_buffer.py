"""A shuffle buffer of rows that works a chunk at a time: no per-row ``tf.data`` work.

``dataset.unbatch().shuffle(buffer_size).batch(n)`` pays for every row: the
hand-off of each row between ops, a random draw per row. Measured here, that
per-row work, not reading or parsing, is what kept the kit's fast CSV reader
behind pandas-in-memory at batch 1024 (benchmarks/NOTES.md). :func:`shuffle_chunks`
keeps the same ``buffer_size`` rows, but as one tensor per component, and
moves chunks: each incoming chunk of ``c`` rows joins the buffer, and a
random ``c`` of the ``buffer_size + c`` rows leave, in random order (so each
row in the buffer leaves with the same chance, as in the row buffer). At the
end the buffer leaves, shuffled. Every row leaves exactly once; the chunks that
leave have the incoming chunks' sizes (``rebatch`` makes batches of them).

The one difference from the row buffer: a row that arrives in a chunk cannot
leave before its whole chunk has joined. Measured with :mod:`datakit.see.mixing`
(``tests/test_chunk_shuffle.py``), the displacement of rows is the row buffer's
within a few percent.

>>> import tensorflow as tf
>>> chunks = tf.data.Dataset.range(20).batch(4)           # 5 chunks of 4 rows
>>> out = shuffle_chunks(chunks, 6, seed=1)
>>> rows = [int(r) for c in out for r in c]
>>> sorted(rows) == list(range(20)), rows != list(range(20))
(True, True)
>>> shuffle_chunks(chunks, 0)
Traceback (most recent call last):
...
ValueError: buffer_size=0 is invalid: pass an int >= 1.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from datakit.core.arguments import check_count
from datakit.readers.tables.graph_functions import as_written

__all__ = ["shuffle_chunks"]


def _empty(spec: tf.TensorSpec) -> tf.Tensor:
    if spec.shape.rank is None or spec.shape.rank < 1:
        raise ValueError(f"shuffle_chunks() needs chunks (a leading row dimension), got {spec}")
    return tf.zeros([0] + [d or 0 for d in spec.shape[1:]], spec.dtype)


def shuffle_chunks(chunks: tf.data.Dataset, buffer_size: int, *,
                   seed: int | None = None) -> tf.data.Dataset:
    """Shuffle the rows of ``chunks`` through a ``buffer_size``-row buffer, a chunk at a time.

    Args:
        chunks: a dataset whose elements are chunks of rows: every component
            has the same leading (row) dimension.
        buffer_size: rows the buffer holds, as in ``Dataset.shuffle``.
        seed: same seed, same order; each new iteration draws new orders (like
            ``reshuffle_each_iteration=True``).

    Raises:
        TypeError: ``buffer_size`` is not an int.
        ValueError: ``buffer_size < 1``, or elements without a leading dimension.
    """
    check_count("buffer_size", buffer_size)  # rows
    spec = chunks.element_spec
    empty = tf.nest.map_structure(_empty, spec)
    randoms = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    stream = tf.data.Dataset.zip(chunks, randoms, tf.data.Dataset.from_tensors(False).repeat())
    stream = stream.concatenate(tf.data.Dataset.from_tensors(
        (empty, tf.constant(0, tf.int64), tf.constant(True))))

    @as_written
    def step(buffer: Any, element: tuple) -> tuple:
        chunk, r, last = element
        rows = tf.nest.map_structure(lambda b, c: tf.concat([b, c], 0), buffer, chunk)
        n = tf.shape(tf.nest.flatten(rows)[0], out_type=tf.int64)[0]
        order = tf.random.experimental.stateless_shuffle(tf.range(n), seed=tf.stack([r, n]))
        leave = tf.where(last, n, tf.maximum(n - buffer_size, 0))
        kept = tf.nest.map_structure(lambda t: tf.gather(t, order[leave:]), rows)
        out = tf.nest.map_structure(lambda t: tf.gather(t, order[:leave]), rows)
        return kept, out

    shuffled = stream.scan(empty, step)
    return shuffled.filter(as_written(lambda *c: tf.shape(tf.nest.flatten(c)[0])[0] > 0))

