"""A reader keeps the generation it opened while another process rewrites the shard set.

Another process rewrites a small converted set (alternating split seeds, so
the shards' bytes move) each time this one asks; this one opens the set 8 times
and reads each dataset 4 times (32 reads): after each opening it waits for a
rewrite to land, and it asks for another as each read starts, to land while
it reads (40 rewrites; a writer rewriting in a loop instead spent its CPU
for as long as the test ran). Every read gives whole clips of one generation:
never TensorFlow's ``DataLossError`` (a record read at the old manifest's offset
in the new file).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

from datakit.core.errors import DataError
from datakit.readers import video

ROOT = Path(__file__).resolve().parent.parent

REWRITE = """
import sys
from datakit.readers import video
folder, out = sys.argv[1:3]
k = 0
for line in sys.stdin:  # one rewrite per line asked for, its count said once committed
    video.write_video_shards(folder, out, validation_split=0.5, seed=k % 3, num_shards=2,
                             processes=1, progress=False)
    k += 1
    print(k, flush=True)
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("rewritten")
    for k in range(8):
        frames = video.make_video(k % 2, size=16, min_frames=70, max_frames=90, seed=k).frames
        video.write_video(frames, d / "ab"[k % 2] / f"v{k}.mp4")
    return d


@pytest.mark.timeout(300)
def test_a_reader_outlives_rewrites_of_its_set(folder, tmp_path):
    out = tmp_path / "out"
    kw = dict(validation_split=0.5, num_shards=2, processes=1, progress=False)
    video.write_video_shards(folder, out, seed=2, **kw)
    writer = subprocess.Popen([sys.executable, "-c", REWRITE, str(folder), str(out)],
                              env=dict(os.environ, PYTHONPATH=str(ROOT)), text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    reads, stopped, asked = 0, [], 0
    try:
        for _ in range(8):  # 8 readers, each reading its set 4 times: 32 reads
            ds = video.clip_dataset(out / "train", clip_len=64, batch_size=2, seed=None,
                                    training=False, with_ids=True)
            asked = _ask(writer, asked)
            _committed(writer, asked)  # a rewrite landed between opening and reading
            for _ in range(4):
                asked = _ask(writer, asked)  # one more, to land while this read runs
                try:
                    n = sum(int(tf.shape(b["frames"])[0]) for b in ds)
                except DataError as e:  # allowed: a reader told the generations and the fix
                    assert "again" in str(e)
                    stopped.append(str(e))
                    break
                assert n == 4
                reads += 1
            _committed(writer, asked)
    except tf.errors.OpError as e:
        pytest.fail(f"a reader got TensorFlow's {type(e).__name__} during rewrites: {e}")
    finally:
        more, err = writer.communicate(timeout=120)  # (its stdin closed: it ends)
    assert writer.returncode == 0, err
    assert more == "" and asked >= 8 * 2  # each asked for rewrite was committed
    assert reads >= 29, stopped[:3]


def _ask(writer: subprocess.Popen, asked: int) -> int:
    """Ask ``writer`` for one more rewrite; the number asked for so far."""
    assert writer.stdin is not None
    writer.stdin.write("rewrite\n")
    writer.stdin.flush()
    return asked + 1


def _committed(writer: subprocess.Popen, asked: int) -> None:
    """Return once ``writer`` has committed the ``asked`` rewrites asked for so far."""
    assert writer.stdout is not None
    while (line := writer.stdout.readline()) != f"{asked}\n":
        assert line, f"the writer ended: {writer.communicate()[1][-2000:]}"


@pytest.mark.timeout(120)
def test_a_later_writer_removes_generations_replaced_long_ago(folder, tmp_path, monkeypatch):
    from datakit.readers.video.converter import generations

    out = tmp_path / "out"
    kw = dict(validation_split=0.5, num_shards=2, processes=1, progress=False)
    runs = []
    for seed in range(3):
        video.write_video_shards(folder, out, seed=seed, **kw)
        runs.append(generations.current(out / "train").parent.name)
    assert len(set(runs)) == 3
    assert {p.name for p in (out / ".generations").iterdir()} == set(runs) | {"ORDER"}
    monkeypatch.setattr(generations, "GRACE_S", 0.0)  # every replaced one is now long ago
    video.write_video_shards(folder, out, seed=3, **kw)
    now = generations.current(out / "train").parent.name
    assert {p.name for p in (out / ".generations").iterdir()} == {runs[-1], now, "ORDER"}
