"""Shared assertion for tests of readers: an error that names the file it is about."""

from __future__ import annotations

import pytest

from datakit.core.errors import DataError


def raises_naming(path, fn, *args, error: type[DataError] = DataError, **kw) -> DataError:
    """Call ``fn`` and return the ``error`` it raises, which must name ``path`` (``.path``
    and message)."""
    with pytest.raises(error) as info:
        fn(*args, **kw)
    assert info.value.path == str(path) and str(path) in str(info.value)
    return info.value
