"""The synthetic timing source: which rows it yields, its argument checks, serial()'s options."""

from __future__ import annotations

import pytest
import tensorflow as tf

from datakit.perf import synthetic as S
from datakit.perf import timeline as T


@pytest.mark.parametrize("files,rows,cycle,par", [
    pytest.param(1, 1, 1, None, id="one-row"), pytest.param(3, 2, 2, 2, id="parallel-2"),
    pytest.param(2, 4, 3, tf.data.AUTOTUNE, id="autotune")])
def test_synthetic_files_yields_each_row_once_with_open_and_read_stages(files, rows, cycle, par):
    ds = S.synthetic_files(files, rows, open_time=0.0, read_time=0.0, cycle_length=cycle,
                           num_parallel_calls=par)
    assert T.stage_names(ds.element_spec) == ["open", "read"]
    values = [int(v) for v, _ in ds]
    assert sorted(values) == list(range(files * rows))
    tl = T.trace_timeline(ds)
    assert sorted(tl.ids.tolist()) == sorted(values)  # the traced id is the row's value
    for f in range(files):  # rows of one file share one open
        same_file = tl.ids // rows == f
        assert len(set(tl.start[same_file, 0].tolist())) == 1


def test_work_passes_values_through():
    ds = tf.data.Dataset.range(5).batch(2).map(S.work(0.0, per_item=0.0))
    assert [x.tolist() for x in ds.as_numpy_iterator()] == [[0, 1], [2, 3], [4]]


def test_serial_switches_the_runtime_help_off():
    options = S.serial(tf.data.Dataset.range(3)).options()
    opt = options.experimental_optimization
    assert not (opt.inject_prefetch or opt.map_parallelization or opt.parallel_batch
                or opt.map_and_batch_fusion or options.autotune.enabled)


def test_errors_say_how_to_fix_the_call():
    with pytest.raises(ValueError, match=">= 1"):
        S.synthetic_files(0)
    with pytest.raises(ValueError, match="num_parallel_calls=3 is more than cycle_length=2"):
        S.synthetic_files(2, num_parallel_calls=3, cycle_length=2)
    with pytest.raises(ValueError, match="seconds >= 0"):
        S.synthetic_files(open_time=-1)
    with pytest.raises(ValueError, match="seconds >= 0"):
        S.work(-0.1)


def test_building_a_traced_synthetic_pipeline_converts_no_source_or_work_function(monkeypatch):
    """AutoGraph rewrites each function handed to tf.data (about 0.35 CPU s for these, once
    per process: every notebook kernel that draws a timeline paid it); the synthetic source,
    ``work`` and ``tag`` use no Python control flow on tensors, so they are traced as
    written. A learner's function handed to ``timed`` is still converted."""
    from tensorflow.python.autograph.impl import api

    real, converted = api._convert_actual, []

    def spy(entity, program_ctx):
        converted.append(f"{getattr(entity, '__module__', '?')}.{entity.__qualname__}")
        return real(entity, program_ctx)

    monkeypatch.setattr(api, "_convert_actual", spy)
    ds = S.synthetic_files(2, 2, open_time=0.0, read_time=0.0).map(
        T.timed("parse", S.work(0.0)))
    tagged = T.tag(tf.data.Dataset.range(3)).map(T.timed("square", lambda x: x * x))
    assert sorted(int(v) for v, _ in ds) == [0, 1, 2, 3]
    assert [int(v) for v, _ in tagged] == [0, 1, 4]
    unwanted = sorted({c for c in converted
                       if c.startswith(("datakit.perf.synthetic", "datakit.perf.timeline.tag"))})
    assert not unwanted, f"AutoGraph converted {unwanted}: mark each do_not_convert"
    assert any(c.startswith(__name__) for c in converted), converted  # the learner's lambda
