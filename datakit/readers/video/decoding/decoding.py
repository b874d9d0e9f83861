"""Any video file PyAV opens, decoded frame by frame: probed, resampled by time, seeked, resized.

:func:`probe` reads a file's video stream (the one FFmpeg picks: the default
track, never a cover picture) once without decoding it (one packet per frame:
the timestamps count the frames even when the header says 0, as WebM and
Matroska headers do; packets an edit list discards are not frames; the
keyframes are listed too), decodes its
first frame (for the rotation a phone writes in the display matrix, and the
pixel aspect ratio the codec states: a frame is read at the shape players show,
1440x1080 HDV pixels 4:3 wide as 1920x1080) and its
last group of frames (from the last keyframe to the end), and compares the
frames found with the count the index lists (an AVI's empty entries, frames
its recorder dropped, count as found: FFmpeg decodes past them): a file cut
short at its start or at its end is found here. What it learned is cached per file
(:mod:`datakit.readers.video.decoding.probe_cache`), so a second run does not probe again.
:func:`output_frames` maps the frames of the wanted frame rate to the file's
frames *by timestamp*, so 29.97 fps and variable frame rates come out right.
:func:`decode_frames` reads the frames wanted
(:mod:`datakit.readers.video.decoding.frame_reading`: a seek to the keyframe before
each clip, each kept frame converted once). Nothing here imports TensorFlow,
so worker processes (:mod:`datakit.readers.video.converter.convert`) start fast.

Frame ``k`` is the ``k``-th frame *shown* (presentation order). Most
containers store each frame's presentation time; AVI stores decode order
only, so with B-frames its packet times are not the order frames are shown in:
the probe finds that (the decoder gives its frames back out of timestamp
order) and the reader then counts frames from the keyframe instead. So it
does for recordings joined end to end (MPEG-TS segments put together with
``cat``), whose timestamps go back or repeat where a part starts: frame ``k``
is the ``k``-th FFmpeg decodes (:func:`~datakit.readers.video.decoding.video_info.frame_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from datakit.core.errors import DataError
from datakit.core.file_facts import content_digest, file_stamp
from datakit.readers.video.decoding.frame_check import check_every_frame, verify_reason
from datakit.readers.video.decoding.video_info import WHILE_CONVERTING as _WHILE_CONVERTING
from datakit.readers.video.decoding.video_info import (
    VideoInfo,
    display_width,
    frame_at,
    frame_order,
    sample_aspect_ratio,
    video_stream,
)
from datakit.readers.video.decoding.video_info import open_video as _open

if TYPE_CHECKING:  # PyAV is imported where a video is opened
    import av

__all__: list[str] = []

#: The file name endings read as videos (any container FFmpeg opens would do).
VIDEO_EXTENSIONS = (".mp4", ".m4v", ".avi", ".webm", ".mkv", ".mov")


def _check_link(path: str) -> None:
    """A link that leads nowhere (dangling, or looping back on itself) named as such."""
    import errno
    import os

    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as e:
            kind = "loops back on itself" if e.errno == errno.ELOOP else "points to nothing"
            raise DataError(path, f"is a link that {kind} ({os.readlink(path)!r}); fix or "
                            "remove the link, or pass on_bad_file='skip'") from None


def probe(path: str | Path, *, cache: bool = True, verify_frames: bool = False) -> VideoInfo:
    """Timestamps, keyframes, size (as shown), rotation, pixel aspect ratio and codec of a
    video file; a :class:`DataError` naming it. ``cache``: reuse (and keep) what an earlier
    probe of the unchanged file found.

    The probe also takes the file's CRC-32 (:func:`~datakit.core.file_facts.content_digest`:
    one more read of the file, from the page cache after the probe, about 1 GB/s of CPU,
    a few per cent of the probe), so that a reader can tell a ``touch`` that changed no
    byte from an edit (:func:`~datakit.readers.video.decoding.frame_reading.check_unchanged`).

    ``verify_frames``: also decode every frame once
    (:func:`~datakit.readers.video.decoding.frame_check.check_every_frame`), so that a file damaged
    between its first frames and its last group is a :class:`DataError` now, naming the
    frame, not in a later epoch. Its result is cached with the other facts: paid once
    per unchanged file, a failure included.
    """
    from datakit.readers.video.decoding import probe_cache

    path = str(path)
    _check_link(path)
    try:
        stamp = file_stamp(path)
    except OSError as e:
        raise DataError(path, f"cannot be read ({e.strerror}); remove it or pass "
                        "on_bad_file='skip'") from None
    facts = probe_cache.load(path, stamp) if cache else None
    fresh = facts is None  # facts to keep
    if facts is None:
        facts = _probe_file(path)
        facts["digest"] = content_digest(path)
    if verify_frames and facts.get("verified") is None:  # (an entry of a probe only: not yet)
        facts["verified"] = check_every_frame(path, _unpacked(facts["pts"]),
                                              reordered=facts["reordered"])
        fresh = True
    if fresh and cache and file_stamp(path) == stamp:  # not changed while probed
        probe_cache.store(path, stamp, facts)
    verified: dict = facts.get("verified") or {}
    if verify_frames and verified["failed_at"] is not None:
        raise DataError(path, f"{verify_reason(verified)} (every frame decoded: "
                        "verify_frames=True); remove or re-encode it, or pass "
                        "on_bad_file='skip'")
    return VideoInfo(path=path, pts=_unpacked(facts["pts"]), time_base=facts["time_base"],
                     height=facts["height"], width=facts["width"], rotation=facts["rotation"],
                     codec=facts["codec"], rate=facts["rate"], keys=tuple(facts["keys"]),
                     reordered=facts["reordered"], stamp=stamp,
                     digest=facts.get("digest"), sar=tuple(facts["sar"]),
                     verified=bool(verified) and verified["failed_at"] is None)


def _probe_file(path: str) -> dict:
    """:func:`probe`'s facts, read from the file (plain values, as the cache stores them)."""
    import av

    with _open(path) as container:
        stream = video_stream(container)
        if stream is None:
            raise DataError(path, "has no video stream (an audio-only file, or a cover picture "
                            "only?); remove it or pass on_bad_file='skip'")
        listed = stream.frames  # the index's count (MP4, MOV), 0 where the header has none
        try:
            demuxed = [(p.pts, p.dts, p.is_keyframe, p.size, p.is_discard)
                       for p in container.demux(stream)]
            # (packets an edit list marks discard, a trim's lead-in: FFmpeg shows none of them)
            packets = [(pts, dts, key) for pts, dts, key, size, discard in demuxed
                       if pts is not None and size and not discard]
            pts, joined = frame_order([(p, d) for p, d, _ in packets])
            container.seek(0)
            first, head = None, []  # the first frame, and the first frames' timestamps
            for frame in islice(container.decode(stream), _HEAD):
                first = frame if first is None else first
                head.append(frame.pts)
            held = _slots(container, demuxed)
            if listed and held < listed:
                raise DataError(path, f"is truncated: its index lists {listed} frames, the file "
                                f"holds {held}; remove it or pass on_bad_file='skip'")
            reordered = joined or _out_of_order(head) or (
                first is not None and len(pts) > 1 and _decode_tail(container, stream, packets))
        except av.error.FFmpegError as e:
            raise DataError(path, f"cannot be read ({e}): a damaged or truncated file; remove "
                            "it or pass on_bad_file='skip'") from None
        if first is None or not pts:
            raise DataError(path, "holds no decodable frame (empty or truncated); remove it "
                            "or pass on_bad_file='skip'")
        rotation = int(round(first.rotation or 0)) % 360
        sar = sample_aspect_ratio(stream)  # (after a decoded frame: the codec's is known)
        h, w = first.height, display_width(first.width, sar)  # as shown: pixels made square,
        if rotation in (90, 270):  # then turned
            h, w = w, h
        rate = stream.average_rate or stream.guessed_rate
        index = {p: k for k, p in enumerate(pts)}  # (a joined file is read from its start)
        keys = [] if joined else sorted({index[p] for p, _, key in packets if key})
        return dict(pts=_packed(pts), time_base=float(stream.time_base), height=h, width=w,
                    rotation=rotation, codec=stream.codec_context.name,
                    rate=float(rate) if rate else 0.0, keys=keys or [0],
                    reordered=bool(reordered), sar=list(sar))


