"""Tests for readers.records.tfrecords: read exactly once, corruption caught up front, atomic."""

from __future__ import annotations

import collections
import os
import threading
import warnings

import pytest
import tensorflow as tf
from error_cases import raises_naming as raises_naming_error

from datakit.core import manifest
from datakit.readers.records import record_framing, tf_example, tfrecord_writer, tfrecords

ID = {"id": tf.int64}


def write_ids(directory, n, **kw):
    with tfrecord_writer.ShardWriter(directory, **kw) as w:
        for i in range(n):
            example = tf_example.to_example({"id": i, "pad": b"x" * (i % 7)})
            w.write(example if i % 2 else example.SerializeToString())  # both are accepted
    return w


def ids_of(ds):
    return [int(x) for x in ds.map(lambda s: tf_example.parse_example(s, ID)["id"])]


# ------------------------------------------------------------------ exactly once
CASES = [(n, k, mode, comp) for n in (1, 37) for k in (1, 3)
         for mode in ("round_robin", "by_size") for comp in (None, "GZIP")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n,k,mode,comp", [
    pytest.param(*c, id=f"{c[0]}records-{c[1]}shards-{c[2]}-{c[3] or 'plain'}") for c in CASES])
def test_every_record_read_back_exactly_once(tmp_path, n, k, mode, comp):
    size = {"max_bytes": 25 * k} if mode == "by_size" else {}  # round_robin refuses it (#47)
    w = write_ids(tmp_path, n, num_shards=k, mode=mode, compression=comp, **size)
    man = tfrecords.record_shards(tmp_path)
    assert [tmp_path / s["file"] for s in man["shards"]] == w.paths
    assert man["records"] == n and man["compression"] == comp
    assert sorted(os.listdir(tmp_path)) == sorted([p.name for p in w.paths] + ["manifest.json"])
    # per shard: the count the manifest says, and together every id once
    seen = collections.Counter()
    for shard, path in zip(man["shards"], w.paths, strict=False):
        ids = ids_of(tfrecords.read_records(path))
        assert len(ids) == shard["records"] > 0
        assert shard["bytes"] == path.stat().st_size
        if mode == "round_robin":
            assert {i % k for i in ids} == {w.paths.index(path)}
        seen.update(ids)
    assert seen == collections.Counter(range(n))
    # the whole folder, interleaved in parallel with shuffled files
    ds = tfrecords.read_records(tmp_path, n_read_threads=2, shuffle_files=True, seed=3)
    assert collections.Counter(ids_of(ds)) == collections.Counter(range(n))


@pytest.mark.timeout(60)
def test_autotune_cycle_with_parallel_reads_reads_everything(tmp_path):
    # AUTOTUNE used to become a cycle of -1: "num_parallel_reads=2 > cycle_length=-1"
    write_ids(tmp_path, 12, num_shards=3)
    ds = tfrecords.read_records(tmp_path, n_readers=tf.data.AUTOTUNE, n_read_threads=2)
    assert sorted(ids_of(ds)) == list(range(12))
    with pytest.raises(ValueError, match="n_read_threads=3 is more than n_readers=2"):
        tfrecords.read_records(tmp_path, n_readers=2, n_read_threads=3)


@pytest.mark.timeout(60)
def test_by_size_respects_max_bytes(tmp_path):
    write_ids(tmp_path, 50, mode="by_size", max_bytes=200)
    shards = tfrecords.record_shards(tmp_path)["shards"]
    assert len(shards) > 1 and all(s["bytes"] <= 200 for s in shards)


@pytest.mark.timeout(60)
def test_same_seed_same_order_different_seed_different(tmp_path):
    write_ids(tmp_path, 40, num_shards=8)
    a, b, c = (ids_of(tfrecords.read_records(tmp_path, shuffle_files=True, seed=s, n_readers=1))
               for s in (1, 1, 2))
    assert a == b and a != c and sorted(a) == list(range(40))


# ------------------------------------------------------------ corruption, each names the shard
@pytest.fixture
def shards(tmp_path):
    return write_ids(tmp_path / "s", 30, num_shards=3).paths


def boundary(path, k):
    """Byte offset where record k of an uncompressed file starts (computed independently)."""
    data, pos = path.read_bytes(), 0
    for _ in range(k):
        pos += 16 + int.from_bytes(data[pos:pos + 8], "little")
    return pos


def test_record_offsets_match_the_framing(shards):
    offsets = record_framing.record_offsets(shards[0])
    assert offsets == [boundary(shards[0], k) for k in range(10)]
    assert record_framing.count_records(shards[0]) == 10


def raises_naming(path, fn, *args, **kw):
    """The RecordFileError ``fn`` raises, which names ``path``."""
    return raises_naming_error(path, fn, *args, error=record_framing.RecordFileError, **kw)


