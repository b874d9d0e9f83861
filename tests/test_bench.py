"""benchmark() returns sane, self-consistent fields (no wall-clock assertions)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from datakit.perf.bench import BenchResult, benchmark, count_elements


@pytest.mark.parametrize("n, batch, warmup", [
    pytest.param(100, 10, 1, id="whole-batches"), pytest.param(101, 10, 0, id="short-last-batch"),
    pytest.param(7, 3, 2, id="warmup-most")])
def test_counts_add_up(n, batch, warmup):
    r = benchmark(tf.data.Dataset.range(n).batch(batch), warmup=warmup, progress=False)
    batches = -(-n // batch)
    assert r.batches == batches - warmup
    skipped = min(warmup * batch, n)
    assert r.elements == n - skipped
    assert r.seconds > 0 and r.first_element_s >= 0
    assert r.elements_per_s == pytest.approx(r.elements / r.seconds)
    assert r.batches_per_s == pytest.approx(r.batches / r.seconds)
    assert r.peak_rss_mb >= r.rss_before_mb > 0
    assert r.peak_rss_growth_mb == pytest.approx(r.peak_rss_mb - r.rss_before_mb)


def test_steps_stops_early_even_on_an_endless_dataset():
    r = benchmark(tf.data.Dataset.range(5).repeat().batch(2), steps=4, warmup=1, progress=False)
    assert (r.batches, r.elements) == (4, 8)


def test_takes_any_iterable_and_dict_elements():
    batches = [{"x": np.zeros((4, 3)), "y": np.zeros(4)}] * 5
    r = benchmark(batches, warmup=0, progress=False)
    assert isinstance(r, BenchResult) and (r.batches, r.elements) == (5, 20)
    assert count_elements((np.zeros(7), np.zeros(2))) == 7


def test_memory_growth_is_seen():
    # A generator that holds on to 200 MB while it runs: the sampler must see the growth.
    def hog():
        keep = []
        for _ in range(4):
            keep.append(np.ones(50_000_000 // 8))
            yield np.zeros(1)
            import time
            time.sleep(0.05)
    r = benchmark(hog(), warmup=0, progress=False, sample_every=0.002)
    assert r.peak_rss_growth_mb > 100


def test_progress_bar_is_tqdm_on_stderr_and_off_with_progress_false(capsys):
    benchmark(tf.data.Dataset.range(20).batch(5), warmup=0, progress=True)
    err = capsys.readouterr().err
    assert "4/4" in err and "batch/s" in err  # tqdm's text bar (a widget in JupyterLab)
    benchmark(tf.data.Dataset.range(20).batch(5), warmup=0, progress=False)
    assert capsys.readouterr().err == ""


def test_bad_arguments_say_how_to_fix_the_call():
    ds = tf.data.Dataset.range(3)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        benchmark(ds, steps=0)
    with pytest.raises(ValueError, match="lower warmup"):
        benchmark(ds, warmup=5, progress=False)
    with pytest.raises(ValueError, match="repeats forever"):
        benchmark(ds.repeat())
    with pytest.raises(TypeError, match="iterable"):
        benchmark(3)
