"""Full-pass column statistics of CSV shards: the tf.Transform idea, in one streaming pass.

Preprocessing needs numbers learned from the data (a mean to subtract, a
vocabulary to look text up in). They must come from the *training* files
only, and from all of them, in a pass before training: :func:`column_stats`
reads the files once with ``tf.data`` (chunk by chunk, never all in memory)
and returns, per column, count, missing, mean, std (population, ddof=0), min
and max for numbers; the vocabulary with counts for text. A bad line stops
the pass with the file, line number, column and raw line
(:mod:`datakit.readers.csv_files.grammar`).

>>> import tempfile, os
>>> from datakit.readers.csv_files.shards import write_shards
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

import re
import warnings
from collections import Counter
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count
from datakit.core.paths import FilesArg
from datakit.core.progress import check_progress, progress_bar
from datakit.readers.csv_files.column_kinds import infer_kinds
from datakit.readers.csv_files.dialect import DEFAULT_NA_VALUES, Dialect
from datakit.readers.csv_files.file_checks import csv_file_set
from datakit.readers.csv_files.line_decoding import checked_decoder, decoded_chunks
from datakit.readers.tables.column_choice import choose_columns
from datakit.readers.tables.graph_functions import as_written
from datakit.readers.tables.running_stats import add_numbers, finish_column
from datakit.readers.tables.table_stats import NUMBER, TEXT, ColumnStats, TableStats

__all__ = ["column_stats"]


def _limits(max_vocabulary: int | dict[str, int | None] | None, text: list[str],
            label: str | None) -> dict[str, int | None]:
    if isinstance(max_vocabulary, dict) and label in max_vocabulary:
        raise ValueError(f"max_vocabulary names the label {label!r}: column_stats never caps "
                         "the label (a label needs every class); leave it out of the dict.")
    text = [c for c in text if c != label]
    if isinstance(max_vocabulary, dict):
        unknown = sorted(set(max_vocabulary) - set(text))
        if unknown:
            raise ValueError(f"max_vocabulary names {unknown}, which are not kept text columns "
                             f"(those are {text}).")
        limits = {c: max_vocabulary.get(c) for c in text}
    else:
        limits = {c: max_vocabulary for c in text}
    for c, n in limits.items():  # None: no cap
        check_count(f"max_vocabulary[{c!r}]" if isinstance(max_vocabulary, dict)
                    else "max_vocabulary", n, none=True)
    return {**limits, **({label: None} if label is not None else {})}


def column_stats(filepaths: FilesArg, *, columns: Sequence[str] | None = None,
                 label: str | None = None,
                 max_vocabulary: int | dict[str, int | None] | None = None,
                 text_columns: Sequence[str] = (), number_columns: Sequence[str] = (),
                 batch_size: int = 4096, delimiter: str = ",",
                 na_values: Sequence[str] = DEFAULT_NA_VALUES,
                 column_names: Sequence[str] | None = None,
                 progress: bool | None = None) -> TableStats:
    """One streaming ``tf.data`` pass over ``filepaths``: statistics per column.

    Numbers (``nan`` and ``inf`` keep the column a number column and count as
    missing): count, missing, mean, std (ddof=0), min, max, combined chunk
    by chunk (Chan's formula), in float64. Text: vocabulary with counts; an empty
    field counts as missing. Kinds are inferred from every row of every file, for
    the kept columns only (:func:`~datakit.readers.csv_files.column_kinds.infer_kinds`):
    a column with values that are not numbers is text, as pandas reads it, but a
    number column with a few strays (a typo, an unknown marker) is refused by name.
    Declare a kind with ``text_columns`` or ``number_columns``. ``batch_size``
    lines are decoded at a time. Both passes (the kinds', then the statistics') show
    a bar over the rows (``progress``).

    Args:
        columns: the columns to keep, in that order (default: all). The others are
            ignored here and by every reader given these statistics: whatever they
            hold (words among numbers, a stray quote), they never refuse a line.
        label: the target column, if you know it: recorded in the statistics (so
            rows without it can be read for prediction, ``label=None`` in the
            reader) and never capped by ``max_vocabulary``.
        max_vocabulary: keep each text column's most frequent values, at most this
            many (ties broken by value, so the result is deterministic); the rest
            count as unknown (``unknown``). An int for every text column (but the
            label), or a dict ``{column: int}``.
        text_columns: columns read as text, whatever they hold.
        number_columns: columns read as numbers, whatever they hold (a value that is
            not a number is then a bad line, unless ``na_values`` names it).
        delimiter: the one character between fields (``";"``, ``"\\t"``, ...).
        na_values: the markers of a missing value in a number column (default:
            pandas' list, :data:`~datakit.readers.csv_files.dialect.DEFAULT_NA_VALUES`;
            a list of your own replaces it, ``[]`` for none). Such a field counts as
            missing, and the reader fills it with the mean, like an empty field; in
            a text column it stays a value.
        column_names: the column names of files *without* a header line (then
            line 1 is a row); by default line 1 is the header.
        progress: a progress bar over the rows of each pass
            (:mod:`datakit.core.progress`): ``None`` (default) shows it in a notebook or
            a terminal once the pass lasts a second, ``True`` always, ``False`` never.

    Raises:
        TypeError: ``progress`` is not ``True``, ``False`` or ``None``.
        ValueError: a name in ``columns`` is not in the header (the message lists it),
            or ``label`` is not a kept column.

    >>> import tempfile
    >>> from datakit.readers.csv_files.shards import write_shards
    >>> paths = write_shards({"id": [1, 2, 3, 4], "city": ["b", "a", "c", "a"], "y": [1, 0, 1, 0]},
    ...                      tempfile.mkdtemp(), num_shards=1)
    >>> stats = column_stats(paths, columns=["city", "y"], max_vocabulary=2)
    >>> stats.columns, stats["city"].vocabulary, stats["city"].unknown
    (['city', 'y'], {'a': 2, 'b': 1}, 1)
    >>> column_stats(paths, columns=["town"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: columns=['town']: ['town'] not in the header ['id', ...] of ....
    """
    check_count("batch_size", batch_size)  # lines decoded per call
    check_progress(progress)
    choose_columns(columns)  # its form, before any file is opened
    dialect = Dialect(delimiter, na_values, column_names)
    checked = csv_file_set(filepaths, dialect=dialect)
    files, header = checked.files, checked.shape
    chosen = choose_columns(columns, header, files[0])
    with progress_bar(checked.total, "column kinds", progress=progress, unit="row") as bar:
        kinds = infer_kinds(files, text_columns=text_columns, number_columns=number_columns,
                            dialect=dialect, columns=chosen, bar=bar)
    if list(kinds) != header:
        raise ValueError(f"{files[0]}: could not read its header with the csv module; check "
                         "that fields are separated by commas and that line 1 is the header.")
    if label is not None and label not in chosen:
        raise ValueError(f"label={label!r} is not a kept column; the columns are {chosen}.")
    limits = _limits(max_vocabulary, [c for c in chosen if kinds[c] == TEXT], label)
    kinds = {c: kinds[c] if c in chosen else TEXT for c in header}  # others: read, ignored
    columns = header
    defaults = [tf.constant([np.nan], tf.float64) if kinds[c] == NUMBER else tf.constant([""])
                for c in columns]
    decode = checked_decoder(columns, kinds, set(), defaults, ignored=set(header) - set(chosen),
                             dialect=dialect)

    @as_written
    def chunks_of(path: tf.Tensor) -> tf.data.Dataset:
        return decoded_chunks(path, decode, chunk=batch_size, header_lines=dialect.header_lines)

    chunks = tf.data.Dataset.from_tensor_slices(files).interleave(chunks_of, cycle_length=1)
    acc = {c: ColumnStats(c, kinds[c]) for c in chosen}
    moments = {c: (0, 0.0, 0.0) for c in chosen if kinds[c] == NUMBER}
    vocab: dict[str, Counter] = {c: Counter() for c in chosen if kinds[c] == TEXT}
    rows = 0
    with progress_bar(checked.total, "column stats", progress=progress, unit="row") as bar:
        for batch in chunks.prefetch(1).as_numpy_iterator():
            rows += len(batch[0])
            bar.update(len(batch[0]))
            for c, values in zip(columns, batch, strict=True):
                if c not in acc:
                    continue
                s = acc[c]
                if kinds[c] == NUMBER:
                    add_numbers(s, values, moments)
                else:
                    keys, counts = np.unique(values, return_counts=True)
                    vocab[c].update(dict(zip((k.decode() for k in keys), counts.tolist(),
                                             strict=True)))
    for c in chosen:
        if kinds[c] == TEXT:
            _warn_dates(c, vocab[c])
        finish_column(acc[c], moments, vocab, limits.get(c))
    return TableStats(chosen, acc, files, rows, header, label, dialect.saved())


#: A date or a date and time, as CSV files write them (ISO 8601, or day/month/year).
_DATE = re.compile(r"\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z?)?"
                   r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}")


def _warn_dates(column: str, values: Counter) -> None:
    """Warn when every value of a text column is a date: one one-hot slot per day."""
    if values and all(_DATE.fullmatch(v.strip()) for v in values):
        warnings.warn(f"column {column!r} holds dates ({len(values)} distinct): as text, each "
                      "date is its own one-hot slot; derive numbers from it first (pandas: "
                      f"pd.to_datetime(df[{column!r}]).dt.dayofyear, ...), or leave it out "
                      "with columns=.", stacklevel=3)
