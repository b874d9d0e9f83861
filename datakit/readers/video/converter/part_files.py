"""A converted video's part file, written by the converter's worker without TensorFlow.

A part is one TFRecord file holding a video as ``SequenceExample`` s of
:data:`CHUNK_FRAMES` frames each (about two seconds at 30 fps; the last one
shorter): context ``id``, ``label``, ``length`` (the video's frames),
``first`` (the chunk's first frame) and ``source``, and one JPEG per frame in
the feature list ``frames``, the records
:func:`datakit.readers.video.reading.clips.clip_dataset` reads. A clip spans one or
two chunks, so a reader that knows where each chunk starts (stored in the
set's manifest) reads only those, not the whole video. The workers write their
parts themselves, so the parent process only hands out videos: built through
TensorFlow's protocol buffers in the parent, a 60 s video's record cost more
CPU than its JPEG encoding (each frame a ``Feature`` object), and that one
process held back every worker.

The bytes are the protocol buffer wire format of ``tf.train.SequenceExample``
and TFRecord's framing, written out (a test parses them with TensorFlow):
a field is ``tag, length, payload``; a map entry is a message of ``key = 1``
and ``value = 2``; a record is its length, a masked CRC-32C of the length,
the data and a masked CRC-32C of the data.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from datakit.core.atomic import atomic_file
from datakit.readers.video.decoding.decoding import iter_jpegs, output_frames
from datakit.readers.video.decoding.frame_reading import CHANGED_WHILE_CONVERTING, check_unchanged
from datakit.readers.video.decoding.video_info import VideoInfo

__all__: list[str] = []

CHUNK_FRAMES = 64


class PartJob(NamedTuple):
    """One video to convert: its probed facts, its part's path, its id and label."""

    info: VideoInfo
    part: str
    id: int
    label: int

    @property
    def path(self) -> str:  # the video's, for an error naming it
        return self.info.path


def convert_part(job: PartJob, *, fps: float | None = None, quality: int = 90,
                 **fit: Any) -> int:
    """A worker's unit: ``job``'s video decoded, encoded to JPEGs and written as its part, each
    record as soon as its JPEGs are there.

    The video is compared with its listing
    (:func:`~datakit.readers.video.decoding.frame_reading.check_unchanged`) before it is opened
    and after its last frame is read: a video replaced or edited since the folder was
    listed (a longer one would be cut to the listed frame count) fails. Returns the
    frames written; a video that fails is a :class:`DataError` naming it (and leaves no
    part).
    """
    frames = len(output_frames(job.info, fps))
    check_unchanged(job.info, CHANGED_WHILE_CONVERTING)
    jpegs = iter_jpegs(job.info, fps=fps, quality=quality, **fit)
    write_part(Path(job.part), source=job.info.path, i=job.id, label=job.label,
               jpegs=_then_unchanged(jpegs, job.info), frames=frames)
    return frames


def _then_unchanged(jpegs: Iterator[bytes], info: VideoInfo) -> Iterator[bytes]:
    """``jpegs``, then the video compared with its listing once they end (inside
    :func:`write_part`, which asks for one more: a changed video leaves no part)."""
    try:
        yield from jpegs
    finally:
        close = getattr(jpegs, "close", None)
        if close is not None:
            close()
    check_unchanged(info, CHANGED_WHILE_CONVERTING)


def _varint(n: int) -> bytes:
    if 0 <= n < 0x4000:  # one or two bytes: the lengths of a small frame's JPEG and fields
        return bytes((n,)) if n < 0x80 else bytes((n & 0x7F | 0x80, n >> 7))
    n &= (1 << 64) - 1  # a negative int64 is its two's complement, ten bytes
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): a message, bytes or a packed list."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _feature(value: bytes | int) -> bytes:
    """A ``tf.train.Feature``: bytes in ``bytes_list`` (1), an int in ``int64_list`` (3)."""
    if isinstance(value, bytes):
        return _field(1, _field(1, value))
    return _field(3, _field(1, _varint(int(value))))


def _map_entry(key: str, value: bytes) -> bytes:
    return _field(1, key.encode()) + _field(2, value)


def sequence_example_bytes(context: dict, frames: list[bytes]) -> bytes:
    """A serialized ``SequenceExample``: ``context`` (ints or bytes, one each) and ``frames``.

    >>> import tensorflow as tf
    >>> se = tf.train.SequenceExample.FromString(
    ...     sequence_example_bytes({"label": 3, "source": b"a.mp4"}, [b"j0", b"j1"]))
    >>> se.context.feature["label"].int64_list.value[0], len(se.feature_lists
    ...     .feature_list["frames"].feature)
    (3, 2)
    """
    return b"".join(_example_pieces(context, frames))


def _example_pieces(context: dict, frames: list[bytes]) -> list[bytes]:
    """:func:`sequence_example_bytes` in pieces whose concatenation it is: the JPEGs are
    never copied into one record (three copies of 600 KB a record, each in fresh pages)."""
    features = b"".join(_field(1, _map_entry(k, _feature(v))) for k, v in context.items())
    frame_list = _frame_list(frames)
    n = sum(map(len, frame_list))
    # _field(2, _field(1, _map_entry("frames", frame_list))), the frame list left in pieces
    entry = _field(1, b"frames") + _varint(2 << 3 | 2) + _varint(n)
    lists = _TAG1 + _varint(len(entry) + n)
    head = _field(1, features) + _varint(2 << 3 | 2) + _varint(len(lists) + len(entry) + n)
    return [head + lists + entry, *frame_list]


