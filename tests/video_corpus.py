"""A corpus of real-world video files made with FFmpeg's libraries (PyAV), and FFmpeg as the judge.

:func:`good_files` writes small videos across containers (mp4, mov, mkv, webm,
avi, m4v) and codecs (H.264 with and without B-frames, HEVC, VP9, AV1 where
the build has an encoder, MPEG-4 part 2, MJPEG), with what real files carry:
AVI dropped-frame slots (an empty entry in the index), rotation, odd and
uneven sizes, 10-bit, audio before video, the moov at the end or at the start.
:func:`damaged` makes the broken variants of a file (cut at the end, cut in the
middle, a zeroed range, a broken index). :func:`judge` decodes a file the way
``ffmpeg -v error -i F -f null -`` does and returns the errors FFmpeg reports
and the frames it decodes (``ffprobe -count_frames``' count) with their times.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

#: name -> (container, codec, options); `size` (w, h), `frames`, `bf` B-frames, `drop` frame
#: numbers left out (their slots stay in an AVI's index), `rotate` degrees, `pix` pixel format,
#: `audio_first`, `faststart`, `sar` the pixels' aspect ratio (width, height) the codec states.
SMALL = {
    "h264.mp4": ("mp4", "libx264", dict(bf=0)),
    "h264_bframes.mp4": ("mp4", "libx264", dict(bf=3)),
    "h264_faststart.mp4": ("mp4", "libx264", dict(bf=2, faststart=True)),
    "h264_audio_first.mp4": ("mp4", "libx264", dict(audio_first=True)),
    "h264_rotated.mp4": ("mp4", "libx264", dict(rotate=90)),
    "h264_vfr.mp4": ("mp4", "libx264", dict(times=(0, 3, 5, 8, 10, 13, 15, 18, 20, 23, 25, 28,
                                                  30, 33, 35, 38, 40, 43, 45, 48))),
    "h264_uneven.mp4": ("mp4", "libx264", dict(size=(70, 38))),
    "h264_odd.mkv": ("matroska", "libx264", dict(size=(65, 49), pix="yuv444p")),
    "hevc.mp4": ("mp4", "libx265", dict()),
    "hevc_10bit.mkv": ("matroska", "libx265", dict(pix="yuv420p10le")),
    "h264.mov": ("mov", "libx264", dict(bf=2)),
    "mjpeg.mov": ("mov", "mjpeg", dict()),
    "h264_bframes.mkv": ("matroska", "libx264", dict(bf=3)),
    "vp9.webm": ("webm", "libvpx-vp9", dict()),
    "vp9.mkv": ("matroska", "libvpx-vp9", dict()),
    "av1.webm": ("webm", "libsvtav1", dict(size=(64, 64))),
    "mpeg4.avi": ("avi", "mpeg4", dict()),
    "mjpeg.avi": ("avi", "mjpeg", dict()),
    "mjpeg_dropped.avi": ("avi", "mjpeg", dict(drop=(5, 11))),
    "mpeg4_dropped.avi": ("avi", "mpeg4", dict(drop=(5,))),
    "h264_bframes.avi": ("avi", "libx264", dict(bf=2)),
    "h264.m4v": ("ipod", "libx264", dict()),
    "mpeg4.m4v": ("ipod", "mpeg4", dict()),
    # non-square pixels: shown 64x48, 48x48, 64x36 (HDV's 1440x1080 at 4:3, as Final Cut
    # keeps it in a MOV), and 48x64 turned
    "h264_sar2.mp4": ("mp4", "libx264", dict(size=(32, 48), sar=(2, 1))),
    "h264_sar_half.mkv": ("matroska", "libx264", dict(size=(96, 48), sar=(1, 2))),
    "mpeg2_hdv.mov": ("mov", "mpeg2video", dict(size=(48, 36), sar=(4, 3))),
    "h264_sar_rotated.mp4": ("mp4", "libx264", dict(size=(32, 48), sar=(2, 1), rotate=90)),
}


def _picture(i: int, w: int, h: int) -> np.ndarray:
    """Frame ``i``: a square moving over a gradient (enough detail for real P/B-frames)."""
    y, x = np.mgrid[:h, :w]
    rgb = np.stack([(x * 255 // max(1, w - 1)), (y * 255 // max(1, h - 1)),
                    np.full_like(x, 128)], -1).astype(np.uint8)
    s = (2 * i) % max(1, w - 12)
    rgb[h // 4:h // 4 + 12, s:s + 12] = 255
    return rgb


def write(path: Path, container: str, codec: str, *, size=(64, 48), frames: int = 24,
          gop: int | None = None, bf: int | None = None, drop=(), rotate: int = 0,
          pix: str | None = None, sar: tuple[int, int] | None = None,
          audio_first: bool = False, faststart: bool = False, times=None, start: int = 0,
          shift: int = 0) -> Path:
    import av

    w, h = size
    options = {"movflags": "+faststart"} if faststart else {}
    with av.open(str(path), "w", format=container, options=options) as out:
        audio = out.add_stream("aac", rate=8000) if audio_first else None
        s = out.add_stream(codec, rate=25)
        s.width, s.height = w, h
        s.pix_fmt = pix or ("yuvj420p" if codec == "mjpeg" else "yuv420p")
        s.codec_context.time_base = Fraction(1, 25 if times is None else 50)
        if bf is not None:
            s.codec_context.max_b_frames = bf
        if gop is not None and codec != "mjpeg":
            s.codec_context.gop_size = gop
        if codec in ("libx264", "libx265"):
            s.codec_context.options = {"preset": "ultrafast" if not bf else "fast",
                                       **({"x265-params": "log-level=error"}
                                          if codec == "libx265" else {})}
        if codec == "libsvtav1":
            s.codec_context.options = {"preset": "12"}
        if rotate:
            s.set_display_rotation(rotate)
        if sar:
            s.codec_context.sample_aspect_ratio = Fraction(*sar)
        if audio is not None:
            tone = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp",
                                              layout="mono")
            tone.sample_rate = 8000
            for k in range(int(frames / 25 * 8000 / 1024) + 1):
                tone.pts = k * 1024
                for p in audio.encode(tone):
                    out.mux(p)
            for p in audio.encode():
                out.mux(p)
        for i in range(frames if times is None else len(times)):
            if i in drop:
                continue
            f = av.VideoFrame.from_ndarray(_picture(i + shift, w, h), format="rgb24")
            f.pts = start + (i if times is None else times[i])
            for p in s.encode(f):
                out.mux(p)
        for p in s.encode():
            out.mux(p)
    return path


def good_files(directory: Path, names=None, *, scale: int = 1, frames: int = 24,
               gop: int | None = None) -> dict[str, Path]:
    """Write the corpus (``names``: a subset of :data:`SMALL`) into ``directory``; skip the
    encoders this build of FFmpeg lacks. ``scale``: frame sides times this; ``frames`` and
    ``gop`` (frames between keyframes) for the files without their own timestamps."""
    import av

    have = av.codecs_available
    made = {}
    for name in names or SMALL:
        container, codec, options = SMALL[name]
        w, h = options.get("size", (64, 48))
        options = dict(options, size=(w * scale, h * scale), gop=gop)
        if "times" not in options:
            options["frames"] = frames
        if codec in have:
            made[name] = write(directory / name, container, codec, **options)
    return made


def ffmpeg_only_files(directory: Path) -> dict[str, Path]:
    """Files FFmpeg decodes cleanly that a reader of the first video stream's sorted packet
    times misreads: an MP4 trimmed without re-encoding (``ffmpeg -ss 0.52 -i a.mp4 -c copy``:
    an edit list, the 13 packets before the cut marked discard), MPEG-TS recordings joined
    with ``cat`` and named ``.mp4`` (the second part's timestamps before the first's, or the
    same), and a Matroska file whose first video track is a one-frame still and whose
    second, flagged default, is the video."""
    import av

    made = {}
    src = write(directory / "trim_source.mp4", "mp4", "libx264", frames=50, bf=2)
    made["h264_trimmed.mp4"] = directory / "h264_trimmed.mp4"
    with av.open(str(src)) as i, av.open(str(made["h264_trimmed.mp4"]), "w") as o:
        s = i.streams.video[0]
        out = o.add_stream_from_template(s)
        cut = int(round(0.52 / s.time_base))  # 13 frames at 25 fps
        for p in i.demux(s):
            if p.dts is not None:
                p.pts, p.dts, p.stream = p.pts - cut, p.dts - cut, out
                o.mux(p)
    src.unlink()
    for name, (a, b) in {"ts_joined_back.mp4": (250, 50), "ts_joined_repeat.mp4": (0, 0)}.items():
        parts = [write(directory / f"part{k}.ts", "mpegts", "libx264", bf=2, start=t, shift=7 * k)
                 for k, t in enumerate((a, b))]
        made[name] = directory / name
        made[name].write_bytes(b"".join(part.read_bytes() for part in parts))
        for part in parts:
            part.unlink()
    made["still_first.mkv"] = path = directory / "still_first.mkv"
    with av.open(str(path), "w", format="matroska") as out:
        still = out.add_stream("mjpeg", rate=1)
        still.width, still.height, still.pix_fmt = 32, 32, "yuvj420p"
        still.codec_context.time_base = Fraction(1, 25)
        video = out.add_stream("libx264", rate=25)
        video.width, video.height, video.pix_fmt = 64, 48, "yuv420p"
        video.codec_context.time_base = Fraction(1, 25)
        video.codec_context.options = {"preset": "ultrafast"}
        still.disposition, video.disposition = av.stream.Disposition(0), \
            av.stream.Disposition.default
        for stream, pictures in ((still, [np.zeros((32, 32, 3), np.uint8)]),
                                 (video, [_picture(i, 64, 48) for i in range(24)])):
            for i, picture in enumerate(pictures):
                f = av.VideoFrame.from_ndarray(picture, format="rgb24")
                f.pts = i
                for p in stream.encode(f):
                    out.mux(p)
            for p in stream.encode():
                out.mux(p)
    return made


def judge(path) -> tuple[list[str], list[float]]:
    """What ``ffmpeg -v error -i path -f null -`` reports (its error lines, or the exception
    that stopped it) and the times of the frames it decodes (``ffprobe -count_frames``), in
    the order it decodes them, from the stream it picks (``av_find_best_stream``)."""
    import av
    import av.logging

    errors, times = [], []
    with av.logging.Capture(local=False) as logs:
        try:
            with av.open(str(path)) as c:
                stream = c.streams.best("video")  # the stream ffmpeg and players pick
                for frame in c.decode(stream):
                    times.append(float(frame.time) if frame.time is not None else None)
        except (av.error.FFmpegError, IndexError) as e:
            errors.append(f"{type(e).__name__}: {e}")
    errors += [f"{name}: {text}" for level, name, text in logs if level <= av.logging.ERROR]
    return errors, times


def display_frames(path) -> np.ndarray:
    """The frames as FFmpeg shows them (before any rotation): those of the stream it picks,
    through a filter graph that makes the pixels square, ``scale=iw*sar:ih,setsar=1``
    (FFmpeg's own rule and scaler, bicubic), the sample aspect ratio the one FFmpeg
    guesses (``av_guess_sample_aspect_ratio``: the container's, else the codec's)."""
    import av

    frames = []
    with av.open(str(path)) as c:
        stream = c.streams.best("video")
        graph = None
        for frame in c.decode(stream):
            sar = Fraction(stream.sample_aspect_ratio or stream.codec_context.sample_aspect_ratio
                           or 1)
            if sar == 1:
                frames.append(frame.to_ndarray(format="rgb24"))
                continue
            if graph is None:
                graph = av.filter.Graph()
                chain = [graph.add("buffer", video_size=f"{frame.width}x{frame.height}",
                                   pix_fmt=frame.format.name, time_base=str(stream.time_base),
                                   pixel_aspect=f"{sar.numerator}/{sar.denominator}"),
                         graph.add("scale", "iw*sar:ih"), graph.add("setsar", "1"),
                         graph.add("buffersink")]
                for a, b in zip(chain, chain[1:], strict=False):
                    a.link_to(b)
                graph.configure()
            graph.push(frame)
            frames.append(graph.pull().to_ndarray(format="rgb24"))
    return np.stack(frames)


def damaged(path: Path, directory: Path) -> dict[str, Path]:
    """Broken copies of ``path``: cut at the end, cut in the middle (a range removed), a zeroed
    range, and a broken index (the MP4/MOV sample tables, the AVI ``idx1``, the Matroska
    cues and seek head: their bytes overwritten)."""
    data = path.read_bytes()
    n = len(data)
    out = {"cut_end": data[:n * 3 // 5],
           "cut_middle": data[:n * 2 // 5] + data[n * 3 // 5:],
           "zeroed": data[:n * 2 // 5] + bytes(n // 5) + data[n * 3 // 5:]}
    for tag in (b"stsz", b"stco", b"idx1"):
        at = data.find(tag)
        if at > 0:
            out["broken_index"] = data[:at + 4] + b"\xff" * 24 + data[at + 28:]
            break
    made = {}
    for kind, content in out.items():
        target = directory / f"{path.stem}_{kind}{path.suffix}"
        target.write_bytes(content)
        made[f"{path.name}:{kind}"] = target
    return made
