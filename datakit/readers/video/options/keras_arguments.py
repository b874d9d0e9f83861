"""The video reader's Keras directory-loader arguments, checked as Keras words them, plus the fix.

``labels``, ``label_mode``, ``class_names``, ``color_mode`` and a split's
``seed`` follow ``keras.utils.image_dataset_from_directory``: the same values,
the same rules, and messages that name the argument as Keras' do, followed by
the kit's fix:

>>> check_labels("inferred", "binary", None)
'binary'
>>> check_labels(None, "int", None) is None  # no labels: no label mode
True
>>> check_labels([0, 1, -1], "int", None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: labels: label -1 at position 2 is negative: each label must be a class id 0, 1, ...
>>> check_labels(None, "int", ["a"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: When `labels=None` (no labels), argument `class_names` cannot be specified...
>>> check_split_seed(0.2, True, None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
ValueError: If using `validation_split` and shuffling the data, you must provide a `seed`...

The frames: a grayscale clip is the luma of its RGB frames (ITU-R BT.601, as
``tf.image.rgb_to_grayscale``), one channel:

>>> import numpy as np
>>> to_grayscale(np.full((1, 2, 2, 3), [255, 0, 0], np.uint8))[0, 0, 0].tolist()
[76]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from datakit.core.arguments import check_seed
from datakit.core.class_ids import check_class_ids

if TYPE_CHECKING:  # TensorFlow is imported when a clip is labelled
    import tensorflow as tf

__all__: list[str] = []

_LABEL_MODES = ("int", "categorical", "binary", None)
#: ``labels=`` as Keras takes it: ``"inferred"`` (from the class folders), ``None`` (no
#: labels), or a class id per video.
Labels = Literal["inferred"] | Sequence[int] | None


def check_choice(name: str, value: object, allowed: tuple) -> None:
    """``value`` is one of ``allowed`` (Keras' wording, then the values to pass)."""
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {allowed}. Received: {name}={value!r}")


def check_labels(labels: Labels, label_mode: str | None,
                 class_names: Sequence[str] | None) -> str | None:
    """The label mode to use (``None`` when there are no labels), Keras' rules checked.

    A list of labels holds class ids (:func:`~datakit.core.class_ids.check_class_ids`):
    a negative one is refused by its position, as is one past 1 with
    ``label_mode="binary"``; the classes are then ``0..max(labels)``.
    """
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)) or not all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in labels):
            raise ValueError(
                "`labels` argument should be a list/tuple of integer labels, of the same size "
                "as the number of video files in the target directory. If you wish to infer "
                'the labels from the subdirectory names in the target directory, pass '
                '`labels="inferred"`. If you wish to get a dataset that only contains clips '
                f"(no labels), pass `labels=None`. Received: labels={labels!r}")
        if class_names:
            raise ValueError('You can only pass `class_names` if `labels="inferred"`. '
                             f"Received: labels={labels!r}, and class_names={class_names!r}; "
                             "the class names are then the sorted labels")
    check_choice("label_mode", label_mode, _LABEL_MODES)
    if isinstance(labels, (list, tuple)):  # class ids: none negative; 0 or 1 when binary
        check_class_ids(labels, 2 if label_mode == "binary" else None,
                        classes_from="label_mode='binary'")
    check_class_names(class_names)
    if labels is None:
        if class_names is not None:
            raise ValueError("When `labels=None` (no labels), argument `class_names` cannot "
                             "be specified; pass labels='inferred' to read class folders")
        return None
    return label_mode


def check_class_names(class_names: Sequence[str] | None) -> None:
    """``class_names``: ``None``, or a list of distinct folder names (a class listed
    twice would read its videos twice, under two labels).

    >>> check_class_names(["cat", "cat"])
    Traceback (most recent call last):
        ...
    ValueError: class_names lists 'cat' twice: name each class folder once, in label order
    """
    if class_names is None:
        return
    if not isinstance(class_names, (list, tuple)) or not all(isinstance(c, str)
                                                             for c in class_names):
        raise TypeError(f"class_names={class_names!r}: pass a list of class folder names "
                        "(str), in label order, e.g. class_names=['cat', 'dog']")
    twice = sorted({c for c in class_names if class_names.count(c) > 1})
    if twice:
        raise ValueError(f"class_names lists {twice[0]!r} twice: name each class folder once, "
                         "in label order")


def check_split_seed(validation_split: float | None, shuffle: bool,
                     seed: int | None) -> int | None:
    """The seed checked (:func:`~datakit.core.arguments.check_seed`, and >= 0: NumPy, which
    draws a split, takes no negative seed); ``None`` stays ``None`` (TensorFlow draws the
    readers' seeds), except that Keras refuses a shuffled split without a seed.

    >>> check_split_seed(None, True, None) is None, check_split_seed(0.2, True, 7)
    (True, 7)
    >>> check_split_seed(None, True, -1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: seed=-1: pass an int >= 0 (e.g. seed=42)...
    """
    seed = check_seed(seed)
    if seed is None:
        if validation_split and shuffle:
            raise ValueError("If using `validation_split` and shuffling the data, you must "
                             "provide a `seed` argument, to make sure that there is no overlap "
                             "between the training and validation subset; pass seed=<an int> "
                             "(e.g. seed=42), the same for both subsets")
        return None
    if seed < 0:
        raise ValueError(f"seed={seed}: pass an int >= 0 (e.g. seed=42); the split is drawn "
                         "by NumPy, which takes no negative seed")
    return seed


def to_grayscale(frames: np.ndarray) -> np.ndarray:
    """RGB uint8 frames ``(..., 3)`` as their luma ``(..., 1)``, uint8."""
    luma = frames.astype(np.float32) @ np.array([0.2989, 0.5870, 0.1140], np.float32)
    return np.clip(np.round(luma), 0, 255).astype(np.uint8)[..., None]


def with_label_mode(clip: tf.Tensor, label: tf.Tensor, label_mode: str | None,
                    num_classes: int) -> Any:
    """``(clip, label)`` as ``label_mode`` gives it (``clip`` alone for ``None``)."""
    import tensorflow as tf

    if label_mode is None:
        return clip
    if label_mode == "categorical":
        return clip, tf.one_hot(label, num_classes, dtype=tf.float32)
    if label_mode == "binary":
        return clip, tf.reshape(tf.cast(label, tf.float32), [1])
    return clip, label
