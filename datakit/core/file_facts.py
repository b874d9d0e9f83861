"""Has a file changed since the kit looked at it? The one rule: its size, times and inode.

Every reader, cache and writer of the kit that trusts a file it looked at earlier
(a table reader built from its files, a video listed before its clips are read,
a probe or a converted part kept for the next run, a tf.Transform run, a saved
checkpoint's inputs) records the file's :func:`file_stamp` then and compares it
now. The stamp is the size, the modification time, the inode's change time and
the inode: a file copied over with its old size and modification time kept
(``cp -p``, ``rsync -t``) still has a new change time, which no program can set
back, or a new inode. A size and modification time alone miss that replacement.
Where the kit already hashes a file's content (a checkpoint's inputs, a CSV
file's fingerprint), the content is compared instead. Where it keeps a
:func:`content_digest` taken with the stamp (a listed video), :func:`change`
compares the content before calling a file of the same size changed: a ``touch``
that changes no byte is then no change.

A reader opens each file through :func:`opened`, which compares the stamp on the
open file itself (``fstat``): a file replaced (even just before the open) or
grown since the check is a :class:`~datakit.core.errors.DataError` naming it,
never an epoch that mixes old and new rows. It costs one system call per open.
:func:`change` says in words what changed about a file, or ``None``;
:func:`changed_error` is the refusal of a changed file, in one wording, of every reader
that compares stamps (Parquet, TFRecord shards, SQLite, text lines, fixed-length records,
a tf.Transform run's rows, MP4 clips); the CSV reader, which compares a file's size,
rows and content inside the graph, and the video converter, which compares each video
with its listing, word theirs in their own terms. A reader whose files TensorFlow opens
in C++ checks each just before it is opened
(:mod:`datakit.readers.tables.unchanged_files`); such a reader takes a file's stamp
*before* its checks read the file, so a file replaced while (or just after) it is
checked is found by the first epoch, never read as if it were the checked one.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
>>> _ = open(path, "wb").write(b"abc")
>>> facts = file_facts([path])
>>> with opened(path, facts) as f:
...     f.read()
b'abc'
>>> change(path, facts[path]) is None
True
>>> _ = open(path, "ab").write(b"d")
>>> change(path, facts[path])
'now 4 bytes, then 3'
>>> opened(path, facts)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
datakit.core.errors.DataError: ...a.bin: the file changed since the reader checked it (now 4...
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Sequence
from typing import BinaryIO

from datakit.core.errors import DataError

__all__ = ["file_stamp", "file_facts", "content_digest", "change", "opened"]

#: ``(bytes, modification time in ns, change time in ns, inode)``.
Stamp = tuple[int, int, int, int]
#: The stamp's fields by name, as a record written to JSON keeps them.
STAMP_FIELDS = ("bytes", "mtime_ns", "ctime_ns", "inode")


def stamp(st: os.stat_result) -> Stamp:
    """``(bytes, modification time, change time, inode)`` of a stat result."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def file_stamp(path: str | os.PathLike) -> Stamp:
    """The :func:`stamp` of ``path`` now, following links (an ``OSError`` when it is gone)."""
    return stamp(os.stat(path))


def stamp_record(path: str | os.PathLike) -> dict[str, int]:
    """:func:`file_stamp` as a dict of :data:`STAMP_FIELDS`, for a JSON record."""
    return dict(zip(STAMP_FIELDS, file_stamp(path), strict=True))


def file_facts(files: Iterable[str]) -> dict[str, Stamp]:
    """``{file: stamp}``: what the reader was built from."""
    return {f: file_stamp(f) for f in files}


def what_changed(now: Sequence[int], then: Sequence[int]) -> str:
    """Which of a file's facts differ, in words (a file whose size and modification time
    are as checked, but not its change time or inode, was replaced keeping them, or had
    only its metadata changed: a chmod, a hard link; either way it is not the file checked).
    """
    if tuple(now[:2]) != tuple(then[:2]):
        return (f"now {now[0]:,} bytes, then {then[0]:,}"
                + ("" if now[0] != then[0] else "; modified since"))
    return ("the same size and modification time, but another "
            + ("inode: replaced by another file" if now[3] != then[3] else
               "inode change time: rewritten keeping them (cp -p, rsync -t), or its "
               "permissions or links changed"))


def content_digest(path: str | os.PathLike) -> int:
    """The CRC-32 of the file's bytes (read in 1 MB blocks): what :func:`change` compares
    when a file's times differ at the same size. About 1 GB/s of CPU here; one read of
    the file (from the page cache when it was just read)."""
    crc = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            crc = zlib.crc32(block, crc)
    return crc


#: ``{(path, stamp then): stamp now}`` of files found touched with their bytes unchanged,
#: so that each later check of such a file is one ``stat`` again, not one read of it.
_SAME_BYTES: dict[tuple[str, tuple[int, ...]], Stamp] = {}


def change(path: str | os.PathLike, then: Sequence[int], *,
           digest: int | None = None) -> str | None:
    """What changed about ``path`` since its stamp was ``then``, in words; ``None`` if nothing.

    A file gone or unreadable is a change too (``"gone or unreadable (...)"``). With
    ``digest`` (the file's :func:`content_digest` when its stamp was ``then``), a file
    whose times or inode differ but whose size is the same is read once and compared
    by its content: a ``touch``, or a copy of the same bytes, is no change (costs one
    read of the file, the first time its stamp is seen; a CRC-32 tells other bytes
    apart but for one chance in four billion).
    """
    try:
        now = file_stamp(path)
    except OSError as e:
        return f"gone or unreadable ({e.strerror})"
    then = tuple(then)
    if now == then:
        return None
    key = (os.fspath(path), then)
    if digest is not None and now[0] == then[0]:
        if _SAME_BYTES.get(key) == now:
            return None
        try:
            same = content_digest(path) == digest and file_stamp(path) == now
        except OSError as e:
            return f"gone or unreadable ({e.strerror})"
        if same:
            _SAME_BYTES[key] = now  # (one item set: no lock needed under the GIL)
            return None
        return what_changed(now, then) + "; its bytes differ"
    return what_changed(now, then)


#: What a reader's refusal of a changed file tells the user to do, by default.
REPLACE_WHOLE = ("build the dataset again after the files change, and replace a set whole "
                 "(write it into a new folder) rather than while it is read")
#: What it tells the user to do where the dataset reads one file (a text or fixed-length one).
BUILD_AGAIN = ("build the dataset again after the file changes, and write a new file "
               "rather than change the one being read")


def opened(path: str, facts: dict[str, Stamp], *, fix: str = REPLACE_WHOLE) -> BinaryIO:
    """``path`` opened for reading, after checking that it is the file the reader checked.

    The check is on the open file itself (``fstat``): a file replaced just before
    the open is still found. It costs one system call per open. ``fix``: what the
    error tells the user to do.
    """
    then = facts[path]
    fh = open(path, "rb")
    now = stamp(os.fstat(fh.fileno()))
    if now != then:
        fh.close()
        raise changed_error(path, what_changed(now, then), fix=fix)
    return fh


def changed_error(path: str, said: str, *, fix: str = REPLACE_WHOLE,
                  unit: str = "rows") -> DataError:
    """The one wording of a stamp-comparing reader's refusal of a changed file (the module
    docstring says which): ``said`` is :func:`change`'s
    (or :func:`what_changed`'s) words, ``fix`` what to do, ``unit`` what an epoch holds."""
    return DataError(path, f"the file changed since the reader checked it ({said}): one "
                     f"epoch would mix old and new {unit}. {fix[:1].upper()}{fix[1:]}")
