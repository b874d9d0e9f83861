"""The clip readers' one tail: count, shuffle, label, batch, prefetch.

The direct reader
(:func:`~datakit.readers.video.reading.directory.video_dataset_from_directory`) and the
shards' reader (:func:`~datakit.readers.video.reading.clips.clip_dataset`) end their
pipelines here, so a model trains on either with the same batches: the same
element spec, a known count (``len(ds)`` for ``fit(..., steps_per_epoch=len(ds))``)
and a prefetch at the end, as ``VideoOptions.prefetch`` asks.

>>> import tensorflow as tf
>>> ds = clip_tail(tf.data.Dataset.range(5), count=5, batch_size=2, shuffle_buffer_size=0,
...                seed=0, prefetch=-1)
>>> len(ds), [b.tolist() for b in ds.as_numpy_iterator()]
(3, [[0, 1], [2, 3], [4]])
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from datakit.core.arguments import check_count, check_shuffle_buffer

__all__: list[str] = []


def clip_tail(ds: tf.data.Dataset, *, count: int | None, batch_size: int | None,
              shuffle_buffer_size: int, seed: int | None, prefetch: int,
              drop_remainder: bool = False, label: Callable | None = None) -> tf.data.Dataset:
    """``ds``'s clips counted (``count``, when known), shuffled (a buffer of 0 or 1: none),
    labelled (``label``: a function of the element), batched (``None``: unbatched) and
    prefetched (``prefetch`` batches, ``-1``: ``tf.data.AUTOTUNE``, 0: none)."""
    if count is not None:
        ds = ds.apply(tf.data.experimental.assert_cardinality(count))
    if shuffle_buffer_size > 1:
        ds = ds.shuffle(check_shuffle_buffer(shuffle_buffer_size, count, what="clips"),
                        seed=seed)
    if label is not None:
        ds = ds.map(label)
    if batch_size is not None:
        ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    return ds.prefetch(prefetch) if prefetch else ds


def check_clip_counts(batch_size: int, shuffle_buffer_size: int, n_readers: int) -> None:
    """The batching, shuffling and reading counts of a clip pipeline, checked first."""
    check_count("batch_size", batch_size)
    check_count("shuffle_buffer_size", shuffle_buffer_size, 0)  # 0: no shuffle
    check_count("n_readers", n_readers)
    check_shuffle_buffer(shuffle_buffer_size, what="clips")
