"""Shared pytest setup: quiet TensorFlow, the notebook backend, fixtures several test files use."""

import os

# Before anything imports TensorFlow: the quiet level datakit.quiet_tensorflow() sets. oneDNN
# stays as TensorFlow sets it, as for a learner (notebook kernels inherit this environment).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
# Notebook kernels (nbval) inherit this environment: let them draw with the
# inline backend, as in JupyterLab, whatever the caller's MPLBACKEND says.
os.environ.pop("MPLBACKEND", None)

collect_ignore = ["run_notebooks.py"]

# Video probes are cached per file (datakit.readers.video.decoding.probe_cache): tests keep
# theirs in a folder of the run's own, never in the user's ~/.cache. Notebooks (nbval
# kernels) inherit it.
if "DATAKIT_PROBE_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["DATAKIT_PROBE_CACHE"] = tempfile.mkdtemp(prefix="datakit-probes-")
    atexit.register(shutil.rmtree, os.environ["DATAKIT_PROBE_CACHE"], ignore_errors=True)


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def videos():
    """Tiny moving-square videos (see video_cases.py), made once per run."""
    from video_cases import KW, N

    from datakit.readers import video
    return video.make_videos(N, **KW)


@pytest.fixture(scope="session")
def mp4_dir(videos, tmp_path_factory):
    """``videos`` written as MP4 files, one folder per class."""
    from datakit.readers import video
    d = tmp_path_factory.mktemp("mp4")
    video.write_mp4_videos(videos, d)
    return d


#: One build per process: a second build in the same process left no sdist (setuptools 84).
_BUILD = ("import sys; from setuptools import build_meta as b; "
          "print('BUILT', b.build_{}(sys.argv[1]))")


@pytest.fixture(scope="session")
def built_kit(tmp_path_factory) -> dict:
    """The kit's wheel and sdist, built once per session from a copy of the repository (no
    generated data) with setuptools' own hooks: no network, no isolated build environment."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    source = tmp_path_factory.mktemp("source") / "datakit"
    shutil.copytree(root, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".ipynb_checkpoints",
        ".pytest_cache", ".mypy_cache"))
    shutil.rmtree(source / "data" / "generated", ignore_errors=True)
    out = tmp_path_factory.mktemp("dist")
    built = {}
    for kind in ("wheel", "sdist"):  # setuptools talks on stdout too: the name is marked
        run = subprocess.run([sys.executable, "-c", _BUILD.format(kind), str(out)], cwd=source,
                             timeout=280, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]
        built[kind] = out / next(line.split()[1] for line in run.stdout.splitlines()
                                 if line.startswith("BUILT "))
    return built


@pytest.fixture(scope="module")
def housing(tmp_path_factory):
    """The housing table split into train/valid/test CSV shards, and the train statistics."""
    from csv_cases import housing_parts

    from datakit.readers.csv_files.stats import column_stats
    parts = housing_parts(tmp_path_factory.mktemp("housing"))
    return parts, column_stats(parts["train"])


# `make test` hands out whole files (and whole notebooks) to three workers (`--dist loadfile`),
# in collection order (`--no-loadscope-reorder`; by default xdist orders files by their number
# of tests, which sent the one-test browser file, 4 minutes, last of all). The longest units
# start first so that none is left running alone at the end; the rest keep their order.
# Seconds, from a clean-clone run's durations (three workers, 2 cores).
SLOW_FIRST = {  # seconds each took in a clean-clone run (3 workers, 2 cores, 2026-12-07, late)
    # 246 s before its tabs shared their JupyterLab page and kernel: 0.42x the time and 0.49x
    # the CPU measured side by side (442 s against 185 s on a busy 2-core machine)
    "notebooks/18_scale_out.ipynb": 130,  # eleven servers started
    "tests/test_browser.py": 121,
    "notebooks/06_performance.ipynb": 79,
    "notebooks/09_video_out_of_core.ipynb": 78,
    "notebooks/19_pipeline_doctor.ipynb": 77,
    "tests/test_transform.py": 74,
    "tests/test_memory_report.py": 73,
    "tests/test_csv_dialects.py": 71,
    "tests/test_cluster.py": 70,
    "tests/test_wheel.py": 68,  # a fresh venv from the wheel, notebooks 01 and 10 run there
    "tests/test_csv_reader.py": 56,
    "notebooks/08_where_the_memory_goes.ipynb": 54,
}


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: -SLOW_FIRST.get(item.nodeid.split("::")[0], 0))  # stable
