"""Serving what you trained: statistics saved beside the model, rows without the label, classes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from csv_cases import read_all

from datakit.core.errors import DataError
from datakit.readers import csv_files as dc
from datakit.readers.tables.table_stats import TableStats

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def passengers(tmp_path_factory):
    from datakit.readers.csv_files.demo_tables import passengers as table
    folder = tmp_path_factory.mktemp("serving")
    parts = dc.split_into_shards(table(600, seed=3), folder, num_shards=(3, 1, 1), seed=2)
    keep = ["class", "sex", "age", "fare", "cabin", "port"]
    stats = dc.column_stats(parts["train"], columns=keep, label="class", max_vocabulary=4)
    return folder, parts, stats


def test_statistics_saved_as_json_load_equal(passengers, tmp_path):
    _, _, stats = passengers
    path = stats.save(tmp_path / "stats.json")
    again = TableStats.load(path)
    assert again == stats and again.label == "class"
    assert list(again["cabin"].vocabulary) == list(stats["cabin"].vocabulary)  # order kept
    (tmp_path / "bad.json").write_text("{\"columns\": []}")
    with pytest.raises(DataError, match="bad.json: not statistics saved by TableStats.save"):
        TableStats.load(tmp_path / "bad.json")
    (tmp_path / "utf16.json").write_bytes(open(path, "rb").read().decode("utf-8").encode("utf-16"))
    with pytest.raises(DataError, match=r"utf16.json: not statistics saved by TableStats.save "
                                        r"\(not UTF-8 text: .* at byte 0\); save them again"):
        TableStats.load(tmp_path / "utf16.json")


def test_text_label_classes_are_sorted_and_never_capped(passengers):
    _, parts, stats = passengers
    assert dc.class_names(stats, "class") == ["first", "second", "third"]
    assert stats["cabin"].unknown > 0 and stats["class"].unknown == 0  # the cap spared the label
    capped = dc.column_stats(parts["train"], columns=["fare", "class"], max_vocabulary=2)
    with pytest.raises(ValueError, match="capped by max_vocabulary"):
        dc.csv_reader_dataset(parts["train"], stats=capped, label="class")
    with pytest.raises(ValueError, match="never caps the label"):
        dc.column_stats(parts["train"], columns=["fare", "class"], label="class",
                        max_vocabulary={"class": 2})


def test_a_model_trained_on_shards_predicts_unlabelled_rows_with_loaded_stats(passengers,
                                                                              tmp_path):
    folder, parts, stats = passengers
    tf.keras.utils.set_random_seed(0)
    train = dc.csv_reader_dataset(parts["train"], stats=stats, label="class", seed=0,
                                  parse="batch")
    n = len(dc.feature_names(stats, "class"))
    model = tf.keras.Sequential([tf.keras.Input((n,)), tf.keras.layers.Dense(16, "relu"),
                                 tf.keras.layers.Dense(3, "softmax")])
    model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
    model.fit(train, epochs=1, verbose=0, shuffle=False)
    model.save(tmp_path / "model.keras")
    stats.save(tmp_path / "stats.json")

    # serving: another folder, rows without the label, model and statistics from disk
    table = pd.concat([pd.read_csv(f, keep_default_na=False) for f in parts["test"]])
    unlabelled = dc.write_shards(table.drop(columns="class"), tmp_path / "new", num_shards=2)
    loaded = TableStats.load(tmp_path / "stats.json")
    served = tf.keras.models.load_model(tmp_path / "model.keras")
    rows = dc.csv_reader_dataset(unlabelled, stats=loaded, label=None, n_readers=1,
                                 shuffle_buffer_size=None, batch_size=64)
    assert isinstance(rows.element_spec, tf.TensorSpec)  # features only, no label
    predicted = served.predict(rows, verbose=0)
    labelled = dc.csv_reader_dataset(parts["test"], stats=stats, label="class", n_readers=1,
                                     shuffle_buffer_size=None, batch_size=64)
    x, _ = read_all(labelled)
    assert predicted.shape == (len(table), 3)
    np.testing.assert_allclose(predicted, model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_label_none_needs_statistics_that_know_the_label(passengers):
    _, parts, _ = passengers
    plain = dc.column_stats(parts["train"], columns=["fare", "class"])
    with pytest.raises(ValueError, match=r"column_stats\(\.\.\., label="):
        dc.csv_reader_dataset(parts["train"], stats=plain, label=None)


@pytest.mark.parametrize("parse", ["batch", "arrow"])
def test_label_none_reads_prediction_rows_with_or_without_the_label_column(tmp_path, parse):
    # Rows for prediction come without the label, or with it kept (valid, empty or `?`):
    # the label column is then read and ignored, in every parse mode.
    train = tmp_path / "train.csv"
    train.write_text("x,city,y\n1,a,10\n2,b,20\n3,a,30\n")
    stats = dc.column_stats([str(train)], label="y")
    bare = tmp_path / "bare.csv"
    bare.write_text("x,city\n1,a\n5,b\n,a\n")
    kept = tmp_path / "kept.csv"
    kept.write_text("x,city,y\n1,a,10\n5,b,\n,a,?\n")

    def rows(path):
        ds = dc.csv_reader_dataset([str(path)], stats=stats, label=None, parse=parse,
                                   shuffle_buffer_size=None, n_readers=1)
        assert isinstance(ds.element_spec, tf.TensorSpec)  # the features alone
        return np.concatenate([x.numpy() for x in ds])

    std = stats["x"].std
    want = np.array([[(1 - 2) / std, 0, 1, 0], [(5 - 2) / std, 0, 0, 1], [0, 0, 1, 0]],
                    np.float32)  # x standardized (missing: the mean, 0), then city one-hot
    np.testing.assert_allclose(rows(bare), want, rtol=1e-6)
    np.testing.assert_allclose(rows(kept), want, rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"line 3, column y .*label is empty"):
        read_all(dc.csv_reader_dataset([str(kept)], stats=stats, label="y", parse=parse,
                                       shuffle_buffer_size=None))  # training still checks it
