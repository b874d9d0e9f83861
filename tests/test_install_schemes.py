"""The shipped data and notebooks found however pip installed the kit: venv, --user, --prefix.

The session's one wheel (``built_kit``) is installed without its dependencies and without
the index (seconds, no network) into a fresh Python for each scheme, run from a folder
with no ``data/`` near it, with a fresh home and cache. Before, the kit looked only in
``sysconfig``'s data folder, so after ``pip install --user`` (pip's own choice wherever
site-packages is read-only) ``data_path("housing", "housing.csv")`` raised.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = {"capture_output": True, "text": True, "timeout": 240}
READ = ("import datakit; print(datakit.DATA_DIR); "
        "print(datakit.data_path('housing', 'housing.csv'))")


def _python(folder: Path) -> Path:
    """A fresh Python that can see a user site (a venv with the system's packages: pip
    refuses ``--user`` in an isolated venv, whose user site Python never reads)."""
    made = subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                           "--system-site-packages", str(folder)], **RUN)
    assert made.returncode == 0, made.stderr
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("scheme", ["venv", "user", "prefix"])
def test_the_shipped_housing_table_is_found_under_each_install_scheme(built_kit, tmp_path,
                                                                      scheme):
    python = _python(tmp_path / "env")
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATAKIT_DATA_DIR", "DATAKIT_CACHE", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PYTHONUSERBASE=str(tmp_path / "userbase"))
    where = {"venv": [], "user": ["--user"], "prefix": ["--prefix", str(tmp_path / "prefix")]}
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                              "--quiet", "--no-deps", "--no-index", "--no-compile",
                              "--disable-pip-version-check", *where[scheme],
                              str(built_kit["wheel"])], env=env, **RUN)
    assert install.returncode == 0, install.stderr[-3000:]
    if scheme == "prefix":  # a prefix is read through PYTHONPATH, as its user would
        env["PYTHONPATH"] = next(str(p) for p in (tmp_path / "prefix").rglob("site-packages"))
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run([str(python), "-c", READ], env=env, cwd=work, **RUN)
    assert out.returncode == 0, out.stderr[-3000:]
    data_dir, housing = out.stdout.split()
    assert data_dir == str((tmp_path / "cache" / "datakit" / "data").resolve())
    assert Path(housing).read_bytes() == (ROOT / "data" / "housing" / "housing.csv").read_bytes()
    assert (Path(data_dir) / "generated").is_dir()
    installed = {"venv": tmp_path / "env", "user": tmp_path / "userbase",
                 "prefix": tmp_path / "prefix"}[scheme]
    assert (installed / "share" / "datakit" / "data" / "housing" / "SOURCE.md").is_file()
    # the notebooks too, without a clone: `python -m datakit notebooks` copies them
    copied = subprocess.run([str(python), "-m", "datakit", "notebooks", "course"], env=env,
                            cwd=work, **RUN)
    assert copied.returncode == 0, copied.stderr[-3000:]
    assert copied.stdout.strip() == "course"
    names = sorted(p.relative_to(work / "course").as_posix()
                   for p in (work / "course").rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(ROOT / "notebooks").as_posix()
                           for p in (ROOT / "notebooks").rglob("*")
                           if p.suffix == ".ipynb" or p.name in ("GLOSSARY.md", "START.md"))
    assert "ko/10_your_own_videos.ipynb" in names  # the Korean edition
