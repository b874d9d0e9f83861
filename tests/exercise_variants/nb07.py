"""Notebook 07's write exercises, answered right and wrong."""

from tests.exercise_variants import Case

HOUSING = """import datakit
import pandas as pd
housing = pd.read_csv(datakit.data_path("housing", "housing.csv"))
places = sorted(housing["ocean_proximity"].unique())
expected = [[w.encode() for w in place.split(" ")] for place in places]

def example(values):
    return tf.train.Example(features=tf.train.Features(feature={"words": tf.train.Feature(
        bytes_list=tf.train.BytesList(value=values))})).SerializeToString()

house_rows = [{"id": i, **row} for i, row in enumerate(housing.head(200).to_dict("records"))]
"""

HOUSE_EXAMPLE = """def answer(row):
    feature = {
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[row["id"]])),
        "ocean_proximity": tf.train.Feature(
            bytes_list=tf.train.BytesList(value=[row["ocean_proximity"].encode()])),
    }
    for name, value in row.items():
        if name not in feature:
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    return tf.train.Example(features=tf.train.Features(feature=feature))
"""

CASES = {
    "07.1": Case(
        checker="place_words",
        setup=HOUSING,
        check='exercises.check("place_words", answer)',
        correct=[
            'tf.io.parse_example(tf.constant([example([w.encode() for w in p.split(" ")]) '
            'for p in places]), {"words": tf.io.RaggedFeature(tf.string)})["words"]',
            'tf.io.parse_example([example([w.encode() for w in p.split()]) for p in places], '
            '{"words": tf.io.RaggedFeature(tf.string, row_splits_dtype=tf.int32)})["words"]',
            'tf.RaggedTensor.from_sparse(tf.io.parse_example([example(p.encode().split()) '
            'for p in places], {"words": tf.io.VarLenFeature(tf.string)})["words"])',
            # another order of the values (the question asks for none), a VarLenFeature
            'tf.io.parse_example([example([w.encode() for w in p.split(" ")]) '
            'for p in reversed(places)], {"words": tf.io.VarLenFeature(tf.string)})["words"]'],
        wrong=[  # the value not split, split into letters, the words sorted, a value lost
            ('tf.io.parse_example([example([p.encode()]) for p in places], '
             '{"words": tf.io.RaggedFeature(tf.string)})["words"]', "was not split"),
            ('tf.io.parse_example([example([c.encode() for c in p]) for p in places], '
             '{"words": tf.io.RaggedFeature(tf.string)})["words"]', "into letters"),
            ('tf.io.parse_example([example(sorted(p.encode().split())) for p in places], '
             '{"words": tf.io.RaggedFeature(tf.string)})["words"]', "in another order"),
            ('tf.io.parse_example([example(p.encode().split()) for p in places[1:]], '
             '{"words": tf.io.RaggedFeature(tf.string)})["words"]', "expected 5"),
            ('[[w for w in p.split(" ")] for p in places]', "should be bytes")],
    ),
    "07.3": Case(
        checker="example",
        setup=HOUSING,
        check='exercises.check("example", answer, house_rows)',
        correct=[HOUSE_EXAMPLE,
                 HOUSE_EXAMPLE.replace("def answer(row):", "def house(row):")
                 + "\ndef answer(row):\n    return house(row).SerializeToString()\n"],
        wrong=[(HOUSE_EXAMPLE.replace('int64_list=tf.train.Int64List(value=[row["id"]])',
                                      'float_list=tf.train.FloatList(value=[row["id"]])'),
                "float_list"),
               (HOUSE_EXAMPLE.replace("        if name not in feature:\n",
                                      '        if name not in feature and name != "population":\n'),
                "population")],
    ),
}
