"""Feedback on "write it yourself" exercises: what differs between your answer and the reference.

``check(name, answer, ...)`` (in :mod:`~datakit.exercises.checks`) builds the reference
for the exercise ``name`` from the same inputs, compares it with your answer element by element, and
says *what* differs, not only whether it does: the number of elements, the
first element that differs and where inside it, a dtype or a shape, the
structure (a tuple where a dict was expected), or only the order (the same
elements, another order: a seed, ``shuffle`` in another place, or another sort). An
error raised in your own function is told as yours, with its line.

The references are the kit's production helpers, so your plain ``tf.data``
code is checked against them: ``"csv_reader"`` (notebook 05, the numeric
columns of :func:`datakit.readers.csv_files.reader.csv_reader_dataset`), ``"example"`` (notebook
07, :func:`datakit.readers.records.tf_example.to_example`) and ``"clip_pipeline"``
(:func:`datakit.readers.video.reading.clips.clip_dataset` on the shards of ``write_video_records``
or ``write_video_shards``). :func:`compare` works on any two
datasets or lists:

>>> from datakit.exercises import compare
>>> compare([1, 2, 3], [1, 2, 3]).ok
True
>>> print(compare([1, 2, 3], [1, 2]))
not yet: yours has 3 elements, the reference 2.
content differs: 1 element(s) of yours not in the reference.
>>> print(compare([3, 1, 2], [1, 2, 3]))
not yet: element 0 differs: yours 3, expected 1.
the same elements as the reference, in another order: check the order asked (seed, shuffle, sort).
>>> compare([3, 1, 2], [1, 2, 3], order="any").ok   # a question that asks for no order
True
>>> bool(compare([1.0, 2.0], [1.0, 2.0000001]))   # float32 rounding is not a difference
True
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.exercises.checks import check, register
    from datakit.exercises.compare import compare

__all__ = lazy_face(__name__)
