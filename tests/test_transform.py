"""tf.Transform on Beam over the kit's shards: the kit's full pass, the same numbers, in the model.

Needs the ``transform`` extra (``make test`` installs it). Beam starts slowly, so each
table is transformed once per module (the fixtures below) and every test reads that run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import numpy as np
import pytest

# Looked up, not imported: every pytest worker collects this file and one runs it
# (tf.Transform's import, with Apache Beam's, is about 1 CPU s); the kit imports it in its calls.
if importlib.util.find_spec("tensorflow_transform") is None:
    pytest.skip("needs the transform extra", allow_module_level=True)

import tensorflow as tf

import datakit
from datakit.core.errors import DataError
from datakit.readers.csv_files import column_stats, csv_reader_dataset, write_shards
from datakit.readers.csv_files.demo_tables import passengers
from datakit.readers.tf_transform import transform, transform_folder, transform_run

pytestmark = pytest.mark.timeout(900)

TABLES = {
    "housing": dict(label="median_house_value"),
    # names hold quoted commas; cabins and names have many tied counts at the cap
    "passengers": dict(label="survived", columns=["survived", "class", "name", "sex", "age",
                                                  "fare", "cabin", "port"],
                       max_vocabulary={"cabin": 20, "name": 30}),
}


def _shards(name, folder):
    if name == "housing":  # every 16th row of the shipped table and its 5 ISLAND rows: 1,295
        # rows, 10 of them with no total_bedrooms (the mean stands in), all five
        # ocean_proximity values; the whole table cost Beam's run and the tests reading it
        # about 6.6 more CPU s of this file, every 4th row about 1 more
        with open(datakit.data_path("housing", "housing.csv")) as f:
            lines = f.readlines()
        island = [line for line in lines[1:] if line.rstrip().endswith(",ISLAND")]
        (folder / "part.csv").write_text(lines[0] + "".join(lines[1::16] + island))
        return write_shards(folder / "part.csv", folder / "shards", num_shards=4)
    return write_shards(passengers(seed=0), folder, num_shards=3)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each table's shards, plan, tf.Transform run (housing in one process, passengers in
    two: the DirectRunner's multi-processing mode) and the kit's own statistics."""
    out = {}
    for name, kw in TABLES.items():
        files = _shards(name, tmp_path_factory.mktemp(name))
        plan = transform.plan_transform(files, **kw)
        run = transform.run_transform(plan, tmp_path_factory.mktemp(f"{name}_tft"),
                                      workers=1 if name == "housing" else 2)
        stats = column_stats(files, columns=kw.get("columns"),
                             max_vocabulary=kw.get("max_vocabulary"))
        out[name] = (files, plan, run, stats)
    return out


@pytest.mark.parametrize("name", TABLES)
def test_statistics_equal_column_stats(runs, name):
    files, plan, run, stats = runs[name]
    got = run.statistics()
    assert plan.numbers and sorted(got) == sorted(plan.numbers + plan.texts)
    for c in plan.numbers:  # float32 in the graph, float64 in column_stats
        np.testing.assert_allclose(got[c]["mean"], stats[c].mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[c]["std"], stats[c].std, rtol=1e-5)
    for c in plan.texts:  # exactly, in the kit's order (ties by value)
        assert got[c]["vocabulary"] == list(stats[c].vocabulary), c


def test_the_caps_cut_through_ties(runs):
    """The passenger caps fall inside runs of equal counts: order and membership are tested."""
    stats = runs["passengers"][3]
    for c in ("cabin", "name"):
        counts = list(stats[c].vocabulary.values())
        assert stats[c].unknown > 0 and len(set(counts)) < len(counts)


