"""Pictures of what ``tf.data`` does: batches, shuffles, mixing, interleave, sampling; widgets."""

__all__: list[str] = []
