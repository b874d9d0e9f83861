"""The contenders of ``benchmarks/video_peers.py``: one function per way of reading the clips.

Every contender does the same work: per epoch, 2 random clips of 16 frames
(step 2) from each video, resized to 112x112 RGB, in batches of 8. Each
builder takes ``(folder, work)`` (``work``: the ``Work`` settings) and returns a
function ``stream(epochs)`` that yields the batches of epochs 1..``epochs`` one
after the other, each batch's first item the clips, shaped
``(batch, clip_len, 112, 112, 3)``. Each contender runs as a training loop
should run it, over one iterator for the whole run: the TensorFlow paths as
``fit(ds.repeat(), steps_per_epoch=...)`` consumes them (a new iterator per
epoch can stall at the epoch's end in TensorFlow 2.21: see NOTES.md), the
DataLoaders with ``persistent_workers=True`` and the epoch set on their
sampler. A peer that does not import here raises ``Skip`` with the reason,
which the report prints.

The peers' clip starts are drawn the same way (uniform over the starts that fit,
seeded by the epoch, the video and the clip), each peer learning a video's
frame count from its own decoder, as its users would.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FFMPEG_LIBS = ("libavcodec59 libavformat59 libavutil57 libswscale6 libswresample4 "
               "libavdevice59 libavfilter8")


class Skip(Exception):
    """This contender cannot run here; the message says why and how to fix it."""


@dataclass(frozen=True)
class Work:
    clip_len: int = 16
    step: int = 2
    clips_per_video: int = 2
    size: int = 112
    batch: int = 8
    seed: int = 42

    @property
    def span(self) -> int:
        return (self.clip_len - 1) * self.step + 1


def videos(folder: Path) -> list[tuple[str, int]]:
    """``(path, label)`` for every video of the class folders, in sorted order."""
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir())
    return [(str(p), k) for k, c in enumerate(classes) for p in sorted((folder / c).iterdir())]


def epoch_items(n_videos: int, work: Work, epoch: int) -> list[tuple[int, int]]:
    """The epoch's ``(video, clip)`` pairs, shuffled with a seed of the epoch."""
    items = [(v, j) for v in range(n_videos) for j in range(work.clips_per_video)]
    random.Random(work.seed * 1000 + epoch).shuffle(items)
    return items


def clip_indices(frames: int, work: Work, epoch: int, video: int, clip: int) -> np.ndarray:
    rng = np.random.default_rng([work.seed, epoch, video, clip])
    start = int(rng.integers(0, frames - work.span + 1))
    return start + work.step * np.arange(work.clip_len)


# -- the kit -------------------------------------------------------------------------------


def kit_direct(folder: Path, work: Work):
    """``video_dataset_from_directory``: decode each clip straight from the files."""
    from datakit.readers.video import video_dataset_from_directory
    ds = video_dataset_from_directory(
        folder, batch_size=work.batch, clip_len=work.clip_len, frame_step=work.step,
        frame_size=(work.size, work.size), sampler="random",
        clips_per_video=work.clips_per_video, seed=work.seed, verbose=False)
    return lambda epochs: iter(ds.repeat(epochs))


def kit_shards(folder: Path, work: Work, shards: Path | None = None):
    """``clip_dataset`` over the shards ``write_video_shards`` made (before the clock)."""
    from datakit.readers.video import clip_dataset
    ds = clip_dataset(Path(shards) / "train", clip_len=work.clip_len, frame_step=work.step,
                      batch_size=work.batch, clips_per_video=work.clips_per_video,
                      seed=work.seed)
    return lambda epochs: iter(ds.repeat(epochs))


# -- PyTorch peers: a map-style Dataset of one epoch's clips in a DataLoader(num_workers=2) --


def _installed(module: str, fix: str = "pip install -e '.[bench]'") -> None:
    """Skip a peer whose decoder is not installed before importing torch for it (1.5 CPU s
    of a process that would then do nothing); one installed but broken is skipped by its
    own import, with its error."""
    import importlib.util
    if importlib.util.find_spec(module) is None:
        raise Skip(f"{module} does not import here (ModuleNotFoundError: No module named "
                   f"'{module}'); {fix}")


