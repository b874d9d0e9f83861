"""The CSV reader: values equal pandas, every row once, both variants alike, bad lines located."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from csv_cases import LABEL, five_files, read_all, sorted_rows

from datakit.readers import csv_files as dc
from datakit.readers.csv_files.line_decoding import LINES_PER_CHUNK
from datakit.readers.csv_files.reader import OOV
from datakit.readers.csv_files.stats import column_stats
from datakit.readers.tables.table_stats import NUMBER, TEXT

pytestmark = pytest.mark.timeout(300)


def expected_rows(files, stats):
    """What the reader must yield for ``files`` in order, computed with pandas and NumPy."""
    df = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in files])
    cols = []
    for c in stats.columns:
        s = stats[c]
        if c == LABEL:
            continue
        if s.kind == NUMBER:
            v = df[c].astype(np.float32).fillna(np.float32(s.mean))  # documented fill: the mean
            cols.append(((v - np.float32(s.mean)) / np.float32(s.std)).to_numpy()[:, None])
    for c in stats.columns:
        s = stats[c]
        if c != LABEL and s.kind == TEXT:
            slots = [OOV] + list(s.vocabulary)
            idx = df[c].map(lambda v, slots=slots: slots.index(v) if v in slots[1:] else 0)
            cols.append(np.eye(len(slots), dtype=np.float32)[idx.to_numpy()])
    return np.hstack(cols), df[LABEL].to_numpy(np.float32)


# -- the reader ------------------------------------------------------------------


@pytest.mark.parametrize("parse", ["line", "batch", "vectorized"])
def test_reader_values_equal_pandas_after_fill_and_scaling(housing, parse):
    parts, stats = housing
    files = sorted(parts["valid"])
    x, y = read_all(dc.csv_reader_dataset(files, stats=stats, label=LABEL, n_readers=1,
                                          shuffle_buffer_size=None, batch_size=100, parse=parse))
    ex, ey = expected_rows(files, stats)
    np.testing.assert_allclose(x, ex, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y, ey)
    missing = pd.concat([pd.read_csv(f) for f in files])["total_bedrooms"].isna().to_numpy()
    col = dc.feature_names(stats, LABEL).index("total_bedrooms")
    assert missing.any() and (x[missing, col] == 0).all()  # filled with the mean -> 0.0


def test_every_row_exactly_once_per_epoch(housing):
    parts, stats = housing
    files = [f for p in parts.values() for f in p]
    ex, ey = read_all(dc.csv_reader_dataset(files, stats=stats, label=LABEL, n_readers=1,
                                            shuffle_buffer_size=None, batch_size=1000))
    assert len(ey) == 20640
    wx, wy = expected_rows(sorted(files), stats)  # unshuffled, one reader: sorted file order
    np.testing.assert_allclose(ex, wx, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ey, wy)
    want = sorted_rows(ex, ey)
    # parse="line" gives the same rows in the same order: test_fast_variant_...
    ds = dc.csv_reader_dataset(files, stats=stats, label=LABEL, seed=3, parse="batch",
                               batch_size=256)
    assert len(ds) == -(-20640 // 256)
    orders = []
    for _ in range(2):  # two epochs: iterate the same dataset twice
        x, y = read_all(ds)
        np.testing.assert_array_equal(sorted_rows(x, y), want)
        orders.append(y)
    assert not np.array_equal(orders[0], orders[1])  # reshuffled


def _shuffled_twice(stats):
    return dict(stats=stats, label=LABEL, seed=5, batch_size=64, shuffle_buffer_size=1000,
                repeat=2)


@pytest.fixture(scope="module")
def line_order(housing):
    """The train shards as parse="line" reads them, shuffled, two epochs: read once, for
    every fast variant to match."""
    parts, stats = housing
    return read_all(dc.csv_reader_dataset(parts["train"], parse="line", **_shuffled_twice(stats)))


@pytest.mark.parametrize("parse, threads", [
    pytest.param("batch", dict(), id="batch"),
    pytest.param("batch", dict(n_read_threads=2, n_parse_threads=None), id="batch-threads"),
    pytest.param("vectorized", dict(n_read_threads=2), id="vectorized")])
def test_fast_variants_give_the_same_rows_in_the_same_order(housing, line_order, parse, threads):
    """Rows enter the shuffle buffer in the classic order, so one seed gives one order."""
    parts, stats = housing
    xl, yl = line_order
    xb, yb = read_all(dc.csv_reader_dataset(parts["train"], parse=parse, prefetch=0,
                                            **threads, **_shuffled_twice(stats)))
    assert len(yl) == 2 * 16512
    np.testing.assert_array_equal(xl, xb)
    np.testing.assert_array_equal(yl, yb)


def test_same_seed_same_order_other_seed_other_order(housing):
    parts, stats = housing
    kw = dict(stats=stats, label=LABEL, batch_size=512, parse="batch")
    a = read_all(dc.csv_reader_dataset(parts["test"], seed=1, **kw))[1]
    b = read_all(dc.csv_reader_dataset(parts["test"], seed=1, **kw))[1]
    c = read_all(dc.csv_reader_dataset(parts["test"], seed=2, **kw))[1]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("parse, stages", [
    pytest.param("line", ["lines", "parse"], id="line"),
    pytest.param("batch", ["rows"], id="batch"),
    pytest.param("vectorized", ["lines", "parse"], id="vectorized")])
def test_traced_reader_is_the_same_chain_with_stages(tmp_path, parse, stages):
    from datakit.perf import timeline
    from datakit.readers.csv_files.shards import write_shards
    rng = np.random.default_rng(0)
    table = {"row": np.arange(200.0), "a": rng.normal(size=200), "y": rng.normal(size=200)}
    paths = write_shards(table, tmp_path, num_shards=4, prefix="t")
    stats = column_stats(paths)
    kw = dict(stats=stats, label="y", batch_size=16, seed=1, n_readers=2, parse=parse)
    traced = dc.csv_reader_dataset(paths, trace=True, **kw)
    assert timeline.stage_names(traced.element_spec) == stages
    plain = [b for b in dc.csv_reader_dataset(paths, **kw).as_numpy_iterator()]
    values = [v for v, _ in traced.as_numpy_iterator()]
    for (px, py), (tx, ty) in zip(plain, values, strict=True):
        np.testing.assert_array_equal(px, tx)
        np.testing.assert_array_equal(py, ty)
    rows = np.concatenate([x[:, 0] for x, _ in plain])
    row_mean, row_std = stats["row"].mean, stats["row"].std
    assert sorted(np.round(rows * row_std + row_mean).astype(int).tolist()) == list(range(200))
    tl = timeline.trace_timeline(traced)
    assert tl.stages == stages and len(tl.ids) == (13 if parse == "vectorized" else 200)


def test_unknown_and_empty_text_go_to_the_unk_slot(tmp_path):
    (tmp_path / "train.csv").write_text("x,city,y\n1,paris,1\n2,rome,2\n3,paris,3\n")
    (tmp_path / "new.csv").write_text("x,city,y\n4,oslo,4\n,,5\n5,\"rome\",6\n")
    stats = column_stats(str(tmp_path / "train.csv"))
    assert dc.feature_names(stats, "y") == ["x", "city=[UNK]", "city=paris", "city=rome"]
    x, y = read_all(dc.csv_reader_dataset(str(tmp_path / "new.csv"), stats=stats, label="y",
                                          shuffle_buffer_size=None))
    assert x[:, 1:].tolist() == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    assert x[1, 0] == 0.0 and y.tolist() == [4, 5, 6]


# -- bad input -------------------------------------------------------------------


@pytest.fixture(scope="module")
def five(tmp_path_factory):
    """Five good files of 9 rows ``a,b,c`` and the statistics of the first two: the
    statistics of every ``five_files`` set, whose bad line is in the third file."""
    paths = five_files(tmp_path_factory.mktemp("five"), "1,2,x")
    return paths, column_stats(paths[:2])


BAD = [("1,2", None, "found 2 field(s), expected 3"),
       ("1,2,x,4", None, "found 4 fields, expected 3"),
       ("1,abc,x", "b (2 of 3)", "expected a number, got `abc`"),
       ('1,2,"open', "c (3 of 3)", "unterminated quote")]


@pytest.mark.parametrize("parse", ["line", "batch", "vectorized"])
@pytest.mark.parametrize("raw, column, reason", [pytest.param(*b, id=b[2].split(",")[0])
                                                 for b in BAD])
def test_bad_line_error_names_file_line_column_and_raw_line(tmp_path, five, parse, raw, column,
                                                            reason):
    paths, stats = five_files(tmp_path, raw), five[1]
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        read_all(dc.csv_reader_dataset(paths, stats=stats, label="a", parse=parse, seed=0))
    msg = str(info.value).replace('\\"', '"')  # TensorFlow escapes quotes
    assert f"{paths[2]}, line 6" in msg and reason in msg and f"`{raw}`" in msg
    assert column is None or column in msg


@pytest.mark.parametrize("raw, column, reason", [pytest.param(*b, id=b[2].split(",")[0])
                                                 for b in BAD])
def test_find_bad_lines_names_file_line_column_and_raw_line(tmp_path, five, raw, column, reason):
    paths = five_files(tmp_path, raw)
    bad = dc.find_bad_lines(paths, five[1], label="a")  # the reader's check, before training
    assert [(b.file, b.line, b.column, b.reason, b.raw) for b in bad] == [
        (paths[2], 6, column, reason, raw)]


def test_bad_line_far_into_a_file_has_its_own_line_number(tmp_path, five):
    """The fast reader numbers lines by chunk: check a line in a later chunk."""
    n = 3 * LINES_PER_CHUNK
    lines = [f"{i},{i * 0.5},t" for i in range(n)]
    lines[2 * LINES_PER_CHUNK + 7] = "1,oops,t"  # file line 2 * CHUNK + 9 (header is line 1)
    path = tmp_path / "long.csv"
    path.write_text("a,b,c\n" + "\n".join(lines) + "\n")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=f"long.csv, line {2 * LINES_PER_CHUNK + 9}, column b"):
        read_all(dc.csv_reader_dataset(str(path), stats=five[1], label="a", parse="batch"))


def test_empty_label_is_a_bad_line(tmp_path, five):
    paths = five_files(tmp_path, ",2,x")
    assert [b.reason for b in dc.find_bad_lines(paths, five[1], label="a")] == [
        "the label is empty"]


@pytest.mark.parametrize("parse", ["line", "batch", "vectorized"])
def test_skip_bad_lines_warns_per_file_and_keeps_the_rest(tmp_path, five, parse):
    paths = five_files(tmp_path, "1,abc,x")
    with open(paths[4], "a") as f:
        f.write("2,3\n9,zzz,t\n")
    stats = five[1]
    expected = r"skipping 3 bad line\(s\) \(part_2.csv: 1, part_4.csv: 2\)"
    with pytest.warns(UserWarning, match=expected):
        ds = dc.csv_reader_dataset(paths, stats=stats, label="a", on_bad_line="skip", seed=0,
                                   parse=parse)
    assert sorted(read_all(ds)[1].tolist()) == [float(2 * k) for k in range(45)]


def test_problems_with_files_are_reported_up_front(tmp_path):
    good = five_files(tmp_path, "1,2,x")[:2]
    stats = column_stats(good[:1])
    read = lambda files: dc.csv_reader_dataset(files, stats=stats, label="a")  # noqa: E731
    with pytest.raises(FileNotFoundError, match="nope.csv: no such file"):
        read(good + [str(tmp_path / "nope.csv")])
    with pytest.raises(FileNotFoundError, match="matches no file"):
        read(str(tmp_path / "train_*.csv"))
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty.csv: the file is empty"):
        read(good + [str(tmp_path / "empty.csv")])
    (tmp_path / "other.csv").write_text("a,b,d\n1,2,x\n")
    with pytest.raises(ValueError, match="other.csv, line 1: its header `a,b,d` differs"):
        read(good + [str(tmp_path / "other.csv")])


@pytest.mark.parametrize("kwargs, fix", [
    pytest.param(kw, fix, id="-".join(f"{k}={v}" for k, v in kw.items())) for kw, fix in [
        ({"batch_size": 0}, "batch_size=0"), ({"n_readers": 0}, "n_readers=0"),
        ({"shuffle_buffer_size": -3}, "shuffle_buffer_size"), ({"parse": "fast"}, "parse="),
        ({"label": "zzz"}, "not a column"), ({"label": "c", "label_scale": 2}, "text label"),
        ({"output": "frame"}, "'matrix'"),
        ({"n_parse_threads": 0}, "AUTOTUNE"), ({"on_bad_line": "ignore"}, "skip"),
        ({"prefetch": -5}, "prefetch"), ({"n_read_threads": 6}, "n_read_threads=6"),
        ({"label_scale": 0}, "label_scale"), ({"label_scale": float("inf")}, "finite")]])
def test_bad_arguments_say_how_to_fix(five, kwargs, fix):
    paths, stats = five
    kwargs = {"label": "a", **kwargs}
    with pytest.raises(ValueError, match=fix):
        dc.csv_reader_dataset(paths, stats=stats, **kwargs)


@pytest.mark.parametrize("kwargs", [
    pytest.param({"batch_size": 2.5}, id="batch_size-float"),
    pytest.param({"n_readers": None}, id="n_readers-None"),
    pytest.param({"n_parse_threads": "4"}, id="n_parse_threads-str"),
    pytest.param({"label_scale": "2"}, id="label_scale-str"),
    pytest.param({"trace": "yes"}, id="trace-str")])
def test_wrong_types_raise_type_error(five, kwargs):
    paths, stats = five
    with pytest.raises(TypeError, match=next(iter(kwargs))):
        dc.csv_reader_dataset(paths, stats=stats, label="a", **kwargs)


# -- training ----------------------------------------------------------------------


def test_fit_on_the_reader_lowers_validation_loss(housing):
    parts, stats = housing
    tf.keras.utils.set_random_seed(42)
    kw = dict(stats=stats, label=LABEL, label_scale=100_000, parse="batch")
    train = dc.csv_reader_dataset(parts["train"], seed=42, batch_size=64, **kw)
    valid = dc.csv_reader_dataset(parts["valid"], shuffle_buffer_size=None, batch_size=512, **kw)
    n = len(dc.feature_names(stats, LABEL))
    model = tf.keras.Sequential([tf.keras.Input((n,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer=tf.keras.optimizers.Adam(1e-2))
    before = model.evaluate(valid, verbose=0)
    history = model.fit(train, validation_data=valid, epochs=2, verbose=0,
                        shuffle=False)  # the reader shuffles; Keras would only warn
    assert history.history["val_loss"][-1] < before / 2


# -- your own CSV: columns, a text label, capped vocabularies, dict output (#16) ------

KEEP = ["class", "sex", "age", "siblings", "parents", "fare", "cabin", "port"]


@pytest.fixture(scope="module")
def passengers(tmp_path_factory):
    from datakit.readers.csv_files.demo_tables import passengers as table
    from datakit.readers.csv_files.shards import split_into_shards
    parts = split_into_shards(table(891, seed=0), tmp_path_factory.mktemp("passengers"),
                              num_shards=(4, 2, 2), seed=1)
    stats = column_stats(parts["train"], columns=KEEP, max_vocabulary={"cabin": 5})
    frame = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""])
                       for f in parts["train"]])
    return parts, stats, frame


def test_text_label_is_the_class_index_in_the_sorted_classes(passengers):
    parts, stats, df = passengers
    classes = dc.class_names(stats, "class")
    assert classes == ["first", "second", "third"]  # sorted, as Keras sorts class folders
    ds = dc.csv_reader_dataset(parts["train"], stats=stats, label="class",
                               shuffle_buffer_size=None, batch_size=1000, n_readers=1)
    x, y = read_all(ds)
    assert y.dtype == np.int64 and y.tolist() == [classes.index(c) for c in df["class"]]
    names = dc.feature_names(stats, "class")
    assert x.shape == (len(df), len(names)) == (len(df), 4 + 3 + 6 + 4)  # capped cabin: 5 + [UNK]
    assert names[:5] == ["age", "siblings", "parents", "fare", "sex=[UNK]"]
    assert "name=" not in " ".join(names) and not any(n.startswith(("id", "ticket")) for n in names)
    cabin = [names.index(f"cabin={v}") for v in [OOV] + list(stats["cabin"].vocabulary)]
    kept = df["cabin"].isin(list(stats["cabin"].vocabulary))
    assert np.array_equal(x[:, cabin].argmax(axis=1) > 0, kept.to_numpy())


@pytest.mark.parametrize("parse", ["line", "batch", "vectorized"])
def test_dict_output_raw_text_standardized_numbers_same_order_as_matrix(passengers, parse):
    parts, stats, df = passengers
    kw = dict(stats=stats, label="class", seed=5, batch_size=64, parse=parse)
    as_dict = list(dc.csv_reader_dataset(parts["train"], output="dict", **kw))
    as_matrix = list(dc.csv_reader_dataset(parts["train"], **kw))
    assert dc.feature_names(stats, "class", output="dict") == [c for c in KEEP if c != "class"]
    for (features, y1), (x, y2) in zip(as_dict, as_matrix, strict=True):
        assert list(features) == [c for c in KEEP if c != "class"]
        assert np.array_equal(y1, y2)
        numbers = [features[c] for c in ["age", "siblings", "parents", "fare"]]
        assert np.array_equal(np.stack(numbers, axis=1), x[:, :4])
        assert features["sex"].dtype == tf.string
    rows = sorted(zip(*[np.concatenate([f[c].numpy() for f, _ in as_dict])
                        for c in ["port", "age"]], strict=True))
    age = (df["age"].fillna(stats["age"].mean) - stats["age"].mean) / stats["age"].std
    want = sorted(zip(df["port"].fillna("").str.encode("utf-8"), age.astype(np.float32),
                      strict=True))
    assert [r[0] for r in rows] == [w[0] for w in want] and np.allclose(
        [r[1] for r in rows], [w[1] for w in want], atol=1e-5)
    again = list(dc.csv_reader_dataset(parts["train"], output="dict", **kw))
    assert all(np.array_equal(a[1], b[1]) and np.array_equal(a[0]["sex"], b[0]["sex"])
               for a, b in zip(as_dict, again, strict=True))  # same seed, same rows, same order


def test_unseen_or_empty_label_is_a_located_bad_line_or_skipped(tmp_path, passengers):
    _, stats, df = passengers
    header = ",".join(stats.header)
    row = "1,0,{},\"Rice, Mr. Karl\",male,22.0,0,0,A/5 1,7.25,,S"
    path = tmp_path / "new.csv"
    path.write_text("\n".join([header, row.format("third"), row.format("fourth"),
                               row.format("")]) + "\n")
    bad = dc.find_bad_lines(str(path), stats, label="class")
    assert [(b.line, b.reason) for b in bad] == [
        (3, "`fourth` is not one of the label's classes ['first', 'second', 'third']"),
        (4, "the label is empty")]
    with pytest.raises(tf.errors.InvalidArgumentError, match="new.csv, line 3, column class"):
        read_all(dc.csv_reader_dataset(str(path), stats=stats, label="class",
                                       shuffle_buffer_size=None))  # in order: line 3 first
    with pytest.warns(UserWarning, match="skipping 2 bad line"):
        ds = dc.csv_reader_dataset(str(path), stats=stats, label="class", on_bad_line="skip")
    assert read_all(ds)[1].tolist() == [2]  # third


def test_a_numeric_label_stays_a_number(passengers):
    parts, _, df = passengers
    stats = column_stats(parts["train"], columns=["fare", "age", "class"])
    _, y = read_all(dc.csv_reader_dataset(parts["train"], stats=stats, label="fare",
                                          shuffle_buffer_size=None, batch_size=500, n_readers=1))
    assert y.dtype == np.float32 and np.allclose(y, df["fare"])


def test_dict_features_train_a_keras_model_with_preprocessing_layers(passengers):
    parts, stats, _ = passengers
    tf.keras.utils.set_random_seed(0)
    kw = dict(stats=stats, label="class", output="dict", parse="batch")
    train = dc.csv_reader_dataset(parts["train"], seed=0, batch_size=32, **kw)
    valid = dc.csv_reader_dataset(parts["valid"], shuffle_buffer_size=None, batch_size=256, **kw)
    inputs, encoded = {}, []
    for c in dc.feature_names(stats, "class", output="dict"):
        text = stats[c].kind == TEXT
        inputs[c] = tf.keras.Input(shape=(), name=c, dtype="string" if text else "float32")
        if text:
            lookup = tf.keras.layers.StringLookup(vocabulary=list(stats[c].vocabulary),
                                                  output_mode="one_hot")
            encoded.append(lookup(inputs[c]))
        else:
            encoded.append(tf.keras.layers.Reshape((1,))(inputs[c]))
    hidden = tf.keras.layers.Dense(16, activation="relu")(tf.keras.layers.Concatenate()(encoded))
    outputs = tf.keras.layers.Dense(3, activation="softmax")(hidden)
    model = tf.keras.Model(inputs, outputs)
    model.compile(loss="sparse_categorical_crossentropy", optimizer=tf.keras.optimizers.Adam(1e-2),
                  metrics=["accuracy"])
    history = model.fit(train, validation_data=valid, epochs=5, verbose=0, shuffle=False)
    assert history.history["val_accuracy"][-1] > 0.75  # the fare tells the class; majority ~0.58


@pytest.mark.parametrize("parse", ["line", "batch", "vectorized", "chunk", "arrow"])
def test_a_file_listed_twice_is_refused_in_every_parse_mode(five, parse):
    """Once or twice? The one rule of core.paths: refused naming the file, nothing read (#47)."""
    paths, stats = five
    with pytest.raises(ValueError, match=r"filepaths names .*part_0\.csv.* twice"):
        dc.csv_reader_dataset([paths[0], paths[1], paths[0]], stats=stats, label="a",
                              parse=parse)


@pytest.mark.parametrize("parse", ["line", "chunk", "arrow"])
def test_an_infinite_feature_counts_as_missing_as_in_the_statistics(tmp_path, parse):
    """#47: column_stats counts inf as missing, but the reader passed inf to the model."""
    path = tmp_path / "a.csv"
    path.write_text("x,y\n1,2\ninf,3\n2,4\n-inf,5\n")
    ds = dc.csv_reader_dataset([str(path)], stats=column_stats(str(path)), label="y",
                               shuffle_buffer_size=None, parse=parse)
    x, y = read_all(ds)
    assert x.ravel().tolist() == [-1.0, 0.0, 1.0, 0.0] and y.tolist() == [2, 3, 4, 5]


@pytest.mark.timeout(170)
def test_column_stats_of_a_wide_csv_match_pandas_without_a_word_from_re2(tmp_path, capfd):
    """1,500 number columns: the row pattern outgrew RE2's fast engine, which printed "DFA out
    of memory" on stderr for each line (from C++, to file descriptor 2: ``capfd`` sees it,
    ``capsys`` would not) and took over a minute, the graph of an op per column another half;
    matched in groups of columns now."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(size=(100, 1500)).round(4),  # RE2 spoke on every line
                         columns=[f"c{i}" for i in range(1500)])
    table.iloc[3, 5] = np.nan  # an empty field
    path = tmp_path / "wide.csv"
    table.to_csv(path, index=False)
    text = path.read_text().splitlines()
    fields = text[10].split(",")
    text[10] = ",".join(fields[:7] + ["NA"] + fields[8:])  # a marker: read as text first
    path.write_text("\n".join(text) + "\n")
    capfd.readouterr()  # what came before: not this call's
    stats = column_stats(str(path), progress=False)
    said = capfd.readouterr().err
    assert [line for line in said.splitlines() if "re2" in line.lower()] == []
    table = pd.read_csv(path)
    assert stats.columns == list(table.columns) and len(stats.columns) == 1500
    got = np.array([[stats[c].count, stats[c].missing, stats[c].mean, stats[c].std,
                     stats[c].min, stats[c].max] for c in table.columns])
    want = np.c_[table.count(), table.isna().sum(), table.mean(), table.std(ddof=0),
                 table.min(), table.max()]  # per column, as pandas computes them
    counted = (got[:, :2] == want[:, :2]).all(axis=1)
    assert counted.all(), [(c, *got[i, :2]) for i, c in enumerate(table.columns) if not counted[i]]
    close = np.isclose(got[:, 2:], want[:, 2:], rtol=1e-9).all(axis=1)
    assert close.all(), [c for i, c in enumerate(table.columns) if not close[i]]


# -- no AutoGraph for the kit's own functions ------------------------------------


def test_building_the_reader_converts_none_of_the_kits_functions(tmp_path, monkeypatch):
    """AutoGraph rewrites each function handed to tf.data (about 35 ms of CPU each, 1.3 s
    for the reader's first build in a process) for Python control flow on tensors, which
    the kit's functions do not use: each is wrapped in ``graph_functions.as_written``. A
    new kit function handed to tf.data unwrapped is named here. The spy calls AutoGraph's
    own conversion and sees a learner's function still converted."""
    from tensorflow.python.autograph.impl import api

    from datakit.readers.csv_files.modes import PARSE_MODES
    from datakit.readers.csv_files.shards import write_shards

    real, converted = api._convert_actual, []

    def spy(entity, program_ctx):
        converted.append(f"{getattr(entity, '__module__', '?')}.{entity.__qualname__}")
        return real(entity, program_ctx)

    monkeypatch.setattr(api, "_convert_actual", spy)
    paths = write_shards({"x": [1.0, 2.0, None, 4.0], "c": ["a", "b", "", "a"],
                          "y": [10.0, 20.0, 30.0, 40.0]}, str(tmp_path), num_shards=2)
    stats = column_stats(paths)
    for parse in sorted(PARSE_MODES):
        for on_bad_line in ("raise", "skip"):
            ds = dc.csv_reader_dataset(paths, stats=stats, label="y", parse=parse,
                                       on_bad_line=on_bad_line, batch_size=2)
            assert next(iter(ds))[0].shape[0] == 2, (parse, on_bad_line)
    kit = sorted({c for c in converted if c.startswith("datakit.")})
    assert not kit, f"AutoGraph converted the kit's {kit}: wrap each in as_written"
    next(iter(ds.map(lambda x, y: (x * 2, y))))  # a learner's function: converted as ever
    assert any(c.startswith(__name__) for c in converted), converted
