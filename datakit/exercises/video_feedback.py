"""Notebook 10's exercises 1-2 judged in the learner's terms: the file, the row, the key.

Each ``judge_*`` takes what the learner's function gave (see
:mod:`datakit.exercises.video_reader`, which runs it) and the reference, and returns a
:class:`~datakit.exercises.compare.Feedback` whose refusal names the first file (or row)
that differs, what differs in it, and the likely cause; the helpers here serve exercises
3-5 too (:mod:`datakit.exercises.clip_feedback`). An answer is compared as given:
a float is not an index, a ``str`` label is not an ``int``, a ``Fraction`` is not a float.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from datakit.exercises.compare import Feedback
from datakit.exercises.learner import your_line

__all__: list[str] = []

FORGOT = "did your function forget to `return`"


@dataclass
class Raised:
    """An exception raised inside the learner's function, with the learner's line."""

    error: BaseException

    def __str__(self) -> str:
        words = str(self.error).strip().splitlines()
        return (f"{type(self.error).__name__}{your_line(self.error)}"
                + (f": {words[0][:200]}" if words else ""))


def run(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``, or a :class:`Raised` naming the learner's line that raised."""
    try:
        return function(*args)
    except Exception as e:  # the learner's error, reported as theirs
        return Raised(e)


def short(path: str | os.PathLike) -> str:
    """A file as its class folder names it: its last three parts (no machine path)."""
    parts = Path(str(path)).parts
    return "/".join(parts[-3:]) if len(parts) > 3 else str(path)


def ok(text: str) -> Feedback:
    return Feedback(True, [f"correct: {text}"])


def no(text: str, *more: str) -> Feedback:
    """A refusal; its first line ends with a full stop (or the question's mark)."""
    text = text.rstrip(".")
    return Feedback(False, [f"not yet: {text}" + ("" if text.endswith("?") else "."), *more])


def _is_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_float(x: object) -> bool:
    return isinstance(x, (float, np.floating, int, np.integer)) and not isinstance(x, bool)


def type_name(x: object) -> str:
    return type(x).__name__


def returned(what: str, got: object) -> str | None:
    """Why ``got`` is no answer at all (None, an exception), or None."""
    if got is None:
        return f"{what} returned None: {FORGOT}?"
    if isinstance(got, Raised):
        return f"{what} raised {got}"
    return None


# -- 1. the listing ---------------------------------------------------------------------------

def _row_problem(k: int, row: object) -> str | None:
    if not isinstance(row, (tuple, list)) or len(row) != 3:
        return f"row {k} is {row!r}: each row is (path relative to folder, label, split)"
    path, label, split = row
    if not isinstance(path, str):
        return (f"row {k}: the path {path!r} is {type_name(path)}, not a str: give "
                "path.relative_to(folder).as_posix()")
    if not _is_int(label):
        return (f"row {k} ({path}): the label {label!r} is {type_name(label)}, not an int: label i "
                "is the index of the class in class_names")
    if split not in ("train", "validation", "test"):
        return f"row {k} ({path}): the split {split!r} is not 'train', 'validation' or 'test'"
    return None


def _extra_cause(path: str) -> str:
    if Path(path).is_absolute():
        return "the path is relative to the folder: path.relative_to(folder).as_posix()"
    if any(part.startswith(".") for part in path.split("/")):
        return "a name that starts with '.' (a file's or a folder's on the way) is left out"
    if Path(path).suffix.lower() not in (".mp4", ".m4v", ".avi", ".webm", ".mkv", ".mov"):
        return "only the video endings count"
    return "the kit does not list it"


def _listing_files(paths: list[str], expected: set[str]) -> str | None:
    """A file listed twice, a file that is no video of the set, or a video missing."""
    twice = [p for p, n in Counter(paths).items() if n > 1]
    missing, extra = sorted(expected - set(paths)), sorted(set(paths) - expected)
    if twice:
        return f"{twice[0]} is listed {paths.count(twice[0])} times: list each file once"
    if extra:
        return (f"{len(extra)} file(s) of yours are not videos of the set, first {extra[0]}: "
                f"{_extra_cause(extra[0])}")
    if missing:
        nested = [p for p in missing if p.count("/") > 1]
        cause = ("videos in sub-folders count: Path.rglob walks them" if nested else
                 "every file with a video ending counts (.MP4 too)")
        return (f"{len(missing)} video(s) missing from yours, first {(nested or missing)[0]}: "
                f"{cause}")
    return None


