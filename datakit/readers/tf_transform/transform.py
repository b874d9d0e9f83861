"""tf.Transform on Apache Beam over the kit's CSV shards: the full pass, its graph in the model.

:func:`column_stats` makes the full pass on one machine; tf.Transform makes the
same pass as an Apache Beam pipeline (the DirectRunner here; Dataflow, Flink or
Spark by changing the runner) and writes a *transform graph*, which the exported
model carries so it takes raw rows. Needs the ``transform`` extra
(``pip install -e ".[transform]"``): tensorflow-transform, tfx-bsl, apache-beam.

- :func:`transform_job` (first named ``plan_transform``) checks the shards
  (manifest, header) and chooses the columns as :func:`column_stats` does
  (``columns=``, ``text_columns=``, ``max_vocabulary=``).
- :func:`make_preprocessing_fn`: numbers become z-scores (mean and std from
  ``tft.mean``/``tft.var``; a missing number becomes 0.0, the mean), text a
  vocabulary index, 0 for unknown or empty, ``i`` for the ``i``-th value: the
  kit reader's layout. The vocabulary is counted in Beam and ranked as the kit
  ranks it (most frequent first, ties by value, at most ``max_vocabulary``);
  ``tft.vocabulary`` breaks ties the other way (largest value first).
- :func:`run_transform` runs ``AnalyzeAndTransformDataset`` over exactly the
  checked files, writes the transform graph and the transformed rows (TFRecord),
  and checks that every row came out. A bad line is named by file and line. The
  graph and the rows are committed as one generation
  (:mod:`datakit.readers.tf_transform.transform_folder`): a rerun into the same folder replaces
  the earlier run whole, or, if it fails, leaves it whole.
- :class:`~datakit.readers.tf_transform.transform_run.TransformRun` reads it back: ``dataset()`` for
  ``fit()``, ``statistics()``, and ``serving_model(model)``, which takes raw CSV lines.
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_count
from datakit.core.atomic import Staging
from datakit.core.beam_runner import direct_runner_args, no_interactive_labels
from datakit.core.errors import DataError
from datakit.core.paths import FilesArg
from datakit.core.progress import check_progress, progress_bar
from datakit.readers.csv_files.column_kinds import infer_kinds
from datakit.readers.csv_files.file_checks import csv_file_set
from datakit.readers.csv_files.grammar import bad_lines_in
from datakit.readers.tables.column_choice import choose_columns
from datakit.readers.tables.table_stats import NUMBER, TEXT, ColumnStats, TableStats
from datakit.readers.tf_transform.transform_folder import (
    MEAN,
    STD,
    TransformJob,
    check_output_folder,
    check_unchanged,
    commit_run,
    source_facts,
)
from datakit.readers.tf_transform.transform_run import TransformRun

__all__ = ["plan_transform", "make_preprocessing_fn", "run_transform", "beam_args"]


def transform_job(filepaths: FilesArg, *, label: str, columns: Sequence[str] | None = None,
                  max_vocabulary: int | dict[str, int | None] | None = None,
                  text_columns: Sequence[str] = ()) -> TransformJob:
    """Check the shards up front and choose the columns, as :func:`column_stats` does.

    A label the kit's CSV reader would refuse (empty, ``nan`` or infinite) is a
    :class:`DataError` naming its file, line and column, here rather than in the Beam run
    (other bad lines are named when the run meets them). A ``nan`` or infinite *feature* counts as
    missing, as in :func:`column_stats` (its z-score is 0.0).
    """
    choose_columns(columns)  # its form, before any file is opened
    checked = csv_file_set(filepaths)
    files, header = checked.files, checked.shape
    columns = choose_columns(columns, header, files[0])
    kinds = infer_kinds(files, text_columns=text_columns, columns=columns)  # the chosen only
    if label not in columns:
        raise ValueError(f"label={label!r} is not one of the columns {list(columns)}.")
    texts = [c for c in columns if kinds[c] == TEXT]
    caps = max_vocabulary if isinstance(max_vocabulary, dict) else dict.fromkeys(
        texts, max_vocabulary)
    if set(caps) - set(texts):
        raise ValueError(f"max_vocabulary names {sorted(set(caps) - set(texts))}, which are "
                         f"not kept text columns (those are {texts}).")
    for c, n in caps.items():
        check_count(f"max_vocabulary[{c!r}]" if isinstance(max_vocabulary, dict)
                    else "max_vocabulary", n, none=True)
    caps = {c: caps.get(c) for c in texts}
    job = TransformJob(files, list(header), kinds, list(columns), label, caps, checked.total)
    bad = [b for b in _bad_lines(job) if (b.column or "").split(" (")[0] == label]
    if bad:  # a nan, inf or empty label: refused here, as the CSV reader refuses it
        raise DataError(bad[0].file, f"{bad[0].reason} ({len(bad)} bad line(s); raw line: "
                        f"`{bad[0].raw[:200]}`): fix or drop those lines before the run",
                        line=bad[0].line, column=bad[0].column)
    return job


#: The first names of :class:`TransformJob` and :func:`transform_job`.
TransformPlan, plan_transform = TransformJob, transform_job


def _kit_vocabulary(values: tf.Tensor, cap: int | None, name: str) -> tf.Tensor:
    """A vocabulary file counted by Beam, ranked as the kit ranks (-count, value), cut at cap."""
    import apache_beam as beam
    import tensorflow_transform as tft
    from tensorflow_transform.beam.experimental import PTransformAnalyzer

    class KitVocabulary(PTransformAnalyzer):
        def expand(self, batches: Any) -> Any:
            path = os.path.join(self.base_temp_dir, f"vocabulary_{name}")
            return (batches
                    | "Values" >> beam.FlatMap(lambda batch: [v for v in batch[0] if v])
                    | "Count" >> beam.combiners.Count.PerElement()
                    | "Gather" >> beam.combiners.ToList()
                    | "Write" >> beam.Map(_write_vocabulary, path, cap))

    (path,) = tft.experimental.ptransform_analyzer(
        [values], KitVocabulary(), [tf.string], [[]], output_asset_default_values=[b"?"],
        name=f"vocabulary_{name}")
    return path


def _write_vocabulary(counts: Any, path: str, cap: int | None) -> Any:
    # (Any: Beam checks a mapped function's hints against its PCollection's types; the
    # counts are the (value, count) pairs of Count.PerElement, gathered by ToList)
    ranked = sorted(counts, key=lambda kv: (-kv[1], kv[0]))[:cap]
    tf.io.gfile.makedirs(os.path.dirname(path))
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(b"".join(v + b"\n" for v, _ in ranked))
    return np.array(path.encode(), dtype=object)


def make_preprocessing_fn(job: TransformJob) -> Callable[[dict], dict]:
    """The ``preprocessing_fn`` for ``AnalyzeAndTransformDataset``: raw columns in, features out.

    Inputs are ``SparseTensor`` s of shape ``[batch, 1]`` (an empty CSV field is no
    value). Outputs: each number's z-score (``nan``/``inf``/empty: 0.0), each text
    column's index (0: ``[UNK]``), the label (a number as read; a text label its
    class index), and ``<column>__mean`` / ``__std`` for :meth:`TransformRun.statistics`.
    """
    import tensorflow_transform as tft

    def dense(x: tf.SparseTensor, default: float) -> tf.Tensor:
        return tft.sparse_tensor_to_dense_with_shape(x, [None, 1], default_value=default)[:, 0]

    def preprocessing_fn(inputs: dict) -> dict:
        out = {}
        for c in job.numbers:
            x = tf.sparse.retain(inputs[c], tf.math.is_finite(inputs[c].values))
            batch = x.dense_shape[:1]
            mean, var = tft.mean(x, name=f"mean_{c}"), tft.var(x, name=f"var_{c}")
            std = tf.sqrt(var)
            z = (x.values - mean) / tf.where(std > 0, std, tf.ones_like(std))
            out[c] = dense(tf.SparseTensor(x.indices, z, x.dense_shape), 0.0)
            out[c + MEAN], out[c + STD] = tf.fill(batch, mean), tf.fill(batch, std)
        for c in job.texts + ([job.label] if job.kinds[job.label] == TEXT else []):
            x = inputs[c]
            vocabulary = _kit_vocabulary(x.values, job.max_vocabulary.get(c), c)
            ids = tft.apply_vocabulary(x, vocabulary, default_value=-1)
            out[c] = dense(ids, -1) + (1 if c != job.label else 0)  # 0: [UNK] or empty
        if job.kinds[job.label] == NUMBER:
            out[job.label] = dense(inputs[job.label], np.nan)
        return out

    return preprocessing_fn


def _raw_schema(job: TransformJob) -> Any:
    from tensorflow_metadata.proto.v0 import schema_pb2

    schema = schema_pb2.Schema()
    for c in job.header:  # every column (CsvTFXIO wants them all); the unkept ones are unused
        feature = schema.feature.add(name=c)
        feature.type = schema_pb2.FLOAT if job.kinds[c] == NUMBER and c in job.columns \
            else schema_pb2.BYTES
    return schema


def beam_args(workers: int = 1) -> list[str]:
    """The DirectRunner's flags for tf.Transform: one process in memory, or ``workers``
    processes (its analyzers hold the GIL: threads would take turns)."""
    return direct_runner_args(workers, processes=True)


def run_transform(job: TransformJob, output_dir: str | os.PathLike, *, workers: int = 1,
                  pipeline_args: list[str] | None = None,
                  progress: bool | None = None) -> TransformRun:
    """Run tf.Transform over ``job.files`` with Beam; write the graph and the transformed rows.

    ``pipeline_args`` (default :func:`beam_args` of ``workers``) are Beam's flags: pass
    ``--runner=DataflowRunner ...`` to run the same pipeline on a cluster.

    The graph and the rows of a run are one *generation* (``output_dir/run-<N>/``): Beam
    writes them in a hidden folder, and the run becomes visible in one atomic step, when
    the plan file (``datakit_transform_plan.json``) is rewritten to name it, with what the
    run was made from (each file's path, size and modification time, the job's options).
    Rerunning into the folder of an earlier run replaces that run whole, as rerunning a
    cell expects; until the new run is complete (and if it fails, or is killed), the
    earlier one stays as it was and :class:`TransformRun` reads only it. A folder holding
    anything else is refused by name: nothing of yours is deleted.

    ``progress`` shows a bar over the run's phases (building the pipeline, running it,
    checking its rows, committing the run; :mod:`datakit.core.progress`): ``None``
    (default) in a notebook or a terminal once the run lasts a second, ``True`` always,
    ``False`` never. Beam's run is the long phase.

    Raises:
        TypeError: ``progress`` is not ``True``, ``False`` or ``None``.
        FileExistsError: ``output_dir`` holds files that are not a tf.Transform run's.
        DataError: a bad line (named by file, line and column, with tf.Transform's own
            error as the cause), a row count that differs from the files', or a file
            changed while Beam read it.
        OSError: (``ENOSPC``) the disk is full, naming ``output_dir``; nothing of this run
            is left there and the earlier run is as it was.
    """
    check_progress(progress)
    import apache_beam as beam
    from apache_beam.metrics.metric import MetricsFilter
    from apache_beam.options.pipeline_options import PipelineOptions

    output_dir = os.fspath(output_dir)
    check_output_folder(output_dir)
    # A process that ran tf.Transform (TF 2.21, tfx-bsl 1.21) crashes with SIGSEGV in the
    # garbage collection Python makes at exit, after all its work is done; freezing the
    # objects at exit leaves them to the operating system instead.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    made_from = source_facts(job.files)
    bar = progress_bar(4, "tf.Transform", progress=progress, unit="phase")
    # A full disk: named by the Staging; its hidden folder goes either way.
    with Staging(output_dir) as staging, bar:
        stage = os.fspath(staging.subfolder("run"))  # hidden, this process's PID in its name
        bar.set_postfix_str("building the pipeline")
        pipeline = beam.Pipeline(options=PipelineOptions(pipeline_args or beam_args(workers)))
        try:
            with no_interactive_labels():
                _build(pipeline, job, stage)
                bar.update()
                bar.set_postfix_str("running it (Beam)")
                result = pipeline.run()
            result.wait_until_finish()
            bar.update()
        except Exception as e:  # any failure: name the bad line if there is one
            _raise_bad_line(job, e)
            raise
        bar.set_postfix_str("checking its rows")
        counters = result.metrics().query(MetricsFilter().with_name("rows"))["counters"]
        rows = sum(c.committed for c in counters)
        if rows != job.rows:
            raise DataError(job.files[0], f"tf.Transform wrote {rows} rows, the files hold "
                            f"{job.rows} (checked up front): rows were lost or added")
        check_unchanged(made_from)
        shutil.rmtree(os.path.join(stage, "tmp"), ignore_errors=True)  # Beam's scratch space
        bar.update()
        bar.set_postfix_str("committing the run")
        commit_run(stage, output_dir, asdict(job), made_from)
        bar.update()
    return TransformRun(output_dir)


def _build(pipeline: Any, job: TransformJob, output_dir: str) -> None:
    import apache_beam as beam
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import schema_utils
    from tfx_bsl.public import tfxio

    source = tfxio.BeamRecordCsvTFXIO(physical_format="text", column_names=job.header,
                                      schema=_raw_schema(job))
    with tft_beam.Context(temp_dir=os.path.join(output_dir, "tmp")):
        lines = (pipeline | "Files" >> beam.Create(job.files)  # the checked files, no glob
                 | "Lines" >> beam.io.ReadAllFromText(skip_header_lines=1,
                                                      coder=beam.coders.BytesCoder()))
        raw = lines | "Decode" >> source.BeamSource()
        (rows, metadata), transform_fn = (
            (raw, source.TensorAdapterConfig())
            | tft_beam.AnalyzeAndTransformDataset(make_preprocessing_fn(job)))
        _ = transform_fn | tft_beam.WriteTransformFn(output_dir)
        keep = job.numbers + job.texts + [job.label]
        spec = metadata.schema  # deferred: encode with a schema of the kept outputs only
        coder = tft.coders.ExampleProtoCoder(schema_utils.schema_from_feature_spec(
            {k: v for k, v in schema_utils.schema_as_feature_spec(spec).feature_spec.items()
             if k in keep}))
        _ = (rows | "Check" >> beam.Map(_checked_row, keep, job.label, job.kinds[job.label])
             | "Encode" >> beam.Map(coder.encode)
             | "Write" >> beam.io.WriteToTFRecord(os.path.join(output_dir, "transformed"),
                                                  file_name_suffix=".tfrecord"))


def _checked_row(row: Any, keep: list[str], label: str, kind: str) -> Any:
    # (Any: Beam checks a mapped function's hints against its PCollection's types, and
    # AnalyzeAndTransformDataset's rows are typed as a union of several forms)
    from apache_beam.metrics import Metrics

    if np.isnan(row[label]) if kind == NUMBER else row[label] < 0:  # the kit's rule: never empty
        raise ValueError(f"a row has no valid label {label!r}: {row}")
    Metrics.counter("datakit", "rows").inc()
    return {k: row[k] for k in keep}


def _bad_lines(job: TransformJob) -> list:
    """The lines of ``job.files`` the kit's CSV grammar refuses (a number label never empty,
    ``nan`` nor infinite), each with its file, line and column."""
    kinds = {c: ColumnStats(c, job.kinds[c]) for c in job.columns}
    stats = TableStats(job.columns, kinds, job.files, job.rows, job.header)
    label = job.label if job.kinds[job.label] == NUMBER else None
    return bad_lines_in(job.files, job.header, stats, label=label)  # checked: not again


def _raise_bad_line(job: TransformJob, error: Exception) -> None:
    bad = _bad_lines(job)
    if bad:
        first = str(error).strip().splitlines()[0][:300]
        raise DataError(bad[0].file, f"{bad[0].reason} ({len(bad)} bad line(s); raw line: "
                        f"`{bad[0].raw[:200]}`). tf.Transform's CSV decoding failed with: "
                        f"{first}", line=bad[0].line, column=bad[0].column) from error
