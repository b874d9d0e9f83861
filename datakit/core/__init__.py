"""The kit's floor: rules every helper shares, and nothing above them.

Errors (:mod:`~datakit.core.errors`), argument rules (:mod:`~datakit.core.arguments`),
the path resolver (:mod:`~datakit.core.paths`), atomic writes and set commits
(:mod:`~datakit.core.atomic`) and the one manifest format (:mod:`~datakit.core.manifest`).
Nothing here imports TensorFlow, Matplotlib or another part of the kit.
"""

__all__: list[str] = []
