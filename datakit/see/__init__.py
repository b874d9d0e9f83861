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

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
