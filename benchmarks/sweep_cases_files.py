"""Sweep cases (see sweep_bad_inputs.py): CSV, Parquet, SQLite, fixed-length, text lines,
TFRecord/Example, checkpoints, manifests, tf.Transform readers."""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchmarks.sweep_bad_inputs import case, resolve

GOOD = "x,y\n" + "".join(f"{i * 0.5},{i}\n" for i in range(1, 7))  # 6 rows, labels 1..6
MODES = ("line", "batch", "vectorized", "chunk", "arrow")


def write(d: Path, name: str, data) -> str:
    p = d / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(p)


def stats_of(d: Path, text: str = GOOD, **kw):
    return resolve("csv", "column_stats")(write(d, "stats_src.csv", text), **kw)


def read_csv(files, st, **kw):
    """Every label the reader delivers (one pass), as a sorted list of floats."""
    kw = {"shuffle_buffer_size": None, "batch_size": 4, "label": "y", **kw}
    ds = resolve("csv", "csv_reader_dataset")(files, stats=st, **kw)
    return sorted(float(v) for _, y in ds for v in y.numpy().ravel())


def n_labels(n):
    return lambda got: isinstance(got, list) and len(got) == n


# ------------------------------------------------------------------ CSV, per parse mode
def _mode_cases(mode: str) -> None:
    def nan_label(d):
        return read_csv([write(d, "a.csv", GOOD + "3.5,nan\n")], stats_of(d), parse=mode)

    def inf_label(d):
        return read_csv([write(d, "a.csv", GOOD + "3.5,-inf\n")], stats_of(d), parse=mode)

    def cut_mid_row(d):  # the last row stops after its first field
        return read_csv([write(d, "a.csv", GOOD + "9.5")], stats_of(d), parse=mode)

    def extra_field(d):
        return read_csv([write(d, "a.csv", GOOD + "1,2,3\n")], stats_of(d), parse=mode)

    def utf16(d):
        return read_csv([write(d, "a.csv", GOOD.encode("utf-16"))], stats_of(d), parse=mode)

    def same_file_twice(d):
        f = write(d, "a.csv", GOOD)
        return read_csv([f, f], stats_of(d), parse=mode)

    def nul_bytes(d):
        return read_csv([write(d, "a.csv", GOOD + "\x00\x00\x00\n")], stats_of(d), parse=mode)

    def seed_2_64(d):
        return read_csv([write(d, "a.csv", GOOD)], stats_of(d), parse=mode, seed=2**64,
                        shuffle_buffer_size=4)

    for fn, desc, names, ok in [
        (nan_label, "a nan label", ("a.csv",), None),
        (inf_label, "a -inf label", ("a.csv",), None),
        (cut_mid_row, "last row cut after its first field", ("a.csv",), None),
        (extra_field, "a row with one field too many", ("a.csv",), None),
        (utf16, "the file saved as UTF-16", ("a.csv",), None),
        (same_file_twice, "one file listed twice", ("a.csv", "twice", "duplicate"), None),
        (nul_bytes, "a line of NUL bytes", ("a.csv",), None),
        (seed_2_64, "seed=2**64 (outside int64)", ("seed",), None),
    ]:
        fn.__name__ = f"{mode}_{fn.__name__}"
        case("csv", f"parse={mode!r}: {desc}", names, ok)(fn)


for _m in MODES:
    _mode_cases(_m)


@case("csv", "filepaths given as a set of two files", ("filepaths", "set"))
def files_as_set(d):
    return read_csv({write(d, "a.csv", GOOD), write(d, "b.csv", GOOD)}, stats_of(d))


@case("csv", "filepaths given as a generator", ("filepaths", "generator"))
def files_as_generator(d):
    f = write(d, "a.csv", GOOD)
    return read_csv((p for p in [f]), stats_of(d))


@case("csv", "filepaths given as a dict", ("filepaths", "dict"))
def files_as_dict(d):
    return read_csv({write(d, "a.csv", GOOD): 1}, stats_of(d))


@case("csv", "filepaths=[] (no files)", ("filepaths", "no file", "empty"))
def files_empty_list(d):
    return read_csv([], stats_of(d))


@case("csv", "filepaths given as bytes", ("filepaths", "bytes"), either=True,
      ok=n_labels(6))
def files_as_bytes(d):
    return read_csv(write(d, "a.csv", GOOD).encode(), stats_of(d))


