"""A CSV file's dialect: its separator, its missing-value markers, and whether it has a header.

:class:`Dialect` is what ``column_stats(delimiter=..., na_values=...,
column_names=...)`` checks and records in the statistics, so the reader, the
bad-line finder and the file checks read the files the same way:

- ``delimiter``: one character between fields (``","``; ``";"`` and a tab are
  common), ``decode_csv``'s ``field_delim``;
- ``na_values``: the markers that mean *missing* in a number column, as
  pandas' ``na_values`` (default :data:`DEFAULT_NA_VALUES`, pandas' own
  list): such a field counts as missing in the statistics and is filled with
  the training mean by the reader, like an empty field. In a text column they
  stay values (``"NA"`` may be Namibia); a label is never missing;
- ``column_names``: the names of a file *without* a header line (then line 1
  is a row); ``None``: line 1 is the header.

>>> d = Dialect(";", ["NA"])
>>> d.separator, d.header_lines, d.marker_pattern
(';', 1, '(?:NA)')
>>> Dialect("\\t").separator
'\\\\t'
>>> Dialect(";;")
Traceback (most recent call last):
    ...
ValueError: delimiter=';;': pass one character, such as ',', ';' or '\\t'.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datakit.readers.tables.table_stats import TableStats

__all__ = ["DEFAULT_NA_VALUES", "Dialect", "dialect_of"]

#: pandas' default missing-value markers (``pd.read_csv``), but the empty field,
#: which is always missing.
DEFAULT_NA_VALUES = ("#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                     "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                     "nan", "null")


@dataclass(frozen=True)
class Dialect:
    """How a set of CSV files is written (checked when made)."""

    delimiter: str = ","
    #: Any sequence of markers when made (a list, say); kept as a tuple.
    na_values: Sequence[str] = DEFAULT_NA_VALUES
    #: Any sequence of names when made (a list, say); kept as a tuple.
    column_names: Sequence[str] | None = None

    def __post_init__(self) -> None:
        d = self.delimiter
        if not isinstance(d, str):
            raise TypeError(f"delimiter must be a str, got {type(d).__name__}.")
        if len(d) != 1 or d in '"\r\n ':
            raise ValueError(f"delimiter={d!r}: pass one character, such as ',', ';' or '\\t'"
                             + (" (not a quote, a space or a line break)." if len(d) == 1
                                else "."))
        object.__setattr__(self, "na_values", _markers(self.na_values, d))
        if self.column_names is not None:
            object.__setattr__(self, "column_names", _names(self.column_names))

    def saved(self) -> dict:
        """The dialect as the statistics keep it (``TableStats.dialect``), plain JSON."""
        return {"delimiter": self.delimiter, "na_values": list(self.na_values),
                "column_names": None if self.column_names is None else list(self.column_names)}

    @property
    def separator(self) -> str:
        """The delimiter as a regular expression (Python's ``re`` and TensorFlow's RE2)."""
        return r"\t" if self.delimiter == "\t" else re.escape(self.delimiter)

    @property
    def header_lines(self) -> int:
        """Lines before the first row: 1 (the header), or 0 with ``column_names``."""
        return 0 if self.column_names else 1

    @property
    def marker_pattern(self) -> str | None:
        """The markers as one regular expression, or None when there is none."""
        if not self.na_values:
            return None
        return "(?:" + "|".join(re.escape(m) for m in self.na_values) + ")"


def _markers(values: Sequence[str], delimiter: str) -> tuple[str, ...]:
    if isinstance(values, str) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"na_values={values!r}: pass a list of strings, such as ['NA', 'n/a'] "
                        "(a list of one for one marker; [] for none).")
    bad = [v for v in values if not v or delimiter in v or set(v) & set('"\r\n')]
    if bad:
        raise ValueError(f"na_values: {bad} cannot be markers (empty, or holding the "
                         "delimiter, a quote or a line break); an empty field is always "
                         "missing.")
    return tuple(dict.fromkeys(values))


def _names(names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"column_names={names!r}: pass a list of column names.")
    repeated = sorted({n for n in names if list(names).count(n) > 1})
    if not names or repeated:
        raise ValueError(f"column_names={list(names)!r}: " + (
            f"name each column once ({repeated} repeat)" if repeated else "name the columns"))
    return tuple(names)


#: The default dialect: commas, pandas' markers, a header line.
COMMA = Dialect()


def dialect_of(stats: TableStats) -> Dialect:
    """The dialect the statistics ``stats`` were computed with (``column_stats(delimiter=...,
    na_values=..., column_names=...)``), which every CSV reader given them reads its files
    with; statistics of a binary format (Parquet) or of tf.Transform give the default.

    >>> from datakit.readers.tables.table_stats import TableStats
    >>> dialect_of(TableStats(["x"], dialect=Dialect(";", ["?"]).saved())).na_values
    ('?',)
    >>> dialect_of(TableStats(["x"])) == COMMA
    True
    """
    return Dialect(**stats.dialect)