def _torch():
    try:
        import torch
        from torch.utils.data import DataLoader, Dataset
    except Exception as e:  # ImportError, or OSError from a missing shared library
        raise Skip(f"torch does not import here ({type(e).__name__}: {e}); "
                   "pip install -e '.[bench]'") from e
    return torch, DataLoader, Dataset


def _loader(read_clip, folder: Path, work: Work):
    """Batches of each epoch's clips, read by ``read_clip(path, epoch, video, clip)`` in one
    ``DataLoader(num_workers=2, persistent_workers=True)``: its sampler (in this process)
    hands the workers ``(epoch, video, clip)`` for the epoch set before each pass."""
    torch, DataLoader, Dataset = _torch()
    from torch.utils.data import Sampler
    files = videos(folder)

    class Clips(Dataset):
        def __len__(self):
            return len(files) * work.clips_per_video

        def __getitem__(self, item):
            epoch, v, j = item
            path, label = files[v]
            return torch.as_tensor(read_clip(path, epoch, v, j)), label

    class EpochItems(Sampler):
        epoch = 1

        def __len__(self):
            return len(files) * work.clips_per_video

        def __iter__(self):
            return iter([(self.epoch, v, j)
                         for v, j in epoch_items(len(files), work, self.epoch)])

    sampler = EpochItems()
    loader = DataLoader(Clips(), sampler=sampler, batch_size=work.batch, num_workers=2,
                        persistent_workers=True)

    def stream(epochs):
        for e in range(1, epochs + 1):
            sampler.epoch = e
            yield from loader

    return stream


def torchcodec(folder: Path, work: Work):
    """torchcodec's ``VideoDecoder`` with its own ``Resize`` transform (resized while decoding)."""
    _installed("torchcodec")
    _torch()
    try:
        from torchcodec.decoders import VideoDecoder
        from torchcodec.transforms import Resize
    except Exception as e:
        raise Skip(f"torchcodec does not import here ({type(e).__name__}: {e}); it needs "
                   f"FFmpeg's shared libraries: apt-get install {FFMPEG_LIBS}") from e

    def read(path, epoch, v, j):
        dec = VideoDecoder(path, seek_mode="approximate", dimension_order="NHWC",
                           transforms=[Resize((work.size, work.size))])
        idx = clip_indices(dec.metadata.num_frames, work, epoch, v, j)
        return dec.get_frames_at(idx.tolist()).data

    return _loader(read, folder, work)


def decord(folder: Path, work: Work):
    """decord's ``VideoReader`` asked for 112x112 frames (it resizes while decoding)."""
    _installed("decord", "pip install decord (wheels for x86-64 only)")
    _torch()
    try:
        import decord as dc
    except Exception as e:
        raise Skip(f"decord does not import here ({type(e).__name__}: {e}); "
                   "pip install decord (wheels for x86-64 only)") from e

    def read(path, epoch, v, j):
        vr = dc.VideoReader(path, width=work.size, height=work.size, num_threads=1)
        return vr.get_batch(clip_indices(len(vr), work, epoch, v, j).tolist()).asnumpy()

    return _loader(read, folder, work)


# -- the TensorFlow video classification tutorial's FrameGenerator -------------------------


