"""The one progress-bar rule: a bar in a terminal, silence when asked or when nobody watches."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

from datakit.core import progress
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


#: Two steps of 0.6 s: the second update comes after the automatic bar's delay
#: (progress.DELAY, 1 s), so a bar that is not hidden shows (a sleep is never shorter).
SCRIPT = """
import time
from datakit.core.progress import with_progress
for _ in with_progress(range(2), "videos", unit="video"):
    time.sleep(0.6)
"""


def _run(env_progress: str | None, tty: bool, **more: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DATAKIT_PROGRESS"
           and not k.startswith("TQDM_")}
    if env_progress is not None:
        env["DATAKIT_PROGRESS"] = env_progress
    env.update(more)
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


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_every_spelling_of_no_and_tqdms_own_switch_hide_the_bar_in_a_terminal():
    for no in ("false", "No", "OFF"):
        assert "videos" not in _run(no, tty=True), no
    assert "videos" in _run("yes", tty=True)
    assert "videos" not in _run(None, tty=True, TQDM_DISABLE="1")
    assert "videos" in _run(None, tty=True, TQDM_DISABLE="0")


@pytest.mark.parametrize("value", ["2", "maybe", "o"])
def test_an_unknown_spelling_is_named(value, monkeypatch):
    monkeypatch.setenv("DATAKIT_PROGRESS", value)
    with pytest.raises(ValueError, match=f"DATAKIT_PROGRESS='{value}': not a yes/no value; "
                                         "set it to 1, true, yes or on"):
        progress_bar(2, "files")


def test_tqdm_disable_hides_an_automatic_bar_and_its_other_variables_reach_tqdm(monkeypatch):
    monkeypatch.delenv("DATAKIT_PROGRESS")
    monkeypatch.setenv("TQDM_DISABLE", "true")
    assert progress_bar(2, "files").disable
    assert not progress_bar(2, "files", progress=True).disable  # the argument wins
    monkeypatch.delenv("TQDM_DISABLE")
    monkeypatch.setenv("TQDM_LEAVE", "1")
    seen: dict = {}
    monkeypatch.setattr(progress, "tqdm", lambda **settings: seen.update(settings))
    progress_bar(2, "files")
    # tqdm applies TQDM_LEAVE to a bar whose leave= is not passed, the kit's delay stays
    assert "leave" not in seen and seen["delay"] == progress.DELAY and seen["disable"] is None
