"""The converter run from anywhere, resumed by content, and truncated files skipped and counted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.readers import video
from datakit.readers.video.converter import generations
from datakit.readers.video.decoding import decoding

NO_GUARD = """
import sys
from datakit.readers import video
r = video.write_video_shards(sys.argv[1], sys.argv[2], frame_size=(16, 16), processes=2,
                             progress=False)
print("converted", r["converted"])
"""

#: A plain conversion script, then its rerun (which finds the set complete), reporting
#: whether TensorFlow was loaded: neither needs it, the workers nor the process itself.
WITHOUT_TENSORFLOW = """
import sys
from datakit.readers import video
kw = dict(frame_size=(16, 16), validation_split=0.5, seed=1, processes=2, progress=False)
first = video.write_video_shards(sys.argv[1], sys.argv[2], **kw)
again = video.write_video_shards(sys.argv[1], sys.argv[2], **kw)
print(first["converted"], again["converted"], "tensorflow" in sys.modules)
"""


def _folder(d: Path, names=("a", "b"), per=2):
    for c, name in enumerate(names):
        for k in range(per):
            frames = video.make_video(c, size=16, min_frames=10, max_frames=10, seed=k).frames
            video.write_video(frames, d / name / f"{name}{k}.mp4")
    return d


def _conversion_fails_for(monkeypatch, part_of_path: str) -> None:
    """In-process conversion (processes=1) fails for each video whose path holds the text,
    after its first JPEG (its part being written by then)."""
    from datakit.readers.video.converter import part_files
    real = part_files.iter_jpegs

    def broken(info, **k):
        if part_of_path not in info.path:
            return real(info, **k)

        def first_then_fail():
            yield next(real(info, **k))
            raise DataError(info.path, "decoding failed (test)")
        return first_then_fail()

    monkeypatch.setattr(part_files, "iter_jpegs", broken)


def _env():
    import os
    return dict(os.environ, PYTHONPATH=str(Path(video.__file__).parents[3]))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", ["script", "dash_c"])
def test_converter_runs_from_a_script_without_a_main_guard(tmp_path, how):
    d = _folder(tmp_path / "v")
    script = tmp_path / "convert_my_videos.py"
    script.write_text(NO_GUARD)
    cmd = [sys.executable, str(script)] if how == "script" else [sys.executable, "-c", NO_GUARD]
    run = subprocess.run(cmd + [str(d), str(tmp_path / "out")], capture_output=True, text=True,
                         timeout=150, env=_env(), cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "converted 4" in run.stdout and run.stdout.count("converted") == 1  # script ran once
    ds = video.clip_dataset(tmp_path / "out" / "train", clip_len=4)
    assert sorted(int(y) for _, ys in ds for y in ys) == [0, 0, 1, 1]


@pytest.mark.timeout(180)
def test_a_conversion_script_never_imports_tensorflow(tmp_path):
    """The workers write their parts without TensorFlow, and the process that hands them out
    needs it no more: a script converting a folder (with a split, then rerun) starts about
    4 s sooner without its import."""
    d, out = _folder(tmp_path / "v"), tmp_path / "out"
    run = subprocess.run([sys.executable, "-c", WITHOUT_TENSORFLOW, str(d), str(out)],
                         capture_output=True, text=True, timeout=150, env=_env(), cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines()[-1] == "4 0 False", run.stdout
    assert len(manifest.read_manifest(out / "train")["sets"]["videos"]["videos"]) == 2


@pytest.mark.timeout(240)
def test_a_resume_converts_again_the_parts_a_power_cut_left_short_or_damaged(tmp_path,
                                                                             monkeypatch):
    import tensorflow as tf

    from datakit.readers.records.record_framing import record_offsets
    from datakit.readers.video.converter import conversion
    d = _folder(tmp_path / "v")
    video.write_video(video.make_video(0, size=16, min_frames=140, max_frames=140,
                                       seed=4).frames, d / "a" / "a2.mp4")  # 3 records
    out = tmp_path / "out"

    def stopped(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:  # every part written, then stopped before the commit
        m.setattr(conversion, "_commit", stopped)
        with pytest.raises(KeyboardInterrupt):
            video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    part = {int(p.name[:6]): p for p in (out / ".parts").glob("*.tfrecord")}
    assert sorted(part) == [0, 1, 2, 3, 4]  # a0, a1, a2, b0, b1
    part[0].write_bytes(part[0].read_bytes()[:len(part[0].read_bytes()) // 2])  # cut short
    a2 = part[2].read_bytes()
    part[2].write_bytes(a2[:record_offsets(part[2])[2]])  # cut where its last record starts
    b0 = bytearray(part[3].read_bytes())
    b0[len(b0) // 2] ^= 0xFF  # a byte of a JPEG changed: its record's CRC fails
    part[3].write_bytes(bytes(b0))
    part[4].write_bytes(b"")  # renamed, never written back
    from datakit.readers.video.converter import part_files
    real, converted = part_files.iter_jpegs, []

    def counted(info, **k):
        converted.append(Path(info.path).name)
        return real(info, **k)

    monkeypatch.setattr(part_files, "iter_jpegs", counted)
    r = video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    assert (r["reused"], r["converted"]) == (1, 4)
    assert sorted(converted) == ["a0.mp4", "a2.mp4", "b0.mp4", "b1.mp4"]  # a1's was whole
    rows = manifest.read_manifest(out / "train")["sets"]["videos"]["videos"]
    frames = {v["id"]: 0 for v in rows}
    for shard in sorted((out / "train").glob("videos-*.tfrecord")):
        for rec in tf.data.TFRecordDataset(str(shard)):  # CRCs checked as it reads
            se = tf.train.SequenceExample.FromString(rec.numpy())
            frames[se.context.feature["id"].int64_list.value[0]] += len(
                se.feature_lists.feature_list["frames"].feature)
    assert frames == {v["id"]: v["frames"] for v in rows} and frames[2] == 140


@pytest.mark.timeout(180)
def test_a_run_deletes_the_parts_dead_workers_left_half_written(tmp_path, monkeypatch):
    from datakit.readers.video.converter import conversion
    d, out = _folder(tmp_path / "v"), tmp_path / "out"

    def stopped(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(conversion, "_commit", stopped)
    with pytest.raises(KeyboardInterrupt):  # every part written, stopped before the commit
        video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = f".000001-0123456789abcdef.tfrecord.{int(gone.stdout)}-1a2b3c4d.tmp"
    live = f".000002-0123456789abcdef.tfrecord.{os.getppid()}-1a2b3c4d.tmp"  # (a running PID)
    for name in (dead, live):
        (out / ".parts" / name).write_bytes(b"half a video")  # as a killed worker leaves it
    with pytest.raises(KeyboardInterrupt):
        video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    assert not (out / ".parts" / dead).exists() and (out / ".parts" / live).exists()
    assert len(list((out / ".parts").glob("*.tfrecord"))) == 4  # the parts themselves kept


@pytest.mark.timeout(240)
def test_resume_reuses_only_parts_whose_source_and_options_are_unchanged(tmp_path):
    d = _folder(tmp_path / "v")
    out = tmp_path / "out"
    parts = out / ".parts"
    calls, limit = [], [3]

    def stop_after(*a, **k):  # a conversion stopped after limit[0] parts
        calls.append(1)
        if len(calls) > limit[0]:
            raise KeyboardInterrupt
        return real(*a, **k)

    from datakit.readers.video.converter import part_files
    real = part_files.iter_jpegs
    part_files.iter_jpegs = stop_after
    try:
        with pytest.raises(KeyboardInterrupt):
            video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    finally:
        part_files.iter_jpegs = real
    assert len(list(parts.glob("*.tfrecord"))) == 3 and not (out / "train").exists()
    (d / "a" / "a0.mp4").unlink()  # removed (its part was finished)
    edited = d / "a" / "a1.mp4"  # edited: another video, same name
    video.write_video(video.make_video(3, size=16, min_frames=14, max_frames=14,
                                       seed=9).frames, edited)
    video.write_video(video.make_video(2, size=16, min_frames=10, max_frames=10, seed=5).frames,
                      d / "b" / "0first.mp4")  # sorts first in its class
    r = video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False,
                                 class_names=["b", "a"], seed=3)
    assert r["reused"] == 1 and r["converted"] == 3  # b0 kept, with its new id and label
    rows = manifest.read_manifest(out / "train")["sets"]["videos"]["videos"]
    assert {Path(v["source"]).name: v["label"] for v in rows} == {
        "0first.mp4": 0, "b0.mp4": 0, "b1.mp4": 0, "a1.mp4": 1}
    assert [v["frames"] for v in rows if v["source"] == str(edited)] == [14]
    for v in rows:  # the manifest equals the records: each row's facts are its file's now
        st = Path(v["source"]).stat()
        assert (v["size"], v["mtime_ns"]) == (st.st_size, st.st_mtime_ns)
    got = sorted((int(x["id"]), int(x["label"]))
                 for x in video.clip_dataset(out / "train", clip_len=4, with_ids=True,
                                             batch_size=1).unbatch())
    assert got == sorted((v["id"], v["label"]) for v in rows) and len(got) == 4
    # an unchanged rerun after a stop reuses every part that still matches
    part_files.iter_jpegs = stop_after
    calls.clear()
    limit[0] = 2
    try:
        with pytest.raises(KeyboardInterrupt):
            video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    finally:
        part_files.iter_jpegs = real
    r = video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    assert (r["reused"], r["converted"]) == (2, 2)


def _index_first_mp4(path: Path, frames: int = 30) -> Path:
    import av

    rgb = np.random.default_rng(0).integers(0, 255, (frames, 64, 64, 3), np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w", format="mp4", options={"movflags": "faststart"}) as out:
        s = out.add_stream("h264", rate=15)
        s.width = s.height = 64
        s.pix_fmt, s.options = "yuv420p", {"g": "8"}
        for f in rgb:
            out.mux(s.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
        out.mux(s.encode())
    return path


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cut", [0.3, 0.6, 0.97])
def test_an_index_first_mp4_cut_short_is_found_by_the_probe(tmp_path, cut):
    path = _index_first_mp4(tmp_path / "full.mp4")
    assert path.read_bytes()[4:8] == b"ftyp" and b"moov" in path.read_bytes()[:64]
    assert decoding.probe(path).frames == 30
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * cut)])
    with pytest.raises(DataError, match="truncated|damaged|FFmpeg can open") as e:
        decoding.probe(path)
    assert e.value.path == str(path)


@pytest.mark.timeout(180)
def test_truncated_files_are_skipped_by_the_converter_and_listed(tmp_path):
    d = tmp_path / "v"
    for name in ("a", "b"):
        _index_first_mp4(d / name / f"{name}.mp4")
    cut = _index_first_mp4(d / "a" / "cut.mp4")
    cut.write_bytes(cut.read_bytes()[:int(cut.stat().st_size * 0.97)])
    with pytest.raises(DataError, match="truncated") as e:
        video.write_video_shards(d, tmp_path / "o1", processes=1, progress=False)
    assert e.value.path == str(cut)
    r = video.write_video_shards(d, tmp_path / "o2", processes=2, progress=False,
                                 on_bad_file="skip")
    assert [p for p, _ in r["skipped"]] == [str(cut)]
    assert "truncated" in r["skipped"][0][1] and "on_bad_file" not in r["skipped"][0][1]
    info = manifest.read_manifest(r["train"])["sets"]["videos"]
    assert [p for p, _ in info["skipped"]] == [str(cut)] and len(info["videos"]) == 2


@pytest.mark.timeout(180)
def test_a_file_truncated_at_the_end_is_skipped_and_counted_by_the_direct_reader(tmp_path):
    d = tmp_path / "v"
    for name in ("a", "b"):
        _index_first_mp4(d / name / f"{name}.mp4")
    cut = _index_first_mp4(d / "a" / "cut.mp4")
    cut.write_bytes(cut.read_bytes()[:int(cut.stat().st_size * 0.97)])  # its index is whole
    kw = dict(clip_len=4, batch_size=1, shuffle=False, verbose=False)
    with pytest.raises(DataError, match="truncated") as e:
        video.video_dataset_from_directory(d, **kw)
    assert e.value.path == str(cut)
    ds = video.video_dataset_from_directory(d, on_bad_file="skip", **kw)
    assert [p for p, _ in ds.skipped] == [str(cut)] and "on_bad_file" not in ds.skipped[0][1]
    assert ds.file_paths == [str(d / "a" / "a.mp4"), str(d / "b" / "b.mp4")]
    for _ in range(2):  # every epoch reads the two whole videos, never an error
        assert sorted(int(y) for _, ys in ds for y in ys) == [0, 1]


@pytest.mark.timeout(180)
def test_a_video_that_fails_while_converting_is_skipped_and_listed(tmp_path, capsys,
                                                                  monkeypatch):
    d = _folder(tmp_path / "v")
    _conversion_fails_for(monkeypatch, "b1.mp4")
    with pytest.raises(DataError, match="decoding failed") as e:
        video.write_video_shards(d, tmp_path / "o1", frame_size=(16, 16), processes=1,
                                 progress=False)
    assert e.value.path.endswith("b1.mp4")
    assert not list((tmp_path / "o1" / ".parts").glob(".*"))  # no part of it, not even begun
    r = video.write_video_shards(d, tmp_path / "o2", frame_size=(16, 16), processes=1,
                                 progress=False, on_bad_file="skip")
    assert [Path(p).name for p, _ in r["skipped"]] == ["b1.mp4"]
    assert "b1.mp4" in capsys.readouterr().out
    rows = manifest.read_manifest(r["train"])["sets"]["videos"]["videos"]
    assert sorted(Path(v["source"]).name for v in rows) == ["a0.mp4", "a1.mp4", "b0.mp4"]
    assert sum(1 for _ in video.clip_dataset(r["train"], clip_len=4, batch_size=1)) == 3


@pytest.mark.timeout(180)
def test_a_file_broken_after_listing_is_named_under_either_mode(tmp_path):
    """``len(ds)`` is fixed when the folder is listed (bad files are found then, so
    ``fit(steps_per_epoch=len(ds))`` holds under ``"skip"``): a file that breaks later
    cannot be left out without a short epoch, so it is an error naming it."""
    d = _folder(tmp_path / "v")
    kw = dict(clip_len=4, batch_size=1, verbose=False, shuffle=False)
    raising = video.video_dataset_from_directory(d, **kw)
    ds = video.video_dataset_from_directory(d, on_bad_file="skip", **kw)
    assert len(ds) == len(raising) == 4 and ds.skipped == []  # 4 videos, batches of 1
    broken = d / "b" / "b1.mp4"
    broken.write_bytes(broken.read_bytes()[:200])  # broken after the folder was listed
    for dataset in (ds, raising):
        with pytest.raises(Exception, match="b1.mp4: changed since the folder was listed"):
            list(dataset)


@pytest.mark.timeout(120)
def test_dangling_and_looping_links_are_named_or_counted(tmp_path):
    d = _folder(tmp_path / "v")
    (d / "a" / "gone.mp4").symlink_to(tmp_path / "nowhere.mp4")
    (d / "b" / "loop.mp4").symlink_to(d / "b" / "loop.mp4")
    with pytest.raises(DataError, match="link that points to nothing") as e:
        video.video_dataset_from_directory(d, clip_len=4, verbose=False)
    assert e.value.path == str(d / "a" / "gone.mp4")
    ds = video.video_dataset_from_directory(d, clip_len=4, verbose=False, on_bad_file="skip")
    assert sorted(p for p, _ in ds.skipped) == [str(d / "a" / "gone.mp4"),
                                                str(d / "b" / "loop.mp4")]
    assert "loops back" in dict(ds.skipped)[str(d / "b" / "loop.mp4")]
    r = video.write_video_shards(d, tmp_path / "out", frame_size=(16, 16), processes=1,
                                 progress=False, on_bad_file="skip")
    assert len(r["skipped"]) == 2


@pytest.mark.parametrize("fps", [0, -1])
def test_fps_zero_or_negative_is_refused_before_any_work(tmp_path, fps):
    with pytest.raises(ValueError, match="fps"):
        video.write_video_shards(tmp_path / "none", tmp_path / "out", fps=fps)


@pytest.mark.timeout(120)
def test_a_worker_that_dies_is_named_never_restarted():
    import os

    from datakit.readers.video.converter.workers import convert_all
    with pytest.raises(DataError, match="worker process died") as e:
        list(convert_all(os._exit, [3, 3], [0, 1], 2))
    assert e.value.path == "3"



@pytest.mark.timeout(120)
@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_worker_killed_is_named_not_another_video_in_flight(at):
    """#60: the pool's break fails every video in flight at once; the error named whichever
    the set of failed futures gave first, not the dead worker's."""
    import signal

    from worker_items import Item, run

    from datakit.readers.video.converter.workers import convert_all
    items = [Item("a.mp4"), Item("b.mp4")]
    items.insert(at, Item("killed.mp4", kill_with=signal.SIGKILL, in_flight=3))
    with pytest.raises(DataError, match="worker process died") as e:
        list(convert_all(run, items, [0, 1, 2], 3))
    assert e.value.path == "killed.mp4"
    assert "killed by SIGKILL" in e.value.reason and "out-of-memory" in e.value.reason
    assert "a.mp4" not in str(e.value) and "b.mp4" not in str(e.value)


