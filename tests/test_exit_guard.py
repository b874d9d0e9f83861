"""Every reader whose pipeline calls Python lets the interpreter exit after an error.

Each run is a fresh interpreter with a hard timeout: the reader is built (which
registers :mod:`datakit.core.exit_guard`'s hook), one iterator is held by the
module to the end of the script, mid-epoch, and the error a bad file raises is
kept in a variable with its traceback, as in the video readers' exit tests
(``tests/test_video_exit.py``), the two ways a ``tf.data`` iterator that calls
Python was seen to hang at exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import sys
from datakit.core import exit_guard
folder, reader = sys.argv[1], sys.argv[2]
if reader == "parquet":
    from datakit.readers.parquet_files.parquet import parquet_dataset
    def build(name):
        return parquet_dataset([f"{folder}/{name}.parquet"], label="y", batch_size=4,
                               shuffle_buffer_size=None, n_readers=1)
else:
    from datakit.readers.csv_files.reader import csv_reader_dataset
    from datakit.readers.csv_files.stats import column_stats
    stats = column_stats([f"{folder}/good.csv"])
    def build(name):
        return csv_reader_dataset([f"{folder}/{name}.csv"], stats=stats, label="y",
                                  batch_size=4, shuffle_buffer_size=None, parse=reader)
it = iter(build("good").repeat())  # held by the module to the end, mid-epoch
next(it)
try:
    for batch in build("bad"):
        pass
except Exception as e:  # kept to the end of the program, with its traceback and iterator
    kept = e
print("REGISTERED", bool(exit_guard._REGISTERED), type(kept).__name__, flush=True)
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("exit")
    rows = "".join(f"{k},{k % 3}\n" for k in range(200))
    (d / "good.csv").write_text("x,y\n" + rows)
    (d / "bad.csv").write_text("x,y\n" + rows + "abc,1\n" + rows)  # a bad line mid-file
    y = np.arange(400, dtype=np.float64) % 3
    pq.write_table(pa.table({"x": np.arange(400.0), "y": y}), d / "good.parquet",
                   row_group_size=50)
    y[300] = np.nan  # a label missing in the seventh row group
    pq.write_table(pa.table({"x": np.arange(400.0), "y": y}), d / "bad.parquet",
                   row_group_size=50)
    return d


@pytest.mark.timeout(200)
@pytest.mark.parametrize("reader", ["parquet", "arrow", "line"])
def test_the_interpreter_exits_after_an_error_with_an_iterator_held(files, reader):
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(files), reader], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"{reader}: the interpreter hung at exit")
    assert proc.returncode == 0, stderr[-1500:]
    assert "REGISTERED True InvalidArgumentError" in stdout, (stdout, stderr[-1500:])
