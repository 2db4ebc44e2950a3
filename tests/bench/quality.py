"""Synthesis quality on real capture, gap by gap: the engine against a plain NLA crossfade.

Run by hand (not collected as a test):
    .venv/bin/python tests/bench/quality.py [--quick] [--plot DIR] [--help]

Clips: fourteen real clips from ../shared/mocap (Bandai Namco, Y up,
centimetres, 30 fps, read with ``unit=0.01``): walks, runs and dashes in six
styles (walk normal and sad, run happy and proud, dash angry and childish),
bow, bye, guide, punch, kick, the short dance, and the walking turns left and
right of dataset 2. Every ordered pair of different clips is one two-clip
timeline: 182 pairs per placement.

Placements (frames at 30 fps), three, with the cores D = 0.3, 0.6 and 1.0 s
apart, i.e. the next core's first frame D * fps frames after the previous
core's last frame:
  * each clip's core is the clip without a margin of D at either end (at most
    a third of the clip: the dashes and the guide at D = 1 s);
  * the previous clip starts at frame 0, the next one where its core then
    starts D after the previous core ends: ``next_start = prev_core_last + D *
    fps - next_margin``.
  So the two strips overlap exactly on the gap (both margins D): the next strip
  starts on the previous core's last frame, the previous strip ends on the next
  core's first frame. Where a margin is capped the overlap is shorter than the
  gap and each untouched clip covers less of it.

The measure (core.quality, the project's one definition, not redefined here):
for each pair the gap is the output frames from the previous core's last frame
to the next core's first frame, inclusive, and core.quality.gap_quality gives
  skate   mean horizontal speed of the ankle and toe joints on consecutive
          frame pairs where the joint is within 3 % of its own height range
          above its own floor (2nd percentile of its height over the motion),
          forward differences; printed in cm/s (leg lengths/s times the rig's
          leg length in cm);
  accel   the peak over the gap of the per-frame mean over every joint of its
          acceleration, over the two clips' 99th percentile of the same;
each with the untouched clips on the same timeline frames (the previous clip
after its core, the following one before its core, pooled for skate, the
larger peak for accel). The benchmark calls gap_quality itself on each
method's output with the gap frames of its own placement: the engine's
figures in its plan (result.plan.pairs[k].quality) are not used to grade it,
only compared with ours at the end. The sources' own skate is the same measure
over each whole clip (its own floor and band); their median over the clips is
a target's reference.

The two methods, on the same timeline:
  engine     core.synthesize.synthesize([Clip(prev, 0, core), Clip(next, start, core)]).
  crossfade  what an animator does with two overlapping NLA strips and auto
             blend in/out (tests/bench/metrics.py, naive_crossfade with
             auto_blend): the next strip moved by hand so that its pelvis at
             its first frame sits on the previous clip's pelvis there (on the
             ground, facing the same way), then a linear crossfade of every
             local rotation (slerp) and translation over the strips' overlap,
             weight 0 on its first frame and 1 on its last, so both cores
             play untouched and all the blending is inside the gap.

Three rigs, the same pairs and placements on each (--quick runs the first only):
  original   the clips as read;
  CMU        renamed to CMU joint names, in metres and turned Z up
             (metrics.cmu_metres_z_up): every figure must be identical (max
             relative difference 1e-6);
  120 fps    resampled to 120 fps, starts and cores at four times the frames:
             the summary medians must agree within 5 %.

Every joint is judged too (core.quality): a gap's pop is the largest over
joints of each joint's peak acceleration in the gap over that joint's own 99th
percentile in the two clips (a knee that snaps hides in the mean over fifty
joints). Acceleration and pop are judged against their references: the larger
of the untouched clips' figure and that of the smoothest joint paths joining
the cores (each joint on its own clamped spline, no skeleton), so a tight
placement is not failed for what no motion could do.

Targets (legs issue), per placement where it says so, over every gap of the
original rig and at 120 fps (a gap whose untouched clips have no contact
frame, or whose output has none, is listed but left out of the skate ratios;
an engine failure is listed and left out of all):
  pop    over its reference: median at most 1.2, at most 5 % of gaps above
         2 x, none above 4 x, at each placement;
  accel  peak over its reference: median at most 1.2, at most 5 % of gaps
         above 2 x;
  skate  over the untouched clips': median at most 1.0; above 2 x at most
         10 % of gaps at 0.6 and 1.0 s, 20 % at 0.3 s; none above 4 x at 0.6
         and 1.0 s;
  hops   adaptation gaps with both feet up where no source has them: at most 2 %;
  cores  every joint on every core frame where the (aligned) clip has it, to
         1e-6 of the body height (core.rig.body_height), on every rig: the
         first clip as it is, the next one by its pair's plan alignment.

What the cores force: beside the smoothest joint paths, a floor no motion
with those cores goes below (metrics.accel_floor), over the untouched
clips' peak, printed beside the engine's.

--plot DIR draws Oshita 2014's Fig. 5 for a few pairs: the lower-body speed
(mean of both feet and the pelvis) and the upper-body speed (mean of both
hands, the chest and the head) over time for the engine, the crossfade and the
untouched clips, cores shaded (matplotlib, needed only then).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import metrics  # noqa: E402  (tests/bench, next to this script)
# core_range and next_start place the speed benchmark's pairs (synthesis_speed.py reaches them through here)
from common import MOCAP, core_range, load, next_start, short  # noqa: E402,F401
from core.motion import Motion, forward_kinematics  # noqa: E402
from core.quality import (GapQuality, SourceFigures, clips_accel_p99, foot_levels, foot_positions,  # noqa: E402
                          gap_quality, gap_samples, measure_step, skate_samples, smoothest_join)
from core.rig import Rig, body_height, find_rig, leg_length  # noqa: E402

CLIPS = (
    "bandai1/walk_normal_001",
    "bandai1/walk_sad_001",
    "bandai1/run_happy_001",
    "bandai1/run_proud_001",
    "bandai1/dash_angry_001",
    "bandai1/dash_childish_001",
    "bandai1/bow_normal_001",
    "bandai1/bye_normal_001",
    "bandai1/guide_normal_001",
    "bandai1/punch_normal_001",
    "bandai1/kick_normal_001",
    "bandai1/dance-short_normal_001",
    "bandai2/walk-turn-left_normal_001",
    "bandai2/walk-turn-right_normal_001",
)
GAPS_S = (0.3, 0.6, 1.0)  # how far apart the cores are
MAX_MARGIN_SHARE = 1.0 / 3.0  # a core leaves at most this share of its clip at either end
RESAMPLED_FPS = 120.0
IDENTICAL = 1e-6  # relative: figures of the same motion in another rig's names, unit and axes
RESAMPLED_AGREEMENT = 0.05  # relative: summary medians at RESAMPLED_FPS against the original rate
CORE_TOLERANCE = 1e-6  # body heights
PLOT_PAIRS = (("walk", "bow"), ("run_happy", "kick"), ("walk-turn-left", "dash_angry"), ("dance-short", "punch"))
PLOT_GAP_S = 0.6
PLOT_MARGIN_S = 2.0  # the figures show this long either side of the gap


# --------------------------------------------------------------------------
# placement


@dataclass(frozen=True)
class Placement:
    """Two clips on the timeline: the previous one from frame 0, the next one from ``next_start``.

    Cores are clip frames, inclusive.
    """

    prev_core: tuple[int, int]
    next_start: int
    next_core: tuple[int, int]

    @property
    def gap(self) -> tuple[int, int]:
        """Timeline frames from the previous core's last to the next core's first, inclusive."""
        return self.prev_core[1], self.next_start + self.next_core[0]

    def scaled(self, k: int) -> "Placement":
        """The same placement at ``k`` times the frame rate (a clip resampled so, frame ``i`` is frame ``k i``)."""
        return Placement((k * self.prev_core[0], k * self.prev_core[1]), k * self.next_start,
                         (k * self.next_core[0], k * self.next_core[1]))


def core_margin(n_frames: int, gap_frames: int) -> int:
    """Frames a core leaves at either end of its clip: the gap's length, at most a third of the clip."""
    return min(gap_frames, int(n_frames * MAX_MARGIN_SHARE))


