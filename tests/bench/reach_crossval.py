"""Juang et al. 2009, section 5.2: the cross-validation of partial blending on the 40 raises.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/reach_crossval.py

Examples: the 40 right-hand raises of ../shared/mocap/bandai2-raise (five styles, Y up, cm),
sorted by file name; the effector is right.wrist, the feature its highest point. Each
example in turn is left out; the space of the other 39 (2000 sampled blends, seed 0) is
asked for the left-out example's own hit point (core.reach.cross_validation), twice in the
same run: as the product does it (the feet the examples have down held by the contact stage,
the turned joints kept within the range the examples show, issue 24 item 6) and as before
issue 24 (neither).

Printed per left-out example: whether whole-body blending of the others reaches its hit
(core.reach's "inside") and whether the hull of their hit points holds it (the test before
issue 24 item 7), the hit error of regular whole-body blending (refined), and for both ways
the product's hit error, its whole-body distance to the left-out clip
(core.reach.body_distance: the mean joint distance at the frames it plays), its ankle drift
(tests/bench/metrics.ankle_drift: the largest horizontal distance an ankle moves while its foot
is down, from where that run down began) and whether a joint limit bit. Then the medians and
largest figures of both ways against the examples' own ankle drift, how often a limit bit,
and the speed: ReachSpace.build for all 40 (median of 3) and the median and largest time of
one query, over the 40 examples' own hit points (the full space) and over the 40 left-out
targets (the product's query in the shrunk spaces), each query's time the median of 5 runs;
and the machine's load average while it ran. Also issue 24 item 5, one example alone (the first
of each style): the hit error for targets around its own hit (10 cm below, 8 cm to either side,
3 cm in front and behind) with its joints kept to the range of its own frames, as first built,
and with no limits, as now (one performance shows no range to keep).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import replace

import numpy as np
from common import MOCAP  # noqa: F401  (puts the project on sys.path)
from metrics import ankle_drift

from core.bvh import read_bvh
from core.reach import ReachOptions, ReachSpace, cross_validation
from core.rig import find_rig

BEFORE = ReachOptions(hold_feet=False, joint_limits=False)


def median_max(values) -> str:
    values = list(values)
    return f"{statistics.median(values):6.3f} / {max(values):6.3f}" if values else "     - /      -"


def main() -> None:
    files = sorted((MOCAP / "bandai2-raise").glob("*.bvh"))
    examples = [read_bvh(f) for f in files]
    rig = find_rig(examples[0])
    rows = cross_validation(examples, range(len(examples)), repeats=5)
    before = cross_validation(examples, range(len(examples)), options=BEFORE)
    in_hull = {}
    fulls = {reference: ReachSpace.build(examples, reference=reference, n_blends=0) for reference in (0, 1)}
    for k in range(len(examples)):
        full = fulls[1 if k == 0 else 0]
        target = full.chains.hits(full.space.weights[k][None], between_frames=True)[0][0]
        in_hull[k] = full.without(k).hull_distance(target) <= 1e-6 * full.scale
    own = [ankle_drift(m, rig) for m in examples]
    drift = {id(r): ankle_drift(r.motion, rig) for r in rows + before}

    print(f"{'left out':<36} {'whole-body':>10} {'hull':>6} {'regular':>8} | {'error':>15} | {'body':>15} | "
          f"{'ankle drift':>15} | limit bit (product)")
    print(f"{'':<36} {'reaches':>10} {'holds':>6} {'':>8} | {'before  product':>15} | {'before  product':>15} | "
          f"{'before  product':>15} |   (cm throughout)")
    for row, old in zip(rows, before):
        print(f"{files[row.example].stem.removeprefix('raise-up-right-hand_'):<36} "
              f"{'yes' if not row.outside else 'no':>10} {'yes' if in_hull[row.example] else 'no':>6} "
              f"{row.regular:8.3f} | {old.product:7.3f} {row.product:7.3f} | {old.body:7.3f} {row.body:7.3f} | "
              f"{drift[id(old)]:7.3f} {drift[id(row)]:7.3f} | "
              + ("partial " if row.partial else "whole-body ") + ", ".join(row.limited))

    print()
    print("item 7, the inside test: of the 40 left-out hit points, "
          f"{sum(in_hull.values())} lie in the hull of the other 39's hit points (inside before issue 24), "
          f"{sum(not r.outside for r in rows)} are hit by whole-body blending (inside now); "
          f"{sum(in_hull[r.example] and r.outside for r in rows)} in the hull are missed by whole-body blending by "
          f"{median_max(r.regular for r in rows if in_hull[r.example] and r.outside).strip()} cm (median / largest)")
    print()
    print(f"{'median / largest, cm':<46} {'before':>15}   {'product':>15}")
    for name, pick in (("hit error, all 40", lambda r: True), ("hit error, partial blending", lambda r: r.partial),
                       ("hit error, whole-body missed (outside)", lambda r: r.outside)):
        print(f"{name:<46} {median_max(r.product for r in before if pick(r))}   "
              f"{median_max(r.product for r in rows if pick(r))}")
    print(f"{'whole-body distance to the left-out clip':<46} {median_max(r.body for r in before)}   "
          f"{median_max(r.body for r in rows)}")
    print(f"{'  the same, where partial blending answered':<46} {median_max(r.body for r in before if r.partial)}   "
          f"{median_max(r.body for r in rows if r.partial)}")
    print(f"{'ankle drift, all 40':<46} {median_max(drift[id(r)] for r in before)}   "
          f"{median_max(drift[id(r)] for r in rows)}")
    print(f"{'ankle drift, partial blending':<46} {median_max(drift[id(r)] for r in before if r.partial)}   "
          f"{median_max(drift[id(r)] for r in rows if r.partial)}")
    print(f"{'ankle drift of the 40 examples themselves':<46} {median_max(own)}")
    ratio = lambda group: statistics.median(drift[id(r)] for r in group) / statistics.median(own)  # noqa: E731
    print(f"{'ankle drift median / the examples median':<46} {ratio(before):15.2f}   {ratio(rows):15.2f}"
          "   (target: at most 1.5)")
    limited = [r for r in rows if r.limited]
    print(f"joint limit bit (product): {len(limited)} of 40 queries, {sum(r.partial for r in limited)} of "
          f"{sum(r.partial for r in rows)} answered by partial blending; joints: "
          + ", ".join(f"{name} {sum(name in r.limited for r in rows)}" for name in
                      sorted({n for r in rows for n in r.limited})))
    print(f"margins of the full space's turned joints (degrees, low/high per axis): "
          + "; ".join(f"{rig.names[role]} " + " ".join(f"{v:.1f}" for v in
                                                       np.degrees(fulls[0].ranges.margin[rig.roles[role]].ravel()))
                      for role in ("pelvis", "chest", "right.clavicle")))

    one_example(examples, files)

    builds = []
    for _ in range(3):
        start = time.perf_counter()
        space = ReachSpace.build(examples)
        builds.append(time.perf_counter() - start)
    targets = [space.chains.hits(row[None], between_frames=True)[0][0] for row in space.space.weights[:len(examples)]]
    space.reach(targets[0])  # (the first query pays for numpy's first calls)
    queries = []
    for target in targets:
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            space.reach(target)
            runs.append(time.perf_counter() - start)
        queries.append(statistics.median(runs))
    print()
    print(f"ReachSpace.build, 40 examples: {statistics.median(builds):.2f} s (median of 3)")
    print(f"one reach, the 40 examples' own hit points (inside): median {1000 * statistics.median(queries):.1f} ms, "
          f"largest {1000 * max(queries):.1f} ms")
    left = [r.seconds for r in rows]
    print(f"one reach, the 40 left-out targets (39 examples, partial where needed): median "
          f"{1000 * statistics.median(left):.1f} ms, largest {1000 * max(left):.1f} ms")
    print(f"(each query the median of 5 runs; load average over the last minute: {os.getloadavg()[0]:.2f})")


# Around one raise's hit (Y up, cm): below, to either side, in front and behind.
AROUND = {"10 below": (0, -10.0, 0), "8 to +x": (8.0, 0, 0), "8 to -x": (-8.0, 0, 0), "3 to +z": (0, 0, 3.0),
          "3 to -z": (0, 0, -3.0)}


def one_example(examples, files) -> None:
    """Issue 24 item 5 with one example (the first of each style): partial blending alone, its joints
    kept to the range of its own frames (as reviewed: one performance's range, no margin) against no
    limits (now: one performance shows no range, and the reach says so)."""
    firsts = list(range(0, len(examples), 8))
    errors = {"own range kept": {name: [] for name in AROUND}, "no limits (now)": {name: [] for name in AROUND}}
    for k in firsts:
        space = ReachSpace.build([examples[k]])
        own = space.chains.hits(np.ones((1, 1)), between_frames=True)[0][0]
        kept = ReachSpace(space.registration, rig=space.rig)
        kept.ranges = replace(kept.ranges, varied=True)  # (the range of its own frames kept, as reviewed)
        for name, away in AROUND.items():
            errors["own range kept"][name].append(kept.reach(own + np.array(away)).error)
            errors["no limits (now)"][name].append(space.reach(own + np.array(away)).error)
    print()
    print(f"item 5, one example ({', '.join(files[k].stem.removeprefix('raise-up-right-hand_') for k in firsts)}, "
          f"each alone): hit error, cm, median / largest of the {len(firsts)}")
    print(f"{'target from its own hit':<24} " + " ".join(f"{name:>17}" for name in errors))
    for name in AROUND:
        print(f"{name:<24} " + " ".join(f"{median_max(errors[way][name]):>17}" for way in errors))


if __name__ == "__main__":
    from common import require_capture

    require_capture("bandai2-raise")
    main()
