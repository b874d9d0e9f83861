"""A bad-input sweep of the whole kit (issue #47): ``python -m benchmarks.sweep_bad_inputs``.

Each case builds a small input in its own folder (fixed seeds) and calls one of the kit's
entry points with something wrong: a wrong type, an out-of-range or non-finite value, a
missing, empty, truncated or corrupt file, a folder where a file is expected, a set or a
generator where a list is expected, a keyword given twice. The cases live in
``sweep_cases_files.py`` (tables, records, checkpoints, manifests, tf.Transform),
``sweep_cases_video.py``, ``sweep_cases_api.py`` (glass box, pictures' helpers, the
doctor, perf, cluster) and ``sweep_cases_round5.py`` (issue #60's round: files FFmpeg
reads, class folders, writers at once, switches, numbers, checkers; ids ``r5.``).
Each case is classified:

- ``clear``: a TypeError/ValueError/OSError (FileNotFoundError, ...), a ``DataError``, an
  argparse usage error or a TensorFlow error, whose message names the argument or file;
- ``vague``: an error, but its message names neither, or a raw third-party error
  (KeyError, IndexError, pyarrow's, numpy's, PyAV's);
- ``silent``: no error where one was due, or wrong data (rows lost, an argument ignored);
- ``refused``: a good input refused (the case says accepting is right);
- ``crash``: the child died by a signal; ``hang``: past its timeout (or past the memory
  limit, a runaway);
- ``ok``: accepted and right, where accepting is right (not a defect);
- ``skipped``: the function is not found at any of its known import paths.

Cases run one after another in a child process (a fresh one after a hang or a crash, so
each is charged to its own case); each case gets a fresh folder. Entry points are found
through :func:`resolve`, which tries the module paths of main and of the branches that
move modules (``readers/records/``, ``readers/tf_transform/``, ...), so the same script
runs before and after they merge.

Options: ``--out results.json`` (per-case results), ``--only PREFIX`` (case ids starting
with it, repeatable), ``--timeout S`` (per case, default 60), ``--list``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MEMORY_LIMIT = 4 << 30  # a worker past this RSS is stopped as a runaway ("hang")

#: Where each concept's module lives: the new path first, then main's.
MODULES = {
    "tfrecords": ["datakit.readers.records.tfrecords", "datakit.readers.records.record_framing",
                  "datakit.readers.tfrecords"],
    "tfrecord_writer": ["datakit.readers.records.tfrecord_writer",
                        "datakit.readers.tfrecord_writer"],
    "tf_example": ["datakit.readers.records.tf_example", "datakit.readers.tf_example"],
    "checkpoint": ["datakit.readers.checkpoints.checkpoint", "datakit.readers.checkpoint"],
    "fixed_length": ["datakit.readers.small_sources.fixed_length",
                     "datakit.readers.fixed_length"],
    "sqlite": ["datakit.readers.small_sources.sqlite", "datakit.readers.sqlite"],
    "text_lines": ["datakit.readers.small_sources.text_lines", "datakit.readers.text_lines"],
    "parquet": ["datakit.readers.parquet_files.parquet", "datakit.readers.parquet_files",
                "datakit.readers.parquet"],
    "transform": ["datakit.readers.tf_transform.transform", "datakit.readers.tf_transform",
                  "datakit.readers.tf_transform.transform_run", "datakit.readers.transform"],
    "csv": ["datakit.readers.csv_files", "datakit.readers.csv_files.reader",
            "datakit.readers.csv_files.stats", "datakit.readers.csv_files.shards",
            "datakit.readers.csv_files.grammar"],
    "video": ["datakit.readers.video", "datakit.readers.video.options.clip_options",
              "datakit.readers.video.clip_options"],
    "manifest": ["datakit.core.manifest"],
    "glassbox": ["datakit.glassbox"],
    "mixing": ["datakit.perf.shuffle_runs", "datakit.glassbox.shuffle_stats", "datakit.see.mixing"],
    "see": ["datakit.see.shuffle", "datakit.see.sampling", "datakit.see.interleave",
            "datakit.see.mixing", "datakit.see"],
    "doctor": ["datakit.doctor"],
    "perf": ["datakit.perf.bench", "datakit.perf"],
    "progress": ["datakit.core.progress"],
    "probe_cache": ["datakit.readers.video.decoding.probe_cache",
                    "datakit.readers.video.probe_cache"],
    "exercises": ["datakit.exercises", "datakit.exercises.compare", "datakit.exercises.checks"],
    "doctor_wait": ["datakit.doctor.input_wait", "datakit.doctor"],
    "bench": ["datakit.bench.command"],
    "cluster": ["datakit.cluster", "datakit.cluster.process", "datakit.cluster.serve",
                "datakit.cluster.measure"],
}


class Skip(Exception):
    """The case's function is not at any known path (or the case cannot run here)."""