@case("csv", "a file in a folder with a unicode, space and '#' name", ok=n_labels(6))
def unicode_path(d):
    return read_csv([write(d, "dá ta #1/ñ a.csv", GOOD)], stats_of(d))


@case("csv", "batch_size=True", ("batch_size",))
def batch_true(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), batch_size=True)


@case("csv", "batch_size=-1", ("batch_size",))
def batch_negative(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), batch_size=-1)


@case("csv", "repeat=-2", ("repeat",))
def repeat_negative(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), repeat=-2)


@case("csv", "repeat=0 (no rows at all)", ("repeat",))
def repeat_zero(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), repeat=0)


@case("csv", "repeat=1.5", ("repeat",))
def repeat_float(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), repeat=1.5)


@case("csv", "seed='7' (a string)", ("seed",))
def seed_string(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), seed="7", shuffle_buffer_size=4)


@case("csv", "label_scale=nan", ("label_scale",))
def label_scale_nan(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), label_scale=float("nan"))


@case("csv", "label_scale='2'", ("label_scale",))
def label_scale_str(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), label_scale="2")


@case("csv", "stats= a dict, not the TableStats", ("stats",))
def stats_dict(d):
    return read_csv([write(d, "a.csv", GOOD)], {"x": 1})


@case("csv", "stats of another file's columns (z,w)", ("a.csv", "stats", "column"))
def stats_other_columns(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d, "z,w\n1,2\n"), label="w")


@case("csv", "label=['y'] (a list)", ("label",))
def label_list(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), label=["y"])


@case("csv", "shuffle_buffer_size=2.5", ("shuffle_buffer_size",))
def shuffle_float(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), shuffle_buffer_size=2.5)


@case("csv", "cache= a path under a regular file", ("cache",))
def cache_under_file(d):
    f = write(d, "a.csv", GOOD)
    return read_csv([f], stats_of(d), parse="chunk", cache=str(Path(f) / "c"))


@case("csv", "header with the name y twice", ("a.csv", "y"))
def duplicate_header(d):
    return read_csv([write(d, "a.csv", "y,y\n1,2\n3,4\n")], stats_of(d, "y,y\n1,2\n3,4\n"))


@case("csv", "parse='ARROW' (upper case)", ("parse",))
def parse_upper(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), parse="ARROW")


@case("csv", "trace='yes' (a string)", ("trace",))
def trace_str(d):
    return read_csv([write(d, "a.csv", GOOD)], stats_of(d), trace="yes")


@case("csv", "column_stats(columns={'x','y'}) (a set)", ("columns", "set"))
def stats_columns_set(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), columns={"x", "y"})


@case("csv", "column_stats(columns=a generator)", ("generator",))
def stats_columns_gen(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), columns=(c for c in "xy"))


@case("csv", "column_stats(columns=['x','x'])", ("columns",))
def stats_columns_dup(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), columns=["x", "x"])


@case("csv", "column_stats(max_vocabulary=-1)", ("max_vocabulary",))
def stats_vocab_negative(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", "c,y\na,1\nb,2\n"),
                                          max_vocabulary=-1)


@case("csv", "column_stats(delimiter='') ", ("delimiter",))
def stats_delimiter_empty(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), delimiter="")


@case("csv", "column_stats(delimiter=';;') (two characters)", ("delimiter",))
def stats_delimiter_two(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), delimiter=";;")



@case("csv", "column_stats(text_columns=['nope'])", ("text_columns", "nope"))
def stats_text_unknown(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), text_columns=["nope"])


@case("csv", "column_stats: x in both text_columns and number_columns",
      ("text_columns", "number_columns"))
def stats_text_and_number(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), text_columns=["x"],
                                          number_columns=["x"])


@case("csv", "column_stats(column_names=['a','a'])", ("column_names", "a"))
def stats_names_dup(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", "1,2\n3,4\n"),
                                          column_names=["a", "a"])


@case("csv", "column_stats(batch_size=0)", ("batch_size",))
def stats_batch_zero(d):
    return resolve("csv", "column_stats")(write(d, "a.csv", GOOD), batch_size=0)


@case("csv", "find_bad_lines on a folder", ("find_bad_lines", "folder", "directory", "sub"))
def find_bad_folder(d):
    (d / "sub").mkdir()
    return resolve("csv", "find_bad_lines")([str(d / "sub")], stats_of(d))


