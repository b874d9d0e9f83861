"""Write files so that a reader sees the old version or the new one, never a mix.

Two helpers, one idea: nothing is visible under its final name until it is
complete and on disk.

- :func:`atomic_file` (and :func:`write_atomic` for bytes or text) writes one
  file under a unique hidden temporary name in the same folder
  (``.name.<pid>-<random>.tmp``), ``fsync`` s it, renames it over the final
  name (``os.replace``: atomic on POSIX, and on Windows within a folder) and
  ``fsync`` s the folder. On any error the temporary file is removed.
- :class:`Staging` is where every writer of a set writes its new files
  (temporary names, all removed whatever happens, a full disk named), and
  :func:`commit_set` replaces a whole *set* of files (the shards of a table)
  at once. The new files get names no reader trusts yet (a ``.g<N>`` tag when
  a name is still listed), the manifest is switched in one atomic write, and
  only then are the old files deleted. Readers trust only what the manifest
  lists (:mod:`datakit.core.manifest`), so a writer killed at any moment leaves the
  old set or the new one readable. (:func:`datakit.core.manifest.write_sets` then
  gives the files their untagged names back in a second switch of the same kind.)

The PID in every temporary name lets the next writer tell a dead writer's
leftovers from a live one's: :func:`clean_leftovers` removes them.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = write_atomic(os.path.join(d, "a.txt"), "hello\\n")
>>> open(p).read(), os.listdir(d)
('hello\\n', ['a.txt'])

This module imports nothing from the kit but :mod:`datakit.core.errors`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Literal, TypeVar, overload

__all__: list[str] = []

_E = TypeVar("_E", bound=BaseException)

_SAID = "no space left on the device of"
_TMP = re.compile(r"^\..+\.(\d+)-[0-9a-f]+\.tmp$")


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary file of :func:`atomic_file` (``.<name>.<pid>-<hex>.tmp``)."""
    return bool(_TMP.match(os.path.basename(name)))


def temporary_path(path: str | os.PathLike) -> Path:
    """A fresh temporary name beside ``path``: hidden, with this process's PID in it."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def fsync_folder(folder: str | os.PathLike) -> None:
    """Flush a folder's entries (the renames in it) to disk (POSIX; Windows cannot open a
    folder, and NTFS journals a rename itself: there it does nothing)."""
    if os.name == "nt":
        return
    fd = os.open(os.fspath(folder), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDWR if os.name == "nt" else os.O_RDONLY)  # Windows: write access
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def disk_full(error: BaseException, folder: str | os.PathLike, *,
              removed: int = 0) -> OSError | None:
    """``error`` said plainly when it is a full disk (``ENOSPC``, ``EDQUOT``, or TensorFlow's
    or Arrow's "No space left on device"): an ``OSError(ENOSPC)`` naming the folder; else None."""
    if _SAID in str(error) and error.__cause__ is not None:
        error = error.__cause__  # said by an inner write (the manifest's): say it for the set
    text = str(error)
    if not (getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT)
            or "No space left" in text or "quota exceeded" in text.lower()):
        return None
    free = shutil.disk_usage(folder).free
    return OSError(errno.ENOSPC, f"{_SAID} {os.fspath(folder)} "
                   f"({free} bytes free; {removed} temporary file(s) of this write removed, "
                   "nothing written before was changed): free space there, or write to another "
                   f"folder [{text.strip()[:200]}]", os.fspath(folder))


