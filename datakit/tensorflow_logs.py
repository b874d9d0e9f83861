"""Quiet TensorFlow's start-up lines, when you ask: :func:`quiet_tensorflow`.

``import datakit`` changes nothing of yours: no environment variable, no TensorFlow
option. The notebooks call ``datakit.quiet_tensorflow()`` in their setup cell, before
``import tensorflow``, so that their first screen is the lesson rather than a dozen lines
of TensorFlow's C++ logs (written straight to the process's standard error, which
Jupyter shows: ``TF_CPP_MIN_LOG_LEVEL`` alone does not hide those written before
TensorFlow's logging starts).

What it hides and what it keeps:

- hidden: TensorFlow's ``I`` (information) lines at start-up, the banner about
  ``absl::InitializeLog()``, the list of CPU instructions the binary was not built for,
  and, on a machine with no NVIDIA driver, the ``failed call to cuInit`` error (it says
  the same as "Could not find cuda drivers": there is no GPU here);
- kept: every error TensorFlow writes at start-up, and the warnings it writes before its
  log level applies; on a machine with an NVIDIA driver where TensorFlow finds no GPU,
  its "Cannot dlopen some GPU libraries" warning, which names what to install (the
  quiet level hides it, so a fresh Python is asked for it);
- after start-up, C++ warnings (``TF_CPP_MIN_LOG_LEVEL=2``, unless you set the variable
  yourself): tf.data's "did not fully read the dataset being cached" and the like, which
  the notebooks show and explain where they matter;
- oneDNN: TensorFlow's oneDNN CPU kernels stay on, unless you ask
  ``quiet_tensorflow(onednn=False)`` (the same as setting ``TF_ENABLE_ONEDNN_OPTS=0``
  before TensorFlow loads). Turn them off to measure memory: with them on, TensorFlow
  keeps freed tensors in a pool of its own, so a process's RSS no longer shows what a
  pipeline holds (a shuffle buffer of 118 MB measured on top of earlier cells grew RSS
  by less than 10 MB here). The memory notebooks (08, 09, 19) do so; sums may then
  differ in the last digits.

A process of the kit's own that only builds and runs ``tf.data`` pipelines (a
checkpoint's resume) imports TensorFlow with :func:`import_tensorflow_lean`: without what
TensorFlow loads for its other APIs, about a third of its start. (A tf.data service
server, which builds no pipeline, loads less still: ``datakit.cluster.serve``.)

This module imports nothing from the kit, and TensorFlow only inside the calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator

__all__ = ["quiet_tensorflow"]

#: A line TensorFlow's C++ logging writes: level letter, date, time, thread, file:line.
LOG_LINE = re.compile(r"^([IWEF])\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] ")
#: Start-up lines that say nothing a learner can act on (beside the ``I`` lines).
NOISE = re.compile(r"^WARNING: All log messages before absl::InitializeLog\(\) is called"
                   r"|^To enable the following instructions: .* rebuild TensorFlow")
#: The driver's own error on a machine with no NVIDIA driver: no GPU, said once more.
NO_DRIVER = re.compile(r"failed call to cuInit")


def quiet_tensorflow(*, onednn: bool = True) -> bool:
    """Load TensorFlow without its start-up chatter; call it before ``import tensorflow``.

    Returns True when it loaded TensorFlow, False when TensorFlow was already loaded
    (its start-up lines are then already written: restart the kernel and call this
    first). Sets ``TF_CPP_MIN_LOG_LEVEL=2`` unless the variable is set; see the
    module's text for what is hidden and what is kept. ``onednn=False`` turns TensorFlow's
    oneDNN CPU kernels off (``TF_ENABLE_ONEDNN_OPTS=0``), for RSS to count what a pipeline
    holds.

    >>> import datakit
    >>> datakit.quiet_tensorflow() in (True, False)
    True
    """
    if not isinstance(onednn, bool):
        raise TypeError(f"onednn={onednn!r}: pass True or False")
    if "tensorflow" in sys.modules:
        return False
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if not onednn:  # asked for: RSS then counts what is held (see the module's text)
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    driver = _nvidia_driver_present()
    kept: list[str] = []
    try:
        with _filtered_stderr(driver, kept):
            import tensorflow as tf
            gpus = tf.config.list_physical_devices("GPU")  # the CUDA probe writes now
    finally:  # written even when TensorFlow fails to load: its own words may say why
        sys.stderr.write("".join(kept))
    if driver and not gpus and tf.sysconfig.get_build_info().get("is_cuda_build"):
        _why_no_gpu()
    return True


def _nvidia_driver_present() -> bool:
    """Whether the NVIDIA driver's library loads here (no GPU without it)."""
    if sys.platform == "darwin":
        return False  # no CUDA on macOS
    try:
        ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
    except OSError:
        return False
    return True


