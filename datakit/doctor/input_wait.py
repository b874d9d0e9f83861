"""Is my GPU fed? The share of each training step your model waits for its input, measured.

:func:`input_wait` runs *your* compiled Keras model's own ``train_step`` for some steps fed
from memory (a few batches of *your* dataset copied once to the model's device and cycled:
TensorFlow's profiler guide calls this the synthetic-data check), then fed by the dataset,
``rounds`` times in turn, and compares each feed's rate in its fastest run (a busy spell of
a shared machine stretches some runs). Where the memory-fed batches live: on a GPU they
are tensors placed on the GPU the model's weights are on (``tf.device``), so the memory-fed
step copies nothing; on the CPU the same code places them on the CPU, the model's device
there. The step fed from memory is the model's own; what the pipeline adds to it is time
the device waits for input.

The pipeline-fed step is its steady state: the pipeline starts making batches as soon as
its iterator exists, and its buffers (``prefetch``, a parallel ``map``'s calls in flight)
fill while the model traces or warms up, so the first steps after a pause take
ready batches without waiting. Only the later half of each run's timed steps counts (the
first half drains those buffers), the rate is taken over that whole window (a run's
mean, not its fastest steps), and a pipeline-fed step is never reported below the
memory-fed one (nothing feeds faster than memory). It also drains the dataset alone, so
it knows the host CPU seconds a batch costs, and ranks the changes worth trying
(:mod:`datakit.doctor.input_changes`), each with its measured or computed effect.

Nothing is compiled anew (the model's own ``train_step`` in one ``tf.function``, as
``fit()`` runs it with ``steps_per_execution=1``), and the model's weights, optimizer
state and metrics are put back as they were afterwards.

>>> import keras, numpy as np, tensorflow as tf
>>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
>>> model.compile(optimizer="sgd", loss="mse")
>>> ds = tf.data.Dataset.from_tensor_slices((np.ones((64, 4), "float32"), np.ones(64))).batch(8)
>>> report = input_wait(model, ds, steps=4, warmup=2)
>>> 0 <= report.wait_share <= 1, report.device
(True, 'CPU')
>>> input_wait(keras.Sequential([keras.layers.Dense(1)]), ds)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: input_wait(model=...): the model is not built (it has no weights yet), ...
"""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import tensorflow as tf

from datakit.core.arguments import check_count
from datakit.core.cores import cpu_cores
from datakit.doctor.input_changes import Change, rank_changes
from datakit.perf.chain import chain_of, stage_facts

__all__ = ["input_wait"]


@dataclass
class InputWait:
    """What :func:`input_wait` measured. Times in seconds, cores as CPU seconds per second."""

    device: str                  # "CPU", or the GPU's name
    steps: int                   # counted steps per feed and run (after those that drain)
    memory_step_s: float         # step fed from memory (the fastest run's mean): the model's
    pipeline_step_s: float       # step fed by the pipeline (the fastest run's mean, at least
                                 # the memory-fed step)
    memory_cores: float          # the whole process's cores busy, fed from memory
    pipeline_cores: float        # the whole process's cores busy, fed by the pipeline
    input_cpu_per_batch_s: float  # CPU seconds one batch costs the pipeline, drained alone
    input_alone_step_s: float    # seconds a batch, the pipeline drained alone
    host_cores: int              # cores this process may use (datakit.core.cores.cpu_cores)
    batch_bytes: int             # bytes of one batch's inputs as the pipeline gives them
    changes: list[Change] = field(default_factory=list)  # the next changes to try, best first

    @property
    def on_cpu(self) -> bool:
        return self.device == "CPU"

    @property
    def wait_share(self) -> float:
        """The share of each pipeline-fed step spent waiting for input (0: none)."""
        if self.pipeline_step_s <= 0:
            return 0.0
        return min(1.0, max(0.0, 1 - self.memory_step_s / self.pipeline_step_s))

    @property
    def input_cores(self) -> float:
        """The cores the pipeline kept busy beside the model (process, minus fed from memory)."""
        return max(0.0, self.pipeline_cores - self.memory_cores)

    @property
    def cores_to_keep_up(self) -> float:
        """The cores the pipeline needs to make one batch per model step fed from memory."""
        return self.input_cpu_per_batch_s / self.memory_step_s if self.memory_step_s else 0.0

    def verdict(self) -> str:
        if self.wait_share > 0.5:
            return "the input is the wait: the model waits for it most of each step"
        if self.wait_share >= 0.2:
            return "the input is part of the wait"
        return "the input is not the wait: the model's own step is the limit"

    def __str__(self) -> str:
        ms = 1e3
        lines = [
            f"on {self.device}, {self.steps} steps counted per feed and round (after as "
            "many that drain the pipeline's buffers):",
            f"  fed from memory:      {self.memory_step_s * ms:8.1f} ms a step (the model's own)",
            f"  fed by your pipeline: {self.pipeline_step_s * ms:8.1f} ms a step",
            f"  waiting for input: {self.wait_share:.0%} of each step: {self.verdict()}",
            f"  host cores: {self.pipeline_cores:.2f} busy fed by the pipeline, "
            f"{self.memory_cores:.2f} fed from memory (the pipeline's share ~"
            f"{self.input_cores:.2f}); drained alone a batch costs "
            f"{self.input_cpu_per_batch_s * ms:.1f} ms of CPU, so keeping up with the model "
            f"needs {self.cores_to_keep_up:.2f} of this machine's {self.host_cores} cores",
        ]
        if self.on_cpu:
            lines.append("  no GPU: the model trains on the CPU, on the same cores as the "
                         "pipeline, so the two compete (on a GPU only the pipeline uses them)")
        if self.changes:
            lines.append("next changes to try, best first:")
            lines += [f"  {i}. {c}" for i, c in enumerate(self.changes, 1)]
        else:
            lines.append("no change to the input would shorten the step")
        return "\n".join(lines)


