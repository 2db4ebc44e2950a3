"""Planning one pair: method, blending segments, optimal ranges, weights, alignment and feet
(Oshita 2014, sections 4.1-4.4, eqs. (1)-(16); 2008, sections 4-7).

For each pair the previous motion is everything synthesized so far and the
following motion the next clip. :func:`plan_pair`

1. reads the support phases of both sides (2008, section 4),
2. picks the method by priority, transition > connection > adaptation
   (2014, 4.1 and 4.2.5; 2008, 3.2 and Fig. 7), and among several usable
   foot-moving phases the one with the longest possible blending range,
3. builds the blending segments with their possible ranges, eqs. (1)-(8),
   separately for the lower and the upper body,
4. finds each segment's optimal range, eq. (9), with responsiveness W,
5. chooses each segment's weight function (section 4.4),
6. aligns the following clip on the previous one (2008, 4.2-4.3),
7. decides how adaptation's feet get to the following clip: kept and
   released in their own moving phases (eqs. 5, 7), or stepping, one at a
   time at the clips' pace, or gliding where S1 has no room for that step.

Everything it decides is in the :class:`core.plan.PairPlan` it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import quat
from .align import Alignment, align_clip, body_track, join_orientation
from .analysis import Phase, horizontal, moving_feet
from .motion import forward_kinematics
from .optimize import (BlendLimits, BlendSide, body_frame_joints, body_frames_of, body_velocity, distance_matrix,
                       optimal_blend_range, pose_acceleration, pose_velocity, primary_joints)
from .options import ContactOptions
from .plan import ADAPTATION, ADAPTATION_HOLD, CONNECTION, TRANSITION, Clip, PairPlan, Segment
from .track import (Context, Feet, PhaseSpan, Track, ankle_toe_per_foot, base_foot_at, clamped, contacts_at,
                    frame_range, moving_phases, stance_foot, warp_connection_prev, warp_transition_next)
from .text import counted
from .weights import (WeightFunction, WeightPlan, motion_to_motion_weights, motion_to_pose_weights, movement_reverses,
                      optimal_weight_function, pose_to_motion_weights)


@dataclass(frozen=True)
class SideFeatures:
    """What planning reads of one side of a pair over some of its frames, per body part
    (``feats``, ``vel``, ``accel`` by part):

    feats       (F, n, 3) pose features of the part's primary joints;
    vel         (F,) their velocity, eq. (13);
    accel       the median of the part's pose acceleration (over accel_step_s);
    body        (F, 3) the body's own travel (optimize.body_velocity);
    body_accel  the median change of it over the same step;
    feet        (F, 2, 2, 3) world (left, right) (ankle, toe), for core.track.Feet.

    Every figure is taken frame by frame or over the side's own frames, so each side
    is analysed on its own; the following clip's (its frames up to its core) is the
    same wherever the clip is placed, and a live update keeps it (core.resynthesis).
    """

    feats: dict
    vel: dict
    accel: dict
    body: np.ndarray
    body_accel: float
    feet: np.ndarray


def side_features(rotations: np.ndarray, positions: np.ndarray, skeleton, ctx: Context) -> SideFeatures:
    """:class:`SideFeatures` of the poses ``rotations (F, J, 4)``, ``positions (F, J, 3)``."""
    parts = {part: primary_joints(ctx.rig, part) for part in ("lower", "upper")}
    wanted = body_frame_joints(ctx.rig, np.concatenate(list(parts.values())))
    # one pass of forward kinematics (the feet too, for planning's look-ups of where they
    # stand, see core.track.Feet), split by body part afterwards
    world = forward_kinematics(rotations, positions, skeleton.parents,
                               np.concatenate([wanted, ankle_toe_per_foot(ctx.rig)]), rotations_out=False)[0]
    every, pelvis, axes = body_frames_of(world[:, : len(wanted)], skeleton, ctx.rig, ctx.up)
    # the typical accelerations over a fixed time step
    step = max(int(round(ctx.options.accel_step_s * ctx.fps)), 1)
    feats, vel, accel, at = {}, {}, {}, 0
    for part, js in parts.items():
        f = every[:, at : at + len(js)]
        at += len(js)
        feats[part], vel[part] = f, pose_velocity(f, ctx.fps)
        accel[part] = _median(pose_acceleration(f, ctx.fps, step)) if len(f) else 0.0
    # the body's own travel, which the pose features leave out
    body = body_velocity(pelvis, axes, ctx.fps)
    feet = world[:, len(wanted) :].reshape(len(world), 2, 2, 3)
    for a in (*feats.values(), *vel.values(), body, feet):
        a.setflags(write=False)  # (a live update reads a following clip's again and again)
    return SideFeatures(feats, vel, accel, body, _typical_change(body, step, ctx.fps), feet)


def following_features(clip: Clip, ctx: Context) -> SideFeatures:
    """:class:`SideFeatures` of a pair's following clip: its frames up to its core start
    (blends end there at the latest)."""
    head = clip.motion[: clip.core_range[0] + 2]
    return side_features(head.rotations, head.positions, clip.motion.skeleton, ctx)


class _Sides:
    """Pose features and velocities of both sides of a pair, per body part."""

    def __init__(self, track: Track, clip: Clip, ctx: Context, following: SideFeatures | None = None):
        # the previous side is only read from its core end on: features of that tail only
        lo = max(track.core_end - track.first - 1, 0)
        self.prev_offset = track.first + lo
        self.next_offset = clip.start
        prev = side_features(track.rotations[lo:], track.positions[lo:], clip.motion.skeleton, ctx)
        nxt = following if following is not None else following_features(clip, ctx)
        parents = clip.motion.skeleton.parents
        self.prev_feet = Feet(prev.feet, lo, track.rotations, track.positions, parents, ctx.rig)
        self.next_feet = Feet(nxt.feet, 0, clip.motion.rotations, clip.motion.positions, parents, ctx.rig)
        self.feats = {part: (prev.feats[part], nxt.feats[part]) for part in prev.feats}
        self.vel = {part: (prev.vel[part], nxt.vel[part]) for part in prev.vel}
        # the typical acceleration of the livelier side, of the pose and of the body
        self.accel = {part: max(prev.accel[part], nxt.accel[part]) for part in prev.accel}
        self.body = (prev.body, nxt.body)
        self.body_accel = max(prev.body_accel, nxt.body_accel)
        # the user's blend length into the clip (Clip.blend_s), in frames: a range of that length, none other
        self.user_frames = None if clip.blend_s is None else clip.blend_s * ctx.fps

    def optimal(self, part, t0_candidates, t1_candidates, ctx, phase_length_s=None, prev_pose_frame=None,
                min_s=0.0):
        fp, fn = self.feats[part]
        vp, vn = self.vel[part]
        if prev_pose_frame is not None:
            # a single fixed t0 whose pose stands for the one at prev_pose_frame
            fp = fp.copy()
            fp[self.prev_index(int(t0_candidates[0]))] = fp[self.prev_index(prev_pose_frame)]
        # The user's length for this pair (Clip.blend_s) bounds the range both ways: eq. (9) then
        # chooses only where a range that long lies, and the limits below only say how far it
        # exceeds them (its excess, which still decides the method, 2014 4.1).
        if self.user_frames is not None:
            shortest = longest = nearest_length(t0_candidates, t1_candidates, self.user_frames)
        else:
            shortest = int(round(max(min_s, ctx.options.min_blend_s) * ctx.fps))
            longest = max(int(round(ctx.options.max_blend_s * ctx.fps)), 1)
        return optimal_blend_range(
            BlendSide(fp, vp, np.asarray(t0_candidates), self.prev_offset, self.body[0]),
            BlendSide(fn, vn, np.asarray(t1_candidates), self.next_offset, self.body[1]),
            fps=ctx.fps, phase_length_s=phase_length_s, weights=ctx.weights,
            limits=BlendLimits(
                # no blend shorter than min_blend_s where the possible ranges allow it:
                # eq. (11) alone would take a one-frame jump between two similar poses
                min_frames=shortest,
                # nor one that moves the body faster than the two clips ever move it
                max_speed=max(float(vp.max(initial=0.0)), float(vn.max(initial=0.0))) or None,
                # nor add more acceleration than the clips typically have (W = 1) or
                # than 1 / W times that: a blend squeezed shorter than its change of
                # pose needs is a jerk; W = 0 leaves eq. (9) alone to be responsive
                max_accel=self._limit(self.accel[part], ctx),
                # and the lower body (which carries the pelvis) no faster a change of the
                # body's velocity, from standing into a run say, than the clips' own
                max_body_accel=self._limit(self.body_accel, ctx) if part == "lower" else None,
                # and none longer than max_blend_s: over a long gap between the cores the
                # search then grows with the gap, not with its square
                max_frames=longest,
            ),
        )

    @staticmethod
    def _limit(typical: float, ctx: Context) -> float | None:
        """The clips' typical acceleration at W = 1, 1 / W times it below; none at W = 0."""
        return typical / ctx.responsiveness if typical > 0 and ctx.responsiveness > 0 else None

    def prev_index(self, t):
        return clamped(t - self.prev_offset, len(self.feats["lower"][0]))

    def next_index(self, t):
        return clamped(t - self.next_offset, len(self.feats["lower"][1]))

    def pose_to_pose_weights(self, part, t0, t1, ctx, *, eased: bool = True) -> WeightFunction:
        """Eq. (16) slopes from the velocities at both ends, 0 where the movement reverses (4.4.1),
        as rendered with the synthesis' pose ends (see :func:`_rendered`), or as eq. (16) gives
        them (not ``eased``)."""
        fp, fn = self.feats[part]
        vp, vn = self.vel[part]
        i, j = self.prev_index(t0), self.next_index(t1)
        d = float(distance_matrix(fp[i : i + 1], fn[j : j + 1])[0, 0])
        # Fig. 3c: does the motion come back towards the other end's pose just outside the range?
        before = fp[max(i - 1, 0) : i + 1]
        after = fn[j : j + 2]
        start_reverses = movement_reverses(distance_matrix(before, fn[j : j + 1])[:, 0], len(before) - 1, side="start")
        end_reverses = movement_reverses(distance_matrix(fp[i : i + 1], after)[0], 0, side="end")
        function = optimal_weight_function(vp[i], vn[j], d, (t1 - t0) / ctx.fps,
                                           start_reverses=start_reverses, end_reverses=end_reverses)
        return _rendered(ctx, function) if eased else function


