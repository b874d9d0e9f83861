"""CSV shards read by ``tf.data``: write them, check them, learn statistics, read batches.

The four steps of a CSV pipeline, one helper each:

- :func:`split_into_shards` / :func:`write_shards` write a table into N CSV
  files (a header line each) atomically, with a ``manifest.json`` of row counts.
- :func:`check_files` resolves paths and glob patterns and reports, up front,
  missing files, patterns that match nothing, empty files, differing headers
  and files shorter than their manifest says.
- :func:`column_stats` makes one streaming ``tf.data`` pass over the
  *training* files: count, missing, mean, std (population, ddof=0), min, max
  for numbers; the vocabulary with counts for text.
- :func:`csv_reader_dataset` is the reader: ``list_files -> interleave(
  TextLineDataset(f).skip(1)) -> shuffle -> parse -> batch -> prefetch(1)``,
  yielding ``(features, label)`` batches that ``model.fit()`` takes as they are.

Preprocessing inside the reader (the training statistics, never the data being
read): numbers are standardized, ``(x - mean) / std``; a **missing number is
filled with the training mean, so it becomes 0.0** after scaling; a text
column becomes a one-hot block over ``["[UNK]"] + vocabulary``: an unseen or
empty value lands in the ``[UNK]`` slot. :func:`feature_names` names the columns.

Two parse variants with the same rows (and, for the same seed, the same order):
``parse="line"`` is the classic chain (``map`` per line, then ``batch``);
``parse="batch"`` batches the lines first and decodes a whole batch in one
call, several times faster (DESIGN.md section 5).

Bad lines (wrong number of fields, text in a number column, an unterminated
quote) raise an error naming the file, line number, column and raw line when
the reader meets them; :func:`find_bad_lines` finds them all before training;
``on_bad_line="skip"`` drops them and warns with a count per file. No
``ignore_errors()`` anywhere: it spins forever on a missing file in TF 2.21.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> paths = write_shards({"x": [1.0, 2.0, None, 4.0], "y": [10.0, 20.0, 30.0, 40.0]},
...                      d, n_shards=2, prefix="toy")
>>> [os.path.basename(p) for p in paths]
['toy_00.csv', 'toy_01.csv']
>>> stats = column_stats(paths)
>>> stats["x"].count, stats["x"].missing, stats["x"].mean
(3, 1, 2.3333333333333335)
>>> ds = csv_reader_dataset(paths, stats=stats, label="y", shuffle_buffer_size=None, batch_size=4)
>>> x, y = next(iter(ds))
>>> [round(float(v), 3) for v in x.numpy().ravel()], y.numpy().tolist()
([-1.069, 0.0, -0.267, 1.336], [10.0, 30.0, 20.0, 40.0])
"""

from __future__ import annotations

import csv as _csv
import glob
import io
import json
import os
import re
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

NUMBER, TEXT = "number", "text"
AUTOTUNE = -1
#: The one-hot slot for unknown (unseen or empty) text values.
OOV = "[UNK]"
_NUM = r" *[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)? *"
_PATTERNS = {NUMBER: f'(?:{_NUM}|"{_NUM}")', TEXT: r'(?:"(?:[^"]|"")*"|[^",]*)'}


# -- writing -------------------------------------------------------------------


def write_shards(table: Any, folder: str | Path, *, n_shards: int, prefix: str = "part",
                 columns: list[str] | None = None) -> list[str]:
    """Write the rows of ``table`` into ``n_shards`` CSV files, a header line each.

    ``table``: a pandas DataFrame, a dict of columns, a 2-D array (give
    ``columns``), or the path of a CSV file (its lines are copied verbatim).
    Each file is written under a temporary name, then renamed; the row counts
    go to ``folder/manifest.json``. Returns the paths, in order.
    """
    header, lines = _table_lines(table, columns)
    if isinstance(n_shards, bool) or not isinstance(n_shards, int) or n_shards < 1:
        raise ValueError(f"n_shards={n_shards!r} is invalid: pass an int >= 1.")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths, counts = [], {}
    for i, chunk in enumerate(np.array_split(np.arange(len(lines)), n_shards)):
        path = folder / f"{prefix}_{i:02d}.csv"
        _atomic_write(path, "".join([header + "\n"] + [lines[j] + "\n" for j in chunk]))
        paths.append(str(path))
        counts[path.name] = len(chunk)
    _update_manifest(folder, counts)
    return paths


