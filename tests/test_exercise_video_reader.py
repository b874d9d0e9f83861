"""Notebook 10's workshop: the messy folder, the references its exercises are checked against,
and the notebook's own solutions (the reader a learner takes home) equal to them.

The references (``datakit.exercises.video_reader``) are the kit's video rules; the
solutions are the plain PyAV and ``tf.data`` code of the notebook's hidden solution cells,
run here on a messy folder of another seed than the notebook's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import numpy as np
import pytest

pytest.importorskip("av")

from datakit import exercises
from datakit.exercises import video_reader as ref
from datakit.readers.video.messy_folder import (
    BAD_FILES,
    NOT_VIDEOS,
    SHORT_FILES,
    make_messy_video_folder,
)

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "10_your_own_videos.ipynb"
CLIP_LEN, SIZE, FPS, SEED = 8, 32, 25, 1


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    directory = tmp_path_factory.mktemp("messy") / "videos"
    make_messy_video_folder(directory, per_class=3, seed=1)
    return directory


@pytest.fixture(scope="module")
def listing(folder):
    return ref.video_listing(folder, SEED)


def test_the_messy_folder_holds_every_trap(folder):
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert set(BAD_FILES) | set(SHORT_FILES) | set(NOT_VIDEOS) <= files
    assert "up/phone/up_phone.mp4" in files
    assert any(f.startswith("down/trip/") for f in files)
    assert (folder / "left" / "left_cut.mp4").stat().st_size < 4096  # cut, not whole


def test_the_messy_folders_docstring_says_where_the_cut_falls():
    from datakit.readers.video import messy_folder

    assert f"after {messy_folder.CUT_KEEPS} of its 60 packets" in messy_folder.__doc__
    assert "half of its bytes" not in messy_folder.__doc__


def test_the_listing_counts_sub_folders_and_leaves_hidden_files_out(folder, listing):
    paths = [p for p, _, _ in listing]
    assert paths == sorted(paths)
    assert "up/phone/up_phone.mp4" in paths and any(p.startswith("down/trip/") for p in paths)
    assert not set(NOT_VIDEOS) & set(paths)
    classes = sorted({p.split("/")[0] for p in paths})
    assert all(label == classes.index(p.split("/")[0]) for p, label, _ in listing)
    n, splits = len(listing), [s for _, _, s in listing]
    assert splits.count("test") == splits.count("validation") == int(0.2 * n)
    assert ref.video_listing(folder, SEED) == listing
    assert [s for _, _, s in ref.video_listing(folder, SEED + 1)] != splits  # the seed draws it


def test_the_probe_reads_every_good_file_and_names_each_bad_one(folder, listing):
    rows = {row[0]: row[1:] for row in ref.video_probe(folder, [p for p, _, _ in listing])}
    bad = {path: status for path, (status, *_) in rows.items() if status != "ok"}
    assert bad == BAD_FILES
    assert all(frames > 0 for status, frames, *_ in rows.values() if status == "ok")
    status, frames, rotation, height, width = rows["up/phone/up_phone.mp4"]
    assert (rotation, height > width) == (90, True)  # a portrait phone video, turned


def test_frame_times_leave_the_short_file_too_short(folder):
    short, = SHORT_FILES
    times, = ref.frame_times([folder / short], FPS)
    assert len(times) == SHORT_FILES[short] < CLIP_LEN


def test_crop_and_pad_keep_the_phone_videos_shape(folder):
    phone = ref.facts(folder / "up/phone/up_phone.mp4")
    wanted = [[10, 11, 12]]
    padded, = ref.clip_frames([(phone["path"], wanted[0])], SIZE, "pad")
    cropped, = ref.clip_frames([(phone["path"], wanted[0])], SIZE, "crop")
    assert padded.shape == cropped.shape == (3, SIZE, SIZE, 3)
    bar = (SIZE - round(phone["width"] * SIZE / phone["height"])) // 2
    assert bar > 0 and not padded[:, :, :bar].any() and padded[:, :, bar:-bar].any()
    assert cropped[:, :, :bar].any()  # no bars: the centre is cut
    with pytest.raises(ValueError, match="crop"):
        ref.clip_frames([(phone["path"], wanted[0])], SIZE, "squash")


def test_clip_choices_are_new_each_epoch_and_fixed_for_validation():
    args = ([0, 1, 2, 3], [0, 1, 0, 1], [20, 30, 40, 50])
    train = ref.clip_choices(*args, True, clip_len=CLIP_LEN, seed=SEED)
    epochs = [sorted(tuple(int(x) for x in e) for e in train) for _ in range(2)]
    assert epochs[0] != epochs[1]
    again = ref.clip_choices(*args, True, clip_len=CLIP_LEN, seed=SEED)
    assert sorted(tuple(int(x) for x in e) for e in again) == epochs[0]
    assert all(0 <= s <= n - CLIP_LEN for (_, _, s), n in
               zip(sorted(epochs[0]), args[2], strict=True))
    val = [tuple(int(x) for x in e) for e in ref.clip_choices(*args, False, clip_len=CLIP_LEN,
                                                             seed=SEED)]
    assert val == [(i, label, (n - CLIP_LEN) // 2) for i, label, n in zip(*args, strict=True)]


def notebook_solutions() -> dict:
    """The functions (and constants) the notebook's hidden solution cells define."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    import av
    import tensorflow as tf
    namespace = {"np": np, "av": av, "tf": tf, "Path": Path, "CLIP_LEN": CLIP_LEN,
                 "SIZE": SIZE, "FPS": FPS, "SEED": SEED, "exercises": exercises}
    start = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Solutions"))
    for cell in nb.cells[start:]:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        tree.body = [node for node in tree.body if isinstance(node, ast.FunctionDef) or (
            isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.isupper())]
        exec(compile(tree, str(NOTEBOOK), "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def mine():
    return notebook_solutions()


def test_the_notebooks_solutions_pass_their_checks(folder, mine):
    assert exercises.check("video_listing", mine["list_videos"], folder, SEED).ok
    paths = [p for p, _, _ in ref.video_listing(folder, SEED)]
    assert exercises.check("video_probe", mine["probe"], folder, paths).ok
    good = [str(folder / p) for p in paths if p not in BAD_FILES]
    assert exercises.check("frame_times", mine["frame_times"], good, FPS).ok
    requests = [(p, ref.frame_times([p], FPS)[0][:CLIP_LEN].tolist()) for p in good
                if Path(p).relative_to(folder).as_posix() not in SHORT_FILES]
    for fit in ("crop", "pad"):
        assert exercises.check("clip_frames", mine["read_clip"], requests, SIZE, fit).ok
    for training in (True, False):
        assert exercises.check("clip_choices", mine["choices"], [0, 1, 2], [0, 1, 0],
                               [20, 30, 40], training, clip_len=CLIP_LEN, seed=SEED).ok


def test_the_checks_catch_a_reader_that_misses_the_traps(folder, mine):
    def flat_listing(folder, seed):  # one level per class, hidden files kept
        rows = mine["list_videos"](folder, seed)
        hidden = (Path(folder) / "up" / ".hidden.mp4").relative_to(folder).as_posix()
        return [r for r in rows if r[0].count("/") == 1] + [(hidden, 3, "train")]

    assert not exercises.check("video_listing", flat_listing, folder, SEED).ok

    def squashing(facts, wanted, size, fit):
        return mine["read_clip"]({**facts, "height": size, "width": size}, wanted, size, fit)

    phone = str(folder / "up/phone/up_phone.mp4")
    assert not exercises.check("clip_frames", squashing, [(phone, [3, 4])], SIZE, "pad").ok


def test_the_notebooks_reader_survives_the_messy_folder(folder, mine):
    """Every good file read into a clip, every bad one skipped and counted with its reason."""
    listing = mine["list_videos"](folder, SEED)
    found = {p: mine["probe"](folder / p) for p, _, _ in listing}
    skipped = {p: why for p, why in found.items() if isinstance(why, str)}
    assert {p: why.split(":")[0] for p, why in skipped.items()} == BAD_FILES
    read = {}
    for path, _label, _split in listing:
        if path in skipped:
            continue
        times = mine["frame_times"](found[path], FPS)
        if len(times) < CLIP_LEN:
            skipped[path] = "too short"
            continue
        read[path] = mine["read_clip"](found[path], times[-CLIP_LEN:].tolist(), SIZE, "crop")
    assert set(skipped) == set(BAD_FILES) | set(SHORT_FILES)
    assert len(read) + len(skipped) == len(listing)
    assert all(clip.shape == (CLIP_LEN, SIZE, SIZE, 3) and clip.any() for clip in read.values())


def test_each_probe_reason_has_its_kind_and_an_unknown_one_is_refused(tmp_path):
    from datakit.core.errors import DataError
    from datakit.readers.video.decoding import probe

    (tmp_path / "gone.mp4").symlink_to(tmp_path / "nowhere.mp4")
    (tmp_path / "loop.mp4").symlink_to(tmp_path / "loop.mp4")
    for name in ("gone.mp4", "loop.mp4"):  # broken links: unreadable, not truncated
        with pytest.raises(DataError) as caught:
            probe(tmp_path / name, cache=False)
        assert ref._kind(caught.value.reason) == "unreadable"
    assert ref._kind("cannot be read (Permission denied); remove it or pass "
                     "on_bad_file='skip'") == "unreadable"
    assert ref._kind("cannot be read (EOF): a damaged or truncated file; remove it") \
        == "truncated"
    assert ref._kind("holds no decodable frame (empty or truncated); remove it") == "truncated"
    with pytest.raises(ValueError, match="no kind of bad file for the reason 'is odd'"):
        ref._kind("is odd")
