"""TFRecord shards and ``tf.train.Example`` s: written as one checked set, read back checked."""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
