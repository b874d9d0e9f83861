"""A class folder of videos as people's folders are: the good files and the ones that break readers.

:func:`make_messy_video_folder` writes
:func:`~datakit.readers.video.synthetic.encoded.make_video_folder`'s
mixed set (five codecs, 29.97 fps and variable rates, sound, a wider frame, a rotated
file), then adds what a real folder also holds:

- a sub-folder inside a class folder (``up/phone/``) with a phone video: portrait,
  stored sideways with a display rotation, at a variable frame rate;
- a second sub-folder (``down/trip/``) with two of the class's videos moved into it;
- hidden files a reader must leave out: ``.hidden.mp4`` and macOS' ``._down_000.avi``
  (a resource file, not a video), and ``notes.txt``;
- a corrupt file (``right/right_corrupt.mp4``: random bytes);
- a truncated file (``left/left_cut.mp4``: an MP4 whose index is at its start, cut
  after 10 of its 60 packets: the header lists more frames than the file holds);
- a file too short for a clip (``left/left_short.mp4``: 6 frames).

:data:`BAD_FILES` says what each bad file is. The folder is small (32 x 32 frames) and
the same for a seed.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from datakit.core.arguments import check_count, check_int
from datakit.core.made_once import make_folder_once
from datakit.readers.video.synthetic.encoded import write_mixed_videos, write_video
from datakit.readers.video.synthetic.moving_squares import CLASSES, Video, make_video

__all__ = ["make_messy_video_folder"]

#: The files a reader must skip (relative path -> why), and the one too short for a clip.
BAD_FILES = {"left/left_cut.mp4": "truncated", "right/right_corrupt.mp4": "unreadable"}
SHORT_FILES = {"left/left_short.mp4": 6}
#: Files that are not videos of the set: hidden, macOS resource files, other endings.
NOT_VIDEOS = ("up/.hidden.mp4", "down/._down_000.avi", "down/notes.txt")


def make_messy_video_folder(directory: str | os.PathLike, per_class: int = 8, *, size: int = 32,
                            seed: int = 0) -> list[Path]:
    """Write the messy class folder into ``directory`` (made once, see
    :func:`~datakit.readers.video.synthetic.encoded.make_video_folder`); returns every file written,
    sorted, the bad and the hidden ones too.

    ``per_class`` >= 2 (two videos move to ``down/trip/``); ``size`` a multiple of 4 from 16
    on (HEVC's encoder takes no smaller frame; the phone video is 1.5 x ``size`` tall, and
    every side must be even); ``seed`` >= 0.

    >>> make_messy_video_folder("unused", size=42)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    ValueError: size=42 is invalid: pass a multiple of 4 from 16 on (16, 20, ..., 32, ...):
    the phone video is 1.5 x size pixels tall, video sides must be even, and HEVC's encoder
    takes no frame under 16 pixels.
    """
    check_count("per_class", per_class, 2,
                fix="pass 2 or more (two of each class's videos move into down/trip/)")
    check_count("seed", seed, 0, fix="pass an int >= 0 (NumPy's seeds are not negative)")
    check_int("size", size)
    if size < 16 or size % 4:
        raise ValueError(f"size={size} is invalid: pass a multiple of 4 from 16 on (16, 20, "
                         "..., 32, ...): the phone video is 1.5 x size pixels tall, video "
                         "sides must be even, and HEVC's encoder takes no frame under 16 "
                         "pixels.")
    recipe: dict[str, int] = dict(per_class=per_class, size=size, seed=seed)
    return make_folder_once(directory, lambda tmp: _write(tmp, **recipe),
                            recipe={"maker": "make_messy_video_folder", **recipe})


def _labelled(label: str, size: int, seed: int, start: int, **kwargs: int) -> Video:
    """The first moving-squares video of class ``label`` from index ``start`` on."""
    i = start
    while CLASSES[(v := make_video(i, size=size, seed=seed, **kwargs)).label] != label:
        i += 1
    return v


def _write(directory: Path, *, per_class: int, size: int, seed: int) -> list[Path]:
    write_mixed_videos(directory, per_class=per_class, size=size, min_frames=30,
                       max_frames=60, seed=seed)
    rng = np.random.default_rng(seed)
    trip = directory / "down" / "trip"
    trip.mkdir()
    for path in sorted((directory / "down").glob("down_*.*"))[-2:]:
        path.rename(trip / path.name)
    # a phone video: portrait (size wide, 1.5 x size tall), stored sideways, variable rate
    tall = _labelled("up", size * 3 // 2, seed, 1000).frames[:, :, size // 4:size // 4 + size]
    times = np.cumsum([0] + [0.03 if t % 2 else 0.05 for t in range(len(tall) - 1)])
    write_video(np.rot90(tall, k=-1, axes=(1, 2)).copy(), directory / "up" / "phone" /
                "up_phone.mp4", frame_times=times, rotation=90)
    short = _labelled("left", size, seed, 2000, min_frames=6, max_frames=6)
    write_video(short.frames, directory / "left" / "left_short.mp4")
    cut = _labelled("left", size, seed, 3000, min_frames=60, max_frames=60)
    whole = write_video(cut.frames, directory / "left_whole.mp4", faststart=True)
    (directory / "left" / "left_cut.mp4").write_bytes(whole.read_bytes()[:_cut_at(whole)])
    whole.unlink()
    (directory / "right" / "right_corrupt.mp4").write_bytes(
        rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    hidden = sorted((directory / "up").glob("up_*.mp4"))[0]
    (directory / "up" / ".hidden.mp4").write_bytes(hidden.read_bytes())
    (directory / "down" / "._down_000.avi").write_bytes(b"\x00\x05\x16\x07" + bytes(4092))
    (directory / "down" / "notes.txt").write_text("filmed in May\n")
    return sorted(p for p in directory.rglob("*") if p.is_file())


#: The whole packets a cut file keeps (of its 60): the cut falls between two packets, so
#: the count does not depend on the encoder's exact bytes, which vary from run to run.
CUT_KEEPS = 10


def _cut_at(path: Path) -> int:
    """The byte where packet ``CUT_KEEPS + 1`` of ``path``'s video starts."""
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        starts = sorted(p.pos for p in container.demux(stream) if p.size and p.pos is not None)
    return starts[CUT_KEEPS]
