"""As soon as possible (2014 section 5): for W = 0 .. 1, the median delay from one core's end
to the next core's start and the median acceleration ratio of the gap (core.quality:
accel / accel_untouched), over real pairs, beside the naive "after the previous clip ends".

    .venv/bin/python tests/bench/asap.py
"""

from pathlib import Path
import sys

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.bvh import read_bvh  # noqa: E402
from core.synthesize import Clip, as_soon_as_possible, synthesize  # noqa: E402

MOCAP = Path(__file__).resolve().parents[3] / "shared" / "mocap" / "bandai1"
NAMES = ["walk_normal_001", "bow_normal_001", "kick_normal_001", "punch_normal_001", "run_normal_001",
         "slash_normal_001", "dance-short_normal_001", "guide_normal_001"]


def with_core(motion, name, start=0, margin=15):
    margin = min(margin, motion.n_frames // 4)
    return Clip(motion, start, (margin, motion.n_frames - 1 - margin), name)


def figures(prev, nxt, w):
    """(delay s, accel ratio) of the pair synthesized with ``nxt`` at its start."""
    result = synthesize([prev, nxt], responsiveness=w)
    (pair,) = result.plan.pairs
    delay = (nxt.start + nxt.core_range[0] - prev.start - prev.core_range[1]) / prev.motion.fps
    return delay, pair.quality.accel / pair.quality.accel_untouched


def main():
    motions = {n: read_bvh(MOCAP / f"{n}.bvh") for n in NAMES}
    pairs = [(a, b) for a in NAMES for b in NAMES if a != b]
    print(f"{len(pairs)} pairs of {len(NAMES)} clips, cores 15 frames in from each end")
    print(f"{'W':>5} {'ASAP delay s':>13} {'accel ratio':>12} {'naive delay s':>14} {'accel ratio':>12}")
    for w in (0.0, 0.25, 0.5, 0.75, 1.0):
        asap, naive = [], []
        for a, b in pairs:
            prev = with_core(motions[a], "prev")
            start = as_soon_as_possible([prev], with_core(motions[b], "next"), responsiveness=w)
            asap.append(figures(prev, with_core(motions[b], "next", start), w))
            naive.append(figures(prev, with_core(motions[b], "next", prev.end + 1), w))
        asap, naive = np.array(asap), np.array(naive)
        print(f"{w:5.2f} {np.median(asap[:, 0]):13.2f} {np.median(asap[:, 1]):12.2f} "
              f"{np.median(naive[:, 0]):14.2f} {np.median(naive[:, 1]):12.2f}")


if __name__ == "__main__":
    main()
