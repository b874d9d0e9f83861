"""Helpers that read files into ``tf.data`` (and write the files they read), one wing a format.

What every row reader shares (:mod:`~datakit.readers.tables`), CSV
(:mod:`~datakit.readers.csv_files`), Parquet (:mod:`~datakit.readers.parquet_files`),
TFRecord shards and ``tf.train.Example`` s (:mod:`~datakit.readers.records`), tf.Transform
runs (:mod:`~datakit.readers.tf_transform`), fixed-length records, SQLite and numbered
text lines (:mod:`~datakit.readers.small_sources`), iterator checkpoints
(:mod:`~datakit.readers.checkpoints`) and video (:mod:`~datakit.readers.video`). Each
checks its files up front and names the file (and line) in every error.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