def nearest_length(t0_candidates, t1_candidates, frames: float) -> int:
    """The length ``t1 - t0 > 0`` of the candidate pairs (eqs. 1-8's possible ranges) nearest ``frames``,
    the longer of two as near: the user's blend length where the ranges allow one that long, else
    the nearest they allow, shorter or longer."""
    t0 = np.asarray(t0_candidates, dtype=np.float64)
    t1 = np.sort(np.asarray(t1_candidates, dtype=np.float64))
    at = np.searchsorted(t1, t0 + frames)  # each t0's first t1 at least ``frames`` on, and the one before
    lengths = np.concatenate([t1[np.minimum(at, len(t1) - 1)] - t0, t1[np.maximum(at - 1, 0)] - t0])
    lengths = lengths[lengths > 0]
    if not len(lengths):
        return 1  # (no pair at all: the range search says so)
    return int(lengths[np.lexsort((-lengths, np.abs(lengths - frames)))[0]])


def _median(x) -> float:
    """``np.median`` of a non-empty 1-D sequence, the same bits: the middle element of a
    partition, or the mean of the two middle ones, NaN where there is one; without
    np.median's general machinery, which costs several times the arithmetic on the
    few dozen values every pair takes medians of (a live update plans pairs while
    the user drags)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    n, k = len(x), len(x) // 2
    part = np.partition(x, [k - 1, k, n - 1] if n % 2 == 0 else [k, n - 1])
    if np.isnan(part[-1]):
        return float("nan")
    return float(part[k] if n % 2 else (part[k - 1] + part[k]) / 2.0)


def _typical_change(velocity: np.ndarray, step: int, fps: float) -> float:
    """Median of ``|v(t + step) - v(t)|`` per second over ``velocity (F, 3)``; 0 when too short."""
    if len(velocity) <= step:
        return 0.0
    return _median(quat.length(velocity[step:] - velocity[:-step])) * fps / step


def _long_enough(plan: WeightPlan, n_frames: int, ctx: Context) -> WeightPlan:
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
    shortest = max(ctx.options.min_blend_s * ctx.fps, 0.5 * (n_frames - 1))
    if plan.n_blend_frames - 1 >= shortest:
        return plan
    return WeightPlan("hermite", 0, n_frames - 1, plan.slope_start, plan.slope_end)


def _rendered(ctx: Context, function: WeightFunction, eased_start: bool = True, eased_end: bool = True) -> WeightFunction:
    """The weight function as rendered. With eased ends (see :func:`synthesize`) an end
    pose eases out of (into) its own motion, carrying the motion's velocity into the
    blend, and the slope there is 0; an end where a motion plays on (the motion side of
    motion-to-pose) or a pose is held keeps eq. (16)'s slope (motion-to-motion blends take
    :func:`core.weights.motion_to_motion_weights`)."""
    if ctx.pose_ends != "eased":
        return function
    return WeightFunction(0.0 if eased_start else function.slope_start, 0.0 if eased_end else function.slope_end,
                          function.kind)


@dataclass(frozen=True, eq=False)
class _Pair:
    """One pair as its planning reads it (2014, 4.1-4.2): what every method's planning needs.

    track        the previous motion as synthesized so far;
    clip         the following motion, placed on the timeline, and ``contacts`` its feet
                 down ``(F, 2)``;
    sides        both sides' pose features and velocities (:class:`_Sides`);
    c0e, c1b     t_{c0,end} and t_{c1,begin}: the previous core's last output frame and the
                 following core's first, between which every blend lies;
    next_moving  the following clip's foot-moving phases (output frames).
    """

    track: Track
    clip: Clip
    contacts: np.ndarray
    ctx: Context
    sides: _Sides
    c0e: int
    c1b: int
    next_moving: list[PhaseSpan]


def plan_pair(track: Track, clip: Clip, clip_contacts: np.ndarray, ctx: Context, *,
              following: SideFeatures | None = None) -> PairPlan:
    """Method, segments, optimal ranges and weight functions for one pair (2014, 4.1-4.4).
    ``following``: :func:`following_features` of ``clip`` when the caller keeps them. A clip
    with the user's blend length (``Clip.blend_s``) has its ranges that long, and the plan says so."""
    planned = _planned_pair(track, clip, clip_contacts, ctx, following)
    if clip.blend_s is None:
        return planned
    # the possible ranges (eqs. 1-8) are the paper's: where none is that long, the nearest length
    # (nearest_length, shorter or longer)
    frames = max(int(round(clip.blend_s * ctx.fps)), 1)
    off = [f"{s.part} body {s.end - s.start}" for s in planned.segments
           if s.blend in BLENDED and s.end - s.start != frames]
    note = planned.note
    if off:
        note = "; ".join(filter(None, [note, (
            f"the user's blend of {clip.blend_s:g} s ({frames} frames) does not fit where the paper's ranges "
            f"allow a blend, so the nearest length: {', '.join(off)} frames")]))
    return replace(planned, blend_s=float(clip.blend_s), note=note)


