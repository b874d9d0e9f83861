"""A real ``tf.data`` service on loopback: a dispatcher and workers as separate processes.

:class:`LocalCluster` starts them with ``python -m datakit.cluster`` (the
command you run on real machines, see :func:`main`), waits until each one
serves, and stops every process it started when the ``with`` block ends,
raises or is interrupted. Code written against ``cluster.target`` runs on a
real cluster by changing only the target. Measuring what a trainer receives
and drawing it live in :mod:`datakit.cluster.measure`; the command line in
:mod:`datakit.cluster.serve`.

    with LocalCluster(workers=2) as cluster:      # 3 processes, ~10-20 s to start
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

from datakit.core.faces import lazy_names

if TYPE_CHECKING:  # the real types of the names _HOME loads on first use
    from datakit.cluster.local import HOST, LocalCluster, free_port
    from datakit.cluster.measure import (
                                         Tally,
                                         Trainer,
                                         abandon_trainers,
                                         check_dispatcher,
                                         distribute,
                                         measure_delivery,
                                         plot_delivery,
                                         plot_scaling,
                                         read_concurrently,
                                         sleepy_range,
                                         tally,
                                         with_worker_pid,
    )
    from datakit.cluster.serve import main

__all__ = ["HOST", "LocalCluster", "free_port", "main", "sleepy_range", "with_worker_pid",
           "check_dispatcher", "distribute", "abandon_trainers", "Trainer", "read_concurrently",
           "measure_delivery", "Tally", "tally", "plot_delivery", "plot_scaling"]

#: Each re-exported name and the module it lives in (imported on first use).
_HOME = {
    "HOST": "local",
    "LocalCluster": "local",
    "free_port": "local",
    "main": "serve",
    "sleepy_range": "measure",
    "with_worker_pid": "measure",
    "check_dispatcher": "measure",
    "distribute": "measure",
    "abandon_trainers": "measure",
    "Trainer": "measure",
    "read_concurrently": "measure",
    "measure_delivery": "measure",
    "Tally": "measure",
    "tally": "measure",
    "plot_delivery": "measure",
    "plot_scaling": "measure",
}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
