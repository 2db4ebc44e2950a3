"""One-hop transitions against direct ones on real capture: Koyama & Goto 2019's Fig. 10 and robustness test (4.2).

Run by hand (not collected as a test):  .venv/bin/python tests/bench/hops_quality.py

Library: the fourteen clips of the synthesis quality benchmark (quality.py's
CLIPS: walks, runs and dashes in six styles, bow, bye, guide, punch, kick, the
short dance, the walking turns; Bandai Namco, 30 fps, read in centimetres).

Source and destination, by a rule, not by looking: among the ordered pairs of
different library clips whose direct transition at offset 0 (destination frame
k at source frame k) fits at 100 trigger frames or more, the pair whose direct
transitions are the worst, by the median over those triggers of Kovar et al.'s
distance D (core.hops, the distance the search uses). The table is precomputed
for that pair at offset 0 with eq. (5)'s default weight (seed 0), blends of 0.5 s.

Triggers, as the paper's robustness test picks them ("sequentially selecting
triggered frames with a fixed interval"): 15, the centre of each of 15 equal
parts of the table's trigger frames.

Printed per trigger and as medians over the 15:
  cost        S + wR of the table's one-hop transition and D of the direct one
              (Fig. 10), and whether one-hop is never above direct;
  rendered    three motions (core.hops_render), each over the same source frames
              (L before the trigger to L after the one-hop transition's
              destination plays alone): one-hop with plain blends, one-hop
              through the engine (stays as cores), the direct transition with
              plain blends. Each is measured as the synthesis quality benchmark
              measures a gap (core.quality.gap_quality, as quality.py's
              ``measured``): the gap is the whole transition, from the trigger
              to the first frame the one-hop transition's destination plays
              alone, the same frames for all three;
                skate  foot skate in cm/s (ankle and toe joints within 3 % of
                       their height range above their floor, horizontal speed),
                       and over the untouched clips' on the same frames (the
                       source from frame 0, the destination at its offset: the
                       same reference for the three);
                accel  the peak mean-joint acceleration over the two clips' 99th
                       percentile, and over the untouched clips' peak.
No timed assertion: the figures are printed, docs/design.md keeps them.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common import MOCAP, load  # noqa: E402  (tests/bench, next to this script)
from quality import CLIPS  # noqa: E402
from core import hops  # noqa: E402
from core import hops_render as hr  # noqa: E402
from core.quality import SourceFigures, foot_levels, foot_positions, gap_quality  # noqa: E402
from core.rig import find_rig, leg_length  # noqa: E402

OFFSET = 0
MIN_TRIGGERS = 100
N_TRIGGERS = 15
METHODS = (("one-hop plain", hr.PLAIN), ("one-hop engine", hr.ENGINE), ("direct plain", hr.DIRECT))


def worst_direct_pair(names: list[str], clips: dict, length: int) -> tuple[str, str, float]:
    """The pair of the module docstring's rule, and its median direct D."""
    motions = [clips[n] for n in names]
    # (measured as the first clip is: the library shares one skeleton, so every source would give
    # the same up axis and leg length)
    clouds, _ = hops.library_point_clouds(motions, 0)
    best = None
    for s in range(len(names)):
        for d in range(len(names)):
            if s == d:
                continue
            matrix = hops.window_distance_matrix(clouds[s], clouds[d], length)
            n = min(matrix.shape)  # triggers t with both windows inside, at offset 0: D[t, t]
            if n < MIN_TRIGGERS:
                continue
            median = float(np.median(np.diagonal(matrix)[:n]))
            if best is None or median > best[2]:
                best = (names[s], names[d], median)
    return best


def picked_triggers(table: hops.HopTable) -> np.ndarray:
    """The centre of each of N_TRIGGERS equal parts of the table's trigger frames."""
    n = len(table.triggers)
    return table.triggers[((np.arange(N_TRIGGERS) + 0.5) * n / N_TRIGGERS).astype(int)]


def measured(render: hr.HopRender, gap: tuple[int, int], sources: list, rig, up: np.ndarray, leg: float):
    """core.quality.gap_quality of a render on ``gap`` (source frames), its floor levels its own."""
    feet = foot_positions(render.motion, rig)
    return gap_quality(render.motion, render.first, gap, up=up, leg=leg, output_feet=feet,
                       output_levels=foot_levels(feet @ up, render.motion.fps), sources=sources)


def fmt(x, width=6, digits=2) -> str:
    return f"{'-':>{width}}" if x is None or not np.isfinite(x) else f"{x:{width}.{digits}f}"


