"""The statistics as the CSV reader reads them: the header's kinds, a text label's classes.

The statistics themselves (:class:`~datakit.readers.tables.table_stats.TableStats`)
are every table reader's, in :mod:`datakit.readers.tables`;
:func:`datakit.readers.csv_files.stats.column_stats` fills them and the reader
takes them:

>>> from datakit.readers.tables.table_stats import TEXT, ColumnStats, TableStats
>>> stats = TableStats(["x", "y"], {"y": ColumnStats("y", TEXT, 3, vocabulary={"b": 2, "a": 1})},
...                    label="y")
>>> class_names(stats, "y")
['a', 'b']
"""

from __future__ import annotations

from datakit.readers.tables.table_stats import TEXT, TableStats

__all__ = ["class_names"]


def kinds_for(stats: TableStats, columns: list[str], path: str) -> dict[str, str]:
    """Each column's kind, after checking ``path``'s header ``columns`` against the statistics'.

    The header may lack the statistics' label (rows for prediction).
    """
    header = stats.columns if stats.header is None else stats.header  # as __post_init__
    unlabelled = [c for c in header if c != stats.label]
    if list(columns) not in (list(header), unlabelled):
        raise ValueError(f"{path}: columns {columns} differ from the statistics' header "
                         f"{stats.header}; compute column_stats on files with the same header.")
    kinds = stats.kinds()
    return {c: kinds[c] for c in columns}


def label_classes(stats: TableStats, label: str | None) -> dict[str, list[str]]:
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
    return {label: sorted(s.vocabulary or {})}


def class_names(stats: TableStats, label: str) -> list[str]:
    """A text label's classes, sorted: class index ``i`` is ``class_names(stats, label)[i]``."""
    classes = label_classes(stats, label)
    if not classes:
        raise ValueError(f"label={label!r} is not a text column of the statistics.")
    return classes[label]
