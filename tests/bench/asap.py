"""As soon as possible (2014 section 5): for W = 0 .. 1, the median delay from one core's end
to the next core's start and the median acceleration ratio of the gap (core.quality:
accel / accel_untouched), over real pairs, beside the naive "after the previous clip ends".

Also, measured as the feet-planted issue measures (core.quality, tests/bench/quality.py):
the median skate over the median of the untouched clips on the same frames (gaps where
they have contact frames), the share of gaps above 2x in skate and acceleration, against
that issue's targets; and on how many pairs a higher W raised the acceleration peak
(the peak over the two clips' 99th percentile, fixed per pair: at all, beyond the
measure's float noise, as issue 11 asks "lowers or keeps"; by over 1 % and 5 %) or
shortened the delay, naming the steps, beside the same count with the clip at one start for every W
(after the previous clip ends): what W does to the ranges at one start, which the
choice of start can only work around.

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
    """(delay s, accel ratio, skate, skate untouched) of the pair synthesized with ``nxt`` at its
    start; skates NaN where the untouched clips have no contact frames in the gap."""
    result = synthesize([prev, nxt], responsiveness=w)
    (pair,) = result.plan.pairs
    q = pair.quality
    delay = (nxt.start + nxt.core_range[0] - prev.start - prev.core_range[1]) / prev.motion.fps
    skates = (q.skate, q.skate_untouched) if q.skate is not None and q.skate_untouched else (np.nan, np.nan)
    return (delay, q.accel / q.accel_untouched, *skates, q.accel, q.pop if q.pop is not None else np.nan)


def summary(rows: np.ndarray) -> str:
    """Median delay, median accel ratio, skate median over untouched median, and the shares above 2x."""
    skated = rows[~np.isnan(rows[:, 2])]
    skate = np.median(skated[:, 2]) / np.median(skated[:, 3])
    above_skate = np.mean(skated[:, 2] > 2.0 * skated[:, 3])
    return (f"{np.median(rows[:, 0]):7.2f} {np.median(rows[:, 1]):7.2f} {np.mean(rows[:, 1] > 2.0):6.0%} "
            f"{skate:7.2f} {above_skate:6.0%}")


def main(levels=(0.0, 0.25, 0.5, 0.75, 1.0)):
    motions = {n: read_bvh(MOCAP / f"{n}.bvh") for n in NAMES}
    pairs = [(a, b) for a in NAMES for b in NAMES if a != b]
    print(f"{len(pairs)} pairs of {len(NAMES)} clips, cores 15 frames in from each end")
    head = f"{'delay s':>7} {'accel':>7} {'>2x':>6} {'skate':>7} {'>2x':>6}"
    print(f"{'':5} {'as soon as possible':^37}   {'after the previous clip ends (naive)':^37}")
    print(f"{'W':>5} {head}   {head}")
    curves, naive_curves = [], []
    for w in levels:
        asap, naive = [], []
        for a, b in pairs:
            prev = with_core(motions[a], "prev")
            start = as_soon_as_possible([prev], with_core(motions[b], "next"), responsiveness=w)
            asap.append(figures(prev, with_core(motions[b], "next", start), w))
            naive.append(figures(prev, with_core(motions[b], "next", prev.end + 1), w))
        asap, naive = np.array(asap), np.array(naive)
        curves.append(asap)
        naive_curves.append(naive)
        print(f"{w:5.2f} {summary(asap)}   {summary(naive)}")
    print("accel: median of the gap's peak over the untouched clips' on the same frames; skate: median over the "
          "untouched clips' median (gaps where they touch the floor); >2x: share of gaps above twice the untouched")
    print("feet-planted targets: skate at most 1.2x, at most 10 % of gaps above 2x; accel at most 1.2x, at most "
          "5 % above 2x")
    short = [f"{a.split('_')[0]}>{b.split('_')[0]}" for a, b in pairs]
    for label, curve in (("as soon as possible", curves), ("after the previous clip ends, one start for every W", naive_curves)):
        curve = np.array(curve)  # (W, pair, figure)
        later = np.diff(curve[:, :, 0], axis=0)
        rise = np.diff(curve[:, :, 4], axis=0) / curve[:-1, :, 4]
        # the worst joint's peak too (core.quality's pop): a knee that snaps hides in the mean
        pop_rise = np.diff(curve[:, :, 5], axis=0) / curve[:-1, :, 5]
        either = np.fmax(rise, pop_rise)
        shortened = np.any(later < -1e-9, axis=0)
        print(f"raising W by 0.25, {label}: delay shortened in {np.sum(shortened)} of {len(pairs)} pairs; "
              "acceleration peak raised " + ", ".join(
                  f"{what} in {np.sum(np.any(rise > bound, axis=0))} of {len(pairs)} pairs "
                  f"({np.sum(rise > bound)} of {rise.size} steps)"
                  for what, bound in (("at all (over 1e-9: the measure of one plan repeats to 1e-13)", 1e-9), ("by over 1 %", 0.01),
                                      ("by over 5 %", 0.05)))
              + f"; the peak or the worst joint's (pop) raised by over 5 % in {np.sum(np.any(either > 0.05, axis=0))} "
              f"of {len(pairs)} pairs (legs issue: at most 2 %)")
        steps = [f"{short[p]} W {levels[i]:g}->{levels[i + 1]:g}: "
                 + (f"delay {later[i, p]:+.2f} s, " if later[i, p] < -1e-9 else "") + f"peak {rise[i, p]:+.1%}"
                 for i, p in zip(*np.nonzero((later < -1e-9) | (rise > 0.01)))]
        print("  shortened or over 1 %: " + ("; ".join(steps) or "none"))


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    main()