def _slots(container: Any, demuxed: list[tuple]) -> int:
    """The frame slots the file holds, as its index counts them: every packet, an empty one
    (a dropped frame) included. The AVI demuxer never hands out the index's empty entries,
    but an AVI's decode times count slots (one tick a slot), so a slot skipped there is a
    dropped frame that FFmpeg decodes past, not a missing one."""
    slots = sum(1 for pts, dts, *_ in demuxed if pts is not None or dts is not None)
    if "avi" in container.format.name.split(","):
        dts = [d for _, d, *_ in demuxed if d is not None]
        if dts:
            slots = max(slots, max(dts) - min(0, min(dts)) + 1)
    return slots


def _packed(pts: list) -> list | dict:
    """Timestamps as the cache keeps them: evenly spaced ones (most files) as three numbers."""
    steps = set(np.diff(pts).tolist()) if len(pts) > 1 else {0}
    return dict(start=pts[0], step=steps.pop(), n=len(pts)) if len(steps) == 1 else pts


def _unpacked(pts: list | dict) -> tuple:
    if isinstance(pts, dict):
        return tuple(range(pts["start"], pts["start"] + pts["step"] * pts["n"], pts["step"])) \
            if pts["step"] else (pts["start"],)
    return tuple(pts)


#: Frames the probe decodes from the start: enough to see B-frames reordered.
_HEAD = 24


