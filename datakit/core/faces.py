"""How every package face (``__init__.py``) re-exports its names: loaded on first use.

A face writes each name it re-exports once, as an import under ``if TYPE_CHECKING:``
(so type checkers see the real types), and ends with ``__all__ = lazy_face(__name__)``:
:func:`lazy_face` reads those imports from the face's own source, and makes its
``__all__`` and its PEP 562 ``__getattr__`` and ``__dir__`` from them, so a name's
module is imported only when the name is first used (the top level and the video
face never load TensorFlow by themselves)::

    if TYPE_CHECKING:
        from datakit.readers.tables.table_options import TableOptions

    __all__ = lazy_face(__name__)

This module imports nothing from the kit.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

__all__: list[str] = []


def lazy_face(package: str, *, own: tuple[str, ...] = ()) -> list[str]:
    """The face's ``__all__``: the names its ``if TYPE_CHECKING:`` block imports, loaded lazily.

    Installs the face's ``__getattr__`` and ``__dir__`` (:func:`_lazy_names`) and keeps
    the table of name -> module as the face's ``_HOME``. ``own`` names what the face
    defines itself (the top level's ``data_path``), listed first.
    """
    face = sys.modules[package]
    table = _face_table(package, face.__file__ or "")
    getattr_, dir_ = _lazy_names(package, table)
    for name, value in (("__getattr__", getattr_), ("__dir__", dir_), ("_HOME", table)):
        setattr(face, name, value)
    return [*own, *table]


def _face_table(package: str, path: str) -> dict[str, str]:
    """``{name: module relative to package}`` of the ``if TYPE_CHECKING:`` imports in ``path``."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    table: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                if not (isinstance(imp, ast.ImportFrom) and imp.module
                        and imp.module.startswith(package + ".")):
                    raise ValueError(f"{path}: the TYPE_CHECKING block of a face holds only "
                                     f"`from {package}.<module> import <names>` lines")
                table |= {a.asname or a.name: imp.module[len(package) + 1:] for a in imp.names}
    return table


def _lazy_names(package: str, table: Mapping[str, str]
                ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the face of ``package``.

    ``table`` maps each re-exported name to the module it lives in, relative to the
    package (``{"clip_dataset": "clips"}``); the name is imported from there on first
    use and kept in the package, so later uses skip ``__getattr__``. Any other name is
    an ``AttributeError``, so that ``from package import submodule`` still imports the
    submodule.

    A name that is also the name of the submodule it lives in (the doctor's
    ``memory_advice``) stays the name: loading a submodule binds it on its package,
    which would hide the name once anything imported the submodule, so the package
    refuses that one binding (``import_module`` still finds the submodule).
    """
    shadowed = {name for name, module in table.items() if name == module}
    if shadowed:
        sys.modules[package].__class__ = _face_keeping(shadowed)

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{table[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__


def _face_keeping(names: set[str]) -> type[types.ModuleType]:
    """A module class that never binds a submodule over one of ``names``."""

    class Face(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in names and isinstance(value, types.ModuleType):
                return  # the import system binding the submodule: keep the name
            super().__setattr__(name, value)

    return Face