@pytest.mark.parametrize("name", TABLES)
def test_transformed_rows_are_the_kit_readers_rows(runs, name):
    """Every row once (counted against the manifest), each column the reader's, value for value."""
    files, plan, run, stats = runs[name]
    ours = [x for x, _ in run.dataset(batch_size=4096).as_numpy_iterator()]
    kit = [x for x, _ in csv_reader_dataset(files, stats=stats, label=plan.label, batch_size=4096,
                                            shuffle_buffer_size=None).as_numpy_iterator()]
    ours, kit = np.concatenate(ours), np.concatenate(kit)
    assert len(ours) == plan.rows == sum(1 for f in files for _ in open(f)) - len(files)
    assert ours.shape == kit.shape and ours.shape[1] == len(run.feature_names)
    # Beam writes rows in its own order: compare each column's sorted values
    np.testing.assert_allclose(np.sort(ours, axis=0), np.sort(kit, axis=0), atol=2e-5)


def test_a_runs_dataset_has_the_row_readers_tail(runs):
    """The tables' tail: checked arguments, a known length, the same rows shuffled by a seed
    (the same seed, the same order), the final prefetch."""
    run = runs["passengers"][2]
    with pytest.raises(ValueError, match="batch_size=0"):
        run.dataset(batch_size=0)
    with pytest.raises(TypeError, match="seed"):
        run.dataset(seed="1")
    plain = run.dataset(batch_size=64)
    assert len(plain) == -(-run.job.rows // 64)
    assert plain.element_spec[0].shape.as_list() == [None, len(run.feature_names)]

    def labels(ds):
        return [float(v) for _, y in ds for v in y.numpy()]

    a, b = (run.dataset(batch_size=64, shuffle_buffer_size=500, seed=3) for _ in range(2))
    assert labels(a) == labels(b) != labels(plain)
    assert sorted(labels(a)) == sorted(labels(plain))
    assert "Prefetch" in type(plain).__name__


def test_exported_model_on_raw_lines_equals_the_model_on_preprocessed_rows(runs, tmp_path):
    files, plan, run, stats = runs["housing"]
    tf.keras.utils.set_random_seed(42)
    width = len(run.feature_names)
    model = tf.keras.Sequential([tf.keras.Input((width,)), tf.keras.layers.Dense(8, "relu"),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="adam")
    train = run.dataset(batch_size=256).map(lambda x, y: (x, y / 100_000))
    model.fit(train, epochs=1, verbose=0)
    tf.saved_model.save(run.serving_model(model), str(tmp_path / "served"))
    served = tf.saved_model.load(str(tmp_path / "served"))

    lines = [line.rstrip("\n") for f in files for line in list(open(f))[1:]]
    kit = csv_reader_dataset(files, stats=stats, label=plan.label, batch_size=len(lines),
                             shuffle_buffer_size=None, n_readers=1)  # file by file, in order
    preprocessed = next(iter(kit))[0]
    expected = model(preprocessed).numpy().ravel()
    got = served(tf.constant(lines)).numpy().ravel()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    beam_rows = np.concatenate([model(x).numpy().ravel() for x, _ in run.dataset(4096)])
    np.testing.assert_allclose(np.sort(beam_rows), np.sort(got), rtol=1e-4, atol=1e-4)
    assert np.std(got) > 0  # a model that predicts one constant would pass the rest


def test_a_bad_line_is_named_by_file_and_line(tmp_path):
    files = [tmp_path / "a.csv", tmp_path / "b.csv"]  # no manifest: made by hand
    files[0].write_text("x,city,y\n1.0,a,1.0\n2.0,b,2.0\n")
    files[1].write_text("x,city,y\n3.0,a,3.0\n4.0,c,4.0\n5.0,d\n")  # a field short
    plan = transform.plan_transform([str(f) for f in files], label="y")
    with pytest.raises(DataError) as e:
        transform.run_transform(plan, tmp_path / "tft")
    assert e.value.path == str(files[1]) and e.value.line == 4, str(e.value)
    assert "found 2 field(s), expected 3" in str(e.value), str(e.value)
    assert e.value.__cause__ is not None  # tf.Transform's own error is kept


def test_a_stray_word_in_a_number_column_is_refused_by_the_plan(tmp_path):
    files = [tmp_path / "a.csv", tmp_path / "b.csv"]
    files[0].write_text("x,city,y\n1.0,a,1.0\n2.0,b,2.0\n")
    files[1].write_text("x,city,y\n3.0,a,3.0\n4.0,c,4.0\n5.0,d,oops\n")
    with pytest.raises(DataError) as e:
        transform.plan_transform([str(f) for f in files], label="y")
    assert e.value.path == str(files[1]) and e.value.line == 4
    assert e.value.column == "y (3 of 3)" and "`oops` is not a number" in str(e.value)


@pytest.mark.parametrize("label", ["nan", "-inf", ""])
def test_a_nan_inf_or_empty_label_is_refused_by_the_plan(tmp_path, label):
    """#47: the plan took it; the CSV reader refuses such a label by file, line and column."""
    path = tmp_path / "a.csv"
    path.write_text(f"x,y\n1.0,1.0\ninf,2.0\n3.0,{label}\n")  # an inf feature counts as missing
    with pytest.raises(DataError) as e:
        transform.plan_transform([str(path)], label="y")
    assert e.value.path == str(path) and e.value.line == 4 and e.value.column.startswith("y")


def test_the_plan_checks_its_arguments(tmp_path):
    files = write_shards({"x": [1.0, 2.0], "city": ["a", "b"]}, tmp_path, num_shards=1)
    with pytest.raises(ValueError, match=r"header \['x', 'city'\]"):
        transform.plan_transform(files, label="x", columns=["x", "town"])
    with pytest.raises(ValueError, match="label='y' is not one of the columns"):
        transform.plan_transform(files, label="y")
    with pytest.raises(ValueError, match="not kept text columns"):
        transform.plan_transform(files, label="x", max_vocabulary={"x": 3})
    with pytest.raises(ValueError, match="int >= 1"):
        transform.plan_transform(files, label="x", max_vocabulary=0)
    plan = transform.plan_transform(files, label="x", max_vocabulary=5)
    assert (plan.numbers, plan.texts, plan.max_vocabulary, plan.rows) == ([], ["city"],
                                                                          {"city": 5}, 2)


def test_beam_args_say_how_many_processes():
    assert "--direct_num_workers=2" in transform.beam_args(2)
    assert "--direct_running_mode=in_memory" in transform.beam_args()
    with pytest.raises(ValueError, match="int >= 1"):
        transform.beam_args(0)


def _labelled_rows(folder, labels):
    """One hand-made shard whose labels are ``labels`` (a run's rows are told apart by them)."""
    folder.mkdir()
    rows = "".join(f"{i}.5,{'ab'[i % 2]},{y}\n" for i, y in enumerate(labels))
    (folder / "a.csv").write_text("x,city,y\n" + rows)
    return transform.plan_transform([str(folder / "a.csv")], label="y")


def _labels(run):
    return sorted(float(v) for _, y in run.dataset(batch_size=64) for v in y.numpy())


def test_a_rerun_into_a_runs_folder_leaves_it_whole_or_replaces_it_whole(runs, tmp_path,
                                                                          monkeypatch):
    """Into a copy of the housing run's folder: a run of other rows whose commit fails after
    Beam finished (as if killed there) leaves the housing run whole and named; the same run
    done replaces it whole (rows of both runs came out before)."""
    housing = runs["housing"][2]
    out = tmp_path / "tft"
    shutil.copytree(housing.output_dir, out)
    before, housing_labels = sorted(os.listdir(out)), _labels(housing)
    new = _labelled_rows(tmp_path / "new", [1.0, 2.0, 3.0, 4.0])

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the switch to the new run never happens

    monkeypatch.setattr(transform_folder, "write_atomic", killed)
    with pytest.raises(KeyboardInterrupt):
        transform.run_transform(new, out)
    monkeypatch.undo()
    again = transform_run.TransformRun(out)
    assert sorted(os.listdir(out)) == before and again.job.files == housing.job.files
    assert _labels(again) == housing_labels

    stale = again.dataset()  # built before the rerun below, read after it
    run = transform.run_transform(new, out)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"run-1/transformed-.* is gone: a later run_transform into .*tft "
                             r"replaced this run"):
        list(stale)
    assert _labels(run) == [1.0, 2.0, 3.0, 4.0]
    assert sorted(os.listdir(out)) == [transform_folder.JOB_FILE, "run-2"]
    assert run.made_from["files"][0]["path"] == str(tmp_path / "new" / "a.csv")
    assert _labels(transform_run.TransformRun(out)) == [1.0, 2.0, 3.0, 4.0]


def test_a_folder_holding_other_files_is_refused_by_name(tmp_path):
    plan = _labelled_rows(tmp_path / "rows", [1.0, 2.0])
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match=r"mine holds files that are not a tf\.Transform "
                                              r"run's \(notes\.txt\).*new or empty folder"):
        transform.run_transform(plan, tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    (tmp_path / "notes.txt").write_text("a file")  # was a bare FileExistsError: [Errno 17]
    with pytest.raises(NotADirectoryError, match=r"notes\.txt' is a file, not a folder"):
        transform.run_transform(plan, tmp_path / "notes.txt")
    (tmp_path / "killed" / "run-1").mkdir(parents=True)   # a first run killed before its switch
    transform_folder.check_output_folder(str(tmp_path / "killed"))   # the rerun may go on
    with pytest.raises(ValueError, match=r"'gs://bucket/out'.*NFS or gcsfuse mount"):
        transform.run_transform(plan, "gs://bucket/out")  # not a local folder named "gs:"
    assert not os.path.exists("gs:")


def test_the_stale_file_check_matches_a_path_with_glob_characters_exactly(tmp_path):
    from datakit.readers.tf_transform.transform_run import _glob_escaped
    folder = tmp_path / "run[1]*?"
    folder.mkdir()
    (folder / "t.tfrecord").write_bytes(b"")
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "t.tfrecord").write_bytes(b"")  # what the unescaped class would match
    found = tf.io.matching_files(_glob_escaped(str(folder / "t.tfrecord"))).numpy()
    assert [f.decode() for f in found] == [str(folder / "t.tfrecord")]


