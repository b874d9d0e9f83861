# About 360 lines on purpose: the one home of every argument rule the readers share (counts,
# seeds, flags, ordered lists, sizes that must fit in memory, the interleave rule), so that a
# rule is never written twice; each is a few lines.
"""The argument rules every reader and the glass box share, written once.

A count is an ``int`` (a ``bool`` is not); a wrong type raises ``TypeError``,
a bad value ``ValueError`` with the fix:

>>> check_count("batch_size", 32)
32
>>> check_count("num_parallel_calls", AUTOTUNE, autotune=True)
-1
>>> check_count("batch_size", 0)
Traceback (most recent call last):
    ...
ValueError: batch_size=0 is invalid: pass an int >= 1.
>>> check_count("cycle_length", 2.0, none=True, autotune=True)
Traceback (most recent call last):
    ...
TypeError: cycle_length must be an int, None or tf.data.AUTOTUNE, got 2.0

The interleave rule (:func:`interleave_lengths`) resolves ``None`` and
``AUTOTUNE`` to the cycle tf.data would use, and refuses more parallel calls
than open inputs:

>>> interleave_lengths(4, 2, num_parallel_calls=2)
(4, 2, 2)
>>> interleave_lengths(2, num_parallel_calls=3)  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
    ...
ValueError: num_parallel_calls=3 is more than cycle_length=2: at most one call per open input; lower
it or pass tf.data.AUTOTUNE.

This module sits at the bottom of the import graph: it imports nothing from
the kit, nor TensorFlow (``AUTOTUNE`` has ``tf.data.AUTOTUNE``'s value).
"""

from __future__ import annotations

import math
import os
from typing import Any, Literal, overload

import numpy as np

from datakit.core.cores import affinity_cores

__all__ = ["AUTOTUNE", "default_cycle_length"]

#: Same value as ``tf.data.AUTOTUNE``.
AUTOTUNE = -1

#: The one default of the row and clip readers' final prefetch: tf.data's own choice of
#: depth, which follows what the consumer takes.
PREFETCH = AUTOTUNE

#: The largest shuffle buffer TensorFlow takes (a larger one crashes it).
MAX_SHUFFLE_BUFFER = 2**31 - 1


