"""The checks of notebooks 06 and 09's exercises on what changes from one epoch to the next.

Each reads the learner's pipeline for two epochs (two passes), as ``fit()`` does, and judges
the properties the question asks for: ``"cached_splits"`` (06.2: a validation pipeline the
same every epoch, a training pipeline in a new order, both cached), ``"reproducible_epochs"``
(09.2: new clips each epoch, the same clips when the run is made again) and
``"new_clips_each_epoch"`` (09.3: the decoded videos cached, new clips every epoch). A
refusal names the epoch and the property that fails, and the likely cause.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from datakit.exercises.compare import Feedback

if TYPE_CHECKING:  # TensorFlow is imported when an exercise runs
    import tensorflow as tf

__all__: list[str] = []


def _has_cache(dataset: tf.data.Dataset) -> bool:
    """Whether a ``cache()`` is anywhere in the dataset's graph (a ``zip``'s inputs too)."""
    from datakit.perf.chain import serialized_graph
    return b"CacheDataset" in serialized_graph(dataset)


def _not_a_dataset(answer: Any, what: str) -> Feedback | None:
    if hasattr(answer, "element_spec"):
        return None
    return Feedback(False, [f"not yet: pass {what} as a tf.data.Dataset; yours is "
                            f"{type(answer).__name__}."])


def cached_splits(answer: Any, n: int = 10) -> Feedback:
    """06.2: ``(validation, training)`` of ``range(n)``, each with a ``cache()``: validation
    the same elements in the same order every epoch, training the same elements in a new
    order each epoch."""
    if not (isinstance(answer, tuple) and len(answer) == 2):
        return Feedback(False, ["not yet: pass a tuple of two datasets, (validation, "
                                f"training); yours is {type(answer).__name__}."])
    epochs = {}
    for name, dataset in zip(("validation", "training"), answer, strict=True):
        refused = _not_a_dataset(dataset, f"your {name} pipeline")
        if refused is not None:
            return refused
        if not _has_cache(dataset):
            return Feedback(False, [f"not yet: your {name} pipeline has no cache(), so every "
                                    "epoch parses the rows again."])
        epochs[name] = [[int(x) for x in dataset.take(n + 1)] for _ in range(2)]
        for epoch, values in enumerate(epochs[name]):
            if sorted(values) != list(range(n)):
                return Feedback(False, [f"not yet: {name}, epoch {epoch + 1}: {len(values)} "
                                        f"elements, expected each of range({n}) once."])
    (v1, v2), (t1, t2) = epochs["validation"], epochs["training"]
    if v1 != v2:
        return Feedback(False, [f"not yet: validation comes in another order in epoch 2 "
                                f"({v2[:4]}... against {v1[:4]}...): validation needs no "
                                "new order."])
    if t1 == t2:
        return Feedback(False, ["not yet: training comes in the same order in both epochs "
                                f"({t1[:4]}...): the order is drawn once, not each epoch. "
                                "Where is the shuffle, and what does the cache keep?"])
    return Feedback(True, ["correct: both cached; validation in the same order, training in a "
                           "new order each epoch, every element once."])


def _clips(dataset: tf.data.Dataset, limit: int = 100_000) -> list[bytes]:
    """The clips of one pass, each as its bytes, sorted (the order of a pass left aside).

    An element is ``(clips, labels)`` or clips alone; a batch of clips has 5 dimensions
    (clip, frame, height, width, channel), one clip 4."""
    import numpy as np
    found = []
    for element in dataset.take(limit):
        features = element[0] if isinstance(element, tuple) else element
        array = np.asarray(features)
        found += [x.tobytes() for x in (array if array.ndim >= 5 else [array])]
    return sorted(found)


@dataclass
class _Runs:
    """Two runs of a learner's ``run(n)``, each the sorted clips of its two epochs."""

    passes: list[list[list[bytes]]]


def runs_of(run: Callable[[int], Any]) -> _Runs | Feedback:
    """Call ``run(2)`` twice (two fresh runs) and read each run's two epochs."""
    passes = []
    for _ in range(2):
        datasets = run(2)
        if not (isinstance(datasets, (list, tuple)) and len(datasets) == 2
                and all(hasattr(d, "element_spec") for d in datasets)):
            return Feedback(False, [f"not yet: run(2) gave {type(datasets).__name__}, expected "
                                    "a list of 2 datasets, one per epoch."])
        passes.append([_clips(d) for d in datasets])
    return _Runs(passes)


def reproducible_epochs(answer: Any) -> Feedback:
    """09.2: a function ``run(n)`` that builds the datasets of ``n`` epochs as a training loop
    does: each epoch's clips new, and a run made again draws the same clips."""
    if isinstance(answer, Feedback):
        return answer
    if not isinstance(answer, _Runs):
        return Feedback(False, ["not yet: pass your function run(n), which returns the n "
                                "epochs' datasets; yours is " + type(answer).__name__ + "."])
    (first, second), again = answer.passes
    if not first or len(first) != len(second):
        return Feedback(False, [f"not yet: the two epochs give {len(first)} and {len(second)} "
                                "clips: every epoch should give one clip per video."])
    if first == second:
        return Feedback(False, ["not yet: epoch 2 repeats epoch 1's clips: each epoch's dataset "
                                "draws the same random numbers."])
    if again != [first, second]:
        return Feedback(False, ["not yet: new clips in epoch 2, but a run made again draws "
                                "other clips: seed every draw, so a run can be repeated."])
    return Feedback(True, [f"correct: {len(first)} clips per epoch, new in epoch 2, and the "
                           "same two epochs when the run is made again."])


def new_clips_each_epoch(answer: Any, n_videos: int) -> Feedback:
    """09.3: a training dataset that caches the decoded videos (so each JPEG is decoded once)
    and still gives one new clip per video each epoch."""
    refused = _not_a_dataset(answer, "your training pipeline")
    if refused is not None:
        return refused
    if not _has_cache(answer):
        return Feedback(False, ["not yet: no cache(), so every epoch decodes the JPEGs again."])
    epochs = [_clips(answer, n_videos + 1) for _ in range(2)]
    for epoch, clips in enumerate(epochs):
        if len(clips) != n_videos:
            return Feedback(False, [f"not yet: epoch {epoch + 1} gives {len(clips)} clips, "
                                    f"expected {n_videos}, one per video."])
    if epochs[0] == epochs[1]:
        return Feedback(False, ["not yet: epoch 2 gives the same clips as epoch 1: the cache "
                                "replays what the first epoch drew. What does it hold?"])
    return Feedback(True, [f"correct: {n_videos} clips an epoch, new in epoch 2, and a cache "
                           "for the decoding."])
