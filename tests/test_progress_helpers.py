"""Every long helper shows its bar (its name on stderr) with ``progress=True``, nothing with False.

The bar's rule is :mod:`datakit.core.progress` (tested in test_progress.py); here each
helper that can run long is run on tiny data twice: ``progress=True`` prints the bar's
name to stderr, ``progress=False`` prints nothing there. A value that is not a switch is
refused before any work.
"""

from __future__ import annotations

import functools
import re

import pytest
import tensorflow as tf

from datakit.doctor.advice import advise
from datakit.doctor.diagnosis import diagnose
from datakit.doctor.memory_advice import memory_advice
from datakit.doctor.memory_use import memory_report
from datakit.perf.tune import tune
from datakit.readers.csv_files import column_stats, split_into_shards, write_shards
from datakit.readers.parquet_files import parquet
from datakit.readers.records.tfrecord_writer import ShardWriter
from datakit.readers.small_sources.sqlite import write_sqlite
from datakit.readers.video.converter.convert import write_video_shards
from datakit.readers.video.converter.video_records import write_video_records
from datakit.readers.video.index.folders import list_videos
from datakit.readers.video.reading.directory import video_dataset_from_directory
from datakit.readers.video.synthetic.moving_squares import CLASSES, iter_videos

pytestmark = pytest.mark.timeout(120)

TABLE = {"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "city": ["a", "b", "a", "c", "b", "a"]}


def _csv(folder):
    return write_shards(TABLE, folder, num_shards=2, progress=False)


def _records(folder, progress):
    with ShardWriter(folder, num_shards=2, progress=progress) as w:
        for i in range(5):
            w.write(b"record %d" % i)


def _pipeline():
    return tf.data.Dataset.range(64).map(lambda x: x + 1).shuffle(16, seed=1).batch(4)


def _diagnosed(progress):
    return diagnose(_pipeline(), seconds=0.05, repeats=1, advise=False, progress=progress)


@functools.cache
def _reports():
    """The doctor's reports of ``_pipeline()``, made once: each call advises a new copy."""
    return _diagnosed(False), memory_report(_pipeline(), seconds=0.1, progress=False)


HELPERS = {  # name: (run it with progress=..., in tmp_path; the bars' names it shows)
    "column_stats (CSV)": (lambda d, p: column_stats(_csv(d), progress=p),
                           ["column kinds", "column stats"]),
    "write_shards": (lambda d, p: write_shards(TABLE, d, num_shards=2, progress=p),
                     ["csv shards"]),
    "split_into_shards": (lambda d, p: split_into_shards(TABLE, d, num_shards=(1, 1, 1),
                                                         progress=p), ["csv shards"]),
    "write_parquet_shards": (lambda d, p: parquet.write_parquet_shards(
        TABLE, d, num_shards=2, progress=p), ["parquet shards"]),
    "column_stats (Parquet)": (lambda d, p: parquet.column_stats(
        parquet.write_parquet_shards(TABLE, d, num_shards=2, progress=False), progress=p),
        ["column stats"]),
    "ShardWriter": (_records, ["tfrecord shards"]),
    "write_sqlite": (lambda d, p: write_sqlite(d / "t.db", "t", TABLE, progress=p),
                     ["sqlite rows"]),
    "diagnose": (lambda d, p: _diagnosed(p), ["diagnose"]),
    "advise": (lambda d, p: advise(_reports()[0], _pipeline(), seconds=0.05, rounds=1,
                                   progress=p), ["advise"]),
    "memory_report": (lambda d, p: memory_report(_pipeline(), seconds=0.1, progress=p),
                      ["memory_report"]),
    "memory_advice": (lambda d, p: memory_advice(_reports()[1], _pipeline(), seconds=0.1,
                                                 progress=p), ["memory_advice"]),
    "tune": (lambda d, p: tune(lambda batch_size=4: _pipeline().unbatch().batch(batch_size),
                               {"batch_size": [4, 8]}, budget_s=1, seconds=0.05, rounds=1,
                               progress=p), ["tune"]),
}


@pytest.mark.parametrize("name", HELPERS)
def test_a_bar_when_asked_and_silence_when_not(name, tmp_path, capsys):
    run, bars = HELPERS[name]
    (tmp_path / "shown").mkdir()
    (tmp_path / "quiet").mkdir()
    run(tmp_path / "shown", True)
    err = capsys.readouterr().err
    for bar in bars:
        assert f"{bar}:" in err, f"{name}: no {bar!r} bar on stderr: {err!r}"
    run(tmp_path / "quiet", False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", HELPERS)
def test_a_progress_that_is_not_a_switch_is_refused(name, tmp_path):
    run, _ = HELPERS[name]
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        run(tmp_path, "yes")


def test_run_transform_shows_its_phases_when_asked_and_nothing_when_not(tmp_path, capsys):
    pytest.importorskip("tensorflow_transform", reason="needs the transform extra")
    from datakit.readers.tf_transform import transform

    plan = transform.plan_transform(_csv(tmp_path / "csv"), label="x")
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        transform.run_transform(plan, tmp_path / "refused", progress=1)
    capsys.readouterr()
    transform.run_transform(plan, tmp_path / "shown", progress=True)
    err = capsys.readouterr().err
    assert "tf.Transform:" in err and "4/4" in err, err
    transform.run_transform(plan, tmp_path / "quiet", progress=False)
    assert capsys.readouterr().err == ""


def _beam(videos, out, progress):
    pytest.importorskip("apache_beam", reason="needs the transform extra (Apache Beam)")
    from datakit.readers.video.converter.convert_beam import write_video_shards_beam

    return write_video_shards_beam(videos, out, workers=1, frame_size=(16, 16), progress=progress)


VIDEO_HELPERS = {  # name: (run it on the tiny MP4 folder, into out; the bars it shows)
    "list_videos": (lambda d, out, p: list_videos(d, progress=p), ["probing videos"]),
    "video_dataset_from_directory": (lambda d, out, p: video_dataset_from_directory(
        d, clip_len=4, verbose=False, progress=p), ["probing videos"]),
    "write_video_shards": (lambda d, out, p: write_video_shards(
        d, out, frame_size=(16, 16), processes=1, progress=p), ["probing videos", "videos"]),
    "write_video_shards_beam": (_beam, ["probing videos", "videos"]),
    "write_video_records": (lambda d, out, p: write_video_records(
        iter_videos(3, size=16, min_frames=12, max_frames=16), out, class_names=CLASSES,
        progress=p), ["video records"]),
}


@pytest.mark.parametrize("name", VIDEO_HELPERS)
def test_the_video_helpers_show_a_bar_when_asked_and_nothing_when_not(name, mp4_dir, tmp_path,
                                                                       capsys):
    run, bars = VIDEO_HELPERS[name]
    capsys.readouterr()
    run(mp4_dir, tmp_path / "shown", True)
    err = capsys.readouterr().err
    for bar in bars:  # a bar's line starts with its name ("videos" is not "probing videos")
        assert re.search(rf"(^|[\r\n]){bar}: ", err), f"{name}: no {bar!r} bar: {err!r}"
    if "videos" in bars:  # the converted videos counted to the end, here 12 of 12
        assert re.search(r"(^|[\r\n])videos: 100%.*12/12", err), err
    run(mp4_dir, tmp_path / "quiet", False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", VIDEO_HELPERS)
def test_a_video_helper_refuses_a_progress_that_is_not_a_switch(name, mp4_dir, tmp_path):
    run, _ = VIDEO_HELPERS[name]
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        run(mp4_dir, tmp_path / "out", "yes")
    assert not (tmp_path / "out").exists()  # refused before anything is written
