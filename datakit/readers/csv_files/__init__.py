"""CSV files into ``tf.data``: statistics, shards, and the complete reader.

>>> from datakit.readers import csv_files
>>> csv_files.csv_reader_dataset.__module__
'datakit.readers.csv_files.reader'
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.readers.csv_files.column_kinds import infer_kinds
    from datakit.readers.csv_files.dialect import DEFAULT_NA_VALUES, Dialect
    from datakit.readers.csv_files.file_checks import check_files
    from datakit.readers.csv_files.grammar import BadLine, describe_bad_line, find_bad_lines
    from datakit.readers.csv_files.options import ReadOptions
    from datakit.readers.csv_files.reader import csv_reader_dataset, feature_names
    from datakit.readers.csv_files.schema import class_names
    from datakit.readers.csv_files.shards import split_into_shards, write_shards
    from datakit.readers.csv_files.stats import column_stats

__all__ = lazy_face(__name__)
