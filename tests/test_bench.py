"""benchmark() returns sane, self-consistent fields (no wall-clock assertions)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from datakit.perf.bench import BenchResult, benchmark, count_elements


@pytest.mark.parametrize("n, batch, warmup", [
    pytest.param(100, 10, 1, id="whole-batches"), pytest.param(101, 10, 0, id="short-last-batch"),
    pytest.param(7, 3, 2, id="warmup-most")])
def test_counts_add_up(n, batch, warmup):
    r = benchmark(tf.data.Dataset.range(n).batch(batch), warmup=warmup, progress=False)
    batches = -(-n // batch)
    assert r.batches == batches - warmup
    skipped = min(warmup * batch, n)
    assert r.elements == n - skipped
    assert r.seconds > 0 and r.first_element_s >= 0
    assert r.elements_per_s == pytest.approx(r.elements / r.seconds)
    assert r.batches_per_s == pytest.approx(r.batches / r.seconds)
    assert r.peak_rss_mb >= r.rss_before_mb > 0
    assert r.peak_rss_growth_mb == pytest.approx(r.peak_rss_mb - r.rss_before_mb)


def test_steps_stops_early_even_on_an_endless_dataset():
    r = benchmark(tf.data.Dataset.range(5).repeat().batch(2), steps=4, warmup=1, progress=False)
    assert (r.batches, r.elements) == (4, 8)


def test_takes_any_iterable_and_dict_elements():
    batches = [{"x": np.zeros((4, 3)), "y": np.zeros(4)}] * 5
    r = benchmark(batches, warmup=0, progress=False)
    assert isinstance(r, BenchResult) and (r.batches, r.elements) == (5, 20)
    assert count_elements((np.zeros(7), np.zeros(2))) == 7


def test_memory_growth_is_seen():
    # A generator that holds on to 200 MB while it runs: the sampler must see the growth.
    def hog():
        keep = []
        for _ in range(4):
            keep.append(np.ones(50_000_000 // 8))
            yield np.zeros(1)
            import time
            time.sleep(0.05)
    r = benchmark(hog(), warmup=0, progress=False, sample_every=0.002)
    assert r.peak_rss_growth_mb > 100


def test_progress_bar_is_tqdm_on_stderr_and_off_with_progress_false(capsys):
    benchmark(tf.data.Dataset.range(20).batch(5), warmup=0, progress=True)
    err = capsys.readouterr().err
    assert "4/4" in err and "batch/s" in err  # tqdm's text bar (a widget in JupyterLab)
    benchmark(tf.data.Dataset.range(20).batch(5), warmup=0, progress=False)
    assert capsys.readouterr().err == ""


def test_bad_arguments_say_how_to_fix_the_call():
    ds = tf.data.Dataset.range(3)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        benchmark(ds, steps=0)
    with pytest.raises(ValueError, match="lower warmup"):
        benchmark(ds, warmup=5, progress=False)
    with pytest.raises(ValueError, match="repeats forever"):
        benchmark(ds.repeat())
    with pytest.raises(TypeError, match="iterable"):
        benchmark(3)


# -- benchmarks/video_peers.py and benchmarks/accelerator.py: the harness really runs ----------

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def _run_module(*args, timeout=300):
    import os
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _importable(*modules: str) -> set[str]:
    """Which of ``modules`` import in one fresh Python, tried in order as a peer's worker
    imports them (torch, then its decoder). One process for them all: a fresh process per
    module and per question imported torch four times (about 1.4 CPU s each). None asked:
    no process."""
    import subprocess
    import sys
    if not modules:
        return set()
    code = ("import importlib, sys\n"
            "for m in sys.argv[1:]:\n"
            "    try:\n"
            "        importlib.import_module(m)\n"
            "    except Exception:  # ImportError, or OSError from a missing shared library\n"
            "        continue\n"
            "    print(m)\n")
    p = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return set(p.stdout.split())


def test_tree_cpu_counts_the_cpu_of_child_processes():
    import subprocess
    import sys

    from benchmarks.video_peer_worker import tree_cpu
    before = tree_cpu()
    subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                    "while time.process_time() - t < 0.4: pass"], check=True)
    assert tree_cpu() - before >= 0.35  # the child's busy loop, charged to this tree


def test_video_peers_quick_runs_every_installed_contender_and_says_why_one_is_skipped(tmp_path):
    p = _run_module("benchmarks.video_peers", "--quick", "--work", str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    out = p.stdout
    results = (tmp_path / "RESULTS_video_peers_quick.md").read_text()
    assert "## 160x120" in out and "## 160x120" in results
    rows = {line.split(" | ")[0].lstrip("| "): line for line in out.splitlines()
            if line.startswith("| ") and not line.startswith("| path")}
    for name in ("kit direct", "kit shards", "floor"):  # always installed: TensorFlow and PyAV
        row = next(v for k, v in rows.items() if k.startswith(name))
        assert float(row.split(" | ")[1].split()[0]) > 0, row  # clips/s
        assert float(row.split(" | ")[3]) > 0, row  # CPU s per clip
    peers = {"torchcodec": ("torch", "torchcodec"), "decord": ("torch", "decord"),
             "tutorial": ("cv2",)}  # the name the log uses, and what the peer imports
    import importlib.util
    # only the peers whose every module is installed can run: import those (torch, 1.4 CPU s,
    # only where torchcodec or decord is there to use it)
    whole = [modules for modules in peers.values()
             if all(importlib.util.find_spec(m) is not None for m in modules)]
    here = _importable(*dict.fromkeys(m for modules in whole for m in modules))
    for name, modules in peers.items():
        row = next(v for k, v in rows.items() if name in k)
        if set(modules) <= here:
            assert float(row.split(" | ")[1]) > 0, row
        else:  # not installed here: skipped, with the reason and the fix, never a crash
            assert "SKIPPED: " in row and "does not import here" in row and "install" in row
            assert f"SKIPPED {name}: " in p.stderr
    conv = next(line for line in out.splitlines() if line.startswith("- conversion"))
    assert "frames/s" in conv and "cores busy" in conv and "x** (cores x that rate)" in conv
    ran = [name for name, modules in peers.items() if set(modules) <= here]
    assert ("- kit direct / " in out) == bool(ran), ran  # a ratio for each peer that ran


def test_accelerator_script_skips_with_its_reason_where_there_is_no_gpu():
    from benchmarks.accelerator import no_gpu_reason
    if no_gpu_reason() is None:
        pytest.skip("a GPU is visible here: the script would train")
    p = _run_module("benchmarks.accelerator", timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith("SKIPPED: ") and "GPU" in p.stdout
    assert "step ms" not in p.stdout  # nothing trained


def test_gpu_step_needs_pytorch_alone(tmp_path):
    """benchmarks/gpu_step.py runs where neither TensorFlow nor the kit is installed."""
    import importlib.util
    if importlib.util.find_spec("torch") is None:  # (not imported here: 1.4 CPU s)
        pytest.skip("torch is not installed")
    import json
    import subprocess
    import sys
    code = ("import sys, runpy; sys.modules['tensorflow'] = None; sys.modules['datakit'] = None;"
            " sys.modules['keras'] = None; sys.argv = sys.argv[1:];"
            " runpy.run_path(sys.argv[0], run_name='__main__')")
    out = tmp_path / "gpu.json"
    p = subprocess.run([sys.executable, "-c", code, str(ROOT / "benchmarks" / "gpu_step.py"),
                        "--device", "cpu", "--steps", "1", "--warmup", "0", "--batches", "2",
                        "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert [r["batch"] for r in rows] == [2] and rows[0]["clips_per_s"] > 0
    assert "batch   2:" in p.stdout


def test_cores_needed_divides_the_gpu_rate_by_each_feeds_rate():
    from benchmarks.accelerator import cores_needed
    table = cores_needed({"direct": 25.0, "shards": 400.0},
                         {"rows": [{"batch": 8, "clips_per_s": 100.0}]})
    assert "| direct | 25.0 | 4.00 |" in table and "| shards | 400.0 | 0.25 |" in table
    assert "cores for batch 8 (100 clips/s)" in table
    assert cores_needed({"direct": 25.0}, None).splitlines()[-1] == "| direct | 25.0 |"


# -- benchmarks/decoders.py and benchmarks/fit_overhead.py: their arithmetic -----------------


def test_decoder_counts_double_up_to_every_core():
    from benchmarks.decoders import decoder_counts
    assert decoder_counts(1) == [1]
    assert decoder_counts(2) == [1, 2]
    assert decoder_counts(12) == [1, 2, 4, 8, 12]


def test_decoders_report_divides_each_round_by_its_own_one_decoder_run():
    from benchmarks.decoders import report, scaling_runs
    assert scaling_runs(2) == [(1, 1, 4), (2, 1, 4), (1, 2, 4), (2, 2, 4), (1, 1, 1), (2, 1, 1)]
    scaling = {(1, 1, 4): [(10.0, 1.0), (20.0, 1.0)], (2, 1, 4): [(18.0, 1.9), (30.0, 1.8)],
               (1, 2, 4): [(15.0, 1.5), (24.0, 1.6)],
               (1, 1, 1): [(12.0, 1.0), (24.0, 1.0)], (2, 1, 1): [(18.0, 1.9), (24.0, 1.6)]}
    tp = {("threads", 1): [10.0], ("processes", 1): [10.0],
          ("threads", 2): [15.0], ("processes", 2): [20.0]}
    text = report(scaling, tp, [0.1, 0.2, 0.3], cores=2, per_epoch=12)
    # 1.8 and 1.5: per round; 9.5 and 16.7 clips per CPU second
    assert "| 2 | 1 (default) | 48 | 24.0 | 1.65 (1.50) | 0.82 | 1.85 | 13.1 |" in text
    assert "| 1 | 1 | 48 | 15.0 | 1.00 (1.00) | 1.00 | 1.00 | 15.0 |" in text
    assert "| 1 | 2 (default) | 48 | 19.5 | 1.35 (1.20) | 1.35 | 1.55 | 12.5 |" in text
    # the 12-video epoch against its own one-decoder runs (12, 24), not the longer epoch's
    assert "| 2 | 1 (default) | 12 | 21.0 | 1.25 (1.00) | 0.62 | 1.75 | 12.2 |" in text
    assert "| 2 | 15.0 | 20.0 | 0.75 (0.75) | 1.50 | 2.00 |" in text
    assert "**20.0%**" in text and "about **5** single decoders" in text
    assert "keeps **1.00** cores busy" in text and "at most about **2.00x**" in text


def test_fit_overhead_section_replaces_its_own_and_keeps_the_per_core_part(tmp_path, monkeypatch):
    from benchmarks import fit_overhead
    monkeypatch.setattr(fit_overhead, "RESULTS", tmp_path / "R.md")
    (tmp_path / "R.md").write_text("# Title\n\nper-core table\n")
    fit_overhead.write_section(f"{fit_overhead.SECTION}\n\nfirst\n")
    fit_overhead.write_section(f"{fit_overhead.SECTION}\n\nsecond\n")
    text = (tmp_path / "R.md").read_text()
    assert text.startswith("# Title\n\nper-core table\n") and "second" in text
    assert "first" not in text and text.count(fit_overhead.SECTION) == 1


def test_fit_overhead_report_sets_each_feed_against_its_rounds_memory_step():
    from benchmarks.fit_overhead import DIRECT, MEMORY, SHARDS, choose, report
    def run(direct, memory):
        return {"feeds": {DIRECT: {"step_s": direct, "cores": 2.0, "input_cpu_per_batch": 0.5},
                          SHARDS: {"step_s": memory, "cores": 1.6, "input_cpu_per_batch": 0.1},
                          MEMORY: {"step_s": memory, "cores": 1.5}}}
    runs = {"defaults": [run(1.2, 1.0), run(2.6, 2.0)], "other": [run(1.5, 1.0)],
            "slow model": [run(3.0, 3.0)]}  # the smallest ratio, the slowest training
    text = report(runs, cores=2)
    # direct: 1.2 and 1.3 of memory; input cores 0.5/1.0 and 0.5/2.0 -> median 0.375
    assert "| defaults | direct | 1,900 | 1.25 (1.20) | 2.00 | 1.50 | 0.38 | 1.00 |" in text
    assert "| other | direct | 1,500 | 1.50 (1.50) | 2.00 | 1.50 | 0.50 | 1.00 |" in text
    assert choose(runs) == ("other", 1.5)  # the fastest step, not the smallest ratio


def test_fit_overhead_says_whether_the_fastest_setting_stands_apart_from_the_next():
    from benchmarks.fit_overhead import DIRECT, against_next

    def run(step):
        return {"feeds": {DIRECT: {"step_s": step}}}
    apart = {"a": [run(1.0), run(1.1)], "b": [run(1.2), run(1.3)], "c": [run(2.0)]}
    assert against_next(apart, "a") == "ranges apart from b"
    close = {"a": [run(1.0), run(1.25)], "b": [run(1.2), run(1.3)]}
    assert against_next(close, "a") == "within noise of b"
    assert against_next({"a": [run(1.0)]}, "a") == "no other setting to compare"
