"""The chain of any ``tf.data`` pipeline, recovered from the dataset itself.

Every ``tf.data.Dataset`` keeps its input dataset(s) and, for ``map``,
``filter``, ``interleave`` and ``flat_map``, the Python function it was given,
and each transformation keeps the ``name=`` you passed. :func:`chain_of` walks
from a dataset back to its source; :func:`kind_of`, :func:`function_of`,
:func:`knob`, :func:`setting`, :func:`input_of`, :func:`name_of` and
:func:`uses_py_function` read each stage; :func:`serialized_graph` is a dataset's
graph and :func:`testing_sleep` tf.data's own testing ``sleep`` transformation. This is the
one module of the kit that reads TensorFlow's private attributes and modules: when a
TensorFlow release renames one, only this file changes (it sits in the ``perf`` layer so
that the readers, the doctor and the cluster can all use it).
:mod:`datakit.doctor.diagnosis` times the chain's prefixes; :mod:`datakit.doctor.advice`
rebuilds changed copies of it.

>>> import tensorflow as tf
>>> def double(x):
...     return x * 2
>>> ds = tf.data.Dataset.range(8).map(double, name="double").batch(4).prefetch(1)
>>> [(kind_of(d), name_of(d)) for d in chain_of(ds)]
[('range', None), ('map', 'double'), ('batch', None), ('prefetch', None)]
>>> function_of(chain_of(ds)[1]) is double, describe(chain_of(ds)[2])
(True, 'batch_size=4')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf

__all__ = ["chain_of", "describe", "serialized_graph", "kind_of", "knob", "setting"]

#: Op types that run Python inside the graph (hold the GIL, never parallelized by the runtime).
PY_OPS = ("EagerPyFunc", "PyFunc", "PyFuncStateless")
#: Stages that deliver one element per input element.
ONE_TO_ONE = {"map", "prefetch", "cache", "shuffle", "options", "assert_cardinality",
              "repeat", "take", "skip", "shard", "ignore_errors", "zip"}
_KIND_NAMES = {"tensor_slice": "from_tensor_slices", "tensor": "from_tensors",
               "text_line": "TextLineDataset", "t_f_record": "TFRecordDataset",
               "fixed_length_record": "FixedLengthRecordDataset"}

def kind_of(dataset: tf.data.Dataset) -> str:
    """The transformation's kind from its class: ``_ParallelMapDataset`` -> ``"map"``."""
    name = re.sub(r"^_*(Parallel)?|Dataset(V\d)?$", "", type(dataset).__name__)
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
    return _KIND_NAMES.get(snake, snake)


def chain_of(dataset: tf.data.Dataset) -> list:
    """The datasets from the source to ``dataset`` (the first input of each; options skipped)."""
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"diagnose() takes a tf.data.Dataset, got {type(dataset).__name__}")
    chain, d = [], dataset
    while d is not None:
        if kind_of(d) != "options":
            chain.append(d)
        d = input_of(d)  # every DatasetV2 lists its inputs (zip: several; the first leads)
    return chain[::-1]


def input_of(stage: tf.data.Dataset) -> tf.data.Dataset | None:
    """The dataset ``stage`` reads from (its first input), or None for a source.

    ``snapshot`` zips a stream of its own in front of your dataset before it
    reads it: its upstream is that zip's last input, your pipeline.
    """
    inputs = stage._inputs()
    if not inputs:
        return None
    if kind_of(stage) == "snapshot" and kind_of(inputs[0]) == "zip":
        return inputs[0]._inputs()[-1]
    return inputs[0]


def name_of(stage: tf.data.Dataset) -> str | None:
    """The ``name=`` the stage was given, or None."""
    return getattr(stage, "_name", None)


def setting(stage: tf.data.Dataset, name: str) -> Any:
    """A stage's setting as TensorFlow keeps it (``"drop_remainder"``, ``"filename"``,
    ``"reshuffle_each_iteration"``, ``"deterministic"``...), or None when it has none."""
    return getattr(stage, "_" + name, None)


def _wrapper(stage: tf.data.Dataset) -> Any:
    return getattr(stage, "_map_func", None) or getattr(stage, "_predicate", None)


