"""The kit's floor: rules every helper shares, and nothing above them.

Errors (:mod:`~datakit.core.errors`), argument rules (:mod:`~datakit.core.arguments`),
keywords under two names (:mod:`~datakit.core.keywords`),
the path resolver (:mod:`~datakit.core.paths`), atomic writes and set commits
(:mod:`~datakit.core.atomic`) and the one manifest format (:mod:`~datakit.core.manifest`).
Nothing here imports TensorFlow, Matplotlib or another part of the kit.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