def _table(n=20):
    import pandas as pd
    return pd.DataFrame({"x": [i * 0.5 for i in range(n)], "y": list(range(n))})



@case("csv", "write_shards(num_shards=50) for 20 rows", ("num_shards",), either=True,
      ok=lambda got: len(got) <= 20)
def shards_more_than_rows(d):
    return resolve("csv", "write_shards")(_table(), d / "out", num_shards=50)


@case("csv", "write_shards(prefix='a/b')", ("prefix",))
def shards_prefix_slash(d):
    return resolve("csv", "write_shards")(_table(), d / "out", num_shards=2, prefix="a/b")


@case("csv", "write_shards(columns=['x','zz'])", ("columns", "zz"))
def shards_unknown_column(d):
    return resolve("csv", "write_shards")(_table(), d / "out", num_shards=2,
                                          columns=["x", "zz"])


@case("csv", "write_shards into a path that is a file", ("f.txt",))
def shards_folder_is_file(d):
    return resolve("csv", "write_shards")(_table(), write(d, "f.txt", "x"), num_shards=2)


@case("csv", "split_into_shards(fractions=(0.8, 0.3, 0.1)) (sum 1.2)", ("fractions",))
def split_sum(d):
    return resolve("csv", "split_into_shards")(_table(), d, fractions=(0.8, 0.3, 0.1),
                                               num_shards=(1, 1, 1))


@case("csv", "split_into_shards(fractions with nan)", ("fractions",))
def split_nan(d):
    return resolve("csv", "split_into_shards")(_table(), d, fractions=(0.8, math.nan, 0.2),
                                               num_shards=(1, 1, 1))


@case("csv", "split_into_shards(num_shards of 2 for 3 fractions)", ("num_shards",))
def split_lengths(d):
    return resolve("csv", "split_into_shards")(_table(), d, num_shards=(1, 1))


@case("csv", "split_into_shards(names=('a','a','b'))", ("names", "a"))
def split_dup_names(d):
    return resolve("csv", "split_into_shards")(_table(), d, num_shards=(1, 1, 1),
                                               names=("a", "a", "b"))


@case("csv", "split_into_shards(seed=-1)", ("seed",))
def split_seed_negative(d):
    return resolve("csv", "split_into_shards")(_table(), d, num_shards=(1, 1, 1), seed=-1)


# ------------------------------------------------------------------ Parquet
def _pq(d: Path, name="a.parquet", table=None):
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = d / name
    pq.write_table(table if table is not None else
                   pa.table({"x": [0.5, 1.0, 1.5, 2.0], "y": [1.0, 2.0, 3.0, 4.0]}), p)
    return str(p)


def read_pq(files, **kw):
    kw = {"shuffle_buffer_size": None, "batch_size": 4, "label": "y", **kw}
    ds = resolve("parquet", "parquet_dataset")(files, **kw)
    return sorted(float(v) for _, y in ds for v in y.numpy().ravel())


@case("parquet", "a label column with a null", ("a.parquet",))
def pq_null_label(d):
    import pyarrow as pa
    return read_pq([_pq(d, table=pa.table({"x": [1.0, 2.0], "y": [1.0, None]}))])


@case("parquet", "a nan label", ("a.parquet",))
def pq_nan_label(d):
    import pyarrow as pa
    return read_pq([_pq(d, table=pa.table({"x": [1.0, 2.0], "y": [1.0, math.nan]}))])


@case("parquet", "two columns with one name", ("a.parquet",))
def pq_dup_columns(d):
    import pyarrow as pa
    t = pa.Table.from_arrays([pa.array([1.0]), pa.array([2.0]), pa.array([3.0])],
                             names=["x", "x", "y"])
    return read_pq([_pq(d, table=t)])


@case("parquet", "a file of random bytes named .parquet", ("a.parquet",))
def pq_garbage(d):
    return read_pq([write(d, "a.parquet", bytes(range(256)) * 4)])


@case("parquet", "a parquet file cut in half", ("a.parquet",))
def pq_truncated(d):
    p = Path(_pq(d))
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    return read_pq([str(p)])


@case("parquet", "an empty (0 byte) file", ("a.parquet",))
def pq_empty(d):
    return read_pq([write(d, "a.parquet", b"")])


@case("parquet", "two files with different schemas", ("b.parquet",))
def pq_schemas_differ(d):
    import pyarrow as pa
    return read_pq([_pq(d), _pq(d, "b.parquet", pa.table({"z": [1.0], "y": [2.0]}))])


