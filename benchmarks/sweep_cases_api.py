"""Sweep cases (see sweep_bad_inputs.py): the glass box, the pictures' helpers (shuffle,
mixing, sampling, interleave), the doctor, perf, and the cluster's argument checks."""

from __future__ import annotations

import math

from benchmarks.sweep_bad_inputs import case, cli, resolve


def D():
    return resolve("glassbox", "Dataset")


def gb(ds):
    return [x if not hasattr(x, "tolist") else x.tolist() for x in ds]


# ------------------------------------------------------------------ glass box
@case("glassbox", "Dataset.range('5')", ("range", "str", "'5'"))
def gb_range_str(d):
    return gb(D().range("5"))


@case("glassbox", "Dataset.range(2.5)", ("range", "2.5", "float"))
def gb_range_float(d):
    return gb(D().range(2.5))


@case("glassbox", "Dataset.range(0, 10, 0) (step 0)", ("step",))
def gb_range_step_zero(d):
    return gb(D().range(0, 10, 0))


@case("glassbox", "batch(True)", ("batch_size",))
def gb_batch_bool(d):
    return gb(D().range(5).batch(True))


@case("glassbox", "shuffle(-2)", ("buffer_size",))
def gb_shuffle_negative(d):
    return gb(D().range(5).shuffle(-2, seed=0))


@case("glassbox", "shuffle(2.5)", ("buffer_size",))
def gb_shuffle_float(d):
    return gb(D().range(5).shuffle(2.5, seed=0))


@case("glassbox", "take(-5) (tf.data: any negative is all)", ("count",), either=True,
      ok=lambda got: got == [0, 1, 2, 3, 4])
def gb_take_negative(d):
    return gb(D().range(5).take(-5))


@case("glassbox", "skip('2')", ("count",))
def gb_skip_str(d):
    return gb(D().range(5).skip("2"))


@case("glassbox", "repeat(-2) (tf.data: any negative is endless)", ("count",), either=True,
      ok=lambda got: got == [0, 1, 2] * 3 + [0])
def gb_repeat_negative(d):
    return gb(D().range(3).repeat(-2).take(10))


@case("glassbox", "window(2, shift=0)", ("shift",))
def gb_window_shift_zero(d):
    return gb(D().range(5).window(2, shift=0))


@case("glassbox", "interleave(cycle_length=-3)", ("cycle_length",))
def gb_interleave_cycle_negative(d):
    return gb(D().range(3).interleave(lambda x: D().range(2), cycle_length=-3))


@case("glassbox", "interleave whose function returns a list", ("map_func", "dataset"))
def gb_interleave_list(d):
    return gb(D().range(3).interleave(lambda x: [x, x], cycle_length=2))


@case("glassbox", "map(5) (not callable)", ("map_func", "map()"))
def gb_map_not_callable(d):
    return gb(D().range(3).map(5))


@case("glassbox", "filter returning a string", ("predicate", "bool"))
def gb_filter_str(d):
    return gb(D().range(3).filter(lambda x: "yes"))


@case("glassbox", "from_tensor_slices of ragged lists", ("tensors", "ragged", "length"))
def gb_slices_ragged(d):
    return gb(D().from_tensor_slices([[1, 2], [3]]))


@case("glassbox", "from_tensor_slices of a scalar", ("scalar", "tensors"))
def gb_slices_scalar(d):
    return gb(D().from_tensor_slices(5))


@case("glassbox", "sample_from_datasets with 3 weights for 2 inputs", ("weights",))
def gb_sample_weights_len(d):
    return gb(D().sample_from_datasets([D().range(3), D().range(3)], weights=[0.3, 0.3, 0.4],
                                       seed=0))


@case("glassbox", "sample_from_datasets with a nan weight", ("weights",))
def gb_sample_weights_nan(d):
    return gb(D().sample_from_datasets([D().range(3), D().range(3)], weights=[math.nan, 1.0],
                                       seed=0))


@case("glassbox", "sample_from_datasets with weights all 0", ("weights",))
def gb_sample_weights_zero(d):
    return gb(D().sample_from_datasets([D().range(3), D().range(3)], weights=[0, 0], seed=0))


@case("glassbox", "sample_from_datasets(datasets=a set)", ("datasets",))
def gb_sample_set(d):
    return gb(D().sample_from_datasets({D().range(3), D().range(3)}, seed=0))


