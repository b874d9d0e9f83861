"""Keras' names for the video knobs point to the kit's, at every video entry point.

``image_size`` (Keras' image loaders) is ``frame_size`` here, ``sequence_length``
(``timeseries_dataset_from_array``) is ``clip_len``: each entry point that takes the
kit's name says so through the one rule (:func:`datakit.core.keywords.unexpected`),
before any file is opened (the paths here do not exist).
"""

from __future__ import annotations

import importlib

import pytest

V = "datakit.readers.video"
#: entry point -> (module, the kit's names it takes, the arguments before the keywords)
ENTRY_POINTS = {
    "video_dataset_from_directory": (f"{V}.reading.directory", {"frame_size", "clip_len"}, 1),
    "clip_dataset": (f"{V}.reading.clips", {"frame_size", "clip_len"}, 1),
    "mp4_clip_dataset": (f"{V}.reading.mp4_clips", {"clip_len"}, 1),
    "clips_to_predict": (f"{V}.reading.predict_clips", {"frame_size", "clip_len"}, 1),
    "write_video_shards": (f"{V}.converter.convert", {"frame_size"}, 2),
    "write_video_shards_beam": (f"{V}.converter.convert_beam", {"frame_size"}, 2),
}
KERAS = {"image_size": ("frame_size", (8, 8), r"pass frame_size=\(height, width\)"),
         "sequence_length": ("clip_len", 4, r"pass clip_len=<frames per clip>")}


@pytest.mark.parametrize("func, word", [(f, w) for f, (_, takes, _) in ENTRY_POINTS.items()
                                        for w, (kit, _, _) in KERAS.items() if kit in takes])
def test_keras_name_points_to_the_kits(func, word, tmp_path):
    module, _, n_paths = ENTRY_POINTS[func]
    f = getattr(importlib.import_module(module), func)
    _, value, fix = KERAS[word]
    paths = [tmp_path / "missing" / str(i) for i in range(n_paths)]
    with pytest.raises(TypeError, match=rf"^{func}\(\) got {word}=, Keras' name .*: {fix}\.$"):
        f(*paths, **{word: value})


def test_a_keras_name_for_a_knob_not_taken_is_pythons_error(tmp_path):
    from datakit.readers.video.converter.convert import write_video_shards

    # the converter chooses no clips: clip_len is the reader's, so no pointer to it
    with pytest.raises(TypeError, match="unexpected keyword argument 'sequence_length'"):
        write_video_shards(tmp_path / "a", tmp_path / "b", sequence_length=4)
