"""The glass-box interleave and list_files equal tf.data; the source trace of a real pipeline."""

from __future__ import annotations

import random

import numpy as np
import pytest
import tensorflow as tf
from pipelines import assert_same_elements

from datakit.core import arguments, cores
from datakit.core.arguments import AUTOTUNE, default_cycle_length
from datakit.glassbox.dataset import Dataset
from datakit.glassbox.interleave_cycle import interleave_steps
from datakit.readers.csv_files.shards import write_shards
from datakit.see import interleave

N_CASES = 300


def random_case(rng: random.Random) -> dict:
    n_inputs = rng.choice([0, 1, 2, 3, 4, 5, 7, 9])
    return {
        # Lengths include empty inputs, often.
        "lengths": [rng.choice([0, 0, 1, 2, 3, 5, 8]) for _ in range(n_inputs)],
        "cycle_length": rng.choice([None, AUTOTUNE, 1, 2, 3, 4, 6, 10]),
        "block_length": rng.choice([None, 1, 1, 2, 3, 5]),
        "num_parallel_calls": rng.choice([None, None, 1, 2, AUTOTUNE]),
        "deterministic": rng.choice([None, True]),
    }


def build(case: dict, api):
    bases = [100 * i for i in range(len(case["lengths"]))]
    if api is tf.data.Dataset:
        src = tf.data.Dataset.from_tensor_slices(
            (tf.constant(bases, tf.int64), tf.constant(case["lengths"], tf.int64)))
    else:
        src = Dataset.from_tensor_slices((np.array(bases, np.int64),
                                          np.array(case["lengths"], np.int64)))
    kwargs = {k: v for k, v in case.items() if k != "lengths"}
    return src.interleave(lambda b, n: api.range(b, b + n), **kwargs)


@pytest.mark.filterwarnings("ignore:The `deterministic` argument has no effect")
def test_generated_interleaves_match_tf_data():
    rng = random.Random(4)
    kinds = {"fewer inputs than cycle_length": 0, "with an empty input": 0, "block_length > 1": 0,
             "parallel": 0, "invalid (both raise)": 0}
    for _ in range(N_CASES):
        case = random_case(rng)
        try:
            cycle, _, _ = arguments.interleave_lengths(case["cycle_length"], case["block_length"],
                                                    case["num_parallel_calls"])
        except ValueError:
            kinds["invalid (both raise)"] += 1
            with pytest.raises(tf.errors.InvalidArgumentError, match="num_parallel_calls"):
                list(build(case, tf.data.Dataset))
            with pytest.raises(ValueError, match="num_parallel_calls"):
                build(case, Dataset)
            continue
        kinds["parallel"] += case["num_parallel_calls"] is not None
        kinds["fewer inputs than cycle_length"] += len(case["lengths"]) < cycle
        kinds["with an empty input"] += 0 in case["lengths"]
        kinds["block_length > 1"] += (case["block_length"] or 1) > 1
        expected = list(build(case, tf.data.Dataset).as_numpy_iterator())
        actual = list(build(case, Dataset))
        assert_same_elements(expected, actual, context=repr(case))
    bad = kinds["invalid (both raise)"]
    print(f"glass-box interleave == tf.data on {N_CASES} generated cases: {N_CASES - bad} "
          f"compared element for element, {bad} invalid that raise in both; {kinds}")
    assert min(kinds.values()) >= 5 and sum(kinds.values()) > N_CASES // 2