@case("glassbox", "choose_from_datasets with a -1 index", ("choice",))
def gb_choose_negative(d):
    return gb(D().choose_from_datasets([D().range(3), D().range(3)],
                                       D().from_iterable([0, -1, 1])))


@case("glassbox", "cache(filename=a folder)", ("cache", "sub", "filename"))
def gb_cache_folder(d):
    (d / "sub").mkdir()
    return gb(D().range(2).cache(str(d / "sub")))


@case("glassbox", "list_files of a pattern that matches nothing", ("nothing", "no file",
                                                                   "match"))
def gb_list_files_none(d):
    return gb(D().list_files(str(d / "*.csv")))


@case("glassbox", "trace(max_elements=-1)", ("max_elements",))
def gb_trace_negative(d):
    return D().range(3).trace(max_elements=-1)


# ------------------------------------------------------------------ pictures' helpers
@case("see", "shuffled_orders(10**5, 10, runs=10**5): 80 GB of output",
      ("runs", "GB", "memory"))
def see_orders_huge(d):
    return resolve("mixing", "shuffled_orders")(10**5, 10, runs=10**5)


@case("see", "shuffled_orders(10, 3, seed=2**64)", ("seed",))
def see_orders_seed_big(d):
    return resolve("mixing", "shuffled_orders")(10, 3, runs=2, seed=2**64)


@case("see", "measure_mixing(buffer_sizes=[0, 10])", ("buffer_size",))
def see_measure_zero(d):
    return resolve("mixing", "measure_mixing")(20, buffer_sizes=[0, 10], runs=5)


@case("see", "measure_mixing(buffer_sizes=a generator)", ("buffer_sizes",),
      ok=lambda got: list(got.buffer_sizes) == [2, 5], either=True)
def see_measure_gen(d):
    return resolve("mixing", "measure_mixing")(20, buffer_sizes=(b for b in (2, 5)), runs=5)


@case("see", "measure_mixing(buffer_sizes={5, 2}) (a set)", ("buffer_sizes",))
def see_measure_set(d):
    return resolve("mixing", "measure_mixing")(20, buffer_sizes={5, 2}, runs=5)


@case("see", "mixing_stats of an empty array", ("orders",))
def see_stats_empty(d):
    import numpy as np
    return resolve("mixing", "mixing_stats")(np.zeros((0, 0), dtype=int))


@case("see", "mixing_stats(orders, labels of the wrong length, batch_size=2)", ("labels",))
def see_stats_labels_len(d):
    import numpy as np
    return resolve("mixing", "mixing_stats")(np.array([[0, 1, 2, 3]]), labels=[0, 1],
                                             batch_size=2)


@case("see", "label_batches(batch_size=0)", ("batch_size",))
def see_label_batches_zero(d):
    return resolve("mixing", "label_batches")([0, 1, 0, 1], 2, 0)


@case("see", "label_batches(labels with a nan)", ("labels",))
def see_label_batches_nan(d):
    return resolve("mixing", "label_batches")([0, 1, math.nan, 1], 2, 2)


@case("see", "epoch_order(epochs=0)", ("epochs",))
def see_epoch_zero(d):
    return resolve("mixing", "epoch_order")(10, 0, 3)


@case("see", "buffer_bytes(spec, buffer_size=-1)", ("buffer_size",))
def see_buffer_bytes_negative(d):
    import tensorflow as tf
    return resolve("mixing", "buffer_bytes")(tf.TensorSpec([4], tf.float32), -1)


@case("see", "trace_buffer(buffer_size=0)", ("buffer_size",))
def see_trace_buffer_zero(d):
    import tensorflow as tf
    return resolve("see", "trace_buffer")(tf.data.Dataset.range(5), 0, seed=0)


@case("see", "trace_buffer(epoch_size=-1)", ("epoch_size",))
def see_trace_buffer_epoch(d):
    import tensorflow as tf
    return resolve("see", "trace_buffer")(tf.data.Dataset.range(5), 2, seed=0, epoch_size=-1)


@case("see", "trace_sample(datasets=[]) (none)", ("datasets",))
def see_sample_none(d):
    return resolve("see", "trace_sample")([], seed=0)


@case("see", "resampled_labels(target_dist summing to 2)", ("target_dist",))
def see_resample_sum(d):
    return resolve("see", "resampled_labels")([0, 1, 0, 1], [1.0, 1.0], seed=0)


