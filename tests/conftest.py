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
# start first, in this order, so that none is left running alone at the end; the rest keep
# their order. Seconds each took in a clean-clone run (three workers, 2 cores, 2026-12-08),
# and the cores each keeps busy: units that mostly wait (servers, the lesson's sleeps) start
# beside busy ones (notebooks 18 and 06 started together beside the browser test: a quarter
# to a third of the CPU idle in the run's first minutes).
SLOW_FIRST = (
    "tests/test_browser.py",                    # 108 s, 1.1 cores (Chromium, JupyterLab)
    "notebooks/18_scale_out.ipynb",             # 107 s, 0.3: eleven servers started
    "notebooks/19_pipeline_doctor.ipynb",       # 74 s, 0.85
    "tests/test_transform.py",                  # 63 s, 0.9: Beam
    "notebooks/06_performance.ipynb",           # 69 s, 0.3: slow stages that sleep
    "tests/test_wheel.py",                      # 62 s, 1: a venv from the wheel
    "notebooks/21_reproducible_run.ipynb",      # 68 s, 0.7
    "tests/test_memory_report.py",              # 66 s, 0.65
    "notebooks/15_tfrecords_in_production.ipynb",  # 64 s
    "tests/test_sweep.py",                      # 62 s, 0.6
    "notebooks/08_where_the_memory_goes.ipynb",  # 56 s, 0.5: cells that run for set times
    "tests/test_video_exit.py",                 # 51 s, 0.9
    "notebooks/09_video_out_of_core.ipynb",     # 53 s
    "notebooks/10_your_own_videos.ipynb",       # 49 s
    "tests/test_csv_reader.py",                 # 48 s
    "notebooks/11_shuffle_mixing.ipynb",        # 43 s
    "tests/test_cluster.py",                    # 42 s, 0.45: servers
)


def pytest_collection_modifyitems(config, items):
    first = {unit: k for k, unit in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::")[0], len(first)))  # stable
