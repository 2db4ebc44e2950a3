"""Where a hop table is quicker to precompute: in this process or on a local Dask cluster (issue 24 item 11).

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/hops_runner.py [--workers 2] [--triggers 50,150,400]

The command line's default runner (core.hops.MeasuredRunner) starts in this process, times its
tasks, and moves the rest of a map to a local cluster only once the rest would take longer here
than ``CLUSTER_OVERHEAD_S * P / (P - 1)`` seconds. This script measures that overhead and checks
the choice against both alternatives on jobs of several sizes, in the same run:

  overhead   the wall time of starting a LocalCluster of P workers and its client, plus the
             shipping of a search map's shared arrays (the distance matrices of the largest job)
             and one trivial task's round trip: what the cluster costs before it computes;
  per job    the wall time of the whole precompute in this process (SerialRunner), on a
             freshly started local cluster of P workers (DaskRunner, start-up included: what
             `--workers P` costs), the cluster's overhead beyond its share of the work
             (cluster - here / P: what CLUSTER_OVERHEAD_S stands for), and with MeasuredRunner
             (what the command line does now), with where MeasuredRunner ran each map; and
             whether the three tables are the same.

Jobs: the 1,901-frame dance of ../shared/mocap/bandai1 as source and destination (the only clip
long enough for many trigger frames) at the offset that leaves the asked number of trigger frames,
with a library of 12 bandai1 clips of 150 to 400 frames; the weight is given (eq. (5) apart).
The figures depend on the machine and its load: run it where the tables are made.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core import hops  # noqa: E402
from core.bvh import read_bvh  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap" / "bandai1"
SOURCE = "dance-short_normal_001"
LIBRARY_SIZE = 12
WEIGHT = 0.05  # per second: given, so that eq. (5)'s random conditions are not part of the timings


def library() -> dict:
    """The source and 12 bandai1 clips of 150 to 400 frames, by name order, one of each kind."""
    clips, kinds = {}, set()
    for path in sorted(MOCAP.glob("*.bvh")):
        kind = path.stem.split("_")[0]
        if path.stem == SOURCE or kind in kinds or len(clips) >= LIBRARY_SIZE:
            continue
        motion = read_bvh(path, unit=0.01)
        if 150 <= motion.n_frames <= 400:
            clips[path.name] = motion
            kinds.add(kind)
    clips[SOURCE + ".bvh"] = read_bvh(MOCAP / f"{SOURCE}.bvh", unit=0.01)
    return clips


def same_table(a, b) -> bool:
    arrays_a, arrays_b = a.to_arrays(), b.to_arrays()
    return arrays_a.keys() == arrays_b.keys() and all(np.array_equal(arrays_a[k], arrays_b[k]) for k in arrays_a)


def _nothing(item, **shared):
    return item


def overhead_s(workers: int, matrices: list) -> float:
    """Start a local cluster, ship ``matrices`` to every worker, run one trivial task: seconds."""
    from core.cluster import DaskRunner

    t = time.perf_counter()
    with DaskRunner(n_workers=workers, progress=False) as run:
        run.map(_nothing, [0], from_source=matrices)
        return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="local cluster size (default 2)")
    parser.add_argument("--triggers", default="50,150,400", help="trigger frames of each job, comma-separated")
    args = parser.parse_args()
    from core.cluster import DaskRunner

    if not MOCAP.is_dir():
        raise SystemExit(f"real motion capture not found at {MOCAP}")
    clips = library()
    src = SOURCE + ".bvh"
    source = clips[src]
    length = hops.blend_frames_of(hops.BLEND_SECONDS, source.fps)
    print(f"library: {len(clips)} clips; source and destination {SOURCE} ({source.n_frames} frames); "
          f"{args.workers} workers; MeasuredRunner's bound: CLUSTER_OVERHEAD_S {hops.CLUSTER_OVERHEAD_S:g} s "
          f"-> {hops.MeasuredRunner(None, args.workers).pays_after_s:.3g} s of work left here")
    names, motions, _ = hops.checked_library(clips, src, src)
    clouds, _ = hops.library_point_clouds(motions, names.index(src))
    s = names.index(src)
    matrices = [hops.window_distance_matrix(clouds[s], c, length) for c in clouds]
    print(f"overhead: start-up + shipping {sum(m.nbytes for m in matrices) / 1e6:.0f} MB of matrices + one task: "
          f"{overhead_s(args.workers, matrices):.2f} s (measured now)\n")

    print(f"{'triggers':>8} {'here s':>8} {'cluster s':>10} {'overhead s':>11} {'measured s':>11}  {'same':>5}  "
          "where MeasuredRunner ran")
    for n in (int(t) for t in args.triggers.split(",")):
        offset = n - (source.n_frames - length + 1)
        t = time.perf_counter()
        serial = hops.precompute(clips, src, src, offset, weight=WEIGHT, runner=hops.SerialRunner())
        here = time.perf_counter() - t
        t = time.perf_counter()
        with DaskRunner(n_workers=args.workers, progress=False) as run:
            spread = hops.precompute(clips, src, src, offset, weight=WEIGHT, runner=run, processes=args.workers)
        cluster = time.perf_counter() - t
        t = time.perf_counter()
        with hops.MeasuredRunner(lambda: DaskRunner(n_workers=args.workers, progress=False), args.workers) as run:
            measured = hops.precompute(clips, src, src, offset, weight=WEIGHT, runner=run, processes=args.workers)
        chosen = time.perf_counter() - t
        same = same_table(serial, spread) and same_table(serial, measured)
        # (the cluster's cost beyond its share of the work: its start-up and shipping, what CLUSTER_OVERHEAD_S stands for)
        print(f"{len(serial.triggers):>8} {here:>8.1f} {cluster:>10.1f} {cluster - here / args.workers:>11.2f} "
              f"{chosen:>11.1f}  {str(same):>5}  "
              f"{run.summary()}", flush=True)


if __name__ == "__main__":
    main()