def _out_of_order(pts: Iterable[int | None]) -> bool:
    """True when decoded frames come back with timestamps ``pts`` out of order: the file's
    timestamps are in decode order (AVI with B-frames), not in the order shown."""
    shown = [p for p in pts if p is not None]
    return any(b < a for a, b in zip(shown, shown[1:], strict=False))


def _decode_tail(container: Any, stream: Any, packets: list[tuple]) -> bool:
    """Decode from the last keyframe to the end: a file cut short fails here, not in epoch 9.

    True when the frames come back out of timestamp order (:func:`_out_of_order`).
    """
    keys = [p for p, _, key in packets if key]
    if keys:
        container.seek(keys[-1], stream=stream, backward=True, any_frame=False)
    return _out_of_order([frame.pts for frame in container.decode(stream)])


def output_frames(info: VideoInfo, fps: float | None = None) -> np.ndarray:
    """For each frame at ``fps`` (``None``: the file's own frames), the file frame shown then.

    Output frame ``j`` is at time ``j / fps``; it shows the last file frame
    whose timestamp is at or before that time. The video ends one average
    frame after its last timestamp.

    >>> info = VideoInfo("v.mp4", tuple(range(0, 1001 * 30, 1001)), 1 / 30000, 2, 2, 0, "h264")
    >>> round(float(info.fps), 3), output_frames(info, 10).tolist()  # 29.97 fps to 10
    (29.97, [0, 2, 5, 8, 11, 14, 17, 20, 23, 26])
    """
    if fps is None:
        return np.arange(info.frames)
    times = info.times
    end = times[-1] + (1 / info.fps if info.fps else 1 / fps)
    n = int(np.floor(end * fps + 1e-6))
    wanted = np.arange(n) / fps
    return np.searchsorted(times, wanted + 1e-6, side="right") - 1


def fit_frame(rgb: np.ndarray, frame_size: tuple[int, int] | None = None, *,
              crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False) -> np.ndarray:
    """Resize an ``(H, W, 3)`` frame to ``frame_size=(height, width)``, as Keras' image loader.

    Stretched by default; ``crop_to_aspect_ratio`` cuts the centre to the
    target's aspect ratio first, ``pad_to_aspect_ratio`` adds black bars.
    """
    if frame_size is None:
        return rgb
    import av

    th, tw = frame_size
    h, w = rgb.shape[:2]
    if crop_to_aspect_ratio:
        ch, cw = min(h, round(w * th / tw)), min(w, round(h * tw / th))
        y, x = (h - ch) // 2, (w - cw) // 2
        rgb = rgb[y:y + ch, x:x + cw]
    inner = (th, tw)
    if pad_to_aspect_ratio:
        scale = min(th / h, tw / w)
        inner = (max(1, round(h * scale)), max(1, round(w * scale)))
    if rgb.shape[:2] != inner:
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        rgb = frame.reformat(width=inner[1], height=inner[0], interpolation="BILINEAR") \
            .to_ndarray(format="rgb24")
    if inner != (th, tw):
        out = np.zeros((th, tw, 3), np.uint8)
        y, x = (th - inner[0]) // 2, (tw - inner[1]) // 2
        out[y:y + inner[0], x:x + inner[1]] = rgb
        rgb = out
    return rgb


def decode_frames(info: VideoInfo, wanted: Sequence[int] | np.ndarray, *, seek: bool = True,
                  threads: int = 0, **fit: Any) -> np.ndarray:
    """The file frames ``wanted`` (indices, any order, repeats allowed) as ``(n, H, W, 3)`` uint8.

    With ``seek`` it jumps to the keyframe before a frame wanted whenever that
    decodes fewer frames than running on; without, it decodes from the first
    frame. ``threads``: FFmpeg's decoding threads (0: FFmpeg's choice; 1 when
    as many videos decode at once as there are cores). ``fit``: keywords of
    :func:`fit_frame` (applied in one conversion from the decoder's pixels). A
    frame that cannot be decoded, or a file changed since it was probed, is a
    :class:`DataError`.
    """
    from datakit.readers.video.decoding.frame_reading import read_frames

    return read_frames(info, wanted, seek=seek, threads=threads, **fit)


