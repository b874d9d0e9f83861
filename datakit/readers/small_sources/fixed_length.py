"""Fixed-length binary records: arrays on disk with no framing, cut into records.

Older data sets (CIFAR-10's binary version, MNIST's IDX files) are arrays on disk with
no framing and no checksums: :func:`fixed_length_dataset` cuts them into records after
checking that the file holds a whole number of them, and raises
:class:`datakit.core.errors.DataError` naming the file when it does not.
:func:`write_fixed_length` makes such a file (atomically) to try it on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count
from datakit.core.atomic import write_atomic
from datakit.core.errors import DataError
from datakit.core.file_facts import BUILD_AGAIN, file_facts
from datakit.core.paths import PathArg, one_file
from datakit.readers.tables.unchanged_files import read_checked

__all__ = ["fixed_length_dataset"]



def write_fixed_length(path: PathArg, array: np.ndarray, header: bytes = b"") -> Path:
    """Write ``array`` (one row a record) as raw little-endian bytes after ``header``, atomically.

    >>> import tempfile
    >>> p = write_fixed_length(Path(tempfile.mkdtemp()) / "x.bin",
    ...                        np.arange(6, dtype=np.int16).reshape(3, 2))
    >>> p.stat().st_size
    12
    """
    path, arr = Path(path), np.ascontiguousarray(array)
    if arr.ndim < 1 or arr.shape[0] == 0:
        raise ValueError("array must hold at least one record (its first axis)")
    write_atomic(path, bytes(header) + arr.astype(arr.dtype.newbyteorder("<")).tobytes())
    return path


def _whole_records(path: str, body: int, record_bytes: int) -> int:
    """The records ``body`` bytes (between header and footer) hold, or a ``DataError``."""
    if body <= 0 or body % record_bytes:
        raise DataError(path, f"{body} bytes between header and footer is not a whole "
                              f"number of {record_bytes}-byte records: check record_shape, "
                              "dtype and header_bytes, or the file is truncated")
    return body // record_bytes


def fixed_length_dataset(path: PathArg, record_shape: tuple[int, ...], dtype: Any,
                         header_bytes: int = 0,
                         footer_bytes: int = 0) -> tf.data.Dataset:
    """Read a file of fixed-size binary records as a dataset of arrays of ``record_shape``.

    The file size is checked first: bytes left over after the last whole record mean a wrong
    ``record_shape``/``dtype``/header, or a truncated file. The dataset knows its length
    (``len(ds)``, the records that size holds). Each epoch checks the file as it opens it:
    replaced or changed since this call (its size, times or inode:
    :mod:`datakit.core.file_facts`, one ``stat`` per epoch), it is an error naming it
    (TensorFlow's ``InvalidArgumentError``, while iterating), never an epoch of other
    numbers than the checked ones. That check is a Python call, so the dataset cannot
    run on tf.data service workers.

    >>> import tempfile
    >>> p = write_fixed_length(Path(tempfile.mkdtemp()) / "x.bin",
    ...                        np.arange(6, dtype=np.int16).reshape(3, 2))
    >>> [r.tolist() for r in fixed_length_dataset(p, [2], np.int16).as_numpy_iterator()]
    [[0, 1], [2, 3], [4, 5]]
    """
    try:
        dtype = tf.as_dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype={dtype!r} is not a number type: a record holds numbers of one "
                        "fixed size; pass one such as np.int16, 'uint8' or 'float32'") from None
    if not dtype.is_numpy_compatible or dtype == tf.string or dtype.size < 1:
        raise ValueError(f"dtype={dtype.name}: a record holds numbers of one fixed size; pass a "
                         "number type such as np.int16 or np.float32")
    dims = [check_count("record_shape's dimensions", d) for d in np.atleast_1d(record_shape)]
    record_bytes = int(np.prod(dims, dtype=np.int64)) * dtype.size
    header_bytes = check_count("header_bytes", header_bytes, 0)
    footer_bytes = check_count("footer_bytes", footer_bytes, 0)
    path = one_file(path)
    facts = file_facts([path])  # the size checked is the stamp's: the file each epoch compares
    records = _whole_records(path, facts[path][0] - header_bytes - footer_bytes, record_bytes)
    ds = read_checked(path, facts, lambda p: tf.data.FixedLengthRecordDataset(
        p, record_bytes, header_bytes, footer_bytes), fix=BUILD_AGAIN, unit="records")
    ds = ds.apply(tf.data.experimental.assert_cardinality(records))
    shape = dims
    return ds.map(lambda r: tf.reshape(tf.io.decode_raw(r, dtype, little_endian=True), shape))
