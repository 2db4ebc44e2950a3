"""Precompute scaling of the one-hop table (Koyama & Goto 2019; issue 13): serial, then a local Dask
cluster of 1, 2 and 4 worker processes, on the same job.

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/hops_scaling.py [--workers 1,2,4] [--weight W] [--triggers 1000]

The job is the issue's: one source and destination pair, a library of 20 real clips of 150 to 400
frames (bandai1, at most two of each kind of motion, chosen by name), 1,000 trigger frames, eq. (5)
excluded (the weight is given, or computed once beforehand and not timed). The only clip of
../shared/mocap long enough for 1,000 triggers is the 1,901-frame dance, so it is both the source
and the destination, at the offset that leaves exactly 1,000 trigger frames: a jump ahead in the
dance, through a hop when that is smoother.

For each run it prints the wall time (the cluster's start-up apart), the speed-up over the serial
run, the peak memory of this process (resource.getrusage: the client, which holds the clips and
the table) and of the largest worker (each worker's own high-water mark, asked through Dask), and
whether the table is the serial one (np.array_equal on every array). The local runs are Dask's
LocalCluster (core.cluster.DaskRunner), the same code path as a cluster of several machines; the
paper's figure for a comparable job is about an hour on 36 cores. Target: under 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.bvh import read_bvh  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap"
SOURCE = "dance-short_normal_001"
LIBRARY_SIZE = 20
LIBRARY_FRAMES = (150, 400)
PER_KIND = 2
TRIGGERS = 1000


def frame_count(path: Path) -> int:
    """A BVH file's frame count, read from its ``Frames:`` line (the motion is not parsed)."""
    with open(path) as f:
        for line in f:
            found = re.match(r"\s*Frames:\s*(\d+)", line)
            if found:
                return int(found.group(1))
    raise ValueError(f"{path} has no 'Frames:' line")


def library_names() -> list[str]:
    """20 bandai1 clips of 150 to 400 frames, by name order, at most two of each kind (the name's
    part before the first underscore), so that walks do not crowd out the rest."""
    chosen, per_kind = [], {}
    for path in sorted((MOCAP / "bandai1").glob("*.bvh")):
        kind = path.stem.split("_")[0]
        if path.stem == SOURCE or per_kind.get(kind, 0) >= PER_KIND:
            continue
        if LIBRARY_FRAMES[0] <= frame_count(path) <= LIBRARY_FRAMES[1]:
            chosen.append(path.stem)
            per_kind[kind] = per_kind.get(kind, 0) + 1
        if len(chosen) == LIBRARY_SIZE:
            return chosen
    raise SystemExit(f"only {len(chosen)} clips of {LIBRARY_FRAMES[0]} to {LIBRARY_FRAMES[1]} frames in "
                     f"{MOCAP / 'bandai1'}; the benchmark needs {LIBRARY_SIZE}")


def peak_mb() -> float:
    """This process's peak resident memory so far, MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_peak_mb() -> float:
    """Run on a worker (sent by value): its process's peak resident memory so far, MB. Linux's
    VmHWM, the high-water mark of this process image: getrusage's ru_maxrss would report the
    client's peak, which a worker inherits through the fork and exec that start it."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def same_table(a, b) -> bool:
    arrays_a, arrays_b = a.to_arrays(), b.to_arrays()
    return arrays_a.keys() == arrays_b.keys() and all(np.array_equal(arrays_a[k], arrays_b[k]) for k in arrays_a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4", help="local cluster sizes to time, comma-separated")
    parser.add_argument("--weight", type=float, help="w per second (default: eq. (5), computed once, not timed)")
    parser.add_argument("--triggers", type=int, default=TRIGGERS, help="trigger frames of the job")
    args = parser.parse_args()
    try:
        from core import hops
    except ImportError as error:
        raise SystemExit(f"this benchmark times core.hops.precompute, which this checkout does not have "
                         f"({error}): merge the hops search first") from None
    from core.cluster import DaskRunner

    if not MOCAP.is_dir():
        raise SystemExit(f"real motion capture not found at {MOCAP}")
    names = library_names()
    t = time.perf_counter()
    clips = {name: read_bvh(MOCAP / "bandai1" / f"{name}.bvh", unit=0.01) for name in [SOURCE, *names]}
    source = clips[SOURCE]
    length = hops.blend_frames_of(hops.BLEND_SECONDS, source.fps)
    # destination frame k plays at source frame k + offset: the last trigger whose direct blend fits
    # in the destination is n - L + offset, so this offset leaves triggers 0 .. TRIGGERS - 1
    offset = args.triggers - (source.n_frames - length + 1)
    triggers = hops.trigger_frames(source.n_frames, source.n_frames, offset, length)
    frames = [clips[n].n_frames for n in names]
    print(f"library: {len(names)} clips of {min(frames)} to {max(frames)} frames ({sum(frames)} in all) + the source "
          f"and destination {SOURCE} ({source.n_frames} frames, {source.fps:g} fps), offset {offset}, "
          f"{len(triggers)} trigger frames, blends of {length} frames; read in {time.perf_counter() - t:.1f} s")

    weight = args.weight
    if weight is None:
        t = time.perf_counter()
        ordered, motions, _ = hops.checked_library(clips, SOURCE, SOURCE)
        clouds, _ = hops.library_point_clouds(motions, ordered.index(SOURCE))
        weight = hops.default_weight(clouds, length, source.fps)
        print(f"eq. (5): w = {weight:.4g} per second (computed once, serially, in {time.perf_counter() - t:.1f} s; "
              f"not part of the timings below)")

    print(f"\n{'run':<22} {'start s':>8} {'time s':>8} {'speed-up':>9} {'client MB':>10} {'worker MB':>10}  table")
    t = time.perf_counter()
    serial = hops.precompute(clips, SOURCE, SOURCE, offset, weight=weight, runner=hops.SerialRunner())
    serial_s = time.perf_counter() - t
    print(f"{'serial':<22} {'':>8} {serial_s:8.1f} {1.0:9.2f} {peak_mb():10.0f} {'':>10}  reference", flush=True)

    for n_workers in [int(n) for n in args.workers.split(",")]:
        t = time.perf_counter()
        with DaskRunner(n_workers=n_workers, progress=False) as runner:
            start_s = time.perf_counter() - t
            t = time.perf_counter()
            table = hops.precompute(clips, SOURCE, SOURCE, offset, weight=weight, runner=runner)
            run_s = time.perf_counter() - t
            workers_mb = max(runner.client.run(worker_peak_mb).values())
        label = f"Dask, {n_workers} worker{'s' if n_workers > 1 else ''}"
        print(f"{label:<22} {start_s:8.1f} {run_s:8.1f} {serial_s / run_s:9.2f} {peak_mb():10.0f} {workers_mb:10.0f}  "
              f"{'same' if same_table(table, serial) else 'DIFFERENT'}", flush=True)

    direct = int(np.count_nonzero(serial.is_direct()))
    print(f"\n{len(serial.triggers)} triggers: {len(serial.triggers) - direct} through a hop, {direct} direct. "
          f"Client MB is this process's peak so far (it only grows); worker MB the largest worker's peak.")


if __name__ == "__main__":
    main()
