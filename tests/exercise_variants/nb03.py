"""Notebook 03's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case

TAGGED = ("tagged = tf.data.Dataset.range(10).repeat(3).enumerate().shuffle(5, seed=42)\n"
          "positions = [int(p) for p, v in tagged]\n")

CASES = {
    "03.2": Case(
        checker="epoch_0_leaves",
        setup="tf.random.set_seed(None)\n",
        check="exercises.check('epoch_0_leaves', answer)",
        correct=[TAGGED + "answer = max(step for step, p in enumerate(positions) if p < 10)",
                 TAGGED + "answer = len(positions) - 1 - next("
                          "i for i, p in enumerate(reversed(positions)) if p < 10)"],
        wrong=[(TAGGED + "answer = positions.index(9)", "yours 5, expected 11"),
               (TAGGED + "answer = next(step for step, p in enumerate(positions) if p >= 10)",
                "yours 8, expected 11"),
               (TAGGED + "answer = float(max(s for s, p in enumerate(positions) if p < 10))",
                "a float is not")],
    ),
    "03.3": Case(
        checker="shuffled_pairs",
        setup="labels = np.arange(50)\nfeatures = 10 * labels\n",
        check="exercises.check('shuffled_pairs', answer, labels)",
        correct=["tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(50)",
                 "tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(10)",
                 "tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(features), "
                 "tf.data.Dataset.from_tensor_slices(labels))).shuffle(50)"],
        wrong=[("tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(features).shuffle(50),"
                " tf.data.Dataset.from_tensor_slices(labels).shuffle(50)))", "pair(s) broken"),
               ("tf.data.Dataset.from_tensor_slices((features, labels))", "in the input's order"),
               ("tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(50).take(40)",
                "yours has 40 elements, the reference 50")],
    ),
    "03.4": Case(
        checker="split_then_shuffle",
        setup="",
        check="exercises.check('split_then_shuffle', answer)",
        correct=["shuffled = tf.data.Dataset.range(100).shuffle(100, seed=42, "
                 "reshuffle_each_iteration=False)\n"
                 "answer = (shuffled.take(20), shuffled.skip(20).shuffle(80, seed=42))",
                 "shuffled = tf.data.Dataset.range(100).shuffle(100, seed=7, "
                 "reshuffle_each_iteration=False)\n"
                 "answer = (shuffled.take(20), shuffled.skip(20).shuffle(80))"],
        wrong=[("shuffled = tf.data.Dataset.range(100).shuffle(100, seed=42)\n"
                "answer = (shuffled.take(20), shuffled.skip(20))", "validated and trained on"),
               ("shuffled = tf.data.Dataset.range(100).shuffle(100, seed=42, "
                "reshuffle_each_iteration=False)\n"
                "answer = (shuffled.take(20), shuffled.skip(20))",
                "the same order every epoch"),
               ("shuffled = tf.data.Dataset.range(100).shuffle(100, seed=42)\n"
                "answer = (shuffled.take(20), shuffled.skip(20).shuffle(80))",
                "validated and trained on"),
               ("shuffled = tf.data.Dataset.range(100).shuffle(100, seed=42, "
                "reshuffle_each_iteration=False)\n"
                "answer = (shuffled.take(20), shuffled.skip(10).shuffle(80))",
                "10 number(s) validated and trained on")],
    ),
}
