"""The door every reader shares (core/keywords.py): tf.data's names, and keywords or options=.

The readers' own behaviour at the door is held by tests/test_reader_contract.py; here the
one rule each reader consults, once.
"""

from __future__ import annotations

import dataclasses
import warnings

import pytest

from datakit.core import keywords as kw


@dataclasses.dataclass(frozen=True)
class Opts:
    clip_len: int = 16
    frame_size: tuple | None = None
    prefetch: int = -1

    def __post_init__(self):
        if self.clip_len < 1:
            raise ValueError(f"clip_len={self.clip_len} is invalid: pass an int >= 1.")


@pytest.mark.parametrize("word", sorted(kw.TF_DATA_NAMES))
def test_each_tf_data_name_is_taken_quietly_under_the_kits_name(word):
    kit = kw.TF_DATA_NAMES[word]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = kw.keywords("reader", {kit: None}, {word: 3}, defaults={kit: None})
    assert dict(got) == {kit: 3} and got.given == {kit} and got.written == {kit: word}


@pytest.mark.parametrize("word", sorted(kw.TF_DATA_NAMES))
def test_a_knob_under_both_names_is_one_type_error_naming_both(word):
    kit = kw.TF_DATA_NAMES[word]
    with pytest.raises(TypeError, match=f"reader\\(\\) got {word}= and {kit}=: pass only one "
                                        f"\\({word}= is tf.data's name for {kit}=\\)"):
        kw.keywords("reader", {kit: 2}, {word: 3}, defaults={kit: None})
    # at its default the kit's keyword was not given: tf.data's word alone is no clash
    assert kw.keywords("reader", {kit: None}, {word: 3}, defaults={kit: None})[kit] == 3


def test_a_kit_name_in_the_keywords_is_taken_when_the_reader_takes_it():
    got = kw.keywords("clip_dataset", {}, {"clip_len": 8}, takes={"clip_len"})
    assert dict(got) == {"clip_len": 8} and got.written == {}
    with pytest.raises(TypeError, match="unexpected keyword argument 'clip_lenn'"):
        kw.keywords("clip_dataset", {}, {"clip_lenn": 8}, takes={"clip_len"})
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_parallel_calls'"):
        kw.keywords("read_records", {"n_readers": None}, {"num_parallel_calls": 2})


@pytest.mark.parametrize("word, fix", [("image_size", "pass frame_size=\\(height, width\\)"),
                                       ("deterministic", "leave it out"),
                                       ("block_length", "leave it out")])
def test_a_name_no_reader_takes_says_what_to_do(word, fix):
    with pytest.raises(TypeError, match=f"got {word}=, .*{fix}"):
        kw.keywords("video_dataset_from_directory", {}, {word: 1}, takes={"frame_size"})


def test_an_old_name_of_the_kits_alone_warns(monkeypatch):
    monkeypatch.setattr(kw, "OLD_NAMES", {"threads": "n_read_threads"})
    with pytest.warns(DeprecationWarning, match=r"reader\(\): threads= is now n_read_threads="):
        got = kw.keywords("reader", {"n_read_threads": None}, {"threads": 2},
                          defaults={"n_read_threads": None})
    assert got["n_read_threads"] == 2
    with pytest.raises(TypeError, match="threads= is its old name for n_read_threads="):
        kw.keywords("reader", {"n_read_threads": 1}, {"threads": 2},
                    defaults={"n_read_threads": None})


def test_a_message_names_the_knob_as_the_caller_wrote_it():
    got = kw.keywords("reader", {"n_readers": 5}, {"cycle_length": 0}, defaults={"n_readers": 5})
    with pytest.raises(ValueError, match="^cycle_length=0 is invalid"), got.as_written():
        raise ValueError("n_readers=0 is invalid: pass an int >= 1.")
    # only the argument errors are reworded; a word inside another name stays
    with pytest.raises(KeyError, match="n_readers"), got.as_written():
        raise KeyError("n_readers")
    with pytest.raises(ValueError, match="^my_n_readers_x=0"), got.as_written():
        raise ValueError("my_n_readers_x=0")


def test_options_or_keywords_the_both_ways_type_error():
    """The one both-ways rule: a field set in ``options=`` and as a keyword is a TypeError
    naming both; a keyword for a field the object leaves at its default replaces it."""
    with pytest.raises(TypeError, match=r"reader\(\) got clip_len twice: clip_len=4 beside "
                                        r"options=Opts\(clip_len=8\); pass it once"):
        kw.options_from(Opts, Opts(clip_len=8), {"clip_len": 4}, where="reader")
    with pytest.raises(TypeError, match="twice"):  # the same value both ways is still both
        kw.options_from(Opts, Opts(clip_len=8), {"clip_len": 8}, where="reader")
    assert kw.options_from(Opts, Opts(clip_len=8), {"frame_size": (32, 32)}, where="reader") \
        == Opts(clip_len=8, frame_size=(32, 32))
    # fields beside options= that were not given (at the reader's default) leave it whole
    assert kw.options_from(Opts, Opts(clip_len=8), {"clip_len": 16, "prefetch": 2},
                           where="reader", given={"prefetch"}) == Opts(clip_len=8, prefetch=2)
    assert kw.options_from(Opts, None, {"clip_len": 4}, where="reader") == Opts(clip_len=4)


def test_options_are_checked_by_their_class_and_must_be_one():
    with pytest.raises(ValueError, match="clip_len=0 is invalid"):
        kw.options_from(Opts, Opts(), {"clip_len": 0}, where="reader")
    with pytest.raises(TypeError, match=r"options must be an Opts, got dict: pass "
                                        r"options=Opts\(\.\.\.\)"):
        kw.options_from(Opts, {"clip_len": 4}, {}, where="reader")
