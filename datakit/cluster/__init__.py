"""A real ``tf.data`` service on loopback: a dispatcher and workers as separate processes.

:class:`LocalCluster` starts them with ``python -m datakit.cluster`` (the
command you run on real machines, see :func:`main`), waits until each one
serves, and stops every process it started when the ``with`` block ends,
raises or is interrupted. Code written against ``cluster.target`` runs on a
real cluster by changing only the target. Measuring what a trainer receives
and drawing it live in :mod:`datakit.cluster.measure`; the command line in
:mod:`datakit.cluster.serve`.

    with LocalCluster(workers=2) as cluster:      # 3 processes, a few seconds to start
        ds = ds.apply(tf.data.experimental.service.distribute(
            "distributed_epoch", cluster.target))  # "grpc://127.0.0.1:PORT"

``datakit.cluster.distribute`` is the same call after checking that a
dispatcher answers at the address (TensorFlow's blocks forever when none does).

Arguments are checked before any process starts:

>>> LocalCluster(workers=0)
Traceback (most recent call last):
...
ValueError: workers=0: a cluster needs at least 1 worker
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.cluster.local import LocalCluster
    from datakit.cluster.measure import (
        Trainer,
        distribute,
        measure_delivery,
        plot_delivery,
        plot_scaling,
        read_concurrently,
        sleepy_range,
        tally,
        with_worker_pid,
    )
    from datakit.cluster.process import free_port
    from datakit.cluster.serve import main

__all__ = lazy_face(__name__)
