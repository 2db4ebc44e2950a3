"""What a hop gains over the direct transition, against the cost's own resolution in time (core.hops.HOP_MIN_GAIN).

Run by hand (not collected as a test):  .venv/bin/python tests/bench/hop_gain.py

For three source -> destination pairs of real clips (../shared/mocap/bandai1, a library of eight,
blends of 0.5 s, eq. (5)'s default weight, the destination's frame k at source frame k + 30),
every trigger frame's table is computed twice: with HOP_MIN_GAIN and with no threshold (the naive
rule: any gain inserts a hop). Printed per pair:

  D step    the median relative change of the direct transition's D when the trigger moves by
            one frame (|D(t+1) - D(t)| / D(t)): how finely the cost resolves in time;
  gains     the hop's relative gain (D - S - wR) / D at the triggers where no threshold inserts one
            (10th percentile, median);
  hops      how many triggers insert a hop with no threshold and with HOP_MIN_GAIN: the hops
            dropped are those gaining less than a one-frame move of the trigger typically changes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core import hops  # noqa: E402
from core.bvh import read_bvh  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap" / "bandai1"
LIBRARY = ["bow_normal_001", "bye_normal_001", "byebye_normal_001", "call_normal_001", "kick_normal_001",
           "punch_normal_001", "slash_normal_001", "walk_normal_001"]
PAIRS = [("walk_normal_001", "bow_normal_001"), ("kick_normal_001", "punch_normal_001"),
         ("slash_normal_001", "call_normal_001")]
OFFSET = 30


def inserted(table: hops.HopTable) -> np.ndarray:
    """(T,) whether the table's choice at each trigger inserts a hop (the direct transition, delayed or not, does not)."""
    return ~table.at_own_timing()


def main() -> None:
    clips = {f"{name}.bvh": read_bvh(MOCAP / f"{name}.bvh") for name in LIBRARY}
    print(f"hop gains, library of {len(LIBRARY)} bandai1 clips, HOP_MIN_GAIN {hops.HOP_MIN_GAIN:.0%}")
    print(f"{'source -> destination':40s} {'triggers':>8s} {'D step':>7s} {'gain p10':>8s} {'median':>7s} "
          f"{'hops, any gain':>14s} {'hops, threshold':>15s}")
    for src, dst in PAIRS:
        naive = hops.precompute(clips, f"{src}.bvh", f"{dst}.bvh", OFFSET, min_gain=0.0)
        kept = hops.precompute(clips, f"{src}.bvh", f"{dst}.bvh", OFFSET)
        direct = naive.direct
        step = np.median(np.abs(np.diff(direct)) / np.maximum(direct[:-1], 1e-12))
        hop = inserted(naive)
        gain = (direct - naive.smoothness - naive.responsiveness) / np.maximum(direct, 1e-12)
        p10, median = (np.percentile(gain[hop], [10, 50]) if hop.any() else (np.nan, np.nan))
        print(f"{src + ' -> ' + dst:40s} {len(direct):8d} {step:7.2%} {p10:8.2%} {median:7.2%} "
              f"{int(hop.sum()):14d} {int(inserted(kept).sum()):15d}")


if __name__ == "__main__":
    main()
