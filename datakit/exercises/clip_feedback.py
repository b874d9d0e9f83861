"""Notebook 10's exercises 3-5 judged in the learner's terms: the file, the frame, the video.

``frame_times`` and ``read_clip`` run on the learner's own probe results when given them:
when the answer differs and those facts differ from the kit's, the refusal names the probe
as the cause (:func:`~datakit.exercises.video_feedback.probe_problem`). An index is an int,
a clip ``uint8``; the choices may be a dataset or a list of tuples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from datakit.exercises.compare import Feedback
from datakit.exercises.video_feedback import no, ok, probe_problem, returned, short, type_name

__all__: list[str] = []


def _facts_blamed(item: object, want: dict, keys: Sequence[str]) -> str | None:
    """When the learner passed their own probe's facts, what in them differs from the kit's."""
    if not isinstance(item, dict):
        return None
    why = probe_problem(short(want["path"]), item, want, keys)
    return f"{why} (in your probe's facts: fix exercise 2 first)" if why else None


def judge_frame_times(mine: list, ref: list) -> Feedback:
    """``mine``: ``(the facts passed, answer)`` per file; ``ref``: ``(kit facts, frames)``."""
    for (item, got), (want, frames) in zip(mine, ref, strict=True):
        name = short(want["path"])
        if (why := returned(f"frame_times for {name}", got)):
            return no(why + ".")
        values = np.asarray(got)
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            return no(f"{name}: yours is {values.dtype} of shape {values.shape}: give one "
                      "file frame index per output frame.")
        if values.dtype.kind == "f":
            return no(f"{name}: your indices are floats ({values.dtype}, e.g. "
                      f"{values[:3].tolist()}): an index is an int, as np.searchsorted gives.")
        if values.tolist() == frames.tolist():
            continue
        if (why := _facts_blamed(item, want, ("pts", "time_base", "rate"))):
            return no(why + ".")
        if len(values) != len(frames):
            return no(f"{name}: {len(values)} output frames, the kit's {len(frames)}: a file "
                      f"has floor(end * fps + 1e-6) output frames, end being the last frame's "
                      "time plus 1 / rate (without a rate: frames - 1 over the span).")
        j = int(np.argmax(values != frames))
        return no(f"{name}: output frame {j} (at {j}/fps s) shows file frame {values[j]}, the "
                  f"kit's {frames[j]}: the last file frame at or before that time.")
    return ok(f"{len(ref)} files, each output frame's file frame as the kit picks it.")


def _shift(a: np.ndarray, b: np.ndarray) -> str | None:
    """'height' or 'width' when ``a`` is ``b`` moved by one pixel along it."""
    for axis, name in ((1, "height"), (2, "width")):
        n = a.shape[axis]
        ahead = [slice(None)] * 4
        behind = [slice(None)] * 4
        ahead[axis], behind[axis] = slice(1, n), slice(0, n - 1)
        if np.array_equal(a[tuple(ahead)], b[tuple(behind)]) or \
                np.array_equal(a[tuple(behind)], b[tuple(ahead)]):
            return name
    return None


def judge_clip_frames(mine: list, ref: list) -> Feedback:
    """``mine``: ``(facts passed, wanted, answer)``; ``ref``: ``(kit facts, clip)``."""
    for (item, wanted, got), (want, clip) in zip(mine, ref, strict=True):
        name = short(want["path"])
        if (why := returned(f"read_clip for {name}", got)):
            return no(why + ".")
        frames = np.asarray(got)
        if frames.dtype != np.uint8:
            return no(f"{name}: your clip is {frames.dtype}: frames are uint8 (rgb24).")
        if frames.shape != clip.shape:
            turned = (": reformat a frame turned by 90 or 270 degrees as stored (height and "
                      "width swapped), then turn it with np.rot90" if want["rotation"] in (90, 270)
                      else ": scale as the question says, then cut or pad to size x size")
            return no(f"{name}: your clip's shape is {frames.shape}, expected {clip.shape}"
                      f"{turned}.")
        if np.array_equal(frames, clip):
            continue
        if (why := _facts_blamed(item, want, ("path", "pts", "rotation", "height", "width"))):
            return no(why + ".")
        j = int(np.argmax([not np.array_equal(a, b) for a, b in zip(frames, clip,
                                                                    strict=True)]))
        where = f"{name}: frame {j} (file frame {wanted[j]})"
        if (same := [k for k in range(len(clip)) if np.array_equal(frames[j], clip[k])]):
            return no(f"{where} is the reference's frame {same[0]}: keep the order of wanted.")
        if (axis := _shift(frames, clip)):
            return no(f"{where} is one pixel off along its {axis}: the offset is "
                      "(scaled - size) // 2 for a crop, (size - scaled) // 2 for a pad, "
                      "rounded down.")
        diff = np.abs(frames[j].astype(int) - clip[j].astype(int))
        y, x = (int(i) for i in np.unravel_index(np.argmax(diff.max(-1)), diff.shape[:2]))
        return no(f"{where}, pixel ({y}, {x}): yours {frames[j, y, x].tolist()}, expected "
                  f"{clip[j, y, x].tolist()} (mean difference {diff.mean():.1f} of 255): scale "
                  "as the question says, reformat the frame as stored, then turn it.")
    return ok(f"{len(ref)} clips, each equal to the kit's, pixel for pixel.")


def _choice_rows(answer: Any, limit: int) -> list[tuple[int, ...]] | str:
    """The learner's ``(video, label, start)`` rows as ints, or a refusal (a str)."""
    if (why := returned("choices", answer)):
        return why
    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__iter__"):
        return f"your answer is {type_name(answer)}: return the dataset (or a list of rows)"
    rows = []
    for k, row in enumerate(answer):
        if k == limit:
            return f"yours has more than {limit - 1} rows: one per video (does it end?)"
        values = tuple(row) if isinstance(row, (tuple, list)) else None
        if values is None or len(values) != 3:
            return f"row {k} is {row!r}: each row is (video, label, start)"
        ints = []
        for field, v in zip(("video", "label", "start"), values, strict=True):
            a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
            if a.ndim or a.dtype.kind not in "iu" or isinstance(v, bool):
                return f"row {k}: its {field} is {a.dtype} {a.tolist()!r}: an index is an int"
            if hasattr(v, "dtype") and a.dtype != np.int64 and not isinstance(v, np.integer):
                return f"row {k}: its {field} is {a.dtype}: the question asks int64"
            ints.append(int(a))
        rows.append(tuple(ints))
    return rows


