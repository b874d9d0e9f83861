"""Iterator checkpoints: saved mid-epoch, restored in a fresh process, the rest of the epoch once.

Each case compares ``first + rest`` (read before saving here, read after
restoring in another process) with an uninterrupted run of the same seeded
pipeline: same elements, same order, and every record once per epoch. The cases
resume in one process of the module (:class:`~datakit.readers.checkpoints.checkpoint.
ResumingProcess`: each checkpoint saved here, none by that process), which imports
TensorFlow once; a resume that fails ends it, and the next case starts another.
"""

from __future__ import annotations

import glob
import os
import re
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf
from checkpoint_recipes import lines_pipeline, py_function_pipeline, records_pipeline
from csv_cases import LABEL, housing_parts
from pipelines import assert_same_elements

from datakit.core.errors import DataError
from datakit.readers import video
from datakit.readers.checkpoints import checkpoint as ck
from datakit.readers.checkpoints.checkpoint_fingerprint import load_fingerprint
from datakit.readers.csv_files.stats import column_stats

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def child():
    """The module's resuming process (started at its first resume)."""
    with ck.ResumingProcess() as process:
        yield process


def check_resumes(child, recipe, kwargs, n_first, tmp_path):
    """Save after ``n_first`` elements, resume elsewhere; return (whole run, first + rest)."""
    build = ck.dataset_from_recipe(recipe, kwargs)
    whole = [ck.to_numpy(x) for x in build]
    first, path = ck.save_midway(ck.dataset_from_recipe(recipe, kwargs), n_first, tmp_path)
    rest = child.resume(recipe, path, kwargs=kwargs)
    assert len(first) == n_first and len(rest) == len(whole) - n_first
    assert_same_elements(whole, first + rest, context=recipe)
    return whole, first + rest


def test_plain_pipeline_resumes_in_another_process(child, tmp_path):
    whole, _ = check_resumes(child, "checkpoint_recipes:plain_pipeline", {"n": 200, "seed": 7},
                             5, tmp_path)
    ids = np.concatenate([x for x, _ in whole])
    assert sorted(ids.tolist()) == list(range(200))   # exactly once over the epoch
    assert ids.tolist() != list(range(200))           # and it was shuffled


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    parts = housing_parts(tmp_path_factory.mktemp("housing"))
    return parts, column_stats(parts["train"])


def _rows_once(whole, files):
    labels = np.concatenate([y for _, y in whole])
    expected = np.concatenate([np.loadtxt(f, delimiter=",", skiprows=1, usecols=[8],
                                          dtype=np.float32, ndmin=1) for f in files])
    assert Counter(labels.tolist()) == Counter(expected.tolist())


PARSE = [pytest.param("line", id="per-line"), pytest.param("batch", id="chunked"),
         pytest.param("vectorized", id="batch-then-parse")]


@pytest.mark.parametrize("parse", PARSE)
def test_csv_reader_resumes_in_another_process(child, housing, tmp_path, parse):
    parts, stats = housing
    kwargs = dict(filepaths=parts["valid"], stats=stats, label=LABEL, seed=1, parse=parse,
                  batch_size=64, shuffle_buffer_size=500)
    recipe = "datakit.readers.csv_files.reader:csv_reader_dataset"
    whole, _ = check_resumes(child, recipe, kwargs, 7, tmp_path)
    _rows_once(whole, parts["valid"])


def test_a_py_function_is_refused_unless_declared_stateless(child, tmp_path):
    # The CSV reader's bad-line message is a numpy_function created stateful=False, so its
    # iterator saves as it is; an ordinary py_function needs ignore_external_state.
    with pytest.raises(ValueError, match="(?s)EagerPyFunc is stateful.*ignore_external_state"):
        ck.save_midway(py_function_pipeline(declared=False), 1, tmp_path / "refused")
    whole, _ = check_resumes(child, "checkpoint_recipes:py_function_pipeline", {"n": 30}, 4,
                             tmp_path)
    assert sorted(int(x) for x in whole) == list(range(0, 60, 2))


