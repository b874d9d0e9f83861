"""``shuffle_chunks`` under its first address: the row buffer that moves whole chunks.

It lives in :mod:`datakit.readers.tables.chunk_buffer` (Parquet shuffles with
it too); this module keeps ``from datakit.readers.csv_files.chunk_shuffle
import shuffle_chunks`` working.

>>> shuffle_chunks.__module__
'datakit.readers.tables.chunk_buffer'
"""

from datakit.readers.tables.chunk_buffer import shuffle_chunks

__all__ = ["shuffle_chunks"]