def judge_clip_choices(mine: Any, ref: dict) -> Feedback:
    """``ref``: the kit's rows and how they were drawn; ``mine``: the learner's dataset or
    list of rows."""
    want, training = ref["rows"], ref["training"]
    rows = _choice_rows(mine, len(want) + 1)
    if isinstance(rows, str):
        return no(rows + ".")
    if len(rows) != len(want):
        return no(f"yours has {len(rows)} rows, expected {len(want)}: one per video.")
    if rows == want:
        return ok(f"{len(want)} clip choices, equal to the reference's, in the same order.")
    if sorted(rows) == sorted(want):
        return no("the same clips in another order: " + (
            "shuffle(len(ids), seed=SEED) once, after the starts are drawn." if training else
            "validation and test keep the videos' order (no shuffle)."))
    by_video = {v: (label, start) for v, label, start in want}
    for v, label, start in rows:
        if v not in by_video:
            return no(f"video {v} is not one of ids.")
        if label != by_video[v][0]:
            return no(f"video {v}: label {label}, expected {by_video[v][0]}: each video keeps "
                      "its own label.")
        if start != by_video[v][1]:
            rule = ("r % (n - CLIP_LEN + 1), r the random number zip pairs with the video "
                    "(zip first, then shuffle)" if training else "the middle clip, "
                    "(n - CLIP_LEN) // 2")
            return no(f"video {v}: start {start}, expected {by_video[v][1]}: {rule}.")
    return no("your rows differ from the reference's: one row per video of ids.")
