"""Partial-figure assembly (Juang et al. 2009, section 4.2, core.assemble) against direct assembly.

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/assemble_quality.py

Queries, each 61 frames (2 s at 30 fps) of ../shared/mocap/bandai1 (Y up, cm):
  upper  a punch's upper-body rotations copied over a walk (the crude composite
         an animator would start from): bandai1's two punch takes (punch_normal_001
         jabs with the left hand, 002 with the right), three segments of each, over
         walks in four styles (normal, happy, sad, proud) -> 24 queries. The library
         is every bandai1 clip except that punch take, plus the take with the
         query's frames and half a second either side cut out (so the retrieved
         punch is another of the take's jabs, never the query's own frames).
  lower  segments of walks in four styles (normal, sad, proud, angry), three each,
         their lower body replaced from every bandai1 clip except the query's own
         file -> 12 queries.

Methods, on the same retrieved segment (core.assemble's retrieval, section 4.1):
  ours    core.assemble.assemble: time alignment on feature poses (4.2.1), eq. (1)
          at the juncture joints (4.2.2), the contact stage under a replaced leg;
  direct  the retrieved part's local rotations copied frame for frame from the
          segment's first frame (held at the clip's last frame), no alignment,
          no eq. (1), no contact stage;
  no stage  ours without the contact stage (contacts=None): what eq. (1) alone gives at
          the junctures, and what the stage removes.

Figures per query, medians printed per case:
  skate     the feet-planted measure (core.quality: gap_skate over the whole
            output, its own floor levels), cm/s; with the query's own;
  juncture  the largest difference over the juncture joints' Euler axes (their
            BVH order, unwrapped) between the output's and the query's mean, and
            between their standard deviations, degrees;
  follow    the share of frames on which the output's part features measured in
            the chest's or hips' frame (every one but hand_raised) equal the
            retrieved clip's at the frame the output plays (ours: along the time
            map; direct: frame for frame);
  timing    the share of frames on which those features of the output equal the
            query's: how well the part keeps the query's timing;
  time      ms per assembly, retrieval included, the library's features built
            once beforehand (FeatureLibrary.build, timed separately).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common import MOCAP, load  # noqa: E402  (tests/bench, next to this script)
from core.assemble import (PARTS, FeatureLibrary, anatomical_frame, assemble, juncture_angles, juncture_joints,  # noqa: E402
                           part_joints, relational_features, retrieve_parts)
from core.motion import Motion  # noqa: E402
from core.quality import foot_levels, foot_positions, gap_skate  # noqa: E402
from core.rig import find_rig  # noqa: E402

N = 61
PUNCHES = {"punch_normal_001": (30, 100, 150), "punch_normal_002": (20, 110, 200)}
UPPER_WALKS = ("walk_normal_001", "walk_happy_001", "walk_sad_001", "walk_proud_001")
LOWER_WALKS = {"walk_normal_001": (0, 60, 120), "walk_sad_001": (0, 60, 120), "walk_proud_001": (0, 50, 100),
               "walk_angry_001": (0, 40, 80)}


def skate(motion: Motion) -> float:
    rig, up = find_rig(motion), motion.skeleton.up
    feet = foot_positions(motion, rig)
    value = gap_skate(feet, 0, (0, motion.n_frames - 1), foot_levels(feet @ up, motion.fps), up, motion.fps)
    return 0.0 if value is None else value


def juncture_error(output: Motion, query: Motion, part: str) -> tuple[float, float]:
    """Largest |mean difference| and |std difference| (degrees) over the juncture joints' axes (eq. (1)'s)."""
    skeleton, rig = query.skeleton, find_rig(query)
    frame = anatomical_frame(query, rig)
    mean, std = 0.0, 0.0
    for j in juncture_joints(skeleton, part_joints(skeleton, rig, part)):
        a, b = juncture_angles(output.rotations[:, j], frame), juncture_angles(query.rotations[:, j], frame)
        turn = a.mean(axis=0) - b.mean(axis=0)  # (means a whole turn apart are one rotation)
        mean = max(mean, float(np.degrees(np.abs((turn + np.pi) % (2.0 * np.pi) - np.pi).max())))
        std = max(std, float(np.degrees(np.abs(a.std(axis=0) - b.std(axis=0)).max())))
    return mean, std


def direct_assembly(query: Motion, clip: Motion, start: int, part: str) -> Motion:
    """The naive assembly: the part's local rotations copied frame for frame from ``start``."""
    mask = part_joints(query.skeleton, find_rig(query), part)
    frames = np.minimum(start + np.arange(query.n_frames), clip.n_frames - 1)
    rotations = query.rotations.copy()
    rotations[:, mask] = clip.rotations[frames][:, mask]
    return query.with_arrays(rotations=rotations)


def follow(output: Motion, clip: Motion, played: np.ndarray, part: str) -> float:
    keys = [k for k in PARTS[part] if not k.endswith("hand_raised")]
    out, own = relational_features(output), relational_features(clip)
    frames = np.clip(np.rint(played).astype(int), 0, clip.n_frames - 1)
    return float(np.mean(np.all([out[k] == own[k][frames] for k in keys], axis=0)))