@case("see", "resampled_labels(labels=[0, 5], target_dist of 2 classes)", ("labels",))
def see_resample_label_range(d):
    return resolve("see", "resampled_labels")([0, 5, 0, 5], [0.5, 0.5], seed=0)


@case("see", "source_counts(batch_size=0)", ("batch_size",))
def see_source_counts_zero(d):
    return resolve("see", "source_counts")([0, 1, 0, 1], 0)


@case("see", "trace_sources of a missing file", ("gone.txt",))
def see_sources_missing(d):
    return resolve("see", "trace_sources")([str(d / "gone.txt")], cycle_length=1)


@case("see", "trace_sources(cycle_length=0)", ("cycle_length",))
def see_sources_cycle_zero(d):
    (d / "a.txt").write_text("h\n1\n2\n")
    return resolve("see", "trace_sources")([str(d / "a.txt")], cycle_length=0)


@case("see", "trace_sources of a set of files", ("files", "set"))
def see_sources_set(d):
    for n in "ab":
        (d / f"{n}.txt").write_text("h\n1\n2\n")
    return resolve("see", "trace_sources")({str(d / "a.txt"), str(d / "b.txt")},
                                           cycle_length=1)


# ------------------------------------------------------------------ the doctor
def _pipe():
    import tensorflow as tf
    return tf.data.Dataset.range(200).map(lambda x: x * 2).batch(8)


@case("doctor", "diagnose of a list, not a dataset", ("dataset",))
def doc_list(d):
    return resolve("doctor", "diagnose")([1, 2, 3], seconds=0.1)


@case("doctor", "diagnose(seconds=-1)", ("seconds",))
def doc_seconds_negative(d):
    return resolve("doctor", "diagnose")(_pipe(), seconds=-1)


@case("doctor", "diagnose(seconds=nan)", ("seconds",))
def doc_seconds_nan(d):
    return resolve("doctor", "diagnose")(_pipe(), seconds=math.nan)


@case("doctor", "diagnose(step_time=-0.01)", ("step_time",))
def doc_step_negative(d):
    return resolve("doctor", "diagnose")(_pipe(), seconds=0.1, step_time=-0.01)


@case("doctor", "diagnose(budget_s=0)", ("budget_s",))
def doc_budget_zero(d):
    return resolve("doctor", "diagnose")(_pipe(), seconds=0.1, budget_s=0)


@case("doctor", "diagnose of an empty dataset (range(0))", ("empty", "no element"))
def doc_empty(d):
    import tensorflow as tf
    return resolve("doctor", "diagnose")(tf.data.Dataset.range(0).batch(2), seconds=0.1)


@case("doctor", "memory_report(seconds=0)", ("seconds",))
def doc_mem_seconds_zero(d):
    return resolve("doctor", "memory_report")(_pipe(), seconds=0)


@case("doctor", "memory_report(budget=-1)", ("budget",))
def doc_mem_budget_negative(d):
    return resolve("doctor", "memory_report")(_pipe(), seconds=0.2, budget=-1)


@case("doctor", "memory_report(every=0)", ("every",))
def doc_mem_every_zero(d):
    return resolve("doctor", "memory_report")(_pipe(), seconds=0.2, every=0)


@case("doctor", "memory_report of a generator, not a dataset", ("dataset",))
def doc_mem_generator(d):
    return resolve("doctor", "memory_report")((i for i in range(5)), seconds=0.2)


# ------------------------------------------------------------------ perf


@case("perf", "benchmark(steps=-3)", ("steps",))
def perf_steps_negative(d):
    return resolve("perf", "benchmark")(_pipe(), steps=-3, progress=False)


@case("perf", "benchmark(warmup=-1)", ("warmup",))
def perf_warmup_negative(d):
    return resolve("perf", "benchmark")(_pipe(), steps=2, warmup=-1, progress=False)


@case("perf", "benchmark(5) (not iterable)", ("dataset", "iterable"))
def perf_not_iterable(d):
    return resolve("perf", "benchmark")(5, steps=2, progress=False)


@case("perf", "benchmark(sample_every=0)", ("sample_every",))
def perf_sample_zero(d):
    return resolve("perf", "benchmark")(_pipe(), steps=2, sample_every=0, progress=False)