#: The tag of field 1 as a length-delimited field (wire type 2): one byte.
_TAG1 = _varint(1 << 3 | 2)


def _frame_list(frames: list[bytes]) -> list[bytes]:
    """``_field(1, _feature(f))`` of each frame, in pieces: a header and the JPEG itself, not
    copied (a ``Feature`` holding a ``BytesList`` holding the JPEG: three fields deep, only
    the three headers differ)."""
    pieces: list[bytes] = []
    for f in frames:
        n = len(f)
        inner = _TAG1 + _varint(n)  # BytesList.value
        middle = _TAG1 + _varint(len(inner) + n)  # Feature.bytes_list
        pieces += (_TAG1 + _varint(len(middle) + len(inner) + n) + middle + inner, f)
    return pieces


def _masked_crc(data: bytes) -> int:
    import google_crc32c

    return _masked(google_crc32c.value(data))


def _masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _write_record(f: BinaryIO, pieces: list[bytes]) -> None:
    """The record whose data is ``pieces`` joined, framed as :func:`tfrecord_bytes` frames it,
    written to ``f`` piece by piece (its CRC extended over them)."""
    import google_crc32c

    crc = 0
    for piece in pieces:
        crc = google_crc32c.extend(crc, piece)
    length = struct.pack("<Q", sum(map(len, pieces)))
    f.write(length + struct.pack("<I", _masked_crc(length)))
    f.writelines(pieces)
    f.write(struct.pack("<I", _masked(crc)))


def tfrecord_bytes(record: bytes) -> bytes:
    """``record`` framed as one TFRecord (the bytes ``tf.io.TFRecordWriter`` writes)."""
    length = struct.pack("<Q", len(record))
    return b"".join((length, struct.pack("<I", _masked_crc(length)), record,
                     struct.pack("<I", _masked_crc(record))))


#: The part's write buffer: many records' headers and JPEGs to one system call.
_WRITE_BUFFER = 1 << 20


def write_part(path: Path, *, source: str, i: int, label: int, jpegs: Iterable[bytes],
               frames: int | None = None, chunk_frames: int = CHUNK_FRAMES) -> None:
    """Video ``i``'s part, atomically: a reader or a resume sees the whole file or none.

    One record per ``chunk_frames`` frames, each with the video's context and its
    ``first``. ``jpegs``: the video's JPEGs in order, a list, or an iterator with
    ``frames`` saying how many it yields (every record holds the video's length):
    each record is written once its JPEGs have come, so memory holds one record's
    JPEGs, never the video's; an iterator that yields another count is a
    ``ValueError`` and leaves no part. Not ``fsync`` ed: a part lives only until its
    set is committed (then its shard, synced, holds it), and waiting on the disk for
    each video left the worker's core idle (about two thirds of writing the part);
    after a power cut, a resume checks each part it finds whole and converts a
    damaged one again (:mod:`datakit.readers.video.converter.conversion`). Written through a
    buffer of :data:`_WRITE_BUFFER` bytes: with the default 8 KB, each JPEG of a small
    frame (about 9 KB) was a system call of its own, and a part took 1.7x the CPU.
    """
    if frames is None:
        jpegs = list(jpegs)
        frames = len(jpegs)
    n, coming = frames, iter(jpegs)
    try:
        with atomic_file(path, durable=False) as tmp, \
                open(tmp, "wb", buffering=_WRITE_BUFFER) as f:
            for first in range(0, max(n, 1), chunk_frames):
                want = min(chunk_frames, n - first)
                chunk = list(islice(coming, want))
                if len(chunk) != want:
                    raise ValueError(f"{first + len(chunk)} JPEGs for the {n} frames of {source}")
                _write_record(f, _example_pieces(_context(source, i, label, n, first), chunk))
                del chunk  # (not held while the next record's JPEGs come)
            if next(coming, None) is not None:  # (and an iterator's own checks at its end run)
                raise ValueError(f"more JPEGs than the {n} frames of {source}")
    finally:  # a generator stopped early (a full disk, a miscount) closes its video now
        close = getattr(coming, "close", None)
        if close is not None:
            close()


def chunk_records(*, source: str, i: int, label: int, jpegs: list[bytes],
                  chunk_frames: int = CHUNK_FRAMES) -> list[bytes]:
    """Video ``i`` as the framed TFRecords of its chunks: one per ``chunk_frames`` frames, each
    with the video's context and its ``first`` frame (the layout ``clip_dataset`` reads)."""
    return [_chunk_record(source, i, label, jpegs, first, chunk_frames)
            for first in range(0, max(len(jpegs), 1), chunk_frames)]


def _chunk_record(source: str, i: int, label: int, jpegs: list[bytes], first: int,
                  chunk_frames: int) -> bytes:
    """The framed record of video ``i``'s chunk that starts at frame ``first``."""
    return tfrecord_bytes(sequence_example_bytes(_context(source, i, label, len(jpegs), first),
                                                 jpegs[first:first + chunk_frames]))


def _context(source: str, i: int, label: int, frames: int, first: int) -> dict:
    return {"id": i, "label": label, "length": frames, "first": first,
            "source": source.encode()}