def function_of(stage: tf.data.Dataset) -> Callable | None:
    """The stage's Python function (map, filter, interleave, flat_map), or None."""
    return getattr(_wrapper(stage), "_func", None)


def is_generator_source(stage: tf.data.Dataset) -> bool:
    """Whether the stage is ``from_generator`` (TensorFlow builds it as a ``flat_map``)."""
    fn = function_of(stage)
    return getattr(fn, "__module__", "") == "tensorflow.python.data.ops.from_generator_op"


def graph_ops(stage: tf.data.Dataset, *, library: bool = True) -> list[str] | None:
    """The op types of the stage's traced function (and of the functions it calls, with
    ``library``), or None for a stage without a function."""
    wrapper = _wrapper(stage)
    if wrapper is None:
        return None
    gdef = wrapper.function.graph.as_graph_def()
    ops = [n.op for n in gdef.node]
    return ops + [n.op for f in gdef.library.function for n in f.node_def] if library else ops


def py_functions(stage: tf.data.Dataset) -> list:
    """The Python functions the stage's traced function runs through ``tf.py_function`` or
    ``tf.numpy_function`` (looked up by the token TensorFlow registered them under)."""
    from tensorflow.python.ops import script_ops
    wrapper = _wrapper(stage)
    if wrapper is None:
        return []
    gdef = wrapper.function.graph.as_graph_def()
    nodes = [*gdef.node, *(n for f in gdef.library.function for n in f.node_def)]
    return [script_ops._py_funcs.get(n.attr["token"].s.decode()) for n in nodes
            if n.op in PY_OPS]


def uses_py_function(stage: tf.data.Dataset) -> bool:
    """Does the stage's traced function (or one it calls) run a ``tf.py_function`` of yours?

    The kit's own readers are known: their one ``numpy_function`` (stateless) builds the
    message of a bad CSV line and runs only on bad lines, so it is not counted.
    """
    return any(not getattr(f, "__module__", "").startswith("datakit.readers")
               for f in py_functions(stage))


def knob(stage: tf.data.Dataset, name: str) -> int | None:
    """A stage's integer knob (``"batch_size"``, ``"cycle_length"``...; -1 is AUTOTUNE), or None.

    >>> knob(tf.data.Dataset.range(4).batch(2), "batch_size"), knob(tf.data.Dataset.range(4), "x")
    (2, None)
    """
    try:
        return int(setting(stage, name))
    except (TypeError, ValueError):
        return None


def describe(stage: tf.data.Dataset) -> str:
    """The knobs of one stage that matter for speed, as text."""
    parts = []
    for attr, label in (("_num_parallel_calls", "num_parallel_calls"),
                        ("_cycle_length", "cycle_length"), ("_batch_size", "batch_size"),
                        ("_buffer_size", "buffer_size")):
        v = knob(stage, attr[1:])
        if v is not None:
            parts.append(f"{label}={'AUTOTUNE' if v == -1 else v}")
    if uses_py_function(stage):
        parts.append("py_function")
    return ", ".join(parts)


#: The integer knobs a stage record keeps (None where the stage has none).
KNOBS = ("num_parallel_calls", "cycle_length", "block_length", "batch_size", "buffer_size",
         "count")


