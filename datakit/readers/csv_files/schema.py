"""What the CSV reader knows of a table: column kinds and full-pass statistics.

:func:`datakit.readers.csv_files.stats.column_stats` fills a :class:`CsvStats`;
the reader takes it. Both import this module, never each other. For serving,
save the statistics beside the model and load them where it predicts, so the
rows are preprocessed exactly as in training:

>>> import os, tempfile
>>> stats = CsvStats(["x", "y"], {"x": ColumnStats("x", NUMBER, 3, 0, 2.0, 1.0, 1.0, 3.0),
...                               "y": ColumnStats("y", TEXT, 3, vocabulary={"b": 2, "a": 1})},
...                  label="y")
>>> path = stats.save(os.path.join(tempfile.mkdtemp(), "stats.json"))
>>> CsvStats.load(path) == stats, class_names(stats, "y")
(True, ['a', 'b'])
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

import pandas as pd

from datakit.core.atomic import write_atomic
from datakit.core.errors import DataError
from datakit.readers.csv_files.dialect import DEFAULT_NA_VALUES, Dialect

__all__ = ["NUMBER", "TEXT", "STATS_FORMAT", "ColumnStats", "CsvStats", "kinds_for",
           "label_classes", "class_names"]

NUMBER, TEXT = "number", "text"
#: The format tag of a saved :class:`CsvStats` (``CsvStats.save``).
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
class CsvStats:
    """What :func:`column_stats` learned: the chosen columns and their statistics.

    ``columns`` are the columns kept (in the order asked for); ``header`` is the
    files' full header, which readers check their files against; ``label`` the
    target column, if ``column_stats`` was told (then rows without it can be
    read for prediction: ``csv_reader_dataset(..., label=None)``). ``delimiter``,
    ``na_values`` and ``column_names`` are the files' dialect
    (:mod:`datakit.readers.csv_files.dialect`), which every reader given these
    statistics reads its files with.
    """

    columns: list[str]
    stats: dict[str, ColumnStats] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    rows: int = 0
    header: list[str] | None = None
    label: str | None = None
    delimiter: str = ","
    na_values: list[str] = field(default_factory=lambda: list(DEFAULT_NA_VALUES))
    column_names: list[str] | None = None

    def __post_init__(self):
        if self.header is None:
            self.header = list(self.columns)

    @property
    def dialect(self) -> Dialect:
        """How the files are written: separator, missing-value markers, header or names."""
        return Dialect(self.delimiter, tuple(self.na_values),
                       None if self.column_names is None else tuple(self.column_names))

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

    def save(self, path: str | os.PathLike) -> str:
        """Write the statistics to ``path`` as JSON (atomically); return the path.

        Vocabularies keep their order (most frequent first), so a loaded copy
        preprocesses exactly as this one.
        """
        data = {"format": STATS_FORMAT, **asdict(self)}
        for s in data["stats"].values():
            if s["vocabulary"] is not None:
                s["vocabulary"] = [[k, n] for k, n in s["vocabulary"].items()]
        write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        return os.fspath(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> CsvStats:
        """Statistics written by :meth:`save`.

        Raises:
            FileNotFoundError: no file at ``path``.
            DataError: the file is not JSON written by :meth:`save`.
        """
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            data = json.loads(text)
            if data.pop("format") != STATS_FORMAT:
                raise ValueError("another format")
            stats = {}
            for name, s in data.pop("stats").items():
                if s["vocabulary"] is not None:
                    s["vocabulary"] = {k: n for k, n in s["vocabulary"]}
                stats[name] = ColumnStats(**s)
            return cls(stats=stats, **data)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise DataError(path, f"not statistics saved by CsvStats.save ({e}); save them "
                            "again with stats.save(path)") from None


def kinds_for(stats: CsvStats, columns: list[str], path: str) -> dict[str, str]:
    """Each column's kind, after checking ``path``'s header ``columns`` against the statistics'.

    The header may lack the statistics' label (rows for prediction).
    """
    unlabelled = [c for c in stats.header if c != stats.label]
    if list(columns) not in (list(stats.header), unlabelled):
        raise ValueError(f"{path}: columns {columns} differ from the statistics' header "
                         f"{stats.header}; compute column_stats on files with the same header.")
    kinds = stats.kinds()
    return {c: kinds[c] for c in columns}


def label_classes(stats: CsvStats, label: str | None) -> dict[str, list[str]]:
    """``{label: its classes}`` for a text label, else {}: every value, sorted.

    Sorted as Keras' ``*_dataset_from_directory`` sorts class folders, so a
    class index does not change when the data is split again.

    Raises:
        ValueError: ``max_vocabulary`` left some of the label's values out.
    """
    if label is None or label not in stats.stats or stats[label].kind != TEXT:
        return {}
    s = stats[label]
    if s.unknown:
        raise ValueError(f"label={label!r}: its vocabulary was capped by max_vocabulary "
                         f"({s.unknown} values left out), but a label needs every class: "
                         f"compute the statistics with column_stats(..., label={label!r}), "
                         "which never caps the label.")
    return {label: sorted(s.vocabulary)}


def class_names(stats: CsvStats, label: str) -> list[str]:
    """A text label's classes, sorted: class index ``i`` is ``class_names(stats, label)[i]``."""
    classes = label_classes(stats, label)
    if not classes:
        raise ValueError(f"label={label!r} is not a text column of the statistics.")
    return classes[label]