def _fix(what: str) -> str:
    return f"input_wait({what}=...): "


def check_model(model: Any) -> None:
    """Refuse a model that is not a compiled, built Keras model, saying how to fix it."""
    if not all(hasattr(model, a) for a in ("fit", "built", "variables")):
        raise TypeError(_fix("model") + f"takes a Keras model, got {type(model).__name__}")
    if not model.built:
        raise ValueError(_fix("model") + "the model is not built (it has no weights yet), so "
                         "its first step would build it and the timing would measure that: "
                         "build it first, e.g. start it with keras.Input(shape) or call "
                         "model.build(input_shape)")
    if getattr(model, "optimizer", None) is None or not getattr(model, "compiled", True):
        raise ValueError(_fix("model") + "the model is not compiled: call model.compile("
                         "optimizer=..., loss=...) as you train it, then measure")


def check_dataset(dataset: Any) -> None:
    """Refuse what is not a ``tf.data.Dataset`` with known ranks, saying how to fix it."""
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(_fix("dataset") + f"takes a tf.data.Dataset of batches, got "
                        f"{type(dataset).__name__}: wrap arrays with "
                        "tf.data.Dataset.from_tensor_slices((x, y)).batch(n)")
    specs = tf.nest.flatten(dataset.element_spec)
    unknown = [i for i, s in enumerate(specs) if getattr(s, "shape", None) is None
               or s.shape.rank is None]
    if unknown:
        raise ValueError(_fix("dataset") + f"component {unknown[0]} of the element_spec "
                         f"{dataset.element_spec} has no known shape (a py_function's or "
                         "a generator's output), so the model would trace a step per shape: "
                         "set it, e.g. ds.map(lambda x, y: (tf.ensure_shape(x, [None, 32, 32, "
                         "3]), y)), or give from_generator an output_signature")


def check_fits(model: Any, dataset: tf.data.Dataset) -> None:
    """Refuse batches whose features do not fit the model's input where both shapes are known
    (one input, features of its rank): Keras' own error comes from inside the timed step,
    naming neither. Other layouts (several inputs, dicts, another rank) are left to Keras."""
    try:
        inputs = list(model.inputs or [])
    except (AttributeError, ValueError):  # a subclassed model has no symbolic inputs
        return
    spec = dataset.element_spec
    x = spec[0] if isinstance(spec, tuple) and spec else spec
    if len(inputs) != 1 or not isinstance(x, tf.TensorSpec):
        return
    want, got = tuple(inputs[0].shape), tuple(x.shape.as_list())
    if len(want) != len(got):
        return
    wrong = [i for i, (w, g) in enumerate(zip(want, got, strict=True))
             if i > 0 and w is not None and g is not None and w != g]
    if wrong:
        i = wrong[0]
        raise ValueError(_fix("dataset") + f"the dataset's features do not fit the model: its "
                         f"element_spec is {spec}, features of shape {got}, and the model's "
                         f"input shape is {want} (dimension {i}: {got[i]}, the model takes "
                         f"{want[i]}); pass the dataset you train this model on, or a model "
                         "built for these batches")