def placed(prev_frames: int, next_frames: int, gap_frames: int) -> Placement:
    """The placement whose cores are ``gap_frames`` apart (see the module docstring)."""
    mp, mn = core_margin(prev_frames, gap_frames), core_margin(next_frames, gap_frames)
    prev_core = (mp, prev_frames - 1 - mp)
    return Placement(prev_core, prev_core[1] + gap_frames - mn, (mn, next_frames - 1 - mn))


def strips_overlap(prev_frames: int, placement: Placement) -> int:
    """Timeline frames both strips cover (0 when the next one starts after the previous one ends)."""
    return max(prev_frames - placement.next_start, 0)


# --------------------------------------------------------------------------
# rigs: the same clips in other conventions


@dataclass(frozen=True)
class Variant:
    """A way of storing the clips: a conversion of each, and how many frames a source frame becomes."""

    name: str
    convert: Callable[[Motion], Motion]
    frames_per_frame: int = 1


VARIANTS = (
    Variant("original", lambda m: m),
    Variant("CMU names, metres, Z up", metrics.cmu_metres_z_up),
    Variant(f"{RESAMPLED_FPS:g} fps", lambda m: m.resampled(RESAMPLED_FPS), 4),
)


@dataclass(frozen=True)
class Rigged:
    """The clips of one variant and what measuring them needs."""

    variant: Variant
    clips: dict  # label -> Motion
    rig: Rig
    up: np.ndarray
    leg: float  # mean leg length, the clips' unit
    cm: float  # centimetres per unit
    body: float  # body height, the clips' unit
    sources: dict  # label -> SourceFigures

    @classmethod
    def of(cls, variant: Variant, originals: dict) -> "Rigged":
        clips = {label: variant.convert(m) for label, m in originals.items()}
        first = next(iter(clips.values()))
        rig = find_rig(first)
        up = first.skeleton.up  # the conversion knows where up is; the engine finds it itself
        sources = {label: SourceFigures.of(m, rig, up) for label, m in clips.items()}
        return cls(variant, clips, rig, up, 0.5 * (leg_length(first, rig, "L") + leg_length(first, rig, "R")),
                   100.0 * first.skeleton.unit, body_height(first, rig), sources)

    @property
    def leg_cm(self) -> float:
        return self.leg * self.cm

    @property
    def fps(self) -> float:
        return next(iter(self.clips.values())).fps


def whole_clip_skate(src: SourceFigures, up: np.ndarray, fps: float, leg: float) -> float | None:
    """A clip's own skate (leg lengths/s): the measure over the whole clip, its own floor and band."""
    speed, down = skate_samples(src.feet, src.levels, up, fps)
    return float(speed[down].mean()) / leg if down.any() else None


# --------------------------------------------------------------------------
# one pair


@dataclass
class GapRecord:
    """The figures of one pair at one placement on one rig (skate in legs/s, accel over p99)."""

    prev: str
    next: str
    gap_s: float
    gap: tuple[int, int]
    crossfade: GapQuality
    engine: GapQuality | None = None
    plan_quality: GapQuality | None = None  # what the engine's own plan says, to compare with
    plan_gap: tuple[int, int] | None = None
    core_error: float | None = None  # body heights
    hop_frames: int | None = None  # gap frames with both feet above the band while neither untouched clip has
    # what the engine's cores (as it aligned them) force on the gap's peak acceleration, over p99:
    accel_smoothest: float | None = None  # the smoothest joint paths joining them (core.quality.smoothest_join)
    accel_floor: float | None = None  # a bound no motion joining them goes below (metrics.accel_floor)
    method: str = ""
    seconds: float | None = None
    failure: str = ""

    @property
    def key(self) -> tuple[str, str, float]:
        return self.prev, self.next, self.gap_s


def measured(output: Motion, output_start: int, gap: tuple[int, int], sources: list, rigged: Rigged) -> GapQuality:
    """core.quality.gap_quality of ``output`` on ``gap``, its floor levels its own (as the engine's plan does)."""
    feet = foot_positions(output, rigged.rig)
    return gap_quality(output, output_start, gap, up=rigged.up, leg=rigged.leg, output_feet=feet,
                       output_levels=foot_levels(feet @ rigged.up, output.fps), sources=sources)


def crossfaded(prev: Motion, nxt: Motion, placement: Placement, rig: Rig) -> Motion:
    """The NLA crossfade over the strips' overlap (two frames at least: its weights run from 0 to 1)."""
    blend = max(strips_overlap(prev.n_frames, placement), 2)
    return metrics.naive_crossfade(prev, nxt, placement.next_start, rig, blend_frames=blend, auto_blend=True)


