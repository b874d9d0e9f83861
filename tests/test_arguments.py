"""The shared argument rules: counts and the interleave rule, including AUTOTUNE."""

from __future__ import annotations

import numpy as np
import pytest

from datakit.core import arguments
from datakit.core.arguments import AUTOTUNE
from datakit.perf import bench, synthetic
from datakit.readers.small_sources import fixed_length


@pytest.mark.parametrize("value, kw, expected", [
    pytest.param(3, {}, 3, id="int"),
    pytest.param(np.int32(3), {}, 3, id="numpy-int"),
    pytest.param(0, {"minimum": 0}, 0, id="zero-allowed"),
    pytest.param(None, {"none": True}, None, id="none-allowed"),
    pytest.param(AUTOTUNE, {"autotune": True}, AUTOTUNE, id="autotune-allowed"),
])
def test_count_accepts(value, kw, expected):
    assert arguments.check_count("n", value, **kw) == expected


@pytest.mark.parametrize("value, kw, error, fix", [
    pytest.param(0, {}, ValueError, "n=0 is invalid: pass an int >= 1.", id="below-minimum"),
    pytest.param(AUTOTUNE, {}, ValueError, "pass an int >= 1.", id="autotune-not-allowed"),
    pytest.param(-2, {"autotune": True}, ValueError, "int >= 1 or tf.data.AUTOTUNE",
                 id="negative-not-autotune"),
    pytest.param(None, {}, TypeError, "n must be an int, got None", id="none-not-allowed"),
    pytest.param(True, {}, TypeError, "must be an int", id="bool"),
    pytest.param(2.0, {"none": True, "autotune": True}, TypeError,
                 "an int, None or tf.data.AUTOTUNE", id="float"),
])
def test_count_refuses_with_a_fix(value, kw, error, fix):
    with pytest.raises(error, match=fix.replace(".", r"\.")):
        arguments.check_count("n", value, **kw)


@pytest.mark.parametrize("args, kw, expected", [
    pytest.param((4, 2, 2), {}, (4, 2, 2), id="explicit"),
    pytest.param((4, None, None), {}, (4, 1, None), id="block-default-1"),
    pytest.param((2, 1, AUTOTUNE), {}, (2, 1, AUTOTUNE), id="autotune-calls"),
    pytest.param((None, 1, 8), {"default_cycle": 4}, (4, 1, 4), id="calls-lowered-to-default"),
    pytest.param((None, 1, None), {"default_cycle": 3}, (3, 1, None), id="caller-default"),
])
def test_interleave_lengths(args, kw, expected):
    assert arguments.interleave_lengths(*args, **kw) == expected


def test_autotune_cycle_becomes_tf_datas_choice_not_minus_one():
    # the bug: AUTOTUNE stayed -1 and "num_parallel_reads=2 > cycle_length=-1" was raised
    cycle, _, calls = arguments.interleave_lengths(AUTOTUNE, 1, 2, default_cycle=4,
                                                names=("cycle_length", "num_parallel_reads"))
    assert cycle == arguments.default_cycle_length(2) == min(2, arguments.cpu_cores()) >= 1
    assert calls == min(2, cycle)


def test_more_calls_than_an_explicit_cycle_names_the_callers_arguments():
    with pytest.raises(ValueError, match="n_read_threads=6 is more than n_readers=5"):
        arguments.interleave_lengths(5, 1, 6, names=("n_readers", "n_read_threads"))


@pytest.mark.parametrize("value, error", [
    pytest.param(float("nan"), ValueError, id="nan"),
    pytest.param(float("inf"), ValueError, id="inf"),
    pytest.param(-1, ValueError, id="negative"),
    pytest.param("0.01", TypeError, id="text"),
    pytest.param(True, TypeError, id="bool"),
    pytest.param(None, TypeError, id="none"),
])
def test_check_seconds_refuses_what_is_not_a_duration(value, error):
    with pytest.raises(error, match="step_time"):
        arguments.check_seconds("step_time", value)


def test_check_count_says_the_callers_fix():
    with pytest.raises(ValueError, match=r"^buffer_size=0 is invalid: the buffer holds one\.$"):
        arguments.check_count("buffer_size", 0, fix="the buffer holds one")
    with pytest.raises(TypeError, match="buffer_size must be an int"):  # types first
        arguments.check_count("buffer_size", 1.5, fix="the buffer holds one")


@pytest.mark.parametrize("call", [
    pytest.param(lambda: bench.benchmark([1, 2], steps=1.5), id="bench-steps-float"),
    pytest.param(lambda: bench.benchmark([1, 2], warmup="1"), id="bench-warmup-text"),
    pytest.param(lambda: synthetic.work("0.1"), id="work-seconds-text"),
    pytest.param(lambda: synthetic.synthetic_files(2, open_time=None),
                 id="synthetic-open-time-none"),
    pytest.param(lambda: fixed_length.fixed_length_dataset("x.bin", [2], "int16",
                                                           header_bytes="4"),
                 id="fixed-length-header-text"),
])
def test_wrong_types_raise_type_error_before_any_work(call):
    with pytest.raises(TypeError, match="must be"):
        call()
