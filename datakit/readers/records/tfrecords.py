"""TFRecord shards done safely: write them atomically with a manifest, read them checked.

TensorFlow reads a TFRecord file cut at a record boundary, or even in the middle of
a record, as a shorter file *without any error*, and its ``DataLossError`` for a
flipped byte says ``corrupted record at 48`` without naming the file. So the
writer (:class:`ShardWriter`, from :mod:`datakit.readers.records.tfrecord_writer`) leaves a
``manifest.json`` (per shard: records, bytes, sha256) and the reader checks every
shard *before* TensorFlow sees it:

* always (cheap): the file exists and is not empty; its first bytes match the
  compression (GZIP files start with ``1f 8b``); for uncompressed files a walk over
  the 12-byte record headers (one seek per record) proves the file ends exactly at
  a record boundary and counts its records;
* with a manifest (``check_manifest=True``): byte size, record count and sha256,
  which costs one sequential read of every file (hashing runs at hundreds of MB/s,
  far faster than parsing);
* with ``verify=True``: one full TensorFlow pass per file, for files without a
  manifest, turning ``DataLossError`` into :class:`RecordFileError` with the path and
  the byte offset. It costs about one extra epoch of reading.

A shard changed after these checks (replaced, rewritten, grown) is found when an epoch
next opens it: :func:`read_records` compares each file's stamp (size, modification and
change times, inode: :mod:`datakit.core.file_facts`) with the one taken at the build,
one ``stat`` per file per epoch, and names the file
(:mod:`datakit.readers.tables.unchanged_files`), where TensorFlow would read the new
bytes or give a ``DataLossError`` naming no file. That check is a Python call in the
graph: the dataset cannot run on tf.data service workers (build a plain
``TFRecordDataset`` pipeline there, as notebook 18 does). Inside an interleaved
``tf.data`` graph an error cannot be caught and renamed, so a file damaged while it is
read still surfaces as TensorFlow's own error.

What goes inside a record (usually a ``tf.train.Example``) is
:mod:`datakit.readers.records.tf_example`; writing shards is
:mod:`datakit.readers.records.tfrecord_writer`; the walk over the record headers (and
:class:`~datakit.readers.records.record_framing.RecordFileError`) is
:mod:`datakit.readers.records.record_framing`, which needs no TensorFlow. (About 360
lines: the checks and the reader share one walk over the files, kept together so that
what is checked is what is read.)

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> from datakit.readers.records.tfrecord_writer import ShardWriter
>>> with ShardWriter(d, num_shards=1) as w:
...     for r in (b"a", b"bb", b"ccc"):
...         w.write(r)
>>> record_offsets(w.paths[0])  # 16 bytes of framing around each record
[0, 17, 35]
>>> [r.numpy() for r in read_records(d)]
[b'a', b'bb', b'ccc']
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from datakit.core import manifest
from datakit.core.arguments import check_flag, check_flags, check_seed, interleave_lengths
from datakit.core.errors import DataError
from datakit.core.file_facts import file_stamp
from datakit.core.keywords import keywords
from datakit.core.paths import FilesArg, PathArg, user_path
from datakit.readers.records.record_framing import RecordFileError, record_offsets
from datakit.readers.tables.file_set import check_file_set
from datakit.readers.tables.unchanged_files import checked_path

__all__ = ["record_shards", "check_shards", "read_records"]

_GZIP_MAGIC = b"\x1f\x8b"
#: What the error for a shard changed after the build tells the user to do.
_REWRITE = ("build the dataset again after the shards change, and write a new set into a new "
            "folder (ShardWriter) rather than over the one being read")


def record_shards(directory: PathArg) -> dict:
    """The TFRecord shards ``directory``'s manifest lists (:mod:`datakit.core.manifest`).

    Returns ``{"format": "tfrecord", "compression", "records", "shards": [{"file",
    "records", "bytes", "sha256"}, ...]}`` over the folder's TFRecord sets.
    """
    path = Path(user_path(directory)) / manifest.MANIFEST
    with _record_errors():
        man = manifest.read_manifest(directory)
    if man is None:
        raise RecordFileError(path, "no manifest here; write shards with ShardWriter, or "
                              "pass the shard files themselves")
    sets = [s for s in man["sets"].values() if s.get("kind") == "tfrecord"]
    if not sets:
        raise RecordFileError(path, "the manifest lists no TFRecord shards (only "
                              f"{sorted(man['sets'])}); pass the shard files themselves")
    shards = [{k: e[k] for k in ("file", "records", "bytes", "sha256")}
              for s in sets for e in s["files"]]
    return {"format": "tfrecord", "compression": sets[0].get("compression"),
            "records": sum(s["totals"]["records"] for s in sets), "shards": shards}


@contextlib.contextmanager
def _record_errors() -> Iterator[None]:
    """The kit's :class:`DataError` (from the manifest checks) as a :class:`RecordFileError`."""
    try:
        yield
    except RecordFileError:
        raise
    except DataError as e:
        raise RecordFileError(e.path, e.reason, e.offset) from None


