# About 500 lines on purpose: the save, the resume and the fresh process that resumes are one
# protocol (the staged save, the record, the checks before a restore); split, each part would
# reach into the others' private names.
"""Resume a ``tf.data`` pipeline mid-epoch: a checkpoint saved here, restored in a fresh process.

``tf.train.Checkpoint(iterator=it).save(path)`` stores where an iterator is:
the position of every op, the shuffle buffer's contents, the files an
interleave has open and how far it read them. A new process rebuilds the
*same* pipeline, restores the checkpoint into a new iterator, and goes on
with the rest of the epoch. :func:`save_midway` takes ``n`` elements and
saves; :func:`resume_in_fresh_process` starts another Python process that
rebuilds the pipeline from a *recipe* (``"module:function"``, a function
returning the dataset, called with ``kwargs``), restores, and returns what
that process read (:class:`ResumingProcess`: one such process for several
checkpoints); :func:`checkpoint_bytes` is what the checkpoint costs on
disk (a shuffle buffer is saved element by element).

>>> import tempfile
>>> recipe = "datakit.readers.checkpoints.checkpoint:shuffled_range"
>>> kwargs = {"n": 8, "buffer_size": 4, "seed": 1}
>>> whole = [int(x) for x in shuffled_range(**kwargs)]
>>> first, path = save_midway(shuffled_range(**kwargs), 3, tempfile.mkdtemp())
>>> rest = resume_in_fresh_process(recipe, path, kwargs=kwargs)
>>> [int(x) for x in first + rest] == whole, sorted(whole) == list(range(8))
(True, True)

A pipeline holding a ``tf.py_function`` (or a ``numpy_function`` created with
the default ``stateful=True``) cannot be saved: TensorFlow refuses with
``FailedPreconditionError: ... EagerPyFunc is stateful``, since it cannot know
what Python state the function keeps. When the function keeps none, say so:
``tf.numpy_function(..., stateful=False)`` where you create it, or
:func:`ignore_external_state` for the whole pipeline (the restoring process
rebuilds the function from its own code).

The kit's readers resume as they are (checked by ``tests/test_checkpoint.py``,
saved mid-epoch and restored in another process, every record once):
``video.clip_dataset``, its random clip starts included (``Dataset.random``
state is saved), and ``csv_files.csv_reader_dataset`` in every parse mode (its
bad-line message is a ``tf.numpy_function`` declared ``stateful=False``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # TensorFlow is imported when a function needs it
    import tensorflow as tf

from datakit.core.arguments import check_count, check_seconds, check_seed
from datakit.core.atomic import Staging, fsync_folder, process_alive
from datakit.core.errors import DataError
from datakit.glassbox.shuffle_buffer import check_buffer_size
from datakit.readers.checkpoints.checkpoint_fingerprint import (
    SUFFIX,
    check_checkpoint_files,
    checkpoint_files,
    input_changes,
    load_fingerprint,
    pipeline_change,
    pipeline_ops,
    save_fingerprint,
    unfinished_caches,
)
from datakit.tensorflow_logs import import_tensorflow_lean

__all__ = ["save_midway", "resume_in_fresh_process", "checkpoint_bytes",
           "ignore_external_state", "shuffled_range", "to_numpy", "main"]


def to_numpy(element: Any) -> Any:
    """An element with every tensor turned into NumPy (structure kept): picklable, comparable."""
    import tensorflow as tf

    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, element)


def shuffled_range(n: int, buffer_size: int, *, seed: int = 0,
                   batch_size: int | None = None) -> tf.data.Dataset:
    """A recipe: ``range(n).shuffle(buffer_size, seed=seed)``, batched if ``batch_size`` is given.

    >>> [int(x) for x in shuffled_range(4, 1)]
    [0, 1, 2, 3]
    """
    import tensorflow as tf

    n, seed = check_count("n", n, 0), check_seed(seed)
    ds = tf.data.Dataset.range(n).shuffle(check_buffer_size(buffer_size), seed=seed)
    return ds if batch_size is None else ds.batch(check_count("batch_size", batch_size))


def ignore_external_state(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """``dataset`` with the option that lets an iterator holding a ``py_function`` be saved.

    Only right when the Python function keeps no state between calls: the
    checkpoint will not hold any.
    """
    import tensorflow as tf

    options = tf.data.Options()
    options.experimental_external_state_policy = tf.data.experimental.ExternalStatePolicy.IGNORE
    return dataset.with_options(options)


def save_midway(dataset: tf.data.Dataset, n: int, directory: str | Path) -> tuple[list[Any], str]:
    """Read ``n`` elements of ``dataset``, then save its iterator: ``(elements read, path)``.

    Each save into ``directory`` gets the next free name (``iterator-1``,
    ``iterator-2``, ...): a second save never replaces the first. Beside the
    checkpoint goes what a resume checks
    (:mod:`datakit.readers.checkpoints.checkpoint_fingerprint`): the pipeline's ops
    and constants, the files it reads and their generation.
    The new checkpoint is written in a hidden folder beside the others and moved to
    its name only when whole (its ``.index`` last): a save that fails or is killed
    leaves the earlier checkpoints restorable and no half checkpoint under a name.

    A reader with a file cache (``cache=``) saves once its first pass has ended
    (the checkpoint then reads from the finished cache, and records its files);
    during that first pass it is refused, saying so.

    Raises:
        TypeError: ``n`` is not an int, or ``dataset`` not a ``tf.data.Dataset``.
        ValueError: ``n`` is negative, or the dataset has fewer than ``n`` elements,
            or the pipeline holds Python state TensorFlow cannot save, or a file cache
            still being written (the message says what to do).
        OSError: (``ENOSPC``) the disk is full, naming ``directory``; nothing of this save
            is left there and the earlier checkpoints are as they were.
    """
    import tensorflow as tf

    check_count("n", n, 0, fix="pass how many elements to read before saving (an int >= 0)")
    if not isinstance(dataset, tf.data.Dataset):  # a list has no iterator TensorFlow can save
        raise TypeError(f"dataset must be a tf.data.Dataset, got {type(dataset).__name__}: "
                        "only a tf.data iterator can be saved; wrap the values with "
                        "tf.data.Dataset.from_tensor_slices(...)")
    it = iter(dataset)
    taken = []
    for _ in range(n):
        try:
            taken.append(to_numpy(next(it)))
        except StopIteration:
            raise ValueError(f"the dataset ended after {len(taken)} elements, before n={n}: "
                             "save earlier (a smaller n).") from None
    unfinished = unfinished_caches(pipeline_ops(dataset))
    if unfinished:
        raise ValueError(_half_written_cache(unfinished[0]))
    os.makedirs(directory, exist_ok=True)
    _clean_dead_stages(directory)
    prefix = _next_prefix(directory)
    with Staging(directory) as stage:  # a full disk: named; the hidden folder goes either way
        staged = os.path.join(stage.subfolder(os.path.basename(prefix)), os.path.basename(prefix))
        try:
            tf.train.Checkpoint(iterator=it).write(staged)
        except tf.errors.FailedPreconditionError as e:
            raise ValueError(_unsaveable(dataset, e)) from e
        save_fingerprint(dataset, staged)
        _switch(staged, prefix)
    return taken, prefix


def _switch(staged: str, prefix: str) -> None:
    """Move a complete staged checkpoint to ``prefix``: its ``.index`` last.

    A checkpoint exists for a reader (and for :func:`_next_prefix`) once its ``.index``
    is there; by then its data files and its record are in place. A save that fails
    or is killed before leaves the earlier checkpoints as they were, and no ``.index``.
    """
    files = checkpoint_files(staged) + [staged + SUFFIX]
    files.sort(key=lambda f: f.endswith(".index"))
    folder = os.path.dirname(prefix)
    for f in files:
        os.replace(f, os.path.join(folder, os.path.basename(f)))
    fsync_folder(folder)


def _clean_dead_stages(directory: str | Path) -> None:
    """Remove the staging folders of saves whose process died (see :func:`save_midway`)."""
    for entry in os.scandir(directory):
        m = re.fullmatch(r"\..+\.(\d+)-[0-9a-f]+\.tmp", entry.name)
        if m and entry.is_dir() and not process_alive(int(m.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)


def _half_written_cache(prefix: str) -> str:
    return (f"this pipeline's cache(filename) at {prefix!r} is still being written (its "
            "first pass has not ended): the half-written cache belongs to this process and "
            "no other process can go on writing it, so a checkpoint taken now could not be "
            "resumed. Run one whole epoch first (the cache is then finished and a checkpoint "
            "works, reading from it), or build the reader without cache=.")


def _next_prefix(directory: str | Path) -> str:
    taken = [int(m.group(1)) for f in os.listdir(directory)
             if (m := re.fullmatch(r"iterator-(\d+)\.index", f))]
    return os.path.join(os.fspath(directory), f"iterator-{max(taken, default=0) + 1}")


def _unsaveable(dataset: tf.data.Dataset, error: BaseException) -> str:
    from datakit.perf.chain import serialized_graph

    graph = serialized_graph(dataset)
    if b"GeneratorDataset" in graph:
        return ("this pipeline reads a Python generator (Dataset.from_generator): where the "
                "generator is lives in Python, which no checkpoint can hold. Write its elements "
                "to files first (datakit.readers.records.tfrecord_writer.ShardWriter) and read "
                "those, or resume by rebuilding the pipeline and skipping what was read "
                "(.skip(n)).")
    return ("this pipeline calls Python (a tf.py_function, or a tf.numpy_function created "
            "stateful=True), and TensorFlow cannot know what state that function keeps "
            f"({getattr(error, 'message', error)}). If it keeps none, say so: "
            "tf.numpy_function(..., stateful=False) where you create it, or "
            "datakit.readers.checkpoints.checkpoint.ignore_external_state(dataset) for the whole "
            "pipeline.")


def checkpoint_bytes(path: str) -> int:
    """Bytes on disk of the checkpoint ``path`` (its ``.index`` and ``.data-*`` files).

    Raises:
        FileNotFoundError: no checkpoint files start with ``path``.
    """
    files = checkpoint_files(path)
    if not files:
        raise FileNotFoundError(f"no checkpoint files {path}.index / {path}.data-*: pass the "
                                "path save_midway() or Checkpoint.save() returned.")
    return sum(os.path.getsize(f) for f in files)


def dataset_from_recipe(recipe: str, kwargs: dict) -> tf.data.Dataset:
    """``function(**kwargs)`` for a recipe ``"package.module:function"`` (what the child runs).

    >>> recipe = "datakit.readers.checkpoints.checkpoint:shuffled_range"
    >>> [int(x) for x in dataset_from_recipe(recipe, {"n": 3, "buffer_size": 1})]
    [0, 1, 2]
    """
    module, sep, name = recipe.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"recipe={recipe!r}: write it 'package.module:function' (a function "
                         "that returns the dataset, importable in a fresh process).")
    fn: Callable = getattr(importlib.import_module(module), name)
    return fn(**kwargs)


def resume_in_fresh_process(recipe: str, path: str, *, kwargs: dict | None = None,
                            timeout: float = 300, max_elements: int | None = None) -> list[Any]:
    """In a new Python process: rebuild ``recipe(**kwargs)``, restore ``path``, read to the end.

    Returns the elements that process read (NumPy, structure kept). The
    recipe must build the same pipeline as the one saved (same ops, same
    seeds); ``kwargs`` must be picklable. Before anything is read, a
    checkpoint saved by :func:`save_midway` is checked against what it
    recorded: its own files (truncated, corrupted), the rebuilt pipeline (a
    batch size, a buffer, a seed or a file list changed: TensorFlow would
    silently go on with the *saved* pipeline) and the files it reads (changed
    in place, or their set rewritten: one epoch would mix two versions).
    To resume several checkpoints, :class:`ResumingProcess` starts one process for all.

    Args:
        recipe: ``"package.module:function"``, importable from the current directory.
        path: the checkpoint prefix, as :func:`save_midway` returns it (not its ``.index``).
        kwargs: arguments for the recipe.
        timeout: seconds (> 0) before the process is killed (``subprocess.TimeoutExpired``).
        max_elements: stop after this many (for an endless pipeline).

    Raises:
        TypeError: ``kwargs`` is not a dict, ``timeout`` not a number.
        FileNotFoundError: no checkpoint at ``path``.
        DataError: a checkpoint file or an input file is cut or changed, naming it.
        ValueError: a ``.index``/``.data`` path for the prefix; a rebuilt pipeline
            that differs from the saved one (naming the op and the values).
        RuntimeError: the process failed otherwise; the message holds its error output.
    """
    timeout = check_seconds("timeout", timeout, positive=True, func="resume_in_fresh_process")
    with ResumingProcess(timeout=timeout) as child:
        return child.resume(recipe, path, kwargs=kwargs, max_elements=max_elements)


class ResumingProcess:
    """One fresh Python process that resumes checkpoints one after another.

    Each :meth:`resume` is :func:`resume_in_fresh_process`'s (the same checks, the same
    result, the same errors), run in a process that saved none of the checkpoints; the
    process starts at the first resume and ends at :meth:`close` (or with the ``with``
    block), so TensorFlow's import (about 3 CPU s) is paid once, not once a checkpoint.
    A resume that fails otherwise (the recipe raises, the process dies or passes
    ``timeout`` seconds) ends the process: the next resume starts another.

    >>> import tempfile
    >>> kwargs = {"n": 6, "buffer_size": 1}
    >>> saved = [save_midway(shuffled_range(**kwargs), k, tempfile.mkdtemp())[1] for k in (2, 4)]
    >>> with ResumingProcess() as child:
    ...     [[int(x) for x in child.resume(RECIPE, p, kwargs=kwargs)] for p in saved]
    [[2, 3, 4, 5], [4, 5]]
    """

    def __init__(self, *, timeout: float = 300) -> None:
        self.timeout = check_seconds("timeout", timeout, positive=True, func="ResumingProcess")
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> ResumingProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def resume(self, recipe: str, path: str, *, kwargs: dict | None = None,
               max_elements: int | None = None) -> list[Any]:
        """Restore ``path`` into ``recipe(**kwargs)`` in the process, read to the end (or
        ``max_elements``): the elements it read; see :func:`resume_in_fresh_process`."""
        if not isinstance(recipe, str) or ":" not in recipe:
            raise ValueError(f"recipe={recipe!r}: write it 'package.module:function'.")
        if kwargs is not None and not isinstance(kwargs, Mapping):
            raise TypeError(f"kwargs must be a dict of the recipe's arguments, got "
                            f"{type(kwargs).__name__} {kwargs!r}: e.g. kwargs={{'seed': 1}}")
        path = _check_prefix(os.fspath(path))  # a refusal here costs no process
        if self._process is None:
            self._start()
        self._jobs += 1
        job, out = (os.path.join(self._folder, f"{kind}-{self._jobs}.pkl") for kind in "jo")
        with open(job, "wb") as f:
            pickle.dump({"recipe": recipe, "kwargs": kwargs or {}, "path": path,
                         "max_elements": max_elements}, f)
        said_from = os.path.getsize(self._stderr)
        answer = self._ask(f"{job}\t{out}\n")
        if answer in (_DONE, _REFUSED):
            with open(out, "rb") as f:
                result = pickle.load(f)
            if answer == _REFUSED:  # a checked problem: the child pickled the error
                raise result
            return result
        process = self._process
        assert process is not None
        code = process.wait()  # it has ended (no answer): its error output is complete
        with open(self._stderr, "rb") as f:
            f.seek(said_from)
            said = f.read().decode("utf-8", "replace")
        self.close()
        raise RuntimeError(f"the resuming process failed (exit {code}):\n" + said[-3000:])

    def close(self) -> None:
        """End the process (it reads no more checkpoints); a later resume starts another."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            process.stdin.close()  # type: ignore[union-attr]  # it ends at the end of its input
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _start(self) -> None:
        self._folder = tempfile.mkdtemp(prefix="datakit-resume-")
        self._stderr, self._jobs = os.path.join(self._folder, "stderr.txt"), 0
        # the child imports what this process can: same sys.path (the kit, the caller's folder)
        here = [os.getcwd(), str(Path(__file__).resolve().parents[3])]  # the kit's folder
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(here + [p for p in sys.path if p])}
        with open(self._stderr, "wb") as err:
            self._process = subprocess.Popen([sys.executable, "-m", __name__], env=env,
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=err, text=True)
        self._answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_read_answers, args=(self._process.stdout, self._answers),
                         daemon=True).start()

    def _ask(self, line: str) -> str | None:
        """Send a job's line: the child's answer, or None when it ended without one."""
        process = self._process
        assert process is not None and process.stdin is not None
        try:
            process.stdin.write(line)
            process.stdin.flush()
        except OSError:  # it has ended already (a broken pipe): its error output says why
            return None
        try:
            return self._answers.get(timeout=self.timeout)
        except queue.Empty:
            process.kill()  # mid-job: it would not read the end of its input
            self.close()
            raise subprocess.TimeoutExpired(process.args, self.timeout) from None


