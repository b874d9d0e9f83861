"""Parquet columns as tensors: each column's type, and a row group's columns read as NumPy.

:mod:`datakit.readers.parquet_files.parquet` builds its reader from these: :func:`column_dtype`
says what tensor a column becomes (an integer or boolean column holding a
missing value becomes floats, so the value stays missing, as pandas reads it),
:func:`columns_with_nulls` finds those columns in the files' metadata, and
:func:`row_group_reader` is the Python call that reads one row group, after
checking that its file is the one the reader checked
(:mod:`datakit.core.file_facts`), and its label column with
:func:`check_label` (a missing, ``nan`` or infinite label is refused by file,
row and column, as the CSV reader refuses it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import SupportsInt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import tensorflow as tf

from datakit.core.errors import DataError
from datakit.core.file_facts import Stamp, file_facts, opened
from datakit.readers.tables.running_stats import FLOAT32_MAX

__all__: list[str] = []

#: What to do about a file changed while it is read.
REPLACE_WHOLE = ("build the dataset again after the files change, and replace a set whole "
                 "(write_parquet_shards into a new folder) rather than while it is read")


def column_dtype(field: pa.Field, has_nulls: bool = False) -> tf.DType:
    """The tensor type of a column; an integer or boolean column holding a missing value is
    read as floats, so the missing value stays one (``nan``), as pandas reads it."""
    t = field.type
    if pa.types.is_floating(t):
        return tf.float32
    if pa.types.is_boolean(t):
        return tf.float32 if has_nulls else tf.bool
    if pa.types.is_integer(t):
        return tf.float64 if has_nulls else tf.int64
    return tf.string


def columns_with_nulls(files: list[str], schema: pa.Schema, keep: list[str]) -> set[str]:
    """The integer and boolean columns of ``keep`` that hold a missing value, from the files'
    metadata (each row group's null count: no data is read). A file written without
    statistics does not say; such a column stays an integer one, and a missing value found
    while reading is an error naming it."""
    asked = [c for c in keep if pa.types.is_integer(schema.field(c).type)
             or pa.types.is_boolean(schema.field(c).type)]
    found: set[str] = set()
    for path in files:
        meta = pq.ParquetFile(path).metadata
        names = [meta.schema.column(j).name for j in range(meta.num_columns)]
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in asked:
                stats = group.column(names.index(c)).statistics
                if stats is not None and stats.has_null_count and stats.null_count:
                    found.add(c)
    return found


#: The largest integer each output type holds exactly.
_EXACT = {tf.int64: 2**63 - 1, tf.float64: 2**53}


def _column_out(col: pa.ChunkedArray, dtype: tf.DType,
                where: tuple[str, int, str]) -> np.ndarray:
    """One column of a row group as a NumPy array of ``dtype``: missing strings ``""``,
    missing numbers ``nan``; an integer that ``dtype`` cannot hold exactly is an error."""
    path, group, c = where
    if dtype == tf.string:
        return col.fill_null("").to_numpy(zero_copy_only=False).astype(object)
    if dtype in (tf.int64, tf.bool) and col.null_count:
        raise ValueError(f"{path}, row group {group}, column {c}: "
                         f"{col.null_count} missing value(s) in an integer or boolean column "
                         "whose file metadata records none (written without statistics); "
                         "write it again with statistics, or store the column as float")
    if pa.types.is_integer(col.type) and dtype in _EXACT and len(col) - col.null_count:
        low, high = pc.min_max(col).values()
        worst = max(abs(low.as_py()), abs(high.as_py()))
        if worst > _EXACT[dtype]:
            value = high.as_py() if abs(high.as_py()) >= abs(low.as_py()) else low.as_py()
            raise DataError(path, f"the value {value} does not fit a {dtype.name} exactly "
                            f"(at most {_EXACT[dtype]:,}): it would be read as another number. "
                            "Store it as a string, or leave the column out with columns=...",
                            column=f"{c} (row group {group})")
    if dtype != tf.string and not pa.types.is_floating(col.type) and dtype.is_floating:
        col = pc.cast(col, pa.float64() if dtype == tf.float64 else pa.float32())
    values = col.to_numpy()
    if dtype == tf.float32 and values.dtype == np.float64:
        # A value beyond float32's range (a 9.99e99 sentinel, a 1e39) would be inf in the
        # float32 tensor: it is missing (nan), as column_stats counts it (issue 60).
        beyond = np.isfinite(values) & (np.abs(values) > FLOAT32_MAX)
        if beyond.any():
            values = np.where(beyond, np.nan, values)
    return values.astype(dtype.as_numpy_dtype, copy=False)


def check_label(col: pa.ChunkedArray, where: tuple[str, int, str], first_row: int) -> None:
    """Refuse a label that is missing (null), ``nan`` or infinite, naming file, row and column.

    ``first_row`` is the row group's first row in its file (rows count from 1).
    """
    path, group, c = where
    bad = col.is_null().to_numpy(zero_copy_only=False)
    if pa.types.is_floating(col.type):
        values = col.fill_null(0).to_numpy()
        # (beyond float32's range: infinite as the label's float32 tensor holds it)
        bad = bad | ~np.isfinite(values) | (np.abs(values) > FLOAT32_MAX)
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    value = col[i].as_py()
    what = "missing (null)" if value is None else repr(value)
    if value is not None and math.isfinite(value):
        what += f", beyond float32's range (±{FLOAT32_MAX:.4g}), where it is infinite"
    raise DataError(path, f"the label is {what} ({int(bad.sum())} such row(s) in row group "
                    f"{group}); a label must be a finite value, or the row counts nowhere. "
                    "Drop or fill those rows and write the file again, or read it with "
                    "label=None", column=f"{c}, row {first_row + i}")


def row_group_reader(columns: list[str], dtypes: list[tf.DType],
                     facts: dict[str, Stamp] | None = None, *, label: str | None = None
                     ) -> Callable[[bytes, SupportsInt], list[np.ndarray]]:
    def read(raw_path: bytes, raw_group: SupportsInt) -> list[np.ndarray]:
        path, group = raw_path.decode(), int(raw_group)
        with opened(path, facts or file_facts([path]), fix=REPLACE_WHOLE) as fh:
            try:
                pf = pq.ParquetFile(fh)
                table = pf.read_row_group(group, columns=columns)
            except (pa.ArrowException, OSError) as e:
                raise ValueError(f"{path}, row group {group}: cannot be read ({e}); the file "
                                 "is damaged: write it again") from None
            if label is not None:
                first = 1 + sum(pf.metadata.row_group(g).num_rows for g in range(group))
                check_label(table.column(label), (path, group, label), first)
        return [_column_out(table.column(c), dtype, (path, group, c))
                for c, dtype in zip(columns, dtypes, strict=True)]
    return read
