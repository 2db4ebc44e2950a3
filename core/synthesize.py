"""Clips on a timeline to one continuous motion (Oshita 2014, section 4; 2008, sections 3-7).

The one entry point the command line and the add-on call is :func:`synthesize`.

Clips are sorted by start and joined pair by pair (2014, section 4): the
previous motion is everything synthesized so far, the following motion is
the next clip. For each pair the engine

1. reads the support phases of both sides (2008, section 4),
2. picks the method by priority, transition > connection > adaptation
   (2014, 4.1 and 4.2.5; 2008, 3.2 and Fig. 7), and among several usable
   foot-moving phases the one with the longest possible blending range,
3. builds the blending segments with their possible ranges, eqs. (1)-(8),
   separately for the lower and the upper body,
4. finds each segment's optimal range, eq. (9), with responsiveness W,
5. chooses each segment's weight function (section 4.4),
6. aligns the following clip on the previous one (2008, 4.2-4.3),
7. renders the frames: time warps, slerp blends, and the legs adapted by IK
   so that planted feet stay where they are (2008, 7.2).

Steps 1-6 are decisions, recorded in a :class:`Plan` of plain dataclasses
that prints and serialises; step 7 renders from them. A clip whose core
overlaps the previous clip's core is rejected, and the plan says which and why.

Timeline conventions: output frames are integers on the clips' common
timeline (clip frame ``k`` of a clip starting at ``s`` plays at ``s + k``);
every range is end inclusive. Core ranges are clip frames.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from . import quat
from .align import Alignment, align_clip, body_track
from .analysis import Phase, foot_contacts, horizontal, moving_feet, pelvis_facing, phase_segments, support_phases
from .motion import Motion, forward_kinematics
from .contacts import hold_feet
from .quality import GapQuality, SourceFigures, foot_levels, foot_positions, gap_quality
from .optimize import (blend_weights, body_frames, body_velocity, distance_matrix, optimal_blend_range,
                       pose_acceleration, pose_velocity, primary_joints)
from .render import adapt_legs, blend, move_pelvis, pelvis_shift, sample, smooth_warp, smoothstep
from .rig import Rig, detect_up, find_rig, leg_length
from .weights import WeightFunction, WeightPlan, motion_to_pose_weights, movement_reverses, optimal_weight_function, pose_to_motion_weights

# 2008, eq. (1): each original segment of a transition is time-scaled by a
# factor between S_MIN and S_MAX at most (the values of the paper's experiments).
S_MIN, S_MAX = 0.7, 1.5
ORIENTATION_WINDOW_S = 3.0  # how far body orientation looks from a connection (2008, 4.3)
KEEP_REACH = 0.5  # leg lengths: adaptation keeps a previous foot only this close to the clip's own
STEP_APART = 0.01  # leg lengths: under eq. (8) a foot this far from the clip's stance steps into it
# a foot adaptation cannot keep steps home during S1, rising STEP_RISE times its
# step's length, but no less than STEP_HEIGHT nor more than STEP_MAX_HEIGHT (leg
# lengths), and only rising or coming down in the first and last STEP_DELAY of S1
STEP_HEIGHT, STEP_RISE, STEP_MAX_HEIGHT, STEP_DELAY = 0.1, 0.25, 0.25, 0.1
MIN_BLEND_S = 0.2  # no blend shorter than this where its possible range allows (nor by Fig. 4b)
STAND_REACH = 0.1  # leg lengths: how far a connection may bend a foot beyond the previous phase's own step
STEP_WINDOW_S = 5.0  # the previous motion's steps are timed over its last this many seconds
STEP_S = 0.4  # how long a foot takes to step home in adaptation when neither clip takes a step
ACCEL_STEP_S = 1.0 / 30.0  # time step of the clips' pose acceleration (the blend limit), seconds
WARP_RAMP = 3  # frames over which a time warp changes a clip's playback speed

TRANSITION = "transition"
CONNECTION = "connection"
ADAPTATION = "adaptation"
ADAPTATION_HOLD = "adaptation without lower-body transition"


# --------------------------------------------------------------------------
# input


@dataclass(frozen=True, eq=False)
class Clip:
    """A clip placed on the output timeline.

    motion  the clip.
    start   output frame at which clip frame 0 plays.
    core    (first, last) clip frames of the core part, inclusive; None: the whole clip.
    name    for messages and the plan.
    """

    motion: Motion
    start: int
    core: tuple[int, int] | None = None
    name: str = ""

    @property
    def core_range(self) -> tuple[int, int]:
        return self.core if self.core is not None else (0, self.motion.n_frames - 1)

    @property
    def end(self) -> int:
        """Output frame of the clip's last frame."""
        return self.start + self.motion.n_frames - 1


# --------------------------------------------------------------------------
# the plan


@dataclass(frozen=True)
class Segment:
    """One blending segment of a pair (2014, 4.2).

    part     "lower" or "upper" body.
    blend    "motion-to-motion", "motion-to-pose", "pose-to-motion",
             "pose-to-pose", "deformation" (the lower-body deformation of
             adaptation, eqs. 7-8, which keeps the previous feet), or "step"
             (adaptation: a previous foot that could only get home inside the
             following core, or is too far to keep, steps home during S1).
    start, end  output frames, inclusive.
    weights  the weight function (None for a deformation).
    possible (first start, last start, first end, last end) of eqs. (1)-(8).
    excess   how far the range asks more of the body than the clips do (the
             speed and acceleration limits of the range search, 1 at a limit):
             above 1 only when no range in ``possible`` keeps within them.
    """

    part: str
    blend: str
    start: int
    end: int
    weights: WeightFunction | None = None
    possible: tuple[int, int, int, int] | None = None
    foot: str | None = None  # "left"/"right" for a foot released (eq. 5) or stepping in adaptation
    excess: float = 0.0

    def to_dict(self) -> dict:
        return {
            "part": self.part,
            "blend": self.blend,
            "start": self.start,
            "end": self.end,
            "weights": self.weights.to_dict() if self.weights else None,
            "possible": list(self.possible) if self.possible else None,
            **({"foot": self.foot} if self.foot else {}),
            **({"excess": self.excess} if self.excess > 1.0 else {}),
        }


@dataclass(frozen=True)
class PairPlan:
    """How one clip was joined to everything before it."""

    prev: str
    next: str
    method: str
    prev_phase: tuple[str, int, int] | None  # (phase, first, last) output frames, foot-moving phase used
    next_phase: tuple[str, int, int] | None
    segments: tuple[Segment, ...]
    alignment: Alignment
    warning: str | None = None  # e.g. cores that leave no room for a smooth blend
    note: str | None = None  # e.g. a blend lengthened so that feet can step one at a time
    gap: tuple[int, int] | None = None  # output frames from the previous core's last to the next core's first
    quality: GapQuality | None = None  # the gap measured against the untouched clips (core.quality)

    def segment(self, part: str, blend: str | None = None) -> Segment | None:
        for s in self.segments:
            if s.part == part and (blend is None or s.blend == blend):
                return s
        return None

    def to_dict(self) -> dict:
        return {
            "prev": self.prev,
            "next": self.next,
            "method": self.method,
            "prev_phase": list(self.prev_phase) if self.prev_phase else None,
            "next_phase": list(self.next_phase) if self.next_phase else None,
            "segments": [s.to_dict() for s in self.segments],
            "alignment": self.alignment.to_dict(),
            "warning": self.warning,
            "note": self.note,
            "gap": list(self.gap) if self.gap else None,
            "quality": self.quality.to_dict() if self.quality else None,
        }


@dataclass(frozen=True)
class Rejection:
    clip: str
    reason: str

    def to_dict(self) -> dict:
        return {"clip": self.clip, "reason": self.reason}


