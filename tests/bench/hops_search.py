"""Speed of the one-hop search's parts (Koyama & Goto 2019, core.hops), serial, in this process.

Run by hand (not collected as a test):  .venv/bin/python tests/bench/hops_search.py

Real clips of ../shared/mocap (bandai1, normal style, 30 fps). Printed:
  distance  the whole-array Kovar distance matrix of two 300-frame clips (blends of
            0.5 s), next to the naive alternative measured in the same run: one
            least-squares fit (SVD) per pair of windows, timed on 2,000 pairs and
            scaled to the matrix;
  search    the serial precompute of one source and destination over a library of
            10 clips (86 to 478 frames) at every trigger frame: eq. (5), the
            distance matrices and the search timed apart; then the same with a
            1,901-frame source (dance-short) added, the longest stays.
The distributed precompute (local processes, Dask) is measured elsewhere.
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core import hops  # noqa: E402
from core.bvh import read_bvh  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap" / "bandai1"
LIBRARY = ["bow_normal_001", "bye_normal_001", "byebye_normal_001", "call_normal_001", "call_normal_002",
           "kick_normal_001", "punch_normal_001", "punch_normal_002", "slash_normal_001", "walk_normal_001"]


def least_squares_distance(cloud_a, cloud_b, a, b, length):
    p, q = cloud_a[a:a + length].reshape(-1, 3), cloud_b[b:b + length].reshape(-1, 3)
    pc, qc = p[:, :2] - p[:, :2].mean(axis=0), q[:, :2] - q[:, :2].mean(axis=0)
    u, _, vt = np.linalg.svd(qc.T @ pc)
    turn = u @ np.diag([1.0, np.sign(np.linalg.det(u @ vt))]) @ vt
    return (np.sum((pc - qc @ turn) ** 2) + np.sum((p[:, 2] - q[:, 2]) ** 2)) / len(p)


def bench_distance(clips) -> None:
    first, second = clips["slash_normal_001.bvh"][:300], clips["kick_normal_001.bvh"][:300]
    clouds, _ = hops.library_point_clouds([first, second], 0)
    length = hops.blend_frames_of(0.5, first.fps)
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        matrix = hops.window_distance_matrix(clouds[0], clouds[1], length)
        runs.append(time.perf_counter() - start)
    rng = np.random.default_rng(0)
    pairs = rng.integers(matrix.shape[0], size=(2000, 2))
    start = time.perf_counter()
    slow = [least_squares_distance(clouds[0], clouds[1], a, b, length) for a, b in pairs]
    per_pair = (time.perf_counter() - start) / len(pairs)
    assert np.allclose(slow, matrix[pairs[:, 0], pairs[:, 1]], rtol=1e-9, atol=1e-12)
    print(f"distance matrix, 300 x 300 frames ({matrix.shape[0]} x {matrix.shape[1]} windows of {length} frames, "
          f"{clouds[0].shape[1]} joints): {1000 * statistics.median(runs):.1f} ms (median of 5); one least-squares "
          f"fit per pair: {per_pair * matrix.size:.1f} s ({1e6 * per_pair:.0f} us a pair)")


def bench_precompute(clips, src: str, dst: str, offset: int) -> None:
    names, motions, _ = hops.checked_library(clips, src, dst)
    s, d = names.index(src), names.index(dst)
    start = time.perf_counter()
    clouds, _ = hops.library_point_clouds(motions, s)
    length = hops.blend_frames_of(hops.BLEND_SECONDS, motions[s].fps)
    cache: dict = {}
    weight = hops.default_weight(clouds, length, motions[s].fps, cache=cache)
    eq5 = time.perf_counter() - start
    start = time.perf_counter()
    table = hops.precompute(clips, src, dst, offset, weight=weight)
    total = time.perf_counter() - start
    n = len(table.triggers)
    direct = table.is_direct()
    stays = table.choices[:, 2:].sum(axis=1)
    print(f"{src} -> {dst} at offset {offset}, library of {len(names)} clips ({min(m.n_frames for m in motions)} to "
          f"{max(m.n_frames for m in motions)} frames), {n} trigger frames, weight {weight:.4g}/s (eq. 5):")
    print(f"  eq. (5), 100 conditions with their distance matrices: {eq5:.1f} s")
    print(f"  precompute with the weight given (matrices + search): {total:.1f} s, {1000 * total / n:.0f} ms a trigger "
          f"frame; one hop at {int((~direct).sum())}, direct at {int(direct.sum())}; mean S + wR "
          f"{np.mean(table.smoothness + table.responsiveness):.4f} against direct {np.mean(table.direct):.4f}; "
          f"stays s_s + s_h median {int(np.median(stays))}, max {int(stays.max())} frames")


def main() -> int:
    if not MOCAP.is_dir():
        print(f"no real capture at {MOCAP}")
        return 1
    clips = {f"{name}.bvh": read_bvh(MOCAP / f"{name}.bvh") for name in LIBRARY}
    bench_distance(clips)
    bench_precompute(clips, "walk_normal_001.bvh", "kick_normal_001.bvh", 0)
    clips["dance-short_normal_001.bvh"] = read_bvh(MOCAP / "dance-short_normal_001.bvh")
    bench_precompute(clips, "dance-short_normal_001.bvh", "kick_normal_001.bvh", 300)
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
