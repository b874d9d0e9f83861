"""Sweep cases (see sweep_bad_inputs.py), round 5 (issue #60): files FFmpeg reads through
every entry point (edit lists, joined TS, a still track first, non-square pixels, damage in
the middle with and without ``verify_frames``, pipes/sockets/devices named ``.mp4``, odd and
empty files), class folders (links, empty and hidden ones, Korean names with spaces, ``~``),
writers at once and sets rewritten or edited, switches and flags (environment spellings,
yes/no arguments given as strings, ``options=`` beside keywords, old and new knob names,
Keras' names), numbers (sentinels, values beyond float32, NaN/inf in CSV and Parquet), the
exercise checkers with odd answer types, and the doctor, ``input_wait`` and the bench
command with bad arguments. Every id starts with ``r5.`` (``--only r5.``).

Each case says what is right: an error naming the file or argument (``names``), or the
input accepted and read right (``ok``). Files FFmpeg decodes are judged against FFmpeg's
own decode (PyAV, the stream ``av_find_best_stream`` picks), through the test suite's
``tests/video_corpus.py``, which makes them; none of these cases is in the tests.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import os
import shutil
import socket
import sys
import threading
from pathlib import Path

import numpy as np

from benchmarks.sweep_bad_inputs import ROOT, Skip, case, cli, resolve
from benchmarks.sweep_cases_video import clips, convert, direct, first_mp4, predict, shards, vids

V, F, W, S, N, C, D = ("r5.video", "r5.folders", "r5.writers", "r5.switches", "r5.numbers",
                       "r5.checkers", "r5.doctor")


# ------------------------------------------------------------------ helpers
def corpus():
    """The test suite's corpus maker (``tests/video_corpus.py``), loaded by path."""
    if "video_corpus" not in sys.modules:
        spec = importlib.util.spec_from_file_location("video_corpus",
                                                      ROOT / "tests" / "video_corpus.py")
        if spec is None or spec.loader is None:
            raise Skip("tests/video_corpus.py not found")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["video_corpus"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["video_corpus"]


def _made(kind: str, make) -> Path:
    """A master folder made once per sweep by ``make(folder)``."""
    base = Path(os.environ.get("DATAKIT_SWEEP_BASE", "/tmp")) / "master" / kind
    if not base.exists():
        tmp = base.with_name(kind + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        make(tmp)
        tmp.rename(base)
    return base


def ff_file(name: str) -> Path:
    """One of the FFmpeg-only files (edit-list trim, joined TS both ways, still first)."""
    vc = corpus()
    if not hasattr(vc, "ffmpeg_only_files"):
        raise Skip("this tests/video_corpus.py has no ffmpeg_only_files")
    return _made("ffonly", vc.ffmpeg_only_files) / name


def good_file(name: str) -> Path:
    vc = corpus()
    if name not in vc.SMALL:
        raise Skip(f"{name} not in this corpus")
    return _made("good_" + name.replace(".", "_"), lambda d: vc.good_files(d, [name])) / name


def damaged_file(kind: str) -> Path:
    vc = corpus()
    src = good_file("h264.mp4")
    return _made("damaged", lambda d: vc.damaged(src, d)) / f"h264_{kind}.mp4"


def ffmpeg_count(path) -> int:
    return len(corpus().judge(path)[1])


def ffmpeg_bad(path) -> bool:
    """FFmpeg reports an error, or decodes fewer than the source's 24 frames."""
    errors, times = corpus().judge(path)
    return bool(errors) or len(times) < 24


def with_file(d: Path, src: Path, name: str | None = None, cls: str = "up") -> Path:
    """The six tiny videos with ``src`` added to class ``cls``."""
    v = vids(d)
    shutil.copy(src, v / cls / (name or ("extra" + src.suffix)))
    return v


def n_is(n):
    return lambda got: (got[0] if isinstance(got, tuple) else got) == n


def all_frames_match(path: Path):
    """clips_to_predict of the whole file (one centered clip of every frame) against
    FFmpeg's frames: the same count and the same pictures (mean difference < 4 levels)."""
    ref = corpus().display_frames(path)  # before the display matrix's rotation
    got = predict(path, clip_len=len(ref), sampler="center", clips_per_video=1)
    got = np.asarray(got)[0].astype(np.int16)
    refs = [ref] + [np.rot90(ref, k, axes=(1, 2)) for k in (1, 3)]  # a rotated file's turn
    diffs = [float(np.abs(got - r.astype(np.int16)).mean()) for r in refs
             if r.shape == got.shape]
    if not diffs:
        return f"shape {got.shape}, FFmpeg {ref.shape}"
    return True if min(diffs) < 4 else f"mean difference {min(diffs):.1f} levels from FFmpeg's"


# ------------------------------------------------------------------ FFmpeg-only files
FF = {"trim": "h264_trimmed.mp4", "tsback": "ts_joined_back.mp4",
      "tsrepeat": "ts_joined_repeat.mp4", "still": "still_first.mkv"}


def _ff_cases(key: str, name: str) -> None:
    def frames_as_ffmpeg(d):
        return all_frames_match(ff_file(name))

    def direct_reads_it(d):
        return direct(with_file(d, ff_file(name)), on_bad_file="raise", frame_size=(16, 16))

    def verify_reads_it(d):
        return direct(with_file(d, ff_file(name)), on_bad_file="raise", verify_frames=True,
                      frame_size=(16, 16))

    def fps_resampled(d):
        return direct(with_file(d, ff_file(name)), fps=10, frame_size=(16, 16))

    def baseline_reads_it(d):
        for cls in ("up", "left"):  # the file alone, in two classes (the baseline keeps sizes)
            (d / "v" / cls).mkdir(parents=True)
            shutil.copy(ff_file(name), d / "v" / cls / "extra.mp4")
        ds = resolve("video", "mp4_clip_dataset")(d / "v", clip_len=4, batch_size=2, seed=0)
        return sum(int(x.shape[0]) for x, _ in ds)

    def converted_and_read(d):
        got = convert(with_file(d, ff_file(name)), d / "out", frame_size=(16, 16))
        return got.get("converted", 0) + got.get("reused", 0), clips(Path(got["train"]))

    def uniform_clips(d):
        n = ffmpeg_count(ff_file(name))
        x = predict(ff_file(name), clip_len=4, sampler="uniform", clips_per_video=3)
        return n, np.asarray(x).shape

    for fn, desc, ok in [
        (frames_as_ffmpeg, "clips_to_predict of every frame = FFmpeg's frames",
         lambda g: g is True),
        (direct_reads_it, "in a class folder, direct reader reads all 7", n_is(7)),
        (verify_reads_it, "in a class folder, verify_frames=True reads all 7", n_is(7)),
        (fps_resampled, "in a class folder, direct reader fps=10 reads all 7", n_is(7)),
        (baseline_reads_it, "as a.mp4 and b.mp4, mp4_clip_dataset (PyAV baseline) reads 2",
         n_is(2)),
        (converted_and_read, "write_video_shards keeps it, clip_dataset reads 7",
         lambda g: g == (7, 7)),
        (uniform_clips, "clips_to_predict(sampler='uniform', clips_per_video=3)",
         lambda g: g[1][:2] == (3, 4)),
    ]:
        fn.__name__ = f"{key}_{fn.__name__}"
        case(V, f"{name}: {desc}", (name, "extra"), ok=ok)(fn)


for _k, _n in FF.items():
    _ff_cases(_k, _n)


# ------------------------------------------------------------------ non-square pixels
SAR = ["h264_sar2.mp4", "h264_sar_half.mkv", "mpeg2_hdv.mov", "h264_sar_rotated.mp4"]
for _i, _name in enumerate(SAR):
    def _sar(d, _name=_name):
        return all_frames_match(good_file(_name))
    _sar.__name__ = f"sar{_i}_frames_as_displayed"
    case(V, f"{_name}: clips_to_predict frames = FFmpeg's square-pixel display",
         (_name,), ok=lambda g: g is True)(_sar)


@case(V, "h264_sar2.mp4 converted: clip_dataset's frames are display-shaped (64 wide)",
      ok=lambda g: g == 64)
def sar_converted_width(d):
    src = d / "src" / "a"
    src.mkdir(parents=True)
    shutil.copy(good_file("h264_sar2.mp4"), src / "x.mp4")
    shutil.copy(good_file("h264_sar2.mp4"), src / "y.mp4")
    got = convert(d / "src", d / "out")
    ds = resolve("video", "clip_dataset")(got["train"], clip_len=2, batch_size=1)
    return int(next(iter(ds))[0].shape[-2])


@case(V, "h264_sar2.mp4 direct reader crop_to_aspect_ratio=True, frame_size=(16,16): "
      "a 64x48 display cropped, not 32x48", ok=lambda g: g is True)
def sar_crop_center(d):
    p = good_file("h264_sar2.mp4")
    ref = corpus().display_frames(p)[0]  # (48, 64)
    src = d / "v" / "a"
    src.mkdir(parents=True)
    shutil.copy(p, src / "x.mp4")
    ds = resolve("video", "video_dataset_from_directory")(
        d / "v", clip_len=1, batch_size=1, frame_size=(48, 48), crop_to_aspect_ratio=True,
        sampler="center", verbose=False, shuffle=False)
    x = next(iter(ds))[0].numpy()[0, 0]
    want = ref[:, 8:56]
    diff = float(np.abs(x.astype(np.int16) - want.astype(np.int16)).mean())
    return True if diff < 8 else f"{diff:.1f} levels from the display's centre crop"


# ------------------------------------------------------------------ damaged in the middle
for _kind in ("zeroed", "cut_middle", "broken_index"):
    def _skip2(d, _kind=_kind):
        v = with_file(d, damaged_file(_kind), "bad.mp4")
        return [direct(v, on_bad_file="skip", frame_size=(16, 16))[0] for _ in range(2)]

    def _skip_verify(d, _kind=_kind):
        v = with_file(d, damaged_file(_kind), "bad.mp4")
        return direct(v, on_bad_file="skip", verify_frames=True, frame_size=(16, 16))

    def _raise_verify(d, _kind=_kind):
        p = damaged_file(_kind)
        if not ffmpeg_bad(p):
            raise Skip(f"FFmpeg decodes {p.name} whole, without an error")
        return direct(with_file(d, p, "bad.mp4"), on_bad_file="raise", verify_frames=True,
                      frame_size=(16, 16))

    def _conv_skip(d, _kind=_kind):
        p = damaged_file(_kind)
        got = convert(with_file(d, p, "bad.mp4"), d / "out", on_bad_file="skip",
                      frame_size=(16, 16))
        return (len(got["skipped"]), ffmpeg_bad(p))

    for _fn, _desc, _ok in [
        (_skip2, "on_bad_file='skip', two epochs: the run goes on (6 or 7 clips each)",
         lambda g: all(n in (6, 7) for n in g)),
        (_skip_verify, "on_bad_file='skip', verify_frames=True: listed out, 6 clips",
         lambda g: g[0] in (6, 7)),
        (_raise_verify, "verify_frames=True, on_bad_file='raise': refused at the listing, "
         "by name", None),
        (_conv_skip, "write_video_shards(on_bad_file='skip'): skipped iff FFmpeg reports an "
         "error or decodes fewer than its 24 frames",
         lambda g: g[0] == int(g[1])),
    ]:
        _fn.__name__ = f"damaged_{_kind}_{_fn.__name__.strip('_')}"
        case(V, f"an H.264 MP4 damaged ({_kind}) beside good ones: {_desc}", ("bad.mp4",),
             ok=_ok)(_fn)


# ------------------------------------------------------------------ pipes, sockets, devices
def _fifo(folder: Path, name: str = "x.mp4") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / name)
    return folder / name


@case(V, "write_video_shards(on_bad_file='skip') with a named pipe x.mp4: skipped, 6 kept",
      ok=lambda g: g == (6, 1), timeout=40)
def pipe_converter_skip(d):
    v = vids(d)
    _fifo(v / "up")
    got = convert(v, d / "out", on_bad_file="skip")
    return got["converted"], len(got["skipped"])


@case(V, "write_video_shards with a named pipe x.mp4 (raise): refused by name", ("x.mp4",),
      timeout=40)
def pipe_converter_raise(d):
    v = vids(d)
    _fifo(v / "up")
    return convert(v, d / "out")


@case(V, "clips_to_predict of a named pipe: refused by name", ("p.mp4",), timeout=40)
def pipe_predict(d):
    return predict(_fifo(d, "p.mp4"), clip_len=4)


@case(V, "direct reader, a named pipe x.mp4, on_bad_file='raise': refused by name",
      ("x.mp4",), timeout=40)
def pipe_direct_raise(d):
    v = vids(d)
    _fifo(v / "up")
    return direct(v)


@case(V, "a named pipe x.avi two folders down a class folder, skip: 6 clips", ok=n_is(6),
      timeout=40)
def pipe_nested_avi(d):
    v = vids(d)
    _fifo(v / "up" / "a" / "b", "x.avi")
    return direct(v, on_bad_file="skip")


@case(V, "a link x.mp4 -> /dev/null in a class folder, follow_links, skip: 6 clips",
      ok=n_is(6), timeout=40)
def devnull_link_skip(d):
    v = vids(d)
    os.symlink("/dev/null", v / "up" / "x.mp4")
    return direct(v, follow_links=True, on_bad_file="skip")


@case(V, "mp4_clip_dataset with a named pipe x.mp4 in a class folder: refused by name",
      ("x.mp4",), timeout=40)
def pipe_baseline(d):
    v = vids(d)
    _fifo(v / "up")
    ds = resolve("video", "mp4_clip_dataset")(v, clip_len=4, batch_size=2)
    return sum(int(x.shape[0]) for x, _ in ds)


@case(V, "the directory argument is itself a named pipe: refused by name", ("dir.mp4",),
      timeout=40)
def pipe_as_directory(d):
    return direct(_fifo(d, "dir.mp4"))


@case(V, "a Unix socket s.mp4 in a class folder, converter skip: 6 kept",
      ok=lambda g: g == (6, 1), timeout=40)
def socket_converter_skip(d):
    v = vids(d)
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(v / "up" / "s.mp4"))
        got = convert(v, d / "out", on_bad_file="skip")
        return got["converted"], len(got["skipped"])
    finally:
        s.close()