@case("parquet", "columns={'x', 'y'} (a set)", ("columns", "set"))
def pq_columns_set(d):
    return read_pq([_pq(d)], columns={"x", "y"})


@case("parquet", "columns=['x','x']", ("columns",))
def pq_columns_dup(d):
    return read_pq([_pq(d)], columns=["x", "x"])


@case("parquet", "label='nope'", ("label", "nope"))
def pq_label_missing(d):
    return read_pq([_pq(d)], label="nope")


@case("parquet", "batch_size=0", ("batch_size",))
def pq_batch_zero(d):
    return read_pq([_pq(d)], batch_size=0)


@case("parquet", "seed=2**64", ("seed",))
def pq_seed_big(d):
    return read_pq([_pq(d)], seed=2**64, shuffle_buffer_size=4)


@case("parquet", "a folder given where files are expected", ("sub",))
def pq_folder(d):
    (d / "sub").mkdir()
    return read_pq([str(d / "sub")])


@case("parquet", "a string label column", ("y", "label"))
def pq_text_label(d):
    import pyarrow as pa
    return read_pq([_pq(d, table=pa.table({"x": [1.0, 2.0], "y": ["a", "b"]}))])


@case("parquet", "write_parquet_shards(num_shards=0)", ("num_shards",))
def pq_write_zero(d):
    return resolve("parquet", "write_parquet_shards")(_table(), d / "out", num_shards=0)


@case("parquet", "write_parquet_shards(row_group_rows=0)", ("row_group_rows",))
def pq_write_rowgroup_zero(d):
    return resolve("parquet", "write_parquet_shards")(_table(), d / "out", num_shards=1,
                                                      row_group_rows=0)


@case("parquet", "parquet column_stats(max_vocabulary=-1)", ("max_vocabulary",))
def pq_stats_vocab(d):
    return resolve("parquet", "column_stats")([_pq(d)], max_vocabulary=-1)


# ------------------------------------------------------------------ SQLite
def _db(d: Path):
    return resolve("sqlite", "write_sqlite")(d / "a.db", "t", {"x": [1.0, 2.0, 3.0],
                                                                "y": [1, 2, 3]})


def sql(path, query, types):
    ds = resolve("sqlite", "sql_dataset")(path, query, types)
    return [tuple(v.numpy().item() for v in row) for row in ds]


@case("sqlite", "output_types with fewer entries than columns", ("output_types",))
def sql_types_fewer(d):
    import tensorflow as tf
    return sql(_db(d), "SELECT x, y FROM t", (tf.float64,))


@case("sqlite", "output_types='float64' (a string)", ("output_types",))
def sql_types_str(d):
    return sql(_db(d), "SELECT x FROM t", "float64")


@case("sqlite", "a table that does not exist", ("nope",))
def sql_no_table(d):
    import tensorflow as tf
    return sql(_db(d), "SELECT x FROM nope", (tf.float64,))


@case("sqlite", "query='' (empty)", ("query",))
def sql_empty_query(d):
    import tensorflow as tf
    return sql(_db(d), "", (tf.float64,))


@case("sqlite", "a folder given as the database", ("sub",))
def sql_folder(d):
    import tensorflow as tf
    (d / "sub").mkdir()
    return sql(str(d / "sub"), "SELECT 1", (tf.int64,))


@case("sqlite", "an empty (0 byte) file as the database", ("e.db", "no such table", "t"))
def sql_empty_file(d):
    import tensorflow as tf
    return sql(write(d, "e.db", b""), "SELECT x FROM t", (tf.float64,))


@case("sqlite", "write_sqlite with columns of unequal lengths", ("length", "'x'", "'y'"))
def sql_write_unequal(d):
    return resolve("sqlite", "write_sqlite")(d / "a.db", "t", {"x": [1, 2], "y": [1]})


@case("sqlite", "write_sqlite(table='a b; DROP')", ("table",))
def sql_write_bad_table(d):
    return resolve("sqlite", "write_sqlite")(d / "a.db", "a b; DROP", {"x": [1]})


# ------------------------------------------------------------------ fixed-length records
def _fixed(d: Path, n=6):
    import numpy as np
    return resolve("fixed_length", "write_fixed_length")(d / "r.bin",
                                                         np.arange(n * 2, dtype="int16"))