BLENDED = ("motion-to-motion", "motion-to-pose", "pose-to-motion", "pose-to-pose")  # the segments that blend


def _planned_pair(track: Track, clip: Clip, clip_contacts: np.ndarray, ctx: Context,
                  following: SideFeatures | None) -> PairPlan:
    c0e = track.core_end
    c1b = clip.start + clip.core_range[0]
    m1e = clip.end
    sides = _Sides(track, clip, ctx, following)
    # the previous side only matters after its core: its phases from there on
    tail = max(c0e - track.first, 0)
    prev_moving = moving_phases(track.contacts[tail:], track.first + tail, c0e + 1, track.last)
    next_moving = moving_phases(clip_contacts, clip.start, clip.start, m1e)
    next_before_core = [p for p in next_moving if p.last <= c1b - 1]
    pair = _Pair(track, clip, clip_contacts, ctx, sides, c0e, c1b, next_moving)

    # motion transition (eqs. 1, 2; 2008 eq. 1): the same foot moving in both
    options = []
    for p0 in prev_moving:
        for p1 in next_before_core:
            if p0.phase != p1.phase or not p0.first < p1.last:
                continue
            span = p1.last - p0.first
            s_min, s_max = ctx.options.s_min, ctx.options.s_max
            if not (s_min <= span / max(p0.last - p0.first, 1) <= s_max and s_min <= span / max(p1.last - p1.first, 1) <= s_max):
                continue
            t0s, t1s = frame_range(c0e, p1.last), frame_range(p0.first, c1b)
            if len(t0s) and len(t1s) and t0s[0] < t1s[-1]:
                options.append((t1s[-1] - t0s[0], p0.first, p0, p1, t0s, t1s))
    if options:
        _, _, p0, p1, t0s, t1s = max(options, key=lambda o: (o[0], o[1]))
        return _plan_transition(pair, p0, p1, t0s, t1s)

    # motion connection (eqs. 3, 4): a foot moving in the previous motion. The
    # connection pose must stand on the foot that moved (2008, 6.1 and Fig. 7b),
    # and the previous phase is time-scaled by s_min..s_max at most (2008, 6.2).
    options = []
    for p0 in prev_moving:
        length = p0.last - p0.first
        t1s = frame_range(max(p0.first + int(np.ceil(ctx.options.s_min * length)), p0.first + 1),
                          min(p0.first + int(ctx.options.s_max * length), c1b))
        moved = [k for k, m in enumerate(moving_feet(p0.phase)) if m]
        landed = clip_contacts[np.clip(t1s - clip.start, 0, len(clip_contacts) - 1)][:, moved].all(axis=1)
        t1s = t1s[landed]
        # a connection squeezed into less than min_blend_s would be a jump: adaptation does better
        if len(t1s) and t1s[-1] - p0.first >= ctx.options.min_blend_s * ctx.fps:
            options.append((t1s[-1] - p0.first, p0.first, p0, t1s))
    # A connection whose landing is more abrupt than the clips ever move (no range
    # keeps within the limits of the search) gives way to adaptation, which keeps
    # the feet planted, unless adaptation is more abrupt still.
    abrupt = None
    for _, _, p0, t1s in sorted(options, key=lambda o: (o[0], o[1]), reverse=True):
        connection = _plan_connection(pair, p0, t1s)
        if not _step_fits(pair, connection, p0):
            continue
        if connection.segment("lower").excess <= 1.0:
            return connection
        abrupt = abrupt or connection

    # motion adaptation (eqs. 5-8)
    adapted = _plan_adaptation(pair)
    if abrupt is not None and abrupt.segment("lower").excess < adapted.segment("lower", "pose-to-pose").excess:
        return abrupt
    return adapted


