"""What the benchmark scripts share: a median timer and the ten-clip timeline."""

from __future__ import annotations

import statistics
import time

# ten real clips of different kinds, the dance cut to its first 900 frames:
# about 3,000 output frames once each next clip overlaps its previous one
TIMELINE = (
    ("bandai1/walk_normal_001", None),
    ("bandai1/kick_normal_001", None),
    ("bandai2/run_normal_001", None),
    ("bandai1/punch_normal_001", None),
    ("bandai2/walk-turn-left_normal_001", None),
    ("bandai1/slash_normal_001", None),
    ("bandai2/walk_normal_001", None),
    ("bandai1/bow_normal_001", None),
    ("bandai1/dance-short_normal_001", 900),
    ("bandai1/slash_normal_002", None),
)


def timed(fn, repeat: int = 5) -> float:
    """Median wall time of ``repeat`` calls of ``fn``, seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
