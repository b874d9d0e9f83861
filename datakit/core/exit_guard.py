"""Free, before Python shuts down, a ``tf.data`` iterator that an error's traceback still holds.

A pipeline that calls Python through ``tf.numpy_function`` (decoding video with
PyAV, reading a Parquet row group or a CSV block with pyarrow, naming a bad CSV
line) runs those calls on tf.data's own threads. After an error, the traceback
(``sys.last_traceback`` when uncaught, or an exception kept in a variable)
holds the frames of the iterator's ``__next__``, and so the iterator. Freed
only while the interpreter finalizes, the iterator waits for its threads,
which wait for a GIL that finalization no longer hands out: the process never
exits. :func:`release_iterators_at_exit` registers an ``atexit`` hook that drops
every exception's traceback and collects garbage while Python still runs, so
the iterator stops its threads in time. An iterator still held at exit by a
module's variable (``it = iter(ds)`` at the top of a script) hangs the same way:
the hook frees each live ``tf.data`` iterator's resource too, while Python
still runs.

Every reader whose pipeline calls Python registers the hook when it is built
(the two video readers, :func:`~datakit.readers.parquet_files.parquet.parquet_dataset`,
and :func:`~datakit.readers.csv_files.reader.csv_reader_dataset`'s ``"arrow"`` mode
and bad-line messages, and the readers that check each file's stamp before TensorFlow opens
it: :func:`~datakit.readers.tables.unchanged_files.checked_path`); the hook runs only at
exit, and changes nothing before.
"""

from __future__ import annotations

import atexit
import gc
import sys

__all__: list[str] = []

_REGISTERED: list = []


def _release() -> None:
    for name in ("last_exc", "last_value", "last_traceback", "last_type"):
        if hasattr(sys, name):
            setattr(sys, name, None)
    for obj in gc.get_objects():
        if isinstance(obj, BaseException) and obj.__traceback__ is not None:
            obj.__traceback__ = None
    gc.collect()
    ops = sys.modules.get("tensorflow.python.data.ops.iterator_ops")
    owned = getattr(ops, "OwnedIterator", None)
    if owned is None:
        return
    for obj in gc.get_objects():
        if isinstance(obj, owned) and getattr(obj, "_iterator_resource", None) is not None:
            obj._iterator_resource = None  # the last reference to it: its threads stop now
    gc.collect()


def release_iterators_at_exit() -> None:
    """Register the hook once per process (every reader that calls Python calls this)."""
    if not _REGISTERED:
        atexit.register(_release)
        _REGISTERED.append(_release)
