"""Iterator checkpoints: saved mid-epoch here, restored in a fresh process, the rest of the epoch exactly once.

Each case compares ``first + rest`` (read before saving here, read after
restoring in another process) with an uninterrupted run of the same seeded
pipeline: same elements, same order, and every record once per epoch.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import tensorflow as tf
from csv_cases import LABEL, housing_parts
from pipelines import assert_same_elements

from datakit.readers import checkpoint as ck
from datakit.readers import video
from datakit.readers.csv_files.stats import column_stats

pytestmark = pytest.mark.timeout(300)


def plain_pipeline(n: int = 200, seed: int = 7):
    """A recipe: shuffle, a parallel map, batch, prefetch (every op with state to save)."""
    ds = tf.data.Dataset.range(n).shuffle(50, seed=seed)
    ds = ds.map(lambda x: (x, x * x), num_parallel_calls=2)
    return ds.batch(16).prefetch(2)


def check_resumes(recipe, kwargs, n_first, tmp_path):
    """Save after ``n_first`` elements, resume elsewhere; return (whole run, first + rest)."""
    build = ck.build(recipe, kwargs)
    whole = [ck.to_numpy(x) for x in build]
    first, path = ck.save_midway(ck.build(recipe, kwargs), n_first, tmp_path)
    rest = ck.resume_in_fresh_process(recipe, path, kwargs=kwargs)
    assert len(first) == n_first and len(rest) == len(whole) - n_first
    assert_same_elements(whole, first + rest, context=recipe)
    return whole, first + rest


def test_plain_pipeline_resumes_in_another_process(tmp_path):
    whole, _ = check_resumes("test_checkpoint:plain_pipeline", {"n": 200, "seed": 7}, 5, tmp_path)
    ids = np.concatenate([x for x, _ in whole])
    assert sorted(ids.tolist()) == list(range(200))   # exactly once over the epoch
    assert ids.tolist() != list(range(200))           # and it was shuffled


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    parts = housing_parts(tmp_path_factory.mktemp("housing"))
    return parts, column_stats(parts["train"])


def _rows_once(whole, files):
    labels = np.concatenate([y for _, y in whole])
    expected = np.concatenate([np.loadtxt(f, delimiter=",", skiprows=1, usecols=[8], dtype=np.float32,
                                          ndmin=1) for f in files])
    assert Counter(labels.tolist()) == Counter(expected.tolist())


PARSE = [pytest.param("line", id="per-line"), pytest.param("batch", id="chunked"),
         pytest.param("vectorized", id="batch-then-parse")]


@pytest.mark.parametrize("parse", PARSE)
def test_csv_reader_resumes_in_another_process(housing, tmp_path, parse):
    parts, stats = housing
    kwargs = dict(filepaths=parts["valid"], stats=stats, label=LABEL, seed=1, parse=parse,
                  batch_size=64, shuffle_buffer_size=500)
    whole, _ = check_resumes("datakit.readers.csv_files.reader:csv_reader_dataset", kwargs, 7, tmp_path)
    _rows_once(whole, parts["valid"])


def py_function_pipeline(n: int = 30, declared: bool = True):
    """A recipe: a shuffled range through a tf.py_function (stateful, as far as TF knows)."""
    ds = tf.data.Dataset.range(n).shuffle(10, seed=3)
    ds = ds.map(lambda x: tf.py_function(lambda v: v * 2, [x], tf.int64))
    return ck.ignore_external_state(ds) if declared else ds


def test_a_py_function_is_refused_unless_declared_stateless(tmp_path):
    # The CSV reader's bad-line message is a numpy_function created stateful=False, so its
    # iterator saves as it is; an ordinary py_function needs ignore_external_state.
    with pytest.raises(tf.errors.FailedPreconditionError, match="EagerPyFunc is stateful"):
        ck.save_midway(py_function_pipeline(declared=False), 1, tmp_path / "refused")
    whole, _ = check_resumes("test_checkpoint:py_function_pipeline", {"n": 30}, 4, tmp_path)
    assert sorted(int(x) for x in whole) == list(range(0, 60, 2))


def test_clip_dataset_resumes_with_the_same_random_clips(videos, tmp_path):
    shards = tmp_path / "shards"
    video.write_video_records(videos, shards, num_shards=3)
    kwargs = dict(directory=str(shards), clip_len=8, batch_size=3, shuffle_buffer_size=5, seed=2,
                  with_ids=True)
    whole, _ = check_resumes("datakit.readers.video.clips:clip_dataset", kwargs, 2, tmp_path)
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
])
def test_bad_calls_say_how_to_fix_them(tmp_path, call, error, match):
    with pytest.raises(error, match=match):
        call(tmp_path)


def test_a_failing_resume_reports_the_child_error(tmp_path):
    _, path = ck.save_midway(ck.shuffled_range(10, 2), 1, tmp_path)
    with pytest.raises(RuntimeError, match="resuming process failed"):
        ck.resume_in_fresh_process("datakit.readers.checkpoint:no_such_recipe", path)