# ------------------------------------------------------------------ odd, short, empty
def _silent_audio(out) -> None:
    """Ten frames of silent AAC muxed into the open container ``out``."""
    import av
    a = out.add_stream("aac", rate=8000)
    for i in range(10):
        f = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp",
                                       layout="mono")
        f.sample_rate, f.pts = 8000, i * 1024
        for p in a.encode(f):
            out.mux(p)
    for p in a.encode():
        out.mux(p)


def _encode(path: Path, frames: int, w: int = 32, h: int = 32, codec: str = "libx264",
            fmt: str | None = None, audio_only: bool = False) -> Path:
    import av
    with av.open(str(path), "w", format=fmt) as out:
        if audio_only:
            _silent_audio(out)
            return path
        s = out.add_stream(codec, rate=25)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        if frames == 0:  # an audio track, so that the file is written with its video track
            _silent_audio(out)
        for i in range(frames):
            pic = np.full((h, w, 3), (i * 20) % 255, np.uint8)
            for p in s.encode(av.VideoFrame.from_ndarray(pic, format="rgb24")):
                out.mux(p)
        for p in s.encode():
            out.mux(p)
    return path


@case(V, "an audio-only .mp4 in a class folder (raise): refused naming it", ("voice.mp4",))
def audio_only_raise(d):
    v = vids(d)
    _encode(v / "up" / "voice.mp4", 0, audio_only=True)
    return direct(v)


@case(V, "an audio-only .mp4 in a class folder, converter skip: skipped, 6 kept",
      ok=lambda g: g == (6, 1))
def audio_only_convert_skip(d):
    v = vids(d)
    _encode(v / "up" / "voice.mp4", 0, audio_only=True)
    got = convert(v, d / "out", on_bad_file="skip")
    return got["converted"], len(got["skipped"])


@case(V, "an MP4 with a video stream and no frames (raise): refused naming it", ("none.mp4",))
def zero_frames_raise(d):
    v = vids(d)
    _encode(v / "up" / "none.mp4", 0)
    return direct(v)


@case(V, "a one-frame MP4 with clip_len=4 (raise): refused naming it", ("one.mp4",))
def one_frame_raise(d):
    v = vids(d)
    _encode(v / "up" / "one.mp4", 1, 16, 16)
    return direct(v, frame_size=(16, 16))


@case(V, "a 2x2-pixel MP4 among 16x16 ones, frame_size=(16,16): read, 7 clips", ok=n_is(7))
def tiny_pixels(d):
    v = vids(d)
    _encode(v / "up" / "tiny.mp4", 12, 2, 2)
    return direct(v, frame_size=(16, 16))


