"""One path resolver: literal files first, each file once, folders and empty patterns named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import datakit
from datakit.core.paths import resolve_files


@pytest.fixture
def folder(tmp_path):
    for name in ("a.csv", "b.csv", "run[1].csv", "run1.csv"):
        (tmp_path / name).write_text("x\n1\n")
    os.symlink(tmp_path / "a.csv", tmp_path / "link.csv")
    return tmp_path


@pytest.mark.parametrize("given, expected", [
    pytest.param(["*.csv", "./a.csv"], ["a.csv", "b.csv", "run1.csv", "run[1].csv"],
                 id="a-pattern-and-a-name-overlap"),
    pytest.param(["run[1].csv"], ["run[1].csv"], id="glob-characters-literal"),
    pytest.param(["run[1]*.csv"], ["run1.csv"], id="a-real-pattern"),
    pytest.param(["b.csv", "*.csv"], ["b.csv", "a.csv", "run1.csv", "run[1].csv"],
                 id="order-given-then-sorted"),
])
def test_resolve(folder, given, expected):
    got = resolve_files([str(folder / g) for g in given])
    assert [os.path.relpath(p, folder) for p in got] == expected


@pytest.mark.parametrize("given, error, text", [
    pytest.param("nope.csv", FileNotFoundError, "nope.csv: no such file", id="missing"),
    pytest.param("z*.csv", FileNotFoundError, "matches no file", id="empty-pattern"),
    pytest.param(".", IsADirectoryError, "is a folder", id="folder"),
])
def test_resolve_errors(folder, given, error, text):
    with pytest.raises(error, match=text):
        resolve_files(str(folder / given))


@pytest.mark.parametrize("given", [
    pytest.param(["a.csv", "a.csv"], id="the-same-path"),
    pytest.param(["a.csv", "./a.csv"], id="two-spellings"),
    pytest.param(["a.csv", "link.csv"], id="symlink"),
])
def test_a_file_named_twice_is_refused_naming_it(folder, given):
    """Once or twice? No reader can tell: the call is refused, naming the file (#47)."""
    with pytest.raises(ValueError, match=r"filepaths names .*a\.csv.* twice: .* list it once"):
        resolve_files([str(folder / g) for g in given])


def test_resolve_rejects_non_paths_and_nothing():
    with pytest.raises(TypeError):
        resolve_files(3)
    with pytest.raises(ValueError, match="No files"):
        resolve_files([])


def _data_path_in_a_fresh_process(**env) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "DATAKIT_DATA_DIR"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", "import datakit; print(datakit.data_path('generated', 'x'))"],
        env=environ, capture_output=True, text=True, check=True).stdout.strip()


def test_data_path_is_the_repository_data_folder_unless_DATAKIT_DATA_DIR_says_otherwise(tmp_path):
    """The browser test points its notebooks at a copy of data/ with DATAKIT_DATA_DIR."""
    repo_data = Path(datakit.__file__).resolve().parent.parent / "data"
    assert _data_path_in_a_fresh_process() == str(repo_data / "generated" / "x")
    elsewhere = _data_path_in_a_fresh_process(DATAKIT_DATA_DIR=str(tmp_path))
    assert elsewhere == str(tmp_path.resolve() / "generated" / "x")


@pytest.mark.timeout(400)
def test_a_kit_installed_from_a_wheel_finds_its_shipped_data(tmp_path):
    """Built as the README says (pip wheel), installed in a bare environment: DATA_DIR is a
    per-user folder holding a copy of the shipped housing table, byte for byte."""
    import shutil
    root = Path(datakit.__file__).resolve().parent.parent
    src = tmp_path / "src"  # a copy: building writes build/ and *.egg-info beside the sources
    shutil.copytree(root / "datakit", src / "datakit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root / "data" / "housing", src / "data" / "housing")
    for name in ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md"):
        shutil.copy(root / name, src / name)
    run = {"capture_output": True, "text": True, "timeout": 300}
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(tmp_path / "dist"), str(src)], **run)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("datakit-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "env")], check=True, **run)
    py = tmp_path / "env" / "bin" / "python"
    installed = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps",
                                "--no-index", str(wheel)], **run)
    assert installed.returncode == 0, installed.stderr[-2000:]
    environ = {k: v for k, v in os.environ.items() if k not in ("DATAKIT_DATA_DIR", "PYTHONPATH")}
    environ["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    out = subprocess.run([str(py), "-c", "import datakit; print(datakit.DATA_DIR); "
                          "print(datakit.data_path('housing', 'housing.csv'))"],
                         env=environ, cwd=tmp_path, **run)
    assert out.returncode == 0, out.stderr[-2000:]
    data_dir, housing = out.stdout.split()
    assert data_dir == str((tmp_path / "cache" / "datakit" / "data").resolve())
    assert Path(housing).read_bytes() == (root / "data" / "housing" / "housing.csv").read_bytes()
    assert (Path(data_dir) / "generated").is_dir()


def test_a_pattern_that_also_matches_a_folder_says_so(tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n")
    (tmp_path / "old.csv").mkdir()  # a folder named like the files
    with pytest.warns(UserWarning, match=r"also matches 1 folder\(s\), not read: .*old\.csv; "
                                         r"1 file\(s\) are read"):
        got = resolve_files(str(tmp_path / "*.csv"))
    assert got == [str(tmp_path / "a.csv")]
