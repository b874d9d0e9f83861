"""Turn the paths and glob patterns a learner passes into the files to read, once each.

:func:`resolve_files` is the one place the kit does this:

- an existing file is taken literally, before any globbing, so ``run[1].csv``
  is that file, never ``run1.csv``;
- anything else with glob characters is a pattern, its matches sorted; a
  pattern that matches nothing is a ``FileNotFoundError``;
- a directory gets its own message (pass the files in it, or a pattern);
- ``~`` (and ``~user``) at the start is the home folder, as in a shell
  (:func:`user_path`: every path a learner passes, files, folders and outputs alike);
- **each file once**: a file that two of the paths given name themselves
  (``d/a.csv`` twice, ``d/a.csv`` and ``d/./a.csv``, or a symlink to it) is a
  ``ValueError`` naming both spellings, since no reader can tell whether it was
  meant once or twice (read more passes with ``repeat=``); a file a pattern
  matches as well (``d/*.csv`` beside ``d/b.csv``), or two overlapping patterns
  match, is kept once, in its first place: every row is read exactly once.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> for name in ("a.csv", "b.csv", "run[1].csv", "run1.csv"):
...     open(os.path.join(d, name), "w").close()
>>> patterns = [os.path.join(d, "*.csv"), os.path.join(d, ".", "a.csv")]
>>> [os.path.basename(p) for p in resolve_files(patterns)]
['a.csv', 'b.csv', 'run1.csv', 'run[1].csv']
>>> [os.path.basename(p) for p in resolve_files(os.path.join(d, "run[1].csv"))]
['run[1].csv']
>>> twice = [os.path.join(d, "a.csv"), os.path.join(d, ".", "a.csv")]
>>> resolve_files(twice)  # doctest: +NORMALIZE_WHITESPACE, +ELLIPSIS
Traceback (most recent call last):
...
ValueError: filepaths names one file, as '.../a.csv' and '.../a.csv', twice: each file is
read once; list it once (for more passes over it, pass repeat=).
>>> resolve_files(d)  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
IsADirectoryError: ... is a folder, not a file: pass the files in it, or a pattern such as
'.../*.csv'

This module imports nothing from the kit (bottom layer).
"""

from __future__ import annotations

import glob
import os

__all__ = ["one_file"]

#: A path as the kit takes one: text or an ``os.PathLike`` (``pathlib.Path``).
PathArg = str | os.PathLike
#: Files as the readers take them: a path, a glob pattern, or a list of them.
FilesArg = PathArg | list | tuple