def fixed(path, shape, dtype, **kw):
    return [r.numpy().tolist() for r in
            resolve("fixed_length", "fixed_length_dataset")(path, shape, dtype, **kw)]


@case("fixed", "record_shape=[0]", ("record_shape",))
def fixed_shape_zero(d):
    return fixed(_fixed(d), [0], "int16")


@case("fixed", "record_shape=[-2]", ("record_shape",))
def fixed_shape_negative(d):
    return fixed(_fixed(d), [-2], "int16")


@case("fixed", "record_shape='2'", ("record_shape",))
def fixed_shape_str(d):
    return fixed(_fixed(d), "2", "int16")


@case("fixed", "dtype='int33'", ("dtype=",))
def fixed_dtype_bad(d):
    return fixed(_fixed(d), [2], "int33")


@case("fixed", "dtype='str' (not fixed width)", ("dtype=",))
def fixed_dtype_str(d):
    return fixed(_fixed(d), [2], "str")


@case("fixed", "header_bytes larger than the file", ("r.bin", "header_bytes"))
def fixed_header_big(d):
    return fixed(_fixed(d), [2], "int16", header_bytes=1000)


@case("fixed", "footer_bytes=-4", ("footer_bytes",))
def fixed_footer_negative(d):
    return fixed(_fixed(d), [2], "int16", footer_bytes=-4)


@case("fixed", "an empty (0 byte) file", ("e.bin",))
def fixed_empty(d):
    return fixed(write(d, "e.bin", b""), [2], "int16")


@case("fixed", "record_shape=[2.5]", ("record_shape",))
def fixed_shape_float(d):
    return fixed(_fixed(d), [2.5], "int16")


# ------------------------------------------------------------------ numbered text lines
def lines(path, **kw):
    return [tuple(x.numpy() for x in el) if isinstance(el, tuple) else el.numpy()
            for el in resolve("text_lines", "numbered_lines")(path, **kw)]


@case("text", "numbered_lines of an empty file", ("e.txt",), either=True,
      ok=lambda got: got == [])
def text_empty(d):
    return lines(write(d, "e.txt", b""))


@case("text", "numbered_lines of a binary (gzip) file", ("g.txt",))
def text_binary(d):
    import gzip
    return lines(write(d, "g.txt", gzip.compress(b"a\nb\n" * 10)))


@case("text", "numbered_lines(skip_header='no')", ("skip_header",))
def text_skip_header_str(d):
    return lines(write(d, "a.txt", "h\n1\n2\n"), skip_header="no")


# ------------------------------------------------------------------ TFRecord shards
def _records(d: Path, n=8, **kw):
    W = resolve("tfrecord_writer", "ShardWriter")
    with W(d / "s", num_shards=2, **kw) as w:
        for i in range(n):
            w.write(f"r{i}".encode())
    return d / "s"


def read_all(source, **kw):
    return sorted(r.numpy() for r in resolve("tfrecords", "read_records")(source, **kw))


@case("tfrecords", "read_records(n_readers=-1)", ("n_readers",))
def tfr_readers_negative(d):
    return read_all(_records(d), n_readers=-1)


@case("tfrecords", "read_records(cycle_length=0) (the old name)", ("cycle_length",))
def tfr_cycle_zero(d):
    return read_all(_records(d), cycle_length=0)


@case("tfrecords", "read_records(n_readers=2, cycle_length=2): one knob twice",
      ("n_readers", "cycle_length"))
def tfr_knob_twice(d):
    return read_all(_records(d), n_readers=2, cycle_length=2)


@case("tfrecords", "read_records(compression='zip')", ("compression",))
def tfr_compression_bad(d):
    return read_all(_records(d), compression="zip")


@case("tfrecords", "read_records(seed=2**64, shuffle_files=True)", ("seed",))
def tfr_seed_big(d):
    return read_all(_records(d), seed=2**64, shuffle_files=True)


@case("tfrecords", "read_records(shuffle_files='yes')", ("shuffle_files",))
def tfr_shuffle_str(d):
    return read_all(_records(d), shuffle_files="yes")


@case("tfrecords", "read_records(bogus=1): an unknown keyword", ("bogus",))
def tfr_unknown_kw(d):
    return read_all(_records(d), bogus=1)


@case("tfrecords", "a manifest that is not JSON", ("manifest",))
def tfr_manifest_garbage(d):
    s = _records(d)
    man = next(p for p in s.iterdir() if "manifest" in p.name.lower())
    man.write_text("{not json")
    return read_all(s)


