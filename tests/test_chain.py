"""The chain of any pipeline, read from the dataset: kinds, names, functions, knobs."""

import tensorflow as tf

from datakit.perf.chain import (
    chain_of,
    describe,
    function_of,
    kind_of,
    knob,
    py_functions,
    uses_py_function,
)


def plus_one(x):
    return x + 1


def times_two(x):
    return x * 2


def test_the_chain_is_recovered_with_names_kinds_and_knobs():
    ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0]).map(times_two, num_parallel_calls=2,
                                                             name="double")
    ds = ds.cache().shuffle(4, seed=1).batch(2).prefetch(1).with_options(tf.data.Options())
    chain = chain_of(ds)
    assert [kind_of(d) for d in chain] == [
        "from_tensor_slices", "map", "cache", "shuffle", "batch", "prefetch"]
    assert chain[1]._name == "double" and function_of(chain[1]) is times_two
    assert describe(chain[1]) == "num_parallel_calls=2"
    assert describe(chain[4]) == "batch_size=2"


def test_a_snapshot_keeps_the_stages_before_it(tmp_path):
    """snapshot reads a zip of its own in front of your dataset; the chain goes through it."""
    ds = tf.data.Dataset.range(4).map(times_two, name="double").snapshot(str(tmp_path))
    chain = chain_of(ds.batch(2))
    kinds = [kind_of(d) for d in chain]
    assert kinds[:3] == ["range", "map", "snapshot"] and kinds[-1] == "batch"
    assert chain[1]._name == "double" and function_of(chain[1]) is times_two


def py_plus_one(x):
    return tf.py_function(lambda v: v + 1, [x], tf.int64)


def test_py_function_is_spotted():
    ds = tf.data.Dataset.range(3).map(py_plus_one).map(plus_one)
    chain = chain_of(ds)
    assert [uses_py_function(d) for d in chain] == [False, True, False]


def test_knob_reads_integers_and_autotune():
    ds = tf.data.Dataset.range(4).map(plus_one, num_parallel_calls=tf.data.AUTOTUNE)
    assert knob(ds, "num_parallel_calls") == -1 and knob(ds, "batch_size") is None


def test_the_kit_s_own_bad_line_message_is_not_a_py_function_to_replace(tmp_path):
    from datakit.readers import csv_files
    from datakit.readers.csv_files.stats import column_stats

    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n1,2,0\n3,4,1\n")
    ds = csv_files.csv_reader_dataset([str(path)], stats=column_stats([str(path)]), label="y")
    chain = chain_of(ds)
    assert any(py_functions(d) for d in chain)  # its numpy_function is there, and known:
    assert not any(uses_py_function(d) for d in chain)
    assert "py_function" not in " ".join(describe(d) for d in chain)
