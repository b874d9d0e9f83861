"""CSV files into ``tf.data``: statistics, shards, and the complete reader.

>>> from datakit.readers import csv_files
>>> csv_files.csv_reader_dataset.__module__
'datakit.readers.csv_files.reader'
"""

from datakit.readers.csv_files.dialect import DEFAULT_NA_VALUES, Dialect
from datakit.readers.csv_files.file_checks import check_files, csv_file_set, data_lines, is_blank
from datakit.readers.csv_files.grammar import (
    NUMBER_PATTERN,
    BadLine,
    bad_lines_in,
    describe_bad_line,
    find_bad_lines,
)
from datakit.readers.csv_files.line_decoding import LINES_PER_CHUNK, checked_decoder, decoded_chunks
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
