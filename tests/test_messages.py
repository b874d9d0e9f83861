"""Messages that say exactly what changed (#47): the checkpoint's input check."""

from __future__ import annotations

import pytest

from datakit.readers.checkpoints import checkpoint_fingerprint as fp

pytestmark = pytest.mark.timeout(60)


def test_an_input_of_another_size_says_the_sizes_and_not_a_hash(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("a\n" * 67)
    saved = {str(path): fp.input_fingerprint(str(path))}
    path.write_text("b\n" * 90)
    said = fp.input_changes(saved)[1]
    assert "(134 bytes then, 180 now; another sha256)" in said  # both differ: both said


def test_an_input_of_the_same_size_says_only_its_hash_changed(tmp_path):
    # "(134 bytes then, 134 now, or another sha256)" left the reader to work out which
    path = tmp_path / "lines.txt"
    path.write_text("a\n" * 67)
    saved = {str(path): fp.input_fingerprint(str(path))}
    path.write_text("b\n" * 67)
    said = fp.input_changes(saved)[1]
    assert "changed since the save (another sha256)" in said and "bytes" not in said