@dataclass(frozen=True)
class StageFacts:
    """One stage of a chain, read once: its place, kind, name, knobs, settings, input and
    what its function runs.

    The doctor reads a chain into these records (:func:`stage_facts`) and asks them,
    rather than asking this module about the same stage again and again; it rebuilds a
    stage from its record (:func:`datakit.doctor.rebuild.reapply`).
    """

    index: int
    kind: str                   # map, batch, interleave, range, ...
    name: str | None            # the name= it was given
    knobs: dict[str, int | None]  # KNOBS; -1 is AUTOTUNE
    python: bool                # runs a tf.py_function / numpy_function of yours
    random: bool                # draws random numbers (a shuffle, or random ops in its function)
    cardinality: int            # tf.data's count (-1 infinite, -2 unknown)
    filename: str               # a cache's file ("" in memory, and for other stages)
    dataset: tf.data.Dataset = field(repr=False)
    upstream: tf.data.Dataset | None = field(default=None, repr=False)  # input_of: None, a source
    function: Callable | None = field(default=None, repr=False)  # map/filter/interleave's own
    generator: bool = False     # a from_generator source (TensorFlow builds it as a flat_map)
    deterministic: bool | None = None  # the order setting of a map/interleave (None: default)
    drop_remainder: bool = False  # a batch's
    reshuffle: Any = None       # a shuffle's reshuffle_each_iteration, as TensorFlow keeps it
    ops: tuple[str, ...] | None = None  # op types of its traced function (None: it has none)
    called_ops: tuple[str, ...] = ()  # op types of the functions that function calls
    tensors: tuple = field(default=(), repr=False)  # what a from_tensor(s/_slices) holds

    @property
    def label(self) -> str:
        """The name= you gave, else ``"<kind> #<index>"``."""
        return self.name or f"{self.kind} #{self.index}"

    @property
    def one_to_one(self) -> bool:
        """Whether the stage delivers one element per input element (:data:`ONE_TO_ONE`)."""
        return self.kind in ONE_TO_ONE

    @property
    def detail(self) -> str:
        """The knobs that matter for speed, as text (:func:`describe`)."""
        parts = [f"{label}={'AUTOTUNE' if v == -1 else v}" for label, v in (
            (k, self.knobs[k]) for k in ("num_parallel_calls", "cycle_length", "batch_size",
                                         "buffer_size")) if v is not None]
        return ", ".join(parts + (["py_function"] if self.python else []))


def _read_stage(k: int, d: tf.data.Dataset) -> StageFacts:
    kind, ops = kind_of(d), graph_ops(d, library=False)
    every = graph_ops(d)  # with the functions it calls
    random = kind == "shuffle" if ops is None else any("Random" in op for op in ops)
    filename = setting(d, "filename") if kind == "cache" else None
    return StageFacts(
        k, kind, name_of(d), {n: knob(d, n) for n in KNOBS}, uses_py_function(d), random,
        int(d.cardinality()), "" if filename is None else filename.numpy().decode(), d,
        upstream=input_of(d), function=function_of(d), generator=is_generator_source(d),
        deterministic={"true": True, "false": False}.get(setting(d, "deterministic")),
        drop_remainder=bool(setting(d, "drop_remainder")),
        reshuffle=setting(d, "reshuffle_each_iteration"),
        ops=None if ops is None else tuple(ops),
        called_ops=() if every is None or ops is None else tuple(every[len(ops):]),
        tensors=tuple(held_tensors(d)))


def stage_facts(chain: list) -> list[StageFacts]:
    """Each stage of ``chain`` (:func:`chain_of`) read once into a :class:`StageFacts`; a
    list of records already read is returned as it is (the doctor passes its own down).

    >>> ds = tf.data.Dataset.range(8).shuffle(8, seed=1).batch(4, name="rows")
    >>> [(s.label, s.knobs["batch_size"], s.random) for s in stage_facts(chain_of(ds))]
    [('range #0', None, False), ('shuffle #1', None, True), ('rows', 4, False)]
    >>> facts = stage_facts(chain_of(ds)); stage_facts(facts) is facts
    True
    """
    if all(isinstance(s, StageFacts) for s in chain):
        return chain
    return [_read_stage(k, d) for k, d in enumerate(chain)]


def held_tensors(stage: tf.data.Dataset) -> list:
    """The tensors a ``from_tensor_slices`` / ``from_tensors`` source holds ([] for others)."""
    return tf.nest.flatten(getattr(stage, "_tensors", None) or [])


def serialized_graph(dataset: tf.data.Dataset) -> bytes:
    """The dataset's graph as a serialized ``GraphDef`` (what a checkpoint or the service gets)."""
    return bytes(dataset._as_serialized_graph().numpy())


def testing_sleep(microseconds: int) -> Callable[[tf.data.Dataset], tf.data.Dataset]:
    """tf.data's own testing ``sleep`` transformation: each element waits inside the runtime.

    It holds no Python lock (a ``py_function`` sleep takes the GIL), for ``Dataset.apply``.
    """
    from tensorflow.python.data.experimental.ops import testing

    return testing.sleep(microseconds)
