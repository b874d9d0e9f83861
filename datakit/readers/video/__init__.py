"""Video into ``tf.data``: synthetic videos, your own files, ``SequenceExample`` shards, clips.

The wing's rooms, bottom first (each imports only its own and those below it):
:mod:`~datakit.readers.video.decoding` (a file probed and decoded, no TensorFlow),
:mod:`~datakit.readers.video.options` (``VideoOptions``, the samplers, the Keras words),
:mod:`~datakit.readers.video.index` (class folders listed and split, the video index),
:mod:`~datakit.readers.video.synthetic` (the course's videos and small model),
:mod:`~datakit.readers.video.converter` (videos to ``SequenceExample`` shards) and
:mod:`~datakit.readers.video.reading` (the clip readers). A user imports from here.

Names load on first use (the package imports nothing heavy itself), so the
conversion's worker processes, which need only PyAV, start without TensorFlow.

>>> from datakit.readers import video
>>> video.clip_dataset.__module__
'datakit.readers.video.reading.clips'
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.readers.video.converter.convert import write_video_shards
    from datakit.readers.video.converter.convert_beam import write_video_shards_beam
    from datakit.readers.video.converter.video_records import write_video_records
    from datakit.readers.video.options.clip_options import VideoOptions
    from datakit.readers.video.reading.clips import clip_dataset
    from datakit.readers.video.reading.directory import video_dataset_from_directory
    from datakit.readers.video.reading.mp4_clips import mp4_clip_dataset
    from datakit.readers.video.reading.predict_clips import clips_to_predict
    from datakit.readers.video.synthetic.encoded import make_video_folder, write_video
    from datakit.readers.video.synthetic.messy_folder import make_messy_video_folder
    from datakit.readers.video.synthetic.model import small_video_model
    from datakit.readers.video.synthetic.moving_squares import (
        CLASSES,
        Video,
        iter_videos,
        make_video,
        make_videos,
    )
    from datakit.readers.video.synthetic.mp4 import write_mp4_videos

__all__ = lazy_face(__name__)
