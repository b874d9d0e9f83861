"""The converter on Apache Beam (DirectRunner, 2 threads): the local converter's set, or none."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from datakit.core import manifest
from datakit.core.errors import DataError
from datakit.readers import video

# Looked up, not imported: every pytest worker collects this file and one runs it (Apache
# Beam's import is about 1 CPU s); the converter imports it when it runs.
if importlib.util.find_spec("apache_beam") is None:
    pytest.skip("could not find apache_beam (the transform extra)", allow_module_level=True)

KW = dict(frame_size=(16, 16), validation_split=0.4, seed=3, num_shards=2, on_bad_file="skip")


def _damaged_mjpeg(path: Path) -> Path:
    """An MJPEG video whose 31st frame of 40 is zeros: the probe (which decodes the first
    frames and the last group) passes, the conversion fails."""
    import av

    frames = video.make_video(0, size=32, min_frames=40, max_frames=40, seed=7).frames
    video.write_video(frames, path, codec="mjpeg")
    with av.open(str(path)) as c:
        pos, size = [(p.pos, p.size) for p in c.demux(c.streams.video[0]) if p.size][30]
    data = bytearray(path.read_bytes())
    data[pos:pos + size] = bytes(size)
    path.write_bytes(bytes(data))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same folder converted by both converters (one Beam start for the module)."""
    from datakit.readers.video.converter import convert_beam

    root = tmp_path_factory.mktemp("beam")
    d = root / "videos"
    video.make_video_folder(d, per_class=2, size=32, min_frames=8, max_frames=12, seed=0)
    bad = _damaged_mjpeg(d / "up" / "up_damaged.mov")
    local = video.write_video_shards(d, root / "local", processes=2, progress=False, **KW)
    with pytest.MonkeyPatch.context() as m:  # job files of 4 videos: several, one partly full
        m.setattr(convert_beam, "_JOB_CHUNK", 4)
        beam = convert_beam.write_video_shards_beam(d, root / "beam", workers=2, **KW)
    return d, bad, local, beam


def _records(folder) -> dict[str, list]:
    """Each shard's records, parsed: serialized bytes may differ in the order of the
    context's map entries (protobuf does not fix it), the records never."""
    import tensorflow as tf

    files = manifest.read_manifest(folder)["sets"]["videos"]["files"]
    return {f["file"]: [tf.train.SequenceExample.FromString(r.numpy())
                        for r in tf.data.TFRecordDataset(str(Path(folder) / f["file"]))]
            for f in files}


def _without_digests(folder) -> dict:
    """The set's manifest entry, its files' sha256 and its run's id left out (see
    :func:`_records`)."""
    info = dict(manifest.read_manifest(folder)["sets"]["videos"])
    assert info.pop("run")  # each run stamps its own, so that train/ and validation/ pair
    return dict(info, files=[{k: v for k, v in f.items() if k != "sha256"}
                             for f in info["files"]])


@pytest.mark.timeout(300)
def test_beam_writes_the_local_converters_set_record_for_record(runs):
    d, bad, local, beam = runs
    assert beam["skipped"] == local["skipped"] and [p for p, _ in beam["skipped"]] == [str(bad)]
    assert (beam["converted"], beam["reused"]) == (local["converted"], local["reused"]) == (8, 0)
    assert beam["class_names"] == local["class_names"] == ["down", "left", "right", "up"]
    for split in ("train", "validation"):
        want, got = _records(local[split]), _records(beam[split])
        assert list(got) == list(want) and sum(map(len, want.values())) >= 2
        for name in want:  # shard by shard, record by record: context and every JPEG
            assert got[name] == want[name], f"{split}/{name} differs"
        assert _without_digests(beam[split]) == _without_digests(local[split])
        info = manifest.read_manifest(beam[split])["sets"]["videos"]
        assert info["class_names"] == local["class_names"]
        assert sum(f["records"] for f in info["files"]) == len(info["videos"])
    assert not (Path(beam["train"]).parent / ".parts").exists()


@pytest.mark.timeout(300)
def test_a_video_that_fails_on_a_worker_commits_nothing(runs, tmp_path):
    from datakit.readers.video.converter.convert_beam import write_video_shards_beam

    d, bad, _, beam = runs
    out = tmp_path / "out"
    shutil.copytree(Path(beam["train"]).parent, out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(DataError, match="decoding failed") as e:
        write_video_shards_beam(d, out, workers=2, **dict(KW, on_bad_file="raise"))
    assert e.value.path == str(bad)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()
             and ".parts" not in p.parts}
    assert after == before  # the previous set whole: its shards and manifests, byte for byte
    again = write_video_shards_beam(d, out, workers=2, **KW)  # resumes from the kept parts
    assert again["reused"] + again["converted"] == 8 and again["skipped"] == beam["skipped"]
    for split in ("train", "validation"):
        assert _records(again[split]) == _records(beam[split])


def test_arguments_are_checked_before_any_file_is_read(tmp_path):
    from datakit.readers.video.converter.convert_beam import write_video_shards_beam

    missing = tmp_path / "nothing here"
    with pytest.raises(TypeError, match="list of Beam flags"):
        write_video_shards_beam(missing, tmp_path / "o", pipeline_args="--runner=FlinkRunner")
    with pytest.raises(ValueError, match="workers"):
        write_video_shards_beam(missing, tmp_path / "o", workers=0)
    with pytest.raises(ValueError, match="quality"):
        write_video_shards_beam(missing, tmp_path / "o", quality=101)
    assert not (tmp_path / "o").exists()
