"""The door of every reader: tf.data's names for its knobs, and "keywords or an options object".

**One name per knob, tf.data's accepted too.** Every reader of the kit gives a knob
one name (``n_readers``, ``n_read_threads``, ``n_parse_threads``,
``shuffle_buffer_size``) and takes tf.data's word for it quietly, everywhere and for
good (:data:`TF_DATA_NAMES`): a learner who knows ``interleave`` or
``TFRecordDataset`` is never told off. Only a name that was the kit's alone
(:data:`OLD_NAMES`, none today) warns. A knob given under two names is one
``TypeError`` naming both; a tf.data name no reader takes says why (:data:`NOT_TAKEN`),
and Keras' name for a knob the reader has points to the kit's (:data:`KERAS_NAMES`, the
one rule of every entry point, :func:`unexpected`); any other unknown name is the
``TypeError`` Python gives.

>>> kw = keywords("read_records", {"n_readers": None}, {"num_parallel_reads": 2},
...               takes={"n_read_threads"}, defaults={"n_readers": None})
>>> dict(kw)
{'n_readers': None, 'n_read_threads': 2}
>>> kw.given, kw.written
({'n_read_threads'}, {'n_read_threads': 'num_parallel_reads'})
>>> keywords("read_records", {"n_readers": 2}, {"cycle_length": 2},
...          defaults={"n_readers": None})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
TypeError: read_records() got cycle_length= and n_readers=: pass only one (cycle_length= is
tf.data's name for n_readers=).
>>> keywords("clip_dataset", {}, {"image_size": (64, 64)}, takes={"frame_size"})
Traceback (most recent call last):
    ...
TypeError: clip_dataset() got image_size=, Keras' name for images: pass frame_size=(height, width).

A message names a knob as the caller wrote it, with no code in the reader: the
checks run under :meth:`Keywords.as_written`, which puts the caller's word back
(``cycle_length=0 is invalid``, not ``n_readers=0``).

**Keywords or an options object** (:func:`options_from`): a reader that has an
options object (``TableOptions``, ``VideoOptions``) takes ``options=`` or its
fields as keywords; a keyword beside ``options=`` replaces that field, unless the
object sets it too (differs from the class' default): then it is one ``TypeError``
naming both.

This module imports nothing from the kit, nor TensorFlow.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

__all__ = ["TF_DATA_NAMES", "keywords", "options_from"]

#: tf.data's name for a knob -> the kit's name for it: accepted quietly, by every reader
#: that has the knob. ``cycle_length``: interleave's inputs open at once;
#: ``num_parallel_reads``: ``TFRecordDataset``'s (and ``CsvDataset``'s) reading threads;
#: ``num_parallel_calls``: ``map``'s parse calls at once; ``buffer_size``: ``shuffle``'s.
TF_DATA_NAMES = {"cycle_length": "n_readers", "num_parallel_reads": "n_read_threads",
                 "num_parallel_calls": "n_parse_threads", "buffer_size": "shuffle_buffer_size"}

#: tf.data's names that no reader of the kit takes, and what to do instead.
NOT_TAKEN = {
    "block_length": "tf.data's interleave knob: every reader of the kit takes a whole block (a "
                    "chunk of lines, a row group, a record, a clip) from a file at a time; "
                    "leave it out",
    "deterministic": "tf.data's switch: every reader of the kit is deterministic (the same seed "
                     "gives the same order, in any process); leave it out",
}

#: Keras' names for a knob the kit names otherwise -> (the kit's name, what to pass):
#: pointed to wherever the kit's name is taken (the video readers, the converters,
#: ``clips_to_predict``). ``sequence_length``: ``timeseries_dataset_from_array``'s
#: steps per sequence, the frames of a clip here.
KERAS_NAMES = {
    "image_size": ("frame_size", "Keras' name for images: pass frame_size=(height, width)"),
    "sequence_length": ("clip_len", "Keras' name for a sequence's steps: pass "
                                    "clip_len=<frames per clip>"),
}

#: A name that was the kit's alone -> its name now: accepted for one version, warning
#: (``DeprecationWarning``). None is left: tf.data's names are never deprecated.
OLD_NAMES: dict[str, str] = {}


class Keywords(dict):
    """A reader's knobs under the kit's names, with what the caller wrote.

    ``given``: the knobs set by the caller (a keyword away from its default, or a
    tf.data name); ``written``: ``{kit name: the name the caller used}`` where they differ.
    """

    def __init__(self, values: Mapping[str, Any], given: set[str], written: dict[str, str]):
        super().__init__(values)
        self.given, self.written = given, written

    @contextlib.contextmanager
    def as_written(self) -> Iterator[None]:
        """Checks inside it raise ``TypeError``/``ValueError`` naming each knob as written.

        >>> kw = keywords("f", {"n_readers": 5}, {"cycle_length": 0}, defaults={"n_readers": 5})
        >>> with kw.as_written():
        ...     raise ValueError("n_readers=0 is invalid: pass an int >= 1.")
        Traceback (most recent call last):
            ...
        ValueError: cycle_length=0 is invalid: pass an int >= 1.
        """
        try:
            yield
        except (TypeError, ValueError) as e:
            if type(e) in (TypeError, ValueError) and self.written and e.args:
                message = str(e.args[0])
                for kit, word in self.written.items():
                    message = re.sub(rf"\b{kit}\b", word, message)
                e.args = (message, *e.args[1:])
            raise


def keywords(func: str, named: Mapping[str, Any], extra: Mapping[str, Any], *,
             takes: Iterable[str] = (), defaults: Mapping[str, Any] | None = None,
             stacklevel: int = 3) -> Keywords:
    """The knobs of a call to ``func``, under the kit's names (see the module docstring).

    Args:
        func: the reader's name, for messages.
        named: the knobs in its signature, by the kit's names, with their values.
        extra: its ``**keywords``: tf.data's names (:data:`TF_DATA_NAMES`), old names
            (:data:`OLD_NAMES`) and the names in ``takes``.
        takes: the kit's names it accepts through ``extra`` (e.g. its options' fields).
        defaults: the signature's defaults: a knob in ``named`` at its default is not
            "given" (so a tf.data name for it is no clash).
        stacklevel: where an old name's warning points (the caller's caller).

    Raises:
        TypeError: a knob under two names, a name it does not take.
    """
    defaults = dict(defaults or {})
    knobs = set(named) | set(takes)
    values, written = dict(named), dict[str, str]()
    given = {k for k, v in named.items() if k not in defaults or not _same(v, defaults[k])}
    for word, value in extra.items():
        kit = TF_DATA_NAMES.get(word) or OLD_NAMES.get(word) or word
        if kit not in knobs:
            raise unexpected(func, word, knobs)
        if kit in given:  # the other name first, the kit's last
            one, two = sorted({word, written.get(kit, kit)}, key=lambda w: w == kit)
            whose = "its old name" if one in OLD_NAMES else "tf.data's name"
            raise TypeError(f"{func}() got {one}= and {two}=: pass only one ({one}= is "
                            f"{whose} for {kit}=).")
        if word in OLD_NAMES:
            warnings.warn(f"{func}(): {word}= is now {kit}= (the name every reader of the kit "
                          "uses); the old name goes in the next version.",
                          DeprecationWarning, stacklevel=stacklevel)
        if word != kit:
            written[kit] = word
        values[kit] = value
        given.add(kit)
    return Keywords(values, given, written)


def unexpected(func: str, word: str, takes: Iterable[str]) -> TypeError:
    """The error for a keyword ``func`` does not take (``takes``: the names it does): why,
    for a tf.data name (:data:`NOT_TAKEN`); the kit's name, for Keras' name of a knob
    ``func`` takes (:data:`KERAS_NAMES`); else Python's own words.

    >>> str(unexpected("write_video_shards", "image_size", {"frame_size", "fps"}))
    "write_video_shards() got image_size=, Keras' name for images: pass frame_size=(height, width)."
    >>> str(unexpected("write_video_shards", "sequence_length", {"frame_size", "fps"}))
    "write_video_shards() got an unexpected keyword argument 'sequence_length'"
    """
    kit, pointer = KERAS_NAMES.get(word, ("", ""))
    why = NOT_TAKEN.get(word) or (pointer if kit in set(takes) else "")
    if why:
        return TypeError(f"{func}() got {word}=, {why}.")
    return TypeError(f"{func}() got an unexpected keyword argument {word!r}")


def _same(a: Any, b: Any) -> bool:
    """``a`` is ``b``'s value (``True`` and ``1`` differ, as do ``None`` and ``0``)."""
    return type(a) is type(b) and bool(a == b)


