"""What each stage of a ``tf.data`` pipeline can hold in RAM, from the bytes of its elements.

:func:`element_bytes` sizes one element (from the element spec when shapes are
fixed, else measured on a few elements, with shuffle buffers left out so that
sampling fills none); :func:`holding` applies the rule of the stage's kind: a
``shuffle`` holds ``buffer_size`` elements (at most one epoch), a ``prefetch``
its depth plus the element being made, unless the stage before it counts that one
(a batch's copy, a parallel map's calls) (AUTOTUNE: it starts at 1 and doubles
whenever the consumer finds it empty, so the prediction is a floor), a parallel
``map`` one result per call in flight, an ``interleave`` one read buffer per open
file (:data:`READ_BUFFER`) plus its calls in flight, a ``batch`` its elements and
then their copy into one tensor, an in-memory ``cache`` the whole dataset,
``from_tensor_slices`` the tensors it was given (while it converts a NumPy array,
its peak is three copies: measured on TF 2.21, the temporaries go later), a
``cache(filename)`` its 8 MiB write buffer (:data:`WRITE_BUFFER`) and a ``snapshot`` its
compression buffers and a few elements (:data:`SNAPSHOT_BUFFERS`, measured).
:mod:`datakit.doctor.memory_use` measures.

>>> import tensorflow as tf
>>> ds = tf.data.Dataset.range(100).map(lambda i: tf.fill([1000], i)).shuffle(10)
>>> element_bytes(ds)
8000.0
>>> from datakit.perf.chain import chain_of, stage_facts
>>> stages = stage_facts(chain_of(ds))
>>> holding(stages, 2, [element_bytes(s.dataset) for s in stages], built=False, seconds=1.0)
(80000.0, 'buffer of 10 x 0.01 MB', True)
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np
import tensorflow as tf

from datakit.core.cores import affinity_cores
from datakit.doctor.deadline import Stalled, bounded_run, call_with_deadline
from datakit.doctor.rebuild import assemble
from datakit.perf.chain import StageFacts
from datakit.perf.synthetic import serial
from datakit.perf.throughput import measure

__all__ = ["element_bytes", "holding"]

#: The read buffer of TFRecordDataset and TextLineDataset when none is given (256 KiB).
READ_BUFFER = 256 * 1024
#: The write buffer of a ``cache(filename)`` while it writes (TensorFlow's tensor bundle).
WRITE_BUFFER = 8 << 20
#: What a ``snapshot`` holds besides its elements (measured on TF 2.21, 10 KB-1 MB elements).
SNAPSHOT_BUFFERS = 4e6
#: What TensorFlow keeps for one string (tstring), characters beyond 22 aside.
STRING_BYTES = 24
#: Elements sampled to size one whose shape or strings vary: at least ``SAMPLED``, then more
#: (up to ``SAMPLED_MAX``) while ``SAMPLE_SECONDS`` last, as sizes that vary along the data
#: (rows of 0, 1, 2... values) make the first few a poor mean (a set sorted by length still
#: biases it: the report sizes what comes first).
SAMPLED, SAMPLED_MAX, SAMPLE_SECONDS = 3, 64, 0.5
_READERS = ("TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset")


# -- sizes ---------------------------------------------------------------------------------


def _nbytes(value: Any) -> int:
    """Bytes one NumPy part of an element holds. A string takes TensorFlow's 24 bytes, plus
    its characters when it has more than 22 (shorter ones are kept inside those 24)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "O":
        return int(sum(STRING_BYTES + (len(v) if len(v) > 22 else 0) for v in arr.reshape(-1)))
    return arr.nbytes


def _fixed(spec: Any) -> bool:
    return (isinstance(spec, tf.TensorSpec) and spec.shape.is_fully_defined()
            and spec.dtype != tf.string)


