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
