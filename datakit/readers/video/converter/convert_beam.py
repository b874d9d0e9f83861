"""``write_video_shards_beam``: the video converter as an Apache Beam pipeline, for a cluster.

The same conversion as :func:`~datakit.readers.video.converter.convert.write_video_shards`
(the same listing, parts, manifest and class names, so the same set for the same
seed and options), with the per-video work spread by Beam instead of local
processes. What runs where:

1. Here, before the pipeline: the folder is listed and probed, the class names
   and labels chosen, and the parts already converted by an earlier run (of
   these files and options) found, by the converter core both converters call
   (:func:`~datakit.readers.video.converter.conversion.convert_videos`).
2. In the pipeline, one element per video still to convert: a worker decodes
   it, encodes its JPEGs and writes its part into ``out/.parts/`` itself
   (atomically, so a runner that retries an element just writes it again).
   The videos' probed facts reach the workers in job files of 256
   videos, written there too: only their names are in the pipeline's graph,
   which a runner receives whole and limits in size.
   A video that fails is written down there as ``<part>.failed`` (its reason),
   so this process learns of it after the run.
3. Here, after the pipeline has finished: the set is committed once, with the
   kit's set commit. A pipeline that fails or is killed commits nothing: the
   previous set stays whole and its manifest unchanged; the finished parts are
   kept, so the next run converts only the rest.

Beam's flags choose the runner (``pipeline_args``). Here the DirectRunner runs
``workers`` threads on this machine
(:func:`~datakit.core.beam_runner.direct_runner_args`): threads, not processes,
as FFmpeg decodes and libjpeg-turbo encodes JPEGs with the GIL released, so two
threads convert at once (here two kept 1.7x the CPU of one busy), and a thread
starts at once where a worker process first imports TensorFlow to unpickle the
conversion. Measured here (12 videos of 200 frames to 112x112, two runs on a busy
machine): 2 threads took 7.3 and 6.2 s, 3.8 and 3.9 CPU s; 2 processes
(``--direct_running_mode=multi_processing``) 37.8 and 15.9 s, 15.9 and 14.7 CPU s;
the local converter 5.6 and 3.6 s, 3.3 and 3.1 CPU s. On a cluster, ``directory`` and
``out`` must be one folder every worker and this process see under the same
absolute path (an NFS share, or a bucket mounted with gcsfuse), because workers
write the parts there and the commit renames files atomically (``gs://`` URLs
do not work), and the workers need the kit installed (``--requirements_file``
or a container image)::

    # Google Cloud Dataflow
    --runner=DataflowRunner --project=my-project --region=europe-west1
    --temp_location=gs://my-bucket/tmp --requirements_file=requirements.txt

    # Apache Flink (a running cluster; the job server starts on demand)
    --runner=FlinkRunner --flink_master=flink-host:8081 --parallelism=8
    --environment_type=DOCKER

    # Apache Spark
    --runner=SparkRunner --spark_master_url=spark://spark-host:7077 --environment_type=DOCKER
"""

from __future__ import annotations

import json
import os
import pickle
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from datakit.core.arguments import check_count, check_flags
from datakit.core.atomic import write_atomic
from datakit.core.beam_runner import direct_runner_args, no_interactive_labels
from datakit.core.errors import DataError
from datakit.core.paths import user_path
from datakit.core.progress import check_progress, progress_bar
from datakit.readers.video.converter.conversion import Conversion, convert_videos
from datakit.readers.video.converter.part_files import PartJob, convert_part
from datakit.readers.video.converter.shard_sets import ShardSets
from datakit.readers.video.index.folders import VideoFolder
from datakit.readers.video.options.clip_options import FRAME_FIELDS, VideoOptions, video_options

__all__ = ["write_video_shards_beam"]

_FAILED = ".failed"  # a part's name + this: the reason its video failed, written by its worker
#: Videos per job file: the elements' probed facts (timestamps of every frame) are read
#: by the workers from these files, not sent in the pipeline's graph.
_JOB_CHUNK = 256