@case("tfrecords", "a manifest that is a JSON list", ("manifest",))
def tfr_manifest_list(d):
    s = _records(d)
    man = next(p for p in s.iterdir() if "manifest" in p.name.lower())
    man.write_text("[]")
    return read_all(s)


@case("tfrecords", "an extra record file beside the manifest's", ("extra",),
      either=True, ok=lambda got: len(got) == 8)
def tfr_extra_file(d):
    s = _records(d)
    (s / "extra-00000.tfrecord").write_bytes((s / sorted(
        p.name for p in s.iterdir() if p.suffix != ".json")[0]).read_bytes())
    return read_all(s)


@case("tfrecords", "a list of files with one named twice", ("twice", "duplicate"))
def tfr_file_twice(d):
    s = _records(d)
    f = str(sorted(p for p in s.iterdir() if "manifest" not in p.name.lower())[0])
    return read_all([f, f], check_manifest=False)


@case("tfrecords", "a shard file replaced by a folder", ("shard",))
def tfr_shard_folder(d):
    s = _records(d)
    f = sorted(p for p in s.iterdir() if "manifest" not in p.name.lower())[0]
    f.unlink()
    f.mkdir()
    return read_all(s)


@case("tfrecords", "ShardWriter(num_shards=0)", ("num_shards",))
def tfr_writer_zero(d):
    return _records(d, num_shards=0) if False else resolve("tfrecord_writer", "ShardWriter")(
        d / "s", num_shards=0)


@case("tfrecords", "ShardWriter(mode='random')", ("mode",))
def tfr_writer_mode(d):
    return resolve("tfrecord_writer", "ShardWriter")(d / "s", mode="random")


@case("tfrecords", "ShardWriter(max_bytes=0)", ("max_bytes",))
def tfr_writer_max_zero(d):
    return resolve("tfrecord_writer", "ShardWriter")(d / "s", max_bytes=0)


@case("tfrecords", "ShardWriter(compression='LZ4')", ("compression",))
def tfr_writer_compression(d):
    return resolve("tfrecord_writer", "ShardWriter")(d / "s", compression="LZ4")


@case("tfrecords", "ShardWriter(prefix='a/b')", ("prefix",))
def tfr_writer_prefix(d):
    return resolve("tfrecord_writer", "ShardWriter")(d / "s", prefix="a/b")


@case("tfrecords", "ShardWriter into a path that is a file", ("f.txt",))
def tfr_writer_file(d):
    W = resolve("tfrecord_writer", "ShardWriter")
    with W(write(d, "f.txt", "x"), num_shards=1) as w:
        w.write(b"a")


@case("tfrecords", "ShardWriter.write('text') (a str, not bytes)", ("bytes", "str"))
def tfr_writer_str(d):
    W = resolve("tfrecord_writer", "ShardWriter")
    with W(d / "s", num_shards=1) as w:
        w.write("text")


@case("tfrecords", "ShardWriter over a set without overwrite=True", ("overwrite",))
def tfr_writer_again(d):
    _records(d)
    return _records(d)


@case("tfrecords", "count_records of a file of random bytes", ("g.tfrecord",))
def tfr_count_garbage(d):
    return resolve("tfrecords", "count_records")(write(d, "g.tfrecord", bytes(range(256))))


@case("tfrecords", "record_offsets of a folder", ("sub",))
def tfr_offsets_folder(d):
    (d / "sub").mkdir()
    return resolve("tfrecords", "record_offsets")(str(d / "sub"))


# ------------------------------------------------------------------ tf.train.Example
@case("example", "to_example with a None value", ("'a'", "feature"))
def ex_none(d):
    return resolve("tf_example", "to_example")({"a": None})


@case("example", "to_example with a nested dict", ("'a'", "feature"))
def ex_nested(d):
    return resolve("tf_example", "to_example")({"a": {"b": 1}})


@case("example", "to_example with ints and strings in one list", ("'a'", "feature"))
def ex_mixed(d):
    return resolve("tf_example", "to_example")({"a": [1, "x"]})


@case("example", "to_example with a 2-D array (shape lost)", ("'a'", "shape", "2-d"))
def ex_2d(d):
    import numpy as np
    return resolve("tf_example", "to_example")({"a": np.ones((2, 3))})


@case("example", "to_example given a list of pairs", ("features", "dict of feature"))
def ex_list(d):
    return resolve("tf_example", "to_example")([("a", 1)])


