"""Juang et al. 2009, section 5.2: the cross-validation of partial blending on the 40 raises.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/reach_crossval.py

Examples: the 40 right-hand raises of ../shared/mocap/bandai2-raise (five styles, Y up, cm),
sorted by file name; the effector is right.wrist, the feature its highest point. Each
example in turn is left out; the space of the other 39 (2000 sampled blends, seed 0) is
asked for the left-out example's own hit point (core.reach.cross_validation).

Printed per left-out example: whether its hit lies outside the shrunk space's hull, the hit
error of regular whole-body blending (refined), and the product's (partial blending where
regular misses by more than its tolerance); then the medians of both over the examples
outside and over those inside, and the speed: ReachSpace.build for all 40 (median of 3)
and the median and largest time of one query, over the 40 examples' own hit points (the
full space) and over the 40 left-out targets (the product's query in the shrunk spaces),
each query's time the median of 5 runs; and the machine's load average while it ran.
"""

from __future__ import annotations

import os
import statistics
import time

from common import MOCAP  # noqa: F401  (puts the project on sys.path)

from core.bvh import read_bvh
from core.reach import ReachSpace, cross_validation


def main() -> None:
    files = sorted((MOCAP / "bandai2-raise").glob("*.bvh"))
    examples = [read_bvh(f) for f in files]
    rows = cross_validation(examples, range(len(examples)), repeats=5)
    print(f"{'left out':<40} {'space':>8} {'regular':>9} {'product':>9}  (cm) {'query':>6} (ms)")
    for row in rows:
        print(f"{files[row.example].stem:<40} {'outside' if row.outside else 'inside':>8} {row.regular:9.3f} "
              f"{row.product:9.3f}      {1000 * row.seconds:6.1f}" + ("  partial" if row.partial else ""))
    for name, outside in (("outside", True), ("inside", False)):
        group = [r for r in rows if r.outside == outside]
        if group:
            print(f"{name:>8}: {len(group):2d} left out, median error regular "
                  f"{statistics.median(r.regular for r in group):.3f} cm, product "
                  f"{statistics.median(r.product for r in group):.3f} cm, largest product "
                  f"{max(r.product for r in group):.3f} cm")
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
    print(f"ReachSpace.build, 40 examples: {statistics.median(builds):.2f} s (median of 3)")
    print(f"one reach, the 40 examples' own hit points (inside): median {1000 * statistics.median(queries):.1f} ms, "
          f"largest {1000 * max(queries):.1f} ms")
    left = [r.seconds for r in rows]
    print(f"one reach, the 40 left-out targets (39 examples, partial where needed): median "
          f"{1000 * statistics.median(left):.1f} ms, largest {1000 * max(left):.1f} ms")
    print(f"(each query the median of 5 runs; load average over the last minute: {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
