"""What an iterator checkpoint remembers of its pipeline and its files, checked before a resume.

An iterator checkpoint restores the pipeline *it* saved (TensorFlow keeps
the dataset's graph in the checkpoint), so a resume can go wrong without any
error: a pipeline rebuilt with another batch size still gives batches of the
old size, and files rewritten since the save (the same names, a new
generation of the set) give one epoch mixing the old rows and the new ones.
The fingerprint (:func:`pipeline_fingerprint`) records, beside the checkpoint, what must
not change:

- the pipeline: every top-level op of the dataset's graph with its constant
  inputs (batch sizes, buffer sizes, seeds, file names);
- every file the graph names (and every file a folder it names lists in its
  ``manifest.json``): bytes, modification time, sha256, and the set and
  generation the manifest gives it;
- the checkpoint's own files (bytes and sha256), so a truncated or corrupted
  checkpoint is named before TensorFlow fails on it.

:func:`pipeline_change` compares the saved ops with the rebuilt pipeline's, and
:func:`input_changes` the saved files with the present ones; each returns the
first change, in words that name the op or the file (``None``: nothing changed).

>>> import tensorflow as tf
>>> a = pipeline_ops(tf.data.Dataset.range(10).batch(4))
>>> b = pipeline_ops(tf.data.Dataset.range(10).batch(3))
>>> print(pipeline_change(a, b))  # doctest: +NORMALIZE_WHITESPACE
BatchDatasetV2 input 1: saved 4, rebuilt 3; in words: the argument 'batch_size' differs
(a reader argument such as batch_size, shuffle_buffer_size or a column choice sets it).
Pass the saved value
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datakit.core import manifest
from datakit.core.atomic import write_atomic
from datakit.core.errors import DataError
from datakit.core.file_facts import STAMP_FIELDS, stamp_record

if TYPE_CHECKING:  # TensorFlow is imported when a function needs it
    import tensorflow as tf

__all__: list[str] = []

SUFFIX = ".datakit.json"  # beside the checkpoint: iterator-1.datakit.json


def _const_value(node: Any) -> Any:
    import tensorflow as tf

    t = node.attr["value"].tensor
    if tf.dtypes.as_dtype(t.dtype) in (tf.resource, tf.variant):
        return None
    value = tf.io.parse_tensor(t.SerializeToString(), tf.dtypes.as_dtype(t.dtype)).numpy()
    value = value.tolist() if hasattr(value, "tolist") else value  # a scalar string: bytes
    return _text(value)


def _text(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [_text(v) for v in value]
    return value


def pipeline_ops(dataset: tf.data.Dataset) -> list[list]:
    """The dataset's top-level ops, in graph order: ``[op, [constant inputs or None]]``."""
    import tensorflow as tf

    from datakit.perf.chain import serialized_graph

    graph = tf.compat.v1.GraphDef.FromString(serialized_graph(dataset))
    consts = {n.name: _const_value(n) for n in graph.node if n.op == "Const"}
    return [[n.op, [consts.get(i.split(":")[0]) for i in n.input]]
            for n in graph.node if n.op != "Const"]


#: The input that holds the *global* half of an op's seed pair (``tf.random.set_seed``'s, or
#: TensorFlow's default when none is set): a fresh process that did not call set_seed differs
#: there alone, and TensorFlow resumes the saved pipeline with its saved seeds, so the
#: continuation is right. The op's own ``seed=`` (the next input) is still compared.
GLOBAL_SEED_INPUT = {"ShuffleDatasetV3": 2, "ShuffleAndRepeatDatasetV2": 2, "RandomDataset": 0,
                     "RandomDatasetV2": 0, "SamplingDataset": 1}


def pipeline_change(saved: list, rebuilt: list) -> str | None:
    """The first difference between two :func:`pipeline_ops` lists, as a phrase, or None."""
    for (op_a, in_a), (op_b, in_b) in zip(saved, rebuilt, strict=False):
        if op_a != op_b:
            return f"the op {op_a} was saved where the rebuilt pipeline has {op_b}"
        g = GLOBAL_SEED_INPUT.get(op_a)
        if g is not None:  # TensorFlow turns the seed pair (0, 0) into (0, 2**31 - 1)
            in_a, in_b = _op_seed_zero(in_a, g), _op_seed_zero(in_b, g)
        differ = [(k, x, y) for k, (x, y) in enumerate(zip(in_a, in_b, strict=False))
                  if x != y and k != g]
        if differ:  # a file list first: it says why the other inputs moved (a video added)
            k, x, y = next((d for d in differ if _paths(d[1]) or _paths(d[2])), differ[0])
            return (f"{op_a} input {k}: saved {_short(x)}, rebuilt {_short(y)}; in words: "
                    + _in_words(_input_name(op_a, k, len(in_a)), x, y))
    if len(saved) != len(rebuilt):
        return f"the saved pipeline has {len(saved)} ops, the rebuilt one {len(rebuilt)}"
    return None