@pytest.mark.timeout(120)
def test_a_worker_ended_by_sigterm_lists_every_video_in_flight_as_a_suspect():
    """A worker ended with SIGTERM by hand looks like those the pool ends: not known which
    it was, so each video then in flight is named."""
    import signal

    from worker_items import Item, run

    from datakit.readers.video.converter.workers import convert_all
    items = [Item("a.mp4"), Item("b.mp4"), Item("killed.mp4", signal.SIGTERM, in_flight=3)]
    with pytest.raises(DataError, match="which one is not known") as e:
        list(convert_all(run, items, [0, 1, 2], 3))
    assert "3 then in flight (a.mp4, b.mp4, killed.mp4)" in e.value.reason

INTERRUPTED = """
import sys, time
from pathlib import Path
from datakit.readers import video
from datakit.readers.video.converter.shard_sets import ShardSets

ready, seen = ShardSets.ready, []


def ready_then_wait_for_ctrl_c(self, i):  # a fixed place to press Ctrl-C: 2 videos done
    ready(self, i)
    seen.append(i)
    if len(seen) == 2:
        Path(sys.argv[2], "two-done").touch()
        time.sleep(600)


ShardSets.ready = ready_then_wait_for_ctrl_c
video.write_video_shards(sys.argv[1], sys.argv[2], frame_size=(64, 64), processes=2,
                         progress=False)
"""


