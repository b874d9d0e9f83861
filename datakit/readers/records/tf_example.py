"""``tf.train.Example`` and ``SequenceExample``: build them from plain values, parse them back.

An ``Example`` is a dict from feature names to flat lists of bytes, int64 or float32;
a ``SequenceExample`` adds, per name, a list of such lists (one per step: a frame, a
word). :func:`to_example` and :func:`to_sequence_example` take plain Python and NumPy
values, :func:`serialize` writes them the same way in every process, and
:func:`parse_example` / :func:`parse_sequence_example` read them back with a short spec
(a dtype, ``(dtype, shape)``, or ``(dtype, None)`` for variable length). Writing them
into files is :mod:`datakit.readers.records.tfrecords`.

>>> ex = to_example({"id": 7, "name": "seven", "xy": [0.5, 1.5]})
>>> sorted(ex.features.feature)
['id', 'name', 'xy']
>>> list(ex.features.feature["xy"].float_list.value)
[0.5, 1.5]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tensorflow as tf

__all__ = ["to_example", "serialize", "parse_example"]


# ---------------------------------------------------------------- building Examples
def _feature(name: str, value: Any) -> tf.train.Feature:
    if isinstance(value, tf.train.Feature):
        return value
    _check_no_none(name, value)
    if isinstance(value, (bytes, str)):
        value = [value]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (bytes, str)) for v in value):  # not via NumPy: it drops trailing b"\0"
        vals = [v.encode() if isinstance(v, str) else v for v in value]
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=vals))
    _check_one_kind(name, value)
    value, arr = _as_array(name, value)
    _check_int64(name, value)
    if arr.ndim != 1:
        raise ValueError(f"feature {name!r} has shape {arr.shape}: a feature holds a flat list; "
                         "flatten it (and store the shape as another feature) or use "
                         "tf.io.serialize_tensor")
    if arr.size == 0 and not isinstance(value, np.ndarray):
        raise ValueError(f"feature {name!r} is an empty list, so its type is unknown: pass "
                         "np.array([], dtype=np.int64) (or float32 / object for bytes)")
    kind = arr.dtype.kind
    if kind in "SUO":
        vals = [v.encode() if isinstance(v, str) else bytes(v) for v in arr.tolist()]
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=vals))
    if kind in "biu":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=arr.astype(np.int64)))
    if kind == "f":
        return tf.train.Feature(float_list=tf.train.FloatList(value=arr.astype(np.float32)))
    raise ValueError(f"feature {name!r}: cannot store dtype {arr.dtype}; use bytes/str, ints or "
                     "floats")


def _check_one_kind(name: str, value: Any) -> None:
    """A list mixing text and numbers is refused: NumPy would turn the numbers into text."""
    if not isinstance(value, (list, tuple)):
        return
    text = [isinstance(v, (bytes, str, np.str_, np.bytes_)) for v in value]
    if any(text) and not all(text):
        i = text.index(False) if text[0] else text.index(True)
        raise ValueError(f"feature {name!r} mixes text and numbers ({value[0]!r} and "
                         f"{value[i]!r}): a feature holds one kind of value; store the "
                         "numbers and the text as two features")


def _as_array(name: str, value: Any) -> tuple:
    """``(value as a list if it was one number, its NumPy array)``, the feature named."""
    try:
        if np.ndim(value) == 0:
            value = [value]
        return value, np.asarray(value)
    except ValueError:  # NumPy's "inhomogeneous shape": lists of several lengths
        raise ValueError(f"feature {name!r} holds lists of several lengths: a feature holds a "
                         "flat list; flatten it (and store the lengths as another feature), or "
                         "write it as a SequenceExample step by step") from None


_INT64 = np.iinfo(np.int64)


def _check_no_none(name: str, value: Any) -> None:
    """An Example has no "missing" value: say so, naming the feature, instead of NumPy's error."""
    if value is None or (isinstance(value, (list, tuple)) and any(v is None for v in value)):
        where = "is None" if value is None else "holds None"
        raise TypeError(f"feature {name!r} {where}: an Example cannot store a missing value. "
                        "Leave the feature out of this Example (parse it with a default: "
                        "tf.io.FixedLenFeature(..., default_value=...) or VarLenFeature), or "
                        "store a value that marks it (float('nan'), -1, b'')")
    if isinstance(value, (dict, set)):
        raise TypeError(f"feature {name!r} is a {type(value).__name__}: a feature holds a value "
                        "or a flat list of bytes/str, ints or floats")


