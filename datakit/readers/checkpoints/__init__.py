"""Iterator checkpoints: a pipeline saved mid-epoch, checked and resumed in a fresh process."""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
