"""The one progress bar every long helper shows: a ``tqdm.auto`` bar, on one rule.

Every helper that can run for more than a few seconds (listing and probing a
video folder, converting it, computing column statistics, writing shards,
running tf.Transform, the doctor's and the tuner's runs) takes
``progress=None`` and asks :func:`progress_bar` for its bar:

- ``progress=None`` (the default): a widget in a notebook, text on stderr in a
  terminal, nothing when stderr is not a terminal (a log file, a pipe, CI),
  and nothing when the environment variable ``DATAKIT_PROGRESS=0`` (or ``false``,
  ``no``, ``off``) or tqdm's own ``TQDM_DISABLE=1`` is set (the kit's notebook runs
  set ``DATAKIT_PROGRESS=0``, so no stored output carries a bar's changing text).
  A bar appears only once the work has lasted a second. tqdm's other ``TQDM_*``
  variables (``TQDM_MININTERVAL``, ``TQDM_NCOLS``, ...) are honoured too: the kit
  passes no setting that one of them sets.
- ``progress=True``: always a bar, at once.
- ``progress=False``: never a bar.

>>> list(with_progress(["a.csv", "b.csv"], "files", progress=False))
['a.csv', 'b.csv']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from tqdm.auto import tqdm

from datakit.core.environment import YES, env_switch

__all__: list[str] = []

T = TypeVar("T")

#: Seconds a ``progress=None`` bar waits before it appears (quick calls stay quiet).
DELAY = 1.0


def check_progress(progress: Any) -> bool | None:
    """``progress`` if it is ``None``, ``True`` or ``False``; ``TypeError`` otherwise."""
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None (automatic), got {progress!r}")
    return progress


def progress_bar(total: int | None, desc: str, *, progress: bool | None = None,
                 unit: str = "it", initial: int = 0) -> Any:
    """A ``tqdm.auto`` bar over ``total`` steps named ``desc``, shown by the rule above."""
    progress = check_progress(progress)
    if progress is None and (env_switch("DATAKIT_PROGRESS") is False or _tqdm_disabled()):
        progress = False
    settings = {"disable": None if progress is None else not progress,
                "delay": DELAY if progress is None else 0.0, "leave": progress is not None,
                "dynamic_ncols": True}
    if progress is None:  # tqdm applies a TQDM_<NAME> variable to a setting not passed
        settings = {k: v for k, v in settings.items()
                    if k == "disable" or f"TQDM_{k.upper()}" not in os.environ}
    return tqdm(total=total, desc=desc, unit=unit, initial=initial, **settings)


def _tqdm_disabled() -> bool:
    """Whether ``TQDM_DISABLE`` says yes (tqdm's variable, read at each bar: any spelling of
    yes hides the bar; tqdm itself reads it once, at import, and takes ``0`` for yes)."""
    return os.environ.get("TQDM_DISABLE", "").strip().lower() in YES


def with_progress(items: Iterable[T], desc: str, *, progress: bool | None = None,
                  total: int | None = None, unit: str = "it") -> Iterator[T]:
    """Yield ``items`` while a bar (:func:`progress_bar`) counts them; the bar closes at the end."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    bar = progress_bar(total, desc, progress=progress, unit=unit)
    try:
        for item in items:
            yield item
            bar.update()
    finally:
        bar.close()
