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

from datakit.core.faces import lazy_names

if TYPE_CHECKING:  # the real types of the names _HOME loads on first use
    from datakit.readers.tables.block_reading import (
        blocks_dataset,
        counted,
        file_order,
        shuffle_buffer,
    )
    from datakit.readers.tables.chunk_buffer import shuffle_chunks
    from datakit.readers.tables.column_choice import choose_columns
    from datakit.readers.tables.file_set import (
        FileFacts,
        FileSet,
        FolderManifests,
        check_file_set,
        named_itself,
    )
    from datakit.readers.tables.running_stats import add_numbers, cap_vocabulary, finish_column
    from datakit.readers.tables.table_options import KNOBS, TableOptions
    from datakit.readers.tables.table_stats import (
        NUMBER,
        STATS_FORMAT,
        TEXT,
        ColumnStats,
        TableStats,
    )

__all__ = ["NUMBER", "TEXT", "STATS_FORMAT", "ColumnStats", "TableStats", "add_numbers",
           "finish_column", "cap_vocabulary", "choose_columns", "FileFacts", "FileSet",
           "FolderManifests", "check_file_set", "named_itself", "TableOptions", "KNOBS",
           "shuffle_buffer", "file_order", "counted", "blocks_dataset",
           "shuffle_chunks"]

#: Each re-exported name and the module it lives in (imported on first use).
_HOME = {
    "NUMBER": "table_stats",
    "TEXT": "table_stats",
    "STATS_FORMAT": "table_stats",
    "ColumnStats": "table_stats",
    "TableStats": "table_stats",
    "add_numbers": "running_stats",
    "finish_column": "running_stats",
    "cap_vocabulary": "running_stats",
    "choose_columns": "column_choice",
    "FileFacts": "file_set",
    "FileSet": "file_set",
    "FolderManifests": "file_set",
    "check_file_set": "file_set",
    "named_itself": "file_set",
    "TableOptions": "table_options",
    "KNOBS": "table_options",
    "shuffle_buffer": "block_reading",
    "file_order": "block_reading",
    "counted": "block_reading",
    "blocks_dataset": "block_reading",
    "shuffle_chunks": "chunk_buffer",
}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
