"""datakit.bench: ``python -m datakit.bench`` on two tiny videos and a tiny saved model, the
table of cores, and the profiler trace's device-idle share read from a planted trace."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from datakit.bench.device import GpuSampler, _union_ns, device_idle
from datakit.bench.reference import bench_videos, reference_model


@pytest.mark.timeout(400)
def test_the_command_runs_on_a_two_video_folder_and_a_saved_model(tmp_path, capsys,
                                                                   monkeypatch):
    """The whole command, as ``python -m datakit.bench`` runs it (``main`` with its argv), in
    this process: a fresh Python for it imported TensorFlow and Keras again (about 5 of its
    12 CPU s), which this test's process holds already. (``python -m datakit.bench --help``
    runs from the installed wheel in test_wheel.)"""
    folder = bench_videos(tmp_path / "videos", n=2, seconds=1, size=(64, 48))
    model = reference_model(clip_len=4, size=16)
    model.save(tmp_path / "tiny.keras")
    out = tmp_path / "figures.json"
    from datakit.bench.command import main
    monkeypatch.chdir(tmp_path)
    assert main([str(folder), "--model", str(tmp_path / "tiny.keras"), "--batch", "2",
                 "--batch-sizes", "2,4", "--batches", "3", "--steps", "3", "--json",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert "clips of 4x16x16" in printed and "| feed | clips per CPU s |" in printed
    assert printed.count("waiting for input:") == 2  # input_wait on each feed
    figures = json.loads(out.read_text())
    assert set(figures["per_cpu_s"]) == {"direct (video_dataset_from_directory)",
                                         "shards (clip_dataset)"}
    assert all(rate > 0 for rate in figures["per_cpu_s"].values())
    assert set(figures["appetite"]) == {"2", "4"} and all(v > 0 for v in
                                                          figures["appetite"].values())
    assert all(0 <= share <= 1 for share in figures["wait_share"].values())


def test_a_missing_folder_or_model_is_named_with_the_fix(tmp_path):
    from datakit.bench.command import main
    with pytest.raises(FileNotFoundError, match=r"--model .*nope\.keras.*model\.save"):
        main([str(tmp_path), "--model", str(tmp_path / "nope.keras")])
    with pytest.raises(FileNotFoundError, match=r"FOLDER .*absent.*one subfolder"):
        main([str(tmp_path / "absent"), "--quick"])


@pytest.mark.parametrize("argv, named", [
    (["--batches", "-1"], r"--batches: -1 is not >= 1"),  # read forever: drained_alone(.., -1)
    (["--steps", "0"], r"--steps: 0 is not >= 1"),  # failed in statistics.mean, after the work
    (["--batch", "x"], r"--batch: 'x' is not a whole number"),
    (["--batch-sizes", "8,x"], r"--batch-sizes: 'x' is not a whole number"),
    (["--batch-sizes", ""], r"--batch-sizes: '': give batch sizes separated by commas"),
    (["--batch-sizes", "8,,32"], r"--batch-sizes: '8,,32': give batch sizes"),
    (["--json", "{d}/no/such/out.json"], r"--json: '.*out\.json': its folder .*no/such"),
])
def test_bad_numbers_and_a_json_file_in_a_missing_folder_are_refused_first(tmp_path, capsys,
                                                                            argv, named):
    """Every option is checked by argparse before any video is made or model built: the
    usage error (exit 2) names the option and the value."""
    from datakit.bench.command import main
    argv = [a.replace("{d}", str(tmp_path)) for a in argv]
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "absent"), *argv])  # (a missing FOLDER would be named later)
    assert exit_.value.code == 2
    assert re.search(named, capsys.readouterr().err)


def test_good_numbers_parse(tmp_path):
    from datakit.bench.command import parser
    args = parser().parse_args(["--batch-sizes", "2, 4", "--json", str(tmp_path / "o.json")])
    assert args.batch_sizes == [2, 4] and args.json == tmp_path / "o.json"
    assert parser().parse_args([]).batch_sizes == [8, 32]


def _trace(folder: Path, kernels_ns: list[tuple[int, int]], host_ns: tuple[int, int]) -> None:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    space = xplane_pb2.XSpace()
    host = space.planes.add(name="/host:CPU")
    line = host.lines.add(name="python", timestamp_ns=0)
    line.events.add(offset_ps=host_ns[0] * 1000, duration_ps=(host_ns[1] - host_ns[0]) * 1000)
    gpu = space.planes.add(name="/device:GPU:0")
    for k, (start, stop) in enumerate(kernels_ns):
        stream = gpu.lines.add(name=f"Stream #{k % 2}", timestamp_ns=0)
        stream.events.add(offset_ps=start * 1000, duration_ps=(stop - start) * 1000)
    gpu.lines.add(name="XLA Ops", timestamp_ns=0).events.add(offset_ps=0, duration_ps=10**8)
    (folder / "plugins" / "profile" / "run").mkdir(parents=True)
    (folder / "plugins" / "profile" / "run" / "host.xplane.pb").write_bytes(
        space.SerializeToString())


def test_device_idle_is_the_time_no_kernel_ran_on_the_gpu(tmp_path):
    # kernels 0-20 and 10-30 on two streams overlap (30 ns busy), 60-70 (10 ns): 40 of 100
    _trace(tmp_path, [(0, 20), (10, 30), (60, 70)], host_ns=(0, 100))
    assert device_idle(tmp_path) == pytest.approx(0.6)
    assert _union_ns([(5, 6), (0, 2), (1, 3)]) == 4


def test_a_trace_without_a_gpu_plane_or_no_trace_gives_none(tmp_path):
    assert device_idle(tmp_path) is None
    _trace(tmp_path, [], host_ns=(0, 100))
    assert device_idle(tmp_path) == pytest.approx(1.0)  # a GPU that ran nothing: idle


def test_the_gpu_sampler_says_what_it_measures():
    assert "kernel" in GpuSampler.MEASURES and "utilization.gpu" in GpuSampler.MEASURES
    with GpuSampler() as gpu:
        pass
    assert gpu.kernel_share is None or 0 <= gpu.kernel_share <= 1