@pytest.mark.timeout(240)
def test_ctrl_c_stops_cleanly_and_says_a_rerun_resumes(tmp_path):
    import os
    import signal
    import time

    d = tmp_path / "v"
    video.make_video_folder(d, per_class=3, min_frames=60, max_frames=80, seed=0)
    out = tmp_path / "out"
    # Ctrl-C as a terminal delivers it: a test runner started in the background (`cmd &`
    # in a script) ignores SIGINT, and a child inherits an ignored signal (not a handler).
    terminal = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(d), str(out)],
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                env=_env())
    finally:
        signal.signal(signal.SIGINT, terminal)
    deadline = time.monotonic() + 150
    while not (out / "two-done").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()[1][-2000:]
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode != 0 and "run it again to resume" in err, err[-2000:]
    assert "BrokenPipeError" not in err and "leaked" not in err, err[-2000:]
    r = video.write_video_shards(d, out, frame_size=(64, 64), processes=1, progress=False)
    assert r["reused"] >= 2 and r["reused"] + r["converted"] == 12


@pytest.mark.timeout(180)
def test_a_class_whose_every_video_fails_to_convert_is_an_error_naming_it(tmp_path, capsys,
                                                                           monkeypatch):
    d = _folder(tmp_path / "v")
    _conversion_fails_for(monkeypatch, "/b/")
    with pytest.raises(DataError, match="class 'b' has no video left") as e:
        video.write_video_shards(d, tmp_path / "o", frame_size=(16, 16), processes=1,
                                 progress=False, on_bad_file="skip")
    assert e.value.path.endswith("b") and "b0.mp4: " in str(e.value)  # the file, and why
    assert "see `skipped`" not in str(e.value)  # (the call returned no listing to see)
    out = capsys.readouterr().out
    assert "b0.mp4" in out and "b1.mp4" in out  # each skip printed with its file
    assert not (tmp_path / "o" / "train").exists()  # nothing committed


