"""The time record a traced ``tf.data`` element carries, stamped inside the graph.

A traced element is ``(value, {"trace:<stage>,<stage>,...": record})``: the
stage names travel in the dict key (free at run time), the record is one
float64 tensor ``[id, start_1, end_1, start_2, end_2, ...]``, one pair per
stage, taken with ``tf.timestamp()`` inside the pipeline's own functions.
:func:`stamp_around` takes such a pair around any graph work,
:func:`add_stage` appends one to a trace, :func:`trace_record` makes the
trace of a source that stamps itself:

>>> import tensorflow as tf
>>> out, times = stamp_around(lambda: tf.constant(3) * 2)
>>> int(out), times.shape.as_list(), bool(times[0] <= times[1])
(6, [2], True)
>>> list(trace_record(["open", "read"], tf.zeros(5, tf.float64)))
['trace:open,read']

:mod:`datakit.perf.timeline` builds on it (``tag``, ``timed``, ``between``)
and reads the records back into a ``Timeline``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import tensorflow as tf

__all__: list[str] = []

#: The trace dict's only key: ``TRACE`` + comma-separated stage names.
TRACE = "trace:"


def is_traced(element: Any) -> bool:
    """Whether ``element`` (a value or an element spec) is ``(value, trace)``."""
    return (isinstance(element, tuple) and len(element) == 2 and isinstance(element[1], dict)
            and len(element[1]) == 1 and next(iter(element[1])).startswith(TRACE))


def trace_record(stages: list[str], record: tf.Tensor) -> dict:
    """The trace part of an element, for a source that stamps its own stages.

    ``record`` is ``[id, start_1, end_1, start_2, end_2, ...]`` (float64), one
    pair per stage in ``stages``; see :func:`datakit.perf.synthetic.synthetic_files`.
    """
    for name in stages:
        check_stage_name(name)
    return {TRACE + ",".join(stages): record}


def stamp_around(make: Callable[[], Any]) -> tuple[Any, tf.Tensor]:
    """Run ``make()`` between two timestamps; return its output and ``[t0, t1]``."""
    t0 = tf.timestamp()
    with tf.control_dependencies([t0]):  # every op made in here waits for t0
        out = tf.nest.map_structure(tf.identity, make())
    with tf.control_dependencies([t0, *tf.nest.flatten(out)]):
        t1 = tf.timestamp()
    return out, tf.stack([t0, t1])


def add_stage(trace: dict, name: str, times: tf.Tensor) -> dict:
    """``trace`` with stage ``name`` appended, stamped ``times`` (``[t0, t1]``, each row)."""
    (key, record), = trace.items()
    shape = tf.concat([tf.shape(record)[:-1], [2]], 0)  # one row per element, also in a batch
    key += ("," if key != TRACE else "") + name
    return {key: tf.concat([record, tf.broadcast_to(times, shape)], -1)}


def check_stage_name(name: str) -> None:
    """A stage name is a short word (it goes in the trace key, comma-separated)."""
    if not isinstance(name, str):
        raise TypeError(f"stage name must be a str such as 'parse', got {name!r}")
    if not re.fullmatch(r"[A-Za-z][\w ]*", name):
        raise ValueError(f"stage name must be a short word such as 'parse', got {name!r}")
