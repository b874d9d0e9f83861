"""Video into ``tf.data``: synthetic videos, MP4 files, ``SequenceExample`` shards, clips.

>>> from datakit.readers import video
>>> video.clip_dataset.__module__
'datakit.readers.video.clips'
"""

from datakit.readers.video.clips import clip_dataset, mp4_clip_dataset
from datakit.readers.video.model import small_video_model
from datakit.readers.video.mp4 import list_mp4, mp4_frame_count, read_mp4, write_mp4, write_mp4_videos
from datakit.readers.video.shards import write_video_records
from datakit.readers.video.synthetic import CLASSES, Video, iter_videos, make_video, make_videos

__all__ = ["CLASSES", "Video", "make_video", "iter_videos", "make_videos", "write_mp4", "read_mp4",
           "mp4_frame_count", "write_mp4_videos", "list_mp4", "write_video_records",
           "clip_dataset", "mp4_clip_dataset", "small_video_model"]
