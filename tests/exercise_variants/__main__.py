"""python -m tests.exercise_variants [01.4 ...]: how many answers each checker judges fairly."""

import sys

from tests.exercise_variants import all_cases, judge

chosen = all_cases()
if sys.argv[1:]:
    chosen = {k: v for k, v in chosen.items() if k in sys.argv[1:]}
totals = {True: [0, 0], False: [0, 0]}
for name, case in chosen.items():
    for v in judge(case):
        totals[v.expected][0] += v.fair
        totals[v.expected][1] += 1
        if not v.fair:
            print(f"{name}: {'refused' if v.expected else 'accepted'} "
                  f"{v.source.splitlines()[0][:70]!r}: {v.said.splitlines()[0][:120]}")
print(f"correct variants accepted: {totals[True][0]} of {totals[True][1]}; "
      f"wrong answers refused: {totals[False][0]} of {totals[False][1]}")
