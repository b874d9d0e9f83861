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


def _epoch(batches, work, clips_per_epoch: int) -> dict:
    """The next epoch's batches from the run's one iterator: its clips and the time to its
    last batch (and to its first)."""
    t0, c0 = time.perf_counter(), tree_cpu()
    clips, first = 0, None
    while clips < clips_per_epoch:
        clips += _count(next(batches), work)
        if first is None:
            first = time.perf_counter() - t0
    if clips != clips_per_epoch:
        raise AssertionError(f"an epoch of {clips} clips, not {clips_per_epoch}: a batch "
                             "crossed the epoch's end")
    return {"clips": clips, "wall_s": time.perf_counter() - t0, "cpu_s": tree_cpu() - c0,
            "first_batch_s": first}


def clips(job: dict) -> dict:
    """Build the contender, read epoch 1 (its first batch timed), time epoch 2, read epoch 3,
    over one iterator; then time the run's end (the iterator's teardown, once per run).

    Epoch 2 is timed between two others, as in a long run: a pipeline that works ahead
    across an epoch's end (TensorFlow's prefetch) gets a head start from epoch 1 and gives
    one to epoch 3, so its window is neither short nor long of one epoch's work.
    """
    from benchmarks.video_peer_loaders import LOADERS, Work, videos
    work = Work(**job["work"])
    kw = {"shards": job["shards"]} if job["name"] == "kit shards" else {}
    per_epoch = len(videos(Path(job["folder"]))) * work.clips_per_video
    t0 = time.perf_counter()
    batches = LOADERS[job["name"]](Path(job["folder"]), work, **kw)(3)
    first = _epoch(batches, work, per_epoch)
    first_batch = time.perf_counter() - t0 - first["wall_s"] + first["first_batch_s"]
    second = _epoch(batches, work, per_epoch)
    _epoch(batches, work, per_epoch)
    t1 = time.perf_counter()
    left = sum(1 for _ in batches)  # none: the run's end, and its teardown
    del batches
    if left:
        raise AssertionError(f"{left} batch(es) after three epochs: not the same work")
    return {**second, "clips_per_s": second["clips"] / second["wall_s"],
            "cpu_per_clip": second["cpu_s"] / second["clips"], "first_batch_s": first_batch,
            "end_s": time.perf_counter() - t1, "epoch1_s": first["wall_s"]}


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