def _input_name(op: str, k: int, n: int) -> str | None:
    """The name TensorFlow gives input ``k`` (of ``n``) of ``op`` (``batch_size``), or None."""
    from tensorflow.python.framework import op_def_registry

    op_def = op_def_registry.get(op)
    if op_def is None:
        return None
    args = list(op_def.input_arg)
    lists = [i for i, a in enumerate(args) if a.number_attr or a.type_list_attr]
    if k < (lists[0] if lists else len(args)):
        return args[k].name
    if len(lists) == 1 and n - k <= len(args) - lists[0] - 1:  # after the one list: from the end
        return args[len(args) - (n - k)].name
    return None


def _paths(value: Any) -> list[str]:
    """The strings of a constant that look like file paths."""
    items = value if isinstance(value, list) else [value]
    return [i for i in items if isinstance(i, str) and os.sep in i]


def _in_words(name: str | None, saved: Any, rebuilt: Any) -> str:
    """What differs, for a learner: the file list, the seed, or the argument by its name."""
    if _paths(saved) or _paths(rebuilt):
        gone = sorted(set(_paths(saved)) - set(_paths(rebuilt)))
        new = sorted(set(_paths(rebuilt)) - set(_paths(saved)))
        said = [f"{len(gone)} file(s) only in the saved one (first: {gone[0]})"] if gone else []
        said += [f"{len(new)} file(s) only in the rebuilt one (first: {new[0]})"] if new else []
        return ("the file list differs: " + ("; ".join(said) or "the same files in another "
                                             "order") + ". Pass the files the saved reader read")
    if name and "seed" in name:
        return "the seed differs (a reader's seed= or a shuffle's). Pass the saved seed"
    what = f"the argument {name!r}" if name else "an argument of this step"
    return (f"{what} differs (a reader argument such as batch_size, shuffle_buffer_size or "
            "a column choice sets it). Pass the saved value")


def _op_seed_zero(inputs: list, g: int) -> list:
    """``inputs`` with an op seed of 0 as 0: TensorFlow stores the pair (0, 0) as (0, 2**31 - 1)."""
    if len(inputs) > g + 1 and inputs[g] == 0 and inputs[g + 1] == 2**31 - 1:
        return inputs[:g + 1] + [0] + inputs[g + 2:]
    return inputs


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def input_files(ops: list) -> list[str]:
    """Files the pipeline names: string constants that are files, and files of named folders."""
    found: list[str] = []
    for _, inputs in ops:
        for value in inputs:
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, str) or not item or len(item) > 4096:
                    continue
                if os.path.isfile(item):
                    found.append(os.path.abspath(item))
                elif os.path.isfile(item + ".index"):  # a finished cache(filename): its files
                    found += [os.path.abspath(f) for f in checkpoint_files(item)]
                elif os.path.isdir(item):
                    found += [os.path.abspath(os.path.join(item, e["file"]))
                              for e in _listed(item)]
    return sorted(set(found))


def _listed(folder: str) -> list[dict]:
    try:
        man = manifest.read_manifest(folder)
    except DataError:
        return []
    return [dict(e, set=n, generation=s.get("generation", 1))
            for n, s in (man or {"sets": {}})["sets"].items() for e in s["files"]]


WHOLE_HASH_BYTES = 256 << 20  # hashed whole at most per checkpoint; beyond it, only the ends