def user_path(path: object) -> str:
    """``path`` as text, ``~`` expanded (``~/data`` is in the home folder, as a shell reads
    it, never a folder named ``~``): every path a learner passes goes through it. Not a path
    (``bytes``, a number): a ``TypeError`` naming it.

    >>> user_path("~/videos") == os.path.join(os.path.expanduser("~"), "videos")
    True
    >>> user_path("runs/~1.csv")
    'runs/~1.csv'
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{path!r} is not a path: pass str or pathlib.Path")
    return os.path.expanduser(os.fspath(path))


def _folder_message(item: str, suffix: str = ".csv") -> str:
    return (f"{item} is a folder, not a file: pass the files in it, or a pattern such as "
            f"{os.path.join(item, '*' + suffix)!r}")


def resolve_files(filepaths: FilesArg, *, what: str = "files", suffix: str = ".csv") -> list[str]:
    """The files named by ``filepaths`` (a path, a pattern, or a list of them), each once.

    Raises ``TypeError`` for something that is not a path, ``ValueError`` for
    an empty list, ``FileNotFoundError`` for a missing file or a pattern that
    matches no file, ``IsADirectoryError`` for a folder (its message suggests a
    pattern of ``suffix`` files), ``OSError`` for a path that is neither (a pipe).
    """
    if isinstance(filepaths, (str, os.PathLike)):
        items = [filepaths]
    elif isinstance(filepaths, (list, tuple)):
        items = list(filepaths)
    else:
        raise TypeError(f"filepaths={filepaths!r}: pass a path, a glob pattern, or a list of "
                        "them")
    if not items:
        raise ValueError(f"No {what} given: pass a path, a glob pattern, or a list of them.")
    _refuse_named_twice(items)
    files = [f for item in items for f in _files_of(item, suffix)]
    seen: set[str] = set()
    unique = []
    for f in files:
        key = os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


def _refuse_named_twice(items: list) -> None:
    """A ``ValueError`` when two of ``items`` name one existing file themselves (not patterns)."""
    named: dict[str, str] = {}
    for item in items:
        if isinstance(item, bytes) or not isinstance(item, (str, os.PathLike)):
            continue  # _files_of refuses it, naming it
        path = user_path(item)
        if not os.path.isfile(path):
            continue  # a pattern (or missing): its matches are kept once
        key = os.path.realpath(path)
        if key in named:
            first = named[key]
            how = repr(path) if first == path else f"one file, as {first!r} and {path!r},"
            raise ValueError(f"filepaths names {how} twice: each file is read once; list it "
                             "once (for more passes over it, pass repeat=).")
        named[key] = path


def one_file(path: PathArg) -> str:
    """``path`` as text once it names a file, taken literally (no globbing): for readers of
    one file. The errors :func:`resolve_files` gives, naming it.

    >>> import tempfile
    >>> one_file(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    IsADirectoryError: ... is a folder, not a file: pass the path of one file in it
    """
    path = user_path(path)
    if os.path.isfile(path):
        return path
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a folder, not a file: pass the path of one file in it")
    _refuse_not_regular(path)
    raise FileNotFoundError(f"{path}: file is missing")


def one_folder(path: str | os.PathLike, *, holds: str = "the files") -> str:
    """``path`` as text once it names a folder: a missing one is the ``FileNotFoundError`` a
    missing file is, for every reader of a folder; ``holds`` says what it should hold.

    >>> one_folder("no/such/folder", holds="the shards")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no/such/folder: folder is missing: pass the folder that holds the shards
    """
    path = user_path(path)
    if os.path.isdir(path):
        return path
    if os.path.exists(path):
        raise NotADirectoryError(f"{path} is a file, not a folder: pass the folder that holds "
                                 f"{holds}")
    raise FileNotFoundError(f"{path}: folder is missing: pass the folder that holds {holds}")


def _refuse_not_regular(path: str) -> None:
    """An ``OSError`` for a path that exists but is neither a file nor a folder."""
    if os.path.exists(path):
        raise OSError(f"{path} is not a regular file (a pipe, a socket or a device): pass a "
                      "file, or copy the data into one")


def _files_of(item: object, suffix: str) -> list[str]:
    """The files one path or pattern names, in order (patterns' matches sorted)."""
    path = user_path(item)  # (not a path: a TypeError naming it)
    if os.path.isfile(path):
        return [path]
    if os.path.isdir(path):
        raise IsADirectoryError(_folder_message(path, suffix))
    _refuse_not_regular(path)
    if not glob.has_magic(path):
        raise FileNotFoundError(f"{path}: no such file.")
    found = sorted(glob.glob(path))
    matched = [f for f in found if os.path.isfile(f)]
    if not matched:
        extra = (f" (only folders: {found[0]} ...)" if found else "")
        raise FileNotFoundError(f"The pattern {path!r} matches no file{extra}; check the "
                                "folder and that the files were written.")
    if len(matched) < len(found):  # a folder named like the files (old.csv/): said, not read
        import warnings

        left = [f for f in found if not os.path.isfile(f)]
        shown = ", ".join(left[:3]) + (" ..." if len(left) > 3 else "")
        warnings.warn(f"The pattern {path!r} also matches {len(left)} folder(s), not read: "
                      f"{shown}; {len(matched)} file(s) are read. If a folder holds data, "
                      "pass its files, or rename it", stacklevel=3)
    return matched
