"""Pictures of what ``tf.data`` does: batches, shuffles, mixing, interleave, sampling; widgets.

Each picture is drawn from a real run: :mod:`~datakit.see.batches` (batches across
epochs, what ``filter`` keeps and ``map`` changes), :mod:`~datakit.see.shuffle` (the
shuffle buffer), :mod:`~datakit.see.mixing` (how far a shuffle mixes),
:mod:`~datakit.see.interleave` (which file each element came from),
:mod:`~datakit.see.sampling` (which source), :mod:`~datakit.see.animation` and
:mod:`~datakit.see.video_clip` (animations that play without a kernel),
:mod:`~datakit.see.widgets` and the plain data behind them,
:mod:`~datakit.see.widget_data`. Import the module you draw with
(``from datakit.see import batches``): the package re-exports nothing.
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

__all__: list[str] = []

#: Each re-exported name and the module it lives in: none (import the modules themselves).
_HOME: dict[str, str] = {}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