def split_into_shards(table: Any, folder: str | Path, *, fractions=(0.8, 0.1, 0.1),
                      n_shards=(20, 10, 10), names=("train", "valid", "test"),
                      seed: int = 42, columns: list[str] | None = None) -> dict[str, list[str]]:
    """Shuffle the rows with ``seed``, split them by ``fractions``, write each part as shards.

    Returns ``{"train": [paths], "valid": [...], "test": [...]}``; every row
    goes to exactly one file.
    """
    if not len(fractions) == len(n_shards) == len(names):
        raise ValueError("fractions, n_shards and names need one entry per part.")
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-9:
        raise ValueError(f"fractions={fractions} must be >= 0 and sum to 1.")
    header, lines = _table_lines(table, columns)
    order = np.random.default_rng(seed).permutation(len(lines))
    bounds = np.round(np.cumsum((0,) + tuple(fractions)) * len(lines)).astype(int)
    out = {}
    for name, n, lo, hi in zip(names, n_shards, bounds[:-1], bounds[1:]):
        part = _Lines(header, [lines[j] for j in order[lo:hi]])
        out[name] = write_shards(part, folder, n_shards=n, prefix=name)
    return out


@dataclass
class _Lines:
    header: str
    lines: list[str]


def _table_lines(table: Any, columns: list[str] | None) -> tuple[str, list[str]]:
    if isinstance(table, _Lines):
        return table.header, table.lines
    if isinstance(table, (str, Path)):
        with open(table, newline="") as f:
            text = f.read().splitlines()
        if not text:
            raise ValueError(f"{table}: the file is empty; a CSV needs a header line.")
        return text[0], [line for line in text[1:]]
    import pandas as pd
    if isinstance(table, np.ndarray):
        if table.ndim != 2 or columns is None or len(columns) != table.shape[1]:
            raise ValueError("A NumPy table must be 2-D; pass columns=[one name per column].")
        table = pd.DataFrame(table, columns=columns)
    elif isinstance(table, dict):
        table = pd.DataFrame(table)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"Cannot write a {type(table).__name__}: pass a DataFrame, a dict of "
                        "columns, a 2-D array with columns=..., or a CSV path.")
    text = table.to_csv(index=False, lineterminator="\n").splitlines()
    return text[0], text[1:]


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def _update_manifest(folder: Path, counts: dict[str, int]) -> None:
    path = folder / "manifest.json"
    old = json.loads(path.read_text()) if path.exists() else {"rows": {}}
    old["rows"].update(counts)
    _atomic_write(path, json.dumps(old, indent=1, sort_keys=True) + "\n")


# -- checking files up front ---------------------------------------------------


def check_files(filepaths: str | Path | list, *, counts: dict | None = None
                ) -> tuple[list[str], list[str]]:
    """Resolve paths and glob patterns; return ``(sorted files, header columns)``.

    Raises, naming the file: a path that does not exist, a pattern that
    matches nothing, an empty file (not even a header), a header that differs
    from the first file's, a file with fewer rows than its ``manifest.json``.
    ``counts``, if given, receives the number of data lines of each file.
    """
    items = [filepaths] if isinstance(filepaths, (str, Path)) else list(filepaths)
    if not items:
        raise ValueError("No files given: pass a path, a glob pattern, or a list of them.")
    files: list[str] = []
    for item in map(str, items):
        if glob.has_magic(item):
            found = sorted(glob.glob(item))
            if not found:
                raise FileNotFoundError(f"The pattern {item!r} matches no file; check the folder "
                                        "and that the shards were written.")
            files += found
        elif not os.path.isfile(item):
            raise FileNotFoundError(f"{item}: no such file.")
        else:
            files.append(item)
    files = list(dict.fromkeys(files))  # in the order given: the first file sets the header
    header = None
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        if not data.strip():
            raise ValueError(f"{path}: the file is empty; every shard needs a header line.")
        first = data.split(b"\n", 1)[0].rstrip(b"\r").decode()
        if header is None:
            header, first_file = first, path
        elif first != header:
            raise ValueError(f"{path}: its header `{first}` differs from `{header}` in "
                             f"{first_file}; all shards must have the same columns.")
        rows = data.count(b"\n") + (not data.endswith(b"\n")) - 1
        _check_manifest(path, rows)
        if counts is not None:
            counts[path] = rows
    return sorted(files), next(_csv.reader([header]))


