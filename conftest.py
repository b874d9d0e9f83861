"""Loaded by every pytest run here, a lone notebook's too (``pytest notebooks/x.ipynb``).

No progress bar in a stored or compared output: a bar's text changes from run to run, and
nbval's kernels inherit this environment (see ``datakit.core.progress``).
"""

import os

os.environ["DATAKIT_PROGRESS"] = "0"
