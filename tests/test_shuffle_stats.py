"""The shuffle statistic the doctor's memory advice uses lives below Matplotlib.

``mixing_stats`` is in :mod:`datakit.glassbox.shuffle_stats` (plain NumPy) and
``shuffled_orders`` in :mod:`datakit.perf.shuffle_runs` (each at that one address; the
pictures of them are :mod:`datakit.see.mixing`).
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(120)
def test_the_memory_advice_imports_without_matplotlib():
    """Its mixing statistic comes from a layer without Matplotlib: with Matplotlib made
    unimportable (TensorFlow's Keras then goes without it), the module still imports."""
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "import importlib; importlib.import_module('datakit.doctor.memory_advice'); "
            "print(sorted(m for m, mod in sys.modules.items() if mod is not None "
            "and m.startswith(('matplotlib', 'datakit.see', 'datakit.plotting'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_shuffled_orders_refuses_a_seed_that_is_not_an_int():
    import pytest

    from datakit.perf.shuffle_runs import shuffled_orders
    with pytest.raises(TypeError, match="seed must be an int, got True"):
        shuffled_orders(5, 2, seed=True)  # was taken as seed 1
