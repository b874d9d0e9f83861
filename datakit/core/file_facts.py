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
file's fingerprint), the content is compared instead.

A reader opens each file through :func:`opened`, which compares the stamp on the
open file itself (``fstat``): a file replaced (even just before the open) or
grown since the check is a :class:`~datakit.core.errors.DataError` naming it,
never an epoch that mixes old and new rows. It costs one system call per open.
:func:`change` says in words what changed about a file, or ``None``.

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
from collections.abc import Sequence

from datakit.core.errors import DataError

__all__ = ["file_stamp", "file_facts", "change", "opened"]

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


def file_facts(files: list[str]) -> dict[str, Stamp]:
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


def change(path: str | os.PathLike, then: Sequence[int]) -> str | None:
    """What changed about ``path`` since its stamp was ``then``, in words; ``None`` if nothing.

    A file gone or unreadable is a change too (``"gone or unreadable (...)"``).
    """
    try:
        now = file_stamp(path)
    except OSError as e:
        return f"gone or unreadable ({e.strerror})"
    return None if now == tuple(then) else what_changed(now, then)


def opened(path: str, facts: dict[str, Stamp], *,
           fix: str = "build the dataset again after the files change, and replace a set "
                      "whole (write it into a new folder) rather than while it is read"):
    """``path`` opened for reading, after checking that it is the file the reader checked.

    The check is on the open file itself (``fstat``): a file replaced just before
    the open is still found. It costs one system call per open. ``fix``: what the
    error tells the user to do.
    """
    fh = open(path, "rb")
    now = stamp(os.fstat(fh.fileno()))
    then = facts[path]
    if now != then:
        fh.close()
        raise DataError(path, f"the file changed since the reader checked it "
                        f"({what_changed(now, then)}): one epoch would mix old and new rows. "
                        f"{fix[:1].upper()}{fix[1:]}")
    return fh
