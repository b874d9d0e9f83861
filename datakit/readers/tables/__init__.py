"""The floor every row reader stands on, with no format's knowledge.

CSV (:mod:`datakit.readers.csv_files`), Parquet and tf.Transform share, from here:
the statistics of a table and their accumulators, the one column-choice check,
the one file-set check, the options every reader takes (:class:`TableOptions`)
and the one reading tail (:func:`blocks_dataset`).

>>> from datakit.readers import tables
>>> tables.TableOptions().n_readers
5
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.readers.tables.table_options import TableOptions
    from datakit.readers.tables.table_stats import NUMBER, TEXT, ColumnStats, TableStats

__all__ = lazy_face(__name__)
