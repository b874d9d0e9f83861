"""tf.Transform on Apache Beam: the full pass over the kit's CSV shards, committed, read back."""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
