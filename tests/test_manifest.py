"""One manifest format, one check: totals, missing, extra and changed files are errors."""

from __future__ import annotations

import json

import pytest

from datakit.core import manifest
from datakit.core.atomic import temporary_path
from datakit.core.errors import DataError


def commit(folder, name, files, kind="csv"):
    staged = {}
    for f, text in files.items():
        staged[f] = temporary_path(folder / f)
        staged[f].write_text(text)
    return manifest.write_set(folder, name, staged, {f: 1 for f in files}, kind=kind,
                              unit="rows", pattern=f"{name}_*.csv")


def test_sets_share_a_folder_and_a_second_writer_keeps_the_first(tmp_path):
    commit(tmp_path, "a", {"a_0.csv": "x\n1\n"})
    commit(tmp_path, "b", {"b_0.csv": "x\n2\n"})
    man = manifest.read_manifest(tmp_path)
    assert man["format"] == manifest.FORMAT and sorted(man["sets"]) == ["a", "b"]
    assert [e["file"] for e in manifest.check(tmp_path)] == ["a_0.csv", "b_0.csv"]


def test_files_held_is_the_set_s_own_pattern_or_its_listing(tmp_path):
    """The one "already holds the set" rule that a writer's early look and the commit share."""
    (tmp_path / "a-b_0.csv").write_text("x\n")  # set a-b's file, unlisted: not set a's
    assert manifest.files_held(tmp_path, None, "a", "a_*.csv") is None
    (tmp_path / "a_0.csv").write_text("x\n")  # set a's own pattern, no manifest
    assert manifest.files_held(tmp_path, None, "a", "a_*.csv") == 1
    commit(tmp_path, "c", {"c_0.csv": "x\n1\n", "c_1.csv": "x\n2\n"})
    man = manifest.read_manifest(tmp_path)
    assert manifest.files_held(tmp_path, man, "c", "c_*.csv") == 2
    man["sets"]["c"]["files"] = []  # a set listed with no file is still held
    assert manifest.files_held(tmp_path, man, "c", "c_*.csv") == 0


@pytest.mark.parametrize("damage, where, text", [
    pytest.param(lambda d: (d / "a_1.csv").write_text("x\n9\n"), "a_1.csv", "does not list",
                 id="extra-file"),
    pytest.param(lambda d: (d / "a_0.csv").unlink(), "a_0.csv", "missing", id="missing-file"),
    pytest.param(lambda d: (d / "a_0.csv").write_text("x\n"), "a_0.csv", "manifest says",
                 id="truncated"),
    pytest.param(lambda d: (d / "a_0.csv").write_text("x\n7\n"), "a_0.csv", "sha256",
                 id="same-size-changed"),
    pytest.param(lambda d: edit(d, lambda m: m["sets"]["a"]["totals"].update(rows=5)),
                 "manifest.json", "totals", id="totals"),
    pytest.param(lambda d: edit(d, lambda m: m.pop("sets")), "manifest.json", "no `sets`",
                 id="no-sets"),
    pytest.param(lambda d: edit(d, lambda m: m.update(version=9)), "manifest.json", "version",
                 id="version"),
])
def test_check_finds(tmp_path, damage, where, text):
    commit(tmp_path, "a", {"a_0.csv": "x\n1\n"})
    damage(tmp_path)
    with pytest.raises(DataError, match=text) as info:
        manifest.check(tmp_path)
    assert info.value.path.endswith(where)


def test_check_names_an_unknown_set_and_its_sets(tmp_path):
    """#47: sets=['nope'] was a bare KeyError; a str would be checked letter by letter."""
    commit(tmp_path, "a", {"a_0.csv": "x\n1\n"})
    with pytest.raises(ValueError, match=r"manifest.json has no set 'nope'; its sets are \['a'\]"):
        manifest.check(tmp_path, sets=["nope"])
    with pytest.raises(TypeError, match="sets must be a list of set names, got 'a'"):
        manifest.check(tmp_path, sets="a")


def edit(folder, change):
    man = json.loads((folder / manifest.MANIFEST).read_text())
    change(man)
    (folder / manifest.MANIFEST).write_text(json.dumps(man))


def test_a_new_generation_replaces_the_old_one(tmp_path):
    commit(tmp_path, "a", {"a_0.csv": "x\n1\n", "a_1.csv": "x\n2\n"})
    # a rewrite keeps the names: a reader that hard-codes a_0.csv finds it again
    assert commit(tmp_path, "a", {"a_0.csv": "x\n3\n"}) == ["a_0.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_0.csv", "manifest.json"]
    assert (tmp_path / "a_0.csv").read_text() == "x\n3\n"
    assert manifest.read_manifest(tmp_path)["sets"]["a"]["generation"] == 2
    assert commit(tmp_path, "a", {"a_0.csv": "x\n4\n"}) == ["a_0.csv"]


def test_a_writer_killed_while_giving_the_names_back_leaves_the_new_set_readable(
        tmp_path, monkeypatch):
    commit(tmp_path, "a", {"a_0.csv": "x\n1\n", "a_1.csv": "x\n2\n"})

    def killed(*args):
        raise KeyboardInterrupt  # as a kill between the two switches

    monkeypatch.setattr(manifest.os, "link", killed)
    with pytest.raises(KeyboardInterrupt):
        commit(tmp_path, "a", {"a_0.csv": "x\n3\n", "a_1.csv": "x\n4\n"})
    entries = manifest.check(tmp_path)  # the second generation, under its tagged names
    assert [e["file"] for e in entries] == ["a_0.g2.csv", "a_1.g2.csv"]
    assert [open(e["path"]).read() for e in entries] == ["x\n3\n", "x\n4\n"]
    monkeypatch.undo()
    assert commit(tmp_path, "a", {"a_0.csv": "x\n5\n", "a_1.csv": "x\n6\n"}) == [
        "a_0.csv", "a_1.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_0.csv", "a_1.csv", "manifest.json"]