def check_int(name: str, value: Any) -> int:
    """``value`` as an ``int``; ``TypeError`` unless it is one (``bool`` is not).

    >>> check_int("seed", np.int64(3))
    3
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    return int(value)


@overload
def check_seed(value: None, *, name: str = "seed") -> None: ...
@overload
def check_seed(value: Any, *, name: str = "seed") -> int: ...
def check_seed(value: Any, *, name: str = "seed") -> int | None:
    """The one seed rule: ``None`` (TensorFlow draws one) or an int that fits in int64.

    TensorFlow stores a seed as an int64 and quietly folds a larger Python int
    into one, so two different seeds could give one order: refuse them.

    >>> check_seed(-1), check_seed(None) is None
    (-1, True)
    >>> check_seed(2**64)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
        ...
    ValueError: seed=18446744073709551616 is outside the int64 range TensorFlow stores seeds in
    (-2**63 to 2**63 - 1): pass a smaller int, e.g. seed % 2**63.
    """
    if value is None:
        return None
    seed = check_int(name, value)
    if not -2**63 <= seed < 2**63:
        raise ValueError(f"{name}={seed} is outside the int64 range TensorFlow stores seeds in "
                         f"(-2**63 to 2**63 - 1): pass a smaller int, e.g. {name} % 2**63.")
    return seed


def check_fits_in_memory(what: str, nbytes: float, *, fix: str) -> None:
    """Refuse, before any work, an output of ``nbytes`` larger than this machine's memory.

    ``what`` is the call as the user wrote it; ``fix`` says how to make it smaller.

    >>> check_fits_in_memory("shuffled_orders(10, 10, runs=10)", 800, fix="pass fewer runs")
    >>> check_fits_in_memory("f(n=10**12)", 8e12, fix="pass a smaller n")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: f(n=10**12) would build 8,000,000,000,000 bytes (8000 GB), more ...
    """
    total = _physical_memory()
    if total and nbytes > total:
        raise ValueError(f"{what} would build {nbytes:,.0f} bytes ({nbytes / 1e9:.0f} GB), more "
                         f"than this machine's {total / 1e9:.1f} GB of memory: {fix}.")


def _physical_memory() -> int:
    """Bytes of RAM (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # Windows: no sysconf
        try:
            import psutil
        except ImportError:
            return 0
        return int(psutil.virtual_memory().total)


# Two signatures for the type checker: without ``none=True`` the result is never None.
@overload
def check_count(name: str, value: Any, minimum: int = 1, *, none: Literal[False] = False,
                autotune: bool = False, fix: str = "") -> int: ...


@overload
def check_count(name: str, value: Any, minimum: int = 1, *, none: bool,
                autotune: bool = False, fix: str = "") -> int | None: ...


def check_count(name: str, value: Any, minimum: int = 1, *, none: bool = False,
                autotune: bool = False, fix: str = "") -> int | None:
    """Check "an int >= ``minimum``, or ``None`` (if ``none``), or ``AUTOTUNE`` (if ``autotune``)".

    Args:
        name: the argument's name, for the message.
        value: the value passed.
        minimum: the smallest int allowed.
        none: whether ``None`` is allowed (returned as is).
        autotune: whether ``AUTOTUNE`` (-1) is allowed (returned as is).
        fix: what the message says after "is invalid: " (default: the ints allowed).

    Raises:
        TypeError: ``value`` is not an int (nor an allowed ``None``).
        ValueError: it is below ``minimum`` (and not an allowed ``AUTOTUNE``).

    >>> check_count("shuffle_buffer_size", None, 0, none=True) is None
    True
    >>> check_count("batch_size", 0, fix="a batch holds at least one element: pass 1 or more")
    Traceback (most recent call last):
        ...
    ValueError: batch_size=0 is invalid: a batch holds at least one element: pass 1 or more.
    """
    extra = [w for w, ok in (("None", none), ("tf.data.AUTOTUNE", autotune)) if ok]
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        kinds = ", ".join(["an int"] + extra[:-1]) + (f" or {extra[-1]}" if extra else "")
        raise TypeError(f"{name} must be {kinds}, got {value!r}")
    n = int(value)
    if n < minimum and not (autotune and n == AUTOTUNE):
        alts = ", ".join([f"an int >= {minimum}"] + extra[:-1]) + (
            f" or {extra[-1]}" if extra else "")
        raise ValueError(f"{name}={n} is invalid: {fix or 'pass ' + alts}.")
    return n


def check_seconds(name: str, value: Any, *, positive: bool = False,
                  func: str | None = None) -> float:
    """``value`` as a duration: a finite number of seconds >= 0 (> 0 if ``positive``).

    ``bool`` and text are refused; ``func`` names the caller in the message.

    >>> check_seconds("step_time", 0.01), check_seconds("open_time", 0)
    (0.01, 0.0)
    >>> check_seconds("seconds", float("nan"))
    Traceback (most recent call last):
        ...
    ValueError: seconds=nan is invalid: pass seconds >= 0 (a finite number).
    >>> check_seconds("budget_s", "5", func="tune")
    Traceback (most recent call last):
        ...
    TypeError: tune(): budget_s must be a number of seconds, got '5'
    """
    where = f"{func}(): " if func else ""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where}{name} must be a number of seconds, got {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0 or (positive and seconds == 0):
        raise ValueError(f"{where}{name}={seconds} is invalid: pass seconds "
                         f"{'> 0' if positive else '>= 0'} (a finite number).")
    return seconds


def check_flag(name: str, value: Any) -> bool:
    """The one yes/no rule: ``True`` or ``False`` (a numpy bool too); ``"yes"``, ``"no"`` or
    ``1`` are refused, since ``"no"`` is truthy and would switch the option on.

    >>> check_flag("trace", False)
    False
    >>> check_flag("skip_header", "no")
    Traceback (most recent call last):
    ...
    TypeError: skip_header must be True or False, got 'no'
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_flags(**flags: Any) -> None:
    """:func:`check_flag` on each yes/no argument of a call, by name: one line where a
    reader or a writer checks its arguments, before any file opens.

    >>> check_flags(shuffle=True, seek="no")
    Traceback (most recent call last):
    ...
    TypeError: seek must be True or False, got 'no'
    """
    for name, value in flags.items():
        check_flag(name, value)


def check_number(name: str, value: Any, *, positive: bool = False, fix: str = "") -> float:
    """``value`` as a finite float (> 0 if ``positive``); ``bool`` and text are refused.

    >>> check_number("label_scale", 2, positive=True)
    2.0
    >>> check_number("label_scale", "2")
    Traceback (most recent call last):
    ...
    TypeError: label_scale must be a number, got '2'
    >>> check_number("fractions[1]", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: fractions[1]=nan is invalid: pass a finite number.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x) or (positive and x <= 0):
        raise ValueError(f"{name}={x} is invalid: "
                         f"{fix or 'pass a finite number' + (' > 0' if positive else '')}.")
    return x


def check_ordered(name: str, value: Any, what: str = "values") -> list:
    """``value`` as a list, once it is an ordered sequence (a list, tuple, array or range).

    A set (no order: the result would follow its hash order), a dict, a generator (read
    once, no length) or a lone string is a ``TypeError`` naming ``name``.

    >>> check_ordered("buffer_sizes", (5, 2))
    [5, 2]
    >>> check_ordered("buffer_sizes", {5, 2})  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    TypeError: buffer_sizes must be a list of values, got set: a set has no order, so the
    result's order would follow its hash order; pass a list.
    """
    if isinstance(value, (set, frozenset)):
        why = "a set has no order, so the result's order would follow its hash order"
    elif isinstance(value, dict):
        why = "a dict is not a list (only its keys would be taken)"
    elif isinstance(value, (str, bytes)) or not hasattr(value, "__len__") \
            or not hasattr(value, "__getitem__"):
        why = f"a {type(value).__name__} is not a sequence of {what}"
    else:
        return list(value)
    raise TypeError(f"{name} must be a list of {what}, got {type(value).__name__}: {why}; "
                    "pass a list.")


def check_on_bad(name: str, value: Any) -> str:
    """The one ``on_bad_*`` rule (``on_bad_file``, ``on_bad_line``): ``"raise"`` or ``"skip"``.

    >>> check_on_bad("on_bad_file", "ignore")
    Traceback (most recent call last):
    ...
    ValueError: on_bad_file='ignore': pass 'raise' or 'skip'
    """
    if value not in ("raise", "skip"):
        raise ValueError(f"{name}={value!r}: pass 'raise' or 'skip'")
    return value


def check_shuffle_buffer(value: int, elements: int | None = None, *,
                         what: str = "elements") -> int:
    """A checked shuffle buffer size, capped at the ``elements`` it can ever hold.

    A buffer larger than the elements of an epoch shuffles no better and only
    costs memory; one of ``2**31`` or more crashes TensorFlow, so it is refused.
    ``value`` has been checked as a count already (``check_count``).

    >>> check_shuffle_buffer(10_000, elements=516)
    516
    >>> check_shuffle_buffer(2**31, what="rows")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: shuffle_buffer_size=2147483648: TensorFlow cannot hold more than 2,147,483,647
    elements in a shuffle buffer; pass at most the number of rows (a larger buffer shuffles no
    better).
    """
    if value > MAX_SHUFFLE_BUFFER:
        raise ValueError(f"shuffle_buffer_size={value}: TensorFlow cannot hold more than "
                         f"{MAX_SHUFFLE_BUFFER:,} elements in a shuffle buffer; pass at most the "
                         f"number of {what} (a larger buffer shuffles no better).")
    return value if elements is None else min(value, max(1, elements))


def default_cycle_length(num_parallel_calls: int | None = None) -> int:
    """What ``cycle_length=None`` (AUTOTUNE) becomes in TensorFlow 2.21.

    Sequential interleave: the number of cores. ``num_parallel_calls=n``:
    ``min(n, cores)``. ``num_parallel_calls=AUTOTUNE``: ``ceil(cores / 3)``
    (each cycle slot gets ~3 threads: its own and 2 prefetching the next
    inputs), so on a 2-core machine just 1.

    >>> default_cycle_length(1)
    1
    """
    cores = affinity_cores()  # TensorFlow counts the affinity, not a container's quota
    if num_parallel_calls is None:
        return cores
    if num_parallel_calls == AUTOTUNE:
        return -(-cores // 3)
    return min(int(num_parallel_calls), cores)


def interleave_lengths(cycle_length: int | None, block_length: int | None = None,
                       num_parallel_calls: int | None = None, *,
                       default_cycle: int | None = None,
                       names: tuple[str, str] = ("cycle_length", "num_parallel_calls"),
                       ) -> tuple[int, int, int | None]:
    """The interleave rule: the effective ``(cycle_length, block_length, num_parallel_calls)``.

    Args:
        cycle_length: inputs open at once; ``None`` means ``default_cycle``
            (if given, else AUTOTUNE); ``AUTOTUNE`` means tf.data's choice,
            :func:`default_cycle_length`.
        block_length: elements taken from an input before moving on
            (``None``: 1).
        num_parallel_calls: ``None`` (sequential), an int >= 1 or ``AUTOTUNE``.
            When the cycle was not given explicitly, more calls than the
            resolved cycle are lowered to it (a call per open input).
        default_cycle: what ``cycle_length=None`` means for this reader.
        names: the caller's names for cycle_length and num_parallel_calls,
            for messages (e.g. ``("n_readers", "n_read_threads")``).

    Raises:
        TypeError: an argument is not an int (nor an allowed ``None``).
        ValueError: a value is out of range, or ``num_parallel_calls`` is more
            than an explicit ``cycle_length``.

    >>> interleave_lengths(AUTOTUNE, num_parallel_calls=2)[0] == min(2, affinity_cores())
    True
    >>> interleave_lengths(None, num_parallel_calls=8, default_cycle=4)
    (4, 1, 4)
    """
    cycle_name, calls_name = names
    calls = check_count(calls_name, num_parallel_calls, none=True, autotune=True)
    block = check_count("block_length", block_length, none=True)
    cycle = check_count(cycle_name, cycle_length, none=True, autotune=True)
    block = 1 if block is None else block
    if cycle is None or cycle == AUTOTUNE:
        cycle = (default_cycle if cycle is None and default_cycle is not None
                 else default_cycle_length(calls))
        if calls not in (None, AUTOTUNE) and calls > cycle:
            calls = cycle
        return cycle, block, calls
    if calls not in (None, AUTOTUNE) and calls > cycle:
        raise ValueError(
            f"{calls_name}={calls} is more than {cycle_name}={cycle}: at most one call per "
            "open input; lower it or pass tf.data.AUTOTUNE.")
    return cycle, block, calls
