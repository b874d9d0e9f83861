"""A real table read again: the Titanic passenger list, with chosen columns and with all, as pandas.

The file is written here by a seeded generator in the shape of Kaggle's ``train.csv``
(891 rows; names quoted, with commas and doubled quotes; ``Age`` missing for about a
fifth; ``Cabin`` mostly missing; ``Ticket`` three quarters numbers, a quarter codes
such as ``A/5 21171``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from test_stats import assert_stats_equal_pandas

from datakit.core.errors import DataError
from datakit.readers import csv_files as dc

pytestmark = pytest.mark.timeout(300)

CHOSEN = ["Survived", "Pclass", "Sex", "Age", "Fare", "Embarked"]
HEADER = ["PassengerId", "Survived", "Pclass", "Name", "Sex", "Age", "SibSp", "Parch", "Ticket",
          "Fare", "Cabin", "Embarked"]
_PREFIXES = ["A/5", "PC", "STON/O2.", "C.A.", "SOTON/OQ", "W./C.", "CA", "S.O.C.", "PP"]


def _name(rng, k: int) -> str:
    last = ["Braund", "Cumings", "Heikkinen", "O'Dwyer", "Moran", "Palsson", "Johnson"][k % 7]
    title = rng.choice(["Mr.", "Mrs.", "Miss.", "Master."])
    first = rng.choice(["Owen Harris", "John Bradley", "Laina", "Ellen", "James", "Gosta Leonard"])
    if k % 11 == 0:
        return f'"{last}, {title} {first} ""Nellie"""'  # a nickname: doubled quotes
    if k % 5 == 0:
        return f'"{last}, {title} John (Florence Briggs Thayer)"'
    return f'"{last}, {title} {first}"'


def _ticket(rng) -> str:
    if rng.random() < 0.26:
        return f"{rng.choice(_PREFIXES)} {rng.integers(1000, 3_200_000)}"
    return str(rng.integers(1000, 400_000))


def _row(rng, k: int) -> str:
    pclass = int(rng.choice([1, 2, 3], p=[0.24, 0.21, 0.55]))
    age = "" if rng.random() < 0.2 else (
        f"{rng.choice([0.42, 0.83, 14.5, 28.5])}" if rng.random() < 0.05 else
        str(int(rng.integers(1, 80))))
    fare = f"{rng.gamma(1.2, 30) if rng.random() > 0.02 else 0:.4f}".rstrip("0").rstrip(".")
    cabin = "" if rng.random() < 0.77 else (
        f"C{rng.integers(10, 130)}" if rng.random() < 0.8 else "C23 C25 C27")
    embarked = "" if k in (61, 829) else str(rng.choice(["S", "C", "Q"], p=[0.72, 0.19, 0.09]))
    fields = [str(k + 1), str(int(rng.random() < 0.38)), str(pclass), _name(rng, k),
              str(rng.choice(["male", "female"])), age, str(rng.integers(0, 5)),
              str(rng.integers(0, 4)), _ticket(rng), fare, cabin, embarked]
    return ",".join(fields)


@pytest.fixture(scope="module")
def passengers(tmp_path_factory):
    rng = np.random.default_rng(1912)
    path = tmp_path_factory.mktemp("titanic") / "train.csv"
    path.write_text(",".join(HEADER) + "\n" + "\n".join(_row(rng, k) for k in range(891)) + "\n")
    df = pd.read_csv(path)
    share = pd.to_numeric(df["Ticket"], errors="coerce").notna().mean()
    assert 0.7 < share < 0.8 and not pd.api.types.is_numeric_dtype(df["Ticket"])  # text
    assert df["Age"].isna().sum() > 100 and df["Embarked"].isna().sum() == 2
    return str(path), df


def _read(path, stats, parse):
    ds = dc.csv_reader_dataset([path], stats=stats, label="Survived", parse=parse,
                               output="dict", n_readers=1, shuffle_buffer_size=None,
                               batch_size=1000)
    (x, y), = list(ds)  # one batch: the whole table
    return {c: v.numpy() for c, v in x.items()}, y.numpy()


