"""Measuring pipelines: timelines, throughput, memory, synthetic sources, and the tuner.

:mod:`~datakit.perf.bench` (``benchmark``), :mod:`~datakit.perf.throughput`
(``measure``, ``consumer_wait``), :mod:`~datakit.perf.timeline` and the stamps it reads
(:mod:`~datakit.perf.stamps`), :mod:`~datakit.perf.memory` (resident memory),
:mod:`~datakit.perf.synthetic` (sources that sleep a set time),
:mod:`~datakit.perf.shuffle_runs` (real shuffles' orders), :mod:`~datakit.perf.chain`
(any pipeline's chain of stages) and :mod:`~datakit.perf.tune` (the knob search). Import
the module you measure with: the package re-exports nothing (``datakit.benchmark`` is
``bench.benchmark``).
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