# Beam reads these hints at run time (beam.Map checks elements and side inputs with them):
# ``item`` and ``fps`` stay ``Any``, which Beam takes as it took them unannotated.
def _convert_video(item: Any, *, parts: str, fps: Any, quality: int, fit: dict,
                   on_bad_file: str) -> int:
    """One element of the pipeline: video ``item = (i, info, label, part name)`` into its part.

    Runs on a worker. A video that fails leaves its reason in ``<part>.failed``,
    then raises under ``on_bad_file="raise"`` (the pipeline fails, nothing is
    committed). Returns 1 for a part written, 0 for a video that failed.
    """
    i, info, label, name = item
    try:
        convert_part(PartJob(info, str(Path(parts) / name), i, label), fps=fps,
                     quality=quality, **fit)
    except DataError as e:
        write_atomic(Path(parts) / (name + _FAILED), json.dumps({"reason": e.reason}))
        if on_bad_file == "raise":
            raise
        return 0
    return 1


def _write_job(parts: Path, items: list) -> list[str]:
    """``items`` in job files of ``_JOB_CHUNK`` each, in ``parts``; their paths."""
    for old in parts.glob("job-*.pkl"):  # an earlier run's job
        old.unlink()
    files = []
    for k in range(0, len(items), _JOB_CHUNK):
        path = parts / f"job-{k // _JOB_CHUNK:06d}.pkl"
        write_atomic(path, pickle.dumps(items[k:k + _JOB_CHUNK]))
        files.append(str(path))
    return files


def _job_items(path: str) -> list:
    """The videos of one job file (read on a worker): written by this run, so trusted."""
    with open(path, "rb") as f:
        return pickle.load(f)


