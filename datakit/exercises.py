"""Feedback on "write it yourself" exercises: what differs between your answer and the reference.

``check(name, answer, ...)`` builds the reference for the exercise ``name``
from the same inputs, compares it with your answer element by element, and
says *what* differs, not only whether it does: the number of elements, the
first element that differs and where inside it, a dtype or a shape, the
structure (a tuple where a dict was expected), or only the order (same rows,
another order: a seed, or ``shuffle`` in another place).

The references are the kit's production helpers, so your plain ``tf.data``
code is checked against them: ``"csv_reader"`` (notebook 05, the numeric
columns of :func:`datakit.readers.csv_files.reader.csv_reader_dataset`), ``"example"`` (notebook
07, :func:`datakit.readers.tf_example.to_example`) and ``"clip_pipeline"`` (notebook 08,
:func:`datakit.readers.video.clips.clip_dataset`). :func:`compare` works on any two
datasets or lists:

>>> compare([1, 2, 3], [1, 2, 3]).ok
True
>>> print(compare([1, 2, 3], [1, 2]))
not yet: yours has 3 elements, the reference 2.
content differs: 1 row(s) of yours not in the reference.
>>> print(compare([3, 1, 2], [1, 2, 3]))
not yet: element 0 differs: yours 3, expected 1.
same rows as the reference, in another order: check the seeds, and where you shuffle.
>>> bool(compare([1.0, 2.0], [1.0, 2.0000001]))   # float32 rounding is not a difference
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Feedback", "check", "compare", "register", "exercise_names"]

#: Elements read at most from each side (an endless dataset is reported, not read forever).
MAX_ELEMENTS = 100_000


@dataclass
class Feedback:
    """The result of a check: ``ok``, and ``lines`` that say what differs (``str()`` joins them)."""

    ok: bool
    lines: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return "\n".join(self.lines)

    __repr__ = __str__


# -- turning answers into plain values -------------------------------------------


def _plain(value: Any) -> Any:
    """Nested dicts/tuples of NumPy arrays (tensors, ragged tensors and protos converted)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)) and not _is_array_like(value):
        return tuple(_plain(v) for v in value)
    if type(value).__name__ in ("Example", "SequenceExample"):
        return _example_as_dict(value)
    if hasattr(value, "to_list"):  # tf.RaggedTensor
        return ("ragged", _plain(value.to_list()))
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


def _is_array_like(value) -> bool:
    return bool(value) and all(isinstance(v, (int, float, bytes, str, np.generic)) for v in value)


def _example_as_dict(example) -> dict:
    """A ``tf.train.Example`` as ``{feature name: {list kind: values}}``."""
    if type(example).__name__ == "SequenceExample":
        return {"context": _example_as_dict(example.context),
                "feature_lists": {name: tuple(_feature(f) for f in fl.feature)
                                  for name, fl in example.feature_lists.feature_list.items()}}
    features = example.features if hasattr(example, "features") else example
    return {name: _feature(f) for name, f in sorted(features.feature.items())}


def _feature(f) -> dict:
    kind = f.WhichOneof("kind")
    if kind is None:
        return {"(empty)": np.array([])}
    values = list(getattr(f, kind).value)
    dtype = {"float_list": np.float32, "int64_list": np.int64}.get(kind, object)
    return {kind: np.array(values, dtype=dtype)}


def _elements(answer) -> tuple[list, str | None]:
    """The elements of a dataset or iterable, and a problem if there were too many."""
    try:
        import tensorflow as tf
        if isinstance(answer, tf.data.Dataset):
            if int(answer.cardinality()) == int(tf.data.INFINITE_CARDINALITY):
                return [], "it never ends (repeat() without a count?)"
            answer = iter(answer)
    except ImportError:  # pragma: no cover - TensorFlow is a dependency
        pass
    out = []
    for item in answer:
        if len(out) == MAX_ELEMENTS:
            return out, f"it has more than {MAX_ELEMENTS:,} elements"
        out.append(_plain(item))
    return out, None


# -- comparing -----------------------------------------------------------------------


def _describe(value) -> str:
    if isinstance(value, dict):
        return "a dict with keys " + repr(sorted(value))
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return f"an array of shape {tuple(value.shape)} and dtype {value.dtype}"


