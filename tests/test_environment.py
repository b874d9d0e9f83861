"""One rule for every environment switch and folder the kit reads; caches where each OS wants."""

from __future__ import annotations

from pathlib import Path

import pytest

from datakit.core import environment
from datakit.core.environment import cache_dir, env_folder, env_switch, user_cache_root
from datakit.readers.video.decoding import probe_cache


@pytest.mark.parametrize(("value", "expected"), [
    ("1", True), ("true", True), ("Yes", True), (" ON ", True),
    ("0", False), ("FALSE", False), ("no", False), ("Off", False), ("", None)])
def test_a_switch_takes_the_usual_spellings(monkeypatch, value, expected):
    monkeypatch.setenv("DATAKIT_SOME_SWITCH", value)
    assert env_switch("DATAKIT_SOME_SWITCH") is expected


@pytest.mark.parametrize("value", ["2", "enabled", "y e s", "-1"])
def test_a_switch_names_an_unknown_value_and_the_spellings(monkeypatch, value):
    monkeypatch.setenv("DATAKIT_SOME_SWITCH", value)
    with pytest.raises(ValueError, match=rf"^DATAKIT_SOME_SWITCH='{value}': not a yes/no value; "
                                         r"set it to 1, true, yes or on \(or 0, false, no or "
                                         r"off\), or unset it$"):
        env_switch("DATAKIT_SOME_SWITCH")


def test_a_folder_variable_expands_the_home_folder_and_refuses_a_switch(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DATAKIT_CACHE", "~/kit-cache")
    assert env_folder("DATAKIT_CACHE") == tmp_path / "kit-cache"
    assert cache_dir("data") == tmp_path / "kit-cache" / "data"
    monkeypatch.setenv("DATAKIT_CACHE", "false")
    with pytest.raises(ValueError, match="DATAKIT_CACHE='false': this variable names a folder"):
        cache_dir()


@pytest.mark.parametrize(("value", "where"), [
    ("false", None), ("OFF", None), ("0", None), ("no", None),
    ("yes", "default"), ("", "default"), ("~/probes", "home")])
def test_the_probe_cache_switch_and_folder(monkeypatch, tmp_path, value, where):
    """``DATAKIT_PROBE_CACHE=false`` made a folder named ``false``, ``~/x`` one named ``~``."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DATAKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DATAKIT_PROBE_CACHE", value)
    expected = {None: None, "default": tmp_path / "cache" / "video-probes",
                "home": tmp_path / "probes"}[where]
    assert probe_cache.cache_folder() == expected


def test_each_os_cache_folder_is_platformdirs_own(monkeypatch, tmp_path):
    platformdirs = pytest.importorskip("platformdirs")
    from platformdirs.macos import MacOS
    from platformdirs.unix import Unix
    monkeypatch.setenv("HOME", str(tmp_path))
    for xdg in ("", str(tmp_path / "xdg")):
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        assert user_cache_root("linux") == Path(Unix("datakit", appauthor=False).user_cache_dir)
        assert user_cache_root("darwin") == Path(MacOS("datakit", appauthor=False).user_cache_dir)
    assert user_cache_root("darwin") == tmp_path / "xdg" / "datakit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert user_cache_root("darwin") == tmp_path / "Library" / "Caches" / "datakit"
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert user_cache_root("win32") == tmp_path / "Local" / "datakit" / "Cache"  # platformdirs'
    assert platformdirs.__name__ == "platformdirs"
    monkeypatch.delenv("DATAKIT_CACHE", raising=False)
    assert cache_dir("x") == environment.user_cache_root() / "x"
