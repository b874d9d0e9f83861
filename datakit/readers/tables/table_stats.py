"""What a reader knows of a table, whatever its format: column kinds and full-pass statistics.

The CSV pass (:func:`datakit.readers.csv_files.stats.column_stats`) and the
Parquet one (:func:`datakit.readers.parquet_files.parquet.column_stats`) fill a
:class:`TableStats`; the readers take it. For serving, save the statistics
beside the model and load them where it predicts, so the rows are
preprocessed exactly as in training:

>>> import os, tempfile
>>> stats = TableStats(["x", "y"], {"x": ColumnStats("x", NUMBER, 3, 0, 2.0, 1.0, 1.0, 3.0),
...                                 "y": ColumnStats("y", TEXT, 3, vocabulary={"b": 2, "a": 1})},
...                    label="y")
>>> path = stats.save(os.path.join(tempfile.mkdtemp(), "stats.json"))
>>> TableStats.load(path) == stats
True
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import pandas as pd

from datakit.core.atomic import write_atomic
from datakit.core.errors import DataError

__all__ = ["NUMBER", "TEXT", "ColumnStats", "TableStats"]

NUMBER, TEXT = "number", "text"
#: The format tag of saved statistics (``TableStats.save``; the name it had when only CSV had them).
STATS_FORMAT = "datakit.csv_stats/1"


@dataclass
class ColumnStats:
    """Full-pass statistics of one column (numbers: ``std`` is the population std, ddof=0)."""

    name: str
    kind: str
    count: int = 0
    missing: int = 0
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    #: Text: value -> count, most frequent first (ties: alphabetical), at most ``max_vocabulary``.
    vocabulary: dict[str, int] | None = None
    #: Text: how many non-empty values fell outside the (capped) vocabulary.
    unknown: int = 0


@dataclass
class TableStats:
    """What a ``column_stats`` pass learned: the chosen columns and their statistics.

    ``columns`` are the columns kept (in the order asked for); ``header`` is the
    files' full header, which readers check their files against; ``label`` the
    target column, if ``column_stats`` was told (then rows without it can be
    read for prediction: ``csv_reader_dataset(..., label=None)``). ``dialect``
    says how the files are written, as their format's wing records it (a text
    format's separator, missing-value markers and column names: see
    :func:`datakit.readers.csv_files.dialect.dialect_of`); this floor keeps it,
    saves and loads it, and never reads it. A binary format leaves it empty.
    """

    columns: list[str]
    stats: dict[str, ColumnStats] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    rows: int = 0
    header: list[str] | None = None
    label: str | None = None
    dialect: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.header is None:
            self.header = list(self.columns)

    def __getitem__(self, name: str) -> ColumnStats:
        return self.stats[name]

    def kinds(self) -> dict[str, str]:
        """Each header column's kind; a column left out is read as text and ignored."""
        header = self.columns if self.header is None else self.header  # as __post_init__
        return {c: self.stats[c].kind if c in self.stats else TEXT for c in header}

    def to_frame(self) -> pd.DataFrame:
        """A pandas table, one row per column (vocabularies left out)."""
        rows = [{k: v for k, v in vars(s).items() if k not in ("vocabulary", "unknown")}
                for s in self.stats.values()]
        return pd.DataFrame(rows).set_index("name")

    def save(self, path: str | os.PathLike) -> str:
        """Write the statistics to ``path`` as JSON (atomically); return the path.

        Vocabularies keep their order (most frequent first), so a loaded copy
        preprocesses exactly as this one. The dialect's entries are written beside the
        statistics' own (as they were when they were fields of their own).
        """
        data = {"format": STATS_FORMAT, **asdict(self)}
        data.update(data.pop("dialect"))
        for s in data["stats"].values():
            if s["vocabulary"] is not None:
                s["vocabulary"] = [[k, n] for k, n in s["vocabulary"].items()]
        write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        return os.fspath(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> TableStats:
        """Statistics written by :meth:`save`.

        Raises:
            FileNotFoundError: no file at ``path``.
            DataError: the file is not JSON written by :meth:`save`.
        """
        with open(path, "rb") as f:
            raw = f.read()
        try:
            data = json.loads(raw.decode("utf-8"))
            if data.pop("format") != STATS_FORMAT:
                raise ValueError("another format")
            own = {f.name for f in fields(cls)}  # the rest is the format's dialect
            data["dialect"] = {k: data.pop(k) for k in list(data) if k not in own}
            stats = {}
            for name, s in data.pop("stats").items():
                if s["vocabulary"] is not None:
                    s["vocabulary"] = {k: n for k, n in s["vocabulary"]}
                stats[name] = ColumnStats(**s)
            return cls(stats=stats, **data)
        except (ValueError, KeyError, TypeError, AttributeError) as e:  # UnicodeDecodeError too
            why = (f"not UTF-8 text: {e.reason} at byte {e.start}"
                   if isinstance(e, UnicodeDecodeError) else str(e))
            raise DataError(path, f"not statistics saved by TableStats.save ({why}); save them "
                            "again with stats.save(path)") from None