@dataclass(frozen=True)
class Plan:
    fps: float
    responsiveness: float
    start: int  # output frame of the first frame of the result
    end: int
    clips: tuple[str, ...]
    pairs: tuple[PairPlan, ...]
    rejected: tuple[Rejection, ...]

    def to_dict(self) -> dict:
        return {
            "fps": self.fps,
            "responsiveness": self.responsiveness,
            "start": self.start,
            "end": self.end,
            "clips": list(self.clips),
            "pairs": [p.to_dict() for p in self.pairs],
            "rejected": [r.to_dict() for r in self.rejected],
        }

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def summary(self) -> str:
        lines = [f"frames {self.start}..{self.end} at {self.fps:g} fps, responsiveness W = {self.responsiveness:g}"]
        for p in self.pairs:
            lines.append(f"{p.prev} -> {p.next}: {p.method}")
            if p.warning:
                lines.append(f"    note: {p.warning}")
            if p.note:
                lines.append(f"    note: {p.note}")
            if p.quality:
                lines.append(f"    gap {p.gap[0]} .. {p.gap[1]}: {p.quality.summary()}")
            for s in p.segments:
                w = f", slopes {s.weights.slope_start:.2f}/{s.weights.slope_end:.2f}" if s.weights else ""
                abrupt = f", {s.excess:.1f} x as abrupt as the clips allow" if s.excess > 1.0 else ""
                lines.append(f"    {s.part:5s} {s.blend:16s} {s.start:5d} .. {s.end:5d}{w}{abrupt}")
        for r in self.rejected:
            lines.append(f"rejected {r.clip}: {r.reason}")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class Result:
    """The output motion (frame 0 plays at output frame ``plan.start``) and its plan."""

    motion: Motion
    plan: Plan

    @property
    def start(self) -> int:
        return self.plan.start


# --------------------------------------------------------------------------
# internal state: the previous motion as synthesized so far


@dataclass
class _Track:
    """Everything synthesized so far, on output frames ``first .. first + len - 1``."""

    rotations: np.ndarray  # (T, J, 4)
    positions: np.ndarray  # (T, J, 3)
    contacts: np.ndarray  # (T, 2)
    first: int
    core_end: int  # output frame of the last clip's core end
    name: str

    @property
    def last(self) -> int:
        return self.first + len(self.rotations) - 1


@dataclass(frozen=True)
class _Context:
    rig: Rig
    up: np.ndarray
    fps: float
    leg: float
    lower: np.ndarray  # (J,) bool
    weights: tuple
    responsiveness: float
    pose_ends: str = "eased"


# --------------------------------------------------------------------------
# entry point


def synthesize(
    clips: Sequence[Clip], *, responsiveness: float = 0.5, rig: Rig | None = None, pose_ends: str = "eased"
) -> Result:
    """One continuous motion from clips on a timeline (2014, section 4).

    responsiveness  W in [0, 1]: 0 most responsive (short blends), 1 smoothest.
    rig             joint roles; found on the first clip when None.
    pose_ends       how a blend meets the motions at its ends:
                    "held"  as in the paper: a pose-to-pose segment blends
                            two held poses, and eq. (16) sets the weight's end
                            slopes so the blend leaves and reaches them at the
                            motions' speed (4.4.1);
                    "eased" (default) each end pose eases out of (into) its own
                            motion, which carries the motion's velocity into the
                            blend exactly (direction as well as speed), so the
                            weight's end slopes are 0: what eq. (16) supplies for
                            a held pose, the eased pose already has. Smoother at
                            the ends (tests/bench/quality.py measures both).
    """
    if pose_ends not in ("eased", "held"):
        raise ValueError(f"pose_ends must be 'eased' or 'held', got {pose_ends!r}")
    clips = _checked(clips)
    weights = blend_weights(responsiveness)
    first = clips[0].motion
    rig = rig or find_rig(first)
    up = detect_up(first, rig)
    ctx = _Context(
        rig=rig,
        up=up,
        fps=first.fps,
        leg=0.5 * (leg_length(first.skeleton, rig, "L") + leg_length(first.skeleton, rig, "R")),
        lower=rig.lower_body_mask(first.skeleton),
        weights=weights,
        responsiveness=float(responsiveness),
        pose_ends=pose_ends,
    )
    contacts = [foot_contacts(c.motion, rig, up=up) for c in clips]
    track = _Track(
        rotations=np.array(first.rotations),
        positions=np.array(first.positions),
        contacts=contacts[0].copy(),
        first=clips[0].start,
        core_end=clips[0].start + clips[0].core_range[1],
        name=clips[0].name,
    )
    pairs, rejected, joined = [], [], [(clips[0], clips[0])]  # joined: (previous clip, next clip) per pair
    for clip, clip_contacts in zip(clips[1:], contacts[1:]):
        core_begin = clip.start + clip.core_range[0]
        if core_begin <= track.core_end:
            rejected.append(Rejection(clip.name, (
                f"its core starts at frame {core_begin}, before the core of '{track.name}' ends at frame "
                f"{track.core_end}; move it later or shorten one of the cores")))
            continue
        pair = plan_pair(track, clip, clip_contacts, ctx)
        room = core_begin - track.core_end - 1
        if room < MIN_BLEND_S * ctx.fps:
            pair = replace(pair, warning=(
                f"the cores of '{track.name}' (to frame {track.core_end}) and '{clip.name}' (from frame "
                f"{core_begin}) leave {max(room, 0)} frame(s) to blend in, less than {MIN_BLEND_S:g} s: expect a "
                f"jump there; start '{clip.name}' later or shorten one of the cores"))
        pair = replace(pair, gap=(track.core_end, core_begin))
        track = render_pair(track, clip, clip_contacts, pair, ctx)
        pairs.append(pair)
        joined.append((joined[-1][1], clip))
    motion = Motion(first.skeleton, track.rotations, track.positions, ctx.fps)
    motion = _feet_held(motion, track, pairs, ctx)
    pairs = _measured(motion, track.first, pairs, joined[1:], ctx)
    plan = Plan(
        fps=ctx.fps,
        responsiveness=ctx.responsiveness,
        start=track.first,
        end=track.last,
        clips=tuple(c.name for c in clips),
        pairs=tuple(pairs),
        rejected=tuple(rejected),
    )
    return Result(motion, plan)


def _feet_held(motion: Motion, track: _Track, pairs: list[PairPlan], ctx: _Context) -> Motion:
    """The contact stage (core.contacts) over every gap between cores."""
    if not pairs:
        return motion
    levels = foot_levels(foot_positions(motion, ctx.rig) @ ctx.up, ctx.fps).floor
    floors = levels.reshape(2, 2) if len(levels) == 4 else np.repeat(levels[:, None], 2, axis=1)
    for p in pairs:
        steps = {}
        for s in p.segments:
            if s.blend == "step":
                steps.setdefault(("left", "right").index(s.foot), []).append((s.start, s.end))
        motion = hold_feet(motion, track.first, track.contacts, p.gap, ctx.rig, up=ctx.up, leg=ctx.leg, floors=floors,
                           steps=steps)
    return motion


def _measured(motion: Motion, first: int, pairs: list[PairPlan], joined: list[tuple[Clip, Clip]],
              ctx: _Context) -> list[PairPlan]:
    """Each pair with its gap's quality figures against the untouched clips (core.quality)."""
    if not pairs:
        return pairs
    feet = foot_positions(motion, ctx.rig)
    levels = foot_levels(feet @ ctx.up, ctx.fps)
    figures = {}  # each clip's own figures, once

    def of(clip: Clip) -> SourceFigures:
        if id(clip) not in figures:
            figures[id(clip)] = SourceFigures.of(clip.motion, ctx.rig, ctx.up)
        return figures[id(clip)]

    return [replace(p, quality=gap_quality(motion, first, p.gap, up=ctx.up, leg=ctx.leg, output_feet=feet,
                                           output_levels=levels,
                                           sources=[(of(prev), prev.start), (of(nxt), nxt.start)]))
            for p, (prev, nxt) in zip(pairs, joined)]


