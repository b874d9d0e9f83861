"""The synthetic videos as MP4 files, the way a learner's own videos arrive, and back.

:func:`write_mp4` encodes frames with H.264 (atomically), :func:`read_mp4`
decodes a range of frames, :func:`list_mp4` finds the files of the synthetic
set's four class folders. Any folder of real videos (other codecs, containers,
frame rates) is read by :mod:`datakit.readers.video.decoding.decoding`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from datakit.core.atomic import atomic_file
from datakit.core.paths import one_folder, user_path
from datakit.readers.video.decoding.video_info import special_kind, video_stream
from datakit.readers.video.synthetic.encoded import ENCODER_OPTIONS
from datakit.readers.video.synthetic.moving_squares import CLASSES

__all__ = ["write_mp4_videos"]


def write_mp4(frames: np.ndarray, path: str | Path, *, fps: int = 25, crf: int = 18) -> Path:
    """Encode ``(length, H, W, 3)`` uint8 frames as an H.264 MP4 (atomic: temp name, rename)."""
    import av

    frames = np.asarray(frames)
    if not (frames.ndim == 4 and frames.shape[-1] == 3 and frames.dtype == np.uint8):
        raise ValueError(f"frames {frames.shape} {frames.dtype}: pass a (length, H, W, 3) "
                         "uint8 array")
    path = Path(user_path(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as tmp, av.open(str(tmp), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.height, stream.width = frames.shape[1:3]
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": str(crf), **ENCODER_OPTIONS["h264"]}  # same pixels each run
        for f in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
        out.mux(stream.encode())
    return path


def read_mp4(path: str | Path, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Decode frames ``start .. stop-1`` of an MP4 (all by default) as uint8 RGB, from the
    video stream FFmpeg reads (never a still or cover picture listed first)."""
    import av

    _regular(path)
    frames = []
    try:
        with av.open(str(path)) as container:
            stream = _stream(path, container)
            for t, frame in enumerate(container.decode(stream)):
                if stop is not None and t >= stop:
                    break
                if t >= start:
                    frames.append(frame.to_ndarray(format="rgb24"))
    except (av.error.FFmpegError, OSError) as e:
        raise OSError(f"{path}: cannot decode video: {e}") from e
    return np.stack(frames) if frames else np.zeros((0, 0, 0, 3), np.uint8)


def mp4_frame_count(path: str | Path) -> int:
    """The number of frames in the video stream FFmpeg reads: the header's count, or where
    the header has none (0: MPEG-TS, Matroska) its packets counted (nothing decoded), as
    the probe (:mod:`datakit.readers.video.decoding.decoding`) counts them."""
    import av

    _regular(path)
    with av.open(str(path)) as container:
        stream = _stream(path, container)
        if stream.frames:
            return int(stream.frames)
        return sum(1 for p in container.demux(stream)
                   if p.pts is not None and p.size and not p.is_discard)


def _regular(path: str | Path) -> None:
    """Refuse a pipe, socket or device before ``av.open`` (which waits forever on a pipe)."""
    kind = special_kind(str(path))
    if kind is not None:
        raise OSError(f"{path}: is {kind}, not a regular file: it is never read as a video; "
                      "remove it from the folder")


def _stream(path: str | Path, container: Any) -> Any:
    stream = video_stream(container)
    if stream is None:
        raise OSError(f"{path}: has no video stream (an audio-only file, or a cover picture "
                      "only?)")
    return stream


def write_mp4_videos(videos: Iterable, directory: str | Path, **kwargs: Any) -> list[Path]:
    """Write each video as ``directory/<class name>/video_<id>.mp4``; return the paths."""
    directory = Path(directory)
    return [write_mp4(v.frames, directory / CLASSES[v.label] / f"video_{v.id:05d}.mp4", **kwargs)
            for v in videos]


def list_mp4(directory: str | Path) -> tuple[list[str], list[int]]:
    """The MP4 files under ``directory/<class name>/`` (sorted) and their labels."""
    directory = Path(one_folder(directory, holds="<class>/*.mp4 files"))
    paths = sorted(directory.glob("*/*.mp4"))
    if not paths:
        raise ValueError(f"{directory}: no <class>/*.mp4 files; write them with "
                         "write_mp4_videos (for your own videos: video_dataset_from_directory)")
    for p in paths:
        _regular(p)  # listed: refused before any clip is read
        if p.parent.name not in CLASSES:
            raise ValueError(f"{p}: folder must be one of {CLASSES} (for your own class "
                             "folders: video_dataset_from_directory)")
    return [str(p) for p in paths], [CLASSES.index(p.parent.name) for p in paths]
