"""One measurement of ``benchmarks/video_peers.py`` in a fresh process; prints one RESULT line.

    python -m benchmarks.video_peer_worker '{"kind": "clips", "name": "kit direct", ...}'

CPU time is the whole process tree's: this process, the children it waited
for (``RUSAGE_CHILDREN``: a DataLoader's workers of an epoch, the converter's
workers) and the children still alive (``psutil``), so a peer that decodes
in worker processes is charged for them.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")


def tree_cpu() -> float:
    """CPU seconds used so far by this process and all its descendants."""
    import psutil
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        ru = resource.getrusage(who)
        total += ru.ru_utime + ru.ru_stime
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            pass
    return total


def _count(batch, work) -> int:
    x = batch[0]
    shape = tuple(int(d) for d in x.shape)
    want = (work.clip_len, work.size, work.size, 3)
    if shape[1:] != want:
        raise AssertionError(f"clips of shape {shape[1:]}, not {want}: not the same work")
    return shape[0]


def _epoch(batches, work) -> dict:
    """One epoch: its clips, the time to its last batch, and the time its end took after
    that (the iterator's teardown: TensorFlow's autotuning thread, a DataLoader's workers)."""
    t0, c0 = time.perf_counter(), tree_cpu()
    clips, first, last = 0, None, 0.0
    for batch in batches:
        clips += _count(batch, work)
        last = time.perf_counter() - t0
        if first is None:
            first = last
    wall, cpu = time.perf_counter() - t0, tree_cpu() - c0
    return {"clips": clips, "wall_s": last, "end_s": wall - last, "cpu_s": cpu,
            "first_batch_s": first}


def clips(job: dict) -> dict:
    """Build the contender, read epoch 1 (its first batch timed), then time epoch 2."""
    from benchmarks.video_peer_loaders import LOADERS, Work
    work = Work(**job["work"])
    kw = {"shards": job["shards"]} if job["name"] == "kit shards" else {}
    t0 = time.perf_counter()
    epoch = LOADERS[job["name"]](Path(job["folder"]), work, **kw)
    first = _epoch(epoch(1), work)
    first["first_batch_s"] += (time.perf_counter() - t0 - first["wall_s"]  # with the build
                               - first["end_s"])
    second = _epoch(epoch(2), work)
    return {**second, "clips_per_s": second["clips"] / second["wall_s"],
            "clips_per_s_with_end": second["clips"] / (second["wall_s"] + second["end_s"]),
            "cpu_per_clip": second["cpu_s"] / second["clips"],
            "first_batch_s": first["first_batch_s"],
            "epoch1_s": first["wall_s"] + first["end_s"]}


def _frames(folder: Path) -> int:
    import av

    from benchmarks.video_peer_loaders import videos
    n = 0
    for path, _ in videos(folder):
        with av.open(path) as c:
            n += c.streams.video[0].frames
    return n


def convert(job: dict) -> dict:
    """``write_video_shards`` to 112x112 JPEGs, all cores: frames/s and the cores kept busy."""
    from datakit.readers.video import write_video_shards
    folder, out = Path(job["folder"]), Path(job["out"])
    frames = _frames(folder)
    shutil.rmtree(out, ignore_errors=True)
    t0, c0 = time.perf_counter(), tree_cpu()
    write_video_shards(folder, out, frame_size=(job["size"], job["size"]), progress=False)
    wall, cpu = time.perf_counter() - t0, tree_cpu() - c0
    if not job.get("keep"):
        shutil.rmtree(out, ignore_errors=True)
    return {"frames": frames, "wall_s": wall, "cpu_s": cpu, "frames_per_s": frames / wall,
            "frames_per_cpu_s": frames / cpu, "cores_busy": cpu / wall}


def decode(job: dict) -> dict:
    """PyAV on one core: every frame of one video decoded, then decoded and converted to 112x112.

    The converter's floor: it must decode every frame and convert it once to
    the target size (JPEG encoding comes on top). Rates are per CPU second.
    """
    import av

    from benchmarks.video_peer_loaders import to_rgb, videos
    path = videos(Path(job["folder"]))[0][0]
    out = {}
    for name, size in (("decode_only", None), ("decode_convert", job["size"])):
        c0 = tree_cpu()
        n = 0
        with av.open(path) as c:
            s = c.streams.video[0]
            s.codec_context.thread_count = 1
            for frame in c.decode(s):
                if size:
                    to_rgb(frame, size)
                n += 1
        out[f"{name}_frames_per_cpu_s"] = n / (tree_cpu() - c0)
    return out


def main(argv: list[str]) -> int:
    from benchmarks.video_peer_loaders import Skip
    job = json.loads(argv[0])
    try:
        result = {"clips": clips, "convert": convert, "decode": decode}[job["kind"]](job)
    except Skip as e:
        result = {"skipped": str(e)}
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