@contextlib.contextmanager
def _filtered_stderr(driver: bool, kept: list[str]) -> Iterator[None]:
    """Send the process's standard error (file descriptor 2) to a file while the block
    runs, then add to ``kept`` the lines worth keeping (Python's ``sys.stderr`` is
    flushed first, so its lines stay in order)."""
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace")
            kept += [line for line in text.splitlines(keepends=True)
                     if _worth_keeping(line, driver)]


def _worth_keeping(line: str, driver: bool) -> bool:
    level = LOG_LINE.match(line)
    if NOISE.search(line) or (level and level.group(1) == "I"):
        return False
    return driver or not NO_DRIVER.search(line)


def _why_no_gpu() -> None:
    """An NVIDIA driver, a CUDA build of TensorFlow, no GPU: TensorFlow's own warning says
    which library it could not load. It is a warning, hidden by the quiet level, so ask a
    fresh Python for it with every level shown, and write TensorFlow's words."""
    code = "import tensorflow as tf; tf.config.list_physical_devices('GPU')"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")
    try:
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=300)
    except (subprocess.TimeoutExpired, OSError) as e:  # TensorFlow itself is loaded: go on
        sys.stderr.write(f"TensorFlow found no GPU on this machine, though it has an NVIDIA "
                         f"driver; asking it why failed ({type(e).__name__}): run "
                         f"python -c \"{code}\" with TF_CPP_MIN_LOG_LEVEL=0 to see.\n")
        return
    said = [line for line in run.stderr.splitlines(keepends=True)
            if (level := LOG_LINE.match(line)) and level.group(1) != "I"]
    sys.stderr.write("TensorFlow found no GPU on this machine, though it has an NVIDIA "
                     "driver. TensorFlow says:\n" + "".join(said or run.stderr[-2000:]))


#: What ``import tensorflow`` loads for other APIs than tf.data, when installed: JAX (for
#: TFLite's converter) and Keras' optimizers (so a SavedModel finds them registered; they
#: bring Keras, pandas, SciPy's sparse matrices and Matplotlib along).
NOT_FOR_TF_DATA = ("jax", "keras.src.optimizers")


def import_tensorflow_lean() -> None:
    """Import TensorFlow without :data:`NOT_FOR_TF_DATA`, in a fresh process of the kit's
    own that only builds and reads pipelines (a checkpoint's resume; a tf.data service
    server when its server library does not load alone; never a learner's process).

    They are about a third of TensorFlow's start (4.5 CPU s against 2.9 here), so each such
    process starts that much sooner. They are kept out during the import only (TensorFlow
    skips each when it is missing, as on a machine without JAX): code that uses
    ``tf.keras`` or imports JAX later loads them as usual.
    """
    held = [name for name in NOT_FOR_TF_DATA if name not in sys.modules]
    for name in held:
        sys.modules[name] = None  # type: ignore[assignment]  # "import name" fails for now
    try:
        import tensorflow  # noqa: F401
    finally:
        for name in held:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