def _check_manifest(path: str, rows: int) -> None:
    manifest = Path(path).parent / "manifest.json"
    if not manifest.exists():
        return
    expected = json.loads(manifest.read_text())["rows"].get(Path(path).name)
    if expected is not None and rows != expected:
        raise ValueError(f"{path}: {rows} rows, but {manifest.name} says {expected}; "
                         "the file is truncated or was changed after writing. Write it again.")


# -- bad lines -------------------------------------------------------------------


@dataclass
class BadLine:
    """A line that does not parse: where it is, which column, why."""

    file: str
    line: int
    column: str | None
    reason: str
    raw: str

    def __str__(self) -> str:
        col = f", column {self.column}" if self.column else ""
        return (f"bad CSV line: {self.file}, line {self.line}{col}: {self.reason}; "
                f"raw line: `{self.raw}`")


def _row_pattern(columns: list[str], kinds: dict[str, str], required: set[str]) -> str:
    fields = [_PATTERNS[kinds[c]] + ("" if c in required else "?") for c in columns]
    return ",".join(fields)


def describe_bad_line(raw: str, columns: list[str], kinds: dict[str, str],
                      required: set[str] = frozenset()) -> tuple[str | None, str] | None:
    """Why ``raw`` does not parse: ``(column or None, reason)``, or None if it is fine.

    >>> describe_bad_line('1,abc', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    ('b (2 of 2)', 'expected a number, got `abc`')
    >>> describe_bad_line('1', ["a", "b"], {"a": NUMBER, "b": NUMBER})
    (None, 'found 1 field(s), expected 2')
    """
    pos, n = 0, len(columns)
    for k, col in enumerate(columns):
        where = f"{col} ({k + 1} of {n})"
        pat = re.compile(_PATTERNS[kinds[col]] + ("" if col in required else "?") + "(?=,|$)")
        m = pat.match(raw, pos)
        if not m:
            field = raw[pos:].split(",", 1)[0]
            if field.startswith('"') and raw.count('"', pos) % 2:
                return where, "unterminated quote"
            if kinds[col] == TEXT:
                return where, 'a quote inside a field must be doubled ("") and the field quoted'
            if not field:
                return where, "the label is empty" if col in required else "expected a number"
            return where, f"expected a number, got `{field}`"
        pos = m.end()
        if k < n - 1:
            if pos >= len(raw):
                return None, f"found {k + 1} field(s), expected {n}"
            pos += 1
    if pos != len(raw):
        extra = len(next(_csv.reader([raw[pos + 1:]])))
        return None, f"found {n + extra} fields, expected {n}"
    return None


def find_bad_lines(filepaths, stats: CsvStats, *, label: str | None = None) -> list[BadLine]:
    """Every line of ``filepaths`` that the reader would reject (pure Python, before training).

    The test is the reader's own: the same regular expression per row.
    """
    files, columns = check_files(filepaths)
    kinds = _kinds_for(stats, columns, files[0])
    pattern = re.compile(_row_pattern(columns, kinds, {label} if label else set()))
    bad = []
    for path in files:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                line = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
                if number > 1 and not pattern.fullmatch(line):
                    column, reason = describe_bad_line(line, columns, kinds, {label} - {None})
                    bad.append(BadLine(path, number, column, reason, line))
    return bad


# -- statistics ------------------------------------------------------------------


@dataclass
class ColumnStats:
    """Full-pass statistics of one column (numbers: ``std`` is the population std, ddof=0)."""

    name: str
    kind: str
    count: int = 0
    missing: int = 0
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    #: Text: value -> count, most frequent first (ties: alphabetical).
    vocabulary: dict[str, int] | None = None