def engine_core_error(result, prev: Motion, nxt: Motion, placement: Placement, rig: Rig) -> float:
    """Largest distance of any joint on any core frame of the output from its clip.

    The first clip plays as it is; the next one as the pair's plan aligned it.
    """
    aligned = result.plan.pairs[0].alignment.apply(nxt, rig.pelvis)
    return max(metrics.core_error(result.motion, result.start, prev, 0, placement.prev_core),
               metrics.core_error(result.motion, result.start, aligned, placement.next_start, placement.next_core))


def measure_pair(prev_label: str, next_label: str, gap_s: float, placement: Placement, rigged: Rigged,
                 engine, responsiveness: float, pose_ends: str) -> GapRecord:
    prev, nxt = rigged.clips[prev_label], rigged.clips[next_label]
    sources = [(rigged.sources[prev_label], 0), (rigged.sources[next_label], placement.next_start)]
    gap = placement.gap
    record = GapRecord(prev_label, next_label, gap_s, gap,
                       crossfade=measured(crossfaded(prev, nxt, placement, rigged.rig), 0, gap, sources, rigged))
    if engine is None:
        record.failure = "engine not available"
        return record
    Clip, synthesize = engine
    timeline = [Clip(prev, 0, core=placement.prev_core, name=prev_label),
                Clip(nxt, placement.next_start, core=placement.next_core, name=next_label)]
    t = time.perf_counter()
    try:
        result = synthesize(timeline, responsiveness=responsiveness, pose_ends=pose_ends)
    except Exception as error:  # a benchmark reports every failure and goes on
        record.failure = f"{type(error).__name__}: {error}"
        return record
    record.seconds = time.perf_counter() - t
    if result.plan.rejected or len(result.plan.pairs) != 1:
        reasons = "; ".join(r.reason for r in result.plan.rejected)
        record.failure = f"rejected: {reasons}" if reasons else f"{len(result.plan.pairs)} pairs in the plan"
        return record
    pair = result.plan.pairs[0]
    record.method = str(pair.method)
    record.plan_quality, record.plan_gap = getattr(pair, "quality", None), getattr(pair, "gap", None)
    record.engine = measured(result.motion, result.start, gap, sources, rigged)
    record.core_error = engine_core_error(result, prev, nxt, placement, rigged.rig) / rigged.body
    record.hop_frames = hop_frames(result.motion, result.start, gap, sources, rigged)
    record.accel_smoothest, record.accel_floor = forced_accel(result.motion, result.start, gap, sources)
    return record


def forced_accel(output: Motion, output_start: int, gap: tuple[int, int], sources: list
                 ) -> tuple[float | None, float | None]:
    """What the output's cores force on the gap's peak acceleration (over the clips' p99):
    the smoothest joint paths joining them (core.quality's, as the reference uses), and the
    floor no motion joining them goes below."""
    p99 = clips_accel_p99([src for src, _ in sources], output.fps)
    k = measure_step(output.fps)
    first, last = gap[0] - output_start, gap[1] - output_start
    if p99 <= 0 or first - k < 0 or last + k >= output.n_frames:
        return None, None
    g = forward_kinematics(output.rotations, output.positions, output.skeleton.parents, rotations_out=False)[0]
    frames, fixed = gap_samples(first, last, k)
    smoothest = smoothest_join(g[frames], fixed, output.fps, k).mean(axis=1).max()
    return smoothest / p99, metrics.accel_floor(g, first, last, k, output.fps) / p99


def both_feet_up(feet: np.ndarray, levels, up: np.ndarray, rig: Rig) -> np.ndarray:
    """``(F,)`` whether every ankle and toe joint of both feet is above its band (core.quality's)."""
    above = (feet @ up - levels.floor) > levels.band  # (F, K) in foot_joints order
    sizes = [2 if rig.leg(side).toe is not None else 1 for side in "LR"]
    return above[:, : sizes[0]].all(axis=1) & above[:, sizes[0] :].all(axis=1)


def hop_frames(output: Motion, output_start: int, gap: tuple[int, int], sources: list, rigged: Rigged) -> int:
    """Gap frames where the output has both feet in the air while neither untouched clip does there
    (the feet-planted issue: adaptation never lifts both feet at once unless a source does)."""
    frames = np.arange(gap[0], gap[1] + 1)
    feet = foot_positions(output, rigged.rig)
    up_out = both_feet_up(feet, foot_levels(feet @ rigged.up, output.fps), rigged.up, rigged.rig)[frames - output_start]
    up_src = np.zeros(len(frames), dtype=bool)
    for src, start in sources:
        inside = (frames - start >= 0) & (frames - start < len(src.feet))
        up_src[inside] |= both_feet_up(src.feet, src.levels, rigged.up, rigged.rig)[frames[inside] - start]
    return int((up_out & ~up_src).sum())


