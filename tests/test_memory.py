"""datakit.perf.memory: RSS now and at its peak, sampled in the background, during fit()."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import tensorflow as tf
from video_cases import SIZE

from datakit.perf import memory
from datakit.readers import video

matplotlib.use("Agg")


@pytest.mark.timeout(60)
def test_rss_sampler_sees_a_big_allocation():
    sampler = memory.RssSampler(0.001)
    sampler.start()
    before = memory.rss_bytes()
    block = np.ones(64 * 2**20, np.uint8)  # 64 MB, touched
    for _ in range(3000):  # up to ~30 s on a loaded machine
        if sampler.peak >= before + 32 * 2**20:
            break
        sampler.stop.wait(0.01)
    sampler.stop.set()
    sampler.join(timeout=10)
    assert sampler.peak >= before + 32 * 2**20 and block[-1] == 1


@pytest.mark.timeout(120)
def test_memory_logger_records_once_per_step():
    model = video.small_video_model(4, SIZE)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x = np.zeros((6, 4, SIZE, SIZE, 3), np.uint8)
    ds = tf.data.Dataset.from_tensor_slices((x, np.arange(6) % 4)).batch(2)  # 3 steps
    logger = memory.memory_logger()
    model.fit(ds, epochs=2, callbacks=[logger], shuffle=False, verbose=0)
    assert len(logger.seconds) == len(logger.rss) == 1 + 2 * 3  # a start, then each step
    assert logger.seconds[0] == 0 and logger.seconds == sorted(logger.seconds)
    assert min(logger.rss) > 0


def test_rss_plot_returns_its_axes():
    ax = memory.plot_rss_over_time([0.0, 1.0, 2.0], [1e8, 2e8, 2e8])
    assert ax.lines[0].get_ydata().tolist() == [100.0, 200.0, 200.0]
    assert ax.get_ylim()[0] == 0


@pytest.mark.parametrize("every, error", [(0, ValueError), (-1.0, ValueError),
                                          (float("nan"), ValueError), ("0.1", TypeError)])
def test_sampler_refuses_an_interval_that_is_not_a_pause(every, error):
    with pytest.raises(error, match="sample_every"):
        memory.RssSampler(every)


def test_rss_growth_compares_the_slopes_of_loading_and_streaming():
    # in memory: 1 MB of RSS per MB loaded; the stream: 5 MB at start-up, then flat
    loaded = [1e6 * k for k in range(1, 11)]
    rss = [100e6 + b for b in loaded]
    streamed = [200e6] + [205e6] * 40  # 4 epochs of 10 steps, 1 MB a step
    growth = memory.compare_rss_growth(loaded, rss, 100e6, streamed, batch_bytes=1_000_000,
                                       steps_per_epoch=10, predicted_bytes=2e6)
    assert abs(growth.in_memory_slope - 1) < 1e-9 and abs(growth.streamed_slope) < 1e-9
    assert (growth.first_epoch_mb, growth.later_mb, growth.later_epochs) == (5, 0, 3)
    assert growth.frames_ratio == 4  # 40 MB streamed, 10 MB held
    assert str(growth).startswith("stream: +5 MB in the first epoch, +0 MB in the 3 after")


@pytest.mark.parametrize("leak_fraction, verdict", [(0.0, "flat"), (0.05, "flat"),
                                                    (0.2, "grows"), (0.5, "grows")])
def test_the_streaming_verdict_reads_a_leak_from_the_floor_of_each_epoch(leak_fraction, verdict):
    # 24 epochs of 8 steps; the stages hold 2.88 MB (09's prediction); the limit: a tenth
    predicted, steps = 2.88e6, 8
    jitter = np.random.default_rng(0).normal(0, 0.05e6, 24 * steps + 1)  # 50 kB a step
    rss = np.array([200e6] + [220e6] * (24 * steps)) + jitter  # start-up, then flat
    rss += leak_fraction * predicted / steps * np.arange(24 * steps + 1)  # the leak
    growth = memory.compare_rss_growth([1e6, 2e6], [1e6, 2e6], 0, list(rss),
                                       batch_bytes=400_000, steps_per_epoch=steps, plot=False)
    assert abs(growth.floor_mb_per_epoch - leak_fraction * 2.88) < 0.05, growth
    assert growth.verdict(predicted / 10) == verdict
    assert "floor" in str(growth) and "MB per epoch" in str(growth)


def test_the_verdict_needs_a_leak_size():
    growth = memory.RssGrowth(1.0, 0.0, 5.0, 0.0, 3, 4.0, floor_mb_per_epoch=0.2)
    with pytest.raises(ValueError, match="leak_bytes_per_epoch=0.0 is invalid"):
        growth.verdict(0)


def test_rss_growth_needs_two_epochs_of_steps():
    with pytest.raises(ValueError, match="two epochs"):
        memory.compare_rss_growth([1e6, 2e6], [1e6, 2e6], 0, [1e6] * 10, batch_bytes=1,
                                  steps_per_epoch=10, plot=False)


@pytest.mark.parametrize("kwargs, error, match", [
    # an empty log: a message, not an IndexError from reading its first value
    (dict(streamed_rss=[]), ValueError, "0 steps streamed.*two epochs"),
    (dict(steps_per_epoch=0), ValueError, r"steps_per_epoch=0 is invalid: pass the stream's"),
    (dict(steps_per_epoch=2.5), TypeError, "steps_per_epoch must be an int"),
    (dict(batch_bytes=0), ValueError, "batch_bytes=0 is invalid"),
    (dict(loaded_rss=[1e6, 2e6, 3e6]), ValueError,
     "loaded_bytes holds 2 values, loaded_rss 3: pass one of each per item loaded"),
    (dict(streamed_rss={1e6, 2e6}), TypeError, "streamed_rss must be a list"),
])
def test_rss_growth_checks_its_arguments_first(kwargs, error, match):
    args = dict(loaded_bytes=[1e6, 2e6], loaded_rss=[1e6, 2e6], rss_before=0,
                streamed_rss=[1e6] * 30, batch_bytes=1, steps_per_epoch=10, plot=False)
    with pytest.raises(error, match=match):
        memory.compare_rss_growth(**{**args, **kwargs})
