"""A tf.Transform run read back: its rows for ``fit()``, its statistics, its serving model.

:class:`TransformRun` opens the run that
:func:`datakit.readers.tf_transform.transform.run_transform` committed to a folder (the
generation its plan file names, :mod:`datakit.readers.tf_transform.transform_folder`).
``dataset()`` reads the transformed rows through the tables' one reading tail
(:func:`~datakit.readers.tables.block_reading.blocks_dataset`), with the row readers'
arguments; ``statistics()`` gives the means, stds and vocabularies the graph applies;
``serving_model(model)`` puts ``transform_features_layer()`` in front of a Keras model,
so it takes raw CSV lines.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

from datakit.core.arguments import PREFETCH
from datakit.core.errors import DataError
from datakit.core.file_facts import Stamp, file_facts, file_stamp
from datakit.core.paths import PathArg
from datakit.readers.csv_files.reader import OOV
from datakit.readers.tables.block_reading import blocks_dataset
from datakit.readers.tables.table_options import TableOptions, table_options
from datakit.readers.tables.table_stats import NUMBER, TEXT
from datakit.readers.tables.unchanged_files import checked_path
from datakit.readers.tf_transform.transform_folder import (
    JOB_FILE,
    MEAN,
    RUN_FORMAT,
    STD,
    TransformJob,
    read_plan_file,
)

__all__ = ["TransformRun"]

#: Records parsed at once by :meth:`TransformRun.dataset` (a block of the tables' tail).
_BLOCK = 1024
#: What the error for a run's file changed after ``dataset()`` tells the user to do.
_RUN_AGAIN = ("build TransformRun(output_dir).dataset() again; to change the rows, run "
              "run_transform again (it writes a new run beside the one being read)")



def _glob_escaped(path: tf.Tensor) -> tf.Tensor:
    """``path`` as a pattern that matches only itself: ``*``, ``?`` and ``[`` in a class."""
    for c in ("[", "*", "?"):
        path = tf.strings.regex_replace(path, "\\" + c, "[" + c + "]")
    return path


class TransformRun:
    """What :func:`run_transform` wrote to ``output_dir``, read back.

    ``feature_names`` says what each column of :meth:`dataset`'s matrix is: numbers,
    then a one-hot block ``[UNK] + vocabulary`` per text column, as the kit's reader.
    """

    def __init__(self, output_dir: PathArg) -> None:
        import tensorflow_transform as tft

        self.output_dir = os.fspath(output_dir)
        record = read_plan_file(self.output_dir)
        if record is None:
            raise FileNotFoundError(f"{self.output_dir}: no tf.Transform run here ({JOB_FILE} "
                                    "is missing); pass the folder run_transform wrote.")
        if record.get("format") == RUN_FORMAT:  # one generation, named by the plan file
            self.folder = os.path.join(self.output_dir, record["folder"])
            self.job, self.made_from = TransformJob(**record["job"]), record["made_from"]
            self._transformed = record["transformed"]
        else:  # written before generations: the plan file is the job, the run beside it
            self.folder, self.job, self.made_from = self.output_dir, TransformJob(**record), None
            self._transformed = None
        self.plan = self.job  # its first name
        self.output = tft.TFTransformOutput(self.folder)
        assets = os.path.join(self.folder, "transform_fn", "assets")
        self.vocabularies = {}
        for c in self.job.texts + ([self.job.label] if self.job.kinds[self.job.label] == TEXT
                                    else []):
            with open(os.path.join(assets, f"vocabulary_{c}"), "rb") as f:
                self.vocabularies[c] = [v.decode() for v in f.read().splitlines()]
        self.feature_names = self.job.numbers + [
            f"{c}={v}" for c in self.job.texts for v in [OOV] + self.vocabularies[c]]

    def matrix(self, features: Mapping[str, tf.Tensor]) -> tf.Tensor:
        """The transformed features as one float32 matrix (see ``feature_names``)."""
        x = [tf.stack([features[c] for c in self.job.numbers], axis=-1)] \
            if self.job.numbers else []
        x += [tf.one_hot(features[c], len(self.vocabularies[c]) + 1) for c in self.job.texts]
        return tf.concat(x, axis=-1)

    def dataset(self, batch_size: int = 32, *, shuffle_buffer_size: int | None = None,
                seed: int | None = None, repeat: int | None = 1, n_readers: int = 1,
                n_read_threads: int | None = None, n_parse_threads: int | None = None,
                prefetch: int | None = PREFETCH, options: TableOptions | None = None,
                **tf_names: Any) -> tf.data.Dataset:
        """The transformed rows as ``(matrix, label)`` batches, through the tables' one tail.

        The arguments are the kit's row readers' (:class:`TableOptions`, checked before
        a file opens; as ``options=TableOptions(...)``, whole, or as keywords, not both
        for one field; tf.data's names taken quietly): the default reads the files one
        at a time in Beam's order, no shuffle; ``shuffle_buffer_size`` shuffles the files
        (with ``seed``) and the rows; ``n_parse_threads`` blocks of records parsed at
        once. The dataset knows its length (``len(ds)``) and ends with ``prefetch``. A
        file a later run replaced, or one replaced or changed in place since this call
        (its size, times or inode: :mod:`datakit.core.file_facts`, one ``stat`` per file
        per epoch), is an error naming it, when an epoch reaches it. That check is a
        Python call: the dataset cannot run on tf.data service workers.
        """
        options = table_options(TransformRun.dataset, options, dict(
            batch_size=batch_size, shuffle_buffer_size=shuffle_buffer_size, seed=seed,
            repeat=repeat, n_readers=n_readers, n_read_threads=n_read_threads,
            n_parse_threads=n_parse_threads, prefetch=prefetch), tf_names)[0]
        keep = self.job.numbers + self.job.texts + [self.job.label]
        spec = {k: v for k, v in self.output.transformed_feature_spec().items() if k in keep}
        label = self.job.label

        def parse(records: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            row = tf.io.parse_example(records, spec)
            return self.matrix(row), row[label]

        gone = (f"is gone: a later run_transform into {self.output_dir} replaced this run "
                "(or the file was removed); build TransformRun(output_dir).dataset() again")

        facts = self._transformed_files()  # what each epoch's open compares the files with
        files = list(facts)

        def blocks_of(path: tf.Tensor) -> tf.data.Dataset:
            """The file checked as each epoch reaches it, not only now."""
            there = tf.size(tf.io.matching_files(_glob_escaped(path))) > 0
            said = tf.strings.join([path, gone], separator=" ")
            with tf.control_dependencies([tf.debugging.Assert(there, [said])]):
                path = tf.identity(path)
            path = checked_path(path, facts, fix=_RUN_AGAIN)  # there, and the same file
            return tf.data.TFRecordDataset(path).batch(_BLOCK).map(
                parse, num_parallel_calls=options.n_parse_threads)

        return blocks_dataset(files, blocks_of, options, self.job.rows)

    def _transformed_files(self) -> dict[str, Stamp]:
        """``{file: stamp}`` of this run's rows, in the plan file's order, each checked by the
        size of its stamp: taken before the check, so the file checked is the one stamped."""
        if self._transformed is None:  # an older run: its folder holds one run only
            return file_facts(sorted(tf.io.gfile.glob(os.path.join(self.folder,
                                                                   "transformed-*"))))
        facts: dict[str, Stamp] = {}
        for e in self._transformed:
            path = os.path.join(self.output_dir, e["file"])
            try:
                facts[path] = file_stamp(path)
                size = facts[path][0] if os.path.isfile(path) else None
            except FileNotFoundError:
                size = None
            if size != e["bytes"]:
                raise DataError(path, f"{'missing' if size is None else f'{size} bytes'}, the "
                                f"run wrote {e['bytes']}: this run's rows were changed or "
                                "removed; run run_transform again")
        return facts

    def statistics(self) -> dict[str, dict]:
        """The means and stds the graph applies (float32), and the vocabularies, per column."""
        empty = {c: tf.SparseTensor(tf.zeros([0, 2], tf.int64), tf.zeros(
            [0], tf.float32 if self.job.kinds[c] == NUMBER and c in self.job.columns
            else tf.string), [1, 1]) for c in self.job.header}  # one row, every field empty
        out = self.output.transform_features_layer()(empty)
        stats = {c: {"mean": float(out[c + MEAN][0]), "std": float(out[c + STD][0])}
                 for c in self.job.numbers}
        return stats | {c: {"vocabulary": v} for c, v in self.vocabularies.items()}

    def serving_model(self, model: Callable[[tf.Tensor], tf.Tensor]) -> _RawLinesModel:
        """``model`` behind ``transform_features_layer()``: it takes raw CSV lines (header order).

        Save it with ``tf.saved_model.save(served, path)``; ``tf.saved_model.load(path)``
        gives a callable on a batch of lines, the label field ignored (it may be empty).
        """
        return _RawLinesModel(self, model)


class _RawLinesModel(tf.Module):
    def __init__(self, run: TransformRun, model: Callable[[tf.Tensor], tf.Tensor]) -> None:
        super().__init__()
        self.model, self.tft_layer = model, run.output.transform_features_layer()
        self._run = run
        job = run.job
        self._columns = [(c, job.kinds[c] == NUMBER) for c in job.numbers + job.texts]
        self._index = {c: job.header.index(c) for c, _ in self._columns}
        self._width = len(job.header)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="lines")])
    def __call__(self, lines: tf.Tensor) -> tf.Tensor:
        fields = tf.io.decode_csv(lines, [[""]] * self._width)
        raw = {}
        for c, is_number in self._columns:
            value = fields[self._index[c]]
            present = tf.strings.length(value) > 0  # an empty field: no value, as in training
            values = tf.boolean_mask(value, present)
            where = tf.where(present)
            raw[c] = tf.SparseTensor(
                tf.concat([where, tf.zeros_like(where)], axis=1),
                tf.strings.to_number(values) if is_number else values,
                tf.stack([tf.size(lines, out_type=tf.int64), 1]))
        return self.model(self._run.matrix(self.tft_layer(raw)))