def iter_jpegs(info: VideoInfo, fps: float | None = None, quality: int = 90,
               **fit: Any) -> Iterator[bytes]:
    """The video at ``fps``, one JPEG per output frame as it is encoded, decoded front to back.

    Nothing is kept: the converter writes each JPEG on (into its part's
    current record), so a worker's memory holds one record's JPEGs, not a
    video's (a long video at full size would be gigabytes). Each kept frame is
    converted once and encoded by libjpeg-turbo through ``simplejpeg`` (YCbCr
    4:2:0, as Pillow writes at this quality): see :func:`_jpeg_encoder`; frames
    the timeline skips are never converted. In a file whose
    timestamps are in decode order (an AVI with B-frames), the k-th frame out
    of the decoder is frame k, as the direct reader counts them.
    """
    import av

    from datakit.readers.video.decoding.frame_reading import (
        CHANGED_WHILE_CONVERTING,
        check_unchanged,
    )

    encode = _jpeg_encoder(info, quality, **fit)
    timeline = output_frames(info, fps).tolist()  # (ints: compared once a frame)
    j = 0
    with _open(info.path, _WHILE_CONVERTING) as container:
        stream = video_stream(container)
        stream.codec_context.thread_count = 1  # one video per core: threads would only wait
        try:
            for n, frame in enumerate(container.decode(stream)):
                k = n if info.reordered else frame_at(info, frame.pts)
                if k is None or j >= len(timeline) or timeline[j] != k:
                    continue
                jpeg = encode(frame)
                while j < len(timeline) and timeline[j] == k:  # a frame shown twice at fps
                    yield jpeg
                    j += 1
        except av.error.FFmpegError as e:
            check_unchanged(info, CHANGED_WHILE_CONVERTING)  # replaced while converted: said so
            raise DataError(info.path, f"decoding failed ({e}): a damaged or truncated file; "
                            f"{_WHILE_CONVERTING}") from None
    if j < len(timeline):
        check_unchanged(info, CHANGED_WHILE_CONVERTING)
        raise DataError(info.path, f"only {j} of {len(timeline)} frames decoded (a truncated "
                        f"file?); {_WHILE_CONVERTING}")


#: Colour spaces whose YCbCr matrix is JPEG's own (BT.601): unspecified, BT470BG, SMPTE170M.
_JPEG_MATRIX = frozenset({2, 5, 6})


def _jpeg_encoder(info: VideoInfo, quality: int, frame_size: tuple[int, int] | None = None,
                  **fit: Any) -> Callable[[av.VideoFrame], bytes]:
    """A function from a decoded frame to its JPEG at ``frame_size``, fitted as
    :func:`fit_frame` fits it.

    A JPEG stores YCbCr 4:2:0, the decoder's own layout, so a frame simply
    stretched to an even size in BT.601 (nearly every file) is scaled in YUV,
    only its range set to JPEG's, and encoded from its planes
    (``simplejpeg.encode_jpeg_yuv_planes``): no conversion to RGB and back.
    At 320x240 to 112x112, scaling and JPEG took 37 + 53 us a frame against
    83 + 60 us through RGB. A frame of non-square pixels with ``frame_size=None`` is
    scaled this way too, to its display size (``info.height`` x ``info.width``). Other frames
    (rotated, cropped, padded, odd sizes, other colour matrices) go through RGB
    (:func:`~datakit.readers.video.decoding.frame_reading.frame_converter`).
    """
    import simplejpeg

    from datakit.readers.video.decoding.frame_reading import frame_converter, yuv420_planes

    convert = frame_converter(info, frame_size, **fit)

    def via_rgb(frame: av.VideoFrame) -> bytes:
        return simplejpeg.encode_jpeg(convert(frame), quality=quality, colorsubsampling="420")

    th, tw = frame_size or (info.height, info.width)
    if info.rotation or any(fit.values()) or th % 2 or tw % 2:
        return via_rgb

    def via_yuv(frame: av.VideoFrame) -> bytes:
        if frame.colorspace not in _JPEG_MATRIX:
            return via_rgb(frame)
        return simplejpeg.encode_jpeg_yuv_planes(*yuv420_planes(frame, tw, th), quality=quality)

    return via_yuv