def _listing_splits(mine: list, rows: list, inverse: list[str]) -> str | None:
    """The first row whose split differs, with the likely cause, or None."""
    got, want = Counter(r[2] for r in mine), Counter(r[2] for r in rows)
    if got != want:
        return (f"your split counts are {dict(got)}, expected {dict(want)}: the last "
                "int(0.2 * n) ranks are the test set, the int(0.2 * n) before them validation")
    wrong = [(k, row[0], row[2], want[2]) for k, (row, want) in enumerate(
        zip(mine, rows, strict=True)) if row[2] != want[2]]
    if not wrong:
        return None
    k, path, split, want_split = wrong[0]
    cause = ("you took order[i] as video i's rank; the permutation lists the videos by "
             "rank: for rank, i in enumerate(order), video i gets rank's split"
             if [row[2] for row in mine] == inverse else
             "draw the permutation with np.random.default_rng(seed), over the rows in the "
             "listing's order")
    return (f"row {k} ({path}): split {split!r}, expected {want_split!r} ({len(wrong)} rows "
            f"differ): {cause}")


def judge_listing(mine: Any, ref: dict) -> Feedback:
    """``ref``: the listing in ``Path`` order and in ``str`` order (both allowed), each with
    its split, the class names, and the splits of a permutation read the other way round."""
    if (why := returned("list_videos", mine)):
        return no(why)
    if not isinstance(mine, (list, tuple)):
        return no(f"your answer is {type_name(mine)}: return a list of (path, label, split)")
    if (why := next(filter(None, (_row_problem(k, row) for k, row in enumerate(mine))), None)):
        return no(why)
    paths = [row[0] for row in mine]
    if (why := _listing_files(paths, {p for p, _, _ in ref["path_order"]})):
        return no(why)
    order = next((o for o in ("path", "str") if paths == [p for p, _, _ in ref[f"{o}_order"]]),
                 None)
    if order is None:
        k = next(k for k, (a, b) in enumerate(zip(paths, sorted(paths, key=Path), strict=True))
                 if a != b)
        return no(f"row {k} is {paths[k]}, expected {sorted(paths, key=Path)[k]}: the rows "
                  "are sorted by path (as Path objects, or as str: either is accepted)")
    rows = ref[f"{order}_order"]
    for k, (row, want) in enumerate(zip(mine, rows, strict=True)):
        if row[1] != want[1]:
            return no(f"row {k} ({row[0]}): label {row[1]}, expected {want[1]}: label i is "
                      f"class_names[i], the sorted class folders {ref['class_names']}")
    if (why := _listing_splits(list(mine), rows, ref[f"inverse_{order}_split"])):
        return no(why)
    return ok(f"{len(rows)} videos, each with its label and split, sorted by path.")


# -- 2. the probe -----------------------------------------------------------------------------

KEYS = ("path", "pts", "time_base", "rate", "rotation", "height", "width")


def _pts_problem(name: str, pts: object, want: list, time_base: float) -> str | None:
    if not isinstance(pts, (list, tuple, np.ndarray)):
        return f"{name}: 'pts' is {type_name(pts)}: give a list of the packets' pts"
    values = np.asarray(pts)
    if len(values) != len(want):
        return (f"{name}: {len(values)} pts, the file has {len(want)} packets with data: keep "
                "the packets with p.size (the last, empty one has pts None)")
    if len(values) and values.dtype.kind not in "iu":
        if values.dtype.kind == "f" and np.allclose(values - values[0],
                                                    (np.asarray(want) - want[0]) * time_base):
            return (f"{name}: 'pts' are in seconds: give the packets' own pts, ints in units "
                    "of time_base")
        return f"{name}: 'pts' are {values.dtype}, not ints: give the packets' own p.pts"
    if values.tolist() == want:
        return None
    if sorted(values.tolist()) == want:
        return (f"{name}: 'pts' are not sorted: packets come in decode order (a B-frame is "
                "stored after the frames it is predicted from): sort them")
    k = int(np.argmax(values != np.asarray(want)))
    return f"{name}: pts[{k}] is {values[k]}, the file's {want[k]}"