@case(V, "a 30x18 MPEG-4 AVI among 16x16 MP4s, frame_size=(16,16): read, 7 clips",
      ok=n_is(7))
def odd_size_avi(d):
    v = vids(d)
    _encode(v / "up" / "odd.avi", 12, 30, 18, codec="mpeg4", fmt="avi")
    return direct(v, frame_size=(16, 16))


@case(V, "a 0-byte .mkv in a class folder, direct reader skip: 6 clips", ok=n_is(6))
def zero_mkv_skip(d):
    v = vids(d)
    (v / "up" / "z.mkv").write_bytes(b"")
    return direct(v, on_bad_file="skip")


@case(V, "a 0-byte .webm in a class folder, converter skip: skipped, 6 kept",
      ok=lambda g: g == (6, 1))
def zero_webm_convert_skip(d):
    v = vids(d)
    (v / "up" / "z.webm").write_bytes(b"")
    got = convert(v, d / "out", on_bad_file="skip")
    return got["converted"], len(got["skipped"])


@case(V, "a file made unreadable (chmod 000) in a class folder: refused naming it",
      ("locked.mp4",))
def unreadable_file(d):
    if os.geteuid() == 0:
        raise Skip("root reads a chmod-000 file")
    v = vids(d)
    p = v / "up" / "locked.mp4"
    shutil.copy(first_mp4(v), p)
    p.chmod(0)
    return direct(v)


@case(V, "clips_to_predict of the edit-list trim with fps=10: FFmpeg's time span",
      ("h264_trimmed.mp4",), ok=lambda g: g is True)
def trim_predict_fps(d):
    p = ff_file("h264_trimmed.mp4")
    n = ffmpeg_count(p)  # 37 at 25 fps: 1.48 s, 15 frames at 10 fps
    x = np.asarray(predict(p, clip_len=int(n * 10 / 25), fps=10, sampler="center"))
    return True if x.shape[1] == int(n * 10 / 25) else f"shape {x.shape}"


# ------------------------------------------------------------------ class folders
@case(F, "a class folder 'up2' that links to 'up', follow_links=True: read under its own "
      "label (9 clips) or refused naming it", ("up2",), ok=n_is(9), either=True)
def class_link_follow(d):
    v = vids(d)
    os.symlink(v / "up", v / "up2")
    return direct(v, follow_links=True)


@case(F, "a class folder link 'up2' -> 'up', follow_links=False: its videos left out "
      "(6 clips) or refused naming it", ("up2",), ok=n_is(6), either=True)
def class_link_nofollow(d):
    v = vids(d)
    os.symlink(v / "up", v / "up2")
    return direct(v, follow_links=False)


@case(F, "a class folder link to a folder outside the tree, follow_links=True: 9 clips",
      ok=n_is(9))
def class_link_outside(d):
    v = vids(d)
    shutil.copytree(v / "up", d / "elsewhere")
    os.symlink(d / "elsewhere", v / "zz")
    return direct(v, follow_links=True)


@case(F, "class_names=['left','right','up','empty'] naming an empty class folder: read "
      "(6 clips, label 3 unused) or refused naming it", ("empty",), ok=n_is(6), either=True)
def class_names_empty(d):
    v = vids(d)
    (v / "empty").mkdir()
    names = sorted(p.name for p in v.iterdir() if p.name != "empty") + ["empty"]
    return direct(v, class_names=names)


@case(F, "macOS junk: .DS_Store and ._x.mp4 (AppleDouble) in a class folder: 6 clips",
      ok=n_is(6))
def macos_junk(d):
    v = vids(d)
    (v / "up" / ".DS_Store").write_bytes(b"\0\0\0\1Bud1" + bytes(100))
    (v / "up" / "._x.mp4").write_bytes(b"\0\5\26\7" + bytes(4000))
    return direct(v)


@case(F, "a hidden .ipynb_checkpoints folder with a copy of a video, as a class: "
      "3 classes, 6 clips", ok=lambda g: g[0] == 6 and max(g[1]) == 2)
def hidden_class(d):
    v = vids(d)
    (v / ".ipynb_checkpoints").mkdir()
    shutil.copy(first_mp4(v), v / ".ipynb_checkpoints" / "x-checkpoint.mp4")
    return direct(v)


@case(F, "a hidden subfolder .trash inside a class folder: left out, 6 clips", ok=n_is(6))
def hidden_subfolder(d):
    v = vids(d)
    (v / "up" / ".trash").mkdir()
    shutil.copy(first_mp4(v), v / "up" / ".trash" / "old.mp4")
    return direct(v)


@case(F, "Korean class names with spaces ('위 쪽', '왼 쪽', '오른 쪽'): 6 clips, 3 labels",
      ok=lambda g: g[0] == 6 and max(g[1]) == 2)
def korean_spaces(d):
    v = vids(d)
    for old, new in zip(sorted(p.name for p in v.iterdir()), ["왼 쪽", "오른 쪽", "위 쪽"],
                        strict=True):
        (v / old).rename(v / new)
    return direct(v)


@case(F, "a Korean class folder written decomposed (NFD, as macOS does), class_names in NFC: "
      "read (6 clips) or refused naming it", ("위",), ok=n_is(6), either=True)
def korean_nfd(d):
    import unicodedata
    v = vids(d)
    names = sorted(p.name for p in v.iterdir())
    (v / names[-1]).rename(v / unicodedata.normalize("NFD", "위쪽"))
    return direct(v, class_names=names[:-1] + [unicodedata.normalize("NFC", "위쪽")])


@case(F, "Korean video file names with spaces ('영상 1.mp4'): converted and read (6 clips)",
      ok=lambda g: g == 6)
def korean_file_names_convert(d):
    v = vids(d)
    for i, p in enumerate(sorted(v.rglob("*.mp4"))):
        p.rename(p.with_name(f"영상 {i}.mp4"))
    return clips(Path(convert(v, d / "out")["train"]))


@case(F, "directory='~/v' (HOME set): the home folder's v, 6 clips", ("~",), ok=n_is(6),
      either=False)
def tilde_direct(d):
    vids(d)
    with env(HOME=str(d)):
        return direct("~/v")


@case(F, "write_video_shards(out='~/out') (HOME set): shards under HOME, no folder '~'",
      ok=lambda g: g is True)
def tilde_convert_out(d):
    v = vids(d)
    cwd = os.getcwd()
    os.chdir(d / "v")
    try:
        with env(HOME=str(d)):
            convert(v, "~/out")
    finally:
        os.chdir(cwd)
    return (d / "out" / "train").is_dir() and not (d / "v" / "~").exists()


@case(F, "clips_to_predict('~/v/<class>/<file>.mp4') (HOME set): read", ok=lambda g:
      np.asarray(g).shape[1] == 4)
def tilde_predict(d):
    v = vids(d)
    with env(HOME=str(d)):
        return predict("~/" + str(first_mp4(v).relative_to(d)), clip_len=4)


@case(F, "clip_dataset('~/s/train') (HOME set): 6 clips", ok=lambda g: g == 6)
def tilde_clip_dataset(d):
    shards(d)
    with env(HOME=str(d)):
        return clips("~/s/train")


@case(F, "upper-case endings (X.MP4, Y.Mov) in a class folder: read, 8 clips", ok=n_is(8))
def upper_case_endings(d):
    v = vids(d)
    shutil.copy(first_mp4(v), v / "up" / "X.MP4")
    shutil.copy(first_mp4(v), v / "up" / "Y.Mov")
    return direct(v)


@case(F, "a regular file 'README' beside the class folders: not a class, 6 clips, 3 labels",
      ok=lambda g: g[0] == 6 and max(g[1]) == 2)
def file_beside_classes(d):
    v = vids(d)
    (v / "README").write_text("my videos\n")
    return direct(v)


@case(F, "directory given as bytes: read (6 clips) or refused naming directory",
      ("directory",), ok=n_is(6), either=True)
def directory_bytes(d):
    return direct(os.fsencode(vids(d)))


@case(F, "labels= a list of 6 ints with a hidden .DS_Store and ._x.mp4 present: 6 clips",
      ok=n_is(6))
def labels_list_with_junk(d):
    v = vids(d)
    (v / "up" / "._x.mp4").write_bytes(bytes(4000))
    return direct(v, labels=[0, 1, 0, 1, 0, 1])


@case(F, "write_video_shards of a class folder link 'up2' -> 'up': converted under its own "
      "label (9 videos) or refused naming it", ("up2",), ok=lambda g: g == 9, either=True)
