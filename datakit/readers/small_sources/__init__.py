"""The small sources: fixed-length binary records, SQLite queries, numbered text lines."""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