def _upper_pose_to_pose(sides, ctx, t0s, t1s) -> Segment:
    r = sides.optimal("upper", t0s, t1s, ctx)
    return Segment("upper", "pose-to-pose", r.t0, r.t1, sides.pose_to_pose_weights("upper", r.t0, r.t1, ctx),
                   (int(t0s[0]), int(t0s[-1]), int(t1s[0]), int(t1s[-1])), excess=r.excess)


def _plan_transition(pair: _Pair, p0: PhaseSpan, p1: PhaseSpan, t0s: np.ndarray, t1s: np.ndarray) -> PairPlan:
    track, clip, ctx, sides = pair.track, pair.clip, pair.ctx, pair.sides
    # eq. (1): the lower body blends the two foot-moving phases, motion to motion;
    # the overlap P0..P1 is the core of the blend, its length the target of eq. (10)
    r = sides.optimal("lower", t0s, t1s, ctx, phase_length_s=(p1.last - p0.first) / ctx.fps)
    # both sides move on through the blend: no eq. (16) slope on top of their own velocity
    # (unless the options ask for the paper's)
    weights = (motion_to_motion_weights() if ctx.options.motion_to_motion_slopes == "zero"
               else sides.pose_to_pose_weights("lower", r.t0, r.t1, ctx, eased=False))
    lower = Segment("lower", "motion-to-motion", r.t0, r.t1, weights,
                    (int(t0s[0]), int(t0s[-1]), int(t1s[0]), int(t1s[-1])), excess=r.excess)
    upper = _upper_pose_to_pose(sides, ctx, t0s, t1s)  # eq. (2)
    alignment = _align(pair, prev_frame=(p0.first + p0.last) // 2,
                       next_frame=warp_transition_next(np.array([(p0.first + p0.last) // 2]), p0, p1,
                                                       ctx.options.warp_ramp_s * ctx.fps)[0] - clip.start,
                       foot=stance_foot(p0.phase))
    return PairPlan(track.name, clip.name, TRANSITION, p0.as_tuple(), p1.as_tuple(), (lower, upper), alignment)


def _plan_connection(pair: _Pair, p0: PhaseSpan, t1s: np.ndarray) -> PairPlan:
    track, clip, clip_contacts, ctx, sides, c1b = pair.track, pair.clip, pair.contacts, pair.ctx, pair.sides, pair.c1b
    # eq. (3): the lower body starts blending where the previous foot starts moving,
    # motion to pose; eq. (4): the upper body pose to pose anywhere after that
    t0s = np.array([p0.first])
    # The previous phase is time-warped to end at t1 (2008, 6.2), so the poses the
    # blend joins are the one that phase ends in and the connection pose: eq. (12)
    # compares those two (t0 itself is fixed by eq. 3).
    r = sides.optimal("lower", t0s, t1s, ctx, phase_length_s=(p0.last - p0.first) / ctx.fps, prev_pose_frame=p0.last)
    # 4.4.2: the weight function from the distances of the previous motion to the connection pose
    fp, fn = sides.feats["lower"]
    u = warp_connection_prev(np.arange(r.t0, r.t1 + 1), p0, r.t1, ctx.options.warp_ramp_s * ctx.fps)
    u = u - sides.prev_offset
    idx = np.clip(np.round(u).astype(int), 0, len(fp) - 1)
    d = distance_matrix(fp[idx], fn[sides.next_index(r.t1)][None])[:, 0]
    wp = _long_enough(motion_to_pose_weights(d, ctx.fps), len(d), ctx)
    lower = Segment("lower", "motion-to-pose" if wp.kind != "pose_to_pose" else "pose-to-pose",
                    r.t0 + wp.start_index, r.t1, _rendered(ctx, wp.function, wp.kind == "pose_to_pose", False),
                    (p0.first, p0.first, int(t1s[0]), int(t1s[-1])),
                    excess=r.excess)
    upper = _upper_pose_to_pose(sides, ctx, frame_range(p0.first, c1b - 1), frame_range(p0.first + 1, c1b))
    # align on the foot that stood through the previous phase when the connection
    # pose stands on it too; otherwise on the foot that just landed
    stance = stance_foot(p0.phase)
    j = clamped(r.t1 - clip.start, len(clip_contacts))
    if stance >= 0 and clip_contacts[j, stance]:
        # on the standing foot's place and heading: it stands through the join
        alignment = _align(pair, prev_frame=p0.last, next_frame=j, foot=stance, heading=True)
    else:
        moved = 1 - stance if stance >= 0 else -1
        alignment = _align(pair, prev_frame=min(p0.last + 1, track.last), next_frame=j, foot=moved)
    return PairPlan(track.name, clip.name, CONNECTION, p0.as_tuple(), None, (lower, upper), alignment)


def _plan_adaptation(pair: _Pair) -> PairPlan:
    track, clip, next_moving, ctx, sides = pair.track, pair.clip, pair.next_moving, pair.ctx, pair.sides
    c0e, c1b = pair.c0e, pair.c1b
    # eq. (6): lower (S1) and upper (S2) transitions between the cores, pose to pose.
    # S1 starts where the previous motion stands on a foot, which is kept; a foot
    # it has in the air then carries on along its swing onto its own place
    # (adaptation_lower), so S1 need not wait for the previous step to land.
    # (only the frames from the previous core's end to the next core's start are looked at:
    # the whole track is long)
    lo = max(c0e - track.first, 0)
    hi = max(c1b - track.first, lo)
    t0s = np.flatnonzero(track.contacts[lo:hi].any(axis=1)) + (track.first + lo)
    if not len(t0s):
        t0s = frame_range(c0e, c1b - 1)
    t1s = frame_range(int(t0s[0]) + 1, c1b)
    r = sides.optimal("lower", t0s, t1s, ctx)
    releases, stepping, alignment, hold = _adaptation_feet(pair, r)
    # Feet step one at a time, each taking as long as a step of the clips' own of its
    # length (it travels over the middle of its step only, see core.contacts): S1 is
    # lengthened to that where its possible range allows, and the plan says so.
    pace = _step_pace(track, clip, next_moving, ctx)
    needed = len(stepping) * pace.seconds(pace.stride)
    note = None
    if needed and (r.t1 - r.t0) / ctx.fps < needed:
        longer = sides.optimal("lower", t0s, t1s, ctx, min_s=needed)
        if (longer.t0, longer.t1) != (r.t0, r.t1):
            note = (f"S1 lengthened from {(r.t1 - r.t0) / ctx.fps:.2f} s to {(longer.t1 - longer.t0) / ctx.fps:.2f} s "
                    f"for {counted(len(stepping), 'step')} at the clips' pace")
            r = longer
            releases, stepping, alignment, hold = _adaptation_feet(pair, r)
    s1 = Segment("lower", "pose-to-pose", r.t0, r.t1, sides.pose_to_pose_weights("lower", r.t0, r.t1, ctx),
                 (int(t0s[0]), int(t0s[-1]), int(t1s[0]), int(t1s[-1])), excess=r.excess)
    s2 = _upper_pose_to_pose(sides, ctx, frame_range(c0e, c1b - 1), frame_range(c0e + 1, c1b))
    frames = [pace.seconds(x[3], x[2] is not None) * ctx.fps for x in stepping]
    steps = [_with_way(s, pair, alignment, r, pace) if s.blend != "swing" else s
             for s in _timed_steps(stepping, r, frames)]
    gliding = [s.foot for s in steps if s.blend == "glide"]
    if gliding:
        glide = (f"{' and '.join(gliding)} foot glide{'s' if len(gliding) == 1 else ''} along the floor: S1's "
                 f"{(r.t1 - r.t0) / ctx.fps:.2f} s has no room for {len(stepping)} steps of "
                 f"{sum(frames) / ctx.fps:.2f} s in all at the clips' pace; give the clips more room")
        note = f"{note}; {glide}" if note else glide
    elif sum(frames) > r.t1 - r.t0 + 1e-9:
        quick = (f"steps quicker than the clips' pace: S1's {(r.t1 - r.t0) / ctx.fps:.2f} s for {len(steps)} steps of "
                 f"{sum(frames) / ctx.fps:.2f} s in all; give the clips more room")
        note = f"{note}; {quick}" if note else quick
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


def _adaptation_feet(pair: _Pair, r):
    """How each previous foot gets to the following clip over S1 ``r``:
    ``(releases, stepping, alignment, hold)``.

    releases   ``[(phase, segment)]``: kept, then home during its own first moving phase (eq. 5);
    stepping   ``[(foot, aloft, landing, length)]``: steps home during S1, standing before and
               after, in the order they step; ``aloft``: the clip has it in the air at the end
               of S1; ``landing``: the frame the previous motion lands a foot in the air when S1
               starts (None for a standing foot); ``length``: how far it is from home;
    hold       eq. (8): the following clip never moves a foot.

    A standing foot steps when the clip moves it only inside its core or never
    while moving the other, when the clip has it in the air at the end of S1,
    or when it stands too far from where the aligned clip wants it to be kept
    (keep_reach). (A foot in the air when S1 starts is bent onto its own place
    over S1 by the render: landing it first and stepping the other after it
    was tried and measured worse, the steps coming too quick.) Under eq. (8) nothing would ever take the previous stance
    away: every foot not already where the clip has it steps into the clip's
    stance during S1 (so that the core is the clip's own).
    """
    track, clip, clip_contacts, ctx, sides = pair.track, pair.clip, pair.contacts, pair.ctx, pair.sides
    releases, steps = _feet_home(pair, r)
    alignment = _adaptation_alignment(pair, r)
    hold = not releases and not steps
    # how far each foot stands from the clip's stance: its ankle or its toe (a foot that
    # must turn on the spot moves its toe)
    kept = np.stack([sides.prev_feet.at(_held_since(track, k, r.t0) - track.first)[k] for k in range(2)])
    own = alignment.apply_points(sides.next_feet.at(r.t1 - clip.start))
    apart = quat.length(horizontal(kept - own, ctx.up)).max(axis=-1)
    standing = contacts_at(track, r.t0)
    planned = {("left", "right").index(s.foot) for s in steps}
    # a standing foot nothing takes home (the clip never moves it after S1) steps
    # into the clip's stance unless it already stands there, as under eq. (8)
    unreleased = np.array([not any(x[1].foot == side for x in releases) for side in ("left", "right")])
    far = apart >= np.where(hold | unreleased, ctx.options.step_apart, ctx.options.keep_reach) * ctx.leg
    # (a foot the clip has in the air at the end of S1 steps last, onto its swing)
    aloft = ~clip_contacts[clamped(r.t1 - clip.start, len(clip_contacts))]
    feet = sorted((k for k in range(2) if not standing[k] or k in planned or far[k]),
                  key=lambda k: (bool(standing[k]), aloft[k], -apart[k]))
    lands = {k: _landing(track, k, r) for k in feet if not standing[k]}
    stepping = [(("left", "right")[k], bool(aloft[k]), lands.get(k), float(apart[k])) for k in feet]
    releases = [] if hold else [x for x in releases if x[1].foot not in {s[0] for s in stepping}]
    return releases, stepping, alignment, hold


def _timed_steps(stepping: list, r, frames: list[float]) -> list[Segment]:
    """Step, swing and glide segments over S1 ``r``: when each foot of ``stepping`` leaves and
    lands; ``frames``: how long each takes at the clips' pace.

    2008, 7.2 moves the following motion's feet to their places over the lower-body
    transition; how, the paper leaves open. Here a foot steps no quicker than the
    clips' own steps: its time at their pace (less the rounding to whole frames). A
    step allowed 1 / sqrt(core.quality.FLAG_RATIO) of it, its foot at most 1.5 times as
    accelerated as theirs, still popped the knee that IK bends onto the foot at about
    twice the foot's own figure (3.5 times the gap's reference in a sad walk into a
    punch at 120 fps), and whether such a step fitted was decided in whole frames, so
    that the same pair glided at 30 fps and stepped at 120. Feet step one after the other, never two in the
    air at once (a hop), each in the share of S1 its time at the pace asks for. A foot
    already in the air goes first: it needs at least until the previous motion lands
    it. A foot the clip has in the air at the end of S1 steps last and stays in the
    air from its step on, joining the clip's own swing (a run starting in flight has
    both feet up there).

    Where S1 has no room for all the steps one after the other at that pace, they are
    not crammed into it: feet in the air when S1 starts or ends step (they must), and
    of the others the farthest that still fit after them; any foot left has no room to
    step and does not lift: it glides along the floor from where it stands to its place
    over the whole of S1, while the other one moves (a "glide", which the skate
    measure sees).
    """
    span = r.t1 - r.t0
    need = np.array([max(x[2] - r.t0, f) if x[2] is not None else f for x, f in zip(stepping, frames)])
    # whether they fit is decided in time, not in whole frames (the same at any rate); each
    # then takes at least its whole frames where their sum allows
    exact = need
    quickest = np.ceil(exact - 1e-9)
    chosen = list(range(len(stepping)))
    if exact.sum() > span:
        chosen = [i for i, x in enumerate(stepping) if x[1] or x[2] is not None]  # in the air at either end
        for i in sorted(set(range(len(stepping))) - set(chosen), key=lambda i: -stepping[i][3]):
            if exact[chosen].sum() + exact[i] <= span:
                chosen.append(i)
        chosen.sort()
    bounds = r.t0 + np.concatenate([[0], np.cumsum(_shared(span, need[chosen], quickest[chosen]))]).astype(int)
    segments = []
    for i, start, end in zip(chosen, bounds[:-1], bounds[1:]):
        foot, aloft, landing, _ = stepping[i]
        # (at least a frame, but never past S1's end, which may be the next core's first frame:
        # a step starting there has no room and is over on it)
        end = r.t1 if aloft else min(max(int(end), int(start) + 1), r.t1)
        segments.append(Segment("lower", "swing" if landing is not None else "step", int(start), int(end), foot=foot))
    segments += [Segment("lower", "glide", int(r.t0), int(r.t1), foot=stepping[i][0])
                 for i in range(len(stepping)) if i not in chosen]
    return segments


def _shared(span: int, need: np.ndarray, least: np.ndarray) -> np.ndarray:
    """Whole frames for steps taken one after the other over ``span`` frames, in proportion to
    the time each ``need``s, none under its ``least`` where their sum allows (where it does not,
    in proportion to ``need`` alone: feet that must move in any case)."""
    if not len(need):
        return np.zeros(0, dtype=int)
    exact = span * need / max(need.sum(), 1e-9)
    frames = np.floor(exact).astype(int)
    if least.sum() <= span:
        frames = np.maximum(frames, least.astype(int))
    # (two steps at most: the frames left over, or taken back, one at a time)
    while frames.sum() < span:
        frames[np.argmax(exact - frames)] += 1
    while frames.sum() > span:
        slack = np.where(frames > np.maximum(least, 1), exact - frames, np.inf)
        frames[np.argmin(slack)] -= 1
    return frames


def _with_way(step: Segment, pair: _Pair, alignment: Alignment, r, pace: _Pace) -> Segment:
    """The step (or glide) with its way: from where the contact stage holds the foot when S1
    starts (:func:`_held_since`) to where the aligned clip has it when the step lands (where
    the core has it, when the clip keeps it down from there into its core: the contact stage
    holds it there), and how high it rises: as a step of its length at the clips' pace, lower
    as it is quicker (:meth:`_Pace.lift`); a glide not at all. The contact stage draws it so."""
    track, clip, clip_contacts, sides, ctx, c1b = pair.track, pair.clip, pair.contacts, pair.sides, pair.ctx, pair.c1b
    k = ("left", "right").index(step.foot)
    start = sides.prev_feet.at(_held_since(track, k, r.t0) - track.first)[k]
    # (down from its landing to the end of S1, as the plan has it; after S1, as the clip has it)
    stays = clip_contacts[max(max(step.end, r.t1) + 1 - clip.start, 0) : c1b - clip.start + 1, k]
    lands = c1b if stays.all() and step.end <= r.t1 else step.end
    end = alignment.apply_points(sides.next_feet.at(lands - clip.start))[k]
    # how far it goes: its ankle, or its toe where the foot turns
    length = float(quat.length(horizontal(end - start, ctx.up)).max())
    lift = 0.0 if step.blend == "glide" else pace.lift(length, (step.end - step.start) / ctx.fps, ctx.leg,
                                                        ctx.options.contacts)
    return replace(step, way=(tuple(start[0]), tuple(end[0]), lift))


def _held_since(track: Track, foot: int, frame: int) -> int:
    """The frame from which the contact stage holds ``foot``, standing at ``frame``, where it is:
    where it touched down, or the previous core's last frame for a contact under way there
    (core.contacts). A step leaves from there, not from where the previous motion's own foot
    may have slid to by ``frame`` (a kick's standing foot turns under it)."""
    lo, i = max(track.core_end - track.first, 0), frame - track.first
    up = np.flatnonzero(~track.contacts[lo : i + 1, foot])
    return track.first + (lo + int(up[-1]) + 1 if len(up) else lo)


def _landing(track: Track, foot: int, r) -> int:
    i = r.t0 - track.first
    down = np.flatnonzero(track.contacts[i : r.t1 - track.first + 1, foot])
    return int(r.t0 + down[0]) if len(down) else int(r.t1)


def _adaptation_alignment(pair: _Pair, r) -> Alignment:
    """The following clip placed for adaptation over S1 ``r`` (2008, 4.2): on a foot
    the previous motion stands on when S1 starts, where the following clip last
    plants that foot by the end of S1.

    Matching the foot at the end of S1 itself would put the kept foot where the
    clip has it in the air when its first step is already under way there: the
    foot would slide back along the floor to the clip's own stance and step
    again. Of the feet standing at the start of S1, the one the clip plants
    latest is used (at the end of S1 itself when the clip stands on it there).
    """
    track, clip, clip_contacts = pair.track, pair.clip, pair.contacts
    j1 = clamped(r.t1 - clip.start, len(clip_contacts))
    choice = None  # (clip frame, foot)
    for foot in np.flatnonzero(contacts_at(track, r.t0)):
        planted = np.flatnonzero(clip_contacts[: j1 + 1, foot])
        if len(planted) and (choice is None or planted[-1] > choice[0]):
            choice = (int(planted[-1]), int(foot))
    frame, foot = choice if choice is not None else (j1, base_foot_at(track, r.t0))
    return _align(pair, prev_frame=r.t0, next_frame=frame, foot=foot)


def _feet_home(pair: _Pair, r) -> tuple[list, list]:
    """How each kept foot gets home after S1 ``r``: (releases, steps).

    releases  ``[(phase, segment)]``: the foot goes home during its own first
              moving phase after S1 (eq. 5), pose to motion.
    steps     ``[segment]``: the foot steps home during S1 instead.
    """
    # eq. (5): each kept foot goes home during its own first moving phase after S1
    # (2008 7.2, "the foot position is blended from the constrained position to the
    # original position"), pose to motion; a foot that never moves stays kept (eq. 8)
    # (a phase already under way when S1 ends counts from there: that foot is moving)
    # (a foot has at least min_blend_s of its phase to get home: shorter shuffles are skipped)
    clip, clip_contacts, ctx, sides, c1b = pair.clip, pair.contacts, pair.ctx, pair.sides, pair.c1b
    shortest = ctx.options.min_blend_frames(ctx.fps)
    later = [PhaseSpan(p.phase, max(p.first, r.t1 + 1), p.last)
             for p in pair.next_moving if p.last - max(p.first, r.t1 + 1) + 1 >= shortest]
    fn = sides.feats["lower"][1]  # the following clip up to its core
    # a foot the clip has in the air at the end of S1 has no place of its own to be
    # kept towards until its next phase: it steps onto its swing during S1 instead
    aloft = ~clip_contacts[clamped(r.t1 - clip.start, len(clip_contacts))]
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


@dataclass(frozen=True)
class _Pace:
    """How the clips step: their steps' median time (s) and length (the moving foot's
    travel; 0 where neither clip steps), and the share of a step spent rising and landing."""

    step_s: float
    stride: float
    delay: float
    shortest_s: float

    def seconds(self, length: float, swinging: bool = False) -> float:
        """How long a step of ``length`` takes: as long as the clips' own steps take for theirs, a
        shorter one quicker, as a foot no more accelerated than theirs covers it (time grows with
        the root of the length); a foot already in the air, the clips' own time."""
        share = 1.0 if swinging or self.stride <= 0 else float(np.sqrt(np.clip(length / self.stride, 0.0, 1.0)))
        return max(self.step_s * share, self.shortest_s) / (1.0 - 2.0 * self.delay)

    def lift(self, length: float, seconds: float, leg: float, options: ContactOptions) -> float:
        """How high a step of ``length`` taking ``seconds`` rises: ``step_rise`` of its length (no
        more than the highest ``step_height``) when it takes its time at this pace, lower by the
        square of its share of that time when quicker, so that its foot is no more accelerated
        up and down than at the pace (a rise of h over T seconds peaks at 24 h / T^2, see
        core.contacts). A short or quick step is a low one: no least height (a foot that barely
        moves does not hop up to clear the floor)."""
        at_pace = min(options.step_rise * length, options.step_height[1] * leg)
        return at_pace * min(1.0, seconds / self.seconds(length)) ** 2


def _step_pace(track: Track, clip: Clip, next_moving: list[PhaseSpan], ctx: Context) -> _Pace:
    """The clips' own steps: the single-support phases of the previous motion's last
    step_window_s and of the following clip (step_s and no stride if neither steps)."""
    tail = track.contacts[-int(ctx.options.step_window_s * ctx.fps):]
    start = len(track.contacts) - len(tail)
    single = (Phase.LS, Phase.RS)
    sides = [(track.rotations, track.positions, [p for p in moving_phases(tail, start, 0, len(track.contacts) - 1)
                                                if p.phase in single]),
             (clip.motion.rotations, clip.motion.positions,
              [PhaseSpan(p.phase, p.first - clip.start, p.last - clip.start) for p in next_moving if p.phase in single])]
    times, strides = [], []
    parents = clip.motion.skeleton.parents
    ankles = [ctx.rig.leg("L").ankle, ctx.rig.leg("R").ankle]
    # the moving foot (the one not in stance) from take-off to landing, both sides' in one
    # pass of forward kinematics
    poses, moving = [], []
    for rotations, positions, phases in sides:
        if not phases:
            continue
        times += [p.last - p.first + 1 for p in phases]
        ends = np.clip(np.array([[p.first - 1, p.last + 1] for p in phases]), 0, len(rotations) - 1).ravel()
        poses.append((rotations[ends], positions[ends]))
        moving += [1 - stance_foot(p.phase) for p in phases]
    if poses:
        g = forward_kinematics(np.concatenate([r for r, _ in poses]), np.concatenate([x for _, x in poses]), parents,
                               ankles, rotations_out=False)[0].reshape(len(moving), 2, 2, 3)
        at = np.arange(len(moving))
        travel = g[at, 1, moving] - g[at, 0, moving]
        strides = list(quat.length(horizontal(travel, ctx.up)))
    o = ctx.options
    return _Pace(_median(times) / ctx.fps if times else o.step_s,
                 _median(strides) if strides else 0.0, o.step_delay, o.contacts.min_step_s)


def _step_fits(pair: _Pair, connection: PairPlan, p0: PhaseSpan) -> bool:
    """Whether a connection's step is the previous phase's, scaled by s_max at most.

    The connection bends the previous phase's moving foot onto where the
    connection pose has it. The phase may be time-scaled by s_min..s_max
    (2008, 6.2); a step stretched beyond s_max times its own length (plus a
    tenth of a leg) would be a foot sweeping across the floor: adaptation,
    which steps it home at the pace of the clips' own steps, does better.
    """
    track, clip, sides, ctx = pair.track, pair.clip, pair.sides, pair.ctx
    moved = np.array(moving_feet(p0.phase), dtype=bool)
    takeoff = sides.prev_feet.ankles(p0.first - track.first)
    landing = sides.prev_feet.ankles(p0.last + 1 - track.first)
    t1 = connection.segment("lower").end
    target = connection.alignment.apply_points(sides.next_feet.ankles(t1 - clip.start))
    own = quat.length(horizontal(landing - takeoff, ctx.up))
    bent = quat.length(horizontal(target - takeoff, ctx.up))
    # the moving foot: its step stretched by s_max at most; a standing foot: it stays
    # where it stands (a connection pose on the other foot would slide it there)
    limit = np.where(moved, ctx.options.s_max * own, 0.0) + ctx.options.stand_reach * ctx.leg
    return bool(np.all(bent <= limit))


def _align(pair: _Pair, *, prev_frame: int, next_frame: float, foot: int, heading: bool = False) -> Alignment:
    """The following clip placed on the previous motion (2008, 4.2-4.3); with ``heading``, turned
    by the anchor foot's heading (ankle to toe) instead of the body orientation."""
    track, clip, ctx, sides = pair.track, pair.clip, pair.ctx, pair.sides
    parents = clip.motion.skeleton.parents
    i = clamped(prev_frame - track.first, len(track.rotations))
    j = clamped(round(float(next_frame)), clip.motion.n_frames)
    # the body orientation only looks a few seconds back from the previous frame
    # and ahead from the following one (2008, 4.3), or, where the pelvis stays on the
    # spot over those, as far from each side's own end (align.join_orientation); on the
    # previous side never before its core (a walk before a turn on the spot is not the turn)
    reach = int(ctx.options.orientation_window_s * ctx.fps)
    own = clamped(track.core_start - track.first, len(track.rotations))
    lo = max(i - reach, min(own, i), 0)
    # one pass over both sides' frames, split afterwards
    n_prev = i + 1 - lo
    pelvis, facing, _ = body_track(np.concatenate([track.rotations[lo : i + 1], clip.motion.rotations[j : j + reach]]),
                                   np.concatenate([track.positions[lo : i + 1], clip.motion.positions[j : j + reach]]),
                                   parents, ctx.rig, ctx.up, ankles=False)

    def track_end():
        end = max(len(track.rotations) - reach, own)
        return body_track(track.rotations[end:], track.positions[end:], parents, ctx.rig, ctx.up, ankles=False)[:2]

    def clip_start():
        return body_track(clip.motion.rotations[:reach], clip.motion.positions[:reach], parents, ctx.rig, ctx.up,
                          ankles=False)[:2]

    distance = 0.2 * ctx.leg
    orientations = (join_orientation((pelvis[:n_prev], facing[:n_prev]), track_end, ctx.up, distance=distance, before=True),
                    join_orientation((pelvis[n_prev:], facing[n_prev:]), clip_start, ctx.up, distance=distance,
                                     before=False))
    # the feet only where the clips meet
    feet = sides.prev_feet.at(i), sides.next_feet.at(j)
    headings = None
    if heading and foot in (0, 1) and ctx.rig.leg("LR"[foot]).toe is not None:
        headings = (feet[0][foot, 1] - feet[0][foot, 0], feet[1][foot, 1] - feet[1][foot, 0])
    return align_clip((pelvis[:n_prev], facing[:n_prev], None), i - lo, (pelvis[n_prev:], facing[n_prev:], None), 0,
                      foot, ctx.up, distance=distance, feet=(feet[0][:, 0], feet[1][:, 0]), foot_headings=headings,
                      orientations=orientations)
