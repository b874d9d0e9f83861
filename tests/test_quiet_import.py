"""``import datakit`` changes nothing of the learner's; ``datakit.quiet_tensorflow()`` is asked for.

Each check runs in a fresh Python (TensorFlow reads its variables once, when it loads),
with none of TensorFlow's variables set, as on a learner's machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from notebook_setup import NOTEBOOKS, SETUP_LINES, SETUP_LINES_MEMORY, apply, setup_cell

ROOT = Path(__file__).resolve().parent.parent


def run_fresh(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def plain_import() -> tuple[subprocess.CompletedProcess, dict]:
    """A plain ``import tensorflow`` (what it sets and writes itself), then the kit and its
    helpers imported on top: one fresh Python for two tests (a TensorFlow import is seconds)."""
    run = run_fresh("""
        import json, os
        env = dict(os.environ)
        import tensorflow as tf
        own = sorted(set(os.environ.items()) ^ set(env.items()))  # what TensorFlow sets itself
        def state():
            return {"env": dict(os.environ),
                    "threads": [tf.config.threading.get_inter_op_parallelism_threads(),
                                tf.config.threading.get_intra_op_parallelism_threads()],
                    "sync": tf.config.experimental.get_synchronous_execution(),
                    "soft": tf.config.get_soft_device_placement(),
                    "eager": tf.executing_eagerly(), "jit": tf.config.optimizer.get_jit(),
                    "optimizer": tf.config.optimizer.get_experimental_options(),
                    "float": tf.keras.backend.floatx(), "log": tf.get_logger().level}
        before = state()
        import datakit
        from datakit.readers.csv_files import reader
        from datakit import doctor, see, perf
        after = state()
        print(json.dumps({"own": own, "before": before, "after": after}))
    """)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(300)
def test_importing_the_kit_and_its_helpers_changes_no_variable_and_no_tensorflow_option(
        plain_import):
    out = plain_import[1]
    assert out["after"] == out["before"]
    assert "TF_ENABLE_ONEDNN_OPTS" not in out["after"]["env"]


@pytest.mark.timeout(300)
def test_quiet_tensorflow_hides_the_start_up_lines_keeps_onednn_and_sets_only_the_log_level(
        plain_import):
    run = run_fresh("""
        import os, sys
        import datakit
        before = dict(os.environ)
        print(datakit.quiet_tensorflow(), "tensorflow" in sys.modules)
        import tensorflow as tf
        print(int(tf.reduce_sum(tf.range(10))))
        print(datakit.quiet_tensorflow())  # TensorFlow already loaded: nothing to do
        print(sorted(set(os.environ.items()) ^ set(before.items())))
    """)
    plain, out = plain_import
    assert run.returncode == 0, run.stderr[-3000:]
    tensorflows_own = {tuple(pair) for pair in out["own"]}  # what TensorFlow sets itself
    assert run.stdout.splitlines()[:3] == ["True True", "45", "False"]
    changed = set(eval(run.stdout.splitlines()[3])) - tensorflows_own
    assert changed == {("TF_CPP_MIN_LOG_LEVEL", "2")}
    # the plain import writes the absl banner, oneDNN's and the CPU's notes
    assert run.stderr == "" and "oneDNN custom operations are on" in plain.stderr, run.stderr


@pytest.fixture(scope="module")
def your_level_and_onednn_off() -> list[str]:
    """``quiet_tensorflow(onednn=False)`` where you set ``TF_CPP_MIN_LOG_LEVEL`` yourself:
    one fresh Python for two tests (a TensorFlow import is seconds)."""
    run = run_fresh("""
        import os, sys
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
        import datakit
        from datakit import tensorflow_logs
        kept = [l for l in ["W0000 00:00:1.5 77 gpu_device.cc:2344] Cannot dlopen some GPU "
                            "libraries.\\n", "I0000 00:00:1.5 77 port.cc:153] oneDNN ...\\n",
                            "WARNING: All log messages before absl::InitializeLog() is "
                            "called are written to STDERR\\n"]
                if tensorflow_logs._worth_keeping(l, driver=False)]
        try:
            datakit.quiet_tensorflow(onednn="no")
        except TypeError as e:
            print("refused:", e)
        print(os.environ.get("TF_ENABLE_ONEDNN_OPTS"), datakit.quiet_tensorflow(onednn=False))
        print(os.environ["TF_CPP_MIN_LOG_LEVEL"], len(kept), kept[0].split("] ")[1].strip())
        from tensorflow.python.util import _pywrap_util_port
        print(_pywrap_util_port.IsMklEnabled())
    """)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout.splitlines()


@pytest.mark.timeout(300)
def test_quiet_tensorflow_keeps_the_level_you_set_and_warnings_it_does_not_know(
        your_level_and_onednn_off):
    assert your_level_and_onednn_off[2] == "0 1 Cannot dlopen some GPU libraries."


@pytest.mark.timeout(300)
def test_onednn_false_is_asked_for_and_turns_onednn_off_before_tensorflow_loads(
        your_level_and_onednn_off):
    """The memory notebooks ask for it: with oneDNN on, TensorFlow pools freed tensors and RSS
    stops showing what a pipeline holds."""
    lines = your_level_and_onednn_off
    assert lines[0].startswith("refused: onednn='no'") and lines[1] == "None True", lines
    assert lines[3] == "False"  # TensorFlow read the switch: its oneDNN kernels are off


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_calls_quiet_tensorflow_first_as_the_template_says(path):
    nb = nbformat.read(path, as_version=4)
    assert setup_cell(nb).source.startswith((SETUP_LINES, SETUP_LINES_MEMORY))
    assert not apply(nb), f"{path.name}: run python tests/notebook_setup.py"
    text = "\n".join(c.source for c in nb.cells)
    assert "quiets TensorFlow's start-up logs" not in text
    assert "TF_ENABLE_ONEDNN_OPTS=0` before TensorFlow loads" not in text


def test_the_no_driver_error_is_hidden_only_where_there_is_no_driver():
    from datakit.tensorflow_logs import _worth_keeping

    cuinit = ("E0000 00:00:1796633948.015781    7949 cuda_platform.cc:52] failed call to cuInit: "
              "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n")
    cpu = "To enable the following instructions: AVX2 FMA, in other operations, rebuild " \
          "TensorFlow with the appropriate compiler flags.\n"
    other = "E0000 00:00:1.5 77 some_op.cc:12] an error TensorFlow meant\n"
    assert not _worth_keeping(cuinit, driver=False) and _worth_keeping(cuinit, driver=True)
    assert not _worth_keeping(cpu, driver=True)
    assert _worth_keeping(other, driver=False) and _worth_keeping("a Python line\n", False)
