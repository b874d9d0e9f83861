"""Videos converted to ``SequenceExample`` shards: in worker processes here, or on Beam.

The parts, the shard sets, the generations that switch ``train/`` and ``validation/`` as
one, and videos already in memory written the same way. Stands on decoding, the options,
the index and the synthetic videos' type; the readers read what it writes.
"""

from datakit.core.faces import lazy_face

__all__ = lazy_face(__name__)
