"""The video core: one index, one clip tail, one converter core, options passed once.

The direct reader and ``clip_dataset`` read the same tiny class folder (2
classes, 3 plain H.264 videos each, written once per module) and must end the
same way; the converters and the readers stand on the core, never the other way.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from datakit.core.errors import DataError
from datakit.perf.chain import chain_of, kind_of
from datakit.readers import video
from datakit.readers.video.options.clip_options import VideoOptions

VIDEO = Path(video.__file__).parent
#: Each module of the wing by its short name (the wing's rooms hold one module a name).
FILES = {p.stem: p for p in VIDEO.glob("*/*.py") if p.stem != "__init__"}
#: The core, bottom first, and the entry points a user calls, which stand on it.
CORE = ["clip_options", "clip_sampling", "video_index", "clip_tail", "clip_shards",
        "conversion"]
ENTRY_POINTS = ["directory", "clips", "convert", "convert_beam", "predict_clips",
                "mp4_clips", "video_records"]


def _write(path, n, value=0):
    frames = np.full((n, 16, 16, 3), value, np.uint8)
    frames[:, :, :8] = 200
    return video.write_video(frames, path)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("core")
    for c, name in enumerate(["left", "right"]):
        for k, n in enumerate((10, 12, 14)):
            _write(d / name / f"{k}.mp4", n, value=40 * c)
    return d


@pytest.fixture(scope="module")
def shards(folder, tmp_path_factory):
    return video.write_video_shards(folder, tmp_path_factory.mktemp("shards"), processes=1,
                                    progress=False)["train"]


def _kit_imports(module: str) -> set[str]:
    """The modules of ``datakit.readers.video`` that ``module`` imports (by short name)."""
    tree = ast.parse(FILES[module].read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[:3] == ["datakit", "readers", "video"] and len(parts) == 4:  # a room
                found |= {a.name for a in node.names}
            elif parts[:3] == ["datakit", "readers", "video"] and len(parts) == 5:
                found.add(parts[4])
    return found


@pytest.mark.parametrize("module", CORE)
def test_the_core_imports_no_entry_point_above_it(module):
    above = _kit_imports(module) & set(ENTRY_POINTS)
    assert not above, f"{module} (the video core) imports {sorted(above)}, which stand on it"


def test_both_converters_call_the_one_convert_step_and_both_readers_the_one_tail():
    for converter in ("convert", "convert_beam"):
        assert "conversion" in _kit_imports(converter)
        assert "convert_videos(" in FILES[converter].read_text()
    for reader in ("directory", "clips"):
        assert {"clip_tail", "video_index"} <= _kit_imports(reader)


@pytest.mark.parametrize("module", ["convert_beam", *ENTRY_POINTS])
def test_no_private_name_of_another_module_is_used(module):
    """``from m import _x``, or ``m._x`` where ``m`` is a kit module imported by name."""
    tree = ast.parse(FILES[module].read_text())
    modules, used = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("datakit"):
            used += [a.name for a in node.names if a.name.startswith("_")]
            modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
    used += [f"{n.value.id}.{n.attr}" for n in ast.walk(tree)
             if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
             and n.value.id in modules and n.attr.startswith("_")
             and not n.attr.startswith("__")]
    assert not used, f"{module} uses private names of other modules: {used}"


@pytest.mark.timeout(180)
def test_direct_reader_and_clip_dataset_end_with_the_same_tail(folder, shards):
    direct = video.video_dataset_from_directory(folder, clip_len=4, batch_size=4, seed=1,
                                                shuffle=False, verbose=False)
    converted = video.clip_dataset(shards, clip_len=4, batch_size=4, seed=1, training=False,
                                   sampler="random")
    assert direct.element_spec == converted.element_spec
    assert len(direct) == len(converted) == 2  # 6 clips in batches of 4
    tails = [[kind_of(d) for d in chain_of(ds)][-4:] for ds in (direct, converted)]
    assert tails[0] == tails[1] == ["assert_cardinality", "map", "batch", "prefetch"]
    clips, labels = next(iter(converted))
    assert clips.shape == (4, 4, 16, 16, 3) and labels.dtype.name == "int64"


@pytest.mark.timeout(180)
def test_prefetch_comes_from_the_options(folder, shards):
    for ds in (video.video_dataset_from_directory(folder, clip_len=4, prefetch=0,
                                                  verbose=False),
               video.clip_dataset(shards, options=VideoOptions(clip_len=4, prefetch=0))):
        assert kind_of(chain_of(ds)[-1]) == "batch"


@pytest.mark.timeout(180)
def test_a_short_video_gets_one_message_from_both_readers(folder, shards):
    errors = []
    for read in (lambda: video.video_dataset_from_directory(folder, clip_len=11,
                                                            verbose=False),
                 lambda: video.clip_dataset(shards, clip_len=11)):
        with pytest.raises(DataError) as e:
            read()
        errors.append(str(e.value))
    assert errors[0] == errors[1], errors
    assert "10 frames, fewer than the 11 one clip spans (and 1 more)" in errors[0]
    skipped = [video.video_dataset_from_directory(folder, clip_len=11, on_bad_file="skip",
                                                  verbose=False).skipped,
               video.clip_dataset(shards, clip_len=11, on_bad_file="skip").skipped]
    assert skipped[0] == skipped[1] and len(skipped[0]) == 2


@pytest.mark.timeout(240)
def test_readme_fit_runs_under_skip_with_a_corrupt_file(folder, tmp_path):
    import shutil

    d = tmp_path / "videos"
    shutil.copytree(folder, d)
    (d / "left" / "broken.mp4").write_bytes(b"not a video at all")
    train = video.video_dataset_from_directory(d, clip_len=4, batch_size=2, seed=0,
                                               on_bad_file="skip", verbose=False)
    assert [Path(p).name for p, _ in train.skipped] == ["broken.mp4"]
    assert len(train) == 3  # 6 good videos, known when the folder was listed
    model = video.small_video_model(4, 16, num_classes=2)
    model.compile("adam", "sparse_categorical_crossentropy")
    history = model.fit(train.repeat(), steps_per_epoch=len(train), epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    out = video.write_video_shards(d, tmp_path / "shards", processes=1, progress=False,
                                   on_bad_file="skip")
    shards = video.clip_dataset(out["train"], clip_len=12, batch_size=2, on_bad_file="skip")
    assert len(shards) == 2 and len(shards.skipped) == 2  # the 10-frame ones left out
    assert len(list(shards.repeat().take(2 * len(shards)))) == 4


@pytest.mark.timeout(120)
def test_a_keyword_given_twice_is_refused_naming_both(folder, shards, tmp_path):
    calls = {"video_dataset_from_directory": lambda **kw: video.video_dataset_from_directory(
                 folder, verbose=False, **kw),
             "clip_dataset": lambda **kw: video.clip_dataset(shards, **kw),
             "write_video_shards": lambda **kw: video.write_video_shards(
                 folder, tmp_path / "w", processes=1, progress=False, **kw),
             "write_video_shards_beam": lambda **kw: video.write_video_shards_beam(
                 folder, tmp_path / "b", **kw)}
    for name, call in calls.items():
        with pytest.raises(TypeError, match=rf"{name}\(\) got fps twice: fps=12 beside "
                                            r"options=VideoOptions\(fps=10\)"):
            call(options=VideoOptions(fps=10), fps=12)  # a field the options set, and a keyword
    with pytest.raises(TypeError, match="got crop_to_aspect_ratio twice"):  # a Keras name too
        video.video_dataset_from_directory(folder, crop_to_aspect_ratio=True, options=VideoOptions(
            frame_size=(8, 8), crop_to_aspect_ratio=True))
    ds = video.video_dataset_from_directory(folder, clip_len=4, verbose=False)
    for kw in ({"clip_len": 4}, {"frame_size": (8, 8)}, {"options": VideoOptions()},
               {"dtype": "float32"}):
        with pytest.raises(TypeError, match=f"got {next(iter(kw))} beside like="):
            video.clips_to_predict(ds.file_paths[0], like=ds, **kw)


def test_keras_positional_order_is_kept_for_the_shared_arguments():
    keras = pytest.importorskip("keras")
    theirs = [p for p in inspect.signature(keras.utils.image_dataset_from_directory)
              .parameters]
    ours = [p.name for p in inspect.signature(video.video_dataset_from_directory)
            .parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert ours == theirs[:len(ours)], (ours, theirs)
    assert ours[:6] == ["directory", "labels", "label_mode", "class_names", "color_mode",
                        "batch_size"]
    shared = set(theirs) & set(inspect.signature(video.video_dataset_from_directory).parameters)
    assert {"crop_to_aspect_ratio", "pad_to_aspect_ratio", "follow_links", "verbose"} <= shared


@pytest.mark.timeout(120)
def test_a_positional_keras_style_call_binds_as_keras_does(folder):
    ds = video.video_dataset_from_directory(folder, "inferred", "categorical", None,
                                            "grayscale", 3, clip_len=4, verbose=False)
    clips, labels = next(iter(ds))
    assert clips.shape == (3, 4, 16, 16, 1) and labels.shape == (3, 2)  # one-hot, batch 3
    assert ds.class_names == ["left", "right"]
