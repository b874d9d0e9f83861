"""The repeat/batch and map/filter pictures are drawn from what really happened."""

from __future__ import annotations

import random

import matplotlib
import pytest

from datakit.glassbox.dataset import Dataset
from datakit.see import batches

matplotlib.use("Agg")


@pytest.mark.parametrize("n, count, size, drop", [
    pytest.param(10, 3, 7, False, id="batches-span-epochs"),
    pytest.param(10, 3, 7, True, id="drop-remainder"),
    pytest.param(5, 1, 5, True, id="one-exact-batch"),
    pytest.param(4, 2, 3, False, id="short-last-batch"),
    pytest.param(0, 3, 2, False, id="empty"),
])
def test_trace_batches_repeat_then_batch(n, count, size, drop):
    bt = batches.trace_batches(Dataset.range(n).repeat(count).batch(size, drop_remainder=drop))
    total = n * count
    assert [int(v) for v in bt.values] == [i for _ in range(count) for i in range(n)]
    assert bt.epochs == [e for e in range(count) for _ in range(n)]
    kept = total - total % size if drop else total
    assert bt.batch_of[:kept] == [i // size for i in range(kept)]
    assert bt.batch_of[kept:] == [None] * (total - kept)


def test_trace_batches_batch_then_repeat_cuts_each_epoch():
    bt = batches.trace_batches(Dataset.range(10).batch(7).repeat(3))
    assert bt.epochs == [e for e in range(3) for _ in range(10)]
    # each epoch has its own short batch: batches never cross epochs
    for b in set(bt.batch_of):
        assert len({e for e, x in zip(bt.epochs, bt.batch_of, strict=False) if x == b}) == 1
    assert max(bt.batch_of) == 5


def test_trace_batches_matches_the_glass_box_output_on_random_pipelines():
    rng = random.Random(7)
    for _ in range(50):
        n, count, size = rng.randrange(0, 9), rng.randrange(1, 4), rng.randrange(1, 6)
        ds = Dataset.range(n).map(lambda x: x * 3).repeat(count).filter(lambda x: x % 2 == 0)
        ds = ds.batch(size, drop_remainder=rng.random() < 0.5)
        bt = batches.trace_batches(ds)
        rebuilt = {}
        for v, b in zip(bt.values, bt.batch_of, strict=False):
            if b is not None:
                rebuilt.setdefault(b, []).append(int(v))
        assert [rebuilt[b] for b in sorted(rebuilt)] == [x.tolist() for x in ds]


def test_trace_batches_needs_a_batch():
    with pytest.raises(ValueError, match="no batch"):
        batches.trace_batches(Dataset.range(3).repeat(2))


def test_trace_lineage_refuses_batch():
    with pytest.raises(ValueError, match="one-to-one"):
        batches.trace_lineage(Dataset.range(3).batch(2))


def test_plots_draw_one_cell_per_element():
    bt = batches.trace_batches(Dataset.range(10).repeat(3).batch(7, drop_remainder=True))
    ax = batches.plot_batches(bt)
    assert len(ax.patches) == 30
    lt = batches.trace_lineage(Dataset.range(6).filter(lambda x: x > 2).map(lambda x: -x))
    ax = batches.plot_lineage(lt)
    assert len(ax.patches) == 18
    assert [t.get_text() for t in ax.texts if t.get_text().startswith("-")] == ["-3", "-4", "-5"]
