"""The one rule for a list of labels given as class ids: ints from 0, each in range.

A negative id, or one at or past the number of classes, would be taken by
TensorFlow without a word (a one-hot of -1 is all zeros; a count of class 5
among 2 classes is lost), so it is refused naming its position:

>>> check_class_ids([0, 1, 1]).tolist()
[0, 1, 1]
>>> check_class_ids([0, 1, -1])  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
ValueError: labels: label -1 at position 2 is negative: each label must be a class id
0, 1, ...; map class names to 0, 1, ... first.
>>> check_class_ids({0, 1})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
TypeError: labels must be a list or array of class ids, got set (it has no order, so its labels
could not follow the rows); pass a list.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__: list[str] = []


def check_class_ids(labels: Any, classes: int | None = None, *, name: str = "labels",
                    classes_from: str = "the class list") -> np.ndarray:
    """``labels`` as int64 class ids, each in ``0..classes - 1`` (``>= 0`` if ``classes`` is None).

    Args:
        labels: a list or 1-D array of ints.
        classes: how many classes there are (None: only negatives are refused).
        name: the argument's name, for the message.
        classes_from: what sets the number of classes, for the message.

    Raises:
        TypeError: ``labels`` is not an ordered sequence (a set, a dict, a generator).
        ValueError: it is empty, not ints, or holds an id out of range.
    """
    if isinstance(labels, (set, frozenset, dict, str, bytes)) or not hasattr(labels, "__len__"):
        raise TypeError(f"{name} must be a list or array of class ids, got "
                        f"{type(labels).__name__} (it has no order, so its labels could not "
                        "follow the rows); pass a list.")
    ids = np.asarray(labels)
    if ids.ndim != 1 or ids.size == 0 or ids.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a non-empty list of ints (class ids), got "
                         f"{ids.dtype} values of shape {ids.shape}; map class names to 0, 1, ... "
                         "first.")
    top = np.inf if classes is None else classes
    bad = np.flatnonzero((ids < 0) | (ids >= top))
    if bad.size:
        i, v = int(bad[0]), int(ids[bad[0]])
        why = ("is negative: each label must be a class id 0, 1, ...; map class names to 0, 1, "
               "... first" if v < 0 else
               f"is outside {classes_from}'s {top} classes: each label must be a class id "
               f"0..{top - 1}")
        raise ValueError(f"{name}: label {v} at position {i} {why}.")
    return ids.astype(np.int64)
