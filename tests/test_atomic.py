"""One atomic write and one set commit: nothing half-written is ever visible."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from datakit.core import atomic

pytestmark = pytest.mark.timeout(60)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    atomic.write_atomic(tmp_path / "a.txt", "old")
    with pytest.raises(RuntimeError):
        with atomic.atomic_file(tmp_path / "a.txt") as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert (tmp_path / "a.txt").read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]


def test_temporary_names_are_unique_hidden_and_carry_the_pid(tmp_path):
    a, b = (atomic.temporary_path(tmp_path / "x.csv") for _ in range(2))
    assert a != b and a.name.startswith(".x.csv.") and atomic.is_temporary(a.name)
    assert f".{os.getpid()}-" in a.name


def test_leftovers_of_dead_writers_are_removed_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    (tmp_path / f".a.csv.{dead}-00ff.tmp").write_text("x")
    mine = atomic.temporary_path(tmp_path / "b.csv")
    mine.write_text("y")
    assert atomic.clean_leftovers(tmp_path) == [f".a.csv.{dead}-00ff.tmp"]
    assert sorted(os.listdir(tmp_path)) == [mine.name]


def test_commit_set_tags_names_still_trusted_and_deletes_the_old_set(tmp_path):
    for name in ("p_00.csv", "p_01.csv"):
        (tmp_path / name).write_text("old")
    staged = {}
    for name in ("p_00.csv", "p_01.csv"):
        staged[name] = atomic.temporary_path(tmp_path / name)
        staged[name].write_text("new")
    seen = []
    finals = atomic.commit_set(tmp_path, staged, listed=["p_00.csv", "p_01.csv"], generation=2,
                               announce=seen.append,
                               switch=lambda names: seen.append(sorted(os.listdir(tmp_path))))
    assert finals == ["p_00.g2.csv", "p_01.g2.csv"]
    # at the switch, old and new are both complete; after it, only the new set is left
    assert seen == [finals, ["p_00.csv", "p_00.g2.csv", "p_01.csv", "p_01.g2.csv"]]
    assert sorted(os.listdir(tmp_path)) == finals
    assert atomic.generation_name("p_00.g2.csv", 3) == "p_00.g3.csv"
