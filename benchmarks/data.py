"""The benchmark's CSV tables, written once under ``benchmarks/work/``, fixed seeds.

- the numeric table (:func:`make_csv`): N generated rows of 9 number columns in 20 files;
- the housing-like table (:func:`make_housing_like`): N rows drawn from ``data/housing``
  (9 number columns, some empty, and the text column ``ocean_proximity``) in 20 files.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

WORK = Path(__file__).resolve().parent / "work"
COLUMNS = ["row_id"] + [f"x{i}" for i in range(1, 8)] + ["target"]
LABEL = "target"


def make_csv(rows: int = 1_000_000, files: int = 20, *, seed: int = 2024,
             folder: Path | None = None) -> tuple[list[str], Path]:
    """Write (once) ``rows`` rows in ``files`` shards; return the paths and the stats pickle.

    ``row_id`` numbers rows in file order (file 0 first), which is what the
    shuffle comparison needs; ``target`` is a noisy linear function of x1..x7.
    """
    from datakit.readers.csv_files.shards import write_shards
    folder = folder or WORK / f"csv_{rows}"
    stats_path = folder / "stats.pkl"
    paths = sorted(str(p) for p in folder.glob("part_*.csv"))
    if len(paths) == files and stats_path.exists():
        try:
            load_stats(stats_path)
            return paths, stats_path
        except (AttributeError, ModuleNotFoundError):  # pickled by an older datakit: redo stats
            _write_stats(paths, stats_path)
            return paths, stats_path
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(rows, 7)) * [1, 2, 5, 10, 0.5, 3, 100], 4)
    y = np.round(x @ rng.normal(size=7) + rng.normal(scale=0.1, size=rows), 4)
    table = {"row_id": np.arange(rows)}
    table.update({f"x{i + 1}": x[:, i] for i in range(7)})
    table["target"] = y
    paths = write_shards(table, folder, num_shards=files, prefix="part")
    _write_stats(paths, stats_path)
    return paths, stats_path


#: The housing-like table's label (the usual regression target).
HOUSING_LABEL = "median_house_value"


def make_housing_like(rows: int = 400_000, files: int = 20, *,
                      seed: int = 2024) -> tuple[list[str], Path]:
    """Write (once) ``rows`` rows drawn from the housing table in ``files`` shards.

    Rows are drawn with replacement (fixed seed), so the values, empty
    ``total_bedrooms`` fields and the text column are the real table's.
    """
    import pandas as pd

    from datakit import data_path
    from datakit.readers.csv_files.shards import write_shards
    folder = WORK / f"housing_{rows}"
    stats_path = folder / "stats.pkl"
    paths = sorted(str(p) for p in folder.glob("part_*.csv"))
    if len(paths) == files and stats_path.exists():
        return paths, stats_path
    table = pd.read_csv(data_path("housing", "housing.csv"))
    picked = np.random.default_rng(seed).integers(0, len(table), rows)
    paths = write_shards(table.iloc[picked].reset_index(drop=True), folder, num_shards=files,
                         prefix="part")
    _write_stats(paths, stats_path)
    return paths, stats_path


def _write_stats(paths, stats_path):
    from datakit.readers.csv_files.stats import column_stats
    with open(stats_path, "wb") as f:
        pickle.dump(column_stats(paths), f)


def load_stats(path: str | Path):
    with open(path, "rb") as f:
        return pickle.load(f)