@pytest.mark.timeout(60)
def test_truncated_at_record_boundary_is_caught_by_the_manifest(shards):
    victim = shards[1]
    victim.write_bytes(victim.read_bytes()[:boundary(victim, 4)])
    # TensorFlow alone reads it as a short file, without any error ...
    assert sum(1 for _ in tf.data.TFRecordDataset(str(victim))) == 4
    # ... the manifest check does not.
    err = raises_naming(victim, tfrecords.read_records, victim.parent)
    assert "manifest" in str(err)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("check_manifest", [True, False])
@pytest.mark.parametrize("cut", [9, 13])  # inside the 12-byte header / inside the data
def test_cut_mid_record(shards, check_manifest, cut):
    victim = shards[2]
    victim.write_bytes(victim.read_bytes()[:boundary(victim, 3) + cut])
    if cut < 12:  # TF reads it as a short file, without an error
        assert sum(1 for _ in tf.data.TFRecordDataset(str(victim))) == 3
    else:  # TF raises, without naming the file
        with pytest.raises(tf.errors.DataLossError, match="truncated record") as tf_err:
            sum(1 for _ in tf.data.TFRecordDataset(str(victim)))
        assert victim.name not in str(tf_err.value)
    err = raises_naming(victim, tfrecords.read_records, victim.parent,
                        check_manifest=check_manifest)
    assert err.offset == boundary(victim, 3)


@pytest.mark.timeout(60)
def test_flipped_byte(shards):
    victim = shards[0]
    data = bytearray(victim.read_bytes())
    at = boundary(victim, 2) + 14  # inside the data of record 2
    data[at] ^= 0x55
    victim.write_bytes(bytes(data))
    assert "sha256" in str(raises_naming(victim, tfrecords.read_records, victim.parent))
    # without a manifest, verify=True makes a full TensorFlow pass and keeps TF's offset
    err = raises_naming(victim, tfrecords.read_records, victim.parent, check_manifest=False,
                        verify=True)
    # (TF gives the offset of the record's data, after its 12-byte header)
    assert err.offset == boundary(victim, 2) + 12 and "corrupted record" in str(err)


@pytest.mark.timeout(60)
def test_missing_shard(shards):
    shards[1].unlink()
    assert "missing" in str(raises_naming(shards[1], tfrecords.read_records, shards[1].parent))
    with pytest.raises(FileNotFoundError, match=shards[1].name):  # named by the caller
        tfrecords.read_records([shards[0], shards[1]])


@pytest.mark.timeout(60)
def test_a_file_listed_twice_or_a_flag_as_text_is_refused(shards):
    """#47: [f, f] was read once without a word; shuffle_files='yes' was taken as True."""
    with pytest.raises(ValueError, match=f"filepaths names .*{shards[0].name}.* twice"):
        tfrecords.read_records([shards[0], shards[0]], check_manifest=False)
    with pytest.raises(TypeError, match="shuffle_files must be True or False, got 'yes'"):
        tfrecords.read_records(shards[0].parent, shuffle_files="yes")


@pytest.mark.timeout(60)
def test_empty_file(tmp_path):
    (tmp_path / "a.tfrecord").write_bytes(b"")
    raises_naming(tmp_path / "a.tfrecord", tfrecords.read_records, tmp_path / "a.tfrecord")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("check_manifest", [True, False])
def test_gzip_read_as_uncompressed_and_back(tmp_path, check_manifest):
    gz = write_ids(tmp_path / "gz", 10, num_shards=2, compression="GZIP").paths
    err = raises_naming(gz[0], tfrecords.read_records, gz[0].parent, compression=None,
                        check_manifest=check_manifest)
    assert "GZIP" in str(err)
    raw = write_ids(tmp_path / "raw", 10, num_shards=2).paths
    raises_naming(raw[0], tfrecords.read_records, raw[0].parent, compression="GZIP",
                  check_manifest=check_manifest)
    # 'auto' sniffs the magic bytes when there is no manifest
    assert sorted(ids_of(tfrecords.read_records(gz, check_manifest=False))) == list(range(10))


@pytest.mark.timeout(60)
def test_gzip_shard_truncated(tmp_path):
    gz = write_ids(tmp_path, 30, num_shards=2, compression="GZIP").paths
    gz[1].write_bytes(gz[1].read_bytes()[:-20])
    raises_naming(gz[1], tfrecords.read_records, tmp_path)
    raises_naming(gz[1], tfrecords.read_records, tmp_path, check_manifest=False, verify=True)