def main() -> int:
    if not MOCAP.is_dir():
        print(f"no real capture at {MOCAP}")
        return 1
    clips = {f"{Path(name).name}.bvh": load(name) for name in CLIPS}
    names = sorted(clips)
    fps = clips[names[0]].fps
    length = hops.blend_frames_of(hops.BLEND_SECONDS, fps)
    start = time.perf_counter()
    src, dst, median_direct = worst_direct_pair(names, clips, length)
    print(f"library: {len(names)} clips ({min(m.n_frames for m in clips.values())} to "
          f"{max(m.n_frames for m in clips.values())} frames at {fps:g} fps)")
    print(f"pair: {src} -> {dst} at offset {OFFSET}, the worst median direct D ({median_direct:.4f} leg lengths^2) "
          f"of the pairs with >= {MIN_TRIGGERS} trigger frames ({time.perf_counter() - start:.1f} s)")
    start = time.perf_counter()
    table = hops.precompute(clips, src, dst, OFFSET)
    print(f"table: {len(table.triggers)} trigger frames, weight {table.weight:.4g}/s (eq. 5), "
          f"{time.perf_counter() - start:.1f} s; one hop at {int((~table.is_direct()).sum())}")

    rig = find_rig(clips[src])
    up = clips[src].skeleton.up
    leg = 0.5 * (leg_length(clips[src], rig, "L") + leg_length(clips[src], rig, "R"))
    leg_cm = leg * 100.0 * clips[src].skeleton.unit
    sources = [(SourceFigures.of(clips[src], rig, up), 0), (SourceFigures.of(clips[dst], rig, up), OFFSET)]

    rows = []
    head = " | ".join(f"{label:^27}" for label, _ in METHODS)
    print(f"\n{'':>7} {'':<26} {'':>14} {'cost':^15} | {head}")
    sub = " | ".join(f"{'skate':>6} {'/untch':>6} {'accel':>6} {'/untch':>6}" for _ in METHODS)
    print(f"{'trigger':>7} {'hop':<26} {'o_sh s_s s_h':>14} {'S+wR':>7} {'direct':>7} | {sub}")
    for trigger in picked_triggers(table):
        trigger = int(trigger)
        entry = table.entry(trigger)
        tl = hr.timeline_of(table, trigger)
        span = tl.span(clips[src].n_frames, clips[dst].n_frames)
        gap = (trigger, tl.settled)
        row = {"trigger": trigger, "cost": entry["smoothness"] + entry["responsiveness"], "direct": entry["direct"]}
        cells = []
        for label, method in METHODS:
            try:
                render, _ = hr.render_entry(table, clips, trigger, method=method, rig=rig, span=span)
            except ValueError as error:  # a benchmark reports every failure and goes on
                print(f"  {label} at {trigger}: {error}")
                row[label] = None
                cells.append(f"{'failed':^27}")
                continue
            q = measured(render, gap, sources, rig, up, leg)
            row[label] = q
            skate_ratio = None if q.skate is None or not q.skate_untouched else q.skate / q.skate_untouched
            accel_ratio = None if q.accel is None or not q.accel_untouched else q.accel / q.accel_untouched
            cells.append(f"{fmt(None if q.skate is None else q.skate * leg_cm)} {fmt(skate_ratio)} {fmt(q.accel)} "
                         f"{fmt(accel_ratio)}")
        rows.append(row)
        choice = f"{entry['offset']:>4} {entry['stay_src']:>3} {entry['stay_hop']:>3}"
        print(f"{trigger:>7} {entry['hop'][:26]:<26} {choice:>14} {row['cost']:7.4f} {row['direct']:7.4f} | "
              + " | ".join(cells))

    def med(values):
        values = [v for v in values if v is not None]
        return float(np.median(values)) if values else None

    print(f"\nmedians over {len(rows)} triggers:")
    print(f"  cost: one-hop S + wR {med([r['cost'] for r in rows]):.4f}, direct D {med([r['direct'] for r in rows]):.4f};"
          f" one-hop above direct at {sum(r['cost'] > r['direct'] for r in rows)} of {len(rows)}")
    untouched_skate = med([r[METHODS[0][0]].skate_untouched for r in rows if r[METHODS[0][0]] is not None])
    untouched_accel = med([r[METHODS[0][0]].accel_untouched for r in rows if r[METHODS[0][0]] is not None])
    print(f"  untouched clips on the same frames: skate {fmt(untouched_skate * leg_cm if untouched_skate else None)}"
          f" cm/s, peak accel {fmt(untouched_accel)} x p99")
    for label, _ in METHODS:
        done = [r[label] for r in rows if r[label] is not None]
        skate = med([q.skate for q in done])
        skate_ratio = med([q.skate / q.skate_untouched for q in done if q.skate is not None and q.skate_untouched])
        accel = med([q.accel for q in done])
        accel_ratio = med([q.accel / q.accel_untouched for q in done if q.accel is not None and q.accel_untouched])
        print(f"  {label:<15} ({len(done):2d} rendered): skate {fmt(skate * leg_cm if skate else None)} cm/s "
              f"({fmt(skate_ratio)} x the untouched clips'), peak accel {fmt(accel)} x p99 "
              f"({fmt(accel_ratio)} x the untouched clips')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
