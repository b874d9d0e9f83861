"""Notebook 10's inputs for tests: a small messy folder, and the notebook's solution code.

The folder is :func:`make_messy_video_folder`'s (seed 1, 3 videos a class) plus one copy of a
good video named ``up/phone-2.mp4`` beside the sub-folder ``up/phone/``: sorted as strings it
comes before ``up/phone/up_phone.mp4`` ('-' sorts before '/'), sorted as ``Path`` objects
after, so both orders the listing question allows are really different here.
"""

from __future__ import annotations

import ast
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import nbformat
import numpy as np

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "10_your_own_videos.ipynb"
CLIP_LEN, SIZE, FPS, SEED = 8, 32, 25, 1


@lru_cache(maxsize=1)
def messy_folder() -> Path:
    from datakit.readers.video.synthetic.messy_folder import make_messy_video_folder

    folder = Path(tempfile.mkdtemp(prefix="nb10-")) / "videos"
    make_messy_video_folder(folder, per_class=3, seed=1)
    good = sorted((folder / "up").glob("up_*.mp4"))[0]
    shutil.copy(good, folder / "up" / "phone-2.mp4")
    return folder


def _solution_cells() -> list[str]:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    start = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Solutions"))
    return [c.source for c in nb.cells[start:] if c.cell_type == "code"]


@lru_cache(maxsize=1)
def solution_sources() -> dict[str, str]:
    """The source of each function (and upper-case constant) the solution cells define."""
    found = {}
    for source in _solution_cells():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                found[node.name] = ast.get_source_segment(source, node)
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id.isupper():
                found[node.targets[0].id] = ast.get_source_segment(source, node)
    return found


def edited(name: str, *changes: tuple[str, str]) -> str:
    """The solution's function ``name`` with each ``(old, new)`` change (``old`` must be
    there), then ``answer = name``: a learner's answer that differs from the solution by
    one plausible slip."""
    source = solution_sources()[name]
    for old, new in changes:
        assert old in source, f"{old!r} is not in the solution's {name}"
        source = source.replace(old, new)
    return f"{source}\n\nanswer = {name}"


def namespace() -> dict:
    """What the solution cells need: the notebook's imports and constants, and every
    solution function (a later one builds on the earlier)."""
    import av
    import tensorflow as tf

    from datakit import exercises
    ns = {"np": np, "av": av, "tf": tf, "Path": Path, "exercises": exercises,
          "CLIP_LEN": CLIP_LEN, "SIZE": SIZE, "FPS": FPS, "SEED": SEED}
    exec("\n\n".join(solution_sources().values()), ns)
    return ns