# ------------------------------------------------------------------ atomic writes
@pytest.mark.timeout(60)
def test_interrupted_write_leaves_nothing_complete(tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        with tfrecord_writer.ShardWriter(tmp_path, num_shards=2) as w:
            for i in range(10):
                w.write(b"r%d" % i)
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == [] and w.paths == []
    with pytest.raises(record_framing.RecordFileError):
        tfrecords.read_records(tmp_path)


@pytest.mark.timeout(60)
def test_interrupted_overwrite_keeps_the_previous_set(tmp_path):
    write_ids(tmp_path, 12, num_shards=3)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(RuntimeError):
        with tfrecord_writer.ShardWriter(tmp_path, num_shards=2, overwrite=True) as w:
            w.write(b"new")
            raise RuntimeError("boom")
    assert sorted(os.listdir(tmp_path)) == before
    assert sorted(ids_of(tfrecords.read_records(tmp_path))) == list(range(12))
    write_ids(tmp_path, 4, num_shards=2, overwrite=True)  # a clean overwrite replaces the set
    assert len(os.listdir(tmp_path)) == 3
    assert sorted(ids_of(tfrecords.read_records(tmp_path))) == list(range(4))


def test_writer_refuses_a_folder_with_shards_and_bad_arguments(tmp_path):
    write_ids(tmp_path, 2, num_shards=1)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        tfrecord_writer.ShardWriter(tmp_path)
    for kw, msg in [({"mode": "random"}, "round_robin"), ({"num_shards": 0}, ">= 1"),
                    ({"mode": "by_size"}, "max_bytes"), ({"compression": "ZLIB"}, "GZIP"),
                    ({"max_bytes": 0}, "max_bytes=0"),  # #47: taken and ignored before
                    ({"max_bytes": 100}, "max_bytes=100 sizes shards only with mode='by_size'")]:
        with pytest.raises(ValueError, match=msg):
            tfrecord_writer.ShardWriter(tmp_path / "new", **kw)
    with (tfrecord_writer.ShardWriter(tmp_path / "new") as w,
          pytest.raises(TypeError, match="bytes")):
        w.write("a str is not a record")


def test_a_set_named_like_the_start_of_another_is_not_refused(tmp_path):
    """Set ``a-b``'s shards are not set ``a``'s: the writer's look before it writes asks the
    commit's rule (the set's exact pattern), so it neither refuses ``a`` beside ``a-b`` nor
    lets ``a`` be written twice."""
    write_ids(tmp_path, 3, prefix="a-b", num_shards=1)
    write_ids(tmp_path, 5, prefix="a", num_shards=2)  # refused by __init__ before the fix
    assert sorted(manifest.read_manifest(tmp_path)["sets"]) == ["a", "a-b"]
    assert sorted(ids_of(tfrecords.read_records(tmp_path))) == sorted([0, 1, 2] + list(range(5)))
    with pytest.raises(FileExistsError, match=r"already holds shards of set 'a' \(2 file"):
        tfrecord_writer.ShardWriter(tmp_path, prefix="a")


@pytest.mark.timeout(120)
def test_two_writers_into_one_folder_one_wins_nothing_lost(tmp_path):
    """#60: both passed __init__'s look at an empty folder; the commit looks again under the
    folder's lock, so the second fails naming the set and the fix, and the first's 400 stay."""
    both_writing = threading.Barrier(2, timeout=60)
    outcome: dict = {}

    def writer(who):
        try:
            with tfrecord_writer.ShardWriter(tmp_path, num_shards=2) as w:
                for i in range(400):
                    w.write(tf_example.to_example({"id": who * 1000 + i}))
                both_writing.wait()  # neither commits before both have checked and written
            outcome[who] = w.paths
        except FileExistsError as e:
            outcome[who] = e

    threads = [threading.Thread(target=writer, args=(who,)) for who in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = {who: o for who, o in outcome.items() if isinstance(o, Exception)}
    assert len(outcome) == 2 and len(errors) == 1, outcome
    (loser, error), = errors.items()
    winner = 3 - loser
    for said in (str(tmp_path), "set 'shard'", "overwrite=True", "another folder"):
        assert said in str(error)
    assert sorted(ids_of(tfrecords.read_records(tmp_path))) == [winner * 1000 + i
                                                                for i in range(400)]
    assert sorted(os.listdir(tmp_path)) == sorted([p.name for p in outcome[winner]]
                                                  + ["manifest.json"])  # no temporary left


# ------------------------------------------------------------------ no noise
@pytest.mark.timeout(60)
@pytest.mark.parametrize("n_read_threads", [None, 1, 2, tf.data.AUTOTUNE])
def test_reading_warns_nothing(tmp_path, n_read_threads):
    # `deterministic` passed without `num_parallel_calls` makes TF warn that it has no effect
    write_ids(tmp_path, 9, num_shards=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = tfrecords.read_records(tmp_path, n_read_threads=n_read_threads)
        ids = ids_of(ds)
    assert sorted(ids) == list(range(9))
    assert [str(w.message) for w in caught] == []


@pytest.mark.timeout(60)
def test_shards_without_a_manifest_warn_that_a_cut_at_a_boundary_cannot_be_seen(shards,
                                                                                 tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir()
    for s in shards:
        (loose / s.name).write_bytes(s.read_bytes())
    victim = loose / shards[1].name
    victim.write_bytes(victim.read_bytes()[:boundary(victim, 4)])   # silently short
    for source in (loose, [str(victim)]):
        with pytest.warns(UserWarning, match=r"read without a manifest \(first: .*"
                          r"cut exactly at a record boundary.*cannot be detected"):
            tfrecords.check_shards(source)
