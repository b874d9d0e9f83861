"""Full-pass column statistics of CSV shards: the tf.Transform idea, in one streaming pass.

Preprocessing needs numbers learned from the data (a mean to subtract, a
vocabulary to look text up in). They must come from the *training* files
only, and from all of them, in a pass before training: :func:`column_stats`
reads the files once with ``tf.data`` (chunk by chunk, never all in memory)
and returns, per column, count, missing, mean, std (population, ddof=0), min
and max for numbers; the vocabulary with counts for text. A bad line stops
the pass with the file, line number, column and raw line
(:mod:`datakit.csv`).

>>> import tempfile, os
>>> from datakit.shards import write_shards
>>> d = tempfile.mkdtemp()
>>> paths = write_shards({"x": [1.0, 2.0, None, 4.0], "city": ["a", "b", "a", ""]},
...                      d, num_shards=2)
>>> stats = column_stats(paths)
>>> stats["x"].count, stats["x"].missing, stats["x"].mean
(3, 1, 2.3333333333333335)
>>> stats["city"].vocabulary, stats["city"].missing
({'a': 2, 'b': 1}, 1)
"""

from __future__ import annotations

import csv as _csv
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import tensorflow as tf

from datakit.csv import NUMBER, NUMBER_PATTERN, TEXT, checked_decoder, decoded_chunks
from datakit.shards import check_files

__all__ = ["ColumnStats", "CsvStats", "infer_kinds", "column_stats"]


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
        rows = [{k: v for k, v in vars(s).items() if k != "vocabulary"}
                for s in self.stats.values()]
        return pd.DataFrame(rows).set_index("name")


def infer_kinds(path: str, *, text_columns=(), n_rows: int = 1000) -> dict[str, str]:
    """Guess each column's kind from the first ``n_rows``: number if every non-empty value is."""
    with open(path, newline="") as f:
        reader = _csv.reader(f)
        columns = next(reader, None)
        if columns is None:
            raise ValueError(f"{path}: the file is empty; a CSV file needs a header line.")
        unknown = [c for c in text_columns if c not in columns]
        if unknown:
            raise ValueError(f"text_columns {unknown} are not in {path}'s header {columns}.")
        seen = [row for _, row in zip(range(n_rows), reader)]
    num = re.compile(NUMBER_PATTERN)
    kinds = {}
    for j, c in enumerate(columns):
        values = [r[j] for r in seen if j < len(r) and r[j] != ""]
        is_num = c not in text_columns and all(num.fullmatch(v) for v in values)
        kinds[c] = NUMBER if is_num else TEXT
    return kinds


def column_stats(filepaths, *, text_columns=(), batch_size: int = 4096) -> CsvStats:
    """One streaming ``tf.data`` pass over ``filepaths``: statistics per column.

    Numbers: count, missing, mean, std (ddof=0), min, max, combined chunk by
    chunk (Chan's formula), in float64. Text: vocabulary with counts; an empty
    field counts as missing. Kinds are inferred from the first rows
    (:func:`infer_kinds`); force text with ``text_columns``. ``batch_size``
    lines are decoded at a time.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size={batch_size!r}: pass an int >= 1 (lines decoded per call).")
    files, columns = check_files(filepaths)
    kinds = infer_kinds(files[0], text_columns=text_columns)
    if list(kinds) != columns:
        raise ValueError(f"{files[0]}: could not read its header with the csv module; check "
                         "that fields are separated by commas and that line 1 is the header.")
    defaults = [tf.constant([np.nan], tf.float64) if kinds[c] == NUMBER else tf.constant([""])
                for c in columns]
    decode = checked_decoder(columns, kinds, set(), defaults)

    def chunks_of(path):
        return decoded_chunks(path, decode, chunk=batch_size)

    chunks = tf.data.Dataset.from_tensor_slices(files).interleave(chunks_of, cycle_length=1)
    acc = {c: ColumnStats(c, kinds[c]) for c in columns}
    moments = {c: (0, 0.0, 0.0) for c in columns if kinds[c] == NUMBER}
    vocab: dict[str, Counter] = {c: Counter() for c in columns if kinds[c] == TEXT}
    rows = 0
    for batch in chunks.prefetch(1).as_numpy_iterator():
        rows += len(batch[0])
        for c, values in zip(columns, batch):
            s = acc[c]
            if kinds[c] == NUMBER:
                v = values[~np.isnan(values)]
                s.missing += len(values) - len(v)
                if len(v):
                    part = (len(v), v.mean(), ((v - v.mean()) ** 2).sum())
                    moments[c] = _combine(moments[c], part)
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
