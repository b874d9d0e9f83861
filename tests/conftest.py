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

# Video probes are cached per file (datakit.readers.video.probe_cache): tests keep theirs in a
# folder of the run's own, never in the user's ~/.cache. Notebooks (nbval kernels) inherit it.
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
SLOW_FIRST = {
    "tests/test_checkpoint.py": 180,  # each resume in a fresh Python
    # 246 s before its tabs shared their JupyterLab page and kernel: 0.42x the time and 0.49x
    # the CPU measured side by side (442 s against 185 s on a busy 2-core machine)
    "tests/test_browser.py": 153,
    "notebooks/18_scale_out.ipynb": 125,
    "notebooks/21_reproducible_run.ipynb": 124,
    "notebooks/19_pipeline_doctor.ipynb": 120,
    "tests/test_memory_report.py": 117,
    "tests/test_wheel.py": 93,  # a fresh venv from the wheel, notebooks 01 and 10 run there
    "tests/test_transform.py": 83,
    "tests/test_cluster.py": 77,
    "notebooks/24_keras_backends.ipynb": 64,
    "tests/test_csv_reader.py": 49,
    "notebooks/11_shuffle_mixing.ipynb": 48,
}


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: -SLOW_FIRST.get(item.nodeid.split("::")[0], 0))  # stable
