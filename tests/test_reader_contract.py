"""The contract at every reader's door, held by every public reader of the kit.

Each public reader joins :data:`READERS` (a :class:`Door`: how to call it on tiny
files, its knobs under the kit's and tf.data's names, its options object); a name
the package faces export (or a ``datakit.readers`` module's ``__all__``) that is in
neither :data:`READERS` nor :data:`NOT_READERS` fails
:func:`test_every_public_reader_joins_the_contract`, so a new reader cannot skip
it. Then every case runs on every reader, as tf.data's kernel tests give each
reader its checkpoint test by inheritance:

- ``len(ds)`` is known, or unknown as its docstring says;
- resumed mid-epoch in a fresh process, it gives exactly the rest;
- a file replaced after the build (other bytes: another size, or the same size and
  modification time, as ``cp -p`` leaves it) is named;
- a bad argument is refused before any file is opened;
- tf.data's names for its knobs give the same elements, with no warning;
- ``options=`` and the same fields as keywords give the same elements;
- the same fault, the same error class (a missing file: ``FileNotFoundError``;
  a count of the wrong type: ``TypeError``; out of range: ``ValueError``).

A case that cannot apply to a reader says why (``Door.exempt``); a case a reader
fails today is a known gap (``Door.gaps``), an ``xfail(strict=True)`` that fails
once the reader holds it, so the list stays true. The files are tiny, made once
per module and per reader, on first use; the readers resume one after another in one
fresh process of the module (``ResumingProcess``: it saved none of the checkpoints), so
TensorFlow is imported there once; a resume that fails ends it, the next starts another.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from pipelines import assert_same_elements

import datakit
import datakit.readers
from datakit import TableOptions, VideoOptions
from datakit.readers.checkpoints import checkpoint as ck

pytestmark = pytest.mark.timeout(600)

HERE = "test_reader_contract"
CASES = ("length", "resume", "replaced", "refused_first", "tf_names", "options", "errors")


@dataclass(frozen=True)
class Door:
    """How the contract calls one reader.

    ``make(folder)`` writes its tiny files and returns the call's keywords (the
    files under ``source``); ``fields`` are the option fields of that call, passed
    as keywords or, for the options case, as ``options=options_class(**fields)``;
    ``kit`` and ``tf_names`` are the same knobs under the kit's and tf.data's
    names; ``bad_value``/``bad_type`` break one count; ``replace(call)`` gives
    the file the replaced-file case rewrites.
    """

    name: str
    recipe: str  # "module:function" building the dataset from the call's keywords
    make: Callable[[Path], dict]
    source: str
    fields: dict = field(default_factory=dict)
    options_class: type | None = None
    kit: dict = field(default_factory=dict)
    tf_names: dict = field(default_factory=dict)
    bad_value: dict = field(default_factory=lambda: {"batch_size": 0})
    bad_type: dict = field(default_factory=lambda: {"batch_size": "4"})
    replace: Callable[[dict], str] | None = None
    resume_after: int = 1
    exempt: dict[str, str] = field(default_factory=dict)
    gaps: dict[str, str] = field(default_factory=dict)

    def build(self, call: dict, **more):
        return ck.dataset_from_recipe(self.recipe, {**call, **more})


# -- the readers' tiny files ------------------------------------------------------------


def _table(n: int = 20) -> dict:
    return {"x": np.arange(n, dtype=np.float64), "y": np.arange(n, dtype=np.float64) * 2}


def _csv(folder: Path) -> dict:
    from datakit.readers.csv_files import column_stats, write_shards
    files = write_shards(_table(), folder, num_shards=2)
    return {"filepaths": [str(f) for f in files], "stats": column_stats(files), "label": "y",
            "seed": 1}


def _parquet(folder: Path) -> dict:
    from datakit.readers.parquet_files.parquet import write_parquet_shards
    files = write_parquet_shards(_table(), folder, num_shards=2, row_group_rows=3)
    return {"filepaths": [str(f) for f in files], "label": "y", "seed": 1}


def _records(folder: Path) -> dict:
    from datakit.readers.records.tfrecord_writer import ShardWriter
    with ShardWriter(folder, num_shards=3) as w:
        for i in range(9):
            w.write(f"record {i}".encode())
    return {"source": str(folder), "shuffle_files": True, "seed": 1}


def _transform(folder: Path) -> dict:
    pytest.importorskip("tensorflow_transform", reason="needs the transform extra")
    from datakit.readers.csv_files import write_shards
    from datakit.readers.tf_transform import transform
    files = write_shards(_table(), folder / "csv", num_shards=2)
    plan = transform.plan_transform(files, label="y")
    transform.run_transform(plan, folder / "run", workers=1)
    return {"output_dir": str(folder / "run"), "seed": 1}


def transform_dataset(output_dir: str, **kwargs):
    """A recipe: ``TransformRun(output_dir).dataset(**kwargs)``."""
    from datakit.readers.tf_transform.transform_run import TransformRun
    return TransformRun(output_dir).dataset(**kwargs)


def _shards(folder: Path) -> dict:
    from video_cases import KW

    from datakit.readers import video
    videos = video.make_videos(6, **KW)
    video.write_video_records(videos, folder, class_names=video.CLASSES, num_shards=3)
    return {"directory": str(folder), "seed": 2}


def _mp4(folder: Path) -> dict:
    from video_cases import KW

    from datakit.readers import video
    video.write_mp4_videos(video.make_videos(6, **KW), folder)
    return {"directory": str(folder), "seed": 2}


def _video_folder(folder: Path) -> dict:
    from datakit.readers import video
    video.make_video_folder(folder, per_class=1, min_frames=12, max_frames=12, size=16, seed=0)
    return {"directory": str(folder), "seed": 1, "verbose": False, "progress": False}


def _one_video(folder: Path) -> dict:
    from datakit.readers import video
    frames = video.make_video(0, size=16, min_frames=12, max_frames=12, seed=0).frames
    return {"path": str(video.write_video(frames, folder / "one.mp4"))}


def _fixed(folder: Path) -> dict:
    from datakit.readers.small_sources.fixed_length import write_fixed_length
    path = write_fixed_length(folder / "x.bin", np.arange(12, dtype=np.int16).reshape(6, 2))
    return {"path": str(path), "record_shape": [2], "dtype": "int16"}


def _sqlite(folder: Path) -> dict:
    from datakit.readers.small_sources.sqlite import write_sqlite
    path = write_sqlite(folder / "t.db", "t", {"id": list(range(6)), "x": [0.5] * 6})
    return {"path": str(path), "query": "SELECT id, x FROM t", "output_types": ["int64",
                                                                               "float64"]}


def _lines(folder: Path) -> dict:
    path = folder / "lines.txt"
    path.write_text("header\n" + "".join(f"line {i}\n" for i in range(6)))
    return {"path": str(path)}


def _first_file(key: str) -> Callable[[dict], str]:
    return lambda call: str(call[key][0] if isinstance(call[key], list) else call[key])


def _first_under(key: str, pattern: str) -> Callable[[dict], str]:
    return lambda call: str(sorted(Path(call[key]).glob(pattern))[0])


_TABLE_KIT = {"n_readers": 2, "n_read_threads": 2, "n_parse_threads": 2,
              "shuffle_buffer_size": 8}
_TABLE_TF = {"cycle_length": 2, "num_parallel_reads": 2, "num_parallel_calls": 2,
             "buffer_size": 8}
_NO_KNOBS = "it reads one file in order: no interleave, parallel call or shuffle to name"
_NO_OPTIONS = "no options object: its few arguments say what the file holds"

#: Every public reader, and how the contract calls it.
READERS = [
    Door("csv_reader_dataset", "datakit.readers.csv_files.reader:csv_reader_dataset", _csv,
         "filepaths", fields={"batch_size": 4, "shuffle_buffer_size": 8, "n_readers": 2},
         options_class=TableOptions, kit=_TABLE_KIT, tf_names=_TABLE_TF,
         replace=_first_file("filepaths"), resume_after=2),
    Door("parquet_dataset", "datakit.readers.parquet_files.parquet:parquet_dataset", _parquet,
         "filepaths", fields={"batch_size": 4, "shuffle_buffer_size": 8, "n_readers": 2},
         options_class=TableOptions, kit=_TABLE_KIT, tf_names=_TABLE_TF,
         replace=_first_file("filepaths"), resume_after=2),
    Door("read_records", "datakit.readers.records.tfrecords:read_records", _records, "source",
         kit={"n_readers": 2, "n_read_threads": 2},
         tf_names={"cycle_length": 2, "num_parallel_reads": 2},
         bad_value={"n_readers": 0}, bad_type={"n_readers": "2"},
         replace=_first_under("source", "*.tfrecord*"), resume_after=3,
         exempt={"options": "its elements are serialized records: no batch, shuffle buffer, "
                            "parse or prefetch for an options object to hold"}),
    Door("TransformRun", f"{HERE}:transform_dataset", _transform, "output_dir",
         fields={"batch_size": 4, "shuffle_buffer_size": 8, "n_readers": 2},
         options_class=TableOptions, kit=_TABLE_KIT, tf_names=_TABLE_TF,
         replace=_first_under("output_dir", "**/transformed-*"), resume_after=2,
         exempt={"refused_first": "TransformRun(output_dir) opens the run (its plan file) "
                                  "before .dataset() takes its arguments"}),
    Door("clip_dataset", "datakit.readers.video.reading.clips:clip_dataset", _shards, "directory",
         fields={"clip_len": 4, "batch_size": 2}, options_class=VideoOptions,
         kit={"n_readers": 2, "shuffle_buffer_size": 3},
         tf_names={"cycle_length": 2, "buffer_size": 3},
         replace=_first_under("directory", "**/*.tfrecord*")),
    Door("mp4_clip_dataset", "datakit.readers.video.reading.mp4_clips:mp4_clip_dataset", _mp4,
         "directory", fields={"clip_len": 4, "batch_size": 2}, options_class=VideoOptions,
         kit={"n_readers": 2, "shuffle_buffer_size": 3},
         tf_names={"cycle_length": 2, "buffer_size": 3},
         replace=_first_under("directory", "*/*.mp4")),
    Door("video_dataset_from_directory", "datakit.readers.video.reading.directory:"
         "video_dataset_from_directory", _video_folder, "directory",
         fields={"clip_len": 4, "frame_size": (16, 16), "batch_size": 2},
         options_class=VideoOptions, kit={"n_parse_threads": 2},
         tf_names={"num_parallel_calls": 2}, replace=_first_under("directory", "*/*.*")),
    Door("clips_to_predict", "datakit.readers.video.reading.predict_clips:clips_to_predict",
         _one_video, "path", fields={"clip_len": 4, "frame_size": (16, 16)},
         options_class=VideoOptions, bad_value={"clip_len": 0}, bad_type={"clip_len": "4"},
         exempt={"length": "it returns a NumPy array of the clips, read at the call",
                 "resume": "it returns a NumPy array of the clips, read at the call",
                 "replaced": "it reads the file at the call: nothing is built before",
                 "tf_names": "it decodes one video at the call: no tf.data knob"}),
    Door("fixed_length_dataset", "datakit.readers.small_sources.fixed_length:"
         "fixed_length_dataset", _fixed, "path", bad_value={"header_bytes": -1},
         bad_type={"header_bytes": "0"}, replace=_first_file("path"), resume_after=2,
         exempt={"tf_names": _NO_KNOBS, "options": _NO_OPTIONS}),
    Door("sql_dataset", "datakit.readers.small_sources.sqlite:sql_dataset", _sqlite, "path",
         bad_value={}, bad_type={"output_types": {"int64", "float64"}},
         replace=_first_file("path"), resume_after=2,
         exempt={"tf_names": _NO_KNOBS, "options": _NO_OPTIONS,
                 "refused_first": "its one argument checked before the file opens is a type"}),
    Door("numbered_lines", "datakit.readers.small_sources.text_lines:numbered_lines", _lines,
         "path", bad_value={}, bad_type={"skip_header": "yes"}, replace=_first_file("path"),
         resume_after=2,
         exempt={"tf_names": _NO_KNOBS, "options": _NO_OPTIONS,
                 "refused_first": "its one argument checked before the file opens is a flag"}),
]

#: What the faces and the readers' modules export that is not a reader, by kind.
NOT_READERS = {
    "writes files": {"ShardWriter", "write_shards", "split_into_shards", "write_parquet_shards",
                     "write_video", "write_video_records", "write_video_shards",
                     "write_video_shards_beam", "write_mp4_videos", "write_video_set",
                     "write_sqlite", "make_video_folder", "make_messy_video_folder",
                     "run_transform", "plan_transform", "serialize", "to_example"},
    "checks or describes files": {"check_files", "check_file_set", "check_parquet_files",
                                  "check_shards", "record_offsets", "record_shards",
                                  "find_bad_lines", "describe_bad_line",
                                  "data_lines", "FileSet", "BadLine"},
    "statistics, schema and options": {"column_stats", "infer_kinds", "class_names",
                                       "feature_names", "ColumnStats", "TableStats", "dialect_of",
                                       "TableOptions", "ReadOptions", "VideoOptions", "Dialect",
                                       "DEFAULT_NA_VALUES", "NUMBER", "TEXT", "PARSE_MODES",
                                       "BlockFeatures", "BLOCK_LINES", "SERVICE_HINT",
                                       "VideoInfo", "make_preprocessing_fn", "beam_args"},
    "a stage of a pipeline a reader builds": {"blocks_dataset", "counted", "file_order",
                                              "shuffle_buffer", "shuffle_chunks", "blank",
                                              "unchanged", "parse_example", "clip_frames"},
    "videos and data made in memory": {"CLASSES", "Video", "make_video", "make_videos",
                                       "iter_videos", "passengers", "small_video_model"},
    "checkpoints": {"save_midway", "resume_in_fresh_process",
                    "checkpoint_bytes", "ignore_external_state", "main", "to_numpy",
                    "shuffled_range"},
    "the package itself": {"DATA_DIR", "data_path", "__version__", "DataError", "benchmark",
                           "quiet_tensorflow"},
}


def _public_names() -> set[str]:
    """What the package faces export, and every ``datakit.readers`` module's ``__all__``."""
    names = set(datakit.__all__)
    for info in pkgutil.walk_packages(datakit.readers.__path__, "datakit.readers."):
        names |= set(getattr(importlib.import_module(info.name), "__all__", ()))
    return names