def _checked(clips: Sequence[Clip]) -> list[Clip]:
    if not clips:
        raise ValueError("nothing to synthesize: give at least one clip")
    clips = [c if c.name else Clip(c.motion, c.start, c.core, f"clip {i + 1}") for i, c in enumerate(clips)]
    ref = clips[0].motion
    for c in clips:
        m = c.motion
        if m.n_frames == 0:
            raise ValueError(f"clip '{c.name}' has no frames")
        if m.skeleton.names != ref.skeleton.names or not np.array_equal(m.skeleton.parents, ref.skeleton.parents):
            raise ValueError(
                f"clip '{c.name}' is on another skeleton than '{clips[0].name}' "
                f"({len(m.skeleton)} joints vs {len(ref.skeleton)}); all clips must share one skeleton")
        lo, hi = c.core_range
        if not 0 <= lo <= hi < m.n_frames:
            raise ValueError(
                f"clip '{c.name}': core {lo}..{hi} is not inside its frames 0..{m.n_frames - 1}")
    out = []
    for c in clips:
        if not np.isclose(c.motion.fps, ref.fps, rtol=1e-4):
            # a clip at another rate is resampled, and its start and core kept in seconds
            scale = ref.fps / c.motion.fps
            m = c.motion.resampled(ref.fps)
            lo, hi = c.core_range
            core = (min(int(round(lo * scale)), m.n_frames - 1), min(int(round(hi * scale)), m.n_frames - 1))
            c = Clip(m, c.start, core if c.core is not None else None, c.name)
        out.append(c)
    return sorted(out, key=lambda c: c.start)


# --------------------------------------------------------------------------
# 1-5: method, segments, ranges and weights


@dataclass(frozen=True)
class _Phase:
    phase: Phase
    first: int  # output frames, inclusive
    last: int

    @property
    def length_s(self) -> float:
        return self.last - self.first + 1

    def as_tuple(self) -> tuple[str, int, int]:
        return (self.phase.name, int(self.first), int(self.last))


def _moving_phases(contacts: np.ndarray, offset: int, lo: int, hi: int) -> list[_Phase]:
    """Foot-moving phases (LS, RS, NS) lying entirely within output frames ``lo..hi``.

    A phase cut by either end of the clip is left out: where its foot took
    off or lands is not in the clip, so it cannot carry a transition.
    """
    out = []
    last = len(contacts) - 1
    for s in phase_segments(support_phases(contacts)):
        a, b = s.start + offset, s.end + offset
        if s.phase != Phase.DS and a >= lo and b <= hi and s.start > 0 and s.end < last:
            out.append(_Phase(s.phase, a, b))
    return out


class _Sides:
    """Pose features and velocities of both sides of a pair, per body part."""

    def __init__(self, track: _Track, clip: Clip, ctx: _Context):
        # the previous side is only read from its core end on: features of that tail only
        lo = max(track.core_end - track.first - 1, 0)
        self.prev_offset = track.first + lo
        self.next_offset = clip.start
        # and the following side up to its core start (blends end there at the latest)
        head = clip.motion[: clip.core_range[0] + 2]
        self.feats, self.vel, self.accel = {}, {}, {}
        parts = {part: primary_joints(ctx.rig, part) for part in ("lower", "upper")}
        joints = np.concatenate(list(parts.values()))
        # one pass of forward kinematics over both sides' frames (features are per
        # frame), split by side and body part afterwards
        n_prev = len(track.rotations) - lo
        stacked = Motion._trusted(clip.motion.skeleton, np.concatenate([track.rotations[lo:], head.rotations]),
                                  np.concatenate([track.positions[lo:], head.positions]), ctx.fps)
        feats, pelvis, axes = body_frames(stacked, ctx.rig, joints, ctx.up)
        both = feats[:n_prev], feats[n_prev:]
        at = 0
        for part, js in parts.items():
            fp, fn = (f[:, at : at + len(js)] for f in both)
            at += len(js)
            self.feats[part] = (fp, fn)
            self.vel[part] = (pose_velocity(fp, ctx.fps), pose_velocity(fn, ctx.fps))
            # the typical acceleration of the livelier side, over a fixed time step
            step = max(int(round(ACCEL_STEP_S * ctx.fps)), 1)
            self.accel[part] = max(float(np.median(pose_acceleration(f, ctx.fps, step))) if len(f) else 0.0
                                   for f in (fp, fn))
        # the body's own travel, which the pose features leave out: its velocity on
        # each side and the typical acceleration of the livelier side
        self.body = (body_velocity(pelvis[:n_prev], axes[:n_prev], ctx.fps),
                     body_velocity(pelvis[n_prev:], axes[n_prev:], ctx.fps))
        self.body_accel = max(_typical_change(v, step, ctx.fps) for v in self.body)

    def optimal(self, part, t0_candidates, t1_candidates, ctx, phase_length_s=None, prev_pose_frame=None,
                min_s=MIN_BLEND_S):
        fp, fn = self.feats[part]
        vp, vn = self.vel[part]
        if prev_pose_frame is not None:
            # a single fixed t0 whose pose stands for the one at prev_pose_frame
            fp = fp.copy()
            fp[self.prev_index(int(t0_candidates[0]))] = fp[self.prev_index(prev_pose_frame)]
        return optimal_blend_range(
            fp, fn, vp, vn,
            t0_candidates=np.asarray(t0_candidates), t1_candidates=np.asarray(t1_candidates),
            prev_offset=self.prev_offset, next_offset=self.next_offset, fps=ctx.fps,
            phase_length_s=phase_length_s, weights=ctx.weights,
            # no blend shorter than MIN_BLEND_S where the possible ranges allow it:
            # eq. (11) alone would take a one-frame jump between two similar poses
            min_frames=int(round(max(min_s, MIN_BLEND_S) * ctx.fps)),
            # nor one that moves the body faster than the two clips ever move it
            max_speed=max(float(vp.max(initial=0.0)), float(vn.max(initial=0.0))) or None,
            # nor add more acceleration than the clips typically have (W = 1) or
            # than 1 / W times that: a blend squeezed shorter than its change of
            # pose needs is a jerk; W = 0 leaves eq. (9) alone to be responsive
            max_accel=self._limit(self.accel[part], ctx),
            # and the lower body (which carries the pelvis) no faster a change of the
            # body's velocity, from standing into a run say, than the clips' own
            body_velocity=self.body, max_body_accel=self._limit(self.body_accel, ctx) if part == "lower" else None,
        )

    @staticmethod
    def _limit(typical: float, ctx: _Context) -> float | None:
        """The clips' typical acceleration at W = 1, 1 / W times it below; none at W = 0."""
        return typical / ctx.responsiveness if typical > 0 and ctx.responsiveness > 0 else None

    def prev_index(self, t):
        return int(np.clip(t - self.prev_offset, 0, len(self.feats["lower"][0]) - 1))

    def next_index(self, t):
        return int(np.clip(t - self.next_offset, 0, len(self.feats["lower"][1]) - 1))

    def pose_to_pose_weights(self, part, t0, t1, ctx, *, eased=(True, True)) -> WeightFunction:
        """Eq. (16) slopes from the velocities at both ends, 0 where the movement reverses (4.4.1);
        ``eased`` says which ends render as eased poses (see :func:`_rendered`)."""
        fp, fn = self.feats[part]
        vp, vn = self.vel[part]
        i, j = self.prev_index(t0), self.next_index(t1)
        d = float(distance_matrix(fp[i : i + 1], fn[j : j + 1])[0, 0])
        # Fig. 3c: does the motion come back towards the other end's pose just outside the range?
        before = fp[max(i - 1, 0) : i + 1]
        after = fn[j : j + 2]
        start_reverses = movement_reverses(distance_matrix(before, fn[j : j + 1])[:, 0], len(before) - 1, side="start")
        end_reverses = movement_reverses(distance_matrix(fp[i : i + 1], after)[0], 0, side="end")
        return _rendered(ctx, optimal_weight_function(vp[i], vn[j], d, (t1 - t0) / ctx.fps,
                                                      start_reverses=start_reverses, end_reverses=end_reverses),
                         *eased)


def _typical_change(velocity: np.ndarray, step: int, fps: float) -> float:
    """Median of ``|v(t + step) - v(t)|`` per second over ``velocity (F, 3)``; 0 when too short."""
    if len(velocity) <= step:
        return 0.0
    return float(np.median(np.linalg.norm(velocity[step:] - velocity[:-step], axis=-1))) * fps / step