@pytest.mark.timeout(120)
def test_a_cut_options_file_in_the_parts_folder_means_convert_again(tmp_path):
    d, out = _folder(tmp_path / "v"), tmp_path / "o"
    parts = out / ".parts"
    parts.mkdir(parents=True)
    (parts / "options.json").write_text('{"fps": nu')  # a kill while it was written
    (parts / "000000-0123456789abcdef.tfrecord").write_bytes(b"not a part")
    r = video.write_video_shards(d, out, frame_size=(16, 16), processes=1, progress=False)
    assert (r["converted"], r["reused"]) == (4, 0)
    assert sum(1 for _ in video.clip_dataset(r["train"], clip_len=4, batch_size=1)) == 4


@pytest.mark.timeout(120)
def test_a_rerun_without_a_split_leaves_no_earlier_validation_set(tmp_path):
    d, out = _folder(tmp_path / "v"), tmp_path / "o"
    kw = dict(frame_size=(16, 16), processes=1, progress=False)
    first = video.write_video_shards(d, out, validation_split=0.5, seed=1, **kw)
    assert first["validation"] is not None and (out / "validation").exists()
    again = video.write_video_shards(d, out, **kw)
    assert again["validation"] is None and not (out / "validation").exists()
    assert sum(1 for _ in video.clip_dataset(again["train"], clip_len=4, batch_size=1)) == 4


