"""Notebook 10's workshop: the messy folder, the references its exercises are checked against,
and the notebook's own solutions (the reader a learner takes home) equal to them.

The references (``datakit.exercises.video_reader``) are the kit's video rules; the
solutions are the plain PyAV and ``tf.data`` code of the notebook's hidden solution cells,
run here on a messy folder of another seed than the notebook's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("av")

from datakit import exercises
from datakit.exercises import video_reader as ref
from datakit.readers.video.synthetic.messy_folder import (
    BAD_FILES,
    NOT_VIDEOS,
    SHORT_FILES,
    make_messy_video_folder,
)
from tests import nb10_inputs

CLIP_LEN, SIZE, FPS, SEED = (nb10_inputs.CLIP_LEN, nb10_inputs.SIZE, nb10_inputs.FPS,
                             nb10_inputs.SEED)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    directory = tmp_path_factory.mktemp("messy") / "videos"
    make_messy_video_folder(directory, per_class=3, seed=1)
    return directory


@pytest.fixture(scope="module")
def listing(folder):
    return ref.video_listing(folder, SEED)["path_order"]


def test_the_messy_folder_holds_every_trap(folder):
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert set(BAD_FILES) | set(SHORT_FILES) | set(NOT_VIDEOS) <= files
    assert "up/phone/up_phone.mp4" in files
    assert any(f.startswith("down/trip/") for f in files)
    assert (folder / "left" / "left_cut.mp4").stat().st_size < 4096  # cut, not whole


def test_the_messy_folders_docstring_says_where_the_cut_falls():
    from datakit.readers.video.synthetic import messy_folder

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
    assert ref.video_listing(folder, SEED)["path_order"] == listing
    again = ref.video_listing(folder, SEED + 1)["path_order"]
    assert [s for _, _, s in again] != splits  # the seed draws it


def test_the_probe_reads_every_good_file_and_names_each_bad_one(folder, listing):
    rows = dict(ref.video_probe(folder, [p for p, _, _ in listing]))
    bad = {path: found[0] for path, found in rows.items() if isinstance(found, tuple)}
    assert bad == BAD_FILES
    good = [found for found in rows.values() if isinstance(found, dict)]
    assert all(len(f["pts"]) > 0 and f["pts"] == sorted(f["pts"]) for f in good)
    phone = rows["up/phone/up_phone.mp4"]
    assert (phone["rotation"], phone["height"] > phone["width"]) == (90, True)  # turned


def test_frame_times_leave_the_short_file_too_short(folder):
    short, = SHORT_FILES
    (_, times), = ref.frame_times([folder / short], FPS)
    assert len(times) == SHORT_FILES[short] < CLIP_LEN


def test_crop_and_pad_keep_the_phone_videos_shape(folder):
    phone = ref.facts(folder / "up/phone/up_phone.mp4")
    wanted = [[10, 11, 12]]
    (_, padded), = ref.clip_frames([(phone["path"], wanted[0])], SIZE, "pad")
    (_, cropped), = ref.clip_frames([(phone, wanted[0])], SIZE, "crop")  # facts or a path
    assert padded.shape == cropped.shape == (3, SIZE, SIZE, 3)
    bar = (SIZE - round(phone["width"] * SIZE / phone["height"])) // 2
    assert bar > 0 and not padded[:, :, :bar].any() and padded[:, :, bar:-bar].any()
    assert cropped[:, :, :bar].any()  # no bars: the centre is cut
    with pytest.raises(ValueError, match="crop"):
        ref.clip_frames([(phone["path"], wanted[0])], SIZE, "squash")


def test_clip_choices_are_new_each_epoch_and_fixed_for_validation():
    args = ([0, 1, 2, 3], [0, 1, 0, 1], [20, 30, 40, 50])
    train = ref.clip_choice_rows(*args, True, clip_len=CLIP_LEN, seed=SEED)
    epochs = [sorted(tuple(int(x) for x in e) for e in train) for _ in range(2)]
    assert epochs[0] != epochs[1]
    again = ref.clip_choice_rows(*args, True, clip_len=CLIP_LEN, seed=SEED)
    assert sorted(tuple(int(x) for x in e) for e in again) == epochs[0]
    assert all(0 <= s <= n - CLIP_LEN for (_, _, s), n in
               zip(sorted(epochs[0]), args[2], strict=True))
    val = ref.clip_choices(*args, False, clip_len=CLIP_LEN, seed=SEED)["rows"]
    assert val == [(i, label, (n - CLIP_LEN) // 2) for i, label, n in zip(*args, strict=True)]


@pytest.fixture(scope="module")
def mine():
    """The functions (and constants) the notebook's hidden solution cells define."""
    return nb10_inputs.namespace()


