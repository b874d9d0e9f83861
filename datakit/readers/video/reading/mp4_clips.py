"""The MP4 baseline: clips decoded from MP4 files by PyAV, from the first frame, inside ``tf.data``.

:func:`mp4_clip_dataset` reads the synthetic set's MP4 folders (written by
:func:`datakit.readers.video.synthetic.mp4.write_mp4_videos`) and decodes each clip from
the file's first frame, the cost :func:`~datakit.readers.video.reading.clips.clip_dataset`
avoids by decoding only the JPEGs of a clip's frames. For your own videos
(any codec, seeking to the keyframe before a clip) use
:func:`~datakit.readers.video.reading.directory.video_dataset_from_directory`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from datakit.core.arguments import check_flags, check_seed
from datakit.core.exit_guard import release_iterators_at_exit
from datakit.core.file_facts import change, changed_error, file_facts
from datakit.core.keywords import keywords, options_from
from datakit.readers.video.index.video_index import SHORT_FIX, short_reason
from datakit.readers.video.options.clip_options import VIDEO_FIELDS, VideoOptions
from datakit.readers.video.options.clip_sampling import random_start
from datakit.readers.video.reading.clip_tail import check_clip_counts, clip_tail
from datakit.readers.video.synthetic.mp4 import list_mp4, mp4_frame_count, read_mp4

__all__ = ["mp4_clip_dataset"]

#: What the error for a video changed after the build tells the user to do.
_BUILD_AGAIN = "build the dataset again once the files are final"


def mp4_clip_dataset(directory: str | Path, *, clip_len: int = 16, batch_size: int = 8,
                     shuffle_buffer_size: int = 64, n_readers: int | None = None,
                     seed: int | None = None, drop_remainder: bool = False,
                     options: VideoOptions | None = None,
                     **tf_names: Any) -> tf.data.Dataset:
    """Like :func:`~datakit.readers.video.reading.clips.clip_dataset`, from MP4 files decoded by
    PyAV.

    Decoding has to run from the first frame up to the clip's last one (no
    JPEG-per-frame shortcut), in a ``tf.numpy_function`` mapped over the files.
    (:mod:`~datakit.core.exit_guard` keeps an error from leaving the
    interpreter hanging at exit.)

    Args:
        directory: ``<class>/*.mp4`` folders, from :func:`write_mp4_videos`.
        clip_len, batch_size, shuffle_buffer_size, n_readers, seed,
            drop_remainder: as in :func:`clip_dataset` (``n_readers``: files
            decoded at once, ``None``: 2).
        options: a :class:`~datakit.readers.video.options.clip_options.VideoOptions` of which
            this baseline takes ``clip_len`` and ``prefetch`` only (another field set
            is a ``TypeError``), instead of (or beside) ``clip_len=``, not both ways.
        **tf_names: tf.data's names for the knobs (``cycle_length``, ``buffer_size``),
            taken quietly; never two names for one knob.

    Each epoch draws a new random clip per file inside the dataset, so a ``.cache()``
    after it freezes the first epoch's clips for every epoch after; a cache belongs
    before the clip choice (keep the decoded frames, as
    :func:`~datakit.readers.video.reading.in_memory.load_videos_in_memory` does, and choose
    clips from them).

    Raises:
        TypeError: a count is not an int.
        ValueError: a count is out of range, or no MP4 files are found.
        InvalidArgumentError (while reading): a file that is damaged or shorter
            than a clip, or changed since the dataset was built, naming it.
    """
    knobs = keywords("mp4_clip_dataset", {"n_readers": n_readers, "clip_len": clip_len,
                                          "shuffle_buffer_size": shuffle_buffer_size},
                     tf_names, defaults={"n_readers": None, "clip_len": 16,
                                         "shuffle_buffer_size": 64})
    with knobs.as_written():  # a message names each knob as the caller wrote it
        n_readers = 2 if knobs["n_readers"] is None else knobs["n_readers"]
        shuffle_buffer_size = knobs["shuffle_buffer_size"]
        opts = options_from(VideoOptions, options, {"clip_len": clip_len},
                            where="mp4_clip_dataset", given=knobs.given)  # the clip_len rule
        _takes_only(opts, ("clip_len", "prefetch"))
        clip_len = opts.clip_len
        check_clip_counts(batch_size, shuffle_buffer_size, n_readers)
        seed = check_seed(seed)
    check_flags(drop_remainder=drop_remainder)
    release_iterators_at_exit()
    paths, labels = list_mp4(directory)
    facts = file_facts(paths)  # each clip's file must be the one listed (datakit.core.file_facts)
    height, width = read_mp4(paths[0], stop=1).shape[1:3]

    def decode_clip(raw_path: bytes, r: int) -> np.ndarray:
        path = raw_path.decode()
        changed = change(path, facts[path])
        if changed is not None:  # the kit's one refusal of a changed file
            raise changed_error(path, changed, fix=_BUILD_AGAIN, unit="clips")
        try:
            n = mp4_frame_count(path)
            if n < clip_len:
                raise ValueError(f"{short_reason(n, clip_len, None)}; {SHORT_FIX}")
            start = random_start(r, n, clip_len)
            clip = read_mp4(path, start, start + clip_len)
            if clip.shape != (clip_len, height, width, 3):
                raise ValueError(f"decoded {clip.shape[0]} frames of shape {clip.shape[1:]}, "
                                 f"expected {clip_len} of {(height, width, 3)}: the file is "
                                 "damaged or its frames differ in size")
        except Exception as e:  # reworded with the file's name
            reason = str(e).replace(f"{path}: ", "")
            raise ValueError(f"{path}: cannot read a clip: {type(e).__name__}: {reason}") \
                from None
        return clip

    def load(path: tf.Tensor, label: tf.Tensor, r: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        clip = tf.numpy_function(decode_clip, [path, r], tf.uint8, stateful=False,
                                 name="mp4_clip")
        return tf.ensure_shape(clip, (clip_len, height, width, 3)), label

    files = tf.data.Dataset.from_tensor_slices((paths, tf.constant(labels, tf.int64)))
    files = files.shuffle(len(paths), seed=seed)
    rand = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True)
    ds = tf.data.Dataset.zip(files, rand).map(lambda pl, r: load(pl[0], pl[1], r),
                                              num_parallel_calls=n_readers,
                                              deterministic=True)
    return clip_tail(ds, count=len(paths), batch_size=batch_size,  # one clip per file
                     shuffle_buffer_size=shuffle_buffer_size, seed=seed,
                     prefetch=opts.prefetch, drop_remainder=drop_remainder)


def _takes_only(opts: VideoOptions, takes: tuple[str, ...]) -> None:
    """Refuse options this baseline cannot honour (any field but ``takes`` away from its
    default), rather than read the videos otherwise than asked."""
    plain = VideoOptions()
    other = [f for f in VIDEO_FIELDS if f not in takes and getattr(opts, f) != getattr(plain, f)]
    if other:
        raise TypeError(f"mp4_clip_dataset() takes only {' and '.join(takes)} from options=, "
                        f"got {other[0]}={getattr(opts, other[0])!r}: read the videos with "
                        "video_dataset_from_directory for the other fields")
