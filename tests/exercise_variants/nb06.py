"""Notebook 06's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case
from tests.exercise_variants.notebook_code import cells_defining

TRACING = ("from datakit import exercises\nfrom datakit.perf import synthetic, timeline\n"
           + cells_defining("06_performance", "serial"))

CASES = {
    "06.1": Case(
        checker="plain",
        setup=TRACING + "\n" + cells_defining("06_performance", "parses_at_once"),
        check="parses_at_once(answer) >= 3",
        correct=["slow.map(parse, num_parallel_calls=4).prefetch(2)",
                 "slow.map(parse, num_parallel_calls=3)",
                 "slow.map(parse, num_parallel_calls=8).prefetch(1)"],
        wrong=["slow.map(parse).prefetch(4)",  # a deeper buffer, one parse at a time
               "slow.prefetch(4).map(parse)",
               "slow.map(parse, num_parallel_calls=2).prefetch(2)"],  # 2 at once: not enough
    ),
    "06.2": Case(
        checker="cached_splits",
        setup="parsed = tf.data.Dataset.range(10)\n",
        check='exercises.check("cached_splits", answer)',
        correct=["(parsed.cache(), parsed.cache().shuffle(10, seed=42))",
                 "(parsed.cache(), parsed.cache().shuffle(10))",
                 "(parsed.cache(), parsed.cache().shuffle(10, seed=1, "
                 "reshuffle_each_iteration=True))",
                 "(parsed.cache().prefetch(1), parsed.cache().shuffle(4, seed=42).prefetch(1))"],
        wrong=[("(parsed.cache(), parsed.shuffle(10, seed=42).cache())",  # the order is cached
                "the same order in both epochs"),
               ("(parsed.cache().shuffle(10, seed=42), parsed.cache().shuffle(10, seed=42))",
                "validation comes in another order"),
               ("(parsed.cache(), parsed.cache().shuffle(10, seed=42, "
                "reshuffle_each_iteration=False))", "the same order in both epochs"),
               ("(parsed.cache(), parsed.shuffle(10, seed=42))", "training pipeline has no cache"),
               ("(parsed.cache(), parsed.cache().shuffle(10).take(8))", "8 elements"),
               ("[parsed.cache(), parsed.cache().shuffle(10)]", "a tuple of two datasets")],
    ),
    "06.3": Case(
        checker="plain",
        setup=TRACING + "\n" + cells_defining("06_performance", "overlapping_parses"),
        check="overlapping_parses(answer) > 0",
        correct=["rows.map(parse_20ms).prefetch(1)", "rows.map(parse_20ms).prefetch(2)",
                 "rows.map(parse_20ms, num_parallel_calls=2).prefetch(1)"],
        wrong=["rows.prefetch(1).map(parse_20ms)", "rows.prefetch(2).map(parse_20ms)",
               "rows.map(parse_20ms)"],
    ),
}
