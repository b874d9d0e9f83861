"""The glass box equals tf.data, element for element, on many generated pipelines."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf
from pipelines import (
    assert_same_elements,
    build_glassbox,
    build_tf,
    random_pipeline,
)

from datakit import glassbox
from datakit.glassbox.dataset import Dataset
from datakit.glassbox.recording import IgnoredArgumentWarning

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
    pytest.param([("range", 0), ("repeat", None), ("take", 5)], id="empty-repeated-forever-ends"),
    pytest.param([("range", 4), ("repeat", 0)], id="repeat-0"),
    pytest.param([("range", 4), ("take", -1)], id="take-all"),
    pytest.param([("range", 4), ("take", 10)], id="take-more-than-there-is"),
    pytest.param([("range", 4), ("skip", 10)], id="skip-more-than-there-is"),
    pytest.param([("range", 4), ("skip", -1)], id="skip-all"),
    pytest.param([("range", 10), ("repeat", 3), ("batch", 7, False)], id="batches-across-epochs"),
    pytest.param([("range", 10), ("repeat", 3), ("batch", 7, True)], id="drop-remainder"),
    pytest.param([("range", 10), ("batch", 7, False), ("repeat", 3)], id="batch-then-repeat"),
    pytest.param([("slices", "dict", 5, 1), ("batch", 2, False)], id="dict-batched"),
    pytest.param([("slices", "tuple", 5, 1), ("enumerate", 3), ("batch", 3, False)],
                 id="tuple-enumerated-batched"),
    pytest.param([("slices", "matrix", 0, 1), ("batch", 2, False)], id="zero-rows-batched"),
])
def test_edge_cases_match_tf_data(spec):
    assert_same_elements(list(build_tf(spec).as_numpy_iterator()), list(build_glassbox(spec)),
                         context=repr(spec))


@pytest.mark.parametrize("data", [
    pytest.param(np.arange(6).reshape(3, 2), id="int64-matrix"),
    pytest.param([1, 2, 3], id="python-ints"),
    pytest.param([1.5, 2.5], id="python-floats"),
    pytest.param(["a", "bc"], id="strings"),
    pytest.param((np.arange(3), ["x", "y", "z"]), id="tuple"),
    pytest.param({"n": [1, 2], "s": ["p", "q"], "t": ([1.0, 2.0], [[1, 2], [3, 4]])},
                 id="nested-dict"),
])
def test_from_tensor_slices_matches_tf(data):
    expected = list(tf.data.Dataset.from_tensor_slices(data).as_numpy_iterator())
    assert_same_elements(expected, list(Dataset.from_tensor_slices(data)))
    expected = list(tf.data.Dataset.from_tensor_slices(data).batch(2).as_numpy_iterator())
    assert_same_elements(expected, list(Dataset.from_tensor_slices(data).batch(2)))


def test_map_unpacks_tuples_like_tf():
    data = (np.arange(4), np.arange(4) * 10)
    expected = list(tf.data.Dataset.from_tensor_slices(data).map(lambda x, y: x + y)
                    .as_numpy_iterator())
    assert_same_elements(expected, list(Dataset.from_tensor_slices(data).map(lambda x, y: x + y)))


@pytest.mark.parametrize("make, fix", [
    pytest.param(lambda D: D.range(3).batch(0), "batch_size >= 1", id="batch-0"),
    pytest.param(lambda D: D.range(3).batch(-2), "batch_size >= 1", id="batch-negative"),
    pytest.param(lambda D: D.range(3).map(lambda x: x, num_parallel_calls=0),
                 "num_parallel_calls", id="map-parallel-0"),
    pytest.param(lambda D: D.from_tensor_slices((np.arange(3), np.arange(4))),
                 "same first dimension", id="slices-unequal-lengths"),
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


def test_trace_tells_each_ops_kind_and_arguments_without_parsing_names():
    ops = (Dataset.range(6).repeat(2).shuffle(3, seed=1).batch(4, drop_remainder=True)
           .interleave(lambda b: Dataset.from_iterable(list(b)), cycle_length=2).trace())
    assert [op.kind for op in ops] == ["range", "repeat", "shuffle", "batch", "interleave"]
    assert ops[1].args == {"count": 2}
    assert ops[2].args == {"buffer_size": 3, "seed": 1, "reshuffle_each_iteration": True}
    assert ops[3].args == {"batch_size": 4, "drop_remainder": True}
    assert ops[4].args == {"cycle_length": 2, "block_length": 1}


def test_every_op_says_its_kind_and_arguments(tmp_path):
    d = Dataset.range(6)
    cases = {
        "range": (d, {"start": 0, "stop": 6, "step": 1, "output_type": "int64"}),
        "take": (d.take(4), {"count": 4}),
        "skip": (d.skip(1), {"count": 1}),
        "enumerate": (d.enumerate(3), {"start": 3}),
        "map": (d.map(abs), {}),
        "filter": (d.filter(lambda x: x > 2), {}),
        "unbatch": (d.batch(2).unbatch(), {}),
        "padded_batch": (d.map(lambda n: [n]).padded_batch(2), {
            "batch_size": 2, "padded_shapes": None, "padding_values": None,
            "drop_remainder": False}),
        "ragged_batch": (d.ragged_batch(3), {"batch_size": 3, "drop_remainder": False}),
        "window": (d.window(2), {"size": 2, "shift": 2, "stride": 1, "drop_remainder": False}),
        "cache": (d.cache(str(tmp_path / "c")), {"filename": str(tmp_path / "c")}),
        "sample_from_datasets": (Dataset.sample_from_datasets([d, d], seed=3), {
            "weights": [1.0, 1.0], "seed": 3, "stop_on_empty_dataset": False,
            "rerandomize_each_iteration": False}),
        "choose_from_datasets": (Dataset.choose_from_datasets([d], Dataset.range(0, 1)),
                                 {"stop_on_empty_dataset": True}),
    }
    for kind, (ds, args) in cases.items():
        last = ds.trace()[-1]
        assert (last.kind, last.args) == (kind, args), kind
    # the kind is the method, whatever the display name says
    assert Dataset.from_iterable([1], name="my rows").trace()[0].kind == "from_iterable"


@pytest.mark.parametrize("make, argument", [
    pytest.param(lambda: Dataset.range(3).map(abs, name="m"), "name", id="map-name"),
    pytest.param(lambda: Dataset.range(3).batch(2, name="b"), "name", id="batch-name"),
    pytest.param(lambda: Dataset.range(3).batch(2).unbatch(name="u"), "name", id="unbatch-name"),
    pytest.param(lambda: Dataset.range(3).map(abs, num_parallel_calls=2, deterministic=False),
                 "deterministic", id="map-deterministic-false"),
    pytest.param(lambda: Dataset.range(3).interleave(Dataset.range, cycle_length=1,
                                                     num_parallel_calls=1, deterministic=False),
                 "deterministic", id="interleave-deterministic-false"),
    pytest.param(lambda: Dataset.range(3).batch(2, deterministic=True), "deterministic",
                 id="deterministic-without-parallel-calls"),
    pytest.param(lambda: Dataset.range(3).ragged_batch(2, row_splits_dtype=tf.int32),
                 "row_splits_dtype", id="ragged-row-splits"),
])
def test_an_ignored_tf_data_argument_warns_naming_it(make, argument):
    with pytest.warns(IgnoredArgumentWarning, match=f"{argument}=") as caught:
        ds = make()
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert len(list(ds)) > 0


def test_arguments_the_glass_box_honours_do_not_warn():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Dataset.range(3).map(abs, num_parallel_calls=2, deterministic=True).batch(2)
        Dataset.range(3).map(lambda n: [n]).ragged_batch(2, row_splits_dtype=tf.int64)


def test_iterating_records_nothing_and_tracing_does_not_use_up_shuffles():
    from datakit.glassbox.recording import NO_RECORDER
    ds = Dataset.range(8).shuffle(8, seed=5)
    traced = [int(x) for x in ds.trace()[-1].values]
    assert [int(x) for x in ds] == traced          # the trace did not use iteration 0 up
    assert traced != [int(x) for x in ds]          # iteration 1 reshuffles
    assert len(NO_RECORDER) == 0
