"""The exercises and their references: ``register`` one, ``check`` an answer against it.

The kit registers its exercises when this module loads: ``"csv_reader"``, ``"example"``,
``"clip_pipeline"``, notebooks 01-05's and 07's (:mod:`datakit.exercises.route`), notebooks
06 and 09's (:mod:`datakit.exercises.epochs`), and notebook 10's
video reader (``"video_listing"``, ``"video_probe"``, ``"frame_times"``, ``"clip_frames"``,
``"clip_choices"``: see :mod:`datakit.exercises.video_reader`); :func:`register` adds your own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datakit.exercises.compare import ORDERS, Feedback, compare
from datakit.exercises.learner import told_as_yours

if TYPE_CHECKING:  # TensorFlow and the readers are imported when an exercise runs
    import tensorflow as tf

    from datakit.core.paths import FilesArg
    from datakit.readers.tables.table_stats import TableStats

__all__ = ["check", "register"]


@dataclass
class _Exercise:
    build: Callable  # inputs -> the reference answer
    apply: Callable  # (the learner's function, inputs) -> the learner's answer
    order: str = "same"  # "any": the question asks for no order
    judge: Callable | None = None  # (answer, inputs) -> Feedback: a question of properties


_EXERCISES: dict[str, _Exercise] = {}


def register(name: str, build: Callable, apply: Callable | None = None, *,
             order: str = "same", judge: Callable | None = None) -> None:
    """Register the reference of exercise ``name``: ``build(*args, **kwargs)`` makes it.

    ``apply(function, *args, **kwargs)`` runs a learner's function on the same
    inputs (default: calls it with them, leaving out keywords it does not take,
    such as the statistics a classic reader reads from global variables).
    ``order="any"``: the question asks for no order, so any order of the elements is right.
    ``judge(answer, *args, **kwargs)``: a question of properties (a split, a shuffle) says
    itself what is right, as a :class:`~datakit.exercises.compare.Feedback`.
    """
    if order not in ORDERS:
        raise ValueError(f"register({name!r}, order={order!r}): use one of {ORDERS}")
    _EXERCISES[name] = _Exercise(build, apply or _call, order, judge)


def _call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
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


def check(name: str, answer: Any, *args: Any, **kwargs: Any) -> Feedback:
    """Compare your ``answer`` to exercise ``name`` with the reference built from the inputs.

    ``answer`` is your dataset (or list), or your function: then it is called
    with ``*args, **kwargs``, the same inputs the reference gets.

    >>> check("no such exercise", [])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no exercise named 'no such exercise'; the exercises are [...]
    """
    if name not in _EXERCISES:
        raise ValueError(f"no exercise named {name!r}; the exercises are {exercise_names()}")
    exercise = _EXERCISES[name]
    if callable(answer) and not hasattr(answer, "element_spec"):
        try:
            answer = exercise.apply(answer, *args, **kwargs)
        except Exception as error:  # only your function runs here: its error is yours
            return Feedback(False, [f"{name}: {told_as_yours(error, 'running your function')}"])
    try:
        if exercise.judge is not None:
            feedback = exercise.judge(answer, *args, **kwargs)
        else:
            feedback = compare(answer, exercise.build(*args, **kwargs), order=exercise.order)
    except Exception as error:  # raised in your dataset: told as yours, with its line
        if not _raised_by_you(error):
            raise
        feedback = Feedback(False, [told_as_yours(error, "reading your answer")])
    feedback.lines[0] = f"{name}: {feedback.lines[0]}"
    return feedback


def _raised_by_you(error: BaseException) -> bool:
    """Whether your code raised ``error``: a line of yours in its traceback, or TensorFlow's
    error (raised while your dataset or function runs)."""
    from datakit.exercises.learner import your_line
    return bool(your_line(error)) or type(error).__module__.startswith("tensorflow")


def _csv_reader(filepaths: FilesArg, repeat: int | None = 1, n_readers: int = 5,
                n_read_threads: int | None = None, shuffle_buffer_size: int | None = 10_000,
                n_parse_threads: int | None = 5, batch_size: int = 32, *, stats: TableStats,
                label: str | None, seed: int | None = None,
                label_scale: float = 1.0) -> tf.data.Dataset:
    """The classic reader's elements: (standardized numeric features, label / label_scale)."""
    from datakit.readers.csv_files.reader import csv_reader_dataset
    from datakit.readers.tables.table_stats import NUMBER
    n = sum(c != label and stats[c].kind == NUMBER for c in stats.columns)
    ds = csv_reader_dataset(filepaths, repeat, n_readers, n_read_threads, shuffle_buffer_size,
                            n_parse_threads, batch_size, stats=stats, label=label, seed=seed,
                            label_scale=label_scale)
    return ds.map(lambda x, y: (x[:, :n], y))


