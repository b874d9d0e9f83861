"""Text lines numbered as a text editor numbers them, as a ``tf.data`` pipeline.

>>> import datakit, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "a.csv")
>>> _ = open(path, "w").write("x,y\\n1,2\\n3,4\\n")
>>> [(line, int(n)) for line, n, _ in numbered_lines(path).as_numpy_iterator()]
[(b'1,2', 2), (b'3,4', 3)]
>>> [int(n) for _, n, _ in numbered_lines(path, skip_header=False).as_numpy_iterator()]
[1, 2, 3]

The CSV reader (:mod:`datakit.readers.csv_files.reader`) and the interleave tracer
(:mod:`datakit.see.interleave`) both read lines this way, so a line number in an
error message and in a picture mean the same line.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_flag
from datakit.core.errors import DataError
from datakit.core.file_facts import BUILD_AGAIN, file_facts
from datakit.core.paths import PathArg, one_file
from datakit.readers.tables.graph_functions import as_written
from datakit.readers.tables.unchanged_files import read_checked

__all__ = ["numbered_lines"]

#: A UTF-8 byte order mark at the start of a line (a file's first), as a regular expression.
BOM_PATTERN = "^\ufeff"


def without_bom(lines: tf.Tensor) -> tf.Tensor:
    """``lines`` (a string tensor) with a UTF-8 byte order mark dropped from the start of
    each, as editors and pandas drop it: it is not part of the text."""
    return tf.strings.regex_replace(lines, BOM_PATTERN, "", replace_global=False)


def _refuse_binary(path: str) -> None:
    """A ``DataError`` for a file whose first 4 KiB are not text: gzip, or NUL bytes."""
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith(b"\x1f\x8b"):
        raise DataError(path, "is gzip-compressed (starts with 1f 8b), not text lines: "
                        "decompress it first (gunzip)")
    if b"\x00" in head:
        raise DataError(path, "holds NUL bytes, so it is not UTF-8 text (a binary file, or "
                        "UTF-16): save it as UTF-8 text", offset=head.index(b"\x00"))


def numbered_lines(path: PathArg, *, skip_header: bool = True) -> tf.data.Dataset:
    """``(line, line number, path)`` for each line of a text file (numbers from 1).

    With ``skip_header`` (the default) line 1 is dropped and the first
    element is line 2. Without it, a byte order mark at the start of line 1 is
    dropped (one call, on line 1 only). A path given as text or a ``Path`` is checked
    first (:func:`datakit.core.paths.one_file`: a missing file or a folder named), and
    so is its start: a gzip file, or NUL bytes (a binary or UTF-16 file), is a
    :class:`~datakit.core.errors.DataError` naming it, never lines of bytes. The
    dataset's length is unknown (``len(ds)`` raises ``TypeError``), as
    ``TextLineDataset``'s: the lines are counted only by reading them.

    Such a path is also checked as each epoch opens the file: replaced or changed since
    this call (its size, times or inode: :mod:`datakit.core.file_facts`, one ``stat``
    per epoch), it is an error naming it (TensorFlow's ``InvalidArgumentError``, while
    iterating), never an epoch of other lines than the checked ones. That check is a
    Python call, so such a dataset cannot run on tf.data service workers. A path given
    as a tensor (inside an ``interleave``) is neither checked nor stamped: the reader
    that lists the files checks them (the CSV reader does).
    """
    check_flag("skip_header", skip_header)
    if isinstance(path, (str, os.PathLike)):
        path = one_file(path)
        facts = file_facts([path])  # before the check reads it: the file it vouches for
        _refuse_binary(path)
        lines = read_checked(path, facts, tf.data.TextLineDataset,
                             fix=BUILD_AGAIN, unit="lines")
    else:  # a tensor (inside an interleave): its reader checks the file
        lines = tf.data.TextLineDataset(path)
    numbers = tf.data.Dataset.range(1, np.iinfo(np.int64).max)
    paths = tf.data.Dataset.from_tensors(path).repeat()
    ds = tf.data.Dataset.zip((lines, numbers, paths))
    if skip_header:
        return ds.skip(1)
    first = ds.take(1).map(as_written(lambda line, n, p: (without_bom(line), n, p)))
    return first.concatenate(ds.skip(1))