def element_bytes(dataset: tf.data.Dataset, sample: tf.data.Dataset | None = None, *,
                  patience: float = 30.0) -> float:
    """Bytes of one element of ``dataset``: from its spec when every shape is fixed and no
    tensor holds strings, else the mean of the first elements of ``sample`` (default:
    itself; ``SAMPLED`` to ``SAMPLED_MAX`` of them, as many as ``SAMPLE_SECONDS`` allow),
    each sized by what it holds (a ragged or sparse tensor: its values and its row splits
    or indices).

    Raises:
        Stalled: no element of ``sample`` came within ``patience`` seconds.
    """
    specs = tf.nest.flatten(dataset.element_spec, expand_composites=True)
    if all(_fixed(s) for s in specs):
        return float(sum(s.shape.num_elements() * s.dtype.size for s in specs))
    run = bounded_run(serial(sample if sample is not None else dataset), patience=patience,
                      until=lambda n, t: n >= SAMPLED_MAX or (n >= SAMPLED
                                                              and t >= SAMPLE_SECONDS),
                      keep=SAMPLED_MAX,
                      keep_as=lambda parts: sum(_nbytes(v) for v in parts))
    if run.stalled:
        raise Stalled(f"no element came in {patience:g} s while sizing one "
                      f"({run.count} of {SAMPLED} came)")
    seen = run.kept  # each element's bytes, counted as it came (never 64 held at once)
    return float(statistics.mean(seen)) if seen else 0.0


def without_shuffles(stages: list[StageFacts], k: int) -> tf.data.Dataset:
    """Stage ``k`` rebuilt with its shuffle buffers left out (sampling it fills none)."""
    try:
        return assemble(stages[0].dataset, [(lambda i: i) if s.kind == "shuffle" else s
                                             for s in stages[1:k + 1]])
    except NotImplementedError:
        return stages[k].dataset


def epoch_count(dataset: tf.data.Dataset, seconds: float, patience: float,
                counted: dict | None = None) -> float | None:
    """Elements of one epoch: the cardinality, else counted for up to ``seconds`` (None: it
    does not end, or not in that time). ``counted`` keeps counts by ``id(dataset)``."""
    if counted is not None and id(dataset) in counted:
        return counted[id(dataset)]
    n = int(dataset.cardinality())
    if n >= 0:
        return float(n)
    if n == tf.data.INFINITE_CARDINALITY:
        return None
    run, stalled = call_with_deadline(lambda: measure(serial(dataset), seconds),
                                      seconds + patience)
    if stalled:
        raise Stalled(f"no element came in {patience:g} s while counting one epoch")
    got = float(run.count) if run.exhausted else None
    if counted is not None:
        counted[id(dataset)] = got
    return got


def _required_knob(stage: StageFacts, name: str) -> int:
    """A knob every stage of its kind has (a shuffle's ``buffer_size``...)."""
    n = stage.knobs[name]
    if n is None:
        raise TypeError(f"a {stage.kind} stage without {name}")
    return n


#: What one stage holds: (bytes at most, the rule with its numbers, bounded?).
_Holding = tuple[float, str, bool]


def _tensors_held(d: StageFacts, built: bool) -> _Holding:
    held = float(sum(_nbytes(t) for t in d.tensors))
    if built:  # converting a NumPy array peaks at 3 copies (measured, TF 2.21)
        return 3 * held, f"its tensors, {held / 1e6:,.1f} MB, 3 copies while built", True
    return held, f"its tensors ({held / 1e6:,.1f} MB, held since it was built)", True


def _shuffle_buffer(d: StageFacts, inp: float, timing: tuple) -> _Holding:
    n: float = _required_knob(d, "buffer_size")
    epoch = epoch_count(d.upstream, *timing)
    n = min(n, epoch) if epoch is not None else n
    return n * inp, f"buffer of {n:,.0f} x {inp / 1e6:,.2f} MB", True


def _makes_its_own(stage: StageFacts) -> bool:
    """Whether a stage's own rule counts the element it is making (a batch's copy, a parallel
    map's calls): a prefetch after it then does not count that element again."""
    kind = stage.kind
    return kind in ("batch", "padded_batch") or (kind == "map" and _calls_in_flight(stage) > 1)


def _prefetch_buffer(d: StageFacts, out: float, mb: str,
                     upstream: StageFacts | None) -> _Holding:
    n = _required_knob(d, "buffer_size")
    if n == -1:
        return out, (f"AUTOTUNE: 1 x {mb} to start, doubled whenever the consumer "
                     "finds it empty, up to the RAM budget"), False
    if upstream is not None and _makes_its_own(upstream):
        return n * out, f"{n} ready x {mb} (the one being made: the {upstream.kind}'s)", True
    return (n + 1) * out, f"{n} ready + 1 being made, x {mb}", True