def test_every_public_reader_joins_the_contract():
    listed = [d.name for d in READERS]
    kinds = [n for names in NOT_READERS.values() for n in names]
    public = _public_names()
    assert len(set(listed)) == len(listed) and not set(listed) & set(kinds)
    unlisted = sorted(public - set(listed) - set(kinds))
    assert not unlisted, (f"{unlisted}: a public name is neither a reader in READERS (it then "
                          "joins the contract) nor in NOT_READERS (say what kind it is)")
    assert not set(listed) - public, "READERS names a reader that is not exported any more"
    assert not set(kinds) - public, (f"{sorted(set(kinds) - public)}: NOT_READERS names what "
                                     "is not exported any more: take it out")


# -- the cases --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Each reader's call on its tiny files, made on first use: ``made(door)``, or
    ``made(door, copy=True)`` for the call on a copy of them (a case that spoils a file)."""
    calls: dict[str, tuple[Path, dict]] = {}

    def call_of(door: Door, copy: bool = False) -> dict:
        if door.name not in calls:
            folder = tmp_path_factory.mktemp(door.name)
            calls[door.name] = folder, door.make(folder)
        folder, call = calls[door.name]
        if not copy:
            return dict(call)
        other = tmp_path_factory.mktemp(door.name + "-copy")
        shutil.copytree(folder, other, dirs_exist_ok=True)
        return {k: _moved(v, str(folder), str(other)) for k, v in call.items()}
    return call_of


def _moved(value, old: str, new: str):
    """``value`` (a path, or a list of them) under ``new`` where it was under ``old``."""
    if isinstance(value, list):
        return [_moved(v, old, new) for v in value]
    if isinstance(value, str) and value.startswith(old):
        return new + value[len(old):]
    return value


def _cases(case: str):
    """``READERS`` for ``case``: an exempt reader is left out (its reason is in READERS), a
    known gap is a strict xfail."""
    return [pytest.param(d, id=d.name, marks=[pytest.mark.xfail(strict=True,
                                                                reason=d.gaps[case])]
                         if case in d.gaps else [])
            for d in READERS if case not in d.exempt]


def _elements(ds) -> list:
    return [ck.to_numpy(x) for x in (ds if isinstance(ds, tf.data.Dataset) else [ds])]


def test_every_exemption_and_gap_names_a_case():
    for d in READERS:
        assert set(d.exempt) | set(d.gaps) <= set(CASES), d.name


@pytest.mark.parametrize("door", _cases("length"))
def test_length_is_known_or_documented_unknown(door, made):
    call = made(door)
    ds = door.build(call, **door.fields)
    n = int(tf.data.experimental.cardinality(ds))
    if n == tf.data.experimental.UNKNOWN_CARDINALITY:
        module, _, name = door.recipe.partition(":")
        doc = inspect.getdoc(getattr(importlib.import_module(module), name)) or ""
        assert "len(ds)" in doc and "unknown" in doc, f"{door.name}: say so in its docstring"
    else:
        assert n == len(ds) == len(_elements(ds)), door.name


@pytest.fixture(scope="module")
def child():
    """The module's resuming process (started at its first resume)."""
    with ck.ResumingProcess() as process:
        yield process


