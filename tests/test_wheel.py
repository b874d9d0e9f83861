"""The kit as a user gets it: the wheel and sdist it builds, and notebooks run from pip alone.

Both are built from a copy of the repository with setuptools' own build hooks (PEP 517,
no network, no isolated build environment). The cheap tests check what the wheel and
sdist carry (LICENSE, ``py.typed``, CHANGELOG, the one version) and run ``twine check``
when twine is installed. The expensive one installs the wheel with the ``video`` and
``notebook`` extras into a fresh venv (pip fetches TensorFlow and the rest: minutes) and
runs notebooks 01 and 10 with that venv's kernel from a folder outside the repository,
with a fresh per-user cache. ``make test`` runs it; ``DATAKIT_WHEEL_TEST=0`` skips it
(for a quick local run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import datakit

ROOT = Path(__file__).resolve().parent.parent
@pytest.fixture(scope="module")
def dist(built_kit) -> dict[str, Path]:
    """The wheel and the sdist (the session's one build: ``built_kit`` in conftest.py)."""
    return built_kit


@pytest.mark.timeout(300)
def test_the_wheel_carries_license_typing_changelog_and_the_one_version(dist):
    version = datakit.__version__
    assert dist["wheel"].name == f"tf_datakit-{version}-py3-none-any.whl"
    with zipfile.ZipFile(dist["wheel"]) as whl:
        names = set(whl.namelist())
        meta = whl.read(f"tf_datakit-{version}.dist-info/METADATA").decode()
        licence = whl.read(f"tf_datakit-{version}.dist-info/licenses/LICENSE").decode()
    assert "datakit/py.typed" in names and "\nName: tf-datakit\n" in meta
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "datakit").rglob("*.py")}
    assert "datakit/readers/video/decoding/decoding.py" in modules  # a room of the video wing
    assert not modules - names, f"left out of the wheel: {sorted(modules - names)}"
    assert f"tf_datakit-{version}.data/data/share/doc/datakit/CHANGELOG.md" in names
    assert f"tf_datakit-{version}.data/data/share/datakit/data/housing/housing.csv" in names
    assert licence == (ROOT / "LICENSE").read_text() and "Apache License" in licence
    assert f"\nVersion: {version}\n" in meta and "\nLicense-Expression: Apache-2.0\n" in meta
    assert "\nLicense-File: LICENSE\n" in meta and "\nRequires-Dist: filelock" in meta
    assert "\nKeywords: tensorflow,tf.data," in meta and "\nClassifier: Typing :: Typed\n" in meta
    assert "\nClassifier: Operating System :: Microsoft :: Windows\n" in meta
    assert f"tf_datakit-{version}.data/data/share/datakit/notebooks/01_datasets.ipynb" in names
    assert f"tf_datakit-{version}.data/data/share/datakit/notebooks/ko/01_datasets.ipynb" in names
    assert f"tf_datakit-{version}.data/data/share/datakit/notebooks/START.md" in names
    assert '\nversion = "' not in (ROOT / "pyproject.toml").read_text()  # one source
    with tarfile.open(dist["sdist"]) as sdist:
        inside = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"LICENSE", "CHANGELOG.md", "datakit/py.typed", "pyproject.toml"} <= inside


@pytest.mark.timeout(120)
def test_twine_finds_the_metadata_of_wheel_and_sdist_clean(dist):
    pytest.importorskip("twine", reason="twine is not installed (pip install twine)")
    run = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(dist["wheel"]),
                          str(dist["sdist"])], capture_output=True, text=True, timeout=100)
    assert run.returncode == 0 and run.stdout.count("PASSED") == 2, run.stdout + run.stderr


@pytest.mark.timeout(300)
def test_the_bench_command_answers_help_from_the_wheel_outside_the_repository(dist, tmp_path):
    """``python -m datakit.bench --help`` from the wheel installed in a fresh venv, run from a
    folder outside the clone; the dependencies come from this environment's site-packages on
    PYTHONPATH (whose editable-install hook, a .pth file, Python does not run there)."""
    import site
    import sysconfig
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    vpy = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = subprocess.run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True, check=True,
                             timeout=60).stdout.strip()
    with zipfile.ZipFile(dist["wheel"]) as whl:  # a wheel is a zip: unpacked, it is installed
        whl.extractall(purelib)
    deps = os.pathsep.join([sysconfig.get_paths()["purelib"], *site.getsitepackages()])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = deps
    where = subprocess.run([str(vpy), "-c", "import datakit.bench; print(datakit.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr[-2000:]
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # not the clone's
    run = subprocess.run([str(vpy), "-m", "datakit.bench", "--help"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("usage: python -m datakit.bench") and "--model" in run.stdout


@pytest.mark.skipif(os.environ.get("DATAKIT_WHEEL_TEST") == "0",
                    reason="DATAKIT_WHEEL_TEST=0: installing TensorFlow into a fresh venv "
                           "(minutes) skipped")
@pytest.mark.timeout(1800)
def test_notebooks_01_and_10_run_from_the_wheel_alone_outside_the_repository(dist, tmp_path):
    venv = tmp_path / "venv"
    # --without-pip: this environment's pip installs into the venv (``pip --python``), as the
    # venv's own would; ensurepip's copy of pip (2.3 of this test's CPU seconds) is not needed
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    # Nothing of this checkout or of this test process leaks in: importing tensorflow_transform
    # (pytest's doctest collection imports datakit's tf.Transform modules) sets
    # TF_USE_LEGACY_KERAS=1, which a venv without tf_keras cannot honour.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "DATAKIT_DATA_DIR", "VIRTUAL_ENV", "JUPYTER_PATH",
                        "TF_USE_LEGACY_KERAS")}
    # --no-compile: pip would byte-compile every module of TensorFlow, Keras, Jupyter... (9 of
    # this test's 80 CPU seconds, measured with and without); the notebooks compile what they
    # import, as they would.
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"),
                              "install", "--quiet", "--no-compile", "--disable-pip-version-check",
                              f"{dist['wheel']}[video,notebook]"], env=env, timeout=1200,
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    work = tmp_path / "work"  # outside the repository: no data/ folder anywhere near
    work.mkdir()
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # the per-user data folder, fresh
    names = ("01_datasets", "10_your_own_videos")
    for name in names:
        shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", work)
    # one nbconvert for both (its start is about 2 CPU s); each notebook in a fresh kernel,
    # written beside it as NAME.nbconvert.ipynb; it stops at the first notebook that fails
    run = subprocess.run([str(bin_dir / "jupyter"), "nbconvert", "--to", "notebook",
                          "--execute", "--ExecutePreprocessor.timeout=600",
                          *(f"{name}.ipynb" for name in names)],
                         cwd=work, env=env, timeout=1500, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    for name in names:
        cells = json.loads((work / f"{name}.nbconvert.ipynb").read_text())["cells"]
        errors = [o for c in cells if c["cell_type"] == "code" for o in c["outputs"]
                  if o["output_type"] == "error"
                  and "raises-exception" not in c["metadata"].get("tags", [])]
        assert errors == [], errors[0]["evalue"] if errors else ""
    data = tmp_path / "cache" / "datakit" / "data"
    assert (data / "housing" / "housing.csv").is_file()  # the wheel's shipped set, copied
    assert any((data / "generated" / "messy_videos").rglob("*.mp4"))  # notebook 10's
