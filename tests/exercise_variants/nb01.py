"""Notebook 01's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case

FEATURES = ("features = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)\n"
            "labels = np.array([0, 1, 0])\n"
            "pairs = tf.data.Dataset.from_tensor_slices((features, labels))\n")

CASES = {
    "01.4": Case(
        checker="compare",
        setup=FEATURES,
        check="exercises.compare(answer, [({'x': f}, l) for f, l in zip(features, labels)])",
        correct=["tf.data.Dataset.from_tensor_slices(({'x': features}, labels))",
                 "pairs.map(lambda x, y: ({'x': x}, y))"],
        wrong=[("tf.data.Dataset.from_tensor_slices((features, labels))", "dict"),
               ("tf.data.Dataset.from_tensor_slices(({'x': labels}, features))", "")],
    ),
}
