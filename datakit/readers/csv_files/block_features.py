"""The reader's features of a parsed block, computed in NumPy inside the block's parse call.

``parse="arrow"`` parses a block in one Python call. Handing TensorFlow one
tensor per column, text as Python strings, then scaling, looking up and
one-hot encoding them in the graph (the reader's
:func:`~datakit.readers.csv_files.reader.build_features`) cost the housing
table about as much as pyarrow's parse itself: a Python string per row of
each text column copied into a string tensor, a hash lookup per row, a dozen
ops per block. :class:`BlockFeatures` does the same arithmetic on the block's
NumPy columns in the same call (a text column's few distinct words are looked
up once each, their ids repeated by Arrow's dictionary indices), and the call
hands TensorFlow two tensors: the ``(x, y)`` of the ``"matrix"`` output,
equal to ``build_features``' bit for bit (the same float32 subtraction and
division; ``tests/test_arrow.py`` compares them with the other modes).

>>> import numpy as np
>>> f = BlockFeatures(["a", "t"], {"a": "number", "t": "text"}, mean={"a": 1.0},
...                   std={"a": 2.0}, vocabularies={"t": ["x", "y"]}, label="y",
...                   classes=None, label_scale=10.0)
>>> x, y = f({"a": np.float32([3, np.inf]), "t": (["y", "z"], np.array([0, 1])),
...           "y": np.float32([5, 7])})
>>> x.tolist(), y.tolist()
([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]], [0.5, 0.699999988079071])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from datakit.readers.tables.table_stats import NUMBER

__all__ = ["BlockFeatures"]


class BlockFeatures:
    """``columns -> [x, y]`` (or ``[x]`` with ``label=None``) of a block, in NumPy.

    ``columns``: number columns as float32 (a missing one NaN, or already filled), text
    columns as ``(distinct words, index of each row's word)``. ``x``: the
    standardized numbers (a NaN or infinite one counts as missing: the mean), then
    per text column its one-hot slots (slot 0: a word outside the vocabulary);
    ``y``: the label over ``label_scale`` (float32), or its class index (int64).
    """

    def __init__(self, features: list[str], kinds: dict[str, str], *,
                 mean: dict[str, float | None], std: dict[str, float | None],
                 vocabularies: dict[str, list[str]], label: str | None,
                 classes: dict[str, list[str]] | None, label_scale: float) -> None:
        self.nums = [c for c in features if kinds[c] == NUMBER]
        self.mean = np.array([mean[c] for c in self.nums], np.float32)
        self.std = np.array([std[c] or 1.0 for c in self.nums], np.float32)
        self.words = {c: {w: i + 1 for i, w in enumerate(v)} for c, v in vocabularies.items()}
        self.width = len(self.nums) + sum(len(v) + 1 for v in self.words.values())
        self.label = label
        self.classes = ({w: i for i, w in enumerate(classes[label])}
                        if classes and label is not None else None)
        self.scale = np.float32(label_scale)

    def dtypes(self) -> list:
        """The call's outputs' dtypes: ``x``, then ``y`` unless ``label=None``."""
        y = [] if self.label is None else [tf.int64 if self.classes is not None else tf.float32]
        return [tf.float32, *y]

    def shapes(self) -> list:
        return [[None, self.width]] + [[None]] * (self.label is not None)

    def __call__(self, columns: dict) -> list:
        rows = self._rows(columns)
        x = np.zeros((rows, self.width), np.float32)
        for j, c in enumerate(self.nums):  # a column at a time: contiguous, float32 scalars
            v, mean = columns[c], self.mean[j]
            finite = np.isfinite(v)
            if not finite.all():
                v = np.where(finite, v, mean)
            x[:, j] = (v - mean) / self.std[j]
        at = len(self.nums)
        for c, words in self.words.items():
            x[np.arange(rows), at + self._ids(columns[c], words)] = 1.0
            at += len(words) + 1
        if self.label is None:
            return [x]
        y = columns[self.label]
        if self.classes is not None:
            return [x, self._ids(y, self.classes, -1)]
        return [x, (y / self.scale).astype(np.float32, copy=False)]

    def _rows(self, columns: dict) -> int:
        c = next(iter(columns.values()))
        return len(c[1]) if isinstance(c, tuple) else len(c)

    @staticmethod
    def _ids(column: tuple[Sequence[str], np.ndarray], ids: dict, unknown: int = 0) -> np.ndarray:
        """Each row's id: each distinct word looked up once, repeated by index."""
        distinct, index = column
        return np.array([ids.get(w, unknown) for w in distinct], np.int64)[index]
