"""Loaded by every pytest run here, a lone notebook's too (``pytest notebooks/x.ipynb``).

No progress bar in a stored or compared output: a bar's text changes from run to run, and
nbval's kernels inherit this environment (see ``datakit.core.progress``). Every route
notebook runs twice in one kernel (:func:`run_route_twice`).
"""

import os
from pathlib import Path

os.environ["DATAKIT_PROGRESS"] = "0"

#: The Korean edition is not run a second time: its code cells and outputs are the English
#: notebooks' (tests/test_translations.py checks them equal), which nbval runs.
collect_ignore = ["notebooks/ko"]


def pytest_collection_modifyitems(config, items):
    items[:] = run_route_twice(items)


def run_route_twice(items: list) -> list:
    """Every route notebook (01-10) runs twice in a row in one kernel: after nbval's last
    cell of the notebook, each code cell runs once more in the same kernel ("Cell N again"),
    its outputs not compared, and fails if it raises (a ``raises-exception`` cell must raise
    again). A learner re-runs a notebook; a ``mkdir`` without ``exist_ok`` must not stop
    them. Cheaper than a second execution: no kernel start, no second import, no output
    comparison."""
    from collections import defaultdict
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # nbval is not installed: no notebook is collected
        return items
    last: dict = {}
    for k, item in enumerate(items):
        if isinstance(item, IPyNbCell) and Path(str(item.parent.path)).stem < "11":
            last[item.parent] = k
    again = {k: [IPyNbCell.from_parent(c.parent, name=f"{c.name} again", cell_num=c.cell_num,
                                       cell=c.cell,
                                       options=defaultdict(bool, {**c.options, "check": False}))
                 for c in items if isinstance(c, IPyNbCell) and c.parent is parent]
             for parent, k in last.items()}
    return [x for k, item in enumerate(items) for x in [item, *again.get(k, [])]]
