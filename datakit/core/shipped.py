"""What the kit's wheel ships beside the package, found however pip installed it.

A wheel installs the shipped data sets and the course's notebooks as data files, in
``share/datakit/`` of pip's install scheme: ``<venv>/share/datakit`` in a venv,
``~/.local/share/datakit`` (or its like) under ``pip install --user``, ``<prefix>/share``
under ``--prefix``. :func:`shipped_folder` finds them from the distribution's own list of
the files it installed (its ``RECORD``), so every scheme is found, not only the one
``sysconfig`` names.

This module imports nothing from the kit.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

__all__: list[str] = []

#: The name pip knows the kit by (``pip install tf-datakit``; ``import datakit``): ``datakit``
#: itself is taken on the package index, by projects that install a ``datakit`` package too.
DISTRIBUTION = "tf-datakit"


def shipped_folder(name: str) -> Path | None:
    """The folder ``share/datakit/<name>`` where pip installed the kit's wheel, or ``None``
    for a kit not installed from a wheel (a clone, an editable install)."""
    try:
        files = metadata.distribution(DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        parts = file.parts
        if name in parts:
            at = parts.index(name)
            if parts[max(0, at - 2):at] == ("share", "datakit"):
                return Path(str(file.locate())).resolve().parents[len(parts) - at - 2]
    return None