@pytest.mark.parametrize("door", _cases("resume"))
def test_resumed_mid_epoch_in_a_fresh_process_gives_exactly_the_rest(door, made, child, tmp_path):
    call = {**made(door), **door.fields}
    whole = _elements(door.build(call))
    first, path = ck.save_midway(door.build(call), door.resume_after, tmp_path)
    rest = child.resume(door.recipe, path, kwargs=call)
    assert len(first) == door.resume_after and len(rest) == len(whole) - door.resume_after
    assert_same_elements(whole, first + rest, context=door.name)


#: How a file is replaced after the build: ``"other content"`` (other bytes, another size),
#: or ``"cp -p"`` (other bytes of the same size, the same modification time, a new inode,
#: as ``rsync -t`` leaves it), which only the kit's one "has this file changed?" rule
#: (:mod:`datakit.core.file_facts`), or a check of the bytes read, tells.
REPLACEMENTS = ["other content", "cp -p"]


@pytest.mark.parametrize("how", REPLACEMENTS)
@pytest.mark.parametrize("door", _cases("replaced"))
def test_a_file_replaced_after_the_build_is_named(door, how, made):
    assert door.replace is not None, f"{door.name}: say which file to replace"
    call = {**made(door, copy=True), **door.fields}
    ds = door.build(call)
    victim = door.replace(call)
    _replace(victim, how)
    with pytest.raises(Exception) as e:  # any class: named is the point (DataError, or TF's)
        _elements(ds)
    assert victim in str(e.value) or getattr(e.value, "path", None) == victim, str(e.value)


