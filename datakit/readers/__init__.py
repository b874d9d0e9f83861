"""Helpers that read files into ``tf.data`` (and write the files they read).

CSV (:mod:`~datakit.readers.csv_files`), TFRecord shards (:mod:`~datakit.readers.tfrecords`)
and ``tf.train.Example`` s (:mod:`~datakit.readers.tf_example`), fixed-length binary records
(:mod:`~datakit.readers.fixed_length`), SQLite (:mod:`~datakit.readers.sqlite`), video
(:mod:`~datakit.readers.video`), numbered text lines, and iterator checkpoints. Each checks
its files up front and names the file (and line) in every error.
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

__all__: list[str] = []

#: Each re-exported name and the module it lives in: none (import the modules themselves).
_HOME: dict[str, str] = {}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
