"""``write_video_shards``: a class-folder set of videos converted to ``SequenceExample`` shards.

Each video becomes ``SequenceExample`` s of 64 frames each (context: ``id``,
``label``, ``length``, ``first``, ``source``; one JPEG per frame, at the chosen
``frame_size`` and ``fps``), the form
:func:`datakit.readers.video.reading.clips.clip_dataset` reads, reading only the
records each clip spans (the manifest says where each starts) and decoding only
the clip's frames. The conversion (the converter core,
:func:`~datakit.readers.video.converter.conversion.convert_videos`, with this module's
worker processes as its middle step):

- streams each video, so memory holds one record's JPEGs (64 frames), never a
  video's, nor its decoded frames (worker processes decode, encode and write
  each video's part, one video each, on every core, the longest videos first so
  that no core is left alone with a long one at the end;
  :mod:`~datakit.readers.video.converter.part_files`);
- does nothing but say so when ``out`` holds this conversion already, complete (the same
  videos, each unchanged, the same options and split; ``overwrite=True`` converts anew);
- is resumable by content: each finished video is kept as its own small file
  in ``out/.parts/``, named by a digest of what made it (source path, size and
  modification time, options); a rerun reuses only the parts whose source and
  options are unchanged and that read back whole (a power cut may cut one short:
  parts are not synced to disk, the committed shards are), with this run's id and
  label, converts the rest and drops the parts of removed or edited videos; the
  manifest lists each video with that record (and its label and class name);
- runs its workers as processes that never import the caller's script (see
  :mod:`datakit.readers.video.converter.workers`), so it works from a script without an
  ``if __name__ == "__main__":`` guard, from ``python -c`` and from a notebook;
- under ``on_bad_file="skip"`` leaves a video that fails to decode out of the
  set, printed and listed in the result's and the manifest's ``skipped``;
- assembles each set's shards while the workers convert (a part joins its
  shard as soon as those before it have: :mod:`~datakit.readers.video.converter.shard_sets`)
  and commits the sets (``out/train/``, ``out/validation/``) with the kit's set
  commit (:mod:`datakit.core.manifest`), so a reader sees the complete set or
  none. The manifest stores the class names and, per video, its source
  path, frame count, fps and size.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from datakit.core.arguments import check_count, check_flags
from datakit.core.cores import cpu_cores
from datakit.core.errors import DataError
from datakit.core.progress import check_progress, progress_bar
from datakit.readers.video.converter.conversion import Conversion, convert_videos
from datakit.readers.video.converter.part_files import PartJob, convert_part
from datakit.readers.video.converter.shard_sets import ShardSets
from datakit.readers.video.converter.workers import convert_all
from datakit.readers.video.decoding.decoding import output_frames
from datakit.readers.video.decoding.video_info import VideoInfo
from datakit.readers.video.options.clip_options import FRAME_FIELDS, VideoOptions, video_options

__all__ = ["write_video_shards"]


def write_video_shards(directory: str | os.PathLike, out: str | os.PathLike, *,
                       validation_split: float | None = None, seed: int | None = None,
                       class_names: Sequence[str] | None = None, quality: int = 90,
                       num_shards: int = 4, processes: int | None = None,
                       on_bad_file: str = "raise", follow_links: bool = False,
                       overwrite: bool = False,
                       progress: bool | None = None, options: VideoOptions | None = None,
                       **frame_options: Any) -> dict:
    """Convert ``directory/<class>/<videos>`` into shards in ``out/train`` (and ``out/validation``).

    Args:
        directory: one subfolder per class, as for
            :func:`~datakit.readers.video.reading.directory.video_dataset_from_directory`.
        out: where ``train/`` and ``validation/`` go.
        class_names: as for the direct reader.
        validation_split, seed: the split by video, the same as the direct
            reader's for the same ``seed`` (an int >= 0, which a split needs, as
            in Keras); ``validation_split=None``: everything in ``train/``, and
            no seed is needed.
        quality: JPEG quality, 1..100; num_shards: TFRecord files per set.
        processes: worker processes (default: the cores; 1: in this process).
        on_bad_file: ``"raise"`` or ``"skip"``: a file that fails at the probe or
            while converting is left out, printed with its reason and listed
            in the result's and the manifest's ``skipped``.
        follow_links: follow symbolic links to folders, as the direct reader does (the
            same listing: :func:`~datakit.readers.video.index.folders.list_videos`).
        overwrite: convert every video again. By default a rerun that finds ``out``
            holding this conversion complete (the same videos, unchanged, the same options
            and split) says so and returns it; an unfinished one resumes (see above).
        progress: a bar over the videos probed, then one over the videos converted
            (:mod:`datakit.core.progress`): ``None`` (default) shows them in a notebook
            or a terminal once a step lasts a second, ``True`` always, ``False`` never.
        options: a :class:`~datakit.readers.video.options.clip_options.VideoOptions`, or
        **frame_options: its frame fields as keywords (``frame_size``, ``fps``,
            ``crop_to_aspect_ratio``, ``pad_to_aspect_ratio``; ``frame_size=None``
            needs one size for all); its clip settings are the reader's business.
            A field given both ways is a ``TypeError``.

    Returns:
        ``{"train": folder, "validation": folder or None, "class_names",
        "converted": n, "reused": n, "skipped": [(path, reason), ...]}``.
    """
    opts = video_options(options, frame_options, where="write_video_shards", takes=FRAME_FIELDS)
    check_count("processes", processes, none=True)
    check_progress(progress)
    check_flags(follow_links=follow_links, overwrite=overwrite)

    def convert(job: Conversion, sets: ShardSets) -> dict[int, str]:
        work = partial(convert_part, fps=job.options.fps, quality=job.quality,
                       **job.options.fit)
        return _convert(work, job, min(processes or cpu_cores(), max(1, len(job.todo))),
                        progress, sets)

    return convert_videos(directory, out, opts, quality=quality, num_shards=num_shards,
                          seed=seed, validation_split=validation_split, class_names=class_names,
                          on_bad_file=on_bad_file, convert=convert, progress=progress,
                          follow_links=follow_links, overwrite=overwrite)


def _convert(work: Callable[[PartJob], int], job: Conversion, processes: int, progress: bool | None,
             sets: ShardSets) -> dict[int, str]:
    """Convert the ``todo`` videos into their parts, each joining its shard in ``sets`` when
    written; the reason of each that failed (skipped)."""
    folder, todo, parts, names, on_bad_file = (job.folder, job.todo, job.parts, job.names,
                                               job.on_bad_file)
    n = len(folder.infos)
    failed: dict[int, str] = {}
    bar = progress_bar(n, "videos", progress=progress, unit="video", initial=n - len(todo))
    jobs = {i: PartJob(folder.infos[i], str(parts / names[i]), i, folder.labels[i])
            for i in todo}
    if processes > 1:  # the longest first: the last video to finish is a short one
        todo = sorted(todo, key=lambda i: -_expected_cpu(folder.infos[i], job.options))
    try:
        for i, done in convert_all(work, jobs, todo, processes):
            if isinstance(done, DataError):
                if on_bad_file == "raise":
                    raise done
                print(f"skipped {done.path}: {done.reason}")
                failed[i] = done.reason
                sets.failed(i)
                continue
            sets.ready(i)
            bar.update()
    except KeyboardInterrupt as e:  # the useful line last, as the interrupt's message
        bar.close()
        done = len(list(parts.glob("*.tfrecord")))
        how = f" ({e})" if str(e) else ""
        raise KeyboardInterrupt(f"write_video_shards interrupted{how}: {done} of {n} videos "
                                f"converted are kept in {parts}; run it again to "
                                "resume") from None
    bar.close()
    return failed


def _expected_cpu(info: VideoInfo, options: VideoOptions) -> float:
    """A video's conversion, in rough CPU seconds (measured on H.264 at 320x240 to 112x112):
    decoding about 85 ns a byte of the file and 0.5 ns a pixel of each frame, scaling and
    JPEG about 8 ns an output pixel. Only the order matters: the workers take the videos
    longest first, so no worker is left alone with a long video at the end."""
    h, w = options.frame_size or (info.height, info.width)
    out = len(output_frames(info, options.fps))
    size = info.stamp[0] if info.stamp else 0
    return 85e-9 * size + 0.5e-9 * info.frames * info.height * info.width + 8e-9 * out * h * w