class Staging:
    """The staging area of a set commit: the new files of one folder, under temporary names.

    Every writer of a set works the same way: inside ``with Staging(folder) as stage``,
    it writes each new file to ``stage.file(name)`` (a unique hidden temporary name
    beside ``folder/name``), then, last in the block, switches to them in one step
    (:func:`datakit.core.manifest.write_set`, which renames ``stage.files`` under
    :func:`commit_set`). Whatever way the block ends, no temporary file of it stays:
    after the switch they were renamed; on an exception they are deleted, so the
    previous set is untouched and the space is free again. A full disk (``ENOSPC``,
    ``EDQUOT``) becomes :func:`disk_full`'s error naming ``folder``. A writer of a
    folder (a checkpoint, a tf.Transform run) stages it in ``stage.subfolder(name)``
    and renames it in as its switch; the hidden folder goes the same way.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with Staging(d) as stage:
    ...     _ = stage.file("a.csv").write_text("x")
    ...     sorted(stage.files), len(os.listdir(d))
    (['a.csv'], 1)
    >>> os.listdir(d)  # never switched to: removed
    []
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.files: dict[str, Path] = {}  # wanted name -> its temporary path
        self.made: list[Path] = []  # every temporary path handed out (or added), in order

    def file(self, name: str) -> Path:
        """A fresh temporary path for the new file ``name`` of this folder."""
        self.files[name] = tmp = temporary_path(self.folder / name)
        self.made.append(tmp)
        return tmp

    def subfolder(self, name: str) -> Path:
        """A fresh hidden folder for the new folder ``name`` (a run, a checkpoint), made now;
        removed, whatever it holds, when the block ends, unless it was renamed away."""
        tmp = self.file(name)
        os.mkdir(tmp)
        return tmp

    def __enter__(self) -> Staging:
        return self

    @overload
    def discard(self, error: None = None) -> None: ...
    @overload
    def discard(self, error: _E) -> _E | OSError: ...

    def discard(self, error: BaseException | None = None) -> BaseException | None:
        """Delete every temporary file of this stage still there; the error to raise for
        ``error`` (a full disk said so, naming the folder; any other error as it is)."""
        removed = 0
        for tmp in self.made:  # after a switch they were renamed: nothing is left to remove
            with contextlib.suppress(FileNotFoundError):
                if Path(tmp).is_dir():
                    shutil.rmtree(tmp)
                else:
                    Path(tmp).unlink()
                removed += 1
        return error and (disk_full(error, self.folder, removed=removed) or error)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        said = self.discard(exc)
        if said is not None and said is not exc:  # (None only when exc is None too)
            raise said from exc
        return False


@contextlib.contextmanager
def removed_on_error(folder: str | os.PathLike) -> Iterator[list[Path]]:
    """:class:`Staging` for a writer that names its own temporary files: yield the list
    to add them to (``Staging.made``); they are all deleted when the block ends."""
    with Staging(folder) as stage:
        yield stage.made


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, *, durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path to write; on a clean exit it becomes ``path``, atomically.

    The temporary file is in the same folder (so the rename is atomic),
    ``fsync`` ed before the rename, and the folder after it. On an exception
    it is deleted and ``path`` is left as it was. ``durable=False`` leaves out
    the two ``fsync`` s (a wait on the disk for each file): a killed process
    still leaves the whole file or none, but a power cut may leave it short or
    empty, so only for a file its reader checks whole before trusting it.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with atomic_file(d / "x.bin") as tmp:
    ...     _ = tmp.write_bytes(b"12")
    >>> (d / "x.bin").read_bytes()
    b'12'
    """
    path = Path(path)
    with removed_on_error(path.parent) as made:  # a full disk: named, and its space freed
        made.append(tmp := temporary_path(path))
        yield tmp
        if durable:
            _fsync_file(tmp)
        os.replace(tmp, path)
    if durable:
        fsync_folder(path.parent)


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (bytes, or text written as UTF-8 with no newline translation) atomically."""
    path = Path(path)
    with atomic_file(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
    return path


class FolderBusy(RuntimeError):
    """Another process holds a folder that :func:`folder_lock` was told not to wait for."""


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike, *, busy: str | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``folder``, across processes, on every platform.

    Where the system has ``flock`` (Linux, macOS) the lock is on the folder itself: no
    lock file. Elsewhere (Windows) it is :func:`file_lock` on ``.<folder name>.lock``
    beside the folder. Waits while another process holds it; with ``busy`` (what that
    process is doing, and the fix), refuses at once instead: :class:`FolderBusy`, naming
    the folder.
    """
    if not _has_flock():
        folder = Path(folder)
        with file_lock(folder.parent / f".{folder.name}.lock", busy=busy, what=folder):
            yield
        return
    with _flock(os.open(os.fspath(folder), os.O_RDONLY), busy, folder):
        yield