def _sets_read(out):
    """The video ids each set of ``out`` gives a reader, and the run each set's manifest names."""
    read = {}
    for part in ("train", "validation"):
        ds = video.clip_dataset(out / part, clip_len=4, batch_size=1, training=False,
                                with_ids=True)
        run = manifest.read_manifest(generations.current(out / part))["sets"]["videos"]["run"]
        read[part] = (sorted(int(b["id"][0]) for b in ds), run)
    return read


def test_a_rerun_stopped_anywhere_leaves_the_whole_old_pair_or_the_whole_new_one(tmp_path,
                                                                                 monkeypatch):
    """Another seed moves videos between train/ and validation/: a reader must never get
    one set of each run (videos in both, or in neither)."""
    d, out = _folder(tmp_path / "v", per=3), tmp_path / "o"
    kw = dict(frame_size=(16, 16), processes=1, progress=False, validation_split=0.5)
    video.write_video_shards(d, out, seed=1, **kw)
    old = _sets_read(out)
    write_set, rename = manifest.write_set, Path.rename

    def stop_while_writing_validation(folder, *args, **kwargs):
        if Path(folder).name == "validation":
            raise KeyboardInterrupt  # killed before the commit point, train/ written
        return write_set(folder, *args, **kwargs)

    monkeypatch.setattr(manifest, "write_set", stop_while_writing_validation)
    with pytest.raises(KeyboardInterrupt):
        video.write_video_shards(d, out, seed=2, **kw)
    assert _sets_read(out) == old  # the whole old pair
    assert not (out / ".next").exists()  # the stopped run's sets are gone

    monkeypatch.setattr(manifest, "write_set", write_set)

    def stop_between_the_moves(self, target):
        if self.name == "validation" and self.parent.name == ".next":
            raise KeyboardInterrupt  # killed after the commit point, train/ already moved
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", stop_between_the_moves)
    with pytest.raises(KeyboardInterrupt):
        video.write_video_shards(d, out, seed=2, **kw)
    monkeypatch.setattr(Path, "rename", rename)
    new = _sets_read(out)  # the whole new pair, half of it still in .next/
    assert new["train"][1] == new["validation"][1] != old["train"][1]
    assert sorted(new["train"][0] + new["validation"][0]) == list(range(6))
    assert new["train"][0] != old["train"][0]  # the seed moved videos

    again = video.write_video_shards(d, out, seed=2, **kw)
    assert again["converted"] == 0  # the parts of the stopped run are reused
    final = _sets_read(out)
    assert [ids for ids, _ in final.values()] == [ids for ids, _ in new.values()]
    assert not (out / ".next").exists() and not (out / ".previous").exists()


