"""Each feed's clips per CPU second: what one core moves, whatever else the machine does.

The direct reader decodes the videos (one decoder); the shards reader reads the same
videos converted once. Each is drained in a ``tf.function`` as ``fit()`` drains it, and
the whole process's CPU time (all its threads) is divided into the clips delivered.
:func:`cores_needed` divides a model's appetite (clips a second) by each rate: the cores
that feed needs to keep the model busy.

>>> print(cores_needed({"direct": 70.0, "shards": 350.0}, {8: 700.0}))
| feed | clips per CPU s | cores for batch 8 (700 clips/s) |
|---|---:|---:|
| direct | 70.0 | 10.00 |
| shards | 350.0 | 2.00 |
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datakit.doctor.input_wait import drained_alone

__all__ = ["per_core", "cores_needed"]


@dataclass(frozen=True)
class ClipWork:
    """The clips a benchmark asks for: frames, their spacing, size, clips per video, batch."""

    clip_len: int = 16
    frame_step: int = 2
    size: int = 112
    clips_per_video: int = 2
    batch: int = 8
    seed: int = 42

    def reader_options(self) -> dict[str, Any]:
        return dict(clip_len=self.clip_len, frame_step=self.frame_step,
                    clips_per_video=self.clips_per_video, batch_size=self.batch, seed=self.seed)


def feeds(folder: Path, shards: Path, work: ClipWork, *, one_decoder: bool = False) -> dict:
    """The two file feeds of ``folder``: the direct reader, and ``shards`` (written once if
    absent). ``one_decoder``: the direct reader with one decoder and one decoding thread."""
    from datakit.readers.video import clip_dataset, video_dataset_from_directory, write_video_shards
    if not (Path(shards) / "train").exists():
        write_video_shards(folder, shards, frame_size=(work.size, work.size), progress=False)
    single: dict = dict(num_parallel_calls=1, decoder_threads=1) if one_decoder else {}
    return {
        "direct (video_dataset_from_directory)": video_dataset_from_directory(
            folder, frame_size=(work.size, work.size), verbose=False, **single,
            **work.reader_options()),
        "shards (clip_dataset)": clip_dataset(Path(shards) / "train", **work.reader_options()),
    }


def per_core(folder: Path, shards: Path, work: ClipWork, batches: int, say: Any = print
             ) -> dict[str, float]:
    """Clips per CPU second of each file feed with one decoder, drained as ``fit()`` drains."""
    out = {}
    for name, ds in feeds(folder, shards, work, one_decoder=True).items():
        cpu, wall = drained_alone(ds.repeat(), batches)
        out[name] = work.batch / cpu
        say(f"  {name}: {work.batch / wall:.1f} clips/s, {work.batch / cpu:.1f} clips per CPU "
            f"second ({cpu / wall:.2f} cores busy)")
    return out


def cores_needed(per_cpu_s: dict[str, float], appetite: dict[int, float]) -> str:
    """A Markdown table: each feed's clips per CPU second and the cores it needs to keep a
    model eating ``appetite[batch]`` clips a second fed."""
    head = "| feed | clips per CPU s |" + "".join(
        f" cores for batch {b} ({rate:.0f} clips/s) |" for b, rate in appetite.items())
    lines = [head, "|---|---:|" + "---:|" * len(appetite)]
    for name, rate in per_cpu_s.items():
        lines.append(f"| {name} | {rate:.1f} |" + "".join(
            f" {eats / rate:.2f} |" for eats in appetite.values()))
    return "\n".join(lines)