@pytest.mark.parametrize("parallel", [None, 1, 2, AUTOTUNE])
def test_default_cycle_length_follows_cores_and_parallel_calls(parallel):
    # 2c + 1 inputs, each [i, i]: with cycle c the first 2c elements are 0..c-1 twice.
    c = default_cycle_length(parallel)
    assert c == {None: cores.affinity_cores(), 1: 1, 2: min(2, cores.affinity_cores()),
                 -1: -(-cores.affinity_cores() // 3)}[parallel]
    ds = tf.data.Dataset.range(2 * c + 1).interleave(
        lambda i: tf.data.Dataset.from_tensors(i).repeat(2), num_parallel_calls=parallel)
    assert [int(x) for x in ds.take(2 * c)] == list(range(c)) * 2
    gb = Dataset.range(2 * c + 1).interleave(lambda i: Dataset.from_iterable([i, i]),
                                             num_parallel_calls=parallel)
    assert [int(x) for x in gb.take(2 * c)] == list(range(c)) * 2


def test_steps_say_where_each_element_came_from():
    steps = list(interleave_steps([2, 0, 3], range, cycle_length=2))
    assert [(s.value, s.input, s.position) for s in steps] == [
        (0, 0, 0), (1, 0, 1), (0, 2, 0), (1, 2, 1), (2, 2, 2)]
    ops = Dataset.from_iterable([2, 3]).interleave(
        lambda n: Dataset.range(n), cycle_length=2).trace()
    assert [s.sources for s in ops[-1].steps] == [(0,), (1,), (0,), (1,), (1,)]


@pytest.mark.parametrize("kwargs, fix", [
    pytest.param({"cycle_length": 0}, "cycle_length=0", id="cycle_length-0"),
    pytest.param({"block_length": 0}, "block_length=0", id="block_length-0"),
    pytest.param({"num_parallel_calls": 0}, "num_parallel_calls=0", id="num_parallel_calls-0"),
    pytest.param({"cycle_length": 1.5}, "int", id="cycle_length-float")])
def test_bad_arguments_say_how_to_fix(kwargs, fix):
    with pytest.raises((ValueError, TypeError), match=fix):
        Dataset.range(3).interleave(lambda x: Dataset.range(x), **kwargs)


def make_files(folder, sizes):
    for i, n in enumerate(sizes):
        (folder / f"f{i}.txt").write_text("".join(f"line {j}\n" for j in range(n)))
    return folder


def test_list_files_unshuffled_equals_tf_sorted(tmp_path):
    make_files(tmp_path, [1] * 12)
    patterns = [str(tmp_path / "f1*.txt"), str(tmp_path / "*.txt")]  # overlapping: duplicates
    expected = list(tf.data.Dataset.list_files(patterns, shuffle=False).as_numpy_iterator())
    assert list(Dataset.list_files(patterns, shuffle=False)) == expected
    assert expected == sorted(expected)


def test_list_files_shuffled_same_names_and_seeded(tmp_path):
    make_files(tmp_path, [1] * 12)
    pattern = str(tmp_path / "*.txt")
    tf_names = list(tf.data.Dataset.list_files(pattern, seed=1).as_numpy_iterator())
    a = list(Dataset.list_files(pattern, seed=1))
    assert sorted(a) == sorted(tf_names)  # same names; the order is each one's own RNG
    assert a == list(Dataset.list_files(pattern, seed=1))
    assert a != list(Dataset.list_files(pattern, seed=2))
    assert a != sorted(a)
    # tf.data: the same seed gives the same order in a fresh pipeline
    assert tf_names == list(tf.data.Dataset.list_files(pattern, seed=1).as_numpy_iterator())
    # ... and both reshuffle on every pass
    twice = Dataset.list_files(pattern, seed=1).repeat(2)
    first, second = list(twice)[:12], list(twice)[12:]
    assert sorted(first) == sorted(second) and first != second


def test_list_files_no_match_raises_in_both(tmp_path):
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched"):
        tf.data.Dataset.list_files(str(tmp_path / "*.csv"))
    with pytest.raises(FileNotFoundError, match="No files matched"):
        Dataset.list_files(str(tmp_path / "*.csv"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cycle, block", [(2, 1), (3, 2), (None, 1), (5, 3)])
def test_trace_sources_of_real_files_matches_glass_box(tmp_path, cycle, block):
    sizes = [4, 0, 7, 2, 5]
    files = sorted(str(p) for p in make_files(tmp_path, sizes).glob("*.txt"))
    trace = interleave.trace_sources(files, cycle_length=cycle, block_length=block,
                                     skip_header=False)
    lines = {f: [(i, j) for j in range(1, n + 1)]
             for i, (f, n) in enumerate(zip(files, sizes, strict=False))}
    expected = [s.value for s in interleave_steps(
        files, lambda f: lines[f], cycle_length=cycle, block_length=block)]
    assert list(zip(trace.file.tolist(), trace.line.tolist(), strict=False)) == expected
    # every line exactly once
    assert sorted(expected) == sorted(x for f in files for x in lines[f])


@pytest.mark.timeout(120)
def test_non_deterministic_parallel_interleave_keeps_every_line(tmp_path):
    paths = write_shards({"id": np.arange(60)}, tmp_path, num_shards=6, prefix="s")
    trace = interleave.trace_sources(paths, cycle_length=3, num_parallel_calls=3,
                                     deterministic=False)
    assert sorted(zip(trace.file.tolist(), trace.line.tolist(), strict=False)) == [
        (f, line) for f in range(6) for line in range(2, 12)]


def test_plot_sources_draws_one_cell_per_element(tmp_path):
    files = sorted(str(p) for p in make_files(tmp_path, [3, 2]).glob("*.txt"))
    ax = interleave.plot_sources(interleave.trace_sources(files, cycle_length=2,
                                                          skip_header=False))
    assert len(ax.patches) == 5 and len(ax.get_legend().get_texts()) == 2
    import matplotlib.pyplot as plt
    plt.close(ax.figure)


def test_trace_sources_refuses_a_set_of_files(tmp_path):
    """#47: a set was read in its hash order, so the picture's file numbers followed it."""
    from datakit.see.interleave import trace_sources
    for n in "ab":
        (tmp_path / f"{n}.txt").write_text("h\n1\n")
    with pytest.raises(TypeError, match="files must be a list of paths, got set"):
        trace_sources({str(tmp_path / "a.txt"), str(tmp_path / "b.txt")}, cycle_length=1)
