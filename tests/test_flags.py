"""Every yes/no argument of the kit's public faces goes through the one rule, ``check_flag``.

A string such as ``"no"`` is truthy: taken as ``True`` it would switch the option on
(``ShardWriter(overwrite="no")`` replaced the set). Each case calls its entry point with
``"no"`` for one yes/no argument and a path that does not exist: the ``TypeError``
naming the argument must come first, before any file is opened. ``progress`` is
three-way (``None``: automatic), checked by its own rule, and held here too.
The last test holds that the list covers every ``bool`` parameter of the public faces.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import datakit


def _stats(tmp: Path) -> Any:
    from datakit.readers.csv_files.stats import column_stats

    p = tmp / "t.csv"
    p.write_text("x,y\n1.5,0\n2.5,1\n")
    return column_stats(str(p))


def _ds() -> Any:
    import tensorflow as tf

    return tf.data.Dataset.range(3)


def _call(module: str, name: str, *args: Any, **kw: Any) -> Callable[[Path, str, Any], Any]:
    """``module.name(*args, **kw, <flag>=value)``; a ``str`` arg starting "MISSING" is a
    path under ``tmp`` that does not exist, a callable arg is called with ``tmp``."""
    def call(tmp: Path, flag: str, value: Any) -> Any:
        f = getattr(importlib.import_module(module), name)
        got = [tmp / "missing" / a[len("MISSING"):] if isinstance(a, str) and
               a.startswith("MISSING") else a(tmp) if callable(a) else a for a in args]
        named = {k: v(tmp) if callable(v) else v for k, v in kw.items()}
        return f(*got, **named, **{flag: value})
    return call


V = "datakit.readers.video"
CASES: dict[str, tuple[Callable[[Path, str, Any], Any], tuple[str, ...]]] = {
    # readers
    "video_dataset_from_directory": (
        _call(f"{V}.reading.directory", "video_dataset_from_directory", "MISSING", clip_len=4),
        ("shuffle", "follow_links", "crop_to_aspect_ratio", "pad_to_aspect_ratio", "seek",
         "verify_frames", "with_ids", "verbose", "progress")),
    "clip_dataset": (_call(f"{V}.reading.clips", "clip_dataset", "MISSING", clip_len=4),
                     ("drop_remainder", "with_ids", "trace", "training")),
    "mp4_clip_dataset": (_call(f"{V}.reading.mp4_clips", "mp4_clip_dataset", "MISSING",
                               clip_len=4), ("drop_remainder",)),
    "VideoOptions": (_call(f"{V}.options.clip_options", "VideoOptions"),
                     ("crop_to_aspect_ratio", "pad_to_aspect_ratio")),
    "read_records": (_call("datakit.readers.records.tfrecords", "read_records", "MISSING"),
                     ("check_manifest", "verify", "shuffle_files")),
    "check_shards": (_call("datakit.readers.records.tfrecords", "check_shards", "MISSING"),
                     ("check_manifest", "verify")),
    "csv_reader_dataset": (_call("datakit.readers.csv_files.reader", "csv_reader_dataset",
                                 "MISSING.csv", stats=_stats, label="y"), ("trace",)),
    "ReadOptions": (_call("datakit.readers.csv_files.options", "ReadOptions", _stats, "y"),
                    ("trace",)),
    "numbered_lines": (_call("datakit.readers.small_sources.text_lines", "numbered_lines",
                             "MISSING.txt"), ("skip_header",)),
    "csv column_stats": (_call("datakit.readers.csv_files.stats", "column_stats",
                               "MISSING.csv"), ("progress",)),
    "parquet column_stats": (_call("datakit.readers.parquet_files.parquet", "column_stats",
                                   "MISSING.parquet"), ("progress",)),
    # writers and converters
    "ShardWriter": (_call("datakit.readers.records.tfrecord_writer", "ShardWriter", "MISSING"),
                    ("overwrite", "progress")),
    "write_video_shards": (_call(f"{V}.converter.convert", "write_video_shards", "MISSING",
                                 "MISSINGout"), ("follow_links", "overwrite", "progress")),
    "write_video_shards_beam": (_call(f"{V}.converter.convert_beam", "write_video_shards_beam",
                                      "MISSING", "MISSINGout"),
                                ("follow_links", "overwrite", "progress")),
    "write_video_records": (_call(f"{V}.converter.video_records", "write_video_records", [],
                                  "MISSING", class_names=["a"]), ("overwrite", "progress")),
    "write_video": (_call(f"{V}.synthetic.encoded", "write_video",
                          np.zeros((2, 8, 8, 3), np.uint8), "MISSINGv.mp4"),
                    ("audio", "faststart")),
    "write_shards": (_call("datakit.readers.csv_files.shards", "write_shards", "MISSING.csv",
                           "MISSINGout", num_shards=2), ("progress",)),
    "split_into_shards": (_call("datakit.readers.csv_files.shards", "split_into_shards",
                                "MISSING.csv", "MISSINGout"), ("progress",)),
    "write_parquet_shards": (_call("datakit.readers.parquet_files.parquet",
                                   "write_parquet_shards", "MISSING.csv", "MISSINGout",
                                   num_shards=2), ("progress",)),
    "write_sqlite": (_call("datakit.readers.small_sources.sqlite", "write_sqlite",
                           "MISSING.db", "t", {"x": [1]}), ("progress",)),
    "run_transform": (_call("datakit.readers.tf_transform.transform", "run_transform", None,
                            "MISSINGout"), ("progress",)),
    # the doctor, the bench, the rest of the faces
    "diagnose": (_call("datakit.doctor.diagnosis", "diagnose", lambda _: _ds()),
                 ("advise", "memory", "progress")),
    "memory_report": (_call("datakit.doctor.memory_use", "memory_report", lambda _: _ds()),
                      ("as_built", "progress")),
    "advise": (_call("datakit.doctor.advice", "advise", None, lambda _: _ds()), ("progress",)),
    "memory_advice": (_call("datakit.doctor.memory_advice", "memory_advice", None,
                            lambda _: _ds()), ("progress",)),
    "benchmark": (_call("datakit.perf.bench", "benchmark", [1, 2]), ("progress",)),
    "data_path": (_call("datakit", "data_path", "housing"), ("relative",)),
    "quiet_tensorflow": (_call("datakit.tensorflow_logs", "quiet_tensorflow"), ("onednn",)),
    "glassbox_shuffle": (_call("datakit.glassbox.dataset", "glassbox_shuffle",
                               lambda _: importlib.import_module(
                                   "datakit.glassbox.dataset").Dataset.range(3), 2),
                         ("reshuffle_each_iteration",)),
    "LocalCluster": (_call("datakit.cluster.local", "LocalCluster"),
                     ("static_sharding", "fault_tolerant", "restart_workers")),
}

#: bool parameters of a public module's names that are no user's switch: records the kit
#: builds, and plumbing the kit calls with its own bools.
NOT_SWITCHES = {"VideoInfo.reordered", "VideoInfo.verified", "file_order.repeat",
                "check_file_set.sort"}


@pytest.mark.parametrize("case, flag", [(c, f) for c, (_, flags) in CASES.items()
                                        for f in flags])
def test_a_string_for_a_yes_no_argument_is_a_type_error_naming_it(case, flag, tmp_path):
    call, _ = CASES[case]
    with pytest.raises(TypeError, match=rf"\b{flag}\b"):
        call(tmp_path, flag, "no")


def test_a_numpy_bool_is_a_bool():
    from datakit.readers.video.options.clip_options import VideoOptions

    opts = VideoOptions(frame_size=(8, 8), crop_to_aspect_ratio=np.True_)
    assert opts.crop_to_aspect_ratio is True  # stored as bool: the manifest is JSON


def test_overwrite_no_keeps_the_set(tmp_path):
    """The sweep's ``writer_overwrite_str``: ``"no"`` replaced the set before."""
    from datakit.readers.records.tfrecord_writer import ShardWriter

    with ShardWriter(tmp_path, num_shards=1) as w:
        w.write(b"x")
    before = sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir() if p.is_file())
    with pytest.raises(TypeError, match="overwrite must be True or False, got 'no'"):
        ShardWriter(tmp_path, num_shards=1, overwrite="no")
    assert sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir()
                  if p.is_file()) == before


def _public() -> dict[str, Any]:
    """``{name: object}`` of every package face of the kit, and of each module under
    ``datakit.readers`` (several reader wings export from their modules)."""
    names: dict[str, Any] = {}
    for m in [pkgutil.ModuleInfo(None, "datakit", True),  # type: ignore[arg-type]
              *pkgutil.walk_packages(datakit.__path__, "datakit.")]:
        if not (m.ispkg or m.name.startswith("datakit.readers.")):
            continue
        module = importlib.import_module(m.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if callable(obj):
                names.setdefault(name if name not in names or names[name] is obj
                                 else f"{m.name.rsplit('.', 1)[-1]} {name}", obj)
    return names


def test_the_cases_cover_every_bool_parameter_of_the_public_faces():
    covered = {f"{c.split()[-1]}.{f}" for c, (_, flags) in CASES.items() for f in flags}
    missing = set()
    for name, obj in _public().items():
        try:
            params = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in params:
            if re.search(r"\bbool\b", str(p.annotation)):
                key = f"{name.split()[-1]}.{p.name}"
                if key not in covered | NOT_SWITCHES:
                    missing.add(key)
    assert not missing, f"yes/no arguments with no case here: {sorted(missing)}"