# ---------------------------------------------------------------- checking and reading
def _tf_message(e: Exception) -> str:
    msg = getattr(e, "message", str(e))
    msg = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", msg)
    return re.sub(r"\s*\[Op:\w+\].*$", "", msg, flags=re.S).strip()


def _count_with_tf(path: PathArg, compression: str | None) -> int:
    ds = tf.data.TFRecordDataset(os.fspath(path), compression_type=compression or "")
    try:
        batches = ds.batch(4096)  # one reduce step per batch: ~10x faster than per record
        return int(batches.reduce(np.int64(0), lambda c, b: c + tf.shape(b, tf.int64)[0]))
    except tf.errors.OpError as e:
        msg = _tf_message(e)
        m = re.search(r"record at (\d+)", msg)
        raise RecordFileError(path, f"TensorFlow cannot read it: {msg}",
                              offset=int(m.group(1)) if m else None) from None


def _list_files(source: FilesArg, check_manifest: bool = True) -> tuple[list[str], dict]:
    """Files to read (as given, never made absolute) and {file: manifest entry}."""
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        d = Path(source)
        with _record_errors():
            man = manifest.read_manifest(d)
        sets = (man or {"sets": {}})["sets"]  # no manifest: no set
        kinds = [n for n, s in sets.items() if s.get("kind") == "tfrecord"]
        if kinds:
            if check_manifest:  # totals, missing or extra files
                with _record_errors():  # sizes, sha256 and counts: per file in check_shards
                    manifest.check(d, sets=kinds, man=man, files=[])
            listed = [dict(e, path=str(d / e["file"]), compression=sets[n].get("compression"))
                      for n in kinds for e in sets[n]["files"]]
            if not listed:
                raise RecordFileError(d, "the shards hold no records: there is nothing to "
                                      "read (the writer got no record)")
            return [e["path"] for e in listed], {e["path"]: e for e in listed}
        other = {e["file"] for s in sets.values() for e in s["files"]}
        skip = other | manifest.ignored_names(man) | {manifest.MANIFEST}
        files = sorted(os.fspath(p) for p in d.iterdir()
                       if p.is_file() and not p.name.startswith(".") and p.name not in skip)
        if not files:
            raise RecordFileError(d, "folder holds no record files")
        return files, {}
    with _record_errors():  # each folder's manifest read once; a killed writer's files left out
        found = check_file_set(source, sort=False, suffix=".tfrecord")
    return found.files, found.entries


def check_shards(source: FilesArg, compression: str | None = "auto", check_manifest: bool = True,
                 verify: bool | None = None) -> list[dict]:
    """Check record files before reading them; per file ``file, records, bytes, compression,
    stamp``.

    ``source`` is a folder (its manifest lists the shards, else every visible file in it),
    one file, or a list of files. ``records`` is None when it is unknown (a GZIP file with
    neither a manifest nor ``verify=True``). Raises :class:`RecordFileError` naming the file.
    ``verify=None`` (the default) verifies the files no manifest vouches for when
    ``check_manifest`` is true, so a corrupt record is found here, with its file, rather
    than as TensorFlow's ``DataLossError`` that names no file. Files no manifest lists get
    a ``UserWarning``: a file cut exactly at a record boundary cannot be told from a whole one.
    ``stamp`` is the file's :func:`~datakit.core.file_facts.file_stamp` taken *before* the
    checks read it: what :func:`read_records` compares each epoch's open with, so a file
    replaced while or after it is checked is found, never read as the checked one.
    """
    check_flag("check_manifest", check_manifest)
    if verify is not None:
        check_flag("verify", verify)
    return _check_all(source, compression, check_manifest, verify, {})


