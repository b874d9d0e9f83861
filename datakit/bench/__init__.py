"""Does my input keep my GPU busy? The benchmarks, on your own videos and your own model.

``python -m datakit.bench [FOLDER] [--model saved.keras]`` (:mod:`datakit.bench.command`)
measures, on the videos of ``FOLDER`` (default: a generated set) and the Keras model you
saved (default: the reference 3D CNN, :mod:`datakit.bench.reference`):

- each feed's clips per CPU second: the videos decoded by the direct reader and the same
  videos converted to shards once (:mod:`datakit.bench.per_core`);
- the model's appetite: its clips a second fed from memory, ``uint8`` in, at two batch
  sizes, and the share of time a GPU ran kernels (:mod:`datakit.bench.device`);
- the cores each feed needs to keep that appetite fed, and
  :func:`datakit.doctor.input_wait` of the model on each feed.
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.bench.command import main
    from datakit.bench.device import GpuSampler, appetite, device_idle
    from datakit.bench.per_core import cores_needed, per_core
    from datakit.bench.reference import bench_videos, reference_model

__all__ = lazy_face(__name__)
