"""The references of notebook 10's reader exercises: the kit's own video rules, as plain elements.

Each exercise checks one part of a take-home video reader against the kit's
production code (:mod:`datakit.readers.video`), on the same inputs:

- ``"video_listing"``: the listing of :func:`~datakit.readers.video.index.folders.video_files`
  (class folders sorted, files in sub-folders counted, hidden and ``._*`` files out,
  sorted by path, as ``Path`` objects or as strings), each file with its label and a
  seeded split **by video** into ``"train"``, ``"validation"`` and ``"test"``
  (:func:`split3`);
- ``"video_probe"``: what :func:`~datakit.readers.video.decoding.decoding.probe` finds per file:
  a good file's facts (sorted ``pts`` in ``time_base`` units, ``time_base`` and ``rate``
  as floats, rotation, displayed height and width), or the kind of bad file
  (``"unreadable"``: FFmpeg cannot open it; ``"truncated"``: it opens, its frames do not);
- ``"frame_times"``: :func:`~datakit.readers.video.decoding.decoding.output_frames`, the file
  frame shown at each time step of a chosen frame rate;
- ``"clip_frames"``: :func:`~datakit.readers.video.decoding.decoding.decode_frames`, a clip's
  frames centre-cropped or padded to the target's aspect ratio;
- ``"clip_choices"``: one epoch of clip choices ``(video, label, start)``, notebook 09's
  design: a seeded ``Dataset.random`` zipped with the videos for training, the middle
  clip for validation (:func:`clip_choice_rows`).

``frame_times`` and ``clip_frames`` run the learner's function on the learner's own probe
results when given them (a difference those cause is blamed on the probe), or on the
kit's facts when given paths. :mod:`datakit.exercises.video_feedback` and
:mod:`datakit.exercises.clip_feedback` judge the answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from datakit.exercises import clip_feedback
from datakit.exercises import video_feedback as feedback
from datakit.exercises.compare import Feedback
from datakit.exercises.video_feedback import run

if TYPE_CHECKING:  # TensorFlow is imported when an exercise runs
    import tensorflow as tf

__all__: list[str] = []

SPLITS = ("train", "validation", "test")
#: A file as the exercises hand it on: its path, or a learner's probe facts (a dict).
Item = str | dict
#: A clip asked for: the file (:data:`Item`) and the frame indices wanted.
Request = tuple[Item, Sequence[int]]


def split3(n: int, seed: int, validation: float = 0.2, test: float = 0.2) -> list[str]:
    """Each of ``n`` videos' split: a seeded permutation, its last ``int(test * n)`` videos
    the test set, the ``int(validation * n)`` before them the validation set.

    >>> split3(10, seed=0)  # doctest: +NORMALIZE_WHITESPACE
    ['validation', 'test', 'train', 'train', 'train', 'train', 'train', 'train', 'test',
     'validation']
    """
    order = np.random.default_rng(seed).permutation(n)
    n_val, n_test = int(validation * n), int(test * n)
    split = ["train"] * n
    for rank, i in enumerate(order.tolist()):
        if rank >= n - n_test:
            split[i] = "test"
        elif rank >= n - n_test - n_val:
            split[i] = "validation"
    return split


def _rows(folder: Path) -> tuple[list[str], list[tuple[str, int]]]:
    from datakit.readers.video.index.folders import video_files

    names = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    return names, [(p.relative_to(folder).as_posix(), label) for label, name in enumerate(names)
                   for p in video_files(folder / name)]


def video_listing(folder: str | Path, seed: int) -> dict:
    """The listing, ``(path relative to folder, label, split)`` per video, sorted by path
    as ``Path`` objects (``"path_order"``) and as strings (``"str_order"``, which puts
    ``up/a b.mp4`` before ``up/a/c.mp4``): the question allows both, and each draws its
    split over its own order. Also the class names, and the splits of a learner who reads
    the permutation the other way round (for the feedback)."""
    folder = Path(folder)
    names, rows = _rows(folder)
    out: dict = {"class_names": names}
    for order, key in (("path", lambda r: Path(r[0])), ("str", lambda r: r[0])):
        ranked = sorted(rows, key=key)
        n = len(ranked)
        out[f"{order}_order"] = [(path, label, split) for (path, label), split in
                                 zip(ranked, split3(n, seed), strict=True)]
        out[f"inverse_{order}_split"] = split3_inverse(n, seed)
    return out


def split3_inverse(n: int, seed: int, validation: float = 0.2, test: float = 0.2) -> list[str]:
    """:func:`split3` read the other way round: video ``i``'s rank taken as ``order[i]``."""
    order = np.random.default_rng(seed).permutation(n)
    n_val, n_test = int(validation * n), int(test * n)
    return ["test" if rank >= n - n_test else "validation" if rank >= n - n_test - n_val
            else "train" for rank in order.tolist()]