def test_a_switch_stopped_before_the_old_validation_set_moved_reads_the_new_pair(tmp_path,
                                                                                monkeypatch):
    """Killed after the commit point with train/ in place and the old validation/ not yet
    moved aside: the new generation is the one read, both sets of it, with no false alarm
    that the two sets come from two runs (the new validation/ still waits in .next/)."""
    d, out = _folder(tmp_path / "v", per=3), tmp_path / "o"
    kw = dict(frame_size=(16, 16), processes=1, progress=False, validation_split=0.5)
    video.write_video_shards(d, out, seed=1, **kw)
    old = _sets_read(out)
    rename = Path.rename

    def stop_before_the_old_validation_moves(self, target):
        if self.name == "validation" and self.parent == out:
            raise KeyboardInterrupt
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", stop_before_the_old_validation_moves)
    with pytest.raises(KeyboardInterrupt):
        video.write_video_shards(d, out, seed=2, **kw)
    monkeypatch.setattr(Path, "rename", rename)
    assert (out / ".next" / "validation").exists()  # stopped where the sweep stopped
    new = _sets_read(out)
    assert new["train"][1] == new["validation"][1] != old["train"][1]
    assert sorted(new["train"][0] + new["validation"][0]) == list(range(6))


@pytest.mark.timeout(120)
def test_paths_starting_with_a_tilde_are_in_the_home_folder(tmp_path, monkeypatch):
    """``~/videos`` and ``~/shards``: the home folder's, as a shell reads them; the converter
    made a folder named ``~`` in the working folder before failing to find the videos."""
    home, work = tmp_path / "home", tmp_path / "work"
    _folder(home / "videos")
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    ds = video.video_dataset_from_directory("~/videos", clip_len=4, batch_size=1, verbose=False)
    assert len(ds.file_paths) == 4
    r = video.write_video_shards("~/videos", "~/shards", processes=1, progress=False)
    assert r["converted"] == 4 and (home / "shards" / "train").is_dir()
    assert sum(1 for _ in video.clip_dataset("~/shards/train", clip_len=4, batch_size=1)) == 4
    assert list(work.iterdir()) == []


