"""Timing experiments with no hardware in them: a source and a map whose costs you set.

Like the artificial dataset of TensorFlow's performance guide, these sleep
instead of working, so a picture of where the time goes does not depend on
the machine (a sleep holds a thread, not a core). :func:`synthetic_files`
is a traced source (see :mod:`datakit.perf.timeline`) of fake files whose "open"
and each "read" take a set time; :func:`work` is a stand-in map function (a
costly decode); :func:`serial` switches off the help the ``tf.data`` runtime
adds on its own, so a timeline shows only the pipeline you wrote.

>>> from datakit.perf import timeline
>>> ds = synthetic_files(2, 3, open_time=0.001, read_time=0.001)
>>> ds = serial(ds.map(timeline.timed("parse", work(0.001))))
>>> tl = timeline.trace_timeline(ds)
>>> tl.stages, sorted(tl.ids.tolist())
(['open', 'read', 'parse'], [0, 1, 2, 3, 4, 5])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from datakit.core.arguments import check_count, check_seconds, interleave_lengths
from datakit.perf.chain import testing_sleep
from datakit.perf.stamps import stamp_around, trace_record

__all__ = ["work", "synthetic_files", "serial"]


def sleep_op(seconds: float | tf.Tensor) -> tf.Tensor:
    """A graph op that sleeps ``seconds`` inside TensorFlow's runtime and returns them.

    It is tf.data's own testing ``sleep`` transformation (``SleepDataset``) on a
    one-element dataset, read with ``get_single_element``: reading the element
    and then the end each sleep, so each sleeps half of ``seconds``. Unlike a
    ``py_function`` around ``time.sleep``, it takes no Python lock, so a sleep
    lasts what it should on a busy machine and parallel sleeps overlap.
    """
    seconds = tf.cast(seconds, tf.float64)
    half = tf.cast(tf.round(seconds * 500_000), tf.int64)  # microseconds, twice
    return tf.data.Dataset.from_tensors(seconds).apply(testing_sleep(half)).get_single_element()


def work(seconds: float, per_item: float = 0.0) -> Callable[[Any], Any]:
    """A stand-in map function that sleeps ``seconds`` (+ ``per_item`` per element of a batch)."""
    check_seconds("seconds", seconds)
    check_seconds("per_item", per_item)

    @tf.autograph.experimental.do_not_convert  # no Python control flow: traced as written
    def fn(x: tf.Tensor) -> tf.Tensor:
        n = tf.cast(tf.size(x), tf.float64)
        with tf.control_dependencies([sleep_op(seconds + per_item * n)]):
            return tf.identity(x)

    return fn


#: Threads of the private pool a synthetic pipeline runs on (tf.data's default: one per core).
SLEEP_THREADS = 16


def synthetic_files(num_files: int = 2, rows_per_file: int = 4, *, open_time: float = 0.02,
                    read_time: float = 0.01, cycle_length: int = 1,
                    num_parallel_calls: int | None = None,
                    deterministic: bool | None = None) -> tf.data.Dataset:
    """Traced rows of ``num_files`` fake files whose open and each read sleep a set time.

    Element ``f * rows_per_file + r`` is row ``r`` of file ``f``. A sleeping
    call holds a thread: the pipeline gets a private pool of
    :data:`SLEEP_THREADS` threads so that sleeps overlap beyond the core count.

    Args:
        num_files, rows_per_file: the fake files and their rows (>= 1).
        open_time, read_time: seconds an open and each read sleep (>= 0).
        cycle_length, num_parallel_calls, deterministic: as in ``interleave``.

    Raises:
        TypeError: a count is not an int.
        ValueError: a count < 1, a negative time, or more parallel calls than
            ``cycle_length``.

    >>> from datakit.perf.timeline import trace_timeline
    >>> tl = trace_timeline(synthetic_files(2, 3, open_time=0.001, read_time=0.001))
    >>> tl.stages, sorted(tl.ids.tolist())
    (['open', 'read'], [0, 1, 2, 3, 4, 5])
    """
    check_count("num_files", num_files)
    check_count("rows_per_file", rows_per_file)
    check_count("cycle_length", cycle_length)
    interleave_lengths(cycle_length, 1, num_parallel_calls)
    check_seconds("open_time", open_time)
    check_seconds("read_time", read_time)

    @tf.autograph.experimental.do_not_convert  # as written, the maps built inside it too
    def read_file(f: tf.Tensor) -> tf.data.Dataset:
        opened = tf.data.Dataset.from_tensors(f).map(  # opens lazily, in the thread that reads
            lambda f: stamp_around(lambda: sleep_op(open_time))[1])

        def read(t_open: tf.Tensor, r: tf.Tensor) -> Any:
            row_id = f * rows_per_file + r
            out, t_read = stamp_around(
                lambda: sleep_op(read_time) * 0 + tf.cast(row_id, tf.float64))
            row_id = tf.cast(out, tf.int64)
            record = tf.concat([tf.cast(row_id, tf.float64)[None], t_open, t_read], 0)
            return row_id, trace_record(["open", "read"], record)

        return opened.flat_map(
            lambda t: tf.data.Dataset.range(rows_per_file).map(lambda r: read(t, r)))

    options = tf.data.Options()
    options.threading.private_threadpool_size = SLEEP_THREADS
    return tf.data.Dataset.range(num_files).interleave(
        read_file, cycle_length=cycle_length, block_length=1,
        num_parallel_calls=num_parallel_calls, deterministic=deterministic).with_options(options)


def serial(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """``dataset`` with the runtime's hidden help off (injected prefetch, parallelized maps...)."""
    options = tf.data.Options()
    opt = options.experimental_optimization
    opt.inject_prefetch = False
    opt.map_parallelization = False
    opt.parallel_batch = False
    opt.map_and_batch_fusion = False
    options.autotune.enabled = False
    return dataset.with_options(options)