FULL_DISK = r"""
import json, os, shutil, sys
import datakit
from datakit.readers.tf_transform import transform, transform_run
disk, earlier, housing = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
shutil.copytree(earlier, disk, dirs_exist_ok=True)  # the earlier run, on the small disk
before = sorted(os.listdir(disk))
try:
    transform.run_transform(transform.plan_transform(housing, label="median_house_value"), disk)
    out = {"error": None}
except OSError as e:
    out = {"error": str(e), "errno": e.errno}
out["left"], out["before"] = sorted(os.listdir(disk)), before
again = transform_run.TransformRun(disk)
out["labels"] = sorted(float(v) for _, y in again.dataset(batch_size=64) for v in y.numpy())
print(json.dumps(out))
"""


def test_a_full_disk_is_named_and_the_earlier_run_stays_whole(runs, tmp_path):
    """A real full disk (a 1 MiB tmpfs) under a run of the housing table, after an earlier
    run (the module's passengers run, copied there: no Beam run of its own in the child):
    the error says so naming the folder, nothing of the failed run stays (no hidden
    staging folder), and the earlier run still reads whole."""
    import json

    from small_disk import on_small_disk

    disk = tmp_path / "disk"
    disk.mkdir()
    earlier = runs["passengers"][2]
    housing = [str(datakit.data_path("housing", "housing.csv"))]  # all of it: over 1 MiB out
    out = on_small_disk(FULL_DISK, {disk: "1m"}, earlier.output_dir, json.dumps(housing),
                        timeout=600)
    assert out["errno"] == 28, out
    assert f"no space left on the device of {disk}" in out["error"], out
    assert out["left"] == out["before"] and out["before"], out  # the earlier run's files alone
    assert out["labels"] == _labels(earlier)