def _read_answers(stream: Any, answers: queue.Queue) -> None:
    """Each line the child writes, as a word on ``answers``; None once it has ended."""
    for line in stream:
        answers.put(line.strip())
    answers.put(None)


RECIPE = "datakit.readers.checkpoints.checkpoint:shuffled_range"  # the examples' recipe
_DONE, _REFUSED = "done", "refused"  # the child's answers: read to the end; refused, named


def _check_prefix(path: str) -> str:
    """``path`` as a checkpoint prefix that exists, its files and its inputs as recorded.

    (Checked here: a refusal costs no fresh process. The rebuilt pipeline is compared
    in the fresh process, which builds it.)
    """
    m = re.fullmatch(r"(.+)\.(index|data-\d+-of-\d+)", path)
    if m:
        raise ValueError(f"{path}: pass the checkpoint's prefix {m.group(1)!r} (what save_midway "
                         f"returned), not its .{m.group(2)} file.")
    if not os.path.isfile(path + ".index"):
        raise FileNotFoundError(f"{path}: no checkpoint here ({path}.index is missing); pass the "
                                "path save_midway() or Checkpoint.save() returned.")
    record = load_fingerprint(path)
    if record is not None:
        check_checkpoint_files(path, record["checkpoint"])
        # the files it read, here, before a process starts; and before the child compares
        # the rebuilt pipeline: a rewritten set also changes the names it lists
        changed = input_changes(record["inputs"])
        if changed:
            raise DataError(*changed)
    return path