def probe_problem(name: str, found: dict, want: dict,
                  keys: Sequence[str] = KEYS) -> str | None:
    """The first of ``keys`` whose value in a learner's facts differs from the kit's, said
    in the learner's terms (``name``: the file), or None."""
    if not isinstance(found, dict):
        return f"{name}: your facts are {type_name(found)}, not a dict"
    missing = [k for k in keys if k not in found]
    if missing:
        return f"{name}: your dict lacks {missing}: the later exercises read them"
    checks = {
        "path": lambda: None if str(found["path"]) == want["path"] else
        f"'path' is {found['path']!r}, expected the path given to probe, {want['path']!r}",
        "pts": lambda: _pts_problem(name, found["pts"], list(want["pts"]), want["time_base"]),
        "time_base": lambda: _number(found["time_base"], want["time_base"], "time_base",
                                     "float(stream.time_base)"),
        "rate": lambda: _number(found["rate"], want["rate"], "rate",
                                "float(stream.average_rate or 0)"),
        "rotation": lambda: None if _is_int(found["rotation"]) and found["rotation"] ==
        want["rotation"] else f"'rotation' is {found['rotation']!r}, expected "
        f"{want['rotation']} (int(frame.rotation) % 360 of the first frame)",
        "height": lambda: _size(found, want),
        "width": lambda: None,
    }
    for key in keys:
        if (why := checks[key]()):
            return why if why.startswith(name) else f"{name}: {why}"
    return None


def _number(value: Any, want: float, key: str, how: str) -> str | None:
    if isinstance(value, Fraction):
        return f"'{key}' is a Fraction ({value}): give a float, {how}"
    if not _is_float(value):
        return f"'{key}' is {type_name(value)} ({value!r}): give a float, {how}"
    if np.isclose(float(value), want, rtol=1e-6, atol=0):
        return None
    return f"'{key}' is {float(value):g}, the file's {want:g}: {how}"


def _size(found: dict, want: dict) -> str | None:
    h, w = found["height"], found["width"]
    if not (_is_int(h) and _is_int(w)):
        return f"'height' and 'width' are {type_name(h)} and {type_name(w)}: give ints"
    if (h, w) == (want["height"], want["width"]):
        return None
    if (w, h) == (want["height"], want["width"]):
        return (f"'height' and 'width' are swapped ({h} x {w}, shown {want['height']} x "
                f"{want['width']}): a file turned by 90 or 270 degrees shows its stored "
                "width as its height")
    return f"'height' x 'width' is {h} x {w}, shown {want['height']} x {want['width']}"


def judge_probe(mine: list, ref: list) -> Feedback:
    """``mine``, ``ref``: ``(path, facts dict or reason)`` per file; the reference's reason
    is the kind of bad file ("unreadable" or "truncated") and why."""
    for (path, found), (_, want) in zip(mine, ref, strict=True):
        if (why := returned(f"probe({path!r})", found)):
            cause = ("" if found is None else ": a bad file gives its reason, a str, not an "
                     "exception" if isinstance(want, tuple) else ", a file the kit reads")
            return no(why + cause + ".")
        if isinstance(want, tuple):
            kind, reason = want
            if not isinstance(found, str):
                return no(f"{path}: yours gives its facts, the kit finds it {kind} ({reason}): "
                          + ("compare stream.frames with the packets you counted." if
                             kind == "truncated" else "FFmpeg cannot open it."))
            said = found.split()[0].strip(":,.").lower() if found.split() else ""
            if said != kind:
                return no(f"{path}: your reason {found!r} starts {said!r}, the kit finds it "
                          f"{kind} ({reason}).")
            continue
        if isinstance(found, str):
            return no(f"{path}: yours leaves it out ({found!r}); the kit reads it, "
                      f"{len(want['pts'])} frames.")
        if (why := probe_problem(path, found, want)):
            return no(why + ".")
    good = sum(isinstance(w, dict) for _, w in ref)
    return ok(f"{len(ref)} files: the facts of {good} good files, and the kind of "
              f"{len(ref) - good} bad ones, as the kit's probe finds them.")
