"""Generated tables for the CSV lessons: a passenger list, made here with a seed, never downloaded.

:func:`passengers` has the shape of the well-known ship passenger table (891
rows; id, survived, class, name, sex, age, siblings, parents, ticket, fare,
cabin, port) and its blemishes: names with commas and quotes (so CSV must quote
them), empty ages, cabins and ports, a cabin column with hundreds of distinct
values, and a text ``class`` ("first", "second", "third") that the fare
predicts. Its values are invented.

>>> table = passengers(seed=0)
>>> table.shape, sorted(table["class"].unique())
((891, 12), ['first', 'second', 'third'])
>>> bool(table["name"].str.contains(",").all()), int(table["age"].isna().sum()) > 100
(True, True)
>>> passengers(5, seed=1).equals(passengers(5, seed=1))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from datakit.core.arguments import check_count, check_fits_in_memory, check_seed

__all__ = ["passengers"]

_SURNAMES = ["Smith", "Andersson", "Brown", "Kelly", "Sage", "Goodwin", "Johnson", "Rice",
             "Skoog", "Panula", "Asplund", "Carter", "Fortune", "Ford", "Harper", "Williams"]
_FIRST = {"male": ["John", "William", "Karl", "Thomas", "Ernst", "Patrick", "Samuel", "Leo"],
          "female": ["Mary", "Anna", "Elin", "Margaret", "Ellen", "Alice", "Ida", "Rose"]}
_CLASSES = ["first", "second", "third"]


def passengers(n: int = 891, *, seed: int = 0) -> Any:
    """A pandas DataFrame of ``n`` invented passengers, the same for the same ``seed``."""
    import pandas as pd

    check_count("n", n)  # the number of rows
    check_fits_in_memory(f"passengers(n={n:,})", 500.0 * n,  # about 500 bytes a row in pandas
                         fix="pass a smaller n, or write the table in parts (write_shards)")
    rng = np.random.default_rng(check_seed(seed) % 2**64)
    klass = rng.choice(3, size=n, p=[0.24, 0.21, 0.55])
    sex = np.where(rng.random(n) < 0.65, "male", "female")
    age = np.clip(rng.normal(30, 14, n), 0.5, 80).round(1)
    age[rng.random(n) < 0.2] = np.nan
    fare = np.round(np.exp(rng.normal(np.array([4.3, 3.0, 2.5])[klass], 0.45)), 2)
    survive = np.array([0.6, 0.45, 0.25])[klass] + np.where(sex == "female", 0.3, -0.1)
    titles = {"male": "Mr.", "female": "Mrs."}
    names = []
    for s in sex:
        name = f"{rng.choice(_SURNAMES)}, {titles[s]} {rng.choice(_FIRST[s])}"
        names.append(name + (f' ("{rng.choice(_FIRST[s])}")' if rng.random() < 0.1 else ""))
    has_cabin = rng.random(n) < np.array([0.8, 0.15, 0.03])[klass]
    cabins = [f"{rng.choice(list('ABCDEFG'))}{rng.integers(1, 130)}" if c else ""
              for c in has_cabin]
    prefix = rng.choice(["", "", "", "PC ", "A/5 ", "STON/O2. "], size=n)
    return pd.DataFrame({
        "id": np.arange(1, n + 1),
        "survived": (rng.random(n) < survive).astype(int),
        "class": np.array(_CLASSES)[klass],
        "name": names,
        "sex": sex,
        "age": age,
        "siblings": rng.poisson(0.5, n),
        "parents": rng.poisson(0.4, n),
        "ticket": [f"{p}{t}" for p, t in zip(prefix, rng.integers(1000, 400_000, n), strict=True)],
        "fare": fare,
        "cabin": cabins,
        "port": rng.choice(["S", "C", "Q", ""], size=n, p=[0.72, 0.19, 0.085, 0.005]),
    })