def test_clip_dataset_resumes_with_the_same_random_clips(child, videos, tmp_path):
    shards = tmp_path / "shards"
    video.write_video_records(videos, shards, class_names=video.CLASSES, num_shards=3)
    kwargs = dict(directory=str(shards), clip_len=8, batch_size=3, shuffle_buffer_size=5, seed=2,
                  with_ids=True)
    whole, _ = check_resumes(child, "datakit.readers.video.reading.clips:clip_dataset", kwargs,
                             2, tmp_path)
    ids = np.concatenate([b["id"] for b in whole])
    assert sorted(ids.tolist()) == sorted(v_id for v_id in range(len(videos)))


def test_shuffle_buffer_is_in_the_checkpoint(tmp_path):
    sizes = {}
    for b in (1, 1000, 10_000):
        _, path = ck.save_midway(ck.shuffled_range(20_000, b, seed=0), 1, tmp_path / str(b))
        sizes[b] = ck.checkpoint_bytes(path)
    # about 8 bytes (one int64) per buffered element, plus bookkeeping
    assert sizes[1000] - sizes[1] >= 8 * 999
    assert sizes[10_000] - sizes[1000] >= 8 * 9000


@pytest.mark.parametrize("call, error, match", [
    pytest.param(lambda p: ck.save_midway(tf.data.Dataset.range(3), 5, p), ValueError,
                 "ended after 3", id="too-few"),
    pytest.param(lambda p: ck.save_midway(tf.data.Dataset.range(3), -1, p), ValueError,
                 "int >= 0", id="negative"),
    pytest.param(lambda p: ck.checkpoint_bytes(str(p / "nothing")), FileNotFoundError,
                 "save_midway", id="no-checkpoint"),
    pytest.param(lambda p: ck.resume_in_fresh_process("no_colon", str(p)), ValueError,
                 "module:function", id="bad-recipe"),
    pytest.param(lambda p: ck.resume_in_fresh_process(RANGE, str(p / "nothing")),
                 FileNotFoundError, "nothing.index is missing", id="no-checkpoint-to-resume"),
    # #47: a list failed on a TensorFlow attribute; kwargs=[1] and timeout=0 reached the child
    pytest.param(lambda p: ck.save_midway([1, 2, 3], 1, p), TypeError,
                 "dataset must be a tf.data.Dataset, got list", id="a-list"),
    pytest.param(lambda p: ck.resume_in_fresh_process(RANGE, str(p), kwargs=[1]), TypeError,
                 "kwargs must be a dict", id="kwargs-list"),
    pytest.param(lambda p: ck.resume_in_fresh_process(RANGE, str(p), timeout=0), ValueError,
                 r"timeout=0.0 is invalid: pass seconds > 0", id="timeout-zero"),
])
def test_bad_calls_say_how_to_fix_them(tmp_path, call, error, match):
    with pytest.raises(error, match=match):
        call(tmp_path)


def test_a_failing_resume_reports_the_child_error_and_fails_alone(child, tmp_path):
    """The recipe raises in the child: its traceback is in the error, that process has
    ended, and the next resume (in another) reads the rest as ever."""
    kwargs = {"n": 10, "buffer_size": 2}
    first, path = ck.save_midway(ck.shuffled_range(**kwargs), 1, tmp_path)
    with pytest.raises(RuntimeError, match=r"(?s)resuming process failed \(exit 1\).*"
                                           "has no attribute 'no_such_recipe'"):
        child.resume("datakit.readers.checkpoints.checkpoint:no_such_recipe", path)
    rest = child.resume(RANGE, path, kwargs=kwargs)
    assert [int(x) for x in first + rest] == [int(x) for x in ck.shuffled_range(**kwargs)]


