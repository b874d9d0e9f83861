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


def test_a_pattern_that_also_matches_a_folder_says_so(tmp_path):
    (tmp_path / "a.csv").write_text("x\n1\n")
    (tmp_path / "old.csv").mkdir()  # a folder named like the files
    with pytest.warns(UserWarning, match=r"also matches 1 folder\(s\), not read: .*old\.csv; "
                                         r"1 file\(s\) are read"):
        got = resolve_files(str(tmp_path / "*.csv"))
    assert got == [str(tmp_path / "a.csv")]


def test_a_path_starting_with_a_tilde_is_in_the_home_folder(tmp_path, monkeypatch):
    """``~/data`` is read and written in the home folder, as a shell reads it: never a folder
    named ``~`` in the working folder (files, folders and outputs alike)."""
    from datakit.core.paths import one_file, one_folder
    from datakit.readers.csv_files.shards import write_shards
    from datakit.readers.csv_files.stats import column_stats
    from datakit.readers.records.tfrecord_writer import ShardWriter
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(), work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    paths = write_shards({"x": [1.0, 2.0, 3.0]}, "~/shards", num_shards=1)
    assert [Path(p).parent for p in paths] == [home / "shards"]
    assert column_stats("~/shards/*.csv", progress=False)["x"].count == 3
    assert resolve_files("~/shards/*.csv") == paths
    assert one_file(os.path.join("~", "shards", Path(paths[0]).name)) == paths[0]
    assert one_folder("~/shards") == str(home / "shards")
    with ShardWriter("~/records", num_shards=1) as w:
        w.write(b"one record")
    assert (home / "records").is_dir()
    assert list(work.iterdir()) == []  # no folder named ~
