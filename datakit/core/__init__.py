"""The kit's floor: rules every helper shares, and nothing above them.

Errors (:mod:`~datakit.core.errors`), argument rules (:mod:`~datakit.core.arguments`),
keywords under two names (:mod:`~datakit.core.keywords`),
the path resolver (:mod:`~datakit.core.paths`), atomic writes and set commits
(:mod:`~datakit.core.atomic`) and the one manifest format (:mod:`~datakit.core.manifest`).
Nothing here imports TensorFlow, Matplotlib or another part of the kit.
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

__all__: list[str] = []

#: Each re-exported name and the module it lives in: none (import the modules themselves).
_HOME: dict[str, str] = {}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
