"""What a video reader is asked, checked once: ``VideoOptions``, the samplers, the Keras words.

Stands on :mod:`~datakit.readers.video.decoding` only (for type hints); the index, the
converter and the readers take these options.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
