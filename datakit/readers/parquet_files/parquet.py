# About 340 lines on purpose: one format, written, checked and read, whose three parts share
# the schema helpers (kinds, dtypes, chosen columns); the statistics are the CSV pass's own.
"""Parquet shards, the format tables are converted to: write them, check them, read them.

- :func:`write_parquet_shards` writes a table (a DataFrame, a dict of
  columns, a pyarrow Table, or CSV files) into N Parquet files, committed as
  one set with the kit's manifest (rows, bytes, sha256 per file), so a reader
  sees the old set or the new one, never a mix.
- :func:`check_parquet_files` checks files up front, naming the file: missing,
  empty, not Parquet, a schema that differs from the first file's, a
  disagreement with the manifest.
- :func:`parquet_dataset` reads them into ``tf.data`` a row group at a time
  (one Python call per row group: pyarrow decodes in C++ without the GIL),
  through the tables' one reading tail
  (:func:`~datakit.readers.tables.block_reading.blocks_dataset`), shuffled as
  the CSV reader's ``parse="chunk"`` is, every row once per epoch, and batched.
- :func:`column_stats` gives the statistics the CSV pass gives
  (:class:`~datakit.readers.tables.table_stats.TableStats`) of Parquet files, a
  row group at a time, equal to pandas'.

(tensorflow-io's Parquet reader has no build for TensorFlow 2.21.) A
dataset built here runs a Python function, so it cannot run on tf.data
service workers.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> paths = write_parquet_shards({"x": [1.0, 2.0, None, 4.0], "y": [1, 2, 3, 4]}, d, num_shards=2)
>>> [os.path.basename(p) for p in paths]
['part_00.parquet', 'part_01.parquet']
>>> ds = parquet_dataset(paths, batch_size=4, shuffle_buffer_size=None)
>>> batch = next(iter(ds))
>>> batch["x"].numpy().tolist(), batch["y"].numpy().tolist()
([1.0, 2.0, nan, 4.0], [1, 2, 3, 4])
>>> column_stats(paths)["x"].mean
2.3333333333333335
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import tensorflow as tf

from datakit.core import manifest
from datakit.core.arguments import PREFETCH, check_count
from datakit.core.atomic import Staging
from datakit.core.errors import DataError
from datakit.core.exit_guard import release_iterators_at_exit
from datakit.core.file_facts import file_facts, opened
from datakit.core.paths import FilesArg, user_path
from datakit.core.progress import check_progress, progress_bar, with_progress
from datakit.readers.parquet_files.parquet_columns import (
    REPLACE_WHOLE,
    column_dtype,
    columns_with_nulls,
    row_group_reader,
)
from datakit.readers.tables.block_reading import blocks_dataset
from datakit.readers.tables.column_choice import choose_columns
from datakit.readers.tables.file_set import FileFacts, FileSet, check_file_set
from datakit.readers.tables.running_stats import add_numbers, finish_column
from datakit.readers.tables.table_options import TableOptions, table_options
from datakit.readers.tables.table_stats import NUMBER, TEXT, ColumnStats, TableStats

__all__ = ["write_parquet_shards", "check_parquet_files", "parquet_dataset", "column_stats"]

#: Rows per row group written by :func:`write_parquet_shards` (one read call each).
ROW_GROUP_ROWS = 16_384


# -- writing -----------------------------------------------------------------------


def _as_table(table_or_csvs: Any) -> pa.Table:
    if isinstance(table_or_csvs, pa.Table):
        return table_or_csvs
    if isinstance(table_or_csvs, dict):
        return pa.table(table_or_csvs)
    import pandas as pd
    if isinstance(table_or_csvs, pd.DataFrame):
        return pa.Table.from_pandas(table_or_csvs, preserve_index=False)
    if isinstance(table_or_csvs, (str, os.PathLike, list, tuple)):
        import pyarrow.csv as pacsv

        from datakit.readers.csv_files.file_checks import (
            csv_file_set,  # the CSV reader's own checks
        )
        files = csv_file_set(table_or_csvs).files
        convert = pacsv.ConvertOptions(null_values=[""], strings_can_be_null=False)
        tables = []
        for f in files:
            try:
                tables.append(pacsv.read_csv(f, convert_options=convert))
            except pa.ArrowInvalid as e:
                raise DataError(f, f"pyarrow cannot read it: {e}; find the bad lines with "
                                "datakit.readers.csv_files.find_bad_lines") from None
        return pa.concat_tables(tables, promote_options="default")
    raise TypeError(f"Cannot write a {type(table_or_csvs).__name__}: pass a DataFrame, a dict "
                    "of columns, a pyarrow Table, or CSV paths.")


def write_parquet_shards(table_or_csvs: Any, directory: str | Path, *, num_shards: int,
                         prefix: str = "part", row_group_rows: int = ROW_GROUP_ROWS,
                         progress: bool | None = None) -> list[str]:
    """Write the rows of a table into ``num_shards`` Parquet files, committed as one set.

    Rows are split evenly, in order; each file is written under a temporary
    name, then the set is switched in one atomic write of
    ``directory/manifest.json`` (rows, bytes and sha256 per file). Returns
    the paths, in order.

    Args:
        table_or_csvs: a pandas DataFrame, a dict of columns, a pyarrow Table,
            or CSV paths / patterns (checked with the CSV reader's checks first).
        num_shards: files to write (>= 1).
        prefix: file names are ``{prefix}_00.parquet``, ...
        row_group_rows: rows per row group, the unit :func:`parquet_dataset` reads.
        progress: a bar over the shards written (:mod:`datakit.core.progress`): ``None``
            (default) shows it in a notebook or a terminal once writing lasts a second,
            ``True`` always, ``False`` never.
    """
    check_progress(progress)
    check_count("num_shards", num_shards)
    check_count("row_group_rows", row_group_rows)
    table = _as_table(table_or_csvs)
    folder = Path(user_path(directory))
    folder.mkdir(parents=True, exist_ok=True)
    counts = {}
    bounds = np.linspace(0, table.num_rows, num_shards + 1).round().astype(int)
    bar = progress_bar(num_shards, "parquet shards", progress=progress, unit="shard")
    with Staging(folder) as stage, bar:  # the set commit: nothing of it stays but the new set
        for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
            name = f"{prefix}_{k:02d}.parquet"
            pq.write_table(table.slice(lo, hi - lo), stage.file(name),
                           row_group_size=row_group_rows)
            counts[name] = int(hi - lo)
            bar.update()
        names = manifest.write_set(folder, prefix, stage.files, counts, kind="parquet",
                                   unit="rows", pattern=f"{prefix}_[0-9][0-9]*.parquet")
    return [str(folder / n) for n in names]


# -- checking ------------------------------------------------------------------------


def check_parquet_files(filepaths: FilesArg) -> tuple[list[str], pa.Schema]:
    """Resolve paths and patterns; return ``(sorted files, the shared schema)``.

    :func:`parquet_file_set` with the answer as a pair.
    """
    found = parquet_file_set(filepaths)
    return found.files, found.shape


def parquet_file_set(filepaths: FilesArg) -> FileSet:
    """Check Parquet files up front: a :class:`~datakit.readers.tables.file_set.FileSet`.

    Its ``shape`` is the shared schema, ``rows`` each file's rows (from its
    metadata). Raises, naming the file: a missing file or a pattern matching
    nothing (``FileNotFoundError``), an empty file, a file that is not Parquet, a
    schema that differs from the first file's (the differing column named), two
    columns of one name,
    a file that disagrees with its folder's ``manifest.json`` (rows, bytes,
    sha256), and files that hold no row at all (:class:`DataError`).
    """
    first: list[tuple[str, pa.Schema]] = []

    def check_file(path: str) -> FileFacts:
        if os.path.getsize(path) == 0:
            raise DataError(path, "the file is empty; write it again (write_parquet_shards)")
        try:
            meta = pq.ParquetFile(path).metadata
        except (pa.ArrowInvalid, OSError) as e:
            raise DataError(path, f"not a Parquet file ({e}); pass Parquet files, or read CSV "
                            "with csv_reader_dataset") from None
        schema = meta.schema.to_arrow_schema()
        twice = [n for n, k in Counter(schema.names).items() if k > 1]
        if twice:
            at = [i + 1 for i, n in enumerate(schema.names) if n == twice[0]]
            raise DataError(path, f"has {len(at)} columns named {twice[0]!r} (columns "
                            f"{', '.join(map(str, at))} of {len(schema.names)}): no reader can "
                            "tell them apart; rename them and write the file again")
        if not first:
            first.append((path, schema))
        elif not schema.equals(first[0][1]):
            raise DataError(path, f"its schema differs from {first[0][0]}'s: "
                            f"{_difference(first[0][1], schema)}; all files must have the same "
                            "columns and types")
        return FileFacts(rows=meta.num_rows, shape=schema)

    def no_rows(kept: list[str]) -> DataError:
        return DataError(kept[0], "no file holds a row: there is nothing to read")

    return check_file_set(filepaths, check_file, no_rows=no_rows, suffix=".parquet")


def _difference(a: pa.Schema, b: pa.Schema) -> str:
    for name in dict.fromkeys(a.names + b.names):
        ta = a.field(name).type if name in a.names else None
        tb = b.field(name).type if name in b.names else None
        if ta != tb:
            return f"column {name!r} is {tb or 'missing'} here, {ta or 'missing'} there"
    return f"columns in another order: {b.names} vs {a.names}"


def _kind(field: pa.Field, path: str) -> str:
    t = field.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return NUMBER
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return TEXT
    raise DataError(path, f"column {field.name!r} has type {t}; the kit reads numbers and "
                    "strings: cast it (or leave it out with columns=...)")


# -- reading -------------------------------------------------------------------------


def _row_groups(files: list[str], facts: dict, rows: dict[str, int]) -> dict[str, int]:
    """Each file's row groups, from the file that ``facts`` describe, whose rows must be those
    the check counted: a file replaced between the check and ``facts`` is refused too."""
    groups = {}
    for f in files:
        with opened(f, facts, fix=REPLACE_WHOLE) as fh:
            meta = pq.ParquetFile(fh).metadata
        if meta.num_rows != rows.get(f, meta.num_rows):
            raise DataError(f, f"the file changed while the reader checked it ({meta.num_rows:,} "
                            f"rows now, {rows[f]:,} when checked); build the dataset again")
        groups[f] = meta.num_row_groups
    return groups


def parquet_dataset(filepaths: FilesArg, *, columns: Sequence[str] | None = None,
                    batch_size: int = 32, label: str | None = None,
                    shuffle_buffer_size: int | None = 10_000, seed: int | None = None,
                    repeat: int | None = 1, n_readers: int = 5, n_read_threads: int | None = None,
                    n_parse_threads: int | None = None, prefetch: int | None = PREFETCH,
                    options: TableOptions | None = None, **tf_names: Any) -> tf.data.Dataset:
    """Batches of ``{column: tensor}`` from Parquet files, read a row group at a time.

    Floats become float32, integers int64, booleans bool, strings tf.string
    (a missing string is ``""``, a missing float ``nan``, and so is a float beyond
    float32's range, a ``9.99e99`` sentinel or a ``1e39``, which float32 makes
    infinite: ``column_stats`` counts it missing too). An integer or boolean
    column that holds a missing value (the files' metadata says so) is read as
    floats, so the missing value stays missing (``nan``), as pandas reads it:
    integers as float64 (exact up to 2**53), booleans as float32 (1.0, 0.0,
    ``nan``). An integer that its type cannot hold exactly (an unsigned 64-bit
    value above 2**63 - 1) is an error naming the file, column and value, never
    another number. ``label``: elements become ``(features without it, label)``;
    a label that is missing, ``nan``, infinite or beyond float32's range is an error
    naming the file, row, column and value (the CSV reader refuses them too).
    The dataset knows its length. Every argument is checked before any file is
    opened.

    Each file is checked again each time a row group of it is read (its size
    and modification time, on the open file): a file replaced or grown since the
    dataset was built is an error naming it, never an epoch of old and new rows.

    Args:
        columns: the columns to read (default: all), in that order.
        shuffle_buffer_size: rows in the buffer (``None`` or 0: no shuffle, files
            in sorted order, row groups interleaved); files are shuffled too, with ``seed``.
        repeat: passes over the files (``None``: forever).
        n_readers: files read at once (``interleave``'s ``cycle_length``; 1 and no
            shuffle: the rows in file order).
        n_read_threads: threads reading them (``None``, at most ``n_readers``, or AUTOTUNE).
        n_parse_threads: row groups decoded at once per file.
        prefetch: the final prefetch's buffer (0 or ``None``: none).
        options: a :class:`~datakit.readers.tables.table_options.TableOptions`, whole,
            instead of (or beside) its fields as keywords, not both for one field.
        **tf_names: tf.data's names for the knobs (``cycle_length``,
            ``num_parallel_reads``, ``num_parallel_calls``, ``buffer_size``), taken
            quietly; never two names for one knob.
    """
    options = table_options(parquet_dataset, options, dict(
        repeat=repeat, batch_size=batch_size, shuffle_buffer_size=shuffle_buffer_size,
        seed=seed, n_readers=n_readers, n_read_threads=n_read_threads,
        n_parse_threads=n_parse_threads, prefetch=prefetch), tf_names)[0]
    choose_columns(columns)  # its form, before any file is opened
    if label is not None and not isinstance(label, str):
        raise TypeError(f"label={label!r}: pass a column name, or None.")
    checked = parquet_file_set(filepaths)
    files, schema = checked.files, checked.shape
    keep = choose_columns(columns, schema.names, files[0], what="columns")
    assert keep is not None  # None only when no column names are given to choose from
    for c in keep:
        _kind(schema.field(c), files[0])
    if label is not None and label not in keep:
        raise ValueError(f"label={label!r} is not one of the columns read: {keep}.")
    facts = file_facts(files)  # what every read compares the files with
    release_iterators_at_exit()  # its row groups are read in Python: no hang at exit
    groups = _row_groups(files, facts, checked.rows)
    nulls = columns_with_nulls(files, schema, keep)
    dtypes = [column_dtype(schema.field(c), c in nulls) for c in keep]
    read = row_group_reader(keep, dtypes, facts, label=label)
    index = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(files), tf.constant([groups[f] for f in files], tf.int64)), -1)

    def row_groups(path: tf.Tensor) -> tf.data.Dataset:
        def load(group: tf.Tensor) -> Any:
            out = tf.numpy_function(read, [path, group], dtypes, stateful=False,
                                    name="parquet_row_group")
            for t in out:
                t.set_shape([None])
            named = dict(zip(keep, out, strict=True))
            return (named, named.pop(label)) if label is not None else named
        groups_of = tf.data.Dataset.range(index.lookup(path))
        return groups_of.map(load, num_parallel_calls=options.n_parse_threads)

    return blocks_dataset(files, row_groups, options, checked.total)


# -- statistics ------------------------------------------------------------------------


def column_stats(filepaths: FilesArg, *, columns: Sequence[str] | None = None,
                 max_vocabulary: int | None = None, progress: bool | None = None) -> TableStats:
    """Per-column statistics of Parquet files, a row group at a time, as the CSV pass gives.

    Numbers (``nan``, ``inf`` and nulls count as missing): count, missing,
    mean, std (ddof=0), min, max, combined row group by row group in float64
    (Chan's formula). Strings: vocabulary with counts (most frequent first,
    ties by value; at most ``max_vocabulary``, the rest counted as
    ``unknown``); an empty or null string counts as missing. ``progress``: a bar
    over the files (:mod:`datakit.core.progress`: ``None`` shows it in a notebook or a
    terminal once the pass lasts a second, ``True`` always, ``False`` never).
    """
    check_progress(progress)
    choose_columns(columns)  # its form, before any file is opened
    if max_vocabulary is not None:
        check_count("max_vocabulary", max_vocabulary)
    files, schema = check_parquet_files(filepaths)
    keep = choose_columns(columns, schema.names, files[0], what="columns")
    assert keep is not None  # None only when no column names are given to choose from
    kinds = {c: _kind(schema.field(c), files[0]) for c in keep}
    moments = {c: (0, 0.0, 0.0) for c in keep if kinds[c] == NUMBER}
    acc = {c: ColumnStats(c, kinds[c]) for c in keep}
    vocab: dict[str, Counter[str]] = {c: Counter() for c in keep if kinds[c] == TEXT}
    rows = 0
    for path in with_progress(files, "column stats", progress=progress, unit="file"):
        f = pq.ParquetFile(path)
        for g in range(f.metadata.num_row_groups):
            table = f.read_row_group(g, columns=keep)
            rows += table.num_rows
            for c in keep:
                _accumulate(acc[c], table.column(c), moments, vocab)
    for c in keep:
        finish_column(acc[c], moments, vocab, max_vocabulary)
    return TableStats(keep, acc, files, rows, list(keep))


def _accumulate(s: ColumnStats, col: pa.ChunkedArray, moments: dict, vocab: dict) -> None:
    if s.kind == TEXT:
        s.missing += col.null_count
        counts = pc.value_counts(col.drop_null())
        vocab[s.name].update(dict(zip(counts.field("values").to_pylist(),
                                      counts.field("counts").to_pylist(), strict=True)))
        return
    s.missing += col.null_count
    add_numbers(s, col.drop_null().to_numpy().astype(np.float64), moments)
