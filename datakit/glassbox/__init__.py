"""A pure-Python twin of ``tf.data.Dataset``, and the algorithms it is made of.

:class:`Dataset` mirrors the ``tf.data`` methods the course teaches, element for element,
and its ``trace()`` tells what each op held at each step. Its algorithms live beside it:
the shuffle buffer, the interleave cycle, the variable-length and combining ops. Importing
the glass box loads neither TensorFlow nor Matplotlib.
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

if TYPE_CHECKING:  # the real types of the names _HOME loads on first use
    from datakit.glassbox.dataset import (
        AUTOTUNE,
        CacheStep,
        Dataset,
        OpTrace,
        ShuffleStep,
        SourceStep,
        Step,
        glassbox_shuffle,
    )
    from datakit.glassbox.recording import IgnoredArgumentWarning

__all__ = ["AUTOTUNE", "Dataset", "Step", "OpTrace", "ShuffleStep", "SourceStep", "CacheStep",
           "glassbox_shuffle", "IgnoredArgumentWarning"]

#: Each re-exported name and the module it lives in (imported on first use).
_HOME = {
    "AUTOTUNE": "dataset",
    "Dataset": "dataset",
    "Step": "dataset",
    "OpTrace": "dataset",
    "ShuffleStep": "dataset",
    "SourceStep": "dataset",
    "CacheStep": "dataset",
    "glassbox_shuffle": "dataset",
    "IgnoredArgumentWarning": "recording",
}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