Options = TypeVar("Options")


def options_from(cls: type[Options], options: Options | None, fields: Mapping[str, Any], *,
                 where: str, given: Iterable[str] | None = None) -> Options:
    """The options of a call to ``where``: ``options`` (a ``cls``) and the ``fields`` beside it.

    Without ``options``, ``cls(**fields)`` (so the class checks them). With it, each
    field in ``given`` (default: all of ``fields``) replaces the object's, unless the
    object sets that field too (differs from the class' default): one ``TypeError``
    naming both. A result is always checked by the class.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Opts:
    ...     clip_len: int = 16
    ...     frame_size: tuple | None = None
    >>> options_from(Opts, Opts(clip_len=8), {"frame_size": (32, 32)}, where="clip_dataset")
    Opts(clip_len=8, frame_size=(32, 32))
    >>> options_from(Opts, Opts(clip_len=8), {"clip_len": 4},
    ...              where="clip_dataset")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    TypeError: clip_dataset() got clip_len twice: clip_len=4 beside options=Opts(clip_len=8);
    pass it once, as a keyword or in options=
    >>> options_from(Opts, {"clip_len": 8}, {}, where="clip_dataset")
    Traceback (most recent call last):
        ...
    TypeError: options must be an Opts, got dict: pass options=Opts(...)
    """
    if options is None:
        return cls(**fields)
    if not isinstance(options, cls):
        article = "an" if cls.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"options must be {article} {cls.__name__}, got "
                        f"{type(options).__name__}: pass options={cls.__name__}(...)")
    chosen = set(fields) if given is None else set(given) & set(fields)
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for name in sorted(chosen):
        if defaults[name] is dataclasses.MISSING or not _same(getattr(options, name),
                                                                defaults[name]):
            raise TypeError(f"{where}() got {name} twice: {name}={fields[name]!r} beside "
                            f"options={cls.__name__}({name}={getattr(options, name)!r}); pass "
                            "it once, as a keyword or in options=")
    return dataclasses.replace(options, **{k: fields[k] for k in chosen})  # type: ignore[type-var]
