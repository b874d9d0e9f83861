"""A binary cache of parsed rows for the second epoch on, named after what it holds.

``Dataset.cache(filename)`` after parsing makes the first epoch parse and
write the tensors, and every later epoch read them back. It has three
pitfalls, measured in TF 2.21 (``tests/test_arrow.py``):

- **A stale cache.** A cache file is found by its name only: after the
  source files change, a dataset with the same ``filename`` silently reads
  the old rows. :func:`cache_prefix` names the cache after the files'
  contents (the sha256 the kit's manifest lists, or one computed here) and
  everything that shapes the parsed tensors (the statistics, label, scaling,
  output, the skipped lines), so a changed source or option gets a new cache.
- **A partial epoch.** An iterator dropped before the end (``take``, a
  ``break``) does not leave a short cache: TensorFlow discards what it wrote,
  and the next epoch parses again. (Keras' ``fit(steps_per_epoch=...)`` keeps
  one iterator across epochs, so its cache fills once a whole pass is read.)
- **A writer killed mid-epoch** leaves a ``.lockfile`` that makes the next run
  fail ("concurrent caching iterator running"). :func:`cache_prefix` removes
  such leftovers of its own name (with a warning) when no complete cache is
  there; so two processes must not write the same cache at once.

A complete cache is ``<prefix>.index`` plus ``<prefix>.data-*`` files; a new
name never deletes another (delete the folder to reclaim the space).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from datakit.core import manifest
from datakit.core.paths import PathArg, user_path
from datakit.readers.tables.file_set import FolderManifests

__all__: list[str] = []

#: Bumped when what the reader caches changes shape.
CACHE_VERSION = 1


def _file_digest(path: str, manifests: FolderManifests) -> dict:
    entry = manifests.entry(path)
    digest = entry["sha256"] if entry else manifest.sha256(path)  # listed: checked on reading
    return {"path": os.path.abspath(path), "bytes": os.path.getsize(path), "sha256": digest}


def cache_key(files: list[str], **options: Any) -> str:
    """A hex digest of the files' contents and the options that shape the parsed tensors.

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "a.csv")
    >>> _ = open(p, "w").write("x\\n1\\n")
    >>> a = cache_key([p], label="x")
    >>> a == cache_key([p], label="x"), a == cache_key([p], label="y")
    (True, False)
    >>> _ = open(p, "w").write("x\\n2\\n")
    >>> a == cache_key([p], label="x")
    False
    """
    manifests = FolderManifests()  # each folder's manifest read once
    what = {"version": CACHE_VERSION, "files": [_file_digest(f, manifests) for f in files],
            "options": options}
    text = json.dumps(what, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def is_complete(prefix: str) -> bool:
    """Whether a cache written under ``prefix`` was finished (its index is there)."""
    return os.path.exists(prefix + ".index")


def cache_prefix(folder: PathArg, files: list[str], **options: Any) -> str:
    """The ``Dataset.cache`` filename for these files and options, inside ``folder``.

    Creates ``folder``; removes a killed writer's lock and partial files for
    this name (warning) when the cache is not complete. TensorFlow writes the
    cache itself, as one commit (its ``.index`` last): a full disk while it
    writes is its ``ResourceExhaustedError`` naming the file ("No space left on
    device"), raised where the epoch is read, and it deletes what it wrote;
    finished caches beside it are kept.
    """
    folder = Path(user_path(folder))
    blocked = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        where = "is a file" if blocked == folder else f"is under {str(blocked)!r}, a file"
        raise NotADirectoryError(f"cache={str(folder)!r} {where}: pass a folder for the "
                                 "cache files (it is created if needed).")
    folder.mkdir(parents=True, exist_ok=True)
    prefix = str(folder / f"csv-{cache_key(files, **options)}")
    leftovers = sorted(glob.glob(glob.escape(prefix) + "_*"))
    if leftovers and not is_complete(prefix):
        for f in leftovers:
            os.unlink(f)
        warnings.warn(f"removed {len(leftovers)} file(s) of an unfinished cache "
                      f"({os.path.basename(leftovers[0])} ...): a writer was interrupted, so "
                      "this epoch parses again and writes the cache anew", stacklevel=3)
    return prefix
