"""Notebook 05's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case

HOUSING = '''
import tempfile
import pandas as pd
import datakit
from datakit.readers.csv_files import shards
from datakit.readers.csv_files.stats import column_stats
parts = shards.split_into_shards(datakit.data_path("housing", "housing.csv"),
                                 Path(tempfile.mkdtemp()), seed=42)
train_df = pd.concat([pd.read_csv(f) for f in parts["train"]])
numeric = list(train_df.columns[:8])
X_mean = train_df[numeric].mean().to_numpy(np.float32)
X_std = train_df[numeric].std(ddof=0).to_numpy(np.float32)
n_inputs = len(numeric)
stats = column_stats(parts["train"])
record_defaults = [np.nan] * n_inputs + [tf.constant([], dtype=tf.float32), ""]

def parse_csv_line(line):
    fields = tf.io.decode_csv(line, record_defaults=record_defaults)
    x = tf.stack(fields[:n_inputs])
    return tf.where(tf.math.is_nan(x), X_mean, x), fields[n_inputs]

def preprocess(line):
    x, y = parse_csv_line(line)
    return (x - X_mean) / X_std, y / 100_000
'''
INCOME = '''
income_inputs = [c for c in train_df.columns[:9] if c != "median_income"]
income_mean = train_df[income_inputs].mean()
income_defaults = [tf.constant([], tf.float32) if c == "median_income" else
                   float(income_mean[c]) if c in income_inputs else "" for c in train_df.columns]
income_mean = income_mean.to_numpy(np.float32)
income_std = train_df[income_inputs].std(ddof=0).to_numpy(np.float32)

def parse_income(line):
    fields = dict(zip(train_df.columns, tf.io.decode_csv(line, record_defaults=income_defaults)))
    x = tf.stack([fields[c] for c in income_inputs])
    return (x - income_mean) / income_std, fields["median_income"]
'''
READER = '''
def answer(filepaths, seed=None):
    dataset = tf.data.Dataset.list_files(filepaths, seed=seed)
    dataset = dataset.interleave(lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=5)
    dataset = dataset.shuffle(10_000, seed=seed)
    return dataset.map(PARSE, num_parallel_calls=5).batch(32).prefetch(1)
'''
NEAR_BAY = '''
def is_near_bay(line):
    (proximity,) = tf.io.decode_csv(line, record_defaults=[""], select_cols=[COLUMN])
    return tf.cast(proximity == "NEAR BAY", tf.int64)

test_lines = tf.data.Dataset.from_tensor_slices(FILES).interleave(
    lambda f: tf.data.TextLineDataset(f).skip(1))
answer = test_lines.map(is_near_bay).reduce(tf.constant(0, tf.int64), lambda total, x: total + x)
'''
LINES = ('empty_bedrooms = "-118.2,34.0,20.0,900.0,,700.0,300.0,3.1,150000.0,INLAND"\n'
         'lines = tf.data.Dataset.from_tensor_slices([empty_bedrooms]).concatenate(\n'
         '    tf.data.TextLineDataset(parts["valid"][0]).skip(1).take(20))\n')
PARSE_FIX = '''
def answer(line):
    defaults = DEFAULTS + [tf.constant([], dtype=tf.float32), ""]
    fields = tf.io.decode_csv(line, record_defaults=defaults)
    x = tf.stack(fields[:n_inputs])
    return (x - X_mean) / X_std, fields[n_inputs] / 100_000
'''
BATCH_PARSE = '''
raw_defaults = [np.nan] * n_inputs + [tf.constant([], tf.float32), ""]

def parse_batch(lines):
    fields = tf.io.decode_csv(lines, record_defaults=raw_defaults)
    return STACK, fields[n_inputs]

answer = valid_lines.batch(32).map(parse_batch)
'''
RAW = '''
raw_defaults = [np.nan] * n_inputs + [tf.constant([], tf.float32), ""]

def parse_line(line):
    fields = tf.io.decode_csv(line, record_defaults=raw_defaults)
    return tf.stack(fields[:n_inputs]), fields[n_inputs]

valid_lines = tf.data.TextLineDataset(parts["valid"][0]).skip(1)
'''


def _reader(parse: str, extra: str = "") -> str:
    return INCOME + READER.replace("PARSE", parse) + extra


CASES = {
    "05.1": Case(
        checker="csv_reader",
        setup=HOUSING,
        check=('exercises.check("csv_reader", answer, parts["valid"], stats=stats, '
               'label="median_income", seed=42)'),
        correct=[_reader("parse_income"),
                 _reader("parse_income").replace("cycle_length=5)", "cycle_length=5, "
                                                 "num_parallel_calls=5)")],
        wrong=[(_reader("parse_income").replace("seed=seed)\n    return", "seed=None)\n"
                                                "    return"), "in another order"),
               (_reader("parse_income").replace(".std(ddof=0)", ".std()"), "differs"),
               (_reader("lambda line: (parse_income(line)[0], "
                        "parse_income(line)[1] / 100_000)"), "differs"),
               (_reader("parse_income").replace(".batch(32)", ""), "not batched")],
    ),
    "05.2": Case(
        checker="near_bay_count",
        setup=HOUSING,
        check='exercises.check("near_bay_count", answer, parts["test"])',
        correct=[NEAR_BAY.replace("COLUMN", "9").replace("FILES", 'parts["test"]'),
                 'answer = sum(int(tf.io.decode_csv(line, record_defaults=[""], '
                 'select_cols=[9])[0] == "NEAR BAY") for f in parts["test"] '
                 'for line in tf.data.TextLineDataset(f).skip(1))'],
        wrong=[(NEAR_BAY.replace("COLUMN", "8").replace("FILES", 'parts["test"]')
                .replace('record_defaults=[""]', "record_defaults=[0.0]")
                .replace('proximity == "NEAR BAY"', "proximity < 0"), "expected"),
               (NEAR_BAY.replace("COLUMN", "9").replace("FILES", 'parts["test"][:1]'),
                "expected"),
               (NEAR_BAY.replace("COLUMN", "9").replace("FILES", 'parts["test"]')
                .replace('"NEAR BAY"', '"NEAR OCEAN"'), "expected")],
    ),
    "05.3": Case(
        checker="compare",
        setup=HOUSING + LINES,
        check="exercises.compare(lines.map(answer), lines.map(preprocess))",
        correct=[PARSE_FIX.replace("DEFAULTS", "[float(m) for m in X_mean]"),
                 PARSE_FIX.replace("DEFAULTS", "list(X_mean)"),
                 PARSE_FIX.replace("DEFAULTS", "[tf.constant(m) for m in X_mean]")],
        wrong=[(PARSE_FIX.replace("DEFAULTS", "[0.0] * n_inputs"),
                "element 0 differs: [0], index 4: yours -1.279104, expected 0"),
               (PARSE_FIX.replace("DEFAULTS", "[float(m) for m in X_std]"),
                "element 0 differs: [0], index 4"),
               (PARSE_FIX.replace("DEFAULTS", "[float(m) for m in X_mean]")
                .replace("(x - X_mean) / X_std", "x"), "element 0 differs: [0], index 0")],
    ),
    "05.4": Case(
        checker="compare",
        setup=HOUSING + RAW,
        check="exercises.compare(answer, valid_lines.map(parse_line).batch(32))",
        correct=[BATCH_PARSE.replace("STACK", "tf.stack(fields[:n_inputs], axis=-1)"),
                 BATCH_PARSE.replace("STACK", "tf.transpose(tf.stack(fields[:n_inputs]))"),
                 BATCH_PARSE.replace("STACK", "tf.stack(fields[:n_inputs], axis=1)")],
        wrong=[(BATCH_PARSE.replace("STACK", "tf.stack(fields[:n_inputs])"),
                "shape at [0]: yours (8, 32), expected (32, 8) (the same axes, swapped?)"),
               (BATCH_PARSE.replace("STACK", "tf.reshape(tf.stack(fields[:n_inputs]), "
                                    "[-1, n_inputs])"), "element 0 differs: [0], index"),
               (BATCH_PARSE.replace("STACK", "tf.stack(fields[:n_inputs], axis=-1)")
                .replace("batch(32)", "batch(16)"), "batched differently")],
    ),
}
