"""CSV files into ``tf.data``: statistics, shards, and the complete reader.

>>> from datakit.readers import csv_files
>>> csv_files.csv_reader_dataset.__module__
'datakit.readers.csv_files.reader'
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

if TYPE_CHECKING:  # the real types of the names _HOME loads on first use
    from datakit.readers.csv_files.dialect import DEFAULT_NA_VALUES, Dialect
    from datakit.readers.csv_files.file_checks import (
        check_files,
        csv_file_set,
        data_lines,
        is_blank,
    )
    from datakit.readers.csv_files.grammar import (
        NUMBER_PATTERN,
        BadLine,
        bad_lines_in,
        describe_bad_line,
        find_bad_lines,
    )
    from datakit.readers.csv_files.line_decoding import (
        LINES_PER_CHUNK,
        checked_decoder,
        decoded_chunks,
    )
    from datakit.readers.csv_files.options import ReadOptions
    from datakit.readers.csv_files.reader import OOV, csv_reader_dataset, feature_names
    from datakit.readers.csv_files.schema import (
        NUMBER,
        TEXT,
        ColumnStats,
        CsvStats,
        TableStats,
        class_names,
    )
    from datakit.readers.csv_files.shards import split_into_shards, write_shards
    from datakit.readers.csv_files.stats import column_stats, infer_kinds

__all__ = ["NUMBER", "TEXT", "OOV", "LINES_PER_CHUNK", "NUMBER_PATTERN", "BadLine",
           "describe_bad_line", "find_bad_lines", "bad_lines_in", "checked_decoder",
           "decoded_chunks",
           "feature_names", "class_names", "csv_reader_dataset", "ReadOptions",
           "write_shards", "split_into_shards", "check_files", "csv_file_set", "is_blank",
           "data_lines", "ColumnStats", "CsvStats", "TableStats", "infer_kinds", "column_stats",
           "DEFAULT_NA_VALUES", "Dialect"]

#: Each re-exported name and the module it lives in (imported on first use).
_HOME = {
    "NUMBER": "schema",
    "TEXT": "schema",
    "OOV": "reader",
    "LINES_PER_CHUNK": "line_decoding",
    "NUMBER_PATTERN": "grammar",
    "BadLine": "grammar",
    "describe_bad_line": "grammar",
    "find_bad_lines": "grammar",
    "bad_lines_in": "grammar",
    "checked_decoder": "line_decoding",
    "decoded_chunks": "line_decoding",
    "feature_names": "reader",
    "class_names": "schema",
    "csv_reader_dataset": "reader",
    "ReadOptions": "options",
    "write_shards": "shards",
    "split_into_shards": "shards",
    "check_files": "file_checks",
    "csv_file_set": "file_checks",
    "is_blank": "file_checks",
    "data_lines": "file_checks",
    "ColumnStats": "schema",
    "CsvStats": "schema",
    "TableStats": "schema",
    "infer_kinds": "stats",
    "column_stats": "stats",
    "DEFAULT_NA_VALUES": "dialect",
    "Dialect": "dialect",
}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
