"""The checks of notebooks 01-05's and 07's exercises that no one reference list answers.

Some answers are datasets with a reference (``"dict_dataset"``, ``"named_pairs"``,
``"standardize_and_batch"``, ``"odd_squares"``, ``"halve_and_round"``); 07.1's parsed words
(``"place_words"``) are judged against the housing data's values, in any order; some
are numbers the kit computes from the same inputs, so the check does not print the answer
(``"epoch_0_leaves"``, ``"lines_before_file"``, ``"near_bay_count"``); and some are judged by
the properties the question asks for (``"take_skip_split"``, ``"shuffled_pairs"``,
``"split_then_shuffle"``): each refusal says which property fails, and how.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from datakit.exercises.compare import Feedback, compare

if TYPE_CHECKING:  # TensorFlow is imported when an exercise runs
    import tensorflow as tf

__all__: list[str] = []


def dict_dataset() -> list:
    """01.1: ``"x"`` 0.5, 1.5, 2.5 and ``"label"`` 1, 0, 1, as named elements."""
    return [{"x": x, "label": y} for x, y in zip([0.5, 1.5, 2.5], [1, 0, 1], strict=True)]


def named_pairs(features: Iterable[Any], labels: Iterable[Any]) -> list:
    """01.4: ``({"x": feature}, label)`` pairs."""
    return [({"x": f}, y) for f, y in zip(features, labels, strict=True)]


def standardized_batches() -> list:
    """02.2: 0.0 ... 9.0 less 4.5, in batches of 5."""
    return [[x - 4.5 for x in range(5)], [x - 4.5 for x in range(5, 10)]]


def on_floats(function: Callable[[tf.data.Dataset], Any]) -> Any:
    """Your ``standardize_and_batch`` applied to the floats 0.0 ... 9.0."""
    import tensorflow as tf
    return tf.data.Dataset.range(10).map(lambda x: tf.cast(x, tf.float32)).apply(function)


def odd_squares() -> list[int]:
    """02.3: the squares of the odd numbers of ``range(10)``."""
    return [x * x for x in range(10) if x % 2 == 1]


def halve_and_round(n: int = 10) -> list[float]:
    """02.5: each of ``range(n)`` halved and rounded as NumPy rounds (half to even)."""
    import numpy as np
    return [float(v) for v in np.round(np.arange(n) / 2)]


def halved(function: Callable[[tf.Tensor], Any], n: int = 10) -> tf.data.Dataset:
    """Your function mapped over ``range(n)``: 3 / 2 = 1.5 tells rounding from floor division."""
    import tensorflow as tf
    return tf.data.Dataset.range(n).map(function)


def epoch_0_leaves(n: int = 10, epochs: int = 3, buffer_size: int = 5, seed: int = 42) -> int:
    """03.2: the step (from 0) at which the last of epoch 0's elements leaves the buffer."""
    import tensorflow as tf
    tagged = tf.data.Dataset.range(n).repeat(epochs).enumerate().shuffle(buffer_size, seed=seed)
    positions = [int(p) for p, _ in tagged]
    return max(step for step, p in enumerate(positions) if p < n)


def lines_before_file(files: Iterable[str | os.PathLike], cycle_length: int = 5,
                      file: int = 5) -> int:
    """04.3: how many data lines an interleave of the sorted files gives before file
    ``file``'s (0-based) first line."""
    import tensorflow as tf
    tags = tf.data.Dataset.from_tensor_slices(sorted(map(str, files))).enumerate().interleave(
        lambda i, f: tf.data.TextLineDataset(f).skip(1).map(lambda _: i),
        cycle_length=cycle_length)
    return next(k for k, i in enumerate(tags.as_numpy_iterator()) if i == file)


def near_bay_count(files: Iterable[str | os.PathLike]) -> int:
    """05.2: the ``NEAR BAY`` rows of the CSV files, counted by pandas."""
    import pandas as pd
    return int(sum((pd.read_csv(f)["ocean_proximity"] == "NEAR BAY").sum() for f in files))


def _ints(dataset: Iterable[Any]) -> list[int]:
    return [int(x) for x in dataset]


def _pair(answer: Any, what: str) -> tuple | str:
    if not (isinstance(answer, tuple) and len(answer) == 2):
        return (f"not yet: pass {what} as a tuple of two datasets, "
                f"(valid, train); yours is {type(answer).__name__}.")
    return answer


def take_skip_split(answer: Any, n: int = 20, fraction: float = 0.15) -> Feedback:
    """02.4: ``(valid, train)`` from ``range(n)``: the first ``int(fraction * n)`` elements for
    validation, the rest for training, none in both."""
    pair = _pair(answer, "your split")
    if isinstance(pair, str):
        return Feedback(False, [pair])
    valid, train = (_ints(ds) for ds in pair)
    expected = int(fraction * n)
    both = sorted(set(valid) & set(train))
    if both:
        return Feedback(False, [f"not yet: {len(both)} element(s) in both, first {both[0]}: "
                                "skip as many elements as you take."])
    if len(valid) != expected:
        return Feedback(False, [f"not yet: {len(valid)} validation elements, {fraction:.0%} of "
                                f"{n} is {expected}: take int({fraction} * {n})."])
    if sorted(valid + train) != list(range(n)):
        return Feedback(False, [f"not yet: {n - len(set(valid + train))} element(s) in neither:"
                                " skip exactly what you take."])
    return Feedback(True, [f"correct: {len(valid)} validation and {len(train)} training "
                           "elements, none in both."])