@dataclass
class CsvStats:
    """What :func:`column_stats` learned: the columns in file order and their statistics."""

    columns: list[str]
    stats: dict[str, ColumnStats] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    rows: int = 0

    def __getitem__(self, name: str) -> ColumnStats:
        return self.stats[name]

    def kinds(self) -> dict[str, str]:
        return {c: self.stats[c].kind for c in self.columns}

    def to_frame(self):
        """A pandas table, one row per column (vocabularies left out)."""
        import pandas as pd
        rows = [{k: v for k, v in vars(s).items() if k != "vocabulary"} for s in self.stats.values()]
        return pd.DataFrame(rows).set_index("name")


def infer_kinds(path: str, *, text_columns=(), n_rows: int = 1000) -> dict[str, str]:
    """Guess each column's kind from the first ``n_rows``: number if every non-empty value is."""
    with open(path, newline="") as f:
        reader = _csv.reader(f)
        columns = next(reader)
        unknown = [c for c in text_columns if c not in columns]
        if unknown:
            raise ValueError(f"text_columns {unknown} are not in {path}'s header {columns}.")
        seen = [row for _, row in zip(range(n_rows), reader)]
    num = re.compile(_NUM)
    kinds = {}
    for j, c in enumerate(columns):
        values = [r[j] for r in seen if j < len(r) and r[j] != ""]
        is_num = c not in text_columns and all(num.fullmatch(v) for v in values)
        kinds[c] = NUMBER if is_num else TEXT
    return kinds


def _kinds_for(stats: CsvStats, columns: list[str], path: str) -> dict[str, str]:
    if list(stats.columns) != list(columns):
        raise ValueError(f"{path}: columns {columns} differ from the statistics' columns "
                         f"{stats.columns}; compute column_stats on files with the same header.")
    return stats.kinds()


def column_stats(filepaths, *, text_columns=(), batch_size: int = 4096) -> CsvStats:
    """One streaming ``tf.data`` pass over ``filepaths``: statistics per column.

    Numbers: count, missing, mean, std (ddof=0), min, max, combined batch by
    batch (Chan's formula), in float64. Text: vocabulary with counts; an empty
    field counts as missing. Kinds are inferred from the first rows
    (:func:`infer_kinds`); force text with ``text_columns``.
    """
    import tensorflow as tf
    files, columns = check_files(filepaths)
    kinds = infer_kinds(files[0], text_columns=text_columns)
    if list(kinds) != columns:
        raise ValueError(f"{files[0]}: could not read its header with the csv module.")
    defaults = [tf.constant([np.nan], tf.float64) if kinds[c] == NUMBER else tf.constant([""])
                for c in columns]
    decode = _checked_decoder(columns, kinds, set(), defaults)
    lines = tf.data.Dataset.from_tensor_slices(files).interleave(_numbered_lines, cycle_length=1)
    acc = {c: ColumnStats(c, kinds[c]) for c in columns}
    moments = {c: (0, 0.0, 0.0) for c in columns if kinds[c] == NUMBER}
    vocab: dict[str, Counter] = {c: Counter() for c in columns if kinds[c] == TEXT}
    rows = 0
    for batch in lines.batch(batch_size).map(decode).prefetch(1).as_numpy_iterator():
        rows += len(batch[0])
        for c, values in zip(columns, batch):
            s = acc[c]
            if kinds[c] == NUMBER:
                v = values[~np.isnan(values)]
                s.missing += len(values) - len(v)
                if len(v):
                    moments[c] = _combine(moments[c], (len(v), v.mean(), ((v - v.mean()) ** 2).sum()))
                    s.min = float(v.min()) if s.min is None else min(s.min, float(v.min()))
                    s.max = float(v.max()) if s.max is None else max(s.max, float(v.max()))
            else:
                keys, counts = np.unique(values, return_counts=True)
                vocab[c].update(dict(zip((k.decode() for k in keys), counts.tolist())))
    for c in columns:
        s = acc[c]
        if kinds[c] == NUMBER:
            n, mean, m2 = moments[c]
            s.count = n
            s.mean, s.std = (float(mean), float(np.sqrt(m2 / n))) if n else (None, None)
        else:
            s.missing = vocab[c].pop("", 0)
            s.count = sum(vocab[c].values())
            s.vocabulary = dict(sorted(vocab[c].items(), key=lambda kv: (-kv[1], kv[0])))
    return CsvStats(columns, acc, files, rows)


