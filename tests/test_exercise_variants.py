"""Each route exercise's checker judges fairly: every correct variant of the answer
accepted, every plausible wrong answer refused with a message that names what differs
(tests/exercise_variants/ holds them, one module per notebook)."""

from __future__ import annotations

import pytest

from tests.exercise_variants import all_cases, judge

CASES = all_cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_checker_accepts_every_correct_variant_and_refuses_every_wrong_one(name):
    case = CASES[name]
    assert case.correct and case.wrong, f"{name}: needs correct and wrong variants"
    unfair = [(v.source.splitlines()[0], "correct" if v.expected else "wrong", v.said)
              for v in judge(case) if not v.fair]
    assert not unfair, f"{name}: {len(unfair)} unfair verdict(s): {unfair}"
