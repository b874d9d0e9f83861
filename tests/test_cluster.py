"""A real tf.data service on loopback: what each processing mode delivers, what a dead worker
costs, and that nothing the cluster started outlives it.

One cluster (a dispatcher and 2 workers) serves the whole module, the tests of a dead worker
and a dead dispatcher included (each server loads TensorFlow's server library alone: about
half a CPU second to start); the tests that check clean-up when starting is interrupted or
the parent is killed start their own 1-worker clusters.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pytest
import tensorflow as tf

from datakit import cluster as C
from datakit.cluster import local as cluster_local
from datakit.cluster.measure import check_dispatcher
from datakit.cluster.process import HOST

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
                if s.connect_ex((HOST, port)) == 0:
                    listening.append(port)
        if not alive and not listening:
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def cluster():
    """The module's cluster; it leaves its with-block by an exception, then must be gone, and
    a trainer still reading from it must get an error rather than wait forever."""
    with pytest.raises(RuntimeError, match="end of the module"):
        with C.LocalCluster(2, static_sharding=True) as c:
            yield c
            pids, ports = c.pids(), c.ports()
            assert len(pids) == 3 and len(ports) == 3
            ds = C.sleepy_range(400, 0.05).apply(C.distribute("distributed_epoch", c.target))
            reading = C.Trainer(ds, pause_after=3)
            assert reading.paused.wait(60)
            reading.resume()
            raise RuntimeError("end of the module")
    assert gone(pids, ports), "an exception in the with-block left a process or a port behind"
    with pytest.raises(RuntimeError, match="LocalCluster it read from was stopped"):
        reading.join(30)


def served(cluster, dataset, mode, **kwargs):
    """What one trainer received, sorted, by worker: ``[[worker 0's], [worker 1's]]``."""
    return [sorted(v) for v in C.measure_delivery(cluster, dataset, mode, **kwargs).values()]


@pytest.mark.timeout(240)  # includes starting the module's cluster
def test_distributed_epoch_delivers_each_element_exactly_once(cluster):
    rows = C.measure_delivery(cluster, tf.data.Dataset.range(N), "distributed_epoch")
    assert list(rows) == ["worker 0", "worker 1"]
    assert C.tally(rows["worker 0"] + rows["worker 1"], range(N)).exactly_once


@pytest.mark.timeout(60)
def test_parallel_epochs_gives_a_full_pass_per_worker(cluster):
    assert served(cluster, tf.data.Dataset.range(N), "parallel_epochs") == [list(range(N))] * 2


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", [pytest.param(SP.DATA, id="DATA"),
                                    pytest.param(SP.FILE_OR_DATA, id="FILE_OR_DATA")])
def test_static_data_sharding_gives_worker_i_the_elements_i_mod_2(cluster, policy):
    assert served(cluster, tf.data.Dataset.range(N), policy) == [list(range(0, N, 2)),
                                                                 list(range(1, N, 2))]


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
def test_a_killed_worker_stalls_the_epoch_until_restarted_then_loses_or_repeats(cluster):
    """Measured (TF 2.21): without the worker the epoch does not end; once it is back on its
    address the epoch ends. In distributed_epoch nothing came twice, the dead worker's
    in-flight elements may be lost (0 to a few); in parallel_epochs the restarted worker
    sends its whole pass again, and measure_delivery says so. One kill and one restart (a
    worker's start is a TensorFlow import) serve both epochs, read at the same time."""
    n = 200
    ds = C.sleepy_range(n, 0.01).apply(
        tf.data.experimental.service.distribute("distributed_epoch", cluster.target))
    trainer = C.Trainer(ds, pause_after=n // 4)
    assert trainer.paused.wait(60) and len(trainer.received) == n // 4

    def kill_then_restart():
        # Once the parallel_epochs epoch has delivered N // 2 elements (a timer from the
        # start of the test fired before the epoch began on a loaded machine: then nothing
        # came twice).
        with pytest.warns(RuntimeWarning, match="worker 0 is dead and will not be restarted"):
            cluster.kill_worker(0, restart=False)
        trainer.resume()
        assert not trainer.done.wait(3), "the epoch ended without one of its workers"
        assert cluster.restarts == 0  # restart=False: the supervisor left it dead
        cluster.kill_worker(0, restart=True)  # already dead: now the supervisor restarts it

    with pytest.warns(RuntimeWarning, match="restart.*arrived twice"):
        rows = C.measure_delivery(cluster, C.sleepy_range(N, 0.05), "parallel_epochs",
                                  pause_after=N // 2, on_pause=kill_then_restart)
    assert C.tally(rows["worker 0"], range(N)).duplicated   # what the warning is about
    t = C.tally(trainer.join(120), range(n))
    assert cluster.restarts == 1
    assert t.at_most_once and len(t.missing) <= 20, t
    cluster.wait_workers()
    parts = served(cluster, tf.data.Dataset.range(N), "distributed_epoch")  # serves again
    assert sorted(parts[0] + parts[1]) == list(range(N))


@pytest.mark.timeout(60)
def test_trainer_pauses_at_exactly_k_elements_and_reports_errors():
    trainer = C.Trainer(tf.data.Dataset.range(10), pause_after=4)
    assert trainer.paused.wait(30) and trainer.received == [0, 1, 2, 3]
    assert trainer.join(30) == list(range(10))
    bad = C.Trainer(tf.data.Dataset.range(3).map(
        lambda x: tf.debugging.check_numerics(1 / tf.cast(x - 1, tf.float32), "x == 1")))
    with pytest.raises(tf.errors.InvalidArgumentError):
        bad.join(30)


@pytest.mark.timeout(60)
def test_ctrl_c_while_the_cluster_starts_stops_what_had_started():
    c = C.LocalCluster(1)
    # Ctrl-C as a terminal delivers it (a test runner started in the background ignores it)
    terminal = signal.signal(signal.SIGINT, signal.default_int_handler)

    def ctrl_c_once_the_dispatcher_runs():  # before it serves: it takes a Python's start
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (c.dispatcher is None or not c.dispatcher.pids):
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C

    timer = threading.Thread(target=ctrl_c_once_the_dispatcher_runs)
    timer.start()
    started = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with c:
                started.append(True)
                time.sleep(30)
    finally:
        timer.join()
        signal.signal(signal.SIGINT, terminal)
    assert not started, "the cluster had started before the Ctrl-C: it interrupted no start"
    assert c.dispatcher.pids and gone(c.dispatcher.pids, c.ports())
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
    with pytest.raises(TypeError, match="pass an int"):
        C.LocalCluster(2.0)
    with pytest.raises(ValueError, match="fault_tolerant=True"):
        C.LocalCluster(1, work_dir="somewhere")
    with pytest.raises(ValueError, match="static sharding"):
        C.LocalCluster(1, static_sharding=True).add_worker()
    for name, value, error in [("worker_timeout", float("nan"), ValueError),
                               ("worker_timeout", "5", TypeError),
                               ("start_timeout", -5, ValueError),
                               ("start_timeout", float("inf"), ValueError)]:
        with pytest.raises(error, match=f"{name}={value!r}: pass a"):
            C.LocalCluster(1, **{name: value})


def test_the_measuring_helpers_name_a_bad_argument(tmp_path):
    """#47: a file as work_dir was taken; the others failed on Python's own message."""
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(NotADirectoryError, match="work_dir=.*f.txt is a file"):
        C.LocalCluster(1, fault_tolerant=True, work_dir=str(tmp_path / "f.txt"))
    from datakit.cluster import measure
    with pytest.raises(TypeError, match="service=5050 must be a str"):
        measure.check_dispatcher(5050, timeout=1)
    with pytest.raises(TypeError, match="tally\\(\\): received must be the elements"):
        measure.tally(5, [1, 2])
    with pytest.raises(ValueError, match="read_concurrently\\(\\): timeout=-1.0 is invalid"):
        measure.read_concurrently([tf.data.Dataset.range(2)], timeout=-1)


@pytest.mark.timeout(60)
def test_the_servers_listen_where_the_docstring_says(cluster):
    # TensorFlow 2.21 gives its tf.data servers no bind address (server_lib.cc listens on
    # every interface): the kit documents it rather than claim loopback. Read the listening
    # sockets; if TensorFlow ever binds loopback, this fails and the docstring must change.
    listening = {}
    for pid in cluster.pids():
        for conn in psutil.Process(pid).net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port in cluster.ports():
                listening[conn.laddr.port] = conn.laddr.ip
    assert sorted(listening) == sorted(cluster.ports()), listening
    assert set(listening.values()) <= {"::", "0.0.0.0"}, listening
    assert "every interface" in cluster_local.__doc__


def test_a_worker_index_out_of_range_is_named(cluster):
    for call in (cluster.kill_worker, cluster.restart_worker):
        with pytest.raises(ValueError, match="worker 5: this cluster has 2 worker"):
            call(5)


def test_measure_delivery_takes_its_pause_point_and_action_together(cluster):
    for kwargs in ({"pause_after": 3}, {"on_pause": print}):
        with pytest.raises(ValueError, match="pause_after and on_pause together"):
            C.measure_delivery(cluster, tf.data.Dataset.range(3), "parallel_epochs", **kwargs)


def test_a_wrong_dispatcher_address_is_an_error_not_a_hang():
    port = C.free_port()
    with pytest.raises(ConnectionError, match=f"no tf.data service dispatcher answers at "
                                              f"127.0.0.1:{port}"):
        tf.data.Dataset.range(3).apply(C.distribute("distributed_epoch",
                                                    f"grpc://127.0.0.1:{port}", timeout=1))


@pytest.mark.timeout(60)
def test_a_port_where_another_program_listens_is_an_error_not_a_hang(cluster):
    """An open port is not a dispatcher: TensorFlow waited forever on a plain TCP listener
    and on a worker's port; both are refused, naming the address."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)   # accepts connections (in the kernel), never speaks gRPC
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(ConnectionError, match=f"no tf.data service dispatcher answers at "
                                                  f"{address} .*after 1 s"):
            check_dispatcher(f"grpc://{address}", timeout=1)
    worker = cluster.worker_addresses[0]
    with pytest.raises(ConnectionError, match=f"answers at {worker} .*not a tf.data service "
                                              "dispatcher"):
        tf.data.Dataset.range(3).apply(C.distribute("distributed_epoch", f"grpc://{worker}",
                                                    timeout=30))   # refused at once


@pytest.mark.timeout(60)
def test_the_worker_command_says_it_waits_then_gives_up():
    port = C.free_port()
    run = subprocess.run([sys.executable, "-m", "datakit.cluster", "worker", "--dispatcher",
                          f"127.0.0.1:{port}", "--port", str(C.free_port()),
                          "--dispatcher-timeout", "2"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1
    first = run.stdout.splitlines()[0]  # said at once: what it waits for, where, how long
    assert f"waiting for the dispatcher at 127.0.0.1:{port}" in first
    assert "gives up after 2 s (--dispatcher-timeout)" in first
    assert f"no dispatcher answered at 127.0.0.1:{port} in 2 s" in run.stderr


@pytest.mark.parametrize("timeout", [float("nan"), -1, 0, True])
def test_a_dispatcher_wait_that_could_not_end_or_has_ended_is_refused(timeout):
    error = TypeError if timeout is True else ValueError
    with pytest.raises(error, match="timeout"):  # nan never passes a deadline: it waited forever
        check_dispatcher(f"127.0.0.1:{C.free_port()}", timeout=timeout)


@pytest.mark.parametrize("args, said", [
    (["dispatcher", "--port", "99999"], "argument --port: '99999' is not a port"),
    (["worker", "--dispatcher", "127.0.0.1", "--port", "5999"],
     "argument --dispatcher: '127.0.0.1': pass HOST:PORT"),  # was tried as :443 until timeout
    (["worker", "--dispatcher", "127.0.0.1:5998", "--port", "5999", "--dispatcher-timeout",
      "nan"], "argument --dispatcher-timeout: 'nan': pass a number of seconds > 0"),
])
def test_the_commands_refuse_a_bad_port_address_or_timeout_by_name(args, said):
    run = subprocess.run([sys.executable, "-m", "datakit.cluster", *args], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and said in run.stderr and "Traceback" not in run.stderr


@pytest.mark.timeout(60)
def test_a_port_in_use_is_named():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "datakit.cluster", "dispatcher", "--port",
                              str(port)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert f"port {port} is already in use" in run.stderr and "another --port" in run.stderr


@pytest.mark.timeout(240)
def test_trainers_of_a_dead_dispatcher_get_an_error_and_a_restarted_one_serves(cluster):
    """On the module's cluster, the last of its tests to use it (its dispatcher is a new
    one after this). A trainer of a stopped cluster: checked as the module's cluster stops
    (the fixture), where this test's own cluster (two more servers to start) checked it."""
    ds = C.sleepy_range(400, 0.05).apply(C.distribute("distributed_epoch", cluster.target))
    reading = C.Trainer(ds, pause_after=3)
    assert reading.paused.wait(60)
    cluster.kill_dispatcher(restart=False)
    reading.resume()
    with pytest.raises(RuntimeError, match="the dispatcher died and is not restarted"):
        reading.join(30)
    cluster.restart_dispatcher()
    parts = served(cluster, tf.data.Dataset.range(N), "distributed_epoch")  # serves again
    assert sorted(parts[0] + parts[1]) == list(range(N))


def test_tally_and_plot_delivery():
    t = C.tally([3, 1, 1, 7], expected=range(4))
    assert (t.delivered, t.distinct, t.missing, t.duplicated, t.unexpected) == (
        4, 3, [0, 2], [1], [7])
    assert not t.at_most_once
    ax = C.plot_delivery({"trainer A": [0, 1, 1], "trainer B": [2]}, 4)
    assert ax.get_title() and ax.get_xlabel() == "element"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["trainer A", "trainer B"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["1x", "2x", "never"]
    assert len(ax.patches) == 0 and len(ax.get_images()) == 1  # only the counts are drawn
    assert all(float(x).is_integer() for x in ax.get_xticks())  # elements are whole numbers


def test_plot_scaling_draws_each_pipeline_and_its_ideal():
    ax = C.plot_scaling([1, 2, 3], {"sleep": [10, 19, 27], "jpeg": [100, 101, 99]})
    assert ax.get_xlabel() == "workers" and ax.get_ylabel().startswith("elements / s")
    assert ax.get_title() and ax.get_yscale() == "log"  # pipelines far apart stay readable
    ideal = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert [list(line.get_ydata()) for line in ideal] == [[10, 20, 30], [100, 200, 300]]


@pytest.mark.timeout(60)
def test_the_command_line_offers_both_roles():
    run = subprocess.run([sys.executable, "-m", "datakit.cluster", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "{dispatcher,worker}" in run.stdout
    run = subprocess.run([sys.executable, "-m", "datakit.cluster", "worker", "--port", "1"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--dispatcher" in run.stderr


@pytest.mark.timeout(60)
def test_a_refused_command_answers_before_tensorflow_loads():
    """``python -m datakit.cluster`` imports TensorFlow (seconds of start) only once its
    arguments and port passed: a typo or ``--help`` answers at once."""
    code = textwrap.dedent("""
        import runpy, sys
        sys.argv = ["datakit.cluster", "dispatcher", "--port", "99999"]
        try:
            runpy.run_module("datakit.cluster", run_name="__main__")
        except SystemExit as e:
            print(e.code, "tensorflow" in sys.modules)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert run.stdout.split() == ["2", "False"], run.stderr[-2000:]


@pytest.mark.timeout(120)
def test_a_server_process_loads_the_server_library_alone_and_still_serves():
    """What ``python -m datakit.cluster`` loads once its arguments pass (servers_alone):
    TensorFlow's server library without TensorFlow's Python API; a dispatcher and a worker
    started there run a trainer's graph. (The module's cluster runs on such servers: every
    test above, the py_function refused in TensorFlow's own words included.)"""
    code = textwrap.dedent("""
        import sys, time
        from datakit.cluster.serve import servers_alone
        s = servers_alone()
        d = s.DispatchServer()
        w = s.WorkerServer(s.WorkerConfig(dispatcher_address=d.target.split("://")[1]))
        api = [m for m in ("tensorflow.python.data.ops.dataset_ops",
                           "keras", "jax") if m in sys.modules]
        print(d.target, *api, flush=True)
        time.sleep(100)
    """)
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        said = server.stdout.readline().split()
        assert said and said[0].startswith("grpc://localhost:"), said
        assert said[1:] == [], f"TensorFlow's Python API was loaded: {said[1:]}"
        ds = tf.data.Dataset.range(4).map(lambda x: x * 2)
        got = ds.apply(tf.data.experimental.service.distribute("parallel_epochs", said[0]))
        assert sorted(int(x) for x in got) == [0, 2, 4, 6]
    finally:
        server.kill()
        server.wait()