@pytest.mark.timeout(120)
def test_a_rerun_of_a_finished_conversion_says_so_and_converts_nothing(tmp_path, capsys):
    """The same videos, unchanged, with the same options and split: the set in ``out`` is
    returned as it is (a rerun converted every video again); a changed video, other options
    or ``overwrite=True`` convert."""
    src, out = _folder(tmp_path / "v"), tmp_path / "out"

    def convert(**kw):
        kw = dict(dict(validation_split=0.5, seed=1, processes=1, progress=False), **kw)
        r = video.write_video_shards(src, out, **kw)
        return r["converted"], r["reused"], manifest.read_manifest(out / "train")

    converted, _, first = convert()
    assert converted == 4
    capsys.readouterr()
    assert convert()[:2] == (0, 4)
    assert "holds this conversion already, complete (4 videos" in capsys.readouterr().out
    assert convert()[2] == first  # not written again: the same run, the same shards
    assert convert(quality=80)[0] == 4  # other options: converted
    assert convert(quality=80)[0] == 0
    assert convert(quality=80, seed=2)[0] == 4  # another split
    os.utime(src / "a" / "a0.mp4", ns=(1, 1))  # a video changed since
    assert convert(quality=80, seed=2)[0] == 4
    assert convert(quality=80, seed=2, overwrite=True)[0] == 4
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        convert(overwrite="yes")
