"""Notebook 10's write exercises (10.1-10.5), answered right and wrong.

Each wrong answer is the notebook's solution with one plausible slip (tests/nb10_inputs.py's
``edited``), or a short answer written out; the words each refusal must say pin that it names
the file, key or frame and the likely cause. The inputs are a small messy folder in which the
two orders the listing allows differ (tests/nb10_inputs.py).
"""

from tests.exercise_variants import Case
from tests.nb10_inputs import edited

SETUP = """
from tests import nb10_inputs
globals().update(nb10_inputs.namespace())
FOLDER = nb10_inputs.messy_folder()
listing = list_videos(FOLDER, SEED)
paths = [p for p, _, _ in listing]
found = {p: probe(FOLDER / p) for p in paths}
good = [f for f in found.values() if isinstance(f, dict)]
"""

CLIPS = SETUP + """
phone = found["up/phone/up_phone.mp4"]
kept = [phone] + [f for f in good if f is not phone and len(frame_times(f, FPS)) >= CLIP_LEN][:3]
requests = [(f, frame_times(f, FPS)[:CLIP_LEN].tolist()) for f in kept]

def both(answer):
    fits = [exercises.check("clip_frames", answer, requests, SIZE, fit) for fit in ("crop", "pad")]
    return next((f for f in fits if not f), fits[0])
"""

CHOICES = """
from tests import nb10_inputs
globals().update(nb10_inputs.namespace())
ARGS = ([0, 1, 2, 3], [0, 1, 0, 1], [20, 30, 40, 9])

def both(answer):
    kinds = [exercises.check("clip_choices", answer, *ARGS, training, clip_len=CLIP_LEN,
                             seed=SEED) for training in (True, False)]
    return next((k for k in kinds if not k), kinds[0])
"""

STR_ORDER = ("sorted((folder / name).rglob(\"*\"))",
             "sorted((folder / name).rglob(\"*\"), key=str)")

