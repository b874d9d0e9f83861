"""Side-by-side speed and memory comparisons of CSV input pipelines (``make bench``).

Run ``python -m benchmarks`` (or ``make bench``) from the repository root.
It generates ~1,000,000 CSV rows in 20 files under ``benchmarks/work/``
(git-ignored, fixed seed), runs every contender in its own process, several
rounds, and writes ``benchmarks/RESULTS.md``. Never part of ``make test``.
"""
