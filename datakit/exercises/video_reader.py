"""The references of notebook 10's reader exercises: the kit's own video rules, as plain elements.

Each exercise checks one part of a take-home video reader against the kit's
production code (:mod:`datakit.readers.video`), on the same inputs:

- ``"video_listing"``: the listing of :func:`~datakit.readers.video.folders.video_files`
  (class folders sorted, files in sub-folders counted, hidden and ``._*`` files out,
  sorted by path), each file with its label and a seeded split **by video** into
  ``"train"``, ``"validation"`` and ``"test"`` (:func:`split3`);
- ``"video_probe"``: what :func:`~datakit.readers.video.decoding.probe` finds per file:
  ``"ok"`` with its frame count, rotation and displayed size, or the kind of bad file
  (``"unreadable"``: FFmpeg cannot open it; ``"truncated"``: it opens, its frames do not);
- ``"frame_times"``: :func:`~datakit.readers.video.decoding.output_frames`, the file
  frame shown at each time step of a chosen frame rate;
- ``"clip_frames"``: :func:`~datakit.readers.video.decoding.decode_frames`, a clip's
  frames centre-cropped or padded to the target's aspect ratio;
- ``"clip_choices"``: one epoch of clip choices ``(video, label, start)``, notebook 09's
  design: a seeded ``Dataset.random`` zipped with the videos for training, the middle
  clip for validation (:func:`clip_choices`).

A learner's function is called with facts the kit's probe found (``facts(path)``), so
each part is checked on its own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__: list[str] = []

SPLITS = ("train", "validation", "test")


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


def video_listing(folder, seed: int) -> list[tuple[str, int, str]]:
    """``(path relative to folder, label, split)`` per video, in sorted order."""
    from datakit.readers.video.folders import video_files

    folder = Path(folder)
    names = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    rows = [(p.relative_to(folder).as_posix(), label) for label, name in enumerate(names)
            for p in video_files(folder / name)]
    return [(path, label, split) for (path, label), split in
            zip(rows, split3(len(rows), seed), strict=True)]


def facts(path) -> dict:
    """What the kit's probe found, as the plain dict a learner's probe returns."""
    from datakit.readers.video.decoding import probe

    info = probe(path)
    return {"path": str(path), "pts": list(info.pts), "time_base": info.time_base,
            "rate": info.rate, "rotation": info.rotation, "height": info.height,
            "width": info.width}


#: The kit's probe reasons (``DataError.reason``, datakit/readers/video/decoding.py): their
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


def _probe_row(path: str, found) -> tuple:
    if isinstance(found, str):  # a bad file: its kind, the first word of the reason
        return (path, found.split()[0].strip(":,.").lower(), 0, 0, 0, 0)
    return (path, "ok", len(found["pts"]), int(found["rotation"]), int(found["height"]),
            int(found["width"]))


def video_probe(folder, paths) -> list[tuple]:
    """``(path, "ok" or the kind of bad file, frames, rotation, height, width)`` per file."""
    from datakit.core.errors import DataError

    rows = []
    for path in paths:
        try:
            rows.append(_probe_row(path, facts(Path(folder) / path)))
        except DataError as e:
            rows.append(_probe_row(path, _kind(e.reason)))
    return rows


def probe_answer(probe, folder, paths) -> list[tuple]:
    return [_probe_row(path, probe(str(Path(folder) / path))) for path in paths]


def frame_times(paths, fps: float) -> list[np.ndarray]:
    """Per file, the file frame shown at each step of ``fps`` (the kit's ``output_frames``)."""
    from datakit.readers.video.decoding import output_frames, probe

    return [output_frames(probe(p), fps).astype(np.int64) for p in paths]


def frame_times_answer(function, paths, fps: float) -> list[np.ndarray]:
    return [np.asarray(function(facts(p), fps), np.int64) for p in paths]


def clip_frames(requests, size: int, fit: str) -> list[np.ndarray]:
    """Per ``(path, wanted frame indices)``, the frames at ``size`` x ``size``, ``fit``:
    ``"crop"`` (the centre, at the target's aspect ratio) or ``"pad"`` (black bars)."""
    from datakit.readers.video.decoding import decode_frames, probe

    if fit not in ("crop", "pad"):
        raise ValueError(f"fit={fit!r}: pass 'crop' or 'pad'")
    return [decode_frames(probe(p), list(w), frame_size=(size, size),
                          crop_to_aspect_ratio=fit == "crop", pad_to_aspect_ratio=fit == "pad")
            for p, w in requests]


def clip_frames_answer(function, requests, size: int, fit: str) -> list[np.ndarray]:
    return [function(facts(p), list(w), size, fit) for p, w in requests]


def clip_choices(ids, labels, lengths, training: bool, *, clip_len: int, seed: int):
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