def _examples(rows: Iterable[dict]) -> list:
    from datakit.readers.records.tf_example import to_example
    return [to_example(row) for row in rows]


def _clip_pipeline(directory: str | Path, *, clip_len: int = 16, batch_size: int = 8,
                   seed: int | None = 0, **kwargs: Any) -> tf.data.Dataset:
    from datakit.readers.video.reading.clips import clip_dataset
    return clip_dataset(directory, clip_len=clip_len, batch_size=batch_size, seed=seed, **kwargs)


register("csv_reader", _csv_reader)
def _example_answers(function: Callable[[dict], Any], rows: Iterable[dict]) -> list:
    """Your function on each row; serialized bytes (``SerializeToString()``) are parsed back."""
    return [_parsed(function(row)) for row in rows]


def _parsed(made: Any) -> Any:
    """An Example's serialized bytes (or a string tensor of them) as the Example, else as is."""
    import tensorflow as tf
    from google.protobuf.message import DecodeError
    data = made
    if isinstance(made, tf.Tensor) and made.dtype == tf.string and made.shape.rank == 0:
        data = made.numpy()
    if not isinstance(data, bytes):
        return made
    try:
        return tf.train.Example.FromString(data)
    except DecodeError:
        return made


register("example", _examples, _example_answers)
register("clip_pipeline", _clip_pipeline)


def _register_route() -> None:
    from datakit.exercises import route as r
    register("dict_dataset", r.dict_dataset)
    register("named_pairs", r.named_pairs)
    register("standardize_and_batch", r.standardized_batches, r.on_floats)
    register("odd_squares", r.odd_squares)
    register("halve_and_round", r.halve_and_round, r.halved)
    register("epoch_0_leaves", r.epoch_0_leaves)
    register("take_skip_split", _none, judge=r.take_skip_split)
    register("shuffled_pairs", _none, judge=r.shuffled_pairs)
    register("split_then_shuffle", _none, judge=r.split_then_shuffle)
    register("lines_before_file", r.lines_before_file)
    register("near_bay_count", r.near_bay_count)
    register("place_words", r.place_words, judge=r.place_words_judge)
    from datakit.exercises import epochs as e
    register("cached_splits", _none, judge=e.cached_splits)
    register("reproducible_epochs", _none, _runs, judge=e.reproducible_epochs)
    register("new_clips_each_epoch", _none, judge=e.new_clips_each_epoch)


def _none(*args: Any, **kwargs: Any) -> None:
    """No reference list: the exercise is judged by its properties."""


def _runs(run: Callable[[int], Any], *args: Any, **kwargs: Any) -> Any:
    """09.2's answer is a function ``run(n)``: its two fresh runs of two epochs are read."""
    from datakit.exercises.epochs import runs_of
    return runs_of(run)


_register_route()


def _register_video_reader() -> None:
    from datakit.exercises import video_reader as v
    register("video_listing", v.video_listing, judge=v.listing_judge)
    register("video_probe", v.video_probe, v.probe_answer, judge=v.probe_judge)
    register("frame_times", v.frame_times, v.frame_times_answer, judge=v.frame_times_judge)
    register("clip_frames", v.clip_frames, v.clip_frames_answer, judge=v.clip_frames_judge)
    register("clip_choices", v.clip_choices, judge=v.clip_choices_judge)


_register_video_reader()
