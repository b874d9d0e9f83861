"""Answers turned into plain values (nested dicts and tuples of arrays), read with a bound.

A dataset's elements (tensors, ragged and sparse tensors, Examples, the
datasets ``window()`` makes) become values that can be compared one by one;
an answer that is no dataset at all (an int, ``None`` from a function that
forgot its ``return``) is named instead of failing as "not iterable".
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plain", "elements"]

#: Elements of the reference read at most (an endless one is reported, not read forever);
#: yours is read up to one more than the reference's rows.
MAX_ELEMENTS = 100_000


def with_article(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


class Typed(np.ndarray):
    """An array made from plain Python values (``[1, 2]``, ``0.5``, ``"cat"``): its width is
    NumPy's default, not a choice, so only its kind (integer, float, text) is compared."""


def _typed(value: Any) -> np.ndarray:
    return np.asarray(value).view(Typed)


def plain(value: Any) -> Any:
    """Nested dicts/tuples of NumPy arrays (tensors, ragged tensors and protos converted).

    A tuple is structure (as in ``tf.data``); a list of numbers, or of strings, is an array.
    """
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list) and _is_array_like(value):
        return _typed(value) if not any(isinstance(v, np.generic) for v in value) \
            else np.asarray(value)
    if isinstance(value, (tuple, list)):
        return tuple(plain(v) for v in value)
    if isinstance(value, (bool, int, float, str, bytes)) and not isinstance(value, np.generic):
        return _typed(value)  # np.float64 is a float too: its width is chosen
    name = type(value).__name__
    if name in ("Example", "SequenceExample"):
        return _example_as_dict(value)
    if hasattr(value, "to_list"):  # tf.RaggedTensor: its rows, as arrays of their own lengths
        rows = value.to_list()
        return plain(rows) if isinstance(rows, list) and rows and isinstance(
            rows[0], list) else np.asarray(rows)
    if name in ("SparseTensor", "SparseTensorValue"):
        return {"sparse indices": plain(value.indices), "sparse values": plain(value.values),
                "sparse dense_shape": plain(value.dense_shape)}
    if hasattr(value, "element_spec") and hasattr(value, "cardinality"):  # window(): datasets
        return tuple(plain(x) for x in value)
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


def _is_array_like(value: list) -> bool:
    """A non-empty list of numbers only, or of strings only."""
    numbers = (int, float, np.number, np.bool_)
    text = (str, bytes, np.str_, np.bytes_)
    return bool(value) and (all(isinstance(v, numbers) for v in value)
                            or all(isinstance(v, text) for v in value))


def is_scalar(value: object) -> bool:
    """A single number or string: a Python or NumPy scalar, a 0-d array or tensor."""
    if isinstance(value, (bool, int, float, str, bytes, np.generic)):
        return True
    shape = getattr(value, "shape", None)
    return shape is not None and len(shape) == 0 and not hasattr(value, "element_spec")


def _example_as_dict(example: Any) -> dict:
    """A ``tf.train.Example`` as ``{feature name: {list kind: values}}``."""
    if type(example).__name__ == "SequenceExample":
        return {"context": _example_as_dict(example.context),
                "feature_lists": {name: tuple(_feature(f) for f in fl.feature)
                                  for name, fl in example.feature_lists.feature_list.items()}}
    features = example.features if hasattr(example, "features") else example
    return {name: _feature(f) for name, f in sorted(features.feature.items())}


def _feature(f: Any) -> dict:
    kind = f.WhichOneof("kind")
    if kind is None:
        return {"(empty)": np.array([])}
    values = list(getattr(f, kind).value)
    dtype = {"float_list": np.float32, "int64_list": np.int64}.get(kind, object)
    return {kind: np.array(values, dtype=dtype)}


def not_elements(answer: object) -> str | None:
    """What is wrong with an answer that is not a dataset nor a list of elements, or None."""
    if answer is None:
        return "your answer is None: did your function forget to `return` the dataset"
    if isinstance(answer, list) and answer and all(a is None for a in answer):
        return ("every element of your answer is None: did your function forget to `return` "
                "what it built")
    if is_scalar(answer) or not hasattr(answer, "__iter__"):
        return (f"your answer is {with_article(type(answer).__name__)} ({str(answer)[:60]}), not a "
                "dataset: return (or pass) the tf.data.Dataset itself, or a list of its "
                "elements")
    return None


