"""A pure-Python twin of ``tf.data.Dataset``, and the algorithms it is made of.

:class:`Dataset` mirrors the ``tf.data`` methods the course teaches, element for element,
and its ``trace()`` tells what each op held at each step. Its algorithms live beside it:
the shuffle buffer, the interleave cycle, the variable-length and combining ops. Importing
the glass box loads neither TensorFlow nor Matplotlib.
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.glassbox.dataset import Dataset, glassbox_shuffle
    from datakit.glassbox.elements import Step

__all__ = lazy_face(__name__)