def _long_enough(plan: WeightPlan, n_frames: int, ctx: _Context) -> WeightPlan:
    """A Fig. 4b plan, unless moving the end to the turning point leaves too short a blend.

    A turning point close to the fixed pose would squeeze the whole change of
    pose into a frame or two, a jump far worse than the overshoot Fig. 4b
    avoids; then the whole range is blended (Fig. 4a) instead. The slopes
    stay as found: at the end where the motion turns back, 0 (Fig. 3c: it
    reverses there, as it does just past the whole range's end too), at the
    other, eq. (16)'s.
    """
    if plan.kind != "turning_point":
        return plan
    shortest = max(MIN_BLEND_S * ctx.fps, 0.5 * (n_frames - 1))
    if plan.n_blend_frames - 1 >= shortest:
        return plan
    return WeightPlan("hermite", 0, n_frames - 1, plan.slope_start, plan.slope_end)


def _rendered(ctx: _Context, function: WeightFunction, eased_start: bool = True, eased_end: bool = True) -> WeightFunction:
    """The weight function as rendered. With eased ends (see :func:`synthesize`) an end
    pose eases out of (into) its own motion, carrying the motion's velocity into the
    blend, and the slope there is 0; an end where a motion plays on (motion-to-motion,
    the motion side of motion-to-pose) or a pose is held keeps eq. (16)'s slope."""
    if ctx.pose_ends != "eased":
        return function
    return WeightFunction(0.0 if eased_start else function.slope_start, 0.0 if eased_end else function.slope_end,
                          function.kind)


def _frames(lo: int, hi: int) -> np.ndarray:
    return np.arange(lo, hi + 1) if hi >= lo else np.arange(0)


def plan_pair(track: _Track, clip: Clip, clip_contacts: np.ndarray, ctx: _Context) -> PairPlan:
    """Method, segments, optimal ranges and weight functions for one pair (2014, 4.1-4.4)."""
    c0e = track.core_end
    c1b = clip.start + clip.core_range[0]
    m1e = clip.end
    sides = _Sides(track, clip, ctx)
    # the previous side only matters after its core: its phases from there on
    tail = max(c0e - track.first, 0)
    prev_moving = _moving_phases(track.contacts[tail:], track.first + tail, c0e + 1, track.last)
    next_moving = _moving_phases(clip_contacts, clip.start, clip.start, m1e)
    next_before_core = [p for p in next_moving if p.last <= c1b - 1]

    # motion transition (eqs. 1, 2; 2008 eq. 1): the same foot moving in both
    options = []
    for p0 in prev_moving:
        for p1 in next_before_core:
            if p0.phase != p1.phase or not p0.first < p1.last:
                continue
            span = p1.last - p0.first
            if not (S_MIN <= span / max(p0.last - p0.first, 1) <= S_MAX and S_MIN <= span / max(p1.last - p1.first, 1) <= S_MAX):
                continue
            t0s, t1s = _frames(c0e, p1.last), _frames(p0.first, c1b)
            if len(t0s) and len(t1s) and t0s[0] < t1s[-1]:
                options.append((t1s[-1] - t0s[0], p0.first, p0, p1, t0s, t1s))
    if options:
        _, _, p0, p1, t0s, t1s = max(options, key=lambda o: (o[0], o[1]))
        return _plan_transition(track, clip, ctx, sides, p0, p1, t0s, t1s, c0e, c1b)

    # motion connection (eqs. 3, 4): a foot moving in the previous motion. The
    # connection pose must stand on the foot that moved (2008, 6.1 and Fig. 7b),
    # and the previous phase is time-scaled by S_MIN..S_MAX at most (2008, 6.2).
    options = []
    for p0 in prev_moving:
        length = p0.last - p0.first
        t1s = _frames(max(p0.first + int(np.ceil(S_MIN * length)), p0.first + 1), min(p0.first + int(S_MAX * length), c1b))
        moved = [k for k, m in enumerate(moving_feet(p0.phase)) if m]
        landed = clip_contacts[np.clip(t1s - clip.start, 0, len(clip_contacts) - 1)][:, moved].all(axis=1)
        t1s = t1s[landed]
        # a connection squeezed into less than MIN_BLEND_S would be a jump: adaptation does better
        if len(t1s) and t1s[-1] - p0.first >= MIN_BLEND_S * ctx.fps:
            options.append((t1s[-1] - p0.first, p0.first, p0, t1s))
    # A connection whose landing is more abrupt than the clips ever move (no range
    # keeps within the limits of the search) gives way to adaptation, which keeps
    # the feet planted, unless adaptation is more abrupt still.
    abrupt = None
    for _, _, p0, t1s in sorted(options, key=lambda o: (o[0], o[1]), reverse=True):
        pair = _plan_connection(track, clip, clip_contacts, ctx, sides, p0, t1s, c0e, c1b)
        if not _step_fits(track, clip, pair, p0, ctx):
            continue
        if pair.segment("lower").excess <= 1.0:
            return pair
        abrupt = abrupt or pair

    # motion adaptation (eqs. 5-8)
    adapted = _plan_adaptation(track, clip, clip_contacts, next_moving, ctx, sides, c0e, c1b, m1e)
    if abrupt is not None and abrupt.segment("lower").excess < adapted.segment("lower", "pose-to-pose").excess:
        return abrupt
    return adapted


def _upper_pose_to_pose(sides, ctx, t0s, t1s) -> Segment:
    r = sides.optimal("upper", t0s, t1s, ctx)
    return Segment("upper", "pose-to-pose", r.t0, r.t1, sides.pose_to_pose_weights("upper", r.t0, r.t1, ctx),
                   (int(t0s[0]), int(t0s[-1]), int(t1s[0]), int(t1s[-1])), excess=r.excess)