def shards_with_offsets(source: FilesArg) -> tuple[list[dict], dict[str, list[int]]]:
    """:func:`check_shards`' report (its defaults) and ``{file: where each record starts}``
    for each uncompressed file, from the one walk over its record headers that counted
    its records: for a reader that needs the offsets too (the clip reader's chunks)."""
    offsets: dict[str, list[int]] = {}
    return _check_all(source, "auto", True, None, offsets), offsets


def _check_all(source: FilesArg, compression: str | None, check_manifest: bool,
               verify: bool | None, offsets: dict[str, list[int]]) -> list[dict]:
    """:func:`check_shards`, keeping each uncompressed file's record offsets in ``offsets``."""
    if compression not in ("auto", None, "", "GZIP"):
        raise ValueError(f"compression={compression!r}: use 'auto', None or 'GZIP'")
    files, entries = _list_files(source, check_manifest)
    report = [_check_shard(f, entries, compression, check_manifest, verify, offsets)
              for f in files]
    unvouched = [f for f in files if f not in entries]
    if unvouched:
        warnings.warn(f"{len(unvouched)} file(s) read without a manifest (first: {unvouched[0]}):"
                      " a file cut exactly at a record boundary looks complete, so its lost "
                      "records cannot be detected; write shards with ShardWriter, whose "
                      "manifest.json records each file's records, bytes and sha256",
                      UserWarning, stacklevel=4)
    return report


def _check_shard(f: str, entries: dict, compression: str | None, check_manifest: bool,
                 verify: bool | None, offsets: dict[str, list[int]]) -> dict:
    """One row of :func:`check_shards`' report: the file checked, named in any error; its
    stamp is taken first, so the checks vouch for the file the stamp describes or an
    epoch finds it changed."""
    entry = entries.get(f) if check_manifest else None
    try:
        stamp = file_stamp(f)
    except FileNotFoundError:
        where = " (listed in manifest.json)" if f in entries else ""
        raise RecordFileError(f, f"file is missing{where}") from None
    size = stamp[0]
    if size == 0:
        raise RecordFileError(f, "file is empty (0 bytes)")
    comp, gzip_magic = _compression_of(f, entries.get(f), compression)
    records = None
    if comp is None:  # one walk over the headers: the offsets kept, their number counted
        offsets[f] = _framed_offsets(f, gzip_magic)
        records = len(offsets[f])
    if entry is not None:
        if entry["compression"] != comp:
            raise RecordFileError(f, f"manifest says compression={entry['compression']!r}, "
                                  f"but it is read with compression={comp!r}")
        with _record_errors():
            manifest.check_entry(f, entry, unit="records", count=records)
    if verify or (verify is None and check_manifest and entry is None):
        n = _count_with_tf(f, comp)
        if records is not None and n != records:
            raise RecordFileError(f, f"TensorFlow reads {n} records, headers say {records}")
        records = n
    if records is None and entry is not None:
        records = entry["records"]
    return {"file": f, "records": records, "bytes": size, "compression": comp, "stamp": stamp}


def _compression_of(f: str, entry: dict | None, compression: str | None) -> tuple[str | None, bool]:
    """``(compression the file is read with, whether it starts as GZIP does)``."""
    with open(f, "rb") as fh:
        gzip_magic = fh.read(2) == _GZIP_MAGIC
    comp = compression or None
    if comp == "auto":
        comp = entry["compression"] if entry is not None else ("GZIP" if gzip_magic else None)
    if comp == "GZIP" and not gzip_magic:
        raise RecordFileError(f, "not GZIP-compressed (does not start with 1f 8b): "
                              "pass compression=None or 'auto'")
    return comp, gzip_magic


def _framed_offsets(f: str, gzip_magic: bool) -> list[int]:
    """Where each record of an uncompressed file starts, by its framing; a GZIP-looking
    one is named so."""
    try:
        return record_offsets(f)
    except RecordFileError as e:
        if gzip_magic:
            raise RecordFileError(f, "looks GZIP-compressed (starts with 1f 8b) but is "
                                  "read as uncompressed: pass compression='GZIP' or "
                                  "'auto'") from None
        raise e from None


