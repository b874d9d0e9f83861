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


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_remake_with_another_recipe_keeps_the_video_you_added(tmp_path):
    """#60: a remake replaced the whole folder, and a video the user added went with it."""
    from datakit.readers import video

    folder = tmp_path / "videos"
    small = dict(size=16, min_frames=8, max_frames=10)
    first = video.make_video_folder(folder, per_class=2, seed=3, **small)
    mine, video_bytes = folder / "up" / "my_own.mp4", first[0].read_bytes()
    mine.write_bytes(video_bytes)  # a video of the user's, beside the made ones
    (folder / "notes").mkdir()
    (folder / "notes" / "what.txt").write_text("my notes")
    second = video.make_video_folder(folder, per_class=1, seed=4, **small)
    assert mine.read_bytes() == video_bytes
    assert (folder / "notes" / "what.txt").read_text() == "my notes"
    # the first recipe's videos that the second does not make are gone; the second's are there
    assert sorted(_files(folder)) == sorted(
        [p.relative_to(folder).as_posix() for p in second] + ["notes/what.txt", "up/my_own.mp4"])
    assert json.loads(stamp_path(folder).read_text())["files"] == [
        p.relative_to(folder).as_posix() for p in second]
    assert video.make_video_folder(folder, per_class=1, seed=4, **small) == second  # made


def test_a_remake_refuses_to_replace_a_file_of_yours_and_changes_nothing(tmp_path):
    def make(names):
        def into(tmp):
            for n in names:
                (tmp / n).parent.mkdir(parents=True, exist_ok=True)
                (tmp / n).write_text(f"made {n}")
            return [tmp / n for n in names]
        return into

    folder = tmp_path / "s"
    make_folder_once(folder, make(["a/1.txt", "old/2.txt"]), recipe={"n": 1})
    (folder / "a" / "3.txt").write_text("yours")  # where the next recipe puts a file
    before = _files(folder)
    with pytest.raises(FileExistsError, match=r"s: 1 file\(s\) .*\(a/3.txt\): move them out"):
        make_folder_once(folder, make(["a/1.txt", "a/3.txt"]), recipe={"n": 2})
    assert _files(folder) == before  # nothing changed: still the first recipe's folder
    assert make_folder_once(folder, None, recipe={"n": 1}) == [folder / "a/1.txt",
                                                               folder / "old/2.txt"]
    (folder / "a" / "3.txt").rename(tmp_path / "3.txt")  # the fix the error names
    make_folder_once(folder, make(["a/1.txt", "a/3.txt"]), recipe={"n": 2})
    assert _files(folder) == {"a/1.txt": b"made a/1.txt", "a/3.txt": b"made a/3.txt"}
    assert not (folder / "old").exists()  # a folder that held only the kit's files goes


def test_a_maker_killed_mid_remake_leaves_a_note_of_the_kits_files(tmp_path):
    """While files move in, the note lists the old and the new files with no recipe (what a
    killed maker leaves): the next remake replaces or removes those and keeps the rest."""
    folder = tmp_path / "s"
    folder.mkdir()
    for name, text in [("kit_old.txt", "old"), ("kit_new.txt", "half"), ("yours.txt", "y")]:
        (folder / name).write_text(text)
    stamp_path(folder).write_text(json.dumps({"recipe": None,
                                              "files": ["kit_new.txt", "kit_old.txt"]}))

    def make(tmp):
        (tmp / "kit_new.txt").write_text("new")
        return [tmp / "kit_new.txt"]

    make_folder_once(folder, make, recipe={"n": 2})
    assert _files(folder) == {"kit_new.txt": b"new", "yours.txt": b"y"}


#: A made folder used from a read-only mount (a real one: a bind mount remounted `ro`, in a
#: private mount namespace), as from a read-only share.
READ_ONLY = textwrap.dedent("""
    import json, subprocess, sys
    from pathlib import Path
    share = sys.argv[1]
    subprocess.run(["mount", "--bind", share, share], check=True)
    subprocess.run(["mount", "-o", "remount,ro,bind", share], check=True)
    try:
        open(Path(share) / "probe", "w")
        raise SystemExit("the mount is not read-only")
    except OSError as e:
        assert e.errno == 30, e  # EROFS
    from datakit.core.made_once import make_folder_once
    made = make_folder_once(Path(share) / "set", None, recipe={"n": 1})
    print(json.dumps([p.read_text() for p in made]))
    try:
        make_folder_once(Path(share) / "set", None, recipe={"n": 2})
    except OSError as e:  # another recipe must be made: the share refuses the lock file
        print(e.errno)
""")


def _made_set(share: Path) -> Path:
    def make(tmp):
        (tmp / "a.txt").write_text("made")
        return [tmp / "a.txt"]

    make_folder_once(share / "set", make, recipe={"n": 1})
    (share / ".set.lock").unlink()  # a share copied elsewhere has no lock file
    return share / "set"


@pytest.mark.timeout(120)
def test_a_made_folder_on_a_read_only_share_is_read_without_a_lock(tmp_path):
    """#60: the lock file was opened for writing (EROFS) though nothing needed making."""
    share = tmp_path / "share"
    share.mkdir()
    _made_set(share)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        run = subprocess.run(["unshare", "-rm", sys.executable, "-c", READ_ONLY, str(share)],
                             capture_output=True, text=True, timeout=110, env=env)
    except FileNotFoundError:
        pytest.skip("no `unshare` here to mount a folder read-only")
    if run.returncode != 0 and "Operation not permitted" in run.stderr:
        pytest.skip("mounting is not permitted here")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ['["made"]', "30"]
    assert sorted(os.listdir(share)) == [".set.made.json", "set"]


def test_a_made_folder_is_used_without_touching_its_parent(tmp_path):
    """Also where no mount can be made: the parent folder made unwritable (when not root,
    whom the mode does not stop), and in every case no lock file appears."""
    share = tmp_path / "share"
    share.mkdir()
    folder = _made_set(share)
    before = sorted(os.listdir(share))
    share.chmod(0o555)
    folder.chmod(0o555)
    try:
        assert [p.read_text() for p in make_folder_once(folder, None, recipe={"n": 1})] == [
            "made"]
        assert sorted(os.listdir(share)) == before  # no .set.lock: no lock was taken
        if os.geteuid() != 0:  # the mode stops this user: making must fail, so it was honest
            with pytest.raises(PermissionError):
                make_folder_once(folder, None, recipe={"n": 2})
    finally:
        share.chmod(0o755)
        folder.chmod(0o755)