def _plan_transition(track, clip, ctx, sides, p0, p1, t0s, t1s, c0e, c1b) -> PairPlan:
    # eq. (1): the lower body blends the two foot-moving phases, motion to motion;
    # the overlap P0..P1 is the core of the blend, its length the target of eq. (10)
    r = sides.optimal("lower", t0s, t1s, ctx, phase_length_s=(p1.last - p0.first) / ctx.fps)
    lower = Segment("lower", "motion-to-motion", r.t0, r.t1,
                    sides.pose_to_pose_weights("lower", r.t0, r.t1, ctx, eased=(False, False)),
                    (int(t0s[0]), int(t0s[-1]), int(t1s[0]), int(t1s[-1])), excess=r.excess)
    upper = _upper_pose_to_pose(sides, ctx, t0s, t1s)  # eq. (2)
    alignment = _align(track, clip, ctx, prev_frame=(p0.first + p0.last) // 2,
                       next_frame=_warp_transition_next(np.array([(p0.first + p0.last) // 2]), p0, p1)[0] - clip.start,
                       foot=_stance_foot(p0.phase))
    return PairPlan(track.name, clip.name, TRANSITION, p0.as_tuple(), p1.as_tuple(), (lower, upper), alignment)


def _plan_connection(track, clip, clip_contacts, ctx, sides, p0, t1s, c0e, c1b) -> PairPlan:
    # eq. (3): the lower body starts blending where the previous foot starts moving,
    # motion to pose; eq. (4): the upper body pose to pose anywhere after that
    t0s = np.array([p0.first])
    # The previous phase is time-warped to end at t1 (2008, 6.2), so the poses the
    # blend joins are the one that phase ends in and the connection pose: eq. (12)
    # compares those two (t0 itself is fixed by eq. 3).
    r = sides.optimal("lower", t0s, t1s, ctx, phase_length_s=(p0.last - p0.first) / ctx.fps, prev_pose_frame=p0.last)
    # 4.4.2: the weight function from the distances of the previous motion to the connection pose
    fp, fn = sides.feats["lower"]
    u = _warp_connection_prev(np.arange(r.t0, r.t1 + 1), p0, r.t1) - sides.prev_offset
    idx = np.clip(np.round(u).astype(int), 0, len(fp) - 1)
    d = distance_matrix(fp[idx], fn[sides.next_index(r.t1)][None])[:, 0]
    wp = _long_enough(motion_to_pose_weights(d, ctx.fps), len(d), ctx)
    lower = Segment("lower", "motion-to-pose" if wp.kind != "pose_to_pose" else "pose-to-pose",
                    r.t0 + wp.start_index, r.t1, _rendered(ctx, wp.function, wp.kind == "pose_to_pose", False),
                    (p0.first, p0.first, int(t1s[0]), int(t1s[-1])),
                    excess=r.excess)
    upper = _upper_pose_to_pose(sides, ctx, _frames(p0.first, c1b - 1), _frames(p0.first + 1, c1b))
    # align on the foot that stood through the previous phase when the connection
    # pose stands on it too; otherwise on the foot that just landed
    stance = _stance_foot(p0.phase)
    j = int(np.clip(r.t1 - clip.start, 0, len(clip_contacts) - 1))
    if stance >= 0 and clip_contacts[j, stance]:
        # on the standing foot's place and heading: it stands through the join
        alignment = _align(track, clip, ctx, prev_frame=p0.last, next_frame=j, foot=stance, heading=True)
    else:
        moved = 1 - stance if stance >= 0 else -1
        alignment = _align(track, clip, ctx, prev_frame=min(p0.last + 1, track.last), next_frame=j, foot=moved)
    return PairPlan(track.name, clip.name, CONNECTION, p0.as_tuple(), None, (lower, upper), alignment)


def _plan_adaptation(track, clip, clip_contacts, next_moving, ctx, sides, c0e, c1b, m1e) -> PairPlan:
    # eq. (6): lower (S1) and upper (S2) transitions between the cores, pose to pose.
    # S1 starts where the previous motion stands on a foot, which is kept; a foot
    # it has in the air then carries on along its swing onto its own place
    # (_adaptation_lower), so S1 need not wait for the previous step to land.
    standing = np.flatnonzero(track.contacts.any(axis=1)) + track.first
    t0s = standing[(standing >= c0e) & (standing < c1b)]
    if not len(t0s):
        t0s = _frames(c0e, c1b - 1)
    t1s = _frames(int(t0s[0]) + 1, c1b)
    r = sides.optimal("lower", t0s, t1s, ctx)
    releases, stepping, alignment, hold = _adaptation_feet(track, clip, clip_contacts, next_moving, ctx, sides, c1b, r)
    # Feet step one at a time, each taking no less than the clips' own steps (it
    # travels over the middle of its step only, see core.contacts): S1 is
    # lengthened to that where its possible range allows, and the plan says so.
    step_s = _step_duration(track, next_moving, ctx) / (1.0 - 2.0 * STEP_DELAY)
    needed = len(stepping)
    note = None
    if needed and (r.t1 - r.t0) / ctx.fps < needed * step_s:
        longer = sides.optimal("lower", t0s, t1s, ctx, min_s=needed * step_s)
        if (longer.t0, longer.t1) != (r.t0, r.t1):
            note = (f"S1 lengthened from {(r.t1 - r.t0) / ctx.fps:.2f} s to {(longer.t1 - longer.t0) / ctx.fps:.2f} s "
                    f"for {needed} step(s) at the clips' pace")
            r = longer
            releases, stepping, alignment, hold = _adaptation_feet(track, clip, clip_contacts, next_moving, ctx, sides,
                                                                   c1b, r)
    s1 = Segment("lower", "pose-to-pose", r.t0, r.t1, sides.pose_to_pose_weights("lower", r.t0, r.t1, ctx),
                 (int(t0s[0]), int(t0s[-1]), int(t1s[0]), int(t1s[-1])), excess=r.excess)
    s2 = _upper_pose_to_pose(sides, ctx, _frames(c0e, c1b - 1), _frames(c0e + 1, c1b))
    steps = _one_at_a_time(stepping, r, step_s * ctx.fps)
    if any(one.end > other.start and one.end < r.t1 for one, other in zip(steps, steps[1:])):
        overlap = (f"steps overlap: S1's {(r.t1 - r.t0) / ctx.fps:.2f} s leave no room for {len(steps)} steps of "
                   f"{step_s:.2f} s, the clips' pace; give the clips more room")
        note = f"{note}; {overlap}" if note else overlap
    if hold:
        return PairPlan(track.name, clip.name, ADAPTATION_HOLD, None, None, (s1, s2, *steps), alignment, note=note)
    releases.sort(key=lambda x: x[1].start)
    segments = [s1, s2]
    if releases:
        segments.append(Segment("lower", "deformation", r.t1, releases[-1][1].start))  # eq. (7)
    segments += [x[1] for x in releases] + steps
    p1 = releases[0][0] if releases else None
    return PairPlan(track.name, clip.name, ADAPTATION, None, p1.as_tuple() if p1 else None, tuple(segments), alignment,
                    note=note)


def _adaptation_feet(track, clip, clip_contacts, next_moving, ctx, sides, c1b, r):
    """How each previous foot gets to the following clip over S1 ``r``:
    ``(releases, stepping, alignment, hold)``.

    releases   ``[(phase, segment)]``: kept, then home during its own first moving phase (eq. 5);
    stepping   ``[(foot, aloft)]``: steps home during S1, standing before and after, in the
               order they step; ``aloft``: the clip has it in the air at the end of S1;
    hold       eq. (8): the following clip never moves a foot.

    A standing foot steps when the clip moves it only inside its core or never
    while moving the other, when the clip has it in the air at the end of S1,
    or when it stands too far from where the aligned clip wants it to be kept
    (KEEP_REACH). (A foot in the air when S1 starts is bent onto its own place
    over S1 by the render: landing it first and stepping the other after it
    was tried and measured worse, the steps coming too quick.) Under eq. (8) nothing would ever take the previous stance
    away: every foot not already where the clip has it steps into the clip's
    stance during S1 (so that the core is the clip's own).
    """
    releases, steps = _feet_home(clip, clip_contacts, next_moving, ctx, sides, c1b, r)
    alignment = _adaptation_alignment(track, clip, clip_contacts, ctx, r)
    hold = not releases and not steps
    parents = clip.motion.skeleton.parents
    kept = _ankles_at(track.rotations, track.positions, r.t0 - track.first, parents, ctx.rig)
    own = alignment.apply_points(_ankles_at(clip.motion.rotations, clip.motion.positions, r.t1 - clip.start, parents,
                                            ctx.rig))
    apart = np.linalg.norm(horizontal(kept - own, ctx.up), axis=-1)
    standing = _contacts_at(track, r.t0)
    planned = {("left", "right").index(s.foot) for s in steps}
    # a standing foot nothing takes home (the clip never moves it after S1) steps
    # into the clip's stance unless it already stands there, as under eq. (8)
    unreleased = np.array([not any(x[1].foot == side for x in releases) for side in ("left", "right")])
    far = apart >= np.where(hold | unreleased, STEP_APART, KEEP_REACH) * ctx.leg
    # (a foot the clip has in the air at the end of S1 steps last, onto its swing)
    aloft = ~clip_contacts[int(np.clip(r.t1 - clip.start, 0, len(clip_contacts) - 1))]
    feet = sorted((k for k in range(2) if not standing[k] or k in planned or far[k]),
                  key=lambda k: (bool(standing[k]), aloft[k], -apart[k]))
    lands = {k: _landing(track, k, r) for k in feet if not standing[k]}
    stepping = [(("left", "right")[k], bool(aloft[k]), lands.get(k)) for k in feet]
    releases = [] if hold else [x for x in releases if x[1].foot not in {s[0] for s in stepping}]
    return releases, stepping, alignment, hold


def _one_at_a_time(stepping: list, r, step_frames: float) -> list[Segment]:
    """Step segments over S1 ``r``, one foot after the other.

    A foot already in the air lands when the previous motion lands it; the
    standing feet then step in turn over the rest of S1, each no quicker than
    the clips' own steps (``step_frames``) where S1 has room for that, and
    overlapping in the middle where it has not (the plan's note says S1 could
    not be lengthened). A foot the clip has in the air at the end of S1 stays in
    the air from its step on, joining the clip's own swing (a run starting in
    flight has both feet up there).
    """
    segments, start = [], r.t0
    standing = [x for x in stepping if x[2] is None]
    for foot, aloft, landing in stepping:
        if landing is not None:
            end = int(np.clip(landing, min(start + 1, r.t1), r.t1))
            segments.append(Segment("lower", "step", int(start), r.t1 if aloft else end, foot=foot))
            start = end
    room = r.t1 - start
    length = min(room, max(room / max(len(standing), 1), step_frames))
    for i, (foot, aloft, _) in enumerate(standing):
        first = start + (i * (room - length) / (len(standing) - 1) if len(standing) > 1 else 0.0)
        last = r.t1 if aloft or len(standing) == 1 else first + length
        segments.append(Segment("lower", "step", int(round(first)), int(round(last)), foot=foot))
    return segments


def _landing(track: _Track, foot: int, r) -> int:
    i = r.t0 - track.first
    down = np.flatnonzero(track.contacts[i : r.t1 - track.first + 1, foot])
    return int(r.t0 + down[0]) if len(down) else int(r.t1)


def _adaptation_alignment(track: _Track, clip: Clip, clip_contacts: np.ndarray, ctx: _Context, r) -> Alignment:
    """The following clip placed for adaptation over S1 ``r`` (2008, 4.2): on a foot
    the previous motion stands on when S1 starts, where the following clip last
    plants that foot by the end of S1.

    Matching the foot at the end of S1 itself would put the kept foot where the
    clip has it in the air when its first step is already under way there: the
    foot would slide back along the floor to the clip's own stance and step
    again. Of the feet standing at the start of S1, the one the clip plants
    latest is used (at the end of S1 itself when the clip stands on it there).
    """
    j1 = int(np.clip(r.t1 - clip.start, 0, len(clip_contacts) - 1))
    choice = None  # (clip frame, foot)
    for foot in np.flatnonzero(_contacts_at(track, r.t0)):
        planted = np.flatnonzero(clip_contacts[: j1 + 1, foot])
        if len(planted) and (choice is None or planted[-1] > choice[0]):
            choice = (int(planted[-1]), int(foot))
    frame, foot = choice if choice is not None else (j1, _base_foot_at(track, r.t0))
    return _align(track, clip, ctx, prev_frame=r.t0, next_frame=frame, foot=foot)


def _feet_home(clip, clip_contacts, next_moving, ctx, sides, c1b, r) -> tuple[list, list]:
    """How each kept foot gets home after S1 ``r``: (releases, steps).

    releases  ``[(phase, segment)]``: the foot goes home during its own first
              moving phase after S1 (eq. 5), pose to motion.
    steps     ``[segment]``: the foot steps home during S1 instead.
    """
    # eq. (5): each kept foot goes home during its own first moving phase after S1
    # (2008 7.2, "the foot position is blended from the constrained position to the
    # original position"), pose to motion; a foot that never moves stays kept (eq. 8)
    # (a phase already under way when S1 ends counts from there: that foot is moving)
    # (a foot has at least MIN_BLEND_S of its phase to get home: shorter shuffles are skipped)
    shortest = int(round(MIN_BLEND_S * ctx.fps))
    later = [_Phase(p.phase, max(p.first, r.t1 + 1), p.last)
             for p in next_moving if p.last - max(p.first, r.t1 + 1) + 1 >= shortest]
    fn = sides.feats["lower"][1]  # the following clip up to its core
    # a foot the clip has in the air at the end of S1 has no place of its own to be
    # kept towards until its next phase: it steps onto its swing during S1 instead
    aloft = ~clip_contacts[int(np.clip(r.t1 - clip.start, 0, len(clip_contacts) - 1))]
    releases, steps = [], []
    for k, side in enumerate(("left", "right")):
        p1 = next((p for p in later if moving_feet(p.phase)[k]), None)
        if aloft[k] and (p1 is None or p1.first > r.t1 + 1):
            steps.append(Segment("lower", "step", r.t0, r.t1, foot=side))
            continue
        if p1 is None:
            if later:  # the clip moves, but never this foot: it steps home in S1
                steps.append(Segment("lower", "step", r.t0, r.t1, foot=side))
            continue
        if p1.last >= c1b:
            # home only inside the core: the core would not be the clip's own, so this
            # foot steps home during S1 instead, before the core starts
            steps.append(Segment("lower", "step", r.t0, r.t1, foot=side))
            continue
        # 4.4.2: distances from the pose the foot leaves in to each pose of its phase
        fp1 = fn[p1.first - clip.start : p1.last - clip.start + 1]
        d = distance_matrix(fp1[:1], fp1)[0]
        wp = _long_enough(pose_to_motion_weights(d, ctx.fps), len(d), ctx)
        release = Segment("lower", "pose-to-motion" if wp.kind != "pose_to_pose" else "pose-to-pose",
                          p1.first, p1.first + max(wp.end_index, 1), _rendered(ctx, wp.function),
                          (p1.first, p1.first, p1.first + 1, p1.last), foot=side)
        releases.append((p1, release))
    return releases, steps


def _step_duration(track: _Track, next_moving: list[_Phase], ctx: _Context) -> float:
    """How long the clips' own steps take, seconds: the median single-support phase
    of the previous motion's last STEP_WINDOW_S and of the following clip, or
    STEP_S if neither steps."""
    tail = track.contacts[-int(STEP_WINDOW_S * ctx.fps):]
    phases = _moving_phases(tail, 0, 0, len(tail) - 1) + next_moving
    lengths = [p.last - p.first + 1 for p in phases if p.phase in (Phase.LS, Phase.RS)]
    return float(np.median(lengths)) / ctx.fps if lengths else STEP_S


def _step_fits(track: _Track, clip: Clip, pair: PairPlan, p0: _Phase, ctx: _Context) -> bool:
    """Whether a connection's step is the previous phase's, scaled by S_MAX at most.

    The connection bends the previous phase's moving foot onto where the
    connection pose has it. The phase may be time-scaled by S_MIN..S_MAX
    (2008, 6.2); a step stretched beyond S_MAX times its own length (plus a
    tenth of a leg) would be a foot sweeping across the floor: adaptation,
    which steps it home at the pace of the clips' own steps, does better.
    """
    moved = np.array(moving_feet(p0.phase), dtype=bool)
    parents = clip.motion.skeleton.parents
    takeoff = _ankles_at(track.rotations, track.positions, p0.first - track.first, parents, ctx.rig)
    landing = _ankles_at(track.rotations, track.positions, p0.last + 1 - track.first, parents, ctx.rig)
    t1 = pair.segment("lower").end
    target = pair.alignment.apply_points(_ankles_at(clip.motion.rotations, clip.motion.positions, t1 - clip.start,
                                                    parents, ctx.rig))
    own = np.linalg.norm(horizontal(landing - takeoff, ctx.up), axis=-1)
    bent = np.linalg.norm(horizontal(target - takeoff, ctx.up), axis=-1)
    # the moving foot: its step stretched by S_MAX at most; a standing foot: it stays
    # where it stands (a connection pose on the other foot would slide it there)
    limit = np.where(moved, S_MAX * own, 0.0) + STAND_REACH * ctx.leg
    return bool(np.all(bent <= limit))


def _ankles_at(rotations: np.ndarray, positions: np.ndarray, frame: int, parents: np.ndarray, rig: Rig) -> np.ndarray:
    """World positions ``(2, 3)`` of the left and right ankle at one frame (clamped) of a pose sequence."""
    i = int(np.clip(frame, 0, len(rotations) - 1))
    ankles = [rig.leg("L").ankle, rig.leg("R").ankle]
    return forward_kinematics(rotations[i], positions[i], parents, ankles, rotations_out=False)[0]


def _stance_foot(phase: Phase) -> int:
    return {Phase.LS: 0, Phase.RS: 1}.get(Phase(phase), -1)


def _contacts_at(track: _Track, t: int) -> np.ndarray:
    """(left, right) contacts of the track at output frame ``t`` (clamped to the track)."""
    return track.contacts[int(np.clip(t - track.first, 0, len(track.contacts) - 1))]


def _base_foot_at(track: _Track, t: int) -> int:
    """The foot that supports the body at output frame ``t`` (2008, 4.2); both: the left."""
    c = _contacts_at(track, t)
    return 0 if c[0] else (1 if c[1] else -1)


def _align(track: _Track, clip: Clip, ctx: _Context, *, prev_frame: int, next_frame: float, foot: int,
           heading: bool = False) -> Alignment:
    """The following clip placed on the previous motion (2008, 4.2-4.3); with ``heading``, turned
    by the anchor foot's heading (ankle to toe) instead of the body orientation."""
    parents = clip.motion.skeleton.parents
    i = int(np.clip(prev_frame - track.first, 0, len(track.rotations) - 1))
    j = int(np.clip(round(float(next_frame)), 0, clip.motion.n_frames - 1))
    # the body orientation only looks a few seconds back from the previous frame
    # and ahead from the following one (2008, 4.3)
    reach = int(ORIENTATION_WINDOW_S * ctx.fps)
    lo = max(i - reach, 0)
    # one pass over both sides' frames, split afterwards
    n_prev = i + 1 - lo
    pelvis, facing, _ = body_track(np.concatenate([track.rotations[lo : i + 1], clip.motion.rotations[j : j + reach]]),
                                   np.concatenate([track.positions[lo : i + 1], clip.motion.positions[j : j + reach]]),
                                   parents, ctx.rig, ctx.up, ankles=False)
    # the feet only where the clips meet
    feet = forward_kinematics(np.stack([track.rotations[i], clip.motion.rotations[j]]),
                              np.stack([track.positions[i], clip.motion.positions[j]]), parents,
                              [ctx.rig.leg("L").ankle, ctx.rig.leg("R").ankle], rotations_out=False)[0]
    headings = None
    toe = ctx.rig.leg("LR"[foot]).toe if foot in (0, 1) else None
    if heading and toe is not None:
        ends = forward_kinematics(np.stack([track.rotations[i], clip.motion.rotations[j]]),
                                  np.stack([track.positions[i], clip.motion.positions[j]]), parents,
                                  [ctx.rig.leg("LR"[foot]).ankle, toe], rotations_out=False)[0]
        headings = (ends[0, 1] - ends[0, 0], ends[1, 1] - ends[1, 0])
    return align_clip((pelvis[:n_prev], facing[:n_prev], None), i - lo, (pelvis[n_prev:], facing[n_prev:], None), 0,
                      foot, ctx.up, distance=0.2 * ctx.leg, feet=(feet[0], feet[1]), foot_headings=headings)


# --------------------------------------------------------------------------
# time warps of each side


def _warp_transition_prev(t, p0: _Phase, p1: _Phase):
    """Previous motion's phase P0 stretched over the blended phase P0.first..P1.last (2008, 5.2)."""
    return smooth_warp(t, (p0.first, p1.last), (p0.first, p0.last), ramp=WARP_RAMP)


def _warp_transition_next(t, p0: _Phase, p1: _Phase):
    return smooth_warp(t, (p0.first, p1.last), (p1.first, p1.last), ramp=WARP_RAMP)


def _warp_connection_prev(t, p0: _Phase, t1: int):
    """Previous motion's phase P0 fitted to end at the connection time t1 (2008, 6.2)."""
    return smooth_warp(t, (p0.first, t1), (p0.first, p0.last), ramp=WARP_RAMP)


# --------------------------------------------------------------------------
# 7: rendering


def render_pair(track: _Track, clip: Clip, clip_contacts: np.ndarray, pair: PairPlan, ctx: _Context) -> _Track:
    """The track extended by ``clip`` as ``pair`` says (2014, 4.2; 2008, 5.2, 6.2, 7.2)."""
    nxt = pair.alignment.apply(clip.motion, ctx.rig.pelvis)
    segs = [s for s in pair.segments if s.blend != "deformation"]
    first_blend = min(s.start for s in segs)
    # after the last frame the pair touches, the aligned clip plays as it is
    last = max(s.end for s in pair.segments)
    if pair.method == TRANSITION:
        last = max(last, pair.next_phase[2])  # the clip's time warp ends with its phase
    # (a clip that starts after the blend waits in its first pose until then)
    stop = int(min(max(last + 1, clip.start), clip.end))
    t = np.arange(first_blend, stop + 1)
    T = len(t)

    # time warps: which source frame each side shows at each output frame
    if pair.method == TRANSITION:
        p0, p1 = (_Phase(Phase[n], a, b) for n, a, b in (pair.prev_phase, pair.next_phase))
        u_prev, u_next = _warp_transition_prev(t, p0, p1), _warp_transition_next(t, p0, p1)
    elif pair.method == CONNECTION:
        p0 = _Phase(Phase[pair.prev_phase[0]], *pair.prev_phase[1:])
        lower = pair.segment("lower")
        u_prev, u_next = _warp_connection_prev(t, p0, lower.end), t.astype(float)
    else:
        u_prev, u_next = t.astype(float), t.astype(float)
    prev = sample(track.rotations, track.positions, u_prev - track.first)
    new = sample(nxt.rotations, nxt.positions, u_next - clip.start)
    prev_contacts = track.contacts[np.clip(np.round(u_prev - track.first).astype(int), 0, len(track.contacts) - 1)]
    new_contacts = clip_contacts[np.clip(np.round(u_next - clip.start).astype(int), 0, clip.motion.n_frames - 1)]

    def end_pose(side, seg: Segment, mode: str, frames: np.ndarray):
        """One side of a blend at ``frames`` (window indices inside ``seg``).

        "motion": the side as it plays; "held": its pose at the segment's
        start (the source) or end (the target) held still, as the paper
        blends poses; "source"/"target": with eased ends (the default) the
        source keeps moving at its own speed at the start and comes to rest
        half way through, the target starts at rest and reaches its own
        speed at the end, so the output's velocity matches both motions at
        the segment's ends; with held ends, as "held".
        """
        a, b = seg.start - t[0], seg.end - t[0]
        if mode == "motion":
            return side[0][frames], side[1][frames]
        if mode == "held" or ctx.pose_ends != "eased":
            i = int(np.clip(a if mode == "source" else b, 0, T - 1))
            return side[0][i : i + 1].repeat(len(frames), 0), side[1][i : i + 1].repeat(len(frames), 0)
        dur = max(b - a, 1)
        k = np.clip(frames - a, 0, dur).astype(float)
        idx = a + k - k * k / (2.0 * dur) if mode == "source" else b - dur / 2.0 + k * k / (2.0 * dur)
        return sample(side[0], side[1], idx)

    def through(src, dst, seg: Segment, src_mode: str, dst_mode: str):
        """``src`` before the segment, the blend inside it, ``dst`` after it: ``(T, J, 4), (T, J, 3)``."""
        a, b = seg.start - t[0], seg.end - t[0]
        rot, pos = dst[0].copy(), dst[1].copy()
        head = slice(0, max(a, 0))
        rot[head], pos[head] = src[0][head], src[1][head]
        frames = np.arange(max(a, 0), min(b, T - 1) + 1)
        if len(frames):
            w = seg.weights.evaluate(b - a + 1)[frames - a] if b > a else np.ones(len(frames))
            rot[frames], pos[frames] = blend(end_pose(src, seg, src_mode, frames),
                                             end_pose(dst, seg, dst_mode, frames), w)
        return rot, pos

    def weights_of(seg: Segment) -> np.ndarray:
        w = np.zeros(T)
        a, b = seg.start - t[0], seg.end - t[0]
        w[b + 1 :] = 1.0
        if b >= a:
            w[a : b + 1] = seg.weights.evaluate(b - a + 1)
        return w

    lower_mask = ctx.lower
    # upper body: pose to pose (eqs. 2, 4, 6)
    upper_rot, upper_pos = through(prev, new, pair.segment("upper"), "source", "target")

    # lower body
    adapt_targets = None
    if pair.method == TRANSITION:  # eq. (1): motion to motion
        seg = pair.segment("lower")
        lrot, lpos = through(prev, new, seg, "motion", "motion")
        contacts = np.where((weights_of(seg) < 0.5)[:, None], prev_contacts, new_contacts)
    elif pair.method == CONNECTION:  # eq. (3): motion to the connection pose
        seg = pair.segment("lower")
        # Fig. 4c: when no weight function can follow the motion, blend from its held pose
        lrot, lpos = through(prev, new, seg, "motion" if seg.blend == "motion-to-pose" else "source", "held")
        contacts = np.where((weights_of(seg) < 0.5)[:, None], prev_contacts, new_contacts)
    else:
        lrot, lpos, contacts, adapt_targets = _adaptation_lower(
            track, clip, nxt, new, prev, new_contacts, prev_contacts, pair, ctx, t, weights_of, through)

    rot = np.where(lower_mask[None, :, None], lrot, upper_rot)
    pos = np.where(lower_mask[None, :, None], lpos, upper_pos)
    motion = Motion(nxt.skeleton, rot, pos, ctx.fps)

    # adaptation's kept and stepping feet by leg IK (2008, 7.2); every planted foot
    # is held afterwards, over the whole gap, by the contact stage (core.contacts)
    if adapt_targets is not None and adapt_targets[1].any():
        motion = adapt_legs(motion, ctx.rig, *adapt_targets)

    keep = first_blend - track.first
    if keep > len(track.rotations):
        # a gap before the blend: the previous motion holds its last pose (2008, 6.2)
        track = _held_until(track, first_blend - 1)
    rest = slice(stop + 1 - clip.start, None)
    return _Track(
        rotations=np.concatenate([track.rotations[:keep], motion.rotations, nxt.rotations[rest]]),
        positions=np.concatenate([track.positions[:keep], motion.positions, nxt.positions[rest]]),
        contacts=np.concatenate([track.contacts[:keep], contacts, clip_contacts[rest]]),
        first=track.first,
        core_end=clip.start + clip.core_range[1],
        name=clip.name,
    )


def _held_until(track: _Track, frame: int) -> _Track:
    """The track extended to output ``frame`` by holding its last pose (and contacts)."""
    n = frame - track.last
    if n <= 0:
        return track
    return _Track(
        rotations=np.concatenate([track.rotations, np.repeat(track.rotations[-1:], n, 0)]),
        positions=np.concatenate([track.positions, np.repeat(track.positions[-1:], n, 0)]),
        contacts=np.concatenate([track.contacts, np.repeat(track.contacts[-1:], n, 0)]),
        first=track.first,
        core_end=track.core_end,
        name=track.name,
    )


def _adaptation_lower(track, clip, nxt, new, prev, new_contacts, prev_contacts, pair, ctx, t, weights_of, through):
    """Lower body of motion adaptation (2008, 7.2; 2014, 4.2.3-4.2.4).

    The previous motion's feet are kept: the following motion's legs reach
    them by IK, its pelvis placed from the feet and body orientation by eq.
    (2). During its first foot-moving phase each foot goes from the kept
    position to its own (pose to motion, eq. 5). A foot the plan steps is
    down before and after its step and in the air during it; the contact
    stage (core.contacts) holds it and carries it across. A foot the previous
    motion has in the air when S1 starts carries on along its swing, bent
    onto its own place by the end of S1. Under eq. (8) (ADAPTATION_HOLD) no
    foot is kept: the plan steps every foot not already where the clip has it.
    """
    T = len(t)
    s1 = pair.segment("lower", "pose-to-pose")
    released = {s.foot: s for s in pair.segments if s.foot and s.blend != "step"}
    steps = {("left", "right").index(s.foot): s for s in pair.segments if s.blend == "step"}
    rig, up = ctx.rig, ctx.up
    left, right = rig.leg("L"), rig.leg("R")
    parents = nxt.skeleton.parents
    i0 = int(np.clip(s1.start - t[0], 0, T - 1))
    # the kept feet: where the previous motion has them at the start of S1
    feet_joints = [left.ankle, right.ankle]
    kept = forward_kinematics(prev[0][i0], prev[1][i0], parents, feet_joints, rotations_out=False)[0]  # (2, 3)
    swinging = ~prev_contacts[i0]  # a foot the previous motion has in the air when S1 starts
    stepping = np.array([k in steps for k in range(2)])
    # kept: a standing foot the plan releases in its own moving phase (eq. 5); any other
    # foot follows the clip (it steps, or already stands where the clip has it)
    planted = ~swinging & ~stepping & np.array([side in released for side in ("left", "right")])

    # the following motion's own feet, pelvis and body orientation
    g = forward_kinematics(new[0], new[1], parents, [left.ankle, right.ankle, rig.pelvis, left.hip, right.hip],
                           rotations_out=False)[0]
    feet_own = g[:, :2]
    pelvis_own = g[:, 2]
    body = pelvis_facing(g[:, 3], g[:, 4], up)
    i1 = int(np.clip(s1.end - t[0], 0, T - 1))

    # how far each foot has returned to its own position: 0 kept, 1 own
    release = np.zeros((T, 2))
    home = feet_own[i1].copy()  # where each foot stands in the clip before it first moves
    for k, side in enumerate(("left", "right")):
        if side in released:
            release[:, k] = weights_of(released[side])
            home[k] = feet_own[int(np.clip(released[side].start - t[0], 0, T - 1)), k]
    release[:, ~planted] = 1.0
    # Each foot is the clip's own foot moved by its offset from home, which fades
    # out while the foot is released: the kept foot until it moves, then its own
    # swing bent smoothly onto its own landing spot (2008, 7.2, t5..t6).
    offset = (1.0 - release[..., None]) * (kept - home)[None]
    feet = feet_own + offset
    # eq. (2): the pelvis keeps its place relative to the feet and the body orientation
    shift = pelvis_shift(pelvis_own, home[None, 0], home[None, 1], body, up, home[None, 0] + offset[:, 0],
                         home[None, 1] + offset[:, 1])
    adapted_rot, adapted_pos = move_pelvis(new, nxt.skeleton, rig, shift)

    # S1: pose to pose from the previous pose to the adapted pose at its end
    w1 = weights_of(s1)
    lrot, lpos = through(prev, (adapted_rot, adapted_pos), s1, "source", "target")
    after = t > s1.end
    before = t < s1.start
    during = ~before & ~after

    # the sides' own contacts, the previous before half way through S1, the following after
    contacts = np.where((w1 < 0.5)[:, None], prev_contacts, new_contacts)
    held_feet = (release <= 0.0) & planted[None]  # kept, not yet on its way home
    contacts = np.where(held_feet & ~before[:, None], True, contacts)
    # a stepping foot stands on its step's first frame, is in the air after it, and lands
    # on its last frame (unless the clip has it in the air there: it joins the clip's swing)
    for k, step in steps.items():
        in_step = (t > step.start) & (t < step.end)
        lands = new_contacts[:, k] | (step.end < s1.end)
        contacts[:, k] = np.where(during, ~in_step & ((t != step.end) | lands), contacts[:, k])
    # IK from S1 on (before it the previous motion plays as it was): kept feet, and
    # every foot while the pelvis is shifted, released ones onto their own places,
    # so that a foot back home stays home while the other one is still kept.
    shifted = np.linalg.norm(shift, axis=-1) > 1e-9 * ctx.leg
    active = ~before[:, None] & (((release < 1.0) & planted[None]) | shifted[:, None])
    # during S1 the targets move with the pose blend, from where the previous feet stand
    targets = (1.0 - w1)[:, None, None] * kept[None] + w1[:, None, None] * feet
    if swinging.any():
        prev_feet = forward_kinematics(prev[0], prev[1], parents, feet_joints, rotations_out=False)[0]
    for k in np.flatnonzero(swinging):
        # it goes on along the previous motion's swing, bent onto its own place over its
        # step, rising by a share of its way's length (STEP_HEIGHT to STEP_MAX_HEIGHT leg
        # lengths) on a smooth bump in time, highest half way through
        step = steps.get(k, s1)
        a, b = step.start - t[0], step.end - t[0]
        x = np.clip((np.arange(T) - a) / max(b - a, 1), 0.0, 1.0)  # time through its step
        wk = smoothstep(x)
        targets[:, k] = (1.0 - wk)[:, None] * prev_feet[:, k] + wk[:, None] * feet[:, k]
        in_step = (np.arange(T) >= a) & (np.arange(T) <= b)
        reach = np.linalg.norm(horizontal(targets[in_step, k] - prev_feet[i0, k], up), axis=-1)
        length = reach.max() if len(reach) else 0.0
        rise = min(max(STEP_RISE * length, min(STEP_HEIGHT * ctx.leg, length)), STEP_MAX_HEIGHT * ctx.leg)
        targets[:, k] += (smoothstep(1.0 - np.abs(2.0 * x - 1.0)) * in_step * rise)[:, None] * up
        active[:, k] |= during
    return lrot, lpos, contacts, (targets, active)
