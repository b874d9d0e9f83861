"""The reader's options, checked once: a frozen dataclass whose ``__post_init__`` is the rulebook.

:func:`datakit.readers.csv_files.reader.csv_reader_dataset` puts every argument
but the file paths into one :class:`ReadOptions` (as Grain's ``ReadOptions``),
so a bad value fails before any file is opened or any TensorFlow op is built,
with a message that says how to fix the call. It extends the options every
table reader shares (:class:`~datakit.readers.tables.table_options.TableOptions`:
passes, batch size, shuffle buffer, seed, readers, read and parse threads,
prefetch) with CSV's own: the statistics and label, the parse mode, bad lines.

>>> from datakit.readers.tables.table_stats import ColumnStats, TableStats, NUMBER
>>> stats = TableStats(["x", "y"], {c: ColumnStats(c, NUMBER) for c in "xy"})
>>> ReadOptions(stats, "y", batch_size=64).batch_size
64
>>> ReadOptions(stats, "y", parse="fast")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: parse='fast': use 'line' (classic), 'batch' (each reader ... or 'arrow' (pyarrow ...
>>> ReadOptions(stats, "y", batch_size=2.5)
Traceback (most recent call last):
    ...
TypeError: batch_size must be an int, got 2.5
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from datakit.core.arguments import check_flag, check_number, check_on_bad
from datakit.readers.csv_files.modes import PARSE_MODES, ParseMode
from datakit.readers.csv_files.schema import label_classes
from datakit.readers.tables.table_options import TableOptions
from datakit.readers.tables.table_stats import TableStats

__all__ = ["ReadOptions"]


@dataclass(frozen=True)
class ReadOptions(TableOptions):
    """Everything :func:`csv_reader_dataset` takes besides the files, checked.

    The fields are its arguments, with the same names and defaults; its
    docstring says what each means. The shared ones
    (:class:`~datakit.readers.tables.table_options.TableOptions`) are keywords.
    """

    stats: TableStats
    label: str | None
    parse: str = "line"
    label_scale: float = 1.0
    on_bad_line: str = "raise"
    trace: bool = False
    output: str = "matrix"
    cache: str | os.PathLike | None = None

    def __post_init__(self) -> None:
        self._check_label()
        self._check_cache()
        if self.output not in ("matrix", "dict"):
            raise ValueError(f"output={self.output!r}: use 'matrix' (one float32 matrix) or "
                             "'dict' (a tensor per column, for Keras preprocessing layers).")
        super().__post_init__()  # the counts, the interleave rule, the shuffle buffer
        if self.parse not in PARSE_MODES:
            names = [f"{k!r} ({m.about})" for k, m in PARSE_MODES.items()]
            raise ValueError(f"parse={self.parse!r}: use {', '.join(names[:-1])} or "
                             f"{names[-1]}.")
        check_flag("trace", self.trace)
        if self.trace and not self.mode.traced:
            raise ValueError(f"trace=True traces rows; parse={self.parse!r} has no per-row "
                             "stage: use parse='batch' to trace the same readers.")
        # inf would make every label 0
        check_number("label_scale", self.label_scale, positive=True,
                     fix="labels are divided by it, so pass a finite number > 0 (1 keeps them "
                     "as they are)")
        check_on_bad("on_bad_line", self.on_bad_line)

    def _check_cache(self) -> None:
        if self.cache is None:
            return
        if isinstance(self.cache, bytes) or not isinstance(self.cache, (str, os.PathLike)):
            raise TypeError(f"cache={self.cache!r}: pass a folder (str or pathlib.Path) for "
                            "the cache files, or None.")
        if not str(self.cache).strip():
            raise ValueError(f"cache={self.cache!r} names no folder, so the cache files would be "
                             "written into the working folder: pass a folder for the cache "
                             "files (e.g. cache='cache/'), or None for no cache.")
        if self.parse in PARSE_MODES and not self.mode.caches:
            raise ValueError(f"cache={str(self.cache)!r} keeps the parsed rows before the "
                             f"shuffle; parse={self.parse!r} parses after it: use "
                             "parse='arrow' or parse='chunk'.")

    def _check_label(self) -> None:
        if not isinstance(self.stats, TableStats):
            raise TypeError(f"stats must be the TableStats that column_stats returns, got "
                            f"{type(self.stats).__name__}.")
        if self.label is None and self.stats.label is None:
            raise ValueError("label=None reads rows without the label, but these statistics do "
                             "not say which column the label was: compute them with "
                             "column_stats(..., label=...).")
        if self.label is not None and self.label not in self.stats.columns:
            raise ValueError(f"label={self.label!r} is not a column of the statistics; they "
                             f"have {self.stats.columns}.")
        if not self.features:
            raise ValueError(f"no feature column: the statistics keep only the label "
                             f"{self.target!r}; keep more columns (column_stats(columns=...)).")
        if self.classes and self.label_scale != 1.0:
            raise ValueError(f"label_scale={self.label_scale!r}: {self.label!r} is a text "
                             "label (a class index); leave label_scale at 1.")

    @property
    def target(self) -> str:
        """The label's column: ``label``, or for rows without it (``None``) the statistics'."""
        target = self.stats.label if self.label is None else self.label
        assert target is not None, "_check_label refuses label=None without a statistics' label"
        return target

    @property
    def features(self) -> list[str]:
        """The feature columns (names): the statistics' columns but the label."""
        return [c for c in self.stats.columns if c != self.target]

    @property
    def mode(self) -> ParseMode:
        """The parse mode's entry in the registry."""
        return PARSE_MODES[self.parse]

    @property
    def classes(self) -> dict[str, list[str]]:
        """``{label: its classes}`` for a text label, else ``{}``."""
        return label_classes(self.stats, self.label)

    @property
    def skip(self) -> bool:
        """Whether bad lines are skipped (and counted) rather than raised."""
        return self.on_bad_line == "skip"