def _cache_held(d: StageFacts, out: float, mb: str, timing: tuple) -> _Holding:
    if d.filename:
        return (WRITE_BUFFER + out, f"on disk ({d.filename}): its 8 MiB write "
                f"buffer while the first pass writes + 1 x {mb} (later passes read through 1 MiB)",
                True)
    n = epoch_count(d.upstream, *timing)
    if n is None:
        return 0.0, "the whole input, which does not end: grows without bound", False
    return n * out, f"the whole dataset: {n:,.0f} x {mb}", True


def _open_inputs(d: StageFacts, kind: str, calls: int, out: float, mb: str) -> _Holding:
    cycle = d.knobs["cycle_length"] or 1
    cycle = affinity_cores() if cycle == -1 else cycle
    cycle = 1 if kind == "flat_map" else cycle
    reads = any(op.startswith(_READERS) for op in (*(d.ops or ()), *d.called_ops))
    buf = READ_BUFFER if reads else 0
    extra = calls * out if calls > 1 else 0.0
    return (cycle * buf + extra, f"{cycle} open input(s) x {buf / 1024:g} KiB read buffer"
            + (f", {calls} x {mb} in flight" if extra else ""), True)


def _file_buffers(kind: str, out: float, mb: str) -> _Holding:
    """A reader's read buffer; a snapshot's compression buffers and elements in flight."""
    if kind == "snapshot":
        return (SNAPSHOT_BUFFERS + 8 * out, f"its compression buffers, about 4 MB, + 8 x {mb} "
                "(measured on TF 2.21, writing and reading)", True)
    return float(READ_BUFFER), "1 read buffer of 256 KiB", True


def _calls_in_flight(d: StageFacts) -> int:
    calls = d.knobs["num_parallel_calls"]
    return affinity_cores() if calls == -1 else calls or 1


def holding(chain: list[StageFacts], k: int, sizes: list[float], *, built: bool,
            seconds: float, patience: float = 30.0, counted: dict | None = None) -> _Holding:
    """(bytes stage ``k`` of ``chain`` holds at most, the rule with its numbers, bounded?).

    ``chain``: the stage records of a chain (:func:`datakit.perf.chain.stage_facts`);
    ``sizes``: each stage's element bytes; ``built``: the pipeline was built while being
    measured; ``seconds``: time to count an input whose cardinality is unknown; ``patience``:
    how long to wait for its first element (else :class:`~datakit.doctor.deadline.Stalled`);
    ``counted``: epochs counted so far, by ``id`` of the dataset (filled here).
    """
    d, kind = chain[k], chain[k].kind
    out = sizes[k]
    inp = sizes[k - 1] if k else 0.0
    mb = f"{out / 1e6:,.2f} MB"
    if kind in ("from_tensor_slices", "from_tensors"):
        return _tensors_held(d, built)
    if kind == "shuffle":
        return _shuffle_buffer(d, inp, (seconds, patience, counted))
    if kind == "prefetch":
        return _prefetch_buffer(d, out, mb, chain[k - 1] if k else None)
    if kind == "cache":
        return _cache_held(d, out, mb, (seconds, patience, counted))

    calls = _calls_in_flight(d)
    if kind in ("batch", "padded_batch"):
        n = _required_knob(d, "batch_size")
        return n * inp + out, f"{n} x {inp / 1e6:,.2f} MB gathered, then copied into 1", True
    if kind in ("interleave", "flat_map", "parallel_interleave"):
        return _open_inputs(d, kind, calls, out, mb)
    if kind == "map" and calls > 1:
        return calls * out, f"{calls} calls in flight x {mb}", True
    if kind == "unbatch":
        return inp, f"the batch it splits ({inp / 1e6:,.2f} MB)", True
    if kind in _READERS or kind == "snapshot":
        return _file_buffers(kind, out, mb)
    return 0.0, "nothing between elements", True