def test_the_notebooks_solutions_pass_their_checks_on_their_own_probe(folder, mine):
    assert exercises.check("video_listing", mine["list_videos"], folder, SEED).ok
    paths = [p for p, _, _ in mine["list_videos"](folder, SEED)]
    assert exercises.check("video_probe", mine["probe"], folder, paths).ok
    good = [f for f in (mine["probe"](folder / p) for p in paths) if isinstance(f, dict)]
    assert len(good) == len(paths) - len(BAD_FILES)
    assert exercises.check("frame_times", mine["frame_times"], good, FPS).ok
    requests = [(f, mine["frame_times"](f, FPS)[:CLIP_LEN].tolist()) for f in good
                if Path(f["path"]).relative_to(folder).as_posix() not in SHORT_FILES]
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

    said = exercises.check("video_listing", flat_listing, folder, SEED)
    assert not said.ok and "up/.hidden.mp4" in str(said) and "'.'" in str(said)


def test_a_probe_error_shows_in_the_later_checks_as_the_probes(folder, mine):
    """frame_times and read_clip run on the learner's own facts: a slip in the probe (the
    pts left in decode order, a turned file's size as stored) is named there, as the probe's."""
    paths = [p for p, _, _ in mine["list_videos"](folder, SEED)]
    found = [f for f in (mine["probe"](folder / p) for p in paths) if isinstance(f, dict)]
    unsorted = [{**f, "pts": f["pts"][1:2] + f["pts"][:1] + f["pts"][2:]} for f in found]
    said = str(exercises.check("frame_times", mine["frame_times"], unsorted, FPS))
    assert "not sorted" in said and "your probe's facts" in said
    phone = mine["probe"](folder / "up/phone/up_phone.mp4")  # 48 tall, 32 wide, turned
    stored = {**phone, "height": phone["width"], "width": phone["height"]}
    said = str(exercises.check("clip_frames", mine["read_clip"], [(stored, [3, 4])], SIZE, "pad"))
    assert "swapped" in said and "your probe's facts" in said


def test_facts_without_a_path_are_named_not_raised(folder, mine):
    facts = mine["probe"](folder / "up/phone/up_phone.mp4")
    pathless = {k: v for k, v in facts.items() if k != "path"}
    said = exercises.check("frame_times", mine["frame_times"], [pathless], FPS)
    assert not said.ok and "no 'path'" in str(said)
    said = exercises.check("clip_frames", mine["read_clip"], [(pathless, [0, 1])], SIZE, "pad")
    assert not said.ok and "no 'path'" in str(said)


def test_results_passed_instead_of_the_function_are_named(folder, mine):
    paths = [p for p, _, _ in mine["list_videos"](folder, SEED)]
    results = [mine["probe"](folder / p) for p in paths]
    said = exercises.check("video_probe", results, folder, paths)
    assert not said.ok and "pass your function probe itself" in str(said)


def test_an_error_in_the_learners_function_names_their_line(folder):
    def list_videos(folder, seed):
        rows = sorted(Path(folder).rglob("*.mp4"))
        return [(p.name, rows.index(p) // 0, "train") for p in rows]

    said = str(exercises.check("video_listing", list_videos, folder, SEED))
    assert "raised ZeroDivisionError" in said and "rows.index(p) // 0" in said


def test_the_listing_accepts_both_orders_the_question_allows():
    """In tests/nb10_inputs.py's folder, 'up/phone-2.mp4' sorts before 'up/phone/...' as a
    string and after it as a Path: both listings (each with its split) are accepted."""
    folder = nb10_inputs.messy_folder()
    orders = ref.video_listing(folder, SEED)
    assert orders["path_order"] != orders["str_order"]
    for order in ("path_order", "str_order"):
        assert exercises.check("video_listing", orders[order], folder, SEED).ok


def test_the_solution_keeps_a_class_folder_with_no_video(tmp_path, mine):
    """class_names come from the folders, so an empty class keeps its label (the labels of
    the listing count it) and the model gets one output per class."""
    for name, n in (("a", 1), ("b", 0), ("c", 1)):
        (tmp_path / name).mkdir()
        for k in range(n):
            (tmp_path / name / f"{name}{k}.mp4").write_bytes(b"")
    assert mine["class_folders"](tmp_path) == ["a", "b", "c"]
    assert [label for _, label, _ in mine["list_videos"](tmp_path, SEED)] == [0, 2]


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
    from datakit.readers.video.decoding.decoding import probe

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