# ---- what a resume checks (the second bad-input sweep: each of these was silent or a bare
# "the resuming process failed" before)
RANGE = "datakit.readers.checkpoints.checkpoint:shuffled_range"


def test_saving_twice_into_one_folder_keeps_both(child, tmp_path):
    kwargs = {"n": 10, "buffer_size": 1}
    _, one = ck.save_midway(ck.shuffled_range(**kwargs), 2, tmp_path)
    _, two = ck.save_midway(ck.shuffled_range(**kwargs), 5, tmp_path)
    assert one != two
    rest_one = child.resume(RANGE, one, kwargs=kwargs)
    rest_two = child.resume(RANGE, two, kwargs=kwargs)
    assert [int(x) for x in rest_one] == list(range(2, 10))
    assert [int(x) for x in rest_two] == list(range(5, 10))


def test_a_pipeline_rebuilt_with_another_batch_size_is_refused(child, tmp_path):
    _, path = ck.save_midway(ck.shuffled_range(20, 4, batch_size=4), 1, tmp_path)
    with pytest.raises(ValueError, match="BatchDatasetV2 input 1: saved 4, rebuilt 3"):
        child.resume(RANGE, path, kwargs={"n": 20, "buffer_size": 4, "batch_size": 3})


def test_a_tfrecord_set_rewritten_since_the_save_is_refused(tmp_path):
    from datakit.readers.records import tfrecord_writer
    d = tmp_path / "shards"
    for version in (b"old", b"new"):
        with tfrecord_writer.ShardWriter(d, num_shards=2, overwrite=True) as w:
            for i in range(6):
                w.write(b"%s %d" % (version, i))
        if version == b"old":
            _, path = ck.save_midway(records_pipeline(str(d)), 2, tmp_path / "ck")
    with pytest.raises(DataError, match=r"shard-00000-of-00002\.tfrecord: its set 'shard' "
                                        "was rewritten"):
        ck.resume_in_fresh_process("checkpoint_recipes:records_pipeline", path,
                                   kwargs={"directory": str(d)})


def test_a_csv_set_rewritten_twice_under_the_same_names_is_refused(housing, tmp_path):
    from datakit.readers.csv_files.shards import write_shards
    parts, stats = housing
    d = tmp_path / "shards"
    table = parts["train"][0]
    files = write_shards(table, d, num_shards=2)
    kwargs = dict(filepaths=files, stats=stats, label=LABEL, seed=1, batch_size=16)
    recipe = "datakit.readers.csv_files.reader:csv_reader_dataset"
    _, path = ck.save_midway(ck.dataset_from_recipe(recipe, kwargs), 1, tmp_path / "ck")
    write_shards(table, d, num_shards=2)
    assert write_shards(table, d, num_shards=2) == files   # the names a reader holds
    with pytest.raises(DataError, match=r"part_00\.csv: its set 'part' was rewritten"):
        ck.resume_in_fresh_process(recipe, path, kwargs=kwargs)


def test_a_file_changed_in_place_since_the_save_is_named(tmp_path):
    f = tmp_path / "lines.txt"
    f.write_text("a\nb\nc\n")
    _, path = ck.save_midway(lines_pipeline(str(f)), 1, tmp_path / "ck")
    f.write_text("a\nB\nc\n")
    with pytest.raises(DataError, match=r"lines\.txt: changed since the save"):
        ck.resume_in_fresh_process("checkpoint_recipes:lines_pipeline", path,
                                   kwargs={"path": str(f)})


