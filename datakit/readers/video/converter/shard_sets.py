"""A conversion's sets assembled while its videos convert: each part joins its shard when ready.

A set's shard ``k`` holds the videos ``ids[k::n]`` of the set's list, in that
order (TFRecord files concatenate into a TFRecord file); the manifest says, for
each video, its shard and the byte offset of each of its records (its chunks),
so a reader can read a clip's records without the rest. :class:`ShardSets`
appends a video's part to its shard as soon as the parts before it in that
shard are there, so the shards grow (and are hashed for the manifest) while the
workers still convert and the commit at the end has little left to copy or
read; a video that failed (under ``on_bad_file="skip"``) is left out of its shard.
The sets are written in ``out/.next/`` (:mod:`~datakit.readers.video.converter.generations`): a run
stopped
before :meth:`ShardSets.commit` leaves the sets that were there untouched.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from datakit.core import manifest
from datakit.core.atomic import Staging
from datakit.core.errors import DataError
from datakit.core.paths import PathArg
from datakit.readers.records.record_framing import record_offsets
from datakit.readers.video.converter import generations

__all__ = ["write_video_set"]


def shard_names(n_videos: int, num_shards: int) -> list[str]:
    """The shard files of a set of ``n_videos``: ``num_shards`` at most, one at least."""
    n = min(num_shards, n_videos) or 1
    return [f"videos-{k:05d}-of-{n:05d}.tfrecord" for k in range(n)]


def write_video_set(folder: Path, staged: dict, counts: dict, *, class_names: Iterable[str],
                    videos: list[dict], **options: Any) -> list[str]:
    """Commit the shards ``staged`` (name -> temporary path) as ``folder``'s set of videos:
    the one manifest layout ``clip_dataset`` reads (``videos``: each one's ``id``, ``label``,
    ``frames``, ``height``, ``width``, ``shard`` and its records' offsets, ``chunks``)."""
    return manifest.write_set(folder, "videos", staged, counts, kind="tfrecord", unit="records",
                              pattern="videos-[0-9][0-9][0-9][0-9][0-9]-of-*.tfrecord",
                              compression=None, class_names=list(class_names), videos=videos,
                              **options)


#: How a growing shard is synced in the background (a test makes it fail).
_sync = os.fsync


class _Shard:
    def __init__(self, path: Path, ids: list[int]):
        self.file = open(path, "wb")  # closed by ShardSets
        self.ids, self.next, self.records = ids, 0, 0
        self.sha256 = hashlib.sha256()  # hashed as it grows: the commit need not read it again
        self.synced: Future | None = None  # its last fsync, started while it grew

    def append(self, part: Path, buffer: memoryview) -> None:
        """``part``'s bytes added at the end, through ``buffer`` (one reused for every part:
        a fresh megabyte per read cost the parent a page fault per 4 KB)."""
        with open(part, "rb", buffering=0) as src:
            while n := src.readinto(buffer):
                self.file.write(buffer[:n])
                self.sha256.update(buffer[:n])


class ShardSets:
    """The shards of ``sets`` (name -> the video ids of that set, in order), in ``out/.next/``.

    ``parts``: the folder of the videos' parts; ``names``: each video's part
    file name. Tell it of each video with :meth:`ready` (its part is written) or
    :meth:`failed`; then :meth:`commit`. Used as a context manager: leaving it
    without a commit removes what it wrote.
    """

    def __init__(self, out: Path, sets: dict[str, list[int]], parts: Path, names: list[str],
                 num_shards: int):
        self.out, self.parts, self.names = Path(out), parts, names
        self.sets = {name: ids for name, ids in sets.items() if ids or name == "train"}
        self.state: dict[int, bool] = {}  # video id -> its part is ready (False: it failed)
        self.chunks: dict[int, list[int]] = {}  # video id -> its records' offsets in its shard
        self._switching = False  # past it, .next/ is the current generation (see switch)
        self._stack = ExitStack()
        self._buffer = memoryview(bytearray(1 << 20))  # parts are copied through it
        # fsyncs while the shards grow, so that the commit's own has little left to wait on
        self._syncer = ThreadPoolExecutor(1, thread_name_prefix="datakit-shard-sync")
        self.next = generations.next_folder(self.out)
        self.stages: dict[str, Staging] = {}
        self.shards: dict[str, dict[str, _Shard]] = {}
        for name, ids in self.sets.items():
            (self.next / name).mkdir()
            stage = self.stages[name] = self._stack.enter_context(Staging(self.next / name))
            files = shard_names(len(ids), num_shards)
            self.shards[name] = {f: _Shard(stage.file(f), ids[k::len(files)])
                                 for k, f in enumerate(files)}
        self._stack.callback(self._close)

    def __enter__(self) -> ShardSets:
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._stack.__exit__(*exc)  # a full disk is said by Staging, for .next/<set>
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            said = e.strerror or str(e)
            for name in self.sets:  # said for out/<set>, the folder you asked for
                said = said.replace(os.fspath(self.next / name), os.fspath(self.out / name))
            raise OSError(e.errno, said, os.fspath(self.out)) from None
        finally:
            if not self._switching:  # stopped before the commit point: nothing of it stays
                shutil.rmtree(self.next, ignore_errors=True)

    def _close(self) -> None:
        self._syncer.shutdown(wait=True)  # no fsync left to run on a closed file
        for shards in self.shards.values():
            for shard in shards.values():
                shard.file.close()

    def ready(self, i: int) -> None:
        """Video ``i``'s part is written: it joins its shard as soon as those before it have."""
        self.state[i] = True
        self._append_what_is_ready()

    def failed(self, i: int) -> None:
        """Video ``i`` is left out of its set."""
        self.state[i] = False
        self._append_what_is_ready()

    def _append_what_is_ready(self) -> None:
        for shards in self.shards.values():
            for shard in shards.values():
                grew = False
                while shard.next < len(shard.ids) and shard.ids[shard.next] in self.state:
                    i = shard.ids[shard.next]
                    if self.state[i]:
                        part = self.parts / self.names[i]
                        at = shard.file.tell()
                        self.chunks[i] = [at + o for o in record_offsets(part)]
                        shard.append(part, self._buffer)
                        shard.records += len(self.chunks[i])
                        grew = True
                    shard.next += 1
                if grew and (shard.synced is None or (shard.synced.done()
                                                      and shard.synced.exception() is None)):
                    shard.file.flush()  # the disk writes what it holds now, in the background
                    shard.synced = self._syncer.submit(_sync, shard.file.fileno())
                # (a failed fsync is kept, not replaced: a later one on the same file may
                # succeed without reporting the lost write, and the commit must raise it)

    def kept(self, name: str) -> list[int]:
        """The videos of set ``name`` that are in it (not failed)."""
        return [i for i in self.sets.get(name, []) if self.state.get(i)]

    def commit(self, entry: dict, class_names: Iterable[str], options: dict) -> list[str]:
        """Write each set's manifest and switch the sets in as one generation; their names.

        ``entry``: each video's row of the manifest. A set all of whose videos
        failed is not written.
        """
        missing = [i for ids in self.sets.values() for i in ids if i not in self.state]
        if missing:
            raise RuntimeError(f"videos {missing[:5]} were neither ready nor failed")
        self._close()
        for name, shards in self.shards.items():  # a disk error in a background fsync, here
            for f, shard in shards.items():
                try:
                    if shard.synced is not None:
                        shard.synced.result()
                except OSError as e:
                    shown = os.fspath(self.out / name / f)
                    raise OSError(e.errno, f"the disk failed to store shard {shown} ("
                                  f"{e.strerror or e}): a failing disk, or a network share "
                                  "lost? Nothing of this run was kept (the sets there are "
                                  "the last run's); check the disk, then run "
                                  "write_video_shards again", shown) from None
        written = []
        for name, shards in self.shards.items():
            ids = self.kept(name)
            if not ids and name != "train":  # (train/ is always written, as before)
                continue
            # a shard whose videos all failed is left out, and the others numbered anew
            full = [f for f, shard in shards.items() if shard.records] or list(shards)[:1]
            renamed = dict(zip(shard_names(len(full), len(full)), full, strict=True))
            staged = {new: self.stages[name].files[f] for new, f in renamed.items()}
            shard_of = {i: new for new, f in renamed.items() for i in shards[f].ids}
            counts = {new: shards[f].records for new, f in renamed.items()}
            digests = {new: shards[f].sha256.hexdigest() for new, f in renamed.items()}
            write_video_set(self.next / name, staged, counts, digests=digests,
                            class_names=class_names,
                            videos=[dict(entry[i], shard=shard_of[i], chunks=self.chunks[i])
                                    for i in ids], **options)
            written.append(name)
        for name in self.sets:
            if name not in written:
                shutil.rmtree(self.next / name, ignore_errors=True)
        self._switching = True
        generations.switch(self.out, written)
        return written


def video_set(directory: PathArg) -> dict | None:
    """The video set that ``write_video_shards`` wrote in ``directory``'s manifest (class
    names, videos), or None."""
    try:
        man = manifest.read_manifest(directory)
    except (DataError, OSError):
        return None
    for s in (man or {"sets": {}})["sets"].values():
        if "videos" in s and "class_names" in s:
            return s
    return None