class UsageError(Exception):
    """A command line refused by argparse (exit 2): its message is what argparse printed."""


def resolve(concept: str, name: str) -> Any:
    """``name`` from the first module of ``concept`` (see :data:`MODULES`) that has it."""
    tried = []
    for mod in MODULES[concept]:
        try:
            m = importlib.import_module(mod)
        except ImportError:
            tried.append(f"{mod} (no module)")
            continue
        try:
            return getattr(m, name)
        except AttributeError:
            tried.append(mod)
    raise Skip(f"{name} not found in {', '.join(tried)}")


def cli(main: Callable, argv: list[str]) -> Any:
    """Run a command-line ``main(argv)``; an argparse refusal becomes :class:`UsageError`."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return main(argv)
    except SystemExit as e:
        text = err.getvalue().strip().splitlines()
        raise UsageError(e.code if isinstance(e.code, str) else text[-1] if text
                         else f"exit {e.code}") from None


@dataclass
class Case:
    id: str
    area: str
    desc: str
    fn: Callable[[Path], Any]
    names: tuple = ()          # a clear message holds one of these (case-insensitive)
    ok: Callable | None = None  # accepting is right when ok(result) is true
    timeout: float | None = None
    either: bool = False        # with ok: a refusal that names the argument is right too


CASES: list[Case] = []


def case(area: str, desc: str, names=(), ok=None, timeout=None, either=False):
    """Register ``fn(folder)`` as a case (``names``: what a clear message names)."""
    def deco(fn):
        cid = f"{area}.{fn.__name__}"
        assert all(c.id != cid for c in CASES), cid
        CASES.append(Case(cid, area, desc, fn, tuple([names] if isinstance(names, str)
                                                        else names), ok, timeout, either))
        return fn
    return deco


# ------------------------------------------------------------------ classification
def _third_party(e: BaseException) -> bool:
    mod = type(e).__module__ or ""
    return mod.split(".")[0] in {"pyarrow", "numpy", "av", "sqlite3", "json", "pandas"}


def classify_error(c: Case, e: BaseException) -> str:
    import tensorflow as tf

    from datakit.core.errors import DataError
    text = str(e).lower()  # the message alone: a TimeoutError does not name timeout=
    named = not c.names or any(str(n).lower() in text for n in c.names)
    if c.ok is not None and not c.either:  # accepting was right
        return "refused"
    if isinstance(e, DataError) or isinstance(e, UsageError):
        return "clear" if named else "vague"
    if isinstance(e, (KeyError, IndexError, AttributeError, ZeroDivisionError, AssertionError,
                      RecursionError, UnboundLocalError, StopIteration)):
        return "vague"
    if _third_party(e):
        return "vague"
    if isinstance(e, (TypeError, ValueError, OSError, tf.errors.OpError)):
        return "clear" if named else "vague"
    return "vague"


def first_line(e: BaseException) -> str:
    text = getattr(e, "message", None) or str(e)  # TensorFlow's, without its node prefix
    lines = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", str(text).strip()).splitlines()
    return f"{type(e).__name__}: {lines[0][:400] if lines else ''}"


def run_case(c: Case, base: Path) -> dict:
    """Run one case here (in the worker); the result's outcome and message."""
    d = Path(tempfile.mkdtemp(prefix="case", dir=base / "cases"))
    out = {"id": c.id, "area": c.area, "description": c.desc}
    t = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()), \
                warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            result = c.fn(d)
    except Skip as e:
        out.update(outcome="skipped", message=str(e))
    except BaseException as e:  # SystemExit and KeyboardInterrupt are outcomes too
        if isinstance(e, KeyboardInterrupt):
            raise
        out.update(outcome=classify_error(c, e), message=first_line(e),
                   where=traceback.extract_tb(e.__traceback__)[-1].filename.split("/")[-1])
    else:
        if c.ok is None:
            out.update(outcome="silent", message=f"accepted: {_summary(result)}")
        else:
            try:
                good = c.ok(result)
            except Exception as e:
                good, result = False, f"check failed: {first_line(e)}"
            out.update(outcome="ok" if good else "silent",
                       message=("" if good else "wrong: ") + _summary(result))
    ours = [w for w in warned if "/datakit/" in w.filename]  # the kit's, not TF's deprecations
    if ours:
        out["warning"] = str(ours[0].message).splitlines()[0][:300]
        if out["outcome"] == "silent":
            out["message"] += f" (warned: {out['warning'][:150]})"
    out["seconds"] = round(time.perf_counter() - t, 2)
    shutil.rmtree(d, ignore_errors=True)
    return out


def _summary(result: Any) -> str:
    shape = getattr(result, "shape", None)
    text = f"shape {tuple(shape)}" if shape is not None else repr(result)
    return text[:300]