CASES = {
    "10.1": Case(
        checker="video_listing",
        setup=SETUP,
        check="exercises.check('video_listing', answer, FOLDER, SEED)",
        correct=[
            "list_videos",
            edited("list_videos", STR_ORDER),  # sorted as strings: the question allows it
            edited("list_videos", ("split = {}", "split = [None] * n")),
            "list_videos(FOLDER, SEED)",  # the listing itself, not the function
        ],
        wrong=[
            (edited("list_videos", ("rows.append((path.relative_to(folder).as_posix(), label))",
                                    "rows.append((path.relative_to(folder).as_posix(), "
                                    "str(label)))")), "not an int"),
            (edited("list_videos", ("(folder / name).rglob(\"*\")", "(folder / name).iterdir()")),
             "sub-folders"),
            (edited("list_videos", (" and not any(p.startswith(\".\") for p in inside)", "")),
             "starts with '.'"),
            (edited("list_videos", ("for rank, i in enumerate(", "for i, rank in enumerate(")),
             "order[i]"),
            (edited("list_videos", ("default_rng(seed)", "default_rng(0)")), "split"),
            (edited("list_videos", ("sorted((folder / name).rglob(\"*\"))",
                                    "sorted((folder / name).rglob(\"*\"), reverse=True)")),
             "sorted by path"),
            (edited("list_videos", ("n_val = n_test = int(0.2 * n)",
                                    "n_val = n_test = int(np.ceil(0.2 * n))")), "int(0.2 * n)"),
            (edited("list_videos", ("return [(path", "[(path")), "forget to `return`"),
            (edited("list_videos", ("rows.append((path.relative_to(folder).as_posix(), label))",
                                    "rows.append((str(path.relative_to(folder)).encode(), "
                                    "label))")), "bytes, not a str"),
            (edited("list_videos", ("rows.append((path.relative_to(folder).as_posix(), label))",
                                    "rows.append((str(path), label))")), "relative"),
        ],
    ),
    "10.2": Case(
        checker="video_probe",
        setup=SETUP,
        check="exercises.check('video_probe', answer, FOLDER, paths)",
        correct=[
            "probe",
            edited("probe", ('"pts": pts,', '"pts": np.array(pts),')),
            edited("probe", ('return f"unreadable: {type(e).__name__}"',
                             'return "unreadable"')),
            edited("probe", ('float(stream.average_rate or 0)',
                             'float(stream.average_rate) if stream.average_rate else 0.0')),
        ],
        wrong=[
            (edited("probe", ("sorted(p.pts for p in", "list(p.pts for p in")), "not sorted"),
            (edited("probe", ('"pts": pts,', '"pts": [p * time_base for p in pts],')),
             "in seconds"),
            (edited("probe", ("time_base, rate = float(stream.time_base),",
                              "time_base, rate = stream.time_base,")), "Fraction"),
            (edited("probe", ("float(stream.average_rate or 0)", "0.0")),
             "'rate' is 0"),
            (edited("probe", ('{"path": str(path), ', '{')), "lacks ['path']"),
            (edited("probe", ('"time_base": time_base,', '')),
             "lacks ['time_base']"),
            (edited("probe", ('"height": first.width if turned else first.height',
                              '"height": first.height'),
                    ('"width": first.height if turned else first.width', '"width": first.width')),
             "swapped"),
            (edited("probe", ("if stream.frames and len(pts) < stream.frames:", "if False:")),
             "truncated"),
            (edited("probe", ("except (av.error.FFmpegError, IndexError, StopIteration) as e:",
                              "except IndexError as e:")), "raised"),
            (edited("probe", ('    return {"path"', '    {"path"')), "forget to `return`"),
            (edited("probe", ("if p.size", "")), "raised TypeError"),
        ],
    ),
    "10.3": Case(
        checker="frame_times",
        setup=SETUP,
        check="exercises.check('frame_times', answer, good, FPS)",
        correct=[
            "frame_times",
            """
def answer(facts, fps):  # a loop, the time of each output frame by hand
    times = [(p - facts["pts"][0]) * facts["time_base"] for p in facts["pts"]]
    rate = facts["rate"] or (len(times) - 1) / times[-1]
    n = int((times[-1] + 1 / rate) * fps + 1e-6)
    return [max(k for k, t in enumerate(times) if t <= j / fps + 1e-6) for j in range(n)]
""",
        ],
        wrong=[
            (edited("frame_times", ("int(np.floor(end * fps + 1e-6))",
                                    "int(np.ceil(end * fps))")), "floor(end * fps"),
            (edited("frame_times", ("end = times[-1] + 1 / rate", "end = times[-1]")),
             "output frames"),
            (edited("frame_times", ("return np.searchsorted", "return 0.9 + np.searchsorted")),
             "floats"),
            (edited("frame_times", ('side="right") - 1', 'side="left")')), "output frame"),
            (edited("frame_times", ("return np.searchsorted", "np.searchsorted")),
             "forget to `return`"),
        ],
    ),
    "10.4": Case(
        checker="clip_frames",
        setup=CLIPS,
        check="both(answer)",
        correct=[
            "read_clip",
            edited("read_clip", ("y, x = (sh - size) // 2, (sw - size) // 2",
                                 "y, x = int((sh - size) / 2), int((sw - size) / 2)")),
            edited("read_clip", ("container.seek(pts[min(wanted)], stream=stream, "
                                 "backward=True)", "pass")),  # no seek: slower, the same frames
        ],
        wrong=[
            (edited("read_clip", ("y, x = (size - sh) // 2, (size - sw) // 2",
                                  "y, x = round((size - sh) / 2), round((size - sw) / 2)")),
             "one pixel off"),
            (edited("read_clip", ("stored_h, stored_w = (sw, sh) if rotation in (90, 270) "
                                  "else (sh, sw)", "stored_h, stored_w = sh, sw")), "as stored"),
            (edited("read_clip", ("np.rot90(rgb, k=rotation // 90)", "rgb")), "turn it"),
            (edited("read_clip", ("padded = np.zeros((len(wanted), size, size, 3), np.uint8)",
                                  "padded = np.zeros((len(wanted), size, size, 3))")), "uint8"),
            (edited("read_clip", ("clip = np.stack([got[pts[k]] for k in wanted])",
                                  "clip = np.stack([got[pts[k]] for k in wanted][::-1])")),
             "order of wanted"),
        ],
    ),
    "10.5": Case(
        checker="clip_choices",
        setup=CHOICES,
        check="both(answer)",
        correct=[
            "choices",
            """
def answer(ids, labels, lengths, training):  # a list of tuples, from the solution's dataset
    return [tuple(int(x) for x in row) for row in choices(ids, labels, lengths, training)]
""",
        ],
        wrong=[
            (edited("choices", ("pairs = tf.data.Dataset.zip(videos_ds, numbers)",
                                "pairs = tf.data.Dataset.zip(videos_ds.shuffle(len(ids), "
                                "seed=SEED), numbers)"),
                    ("return starts.shuffle(len(ids), seed=SEED)", "return starts")),
             "zip first"),
            (edited("choices", ("r % (v[2] - CLIP_LEN + 1)", "r % (v[2] - CLIP_LEN)")),
             "n - CLIP_LEN + 1"),
            (edited("choices", ("(n - CLIP_LEN) // 2", "n // 2 - CLIP_LEN")), "middle clip"),
            (edited("choices", ("return videos_ds.map(", "return videos_ds.shuffle(4, seed=1)"
                                ".map(")), "keep the videos' order"),
            (edited("choices", ("tf.constant(x, tf.int64)", "tf.constant(x, tf.int32)"),
                    ("numbers = tf.data.Dataset.random(seed=SEED, rerandomize_each_iteration="
                     "True)", "numbers = tf.data.Dataset.random(seed=SEED, "
                     "rerandomize_each_iteration=True).map(lambda r: tf.cast(r, tf.int32))")),
             "int64"),
            (edited("choices", ("return starts.shuffle", "starts.shuffle")),
             "forget to `return`"),
        ],
    ),
}
