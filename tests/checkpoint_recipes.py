"""Recipes the checkpoint tests resume in a fresh process (``"checkpoint_recipes:<name>"``).

Apart from tests/test_checkpoint.py so that each fresh process imports TensorFlow and
these few lines, not the test module (pytest, the CSV statistics and their pandas).
"""

from __future__ import annotations

import tensorflow as tf

from datakit.readers.checkpoints import checkpoint as ck


def plain_pipeline(n: int = 200, seed: int = 7) -> tf.data.Dataset:
    """A recipe: shuffle, a parallel map, batch, prefetch (every op with state to save)."""
    ds = tf.data.Dataset.range(n).shuffle(50, seed=seed)
    ds = ds.map(lambda x: (x, x * x), num_parallel_calls=2)
    return ds.batch(16).prefetch(2)


def py_function_pipeline(n: int = 30, declared: bool = True) -> tf.data.Dataset:
    """A recipe: a shuffled range through a tf.py_function (stateful, as far as TF knows)."""
    ds = tf.data.Dataset.range(n).shuffle(10, seed=3)
    ds = ds.map(lambda x: tf.py_function(lambda v: v * 2, [x], tf.int64))
    return ck.ignore_external_state(ds) if declared else ds


def records_pipeline(directory: str) -> tf.data.Dataset:
    """A recipe: the records of a folder of TFRecord shards, in order."""
    from datakit.readers.records import tfrecords
    return tfrecords.read_records(directory)


def lines_pipeline(path: str | list[str]) -> tf.data.Dataset:
    """A recipe: the lines of one text file (or of a list of them, one after another)."""
    return tf.data.TextLineDataset(path)