def _combine(a, b):
    """Chan et al.: merge (count, mean, sum of squared deviations) of two parts."""
    (na, ma, qa), (nb, mb, qb) = a, b
    n = na + nb
    delta = mb - ma
    return n, ma + delta * nb / n, qa + qb + delta * delta * na * nb / n


# -- the reader ------------------------------------------------------------------


def _numbered_lines(path):
    """``(line, line number, file)`` for each data line (the header, line 1, skipped)."""
    import tensorflow as tf
    lines = tf.data.TextLineDataset(path).skip(1)
    numbers = tf.data.Dataset.range(2, np.iinfo(np.int64).max)
    return tf.data.Dataset.zip((lines, numbers, tf.data.Dataset.from_tensors(path).repeat()))


def _checked_decoder(columns, kinds, required, defaults):
    """A ``decode(lines, numbers, files)`` that raises a located error on the first bad line."""
    import tensorflow as tf
    pattern = _row_pattern(columns, kinds, required)

    def message(line, number, path):
        raw = line.numpy().decode("utf-8", "replace")
        column, reason = describe_bad_line(raw, columns, kinds, required) or (None, "bad line")
        return str(BadLine(path.numpy().decode(), int(number), column, reason, raw))

    def fail(lines, numbers, paths):
        ok = tf.reshape(tf.strings.regex_full_match(lines, pattern), [-1])
        i = tf.argmin(tf.cast(ok, tf.int32))
        row = [tf.gather(tf.reshape(t, [-1]), i) for t in (lines, numbers, paths)]
        text = tf.py_function(message, row, tf.string)
        return tf.debugging.Assert(False, [text], name="bad_csv_line") or tf.constant(False)

    def decode(lines, numbers, paths):
        ok = tf.reduce_all(tf.strings.regex_full_match(lines, pattern))
        checked = tf.cond(ok, lambda: tf.constant(True), lambda: fail(lines, numbers, paths))
        with tf.control_dependencies([checked]):
            return tf.io.decode_csv(tf.identity(lines), defaults)

    return decode


def feature_names(stats: CsvStats, label: str) -> list[str]:
    """The names of the reader's feature columns: numbers, then one-hot slots per text column."""
    names = [c for c in stats.columns if c != label and stats[c].kind == NUMBER]
    for c in stats.columns:
        if c != label and stats[c].kind == TEXT:
            names += [f"{c}={v}" for v in [OOV] + list(stats[c].vocabulary)]
    return names


