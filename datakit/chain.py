"""The chain of any ``tf.data`` pipeline, recovered from the dataset itself.

Every ``tf.data.Dataset`` keeps its input dataset(s) and, for ``map``,
``filter``, ``interleave`` and ``flat_map``, the Python function it was given,
and each transformation keeps the ``name=`` you passed. :func:`chain_of` walks
from a dataset back to its source; :func:`kind_of`, :func:`function_of`,
:func:`knob` and :func:`uses_py_function` read each stage.
:mod:`datakit.doctor` times the chain's prefixes; :mod:`datakit.advice`
rebuilds changed copies of it.

>>> import tensorflow as tf
>>> def double(x):
...     return x * 2
>>> ds = tf.data.Dataset.range(8).map(double, name="double").batch(4).prefetch(1)
>>> [(kind_of(d), d._name) for d in chain_of(ds)]
[('range', None), ('map', 'double'), ('batch', None), ('prefetch', None)]
>>> function_of(chain_of(ds)[1]) is double, describe(chain_of(ds)[2])
(True, 'batch_size=4')
"""

from __future__ import annotations

import re

import tensorflow as tf

#: Op types that run Python inside the graph (hold the GIL, never parallelized by the runtime).
PY_OPS = ("EagerPyFunc", "PyFunc", "PyFuncStateless")
#: Stages that deliver one element per input element.
ONE_TO_ONE = {"map", "prefetch", "cache", "shuffle", "options", "assert_cardinality",
              "repeat", "take", "skip", "shard", "ignore_errors", "zip"}
_KIND_NAMES = {"tensor_slice": "from_tensor_slices", "tensor": "from_tensors",
               "text_line": "TextLineDataset", "t_f_record": "TFRecordDataset",
               "fixed_length_record": "FixedLengthRecordDataset"}

def kind_of(dataset) -> str:
    """The transformation's kind from its class: ``_ParallelMapDataset`` -> ``"map"``."""
    name = re.sub(r"^_*(Parallel)?|Dataset(V\d)?$", "", type(dataset).__name__)
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
    return _KIND_NAMES.get(snake, snake)


def chain_of(dataset) -> list:
    """The datasets from the source to ``dataset`` (the first input of each; options skipped)."""
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"diagnose() takes a tf.data.Dataset, got {type(dataset).__name__}")
    chain, d = [], dataset
    while d is not None:
        if kind_of(d) != "options":
            chain.append(d)
        inputs = d._inputs()  # every DatasetV2 lists its inputs (zip: several; the first leads)
        d = inputs[0] if inputs else None
    return chain[::-1]


def function_of(stage):
    """The stage's Python function (map, filter, interleave, flat_map), or None."""
    wrapper = getattr(stage, "_map_func", None) or getattr(stage, "_predicate", None)
    return getattr(wrapper, "_func", None)


def uses_py_function(stage) -> bool:
    """Does the stage's traced function (or one it calls) run a ``tf.py_function``?"""
    wrapper = getattr(stage, "_map_func", None) or getattr(stage, "_predicate", None)
    if wrapper is None:
        return False
    gdef = wrapper.function.graph.as_graph_def()
    ops = [n.op for n in gdef.node] + [n.op for f in gdef.library.function for n in f.node_def]
    return any(op in PY_OPS for op in ops)


def knob(stage, name: str) -> int | None:
    """A stage's integer knob (``"batch_size"``, ``"cycle_length"``...; -1 is AUTOTUNE), or None.

    >>> knob(tf.data.Dataset.range(4).batch(2), "batch_size"), knob(tf.data.Dataset.range(4), "x")
    (2, None)
    """
    try:
        return int(getattr(stage, "_" + name))
    except (AttributeError, TypeError, ValueError):
        return None


def describe(stage) -> str:
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


__all__ = ["ONE_TO_ONE", "PY_OPS", "chain_of", "describe", "function_of", "kind_of", "knob",
           "uses_py_function"]
