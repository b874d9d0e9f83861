"""The memory table: what the doctor predicts each pipeline holds in RAM, and what it measured.

    python -m benchmarks.memory

The pipelines whose holdings are known by construction (1 MB elements in a
``shuffle`` buffer, an in-memory ``cache``, a deep ``prefetch``, 64 open TFRecord
files, a 40 MB ``from_tensor_slices`` built while measured) and one that holds
nothing much, each reported by ``datakit.doctor.memory_report`` in its own
process (so one run's freed memory does not hide the next one's growth).
Writes benchmarks/RESULTS_memory.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
N = 250_000  # float32: 1 MB elements
CASES = ("shuffle buffer of 40 x 1 MB", "in-memory cache of 30 x 1 MB", "prefetch(40) of 1 MB",
         "64 open TFRecord files", "from_tensor_slices of 40 MB, built inside",
         "holds nothing much")


def _build(case: str):
    import numpy as np
    import tensorflow as tf

    def big(i):
        return tf.fill([N], tf.cast(i, tf.float32))
    elements = tf.data.Dataset.range(10_000).map(big)
    if case.startswith("shuffle"):
        return elements.shuffle(40, seed=1)
    if case.startswith("in-memory"):
        return elements.take(30).cache().repeat()
    if case.startswith("prefetch"):
        return elements.prefetch(40)
    if case.startswith("64 open"):
        folder = Path(tempfile.mkdtemp())
        paths = []
        for f in range(64):
            paths.append(str(folder / f"{f:02d}.tfrecord"))
            with tf.io.TFRecordWriter(paths[-1]) as w:
                for r in range(40):
                    w.write(bytes([r]) * 8_000)
        return tf.data.Dataset.from_tensor_slices(paths).interleave(
            tf.data.TFRecordDataset, cycle_length=64)
    if case.startswith("from_tensor"):
        array = np.ones((40, N), np.float32)
        return lambda: tf.data.Dataset.from_tensor_slices(array).batch(4)
    return tf.data.Dataset.range(10**6).map(lambda x: x + 1).batch(32)


def one(case: str) -> dict:
    """The memory report of one case, as a dict (run in a fresh process by :func:`run_all`)."""
    import datakit
    datakit.quiet_tensorflow()
    from datakit.doctor.memory_use import memory_report
    r = memory_report(_build(case), seconds=2.0)
    return {"case": case, "biggest": f"{r.biggest.kind} ({r.biggest.how})",
            "predicted_mb": r.predicted_bytes / 1e6, "peak_mb": r.measured_growth_bytes / 1e6,
            "steady_mb": r.steady_growth_bytes / 1e6, "within": r.within_margin,
            "elements": r.elements}


def run_all(log=print) -> list[dict]:
    out = []
    for case in CASES:
        cmd = [sys.executable, "-m", "benchmarks.memory", "--one", case]
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
        res = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else \
            {"case": case, "error": p.stderr.strip().splitlines()[-1][:200]}
        log(f"memory {case}: {res}")
        out.append(res)
    return out


def report(results: list[dict]) -> str:
    from datakit.doctor.memory_use import MARGIN
    L = [f"# Where the memory goes: predicted vs measured ({time.strftime('%Y-%m-%d %H:%M')})\n",
         "`datakit.doctor.memory_report(dataset, seconds=2.0)`, each pipeline in its own "
         "process: the prediction (sum of every stage's holdings, plus the element the loop "
         "holds) beside the measured RSS growth while a consumer takes 2 ms per element, "
         f"runtime help off. Margin: {MARGIN[0]:.0%} of the prediction + {MARGIN[1] / 1e6:g} MB.\n",
         "| pipeline | biggest stage (its rule) | predicted MB | peak growth MB | steady MB "
         "| within margin |", "|---|---|--:|--:|--:|:-:|"]
    for r in results:
        if "error" in r:
            L.append(f"| {r['case']} | error: {r['error']} | | | | |")
            continue
        L.append(f"| {r['case']} | {r['biggest']} | {r['predicted_mb']:,.1f} | "
                 f"{r['peak_mb']:,.1f} | {r['steady_mb']:,.1f} | "
                 f"{'yes' if r['within'] else 'NO'} |")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--one"]:
        print(json.dumps(one(argv[1])))
        return 0
    text = report(run_all())
    (HERE / "RESULTS_memory.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