@case("example", "to_example with an int key", ("key", "name"))
def ex_int_key(d):
    return resolve("tf_example", "to_example")({1: [1]})


@case("example", "parse_example of random bytes", ("serialized", "example"))
def ex_parse_garbage(d):
    import tensorflow as tf
    return resolve("tf_example", "parse_example")(
        b"\xff\x00garbage", {"a": tf.io.FixedLenFeature([], tf.int64)})


@case("example", "parse_example with a spec naming a missing feature", ("'b'", "feature"))
def ex_parse_missing(d):
    import tensorflow as tf
    m = resolve("tf_example", "to_example")({"a": [1]})
    return resolve("tf_example", "parse_example")(
        resolve("tf_example", "serialize")(m), {"b": tf.io.FixedLenFeature([], tf.int64)})


@case("example", "parse_example with a spec that is a list", ("spec",))
def ex_parse_spec_list(d):
    m = resolve("tf_example", "to_example")({"a": [1]})
    return resolve("tf_example", "parse_example")(resolve("tf_example", "serialize")(m), ["a"])


@case("example", "to_sequence_example with steps of different lengths", ("'s'", "sequence"),
      either=True, ok=lambda got: got is not None)
def ex_seq_ragged(d):
    return resolve("tf_example", "to_sequence_example")({"c": [1]}, {"s": [[1, 2], [3]]})


@case("example", "to_sequence_example with a str where steps are expected", ("'s'", "sequence"))
def ex_seq_str(d):
    return resolve("tf_example", "to_sequence_example")({"c": [1]}, {"s": "abc"})


# ------------------------------------------------------------------ checkpoints
@case("checkpoint", "shuffled_range(5, 5, seed=2**64)", ("seed",))
def ck_seed_big(d):
    return list(resolve("checkpoint", "shuffled_range")(5, 5, seed=2**64).as_numpy_iterator())


@case("checkpoint", "shuffled_range(-3, 2)", ("n=",))
def ck_n_negative(d):
    return list(resolve("checkpoint", "shuffled_range")(-3, 2).as_numpy_iterator())


@case("checkpoint", "shuffled_range(5, 0)", ("buffer_size",))
def ck_buffer_zero(d):
    return list(resolve("checkpoint", "shuffled_range")(5, 0).as_numpy_iterator())


@case("checkpoint", "shuffled_range(5, 2, batch_size=-1)", ("batch_size",))
def ck_batch_negative(d):
    return list(resolve("checkpoint", "shuffled_range")(5, 2, batch_size=-1)
                .as_numpy_iterator())


@case("checkpoint", "save_midway(n=-1)", ("n",))
def ck_save_negative(d):
    import tensorflow as tf
    return resolve("checkpoint", "save_midway")(tf.data.Dataset.range(5), -1, d / "ck")


@case("checkpoint", "save_midway into a path that is a file", ("f.txt",))
def ck_save_file(d):
    import tensorflow as tf
    return resolve("checkpoint", "save_midway")(tf.data.Dataset.range(5), 2, write(d, "f.txt",
                                                                                   "x"))


@case("checkpoint", "save_midway of a list, not a dataset", ("dataset",))
def ck_save_list(d):
    return resolve("checkpoint", "save_midway")([1, 2, 3], 1, d / "ck")


@case("checkpoint", "checkpoint_bytes of a folder", ("sub",))
def ck_bytes_folder(d):
    (d / "sub").mkdir()
    return resolve("checkpoint", "checkpoint_bytes")(str(d / "sub"))


@case("checkpoint", "resume_in_fresh_process(kwargs=[1])", ("kwargs",))
def ck_resume_kwargs_list(d):
    import tensorflow as tf
    _, path = resolve("checkpoint", "save_midway")(tf.data.Dataset.range(5), 2, d / "ck")
    mod = resolve("checkpoint", "shuffled_range").__module__
    return resolve("checkpoint", "resume_in_fresh_process")(f"{mod}:shuffled_range", path,
                                                            kwargs=[1])


@case("checkpoint", "resume_in_fresh_process(timeout=0)", ("timeout",))
def ck_resume_timeout_zero(d):
    import tensorflow as tf
    _, path = resolve("checkpoint", "save_midway")(tf.data.Dataset.range(5), 2, d / "ck")
    mod = resolve("checkpoint", "shuffled_range").__module__
    return resolve("checkpoint", "resume_in_fresh_process")(f"{mod}:shuffled_range", path,
                                                            timeout=0)