def _ends_sha256(path: str, size: int) -> str:
    """The SHA-256 of a file's first and last MiB: a cheap check of a large file."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read(1 << 20))
    return h.hexdigest()


def input_fingerprint(path: str, whole: bool | None = None) -> dict:
    """What the fingerprint keeps of one input file: bytes, modification time, sha256 and
    (if a manifest lists it) set and generation.

    With ``whole=False`` (and by default for a file over ``WHOLE_HASH_BYTES``, a long
    video) it holds the sha256 of the file's first and last MiB instead (``sha256_ends``),
    and the file's stamp (:mod:`datakit.core.file_facts`: modification and change times,
    inode) is then compared too: a file touched, copied over keeping its size and time
    (``cp -p``) or given other permissions counts as changed, as its middle is not hashed.
    """
    st = stamp_record(path)
    facts: dict = {"bytes": st["bytes"], "mtime_ns": st["mtime_ns"]}
    if whole is None:
        whole = st["bytes"] <= WHOLE_HASH_BYTES
    if whole:
        facts["sha256"] = manifest.sha256(path)
    else:
        facts.update(st, sha256_ends=_ends_sha256(path, st["bytes"]))
    name = os.path.basename(path)
    for e in _listed(os.path.dirname(path)):
        if e["file"] == name:
            facts.update(set=e["set"], generation=e["generation"])
    return facts


def inputs_facts(files: list[str]) -> dict[str, dict]:
    """:func:`input_fingerprint` of every input, hashing ``WHOLE_HASH_BYTES`` whole at most in all:
    the files after that (a folder of many videos) are checked by their ends, size and
    modification time, as hashing them whole at every save and resume would take minutes."""
    facts, hashed = {}, 0
    for f in files:
        size = os.path.getsize(f)
        whole = hashed + size <= WHOLE_HASH_BYTES
        hashed += size if whole else 0
        facts[f] = input_fingerprint(f, whole)
    return facts


def unfinished_caches(ops: list) -> list[str]:
    """The ``cache(filename)`` steps of the pipeline whose first pass has not ended yet.

    Until its first pass ends, a file cache is a half-written file that the saving
    process owns (and removes when its iterator goes): no other process can go on
    writing it, so a checkpoint taken then cannot be resumed.
    """
    return [str(inputs[1]) for op, inputs in ops
            if op.startswith("CacheDataset") and len(inputs) > 1
            and isinstance(inputs[1], str) and inputs[1]
            and not os.path.isfile(inputs[1] + ".index")]


def checkpoint_files(prefix: str) -> list[str]:
    """The files of checkpoint ``prefix``: its ``.index`` and ``.data-*`` shards."""
    folder, stem = os.path.split(os.fspath(prefix))
    return sorted(os.path.join(folder, f) for f in os.listdir(folder or ".")
                  if f == stem + ".index" or f.startswith(stem + ".data-"))


def pipeline_fingerprint(dataset: tf.data.Dataset, prefix: str) -> dict:
    """What :func:`differences` checks later, for ``dataset`` saved at ``prefix``."""
    ops = pipeline_ops(dataset)
    return {"pipeline": ops,
            "inputs": inputs_facts(input_files(ops)),
            "checkpoint": {os.path.basename(f): {"bytes": os.path.getsize(f),
                                                 "sha256": manifest.sha256(f)}
                           for f in checkpoint_files(prefix)}}


def save_fingerprint(dataset: tf.data.Dataset, prefix: str) -> Path:
    """Write :func:`pipeline_fingerprint` beside the checkpoint (``prefix + SUFFIX``)."""
    return write_atomic(prefix + SUFFIX, json.dumps(pipeline_fingerprint(dataset, prefix)) + "\n")


def load_fingerprint(prefix: str) -> dict | None:
    """The fingerprint saved beside ``prefix``, or None (a checkpoint saved without the kit)."""
    try:
        return json.loads(Path(prefix + SUFFIX).read_text())
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(prefix + SUFFIX, f"not valid JSON ({e}): the checkpoint's record was "
                        "damaged; save the checkpoint again") from None


def check_checkpoint_files(prefix: str, saved: dict) -> None:
    """Raise :class:`DataError` naming a checkpoint file that is missing, cut or changed."""
    folder = os.path.dirname(os.fspath(prefix))
    for name, want in saved.items():
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            raise DataError(path, "this file of the checkpoint is missing: save it again")
        size = os.path.getsize(path)
        if size != want["bytes"]:
            raise DataError(path, f"has {size} bytes, {want['bytes']} at the save: the "
                            "checkpoint is truncated or was changed; save it again")
        if manifest.sha256(path) != want["sha256"]:
            raise DataError(path, "its sha256 differs from the save: the checkpoint is "
                            "corrupted; save it again")


_WORDS = {"sha256": "sha256", "mtime_ns": "modification time",
          "ctime_ns": "inode change time (rewritten keeping its size and time, cp -p, or its "
                      "permissions changed)",
          "inode": "inode (replaced by another file)",
          "sha256_ends": "sha256 of its first and last MiB"}


def input_changes(saved: dict) -> tuple[str, str] | None:
    """The first input file that changed since the save: ``(path, what)``, or None."""
    for path, then in saved.items():
        if not os.path.isfile(path):
            return path, "was read by the saved pipeline and is gone"
        now = input_fingerprint(path, "sha256" in then)
        if then.get("generation") is not None and now.get("generation") != then["generation"]:
            return path, (f"its set {then['set']!r} was rewritten since the save (generation "
                          f"{then['generation']} then, {now.get('generation')} now): resuming "
                          "would mix the old rows and the new ones in one epoch; start the "
                          "epoch again on the new set")
        keys = ("bytes", "sha256") if "sha256" in then else (*STAMP_FIELDS, "sha256_ends")
        changed = [k for k in keys if k in then and now.get(k) != then[k]]
        if changed:
            what = [f"{then['bytes']} bytes then, {now['bytes']} now" if k == "bytes" else
                    f"another {_WORDS[k]}" for k in changed]
            return path, (f"changed since the save ({'; '.join(what)}): resuming would mix "
                          "old and new content; start the epoch again")
    return None
