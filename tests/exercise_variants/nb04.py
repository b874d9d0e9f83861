"""Notebook 04's write and debug exercises, answered right and wrong."""

from tests.exercise_variants import Case

TOY = ("import tempfile\n"
       "from datakit.readers.csv_files import shards\n"
       "toy_dir = Path(tempfile.mkdtemp())\n"
       "toy_files = shards.write_shards({'id': np.arange(12)}, toy_dir, num_shards=4, "
       "prefix='toy')\n"
       "pattern = str(toy_dir / 'toy_*.csv')\n"
       "def data_lines(filename):\n"
       "    return tf.data.TextLineDataset(filename).skip(1)\n")
EXTRA = (TOY + "extra = toy_dir / 'extra'\n"
         "extra.mkdir(exist_ok=True)\n"
         "(extra / 'from_a_spreadsheet.csv').write_text('id\\n12\\n13\\n14\\n\\n')\n"
         "all_files = sorted(toy_files) + [str(extra / 'from_a_spreadsheet.csv')]\n"
         "lines = tf.data.Dataset.from_tensor_slices(all_files).interleave(data_lines, "
         "cycle_length=2)\n")
FILES = ("import tempfile\n"
         "folder = Path(tempfile.mkdtemp())\n"
         "train_files = []\n"
         "for k, n in enumerate([3, 5, 2, 4, 6, 3, 2, 5]):\n"
         "    path = folder / f'part_{k:02d}.csv'\n"
         "    path.write_text('id\\n' + ''.join(f'{k * 10 + i}\\n' for i in range(n)))\n"
         "    train_files.append(str(path))\n")
TAGS = ("def tagged_lines(index, filename):\n"
        "    return tf.data.TextLineDataset(filename).skip(1).map(lambda line: index)\n"
        "tags = tf.data.Dataset.from_tensor_slices(sorted(train_files)).enumerate().interleave("
        "tagged_lines, cycle_length=5)\n"
        "order = list(tags.as_numpy_iterator())\n")

CASES = {
    "04.1": Case(
        checker="compare",
        setup=TOY,
        check="exercises.compare(answer, list(range(12)))",
        correct=["tf.data.Dataset.list_files(pattern, shuffle=False).interleave(data_lines, "
                 "cycle_length=1).map(lambda line: tf.strings.to_number(line, tf.int64))",
                 "tf.data.Dataset.from_tensor_slices(sorted(toy_files)).flat_map(data_lines)"
                 ".map(lambda line: tf.strings.to_number(line, tf.int64))"],
        wrong=[("tf.data.Dataset.list_files(pattern, shuffle=False).interleave(data_lines, "
                "cycle_length=2).map(lambda line: tf.strings.to_number(line, tf.int64))",
                "in another order"),
               ("tf.data.Dataset.list_files(pattern, shuffle=False).interleave("
                "tf.data.TextLineDataset, cycle_length=1)"
                ".map(lambda line: tf.strings.to_number(line, tf.int64))",
                "reading your dataset raised InvalidArgumentError"),
               ("tf.data.Dataset.list_files(pattern, shuffle=False).interleave(data_lines, "
                "cycle_length=1).map(lambda line: tf.strings.to_number(line, tf.int64))"
                ".batch(4)", "your elements are batches"),
               ("tf.data.Dataset.list_files(pattern, shuffle=False).interleave(data_lines, "
                "cycle_length=1).map(tf.strings.to_number)", "yours floats (float32)"),
               ("tf.data.Dataset.list_files(pattern, shuffle=False).interleave(data_lines, "
                "cycle_length=1)", "a name is not a number")],
    ),
    "04.3": Case(
        checker="lines_before_file",
        setup=FILES,
        check="exercises.check('lines_before_file', answer, train_files)",
        correct=[TAGS + "answer = order.index(5)",
                 TAGS + "answer = int(np.argmax(np.array(order) == 5))"],
        wrong=[(TAGS + "answer = order.index(6)", "expected"),
               ("answer = sum(len(open(f).readlines()) - 1 for f in sorted(train_files)[:5])",
                "yours 20, expected"),
               (TAGS + "answer = order.index(5) + 1", "expected")],
    ),
    "04.4": Case(
        checker="compare",
        setup=EXTRA,
        check="exercises.compare(answer, list(range(15)), order='any')",
        correct=["lines.filter(lambda line: tf.strings.length(line) > 0)"
                 ".map(lambda line: tf.strings.to_number(line, tf.int64))",
                 "lines.filter(lambda line: line != '')"
                 ".map(lambda line: tf.strings.to_number(line, tf.int64))"],
        wrong=[("lines.map(lambda line: tf.strings.to_number(line, tf.int64))",
                "reading your dataset raised InvalidArgumentError"),
               ("tf.data.Dataset.from_tensor_slices(sorted(toy_files)).interleave(data_lines, "
                "cycle_length=2).map(lambda line: tf.strings.to_number(line, tf.int64))",
                "yours has 12 elements, the reference 15"),
               ("lines.filter(lambda line: tf.strings.length(line) > 0)"
                ".map(tf.strings.to_number)", "yours floats (float32)")],
    ),
}
