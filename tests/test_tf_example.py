"""Tests for datakit.readers.records.tf_example: Example and SequenceExample round trips."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from datakit.readers.records import tf_example


def test_example_round_trip_fixed_and_ragged():
    rows = [{"id": i, "name": f"n{i}", "xy": np.array([i, -i], np.float32),
             "tags": list(range(i)) or np.array([], np.int64), "raw": bytes([i])}
            for i in range(4)]
    ser = [tf_example.to_example(r).SerializeToString() for r in rows]
    spec = {"id": tf.int64, "name": tf.string, "xy": (tf.float32, [2]),
            "tags": (tf.int64, None), "raw": tf.string}
    one = tf_example.parse_example(ser[2], spec)
    assert one["name"].numpy() == b"n2" and one["tags"].numpy().tolist() == [0, 1]
    ds = tf.data.Dataset.from_tensor_slices(ser).batch(4).map(
        lambda s: tf_example.parse_example(s, spec))
    batch = next(iter(ds))
    assert batch["tags"].to_list() == [[], [0], [0, 1], [0, 1, 2]]
    assert batch["xy"].numpy().tolist() == [[i, -i] for i in range(4)]
    assert batch["raw"].numpy().tolist() == [bytes([i]) for i in range(4)]


def test_sequence_example_round_trip():
    vids = [(i, [bytes([j]) * (j + 1) for j in range(i + 1)], [[k] * (k % 3) for k in range(i + 2)])
            for i in range(3)]
    ser = [tf_example.to_sequence_example({"label": lab}, {"frames": fr, "ragged": rg})
           .SerializeToString() for lab, fr, rg in vids]
    cspec, sspec = {"label": tf.int64}, {"frames": tf.string, "ragged": (tf.int64, None)}
    for s, (lab, fr, rg) in zip(ser, vids, strict=False):
        ctx, seq = tf_example.parse_sequence_example(s, cspec, sspec)
        assert int(ctx["label"]) == lab and seq["frames"].numpy().tolist() == fr
        assert seq["ragged"].to_list() == rg
    ctx, seq = tf_example.parse_sequence_example(tf.constant(ser), cspec, sspec)
    assert ctx["label"].numpy().tolist() == [0, 1, 2]
    steps = tf_example.to_sequence_example({}, {"v": np.arange(6).reshape(3, 2)})
    assert len(steps.feature_lists.feature_list["v"].feature) == 3


def test_bad_feature_values_say_how_to_fix():
    with pytest.raises(ValueError, match="flatten"):
        tf_example.to_example({"img": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="feature 'a' holds lists of several lengths"):
        tf_example.to_example({"a": [[1, 2], [3]]})  # was NumPy's message, naming no feature
    with pytest.raises(ValueError, match="np.array"):
        tf_example.to_example({"empty": []})
    with pytest.raises(ValueError, match="list of steps"):
        tf_example.to_sequence_example({}, {"x": 3})


@pytest.mark.parametrize("value, where", [(None, "is None"), ([1, None, 3], "holds None"),
                                          ((b"a", None), "holds None")])
def test_a_missing_value_names_the_feature_and_says_what_to_pass(value, where):
    with pytest.raises(TypeError, match=f"feature 'age' {where}: an Example cannot store a "
                                        "missing value.*default_value"):
        tf_example.to_example({"id": 1, "age": value})
    with pytest.raises(TypeError, match=f"feature 'age' {where}"):
        tf_example.to_sequence_example({"age": value}, {})


def test_a_dict_value_is_named():
    with pytest.raises(TypeError, match="feature 'meta' is a dict"):
        tf_example.to_example({"meta": {"a": 1}})


def test_mixed_lists_and_int_keys_are_refused_by_name():
    """#47: [1, 'x'] was stored as the text ['1', 'x']; the key 1 as the name '1'."""
    with pytest.raises(ValueError, match="feature 'a' mixes text and numbers \\(1 and 'x'\\)"):
        tf_example.to_example({"a": [1, "x"]})
    with pytest.raises(TypeError, match="feature names must be str, got the key 1 \\(int\\)"):
        tf_example.to_example({1: [1]})


def test_parse_example_takes_tf_io_features_and_refuses_a_list_spec():
    """#47: a tf.io.FixedLenFeature (a namedtuple) was unpacked as (dtype, shape)."""
    s = tf_example.serialize(tf_example.to_example({"a": [7]}))
    out = tf_example.parse_example(s, {"a": tf.io.FixedLenFeature([], tf.int64)})
    assert int(out["a"]) == 7
    with pytest.raises(tf.errors.InvalidArgumentError, match="Feature: b .* is required"):
        tf_example.parse_example(s, {"b": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(TypeError, match="spec must be a dict of feature name"):
        tf_example.parse_example(s, ["a"])
    with pytest.raises(ValueError, match=r"serialized \(9 bytes, .*\) is not a serialized "
                       "tf.train.Example"):
        tf_example.parse_example(b"\xff\x00garbage", {"a": tf.int64})
