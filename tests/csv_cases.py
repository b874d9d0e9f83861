"""Files the CSV tests share (shards, stats, csv): housing shards, five small files."""

from __future__ import annotations

import numpy as np

import datakit
from datakit.readers.csv_files.shards import split_into_shards

LABEL = "median_house_value"


def housing_parts(folder):
    """The housing table split into 20 train, 10 valid, 10 test shards (seed 42)."""
    return split_into_shards(datakit.data_path("housing", "housing.csv"), folder, seed=42)


def five_files(tmp_path, bad_line):
    """Five files of 9 rows ``a,b,c``; ``bad_line`` is line 6 of the third file."""
    rows = iter(range(1000))
    paths = []
    for i in range(5):
        lines = [f"{next(rows)},{next(rows) * 0.5},\"t{i}\"" for _ in range(9)]
        if i == 2:
            lines.insert(4, bad_line)  # line 6 of the file (after the header and 4 rows)
        path = tmp_path / f"part_{i}.csv"
        path.write_text("a,b,c\n" + "\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


def read_all(ds):
    xs, ys = [], []
    for x, y in ds:
        xs.append(x.numpy())
        ys.append(y.numpy())
    return np.concatenate(xs), np.concatenate(ys)


def sorted_rows(x, y):
    """Rows of features ``x`` and labels ``y``, sorted: the same set read in any order."""
    rows = np.c_[x, y]
    return rows[np.lexsort(rows.T[::-1])]
