"""Notebook 09's write and debug exercises, answered right and wrong, on the notebook's own
pipeline (its cells, run on 8 small videos: tests/exercise_variants/notebook_code.py)."""

from tests.exercise_variants import Case

SETUP = """from tests.exercise_variants.notebook_code import notebook09
globals().update(notebook09())
"""

FRAMES = SETUP + """total_frames = sum(len(read_frames(p)) for p in train_paths)
lengths = tf.data.TFRecordDataset(shard_files).map(
    lambda s: tf.io.parse_single_sequence_example(
        s, {"length": tf.io.FixedLenFeature((), tf.int64)})[0]["length"])
"""

DECODED = SETUP + """import tempfile

def decode_video(serialized):
    context, sequence = tf.io.parse_single_sequence_example(
        serialized, context_features, sequence_features)
    return tf.map_fn(decode_jpeg, sequence["frames"], fn_output_signature=tf.uint8), \\
        context["label"]


def random_clip(decoded, random_number):
    frames, label = decoded
    start = random_number % (tf.shape(frames, out_type=tf.int64)[0] - CLIP_LEN + 1)
    return tf.ensure_shape(frames[start:start + CLIP_LEN], (CLIP_LEN, SIZE, SIZE, 3)), label


in_order = tf.data.Dataset.from_tensor_slices(shard_files).interleave(
    tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=2, deterministic=True)
"""

ONE_SEED = 'plain_clip_dataset(DATA / "records" / "train", len(train_paths), {})'

CASES = {
    "09.1": Case(
        checker="plain",
        setup=FRAMES,
        check="answer == total_frames",
        correct=["int(lengths.reduce(tf.constant(0, tf.int64), lambda acc, n: acc + n))",
                 "int(lengths.reduce(np.int64(0), lambda total, n: total + n))",
                 "sum(int(n) for n in lengths)"],
        wrong=["N_VIDEOS * CLIP_LEN",  # the frames a clip epoch decodes, not all of them
               "int(lengths.reduce(np.int64(0), lambda acc, n: acc + 1))",  # counts videos
               "int(lengths.take(N_VIDEOS // 4).reduce(np.int64(0), lambda a, n: a + n))"],
    ),
    "09.2": Case(
        checker="reproducible_epochs",
        setup=SETUP,
        check='exercises.check("reproducible_epochs", answer)',
        correct=[f"lambda n: [{ONE_SEED.format('SEED + epoch')} for epoch in range(n)]",
                 f"def answer(n):\n    train = {ONE_SEED.format('SEED')}\n"
                 "    return [train] * n  # built once: each pass draws new starts",
                 f"lambda n: [{ONE_SEED.format('SEED * 1000 + epoch')} for epoch in range(n)]"],
        wrong=[(f"lambda n: [{ONE_SEED.format('SEED')} for epoch in range(n)]",  # the bug
                "repeats epoch 1's clips"),
               (f"lambda n: [{ONE_SEED.format('None')} for epoch in range(n)]",
                "a run made again draws other clips"),  # not reproducible
               (f"lambda n: [{ONE_SEED.format('SEED + 0 * epoch')} for epoch in range(n)]",
                "repeats epoch 1's clips"),
               (f"lambda n: {ONE_SEED.format('SEED')}", "expected a list of 2 datasets"),
               (f"[{ONE_SEED.format('SEED + epoch')} for epoch in range(2)]",
                "pass your function run(n)")],
    ),
    "09.3": Case(
        checker="new_clips_each_epoch",
        setup=DECODED,
        check='exercises.check("new_clips_each_epoch", answer, N_VIDEOS)',
        correct=["tf.data.Dataset.zip(in_order.map(decode_video).cache(tempfile.mkdtemp() + "
                 "'/videos').shuffle(16, seed=SEED), random_numbers).map(random_clip).batch(16)",
                 "tf.data.Dataset.zip(in_order.map(decode_video).cache().shuffle(4, seed=SEED),"
                 " random_numbers).map(random_clip).batch(16)"],
        wrong=[("pairs.map(parse_clip).cache().shuffle(64, seed=SEED).batch(16)",  # the bug
                "the cache replays"),
               ("pairs.cache().map(parse_clip).shuffle(64, seed=SEED).batch(16)",
                "the cache replays"),  # the random numbers cached
               ("tf.data.Dataset.zip(in_order.map(decode_video), random_numbers)"
                ".map(random_clip).cache().batch(16)", "the cache replays"),
               ("pairs.map(parse_clip).shuffle(64, seed=SEED).batch(16)",  # decodes every epoch
                "no cache()"),
               ("tf.data.Dataset.zip(in_order.map(decode_video).cache().take(N_VIDEOS // 2), "
                "random_numbers).map(random_clip).batch(16)", "expected 8, one per video")],
    ),
}