def _damage(path: str, how: str) -> None:
    with open(path, "r+b") as f:
        if how == "cut":
            f.truncate(max(1, os.path.getsize(path) // 2))
        else:
            f.seek(os.path.getsize(path) // 2)
            byte = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([byte[0] ^ 0xFF]))


@pytest.mark.parametrize("how, message", [("cut", "truncated"), ("flip", "corrupted")])
@pytest.mark.parametrize("part", ["index", "data"])
def test_a_damaged_checkpoint_is_named(tmp_path, how, message, part):
    _, path = ck.save_midway(ck.shuffled_range(50, 20), 3, tmp_path)
    target = path + ".index" if part == "index" else glob.glob(path + ".data-*")[0]
    _damage(target, how)
    with pytest.raises(DataError, match=re.escape(target) + ".*" + message):
        ck.resume_in_fresh_process(RANGE, path, kwargs={"n": 50, "buffer_size": 20})


def test_a_damaged_checkpoint_without_its_record_is_named_by_the_child(child, tmp_path):
    _, path = ck.save_midway(ck.shuffled_range(50, 20), 3, tmp_path)
    os.remove(path + ".datakit.json")   # as if saved by tf.train.Checkpoint itself
    _damage(path + ".index", "cut")
    with pytest.raises(DataError, match=re.escape(path) + ": this checkpoint cannot be restored"):
        child.resume(RANGE, path, kwargs={"n": 50, "buffer_size": 20})


def test_the_index_file_given_for_the_prefix_says_what_to_pass(tmp_path):
    _, path = ck.save_midway(ck.shuffled_range(5, 1), 1, tmp_path)
    with pytest.raises(ValueError, match=re.escape(f"pass the checkpoint's prefix {path!r}")):
        ck.resume_in_fresh_process(RANGE, path + ".index", kwargs={"n": 5, "buffer_size": 1})


def test_a_from_generator_pipeline_says_what_to_do(tmp_path):
    ds = tf.data.Dataset.from_generator(lambda: iter(range(5)), output_signature=tf.TensorSpec(
        (), tf.int64))
    with pytest.raises(ValueError, match="(?s)Python generator.*ShardWriter.*skip"):
        ck.save_midway(ds, 1, tmp_path)


def test_a_checkpoint_saved_by_tensorflow_itself_resumes_too(child, tmp_path):
    it = iter(ck.shuffled_range(10, 1))
    first = [int(next(it)) for _ in range(3)]
    path = tf.train.Checkpoint(iterator=it).save(str(tmp_path / "iterator"))  # save_counter too
    rest = child.resume(RANGE, path, kwargs={"n": 10, "buffer_size": 1})
    assert first + [int(x) for x in rest] == list(range(10))


def test_a_global_seed_set_before_the_save_does_not_block_the_resume(child, tmp_path):
    """A learner's tf.random.set_seed() at the top of a notebook: the fresh process sets none.

    TensorFlow resumes the saved pipeline with its saved seeds, so the rest of the epoch is
    right; a changed op seed (the recipe's seed=) is still refused.
    """
    kwargs = {"n": 8, "buffer_size": 4, "seed": 1}
    recipe = "datakit.readers.checkpoints.checkpoint:shuffled_range"
    tf.random.set_seed(0)
    try:
        whole = [int(x) for x in ck.shuffled_range(**kwargs)]
        first, path = ck.save_midway(ck.shuffled_range(**kwargs), 3, tmp_path / "a")
        rest = child.resume(recipe, path, kwargs=kwargs)
        assert [int(x) for x in first] + [int(x) for x in rest] == whole
        _, path = ck.save_midway(ck.shuffled_range(**kwargs), 3, tmp_path / "b")
        with pytest.raises(ValueError, match="ShuffleDatasetV3 input 3: saved 1, rebuilt 2"):
            child.resume(recipe, path, kwargs={**kwargs, "seed": 2})
    finally:
        tf.random.set_seed(None)


def test_a_save_that_fails_midway_keeps_the_earlier_checkpoint(child, tmp_path, monkeypatch):
    """The checkpoint is written, then its record fails (a full disk, say): nothing of the
    failed save stays under a name, the first checkpoint resumes, the next save is whole."""
    kwargs = {"n": 10, "buffer_size": 1}
    _, one = ck.save_midway(ck.shuffled_range(**kwargs), 2, tmp_path)
    before = sorted(os.listdir(tmp_path))

    def full_disk(*args, **kw):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(ck, "save_fingerprint", full_disk)
        with pytest.raises(OSError, match="No space left"):
            ck.save_midway(ck.shuffled_range(**kwargs), 5, tmp_path)
    assert sorted(os.listdir(tmp_path)) == before   # no iterator-2.*, no staging folder
    assert [int(x) for x in child.resume(RANGE, one, kwargs=kwargs)] == \
        list(range(2, 10))
    _, two = ck.save_midway(ck.shuffled_range(**kwargs), 5, tmp_path)
    assert os.path.basename(two) == "iterator-2" and ck.checkpoint_bytes(two) > 0


def test_a_reader_with_a_cache_saves_once_the_cache_is_written(child, housing, tmp_path):
    """During the first pass the half-written cache belongs to the saving process: refused,
    saying why and the fix; after it, the checkpoint resumes from the finished cache."""
    parts, stats = housing
    kwargs = dict(filepaths=parts["valid"], stats=stats, label=LABEL, seed=1, parse="arrow",
                  batch_size=64, shuffle_buffer_size=16, cache=str(tmp_path / "cache"))
    recipe = "datakit.readers.csv_files.reader:csv_reader_dataset"
    with pytest.raises(ValueError, match=r"(?s)still being written.*whole epoch first.*"
                                         r"without cache="):
        ck.save_midway(ck.dataset_from_recipe(recipe, kwargs), 1, tmp_path / "ck")
    assert not glob.glob(str(tmp_path / "ck" / "iterator-*"))
    whole, _ = check_resumes(child, recipe, kwargs, 3, tmp_path / "ck")  # the cache is whole now
    _rows_once(whole, parts["valid"])


def test_a_changed_seed_or_file_list_is_said_in_words(child, tmp_path):
    kwargs = {"n": 8, "buffer_size": 4, "seed": 1}
    _, path = ck.save_midway(ck.shuffled_range(**kwargs), 1, tmp_path / "a")
    with pytest.raises(ValueError, match="(?s)the seed differs.*Pass the saved seed"):
        child.resume(RANGE, path, kwargs={**kwargs, "seed": 2})
    files = [tmp_path / f"{c}.txt" for c in "abc"]
    for f in files:
        f.write_text("x\n")
    _, path = ck.save_midway(lines_pipeline([str(f) for f in files[:2]]), 1, tmp_path / "b")
    with pytest.raises(ValueError, match=r"the file list differs: 1 file\(s\) only in the "
                                         r"rebuilt one \(first: .*c\.txt\)"):
        child.resume("checkpoint_recipes:lines_pipeline", path,
                     kwargs={"path": [str(f) for f in files]})


def test_a_video_folder_checkpoint_refuses_a_resume_after_a_video_was_replaced(child, tmp_path):
    folder = tmp_path / "videos"
    video.make_video_folder(folder, per_class=2, min_frames=24, max_frames=24, size=16, seed=0)
    kwargs = dict(directory=str(folder), clip_len=4, batch_size=2, frame_size=(16, 16), seed=1,
                  verbose=False)
    recipe = "datakit.readers.video.reading.directory:video_dataset_from_directory"
    _, path = ck.save_midway(ck.dataset_from_recipe(recipe, kwargs), 1, tmp_path / "ck")
    saved = load_fingerprint(path)["inputs"]
    files = sorted(str(p) for p in folder.glob("*/*"))
    assert sorted(saved) == files  # the graph names every video, so the record holds them
    other = video.make_video(0, size=16, min_frames=24, max_frames=24, seed=99).frames
    added = video.write_video(other, folder / "down" / "0-first.mp4")  # sorts first
    with pytest.raises(ValueError, match=r"the file list differs: 1 file\(s\) only in the "
                       r"rebuilt one \(first: .*0-first.mp4\)"):
        child.resume(recipe, path, kwargs=kwargs)
    added.unlink()
    # another video of the same shape and length in place of one: a rebuilt reader accepts it
    video.write_video(other, files[-1])
    with pytest.raises(DataError, match="changed since the save") as e:
        child.resume(recipe, path, kwargs=kwargs)
    assert e.value.path == files[-1]


def test_a_large_input_is_checked_by_its_ends_size_and_time(tmp_path, monkeypatch):
    from datakit.readers.checkpoints import checkpoint_fingerprint as fp
    monkeypatch.setattr(fp, "WHOLE_HASH_BYTES", 1000)
    path = tmp_path / "long.mp4"
    path.write_bytes(bytes(range(256)) * 20)
    saved = {str(path): fp.input_fingerprint(str(path))}
    assert "sha256" not in saved[str(path)] and fp.input_changes(saved) is None
    os.utime(path, ns=(0, saved[str(path)]["mtime_ns"] + 1))  # touched: refused, to be safe
    assert "changed since the save" in fp.input_changes(saved)[1]
    assert "modification time" in fp.input_changes(saved)[1]
    small = [tmp_path / "a.mp4", tmp_path / "b.mp4"]  # 1000 bytes hashed whole, in all
    for f in small:
        f.write_bytes(b"x" * 600)
    facts = fp.inputs_facts([str(f) for f in small])
    assert ["sha256" in facts[str(f)] for f in small] == [True, False]
    assert fp.input_changes(facts) is None


@pytest.mark.parametrize("call, error, match", [
    (lambda: ck.shuffled_range(5, 0), ValueError, "buffer_size=0"),  # was TensorFlow's own error
    (lambda: ck.shuffled_range(5, 2, seed=True), TypeError, "seed must be an int"),
    (lambda: ck.shuffled_range(5, 2, batch_size=0), ValueError, "batch_size=0"),
])
def test_the_shuffled_range_recipe_checks_its_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


FULL_DISK = r"""
import glob, json, os, shutil, sys
from datakit.tensorflow_logs import import_tensorflow_lean
import_tensorflow_lean()  # it only saves pipelines
from datakit.readers.checkpoints import checkpoint as ck
folder, kept = sys.argv[1], sys.argv[2]
kwargs = {"n": 10, "buffer_size": 1}
_, one = ck.save_midway(ck.shuffled_range(**kwargs), 2, folder)
before = sorted(os.listdir(folder))
big = {"n": 200_000, "buffer_size": 100_000}  # its buffer alone: far more than the disk
try:
    ck.save_midway(ck.shuffled_range(**big), 5, folder)
    out = {"error": None}
except OSError as e:
    out = {"error": str(e), "errno": e.errno}
out["left"] = sorted(os.listdir(folder))
out["before"] = before
for part in glob.glob(one + "*"):  # the first checkpoint as the failed save left it
    shutil.copy(part, kept)
out["kept"] = os.path.join(kept, os.path.basename(one))
print(json.dumps(out))
"""


def test_a_full_disk_is_named_and_the_earlier_checkpoint_still_resumes(child, tmp_path):
    """A real full disk (a 256 KiB tmpfs) under a save: the error says so naming the folder,
    nothing of the failed save stays (no hidden staging folder), the first one resumes
    (copied, as the failed save left it, out of the tmpfs, which ends with its process:
    the module's resuming process reads it, no third TensorFlow import)."""
    from small_disk import on_small_disk

    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    out = on_small_disk(FULL_DISK, {disk: "256k"}, str(kept))
    assert out["errno"] == 28, out
    assert f"no space left on the device of {disk}" in out["error"], out
    assert out["left"] == out["before"], out  # no iterator-2.*, no hidden staging folder
    rest = child.resume(RANGE, out["kept"], kwargs={"n": 10, "buffer_size": 1})
    assert [int(x) for x in rest] == list(range(2, 10))
