"""Pictures of what ``tf.data`` does: batches, shuffles, mixing, interleave, sampling; widgets."""

from datakit.core.faces import lazy_names

__all__: list[str] = []

#: Each re-exported name and the module it lives in: none (import the modules themselves).
_HOME: dict[str, str] = {}

__getattr__, __dir__ = lazy_names(__name__, _HOME)