def shuffled_pairs(answer: Any, labels: Iterable[Any]) -> Feedback:
    """03.3: every ``(10 * label, label)`` pair of ``labels``, once, in a shuffled order."""
    reference = [(10 * int(y), int(y)) for y in labels]
    feedback = compare(answer, reference, order="any")
    if not feedback:
        try:  # a batched or other-shaped answer: compare's refusal already says so
            pairs = [(int(x), int(y)) for x, y in answer] if hasattr(answer, "element_spec") \
                else []
        except (TypeError, ValueError):
            return feedback
        broken = [p for p in pairs if p[0] != 10 * p[1]]
        if broken:
            return Feedback(False, [f"not yet: {len(broken)} pair(s) broken, first {broken[0]}:"
                                    " shuffle the pairs, not each part on its own."])
        return feedback
    if [(int(x), int(y)) for x, y in answer] == reference:
        return Feedback(False, ["not yet: every pair matches, but in the input's order: "
                                "shuffle them."])
    return Feedback(True, [f"correct: all {len(reference)} pairs match, in a shuffled order."])


def split_then_shuffle(answer: Any, n: int = 100, n_valid: int = 20) -> Feedback:
    """03.4: ``(valid, train)`` read for two epochs: the same validation set each epoch, no
    element in both, every element in one, and a new training order each epoch."""
    pair = _pair(answer, "your split")
    if isinstance(pair, str):
        return Feedback(False, [pair])
    valid, train = pair
    epochs = [(_ints(valid), _ints(train)) for _ in range(2)]
    for epoch, (v, t) in enumerate(epochs):
        both = sorted(set(v) & set(t))
        if both:
            return Feedback(False, [f"not yet: in pass {epoch + 1} of the check's two, "
                                    f"{len(both)} number(s) validated and trained on, first "
                                    f"{both[0]}: take and skip read another order each pass."])
        if sorted(v + t) != list(range(n)) or len(v) != n_valid:
            return Feedback(False, [f"not yet: pass {epoch + 1}: {len(v)} validation and {len(t)} "
                                    f"training numbers, expected {n_valid} and {n - n_valid}, "
                                    f"each of range({n}) once."])
    if set(epochs[0][0]) != set(epochs[1][0]):
        return Feedback(False, ["not yet: the validation set changes between epochs."])
    if epochs[0][1] == epochs[1][1]:
        return Feedback(False, ["not yet: the split holds, but the training numbers come in "
                                "the same order every epoch: shuffle the training part on its "
                                "own."])
    return Feedback(True, ["correct: the same split every epoch, nothing in both, and a new "
                           "training order each epoch."])


def place_words() -> list[list[bytes]]:
    """07.1: each distinct ``ocean_proximity`` value of the housing data, split on spaces,
    as bytes (``[b"NEAR", b"BAY"]``), the values sorted."""
    import pandas as pd

    from datakit import data_path
    places = sorted(pd.read_csv(data_path("housing", "housing.csv"))["ocean_proximity"]
                    .unique())
    return [[w.encode() for w in place.split(" ")] for place in places]


def _word_rows(answer: Any) -> list | str:
    """The rows of a parsed ``words`` feature as lists, or why they cannot be read."""
    import tensorflow as tf
    if isinstance(answer, tf.SparseTensor):  # a VarLenFeature's result
        answer = tf.RaggedTensor.from_sparse(answer)
    if isinstance(answer, tf.RaggedTensor):
        return answer.to_list()
    if isinstance(answer, tf.Tensor):
        return ("a dense tensor pads the shorter rows: parse with a tf.io.RaggedFeature "
                "(or VarLenFeature), not a FixedLenFeature.")
    if isinstance(answer, (list, tuple)):
        return [list(row) for row in answer]
    return f"pass the parsed words (a RaggedTensor); yours is {type(answer).__name__}."


def place_words_judge(answer: Any) -> Feedback:
    """07.1: one row per distinct ``ocean_proximity`` value, in any order, each the value's
    words as bytes, in the value's order."""
    expected = place_words()
    rows = _word_rows(answer)
    if isinstance(rows, str):
        return Feedback(False, [f"not yet: {rows}"])
    if len(rows) != len(expected):
        return Feedback(False, [f"not yet: {len(rows)} rows, expected {len(expected)}: one "
                                "Example per distinct value."])
    strings = [w for row in rows for w in row if isinstance(w, str)]
    if strings:
        return Feedback(False, [f"not yet: {strings[0]!r} is a str; the words should be bytes,"
                                " as a bytes_list holds them (str.encode())."])
    missing = [words for words in expected if words not in rows]
    if not missing:
        return Feedback(True, [f"correct: the words of all {len(expected)} values, as bytes."])
    want = missing[0]
    place = b" ".join(want)
    letters = sorted(place.replace(b" ", b""))  # the same letters: the same value, cut wrong
    mine = next((row for row in rows if sorted(b"".join(row).replace(b" ", b"")) == letters),
                None)
    if mine is None:
        return Feedback(False, [f"not yet: no row holds the words of {place!r}, "
                                f"{want}; the rows are built from another list of values."])
    cause = ("the value was not split" if mine == [place] else
             "it is split into letters, not on spaces" if len(mine) == len(place) else
             "the same words in another order: keep the value's order"
             if sorted(mine) == sorted(want) else "split it on spaces")
    return Feedback(False, [f"not yet: {place.decode()!r} gives {mine}, expected {want}: "
                            f"{cause}."])
