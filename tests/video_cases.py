"""Sizes of the tiny videos the video tests share (16 px, 12 to 24 frames, seed 3).

The ``videos`` and ``mp4_dir`` fixtures that make them live in conftest.py.
"""

SIZE, MIN_F, MAX_F, N = 16, 12, 24, 12
KW = dict(size=SIZE, min_frames=MIN_F, max_frames=MAX_F, seed=3)
