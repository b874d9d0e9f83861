"""One measurement in a fresh process; prints one JSON line. Called by ``benchmarks/__main__.py``.

    python -m benchmarks.worker '{"kind": "speed", "name": "kit_fast", ...}'
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np

from benchmarks.data import COLUMNS, load_stats
from datakit.perf.bench import benchmark


def _maxrss_mb() -> tuple[float, float]:
    """Kernel high-water marks (own process, largest waited-for child), in MB."""
    from datakit.perf.memory import peak_rss_bytes
    own = peak_rss_bytes() / 1e6
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 1e6
    return own, kids


def speed(job: dict) -> dict:
    from benchmarks.contenders import CONTENDERS
    from datakit.perf.memory import RssSampler
    stats = load_stats(job["stats"])
    if job["name"] != "torch_DataLoader_2w":
        import tensorflow as tf  # noqa: F401  (count TensorFlow in the baseline, not the pipeline)
    sampler = RssSampler(0.005)  # from building the pipeline (pandas loads there) to the end
    base = sampler.peak / 1e6
    sampler.start()
    t0 = time.perf_counter()
    ds = CONTENDERS[job["name"]](job["paths"], stats, job["batch"], job["seed"])
    build_s = time.perf_counter() - t0
    r = benchmark(ds, steps=job.get("steps"), warmup=job["warmup"], progress=False)
    sampler.stop.set()
    sampler.join()
    del ds
    peak = max(sampler.peak / 1e6, r.peak_rss_mb)
    own, kids = _maxrss_mb()
    return {**r.as_dict(), "build_s": build_s, "rss_after_import_mb": base,
            "maxrss_mb": peak, "maxrss_growth_mb": peak - base,
            "ru_maxrss_mb": own, "ru_maxrss_children_mb": kids}


def mixing_figures(order, labels, batch_size):
    """The kit's own mixing measures (datakit.glassbox.shuffle_stats.mixing_stats) as a dict."""
    from datakit.glassbox.shuffle_stats import mixing_stats
    return vars(mixing_stats(order[None, :], labels=labels, batch_size=batch_size))


def mixing(job: dict) -> dict:
    """Read one whole epoch and measure how far the row ids moved (``mixing_stats``)."""
    from benchmarks.contenders import CONTENDERS
    stats = load_stats(job["stats"])
    ds = CONTENDERS[job["name"]](job["paths"], stats, job["batch"], job["seed"])
    mean, std = stats["row_id"].mean, stats["row_id"].std
    ids = []
    for batch in ds:
        x = batch[0]
        x = x[0] if isinstance(x, tuple) else x
        ids.append(np.asarray(x)[:, 0])
    order = np.rint(np.concatenate(ids).astype(np.float64) * std + mean).astype(np.int64)
    n = len(order)
    assert sorted(order.tolist()) == list(range(n)), "rows lost or duplicated"
    rows_per_file = n // len(job["paths"])
    file_of = np.arange(n) // rows_per_file  # label = the file a row came from
    return {"rows": n, **mixing_figures(order, file_of, job["batch"])}


def overlap(job: dict) -> dict:
    """Producer and consumer of equal cost (sleeps): ideal / measured, with and without prefetch."""
    from datakit.perf import synthetic as S
    from datakit.perf import timeline as T
    cost, n = job["cost"], job["n"]
    out = {}
    for name, prefetch in [("no_prefetch", 0), ("prefetch(1)", 1), ("prefetch(4)", 4)]:
        ds = T.tag(__import__("tensorflow").data.Dataset.range(n)).map(
            T.timed("produce", S.work(cost)))
        ds = S.serial(ds.prefetch(prefetch) if prefetch else ds)
        tl = T.trace_timeline(ds, step_time=cost)
        measured = float(tl.finished[-1] - tl.requested[0])
        produce = float((tl.end[:, 0] - tl.start[:, 0]).sum())  # what each side really took
        consume = float((tl.finished - tl.received).sum())
        ideal = max(produce, consume)
        out[name] = {"seconds": measured, "ideal_s": ideal, "efficiency": ideal / measured,
                     "produce_s": produce, "consume_s": consume,
                     "mean_wait_fraction": float(tl.wait_fraction().mean())}
    return out


def main(argv: list[str]) -> int:
    job = json.loads(argv[0])
    result = {"speed": speed, "mixing": mixing, "overlap": overlap}[job["kind"]](job)
    print("RESULT " + json.dumps({"job": job | {"paths": len(job.get("paths", []))},
                                  "result": result}), flush=True)
    return 0


if __name__ == "__main__":
    assert COLUMNS
    sys.exit(main(sys.argv[1:]))
