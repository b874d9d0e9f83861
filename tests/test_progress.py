"""The one progress-bar rule: a bar in a terminal, silence when asked or when nobody watches."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

from datakit.core.progress import check_progress, progress_bar, with_progress


def test_forced_bar_writes_to_stderr(capsys):
    assert list(with_progress(range(3), "files", progress=True)) == [0, 1, 2]
    err = capsys.readouterr().err
    assert "files" in err and "3/3" in err


def test_silent_when_asked(capsys):
    assert list(with_progress(range(3), "files", progress=False)) == [0, 1, 2]
    assert capsys.readouterr() == ("", "")


def test_automatic_bar_is_silent_under_the_test_environment(capsys):
    """DATAKIT_PROGRESS=0 (set by the test run, as by the notebook runs) wins over automatic."""
    assert os.environ["DATAKIT_PROGRESS"] == "0"
    bar = progress_bar(2, "files")
    assert bar.disable


def test_refuses_a_value_that_is_not_a_switch():
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        check_progress("yes")


SCRIPT = """
import time
from datakit.core.progress import with_progress
for _ in with_progress(range(3), "videos", unit="video"):
    time.sleep(0.6)
"""


def _run(env_progress: str | None, tty: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DATAKIT_PROGRESS"}
    if env_progress is not None:
        env["DATAKIT_PROGRESS"] = env_progress
    if not tty:
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                              text=True, timeout=120, check=True)
        return done.stdout + done.stderr
    import fcntl
    import pty
    import termios
    leader, follower = pty.openpty()  # a new pseudo-terminal is 0 columns wide: give it 80
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdin=follower,
                            stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    assert proc.returncode == 0
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_automatic_bar_in_a_terminal_and_not_in_a_pipe():
    """A script run in a (pseudo-)terminal shows the bar; piped to a file, it prints nothing."""
    assert "videos" in _run(None, tty=True)
    assert _run(None, tty=False) == ""
    assert "videos" not in _run("0", tty=True)