def tutorial(folder: Path, work: Work):
    """The tutorial's way: OpenCV, a ``CAP_PROP_POS_FRAMES`` seek, ``format_frames`` per frame.

    Written after the TF tutorial "Load video data" / "Video classification":
    ``frames_from_video_file`` reads ``n_frames`` frames ``frame_step`` apart
    from a random start, each through ``format_frames`` (to float32, then
    ``resize_with_pad``); ``FrameGenerator`` yields them in a shuffled order into
    ``from_generator``. Here it yields ``clips_per_video`` clips per video.
    """
    try:
        import cv2
    except Exception as e:
        raise Skip(f"OpenCV does not import here ({type(e).__name__}: {e}); "
                   "pip install opencv-python-headless") from e
    import tensorflow as tf

    size = (work.size, work.size)

    def format_frames(frame):
        frame = tf.image.convert_image_dtype(frame, tf.float32)
        return tf.image.resize_with_pad(frame, *size)

    def frames_from_video_file(path, epoch, v, j):
        src = cv2.VideoCapture(path)
        length = int(src.get(cv2.CAP_PROP_FRAME_COUNT))
        start = int(clip_indices(length, work, epoch, v, j)[0])
        src.set(cv2.CAP_PROP_POS_FRAMES, start)
        result = []
        ok, frame = src.read()
        result.append(format_frames(frame))
        for _ in range(work.clip_len - 1):
            for _ in range(work.step):
                ok, frame = src.read()
            result.append(format_frames(frame) if ok else tf.zeros_like(result[0]))
        src.release()
        return np.array(result)[..., [2, 1, 0]]  # OpenCV's BGR to RGB

    files = videos(folder)

    def frame_generator(epoch):
        epoch = int(epoch)
        for v, j in epoch_items(len(files), work, epoch):
            yield frames_from_video_file(files[v][0], epoch, v, j), files[v][1]

    spec = (tf.TensorSpec((None, None, None, 3), tf.float32), tf.TensorSpec((), tf.int16))

    def stream(epochs):  # one pipeline over the epochs, each epoch's generator batched
        return iter(tf.data.Dataset.range(1, epochs + 1).flat_map(
            lambda e: tf.data.Dataset.from_generator(
                frame_generator, args=(e,), output_signature=spec).batch(work.batch)))

    return stream


# -- the floor: PyAV, a seek to the keyframe before each clip, one conversion per frame ------


def to_rgb(frame, size: int) -> np.ndarray:
    """One swscale call from the decoder's YUV straight to ``size`` x ``size`` RGB.

    Through one ``VideoReformatter`` kept for the process: ``frame.to_ndarray(width=,
    height=, format=)`` makes a new scaler for every frame, which here cost 2.7x the
    conversion itself (1,575 against 4,265 frames per CPU s at 320x240, decode included).
    """
    global _REFORMATTER
    if _REFORMATTER is None:
        from av.video.reformatter import VideoReformatter
        _REFORMATTER = VideoReformatter()
    return _REFORMATTER.reformat(frame, width=size, height=size, format="rgb24",
                                 threads=1).to_ndarray()  # one decoder a core: one thread


_REFORMATTER = None


def floor_clip(path: str, epoch: int, v: int, j: int, work: Work) -> np.ndarray:
    """Seek to the keyframe before the clip, decode to its last frame, convert the kept ones."""
    import av

    with av.open(path) as c:
        s = c.streams.video[0]
        s.codec_context.thread_count = 1  # one core: CPU time per clip is the measure
        idx = clip_indices(s.frames, work, epoch, v, j)
        rate, tb = s.average_rate, s.time_base
        wanted = set(idx.tolist())
        c.seek(int(int(idx[0]) / (rate * tb)), stream=s, backward=True, any_frame=False)
        out = []
        for frame in c.decode(s):
            k = round(frame.pts * tb * rate)
            if k in wanted:
                out.append(to_rgb(frame, work.size))
            if k >= idx[-1]:
                break
    return np.stack(out)


def floor(folder: Path, work: Work):
    """The floor, in this one process and thread: nothing around the decode but the stack."""
    files = videos(folder)

    def stream(epochs):
        for epoch in range(1, epochs + 1):
            items = epoch_items(len(files), work, epoch)
            for b in range(0, len(items), work.batch):
                chunk = items[b:b + work.batch]
                yield (np.stack([floor_clip(files[v][0], epoch, v, j, work) for v, j in chunk]),
                       np.array([files[v][1] for v, _ in chunk]))

    return stream


LOADERS = {
    "kit direct": kit_direct,
    "kit shards": kit_shards,
    "torchcodec": torchcodec,
    "decord": decord,
    "tutorial": tutorial,
    "floor": floor,
}
