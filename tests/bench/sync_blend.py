"""Motions played at the same time: synchronized blending (Ménardais 2004, core.mkm) against the NLA's.

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/sync_blend.py [--naive-only] [--rows]

Clips: eight locomotion clips from ../shared/mocap/bandai1 (Y up, centimetres,
30 fps, read with ``unit=0.01``): walks in four styles (normal, happy, sad,
proud), a run, a dash, a walk to the left and a walk backwards. Every
unordered pair of different clips, both starting at output frame 0, at
weights 0.25, 0.5 and 0.75 for the first of the two (which has the higher
priority): 84 blends per method.

Methods:
  sync   core.mkm.blend_clips: support-phase sequences, their synchronization
         and time warps (core.sync), the blend, the contact stage over the whole
         blend; clips cyclic as core.sync.is_cyclic finds them;
  naive  core.mkm.naive_blend: what the NLA shows for the two strips on stacked
         tracks in Replace mode (influences from the weights), with their default
         extrapolation (Hold), no time warp, no contact stage.

The measure (core.quality, the project's one definition, not redefined here),
each blend measured as one gap from its first to its last frame with
core.quality.gap_quality, its floor levels its own:
  skate   mean horizontal speed of the ankle and toe joints on frame pairs
          1/30 s apart where the joint is within 3 % of its own height range
          above its floor; in cm/s (leg lengths/s times the leg length);
  accel   the peak over the blend of the per-frame mean joint acceleration,
          over the two clips' own 99th percentile.
Both also over the frames where both clips still play their own frames (the
naive blend holds the shorter clip's last pose after it ends, as the NLA
does; a synchronized non-cyclic clip holds its last element): "both playing".
The sources' own skate: the same measure over each whole clip
(tests/bench/quality.whole_clip_skate); its median over the eight clips.

Targets (the issue): synchronized median skate at most 1.5x the sources'
median and at most a third of naive's; two 300-frame clips blended in under
20 ms, analysis included (contacts, sequences, synchronization, blend, contact
stage), file reading excluded.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common import load, short, timed  # noqa: E402  (tests/bench, next to this script)
from quality import whole_clip_skate  # noqa: E402
from core.mkm import blend_clips, naive_blend  # noqa: E402
from core.motion import Motion  # noqa: E402
from core.quality import SourceFigures, foot_levels, foot_positions, gap_quality  # noqa: E402
from core.rig import Rig, detect_up, find_rig, leg_length  # noqa: E402

CLIPS = (
    "bandai1/walk_normal_001",
    "bandai1/walk_happy_001",
    "bandai1/walk_sad_001",
    "bandai1/walk_proud_001",
    "bandai1/run_happy_001",
    "bandai1/dash_happy_001",
    "bandai1/walk-left_normal_001",
    "bandai1/walk-back_happy_001",
)
WEIGHTS = (0.25, 0.5, 0.75)  # the first clip's; the second has the rest
SPEED_CLIPS = ("bandai1/walk_sad_001", "bandai1/walk_proud_001")  # cut to SPEED_FRAMES each
SPEED_FRAMES = 300
SPEED_TARGET_S = 0.020
SOURCE_RATIO_TARGET = 1.5
NAIVE_RATIO_TARGET = 1.0 / 3.0


@dataclass
class Figures:
    skate: float | None  # cm/s, over the whole blend
    accel: float | None  # peak over the clips' p99
    skate_playing: float | None  # cm/s, over the frames where both clips play their own frames
    frames: int


@dataclass
class Row:
    a: str
    b: str
    weight: float
    naive: Figures
    sync: Figures | None = None
    delayed: str = ""
    failure: str = ""


def measure(output: Motion, playing: tuple[int, int], sources: list[SourceFigures], rig: Rig, up: np.ndarray,
            leg: float, cm_per_unit: float) -> Figures:
    """core.quality.gap_quality of the whole output, and its skate over output frames ``playing``
    (first, last; inclusive)."""
    feet = foot_positions(output, rig)
    levels = foot_levels(feet @ up, output.fps)
    placed = [(s, 0) for s in sources]
    whole = gap_quality(output, 0, (0, output.n_frames - 1), up=up, leg=leg, output_feet=feet, output_levels=levels,
                        sources=placed)
    playing = gap_quality(output, 0, playing, up=up, leg=leg, output_feet=feet, output_levels=levels,
                          sources=placed)
    to_cm = leg * cm_per_unit
    return Figures(None if whole.skate is None else whole.skate * to_cm, whole.accel,
                   None if playing.skate is None else playing.skate * to_cm, output.n_frames)


def sync_playing(result, motions: list[Motion]) -> tuple[int, int]:
    """The output frames (first, last) over which every clip of a synchronized blend plays its
    own frames: from the last one joining (a delayed start) until the first one that is not
    cyclic passes its last frame."""
    warps = np.asarray(result.plan.warps, dtype=np.float64)
    playing = np.ones(warps.shape[1], dtype=bool)
    for w, m, cyclic in zip(warps, motions, result.cyclic):
        playing &= ~np.isnan(w)
        if not cyclic:
            playing &= np.nan_to_num(w, nan=np.inf) <= m.n_frames - 1 + 1e-9
    frames = np.flatnonzero(playing)
    if not len(frames):
        return 0, -1
    last = frames[0] + np.argmax(np.diff(np.append(frames, frames[-1] + 2)) > 1)
    return int(frames[0]), int(last)


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def fmt(x: float | None, width: int = 7, digits: int = 2) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:{width}.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--naive-only", action="store_true", help="the naive blend only (no core.sync needed)")
    parser.add_argument("--rows", action="store_true", help="print every blend")
    args = parser.parse_args()

    clips = {short(name): load(name) for name in CLIPS}
    first = next(iter(clips.values()))
    rig = find_rig(first)
    up = detect_up(first, rig)
    leg = 0.5 * (leg_length(first, rig, "L") + leg_length(first, rig, "R"))
    cm = 100.0 * first.skeleton.unit
    sources = {label: SourceFigures.of(m, rig, up) for label, m in clips.items()}
    own = {label: whole_clip_skate(s, up, m.fps, leg) for (label, s), m in zip(sources.items(), clips.values())}
    source_median = median([v * leg * cm for v in own.values() if v is not None])
    print(f"{len(clips)} clips, leg {leg * cm:.1f} cm; their own skate (cm/s): "
          + ", ".join(f"{k} {fmt(None if v is None else v * leg * cm, 0)}" for k, v in own.items()))

    sync_error = None
    if not args.naive_only:
        try:
            import core.sync  # noqa: F401
        except ImportError as error:
            sync_error = f"core.sync is not available ({error}): the synchronized side is not run"
            print(sync_error)

    rows = []
    for (a, ma), (b, mb) in itertools.combinations(clips.items(), 2):
        pair_sources = [sources[a], sources[b]]
        for w in WEIGHTS:
            naive = naive_blend([ma, mb], [w, 1.0 - w], [0, 0])
            row = Row(a, b, w, measure(naive, (0, min(ma.n_frames, mb.n_frames) - 1), pair_sources, rig, up, leg, cm))
            if not args.naive_only and sync_error is None:
                try:
                    result = blend_clips([ma, mb], names=[a, b], weights=[w, 1.0 - w], rig=rig)
                    row.sync = measure(result.motion, sync_playing(result, [ma, mb]), pair_sources, rig, up, leg, cm)
                    row.delayed = "; ".join(f"{d['clip']} +{d['frames']}" for d in result.delayed())
                except ValueError as error:
                    row.failure = str(error)
            rows.append(row)

    if args.rows:
        print(f"\n{'pair':<34} {'w':>5} | {'naive skate':>11} {'playing':>8} {'accel':>6} | "
              f"{'sync skate':>10} {'playing':>8} {'accel':>6} | delayed")
        for r in rows:
            s = r.sync
            print(f"{r.a + ' + ' + r.b:<34} {r.weight:5.2f} | {fmt(r.naive.skate, 11)} {fmt(r.naive.skate_playing, 8)} "
                  f"{fmt(r.naive.accel, 6)} | {fmt(s and s.skate, 10)} {fmt(s and s.skate_playing, 8)} "
                  f"{fmt(s and s.accel, 6)} | {r.delayed}{'FAILED: ' + r.failure if r.failure else ''}")

    print(f"\nmedians over {len(rows)} blends ({len(rows) // len(WEIGHTS)} pairs x weights {WEIGHTS}):")
    print(f"  {'':8} {'skate cm/s':>11} {'both playing':>13} {'peak accel':>11}")
    print(f"  {'sources':8} {fmt(source_median, 11)}")
    for name in ("naive", "sync"):
        got = [getattr(r, name) for r in rows if getattr(r, name) is not None]
        if not got:
            continue
        print(f"  {name:8} {fmt(median(f.skate for f in got), 11)} {fmt(median(f.skate_playing for f in got), 13)} "
              f"{fmt(median(f.accel for f in got), 11)}")
    failures = [r for r in rows if r.failure]
    if failures:
        print(f"  {len(failures)} synchronized blend(s) failed, e.g. {failures[0].a} + {failures[0].b}: {failures[0].failure}")

    print("\ntargets:")
    synced = [r.sync for r in rows if r.sync is not None]
    if synced:
        sync_median = median(f.skate for f in synced)
        naive_median = median(r.naive.skate for r in rows)
        print(f"  sync median skate {fmt(sync_median, 0)} <= {SOURCE_RATIO_TARGET}x the sources' "
              f"{fmt(source_median, 0)} = {fmt(SOURCE_RATIO_TARGET * source_median, 0)}: "
              f"{'met' if sync_median <= SOURCE_RATIO_TARGET * source_median else 'NOT met'}")
        print(f"  sync median skate {fmt(sync_median, 0)} <= 1/3 of naive's {fmt(naive_median, 0)} = "
              f"{fmt(NAIVE_RATIO_TARGET * naive_median, 0)}: "
              f"{'met' if sync_median <= NAIVE_RATIO_TARGET * naive_median else 'NOT met'}")
        # the same over the frames where both clips play their own frames (a clip holding its last
        # pose, however long, skates little and would flatter the whole-blend figure)
        sync_both = median(f.skate_playing for f in synced)
        naive_playing = median(r.naive.skate_playing for r in rows)
        print(f"  (both playing: sync {fmt(sync_both, 0)} against 1.5x sources {fmt(SOURCE_RATIO_TARGET * source_median, 0)}"
              f" and 1/3 of naive {fmt(NAIVE_RATIO_TARGET * naive_playing, 0)}: "
              f"{'both met' if sync_both <= min(SOURCE_RATIO_TARGET * source_median, NAIVE_RATIO_TARGET * naive_playing) else 'NOT both met'})")
        a, b = (load(name)[:SPEED_FRAMES] for name in SPEED_CLIPS)
        frames = blend_clips([a, b], weights=[0.5, 0.5], rig=rig).motion.n_frames
        seconds = timed(lambda: blend_clips([a, b], weights=[0.5, 0.5], rig=rig), repeat=9)
        naive_seconds = timed(lambda: naive_blend([a, b], [0.5, 0.5], [0, 0]), repeat=9)
        print(f"  two {SPEED_FRAMES}-frame clips ({', '.join(short(n) for n in SPEED_CLIPS)}) synchronized and "
              f"blended into {frames} frames in {seconds * 1e3:.1f} ms (naive {naive_seconds * 1e3:.1f} ms) < "
              f"{SPEED_TARGET_S * 1e3:.0f} ms: {'met' if seconds < SPEED_TARGET_S else 'NOT met'}")
    else:
        print("  (the synchronized side was not run: nothing to check)")


if __name__ == "__main__":
    main()