def _snapshot(model: Any) -> list:
    held = [*model.variables, *model.optimizer.variables,
            *getattr(model, "metrics_variables", [])]
    seen, unique = set(), []
    for v in held:
        if id(v) not in seen:
            seen.add(id(v))
            unique.append(v)
    return [(v, tf.identity(v.value if hasattr(v, "value") else v).numpy()) for v in unique]


def _restore(model: Any, saved: list, attrs: dict) -> None:
    for v, value in saved:
        v.assign(value)
    for name, value in attrs.items():
        setattr(model, name, value)


def timed_steps(model: Any, feed: Any, steps: int, warmup: int) -> tuple[list[float], float]:
    """Each step's seconds and the process's cores busy over ``steps`` steps of one ``fit()``.

    A callback marks the end of each step (or of each ``steps_per_execution`` group), so
    neither the warm-up (tracing, filling buffers) nor ``fit()``'s start and end count.
    """
    import keras
    marks: list[tuple[int, float, float]] = []

    class Clock(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            marks.append((batch, time.perf_counter(), time.process_time()))

    model.fit(feed, steps_per_epoch=warmup + steps, epochs=1, verbose=0, shuffle=False,
              callbacks=[Clock()])
    timed = [m for m in marks if m[0] >= warmup - 1] or marks
    per_step = [(t1 - t0) / max(1, b1 - b0)
                for (b0, t0, _), (b1, t1, _) in zip(timed, timed[1:], strict=False)]
    (_, t0, c0), (_, t1, c1) = timed[0], timed[-1]
    return per_step, (c1 - c0) / (t1 - t0) if t1 > t0 else 0.0


def fastest_run(per_step: list[float], runs: int) -> float:
    """The mean step of the fastest of ``runs`` equal runs pooled in ``per_step``: a run's mean
    is its rate (buffers let single steps through fast and make others wait), and the fastest
    run is the one a busy spell of a shared machine stretched least."""
    n = max(1, len(per_step) // runs)
    return min(statistics.mean(per_step[r * n:(r + 1) * n]) for r in range(runs))


@tf.function(reduce_retracing=True)
def _drain(it: Any, n: int) -> None:
    """Take ``n`` elements of the iterator ``it`` in one graph, as ``fit()`` takes them."""
    total = tf.constant(0.0, tf.float64)
    for _ in tf.range(n):
        first = tf.nest.flatten(next(it))[0]
        total += tf.cast(tf.size(first), tf.float64)  # used, so that nothing is skipped
    return total


def drained_alone(feed: Any, batches: int) -> tuple[float, float]:
    """CPU and wall seconds a batch of ``feed`` drained in a ``tf.function``, as fit() drains."""
    it = iter(feed)
    _drain(it, tf.constant(2))  # trace, open files, fill buffers
    t0, c0 = time.perf_counter(), time.process_time()
    _drain(it, tf.constant(batches))
    return (time.process_time() - c0) / batches, (time.perf_counter() - t0) / batches


def _device() -> str:
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return "CPU"
    details = tf.config.experimental.get_device_details(gpus[0])
    return str(details.get("device_name", "GPU:0"))


def _batch_bytes(batch: Any) -> int:
    """Bytes of a batch's first component (its inputs) as the pipeline gives it."""
    return int(tf.nest.flatten(batch)[0].numpy().nbytes)


def model_device(model: Any) -> str:
    """The device the model's weights are on (the first that says; ``/CPU:0`` if none does)."""
    for v in [*model.trainable_variables, *model.variables]:
        device = getattr(getattr(v, "value", v), "device", "")
        if device:
            return str(device)
    return "/CPU:0"


def on_device(dataset: Any, batches: int, device: str) -> list:
    """The first ``batches`` batches of ``dataset`` as tensors placed on ``device``, copied
    there once (a GPU's memory on a GPU, the host's on the CPU)."""
    def place(t: Any) -> Any:
        return tf.identity(t) if isinstance(t, tf.Tensor) else t
    with tf.device(device):
        return [tf.nest.map_structure(place, b) for b in dataset.take(batches)]


def _train_step(model: Any) -> Any:
    """The model's own ``train_step`` in one ``tf.function``, as ``fit()`` calls it."""
    strategy = model.distribute_strategy

    @tf.function(reduce_retracing=True)
    def step(data: Any) -> Any:
        return strategy.run(model.train_step, args=(data,))
    return step


def steady_step(step: Any, next_batch: Any, sync: Any, *, steps: int,
                warmup: int) -> tuple[float, float]:
    """Seconds a step and the process's cores busy, in the steady state of one run.

    ``warmup`` untimed steps, then ``steps``: the first ``steps // 2`` of them drain what
    the pipeline's buffers made ahead (while the iterator started and the model traced or
    ran its warm-up), and the rate is the later ones' mean, timed between two ``sync()``
    calls that wait for the device to finish (a GPU runs behind the Python that queues it).
    """
    for _ in range(warmup + steps // 2):
        step(next_batch())
    sync()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps - steps // 2):
        step(next_batch())
    sync()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall / (steps - steps // 2), cpu / wall if wall > 0 else 0.0


def input_wait(model: Any, dataset: Any, *, steps: int = 40, warmup: int = 3,
               cached_batches: int = 4, rounds: int = 2) -> InputWait:
    """How much of each training step ``model`` waits for ``dataset``, and what to change.

    Args:
        model: a built, compiled Keras model (your own; its state is restored afterwards).
        dataset: a ``tf.data.Dataset`` of batches as you pass them to ``fit()`` (repeated
            here as needed).
        steps: steps per feed and run after ``warmup`` untimed ones (>= 2 and >= 1); the
            first half drain the pipeline's buffers, the later half are timed. A pipeline
            whose buffers hold more than ``steps // 2`` batches needs more.
        cached_batches: batches of ``dataset`` copied once to the model's device for the
            memory-fed run.
        rounds: runs of each feed, in turn; each feed's fastest run counts.

    Raises:
        TypeError: ``model`` is not a Keras model or ``dataset`` not a ``tf.data.Dataset``.
        ValueError: the model is not built or not compiled; an element has no known shape;
            its features do not fit the model's input shape (both named).
    """
    check_model(model)
    check_dataset(dataset)
    check_fits(model, dataset)
    check_count("steps", steps, 2)
    check_count("warmup", warmup)
    check_count("cached_batches", cached_batches)
    check_count("rounds", rounds)
    optimizer = model.optimizer
    if not getattr(optimizer, "built", True):  # built now, so that its state is saved too
        optimizer.build(model.trainable_variables)
    saved = _snapshot(model)
    attrs = {a: getattr(model, a) for a in ("history", "stop_training") if hasattr(model, a)}
    try:
        cached = on_device(dataset, cached_batches, model_device(model))
        if not cached:
            raise ValueError(_fix("dataset") + "the dataset gave no batch: pass the one you "
                             "train on")
        batch_bytes = _batch_bytes(cached[0])  # its first batch: no new iterator for it
        step = _train_step(model)

        def sync() -> None:
            optimizer.iterations.numpy()  # a read of what each step writes: waits for it

        times: dict[str, list[float]] = {"memory": [], "pipeline": []}
        cores: dict[str, list[float]] = {"memory": [], "pipeline": []}
        for _ in range(rounds):  # the two feeds in turn, so that a busy spell hits both
            for name in times:
                # a new pipeline iterator per run, dropped after it: a live one would go on
                # making batches ahead, on the cores the memory-fed run is timed on
                it = itertools.cycle(cached) if name == "memory" else iter(dataset.repeat())
                seconds, busy = steady_step(step, it.__next__, sync, steps=steps, warmup=warmup)
                del it
                times[name].append(seconds)
                cores[name].append(busy)
    finally:
        _restore(model, saved, attrs)
    mem_step = min(times["memory"])
    pipe_step = max(mem_step, min(times["pipeline"]))  # nothing feeds faster than memory
    mem_cores, pipe_cores = (statistics.mean(cores["memory"]),
                             statistics.mean(cores["pipeline"]))
    cpu_batch, alone_step = drained_alone(dataset.repeat(), steps)
    report = InputWait(device=_device(), steps=steps - steps // 2, memory_step_s=mem_step,
                       pipeline_step_s=pipe_step, memory_cores=mem_cores,
                       pipeline_cores=pipe_cores, input_cpu_per_batch_s=cpu_batch,
                       input_alone_step_s=alone_step, host_cores=cpu_cores(),
                       batch_bytes=batch_bytes)
    chain = stage_facts(chain_of(dataset))  # each stage read once
    stages = [s.kind for s in chain if s.kind != "options"]
    x_dtype = tf.nest.flatten(dataset.element_spec)[0].dtype
    report.changes = rank_changes(report, ends_with_prefetch=stages[-1:] == ["prefetch"],
                                  x_dtype=x_dtype.name,
                                  py_function=any(s.python for s in chain),
                                  steps_per_execution=getattr(model, "steps_per_execution", 1))
    return report
