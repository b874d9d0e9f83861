"""The folder of a tf.Transform run: one generation, switched to in one step, and its record.

The record (the plan file) holds the :class:`TransformJob` the run computed.

:func:`datakit.readers.tf_transform.transform.run_transform` has Beam write the transform graph and
the transformed rows in a hidden folder (``.run.<pid>-<hex>.tmp``, staged by
:class:`datakit.core.atomic.Staging`, which removes it and names a full disk); :func:`commit_run`
renames it to ``run-<N>/`` and then rewrites the plan file (:data:`JOB_FILE`) to name it,
in one atomic write: before that write a reader sees the earlier run whole, after it the
new one. The plan file also records what the run was made from (each source file's
path and stamp: size, modification and change times, inode) and the files of the
transformed rows with their sizes. Only then are the earlier run's files deleted. A run
killed at any step leaves the plan file naming a complete run; the next run removes what
the killed one left.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass

from datakit.core.atomic import folder_lock, fsync_folder, process_alive, write_atomic
from datakit.core.errors import DataError
from datakit.core.file_facts import STAMP_FIELDS, change, stamp_record
from datakit.readers.tables.table_stats import NUMBER, TEXT

__all__: list[str] = []

#: The job's description and the run it names (its name from the first version, kept so
#: earlier outputs still load: there it held the job alone, the run beside it).
JOB_FILE = "datakit_transform_plan.json"
#: The plan file's format tag since runs are committed as one generation (``run-<N>/``).
RUN_FORMAT = "datakit-transform-run"

#: Extra outputs of the preprocessing_fn that expose each number's mean and std (not features).
MEAN, STD = "__mean", "__std"
@dataclass
class TransformJob:
    """What :func:`run_transform` computes: files, kinds, kept columns, label, vocabulary caps."""

    files: list[str]
    header: list[str]
    kinds: dict[str, str]
    columns: list[str]
    label: str
    max_vocabulary: dict[str, int | None]
    rows: int

    @property
    def numbers(self) -> list[str]:
        return [c for c in self.columns if c != self.label and self.kinds[c] == NUMBER]

    @property
    def texts(self) -> list[str]:
        return [c for c in self.columns if c != self.label and self.kinds[c] == TEXT]


def check_output_folder(output_dir: str) -> None:
    """Refuse a folder that holds files other than an earlier run's (dead writers' ignored)."""
    if "://" in output_dir:
        raise ValueError(f"output_dir={output_dir!r}: a run is committed by renaming inside its "
                         "folder, which object stores such as gs:// cannot do atomically; "
                         "pass a folder every worker sees at the same path (a local disk, an "
                         "NFS or gcsfuse mount).")
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise NotADirectoryError(f"output_dir={output_dir!r} is a file, not a folder: pass a "
                                 "new or empty folder (or an earlier run's output folder)")
    if not os.path.isdir(output_dir):
        os.makedirs(output_dir)
        return
    for entry in os.scandir(output_dir):
        m = re.fullmatch(r"\.run\.(\d+)-[0-9a-f]+\.tmp", entry.name)
        if m and not process_alive(int(m.group(1))):  # a killed run's hidden folder
            shutil.rmtree(entry.path, ignore_errors=True)
    names = sorted(n for n in os.listdir(output_dir) if not n.startswith("."))
    if JOB_FILE not in names:  # a first run killed before its switch left only run-<N>/
        names = [n for n in names if not re.fullmatch(r"run-\d+", n)]
    if names and JOB_FILE not in names:
        raise FileExistsError(
            f"{output_dir} holds files that are not a tf.Transform run's ({', '.join(names[:3])}"
            f"{', ...' if len(names) > 3 else ''}): run_transform replaces an earlier run's "
            "output only, and deletes nothing else. Pass a new or empty folder.")


def source_facts(files: Iterable[str | os.PathLike]) -> list[dict]:
    """Each source file's path and stamp (:mod:`datakit.core.file_facts`), as the plan keeps it."""
    return [{"path": os.path.abspath(f), **stamp_record(f)} for f in files]


def check_unchanged(made_from: list[dict]) -> None:
    """A :class:`DataError` naming the first source file that changed since ``made_from``."""
    for then in made_from:
        changed = change(then["path"], [then[k] for k in STAMP_FIELDS])
        if changed is not None:
            raise DataError(then["path"], f"changed while tf.Transform read it ({changed}): "
                            "the run would mix two versions of the file; nothing was written. "
                            "Run it again once the file is final.")


def commit_run(stage: str, output_dir: str, job: dict, made_from: list[dict]) -> None:
    """Make the staged run the folder's run in one step: rename it in, switch the plan file.

    ``stage`` is the run's folder staged by the writer's :class:`datakit.core.atomic.Staging`
    (``stage.subfolder("run")``). Before the switch (the plan file's atomic rewrite)
    readers see the earlier run whole; after it, the new one. Then the earlier run's
    files go. A switch that fails puts the run back under its staged name, for the
    Staging to remove.
    """
    with folder_lock(output_dir):
        old = read_plan_file(output_dir)
        generation = old.get("generation", 0) + 1 if old else 1
        folder = f"run-{generation}"
        shutil.rmtree(os.path.join(output_dir, folder), ignore_errors=True)  # a killed commit's
        os.rename(stage, os.path.join(output_dir, folder))
        fsync_folder(output_dir)
        try:
            transformed = [{"file": f"{folder}/{n}", "bytes": os.path.getsize(
                os.path.join(output_dir, folder, n))} for n in sorted(os.listdir(
                    os.path.join(output_dir, folder))) if n.startswith("transformed-")]
            plan = {"format": RUN_FORMAT, "generation": generation, "folder": folder,
                    "job": job, "transformed": transformed,
                    "made_from": {"files": made_from, "seed": None}}  # nothing drawn at random
            write_atomic(os.path.join(output_dir, JOB_FILE), json.dumps(plan, indent=1) + "\n")
        except BaseException:  # back to its staged name: the writer's Staging removes it
            os.rename(os.path.join(output_dir, folder), stage)
            raise
        for name in os.listdir(output_dir):  # the earlier run, in any layout
            path = os.path.join(output_dir, name)
            if name not in (JOB_FILE, folder) and not name.startswith("."):
                shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
        fsync_folder(output_dir)


def read_plan_file(output_dir: str) -> dict | None:
    path = os.path.join(output_dir, JOB_FILE)
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(path, f"not valid JSON ({e}): the run's plan file was damaged; run "
                        "run_transform again into a new folder") from None