def _replace(path: str, how: str) -> None:
    """Replace ``path`` by a new file (a new inode), as :data:`REPLACEMENTS` says."""
    data = Path(path).read_bytes()
    before = os.stat(path)
    new = path + ".new"
    if how == "other content":  # half the bytes, then them backwards: another size
        Path(new).write_bytes(data[: len(data) // 2] + data[: len(data) // 2][::-1] + b"\n")
    elif how == "cp -p":  # every byte inverted: the same size, its times kept
        Path(new).write_bytes(bytes(b ^ 0xFF for b in data))
        os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        raise ValueError(f"how={how!r}: add its replacement here")
    os.replace(new, path)
    after = os.stat(path)
    assert after.st_ino != before.st_ino and (
        (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)) == (
        how == "cp -p")


@pytest.mark.parametrize("door", _cases("refused_first"))
@pytest.mark.parametrize("bad", ["bad_value", "bad_type"])
def test_a_bad_argument_is_refused_before_any_file_opens(door, bad, made, tmp_path):
    call = {**made(door), **door.fields, **getattr(door, bad)}
    call[door.source] = _missing(call[door.source], tmp_path)
    error = ValueError if bad == "bad_value" else TypeError
    with pytest.raises(error):  # not FileNotFoundError: the argument came first
        door.build(call)


def _missing(source, tmp_path: Path):
    """``source`` pointing at files that do not exist (same form: a list stays a list)."""
    gone = str(tmp_path / "no such file")
    return [gone] if isinstance(source, list) else gone


@pytest.mark.parametrize("door", _cases("tf_names"))
def test_tf_datas_names_give_the_same_elements_without_a_warning(door, made):
    call = {k: v for k, v in {**made(door), **door.fields}.items() if k not in door.kit}
    ours = _elements(door.build(call, **door.kit))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", FutureWarning)
        theirs = _elements(door.build(call, **door.tf_names))
    assert_same_elements(ours, theirs, context=door.name)
    one, kit = next(iter(door.tf_names)), next(iter(door.kit))
    with pytest.raises(TypeError, match=f"got {one}= and {kit}=: pass only one"):
        door.build(call, **{one: door.tf_names[one], kit: door.kit[kit]})


@pytest.mark.parametrize("door", _cases("options"))
def test_options_and_the_same_fields_as_keywords_agree(door, made):
    assert door.options_class is not None, f"{door.name}: name its options object"
    call = made(door)
    names = {f.name for f in fields(door.options_class)}
    inside = {k: v for k, v in door.fields.items() if k in names}
    beside = {k: v for k, v in door.fields.items() if k not in names}
    assert inside, f"{door.name}: its fields hold none of {door.options_class.__name__}'s"
    keywords = _elements(door.build(call, **door.fields))
    whole = _elements(door.build(call, **beside, options=door.options_class(**inside)))
    assert_same_elements(keywords, whole, context=door.name)
    name, value = next(iter(inside.items()))
    with pytest.raises(TypeError, match=f"got {name} twice"):
        door.build(call, **beside, options=door.options_class(**inside), **{name: value})


@pytest.mark.parametrize("door", _cases("errors"))
def test_the_same_fault_raises_the_same_error_class(door, made, tmp_path):
    call = {**made(door), **door.fields}
    with pytest.raises(FileNotFoundError):
        door.build({**call, door.source: _missing(call[door.source], tmp_path)})
    with pytest.raises(TypeError):
        door.build(call, **door.bad_type)
    if door.bad_value:
        with pytest.raises(ValueError):
            door.build(call, **door.bad_value)


def _check_recipe_names() -> None:
    for d in READERS:
        module, _, name = d.recipe.partition(":")
        assert module == HERE or name == d.name, d.name


def test_each_recipe_is_the_reader_itself():
    _check_recipe_names()
