"""What a video's probe learned, kept per file so that a second run does not probe it again.

Probing a file reads its whole index (one packet per frame) and decodes its
first frame and its last group of frames: for a 60 s video about 0.1-0.7 s
of CPU. The facts found (timestamps, keyframes, size, rotation, pixel aspect ratio,
codec; after a listing with ``verify_frames=True`` also whether every frame decoded, and
where not: :mod:`datakit.readers.video.decoding.frame_check`, so that full check too is paid once
per file) are stored in one small JSON file per video under the kit's cache folder
(``video-probes`` in :func:`datakit.core.environment.cache_dir`: ``~/.cache/datakit`` on
Linux, ``~/Library/Caches/datakit`` on macOS, ``%LOCALAPPDATA%\\datakit\\Cache`` on
Windows, or ``DATAKIT_CACHE``; ``DATAKIT_PROBE_CACHE=off`` (or ``0``, ``false``, ``no``)
turns it off, ``DATAKIT_PROBE_CACHE=<folder>`` moves it), named by a hash of the video's
absolute path. An entry is trusted only when the video's path and stamp (its
size, modification and change times and inode: :mod:`datakit.core.file_facts`)
are those it was stored with: a replaced or edited video is probed again, one
copied over keeping its size and modification time (``cp -p``) included. A
cache that cannot be written (a read-only home) is skipped without a word; the
probe then runs each time.

>>> import os, tempfile
>>> os.environ["DATAKIT_PROBE_CACHE"] = tempfile.mkdtemp()
>>> video = os.path.join(tempfile.mkdtemp(), "v.mp4")
>>> open(video, "wb").write(b"not a real video")
16
>>> from datakit.core.file_facts import file_stamp
>>> store(video, file_stamp(video), {"frames": 3})
>>> load(video, file_stamp(video))
{'frames': 3}
>>> os.utime(video, ns=(1, 1))  # touched: the old entry is not trusted
>>> load(video, file_stamp(video)) is None
True
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from datakit.core.environment import cache_dir, env_folder, env_switch_or_none
from datakit.core.file_facts import Stamp

__all__: list[str] = []

#: Bumped whenever the stored facts change meaning: older entries are then ignored. 5: the
#: pixel aspect ratio and the size as shown; an entry may hold ``verified`` (every frame
#: decoded, ``verify_frames=True``: where decoding failed, if it did); an entry without it
#: was probed only. (Entries of 4 and before are never read, so none is taken for a
#: checked file.)
VERSION = 5


def cache_folder() -> Path | None:
    """Where the entries live, or ``None`` when ``DATAKIT_PROBE_CACHE`` says no (``off``,
    ``0``, ``false``, ``no``); a spelling of yes, or nothing, is the default folder; else
    the folder it names (``~`` expanded)."""
    switch = env_switch_or_none("DATAKIT_PROBE_CACHE")
    if switch is False:
        return None
    return (None if switch else env_folder("DATAKIT_PROBE_CACHE")) or cache_dir("video-probes")


def _entry(path: str) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    key = hashlib.sha1(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
    return folder / f"{key}.json"


def load(path: str, stamp: Stamp) -> dict | None:
    """The facts stored for ``path`` with this ``stamp``, else ``None``."""
    entry = _entry(path)
    try:
        stored = json.loads(entry.read_text()) if entry is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("version") != VERSION \
            or stored.get("path") != os.path.abspath(path) \
            or stored.get("stamp") != list(stamp):
        return None
    return stored.get("facts")


def store(path: str, stamp: Stamp, facts: dict) -> None:
    """Keep ``facts`` for ``path`` as it was at ``stamp`` (atomically; errors ignored)."""
    from datakit.core.atomic import write_atomic

    entry = _entry(path)
    if entry is None:
        return
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(entry, json.dumps({"version": VERSION, "path": os.path.abspath(path),
                                        "stamp": list(stamp), "facts": facts}))
    except OSError:
        pass