def facts(path: str | Path) -> dict:
    """What the kit's probe found, as the plain dict a learner's probe returns."""
    from datakit.readers.video.decoding.decoding import probe

    info = probe(path)
    return {"path": str(path), "pts": list(info.pts), "time_base": info.time_base,
            "rate": info.rate, "rotation": info.rotation, "height": info.height,
            "width": info.width}


#: The kit's probe reasons (``DataError.reason``, datakit/readers/video/decoding/decoding.py): their
#: starts, a text the reason also holds, and the kind; the first match wins. A file that
#: cannot be opened, or a broken link, is "unreadable" (a learner's ``av.open`` fails on it).
_KINDS = ((("is truncated", "holds no decodable"), "", "truncated"),
          (("cannot be read (",), "a damaged or truncated file", "truncated"),
          (("not a video", "has no video", "cannot be read (", "is a link that"), "",
           "unreadable"))


def _kind(reason: str) -> str:
    """The kind of bad file a probe reason names; a reason not in ``_KINDS`` is refused."""
    for starts, within, kind in _KINDS:
        if reason.startswith(starts) and within in reason:
            return kind
    raise ValueError(f"no kind of bad file for the reason {reason!r}: add its start to "
                     "datakit/exercises/video_reader.py's _KINDS")


def video_probe(folder: str | Path, paths: Sequence[str]) -> list[tuple]:
    """``(path, the kit's facts)`` per good file, ``(path, (kind, reason))`` per bad one:
    the kind ``"unreadable"`` (FFmpeg cannot open it) or ``"truncated"``."""
    from datakit.core.errors import DataError

    rows: list[tuple] = []
    for path in paths:
        full = str(Path(folder) / path)
        try:
            rows.append((path, facts(full)))
        except DataError as e:
            rows.append((path, (_kind(e.reason), e.reason.split(";")[0])))
    return rows


def probe_answer(probe: Callable[[str], Any], folder: str | Path,
                 paths: Sequence[str]) -> list[tuple]:
    return [(path, run(probe, str(Path(folder) / path))) for path in paths]


def _kit_facts(item: Item) -> dict:
    """The kit's facts of a file given by its path or by a learner's facts dict."""
    path = item.get("path") if isinstance(item, dict) else item
    return facts(str(path))


def frame_times(items: Sequence[Item], fps: float) -> list[tuple]:
    """Per file (a path, or a learner's probe facts), the kit's facts and the file frame
    shown at each step of ``fps`` (the kit's ``output_frames``)."""
    from datakit.readers.video.decoding.decoding import output_frames, probe

    kits = [_kit_facts(item) for item in items]
    return [(kit, output_frames(probe(kit["path"]), fps)) for kit in kits]


def frame_times_answer(function: Callable[..., Any], items: Sequence[Item],
                       fps: float) -> list[tuple]:
    """The learner's function on their own facts (or the kit's, for a path)."""
    return [(item, run(function, item if isinstance(item, dict) else facts(item), fps))
            for item in items]


def clip_frames(requests: Sequence[Request], size: int, fit: str) -> list[tuple]:
    """Per ``(path or facts, wanted frame indices)``, the kit's facts and the frames at
    ``size`` x ``size``, ``fit``: ``"crop"`` (the centre, at the target's aspect ratio) or
    ``"pad"`` (black bars)."""
    from datakit.readers.video.decoding.decoding import decode_frames, probe

    if fit not in ("crop", "pad"):
        raise ValueError(f"fit={fit!r}: pass 'crop' or 'pad'")
    out = []
    for item, wanted in requests:
        kit = _kit_facts(item)
        out.append((kit, decode_frames(probe(kit["path"]), list(wanted), frame_size=(size, size),
                                       crop_to_aspect_ratio=fit == "crop",
                                       pad_to_aspect_ratio=fit == "pad")))
    return out


