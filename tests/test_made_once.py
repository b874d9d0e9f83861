"""Generated data sets made once, whole, when several processes ask for them at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from datakit.core.made_once import make_folder_once, stamp_path

ROOT = Path(__file__).resolve().parent.parent

#: One process of a notebook: make the small video folder, then read every file whole.
MAKER = textwrap.dedent("""
    import json, os, sys, av
    from datakit.readers import video
    paths = video.make_video_folder(sys.argv[1], per_class=2, size=16, min_frames=8,
                                    max_frames=10, seed=3)
    frames = {}
    for p in paths:
        with av.open(str(p)) as container:  # a half-written file fails here
            frames[p.name] = [sum(1 for _ in container.decode(video=0)), os.stat(p).st_ino]
    print(json.dumps(frames))
""")


@pytest.mark.timeout(300)
def test_two_processes_making_one_video_folder_both_read_it_whole(tmp_path):
    folder = tmp_path / "generated" / "videos"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = [subprocess.Popen([sys.executable, "-c", MAKER, str(folder)], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [run.communicate(timeout=280) for run in runs]
    for run, (_, err) in zip(runs, outs, strict=True):
        assert run.returncode == 0, err[-3000:]
    first, second = (json.loads(out.strip().splitlines()[-1]) for out, _ in outs)
    assert len(first) == 8 and all(8 <= n <= 10 for n, _ in first.values())  # each whole
    # made once: both read the very files that stay (a second write would replace some)
    final = {p.name: os.stat(p).st_ino for p in folder.rglob("*") if p.name in first}
    assert first == second and {name: ino for name, (_, ino) in first.items()} == final
    stamp = json.loads(stamp_path(folder).read_text())
    assert sorted(Path(f).name for f in stamp["files"]) == sorted(first)
    assert sorted(p.name for p in folder.parent.iterdir()) == [
        ".videos.lock", ".videos.made.json", "videos"]
    assert sorted(p.name for p in folder.iterdir()) == ["down", "left", "right", "up"]


def test_a_second_call_with_the_same_recipe_uses_the_folder_and_another_remakes_it(tmp_path):
    calls = []

    def make(n):
        def into(tmp):
            calls.append(n)
            (tmp / "n.txt").write_text(str(n))
            return [tmp / "n.txt"]
        return into

    assert [p.read_text() for p in make_folder_once(tmp_path / "s", make(1), recipe={"n": 1})] \
        == ["1"]
    make_folder_once(tmp_path / "s", make(1), recipe={"n": 1})
    assert calls == [1]
    assert (make_folder_once(tmp_path / "s", make(2), recipe={"n": 2})[0]).read_text() == "2"
    assert calls == [1, 2] and sorted(os.listdir(tmp_path)) == [".s.lock", ".s.made.json", "s"]
    assert os.listdir(tmp_path / "s") == ["n.txt"]  # nothing of the kit's inside
    (tmp_path / "s" / "n.txt").unlink()  # a made file gone: made again
    assert (make_folder_once(tmp_path / "s", make(2), recipe={"n": 2})[0]).read_text() == "2"
    assert calls == [1, 2, 2]


def test_a_failed_maker_leaves_no_folder_and_a_dead_makers_leftovers_go(tmp_path):
    dead = tmp_path / ".s.999999999-00ff.tmp"  # a maker killed mid-way (no such process)
    dead.mkdir()

    def broken(tmp):
        (tmp / "half.txt").write_text("x")
        raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        make_folder_once(tmp_path / "s", broken, recipe={})
    assert sorted(os.listdir(tmp_path)) == [".s.lock"]


def test_a_folder_of_yours_keeps_its_files(tmp_path):
    (tmp_path / "yours").mkdir()
    (tmp_path / "yours" / "mine.txt").write_text("mine")

    def make(tmp):
        (tmp / "a.txt").write_text("a")
        return [tmp / "a.txt"]

    assert make_folder_once(tmp_path / "yours", make, recipe={}) == [tmp_path / "yours" / "a.txt"]
    assert sorted(os.listdir(tmp_path / "yours")) == ["a.txt", "mine.txt"]
    with pytest.raises(FileNotFoundError, match="no maker"):
        make_folder_once(tmp_path / "other", None, recipe={})
    with pytest.raises(TypeError, match="recipe must be a dict"):
        make_folder_once(tmp_path / "yours", make, recipe=[1])
