"""Parquet: shards written as one set, columns read as tensors through the tables' tail."""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

__all__: list[str] = []

#: Each re-exported name and the module it lives in: none (import the modules themselves).
_HOME: dict[str, str] = {}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