def csv_reader_dataset(filepaths, repeat: int | None = 1, n_readers: int = 5,
                       n_read_threads: int | None = None, shuffle_buffer_size: int | None = 10_000,
                       n_parse_threads: int | None = 5, batch_size: int = 32, *,
                       stats: CsvStats, label: str, seed: int | None = None,
                       parse: str = "line", label_scale: float = 1.0,
                       on_bad_line: str = "raise", prefetch: int | None = 1):
    """Read CSV shards into ``(features, label)`` batches for ``model.fit()``.

    ``filepaths``: paths or glob patterns, checked up front (:func:`check_files`).
    ``stats``: from :func:`column_stats` on the *training* files. ``label``: the
    target column (divided by ``label_scale``; it must not be empty).
    ``shuffle_buffer_size=None`` (or 0) reads files in sorted order, unshuffled.
    ``parse="line"``: the classic map-per-line chain; ``parse="batch"``: batch
    lines, then decode the batch at once (faster, same rows in the same order).
    ``on_bad_line="skip"`` drops bad lines and warns with a count per file.
    ``prefetch``: the buffer of the final ``prefetch`` (0 or None: none).
    The dataset knows its length (``len(ds)``, from the files' line counts),
    which ``fit()`` uses, and checks it: a short read is an error.
    """
    import tensorflow as tf
    counts: dict[str, int] = {}
    files, columns = check_files(filepaths, counts=counts)
    kinds = _kinds_for(stats, columns, files[0])
    if label not in columns:
        raise ValueError(f"label={label!r} is not a column; the columns are {columns}.")
    if kinds[label] != NUMBER:
        raise ValueError(f"label={label!r} is a text column; this reader predicts a number.")
    auto = ("n_read_threads", "n_parse_threads", "prefetch")
    for name, v, low in [("n_readers", n_readers, 1), ("batch_size", batch_size, 1),
                         ("repeat", repeat, 1), ("shuffle_buffer_size", shuffle_buffer_size, 0),
                         ("n_read_threads", n_read_threads, 1),
                         ("n_parse_threads", n_parse_threads, 1), ("prefetch", prefetch, 0)]:
        ok = v is None and name not in ("n_readers", "batch_size") or (
            isinstance(v, int) and not isinstance(v, bool)
            and (v >= low or v == AUTOTUNE and name in auto))
        if not ok:
            raise ValueError(f"{name}={v!r} is invalid: pass an int >= {low}"
                             + (", None or tf.data.AUTOTUNE." if name in auto else "."))
    if n_read_threads not in (None, AUTOTUNE) and n_read_threads > n_readers:
        raise ValueError(f"n_read_threads={n_read_threads} is more than n_readers={n_readers}: "
                         "at most one thread per open file; lower it or pass tf.data.AUTOTUNE.")
    if parse not in ("line", "batch"):
        raise ValueError(f"parse={parse!r}: use 'line' (classic) or 'batch' (vectorized).")
    if on_bad_line not in ("raise", "skip"):
        raise ValueError(f"on_bad_line={on_bad_line!r}: use 'raise' or 'skip'.")
    required = {label}
    if on_bad_line == "skip":
        bad = find_bad_lines(files, stats, label=label)
        _warn_skipped(bad)
        counts = {f: n - sum(b.file == f for b in bad) for f, n in counts.items()}

    features = [c for c in columns if c != label]
    nums = [c for c in features if kinds[c] == NUMBER]
    mean = tf.constant([stats[c].mean for c in nums], tf.float32)
    std = tf.constant([stats[c].std or 1.0 for c in nums], tf.float32)
    defaults = [tf.constant([], tf.float32) if c == label else
                tf.constant([stats[c].mean], tf.float32) if kinds[c] == NUMBER else
                tf.constant([""]) for c in columns]
    tables = {}
    for c in features:
        if kinds[c] == TEXT:
            keys = list(stats[c].vocabulary)
            init = tf.lookup.KeyValueTensorInitializer(
                tf.constant(keys, tf.string), tf.range(1, len(keys) + 1, dtype=tf.int64))
            tables[c] = (tf.lookup.StaticHashTable(init, default_value=0), len(keys) + 1)
    decode = _checked_decoder(columns, kinds, required, defaults)

    def preprocess(lines, numbers, paths):
        fields = dict(zip(columns, decode(lines, numbers, paths)))
        x = [(tf.stack([fields[c] for c in nums], axis=-1) - mean) / std] if nums else []
        for c, (table, depth) in tables.items():
            x.append(tf.one_hot(table.lookup(fields[c]), depth, dtype=tf.float32))
        return tf.concat(x, axis=-1), fields[label] / label_scale

    shuffle = bool(shuffle_buffer_size)
    dataset = tf.data.Dataset.list_files(files, shuffle=shuffle, seed=seed).repeat(repeat)
    dataset = dataset.interleave(_numbered_lines, cycle_length=n_readers,
                                 num_parallel_calls=n_read_threads)
    if on_bad_line == "skip":
        pattern = _row_pattern(columns, kinds, required)
        dataset = dataset.filter(lambda line, *_: tf.strings.regex_full_match(line, pattern))
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    if parse == "line":
        dataset = dataset.map(preprocess, num_parallel_calls=n_parse_threads)
        dataset = dataset.batch(batch_size)
    else:
        dataset = dataset.batch(batch_size)
        dataset = dataset.map(preprocess, num_parallel_calls=n_parse_threads)
    if repeat is not None:
        batches = -(-sum(counts.values()) * repeat // batch_size)
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
    return dataset.prefetch(prefetch) if prefetch else dataset


def _warn_skipped(bad: list[BadLine]) -> None:
    if bad:
        per_file = Counter(b.file for b in bad)
        detail = ", ".join(f"{os.path.basename(f)}: {n}" for f, n in sorted(per_file.items()))
        warnings.warn(f"skipping {len(bad)} bad line(s) ({detail}); first: {bad[0]}",
                      stacklevel=3)
