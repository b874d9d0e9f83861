"""Every write and debug exercise of the route (notebooks 01-10) names its checker, calls it in
its solution, and has its correct and wrong answers in tests/exercise_variants/.

``python -m tests.course --exercises`` lists them with their checkers."""

from __future__ import annotations

import pytest

from datakit.exercises.checks import exercise_names
from tests.course import checked_exercises
from tests.exercise_variants import all_cases

EXERCISES = dict(checked_exercises())
PLAIN = ("compare", "plain")


def test_the_route_has_write_and_debug_exercises():
    assert len(EXERCISES) >= 30, sorted(EXERCISES)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_each_write_and_debug_exercise_names_its_checker_and_uses_it(name):
    e = EXERCISES[name]
    assert e.checker, (f"{name}: its solution's first code cell names no checker "
                       '(metadata {"datakit": {"checker": ...}})')
    assert e.checker in PLAIN or e.checker in exercise_names(), \
        f"{name}: checker {e.checker!r} is neither {PLAIN} nor one of {exercise_names()}"
    code = "\n".join(c.source for c in e.solution_code)
    calls = {"compare": ["compare("], "plain": ["assert ", "print("]}.get(
        e.checker, [f'check("{e.checker}"'])
    assert any(call in code for call in calls), f"{name}: the solution does not call {calls}"
    case = all_cases().get(name)
    assert case is not None, f"{name}: no case in tests/exercise_variants/nb{name[:2]}.py"
    assert case.checker == e.checker, f"{name}: the notebook says {e.checker!r}, the case " \
                                      f"{case.checker!r}"
