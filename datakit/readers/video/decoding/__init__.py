"""A video file opened, probed (the probe's facts cached) and decoded: the wing's floor.

Imports nothing else of the wing and no TensorFlow, so the converter's worker processes
start with PyAV alone. The names a user calls are on :mod:`datakit.readers.video`.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