@case("checkpoint", "resume from a checkpoint whose .index is truncated", ("ck",))
def ck_index_truncated(d):
    ds = resolve("checkpoint", "shuffled_range")(10, 3)
    _, path = resolve("checkpoint", "save_midway")(ds, 3, d / "ck")
    idx = Path(path + ".index")
    idx.write_bytes(idx.read_bytes()[:10])
    mod = resolve("checkpoint", "shuffled_range").__module__
    return resolve("checkpoint", "resume_in_fresh_process")(
        f"{mod}:shuffled_range", path, kwargs={"n": 10, "buffer_size": 3}, timeout=50)


# ------------------------------------------------------------------ manifests
def _man_set(d: Path):
    s = _records(d)
    man = next(p for p in s.iterdir() if "manifest" in p.name.lower())
    return s, man


@case("manifest", "manifest of an unknown format version", ("manifest", "version"))
def man_version(d):
    s, man = _man_set(d)
    m = json.loads(man.read_text())
    m["version"] = 999
    man.write_text(json.dumps(m))
    return resolve("manifest", "check")(s)


@case("manifest", "manifest whose entry lists a negative size", ("manifest", "size", "-5"))
def man_negative_size(d):
    s, man = _man_set(d)
    text = man.read_text()
    m = json.loads(text)

    def walk(o):
        if isinstance(o, dict):
            for k in o:
                if k in ("bytes", "size"):
                    o[k] = -5
                else:
                    walk(o[k])
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(m)
    man.write_text(json.dumps(m))
    return resolve("manifest", "check")(s)


@case("manifest", "check(sets=['nope'])", ("nope",))
def man_unknown_set(d):
    s, _ = _man_set(d)
    return resolve("manifest", "check")(s, sets=["nope"])


@case("manifest", "check of a folder that does not exist", ("gone",))
def man_missing_folder(d):
    return resolve("manifest", "check")(d / "gone")


@case("manifest", "read_manifest of a manifest that is an empty file", ("manifest",))
def man_empty_file(d):
    s, man = _man_set(d)
    man.write_text("")
    return resolve("manifest", "read_manifest")(s)


@case("manifest", "sha256 of a folder", ("sub",))
def man_sha_folder(d):
    (d / "sub").mkdir()
    return resolve("manifest", "sha256")(d / "sub")


# ------------------------------------------------------------------ tf.Transform (no Beam run)
def _plan(d: Path, text=GOOD, **kw):
    kw = {"label": "y", **kw}
    return resolve("transform", "plan_transform")([write(d, "a.csv", text)], **kw)


@case("transform", "plan_transform(label='nope')", ("nope",))
def tft_label_missing(d):
    return _plan(d, label="nope")


@case("transform", "plan_transform(columns={'x', 'y'}) (a set)", ("columns", "set"))
def tft_columns_set(d):
    return _plan(d, columns={"x", "y"})


@case("transform", "plan_transform(max_vocabulary=-1)", ("max_vocabulary",))
def tft_vocab_negative(d):
    return _plan(d, "c,y\na,1\nb,2\n", max_vocabulary=-1)


@case("transform", "plan_transform(text_columns=['nope'])", ("text_columns", "nope"))
def tft_text_unknown(d):
    return _plan(d, text_columns=["nope"])


@case("transform", "plan_transform of a header-only file", ("a.csv",))
def tft_header_only(d):
    return _plan(d, "x,y\n")


@case("transform", "plan_transform with a nan label", ("a.csv",))
def tft_nan_label(d):
    return _plan(d, GOOD + "1.0,nan\n")


@case("transform", "plan_transform with an inf feature", ("a.csv",))
def tft_inf_feature(d):
    return _plan(d, GOOD + "inf,3\n")


@case("transform", "plan_transform of a folder", ("sub",))
def tft_folder(d):
    (d / "sub").mkdir()
    return resolve("transform", "plan_transform")([str(d / "sub")], label="y")


@case("transform", "plan_transform(label=None)", ("label",))
def tft_label_none(d):
    return _plan(d, label=None)


@case("transform", "run_transform(workers=0) (refused before Beam starts)", ("workers",))
def tft_workers_zero(d):
    job = _plan(d)
    return resolve("transform", "run_transform")(job, d / "out", workers=0)