def _run_pipeline(job_files: list[str], pipeline_args: Sequence[str] | Any,
                  **work: Any) -> None:
    """Convert the videos of ``job_files`` on Beam; returns when all are done (or raises)."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    if not isinstance(pipeline_args, PipelineOptions):
        pipeline_args = PipelineOptions(list(pipeline_args))
    pipeline = beam.Pipeline(options=pipeline_args)
    with no_interactive_labels():
        _ = (pipeline | "Job files" >> beam.Create(job_files)
             | "Videos" >> beam.FlatMap(_job_items)
             | "Spread" >> beam.Reshuffle()  # a job file's videos over all the workers
             | "Convert" >> beam.Map(_convert_video, **work))
        result = pipeline.run()
    result.wait_until_finish()


@contextmanager
def _following_parts(bar: Any, parts: Path, every: float = 0.5) -> Iterator[None]:
    """While the block runs, ``bar`` counts the videos done: the parts and failure notes
    in ``parts``, which the workers write there (a folder this process sees too)."""
    def follow() -> None:
        done = len(list(parts.glob("[0-9]*-*.tfrecord"))) + len(list(parts.glob("*" + _FAILED)))
        bar.update(max(0, min(done, bar.total) - bar.n))

    def watch() -> None:
        while not stop.wait(every):
            follow()

    if bar.disable:  # no bar shown: nothing to follow
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(target=watch, daemon=True, name="datakit-beam-progress")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        follow()


def _failures(parts: Path, folder: VideoFolder, todo: list[int],
              names: list[str]) -> dict[int, str]:
    """The reason of each ``todo`` video that failed, from the notes its worker left."""
    failed = {}
    for i in todo:
        note = parts / (names[i] + _FAILED)
        if note.exists():
            failed[i] = json.loads(note.read_text())["reason"]
        elif not (parts / names[i]).exists():
            raise DataError(folder.infos[i].path, "the pipeline finished but this video's "
                            f"part {names[i]} is not in {parts}: the workers write to a folder "
                            "this process does not see; put out on storage both share")
    return failed


def _raise_failure(parts: Path, folder: VideoFolder, todo: list[int], names: list[str],
                   error: BaseException) -> None:
    """The first video whose worker wrote down a failure, raised as its DataError."""
    for i in todo:
        note = parts / (names[i] + _FAILED)
        if note.exists():
            reason = json.loads(note.read_text())["reason"]
            raise DataError(folder.infos[i].path, reason) from error


def _check_call(workers: int, pipeline_args: Sequence[str] | Any) -> None:
    check_count("workers", workers, fix="pass an int >= 1 (threads of the DirectRunner)")
    if pipeline_args is None or (isinstance(pipeline_args, (list, tuple))
                                 and all(isinstance(a, str) for a in pipeline_args)):
        return
    from apache_beam.options.pipeline_options import PipelineOptions

    if not isinstance(pipeline_args, PipelineOptions):
        raise TypeError("pipeline_args must be a list of Beam flags such as "
                        "['--runner=FlinkRunner', '--flink_master=host:8081'], or a "
                        f"PipelineOptions; got {pipeline_args!r}")


def write_video_shards_beam(directory: str | os.PathLike, out: str | os.PathLike, *,
                            validation_split: float | None = None, seed: int | None = None,
                            class_names: Sequence[str] | None = None, quality: int = 90,
                            num_shards: int = 4, workers: int = 2,
                            pipeline_args: Sequence[str] | Any = None,
                            on_bad_file: str = "raise", follow_links: bool = False,
                            overwrite: bool = False,
                            progress: bool | None = None, options: VideoOptions | None = None,
                            **frame_options: Any) -> dict:
    """Convert ``directory/<class>/<videos>`` into shards in ``out/`` with an Apache Beam pipeline.

    The arguments and the result are
    :func:`~datakit.readers.video.converter.convert.write_video_shards`'s
    (the same set for the same ones), with Beam's in place of ``processes``:

    Args:
        workers: threads of the DirectRunner on this machine (see the module's docstring).
        pipeline_args: Beam's flags (a list of strings, or a ``PipelineOptions``)
            instead: ``["--runner=FlinkRunner", ...]`` runs the same conversion on a
            cluster (see the module's docstring for Dataflow, Flink and Spark).
        progress: a bar over the videos probed, then one over the videos converted,
            which follows the parts the workers write (:mod:`datakit.core.progress`):
            ``None`` (default) shows them in a notebook or a terminal once a step lasts
            a second, ``True`` always, ``False`` never.

    Beam's startup costs seconds (the pipeline's construction and the runner's
    workers), so on one machine the local converter is faster for a small set;
    Beam pays off when the videos need more cores than one machine has.
    """
    opts = video_options(options, frame_options, where="write_video_shards_beam",
                         takes=FRAME_FIELDS)
    _check_call(workers, pipeline_args)
    check_progress(progress)
    check_flags(follow_links=follow_links, overwrite=overwrite)
    args = (direct_runner_args(workers, processes=False) if pipeline_args is None
            else pipeline_args)

    def convert(job: Conversion, sets: ShardSets) -> dict[int, str]:
        return _run(job, sets, args, progress)

    return convert_videos(directory, Path(user_path(out)).absolute(), opts, quality=quality,
                          num_shards=num_shards, seed=seed, validation_split=validation_split,
                          class_names=class_names, on_bad_file=on_bad_file, convert=convert,
                          progress=progress, follow_links=follow_links, overwrite=overwrite)


def _run(job: Conversion, sets: ShardSets, pipeline_args: Sequence[str] | Any,
         progress: bool | None) -> dict[int, str]:
    """The converter core's middle step on Beam: the ``todo`` videos converted by the
    pipeline's workers, then each marked ready or failed in ``sets``."""
    folder, parts, names, todo = job.folder, job.parts, job.names, job.todo
    for note in parts.glob("*" + _FAILED):  # an earlier run's failures: tried again now
        note.unlink()
    items = [(i, folder.infos[i], folder.labels[i], names[i]) for i in todo]
    n = len(folder.infos)
    bar = progress_bar(n, "videos", progress=progress, unit="video", initial=n - len(todo))
    if items:
        try:
            with bar, _following_parts(bar, parts):
                _run_pipeline(_write_job(parts, items), pipeline_args, parts=str(parts),
                              fps=job.options.fps, quality=job.quality,
                              fit=dict(job.options.fit), on_bad_file=job.on_bad_file)
        except Exception as e:  # a video's failure said as its DataError
            if job.on_bad_file == "raise":  # (under "skip" a video's failure never stops it)
                _raise_failure(parts, folder, todo, names, e)
            raise
    bar.close()
    failed = _failures(parts, folder, todo, names)
    for i in todo:
        if i in failed:
            print(f"skipped {folder.infos[i].path}: {failed[i]}")
            sets.failed(i)
        else:
            sets.ready(i)
    return failed
