"""Write serialized records into TFRecord shards atomically, with a ``manifest.json``.

:class:`ShardWriter` stages every shard as a hidden temporary file and commits
them as one set (:func:`datakit.core.manifest.write_set`): a reader sees the
previous shards or these, never a mix, and the manifest records each shard's
records, bytes and sha256. A full disk is named and its temporary files removed.
Reading them back, checked, is :mod:`datakit.readers.records.tfrecords`.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import tensorflow as tf

from datakit.core import manifest
from datakit.core.arguments import check_count, check_flags
from datakit.core.atomic import Staging
from datakit.core.errors import DataError
from datakit.core.paths import PathArg, user_path
from datakit.core.progress import check_progress, progress_bar
from datakit.readers.records.tf_example import serialize

__all__ = ["ShardWriter"]


def check_compression(compression: str | None) -> str | None:
    if compression not in (None, "", "GZIP"):
        raise ValueError(f"compression={compression!r}: use None (no compression) or 'GZIP'")
    return compression or None


class ShardWriter:
    """Write serialized records into shards atomically, with a ``manifest.json``.

    ``mode="round_robin"`` sends record i to shard ``i % num_shards`` (shards that get no
    record are not created); ``mode="by_size"`` starts a new shard when the next record
    would push the current one past ``max_bytes`` (uncompressed, 16 bytes of framing per
    record included). Shards are written as hidden ``.name.tmp`` files and renamed only when
    the ``with`` block ends cleanly; on an exception they are deleted and no manifest is
    written. ``overwrite=False`` (default) refuses a folder that holds the set, both here
    and at the commit (another writer may have committed it meanwhile: this one then fails
    and the other's shards stay). ``paths`` lists the final files. ``progress`` shows a bar
    that counts the records written (:mod:`datakit.core.progress`): ``None`` (default) in a
    notebook or a terminal once writing lasts a second, ``True`` always, ``False`` never.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with ShardWriter(d, num_shards=2) as w:
    ...     for i in range(5):
    ...         w.write(b"record %d" % i)
    >>> [p.name for p in w.paths]
    ['shard-00000-of-00002.tfrecord', 'shard-00001-of-00002.tfrecord']
    >>> [e["records"] for e in manifest.read_manifest(d)["sets"]["shard"]["files"]]
    [3, 2]
    """

    def __init__(self, directory: PathArg, prefix: str = "shard", num_shards: int = 4,
                 mode: str = "round_robin", max_bytes: int | None = None,
                 compression: str | None = None, overwrite: bool = False,
                 progress: bool | None = None) -> None:
        self.progress = check_progress(progress)
        check_flags(overwrite=overwrite)
        if mode not in ("round_robin", "by_size"):
            raise ValueError(f"mode={mode!r}: use 'round_robin' or 'by_size'")
        if mode == "round_robin" and (not isinstance(num_shards, int) or num_shards < 1):
            raise ValueError(f"num_shards={num_shards!r}: pass an int >= 1")
        if mode == "by_size" and max_bytes is None:
            raise ValueError("mode='by_size' needs max_bytes >= 1 (e.g. max_bytes=100_000_000)")
        if max_bytes is not None:
            check_count("max_bytes", max_bytes, fix="a shard holds at least one byte: pass an "
                        "int >= 1 (e.g. max_bytes=100_000_000)")
            if mode != "by_size":  # round_robin would ignore it
                raise ValueError(f"max_bytes={max_bytes} sizes shards only with "
                                 "mode='by_size'; pass mode='by_size', or leave max_bytes out "
                                 f"(mode={mode!r} deals records out to num_shards shards).")
        if not re.fullmatch(r"[\w.-]+", prefix):
            raise ValueError(f"prefix={prefix!r}: use letters, digits, '_', '-' or '.'")
        self.directory, self.prefix, self.mode = Path(user_path(directory)), prefix, mode
        self.num_shards, self.max_bytes, self.overwrite = num_shards, max_bytes, overwrite
        self.compression = check_compression(compression)
        self.directory.mkdir(parents=True, exist_ok=True)
        held = None if overwrite else manifest.files_held(  # the commit's rule, looked at early
            self.directory, _manifest_or_none(self.directory), prefix, _pattern(prefix))
        if held is not None:
            raise FileExistsError(f"{self.directory} already holds shards of set {prefix!r} "
                                  f"({held} file(s)); pass overwrite=True to replace them, or "
                                  "write to another folder or with another prefix")
        # looked at again at the commit, under the folder's lock: another writer may commit
        # set `prefix` there meanwhile, and overwrite=False must not replace its records
        self.paths: list[Path] = []
        self._stage = Staging(self.directory)  # the set commit's temporary shards
        self._writers: list = []
        self._counts: list[int] = []
        self._sizes: list[int] = []
        self._n = 0
        self._open = False
        self._bar: Any = None  # the progress bar, from __enter__ on

    def __enter__(self) -> ShardWriter:
        self._open = True
        self._bar = progress_bar(None, "tfrecord shards", progress=self.progress, unit="record")
        if self.mode == "round_robin":
            for _ in range(self.num_shards):
                self._new_shard()
        return self

    def _new_shard(self) -> None:
        tmp = self._stage.file(f"{self.prefix}-{len(self._stage.made):05d}")
        try:
            writer = tf.io.TFRecordWriter(str(tmp), options=self.compression or "")
        except tf.errors.OpError as e:
            raise self._failed(e) from e
        self._writers.append(writer)
        self._counts.append(0)
        self._sizes.append(0)

    def write(self, record: bytes | tf.train.Example | tf.train.SequenceExample) -> None:
        """Append one record: bytes, or an Example/SequenceExample (serialized with sorted keys)."""
        if not self._open:
            raise RuntimeError("use ShardWriter inside a `with` block")
        if isinstance(record, (tf.train.Example, tf.train.SequenceExample)):
            record = serialize(record)
        if not isinstance(record, bytes):
            raise TypeError(f"write() takes bytes or an Example, got {type(record).__name__}")
        if self.mode == "round_robin":
            i = self._n % self.num_shards
        else:
            i = len(self._writers) - 1
            assert self.max_bytes is not None  # by_size: __init__ checked it is an int >= 1
            if i < 0 or (self._counts[i] and self._sizes[i] + len(record) + 16 > self.max_bytes):
                self._new_shard()
                i += 1
        try:
            self._writers[i].write(record)
        except tf.errors.OpError as e:  # a full disk: name the folder, free what it took
            raise self._failed(e) from e
        self._counts[i] += 1
        self._sizes[i] += len(record) + 16
        self._n += 1
        self._bar.update()

    def _failed(self, error: Exception) -> Exception:
        """Close and delete every temporary shard; the error to raise (a full disk, said so)."""
        self._close_all()
        self._open = False
        return self._stage.discard(error)

    def _close_all(self) -> Exception | None:
        first = None
        for w in self._writers:
            try:
                w.close()  # flushes: on a full disk this fails too
            except Exception as e:  # kept: raised once every file is gone
                first = first or e
        self._writers = []
        if self._bar is not None:
            self._bar.close()
        return first

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        self._open = False
        closing = self._close_all()
        with self._stage:  # the set commit: nothing of it stays but the new set
            if exc_type is not None:
                return False
            if closing is not None:  # flushing failed (a full disk: said so by the stage)
                raise closing
            kept = [(t, c) for t, c in zip(self._stage.made, self._counts, strict=False) if c]
            ext = ".tfrecord.gz" if self.compression else ".tfrecord"
            names = [f"{self.prefix}-{k:05d}-of-{len(kept):05d}{ext}" for k in range(len(kept))]
            finals = manifest.write_set(  # readers see the old shards or these, never a mix
                self.directory, self.prefix,
                {n: t for n, (t, _) in zip(names, kept, strict=True)},
                {n: c for n, (_, c) in zip(names, kept, strict=True)}, kind="tfrecord",
                unit="records",
                pattern=_pattern(self.prefix),
                compression=self.compression, overwrite=self.overwrite)
        self.paths = [self.directory / f for f in finals]
        return False


def _pattern(prefix: str) -> str:
    """The names of set ``prefix``'s shards, and no other set's (``a-b``'s are not ``a``'s)."""
    return f"{prefix}-[0-9][0-9][0-9][0-9][0-9]-of-[0-9]*.tfrecord*"


def _manifest_or_none(directory: PathArg) -> dict | None:
    try:
        return manifest.read_manifest(directory)
    except DataError:
        return None