@contextlib.contextmanager
def file_lock(path: str | os.PathLike, *, busy: str | None = None,
              what: str | os.PathLike | None = None) -> Iterator[None]:
    """Hold the lock file ``path``: ``flock`` on it where the system has it (Linux, macOS),
    else the ``filelock`` package (Windows).

    Waits while another process holds it; with ``busy``, refuses at once instead:
    :class:`FolderBusy`, naming ``what`` (default: ``path``). The file may stay when the
    lock is released (on POSIX it does): its presence means nothing, only the lock does.
    """
    if _has_flock():
        with _flock(os.open(os.fspath(path), os.O_RDWR | os.O_CREAT, 0o644), busy, what or path):
            yield
        return
    import filelock

    lock = filelock.FileLock(os.fspath(path), timeout=0 if busy else -1)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise FolderBusy(f"{os.fspath(what or path)}: {busy}") from None
    try:
        yield
    finally:
        lock.release()


def _has_flock() -> bool:
    """Whether the system has ``flock`` (POSIX); imported here, so the kit imports on Windows."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def _flock(fd: int, busy: str | None, what: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the open ``fd``; closing it at the end releases it.

    With ``busy``, a lock held elsewhere is :class:`FolderBusy` naming ``what`` at once.
    """
    import fcntl

    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if busy else 0))
        except BlockingIOError:
            raise FolderBusy(f"{os.fspath(what)}: {busy}") from None
        yield
    finally:
        os.close(fd)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a writer whose leftovers must not be removed yet)."""
    import psutil  # not os.kill(pid, 0): on Windows, signal 0 is CTRL_C_EVENT

    return pid == os.getpid() or psutil.pid_exists(pid)


def clean_leftovers(folder: str | os.PathLike, names: Collection[str] = ()) -> list[str]:
    """Delete temporary files of writers that died, and the given ``names``; return what went.

    A temporary file whose PID is a running process is left alone (another
    writer is busy with it).
    """
    folder = Path(folder)
    removed = []
    for entry in os.scandir(folder):
        m = _TMP.match(entry.name)
        if (m and not process_alive(int(m.group(1)))) or entry.name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(entry.name)
    return sorted(removed)


def generation_name(name: str, generation: int) -> str:
    """``name`` tagged with a generation before its extensions: ``part_00.g2.csv``."""
    stem, dot, ext = name.partition(".")
    ext = re.sub(r"^g\d+\.", "", ext)
    return f"{stem}.g{generation}{dot}{ext}"


def commit_set(folder: str | os.PathLike, staged: dict[str, Path], *, listed: Iterable[str],
               generation: int, announce: Callable[[list[str]], object],
               switch: Callable[[list[str]], object]) -> list[str]:
    """Move a new generation of files into ``folder`` and switch to it in one atomic step.

    ``staged``: wanted name -> a complete temporary file in ``folder``.
    ``listed``: the names readers trust now (the old set); a new file whose
    wanted name is listed gets a generation tag (:func:`generation_name`)
    so that no trusted file is touched before the switch. The steps:
    ``announce(new names)`` (record them as not yet trusted), rename the
    temporary files (after ``fsync``), ``switch(new names)`` (the one atomic
    step: the caller rewrites its manifest with :func:`write_atomic`), then
    delete the old files. Returns the new names, in ``staged`` order. Call it
    under :func:`folder_lock`.
    """
    folder, listed = Path(folder), set(listed)
    finals = [w if w not in listed else generation_name(w, generation) for w in staged]
    announce(finals)
    for tmp, final in zip(staged.values(), finals, strict=True):
        _fsync_file(tmp)
        os.replace(tmp, folder / final)
    fsync_folder(folder)
    switch(finals)
    for old in listed - set(finals):
        remove_unless_open(folder / old)
    fsync_folder(folder)
    return finals


def remove_unless_open(path: Path) -> bool:
    """Delete ``path`` (gone already is fine); False where the system refuses because a
    reader holds it open (Windows' sharing rules: ``PermissionError``). The file is then
    left as it is: no manifest lists it any more, and the set's next write removes it."""
    try:
        path.unlink(missing_ok=True)
    except PermissionError:
        return False
    return True
