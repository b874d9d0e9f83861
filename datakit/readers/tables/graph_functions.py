"""The kit's own ``tf.data`` functions are traced as written: AutoGraph does not convert them.

``map``, ``filter``, ``interleave``, ``flat_map`` and ``scan`` hand their function to
AutoGraph, which reads its source and rewrites it (and each function it calls, in turn) so
that a Python ``if``, ``for`` or ``while`` on a tensor becomes graph control flow. The
rewrite costs about 35 ms of CPU per function, once per process: about 1.3 CPU s the first
time a process builds the CSV reader (some 36 functions), paid again by every notebook
kernel, test worker and resumed child. The kit's functions need none of it: they branch on
tensors with ``tf.cond`` and ``tf.where``, and in Python on Python values only, so the
rewrite would change nothing.

The rule: a function the kit hands to ``tf.data`` (or returns for its caller to hand
to it) is wrapped in :func:`as_written` where it is defined. What it calls is traced as
written too, ``tf.data`` functions built inside it included (AutoGraph is off within it).
A learner's own function is converted as usual: only the kit's are marked. A marked
function that calls a function it was given (``decoded_chunks``' ``decode``) traces that
one as written as well: write it with ``tf.cond``, not ``if``, on a tensor.
``tests/test_csv_reader.py`` checks that building the CSV reader converts none of the kit's
functions.

>>> import tensorflow as tf
>>> halve = as_written(lambda x: x // 2)
>>> [int(v) for v in tf.data.Dataset.range(4).map(halve)]
[0, 0, 1, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import tensorflow as tf

__all__: list[str] = []

_F = TypeVar("_F", bound=Callable[..., Any])


def as_written(fn: _F) -> _F:
    """``fn``, traced as written when ``tf.data`` calls it: AutoGraph converts neither it nor
    what it calls (``tf.autograph.experimental.do_not_convert``)."""
    return cast(_F, tf.autograph.experimental.do_not_convert(fn))
