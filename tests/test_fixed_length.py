"""Tests for datakit.readers.fixed_length: records cut from raw bytes; errors name the file."""

from __future__ import annotations

import numpy as np
import pytest
from error_cases import raises_naming

from datakit.readers import fixed_length


@pytest.mark.timeout(60)
def test_fixed_length_round_trip_and_truncation(tmp_path):
    arr = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    p = fixed_length.write_fixed_length(tmp_path / "x.bin", arr, header=b"HDR!")
    got = np.stack(list(fixed_length.fixed_length_dataset(p, [2, 3], np.float32, header_bytes=4)
                        .as_numpy_iterator()))
    np.testing.assert_array_equal(got, arr)
    p.write_bytes(p.read_bytes()[:-5])
    raises_naming(p, fixed_length.fixed_length_dataset, p, [2, 3], np.float32, header_bytes=4)
