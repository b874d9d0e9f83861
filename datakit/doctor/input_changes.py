"""The changes worth trying when a model waits for its input, ranked by their computed effect.

:func:`rank_changes` reads what :func:`datakit.doctor.input_wait.input_wait` measured (the
model's step fed from memory, the step fed by the pipeline, the CPU seconds a batch costs
the pipeline alone, the cores) and returns the changes that apply, the one that shortens
the step most first. Each effect is *computed* from those measurements (a step cannot be
shorter than the model's own step, nor than the pipeline's CPU per batch spread over the
cores it may use); measure again after making it.

>>> from types import SimpleNamespace as Measured
>>> fed = Measured(memory_step_s=0.010, pipeline_step_s=0.040, memory_cores=1.0,
...                input_cpu_per_batch_s=0.040, input_alone_step_s=0.040, host_cores=8,
...                batch_bytes=4 << 20, on_cpu=False, wait_share=0.75)
>>> for change in rank_changes(fed, ends_with_prefetch=True, x_dtype="float32"):
...     print(change.what)
more parallel calls for the costly map, up to the cores
steps_per_execution
uint8 to the device
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__: list[str] = []  # the doctor's input_wait is the face; these are its helpers

FLOATS = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


@dataclass
class Change:
    """One change to try: what, how, its effect in words, and the seconds a step it saves."""

    what: str
    how: str
    effect: str
    saves_s: float

    def __str__(self) -> str:
        return f"{self.what}: {self.how}. Effect (computed): {self.effect}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def _spare_cores(m: Any) -> float:
    """Cores the pipeline may use: all of them on the CPU (shared), else those the model's
    host side leaves."""
    return float(m.host_cores) if m.on_cpu else max(1.0, m.host_cores - m.memory_cores)


def _floor(m: Any, input_cpu: float) -> float:
    """The shortest step with the pipeline's work at ``input_cpu`` a batch over every core it
    may use (on the CPU the model's own CPU work shares those cores)."""
    if m.on_cpu:
        return max(m.memory_step_s, (m.memory_cores * m.memory_step_s + input_cpu) / m.host_cores)
    return max(m.memory_step_s, input_cpu / _spare_cores(m))


def _mb(nbytes: float) -> str:
    return f"{nbytes / 1e6:.1f} MB" if nbytes >= 1e6 else f"{nbytes / 1e3:.1f} kB"


def _more_calls(m: Any, py_function: bool) -> Change | None:
    busy = m.input_cpu_per_batch_s / m.input_alone_step_s if m.input_alone_step_s else 0.0
    spare = _spare_cores(m)
    if m.wait_share < 0.2 or busy > spare - 0.5:
        return None
    best = _floor(m, m.input_cpu_per_batch_s)
    if best > 0.9 * m.pipeline_step_s:  # already as parallel as the cores allow
        return None
    return Change("more parallel calls for the costly map, up to the cores",
                  "num_parallel_calls=N on the decoding map (N up to the cores, here "
                  f"{spare:.0f}), or tf.data.AUTOTUNE",
                  f"drained alone the pipeline keeps {busy:.1f} cores busy of {spare:.0f} it "
                  f"may use: the step from {_ms(m.pipeline_step_s)} to about {_ms(best)}"
                  + (" (if the costly stage runs in TensorFlow ops: a tf.py_function in the "
                     "pipeline holds Python's lock, so parallel calls of it do not overlap)"
                     if py_function else ""), m.pipeline_step_s - best)


def _prefetch(m: Any, ends_with_prefetch: bool) -> Change | None:
    if ends_with_prefetch:
        return None
    overlapped = max(m.memory_step_s, m.input_alone_step_s)
    serial = m.memory_step_s + m.input_alone_step_s
    return Change("prefetch last", "end the pipeline with .prefetch(tf.data.AUTOTUNE)",
                  f"the next batch is made while the model trains on this one: at most "
                  f"{_ms(serial)} a step (one after the other) becomes about {_ms(overlapped)} "
                  "(tf.data may already add one itself: Options().experimental_optimization"
                  ".inject_prefetch)", max(0.0, min(m.pipeline_step_s, serial) - overlapped))


def _uint8(m: Any, x_dtype: str) -> Change | None:
    size = FLOATS.get(x_dtype)
    if size is None:
        return None
    where = ("no copy on the CPU; on a GPU " if m.on_cpu else "")
    return Change("uint8 to the device",
                  f"if the inputs are 0-255 pixels, keep them uint8 in the pipeline (not "
                  f"{x_dtype}) and make keras.layers.Rescaling(1 / 255) the model's first layer",
                  f"{where}{_mb(m.batch_bytes)} a batch to copy becomes "
                  f"{_mb(m.batch_bytes / size)}, and the pipeline skips the cast", 0.0)


def _steps_per_execution(m: Any, steps_per_execution: int) -> Change | None:
    if m.on_cpu or steps_per_execution > 1 or m.memory_step_s > 0.02:
        return None
    host = m.memory_cores * m.memory_step_s
    return Change("steps_per_execution",
                  "model.compile(..., steps_per_execution=32) (the default, 1, returns to "
                  "Python after every step)",
                  f"the model's step is short ({_ms(m.memory_step_s)}) and the host spends "
                  f"{_ms(host)} of CPU on each: paid once per 32 steps, that launch overhead "
                  "stops bounding a small model on a fast device", min(host, m.memory_step_s) / 2)


def _too_few_cores(m: Any) -> list[Change]:
    spare = _spare_cores(m)
    need = m.input_cpu_per_batch_s / m.memory_step_s if m.memory_step_s else 0.0
    if m.wait_share < 0.2 or need <= spare:
        return []
    best = _floor(m, m.input_cpu_per_batch_s)
    keep_up = spare / need
    out = [Change("convert once, then read",
                  "decode the videos (or parse the files) once into shards and train from "
                  "them (datakit.readers.video.write_video_shards, then clip_dataset); "
                  "`python -m datakit.bench FOLDER` measures both feeds per CPU second",
                  f"keeping up takes {need:.1f} cores and the pipeline may use {spare:.0f}: "
                  f"a feed costing at most {keep_up:.0%} of this one's CPU a batch keeps up "
                  f"(the step from {_ms(best)} at best with more calls, to "
                  f"{_ms(m.memory_step_s)})", best - m.memory_step_s)]
    if not m.on_cpu:
        out.append(Change("decode on the device",
                          "decode on the GPU: torchcodec's VideoDecoder(device='cuda'), NVIDIA "
                          "DALI's TensorFlow plugin, or FFmpeg's hardware decoders through PyAV",
                          f"the host keeps only the reading of {need:.1f} cores' work, the "
                          f"step could reach {_ms(m.memory_step_s)}",
                          (best - m.memory_step_s) * 0.9))
    return out


def rank_changes(measured: Any, *, ends_with_prefetch: bool, x_dtype: str,
                 py_function: bool = False, steps_per_execution: int = 1) -> list[Change]:
    """The changes that apply to what ``measured`` holds, the most time saved first."""
    found = [_more_calls(measured, py_function), _prefetch(measured, ends_with_prefetch),
             *_too_few_cores(measured), _uint8(measured, x_dtype),
             _steps_per_execution(measured, steps_per_execution)]
    changes = [c for c in found if c is not None]
    return sorted(changes, key=lambda c: -c.saves_s)