@case("perf", "benchmark of an empty dataset", ("empty", "no element", "batches"))
def perf_empty(d):
    import tensorflow as tf
    return resolve("perf", "benchmark")(tf.data.Dataset.range(0), steps=2, progress=False)


@case("perf", "benchmark(steps=10) of a 3-element dataset (fewer than asked)",
      ("steps", "3"), either=True, ok=lambda r: r.batches == 3)
def perf_short(d):
    import tensorflow as tf
    return resolve("perf", "benchmark")(tf.data.Dataset.range(4), steps=10, warmup=1,
                                        progress=False)


# ------------------------------------------------------------------ cluster (no real cluster)
@case("cluster", "host_port('localhost') (no port)", ("localhost",),
      either=True, ok=lambda got: got is None)
def cl_host_no_port(d):
    return resolve("cluster", "host_port")("localhost")


@case("cluster", "check_dispatcher('grpc://localhost:99999')", ("99999", "service"))
def cl_port_range(d):
    return resolve("cluster", "check_dispatcher")("grpc://localhost:99999", timeout=1)


@case("cluster", "check_dispatcher(timeout=nan)", ("timeout",))
def cl_timeout_nan(d):
    return resolve("cluster", "check_dispatcher")("localhost:5050", timeout=math.nan)


@case("cluster", "check_dispatcher at a port nothing listens on (1 s)", ("127.0.0.1:",
                                                                        "localhost:"))
def cl_nothing_there(d):
    port = resolve("cluster", "free_port")()
    return resolve("cluster", "check_dispatcher")(f"127.0.0.1:{port}", timeout=1)


@case("cluster", "check_dispatcher(service=5050) (an int)", ("service",))
def cl_service_int(d):
    return resolve("cluster", "check_dispatcher")(5050, timeout=1)


@case("cluster", "LocalCluster(workers=2.0)", ("workers",))
def cl_workers_float(d):
    return resolve("cluster", "LocalCluster")(workers=2.0)


@case("cluster", "LocalCluster(worker_timeout=-1)", ("worker_timeout",))
def cl_worker_timeout(d):
    return resolve("cluster", "LocalCluster")(workers=1, worker_timeout=-1)


@case("cluster", "LocalCluster(start_timeout=inf)", ("start_timeout",))
def cl_start_timeout_inf(d):
    return resolve("cluster", "LocalCluster")(workers=1, start_timeout=math.inf)


@case("cluster", "LocalCluster(work_dir= a file, fault_tolerant=True)", ("f.txt", "work_dir"))
def cl_workdir_file(d):
    (d / "f.txt").write_text("x")
    return resolve("cluster", "LocalCluster")(workers=1, fault_tolerant=True,
                                              work_dir=str(d / "f.txt"))


@case("cluster", "tally(received=5) (not iterable)", ("received",))
def cl_tally_int(d):
    return resolve("cluster", "tally")(5, [1, 2])


@case("cluster", "read_concurrently(timeout=-1)", ("timeout",))
def cl_read_timeout(d):
    import tensorflow as tf
    return resolve("cluster", "read_concurrently")([tf.data.Dataset.range(2)], timeout=-1)


def _serve(argv):
    return cli(resolve("cluster", "main"), argv)


@case("cluster", "serve: dispatcher --port 70000", ("--port", "70000"))
def cl_cli_port_big(d):
    return _serve(["dispatcher", "--port", "70000"])


@case("cluster", "serve: worker --dispatcher localhost (no port)", ("--dispatcher",
                                                                    "localhost"))
def cl_cli_dispatcher_no_port(d):
    return _serve(["worker", "--dispatcher", "localhost", "--port", "5051"])


@case("cluster", "serve: worker --dispatcher-timeout -1", ("--dispatcher-timeout", "-1"))
def cl_cli_timeout_negative(d):
    return _serve(["worker", "--dispatcher", "127.0.0.1:5050", "--port", "5051",
                   "--dispatcher-timeout", "-1"])


@case("cluster", "serve: dispatcher --worker-timeout-ms abc", ("--worker-timeout-ms",))
def cl_cli_wt_text(d):
    return _serve(["dispatcher", "--port", "5050", "--worker-timeout-ms", "abc"])


@case("cluster", "serve: a role that does not exist", ("trainer", "role"))
def cl_cli_role(d):
    return _serve(["trainer", "--port", "5050"])