def _refusal(job: dict, dataset: tf.data.Dataset) -> Exception | None:
    """What is wrong with restoring ``job``'s checkpoint into ``dataset``, or None."""
    record = load_fingerprint(job["path"])
    if record is None:
        return None
    change = pipeline_change(record["pipeline"], pipeline_ops(dataset))
    if change:
        return ValueError(f"{job['path']}: the rebuilt pipeline differs from the saved one "
                          f"({change}). TensorFlow would go on with the saved pipeline, not the "
                          "one you built: rebuild it with the same reader arguments, files and "
                          "seed as at the save, or start the epoch again.")
    return None


def _resume(job: dict) -> tuple[str, Any]:
    """In the child: ``(_DONE, elements read)``, or ``(_REFUSED, the named error)``."""
    import tensorflow as tf

    dataset = dataset_from_recipe(job["recipe"], job["kwargs"])
    problem = _refusal(job, dataset)
    it = iter(dataset)
    if problem is None:
        try:
            # read(), not restore(): works for save() and write() checkpoints alike
            tf.train.Checkpoint(iterator=it).read(job["path"]).assert_existing_objects_matched()
        except (tf.errors.OpError, AssertionError, ValueError) as e:
            reason = getattr(e, "message", str(e)).strip().splitlines()[0][:500]
            problem = DataError(job["path"], f"this checkpoint cannot be restored into the "
                                f"pipeline ({type(e).__name__}: {reason}); save it again")
    if problem is not None:
        return _REFUSED, problem
    rest = []
    for x in it:
        rest.append(to_numpy(x))
        if job["max_elements"] is not None and len(rest) >= job["max_elements"]:
            break
    return _DONE, rest


