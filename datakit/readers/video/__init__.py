"""Video into ``tf.data``: synthetic videos, your own files, ``SequenceExample`` shards, clips.

Names load on first use (the package imports nothing heavy itself), so the
conversion's worker processes, which need only PyAV, start without TensorFlow.

>>> from datakit.readers import video
>>> video.clip_dataset.__module__
'datakit.readers.video.clips'
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

if TYPE_CHECKING:  # the real types of the names _HOME loads on first use
    from datakit.readers.video.clip_options import VideoOptions
    from datakit.readers.video.clips import clip_dataset
    from datakit.readers.video.convert import write_video_shards
    from datakit.readers.video.convert_beam import write_video_shards_beam
    from datakit.readers.video.directory import video_dataset_from_directory
    from datakit.readers.video.encoded import make_video_folder, write_video
    from datakit.readers.video.model import small_video_model
    from datakit.readers.video.moving_squares import (
        CLASSES,
        Video,
        iter_videos,
        make_video,
        make_videos,
    )
    from datakit.readers.video.mp4 import (
        list_mp4,
        mp4_frame_count,
        read_mp4,
        write_mp4,
        write_mp4_videos,
    )
    from datakit.readers.video.mp4_clips import mp4_clip_dataset
    from datakit.readers.video.predict_clips import clips_to_predict
    from datakit.readers.video.video_records import write_video_records

__all__ = ["clip_dataset", "mp4_clip_dataset", "small_video_model", "list_mp4", "mp4_frame_count",
           "read_mp4", "write_mp4", "write_mp4_videos", "write_video_records", "CLASSES", "Video",
           "iter_videos", "make_video", "make_videos", "write_video", "make_video_folder",
           "video_dataset_from_directory", "write_video_shards", "write_video_shards_beam",
           "VideoOptions",
           "clips_to_predict"]

#: The module each name lives in, imported on first use.
_HOME = {
    "clip_dataset": "clips", "mp4_clip_dataset": "mp4_clips",
    "small_video_model": "model",
    "list_mp4": "mp4", "mp4_frame_count": "mp4", "read_mp4": "mp4", "write_mp4": "mp4",
    "write_mp4_videos": "mp4",
    "write_video_records": "video_records",
    "CLASSES": "moving_squares", "Video": "moving_squares", "iter_videos": "moving_squares",
    "make_video": "moving_squares", "make_videos": "moving_squares",
    "write_video": "encoded", "make_video_folder": "encoded",
    "video_dataset_from_directory": "directory",
    "write_video_shards": "convert",
    "write_video_shards_beam": "convert_beam",
    "VideoOptions": "clip_options",
    "clips_to_predict": "predict_clips",
}


#: Modules renamed so no two modules of the kit share a name, reachable under the old one.
_RENAMED = {"sampling": "clip_sampling", "shards": "video_records", "synthetic": "moving_squares"}


if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME, modules=_RENAMED)
