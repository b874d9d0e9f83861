"""The one column-choice check: ``columns=`` as every reader and statistics pass takes it.

``columns=None`` keeps every column; otherwise a list of names, each once,
each one of the table's (a CSV header, a Parquet schema), in the order asked
for. The form is checked before any file is opened (``available=None``), the
names once the files say what they hold:

>>> choose_columns(["y", "x"], ["x", "y", "z"], "a.csv")
['y', 'x']
>>> choose_columns(None, ["x", "y"], "a.csv")
['x', 'y']
>>> choose_columns(["x", "town"], ["x", "y"], "a.csv")
Traceback (most recent call last):
    ...
ValueError: columns=['x', 'town']: ['town'] not in the header ['x', 'y'] of a.csv.
>>> choose_columns("x")  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
TypeError: columns must be a list of column names, got str: a str is not a sequence of
column names; pass a list.

A set, a dict or a generator is refused too: the columns would come in its
hash or iteration order, not an order you chose.

>>> choose_columns({"x"})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
TypeError: columns must be a list of column names, got set: a set has no order, so the
result's order would follow its hash order; pass a list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

from datakit.core.arguments import check_ordered

__all__: list[str] = []


@overload
def choose_columns(columns: Any, available: Sequence[str], where: str = "",
                   *, what: str = "header") -> list[str]: ...
@overload
def choose_columns(columns: Any, available: None = None, where: str = "",
                   *, what: str = "header") -> list[str] | None: ...
def choose_columns(columns: Any, available: Sequence[str] | None = None, where: str = "",
                   *, what: str = "header") -> list[str] | None:
    """The columns to keep, checked: ``columns`` (or all of ``available`` if it is ``None``).

    Args:
        columns: ``None`` (every column) or a list of names.
        available: the table's columns; ``None``: check only the form of ``columns``
            (a list of distinct names, not empty), before any file is opened.
        where: the file the columns were read from, for the message.
        what: what the message calls the table's columns (``"header"``, ``"schema"``).

    Raises:
        TypeError: ``columns`` is not a list of names (a lone string is not).
        ValueError: it is empty, names a column twice, or one ``available`` lacks.
    """
    if columns is None:
        return None if available is None else list(available)  # every column
    columns = name_list("columns", columns)
    shown = "" if available is None else f"; the {what} is {list(available)}"
    if not columns:
        raise ValueError(f"columns=[]: keep at least one column{shown}.")
    if len(set(columns)) != len(columns):
        raise ValueError(f"columns={columns!r}: pass each name once{shown}.")
    if available is not None:
        unknown = [c for c in columns if c not in available]
        if unknown:
            raise ValueError(f"columns={columns!r}: {unknown} not in the {what} "
                             f"{list(available)} of {where}.")
    return columns


def name_list(name: str, value: Any) -> list[str]:
    """``value`` as a list of names: a list or tuple of strings; ``TypeError`` otherwise.

    Every argument that takes column names (``columns``, ``text_columns``,
    ``number_columns``) is checked by this one rule.

    >>> name_list("text_columns", ("town",))
    ['town']
    >>> name_list("text_columns", "town")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    TypeError: text_columns must be a list of column names, got str: a str is not a sequence
    of column names; pass a list.
    """
    names = check_ordered(name, value, "column names")  # the kit's one rule for lists
    if not all(isinstance(c, str) for c in names):
        raise TypeError(f"{name}={value!r}: pass a list of column names (strings).")
    return names
