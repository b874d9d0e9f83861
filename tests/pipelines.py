"""Generate the same random pipeline twice: once in tf.data, once in the glass box.

A pipeline is a list of op specs, e.g. ``[("range", 7), ("repeat", 2),
("batch", 3, True)]``. ``build_tf`` and ``build_glassbox`` turn a spec into a
real ``tf.data.Dataset`` and a ``glassbox.Dataset``; the functions passed to
``map`` and ``filter`` are written once for TensorFlow and once for NumPy, from
the same spec. Other test modules reuse this to compare the two element for
element.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import tensorflow as tf

from datakit import glassbox
from datakit.core.arguments import AUTOTUNE
from datakit.glassbox.elements import leaves as _leaves
from datakit.glassbox.elements import map_structure


def _np_map(x: Any, f) -> Any:
    return map_structure(f, x)


def source_data(kind: str, n: int, rng: random.Random) -> Any:
    ints = np.array([rng.randrange(-50, 50) for _ in range(n)], dtype=np.int64)
    if kind == "array":
        return ints
    if kind == "matrix":
        return np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    if kind == "tuple":
        return (ints, np.arange(n, dtype=np.float64) / 2)
    if kind == "dict":
        return {"a": ints, "b": (np.arange(n, dtype=np.int32), np.ones((n, 2), np.float32))}
    raise ValueError(kind)


#: Ops whose input may be anything; the others need a state the generator tracks.
_ANY = ["repeat", "batch", "map", "filter", "take", "skip", "enumerate", "cache", "zip",
        "concatenate", "choose", "lengths", "window"]


def random_pipeline(rng: random.Random, max_ops: int = 5) -> list[tuple]:
    """A random spec: a source, then up to ``max_ops`` ops, including edge cases.

    It tracks the smallest rank of the element's components (``unbatch``
    needs >= 1) and whether elements are variable-length vectors (``lengths``
    made them: only ``padded_batch``/``ragged_batch`` batch them) or ragged
    batches (then only ops that do not compute on values follow).
    """
    n = rng.choice([0, 1, 2, 5, 7, 10])
    if rng.random() < 0.3:
        spec: list[tuple] = [("range", n)]
        rank = 0
    else:
        kind = rng.choice(["array", "matrix", "tuple", "dict"])
        spec = [("slices", kind, n, rng.randrange(10**6))]
        rank = 1 if kind == "matrix" else 0
    repeated, ragged, varlen = False, False, False
    for _ in range(rng.randrange(max_ops + 1)):
        if ragged:
            choices = ["repeat", "take", "skip", "cache", "unbatch", "concatenate"]
        elif varlen:
            choices = ["padded_batch", "ragged_batch", "unbatch", "take", "skip", "repeat",
                       "cache", "concatenate", "map"]
        else:
            choices = _ANY + ["padded_batch", "ragged_batch"] + (["unbatch"] if rank else [])
        op = rng.choice(choices)
        if op == "repeat":
            spec.append(("repeat", rng.choice([0, 1, 2, 3] + ([] if repeated else [None]))))
            repeated = True
        elif op == "batch":
            spec.append(("batch", rng.choice([1, 2, 3, 4, 7]), rng.random() < 0.5))
            rank += 1
        elif op == "map":
            spec.append(("map", rng.randrange(1, 5), rng.choice([None, 2, AUTOTUNE])))
        elif op == "filter":
            spec.append(("filter", rng.randrange(2, 4)))
        elif op == "take":
            spec.append(("take", rng.choice([-1, 0, 1, 3, 8, 100])))
        elif op == "skip":
            spec.append(("skip", rng.choice([-1, 0, 1, 3, 100])))
        elif op == "enumerate":
            spec.append(("enumerate", rng.choice([0, 5])))
            rank = 0
        elif op == "cache":
            spec.append(("cache",))
        elif op == "zip":
            spec.append(("zip", rng.choice([0, 3])))  # (element, i) with range(start, 100)
            rank = 0
        elif op == "concatenate":
            spec.append(("concatenate", rng.choice([0, 1, 3])))  # with itself, after skip(k)
        elif op == "choose":
            spec.append(("choose", rng.choice([2, 3, 6, 30]), rng.random() < 0.5))
        elif op == "lengths":
            spec.append(("lengths", rng.choice([1, 3, 5])))
            rank, varlen = 1, True
        elif op == "window":
            size = rng.choice([1, 2, 3])
            spec.append(("window", size, rng.choice([None, 1, 2, 4]), rng.choice([1, 2]),
                         rng.random() < 0.5))
            rank += 1
        elif op == "padded_batch":
            spec.append(("padded_batch", rng.choice([1, 2, 3]), rng.random() < 0.5,
                         rng.choice([None, -1]) if varlen else None,
                         rng.choice([None, 6]) if varlen else None))
            rank, varlen = rank + 1, False
        elif op == "ragged_batch":
            spec.append(("ragged_batch", rng.choice([1, 2, 3]), rng.random() < 0.5))
            rank, ragged, varlen = rank + 1, True, False  # tf.data: ragged if any size unknown
        elif op == "unbatch":
            spec.append(("unbatch",))
            rank -= 1
            ragged, varlen = False, ragged  # rows of a ragged batch are variable-length again
    endless = [i for i, s in enumerate(spec) if s[0] == "repeat" and s[1] is None]
    if endless and any(s[0] in ("filter", "unbatch", "choose") or s == ("skip", -1)
                       for s in spec[endless[0]:]):
        spec[endless[0]] = ("repeat", 3)  # an endless input these may drop whole: never ends
    elif endless:
        spec.append(("take", 40))  # keep endless pipelines finite
    return spec


def _build(spec: list[tuple], api: str):
    is_tf = api == "tf"
    D = tf.data.Dataset if is_tf else glassbox.Dataset
    src = spec[0]
    if src[0] == "range":
        ds = D.range(src[1])
    else:
        ds = D.from_tensor_slices(source_data(src[1], src[2], random.Random(src[3])))
    for op, *args in spec[1:]:
        if op == "repeat":
            ds = ds.repeat(args[0])
        elif op == "batch":
            ds = ds.batch(args[0], drop_remainder=args[1])
        elif op == "map":
            c, par = args
            if is_tf:
                fn = lambda *e, c=c: tf.nest.map_structure(  # noqa: E731
                    lambda t: t + tf.cast(c, t.dtype), e if len(e) > 1 else e[0])
            else:
                fn = lambda *e, c=c: _np_map(  # noqa: E731
                    e if len(e) > 1 else e[0], lambda t: t + np.asarray(c, t.dtype))
            ds = ds.map(fn, num_parallel_calls=par)
        elif op == "filter":
            k = args[0]
            if is_tf:
                pred = lambda *e, k=k: tf.reduce_sum(  # noqa: E731
                    tf.cast(tf.nest.flatten(e)[0], tf.int64)) % k != 0
            else:
                pred = lambda *e, k=k: np.sum(  # noqa: E731
                    np.asarray(_leaves(e)[0]).astype(np.int64)) % k != 0
            ds = ds.filter(pred)
        elif op in ("take", "skip"):
            ds = getattr(ds, op)(args[0])
        elif op == "enumerate":
            ds = ds.enumerate(start=args[0])
        elif op == "cache":
            ds = ds.cache()
        elif op == "zip":
            ds = D.zip((ds, D.range(args[0], 100)))
        elif op == "concatenate":
            ds = ds.concatenate(ds.skip(args[0]))
        elif op == "choose":
            k, stop = args
            choices = D.range(k).map(lambda i: (i * 7 // 3) % 2)
            ds = D.choose_from_datasets([ds, ds.skip(1)], choices, stop_on_empty_dataset=stop)
        elif op == "lengths":
            k = args[0]
            if is_tf:
                fn = lambda *e, k=k: (lambda v: tf.fill([v % k], v))(  # noqa: E731
                    tf.reduce_sum(tf.cast(tf.nest.flatten(e)[0], tf.int64)))
            else:
                fn = lambda *e, k=k: (lambda v: np.full(v % k, v, np.int64))(  # noqa: E731
                    np.sum(np.asarray(_leaves(e)[0]).astype(np.int64)))
            ds = ds.map(fn)
        elif op == "window":
            size, shift, stride, drop = args
            ds = ds.window(size, shift=shift, stride=stride, drop_remainder=drop)
            ds = ds.flat_map(lambda *w, size=size: D.zip(w if len(w) > 1 else w[0]).batch(size))
        elif op == "padded_batch":
            size, drop, value, shape = args
            ds = ds.padded_batch(size, padded_shapes=None if shape is None else [shape],
                                 padding_values=None if value is None else np.int64(value),
                                 drop_remainder=drop)
        elif op == "ragged_batch":
            ds = ds.ragged_batch(args[0], drop_remainder=args[1])
        elif op == "unbatch":
            ds = ds.unbatch()
    return ds


def build_tf(spec: list[tuple]) -> tf.data.Dataset:
    return _build(spec, "tf")


def build_glassbox(spec: list[tuple]) -> glassbox.Dataset:
    return _build(spec, "glassbox")


def assert_same_elements(expected: list[Any], actual: list[Any], context: str = "") -> None:
    """Equal structure, values, shapes and dtypes, element for element."""
    assert len(actual) == len(expected), (f"{context}: {len(actual)} elements, tf.data has "
                                          f"{len(expected)}")
    for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
        assert type(a) is type(e) or not isinstance(e, (tuple, dict)), (
            f"{context}[{i}]: {a!r} vs {e!r}")
        if isinstance(e, dict):
            assert sorted(a) == sorted(e), f"{context}[{i}]: keys {sorted(a)} vs {sorted(e)}"
        le, la = _leaves(e), _leaves(a)
        assert len(le) == len(la), f"{context}[{i}]: structure {a!r} vs {e!r}"
        for x, y in zip(le, la, strict=False):
            x, y = np.asarray(x), np.asarray(y)
            if x.dtype == object and x.ndim == 1 and x.size and isinstance(x[0], np.ndarray):
                # a ragged batch: rows of different lengths
                assert y.dtype == object and len(x) == len(y), f"{context}[{i}]: {y!r} vs {x!r}"
                assert_same_elements(list(x), list(y), context=f"{context}[{i}] rows")
                continue
            assert x.shape == y.shape, f"{context}[{i}]: shape {y.shape} vs {x.shape}"
            assert x.dtype == y.dtype, f"{context}[{i}]: dtype {y.dtype} vs {x.dtype}"
            assert np.array_equal(x, y), f"{context}[{i}]: {y!r} vs {x!r}"
