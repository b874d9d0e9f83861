"""Notebook 02's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case

CASES = {
    "02.2": Case(
        checker="standardize_and_batch",
        setup="",
        check="exercises.check('standardize_and_batch', answer)",
        correct=["lambda ds: ds.map(lambda x: x - 4.5).batch(5)",
                 "def answer(ds):\n    return ds.batch(5).map(lambda batch: batch - 4.5)",
                 "def answer(ds):\n    ds = ds.map(lambda x: x - 4.5)\n    return ds.batch(5)"],
        wrong=[("lambda ds: ds.map(lambda x: x - 4.5).batch(4)",
                "yours has 3 elements, the reference 2"),
               ("lambda ds: ds.map(lambda x: x - 4.5)", "your rows are not batched"),
               ("lambda ds: ds.map(lambda x: x + 4.5).batch(5)", "yours 4.5, expected -4.5"),
               ("def answer(ds):\n    ds.map(lambda x: x - 4.5).batch(5)",
                "did it forget to `return`")],
    ),
    "02.3": Case(
        checker="odd_squares",
        setup="def square(x):\n    return x * x\n\ndef is_odd(x):\n    return x % 2 == 1\n",
        check="exercises.check('odd_squares', answer)",
        correct=["tf.data.Dataset.range(10).filter(is_odd).map(square)",
                 "tf.data.Dataset.range(10).map(square).filter(is_odd)",
                 "tf.data.Dataset.range(10).map(lambda x: (x, x * x))"
                 ".filter(lambda x, y: x % 2 == 1).map(lambda x, y: y)"],
        wrong=[("tf.data.Dataset.range(10).filter(lambda x: x % 2 == 0).map(square)",
                "no element of yours is in the reference"),
               ("tf.data.Dataset.range(10).filter(is_odd).map(lambda x: x * 2)",
                "element 0 differs: yours 2, expected 1"),
               ("tf.data.Dataset.range(10).filter(is_odd)",
                "element 1 differs: yours 3, expected 9")],
    ),
    "02.4": Case(
        checker="take_skip_split",
        setup="everything = tf.data.Dataset.range(20)\n",
        check="exercises.check('take_skip_split', answer)",
        correct=["(everything.take(3), everything.skip(3))",
                 "n_valid = int(0.15 * 20)\n"
                 "answer = (everything.take(n_valid), everything.skip(n_valid))"],
        wrong=[("(everything.take(3), everything.skip(2))", "1 element(s) in both, first 2"),
               ("(everything.take(3), everything)", "3 element(s) in both"),
               ("(everything.take(15), everything.skip(15))", "15 validation elements"),
               ("(everything.take(3), everything.skip(4))", "1 element(s) in neither"),
               ("everything.take(3)", "as a tuple of two datasets")],
    ),
    "02.5": Case(
        checker="halve_and_round",
        setup="",
        check="exercises.check('halve_and_round', answer)",
        correct=["lambda x: tf.round(tf.cast(x, tf.float32) / 2)",
                 "lambda x: tf.round(x / 2)",
                 "lambda x: tf.numpy_function(lambda v: np.round(v / 2), [x], tf.float64)"],
        wrong=[("lambda x: x // 2", "yours integers (int64), expected floats"),
               ("lambda x: tf.cast(x // 2, tf.float32)", "element 3 differs: yours 1, expected 2"),
               ("lambda x: tf.math.floor(x / 2)", "element 3 differs: yours 1, expected 2"),
               ("lambda x: tf.math.ceil(x / 2)", "element 1 differs: yours 1, expected 0"),
               ("def answer(x):\n    return np.round(x.numpy() / 2)",
                "raised AttributeError (your line 2")],
    ),
}
