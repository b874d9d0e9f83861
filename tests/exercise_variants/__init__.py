"""The route's exercises answered as a learner would: correct variants and plausible wrong ones.

One module per notebook (``nb01`` ... ``nb10``) defines ``CASES``: for each write or debug
exercise (``"01.4"``), a :class:`Case` with the checker its notebook declares, the inputs
(``setup``), the check the notebook runs (``check``, an expression of ``answer``), and answers
as source code. tests/test_exercise_variants.py runs them all: every correct variant accepted,
every wrong one refused (with the words it must say). ``python -m tests.exercise_variants``
prints the counts.

A variant that is one expression binds ``answer`` to it; a block of statements binds
``answer`` itself (``def answer(...)`` for a function the checker calls). ``setup``,
``check`` and the variants run in one namespace that has ``tf``, ``np``, ``Path`` and
``exercises`` (``datakit.exercises``).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Case", "Verdict", "all_cases", "judge"]


@dataclass
class Case:
    checker: str  # as declared in the notebook: a registered name, "compare" or "plain"
    setup: str  # the notebook's inputs, run once
    check: str  # an expression of ``answer``: its bool() is the verdict
    correct: list[str] = field(default_factory=list)
    wrong: list[str | tuple[str, str]] = field(default_factory=list)  # (source, words said)


@dataclass
class Verdict:
    source: str
    expected: bool  # True: a correct variant
    accepted: bool | None  # None: the variant or the check raised
    said: str  # str() of the check's result, or the error
    words: str = ""  # what a refusal must say

    @property
    def fair(self) -> bool:
        if self.accepted is None:
            return False
        if self.expected:
            return self.accepted
        return not self.accepted and self.words.lower() in self.said.lower()


def _namespace() -> dict:
    import numpy as np
    import tensorflow as tf

    from datakit import exercises
    return {"tf": tf, "np": np, "Path": Path, "exercises": exercises}


def _bind(source: str, ns: dict) -> None:
    try:
        ast.parse(source, mode="eval")
    except SyntaxError:
        exec(compile(source, "<variant>", "exec"), ns)
    else:
        ns["answer"] = eval(compile(source, "<variant>", "eval"), ns)


def judge(case: Case) -> list[Verdict]:
    """Every variant of ``case`` run through its check."""
    base = _namespace()
    exec(compile(case.setup, "<setup>", "exec"), base)
    verdicts = []
    variants = [(s, True, "") for s in case.correct] + [
        (w, False, "") if isinstance(w, str) else (w[0], False, w[1]) for w in case.wrong]
    for source, expected, words in variants:
        ns = dict(base)
        try:
            _bind(source, ns)
            result = eval(compile(case.check, "<check>", "eval"), ns)
            verdicts.append(Verdict(source, expected, bool(result), str(result), words))
        except Exception as error:  # the checker must answer, not raise
            verdicts.append(Verdict(source, expected, None,
                                    f"{type(error).__name__}: {error}", words))
    return verdicts


def all_cases() -> dict[str, Case]:
    """Every notebook module's cases, by exercise (``"01.4"``)."""
    cases: dict[str, Case] = {}
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("nb"):
            cases.update(importlib.import_module(f"{__name__}.{module.name}").CASES)
    return dict(sorted(cases.items()))

