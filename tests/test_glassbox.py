"""The glass box equals tf.data, element for element, on many generated pipelines."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

from datakit import glassbox
from datakit.glassbox import Dataset
from pipelines import (
    assert_same_elements,
    build_glassbox,
    build_tf,
    random_pipeline,
)

N_PIPELINES = 400
NEW_OPS = ["cache", "zip", "concatenate", "choose", "lengths", "window", "padded_batch",
           "ragged_batch", "unbatch"]  # window is window + flat_map, choose choose_from_datasets


def test_generated_pipelines_match_tf_data():
    rng = random.Random(20261202)
    tried = failed = 0
    used: Counter = Counter()
    for _ in range(N_PIPELINES):
        spec = random_pipeline(rng)
        used.update({op[0] for op in spec[1:]})
        expected, tf_error = run_until_error(build_tf(spec).as_numpy_iterator(),
                                             tf.errors.InvalidArgumentError)
        actual, gb_error = run_until_error(iter(build_glassbox(spec)), ValueError)
        assert_same_elements(expected, actual, context=repr(spec))
        assert (tf_error is None) == (gb_error is None), f"{spec}: {tf_error!r} vs {gb_error!r}"
        tried += 1
        failed += tf_error is not None
    print(f"glass box == tf.data on {tried} generated pipelines ({failed} of them raise in both); "
          f"pipelines per op: {dict(sorted(used.items()))}")
    assert tried == N_PIPELINES
    # every deterministic op, old and new, was in enough of them
    assert all(used[op] >= 15 for op in NEW_OPS + ["repeat", "batch", "map", "filter"]), used


def run_until_error(iterator, error):
    """The elements an iterator yields before it ends or raises ``error``."""
    out = []
    try:
        for x in iterator:
            out.append(x)
    except error as exc:
        return out, exc
    return out, None


@pytest.mark.parametrize("spec", [
    [("range", 0), ("repeat", None), ("take", 5)],          # empty input repeated forever ends
    [("range", 4), ("repeat", 0)],
    [("range", 4), ("take", -1)],
    [("range", 4), ("take", 10)],
    [("range", 4), ("skip", 10)],
    [("range", 4), ("skip", -1)],
    [("range", 10), ("repeat", 3), ("batch", 7, False)],
    [("range", 10), ("repeat", 3), ("batch", 7, True)],
    [("range", 10), ("batch", 7, False), ("repeat", 3)],
    [("slices", "dict", 5, 1), ("batch", 2, False)],
    [("slices", "tuple", 5, 1), ("enumerate", 3), ("batch", 3, False)],
    [("slices", "matrix", 0, 1), ("batch", 2, False)],
])
def test_edge_cases_match_tf_data(spec):
    assert_same_elements(list(build_tf(spec).as_numpy_iterator()), list(build_glassbox(spec)),
                         context=repr(spec))


@pytest.mark.parametrize("data", [
    np.arange(6).reshape(3, 2),
    [1, 2, 3],
    [1.5, 2.5],
    ["a", "bc"],
    (np.arange(3), ["x", "y", "z"]),
    {"n": [1, 2], "s": ["p", "q"], "t": ([1.0, 2.0], [[1, 2], [3, 4]])},
])
def test_from_tensor_slices_matches_tf(data):
    expected = list(tf.data.Dataset.from_tensor_slices(data).as_numpy_iterator())
    assert_same_elements(expected, list(Dataset.from_tensor_slices(data)))
    expected = list(tf.data.Dataset.from_tensor_slices(data).batch(2).as_numpy_iterator())
    assert_same_elements(expected, list(Dataset.from_tensor_slices(data).batch(2)))


def test_map_unpacks_tuples_like_tf():
    data = (np.arange(4), np.arange(4) * 10)
    expected = list(tf.data.Dataset.from_tensor_slices(data).map(lambda x, y: x + y).as_numpy_iterator())
    assert_same_elements(expected, list(Dataset.from_tensor_slices(data).map(lambda x, y: x + y)))


@pytest.mark.parametrize("make, fix", [
    (lambda D: D.range(3).batch(0), "batch_size >= 1"),
    (lambda D: D.range(3).batch(-2), "batch_size >= 1"),
    (lambda D: D.range(3).map(lambda x: x, num_parallel_calls=0), "num_parallel_calls"),
    (lambda D: D.from_tensor_slices((np.arange(3), np.arange(4))), "same first dimension"),
])
def test_rejects_what_tf_rejects_with_a_fix(make, fix):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        list(make(tf.data.Dataset))
    with pytest.raises(ValueError, match=fix):
        make(glassbox.Dataset)


def test_apply_needs_a_dataset_back():
    with pytest.raises(TypeError, match="returns a Dataset"):
        Dataset.range(3).apply(lambda ds: [1, 2])


def test_trace_batch_sources_and_repeat_epochs():
    ops = Dataset.range(10).repeat(3).batch(7, drop_remainder=True).trace()
    rng_op, rep, bat = ops
    assert len(rng_op.steps) == 30 and len(rep.steps) == 30
    assert [s.epoch for s in rep.steps] == [e for e in range(3) for _ in range(10)]
    assert [s.sources for s in bat.steps] == [tuple(range(i, i + 7)) for i in range(0, 28, 7)]
    # the batch holds exactly the values of the inputs it names
    for s in bat.steps:
        assert s.value.tolist() == [rep.steps[j].value for j in s.sources]


def test_trace_filter_and_map_sources():
    ops = Dataset.range(6).filter(lambda x: x % 3 != 0).map(lambda x: x * 10).trace()
    assert [s.sources for s in ops[1].steps] == [(1,), (2,), (4,), (5,)]
    assert [int(s.value) for s in ops[2].steps] == [10, 20, 40, 50]


def test_trace_of_endless_pipeline_stops_at_max_elements():
    ops = Dataset.range(3).repeat().trace(max_elements=7)
    assert [int(v) for v in ops[-1].values] == [0, 1, 2, 0, 1, 2, 0]


def test_repr_reads_like_the_chain():
    ds = Dataset.range(10).map(abs, num_parallel_calls=2).filter(lambda x: x > 1).take(3)
    assert repr(ds) == "Dataset.range(10).map(abs, num_parallel_calls=2).filter(lambda).take(3)"


def test_trace_sources_are_positions_in_the_whole_input_stream_under_repeat():
    # batch runs three times (once per epoch); its sources still index the
    # 30 elements range emitted in total, not 0..9 again each epoch
    rng_op, bat, rep = Dataset.range(10).batch(7).repeat(3).trace()
    assert len(rng_op.steps) == 30
    assert [s.sources[0] for s in bat.steps] == [0, 7, 10, 17, 20, 27]
    assert [(s.sources, s.epoch) for s in rep.steps] == [((i,), i // 2) for i in range(6)]
    for s in bat.steps:
        assert s.value.tolist() == [rng_op.steps[j].value for j in s.sources]
