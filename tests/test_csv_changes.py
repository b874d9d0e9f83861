"""A CSV file changed after the reader checked it: refused by name, never an epoch of two sets.

Each pass compares a file, when it opens it, with what the reader was built from
(size and rows, and a fingerprint of the content; ``parse="arrow"``: size and
modification time, on the open file, at each block).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

from datakit.readers import csv_files as dc

pytestmark = pytest.mark.timeout(300)

ROWS = 20_000  # more than the readers parse ahead (5 chunks; 5 arrow blocks)


def _write(path, values) -> None:
    """Write beside ``path`` and move over it, as a rerun of a writer would."""
    with open(f"{path}.new", "w") as f:
        f.write("x,y\n" + "".join(f"{v},{v}\n" for v in values))
    os.replace(f"{path}.new", path)


@pytest.fixture()
def files(tmp_path):
    paths = [str(tmp_path / f"part_{k}.csv") for k in range(2)]
    _write(paths[0], np.arange(ROWS) % 10)
    _write(paths[1], np.arange(100) % 10)
    return paths, dc.column_stats(paths)


def _reader(paths, stats, parse):
    return dc.csv_reader_dataset(paths, stats=stats, label="y", parse=parse, n_readers=1,
                                 shuffle_buffer_size=None, batch_size=100,
                                 n_parse_threads=1, prefetch=None)


@pytest.mark.parametrize("parse", ["line", "batch", "arrow"])
def test_a_file_rewritten_at_the_same_size_between_epochs_is_refused(files, parse):
    paths, stats = files
    _write(paths[0], np.arange(200) % 10)  # a short epoch will do here
    ds = _reader(paths, stats, parse)
    assert sum(len(y) for _, y in ds) == 300
    _write(paths[1], (np.arange(100) + 1) % 10)  # same bytes, same rows, other values
    assert os.path.getsize(paths[1]) == 100 * 4 + 4
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"CSV file changed after it was checked.*part_1\.csv"):
        for _ in ds:  # the next epoch
            pass


@pytest.mark.parametrize("parse", ["batch", "arrow"])
def test_a_file_replaced_mid_epoch_is_refused_before_any_of_its_rows(files, parse):
    paths, stats = files
    it = iter(_reader(paths, stats, parse))
    _, y = next(it)
    np.testing.assert_array_equal(y.numpy(), np.arange(100) % 10)
    _write(paths[1], np.arange(100) % 10 + 0.5)  # not read yet in this epoch
    seen = 100
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"CSV file changed after it was checked.*part_1\.csv"):
        for _, y in it:
            assert not (y.numpy() % 1).any()  # never a row of the new file
            seen += len(y)
    assert seen <= ROWS


@pytest.mark.parametrize("parse", ["line", "batch", "arrow"])
def test_a_file_rewritten_in_place_between_epochs_is_refused(files, parse):
    """Same inode (opened for writing and truncated, as an editor's save): still found."""
    paths, stats = files
    _write(paths[0], np.arange(200) % 10)
    ds = _reader(paths, stats, parse)
    assert sum(len(y) for _, y in ds) == 300
    inode = os.stat(paths[1]).st_ino
    with open(paths[1], "r+") as f:  # same bytes, same rows, other values, same file
        f.write("x,y\n" + "".join(f"{v},{v}\n" for v in (np.arange(100) + 1) % 10))
    assert os.stat(paths[1]).st_ino == inode and os.path.getsize(paths[1]) == 100 * 4 + 4
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"CSV file changed after it was checked.*part_1\.csv"):
        for _ in ds:  # the next epoch
            pass
