"""The frames a clip wants, read from a video file at the least decoding, each converted once.

A video stores a full picture (a keyframe) every so often and, between them,
only changes: to show frame ``k`` a decoder must start at the keyframe before
``k`` and decode every frame up to it. :func:`read_frames` therefore plans,
for each frame wanted that is not decoded yet, where to start:

- **seek** to the keyframe before it when that decodes fewer frames than
  running on from the last frame decoded (a clip far from the previous one);
- **run on** otherwise (frames a few apart, or a keyframe far back).

The decision is made per clip from the keyframe list the probe keeps, not by
a fixed rule, and decoding stops at the last frame wanted. Each kept frame is
converted once, straight from the decoder's pixels (YUV, mostly) to RGB at the
target size in one swscale call (``frame.to_ndarray(width=, height=,
format="rgb24")``), non-square pixels (``info.sar``) made square in the same
call; rotating, cropping or padding then moves the small frame only. Frames
decoded and not kept are never converted. The conversion runs on the decoder's
own threads (``threads``): swscale's default, a slice of each
frame on every core, only adds hand-overs when each core already decodes a
video (``python -m benchmarks.decoders`` measures the reader both ways).

Frames shown before the next frame wanted that no other frame refers to (most
B-frames) are not even decoded: the decoder is told to skip them.

``stats`` (a dict) counts the work: ``"decoded"`` frames the decoder gave
back, ``"packets"`` fed to it, ``"seeks"``.

>>> import tempfile, numpy as np
>>> from pathlib import Path
>>> from datakit.readers.video.synthetic.encoded import write_video
>>> from datakit.readers.video.decoding.decoding import probe
>>> frames = np.zeros((60, 16, 16, 3), np.uint8)
>>> info = probe(write_video(frames, Path(tempfile.mkdtemp()) / "v.mp4", gop=20), cache=False)
>>> info.keys
(0, 20, 40)
>>> stats = {}
>>> read_frames(info, [42, 44, 46], frame_size=(8, 8), stats=stats).shape
(3, 8, 8, 3)
>>> stats["decoded"] <= 7, stats["seeks"]  # at most frames 40 to 46: from the keyframe
(True, 1)
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from datakit.core.errors import DataError
from datakit.core.file_facts import change
from datakit.readers.video.decoding.video_info import (
    WHILE_READING,
    VideoInfo,
    frame_at,
    open_video,
    video_stream,
)

if TYPE_CHECKING:  # PyAV is imported where a video is opened
    import av

__all__: list[str] = []

#: Let the decoder skip frames shown before the next frame wanted that no other
#: frame refers to (B-frames, mostly).
_SKIP_UNNEEDED = True


class _OutOfOrder(Exception):
    """The decoder gave frames back out of timestamp order: timestamps in decode order."""


#: What to do about a video changed after the folder was listed, by when it is found.
CHANGED_WHILE_READING = ("build the dataset again once the files are final (the listing "
                         "then reads the file as it is now)")
CHANGED_WHILE_CONVERTING = ("run write_video_shards again once the files are final: it "
                            "converts the file as it is now, and keeps the videos already "
                            "converted")


def check_unchanged(info: VideoInfo, fix: str = CHANGED_WHILE_READING) -> None:
    """A :class:`DataError` naming the file when it is gone, or is not the file the probe saw
    (:mod:`datakit.core.file_facts`: its size, modification time, change time or inode
    differ, as after a ``cp -p`` over it), ending in ``fix``.

    A file of the listed size whose times or inode differ is compared by its content
    (its CRC-32 with the probe's): a ``touch`` that changed no byte is no change. That
    costs one read of the file, once per new stamp in a process (about 1 GB/s of CPU).
    """
    if not info.stamp:
        return
    changed = change(info.path, info.stamp, digest=info.digest)
    if changed is not None:
        raise DataError(info.path, f"changed since the folder was listed ({changed}): its "
                        f"frames would mix with the old file's; {fix}")


def damaged_error(info: VideoInfo, frame: int, said: str) -> DataError:
    """The error for frame ``frame`` of a listed video that cannot be decoded now (``said``:
    FFmpeg's words, or what the decoder did not give).

    A file changed since the listing is that (:func:`check_unchanged`: the one rule of
    :mod:`datakit.core.file_facts`, a ``touch`` that changed no byte being no change).
    Otherwise the file is as it was listed and damaged at ``frame``: the listing's probe
    decodes its first frames and its last group of frames only, so it could not see
    this, and the fix is ``verify_frames=True`` (every frame decoded once while listing,
    cached per file) or a file removed or re-encoded. The reader cannot leave the file
    out now: the epoch's length was promised to ``fit()``.
    """
    check_unchanged(info)
    head = f"frame {frame} of {info.frames} cannot be decoded ({said}): the file is damaged there"
    if info.verified:  # every frame decoded at the listing, and the file is the same
        return DataError(info.path, f"{head}, though every frame of it decoded when the "
                         "folder was listed (verify_frames=True) and it is unchanged since: a "
                         f"disk that fails to read it, or a decoder that fails after a seek? "
                         f"{WHILE_READING[:1].upper()}{WHILE_READING[1:]}")
    return DataError(info.path, f"{head}, and the folder's listing could not see it: it "
                     "decodes only each file's first frames and its last group of frames. "
                     "Pass verify_frames=True to video_dataset_from_directory (it decodes "
                     "every frame of each file once while listing, cached per file, and "
                     "names such a file then, or leaves it out under on_bad_file='skip'), or "
                     f"{WHILE_READING}")


def frame_converter(info: VideoInfo, frame_size: tuple[int, int] | None = None, *,
                    crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
                    threads: int = 1) -> Callable[[av.VideoFrame], np.ndarray]:
    """A function from a decoded frame to its ``(height, width, 3)`` RGB array, fitted
    to ``frame_size`` as :func:`~datakit.readers.video.decoding.decoding.fit_frame` fits it
    (stretched, centre-cropped or padded), in one swscale conversion on ``threads``
    threads (0: one a core; 1, the default, where each core already decodes a video).

    A frame is fitted at the shape it is shown (``info.height`` x ``info.width``): its
    pixels made square as the sample aspect ratio says (``info.sar``), then turned as the
    display matrix says. The first is part of the same swscale call (the stored frame
    scaled straight to the target), so it costs nothing where ``frame_size`` is given;
    with ``frame_size=None`` a video of non-square pixels is scaled to its display size
    (FFmpeg's ``scale=iw*sar:ih``), one of square pixels only converted, as before."""
    rot = info.rotation // 90
    if frame_size is None and info.sar[0] != info.sar[1]:  # shown wider or narrower
        frame_size = (info.height, info.width)
    if frame_size is None:
        return lambda frame: _turned(frame.to_ndarray(format="rgb24", threads=threads), rot)
    th, tw = frame_size
    h, w = info.height, info.width
    crop = None
    if crop_to_aspect_ratio:  # scale so that the centre crop comes out th x tw, then cut
        ch, cw = min(h, round(w * th / tw)), min(w, round(h * tw / th))
        sh, sw = max(th, round(h * th / ch)), max(tw, round(w * tw / cw))
        crop = ((sh - th) // 2, (sw - tw) // 2)
    elif pad_to_aspect_ratio:
        scale = min(th / h, tw / w)
        sh, sw = max(1, round(h * scale)), max(1, round(w * scale))
    else:
        sh, sw = th, tw
    stored_h, stored_w = (sw, sh) if rot % 2 else (sh, sw)

    def convert(frame: av.VideoFrame) -> np.ndarray:
        rgb = _turned(_scaled(frame, stored_w, stored_h, threads), rot)
        if crop is not None:
            return rgb[crop[0]:crop[0] + th, crop[1]:crop[1] + tw]
        if (sh, sw) != (th, tw):  # padded: black bars around
            out = np.zeros((th, tw, 3), np.uint8)
            y, x = (th - sh) // 2, (tw - sw) // 2
            out[y:y + sh, x:x + sw] = rgb
            return out
        return rgb

    return convert


_THREAD = threading.local()


def _scaled(frame: av.VideoFrame, width: int, height: int, threads: int) -> np.ndarray:
    """``frame`` as RGB at ``width`` x ``height``, by one swscale call on ``threads`` threads
    through a scaler kept per thread: ``frame.to_ndarray(width=, height=)`` builds a new
    scaler for every frame, which can cost more than the scaling itself at small sizes."""
    scaler = getattr(_THREAD, "scaler", None)
    if scaler is None:
        from av.video.reformatter import VideoReformatter
        scaler = _THREAD.scaler = VideoReformatter()
    return scaler.reformat(frame, width=width, height=height, format="rgb24",
                           interpolation="BILINEAR", threads=threads).to_ndarray()


def yuv420_planes(frame: av.VideoFrame, width: int, height: int) -> list[np.ndarray]:
    """``frame`` at ``width`` x ``height`` as full-range (JPEG) YUV 4:2:0: its Y, U and V planes,
    views on the scaled frame (no copy), in one swscale call that scales and sets the range
    and converts no colours (through a scaler kept per thread, on this thread only: each
    worker already holds one core). ``width`` and ``height`` even."""
    scaler = getattr(_THREAD, "yuv_scaler", None)
    if scaler is None:
        from av.video.reformatter import VideoReformatter
        scaler = _THREAD.yuv_scaler = VideoReformatter()
    small = scaler.reformat(frame, width=width, height=height, format="yuv420p",
                            dst_color_range="JPEG", interpolation="BILINEAR", threads=1)
    return [np.frombuffer(memoryview(p), np.uint8).reshape(p.height, p.line_size)[:, :p.width]
            for p in small.planes]


def _turned(rgb: np.ndarray, rot: int) -> np.ndarray:
    return np.ascontiguousarray(np.rot90(rgb, k=rot)) if rot else rgb


def read_frames(info: VideoInfo, wanted: Sequence[int] | np.ndarray, *, seek: bool = True,
                threads: int = 0, stats: dict | None = None, **fit: Any) -> np.ndarray:
    """The frames ``wanted`` (indices, any order, repeats allowed) as ``(n, H, W, 3)`` uint8.

    ``seek=False`` decodes from the first frame. ``threads``: FFmpeg's decoding
    threads for this video, decoding and converting (0: FFmpeg's choice, about one
    per core; 1 when as many videos decode at once as there are cores: one thread
    per video then does the same work on less CPU, where FFmpeg's own threads
    mostly wait on each other). ``fit``: the keywords of :func:`frame_converter`.
    A frame that cannot be decoded, or a file changed since it was probed, is a
    :class:`DataError` naming the file.
    """
    wanted = np.asarray(wanted, np.int64).reshape(-1)
    check_unchanged(info)
    convert = frame_converter(info, threads=threads, **fit)
    need = sorted(set(wanted.tolist()))
    if not need:
        return np.zeros((0, *_out_shape(info, fit)), np.uint8)
    stats = {} if stats is None else stats
    for key in ("decoded", "packets", "seeks"):
        stats.setdefault(key, 0)
    try:
        got = _decode(info, need, convert, seek=seek, threads=threads, counting=info.reordered,
                      stats=stats)
    except _OutOfOrder:  # a file whose timestamps are in decode order: count frames instead
        got = _decode(info, need, convert, seek=seek, threads=threads, counting=True,
                      stats=stats)
    missing = [k for k in need if k not in got]
    if missing and seek:  # a seek that landed past a frame wanted: decode from the start
        return read_frames(info, wanted, seek=False, threads=threads, stats=stats, **fit)
    if missing:
        more = f" nor {len(missing) - 1} more after it" if len(missing) > 1 else ""
        raise damaged_error(info, missing[0], f"the decoder gave no such frame{more}")
    return np.stack([got[k] for k in wanted.tolist()])


def _out_shape(info: VideoInfo, fit: dict) -> tuple:
    size = fit.get("frame_size") or (info.height, info.width)
    return (*size, 3)


def _key_before(info: VideoInfo, k: int) -> int:
    keys = info.keys or (0,)
    return keys[max(0, bisect.bisect_right(keys, k) - 1)]


def _decode(info: VideoInfo, need: list[int], convert: Callable[[av.VideoFrame], np.ndarray], *,
            seek: bool, threads: int, counting: bool, stats: dict) -> dict[int, np.ndarray]:
    """``{frame index: converted frame}`` for the frames ``need`` (sorted)."""
    import av

    wanted, got, at = set(need), {}, [need[0]]  # at: the first frame not given yet
    with open_video(info.path, WHILE_READING) as container:
        stream = video_stream(container)
        stream.codec_context.thread_count = threads
        target = [0]  # the timestamp of the next frame wanted
        try:
            frames, pos = None, -1
            for w in need:
                if w in got:
                    continue
                target[0] = info.pts[w]
                start = _key_before(info, w) if seek else 0
                if frames is None or (seek and start > pos + 1):  # seeking decodes fewer
                    frames = _frames_from(container, stream, (info, target, at), start,
                                          counting, stats, fresh=frames is None)
                for k, frame in frames:
                    pos = k
                    if k in wanted and k not in got:
                        got[k] = convert(frame)
                    if k >= w:
                        break
                else:
                    break  # the file ended: the frames not found are missing
        except av.error.FFmpegError as e:
            raise damaged_error(info, at[0], f"{type(e).__name__}: {e}") from None
    return got


def _frames_from(container: Any, stream: Any, facts: tuple, start: int, counting: bool,
                 stats: dict, *, fresh: bool) -> Iterator[tuple[int, av.VideoFrame]]:
    """``(frame index, frame)`` pairs from the keyframe ``start`` on, in the order shown.

    ``facts``: the video's info, the one-item list holding
    the next wanted frame's timestamp: a frame shown before it that no other frame
    refers to (most B-frames) is skipped by the decoder (when timestamps are
    presentation times: counting frames needs every one), and the one-item list this
    keeps the first frame not given yet in (for an error's message: frames before it
    decoded).
    """
    info, target, at = facts
    if start > 0 or not fresh:
        container.seek(info.pts[start], stream=stream, backward=True, any_frame=False)
        stats["seeks"] += 1
    context = stream.codec_context
    first: int | None = None
    last, n = -1, 0
    at[0] = start
    for packet in container.demux(stream):
        stats["packets"] += bool(packet.size)
        if not counting and _SKIP_UNNEEDED:
            context.skip_frame = "NONREF" if packet.pts is not None and \
                packet.pts < target[0] else "DEFAULT"
        for frame in packet.decode():
            stats["decoded"] += 1
            if counting:  # decode-order timestamps: the first frame is the keyframe
                if first is None:
                    found = frame_at(info, frame.pts)
                    first = start if found is None else found
                k = first + n
                n += 1
            else:
                found = frame_at(info, frame.pts)
                if found is None:
                    continue
                k = found
                if k < last:
                    raise _OutOfOrder
                last = k
            at[0] = k + 1  # should decoding fail now, the first frame not given
            yield k, frame
