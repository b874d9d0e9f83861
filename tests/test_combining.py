"""zip, concatenate, choose/sample_from_datasets and cache in the glass box, against tf.data."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import tensorflow as tf
from pipelines import assert_same_elements

from datakit.glassbox.combining import PARTIAL_CACHE_WARNING
from datakit.glassbox.dataset import Dataset


@pytest.mark.parametrize("make", [
    pytest.param(lambda D: D.zip(D.range(3), D.range(5, 9)), id="zip-args"),
    pytest.param(lambda D: D.zip({"a": D.range(3), "b": (D.range(4), D.range(7, 20))}),
                 id="zip-dict"),
    pytest.param(lambda D: D.zip(datasets=(D.range(2), D.range(2))), id="zip-keyword"),
    pytest.param(lambda D: D.zip(D.range(3)), id="zip-one"),
    pytest.param(lambda D: D.range(3).concatenate(D.range(10, 12)), id="concatenate"),
    pytest.param(lambda D: D.choose_from_datasets(
        [D.range(2), D.range(10, 13)], D.from_tensor_slices(np.array([0, 0, 0, 1, 1]))),
        id="choose-stops-on-empty"),
    pytest.param(lambda D: D.choose_from_datasets(
        [D.range(2), D.range(10, 13)], D.from_tensor_slices(np.array([0, 0, 0, 1, 1])),
        stop_on_empty_dataset=False), id="choose-skips-empty"),
    pytest.param(lambda D: D.range(4).map(lambda x: x * 3).cache().repeat(3), id="cache-repeat"),
])
def test_matches_tf_data(make):
    assert_same_elements(list(make(tf.data.Dataset).as_numpy_iterator()),
                         list(make(Dataset).as_numpy_iterator()))


@pytest.mark.parametrize("weights, stop", [
    pytest.param(None, False, id="equal"), pytest.param([0.9, 0.1], False, id="skewed"),
    pytest.param([0.5, 0.5], True, id="stop-on-empty"),
])
def test_sample_from_datasets_same_elements_as_tf_data_own_order(weights, stop):
    def make(D, seed):
        return D.sample_from_datasets([D.range(20), D.range(100, 105)], weights=weights,
                                      seed=seed, stop_on_empty_dataset=stop)
    real = [int(x) for x in make(tf.data.Dataset, 3)]
    ours = [int(x) for x in make(Dataset, 3)]
    if not stop:
        assert Counter(real) == Counter(ours) == Counter(list(range(20)) + list(range(100, 105)))
    for out in (real, ours):   # each source keeps its own order
        assert [x for x in out if x < 100] == sorted(x for x in out if x < 100)
        assert [x for x in out if x >= 100] == sorted(x for x in out if x >= 100)
    assert ours == [int(x) for x in make(Dataset, 3)]          # same seed, same order
    assert ours != [int(x) for x in make(Dataset, 4)]          # another seed, another one


def test_sample_trace_names_the_source_of_each_element():
    steps = Dataset.sample_from_datasets([Dataset.range(5), Dataset.range(10, 15)],
                                         seed=0).trace()[-1].steps
    for s in steps:
        assert int(s.value) == (0 if s.dataset == 0 else 10) + s.sources[0]
    assert Counter(s.dataset for s in steps) == {0: 5, 1: 5}


def test_sample_rerandomize_each_iteration():
    ds = Dataset.sample_from_datasets([Dataset.range(10), Dataset.range(10, 20)], seed=0)
    two = [int(x) for x in ds.repeat(2)]
    assert two[:20] == two[20:]
    ds = Dataset.sample_from_datasets([Dataset.range(10), Dataset.range(10, 20)], seed=0,
                                      rerandomize_each_iteration=True)
    two = [int(x) for x in ds.repeat(2)]
    assert two[:20] != two[20:] and sorted(two[:20]) == sorted(two[20:])


def test_cache_trace_serves_the_second_pass_and_freezes_a_random_map():
    rng = np.random.default_rng(0)
    ds = Dataset.range(4).map(lambda x: x + rng.integers(100)).cache().repeat(2)
    ops = ds.trace()
    assert len(ops[1].steps) == 4            # the random map ran once, not twice
    assert [s.from_cache for s in ops[2].steps] == [False] * 4 + [True] * 4
    values = [int(v) for v in ops[-1].values]
    assert values[:4] == values[4:]


def test_cache_to_a_file_is_found_by_another_dataset(tmp_path):
    name = str(tmp_path / "cache")
    assert [int(x) for x in Dataset.range(3).cache(name)] == [0, 1, 2]
    again = Dataset.range(100).cache(name).trace()   # another input, the same file
    assert [int(v) for v in again[-1].values] == [0, 1, 2]
    assert all(s.from_cache for s in again[-1].steps) and again[0].steps == []


def test_a_cache_filename_that_is_a_folder_is_refused(tmp_path):
    """#47: the pickle landed beside the folder, as <folder>.glassbox."""
    with pytest.raises(IsADirectoryError, match="is a folder: filename names the cache file"):
        Dataset.range(2).cache(str(tmp_path))
    assert list(tmp_path.parent.glob("*.glassbox")) == []


