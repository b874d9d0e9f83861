"""Sweep cases (see sweep_bad_inputs.py): video, the direct reader, the converter and its
clips, ``clips_to_predict`` and ``VideoOptions``."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

from benchmarks.sweep_bad_inputs import case, resolve

V = dict(size=16, min_frames=12, max_frames=20, seed=3)  # 6 tiny videos, 3 classes


def _master(kind: str) -> Path:
    """A master copy, made once per sweep (fixed seed): ``vids`` (MP4 folders by class) or
    ``shards`` (them converted)."""
    base = Path(os.environ.get("DATAKIT_SWEEP_BASE", "/tmp")) / "master"
    vids, shards = base / "vids", base / "shards"
    if not vids.exists():
        video = resolve("video", "write_mp4_videos")
        tmp = base / "vids.part"
        shutil.rmtree(tmp, ignore_errors=True)
        video(resolve("video", "make_videos")(6, **V), tmp)
        tmp.rename(vids)
    if kind == "shards" and not shards.exists():
        tmp = base / "shards.part"
        shutil.rmtree(tmp, ignore_errors=True)
        resolve("video", "write_video_shards")(vids, tmp, num_shards=2, processes=1,
                                               progress=False)
        tmp.rename(shards)
    return vids if kind == "vids" else shards


def vids(d: Path) -> Path:
    shutil.copytree(_master("vids"), d / "v")
    return d / "v"


def shards(d: Path) -> Path:
    shutil.copytree(_master("shards"), d / "s")
    return d / "s"


def first_mp4(folder: Path) -> Path:
    return sorted(folder.rglob("*.mp4"))[0]


def direct(folder, **kw):
    """Every clip and label of one pass of the direct reader: (number of clips, labels)."""
    kw = {"clip_len": 4, "batch_size": 2, "verbose": False, **kw}
    ds = resolve("video", "video_dataset_from_directory")(folder, **kw)
    n, labels = 0, []
    for el in ds:
        x = el[0] if isinstance(el, tuple) else el
        n += int(x.shape[0])
        if isinstance(el, tuple) and len(el) > 1:
            labels += el[1].numpy().ravel().tolist()
    return n, sorted(labels)


def clips(folder, **kw):
    kw = {"clip_len": 4, "batch_size": 2, **kw}
    ds = resolve("video", "clip_dataset")(folder, **kw)
    return sum(int((el[0] if isinstance(el, tuple) else el).shape[0]) for el in ds)


def convert(src, out, **kw):
    kw = {"num_shards": 2, "processes": 1, "progress": False, **kw}
    return resolve("video", "write_video_shards")(src, out, **kw)


# ------------------------------------------------------------------ direct reader
def _direct_arg(name, kwargs, desc, names=None):
    def fn(d):
        return direct(vids(d), **kwargs)
    fn.__name__ = name
    case("video", f"video_dataset_from_directory({desc})", names or tuple(kwargs))(fn)


for _name, _kw, _desc in [
    ("dir_clip_len_negative", {"clip_len": -4}, "clip_len=-4"),
    ("dir_clip_len_huge", {"clip_len": 10**9}, "clip_len=10**9"),
    ("dir_batch_zero", {"batch_size": 0}, "batch_size=0"),
    ("dir_batch_float", {"batch_size": 2.0}, "batch_size=2.0"),
    ("dir_frame_size_str", {"frame_size": "16x16"}, "frame_size='16x16'"),
    ("dir_frame_size_huge", {"frame_size": (10**6, 10**6)}, "frame_size=(10**6, 10**6)"),
    ("dir_fps_inf", {"fps": math.inf}, "fps=inf"),
    ("dir_split_big", {"validation_split": 1.5, "subset": "training"}, "validation_split=1.5"),
    ("dir_split_nan", {"validation_split": math.nan, "subset": "training"},
     "validation_split=nan"),
    ("dir_subset_bad", {"validation_split": 0.5, "subset": "test"}, "subset='test'"),
    ("dir_subset_without_split", {"subset": "training"}, "subset without validation_split"),
    ("dir_dtype", {"dtype": "int8"}, "dtype='int8'"),
    ("dir_on_bad_file", {"on_bad_file": "ignore"}, "on_bad_file='ignore'"),
    ("dir_seed_big", {"seed": 2**64}, "seed=2**64"),
    ("dir_seed_str", {"seed": "0"}, "seed='0'"),
    ("dir_npc_zero", {"num_parallel_calls": 0}, "num_parallel_calls=0"),
    ("dir_threads_zero", {"decoder_threads": 0}, "decoder_threads=0"),
    ("dir_class_names_set", {"class_names": {"left", "right", "up"}},
     "class_names= a set"),
    ("dir_class_names_dup", {"class_names": ["left", "left", "up"]},
     "class_names with a name twice"),
    ("dir_class_names_unknown", {"class_names": ["left", "nope"]},
     "class_names naming a missing folder"),
    ("dir_labels_negative", {"labels": [0, 1, -1, 0, 1, 0]}, "labels with a -1"),
    ("dir_labels_nan", {"labels": [0, 1, math.nan, 0, 1, 0]}, "labels with a nan"),
    ("dir_labels_gen", {"labels": (i % 2 for i in range(6))}, "labels= a generator"),
    ("dir_unknown_kw", {"clip_length": 4}, "clip_length=4 (misspelt)"),
]:
    _names = {"dir_subset_without_split": ("subset", "validation_split"),
              "dir_subset_bad": ("subset",), "dir_split_big": ("validation_split",),
              "dir_split_nan": ("validation_split",)}.get(_name, tuple(_kw))
    _direct_arg(_name, _kw, _desc, _names)


@case("video", "direct reader on a folder that does not exist", ("gone",))
def dir_missing(d):
    return direct(d / "gone")


@case("video", "direct reader on an empty folder", ("empty",))
def dir_empty(d):
    (d / "empty").mkdir()
    return direct(d / "empty")


@case("video", "direct reader given one mp4 file, not a folder", (".mp4",))
def dir_given_file(d):
    return direct(first_mp4(vids(d)))


@case("video", "a 0-byte .mp4 in a class folder", ("zero.mp4",))
def dir_zero_byte(d):
    v = vids(d)
    (v / "up" / "zero.mp4").write_bytes(b"")
    return direct(v)


@case("video", "a text file named .mp4 in a class folder", ("notes.mp4",))
def dir_text_as_mp4(d):
    v = vids(d)
    (v / "up" / "notes.mp4").write_text("not a video\n" * 100)
    return direct(v)


@case("video", "an mp4 cut to its first 600 bytes", ("cut",))
def dir_truncated_head(d):
    v = vids(d)
    f = first_mp4(v)
    (f.parent / "cut.mp4").write_bytes(f.read_bytes()[:600])
    return direct(v)


@case("video", "an mp4 with its middle third zeroed", ("zeroed",))
def dir_zeroed_middle(d):
    v = vids(d)
    f = first_mp4(v)
    b = bytearray(f.read_bytes())
    n = len(b)
    b[n // 3: 2 * n // 3] = bytes(2 * n // 3 - n // 3)
    (f.parent / "zeroed.mp4").write_bytes(bytes(b))
    return direct(v)


@case("video", "a folder named x.mp4 inside a class folder", ("x.mp4",),
      either=True, ok=lambda got: got[0] == 6)
def dir_folder_named_mp4(d):
    v = vids(d)
    (v / "up" / "x.mp4").mkdir()
    return direct(v)


@case("video", "class folders with unicode and spaces in their names",
      ok=lambda got: got[0] == 6)
def dir_unicode(d):
    v = vids(d)
    (v / "up").rename(v / "hoch oben ñ")
    return direct(v)


@case("video", "a class folder with no videos", ("empty",),
      either=True, ok=lambda got: got[0] == 6)
def dir_empty_class(d):
    v = vids(d)
    (v / "empty").mkdir()
    return direct(v)


@case("video", "a symlink loop inside a class folder, follow_links=True",
      ok=lambda got: got[0] == 6)
def dir_link_loop(d):
    v = vids(d)
    os.symlink("..", v / "up" / "loop")
    return direct(v, follow_links=True)


@case("video", "a dangling symlink .mp4 in a class folder", ("dangling.mp4",))
def dir_dangling_link(d):
    v = vids(d)
    os.symlink(d / "nowhere.mp4", v / "up" / "dangling.mp4")
    return direct(v, follow_links=True)


@case("video", "video_dataset_from_directory with a positional keyword twice",
      ("labels",))
def dir_kw_twice(d):
    f = resolve("video", "video_dataset_from_directory")
    return f(vids(d), "inferred", labels="inferred")


# ------------------------------------------------------------------ converter
@case("video", "write_video_shards(num_shards=0)", ("num_shards",))
def conv_shards_zero(d):
    return convert(vids(d), d / "out", num_shards=0)


@case("video", "write_video_shards(quality=0)", ("quality",))
def conv_quality_zero(d):
    return convert(vids(d), d / "out", quality=0)


@case("video", "write_video_shards(quality=101)", ("quality",))
def conv_quality_big(d):
    return convert(vids(d), d / "out", quality=101)


@case("video", "write_video_shards(processes=0)", ("processes",))
def conv_processes_zero(d):
    return convert(vids(d), d / "out", processes=0)


@case("video", "write_video_shards(validation_split=-0.1)", ("validation_split",))
def conv_split_negative(d):
    return convert(vids(d), d / "out", validation_split=-0.1)


@case("video", "write_video_shards(class_names={'up','left'}) (a set)", ("class_names",))
def conv_class_set(d):
    return convert(vids(d), d / "out", class_names={"up", "left"})


@case("video", "write_video_shards(frame_size=(-16, 16))", ("frame_size",))
def conv_frame_negative(d):
    return convert(vids(d), d / "out", frame_size=(-16, 16))


@case("video", "write_video_shards(on_bad_file='warn')", ("on_bad_file",))
def conv_bad_file_mode(d):
    return convert(vids(d), d / "out", on_bad_file="warn")


@case("video", "write_video_shards with out inside the source folder", ("out",))
def conv_out_inside(d):
    v = vids(d)
    return convert(v, v / "up" / "out")


@case("video", "write_video_shards with out = an existing file", ("f.txt",))
def conv_out_file(d):
    (d / "f.txt").write_text("x")
    return convert(vids(d), d / "f.txt")


@case("video", "write_video_shards with out = the source folder", ("out", "directory"))
def conv_out_is_source(d):
    v = vids(d)
    return convert(v, v)


@case("video", "write_video_shards(seed=2**64)", ("seed",))
def conv_seed_big(d):
    return convert(vids(d), d / "out", seed=2**64, validation_split=0.5)


@case("video", "write_video_shards of a folder with a 0-byte mp4, on_bad_file='skip'",
      ok=lambda got: len(got.get("skipped", [])) == 1)
def conv_skip_counts(d):
    v = vids(d)
    (v / "up" / "zero.mp4").write_bytes(b"")
    return convert(v, d / "out", on_bad_file="skip")


# ------------------------------------------------------------------ clip_dataset
@case("video", "clip_dataset on the converter's output root (not its train/)", ("train",))
def clip_root(d):
    return clips(shards(d))


@case("video", "clip_dataset(batch_size=0)", ("batch_size",))
def clip_batch_zero(d):
    return clips(shards(d) / "train", batch_size=0)


@case("video", "clip_dataset(n_readers=0)", ("n_readers",))
def clip_readers_zero(d):
    return clips(shards(d) / "train", n_readers=0)


@case("video", "clip_dataset(cycle_length=0)", ("cycle_length",))
def clip_cycle_zero(d):
    return clips(shards(d) / "train", cycle_length=0)


@case("video", "clip_dataset(n_readers=2, cycle_length=3): one knob twice",
      ("n_readers", "cycle_length"))
def clip_knob_twice(d):
    return clips(shards(d) / "train", n_readers=2, cycle_length=3)


@case("video", "clip_dataset(sampler='every')", ("sampler",))
def clip_sampler_bad(d):
    return clips(shards(d) / "train", sampler="every")


@case("video", "clip_dataset(shuffle_buffer_size=-1)", ("shuffle_buffer_size",))
def clip_buffer_negative(d):
    return clips(shards(d) / "train", shuffle_buffer_size=-1)


@case("video", "clip_dataset(seed=2**64)", ("seed",))
def clip_seed_big(d):
    return clips(shards(d) / "train", seed=2**64)


@case("video", "clip_dataset(on_bad_file='drop')", ("on_bad_file",))
def clip_bad_file_mode(d):
    return clips(shards(d) / "train", on_bad_file="drop")


@case("video", "clip_dataset with its manifest deleted (a warning is right)",
      ("manifest", "train"), either=True, ok=lambda got: got == 6)
def clip_no_manifest(d):
    t = shards(d) / "train"
    for p in list(t.iterdir()) + list(t.parent.iterdir()):
        if "manifest" in p.name.lower():
            p.unlink()
    return clips(t)


@case("video", "clip_dataset with one shard's bytes reversed", ("train",))
def clip_shard_reversed(d):
    t = shards(d) / "train"
    f = sorted(p for p in t.iterdir() if p.is_file() and "manifest" not in p.name.lower()
               and p.stat().st_size > 100)[0]
    f.write_bytes(f.read_bytes()[::-1])
    return clips(t)


# ------------------------------------------------------------------ clips_to_predict
def predict(path, **kw):
    return resolve("video", "clips_to_predict")(str(path), **kw)


@case("video", "clips_to_predict of a missing file", ("gone.mp4",))
def pred_missing(d):
    return predict(d / "gone.mp4", clip_len=4)


@case("video", "clips_to_predict of a folder", ("up",))
def pred_folder(d):
    return predict(vids(d) / "up", clip_len=4)


@case("video", "clips_to_predict of a 0-byte file", ("z.mp4",))
def pred_zero_byte(d):
    (d / "z.mp4").write_bytes(b"")
    return predict(d / "z.mp4", clip_len=4)


@case("video", "clips_to_predict of a PNG named .mp4", ("p.mp4",))
def pred_png(d):
    import zlib
    (d / "p.mp4").write_bytes(b"\x89PNG\r\n\x1a\n" + zlib.compress(bytes(500)))
    return predict(d / "p.mp4", clip_len=4)


@case("video", "clips_to_predict(like=ds, frame_size=(8, 8)): both", ("like", "frame_size"))
def pred_like_and_size(d):
    v = vids(d)
    ds = resolve("video", "video_dataset_from_directory")(v, clip_len=4, batch_size=2,
                                                           verbose=False)
    return predict(first_mp4(v), like=ds, frame_size=(8, 8))


@case("video", "clips_to_predict(like=a list)", ("like",))
def pred_like_list(d):
    return predict(first_mp4(vids(d)), like=[1, 2])


@case("video", "clips_to_predict(clips_per_video=0)", ("clips_per_video",))
def pred_cpv_zero(d):
    return predict(first_mp4(vids(d)), clip_len=4, clips_per_video=0)


@case("video", "clips_to_predict(sampler='best')", ("sampler",))
def pred_sampler_bad(d):
    return predict(first_mp4(vids(d)), clip_len=4, sampler="best")


@case("video", "clips_to_predict(dtype='float16')", ("dtype",))
def pred_dtype(d):
    return predict(first_mp4(vids(d)), clip_len=4, dtype="float16")


@case("video", "clips_to_predict(path=[two files]) (a list)", ("path",))
def pred_list(d):
    v = vids(d)
    return predict([str(p) for p in sorted(v.rglob("*.mp4"))[:2]], clip_len=4)


# ------------------------------------------------------------------ VideoOptions
def _opts(name, kw, desc, names):
    def fn(d):
        return resolve("video", "VideoOptions")(**kw)
    fn.__name__ = name
    case("video", f"VideoOptions({desc})", names)(fn)


for _name, _kw, _desc in [
    ("opt_clip_len_str", {"clip_len": "8"}, "clip_len='8'"),
    ("opt_fps_inf", {"fps": math.inf}, "fps=inf"),
    ("opt_cpv_negative", {"clips_per_video": -1}, "clips_per_video=-1"),
    ("opt_frame_step_bool", {"frame_step": True}, "frame_step=True"),
]:
    _opts(_name, _kw, _desc, tuple(_kw))
