"""Tests for readers.small_sources.fixed_length: records cut from raw bytes; errors name files."""

from __future__ import annotations

import re

import numpy as np
import pytest
from error_cases import raises_naming

from datakit.readers.small_sources import fixed_length


@pytest.mark.timeout(60)
def test_fixed_length_round_trip_and_truncation(tmp_path):
    arr = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    p = fixed_length.write_fixed_length(tmp_path / "x.bin", arr, header=b"HDR!")
    got = np.stack(list(fixed_length.fixed_length_dataset(p, [2, 3], np.float32, header_bytes=4)
                        .as_numpy_iterator()))
    np.testing.assert_array_equal(got, arr)
    p.write_bytes(p.read_bytes()[:-5])
    raises_naming(p, fixed_length.fixed_length_dataset, p, [2, 3], np.float32, header_bytes=4)


@pytest.mark.parametrize("shape, dtype, error, match", [
    ([-2, -1], np.int16, ValueError, "dimensions=-2"),  # a positive product passed the size check
    ([2.5], np.int16, TypeError, "dimensions must be an int"),
    ([2], "string", ValueError, "dtype=string: a record holds numbers"),  # blamed record_shape
])
def test_a_record_shape_or_dtype_that_cannot_be_is_refused_by_name(tmp_path, shape, dtype,
                                                                    error, match):
    p = fixed_length.write_fixed_length(tmp_path / "x.bin", np.arange(8, dtype=np.int16))
    with pytest.raises(error, match=match):
        fixed_length.fixed_length_dataset(p, shape, dtype)


def test_a_folder_or_a_missing_file_is_named_before_reading(tmp_path):
    from datakit.readers.small_sources.text_lines import numbered_lines
    folder = re.escape(f"{tmp_path} is a folder, not a file")
    with pytest.raises(IsADirectoryError, match=folder):  # its 4096 bytes made records
        fixed_length.fixed_length_dataset(tmp_path, [2], np.int16)
    with pytest.raises(IsADirectoryError, match=folder):  # was TensorFlow's error while reading
        numbered_lines(tmp_path)
    with pytest.raises(FileNotFoundError, match="missing.txt: file is missing"):
        numbered_lines(tmp_path / "missing.txt")  # a Path, too (was refused as a PosixPath)
    text = tmp_path / "t.txt"
    text.write_text("h\na\nb\n")
    assert [int(n) for _, n, _ in numbered_lines(text).as_numpy_iterator()] == [2, 3]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("dtype", ["int33", "str"])
def test_a_dtype_that_is_no_number_type_is_named(tmp_path, dtype):
    """#47: TensorFlow's own TypeError named `type_value`, not the caller's dtype=."""
    path = fixed_length.write_fixed_length(tmp_path / "r.bin", np.arange(4, dtype=np.int16))
    with pytest.raises(TypeError, match=f"dtype='{dtype}' is not a number type: .* np.int16"):
        fixed_length.fixed_length_dataset(path, [2], dtype)


@pytest.mark.timeout(60)
def test_numbered_lines_refuses_binary_files_and_a_flag_as_text(tmp_path):
    """#47: a gzip file gave 0 lines without a word; skip_header='no' skipped the header."""
    import gzip

    from datakit.core.errors import DataError
    from datakit.readers.small_sources.text_lines import numbered_lines
    (tmp_path / "g.txt").write_bytes(gzip.compress(b"a\nb\n" * 10))
    with pytest.raises(DataError, match=r"g\.txt: is gzip-compressed .* decompress it"):
        numbered_lines(tmp_path / "g.txt")
    (tmp_path / "u.txt").write_text("h\n1\n", encoding="utf-16")
    with pytest.raises(DataError, match=r"u\.txt \(at byte \d+\): holds NUL bytes"):
        numbered_lines(tmp_path / "u.txt")
    (tmp_path / "a.txt").write_text("h\n1\n")
    with pytest.raises(TypeError, match="skip_header must be True or False, got 'no'"):
        numbered_lines(tmp_path / "a.txt", skip_header="no")
