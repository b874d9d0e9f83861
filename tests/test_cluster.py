"""A real tf.data service on loopback: what each processing mode delivers, what a dead worker
costs, and that nothing the cluster started outlives it.

One cluster (a dispatcher and 2 workers, ~20 s to start) serves the whole module; the tests
that check clean-up start their own 1-worker clusters.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
import tensorflow as tf

from datakit import cluster as C

SP = tf.data.experimental.service.ShardingPolicy
N = 40


def gone(pids, ports, within=10.0) -> bool:
    """No process of ``pids`` runs and nothing listens on ``ports`` (waiting up to ``within`` s)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        listening = []
        for port in ports:
            with socket.socket() as s:
                if s.connect_ex((C.HOST, port)) == 0:
                    listening.append(port)
        if not alive and not listening:
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def cluster():
    with C.LocalCluster(2, static_sharding=True) as c:
        yield c
        pids, ports = c.pids(), c.ports()
    assert gone(pids, ports), "the module's cluster left a process or a port behind"


def served(cluster, dataset, mode, **kwargs):
    """``(element, worker index)`` pairs a trainer receives from ``dataset`` run on the cluster."""
    ds = C.with_worker_pid(dataset).apply(
        tf.data.experimental.service.distribute(mode, cluster.target, **kwargs))
    return [(int(x), cluster.worker_index(int(p))) for x, p in ds.as_numpy_iterator()]


def per_worker(pairs, workers=2):
    return [sorted(x for x, w in pairs if w == i) for i in range(workers)]


@pytest.mark.timeout(240)  # includes starting the module's cluster
def test_distributed_epoch_delivers_each_element_exactly_once(cluster):
    pairs = served(cluster, tf.data.Dataset.range(N), "distributed_epoch")
    assert C.tally([x for x, _ in pairs], range(N)).exactly_once
    assert {w for _, w in pairs} <= {0, 1}


@pytest.mark.timeout(60)
def test_parallel_epochs_gives_a_full_pass_per_worker(cluster):
    pairs = served(cluster, tf.data.Dataset.range(N), "parallel_epochs")
    assert per_worker(pairs) == [list(range(N)), list(range(N))]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", [pytest.param(SP.DATA, id="DATA"),
                                    pytest.param(SP.FILE_OR_DATA, id="FILE_OR_DATA")])
def test_static_data_sharding_gives_worker_i_the_elements_i_mod_2(cluster, policy):
    pairs = served(cluster, tf.data.Dataset.range(N), policy)
    assert per_worker(pairs) == [list(range(0, N, 2)), list(range(1, N, 2))]


@pytest.mark.timeout(60)
def test_file_sharding_without_files_is_an_error(cluster):
    with pytest.raises(tf.errors.NotFoundError, match="unshardable source"):
        served(cluster, tf.data.Dataset.range(N), SP.FILE)


@pytest.mark.timeout(120)
def test_trainers_sharing_a_job_split_it_separate_jobs_each_get_all(cluster):
    def trainer(**kw):
        return tf.data.Dataset.range(N).apply(
            tf.data.experimental.service.distribute("distributed_epoch", cluster.target, **kw))

    a, b = C.read_concurrently([trainer(job_name="shared"), trainer(job_name="shared")])
    assert C.tally(a + b, range(N)).exactly_once
    a, b = C.read_concurrently([trainer(), trainer()])
    assert sorted(a) == sorted(b) == list(range(N))


@pytest.mark.timeout(60)
def test_a_py_function_cannot_run_on_a_worker(cluster):
    ds = tf.data.Dataset.range(3).map(lambda x: tf.py_function(lambda v: v, [x], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not find callback"):
        list(ds.apply(tf.data.experimental.service.distribute("distributed_epoch", cluster.target)))


@pytest.mark.timeout(180)
def test_a_killed_worker_restarted_on_its_address_costs_at_most_once(cluster):
    """Measured (TF 2.21): the epoch ends once the worker is back; nothing comes twice, the
    elements the dead worker held in flight may be lost (0 to a few)."""
    n = 200
    ds = C.with_worker_pid(C.sleepy_range(n, 0.01)).apply(
        tf.data.experimental.service.distribute("distributed_epoch", cluster.target))
    restarts, received = cluster.restarts, []
    for i, (x, _) in enumerate(ds.as_numpy_iterator()):
        received.append(int(x))
        if i == n // 4:
            cluster.kill_worker(0)
    t = C.tally(received, range(n))
    assert cluster.restarts == restarts + 1
    assert t.at_most_once and len(t.missing) <= 20, t
    cluster.wait_workers()
    assert sorted(served(cluster, tf.data.Dataset.range(N), "distributed_epoch")) != []


@pytest.mark.timeout(120)
def test_ctrl_c_inside_the_with_block_stops_every_process_and_port():
    with pytest.raises(KeyboardInterrupt):
        with C.LocalCluster(1) as c:
            pids, ports = c.pids(), c.ports()
            assert len(pids) == 2 and all(psutil.pid_exists(p) for p in pids)
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C
            time.sleep(30)
    assert gone(pids, ports)
    assert repr(c) == "LocalCluster(workers=1, stopped)"


@pytest.mark.timeout(120)
def test_servers_exit_when_the_process_that_started_them_is_killed():
    script = textwrap.dedent("""
        import time
        from datakit.cluster import LocalCluster
        c = LocalCluster(1).__enter__()
        print(*c.pids(), sep=",", flush=True)
        print(*c.ports(), sep=",", flush=True)
        time.sleep(120)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split(",")]
        ports = [int(p) for p in parent.stdout.readline().split(",")]
        parent.kill()  # like a notebook kernel restarted: no atexit, no __exit__
        assert gone(pids, ports, within=15)
    finally:
        parent.kill()
        parent.wait()


def test_arguments_are_checked_before_any_process_starts():
    with pytest.raises(ValueError, match="at least 1 worker"):
        C.LocalCluster(0)
    with pytest.raises(ValueError, match="fault_tolerant=True"):
        C.LocalCluster(1, work_dir="somewhere")
    with pytest.raises(ValueError, match="static sharding"):
        C.LocalCluster(1, static_sharding=True).add_worker()


def test_tally_and_plot_delivery():
    t = C.tally([3, 1, 1, 7], expected=range(4))
    assert (t.delivered, t.distinct, t.missing, t.duplicated, t.unexpected) == (4, 3, [0, 2], [1], [7])
    assert not t.at_most_once
    ax = C.plot_delivery({"trainer A": [0, 1, 1], "trainer B": [2]}, 4)
    assert ax.get_title() and ax.get_xlabel() == "element"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["trainer A", "trainer B"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["1x", "2x", "never"]