def read_records(source: FilesArg, compression: str | None = "auto", check_manifest: bool = True,
                 verify: bool | None = None,
                 n_readers: int | None = None, n_read_threads: int | None = None,
                 shuffle_files: bool = False, seed: int | None = None,
                 **tf_names: Any) -> tf.data.Dataset:
    """Read serialized records from checked TFRecord shards, interleaved, as a ``tf.data.Dataset``.

    Args:
        source: a folder of shards, a file, or a list of files.
        compression: ``"auto"`` (from the manifest or the file's first bytes),
            ``None`` or ``"GZIP"``.
        check_manifest: check sizes, record counts and sha256 against the
            manifest (see the module docstring for what that catches and costs).
        verify: one full TensorFlow pass per file, for files without a manifest.
        n_readers: files read at once (``interleave``'s ``cycle_length``); ``None``: up
            to 4; ``tf.data.AUTOTUNE``: tf.data's rule
            (:func:`datakit.core.arguments.default_cycle_length`).
        n_read_threads: reading threads (``TFRecordDataset``'s ``num_parallel_reads``;
            ``None``: one; try ``tf.data.AUTOTUNE`` and measure); at most an explicit
            ``n_readers``. The names every reader of the kit gives these knobs.
        **tf_names: tf.data's names for them, taken as well
            (:data:`~datakit.core.keywords.TF_DATA_NAMES`: ``cycle_length``,
            ``num_parallel_reads``), never both names for one knob.
        shuffle_files: shuffle the file order each epoch, with ``seed``.
        seed: seeds the file shuffle.

    The dataset knows its length (``len(ds)``, the records the check counted), except
    for a GZIP file that neither a manifest nor ``verify=True`` counted: then its
    length is unknown. Each epoch checks each file as it opens it: one changed since
    the build is an error naming it (see the module docstring).

    Raises:
        RecordFileError: (a :class:`datakit.core.errors.DataError`) a shard is
            truncated, corrupted, missing from its manifest's set, or disagrees
            with the manifest, naming the file (and byte offset).
        InvalidArgumentError (while reading): a file replaced or changed since the
            dataset was built, naming it; build the dataset again.
        ValueError: bad arguments, e.g. more ``n_read_threads`` than
            ``n_readers``, or files that mix GZIP and uncompressed.

    >>> import tempfile
    >>> from datakit.readers.records.tf_example import parse_example, to_example
    >>> from datakit.readers.records.tfrecord_writer import ShardWriter
    >>> d = tempfile.mkdtemp()
    >>> with ShardWriter(d, num_shards=3) as w:
    ...     for i in range(7):
    ...         w.write(to_example({"id": i}).SerializeToString())
    >>> ds = read_records(d).map(lambda s: parse_example(s, {"id": tf.int64})["id"])
    >>> sorted(int(i) for i in ds)
    [0, 1, 2, 3, 4, 5, 6]
    """
    knobs = keywords("read_records", {"n_readers": n_readers, "n_read_threads": n_read_threads},
                     tf_names, defaults={"n_readers": None, "n_read_threads": None})
    n_readers, n_read_threads = knobs["n_readers"], knobs["n_read_threads"]
    with knobs.as_written():  # a message names each knob as the caller wrote it
        seed = check_seed(seed)
        check_flags(shuffle_files=shuffle_files, check_manifest=check_manifest)
        if verify is not None:  # None: verify what no manifest vouches for
            check_flag("verify", verify)
        interleave_lengths(n_readers, 1, n_read_threads, default_cycle=1,
                           names=("n_readers", "n_read_threads"))
    report = check_shards(source, compression, check_manifest, verify)
    comps = {r["compression"] for r in report}
    if len(comps) > 1:
        raise ValueError("the files mix GZIP and uncompressed; read them as two datasets and "
                         "concatenate or sample from both")
    comp = comps.pop() or ""
    files = tf.data.Dataset.from_tensor_slices([r["file"] for r in report])
    if shuffle_files:
        files = files.shuffle(len(report), seed=seed)
    with knobs.as_written():
        cycle, _, threads = interleave_lengths(
            n_readers, 1, n_read_threads, default_cycle=min(4, len(report)),
            names=("n_readers", "n_read_threads"))
    # `deterministic` only means something with num_parallel_calls: passed alone, TF warns
    # (UserWarning "has no effect"), so a serial read passes neither.
    parallel = {} if threads is None else {"num_parallel_calls": threads, "deterministic": True}
    facts = {r["file"]: r["stamp"] for r in report}  # taken before the checks read each file
    records = files.interleave(
        lambda f: tf.data.TFRecordDataset(checked_path(f, facts, fix=_REWRITE, unit="records"),
                                          compression_type=comp),
        cycle_length=cycle, block_length=1, **parallel)
    counts = [r["records"] for r in report]
    if None in counts:  # a GZIP file no manifest counts: its length is unknown
        return records
    return records.apply(tf.data.experimental.assert_cardinality(sum(counts)))
