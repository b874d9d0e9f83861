"""A TFRecord file's framing walked in plain Python: where each record starts, no TensorFlow.

Each record of an uncompressed TFRecord file is framed by 16 bytes: an 8-byte
little-endian length, a 4-byte CRC of the length, the data, a 4-byte CRC of the data.
Walking the lengths finds every record's start with one seek per record, and proves
the file ends exactly at a record boundary, which TensorFlow does not check (it reads
a file cut there as a shorter one). The checked reader
(:mod:`datakit.readers.records.tfrecords`) counts its shards this way; the video
converter (:mod:`datakit.readers.video.converter.shard_sets`) records where each clip
record starts without loading TensorFlow, which a conversion never needs otherwise.

>>> import os, struct, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
>>> with open(path, "wb") as f:  # the CRCs left zero: the walk does not read them
...     for r in (b"a", b"bb", b"ccc"):
...         _ = f.write(struct.pack("<Q", len(r)) + bytes(4) + r + bytes(4))
>>> record_offsets(path), count_records(path)
([0, 17, 35], 3)
"""

from __future__ import annotations

import os
import struct

from datakit.core.errors import DataError
from datakit.core.paths import PathArg

__all__ = ["record_offsets"]


class RecordFileError(DataError):
    """A record file is missing, truncated, corrupted or disagrees with its manifest.

    A :class:`datakit.core.errors.DataError`: ``path`` is the file, ``offset`` the
    byte offset where known (else None).

    >>> err = RecordFileError("a.tfrecord", "file ends inside a record", 48)
    >>> isinstance(err, DataError), err.offset, str(err)
    (True, 48, 'a.tfrecord (at byte 48): file ends inside a record')
    """

    def __init__(self, path: PathArg, reason: str, offset: int | None = None) -> None:
        super().__init__(path, reason, offset=offset)


def record_offsets(path: PathArg) -> list[int]:
    """Byte offset where each record of an uncompressed TFRecord file starts, from its headers.

    Each record is framed by 16 bytes: an 8-byte little-endian length, a 4-byte CRC of the
    length, the data, a 4-byte CRC of the data. Walking the lengths costs one seek per record.
    Raises :class:`RecordFileError` if the file does not end exactly at a record boundary
    (TensorFlow itself silently drops a cut-off last record). CRCs are not checked.
    """
    size, pos = os.path.getsize(path), 0
    starts: list[int] = []
    with open(path, "rb") as f:
        while pos < size:
            f.seek(pos)
            head = f.read(8)
            if len(head) < 8 or size - pos < 16:
                raise RecordFileError(path, f"file ends inside the header of record {len(starts)}:"
                                      " it was cut mid-record", offset=pos)
            (length,) = struct.unpack("<Q", head)
            if pos + 16 + length > size:
                raise RecordFileError(path, f"record {len(starts)} says it holds {length} bytes but"
                                      f" the file ends {size - pos - 12} bytes after its header:"
                                      " cut mid-record (or the length is corrupted)", offset=pos)
            starts.append(pos)
            pos += 16 + length
    return starts


def count_records(path: PathArg) -> int:
    """Count the records of an uncompressed TFRecord file (see :func:`record_offsets`)."""
    return len(record_offsets(path))