def elements(answer: Any, limit: int = MAX_ELEMENTS) -> tuple[list, str | None]:
    """The elements of a dataset or iterable (at most ``limit``), and a problem if there
    were more."""
    try:
        import tensorflow as tf
        if isinstance(answer, tf.data.Dataset):
            if int(answer.cardinality()) == int(tf.data.INFINITE_CARDINALITY):
                return [], "it never ends (repeat() without a count?)"
            group = _read_group(answer.element_spec)
            if group > 1:
                return _grouped(answer, limit, group)
            answer = iter(answer)
    except ImportError:  # pragma: no cover - TensorFlow is a dependency
        pass
    if hasattr(answer, "to_dict") and hasattr(answer, "columns"):  # a pandas DataFrame
        answer = answer.to_dict("records")  # its rows, as dicts: what from_tensor_slices gives
    elif hasattr(answer, "to_dict") and hasattr(answer, "index"):  # a pandas Series
        answer = answer.tolist()
    out: list[Any] = []
    for item in answer:
        if len(out) == limit:
            return out, f"it has more than {limit:,} elements"
        out.append(plain(item))
    return out, None


#: Bytes of elements read in one group by :func:`_grouped` (a ``str`` counts as 64).
GROUP_BYTES = 4 << 20


def _read_group(spec: Any) -> int:
    """How many elements of a dataset with element spec ``spec`` to read per step: more
    than 1 only when every component is a plain tensor of a fully known shape (those batch
    without changing a value); 1 for ragged, sparse, nested datasets or unknown shapes."""
    import tensorflow as tf
    specs = tf.nest.flatten(spec)
    if not specs or not all(type(s) is tf.TensorSpec and s.shape.is_fully_defined()
                            for s in specs):
        return 1
    size = sum(s.shape.num_elements() * (64 if s.dtype == tf.string else s.dtype.size)
               for s in specs)
    return int(min(1024, max(1, GROUP_BYTES // max(size, 1))))


def _grouped(dataset: Any, limit: int, group: int) -> tuple[list, str | None]:
    """:func:`elements` of a dataset of plain tensors, read ``group`` at a time: the same
    values as one by one (each a NumPy array of the element's shape and dtype), without
    a Python step per element (about 60 us each: a second for 20,000 elements). It reads
    no element more than one by one would: ``limit`` and one more at most."""
    import tensorflow as tf
    out: list[Any] = []
    spec = dataset.element_spec
    for batch in dataset.take(limit + 1).batch(group):
        leaves = [x.numpy() for x in tf.nest.flatten(batch)]
        for i in range(len(leaves[0])):
            out.append(plain(tf.nest.pack_sequence_as(spec, [np.asarray(x[i]) for x in leaves])))
    if len(out) > limit:
        return out[:limit], f"it has more than {limit:,} elements"
    return out, None


def row_count(elements: list) -> int:
    """Rows in ``elements``: the first dimension of each batch (1 for a scalar element)."""
    import tensorflow as tf
    rows = 0
    for e in elements:
        leaves = [x for x in tf.nest.flatten(e) if isinstance(x, np.ndarray)]
        rows += max([x.shape[0] for x in leaves if x.ndim] or [1])
    return max(rows, len(elements))


def _rows_of(rows: object, batch: object) -> bool:
    """Whether each leaf of the element ``rows`` is one row of the same leaf of ``batch``."""
    import tensorflow as tf
    try:
        a, b = tf.nest.flatten(rows), tf.nest.flatten(batch)
    except (TypeError, ValueError):
        return False
    return len(a) == len(b) and all(isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
                                    and y.ndim >= 1 and x.shape == y.shape[1:]
                                    for x, y in zip(a, b, strict=True))


def unbatched(mine: list, ref: list) -> str | None:
    """"Your rows are not batched" when each of your elements is one row of the reference's."""
    import tensorflow as tf
    if not mine or not ref or len(mine) <= len(ref) or not _rows_of(mine[0], ref[0]):
        return None
    return (f"not yet: your rows are not batched: each of your {len(mine)} elements is one "
            f"row, the reference's are batches of {tf.nest.flatten(ref[0])[0].shape[0]} rows: "
            "add .batch(...) where the reference batches.")


def batched_too(mine: list, ref: list) -> str | None:
    """"Your elements are batches" when the reference's are single rows of them."""
    import tensorflow as tf
    if not mine or not ref or len(mine) >= len(ref) or not _rows_of(ref[0], mine[0]):
        return None
    return (f"not yet: your elements are batches ({tf.nest.flatten(mine[0])[0].shape[0]} rows "
            f"in the first), the reference's are single rows ({len(ref)} elements): leave out "
            ".batch(...), or compare yours.unbatch().")


def as_text(a: np.ndarray) -> np.ndarray:
    """Text as ``str`` (``bytes`` decoded), so a ``tf.string`` equals a Python string."""
    return np.vectorize(lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else v,
                        otypes=[object])(a) if a.size else a.astype(object)
