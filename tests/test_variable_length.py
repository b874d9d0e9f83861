"""padded_batch, ragged_batch, unbatch, window and flat_map in the glass box equal tf.data's."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from pipelines import assert_same_elements

from datakit.glassbox.dataset import Dataset
from datakit.glassbox.variable_length import pad_batch, window_positions

WORDS = ["a", "bb", "", "ccc dd", "e"]


def _both(make):
    return (list(make(tf.data.Dataset, tf).as_numpy_iterator()),
            list(make(Dataset, np).as_numpy_iterator()))


def _lengths(D, lib):
    """Vectors of length 0..4, as tf.data and NumPy write them."""
    if lib is tf:
        return D.range(5).map(lambda n: tf.range(n) * 10)
    return D.range(5).map(lambda n: np.arange(n) * 10)


@pytest.mark.parametrize("make", [
    pytest.param(lambda D, lib: _lengths(D, lib).padded_batch(2), id="pad-to-longest"),
    pytest.param(lambda D, lib: _lengths(D, lib).padded_batch(3, padded_shapes=[6],
                                                               padding_values=np.int64(-1),
                                                               drop_remainder=True), id="fixed"),
    pytest.param(lambda D, lib: D.zip((_lengths(D, lib), D.range(5))).padded_batch(
        2, padding_values=(np.int64(7), np.int64(0))), id="tuple"),
    pytest.param(lambda D, lib: _lengths(D, lib).ragged_batch(2), id="ragged"),
    pytest.param(lambda D, lib: _lengths(D, lib).ragged_batch(2).unbatch(), id="ragged-unbatch"),
    pytest.param(lambda D, lib: D.range(6).batch(2).ragged_batch(2), id="ragged-of-equal-rows"),
    pytest.param(lambda D, lib: _lengths(D, lib).unbatch(), id="unbatch-vectors"),
    pytest.param(lambda D, lib: D.from_tensor_slices(
        {"w": np.array(WORDS), "n": np.arange(5)}).batch(2).unbatch(), id="unbatch-dict"),
    pytest.param(lambda D, lib: D.range(1, 4).flat_map(lambda n: D.range(n).map(lambda x: x + n)),
                 id="flat-map"),
    pytest.param(lambda D, lib: D.range(10).window(4, shift=1, drop_remainder=True).flat_map(
        lambda w: w.batch(4)).map(lambda w: (w[:-1], w[-1])), id="time-series-inputs-target"),
    pytest.param(lambda D, lib: D.from_tensor_slices((np.arange(7), np.arange(7) * 2)).window(
        3, shift=2, stride=2).flat_map(lambda a, b: D.zip((a, b)).batch(3)), id="window-tuple"),
])
def test_matches_tf_data(make):
    expected, actual = _both(make)
    assert_same_elements(expected, actual)


@pytest.mark.parametrize("size, shift, stride, drop", [
    (3, None, 1, False), (3, 2, 1, False), (3, 2, 2, False), (3, 4, 1, True), (2, 5, 1, False),
    (1, 1, 3, False), (4, 1, 2, True),
])
def test_window_positions_match_tf_data(size, shift, stride, drop):
    real = [list(w.as_numpy_iterator()) for w in tf.data.Dataset.range(11).window(
        size, shift=shift, stride=stride, drop_remainder=drop)]
    assert window_positions(11, size, shift, stride, drop) == [[int(x) for x in w] for w in real]


def test_window_is_a_dataset_of_datasets_as_in_tf_data():
    w = next(iter(Dataset.range(5).window(2)))
    assert isinstance(w, Dataset) and [int(x) for x in w] == [0, 1]
    with pytest.raises(TypeError, match="flat_map"):
        list(Dataset.range(5).window(2).as_numpy_iterator())
    with pytest.raises(TypeError):
        list(tf.data.Dataset.range(5).window(2).as_numpy_iterator())


def test_padded_batch_pads_strings_with_empty_bytes():
    gb = Dataset.from_tensor_slices(np.array(WORDS)).map(lambda s: np.array(s.split(b" ")))
    assert [b.tolist() for b in gb.padded_batch(5)][0][3] == [b"ccc", b"dd"]
    assert [b.tolist() for b in gb.padded_batch(5)][0][0] == [b"a", b""]


@pytest.mark.parametrize("call, error, match", [
    pytest.param(lambda: pad_batch([np.arange(3)], [2]), ValueError, "larger", id="too-long"),
    pytest.param(lambda: pad_batch([np.arange(3)], [2, 2]), ValueError, "rank", id="rank"),
    pytest.param(lambda: list(Dataset.range(3).unbatch()), ValueError, "first axis", id="scalar"),
    pytest.param(lambda: list(Dataset.range(3).flat_map(lambda x: [x])), TypeError, "Dataset",
                 id="flat-map-not-a-dataset"),
    pytest.param(lambda: Dataset.range(3).window(0), ValueError, "size=0", id="window-0"),
    pytest.param(lambda: Dataset.range(3).padded_batch(0), ValueError, "batch_size", id="batch-0"),
])
def test_bad_calls_say_how_to_fix_them(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_trace_window_sources_are_the_positions_in_each_window():
    ops = Dataset.range(6).window(3, shift=2, stride=2).trace()
    assert [s.sources for s in ops[-1].steps] == [(0, 2, 4), (2, 4), (4,)]