def main(argv: list[str] | None = None) -> None:
    """The fresh process: ``python -m datakit.readers.checkpoints.checkpoint``.

    Reads a line ``job.pkl<TAB>out.pkl`` from its standard input for each resume, writes
    the answer into ``out.pkl`` and a word (``done``, ``refused``) on its standard output;
    ends at the end of its input. Whatever else it prints (TensorFlow's start-up lines, a
    recipe's own) goes to its standard error, shown only when it fails. An error in a
    recipe ends it, with the traceback. (``argv`` takes nothing: the jobs come on stdin.)
    """
    if argv:
        raise SystemExit(f"usage: python -m {__name__} (the jobs come on standard input, "
                         "from ResumingProcess), got arguments {argv}")
    import_tensorflow_lean()  # a resume only rebuilds a pipeline and reads it
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # print() of a recipe: to the error output, not into the answers
    for line in sys.stdin:
        job_path, out = line.rstrip("\n").split("\t")
        with open(job_path, "rb") as f:
            job = pickle.load(f)
        answer, result = _resume(job)
        with open(out, "wb") as f:
            pickle.dump(result, f)
        answers.write(answer + "\n")
        answers.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
    # done: its input has ended, every answer written. Shutting down an interpreter that
    # loaded TensorFlow costs about a second of CPU, for nothing here: end at once
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