def clip_frames_answer(function: Callable[..., Any], requests: Sequence[Request], size: int,
                       fit: str) -> list[tuple]:
    return [(item, list(wanted), run(function, item if isinstance(item, dict) else facts(item),
                                     list(wanted), size, fit)) for item, wanted in requests]


def clip_choices(ids: Sequence[int], labels: Sequence[int], lengths: Sequence[int],
                 training: bool, *, clip_len: int, seed: int) -> dict:
    """:func:`clip_choice_rows` as a reference: its rows, and how they were drawn."""
    rows = [tuple(int(x) for x in row) for row in clip_choice_rows(
        ids, labels, lengths, training, clip_len=clip_len, seed=seed)]
    return {"rows": rows, "training": bool(training), "clip_len": clip_len}


def clip_choice_rows(ids: Sequence[int], labels: Sequence[int], lengths: Sequence[int],
                     training: bool, *, clip_len: int, seed: int) -> tf.data.Dataset:
    """One epoch's ``(video, label, start)``: training zips the videos with a seeded
    ``Dataset.random`` (new numbers each epoch) and takes ``start = r % (n - clip_len + 1)``,
    then shuffles; validation takes the middle clip, ``(n - clip_len) // 2``."""
    import tensorflow as tf

    videos = tf.data.Dataset.from_tensor_slices((tf.constant(ids, tf.int64),
                                                 tf.constant(labels, tf.int64),
                                                 tf.constant(lengths, tf.int64)))
    if not training:
        return videos.map(lambda i, label, n: (i, label, (n - clip_len) // 2))
    numbers = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    return (tf.data.Dataset.zip(videos, numbers)
            .map(lambda v, r: (v[0], v[1], r % (v[2] - clip_len + 1)))
            .shuffle(len(ids), seed=seed))


# The judges ``check`` calls with the learner's answer and the inputs: each builds the
# reference from the inputs and says what differs (datakit/exercises/video_feedback.py).

def listing_judge(answer: Any, folder: str | Path, seed: int) -> Feedback:
    return feedback.judge_listing(answer, video_listing(folder, seed))


def _not_run(answer: object, n: int, name: str) -> str | None:
    """A refusal when ``answer`` is not what running the learner's function gave (they
    passed its results, not the function)."""
    if isinstance(answer, list) and len(answer) == n and all(isinstance(a, tuple)
                                                             for a in answer):
        return None
    return (f"pass your function {name} itself (the check calls it on each file), not "
            f"its results")


def probe_judge(answer: Any, folder: str | Path, paths: Sequence[str]) -> Feedback:
    if (why := _not_run(answer, len(paths), "probe")):
        return feedback.no(why)
    return feedback.judge_probe(answer, video_probe(folder, paths))


def _pathless(items: Iterable[Item]) -> str | None:
    """Which of the learner's facts dicts names no file (the reference needs its path)."""
    k = next((k for k, item in enumerate(items) if isinstance(item, dict)
              and not isinstance(item.get("path"), (str, Path))), None)
    return None if k is None else (f"your facts number {k} have no 'path' (a str): the "
                                   "probe of exercise 2 gives the path it was given")


def frame_times_judge(answer: Any, items: Sequence[Item], fps: float) -> Feedback:
    if (why := _not_run(answer, len(items), "frame_times") or _pathless(items)):
        return feedback.no(why)
    return clip_feedback.judge_frame_times(answer, frame_times(items, fps))


def clip_frames_judge(answer: Any, requests: Sequence[Request], size: int,
                      fit: str) -> Feedback:
    if (why := _not_run(answer, len(requests), "read_clip")
            or _pathless([item for item, _ in requests])):
        return feedback.no(why)
    return clip_feedback.judge_clip_frames(answer, clip_frames(requests, size, fit))


def clip_choices_judge(answer: Any, ids: Sequence[int], labels: Sequence[int],
                       lengths: Sequence[int], training: bool, *, clip_len: int,
                       seed: int) -> Feedback:
    return clip_feedback.judge_clip_choices(answer, clip_choices(
        ids, labels, lengths, training, clip_len=clip_len, seed=seed))
