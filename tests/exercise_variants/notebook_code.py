"""Code taken from a route notebook's own cells, so that an exercise's cases run on the
notebook's inputs and helpers as they are written there (not on a copy that drifts)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]


def cells_defining(stem: str, *names: str) -> str:
    """The source of each code cell of ``notebooks/<stem>.ipynb`` (above its solutions) that
    defines or assigns one of ``names``, in notebook order; an error if a name is missing."""
    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    end = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Solutions"))
    picked, found = [], set()
    for cell in nb.cells[:end]:
        if cell.cell_type != "code":
            continue
        hits = {n for n in names if f"def {n}(" in cell.source
                or any(line.startswith(f"{n} =") for line in cell.source.splitlines())}
        if hits:
            picked.append(cell.source)
            found |= hits
    missing = sorted(set(names) - found)
    if missing:
        raise LookupError(f"{stem}: no code cell defines {missing}")
    return "\n\n".join(picked)


_NB09: dict = {}


def notebook09() -> dict:
    """Notebook 09's shards and pipeline functions, made once per process from its own
    cells, on 8 small training videos in a temporary folder (not the notebook's)."""
    if not _NB09:
        import matplotlib
        matplotlib.use("Agg")
        ns: dict = {"__name__": "nb09"}
        exec(compile("import datakit\nfrom pathlib import Path\nimport av\nimport numpy as np\n"
                     "import psutil\nimport tensorflow as tf\nimport matplotlib.pyplot as plt\n"
                     "from datakit.readers import video\nfrom datakit.see import video_clip\n",
                     "<nb09 imports>", "exec"), ns)
        ns.update(N_VIDEOS=8, N_VAL=4, SIZE=16, CLIP_LEN=8, SEED=42, x=None, y=None,
                  DATA=Path(tempfile.mkdtemp(prefix="nb09-variants-")))
        code = cells_defining("09_video_out_of_core", "list_videos", "read_frames",
                              "write_shards", "shard_files", "parse_clip",
                              "plain_clip_dataset", "sorted_clips")
        exec(compile(code, "<notebook 09>", "exec"), ns)
        _NB09.update(ns)
    return dict(_NB09)
