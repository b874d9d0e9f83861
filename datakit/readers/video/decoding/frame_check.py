"""``verify_frames=True``: every frame of a video decoded once, when its folder is listed.

The probe (:func:`~datakit.readers.video.decoding.decoding.probe`) decodes a file's first
frames and its last group of frames, not the frames between: a file damaged in
its middle (bytes overwritten, a copy that failed part-way) passes it and fails
only when a clip is drawn there, in whatever epoch that is. The reader cannot
drop the file then: ``fit(steps_per_epoch=len(ds))`` was promised every clip.
:func:`check_every_frame` decodes every frame of the file once (none converted
to RGB) and says where decoding fails, or which frame never comes out of the
decoder; the listing then names such a file (``on_bad_file="raise"``) or leaves
it out and counts it (``"skip"``).

It costs about one decode of the whole folder (every frame of every file once, one
file per core: for long videos many epochs' worth of clips), paid once per file: the
result is kept in the probe cache (:mod:`datakit.readers.video.decoding.probe_cache`) with the
probe's
facts, so listing the unchanged folder again decodes nothing.

>>> import tempfile, numpy as np
>>> from pathlib import Path
>>> from datakit.readers.video.synthetic.encoded import write_video
>>> path = write_video(np.zeros((30, 16, 16, 3), np.uint8), Path(tempfile.mkdtemp()) / "v.mp4")
>>> check_every_frame(str(path), tuple(range(0, 30 * 512, 512)), reordered=False)
{'frames': 30, 'failed_at': None, 'error': None}
"""

from __future__ import annotations

from collections.abc import Sequence

from datakit.readers.video.decoding.video_info import open_video, video_stream

__all__: list[str] = []


def check_every_frame(path: str, pts: Sequence[int], *, reordered: bool) -> dict:
    """Decode every frame of ``path`` (its frames' timestamps ``pts``, as the probe found
    them, in the order shown): ``{"frames": n, "failed_at": None, "error": None}`` when
    each of the ``n`` frames comes out of the decoder, else the first frame that does
    not (``failed_at``, an index into ``pts``: the frames before it decode, as many as
    FFmpeg gives before it stops) and why (``error``: FFmpeg's words, or that the
    decoder gave no such frame). ``reordered``: the frames are counted as
    decoded (timestamps in decode order, or recordings joined end to end), not found by
    their timestamps."""
    import av

    index = {p: k for k, p in enumerate(pts)}
    n, seen = len(pts), set[int]()
    error = None
    with open_video(path) as container:
        stream = video_stream(container)
        stream.codec_context.thread_count = 1  # the listing probes one file per core
        try:
            for frame in container.decode(stream):
                k = len(seen) if reordered else index.get(frame.pts)
                if k is not None:
                    seen.add(k)
        except av.error.FFmpegError as e:
            error = f"{type(e).__name__}: {e}"
    missing = next((k for k in range(n) if k not in seen), None)
    if missing is None:
        return {"frames": n, "failed_at": None, "error": None}
    return {"frames": n, "failed_at": missing, "error": error or (
        f"the decoder gave {len(seen)} of the {n} frames, not this one")}


def verify_reason(check: dict) -> str:
    """What a failed :func:`check_every_frame` says, as a listing's reason for the file.

    >>> verify_reason({"frames": 120, "failed_at": 62, "error": "Invalid data"})
    'frame 62 of 120 cannot be decoded (Invalid data): the file is damaged there'
    """
    return (f"frame {check['failed_at']} of {check['frames']} cannot be decoded "
            f"({check['error']}): the file is damaged there")
