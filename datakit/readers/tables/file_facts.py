"""Has a file changed since a reader checked it? Its size, times and inode, on the open file.

A reader records :func:`file_facts` of its files when it is built, and opens
each file for reading through :func:`opened`, which compares them again on the
open file (``fstat``): a file replaced (even just before the open) or grown
since the check is a :class:`~datakit.core.errors.DataError` naming it, never
an epoch that mixes old and new rows. It costs one system call per open.

The facts are the size, the modification time, the inode's change time and the
inode: a file copied over with its old size and modification time kept
(``cp -p``, ``rsync -t``) still has a new change time, which no program can set
back, or a new inode.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
>>> _ = open(path, "wb").write(b"abc")
>>> facts = file_facts([path])
>>> with opened(path, facts) as f:
...     f.read()
b'abc'
>>> _ = open(path, "ab").write(b"d")
>>> opened(path, facts)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
datakit.core.errors.DataError: ...a.bin: the file changed since the reader checked it (now 4...
"""

from __future__ import annotations

import os

from datakit.core.errors import DataError

__all__ = ["file_facts", "opened"]

Stamp = tuple[int, int, int, int]


def stamp(st: os.stat_result) -> Stamp:
    """``(bytes, modification time, change time, inode)`` of a stat result."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def file_facts(files: list[str]) -> dict[str, Stamp]:
    """``{file: stamp}``: what the reader was built from."""
    return {f: stamp(os.stat(f)) for f in files}


def what_changed(now: Stamp, then: Stamp) -> str:
    """Which of a file's facts differ, in words (a file whose size and modification time
    are as checked, but not its change time or inode, was replaced keeping them, or had
    only its metadata changed: a chmod, a hard link; either way it is not the file checked).
    """
    if now[:2] != then[:2]:
        return (f"now {now[0]:,} bytes, then {then[0]:,}"
                + ("" if now[0] != then[0] else "; modified since"))
    return ("the same size and modification time, but another "
            + ("inode: replaced by another file" if now[3] != then[3] else
               "inode change time: rewritten keeping them (cp -p, rsync -t), or its "
               "permissions or links changed"))


def opened(path: str, facts: dict[str, Stamp]):
    """``path`` opened for reading, after checking that it is the file the reader checked.

    The check is on the open file itself (``fstat``): a file replaced just before
    the open is still found. It costs one system call per row group read.
    """
    fh = open(path, "rb")
    st = os.fstat(fh.fileno())
    then = facts[path]
    if stamp(st) != then:
        fh.close()
        changed = what_changed(stamp(st), then)
        raise DataError(path, f"the file changed since the reader checked it ({changed}): one "
                        "epoch would mix old and new rows. Build the dataset again "
                        "after the files change, and replace a set whole (write_parquet_shards "
                        "into a new folder) rather than while it is read")
    return fh


