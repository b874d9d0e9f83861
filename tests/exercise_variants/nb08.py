"""Notebook 08's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case
from tests.exercise_variants.notebook_code import cells_defining

ELEMENT_BYTES = cells_defining("08_where_the_memory_goes", "element_bytes").split(
    "\n\n\nfloats =")[0]  # the cell's functions, not its prints

FRAMES = ELEMENT_BYTES + """
frames = tf.data.Dataset.range(1000).map(lambda i: tf.fill([64, 64, 3], tf.cast(i, tf.float32)))
one = element_bytes(frames.element_spec)
"""

CACHE = ELEMENT_BYTES + """
raw = tf.data.Dataset.range(40).map(lambda i: tf.fill([8, 64, 64, 3], tf.cast(i, tf.uint8)))
buggy = raw.map(lambda clip: tf.cast(clip, tf.float32) / 255.0).cache()


def cache_bytes(dataset):  # what its cache() holds once filled, by the rule
    while dataset is not None and "Cache" not in type(dataset).__name__:
        dataset = getattr(dataset, "_input_dataset", None)
    return None if dataset is None else 40 * element_bytes(dataset.element_spec)


def fixed_right(dataset):
    same = all(a.dtype == b.dtype and np.array_equal(a, b)
               for a, b in zip(buggy.as_numpy_iterator(), dataset.as_numpy_iterator(),
                               strict=True))
    return same and cache_bytes(dataset) == 40 * element_bytes(raw.element_spec)
"""

CASES = {
    "08.1": Case(
        checker="plain",
        setup=FRAMES,
        check="answer * one <= 10e6 < (answer + 1) * one",
        correct=["10_000_000 // (64 * 64 * 3 * 4)",
                 "int(10e6 / element_bytes(frames.element_spec))",
                 "int(10e6 // (64 * 64 * 3 * np.dtype(np.float32).itemsize))"],
        wrong=["10_000_000 // (64 * 64 * 3)",  # a byte per value: uint8's size, not float32's
               "10 * 2**20 // (64 * 64 * 3 * 4)",  # MiB for MB: 213 frames, 10.5 MB
               "round(10e6 / (64 * 64 * 3 * 4) + 0.5)",  # rounded up: 204 do not fit
               "10_000_000 // (64 * 64 * 4)"],  # the channels forgotten
    ),
    "08.2": Case(
        checker="plain",
        setup=CACHE,
        check="fixed_right(answer)",
        correct=["raw.cache().map(lambda clip: tf.cast(clip, tf.float32) / 255.0)",
                 "def to_float(clip):\n    return tf.cast(clip, tf.float32) / 255.0\n"
                 "answer = raw.cache().map(to_float)",
                 "raw.cache().map(lambda c: tf.cast(c, tf.float32) / 255.0, "
                 "num_parallel_calls=2)"],
        wrong=["buggy",
               "raw.cache()",  # a quarter of the bytes, but not the elements asked for
               "raw.map(lambda clip: tf.cast(clip, tf.float16) / 255.0).cache()",
               "raw.map(lambda clip: tf.cast(clip, tf.float32) / 255.0).cache().map("
               "lambda clip: clip)"],
    ),
}