# ------------------------------------------------------------------ worker and parent
def load_cases() -> list[Case]:
    if not CASES:
        for mod in ("sweep_cases_files", "sweep_cases_video", "sweep_cases_api",
                    "sweep_cases_round5"):
            importlib.import_module(f"benchmarks.{mod}")
    return CASES


def worker(base: Path, fd: int) -> None:
    """Read case ids on stdin, write one JSON line per result on ``fd``."""
    os.environ["DATAKIT_SWEEP_BASE"] = str(base)
    cases = {c.id: c for c in load_cases()}
    with os.fdopen(fd, "w", buffering=1) as results:
        for line in sys.stdin:
            cid = line.strip()
            if cid:
                results.write(json.dumps(run_case(cases[cid], base)) + "\n")


class Child:
    """The worker process: started on demand, stopped (its process group) on a hang."""

    def __init__(self, base: Path, log):
        r, w = os.pipe()
        env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", str(ROOT)),
                   TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.sweep_bad_inputs", "--worker", str(base),
             "--fd", str(w)], stdin=subprocess.PIPE, stdout=log, stderr=log, env=env,
            pass_fds=(w,), start_new_session=True, text=True, cwd=str(ROOT))
        os.close(w)
        self.results = os.fdopen(r, "r")

    def ask(self, cid: str, timeout: float) -> tuple[str, dict | None]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(cid + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.results], [], [], 0.5)
            if ready:
                line = self.results.readline()
                if not line:
                    self.proc.wait(timeout=10)
                    return "died", None
                return "done", json.loads(line)
            if self.rss() > MEMORY_LIMIT:
                return "memory", None
        return "timeout", None

    def rss(self) -> int:
        try:
            text = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.results.close()


def sweep(cases: list[Case], timeout: float, log_path: Path) -> list[dict]:
    base = Path(tempfile.mkdtemp(prefix="dks"))
    (base / "cases").mkdir()
    results, child = [], None
    with open(log_path, "w") as log:
        for i, c in enumerate(cases, 1):
            child = child or Child(base, log)
            t = time.perf_counter()
            status, res = child.ask(c.id, c.timeout or timeout)
            if status != "done":
                rc = child.proc.poll()
                child.stop()
                child = None
                outcome = ("crash" if status == "died" and rc is not None and rc < 0 else
                           "hang" if status in ("timeout", "memory") else "crash")
                msg = {"timeout": f"no answer in {c.timeout or timeout:.0f} s",
                       "memory": f"worker past {MEMORY_LIMIT >> 30} GiB RSS (runaway)",
                       "died": f"worker died (exit {rc})"}[status]
                res = {"id": c.id, "area": c.area, "description": c.desc, "outcome": outcome,
                       "message": msg, "seconds": round(time.perf_counter() - t, 2)}
            results.append(res)
            print(f"[{i:3d}/{len(cases)}] {res['outcome']:8s} {c.id}: "
                  f"{res['message'][:110]}", flush=True)
        if child:
            child.stop()
    shutil.rmtree(base, ignore_errors=True)
    return results


OUTCOMES = ["clear", "vague", "silent", "refused", "crash", "hang", "ok", "skipped"]


def table(results: list[dict]) -> str:
    areas = sorted({r["area"] for r in results})
    count = Counter((r["area"], r["outcome"]) for r in results)
    head = f"{'area':12s}" + "".join(f"{o:>8s}" for o in OUTCOMES) + f"{'total':>8s}"
    rows = [head, "-" * len(head)]
    for a in areas + ["ALL"]:
        n = [sum(count[(x, o)] for x in areas) if a == "ALL" else count[(a, o)]
             for o in OUTCOMES]
        rows.append(f"{a:12s}" + "".join(f"{v:8d}" for v in n) + f"{sum(n):8d}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sweep_bad_inputs")
    p.add_argument("--out", default="results.json")
    p.add_argument("--only", action="append", default=None)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--list", action="store_true")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--fd", type=int, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        return worker(Path(a.worker), a.fd)
    cases = [c for c in load_cases() if not a.only or any(c.id.startswith(o) for o in a.only)]
    if a.list:
        for c in cases:
            print(f"{c.id:45s} {c.desc}")
        print(len(cases), "cases")
        return None
    t = time.perf_counter()
    out = Path(a.out)
    results = sweep(cases, a.timeout, out.with_suffix(".log"))
    seconds = time.perf_counter() - t
    import datakit
    summary = {"cases": len(results), "seconds": round(seconds, 1),
               "counts": dict(Counter(r["outcome"] for r in results)),
               "datakit": str(Path(datakit.__file__).parent),
               "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                        capture_output=True, text=True).stdout.strip()}
    out.write_text(json.dumps({"summary": summary, "results": results}, indent=1) + "\n")
    print(table(results))
    print(f"{len(results)} cases in {seconds:.0f} s; results in {out}")
    return None


if __name__ == "__main__":  # run the imported module, whose CASES the case files fill
    from benchmarks.sweep_bad_inputs import main as _main
    _main()
