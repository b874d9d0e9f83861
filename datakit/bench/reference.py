"""The benchmarks' defaults: the reference 3D CNN and a generated set of videos, made once.

>>> model = reference_model(clip_len=4, size=16)
>>> tuple(model.inputs[0].shape), model.inputs[0].dtype, tuple(model.outputs[0].shape)
((None, 4, 16, 16, 3), 'uint8', (None, 2))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from datakit.core.arguments import check_count, check_seed
from datakit.core.made_once import make_folder_once

__all__ = ["reference_model", "bench_videos"]


def reference_model(clip_len: int = 16, size: int = 112, classes: int = 2) -> Any:
    """A small 3D CNN, compiled: ``uint8`` clips in, ``Rescaling(1/255)`` on the device, three
    Conv3D blocks, global pooling, a softmax (the layers of ``benchmarks/gpu_step.py``)."""
    import keras
    from keras import layers
    model = keras.Sequential([
        keras.Input((clip_len, size, size, 3), dtype="uint8"),
        layers.Rescaling(1 / 255),
        layers.Conv3D(16, 3, padding="same", activation="relu"),
        layers.MaxPool3D((1, 2, 2)),
        layers.Conv3D(32, 3, padding="same", activation="relu"),
        layers.MaxPool3D(2),
        layers.Conv3D(64, 3, padding="same", activation="relu"),
        layers.GlobalAveragePooling3D(),
        layers.Dense(classes, activation="softmax"),
    ], name="small_3d_cnn")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def _write(folder: Path, n: int, seconds: int, width: int, height: int, seed: int) -> list:
    from datakit.readers.video.synthetic.encoded import write_video
    paths = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        # a blocky seeded texture that pans, and a bright square that moves across it
        tex = rng.integers(0, 256, (height // 8 + 1, width // 8 + 1, 3), dtype=np.uint8)
        tex = np.kron(tex, np.ones((8, 8, 1), np.uint8))[:height, :width]
        dx, dy = (int(d) for d in rng.integers(-3, 4, 2))
        frames = np.empty((seconds * 30, height, width, 3), np.uint8)
        for t in range(len(frames)):
            f = np.roll(tex, (dy * t, dx * t), axis=(0, 1))
            y, x = (t * 2) % (height - 16), (t * 3) % (width - 16)
            f[y:y + 16, x:x + 16] = 255
            frames[t] = f
        paths.append(write_video(frames, folder / f"class{i % 2}" / f"video{i:02d}.mp4",
                                 fps=30, gop=250))
    return paths


def bench_videos(folder: str | Path, n: int = 12, seconds: int = 20,
                 size: tuple[int, int] = (320, 240), *, seed: int = 0) -> Path:
    """``n`` seeded H.264 videos (30 fps, a keyframe every 250 frames) of ``size`` (width,
    height) in two class folders of ``folder``, made once; returns ``folder``."""
    for name, value in (("n", n), ("seconds", seconds), ("size[0]", size[0]),
                        ("size[1]", size[1])):
        check_count(name, value, 32 if name.startswith("size") else 1)
    check_seed(seed)
    w, h = size
    recipe = dict(n=n, seconds=seconds, width=w, height=h, seed=seed)
    make_folder_once(folder, lambda tmp: _write(tmp, n, seconds, w, h, seed),
                     recipe={"maker": "bench_videos", **recipe})
    return Path(folder)
