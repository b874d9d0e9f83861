"""The stand-in decoder (datakit.perf.cpu_work.burn) against real decoding on this machine.

Notebook 23 teaches "is the input keeping up?" with a stand-in decoder. A sleeping one
flattered the input (sleeps overlap beyond the cores); the stand-in now spends CPU time.
Here it is set to cost what decoding a clip costs (measured: CPU seconds, which a loaded
machine stretches less than wall time), and its verdict is checked against the real
reader's for a model much faster than the decoding. (A model slower than decoding was
tried too: on a loaded 2-core machine the real reader's per-epoch restarts on a tiny
folder made its verdict a matter of load, so that case is not asserted.)
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from datakit.bench.reference import bench_videos
from datakit.doctor.input_wait import drained_alone, input_wait
from datakit.perf.cpu_work import burn
from datakit.readers.video import video_dataset_from_directory

pytestmark = pytest.mark.timeout(500)
CLIP, BATCH = (8, 32, 32, 3), 8


@pytest.fixture(scope="module")
def feeds(tmp_path_factory):
    folder = bench_videos(tmp_path_factory.mktemp("videos") / "set", n=2, seconds=2,
                          size=(320, 240))
    real = video_dataset_from_directory(folder, frame_size=CLIP[1:3], clip_len=CLIP[0],
                                        frame_step=2, batch_size=BATCH, seed=0, verbose=False,
                                        num_parallel_calls=1, decoder_threads=1)
    cpu_per_clip = drained_alone(real.repeat(), 6)[0] / BATCH
    rng = np.random.default_rng(0)
    clips = rng.integers(0, 256, (32, *CLIP), dtype=np.uint8)
    labels = rng.integers(0, 2, 32).astype("int32")
    decode = burn(cpu_per_clip)
    stand_in = (tf.data.Dataset.from_tensor_slices((clips, labels))
                .map(lambda c, y: (decode(c), y)).batch(BATCH).prefetch(1))
    return real.prefetch(1), stand_in, cpu_per_clip


def _model() -> keras.Model:
    """A model whose step (a few ms) is far shorter than decoding a batch, as on a GPU."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input(CLIP, dtype="uint8"), keras.layers.Rescaling(1 / 255),
                              keras.layers.Flatten(), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(2)])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_the_stand_in_costs_the_cpu_of_the_decoding_it_stands_for(feeds):
    _real, stand_in, cpu_per_clip = feeds
    cost = drained_alone(stand_in.repeat(), 6)[0] / BATCH
    assert 0.4 < cost / cpu_per_clip < 2.5, (cost, cpu_per_clip)


def test_the_stand_in_and_real_decoding_give_the_same_verdict(feeds):
    """Notebook 23's case: one decoder, a model that eats clips faster than it decodes them.
    Both say the model waits (the sleeping stand-in said it kept up with enough threads)."""
    real, stand_in, _ = feeds
    model = _model()
    got = {name: input_wait(model, ds, steps=8, warmup=2)
           for name, ds in (("real", real), ("stand-in", stand_in))}
    verdicts = {name: r.wait_share > 0.5 for name, r in got.items()}
    assert verdicts == {"real": True, "stand-in": True}, {n: str(r) for n, r in got.items()}
