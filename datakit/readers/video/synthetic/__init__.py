"""The course's own videos: moving squares, any codec, a messy folder, MP4s, a small model.

Imports nothing else of the wing: the converter and the readers use these videos, and
decoding, the options and the index never depend on them.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