def class_link_convert(d):
    v = vids(d)
    os.symlink(v / "up", v / "up2")
    return convert(v, d / "out")["converted"]


@case(F, "a class folder that holds only a link loop, follow_links=True: refused naming "
      "the empty class, or 6 clips", ("loop", "lonely"), ok=n_is(6), either=True)
def class_only_loop(d):
    v = vids(d)
    (v / "lonely").mkdir()
    os.symlink("..", v / "lonely" / "loop")
    return direct(v, follow_links=True)


# ------------------------------------------------------------------ writers and sets
def _writer():
    return resolve("tfrecord_writer", "ShardWriter")


def _records(folder: Path, prefix: str = "shard") -> int:
    import tensorflow as tf
    files = sorted(str(p) for p in folder.glob(f"{prefix}-*"))
    return sum(1 for _ in tf.data.TFRecordDataset(files))


@case(W, "two ShardWriter(overwrite=False) open at once (3 and 2 shards), the later commits "
      "first: the earlier refused naming the set, 40 records kept", ("shard", "overwrite"))
def writers_two_at_once(d):
    SW = _writer()
    a = SW(d, num_shards=3)
    b = SW(d, num_shards=2)
    with a:
        for i in range(30):
            a.write(b"a%d" % i)
        with b:
            for i in range(40):
                b.write(b"b%d" % i)
    return _records(d)


@case(W, "ShardWriter(overwrite=True) replacing 3 shards by 2: exactly the new 2 files and "
      "5 records", ok=lambda g: g == (2, 5))
def writer_fewer_shards(d):
    SW = _writer()
    with SW(d, num_shards=3) as w:
        for _ in range(9):
            w.write(b"x")
    with SW(d, num_shards=2, overwrite=True) as w:
        for _ in range(5):
            w.write(b"y")
    return len(list(d.glob("shard-*"))), _records(d)


@case(W, "ShardWriter, an exception inside the block: no shard, no manifest left",
      ok=lambda g: g == [])
def writer_exception(d):
    SW = _writer()
    with contextlib.suppress(RuntimeError), SW(d / "w", num_shards=2) as w:
        w.write(b"x")
        raise RuntimeError("boom")
    return sorted(p.name for p in (d / "w").iterdir() if not p.name.startswith("."))


@case(W, "ShardWriter(overwrite='no') (a string): refused naming overwrite", ("overwrite",))
def writer_overwrite_str(d):
    SW = _writer()
    with SW(d, num_shards=1) as w:
        w.write(b"x")
    with SW(d, num_shards=1, overwrite="no") as w:
        w.write(b"y")
    return _records(d)


@case(W, "two ShardWriters, different prefixes, one folder at once: both sets kept",
      ok=lambda g: g == (3, 4))
def writers_two_prefixes(d):
    SW = _writer()
    with SW(d, prefix="train", num_shards=2) as a, SW(d, prefix="val", num_shards=2) as b:
        for _ in range(3):
            a.write(b"a")
        for _ in range(4):
            b.write(b"b")
    return _records(d, "train"), _records(d, "val")


@case(W, "clip_dataset iterating while write_video_shards rewrites the same out: 6 clips "
      "of the generation it began with", ok=lambda g: g == 6)
def rewrite_while_reading(d):
    v = vids(d)
    got = convert(v, d / "out")
    ds = resolve("video", "clip_dataset")(got["train"], clip_len=4, batch_size=1)
    it = iter(ds)
    n = int(next(it)[0].shape[0])
    shutil.rmtree(v / "up")
    convert(v, d / "out", frame_size=(8, 8))
    for el in it:
        n += int(el[0].shape[0])
    return n


def _manifest_case(name: str, desc: str, edit) -> None:
    def fn(d):
        t = shards(d) / "train"
        m = sorted(t.glob("*manifest*.json")) or sorted(t.parent.glob("*manifest*.json"))
        if not m:
            raise Skip("no manifest json found")
        data = json.loads(m[0].read_text())
        m[0].write_text(edit(data) if callable(edit) else edit)
        return clips(t)
    fn.__name__ = name
    case(W, f"clip_dataset with its manifest edited: {desc}", ("manifest",))(fn)


def _files(data):
    """The first set's file entries of a manifest."""
    sets = data.get("sets", data)
    first = next(iter(sets.values()))
    return first["files"] if isinstance(first, dict) and "files" in first else first


def _edit_records(data):
    _files(data)[0]["records"] = int(_files(data)[0].get("records", 0)) + 5
    return json.dumps(data)


def _edit_drop_file(data):
    del _files(data)[0]
    return json.dumps(data)


def _edit_bogus_file(data):
    entry = dict(_files(data)[0])
    entry["path" if "path" in entry else "name" if "name" in entry else "file"] = "ghost.tfrecord"
    _files(data).append(entry)
    return json.dumps(data)


_manifest_case("manifest_records_plus5", "a file's record count +5", _edit_records)
_manifest_case("manifest_file_dropped", "a file's entry removed", _edit_drop_file)
_manifest_case("manifest_ghost_file", "an entry for a file that does not exist",
               _edit_bogus_file)