def _check_int64(name: str, value: Any) -> None:
    """Ints that int64 cannot hold would wrap around (2**63 -> -2**63) or turn a list to floats."""
    big: int | np.integer | None  # the first int out of range
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "u" and value.size and value.max() > _INT64.max:
            big = int(value.max())
        elif value.dtype.kind == "O":
            big = next((v for v in value.ravel().tolist() if isinstance(v, int)
                        and not _INT64.min <= v <= _INT64.max), None)
        else:
            return
    else:
        big = next((v for v in value if isinstance(v, (int, np.integer)) and not isinstance(
            v, bool) and not _INT64.min <= int(v) <= _INT64.max), None)
    if big is not None:
        raise ValueError(f"feature {name!r}: {big} does not fit in int64 (an Example stores "
                         f"ints as int64, {_INT64.min}..{_INT64.max}); store it as bytes "
                         "(str(value)) or as a float")


def _features(values: Mapping) -> tf.train.Features:
    if not isinstance(values, Mapping):
        raise TypeError(f"expected a dict of feature name -> value, got {type(values).__name__}")
    keys = [k for k in values if not isinstance(k, str)]
    if keys:  # str(1) would be stored as the name "1" without a word
        raise TypeError(f"feature names must be str, got the key {keys[0]!r} "
                        f"({type(keys[0]).__name__}): name each feature with a str, e.g. "
                        f"{str(keys[0])!r}")
    return tf.train.Features(feature={str(k): _feature(str(k), v) for k, v in values.items()})


def to_example(features: Mapping) -> tf.train.Example:
    """Build a ``tf.train.Example`` from plain values: bytes/str, ints, floats, 1-D lists of them.

    >>> ex = to_example({"label": 2, "pixels": np.array([0, 255], np.uint8)})
    >>> list(ex.features.feature["pixels"].int64_list.value)
    [0, 255]
    >>> len(ex.SerializeToString())
    37
    """
    return tf.train.Example(features=_features(features))


_LISTS = {"bytes_list": tf.train.BytesList, "int64_list": tf.train.Int64List,
          "float_list": tf.train.FloatList}


def to_sequence_example(context: Mapping, sequences: Mapping) -> tf.train.SequenceExample:
    """Build a ``tf.train.SequenceExample``: ``context`` as in :func:`to_example`, and for each
    sequence name a list of steps (each step a value or a 1-D list; a 2-D array is one row a step).

    >>> se = to_sequence_example({"label": 1}, {"frames": [b"a", b"bb", b"ccc"]})
    >>> len(se.feature_lists.feature_list["frames"].feature)
    3
    """
    lists = {}
    for name, steps in sequences.items():
        if isinstance(steps, (bytes, str, int, float, np.generic)) or (
                isinstance(steps, np.ndarray) and steps.ndim == 0):
            raise ValueError(f"sequence {name!r} must be a list of steps, got one value")
        feats = [None if isinstance(s, (list, tuple)) and not s else _feature(f"{name}[{i}]", s)
                 for i, s in enumerate(steps)]  # an empty step takes the others' type
        kind = next((f.WhichOneof("kind") for f in feats if f is not None), "int64_list")
        empty = tf.train.Feature(**{kind: _LISTS[kind]()})
        feats = [empty if f is None else f for f in feats]
        lists[str(name)] = tf.train.FeatureList(feature=feats)
    return tf.train.SequenceExample(context=_features(context),
                                    feature_lists=tf.train.FeatureLists(feature_list=lists))


def serialize(message: tf.train.Example | tf.train.SequenceExample) -> bytes:
    """Serialize an Example/SequenceExample with its feature names sorted.

    Plain ``SerializeToString()`` writes a message's map fields in an order that can change
    from one Python process to the next, so the same data would give different files and
    checksums; this order does not.

    >>> serialize(to_example({"b": 1, "a": 2})) == serialize(to_example({"a": 2, "b": 1}))
    True
    """
    return message.SerializeToString(deterministic=True)


