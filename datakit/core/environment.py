"""What the kit reads from the environment: yes/no switches and folders, each on one rule.

A switch (``DATAKIT_PROGRESS``, ``DATAKIT_PROBE_CACHE=off``) takes the usual spellings,
in any case: ``1``, ``true``, ``yes``, ``on`` and ``0``, ``false``, ``no``, ``off``; unset
or empty is the default; any other value is a ``ValueError`` naming the variable and the
spellings, never a silent guess.

>>> os.environ["DATAKIT_EXAMPLE"] = "No"
>>> env_switch("DATAKIT_EXAMPLE")
False
>>> os.environ["DATAKIT_EXAMPLE"] = "nope"
>>> env_switch("DATAKIT_EXAMPLE")  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: DATAKIT_EXAMPLE='nope': not a yes/no value; set it to 1, true, yes or on (or 0, ...
>>> del os.environ["DATAKIT_EXAMPLE"]

A folder variable (``DATAKIT_CACHE``, ``DATAKIT_DATA_DIR``) expands ``~`` and is made
absolute; a yes/no spelling there is refused by name (``DATAKIT_CACHE=false`` would
otherwise make a folder named ``false``).

The kit's caches live in the operating system's cache folder for the user, as
``platformdirs`` says: ``~/.cache/datakit`` on Linux, ``~/Library/Caches/datakit`` on
macOS (``$XDG_CACHE_HOME/datakit`` on both where that variable is set),
``%LOCALAPPDATA%\\datakit\\Cache`` on Windows; ``DATAKIT_CACHE`` moves them all:
:func:`cache_dir`.

This module imports nothing from the kit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__: list[str] = []

YES = ("1", "true", "yes", "on")
NO = ("0", "false", "no", "off")


def _spellings() -> str:
    return f"{', '.join(YES[:-1])} or {YES[-1]} (or {', '.join(NO[:-1])} or {NO[-1]})"


def env_switch(name: str, default: bool | None = None) -> bool | None:
    """The yes/no value of the environment variable ``name``; ``default`` when unset or empty."""
    value = os.environ.get(name, "")
    word = value.strip().lower()
    if not word:
        return default
    if word in YES:
        return True
    if word in NO:
        return False
    raise ValueError(f"{name}={value!r}: not a yes/no value; set it to {_spellings()}, "
                     "or unset it")


def env_switch_or_none(name: str) -> bool | None:
    """For a variable that takes a switch or a value (``DATAKIT_PROBE_CACHE=off`` or a
    folder): True or False for a spelling of yes or no, ``None`` for anything else."""
    word = os.environ.get(name, "").strip().lower()
    return True if word in YES else False if word in NO else None


def env_folder(name: str) -> Path | None:
    """The folder the environment variable ``name`` names (``~`` expanded, absolute), or
    ``None`` when it is unset or empty. A yes/no spelling is refused: it is not a folder."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    if value.lower() in YES + NO:
        raise ValueError(f"{name}={value!r}: this variable names a folder, not a switch; "
                         f"set it to a folder path (e.g. {name}=~/datakit-cache) or unset it")
    return Path(os.path.expandvars(value)).expanduser().absolute()


def cache_dir(*parts: str) -> Path:
    """The kit's cache folder (``DATAKIT_CACHE``, else the OS's cache folder for the user,
    see above) joined with ``parts``; not created."""
    return (env_folder("DATAKIT_CACHE") or user_cache_root()).joinpath(*parts)


def user_cache_root(platform: str = sys.platform) -> Path:
    """The OS's cache folder for the kit, by ``platformdirs``' rule (``user_cache_dir(
    "datakit", appauthor=False)``), written out so that the kit needs no package for it."""
    if platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip()
        return Path(local or Path.home() / "AppData" / "Local") / "datakit" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()  # platformdirs 4 reads it on macOS too
    if platform == "darwin":
        return Path(xdg or Path.home() / "Library" / "Caches") / "datakit"
    return Path(xdg or Path.home() / ".cache") / "datakit"
