"""datakit: see what each ``tf.data`` transformation does.

Importing datakit quiets TensorFlow's start-up logs (unless you set the
variables yourself), so import it *before* TensorFlow:

>>> import os, datakit
>>> os.environ["TF_CPP_MIN_LOG_LEVEL"]
'2'

The helpers live in one module per concept (see the README's map):
:mod:`datakit.glassbox` (a pure-Python twin of ``tf.data.Dataset``),
:mod:`datakit.basics`, :mod:`datakit.shuffle`, :mod:`datakit.mixing`,
:mod:`datakit.interleave`, :mod:`datakit.shards`, :mod:`datakit.stats`,
:mod:`datakit.csv`, :mod:`datakit.timeline`, :mod:`datakit.synthetic`, :mod:`datakit.bench`,
:mod:`datakit.examples`, :mod:`datakit.records`, :mod:`datakit.sources`,
:mod:`datakit.video`, :mod:`datakit.memory`, :mod:`datakit.plotting`; the glass box's
variable-length and source-combining ops (:mod:`datakit.variable_length`,
:mod:`datakit.combining`, on :mod:`datakit.elements`), :mod:`datakit.sources_mix`
and :mod:`datakit.checkpoint`.
"""

from __future__ import annotations

import os as _os

# Must run before TensorFlow is imported anywhere: TensorFlow reads both at load.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
_os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

from pathlib import Path as _Path  # noqa: E402

__version__ = "0.1.0"

#: The repository's ``data/`` folder (shipped data sets, each with a SOURCE.md).
DATA_DIR = _Path(__file__).resolve().parent.parent / "data"


def data_path(*parts: str) -> _Path:
    """Return the path of a file shipped in the kit's ``data/`` folder.

    >>> data_path("housing", "housing.csv").name
    'housing.csv'
    >>> data_path("housing", "housing.csv").exists()
    True
    """
    return DATA_DIR.joinpath(*parts)


__all__ = ["DATA_DIR", "data_path", "__version__"]
