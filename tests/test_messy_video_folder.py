"""make_messy_video_folder at every size it accepts, and a refusal naming the argument otherwise.

x265 wrote past a buffer on 40- and 48-pixel frames and the process aborted ("free(): invalid
next size"): each size runs in a child process, so an abort fails its test, not the session.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from datakit.readers.video.synthetic.messy_folder import make_messy_video_folder

_MAKE = textwrap.dedent("""
    import sys
    import av
    from datakit.readers.video.synthetic.messy_folder import make_messy_video_folder
    size = int(sys.argv[2])
    paths = make_messy_video_folder(sys.argv[1], size=size, seed=3)
    phone = [p for p in paths if p.name == "up_phone.mp4"][0]
    with av.open(str(phone)) as c:  # stored sideways: size tall, 1.5 x size wide
        s = c.streams.video[0]
        print(len(paths), s.height, s.width)
""")


@pytest.mark.parametrize("size", [16, 20, 36, 40, 44, 48, 52, 72])
def test_every_accepted_size_is_written_without_aborting(tmp_path, size):
    done = subprocess.run([sys.executable, "-c", _MAKE, str(tmp_path / "messy"), str(size)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    # 8 videos per class, the phone video, the short and cut files, the corrupt one, 3 hidden
    assert done.stdout.split() == ["39", str(size), str(size * 3 // 2)]


@pytest.mark.parametrize("kwargs, named", [
    (dict(per_class=0), "per_class=0"), (dict(per_class=1), "per_class=1"),
    (dict(size=33), "size=33"), (dict(size=42), "size=42"), (dict(size=12), "size=12"),
    (dict(seed=-1), "seed=-1"),
])
def test_arguments_it_cannot_make_are_refused_by_name(tmp_path, kwargs, named):
    with pytest.raises(ValueError, match=f"^{named} is invalid: pass "):
        make_messy_video_folder(tmp_path / "messy", **kwargs)
    assert not (tmp_path / "messy").exists()


def test_a_size_that_is_not_an_int_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="size must be an int, got 40.0"):
        make_messy_video_folder(tmp_path / "messy", size=40.0)