def timing(output: Motion, query: Motion, part: str) -> float:
    """The share of frames on which the output's part features (all but hand_raised) equal the query's."""
    keys = [k for k in PARTS[part] if not k.endswith("hand_raised")]
    out, want = relational_features(output), relational_features(query)
    return float(np.mean(np.all([out[k] == want[k] for k in keys], axis=0)))


def composite(walk: Motion, punch: Motion) -> Motion:
    upper = find_rig(walk).upper_body_mask(walk.skeleton)[None, :, None]
    return walk.with_arrays(rotations=np.where(upper, punch.rotations, walk.rotations))


def run_case(query: Motion, part: str, library: FeatureLibrary, rows: list) -> None:
    t0 = time.perf_counter()
    ours = assemble(query, {part: library})
    t_ours = time.perf_counter() - t0
    free = assemble(query, {part: library}, contacts=None)
    t0 = time.perf_counter()
    match = retrieve_parts(query, library, [part])[part]
    clip = library.motions[match.clip]
    direct = direct_assembly(query, clip, match.start, part)
    t_direct = time.perf_counter() - t0
    assert match == ours.matches[part]
    rows.append({
        "clip": match.clip, "cost": match.cost, "query_skate": skate(query),
        "ours": (skate(ours.motion), *juncture_error(ours.motion, query, part),
                 follow(ours.motion, clip, match.start + ours.time_maps[part], part), timing(ours.motion, query, part),
                 1000 * t_ours),
        "no stage": (skate(free.motion), *juncture_error(free.motion, query, part),
                     follow(free.motion, clip, match.start + free.time_maps[part], part),
                     timing(free.motion, query, part),
                     float("nan")),
        "direct": (skate(direct), *juncture_error(direct, query, part),
                   follow(direct, clip, match.start + np.arange(query.n_frames), part), timing(direct, query, part),
                   1000 * t_direct),
    })


def print_rows(title: str, rows: list) -> None:
    print(f"\n== {title}: {len(rows)} queries (medians; skate cm/s, juncture degrees, time ms)")
    print(f"   query's own skate {statistics.median(r['query_skate'] for r in rows):.2f}")
    print(f"   {'method':<8}{'skate':>8}{'mean diff':>11}{'std diff':>10}{'follow':>8}{'timing':>8}{'time':>8}")
    for method in ("ours", "no stage", "direct"):
        figures = [statistics.median(r[method][k] for r in rows) for k in range(6)]
        print(f"   {method:<8}{figures[0]:>8.2f}{figures[1]:>11.2e}{figures[2]:>10.2e}{figures[3]:>8.2f}"
              f"{figures[4]:>8.2f}{figures[5]:>8.1f}")
    clips = {}
    for r in rows:
        kind = Path(r["clip"]).name.split("_")[0]
        clips[kind] = clips.get(kind, 0) + 1
    print(f"   retrieved: {clips}; median cost {statistics.median(r['cost'] for r in rows):.3f}")


def main() -> None:
    folder = MOCAP / "bandai1"
    every = {p.stem: load(f"bandai1/{p.stem}") for p in sorted(folder.glob("*.bvh"))}
    fps = every["walk_normal_001"].fps
    upper_rows = []
    for take, starts in PUNCHES.items():
        punch = every[take]
        for start in starts:
            clips = {name: m for name, m in every.items() if name != take}
            margin = int(round(0.5 * fps))
            clips[f"{take} before"] = punch[: max(start - margin, 0)]
            clips[f"{take} after"] = punch[start + N + margin:]
            clips = {name: m for name, m in clips.items() if m.n_frames >= N}
            t0 = time.perf_counter()
            library = FeatureLibrary.build(clips, fps)
            build = time.perf_counter() - t0
            for walk in UPPER_WALKS:
                query = composite(every[walk][30:30 + N], punch[start:start + N])
                run_case(query, "upper", library, upper_rows)
    print(f"library: {len(every)} bandai1 clips, {sum(m.n_frames for m in every.values())} frames; "
          f"FeatureLibrary.build {1000 * build:.0f} ms")
    print_rows("upper body of a punch over a walk", upper_rows)
    lower_rows = []
    for walk, starts in LOWER_WALKS.items():
        library = FeatureLibrary.build({name: m for name, m in every.items() if name != walk}, fps)
        for start in starts:
            run_case(every[walk][start:start + N], "lower", library, lower_rows)
    print_rows("lower body of a walk from the other clips", lower_rows)
    print("\n   per query, lower: query skate / ours / no stage / direct")
    print("   " + ", ".join(f"{r['query_skate']:.1f}/{r['ours'][0]:.1f}/{r['no stage'][0]:.1f}/{r['direct'][0]:.1f}"
                          for r in lower_rows))


if __name__ == "__main__":
    from common import require_capture

    require_capture()
    main()