def placement_of(rigged: Rigged, prev_label: str, next_label: str, gap_s: float) -> Placement:
    """The pair's placement in the source clips' frames, then at the variant's rate (the same in seconds)."""
    k = rigged.variant.frames_per_frame
    frames = [(rigged.clips[label].n_frames - 1) // k + 1 for label in (prev_label, next_label)]
    return placed(*frames, int(round(gap_s * rigged.fps / k))).scaled(k)


def run_variant(rigged: Rigged, labels: list[str], gaps_s: tuple[float, ...], engine, args) -> list[GapRecord]:
    """Every ordered pair of ``labels`` at every placement, one progress line per placement."""
    records = []
    for gap_s in gaps_s:
        t = time.perf_counter()
        for a in labels:
            for b in labels:
                if a != b:
                    pl = placement_of(rigged, a, b, gap_s)
                    records.append(measure_pair(a, b, gap_s, pl, rigged, engine, args.responsiveness, args.pose_ends))
        print(f"  [{rigged.variant.name}] cores {gap_s:g} s apart: {len(labels) * (len(labels) - 1)} pairs, "
              f"{time.perf_counter() - t:.0f} s", flush=True)
    return records


# --------------------------------------------------------------------------
# figures over many gaps

METHODS = ("engine", "crossfade", "untouched")
FORCED = ("smoothest", "floor")  # what the engine's cores force on the acceleration (forced_accel)


def figure(record: GapRecord, method: str, kind: str) -> float | None:
    """``kind`` ("skate", "accel" or "pop") of ``method`` on the record's gap; the untouched clips'
    from the crossfade's."""
    if method == "untouched":
        return getattr(record.crossfade, f"{kind}_untouched")
    if method in FORCED:
        return getattr(record, f"accel_{method}") if kind == "accel" else None
    q = getattr(record, method)
    return None if q is None else getattr(q, kind)


def values(records: list[GapRecord], method: str, kind: str) -> np.ndarray:
    return np.array([v for r in records if (v := figure(r, method, kind)) is not None])


def ratio(record: GapRecord, method: str, kind: str) -> float | None:
    """The method's figure over the untouched clips' on the same frames; None where either is missing."""
    mine, theirs = figure(record, method, kind), figure(record, "untouched", kind)
    return None if mine is None or theirs is None or theirs <= 0 else mine / theirs


def ratios(records: list[GapRecord], method: str, kind: str) -> np.ndarray:
    return np.array([v for r in records if (v := ratio(r, method, kind)) is not None])


def reference_ratio(record: GapRecord, method: str, kind: str) -> float | None:
    """The method's "accel" or "pop" over what core.quality judges it against: its reference (the
    larger of the untouched clips' and the smoothest join's, each method's own cores), no less
    than the clips' own 99th percentile; None where either is missing."""
    q = record.crossfade if method == "untouched" else getattr(record, method)
    if q is None:
        return None
    if method == "untouched":
        q = replace(q, accel=q.accel_untouched, pop=q.pop_untouched)
    return getattr(q, f"{kind}_judged")


def reference_ratios(records: list[GapRecord], method: str, kind: str) -> np.ndarray:
    return np.array([v for r in records if (v := reference_ratio(r, method, kind)) is not None])


def median(x: np.ndarray) -> float:
    return float(np.median(x)) if len(x) else float("nan")


def p90(x: np.ndarray) -> float:
    return float(np.percentile(x, 90)) if len(x) else float("nan")


def share_above(x: np.ndarray, limit: float) -> float:
    return float(np.mean(x > limit)) if len(x) else float("nan")


def fmt(x: float | None, width: int = 6, digits: int = 2) -> str:
    return f"{'-':>{width}}" if x is None or not np.isfinite(x) else f"{x:{width}.{digits}f}"


def pct(x: float) -> str:
    return f"{'-':>5}" if not np.isfinite(x) else f"{100 * x:4.0f}%"


def print_summary(records: list[GapRecord], gaps_s: tuple[float, ...], leg_cm: float) -> None:
    """Per method and placement: medians, p90 and the shares of gaps above 1.5x and 2x the untouched clips."""
    print(f"{'':25}| {'skate cm/s':^13} | {'skate / untouched clips':^30} | {'peak accel / p99':^13} |"
          f" {'accel / untouched clips':^30}")
    head = f"{'median':>6} {'p90':>6} | {'median':>6} {'p90':>6} {'>1.5x':>5} {'>2x':>5} {'n':>4}"
    print(f"{'method':<10} {'cores':>6} {'gaps':>5}  |" + f" {head} |" + f" {head[:13]} |" f" {head}")
    for method in METHODS:
        for gap_s in (*gaps_s, None):
            rs = [r for r in records if gap_s is None or r.gap_s == gap_s]
            done = [r for r in rs if method == "untouched" or getattr(r, method) is not None]
            cells = []
            for kind, scale in (("skate", leg_cm), ("accel", 1.0)):
                v = values(done, method, kind) * scale
                cells.append(f"{fmt(median(v))} {fmt(p90(v))}")
                if method == "untouched":
                    cells.append(f"{'':30}")
                else:
                    q = ratios(done, method, kind)
                    cells.append(f"{fmt(median(q))} {fmt(p90(q))} {pct(share_above(q, 1.5))} {pct(share_above(q, 2.0))}"
                                 f" {len(q):4d}")
            label = "all" if gap_s is None else f"{gap_s:g} s"
            print(f"{method:<10} {label:>6} {len(done):5d}  | " + " | ".join(cells))
        print()
    print_over_reference(records, gaps_s)


def print_over_reference(records: list[GapRecord], gaps_s: tuple[float, ...]) -> None:
    """Per method and placement: the peak acceleration and the pop (the worst single joint) over
    their references, medians, p90, shares above 1.5x, 2x and 4x, and the largest."""
    head = f"{'median':>6} {'p90':>6} {'>1.5x':>5} {'>2x':>5} {'>4x':>5} {'max':>6}"
    print(f"{'':25}| {'peak accel / its reference':^40} | {'pop (worst joint) / its reference':^40}")
    print(f"{'method':<10} {'cores':>6} {'gaps':>5}  | {head} | {head}")
    for method in METHODS:
        for gap_s in (*gaps_s, None):
            rs = [r for r in records if gap_s is None or r.gap_s == gap_s]
            done = [r for r in rs if method == "untouched" or getattr(r, method) is not None]
            cells = []
            for kind in ("accel", "pop"):
                q = reference_ratios(done, method, kind)
                cells.append(f"{fmt(median(q))} {fmt(p90(q))} {pct(share_above(q, 1.5))} {pct(share_above(q, 2.0))}"
                             f" {pct(share_above(q, 4.0))} {fmt(max(q, default=float('nan')))}")
            print(f"{method:<10} {'all' if gap_s is None else f'{gap_s:g} s':>6} {len(done):5d}  | "
                  + " | ".join(cells))
        print()
    done = [r for r in records if r.engine is not None and r.engine.pop_joint]
    joints: dict[str, int] = {}
    for r in done:
        if (reference_ratio(r, "engine", "pop") or 0.0) > 2.0:
            joints[r.engine.pop_joint] = joints.get(r.engine.pop_joint, 0) + 1
    print("the engine's gaps whose pop is above 2 x its reference, by the joint that pops: "
          + (", ".join(f"{j} {n}" for j, n in sorted(joints.items(), key=lambda x: -x[1])) or "none") + "\n")


@dataclass(frozen=True)
class Check:
    text: str
    ok: bool

    def __str__(self) -> str:
        return f"  {self.text:<100} {'met' if self.ok else 'NOT met'}"


def targets(records: list[GapRecord], source_skate: float, leg_cm: float, gaps_s: tuple[float, ...],
            rate: str = "") -> list[Check]:
    """The targets of the module docstring, computed on ``records`` (the crossfade's figure alongside)."""
    done = [r for r in records if r.engine is not None]
    at = f" [{rate}]" if rate else ""

    def both(fn) -> str:
        return f"{fn('engine'):.2f} [crossfade {fn('crossfade'):.2f}]"

    def spread(what: str, q: dict, *, most: float | None = None, share: float | None = None,
               none_above_4x: bool = False) -> list[Check]:
        """Checks on ratios ``q`` {method: ratios}: the median at most ``most``, at most ``share``
        of them above 2x, none above 4x (those asked for); the crossfade's alongside."""
        out = []
        if most is not None:
            out.append(Check(f"{what}: median {both(lambda m: median(q[m]))} <= {most:g}", median(q["engine"]) <= most))
        if share is not None:
            out.append(Check(f"{what}: share above 2 x {both(lambda m: 100 * share_above(q[m], 2))} % <= {100 * share:g} %",
                             share_above(q["engine"], 2.0) <= share))
        if none_above_4x:
            out.append(Check(f"{what}: gaps above 4 x {both(lambda m: float(np.sum(q[m] > 4.0)))} = 0",
                             not np.any(q["engine"] > 4.0)))
        return out

    engines = ("engine", "crossfade")
    placed_at = {gap_s: [r for r in done if r.gap_s == gap_s] for gap_s in gaps_s}
    checks = []
    for gap_s, rs in placed_at.items():
        checks += spread(f"pop{at}, cores {gap_s:g} s, over its reference", {m: reference_ratios(rs, m, "pop")
                         for m in engines}, most=1.2, share=0.05, none_above_4x=True)
    checks += spread(f"accel{at}, peak over its reference", {m: reference_ratios(done, m, "accel") for m in engines},
                     most=1.2, share=0.05)
    checks += spread(f"skate{at}, per-gap ratio to the untouched clips", {m: ratios(done, m, "skate") for m in engines},
                     most=1.0)
    for gap_s, rs in placed_at.items():
        checks += spread(f"skate{at}, cores {gap_s:g} s, over the untouched clips", {m: ratios(rs, m, "skate")
                         for m in engines}, share=0.2 if gap_s < 0.45 else 0.1, none_above_4x=gap_s >= 0.45)
    adapted = [r for r in done if r.method.startswith("adaptation")]
    hops = sum(bool(r.hop_frames) for r in adapted)
    checks.append(Check(f"hops{at}: adaptation gaps with both feet up where no source has them {hops} of "
                        f"{len(adapted)} <= 2 %", hops <= 0.02 * len(adapted)))
    checks.append(Check(f"skate{at}: median {both(lambda m: median(values(done, m, 'skate')) * leg_cm)} cm/s "
                        f"(the sources' whole-clip median {source_skate * leg_cm:.2f}; for reference)", True))
    return checks


def print_forced(records: list[GapRecord], gaps_s: tuple[float, ...]) -> None:
    """What the engine's cores alone force on each gap's peak acceleration, over the untouched
    clips' peak: the smoothest joint paths joining them, and the floor no motion goes below."""
    print("what the cores force on the acceleration (over the untouched clips' peak; the engine's alignment):")
    print(f"  {'cores':>6} {'gaps':>5} | {'smoothest joint paths':^27} | {'no motion below':^27} | {'engine':^27}")
    print(f"  {'':>6} {'':>5} |" + f" {'median':>6} {'p90':>6} {'>1.2x':>5} {'>2x':>5} |" * 3)
    for gap_s in (*gaps_s, None):
        rs = [r for r in records if r.engine is not None and (gap_s is None or r.gap_s == gap_s)]
        cells = []
        for method in (*FORCED, "engine"):
            q = ratios(rs, method, "accel")
            cells.append(f"{fmt(median(q))} {fmt(p90(q))} {pct(share_above(q, 1.2))} {pct(share_above(q, 2.0))}")
        print(f"  {'all' if gap_s is None else f'{gap_s:g} s':>6} {len(rs):5d} | " + " | ".join(cells))
    print("  (smoothest: each joint on its own clamped spline between the core frames, no skeleton; a "
          "reference, not a bound)\n")


def core_check(runs: dict) -> Check:
    """The largest core error over every rig, placement and pair, where, and how many gaps exceed the tolerance."""
    errors = [(r.core_error, name, r) for name, (_, records) in runs.items() for r in records
              if r.core_error is not None]
    if not errors:
        return Check("cores: no engine output to check", False)
    err, name, r = max(errors, key=lambda x: x[0])
    over = sum(e > CORE_TOLERANCE for e, _, _ in errors)
    return Check(f"cores: max error {err:.2e} body heights <= {CORE_TOLERANCE:g} ({r.prev} > {r.next}, cores "
                 f"{r.gap_s:g} s apart, {name}); {over} of {len(errors)} gaps above", over == 0)


def print_by_method(records: list[GapRecord]) -> None:
    """The engine's gaps by the method its plan chose: how many, their median ratios and the worst core error."""
    done = [r for r in records if r.engine is not None]
    print(f"by the engine's method: {'':19} {'gaps':>5} {'skate / untouched':>18} {'accel / untouched':>18}"
          f" {'max core error':>15}")
    for method in sorted({r.method for r in done}):
        rs = [r for r in done if r.method == method]
        print(f"  {method:<42} {len(rs):5d} {fmt(median(ratios(rs, 'engine', 'skate')), 18)}"
              f" {fmt(median(ratios(rs, 'engine', 'accel')), 18)} {max(r.core_error for r in rs):15.1e}")
    adapted = [r for r in done if r.method.startswith("adaptation")]
    hops = [r for r in adapted if r.hop_frames]
    print(f"adaptation gaps with both feet in the air where neither untouched clip has them: {len(hops)} of "
          f"{len(adapted)} (the feet-planted issue: none)")


def print_row(r: GapRecord, leg_cm: float) -> None:
    def cm(x):
        return fmt(None if x is None else x * leg_cm, 6, 1)
    e = r.engine
    print(f"  {r.prev + ' > ' + r.next:<30} {r.gap_s:4g} s {r.gap[0]:5d}..{r.gap[1]:<5d} {r.method[:28]:<28}"
          f" skate {cm(e and e.skate)} {cm(r.crossfade.skate)} {cm(r.crossfade.skate_untouched)}"
          f"  accel {fmt(e and e.accel, 5)} {fmt(r.crossfade.accel, 5)} {fmt(r.crossfade.accel_untouched, 5)}"
          f"  pop {fmt(e and e.pop, 5)} / ref {fmt(e and e.pop_reference, 5)} {((e and e.pop_joint) or '-')[:12]:<12}"
          f"  core {fmt(r.core_error, 8, 1) if r.core_error is None else f'{r.core_error:8.1e}'}  {r.failure[:80]}")


def print_rows(title: str, rows: list[GapRecord], leg_cm: float, limit: int | None = None) -> None:
    """A titled table of gaps (the first ``limit`` of them if given)."""
    if not rows:
        return
    print(f"{title}\n  {'prev > next':<30} {'cores':>6} {'gap':^12} {'method':<28} skate cm/s: engine, crossfade,"
          f" untouched; accel / p99: the same; pop: the engine's worst joint / its reference, which joint;"
          f" core error (body heights)")
    for r in rows[:limit]:
        print_row(r, leg_cm)
    if limit is not None and len(rows) > limit:
        print(f"  ... and {len(rows) - limit} more (--rows prints every gap)")


def print_failures(records: list[GapRecord]) -> None:
    failed = [r for r in records if r.failure]
    if not failed:
        print("engine failures: none")
        return
    by_reason: dict[str, list[GapRecord]] = {}
    for r in failed:
        by_reason.setdefault(r.failure, []).append(r)
    print(f"engine failures: {len(failed)} gaps")
    for reason, rs in by_reason.items():
        shown = ", ".join(f"{r.prev} > {r.next} ({r.gap_s:g} s)" for r in rs[:4])
        print(f"  {len(rs)} x {reason[:160]}\n      {shown}{', ...' if len(rs) > 4 else ''}")


def plan_agreement(records: list[GapRecord]) -> str:
    """How the engine's own figures in its plan compare with this measure (they should agree)."""
    diffs, gaps_differ, missing = [], 0, 0
    for r in records:
        if r.engine is None:
            continue
        if r.plan_quality is None:
            missing += 1
            continue
        gaps_differ += r.plan_gap is not None and tuple(r.plan_gap) != tuple(r.gap)
        diffs += [relative_difference(getattr(r.engine, k), getattr(r.plan_quality, k)) for k, v in
                  r.engine.to_dict().items() if not isinstance(v, str)]
    worst = max(diffs, default=float("nan"))
    return (f"the engine's own figures (plan.pairs[k].quality) against this measure: max relative difference "
            f"{worst:.1e}; its gap differs from this placement's on {gaps_differ} pairs"
            + (f"; no figures in the plan on {missing}" if missing else ""))


# --------------------------------------------------------------------------
# the same pairs on another rig


ROUNDING = 1e-9  # figures (legs/s, ratios) this close are the same figure, rounded differently


def relative_difference(a: float | None, b: float | None) -> float:
    """|a - b| over the larger magnitude; 0 for two Nones, or two figures both at rounding's
    level (a planted foot's skate of 5e-15 legs/s in one rig and 2e-14 in another), inf for
    one None."""
    if a is None or b is None:
        return 0.0 if a is None and b is None else float("inf")
    if abs(a - b) <= ROUNDING:
        return 0.0
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale > 0 else 0.0


COMPARED = [(m, k) for m in METHODS for k in ("skate", "accel", "pop")]


def pair_differences(base: list[GapRecord], other: list[GapRecord]) -> list[tuple[float, GapRecord, str]]:
    """Per pair and figure compared, the relative difference between two runs of the same pairs."""
    theirs = {r.key: r for r in other}
    out = []
    for r in base:
        o = theirs[r.key]
        for m, k in COMPARED:
            if m == "engine" and (r.engine is None or o.engine is None):
                # a failure on one rig only is a difference; on both, nothing to compare
                out.append((0.0 if r.engine is None and o.engine is None else float("inf"), r, "engine"))
                continue
            out.append((relative_difference(figure(r, m, k), figure(o, m, k)), r, f"{m} {k}"))
    return out


def summary_medians(records: list[GapRecord], source_skate: float | None, leg_cm: float) -> dict[str, float]:
    done = [r for r in records if r.engine is not None]
    out = {"sources' whole-clip skate, cm/s": (source_skate or float("nan")) * leg_cm}
    for m in METHODS:
        out[f"{m} skate, cm/s"] = median(values(done, m, "skate")) * leg_cm
        out[f"{m} peak accel / p99"] = median(values(done, m, "accel"))
        out[f"{m} pop / joint p99"] = median(values(done, m, "pop"))
        if m != "untouched":
            out[f"{m} skate / untouched"] = median(ratios(done, m, "skate"))
            out[f"{m} accel / untouched"] = median(ratios(done, m, "accel"))
    return out


def identical_check(name: str, base: tuple, other: tuple) -> Check:
    """Every figure of every pair, and the sources' median, against the original rig's."""
    (b_src, b_records), (o_src, o_records) = base, other
    diffs = pair_differences(b_records, o_records)
    diffs.append((relative_difference(b_src, o_src), None, "sources' whole-clip skate"))
    worst, r, what = max(diffs, key=lambda d: d[0])
    where = what if r is None else f"{what}, {r.prev} > {r.next} ({r.gap_s:g} s)"
    return Check(f"[{name}] every figure identical to the original's: max relative difference {worst:.1e} "
                 f"({where}) <= {IDENTICAL:g}", worst <= IDENTICAL)


def compare_resampled(name: str, base: tuple, other: tuple, leg_cm: float) -> list[Check]:
    """Prints the per-pair relative differences; checks the summary medians against the original rate's."""
    (b_src, b_records), (o_src, o_records) = base, other
    diffs = pair_differences(b_records, o_records)
    print(f"[{name}] against the original rate, per pair (median / p90 of the relative differences):")
    for m, k in COMPARED:
        d = np.array([x for x, _, what in diffs if what == f"{m} {k}" and np.isfinite(x)])
        print(f"  {m + ' ' + k:<20} {fmt(median(d))} / {fmt(p90(d))}")
    a, b = summary_medians(b_records, b_src, leg_cm), summary_medians(o_records, o_src, leg_cm)
    checks = []
    for key in a:
        d = relative_difference(a[key], b[key])
        checks.append(Check(f"[{name}] median {key:<32} {a[key]:8.3f} vs {b[key]:8.3f}: {100 * d:5.1f} % "
                            f"<= {100 * RESAMPLED_AGREEMENT:g} %", d <= RESAMPLED_AGREEMENT))
    met = sum(c.ok for c in checks)
    return checks + [Check(f"[{name}] summary medians within {100 * RESAMPLED_AGREEMENT:g} % of the original's: "
                           f"{met} of {len(checks)}", met == len(checks))]


# --------------------------------------------------------------------------
# Fig. 5 of Oshita 2014


def speeds_on_timeline(motion: Motion, start: int, rig: Rig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Timeline frames, lower- and upper-body speeds (units/s) of a motion whose frame 0 plays at ``start``."""
    return (start + np.arange(motion.n_frames), metrics.mean_speed(motion, metrics.lower_body_joints(rig)),
            metrics.mean_speed(motion, metrics.upper_body_joints(rig)))


def plot_fig5(out_dir: Path, rigged: Rigged, engine, args) -> list[Path]:
    """One PNG per pair of PLOT_PAIRS: lower- and upper-body speed over time, cores shaded."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    Clip, synthesize = engine
    fps, rig, to_m = rigged.fps, rigged.rig, rigged.cm / 100.0
    written = []
    for a, b in PLOT_PAIRS:
        if a not in rigged.clips or b not in rigged.clips:
            continue
        prev, nxt = rigged.clips[a], rigged.clips[b]
        pl = placement_of(rigged, a, b, PLOT_GAP_S)
        lines = {"untouched clips": [speeds_on_timeline(prev, 0, rig), speeds_on_timeline(nxt, pl.next_start, rig)],
                 "crossfade": [speeds_on_timeline(crossfaded(prev, nxt, pl, rig), 0, rig)]}
        try:
            timeline = [Clip(prev, 0, core=pl.prev_core, name=a), Clip(nxt, pl.next_start, core=pl.next_core, name=b)]
            result = synthesize(timeline, responsiveness=args.responsiveness, pose_ends=args.pose_ends)
            lines["engine"] = [speeds_on_timeline(result.motion, result.start, rig)]
            method = str(result.plan.pairs[0].method)
        except Exception as error:  # draw what there is
            method = f"engine failed: {type(error).__name__}"
        g0, g1 = pl.gap
        lo, hi = g0 - PLOT_MARGIN_S * fps, g1 + PLOT_MARGIN_S * fps
        fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
        style = {"engine": dict(color="C0", lw=1.8), "crossfade": dict(color="C3", lw=1.2, ls="--"),
                 "untouched clips": dict(color="0.45", lw=1.0, ls=":")}
        for ax, part, title in ((axes[0], 1, "lower body (feet, pelvis)"),
                                (axes[1], 2, "upper body (hands, chest, head)")):
            for c0, c1 in (pl.prev_core, (pl.next_start + pl.next_core[0], pl.next_start + pl.next_core[1])):
                ax.axvspan(max(c0, lo) / fps, min(c1, hi) / fps, color="0.9", lw=0)
            for name, parts in lines.items():
                for i, series in enumerate(parts):
                    t, v = series[0], series[part]
                    keep = (t >= lo) & (t <= hi)
                    ax.plot(t[keep] / fps, v[keep] * to_m, label=name if i == 0 else None, **style[name])
            ax.set_ylabel(f"{title}\nspeed (m/s)")
            ax.set_xlim(lo / fps, hi / fps)
        axes[0].legend(loc="upper right", fontsize=8)
        axes[1].set_xlabel("time (s); shaded: the cores")
        fig.suptitle(f"{a} > {b}, cores {PLOT_GAP_S:g} s apart ({rigged.variant.name}; engine: {method})", fontsize=10)
        fig.tight_layout()
        path = out_dir / f"fig5_{a}_{b}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


# --------------------------------------------------------------------------


W_LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
W_RISE = 0.05  # relative: a rise of the rendered peak or pop counted when raising W
W_SHARE = 0.02  # legs issue: at most this share of pairs


def print_w_steps(rigged: Rigged, labels: list[str], gaps_s, engine, args) -> Check:
    """Raising W by 0.25 at every placement, judged on the rendered gap (legs issue, item 5):
    on how many pairs it raises the gap's peak acceleration or its pop by over W_RISE."""
    Clip, synthesize = engine
    raised, n = {w: 0 for w in W_LEVELS[1:]}, 0
    worst: list[tuple[float, str]] = []
    for gap_s in gaps_s:
        for a in labels:
            for b in labels:
                if a == b:
                    continue
                pl = placement_of(rigged, a, b, gap_s)
                timeline = [Clip(rigged.clips[a], 0, core=pl.prev_core, name=a),
                            Clip(rigged.clips[b], pl.next_start, core=pl.next_core, name=b)]
                qs = [synthesize(timeline, responsiveness=w, pose_ends=args.pose_ends).plan.pairs[0].quality
                      for w in W_LEVELS]
                n += 1
                for w, q0, q1 in zip(W_LEVELS[1:], qs, qs[1:]):
                    rise = max(((getattr(q1, k) or 0.0) / getattr(q0, k) - 1.0 for k in ("accel", "pop")
                                if getattr(q0, k)), default=0.0)
                    if rise > W_RISE:
                        raised[w] += 1
                        worst.append((rise, f"{a} > {b} ({gap_s:g} s) W {w - 0.25:g}->{w:g} {rise:+.0%}"))
    print(f"\nraising W by 0.25 ({n} pairs, every placement; the rendered gap's peak acceleration or pop up by over "
          f"{100 * W_RISE:g} %): " + ", ".join(f"W -> {w:g}: {k} ({100 * k / n:.1f} %)" for w, k in raised.items()))
    print("  largest: " + "; ".join(text for _, text in sorted(worst, reverse=True)[:6]))
    share = max(raised.values()) / n if n else float("nan")
    check = Check(f"W: pairs whose peak or pop rises by over {100 * W_RISE:g} % when W rises by 0.25, at the worst "
                  f"step {100 * share:.1f} % <= {100 * W_SHARE:g} %", share <= W_SHARE)
    print(check)
    return check


def engine_or_reason():
    try:
        from core.synthesize import Clip, synthesize
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"
    return (Clip, synthesize), ""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--responsiveness", type=float, default=0.5, help="the engine's W (default 0.5)")
    parser.add_argument("--pose-ends", choices=("eased", "held"), default="eased",
                        help="the engine's pose ends: eased (default) or held with eq. (16) slopes, as in the paper")
    parser.add_argument("--gaps", type=float, nargs="+", default=GAPS_S, metavar="S",
                        help=f"how far apart the cores are, seconds (default {' '.join(map(str, GAPS_S))})")
    parser.add_argument("--quick", action="store_true",
                        help="the original rig only (no CMU, no 120 fps run, no W steps, no asap.py W curve)")
    parser.add_argument("--clips", nargs="+", metavar="LABEL", help="only these clips (labels as printed)")
    parser.add_argument("--rows", action="store_true", help="print every gap of the original rig")
    parser.add_argument("--plot", type=Path, metavar="DIR", help="write Oshita 2014 Fig. 5 plots of a few pairs to DIR")
    return parser.parse_args()


def chosen_clips(only: list[str] | None) -> dict:
    """{label: clip} of CLIPS, or of those of them named in ``only``."""
    labels = [short(name) for name in CLIPS]
    unknown = sorted(set(only or ()) - set(labels))
    if unknown:
        sys.exit(f"unknown clips {unknown}; the clips are {labels}")
    return {short(name): load(name) for name in CLIPS if not only or short(name) in only}


def run_all(originals: dict, variants, gaps_s, engine, args) -> tuple[dict, Rigged]:
    """{variant name: (the sources' median whole-clip skate, the records)}, and the first variant's clips."""
    runs, first = {}, None
    for variant in variants:
        rigged = Rigged.of(variant, originals)
        own = [s for src in rigged.sources.values()
               if (s := whole_clip_skate(src, rigged.up, rigged.fps, rigged.leg)) is not None]
        runs[variant.name] = (median(np.array(own)) if own else None,
                              run_variant(rigged, list(originals), gaps_s, engine, args))
        first = first or rigged
    return runs, first


def print_report(runs: dict, base: Rigged, gaps_s, args) -> None:
    leg_cm = base.leg_cm
    source_skate, records = runs[base.variant.name]
    per_clip = {label: whole_clip_skate(src, base.up, base.fps, base.leg) for label, src in base.sources.items()}
    print(f"\nthe sources' own skate (cm/s, whole clip): "
          + ", ".join(f"{label} {fmt(None if v is None else v * leg_cm, 0, 1)}" for label, v in per_clip.items())
          + f"; median {fmt(None if source_skate is None else source_skate * leg_cm, 0, 2)}  (leg {leg_cm:.1f} cm)")
    print(f"\n{base.variant.name} rig, {len(records)} gaps:")
    print_summary(records, gaps_s, leg_cm)
    print_forced(records, gaps_s)
    print_by_method(records)
    print_failures(records)
    no_contact = [r for r in records if not (r.crossfade.skate_untouched or 0.0) > 0.0]
    print_rows(f"gaps whose untouched clips have no contact frame (left out of the skate ratios): {len(no_contact)}",
               no_contact, leg_cm)
    silent = [r for r in records if r.engine is not None and r.engine.skate is None and r not in no_contact]
    print_rows(f"gaps where the engine's output has no contact frame (left out of the skate ratios): {len(silent)}",
               silent, leg_cm, limit=8)
    done = [r for r in records if r.engine is not None]
    for kind in ("skate", "accel"):
        # by how much the engine adds, not by the ratio: a near-still pair's tiny figures make any ratio large
        worst = sorted((r for r in done if ratio(r, "engine", kind) is not None),
                       key=lambda r: figure(r, "untouched", kind) - figure(r, "engine", kind))
        print_rows(f"the engine's worst gaps: the most {kind} above the untouched clips'", worst[:6], leg_cm)
    popping = sorted((r for r in done if reference_ratio(r, "engine", "pop") is not None),
                     key=lambda r: -reference_ratio(r, "engine", "pop"))
    print_rows("the engine's worst gaps: the highest pop over its reference", popping[:8], leg_cm)
    if args.rows:
        print_rows("every gap:", records, leg_cm)
    times = {name: [r.seconds for r in rs if r.seconds is not None] for name, (_, rs) in runs.items()}
    if any(times.values()):
        print("\nengine: median time a pair " + "; ".join(
            f"{1000 * statistics.median(t):.1f} ms ({name}, {len(t)} pairs)" for name, t in times.items() if t))
        print(plan_agreement(records))

    skated = [r for r in done if ratio(r, "engine", "skate") is not None]
    print(f"\ntargets ({base.variant.name} rig, every placement; the crossfade's figure in brackets; the engine's "
          f"skate ratios over {len(skated)} of its {len(done)} gaps, {len(no_contact)} without contact in the "
          f"untouched clips and {len(silent)} without contact in its output left out):")
    checks = targets(records, source_skate, leg_cm, gaps_s) if done and source_skate is not None else []
    for name, (src, rs) in runs.items():
        if name != base.variant.name and any(r.engine is not None for r in rs) and src is not None:
            # the same targets at the other rates (renamed rigs give the same figures: checked below)
            if any(v.name == name and v.frames_per_frame > 1 for v in VARIANTS):
                checks += targets(rs, src, leg_cm, gaps_s, rate=name)
    for c in checks + [core_check(runs)]:
        print(c)
    if len(runs) > 1:
        print("\ninvariance:")
        for variant in VARIANTS[1:]:
            if variant.name not in runs:
                continue
            if variant.frames_per_frame == 1:
                print(identical_check(variant.name, runs[base.variant.name], runs[variant.name]))
            else:
                for c in compare_resampled(variant.name, runs[base.variant.name], runs[variant.name], leg_cm):
                    print(c)


def main() -> None:
    args = parse_args()
    gaps_s = tuple(args.gaps)
    if not MOCAP.is_dir():
        sys.exit(f"real motion capture not found at {MOCAP}")
    started = time.perf_counter()
    originals = chosen_clips(args.clips)
    engine, reason = engine_or_reason()
    variants = VARIANTS[:1] if args.quick else VARIANTS
    n = len(originals) * (len(originals) - 1)
    print(f"{len(originals)} clips, {n} ordered pairs x {len(gaps_s)} placements (cores "
          f"{', '.join(f'{g:g}' for g in gaps_s)} s apart) x {len(variants)} rigs; engine "
          f"{'not available (' + reason + ')' if engine is None else 'core.synthesize'}, "
          f"responsiveness {args.responsiveness:g}, pose ends {args.pose_ends}", flush=True)
    runs, base = run_all(originals, variants, gaps_s, engine, args)
    print_report(runs, base, gaps_s, args)
    if not args.quick and engine is not None:
        print_w_steps(base, list(originals), gaps_s, engine, args)
        print("\nas soon as possible (tests/bench/asap.py), its W curve:")
        import asap  # noqa: E402  (tests/bench, next to this script)

        asap.main()
    print(f"\nruntime {time.perf_counter() - started:.0f} s (loading, every rig, every pair, summaries)")
    if args.plot:
        if engine is None:
            print("--plot: no engine to plot")
        else:
            for path in plot_fig5(args.plot, base, engine, args):
                print(f"wrote {path}")


if __name__ == "__main__":
    main()
