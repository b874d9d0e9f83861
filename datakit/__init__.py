"""datakit: see what each ``tf.data`` transformation does.

Importing datakit changes nothing of yours (no environment variable, no TensorFlow
option). To load TensorFlow without its start-up lines, as the notebooks do, call
:func:`quiet_tensorflow` before ``import tensorflow``:

>>> import datakit
>>> datakit.quiet_tensorflow.__module__
'datakit.tensorflow_logs'

The names a user reaches for first are here, loaded on first use so that
``import datakit`` stays fast and quiet (it imports neither TensorFlow nor
Matplotlib):

>>> datakit.read_records.__module__, "read_records" in dir(datakit)
('datakit.readers.records.tfrecords', True)

The rest lives in one module per concept, in folders that are the layers (see the
README's map), and imports run one way, down the list: :mod:`datakit.core` (errors,
argument rules, paths, atomic writes, manifests) imports nothing from the kit;
:mod:`datakit.glassbox` (a pure-Python twin of ``tf.data.Dataset``) sits on it; then
the figure style, ``perf``, ``readers``, ``see``, ``doctor``, ``cluster`` and
``exercises``.
"""

from __future__ import annotations

import os as _os
from collections.abc import Callable as _Callable
from pathlib import Path as _Path
from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face as _lazy_face

if TYPE_CHECKING:  # the names a user starts with, each loaded on first use
    from datakit.core.errors import DataError
    from datakit.perf.bench import benchmark
    from datakit.readers.csv_files.grammar import find_bad_lines
    from datakit.readers.csv_files.reader import csv_reader_dataset
    from datakit.readers.csv_files.shards import split_into_shards, write_shards
    from datakit.readers.csv_files.stats import column_stats
    from datakit.readers.parquet_files.parquet import parquet_dataset
    from datakit.readers.records.tfrecord_writer import ShardWriter
    from datakit.readers.records.tfrecords import read_records
    from datakit.readers.tables.table_options import TableOptions
    from datakit.readers.video.options.clip_options import VideoOptions
    from datakit.readers.video.reading.clips import clip_dataset
    from datakit.readers.video.reading.directory import video_dataset_from_directory
    from datakit.tensorflow_logs import quiet_tensorflow

__version__ = "0.1.0"

def _data_dir() -> _Path:
    """Where the kit's data lives: ``DATAKIT_DATA_DIR``, else the clone's ``data/`` folder,
    else (an installed kit, with no ``data/`` beside it) ``data`` in the kit's cache folder
    (:func:`datakit.core.environment.cache_dir`), created."""
    from datakit.core.environment import cache_dir, env_folder
    from datakit.core.shipped import shipped_folder

    chosen = env_folder("DATAKIT_DATA_DIR")
    if chosen is not None:
        return chosen.resolve()
    clone = _Path(__file__).resolve().parent.parent / "data"
    if (clone / "housing").is_dir():
        return clone.resolve()
    return _installed_data_dir(cache_dir("data").resolve(), shipped_folder("data"))


def _installed_data_dir(folder: _Path, shipped: _Path | None) -> _Path:
    """``folder``, created, holding a copy of each data set the wheel shipped in ``shipped``
    (copied once, whole, even when several processes start at once: a set already there
    is left as it is)."""
    import shutil

    from datakit.core.made_once import make_folder_once

    def copy(data_set: _Path) -> _Callable[[_Path], list[_Path]]:
        def into(tmp: _Path) -> list[_Path]:
            shutil.copytree(data_set, tmp, dirs_exist_ok=True)
            return sorted(p for p in tmp.rglob("*") if p.is_file())
        return into

    (folder / "generated").mkdir(parents=True, exist_ok=True)
    for data_set in sorted(shipped.iterdir()) if shipped and shipped.is_dir() else ():
        if data_set.is_dir() and not (folder / data_set.name).exists():
            make_folder_once(folder / data_set.name, copy(data_set),
                             recipe={"copied from": str(data_set)})
    return folder


#: The kit's data folder: shipped data sets (each with a SOURCE.md) and ``generated/`` for
#: files the notebooks make. ``DATAKIT_DATA_DIR`` points the kit at another copy (the
#: browser test does, so that its notebooks never write the repository's own files). In a
#: clone it is the repository's ``data/``; a kit installed from a wheel has no ``data/``
#: beside it, so it uses ``data`` in the kit's cache folder (``~/.cache/datakit/data`` on
#: Linux, ``~/Library/Caches/datakit/data`` on macOS, ``%LOCALAPPDATA%\\datakit\\Cache\\data``
#: on Windows; ``DATAKIT_CACHE`` moves it), which exists and is yours to write, and copies
#: there the data sets the wheel installed (in ``share/datakit/data`` of pip's scheme).
DATA_DIR = _data_dir()


def data_path(*parts: str, relative: bool = False) -> _Path:
    """Return the path of a file in the kit's data folder (:data:`DATA_DIR`).

    A shipped file that is not there (a kit installed without the shipped data
    sets) is a ``FileNotFoundError`` that says where to find it. ``relative=True`` gives
    the path from the current folder (what the notebooks show: the same in every
    checkout) where there is one, and the absolute path where there is none (on Windows,
    a data folder on another drive than the notebook).

    >>> data_path("housing", "housing.csv").name
    'housing.csv'
    >>> data_path("housing", "housing.csv").exists()
    True
    >>> data_path("generated", relative=True).is_absolute()
    False
    """
    from datakit.core.arguments import check_flag

    path = DATA_DIR.joinpath(*parts)
    if check_flag("relative", relative):
        try:
            path = _Path(_os.path.relpath(path))
        except ValueError:  # Windows: no relative path from one drive to another
            pass
    if parts and parts[0] != "generated" and not path.exists() and not (
            DATA_DIR / "housing").is_dir():
        raise FileNotFoundError(
            f"{path}: this datakit has no copy of the shipped data (installed without its "
            "repository). Point the kit at a clone's data folder with the DATAKIT_DATA_DIR "
            "environment variable (git clone the kit, then DATAKIT_DATA_DIR=<clone>/data), or "
            "install the kit from a clone: pip install -e <clone>")
    return path


#: The names a user starts with are the ``TYPE_CHECKING`` imports above, loaded on first use.
__all__ = _lazy_face(__name__, own=("DATA_DIR", "data_path", "__version__"))