_manifest_case("manifest_truncated", "the JSON cut in half",
               lambda data: json.dumps(data)[: len(json.dumps(data)) // 2])
_manifest_case("manifest_empty_object", "'{}'", "{}")
_manifest_case("manifest_list", "'[]' (a list, not an object)", "[]")


@case(W, "write_video_shards into an out folder holding the user's notes.txt: kept",
      ok=lambda g: g is True)
def convert_keeps_user_file(d):
    (d / "out").mkdir()
    (d / "out" / "notes.txt").write_text("mine")
    convert(vids(d), d / "out")
    return (d / "out" / "notes.txt").read_text() == "mine"


@case(W, "write_video_shards rerun after a source video was deleted: 5 videos read",
      ok=lambda g: g == 5)
def rerun_after_delete(d):
    v = vids(d)
    convert(v, d / "out")
    sorted((v / "up").glob("*.mp4"))[0].unlink()  # 'up' holds 3
    return clips(Path(convert(v, d / "out")["train"]))


@case(W, "write_video_shards rerun with another frame_size: the new size read",
      ok=lambda g: g == (8, 8))
def rerun_new_size(d):
    v = vids(d)
    convert(v, d / "out")
    got = convert(v, d / "out", frame_size=(8, 8))
    ds = resolve("video", "clip_dataset")(got["train"], clip_len=2, batch_size=1)
    return tuple(int(s) for s in next(iter(ds))[0].shape[2:4])


@case(W, "two write_video_shards into one out at once (threads): both end, 6 clips read",
      ok=lambda g: g == 6, timeout=90)
def two_converters_at_once(d):
    v = vids(d)
    errors = []

    def run():
        try:
            convert(v, d / "out")
        except Exception as e:  # one refused by name is fine too
            errors.append(e)
    ts = [threading.Thread(target=run) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if len(errors) == 2:
        raise errors[0]
    return clips(d / "out" / "train")


@case(W, "clip_dataset on a train/ whose shards were deleted by hand (manifest kept): "
      "refused naming the missing shard", ("tfrecord", "shard"))
def shards_deleted(d):
    t = shards(d) / "train"
    for p in t.glob("*.tfrecord*"):
        p.unlink()
    return clips(t)


# ------------------------------------------------------------------ switches: environment
@contextlib.contextmanager
def env(**kw):
    old = {k: os.environ.get(k) for k in kw}
    os.environ.update(kw)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _bar_disabled(value: str):
    """Whether a progress bar on a terminal (a pseudo-terminal as stderr) is hidden with
    ``DATAKIT_PROGRESS=value``, and whether it is with the variable unset."""
    def fn(d):
        import pty
        leader, follower = pty.openpty()
        tty = os.fdopen(follower, "w")
        got = []
        try:
            for v in (value, None):
                with env(DATAKIT_PROGRESS=value, TQDM_DISABLE=""), \
                        contextlib.redirect_stderr(tty):
                    if v is None:
                        os.environ.pop("DATAKIT_PROGRESS")
                    bar = resolve("progress", "progress_bar")(3, "x")
                    got.append(bool(bar.disable))
                    bar.close()
        finally:
            tty.close()
            os.close(leader)
        return tuple(got)
    return fn


for _name, _val, _want, _desc in [
    ("progress_off_spaces", " Off ", (True, False), "' Off ' (spaces, capital): bars off"),
    ("progress_FALSE", "FALSE", (True, False), "'FALSE': bars off"),
    ("progress_N", "N", None, "'N': refused naming DATAKIT_PROGRESS"),
    ("progress_disable", "disable", None, "'disable': refused naming DATAKIT_PROGRESS"),
    ("progress_spaces_only", "   ", (False, False), "'   ' (blank): the default (automatic)"),
    ("progress_On", "On", (False, False), "'On': bars shown on a terminal"),
]:
    _fn = _bar_disabled(_val)
    _fn.__name__ = _name
    case(S, f"DATAKIT_PROGRESS={_desc}", ("DATAKIT_PROGRESS",),
         ok=None if _want is None else (lambda g, _w=_want: g == _w))(_fn)


def _probe_folder(name: str, value: str, want):
    def fn(d):
        with env(DATAKIT_PROBE_CACHE=value, HOME=str(d), DATAKIT_CACHE=str(d / "c"),
                 SWEEP_R5=str(d)):
            got = resolve("probe_cache", "cache_folder")()
            return got, want(d)
    fn.__name__ = name
    return fn


for _name, _val, _want, _desc in [
    ("probe_cache_off_spaces", " off ", lambda d: None, "' off ': no cache"),
    ("probe_cache_True", "True", lambda d: d / "c" / "video-probes", "'True': the default"),
    ("probe_cache_envvar", "$SWEEP_R5/pc", lambda d: d / "pc", "'$SWEEP_R5/pc': expanded"),
    ("probe_cache_relative", "rel/pc", lambda d: Path("rel/pc").absolute(),
     "'rel/pc': made absolute"),
]:
    case(S, f"DATAKIT_PROBE_CACHE={_desc}", ("DATAKIT_PROBE_CACHE",),
         ok=lambda g: g[0] == g[1])(_probe_folder(_name, _val, _want))


@case(S, "DATAKIT_CACHE='Off' with the probe cache on: refused naming DATAKIT_CACHE",
      ("DATAKIT_CACHE",))
def cache_off(d):
    with env(DATAKIT_CACHE="Off", DATAKIT_PROBE_CACHE=""):
        return resolve("probe_cache", "cache_folder")()


@case(S, "DATAKIT_PROBE_CACHE=off: the direct reader writes no probe file",
      ok=lambda g: g == [])
def probe_cache_off_reader(d):
    with env(DATAKIT_PROBE_CACHE="off", DATAKIT_CACHE=str(d / "c"), HOME=str(d)):
        direct(vids(d))
    return sorted(str(p) for p in d.rglob("*") if p.is_file() and "/c/" in str(p))


# ------------------------------------------------------------------ switches: yes/no args
def _flag_case(name, call, arg, desc):
    def fn(d):
        return call(d)
    fn.__name__ = name
    case(S, f"{desc}: refused naming {arg}", (arg,))(fn)


def _vdir(**kw):
    """The direct reader built with ``kw`` and its first element taken: accepted or not."""
    def fn(d):
        kw2 = {"clip_len": 4, "batch_size": 2, **kw}
        ds = resolve("video", "video_dataset_from_directory")(vids(d), **kw2)
        next(iter(ds))
        return ds.element_spec
    return fn


def _clipds(**kw):
    def fn(d):
        ds = resolve("video", "clip_dataset")(shards(d) / "train", clip_len=4, batch_size=2,
                                              **kw)
        next(iter(ds))
        return ds.element_spec
    return fn


for _name, _call, _arg, _desc in [
    ("flag_shuffle_str", _vdir(shuffle="False"), "shuffle", "direct reader shuffle='False'"),
    ("flag_follow_links_yes", _vdir(follow_links="yes"), "follow_links",
     "direct reader follow_links='yes'"),
    ("flag_verify_frames_no", _vdir(verify_frames="no"), "verify_frames",
     "direct reader verify_frames='no'"),
    ("flag_with_ids_1", _vdir(with_ids=1), "with_ids", "direct reader with_ids=1"),
    ("flag_verbose_no", _vdir(verbose="no"), "verbose", "direct reader verbose='no'"),
    ("flag_crop_true_str", _vdir(crop_to_aspect_ratio="True", frame_size=(8, 8)),
     "crop_to_aspect_ratio", "direct reader crop_to_aspect_ratio='True'"),
    ("flag_seek_no", _vdir(seek="no"), "seek", "direct reader seek='no'"),
    ("flag_progress_off_str", _vdir(progress="off"), "progress", "direct reader progress='off'"),
    ("flag_drop_remainder_no", _clipds(drop_remainder="no"), "drop_remainder",
     "clip_dataset drop_remainder='no'"),
    ("flag_training_false_str", _clipds(training="False"), "training",
     "clip_dataset training='False'"),
    ("flag_clip_with_ids_no", _clipds(with_ids="no"), "with_ids", "clip_dataset with_ids='no'"),
    ("flag_clip_trace_0", _clipds(trace=0), "trace", "clip_dataset trace=0"),
    ("flag_convert_progress_off", lambda d: convert(vids(d), d / "o", progress="off"),
     "progress", "write_video_shards progress='off'"),
    ("flag_baseline_drop_no", lambda d: resolve("video", "mp4_clip_dataset")(
        vids(d), clip_len=4, drop_remainder="no"), "drop_remainder",
     "mp4_clip_dataset drop_remainder='no'"),
    ("flag_convert_pad_str", lambda d: convert(vids(d), d / "o", frame_size=(8, 8),
                                               pad_to_aspect_ratio="yes"),
     "pad_to_aspect_ratio", "write_video_shards pad_to_aspect_ratio='yes'"),
]:
    _flag_case(_name, _call, _arg, _desc)


@case(S, "direct reader shuffle=np.False_ (a NumPy bool): accepted, 6 clips", ok=n_is(6))
def flag_numpy_bool(d):
    return direct(vids(d), shuffle=np.False_)


# ------------------------------------------------------------------ switches: options= and knobs
def _vo(**kw):
    return resolve("video", "VideoOptions")(**kw)


@case(S, "direct reader options=VideoOptions(clip_len=4) + frame_size=(8,8): accepted "
      "(no field twice), 6 clips of 8x8", ok=lambda g: g == (6, 8))
def options_plus_other_field(d):
    ds = resolve("video", "video_dataset_from_directory")(
        vids(d), options=_vo(clip_len=4), frame_size=(8, 8), batch_size=2, verbose=False)
    n = w = 0
    for x, _ in ds:
        n, w = n + int(x.shape[0]), int(x.shape[-2])
    return n, w


@case(S, "direct reader options=VideoOptions(clip_len=4) + clip_len=8: refused naming clip_len",
      ("clip_len",))
def options_field_twice(d):
    return resolve("video", "video_dataset_from_directory")(
        vids(d), options=_vo(clip_len=4), clip_len=8, verbose=False)


@case(S, "clip_dataset(options=VideoOptions(clip_len=4, frame_size=(16,16))) shared with the "
      "direct reader: accepted, 6 clips", ok=lambda g: g == 6)
def options_shared_clip_dataset(d):
    ds = resolve("video", "clip_dataset")(shards(d) / "train", batch_size=2,
                                          options=_vo(clip_len=4, frame_size=(16, 16)))
    return sum(int(x.shape[0]) for x, _ in ds)


@case(S, "write_video_shards(options=VideoOptions(clip_len=8, frame_size=(8,8))): clip "
      "fields ignored, 6 converted", ok=lambda g: g == 6)
def options_convert_clip_fields(d):
    return convert(vids(d), d / "o", options=_vo(clip_len=8, frame_size=(8, 8)))["converted"]


@case(S, "direct reader options={'clip_len': 4} (a dict): refused naming options", ("options",))
def options_dict(d):
    return direct(vids(d), options={"clip_len": 4})


@case(S, "clips_to_predict(options=VideoOptions(clip_len=4), clip_len=4): refused naming "
      "clip_len, or accepted (the same value)", ("clip_len",),
      ok=lambda g: np.asarray(g).shape[1] == 4, either=True)
def options_predict_same_value(d):
    return predict(first_mp4(vids(d)), options=_vo(clip_len=4), clip_len=4)


@case(S, "clip_dataset(cycle_length=2) alone (tf.data's name): accepted, 6 clips",
      ok=lambda g: g == 6)
def knob_cycle_alone(d):
    return clips(shards(d) / "train", cycle_length=2)


@case(S, "clip_dataset(buffer_size=4, shuffle_buffer_size=4): one knob twice, refused by name",
      ("buffer_size",))
def knob_buffer_twice(d):
    return clips(shards(d) / "train", buffer_size=4, shuffle_buffer_size=4)


@case(S, "direct reader num_parallel_calls=2 and n_parse_threads=2: refused naming both",
      ("num_parallel_calls", "n_parse_threads"))
def knob_npc_twice(d):
    return direct(vids(d), num_parallel_calls=2, n_parse_threads=2)


@case(S, "mp4_clip_dataset(cycle_length=2, n_readers=2, clip_len=4): refused naming both",
      ("cycle_length", "n_readers"))
def knob_baseline_same_value(d):
    ds = resolve("video", "mp4_clip_dataset")(vids(d), clip_len=4, n_readers=2, cycle_length=2)
    return sum(int(x.shape[0]) for x, _ in ds)


def _csv(d: Path) -> tuple[str, object]:
    p = d / "t.csv"
    p.write_text("x,y\n" + "".join(f"{i * 0.5},{i}\n" for i in range(1, 9)))
    return str(p), resolve("csv", "column_stats")(str(p))


@case(S, "csv_reader_dataset(n_readers=2, cycle_length=2): refused naming both",
      ("n_readers", "cycle_length"))
def knob_csv_twice(d):
    p, st = _csv(d)
    return list(resolve("csv", "csv_reader_dataset")(p, stats=st, label="y", n_readers=2,
                                                     cycle_length=2))


@case(S, "csv_reader_dataset(trace='no'): refused naming trace", ("trace",))
def flag_csv_trace(d):
    p, st = _csv(d)
    return list(resolve("csv", "csv_reader_dataset")(p, stats=st, label="y", trace="no"))


def _parquet(d: Path, cols: dict, name: str = "t.parquet") -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = d / name
    pq.write_table(pa.table(cols), p)
    return str(p)


@case(S, "parquet_dataset(n_readers=2, cycle_length=2): refused naming both",
      ("n_readers", "cycle_length"))
def knob_parquet_twice(d):
    p = _parquet(d, {"x": [1.0, 2.0], "y": [0, 1]})
    return list(resolve("parquet", "parquet_dataset")(p, n_readers=2, cycle_length=2))


# Keras' words
def _keras(name, kw, desc, names, ok=None, either=False):
    def fn(d):
        return direct(vids(d), **kw)
    fn.__name__ = name
    case(S, f"direct reader {desc}", names, ok=ok, either=either)(fn)


_keras("keras_interpolation", {"interpolation": "bilinear", "frame_size": (8, 8)},
       "interpolation='bilinear' (Keras' word): accepted (6) or refused naming it",
       ("interpolation",), ok=n_is(6), either=True)
_keras("keras_sequence_length", {"sequence_length": 4},
       "sequence_length=4 (Keras' timeseries word): refused pointing to clip_len",
       ("clip_len",))
_keras("keras_data_format", {"data_format": "channels_first"},
       "data_format='channels_first': refused naming data_format", ("data_format",))
_keras("keras_crop_and_pad", {"crop_to_aspect_ratio": True, "pad_to_aspect_ratio": True,
                              "frame_size": (8, 8)},
       "crop_to_aspect_ratio and pad_to_aspect_ratio both True: refused naming both",
       ("pad_to_aspect_ratio",))
_keras("keras_binary_three", {"label_mode": "binary"},
       "label_mode='binary' with 3 classes: refused naming label_mode", ("label_mode",))
_keras("keras_rgba", {"color_mode": "rgba"},
       "color_mode='rgba' (Keras takes it for images): refused naming color_mode",
       ("color_mode",))
_keras("keras_shuffle_files", {"shuffle_files": True},
       "shuffle_files=True (tfds' word): refused naming it", ("shuffle_files",))


@case(S, "direct reader validation_split=0.5, subset='both', seed=1: Keras' pair of datasets",
      ok=lambda g: g is True)
def keras_subset_both(d):
    got = resolve("video", "video_dataset_from_directory")(
        vids(d), clip_len=4, batch_size=2, validation_split=0.5, subset="both", seed=1,
        verbose=False)
    return isinstance(got, tuple) and len(got) == 2


@case(S, "write_video_shards(image_size=(8,8)) (Keras' word): refused pointing to frame_size",
      ("frame_size",))
def keras_convert_image_size(d):
    return convert(vids(d), d / "o", image_size=(8, 8))


@case(S, "clip_dataset(image_size=(8,8)) (Keras' word): refused pointing to frame_size",
      ("frame_size",))
def keras_clip_image_size(d):
    return clips(shards(d) / "train", image_size=(8, 8))


@case(S, "clips_to_predict(image_size=(8,8)) (Keras' word): refused pointing to frame_size",
      ("frame_size",))
def keras_predict_image_size(d):
    return predict(first_mp4(vids(d)), clip_len=4, image_size=(8, 8))


# ------------------------------------------------------------------ numbers
def _csv_features(d: Path, text: str, parse: str = "line", **kw):
    p = d / "n.csv"
    p.write_text(text)
    st = resolve("csv", "column_stats")(str(p), **kw)
    ds = resolve("csv", "csv_reader_dataset")(str(p), stats=st, label="y", parse=parse,
                                              shuffle_buffer_size=None, batch_size=64)
    return np.concatenate([np.asarray(x).reshape(len(np.asarray(y)), -1) for x, y in ds])


def _finite_varied(x):
    x = np.asarray(x, np.float64)
    return bool(np.isfinite(x).all()) and bool((x.std(axis=0) > 0).all())


def _rows(values):
    return "x,z,y\n" + "".join(f"{v},{i % 3},{i % 2}\n" for i, v in enumerate(values))


VALUES = [1.5, 2.5, 3.0, 4.5, 2.0, 1.0, 3.5, 2.2]
for _mode in ("line", "arrow"):
    for _name, _vals, _desc in [
        ("sentinel_999e99", VALUES[:4] + ["9.99e99"] + VALUES[4:], "a 9.99e99 sentinel"),
        ("beyond_f32", VALUES[:4] + ["1e39"] + VALUES[4:], "a 1e39 (beyond float32)"),
        ("neg_beyond_f32", VALUES[:4] + ["-3.5e38"] + VALUES[4:], "a -3.5e38"),
        ("Infinity_word", VALUES[:4] + ["Infinity"] + VALUES[4:], "the word 'Infinity'"),
    ]:
        def _fn(d, _vals=_vals, _mode=_mode):
            return _csv_features(d, _rows(_vals), parse=_mode)
        _fn.__name__ = f"csv_{_mode}_{_name}"
        case(N, f"CSV parse={_mode!r}, column x with {_desc}: features finite and varied "
             "(or refused naming the value/column)", ("n.csv", "x"), ok=_finite_varied,
             either=True)(_fn)


@case(N, "column_stats of a 9.99e99 sentinel column: a mean float32 can hold",
      ok=lambda g: abs(g) < 3.4e38)
def stats_sentinel_mean(d):
    p = d / "n.csv"
    p.write_text(_rows(VALUES + [9.99e99]))
    st = resolve("csv", "column_stats")(str(p))
    col = st["x"] if hasattr(st, "__getitem__") else st.columns["x"]
    return float(getattr(col, "mean", col))


@case(N, "CSV with a numbers column written '1_000' (Python's float takes it, CSV readers "
      "do not): one rule, refused naming the file, or read as 1000",
      ("n.csv", "1_000"), ok=lambda g: bool(np.isfinite(np.asarray(g)).all()), either=True)
def csv_underscore_number(d):
    return _csv_features(d, _rows(VALUES[:3] + ["1_000"] + VALUES[3:]))


@case(N, "CSV with a Unicode minus '−5' in a numbers column: refused naming the value, or "
      "the column read as text", ("n.csv", "−5"), ok=lambda g: bool(np.isfinite(g).all()),
      either=True)
def csv_unicode_minus(d):
    return _csv_features(d, _rows(VALUES[:3] + ["−5"] + VALUES[3:]))


@case(N, "CSV with an all-NaN column beside good ones: features finite (or refused naming "
      "the column)", ("x",), ok=lambda g: bool(np.isfinite(np.asarray(g)).all()), either=True)
def csv_all_nan_column(d):
    return _csv_features(d, _rows(["nan"] * 8))


@case(N, "CSV with a constant column (std 0): features finite",
      ok=lambda g: bool(np.isfinite(np.asarray(g)).all()))
def csv_constant_column(d):
    return _csv_features(d, _rows([7.0] * 8))


@case(N, "CSV with a 1e39 label: refused naming the file (float32 makes it inf)", ("n.csv",))
def csv_label_beyond_f32(d):
    p = d / "n.csv"
    p.write_text("x,y\n" + "".join(f"{i},{'1e39' if i == 3 else i}\n" for i in range(8)))
    st = resolve("csv", "column_stats")(str(p))
    ds = resolve("csv", "csv_reader_dataset")(str(p), stats=st, label="y",
                                              shuffle_buffer_size=None)
    return [float(v) for _, y in ds for v in np.asarray(y).ravel()]


@case(N, "CSV with a subnormal 1e-45 value: read (finite)",
      ok=lambda g: bool(np.isfinite(np.asarray(g)).all()))
def csv_subnormal(d):
    return _csv_features(d, _rows(VALUES[:3] + ["1e-45"] + VALUES[3:]))


def _pq_read(p, **kw):
    ds = resolve("parquet", "parquet_dataset")(p, shuffle_buffer_size=None, batch_size=64, **kw)
    out = []
    for el in ds:
        feats = el[0] if isinstance(el, tuple) else el
        out.append(np.asarray(feats["x"], np.float64))
    return np.concatenate(out)


@case(N, "Parquet float64 column x with 1e39: no inf in what the model gets (missing, or "
      "refused naming x)", ("x",), ok=lambda g: not np.isinf(g).any(), either=True)
def parquet_beyond_f32(d):
    return _pq_read(_parquet(d, {"x": [1.0, 1e39, 2.0], "y": [0, 1, 0]}))


@case(N, "Parquet float64 column x with a 9.99e99 sentinel: no inf (missing, or refused "
      "naming x)", ("x",), ok=lambda g: not np.isinf(g).any(), either=True)
def parquet_sentinel(d):
    return _pq_read(_parquet(d, {"x": [1.0, 9.99e99, 2.0], "y": [0, 1, 0]}))


@case(N, "Parquet label y of 1e39 (float64): refused naming y/the file", ("y", "t.parquet"))
def parquet_label_beyond_f32(d):
    p = _parquet(d, {"x": [1.0, 2.0, 3.0], "y": [0.0, 1e39, 1.0]})
    ds = resolve("parquet", "parquet_dataset")(p, label="y", shuffle_buffer_size=None)
    return [float(v) for _, y in ds for v in np.asarray(y).ravel()]


@case(N, "Parquet column_stats of a column with 1e39: a mean float32 can hold (or refused "
      "naming x)", ("x",), ok=lambda g: abs(g) < 3.4e38, either=True)
def parquet_stats_beyond_f32(d):
    st = resolve("parquet", "column_stats")(_parquet(d, {"x": [1.0, 1e39, 2.0]}))
    col = st["x"] if hasattr(st, "__getitem__") else st.columns["x"]
    return float(getattr(col, "mean", col))


@case(N, "Parquet float16 column: read as float32, values kept",
      ok=lambda g: np.allclose(g, [1.5, 2.5]))
def parquet_float16(d):
    import pyarrow as pa
    return _pq_read(_parquet(d, {"x": pa.array(np.array([1.5, 2.5], np.float16))}))


@case(N, "Parquet int64 column with 2**62 + 1: read exactly",
      ok=lambda g: int(g[1]) == 2**62 + 1)
def parquet_int_big(d):
    ds = resolve("parquet", "parquet_dataset")(_parquet(d, {"x": [1, 2**62 + 1]}),
                                               shuffle_buffer_size=None)
    return np.concatenate([np.asarray(el["x"]) for el in ds]).tolist()


@case(N, "Parquet decimal128 column: read as numbers, or refused naming the column",
      ("x", "decimal"), ok=lambda g: np.allclose(g, [1.25, 2.5]), either=True)
def parquet_decimal(d):
    import decimal

    import pyarrow as pa
    return _pq_read(_parquet(d, {"x": pa.array([decimal.Decimal("1.25"), decimal.Decimal("2.5")],
                                               pa.decimal128(5, 2))}))


@case(N, "Parquet timestamp column: refused naming the column (or read as numbers)",
      ("x", "timestamp"), ok=lambda g: len(g) == 2, either=True)
def parquet_timestamp(d):
    import pyarrow as pa
    return _pq_read(_parquet(d, {"x": pa.array([1, 2], pa.timestamp("s"))}))


@case(N, "Parquet float column with a null and a NaN: both missing (nan)",
      ok=lambda g: int(np.isnan(g).sum()) == 2)
def parquet_null_and_nan(d):
    import pyarrow as pa
    return _pq_read(_parquet(d, {"x": pa.array([1.0, None, float("nan")], pa.float64())}))


# ------------------------------------------------------------------ checkers
def _cmp(answer_fn, reference_fn, **kw):
    def fn(d):
        return resolve("exercises", "compare")(answer_fn(), reference_fn(), **kw)
    return fn


def _tf():
    import tensorflow as tf
    return tf


WRONG = lambda fb: not bool(fb)  # noqa: E731
RIGHT = lambda fb: bool(fb)  # noqa: E731

for _name, _a, _r, _ok, _desc, _names in [
    ("cmp_str_vs_bytes_list", lambda: ["a", "b"], lambda: [b"a", b"b"], RIGHT,
     "['a','b'] against [b'a', b'b']: correct (tf.string is bytes: text compared as text)",
     ()),
    ("cmp_str_vs_other_bytes", lambda: ["a", "b"], lambda: [b"a", b"c"], WRONG,
     "['a','b'] against [b'a', b'c']: judged wrong", ()),
    ("cmp_scalar_tensor", lambda: _tf().constant(5), lambda: 5, RIGHT,
     "a scalar tensor 5 against 5: correct", ()),
    ("cmp_0d_array", lambda: np.array(5), lambda: 5, RIGHT, "np.array(5) against 5: correct",
     ()),
    ("cmp_np_int64", lambda: np.int64(5), lambda: 5, RIGHT, "np.int64(5) against 5: correct",
     ()),
    ("cmp_bool_vs_int", lambda: True, lambda: 1, WRONG, "True against 1: judged wrong", ()),
    ("cmp_float_close", lambda: 0.1 + 0.2, lambda: 0.3, RIGHT, "0.1+0.2 against 0.3: correct",
     ()),
    ("cmp_nan_nan", lambda: [float("nan"), 1.0], lambda: [float("nan"), 1.0], RIGHT,
     "[nan, 1.0] against itself: correct", ()),
    ("cmp_str_label_vs_int", lambda: [("a/x.mp4", "0")], lambda: [("a/x.mp4", 0)], WRONG,
     "[('a/x.mp4', '0')] against [('a/x.mp4', 0)]: judged wrong (str label)", ()),
    ("cmp_float_index", lambda: [0.9, 2.0], lambda: [0, 2], WRONG,
     "[0.9, 2.0] against [0, 2] (indices): judged wrong", ()),
    ("cmp_none_answer", lambda: None, lambda: [1, 2], WRONG,
     "None against [1, 2]: judged wrong saying None / return", ()),
    ("cmp_generator", lambda: (x for x in [1, 9, 25]), lambda: [1, 9, 25], RIGHT,
     "a generator of the right values: correct", ()),
    ("cmp_set_any", lambda: {1, 9, 25}, lambda: [25, 9, 1], RIGHT,
     "a set against a list, order='any': correct", ()),
    ("cmp_dup_any", lambda: [1, 1, 9], lambda: [1, 9, 9], WRONG,
     "[1,1,9] against [1,9,9], order='any': judged wrong", ()),
    ("cmp_nested_tuple_list", lambda: [(1, 2), (3, 4)], lambda: [[1, 2], [3, 4]], WRONG,
     "pairs as tuples against lists: judged wrong (a tuple is a structure in tf.data)", ()),
    ("cmp_dict_keys", lambda: [{"a": 1}], lambda: [{"b": 1}], WRONG,
     "[{'a':1}] against [{'b':1}]: judged wrong naming the key", ()),
    ("cmp_string_answer", lambda: "1,9,25", lambda: [1, 9, 25], WRONG,
     "the string '1,9,25' against [1, 9, 25]: judged wrong", ()),
    ("cmp_dataset_vs_list", lambda: _tf().data.Dataset.from_tensor_slices([1, 9, 25]),
     lambda: [1, 9, 25], RIGHT, "a dataset of the right ints against a list: correct", ()),
    ("cmp_inf_vs_big", lambda: [float("inf")], lambda: [1e308], WRONG,
     "[inf] against [1e308]: judged wrong", ()),
    ("cmp_ragged", lambda: [[1], [2, 3]], lambda: [[1], [2, 3]], RIGHT,
     "ragged lists against themselves: correct", ()),
    ("cmp_float32_vs_64", lambda: np.float32([0.1, 0.2]), lambda: [0.1, 0.2], RIGHT,
     "float32 [0.1, 0.2] against Python floats: correct", ()),
]:
    _kw = {"order": "any"} if _name in ("cmp_set_any", "cmp_dup_any") else {}
    _fn = _cmp(_a, _r, **_kw)
    _fn.__name__ = _name
    case(C, f"compare: {_desc}", _names, ok=_ok, either=True)(_fn)


@case(C, "compare(order='ANY') (capitals): refused naming order", ("order",))
def cmp_order_caps(d):
    return resolve("exercises", "compare")([1], [1], order="ANY")


@case(C, "compare of two pandas DataFrames that differ in one cell: judged wrong (or "
      "refused naming DataFrame)", ("dataframe",), ok=WRONG, either=True)
def cmp_dataframes(d):
    import pandas as pd
    return resolve("exercises", "compare")(pd.DataFrame({"a": [1, 2]}),
                                           pd.DataFrame({"a": [1, 3]}))


def _chk(key, name, answer, desc, ok=WRONG, names=(), args=()):
    def fn(d):
        return resolve("exercises", "check")(name, answer() if callable(answer) and
                                             getattr(answer, "_lazy", False) else answer, *args)
    fn.__name__ = "check_" + key
    case(C, f"check({name!r}, {desc})", names, ok=ok, either=True)(fn)


def _lazy(f):
    f._lazy = True
    return f


_chk("floats", "odd_squares", [1.0, 9.0, 25.0, 49.0, 81.0],
     "floats 1.0 .. 81.0: judged wrong naming "
     "float", names=("float",))
_chk("strings", "odd_squares", ["1", "9", "25", "49", "81"], "strings '1' .. '81': judged wrong")
_chk("numpy", "odd_squares", _lazy(lambda: np.array([1, 9, 25, 49, 81])), "a NumPy array: correct",
     ok=RIGHT)
_chk("dataset_right", "odd_squares", _lazy(lambda: _tf().data.Dataset.range(10).filter(
    lambda x: x % 2 == 1).map(lambda x: x * x)), "the right dataset: correct", ok=RIGHT)
_chk("batched_padded", "odd_squares", _lazy(lambda: _tf().data.Dataset.from_tensor_slices(
    [[1, 9], [25, 49], [81, 0]])), "batched, with a padding 0: judged wrong")
_chk("returns_none", "halve_and_round", lambda x: None,
     "a function returning None: judged wrong saying "
     "return", names=("return", "None"))
_chk("floor_div", "halve_and_round", lambda x: x // 2, "floor division: judged wrong")
_chk("raises_keyerror", "halve_and_round", lambda x: {}["k"],
     "a function raising KeyError: told as yours",
     names=("KeyError", "your"))
_chk("name_capitals", "Odd_Squares", [1, 9, 25, 49, 81],
     "the name in other capitals: refused naming it",
     names=("Odd_Squares",))


@case(C, "check('video_listing', None, folder, 0) (nothing returned): judged wrong saying "
      "return / None", ("return", "None"), ok=WRONG, either=True)
def check_listing_none(d):
    return resolve("exercises", "check")("video_listing", None, str(vids(d)), 0)


@case(C, "check('video_listing', a function lacking a key, folder, 0): judged wrong naming "
      "the key", ("key", "paths", "labels"), ok=WRONG, either=True)
def check_listing_missing_key(d):
    return resolve("exercises", "check")("video_listing", lambda folder, seed: {}, str(vids(d)),
                                         0)


# ------------------------------------------------------------------ doctor, input_wait, bench
def _ds():
    tf = _tf()
    return tf.data.Dataset.range(100).map(lambda x: tf.cast(x, tf.float32) * 2).batch(4)


def _diag(**kw):
    def fn(d):
        return resolve("doctor", "diagnose")(_ds(), **{"seconds": 0.05, "repeats": 1,
                                                       "advise": False, **kw})
    return fn


for _name, _kw, _arg in [
    ("diag_advise_no", {"advise": "no"}, "advise"),
    ("diag_memory_no", {"memory": "no"}, "memory"),
    ("diag_progress_no", {"progress": "no"}, "progress"),
    ("diag_seconds_zero", {"seconds": 0}, "seconds"),
    ("diag_seconds_nan", {"seconds": math.nan}, "seconds"),
    ("diag_repeats_zero", {"repeats": 0}, "repeats"),
    ("diag_repeats_float", {"repeats": 2.5}, "repeats"),
    ("diag_step_time_negative", {"step_time": -0.1}, "step_time"),
    ("diag_step_time_inf", {"step_time": math.inf}, "step_time"),
    ("diag_budget_zero", {"budget_s": 0}, "budget_s"),
    ("diag_budget_str", {"budget_s": "60"}, "budget_s"),
]:
    _fn = _diag(**_kw)
    _fn.__name__ = _name
    case(D, f"diagnose({_arg}={_kw[_arg]!r}): refused naming {_arg}", (_arg,), timeout=60)(_fn)


@case(D, "diagnose(a list, not a dataset): refused naming dataset", ("dataset",))
def diag_list(d):
    return resolve("doctor", "diagnose")([1, 2, 3], seconds=0.05)


@case(D, "diagnose(an empty dataset): refused saying it is empty", ("empty", "no element"),
      timeout=60)
def diag_empty(d):
    return resolve("doctor", "diagnose")(_tf().data.Dataset.range(0), seconds=0.05, repeats=1,
                                         advise=False)


def _model():
    tf = _tf()
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    m.compile("sgd", "mse")
    return m


def _xy(n=64, width=4):
    tf = _tf()
    return tf.data.Dataset.from_tensor_slices((np.ones((n, width), np.float32),
                                               np.ones((n, 1), np.float32))).batch(8)


def _iw(name, kw, arg, model=None, data=None):
    def fn(d):
        return resolve("doctor_wait", "input_wait")(model() if model else _model(),
                                                    data() if data else _xy(), **kw)
    fn.__name__ = name
    case(D, f"input_wait({arg}): refused naming it", (arg.split("=")[0],), timeout=90)(fn)


_iw("wait_steps_one", {"steps": 1}, "steps=1")
_iw("wait_steps_str", {"steps": "40"}, "steps='40'")
_iw("wait_warmup_negative", {"warmup": -1}, "warmup=-1")
_iw("wait_rounds_zero", {"rounds": 0}, "rounds=0")
_iw("wait_cached_zero", {"cached_batches": 0}, "cached_batches=0")
_iw("wait_array_data", {"steps": 4}, "dataset=a NumPy array",
    data=lambda: np.ones((8, 4), np.float32))
_iw("wait_wrong_width", {"steps": 4}, "dataset= batches of width 3 for a width-4 model",
    data=lambda: _xy(width=3))


@case(D, "input_wait(model not compiled): refused saying compile", ("compile",), timeout=90)
def wait_not_compiled(d):
    tf = _tf()
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    return resolve("doctor_wait", "input_wait")(m, _xy(), steps=4)


def _bench(name, argv, names, desc):
    def fn(d):
        main = resolve("bench", "main")
        return cli(main, [a.replace("{d}", str(d)) for a in argv])
    fn.__name__ = name
    case(D, f"python -m datakit.bench {desc}", names, timeout=45)(fn)


_bench("bench_batch_zero", ["--batch", "0"], ("--batch", "batch"), "--batch 0")
_bench("bench_batch_sizes_bad", ["--batch-sizes", "8,x"], ("--batch-sizes", "batch"),
       "--batch-sizes 8,x")
_bench("bench_batch_sizes_empty", ["--batch-sizes", ""], ("--batch-sizes", "batch"),
       "--batch-sizes ''")
_bench("bench_batches_negative", ["--batches", "-1"], ("--batches",), "--batches -1")
_bench("bench_steps_zero", ["--steps", "0"], ("--steps",), "--steps 0")
_bench("bench_folder_missing", ["{d}/gone"], ("gone",), "a folder that does not exist")
_bench("bench_model_missing", ["--model", "{d}/none.keras"], ("none.keras",),
       "--model a file that does not exist")
_bench("bench_json_missing_dir", ["--json", "{d}/no/such/out.json", "--batches", "-3"],
       ("--batches", "out.json"), "--json in a missing folder, with --batches -3")


@case(D, "python -m datakit.bench --help: exits 0 quickly", ok=lambda g: g is True, timeout=45)
def bench_help(d):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            resolve("bench", "main")(["--help"])
    except SystemExit as e:
        return e.code in (0, None) and "usage" in out.getvalue().lower()
    return False
