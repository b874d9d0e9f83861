"""Parquet: shards written as one set, columns read as tensors through the tables' tail."""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