def _short(a: np.ndarray) -> str:
    if a.dtype.kind == "f":
        return np.format_float_positional(a, precision=6, trim="-") if a.ndim == 0 else \
            np.array2string(a, precision=4, threshold=6)
    if a.ndim == 0:
        v = a.item()
        return repr(v.decode("utf-8", "replace") if isinstance(v, bytes) else v)
    return np.array2string(a, threshold=6)


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _where(path: str) -> str:
    return f" at {path}" if path else ""


def _diff(mine, ref, path: str = "") -> str | None:
    """The first difference between two plain values, as a phrase, or None."""
    if isinstance(ref, dict) or isinstance(mine, dict):
        if not (isinstance(ref, dict) and isinstance(mine, dict)):
            return f"{_where(path)[4:] or 'the element'} is {_describe(mine)}, expected {_describe(ref)}"
        missing, extra = sorted(set(ref) - set(mine)), sorted(set(mine) - set(ref))
        if missing or extra:
            if len(ref) == len(mine) == 1:  # an Example feature: the list kind
                return (f"{path or 'the value'} is {_a(next(iter(mine)))}, "
                        f"expected {_a(next(iter(ref)))}")
            parts = [f"missing keys {missing}"] * bool(missing) + [f"extra keys {extra}"] * bool(extra)
            return f"{' and '.join(parts)}{_where(path)}"
        for k in ref:
            d = _diff(mine[k], ref[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(ref, tuple) or isinstance(mine, tuple):
        if not (isinstance(ref, tuple) and isinstance(mine, tuple)) or len(ref) != len(mine):
            return f"{path or 'the element'} is {_describe(mine)}, expected {_describe(ref)}"
        for k, (a, b) in enumerate(zip(mine, ref)):
            d = _diff(a, b, f"{path}[{k}]")
            if d:
                return d
        return None
    return _diff_arrays(mine, ref, path)


def _diff_arrays(a: np.ndarray, b: np.ndarray, path: str) -> str | None:
    kinds = {a.dtype.kind, b.dtype.kind}
    text = {"S", "U", "O"}
    if a.dtype != b.dtype and not kinds <= text:
        return f"dtype{_where(path)}: yours {a.dtype}, expected {b.dtype}"
    if a.shape != b.shape:
        return f"shape{_where(path)}: yours {a.shape}, expected {b.shape}"
    if a.dtype.kind == "f":
        same = np.isclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        same = np.asarray(a == b)
    if np.all(same):
        return None
    if a.ndim == 0:
        return f"yours {_short(a)}, expected {_short(b)}{_where(path)}"
    index = tuple(int(i) for i in np.argwhere(~same)[0])
    return (f"{_where(path)[4:] or 'the array'}, index {index if len(index) > 1 else index[0]}: "
            f"yours {_short(a[index])}, expected {_short(b[index])}")


def _rows(elements: list) -> list:
    """Hashable keys, one per row: batches are cut along their first axis."""
    import tensorflow as tf
    keys = []
    for e in elements:
        leaves = tf.nest.flatten(e)
        firsts = {leaf.shape[0] if isinstance(leaf, np.ndarray) and leaf.ndim else None
                  for leaf in leaves}
        n = firsts.pop() if len(firsts) == 1 else None
        split = [[leaf] for leaf in leaves] if n is None else [list(leaf) for leaf in leaves]
        for row in zip(*split):
            keys.append(tuple(_key(np.asarray(v)) for v in row))
    return keys


def _key(a: np.ndarray):
    if a.dtype.kind == "f":
        a = np.round(a.astype(np.float64), 4) + 0.0
    return (a.dtype.kind, a.shape, a.tobytes() if a.dtype.kind != "O" else repr(a.tolist()))


def compare(answer, reference) -> Feedback:
    """Compare two datasets (or iterables) element by element and say what differs."""
    mine, too_many = _elements(answer)
    ref, _ = _elements(reference)
    if too_many:
        return Feedback(False, [f"not yet: your dataset: {too_many}."])
    lines = []
    if len(mine) != len(ref):
        lines.append(f"yours has {len(mine)} elements, the reference {len(ref)}.")
    first = next(((i, d) for i, (a, b) in enumerate(zip(mine, ref)) if (d := _diff(a, b))), None)
    structural = False
    if first:
        i, d = first
        structural = d.startswith("dtype") or " is " in d or "keys" in d  # a type or structure
        lines.append(f"element {i}: {d}." if structural else f"element {i} differs: {d}.")
    if not lines:
        return Feedback(True, [f"correct: {len(ref)} elements, each equal to the reference's, "
                               "in the same order."])
    lines[0] = "not yet: " + lines[0]
    if structural:  # values of another type or shape: comparing rows would say nothing more
        return Feedback(False, lines)
    try:
        mine_rows, ref_rows = Counter(_rows(mine)), Counter(_rows(ref))
    except (TypeError, ValueError, AttributeError):  # ragged or mixed structures: no row view
        return Feedback(False, lines)
    if mine_rows == ref_rows:
        lines.append("same rows as the reference, in another order: "
                     "check the seeds, and where you shuffle.")
    elif sum(mine_rows.values()) and not (mine_rows & ref_rows):
        lines.append("no row of yours is in the reference: check the values themselves.")
    else:
        lost, extra = sum((ref_rows - mine_rows).values()), sum((mine_rows - ref_rows).values())
        parts = [f"{lost} reference row(s) missing from yours"] * bool(lost) + [
            f"{extra} row(s) of yours not in the reference"] * bool(extra)
        lines.append(f"content differs: {', '.join(parts)}.")
    return Feedback(False, lines)


# -- the exercises -------------------------------------------------------------------


@dataclass
class _Exercise:
    build: Callable  # inputs -> the reference answer
    apply: Callable  # (the learner's function, inputs) -> the learner's answer


_EXERCISES: dict[str, _Exercise] = {}


def register(name: str, build: Callable, apply: Callable | None = None) -> None:
    """Register the reference of exercise ``name``: ``build(*args, **kwargs)`` makes it.

    ``apply(function, *args, **kwargs)`` runs a learner's function on the same
    inputs (default: calls it with them, leaving out keywords it does not take,
    such as the statistics a classic reader reads from global variables).
    """
    _EXERCISES[name] = _Exercise(build, apply or _call)


def _call(function, *args, **kwargs):
    """Call ``function`` with the inputs, leaving out keywords it does not take."""
    import inspect
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: pass everything
        return function(*args, **kwargs)
    if not any(p.kind == p.VAR_KEYWORD for p in params):
        names = {p.name for p in params}
        kwargs = {k: v for k, v in kwargs.items() if k in names}
    return function(*args, **kwargs)


def exercise_names() -> list[str]:
    """The names ``check`` knows."""
    return sorted(_EXERCISES)


def check(name: str, answer, *args, **kwargs) -> Feedback:
    """Compare your ``answer`` to exercise ``name`` with the reference built from the inputs.

    ``answer`` is your dataset (or list), or your function: then it is called
    with ``*args, **kwargs``, the same inputs the reference gets.

    >>> check("no such exercise", [])
    Traceback (most recent call last):
    ...
    ValueError: no exercise named 'no such exercise'; the exercises are ['clip_pipeline', 'csv_reader', 'example']
    """
    if name not in _EXERCISES:
        raise ValueError(f"no exercise named {name!r}; the exercises are {exercise_names()}")
    exercise = _EXERCISES[name]
    expected = exercise.build(*args, **kwargs)
    if callable(answer) and not hasattr(answer, "element_spec"):
        answer = exercise.apply(answer, *args, **kwargs)
    feedback = compare(answer, expected)
    feedback.lines[0] = f"{name}: {feedback.lines[0]}"
    return feedback


def _csv_reader(filepaths, repeat=1, n_readers=5, n_read_threads=None, shuffle_buffer_size=10_000,
                n_parse_threads=5, batch_size=32, *, stats, label, seed=None,
                label_scale: float = 1.0):
    """The classic reader's elements: (standardized numeric features, label / label_scale)."""
    from datakit.readers.csv_files.reader import csv_reader_dataset
    from datakit.readers.csv_files.schema import NUMBER
    n = sum(c != label and stats[c].kind == NUMBER for c in stats.columns)
    ds = csv_reader_dataset(filepaths, repeat, n_readers, n_read_threads, shuffle_buffer_size,
                            n_parse_threads, batch_size, stats=stats, label=label, seed=seed,
                            label_scale=label_scale)
    return ds.map(lambda x, y: (x[:, :n], y))


def _examples(rows):
    from datakit.readers.tf_example import to_example
    return [to_example(row) for row in rows]


def _clip_pipeline(directory, *, clip_len=16, batch_size=8, seed=0, **kwargs):
    from datakit.readers.video.clips import clip_dataset
    return clip_dataset(directory, clip_len=clip_len, batch_size=batch_size, seed=seed, **kwargs)


register("csv_reader", _csv_reader)
register("example", _examples, lambda f, rows: [f(row) for row in rows])
register("clip_pipeline", _clip_pipeline)
