"""The kit's one "has this file changed?" rule where TensorFlow's own reader opens the file.

A reader that opens its files in Python checks each on the open file itself
(:func:`datakit.core.file_facts.opened`). ``TFRecordDataset``, ``SqlDataset`` and
``TextLineDataset`` open theirs in C++ and give Python no handle to check, so the
file is checked just before: :func:`checked_path` passes the path on to the reader
through one Python call that compares the file's stamp now (size, modification
and change times, inode) with the one taken when the dataset was built. The call
runs where the pipeline opens the file, so once per file per epoch (never per
record), and a file replaced or changed since the build is a
:class:`~datakit.core.errors.DataError` naming it (TensorFlow's
``InvalidArgumentError`` while iterating, with the same words), where TensorFlow
would give a ``DataLossError`` that names no file, or quietly read the new bytes.

What this costs: one ``stat`` per file per epoch, and a Python call in the
dataset's graph, so the pipeline cannot run on tf.data service workers (they run
the graph without Python). What it cannot see: a file replaced in the instant
between the check and TensorFlow's open, or rewritten in place while it is read.

>>> import os, tempfile
>>> from datakit.core.file_facts import file_facts
>>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
>>> _ = open(path, "w").write("x\\ny\\n")
>>> ds = read_checked(path, file_facts([path]), tf.data.TextLineDataset)
>>> [s.decode() for s in ds.as_numpy_iterator()]
['x', 'y']
>>> _ = open(path, "a").write("z\\n")
>>> list(ds)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
tensorflow.python.framework.errors_impl.InvalidArgumentError: ...a.txt: the file changed since...
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from datakit.core.exit_guard import release_iterators_at_exit
from datakit.core.file_facts import REPLACE_WHOLE, Stamp, change, changed_error

__all__: list[str] = []  # helpers of the readers: none is a user's call


def checked_path(path: str | tf.Tensor, facts: dict[str, Stamp], *, fix: str = REPLACE_WHOLE,
                 unit: str = "rows") -> tf.Tensor:
    """``path`` (a string tensor, or a str) again, once its file is found unchanged.

    Use it where the pipeline opens the file (inside ``interleave``'s or
    ``flat_map``'s function: ``lambda f: tf.data.TFRecordDataset(checked_path(f,
    facts))``), so the check runs each time the file is opened. ``facts``: the
    files' stamps when the dataset was built (:func:`~datakit.core.file_facts.file_facts`);
    a path not in them is an error (a reader that checks must know every file).
    ``fix`` and ``unit``: as in :func:`~datakit.core.file_facts.changed_error`.
    """
    def check(p: bytes) -> bytes:
        name = p.decode()
        said = change(name, facts[name])
        if said is not None:
            raise changed_error(name, said, fix=fix, unit=unit)
        return p

    release_iterators_at_exit()  # a Python call in the pipeline: no hang at exit after an error
    out = tf.numpy_function(check, [path], tf.string, stateful=False, name="file_unchanged")
    return tf.ensure_shape(out, [])


def read_checked(path: str, facts: dict[str, Stamp], read: Callable[[tf.Tensor], tf.data.Dataset],
                 *, fix: str = REPLACE_WHOLE, unit: str = "rows") -> tf.data.Dataset:
    """``read(path)``, with ``path`` checked (:func:`checked_path`) as each epoch opens it:
    for a reader of one file, which no ``interleave`` opens."""
    return tf.data.Dataset.from_tensors(path).flat_map(
        lambda p: read(checked_path(p, facts, fix=fix, unit=unit)))
