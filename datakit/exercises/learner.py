"""An error raised while running or reading your answer, told as yours: what, and on which line.

The line is the last one of your own code in the traceback (a notebook cell, a script),
not TensorFlow's or the kit's; a ``map`` function that forgot its ``return`` is named as
such, before TensorFlow's own words about it ("output_types of 0").
"""

from __future__ import annotations

import linecache
import re
import sys
import sysconfig
import traceback
from pathlib import Path

__all__: list[str] = []

_LIBRARIES = tuple(str(Path(p)) for p in {sysconfig.get_paths()["stdlib"],
                                          sysconfig.get_paths()["purelib"],
                                          sysconfig.get_paths()["platlib"]})
_KIT = str(Path(__file__).resolve().parent.parent)
#: What TensorFlow says when a function given to ``map`` (or ``filter``...) returns None.
_RETURNED_NONE = ("of 0 must be at least minimum 1", "None values not supported",
                  "returned None", "Got <class 'NoneType'>")
#: What PyAV (18.1.1 on) says when a stream is read after its ``with av.open(...)`` closed.
_CLOSED_CONTAINER = "Container is not open"


def _is_yours(filename: str) -> bool:
    if filename.startswith("<frozen") or "site-packages" in filename or \
            "dist-packages" in filename or "__autograph_generated_file" in filename:
        return False
    resolved = str(Path(filename).resolve()) if not filename.startswith("<") else filename
    return not resolved.startswith(_LIBRARIES) and not resolved.startswith(_KIT) \
        and not resolved.startswith(sys.base_prefix + "/lib")


#: TensorFlow's own report of a traced function's line: ``File "...", line 2, in f *``.
_USER_CODE = re.compile(r'File "[^"]*", line (\d+), in (\S+)[ *]*\n\s*(.*)')


def your_line(error: BaseException) -> str:
    """``" (your line 3: `return x.numpy()`)"`` for the last frame of your code, or ``""``.

    A function TensorFlow traced (``map``'s) runs as generated code: its line is the one
    TensorFlow names "in user code"."""
    traced = _USER_CODE.findall(str(error)) if "in user code" in str(error) else []
    if traced:
        line, name, code = traced[-1]
        return _where(int(line), name, code.strip())
    frames = [f for f in traceback.extract_tb(error.__traceback__) if _is_yours(f.filename)]
    if not frames:
        return ""
    frame = frames[-1]
    code = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
    return _where(frame.lineno or 0, frame.name, code)


def _where(line: int, name: str, code: str) -> str:
    where = f"your line {line}" + (f" (in {name})" if name not in ("<module>", "<lambda>")
                                   else "")
    return f" ({where}: `{code}`)" if code else f" ({where})"


def _plain_words(error: BaseException) -> str:
    """TensorFlow's message without its node names and iterator chain (for a traced
    function, its last line: the error itself)."""
    if "in user code" in str(error):
        return str(error).strip().splitlines()[-1].strip()
    words = re.sub(r"\{\{.*?\}\}|\[\[.*?\]\]|\[Op:[^\]]*\]|\s*name:\s*$", "",
                   " ".join(str(error).split()))
    words = re.sub(r"Error in user-defined function passed to (\w+?)Dataset:\d+ transformation "
                   r"with iterator: (Iterator::\S+: )?",
                   lambda m: f"in your `{m.group(1).lower().replace('parallel', '')}` "
                             "function: ", words).strip()
    return words + " (an empty string)" if words.endswith("string:") else words


def told_as_yours(error: BaseException, doing: str) -> str:
    """One refusal line for ``error``, raised while ``doing`` (e.g. "running your function")."""
    words = _plain_words(error).removeprefix(f"{type(error).__name__}: ")
    if any(w in str(error) for w in _RETURNED_NONE):
        return (f"not yet: {doing} failed{your_line(error)}: a function you gave to `map` "
                "(or `filter`, `interleave`, `apply`) returned None: did it forget to "
                "`return` its result?")
    if _CLOSED_CONTAINER in str(error):
        words += (": read the stream's facts (`stream.time_base`, `stream.average_rate`...) "
                  "inside `with av.open(...)`, before the file closes")
    return (f"not yet: {doing} raised {type(error).__name__}{your_line(error)}: {words[:300]}"
            " (the error is in your code: fix it and run the check again)")