def _assert_rows_equal_pandas(got: dict, y, stats, df: pd.DataFrame) -> None:
    np.testing.assert_array_equal(y, df["Survived"].to_numpy(np.float32))
    for c, values in got.items():
        want = df[c]
        if stats[c].kind == "number":  # standardized; a missing value is the mean
            s = stats[c]
            raw = values.astype(np.float64) * (s.std or 1.0) + s.mean
            np.testing.assert_allclose(raw, want.fillna(s.mean).to_numpy(float), rtol=1e-5,
                                       atol=1e-4, err_msg=c)
            assert (values[want.isna().to_numpy()] == 0.0).all(), c  # the mean, exactly
        else:  # raw text; pandas' missing (NaN) is the kit's empty field
            assert [v.decode() for v in values] == want.fillna("").astype(str).tolist(), c


@pytest.mark.parametrize("parse", ["batch", "arrow"])
def test_chosen_columns_read_equal_to_pandas(passengers, parse):
    # The unchosen Ticket (numbers and codes) and Name (quotes) never refuse a line.
    path, df = passengers
    stats = dc.column_stats([path], columns=CHOSEN, label="Survived")
    assert stats.columns == CHOSEN
    assert stats.kinds()["Ticket"] == "text"  # left out: read, ignored
    assert_stats_equal_pandas(stats, df[CHOSEN])
    got, y = _read(path, stats, parse)
    assert sorted(got) == sorted(c for c in CHOSEN if c != "Survived")
    _assert_rows_equal_pandas(got, y, stats, df)


@pytest.mark.parametrize("parse", ["batch", "arrow"])
def test_every_column_reads_with_ticket_as_text_as_pandas(passengers, parse):
    path, df = passengers
    stats = dc.column_stats([path], label="Survived")
    want = {c: "number" if pd.api.types.is_numeric_dtype(df[c]) else "text" for c in HEADER}
    assert stats.kinds() == want and want["Ticket"] == "text"
    assert_stats_equal_pandas(stats, df)
    got, y = _read(path, stats, parse)
    _assert_rows_equal_pandas(got, y, stats, df)


def test_ticket_declared_a_number_column_is_read_as_numbers(passengers, tmp_path):
    path, df = passengers
    numeric = df[pd.to_numeric(df["Ticket"], errors="coerce").notna()]
    only = tmp_path / "numbered.csv"
    numeric.to_csv(only, index=False)
    stats = dc.column_stats([str(only)], columns=["Ticket", "Survived"],
                            number_columns=["Ticket"])
    assert stats["Ticket"].kind == "number" and stats["Ticket"].count == len(numeric)
    # Declared a number, the codes are bad lines, named: the user asked for numbers.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"column Ticket \(9 of 12\): expected a number"):
        dc.column_stats([path], columns=["Ticket", "Survived"], number_columns=["Ticket"])


def test_a_stray_word_in_a_number_column_is_still_refused_saying_both_cases(passengers, tmp_path):
    path, df = passengers
    lines = open(path).read().splitlines()
    fields = lines[300].split(",")
    fields[-3] = "n/a?"  # Fare, one value of 891 (after Name's comma, it is 3rd from the end)
    lines[300] = ",".join(fields)
    stray = tmp_path / "stray.csv"
    stray.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"line 301, column Fare \(10 of 12\): `n/a\?` is not a "
                       r"number, but 890 of the column's 891 values are \(1 is not\)") as e:
        dc.column_stats([str(stray)], columns=CHOSEN)
    message = str(e.value)
    assert "at most 3 distinct" in message and "as text, as pandas" in message
    assert "text_columns=['Fare']" in message and "na_values" in message
    # Left out with columns=, the same stray never refuses anything.
    kept = [c for c in CHOSEN if c != "Fare"]
    assert dc.column_stats([str(stray)], columns=kept).columns == kept
