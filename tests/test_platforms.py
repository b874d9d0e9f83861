"""The kit on Windows: no module needs ``fcntl`` or ``resource`` (POSIX only) to import or to read.

Windows has neither module. The test runs a fresh interpreter in which the kit's own code
cannot import either (an ``import fcntl`` in a ``datakit`` module raises
``ModuleNotFoundError``, as on Windows; libraries keep theirs, as psutil imports
``resource`` on Linux and not on Windows), imports every module of ``datakit`` there,
and runs what every reader leans on: a CSV read, a folder lock (waiting and refused), a
set write checked by its manifest, the peak memory, and a data set made once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import builtins, importlib, json, os, pathlib, tempfile

    real_import = builtins.__import__

    def windows_import(name, globals=None, locals=None, fromlist=(), level=0):
        # what Windows is like, for the kit's own code: `import fcntl` raises ImportError.
        # (Libraries keep theirs: psutil imports resource on Linux, not on Windows.)
        if name in ("fcntl", "resource") and not level and \
                (globals or {}).get("__name__", "").startswith("datakit"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = windows_import

    import datakit
    out = {"failed": {}, "missing": {}}
    root = pathlib.Path(datakit.__file__).parent
    for path in sorted(root.rglob("*.py")):
        if path.name == "__main__.py":
            continue  # runs a command when imported
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:  # an extra not installed here is not the platform
            top = (e.name or "").split(".")[0]
            (out["failed"] if top in ("fcntl", "resource", "datakit", "") else
             out["missing"])[name] = repr(e)
        except Exception as e:
            out["failed"][name] = repr(e)
    out["modules"] = len(list(root.rglob("*.py")))

    from datakit.core import atomic, manifest
    from datakit.core.made_once import make_folder_once
    from datakit.perf.memory import peak_rss_bytes
    from datakit.readers.csv_files.reader import csv_reader_dataset
    from datakit.readers.csv_files.shards import write_shards
    from datakit.readers.csv_files.stats import column_stats
    import pandas as pd

    d = pathlib.Path(tempfile.mkdtemp())
    frame = pd.DataFrame({"x": [float(i) for i in range(10)], "y": [i % 2 for i in range(10)]})
    paths = write_shards(frame, d / "parts", num_shards=2)  # a set write
    out["checked"] = sorted(os.path.basename(e["path"]) for e in manifest.check(d / "parts"))
    ds = csv_reader_dataset(paths, stats=column_stats(paths), label="y", batch_size=4, seed=0)
    out["rows"] = sum(int(len(y)) for _, y in ds)
    (d / "locked").mkdir()  # the lock file, .locked.lock, goes beside it (not in /tmp)
    with atomic.folder_lock(d / "locked"):
        try:
            with atomic.folder_lock(d / "locked", busy="busy in this test"):
                out["lock"] = "taken twice"
        except atomic.FolderBusy as e:
            out["lock"] = str(e)
    out["peak"] = peak_rss_bytes()
    made = make_folder_once(d / "made", lambda t: [t / "a"] if (t / "a").write_text("1") else [],
                            recipe={"n": 1})
    out["made"] = [p.read_text() for p in made]
    print(json.dumps(out))
""")


@pytest.mark.timeout(300)
def test_every_module_imports_and_the_readers_work_without_fcntl_and_resource():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=280)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["failed"] == {}, out["failed"]
    assert out["modules"] > 100 and len(out["missing"]) < 10, out["missing"]
    assert out["checked"] == ["part_00.csv", "part_01.csv"]
    assert out["rows"] == 10
    assert out["lock"].endswith("locked: busy in this test")
    assert out["peak"] > 10_000_000  # bytes: a Python with TensorFlow holds far more
    assert out["made"] == ["1"]