# ---------------------------------------------------------------- parsing
#: tf.io's feature specs: namedtuples, so they are told apart from ``(dtype, shape)`` first.
_IO_FEATURES = (tf.io.FixedLenFeature, tf.io.FixedLenSequenceFeature, tf.io.VarLenFeature,
                tf.io.RaggedFeature, tf.io.SparseFeature)


def _spec(spec: Mapping, sequence: bool = False) -> dict:
    """Expand shorthand: a dtype is a scalar per record (per step); ``(dtype, shape)`` a fixed
    shape; ``(dtype, None)`` a variable length list (ragged). tf.io feature objects pass through."""
    if not isinstance(spec, Mapping):
        raise TypeError(f"spec must be a dict of feature name -> dtype, (dtype, shape) or a "
                        f"tf.io feature, got {type(spec).__name__} {spec!r}: e.g. "
                        "{'id': tf.int64}")
    out = {}
    for name, s in spec.items():
        if isinstance(s, _IO_FEATURES) or not isinstance(s, (tuple, tf.dtypes.DType)):
            out[name] = s
            continue
        dtype, shape = (s, ()) if isinstance(s, tf.dtypes.DType) else s
        if shape is None:
            out[name] = tf.io.RaggedFeature(dtype)
        elif sequence:
            out[name] = tf.io.FixedLenSequenceFeature(shape, dtype)
        else:
            out[name] = tf.io.FixedLenFeature(shape, dtype)
    return out


def parse_example(serialized: bytes | tf.Tensor, spec: Mapping) -> dict:
    """Parse one serialized Example (or a batch of them) with ``spec``; usable in ``Dataset.map``.

    ``spec`` maps names to ``tf.io`` features or shorthand: ``tf.int64`` (a scalar),
    ``(tf.float32, [2])`` (a fixed shape), ``(tf.int64, None)`` (variable length, ragged).

    >>> s = to_example({"id": 3, "xs": [1, 2, 3]}).SerializeToString()
    >>> out = parse_example(s, {"id": tf.int64, "xs": (tf.int64, None)})
    >>> int(out["id"]), out["xs"].numpy().tolist()
    (3, [1, 2, 3])
    """
    spec = _spec(spec)
    if isinstance(serialized, bytes):  # eager, one record: TensorFlow's error on garbage
        _check_parses(serialized)       # holds the raw bytes and fails to print
    serialized = tf.convert_to_tensor(serialized, tf.string)
    if serialized.shape.rank == 0:
        return tf.io.parse_single_example(serialized, spec)
    return tf.io.parse_example(serialized, spec)


def _check_parses(serialized: bytes) -> None:
    """A ``ValueError`` naming ``serialized`` when its bytes are no ``tf.train.Example``."""
    from google.protobuf.message import DecodeError

    try:
        tf.train.Example.FromString(serialized)
    except DecodeError:
        raise ValueError(f"serialized ({len(serialized)} bytes, starting {serialized[:8]!r}) is "
                         "not a serialized tf.train.Example: pass example.SerializeToString(), "
                         "or records read from a TFRecord file of Examples") from None


def parse_sequence_example(serialized: bytes | tf.Tensor, context_spec: Mapping,
                           sequence_spec: Mapping) -> tuple[dict, dict]:
    """Parse one serialized SequenceExample (or a batch) into ``(context, sequences)``.

    Sequence shorthand: ``tf.string`` is one value per step, ``(tf.float32, [3])`` a fixed
    vector per step, ``(tf.int64, None)`` a variable-length list per step (ragged).

    >>> s = to_sequence_example({"label": 1}, {"f": [b"a", b"b"]}).SerializeToString()
    >>> ctx, seq = parse_sequence_example(s, {"label": tf.int64}, {"f": tf.string})
    >>> int(ctx["label"]), seq["f"].numpy().tolist()
    (1, [b'a', b'b'])
    """
    serialized = tf.convert_to_tensor(serialized, tf.string)
    cs, ss = _spec(context_spec), _spec(sequence_spec, sequence=True)
    if serialized.shape.rank == 0:
        return tf.io.parse_single_sequence_example(serialized, cs, ss)
    ctx, seq, _lengths = tf.io.parse_sequence_example(serialized, cs, ss)
    return ctx, seq