def test_partly_read_cache_warns_and_keeps_nothing():
    ds = Dataset.range(5).cache()
    with pytest.warns(UserWarning, match="did not fully read"):
        list(ds.take(2))
    assert PARTIAL_CACHE_WARNING.startswith("The calling iterator")
    assert [s.from_cache for s in ds.trace()[-1].steps] == [False] * 5


@pytest.mark.parametrize("call, error, match", [
    pytest.param(lambda: Dataset.zip([1, 2]), TypeError, "Datasets", id="zip-not-datasets"),
    pytest.param(lambda: Dataset.zip(Dataset.range(2), datasets=Dataset.range(2)), TypeError,
                 "not both", id="zip-both"),
    pytest.param(lambda: Dataset.sample_from_datasets([Dataset.range(2)], weights=[-1.0]),
                 ValueError, ">= 0", id="negative-weight"),
    pytest.param(lambda: list(Dataset.choose_from_datasets(
        [Dataset.range(2)], Dataset.from_iterable([1]))), ValueError, "indices 0..0",
        id="choice-out-of-range"),
    pytest.param(lambda: Dataset.range(2).concatenate([1]), TypeError, "Datasets",
                 id="concatenate-list"),
    # #47: each of these was taken, or failed with NumPy's or Python's own message
    pytest.param(lambda: Dataset.sample_from_datasets([Dataset.range(2)] * 2,
                                                      weights=[float("nan"), 1.0]),
                 ValueError, r"weights\[0\]=nan is invalid", id="nan-weight"),
    pytest.param(lambda: Dataset.sample_from_datasets({Dataset.range(2), Dataset.range(3)}),
                 TypeError, "datasets must be a list .* got set", id="datasets-set"),
    pytest.param(lambda: list(Dataset.range(3).interleave(lambda x: [x, x], cycle_length=2)),
                 TypeError, "interleave\\(\\) expects map_func to return a Dataset, got list",
                 id="interleave-list"),
    pytest.param(lambda: Dataset.range(3).map(5), TypeError,
                 "map\\(\\) map_func must be a function, got 5", id="map-not-callable"),
    pytest.param(lambda: Dataset.range(3).flat_map(5), TypeError,
                 "flat_map\\(\\) map_func must be a function", id="flat_map-not-callable"),
    pytest.param(lambda: Dataset.from_tensor_slices([[1, 2], [3]]), ValueError,
                 "tensors holds rows of different lengths \\(ragged\\)", id="ragged-slices"),
    pytest.param(lambda: Dataset.range(3).trace(max_elements=-1), ValueError,
                 "max_elements=-1 is invalid", id="trace-negative"),
])
def test_bad_calls_say_how_to_fix_them(call, error, match):
    with pytest.raises(error, match=match):
        call()
