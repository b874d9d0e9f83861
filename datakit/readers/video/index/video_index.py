"""The video index: the videos a reader reads, listed once, and the one short-video rule.

Both readers of clips start here. The direct reader
(:func:`~datakit.readers.video.reading.directory.video_dataset_from_directory`) indexes a
class folder (:func:`index_folder`: listed, probed, each video's frames at the
asked rate); :func:`~datakit.readers.video.reading.clips.clip_dataset` indexes a converted
set from its manifest (:func:`index_manifest`). Either way, the videos shorter
than one clip are refused (``on_bad_file="raise"``) or left out (``"skip"``) here,
with the one message of :func:`short_reason`, before any frame is decoded, so an
epoch's length is known when the dataset is built:

>>> short_reason(4, 8, fps=None)
'4 frames, fewer than the 8 one clip spans'
>>> index = VideoIndex(None, ["a.mp4", "b.mp4"], [0, 0], [12, 4], fps=None)
>>> index.keep(span=8, on_bad_file="skip").kept, index.skipped  # doctest: +NORMALIZE_WHITESPACE
([0], [('b.mp4',
        '4 frames, fewer than the 8 one clip spans; pass a smaller clip_len or frame_step')])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from datakit.core.arguments import check_on_bad
from datakit.core.errors import DataError
from datakit.readers.video.decoding.decoding import output_frames
from datakit.readers.video.index.folders import list_videos
from datakit.readers.video.options.clip_options import VideoOptions
from datakit.readers.video.options.clip_sampling import clip_span
from datakit.readers.video.options.keras_arguments import Labels

__all__: list[str] = []

#: What to change when a video is shorter than one clip.
SHORT_FIX = "pass a smaller clip_len or frame_step"


def short_reason(frames: int, span: int, fps: float | None) -> str:
    """The one short-video message: ``frames`` (at ``fps``, if asked) against a clip's ``span``."""
    return (f"{frames} frames" + (f" at fps={fps}" if fps else "")
            + f", fewer than the {span} one clip spans")


@dataclass
class VideoIndex:
    """The listed videos: ``paths``, ``labels``, ``lengths`` (frames at ``fps``), ``ids``.

    ``kept``: the places (in these lists) of the videos long enough for a clip
    (after :meth:`keep`); ``skipped``:
    ``(path, reason)`` of the files left out; ``infos`` and ``timelines``: each
    video's probe and the timestamps of its frames at ``fps`` (a folder's only).
    """

    class_names: list[str] | None
    paths: list[str]
    labels: list[int]
    lengths: list[int]
    fps: float | None
    directory: Path | None = None
    ids: list[int] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    infos: list = field(default_factory=list)
    timelines: list = field(default_factory=list)

    def keep(self, span: int, on_bad_file: str) -> VideoIndex:
        """Keep the videos of at least ``span`` frames: the others raise a :class:`DataError`
        naming the first (``"raise"``), or are added to ``skipped`` (``"skip"``). A class
        left with no video, or a set with none, is an error naming it."""
        check_on_bad("on_bad_file", on_bad_file)
        self.ids = self.ids or list(range(len(self.paths)))
        short = [i for i, n in enumerate(self.lengths) if n < span]
        if short and on_bad_file == "raise":
            more = f" (and {len(short) - 1} more)" if len(short) > 1 else ""
            raise DataError(self.paths[short[0]], short_reason(self.lengths[short[0]], span,
                                                               self.fps)
                            + f"{more}; {SHORT_FIX}, or on_bad_file='skip' to leave such "
                            "videos out (listed in .skipped)")
        self.skipped += [(self.paths[i], f"{short_reason(self.lengths[i], span, self.fps)}; "
                          f"{SHORT_FIX}") for i in short]
        self.kept = [i for i, n in enumerate(self.lengths) if n >= span]
        if self.paths and not self.kept:  # (raised before any line is printed: say it all)
            raise DataError(str(self.directory or self.paths[0]), "no video is long enough for "
                            f"one clip of {span} frames ({_too_short(self.lengths, self.fps)}); "
                            f"{SHORT_FIX}")
        self._check_classes_kept(span)
        return self

    def _check_classes_kept(self, span: int) -> None:
        if self.class_names is None:
            return
        left = {self.labels[i] for i in self.kept}
        emptied = [c for c in sorted(set(self.labels)) if c not in left]
        if emptied:
            name = self.class_names[emptied[0]]
            where = Path(self.directory) / name if self.directory else name
            lengths = [n for n, c in zip(self.lengths, self.labels, strict=True)
                       if c == emptied[0]]
            raise DataError(str(where), f"class {name!r} has no video long enough for one "
                            f"clip of {span} frames ({_too_short(lengths, self.fps)}); "
                            f"{SHORT_FIX}, or class_names without it")


def _too_short(lengths: list[int], fps: float | None) -> str:
    """``"3 too short, the longest 9 frames"`` (at ``fps``): what a short-video error says
    instead of pointing at a listing the failed call never returned or printed."""
    at = f" at fps={fps}" if fps else ""
    return f"{len(lengths)} too short, the longest {max(lengths)} frames{at}"


def index_folder(directory: str | os.PathLike, options: VideoOptions, *,
                 class_names: Sequence[str] | None, labels: Labels, follow_links: bool,
                 on_bad_file: str, progress: bool | None = None,
                 verify_frames: bool = False) -> VideoIndex:
    """The class folder ``directory`` listed and probed (bad files raise or are skipped;
    a bar over the probes, by ``progress``; every frame decoded with ``verify_frames``),
    each video's frames at ``options.fps``, and the short ones refused or skipped."""
    folder = list_videos(directory, class_names=class_names, on_bad_file=on_bad_file,
                         labels=labels, follow_links=follow_links, progress=progress,
                         verify_frames=verify_frames)
    options.check_videos(folder.infos)
    timelines = [output_frames(info, options.fps) for info in folder.infos]
    index = VideoIndex(folder.class_names, [info.path for info in folder.infos],
                       list(folder.labels), [len(t) for t in timelines], options.fps,
                       Path(directory), skipped=list(folder.skipped), infos=folder.infos,
                       timelines=timelines)
    return index.keep(clip_span(options.clip_len, options.frame_step), on_bad_file)


def index_manifest(directory: str | os.PathLike, meta: dict, options: VideoOptions,
                   on_bad_file: str) -> VideoIndex:
    """The videos of a converted set's manifest ``meta`` (by id), the short ones refused or
    skipped with :meth:`VideoIndex.keep`'s message."""
    videos = sorted(meta["videos"], key=lambda v: int(v["id"]))
    index = VideoIndex(list(meta["class_names"]),
                       [str(v.get("source", f"video id {v['id']} of {directory}"))
                        for v in videos], [int(v["label"]) for v in videos],
                       [int(v["frames"]) for v in videos], meta.get("fps"), Path(directory),
                       ids=[int(v["id"]) for v in videos])
    return index.keep(clip_span(options.clip_len, options.frame_step), on_bad_file)
