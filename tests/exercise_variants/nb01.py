"""Notebook 01's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case

PAIRS = ("features = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)\n"
         "labels = np.array([0, 1, 0])\n"
         "pairs = tf.data.Dataset.from_tensor_slices((features, labels))\n")
PEOPLE = ("heights = np.array([1.62, 1.80, 1.75])\n"
          "shoe_sizes = np.array([38.0, 44.0, 41.0])\n")

CASES = {
    "01.1": Case(
        checker="dict_dataset",
        setup="",
        check="exercises.check('dict_dataset', answer)",
        correct=["tf.data.Dataset.from_tensor_slices({'x': [0.5, 1.5, 2.5], 'label': [1, 0, 1]})",
                 "tf.data.Dataset.from_tensor_slices({'label': np.array([1, 0, 1]), "
                 "'x': np.array([0.5, 1.5, 2.5], np.float32)})",
                 "[{'x': 0.5, 'label': 1}, {'x': 1.5, 'label': 0}, {'x': 2.5, 'label': 1}]"],
        wrong=[("tf.data.Dataset.from_tensor_slices(([0.5, 1.5, 2.5], [1, 0, 1]))",
                "the element is a tuple of 2, expected a dict"),
               ("tf.data.Dataset.from_tensor_slices({'x': [0.5, 1.5, 2.5], 'y': [1, 0, 1]})",
                "missing keys ['label'] and extra keys ['y']"),
               ("tf.data.Dataset.from_tensor_slices({'x': [0.5, 1.5, 2.5], 'label': [1.0, 0.0, "
                "1.0]})", "a float is not an index"),
               ("tf.data.Dataset.from_tensor_slices({'x': [0.5, 1.5, 2.5], 'label': [0, 1, 0]})",
                "element 0 differs: ['label']: yours 0, expected 1")],
    ),
    "01.2": Case(
        checker="compare",
        setup="words = tf.data.Dataset.from_tensor_slices(['tf', 'data', 'rocks'])\n",
        check="exercises.compare(answer, [len(w) for w in ['tf', 'data', 'rocks']])",
        correct=["words.map(tf.strings.length)",
                 "[int(tf.strings.length(w)) for w in words]",
                 "words.map(lambda w: tf.strings.length(w, unit='UTF8_CHAR'))"],
        wrong=[("words.map(tf.size)", "element 0 differs: yours 1, expected 2"),
               ("[len(str(w)) for w in words]", "no element of yours is in the reference"),
               ("words", "yours bytes (|S2), expected integers")],
    ),
    "01.3": Case(
        checker="compare",
        setup="counting = tf.data.Dataset.from_tensor_slices(tf.range(100))\n",
        check="exercises.compare(answer, 100)",
        correct=["counting.reduce(0, lambda count, _: count + 1)",
                 "int(counting.reduce(np.int64(0), lambda state, element: state + 1))"],
        wrong=[("counting.reduce(0, lambda count, x: count + x)", "yours 4950, expected 100"),
               ("counting.reduce(0, lambda count, _: count)", "yours 0, expected 100"),
               ("counting.reduce(0.0, lambda count, _: count + 1.0)", "a float is not")],
    ),
    "01.4": Case(
        checker="named_pairs",
        setup=PAIRS,
        check="exercises.check('named_pairs', answer, features, labels)",
        correct=["def answer(features, labels):\n"
                 "    return tf.data.Dataset.from_tensor_slices(({'x': features}, labels))",
                 "def answer(features, labels):\n"
                 "    pairs = tf.data.Dataset.from_tensor_slices((features, labels))\n"
                 "    return pairs.map(lambda x, y: ({'x': x}, y))"],
        wrong=[("def answer(features, labels):\n"
                "    def named(x, y):\n"
                "        {'x': x}, y\n"
                "    return tf.data.Dataset.from_tensor_slices((features, labels)).map(named)",
                "forget to `return`"),
               ("def answer(features, labels):\n"
                "    tf.data.Dataset.from_tensor_slices(({'x': features}, labels))",
                "forget to `return`"),
               ("def answer(features, labels):\n"
                "    return tf.data.Dataset.from_tensor_slices((features, labels))",
                "[0] is an array of shape (2,) and dtype float32, expected a dict"),
               ("def answer(features, labels):\n"
                "    return tf.data.Dataset.from_tensor_slices({'x': features, 'label': labels})",
                "the element is a dict with keys ['label', 'x'], expected a tuple of 2"),
               ("def answer(features, labels):\n"
                "    pairs = tf.data.Dataset.from_tensor_slices((features, labels))\n"
                "    return pairs.map(lambda x, y: ({'x': x.numpy()}, y))",
                "raised AttributeError (your line 3")],
    ),
    "01.5": Case(
        checker="compare",
        setup=PEOPLE,
        check="exercises.compare(answer, [(1.62, 38.0), (1.80, 44.0), (1.75, 41.0)])",
        correct=["tf.data.Dataset.from_tensor_slices((heights, shoe_sizes))",
                 "tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(heights), "
                 "tf.data.Dataset.from_tensor_slices(shoe_sizes)))"],
        wrong=[("tf.data.Dataset.from_tensor_slices([heights, shoe_sizes])",
                "is an array of shape (3,) and dtype float64, expected a tuple of 2"),
               ("tf.data.Dataset.from_tensor_slices((shoe_sizes, heights))",
                "element 0 differs: [0]: yours 38, expected 1.62")],
    ),
}
