"""What the CSV reader knows of a table: column kinds and full-pass statistics.

:func:`datakit.readers.csv_files.stats.column_stats` fills a :class:`CsvStats`;
the reader takes it. Both import this module, never each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

__all__ = ["NUMBER", "TEXT", "ColumnStats", "CsvStats", "kinds_for", "label_classes",
           "class_names"]

NUMBER, TEXT = "number", "text"


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
class CsvStats:
    """What :func:`column_stats` learned: the chosen columns and their statistics.

    ``columns`` are the columns kept (in the order asked for); ``header`` is the
    files' full header, which readers check their files against.
    """

    columns: list[str]
    stats: dict[str, ColumnStats] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    rows: int = 0
    header: list[str] | None = None

    def __post_init__(self):
        if self.header is None:
            self.header = list(self.columns)

    def __getitem__(self, name: str) -> ColumnStats:
        return self.stats[name]

    def kinds(self) -> dict[str, str]:
        """Each header column's kind; a column left out is read as text and ignored."""
        return {c: self.stats[c].kind if c in self.stats else TEXT for c in self.header}

    def to_frame(self):
        """A pandas table, one row per column (vocabularies left out)."""
        rows = [{k: v for k, v in vars(s).items() if k not in ("vocabulary", "unknown")}
                for s in self.stats.values()]
        return pd.DataFrame(rows).set_index("name")


def kinds_for(stats: CsvStats, columns: list[str], path: str) -> dict[str, str]:
    """Each column's kind, after checking that ``path``'s header ``columns`` is the statistics'."""
    if list(stats.header) != list(columns):
        raise ValueError(f"{path}: columns {columns} differ from the statistics' header "
                         f"{stats.header}; compute column_stats on files with the same header.")
    return stats.kinds()


def label_classes(stats: CsvStats, label: str | None) -> dict[str, list[str]]:
    """``{label: its classes}`` for a text label (its vocabulary in the statistics), else {}."""
    if label is None or label not in stats.stats or stats[label].kind != TEXT:
        return {}
    return {label: list(stats[label].vocabulary)}


def class_names(stats: CsvStats, label: str) -> list[str]:
    """A text label's classes: class index ``i`` is ``class_names(stats, label)[i]``."""
    classes = label_classes(stats, label)
    if not classes:
        raise ValueError(f"label={label!r} is not a text column of the statistics.")
    return classes[label]
