"""The kit's one family of errors for corrupt or inconsistent data.

Wrong argument types raise ``TypeError``, bad argument values ``ValueError``
and missing files ``FileNotFoundError``, as in the standard library. Data
that is there but wrong (a bad CSV line, a truncated record file, a manifest
that disagrees with its folder) raises a :class:`DataError`, which names the
file and, where known, the line and column (text formats) or the byte offset
(binary formats):

>>> err = DataError("data/a.csv", "expected a number, got `abc`", line=7, column="price")
>>> str(err)
'data/a.csv, line 7, column price: expected a number, got `abc`'
>>> (err.path, err.line, err.column, err.offset)
('data/a.csv', 7, 'price', None)
>>> str(DataError("shard-00001.tfrecord", "file ends inside a record", offset=4096))
'shard-00001.tfrecord (at byte 4096): file ends inside a record'

``DataError`` subclasses ``ValueError``, so code that caught ``ValueError``
around a reader keeps working.

This module imports nothing from the kit (it sits at the bottom of the
import graph), and nothing from TensorFlow.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

__all__ = ["DataError"]


class DataError(ValueError):
    """Data that is present but corrupt or inconsistent, located as precisely as known.

    Args:
        path: the file (or folder) at fault.
        reason: what is wrong, and where possible how to fix it.
        line: 1-based line number, for text formats.
        column: the column's name (or ``"name (k of n)"``), for tabular formats.
        offset: byte offset, for binary formats.
    """

    def __init__(self, path: str | PathLike, reason: str, *, line: int | None = None,
                 column: str | None = None, offset: int | None = None):
        self.path, self.reason = str(path), reason
        self.line, self.column, self.offset = line, column, offset
        where = self.path
        if offset is not None:
            where += f" (at byte {offset})"
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column}"
        super().__init__(f"{where}: {reason}")

    # picklable across processes (sweep tests run cases in subprocesses)
    def __reduce__(self) -> tuple[Any, tuple]:
        return (_rebuild, (type(self), self.path, self.reason, self.line, self.column,
                           self.offset))


def _rebuild(cls: type[DataError], path: Any, reason: str, line: int | None,
             column: str | None, offset: int | None) -> DataError:
    err = cls.__new__(cls)
    DataError.__init__(err, path, reason, line=line, column=column, offset=offset)
    return err
