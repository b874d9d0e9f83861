"""The video readers: shards, your folders straight into ``fit()``, one video to predict on.

Also the MP4 and in-memory baselines that streaming replaces. The wing's top room: each
reader stands on the rooms below and ends with the one clip tail.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
