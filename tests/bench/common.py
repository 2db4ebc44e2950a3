"""What the benchmark scripts share: the clips' folder and loader, the placements of
the speed benchmark, a median timer and the ten-clip timeline."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.bvh import read_bvh  # noqa: E402
from core.motion import Motion  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap"
MISSING = ("the benchmarks need the Bandai Namco Research Motion Dataset at ../shared/mocap (see the README, "
           "'Data for tests and benchmarks')")


def require_capture(*parts: str) -> Path:
    """``MOCAP/parts...`` when it exists; else end the benchmark with a message naming the folder and the dataset
    (a traceback from deep inside a benchmark says neither)."""
    path = MOCAP.joinpath(*parts)
    if not path.exists():
        sys.exit(f"no real motion capture at {path}: {MISSING}")
    return path

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
# sixteen: TIMELINE's ten and six more, the timeline the warnings benchmarks count warnings on
# (tests/bench/gap_warnings.py in core, gap_warnings_blender.py in Blender), as the issue counted 16 strips
SIXTEEN = TIMELINE + (
    ("bandai1/guide_normal_001", None), ("bandai1/walk-left_normal_001", None),
    ("bandai2/walk-turn-right_normal_001", None), ("bandai1/call_normal_001", None),
    ("bandai1/respond_normal_001", None), ("bandai1/byebye_normal_001", None),
)


def load(name: str) -> Motion:
    """A clip of ../shared/mocap by ``"bandai1/walk_normal_001"``, lengths in cm (unit 0.01 m)."""
    return read_bvh(MOCAP / f"{name}.bvh", unit=0.01)


def short(name: str) -> str:
    """A clip's label: ``"bandai1/walk_sad_001"`` -> ``walk_sad``, ``"bandai1/bow_normal_001"`` -> ``bow``."""
    return name.split("/")[-1].removesuffix("_001").removesuffix("_normal")


def core_range(motion: Motion, margin_s: float) -> tuple[int, int]:
    """The clip without ``margin_s`` seconds at either end (at most a quarter of it each)."""
    margin = min(int(round(margin_s * motion.fps)), motion.n_frames // 4)
    return margin, motion.n_frames - 1 - margin


def next_start(prev: Motion, overlap_s: float) -> int:
    """Output frame of the next clip's frame 0 when the previous clip starts at 0 and they overlap ``overlap_s``."""
    return prev.n_frames - int(round(overlap_s * prev.fps))


def timed(fn, repeat: int = 5) -> float:
    """Median wall time of ``repeat`` calls of ``fn``, seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
