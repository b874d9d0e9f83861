"""The videos a reader reads: class folders listed, probed and split, and the one index.

Stands on :mod:`~datakit.readers.video.decoding` and :mod:`~datakit.readers.video.options`;
the converter and the readers start from it.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
