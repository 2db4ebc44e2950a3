"""Blending motions played at the same time, synchronized first (Ménardais et al. 2004, MKM).

Three systems share this module's helpers:

synchronized  (:func:`blend_synchronized_clips`) each clip's support-phase
              sequence (core.sync) is synchronized with the others', which
              gives each clip a time warp (its own fractional frame at every
              output frame) and the combined sequence (the ⊕ result); the
              warped clips are blended (:func:`blend_warped`) and the feet the
              combined sequence says are down are held (core.contacts);
naive         (:func:`naive_blend`) what Blender's NLA does when strips on
              stacked tracks overlap in Replace mode, frame by frame, with no
              time warp and no contact stage: the comparison the paper's
              Fig. 17 draws.

Blending (issue item 6; the paper's blending module, [MMKA04]):

* joint rotations by a weighted average of unit quaternions that is
  consistent in sign (:func:`weighted_quaternion_average`);
* the body's path (the pelvis: in many capture files a still ``Root`` joint
  0 carries a ``Hips`` that moves) blended as velocities
  (:func:`blend_root_velocities`): each clip's horizontal pelvis velocity and
  yaw rate, expressed in its own heading frame, are blended with the weights
  and integrated from where the first clip starts, so a side-step plus a
  forward walk travels diagonally (Fig. 15) where blending positions would
  drag the body between two places; the pelvis height and its tilt (its
  rotation without heading) are blended as poses;
* other local translations linearly.

Weights: a clip plays from the output frame it joins (its warp is NaN
before) to where it ends; at each output frame the weights of the clips
present are renormalised over them, and every change of that set is eased
with a smoothstep over ``BLEND_IN_S`` (:func:`presence_weights`), so a clip
that joins fades in and one that ends fades out, the others taking its
weight (the paper's activation ramps, Fig. 2). A clip's weight may be scaled
per body part (:data:`BODY_PARTS`); the legs' weights time the steps (§5.2),
so a clip whose legs weigh nothing (by default one whose feet stand still)
plays at its own pace, out of the synchronization. A clip that weighs
nothing at all is left out.

Conventions: output frames from 0 (the earliest start), end inclusive; clip
frames fractional where warped; a cyclic clip's frame ``F - 1`` is its frame
0 of the next cycle (its end pose matches its start), so a warp past it
repeats the clip, and a non-cyclic clip holds its last frame (§4.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from . import quat
from .analysis import foot_contacts, horizontal, pelvis_facing, yaw_of
from .budget import check_budget
from .contacts import SourceFeet, hold_feet, source_feet
from .motion import Motion, forward_kinematics, resampled_frames, scale_mismatch, skeleton_mismatch
from .options import ContactOptions
from .quality import floors_by_foot, foot_joints, foot_levels
from .render import neighbours, sample
from .rig import Rig, check_legs_hang, detect_up, find_rig, leg_length
from .sync import (Support, are_cyclic, checked_relative, checked_weight, clip_frames, combine, split_double_supports,
                   support_sequence, synchronize)
from .text import counted
from .weights import smoothstep

BLEND_IN_S = 0.25  # seconds over which a change of the clips present (one joining) eases in


# --------------------------------------------------------------------------
# sampling at fractional clip frames


def own_frames(frames: np.ndarray, n_frames: int, *, cyclic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Where fractional clip frames ``frames (T,)`` fall in a clip of ``n_frames``:
    :func:`core.sync.clip_frames`, with NaN (a clip not playing yet) read as frame 0."""
    return clip_frames(np.nan_to_num(np.asarray(frames, dtype=np.float64), nan=0.0), n_frames, cyclic=cyclic)


def sample_motion(motion: Motion, frames: np.ndarray, *, cyclic: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Local poses ``(rotations (T, J, 4), positions (T, J, 3))`` of ``motion`` at fractional
    clip frames ``frames (T,)``: rotations slerped between neighbouring frames, translations
    linear (core.render.sample), past the end repeated (cyclic) or held (:func:`own_frames`).

    The translations of joint 0 come from within the cycle: a cyclic clip's travel over
    whole cycles is the caller's (:func:`root_track` carries it as velocities).
    """
    within, _ = own_frames(frames, motion.n_frames, cyclic=cyclic)
    return sample(motion.rotations, motion.positions, within)


def sample_clips(rotations: Sequence[np.ndarray], positions: Sequence[np.ndarray], frames: Sequence[np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Local poses of K clips at once, ``(rotations (K, T, J', 4), positions (K, T, J, 3))``, clip
    ``k``'s ``rotations[k] (F_k, J', 4)`` and ``positions[k] (F_k, J, 3)`` at its fractional frames
    ``frames[k] (T,)`` within the clip (:func:`own_frames`): :func:`core.render.sample` of each
    (slerp and lerp are frame by frame, so each clip's come out to the bit), gathered from all
    the clips' frames and interpolated in one go rather than clip by clip."""
    starts = np.cumsum([0] + [len(r) for r in rotations])
    i0, i1, a = (np.stack(x) for x in zip(*(neighbours(len(r), f) for r, f in zip(rotations, frames))))
    i0, i1 = i0 + starts[:-1, None], i1 + starts[:-1, None]
    rotations, positions = np.concatenate(rotations), np.concatenate(positions)
    a = a[..., None]
    rot = quat.slerp(rotations[i0], rotations[i1], np.broadcast_to(a, i0.shape + (rotations.shape[1],)))
    pos = positions[i0] + a[..., None] * (positions[i1] - positions[i0])
    return rot, pos


# --------------------------------------------------------------------------
# rotations


def weighted_quaternion_average(quats: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted mean of unit quaternions ``quats (K, ..., 4)`` with ``weights (K, ...)``
    (non-negative, not all zero along K) -> ``(..., 4)``.

    As a running mean: the first ``k`` averaged, the ``k+1``-th is taken in by slerp with
    ``w_{k+1} / (w_1 + ... + w_{k+1})``. Each slerp goes the shorter way to the running
    mean (the ``k+1``-th is flipped into its hemisphere), so ``q`` and ``-q`` give the same
    mean: the average is consistent in sign whatever the sources' signs. For two
    quaternions this is ``slerp(q1, q2, w2 / (w1 + w2))`` exactly; for more, it is the
    weighted mean exactly where they lie on one geodesic, and otherwise close to the
    Karcher mean where they are close together (one joint's rotations across clips of
    one kind are); the order (the clips' order, priority first) decides what is left.
    A quaternion of weight 0 changes nothing: with weights (1, 0) the first comes out
    bit for bit.
    """
    quats = np.asarray(quats, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if quats.shape[:-1] != weights.shape:
        raise ValueError(f"weights must have shape {quats.shape[:-1]} (one per quaternion), got {weights.shape}")
    if np.any(weights < 0):
        raise ValueError("quaternion weights must be non-negative")
    mean = quats[0]
    total = weights[0]
    for q, w in zip(quats[1:], weights[1:]):
        total = total + w
        # (nothing averaged yet: the running mean is this one's, whatever its weight)
        t = np.where(total > 0, w / np.where(total > 0, total, 1.0), 1.0)
        moved = quat.slerp(mean, q, t)
        zero, one = t == 0.0, t == 1.0
        if zero.any() or one.any():
            # there the mean is the running mean, or this one flipped into its hemisphere, exactly
            # (a slerp lands on them only within rounding): written over those few slerps (a clip
            # before it joins, one of weight 0) rather than selected from whole arrays
            shape = moved.shape[:-1]
            zero, one = np.broadcast_to(zero, shape), np.broadcast_to(one, shape)
            before = np.broadcast_to(mean, moved.shape)
            moved[zero] = before[zero]
            joined = np.broadcast_to(q, moved.shape)[one]
            moved[one] = np.where(quat.dot(before[one], joined)[..., None] < 0.0, -joined, joined)
        mean = moved
    return mean


# --------------------------------------------------------------------------
# weights over time


def presence_weights(warps: np.ndarray, weights: np.ndarray, fps: float, *, blend_in_s: float = BLEND_IN_S,
                     ends: Sequence[float] | None = None) -> np.ndarray:
    """Each clip's weight ``(K, T)`` at every output frame, from its warp ``warps (K, T)``
    (NaN where the clip does not play yet) and its weight ``weights (K,)``, or its weights
    over output frames (an animated influence; :func:`weights_over_frames`), renormalised
    at every frame.

    At a frame, the weights of the clips present are renormalised over them (where all
    present weigh 0, they share equally: there is nothing else to show). The set
    present changes where a clip joins and, given ``ends (K,)`` (the output frame where each
    clip stops, core.sync.SyncPlan.ends), where one ends while another plays on after it:
    the paper's activation and deactivation ramps (Fig. 2). A join eases in along a
    smoothstep over ``blend_in_s`` seconds from the frame it joins, where its weight is
    still 0; an end eases out over the ``blend_in_s`` before it, so that its weight is 0
    where it stops (no earlier than half way through the clip, the ramp then shortened to end
    there, to a frame at the least), the others taking its share. Its share goes to the clips that end after it: a clip
    that ends with the last one does not fade; one that ends before any of them joins holds its
    last pose at its weight until the first joins, and eases out as that one eases in (over
    ``blend_in_s``). The weights at a frame are then a convex combination of those of the sets
    before it (a change is at least as far along its ramp as any later one), so they stay
    non-negative and sum to 1.
    """
    warps = np.asarray(warps, dtype=np.float64)
    present = ~np.isnan(warps)
    K, T = present.shape
    weights = weights_over_frames(weights, K, T)
    joined = [int(np.argmax(p)) if p.any() else None for p in present]
    joins = np.unique([j for j in joined if j is not None])
    if not len(joins) or joins[0] != 0:
        raise ValueError("no clip plays at output frame 0; the earliest start must be frame 0")
    length = max(blend_in_s * fps, 1.0)

    def renormalised(mask: np.ndarray) -> np.ndarray:
        # (K, T): the set ``mask (K,)`` renormalised at every frame, sharing equally where it weighs 0
        w = np.where(mask[:, None], weights, 0.0)
        total = w.sum(axis=0)
        shared = np.repeat((mask / mask.sum())[:, None], T, axis=1)
        return np.where(total > 0, w / np.where(total > 0, total, 1.0), shared)

    # (ramp start, 0 join / 1 end, clip, ramp length), in the order the ramps start; joins first at a tie
    changes = [(float(j), 0, k, length) for k, j in enumerate(joined) if j is not None]
    if ends is not None:
        ends = np.asarray(ends, dtype=np.float64)
        for k, j in enumerate(joined):
            # its share goes to the clips that end after it, once one of them has joined
            later = [joined[m] for m in range(K) if joined[m] is not None and ends[m] > ends[k] + 1e-9]
            if j is None or not later:
                continue
            start = max(float(ends[k]) - length, j + 0.5 * (float(ends[k]) - j), float(min(later)))
            # (weight 0 where it stops; a clip stopped before any took its share holds its last pose
            # and eases out as the first of them eases in)
            ramp = length if start >= ends[k] else max(min(length, float(ends[k]) - start), 1.0)
            changes.append((start, 1, k, ramp))
    changes.sort()
    members = np.zeros(K, dtype=bool)
    starts, lengths, sets = [], [], []
    for start, ending, k, ramp in changes:
        members = members.copy()
        members[k] = not ending
        if starts and starts[-1] == start:
            sets[-1] = members  # (changes at one frame make one change, along the shortest ramp)
            lengths[-1] = min(lengths[-1], ramp)
        else:
            starts.append(start)
            lengths.append(ramp)
            sets.append(members)
    sets = [renormalised(m) for m in sets]
    out = sets[0].copy()
    frames = np.arange(T)
    if len(sets) > 1:
        eased = np.stack([smoothstep((frames - a) / n) for a, n in zip(starts[1:], lengths[1:])])
        # (a shortened ramp finishes no later than the ones started before it: each change at least
        # as far along as any later one keeps the weights a convex combination of the sets)
        eased = np.maximum.accumulate(eased[::-1], axis=0)[::-1]
        for ease, before, after in zip(eased, sets, sets[1:]):
            out += ease[None] * (after - before)
    return np.clip(out, 0.0, None)


def weights_over_frames(weights, K: int, T: int) -> np.ndarray:
    """``(K, T)`` weights of ``K`` clips at ``T`` output frames from ``weights``: one number per clip
    (the same at every frame), ``(K, T')`` or per clip a number or ``(T',)`` over output frames (an
    animated influence), cut at ``T`` or its last value held past ``T'`` (as core.sync.weight_at)."""
    if isinstance(weights, np.ndarray) and weights.ndim == 2:
        weights = list(weights.astype(np.float64))
    if len(weights) != K:
        raise ValueError(f"give one weight per clip ({K}), got {len(weights)}")
    rows = []
    for w in weights:
        w = np.asarray(w, dtype=np.float64)
        if w.ndim == 0:
            rows.append(np.full(T, float(w)))
        elif w.ndim == 1 and len(w):
            rows.append(w[np.minimum(np.arange(T), len(w) - 1)])
        else:
            raise ValueError(f"a clip's weight is a number or one per output frame (T,), got shape {w.shape}")
    return np.stack(rows)


# --------------------------------------------------------------------------
# body parts: per-part weights (the paper's blending per body part, [MMKA04])

#: The parts a clip's weight may be scaled on: the legs (the pelvis, the joints above it and
#: both legs: the body's path, its support phases, the legs' timing of ⊕ and eq. 6), the upper
#: body without the arms (spine, neck, head) and the arms (from the collar, or the shoulder).
BODY_PARTS = ("legs", "upper", "arms")

#: A clip whose feet stay this close to where they start (in leg lengths, ankles and toes, in
#: every direction) stands still: its legs weigh nothing in the timing by default. A step moves
#: a foot most of a leg's length; a gesture done standing moves its feet a few hundredths.
STILL_FEET_LEGS = 0.2


def body_part_masks(skeleton, rig: Rig) -> np.ndarray:
    """``(3, J)`` bool: the joints of each of :data:`BODY_PARTS` (they partition the joints). The
    parts come from the rig's roles (core.rig), never from joint names."""
    legs = rig.lower_body_mask(skeleton)
    arms = np.zeros(len(skeleton), dtype=bool)
    for side in ("L", "R"):
        arm = rig.arm(side)
        if arm is not None:
            arms |= rig.subtree_mask(skeleton, arm.joints[0])
    arms &= ~legs
    return np.stack([legs, ~legs & ~arms, arms])


def feet_stand_still(positions: np.ndarray, rig: Rig, leg: float, *, within_legs: float = STILL_FEET_LEGS) -> bool:
    """Whether a clip's feet stay where they start: every ankle and toe of the global joint
    positions ``positions (F, J, 3)`` within ``within_legs`` leg lengths (``leg``) of its first
    frame's place, over the whole clip. Measured on the floor's frame of the capture, so it
    needs no up axis: a foot that steps, or lifts, moves further."""
    feet = [j for side in ("L", "R") for j in (rig.leg(side).ankle, rig.leg(side).toe) if j is not None]
    travel = quat.length(positions[:, feet] - positions[:1, feet])
    return bool(np.max(travel) <= within_legs * leg)


def checked_part_weights(part_weights, names: Sequence[str]) -> np.ndarray:
    """Per clip its factor on each of :data:`BODY_PARTS`, ``(K, 3)``, NaN where none is given, from
    ``part_weights``: ``None``, or per clip ``None`` or ``{part: factor}`` (a factor scales the
    clip's weight on that part: 0 takes it out of the part, 2 doubles its share there), or
    ``{clip name: {part: factor}}``. ``ValueError`` saying what to fix."""
    K = len(names)
    out = np.full((K, len(BODY_PARTS)), np.nan)
    if part_weights is None:
        return out
    if isinstance(part_weights, dict):
        unknown = [n for n in part_weights if n not in names]
        if unknown:
            raise ValueError(f"part weights name {unknown}, which are not clips given; the clips are {list(names)}")
        part_weights = [part_weights.get(n) for n in names]
    if len(part_weights) != K:
        raise ValueError(f"part weights: give one entry (or None) per clip ({K}), got {len(part_weights)}")
    for k, given in enumerate(part_weights):
        for part, factor in (given or {}).items():
            if part not in BODY_PARTS:
                raise ValueError(f"clip '{names[k]}': {part!r} is no body part; the parts are {', '.join(BODY_PARTS)}")
            factor = float(factor)
            if not (np.isfinite(factor) and factor >= 0):
                raise ValueError(f"clip '{names[k]}': the weight of its {part} must be a number >= 0, got {factor}")
            checked_relative("weights", [factor])
            out[k, BODY_PARTS.index(part)] = factor
    return out


def part_weights_text(factors: np.ndarray) -> str:
    """``"legs 0, arms 2"``: the factors ``(3,)`` of a clip that are not 1."""
    return ", ".join(f"{part} {f:g}" for part, f in zip(BODY_PARTS, factors) if f != 1.0)


# --------------------------------------------------------------------------
# the body's path as velocities


@dataclass(frozen=True)
class RootTrack:
    """A clip's pelvis path as what the velocity blend reads, over its own frames ``F``.

    yaw        (F,) heading about ``up``, radians, unwrapped: the pelvis world rotation's
               twist about ``up``.
    travel     (F, 3) horizontal displacement summed from frame 0, each frame's step
               expressed in the heading frame half way through it (so the steps, not
               the sums, mean something: a step's length and direction relative to where
               the body faces).
    height     (F,) the pelvis's height along ``up``.
    tilt       (F, 4) the pelvis world rotation without its heading: ``yaw^-1 * R``.
    start      (3,) the pelvis world position at frame 0.
    """

    yaw: np.ndarray
    travel: np.ndarray
    height: np.ndarray
    tilt: np.ndarray
    start: np.ndarray


def heading_rotations(yaw: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Turns ``(..., 4)`` by ``yaw (...)`` radians about ``up``."""
    return quat.from_axis_angle(np.broadcast_to(up, np.shape(yaw) + (3,)), yaw)


def body_yaw(motion: Motion, rig: Rig, up: np.ndarray, *, analysed: tuple[np.ndarray, np.ndarray] | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pelvis world positions (F, 3), rotations (F, 4), heading (F,))`` of ``motion``. The heading is where the hips face (core.analysis.pelvis_facing),
    not the twist of the pelvis's rotation about up: that twist depends on how the rig's pelvis
    is oriented at rest, so two rigs of one capture (Y up or Z up, say) would split its rotation
    into heading and tilt differently and blend differently. ``analysed``: the motion's global
    joint positions ``(F, J, 3)`` (the pelvis and hips among them) and pelvis world rotations
    ``(F, 4)`` when at hand (:func:`analysed_joints`)."""
    legs = rig.leg("L"), rig.leg("R")
    if analysed is None:
        gpos, grot = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents,
                                        [rig.pelvis, legs[0].hip, legs[1].hip])
        pos, rot, hips = gpos[:, 0], grot[:, 0], gpos[:, 1:]
    else:
        positions, rot = analysed
        pos, hips = positions[:, rig.pelvis], positions[:, [legs[0].hip, legs[1].hip]]
    return pos, rot, yaw_of(pelvis_facing(hips[:, 0], hips[:, 1], up), up)


def root_track(motion: Motion, rig: Rig, up: np.ndarray, *,
               body: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> RootTrack:
    """The :class:`RootTrack` of ``motion``'s pelvis (``rig.pelvis``), its heading the hips' (:func:`body_yaw`);
    ``body``: :func:`body_yaw` of the motion when at hand."""
    pos, rot, yaw = body_yaw(motion, rig, up) if body is None else body
    yaw = np.unwrap(yaw)
    tilt = quat.mul(heading_rotations(-yaw, up), rot)
    mid = 0.5 * (yaw[1:] + yaw[:-1])
    steps = quat.mul_vec(heading_rotations(-mid, up), horizontal(np.diff(pos, axis=0), up))
    travel = np.concatenate([np.zeros((1, 3)), np.cumsum(steps, axis=0)])
    return RootTrack(yaw, travel, pos @ up, tilt, pos[0])


def path_at(track: RootTrack, within: np.ndarray, cycles: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(travel (T, 3), yaw (T,), height (T,))`` of a track at clip frames ``within (T,)`` after
    ``cycles (T,)`` whole cycles (:func:`own_frames`): past the end a cyclic clip goes on travelling
    and turning a whole cycle's worth per cycle, another holds still. (Its tilt is sampled with
    the joints, :func:`sample_clips`.)"""
    x = np.arange(len(track.yaw), dtype=np.float64)
    travel = np.stack([np.interp(within, x, track.travel[:, c]) for c in range(3)], axis=-1)
    travel += cycles[:, None] * track.travel[-1]
    yaw = np.interp(within, x, track.yaw) + cycles * (track.yaw[-1] - track.yaw[0])
    height = np.interp(within, x, track.height)
    return travel, yaw, height


def blend_root_velocities(travel: np.ndarray, yaw: np.ndarray, weights: np.ndarray, start: np.ndarray,
                          start_yaw: float, up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The blended horizontal path ``(T, 3)`` and heading ``(T,)``.

    travel   (K, T, 3) each clip's :attr:`RootTrack.travel` at its warp (NaN: not playing);
    yaw      (K, T) each clip's heading at its warp;
    weights  (K, T) each clip's weight (:func:`presence_weights`);
    start, start_yaw  the horizontal position and heading the path starts from.

    Each clip's step between output frames ``t`` and ``t + 1`` is its own, in its own
    heading frame, and its yaw rate likewise; both are blended with the mean of the
    weights at ``t`` and ``t + 1`` (a clip that joins weighs 0 at its first frame, so it
    adds no step from before it played), then integrated: the heading turns by the
    blended yaw rate, and the step is laid out along the heading half way through it.
    With one clip of weight 1 this gives back its own path.
    """
    step_weights = 0.5 * (weights[:, 1:] + weights[:, :-1])
    steps = np.nan_to_num(np.diff(travel, axis=1))
    turns = np.nan_to_num(np.diff(yaw, axis=1))
    local = np.einsum("kt,ktc->tc", step_weights, steps)
    turn = np.einsum("kt,kt->t", step_weights, turns)
    heading = start_yaw + np.concatenate([[0.0], np.cumsum(turn)])
    mid = 0.5 * (heading[1:] + heading[:-1])
    world = quat.mul_vec(heading_rotations(mid, up), local)
    path = horizontal(np.asarray(start, dtype=np.float64), up) + np.concatenate([np.zeros((1, 3)), np.cumsum(world, axis=0)])
    return path, heading


# --------------------------------------------------------------------------
# the synchronized blend


def blend_warped(motions: Sequence[Motion], warps: np.ndarray, weights: Sequence[float], *, cyclic: Sequence[bool],
                 rig: Rig, up: np.ndarray, blend_in_s: float = BLEND_IN_S) -> tuple[Motion, np.ndarray]:
    """The clips ``motions`` played along their warps ``warps (K, T)`` (each clip's own
    fractional frame at every output frame, NaN before it joins) and blended with
    ``weights (K,)`` (issue item 6), on the first clip's skeleton; and the weights used
    at every frame ``(K, T)`` (:func:`presence_weights`).

    Joint rotations: :func:`weighted_quaternion_average`; translations linearly; the
    pelvis: its path and heading by :func:`blend_root_velocities` from where the first
    clip playing at output frame 0 has it, its height and tilt blended as poses, then
    set under its (blended) parent.
    """
    blend = _blend_warped(motions, warps, weights, cyclic=cyclic, rig=rig, up=up, blend_in_s=blend_in_s)
    return blend.motion, blend.weights


@dataclass(frozen=True)
class _WarpedBlend:
    """:func:`blend_warped`'s output and what the contact stage reads again (K clips, T frames)."""

    motion: Motion
    weights: np.ndarray  # (K, T) :func:`presence_weights`
    poses: tuple  # every clip's local poses along its warp, (K, T, J, 4) and (K, T, J, 3) (:func:`sample_clips`)
    yaw: np.ndarray  # (K, T) each clip's pelvis heading along its warp (NaN before it joins)
    heading: np.ndarray  # (T,) the blend's pelvis heading


def _blend_warped(motions: Sequence[Motion], warps: np.ndarray, weights: Sequence[float], *, cyclic: Sequence[bool],
                  rig: Rig, up: np.ndarray, blend_in_s: float = BLEND_IN_S,
                  bodies: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
                  ends: Sequence[float] | None = None, part_factors: np.ndarray | None = None) -> _WarpedBlend:
    """:func:`blend_warped`; ``bodies``: per clip its :func:`body_yaw` when at hand; ``ends``: where
    each clip stops, to fade it out (:func:`presence_weights`); ``part_factors (K, 3)``: each clip's
    weight scaled on each of :data:`BODY_PARTS` (the legs' weights also carry the body's path and
    its tilt, and are the weights returned, which the contact stage reads)."""
    warps = np.asarray(warps, dtype=np.float64)
    if warps.ndim != 2 or len(warps) != len(motions) or len(cyclic) != len(motions) or len(weights) != len(motions):
        raise ValueError(f"give one warp (a row of output frames), weight and cyclic flag per clip ({len(motions)}); "
                         f"got warps {warps.shape}, {len(weights)} weights, {len(cyclic)} flags")
    first = motions[0]
    J = len(first.skeleton)
    if part_factors is None or np.all(part_factors == 1.0):
        n = presence_weights(warps, weights, first.fps, blend_in_s=blend_in_s, ends=ends)
        joint_weights = np.repeat(n[:, :, None], J + 1, axis=2)
    else:
        # each part renormalised over the clips present on its own: a clip out of the legs leaves
        # them to the others whole, and still takes its share of the arms
        over = weights_over_frames(weights, len(motions), warps.shape[1])
        parts = [presence_weights(warps, over * f[:, None], first.fps, blend_in_s=blend_in_s, ends=ends)
                 for f in np.asarray(part_factors, dtype=np.float64).T]
        masks = body_part_masks(first.skeleton, rig)
        n = parts[0]
        joint_weights = np.empty(n.shape + (J + 1,))
        for w, mask in zip(parts, masks):
            joint_weights[:, :, :J][:, :, mask] = w[:, :, None]
        joint_weights[:, :, J] = n  # (the pelvis's tilt goes with the legs)
    placed = [own_frames(w, m.n_frames, cyclic=c) for m, w, c in zip(motions, warps, cyclic)]
    roots = [root_track(m, rig, up, body=None if bodies is None else bodies[k]) for k, m in enumerate(motions)]
    # the pelvis's tilt rides along as one more joint: sampled at the same frames and averaged
    # with the same weights as the joints, in the same slerps
    rot, pos = sample_clips([np.concatenate([m.rotations, r.tilt[:, None]], axis=1) for m, r in zip(motions, roots)],
                            [m.positions for m in motions], [within for within, _ in placed])
    averaged = weighted_quaternion_average(rot, joint_weights)
    rotations, tilt = averaged[:, :J], averaged[:, J]
    rot = rot[:, :, :J]
    positions = np.einsum("ktj,ktjc->tjc", joint_weights[:, :, :J], pos)
    tracks = [path_at(r, within, cycles) for r, (within, cycles) in zip(roots, placed)]
    present = ~np.isnan(warps)
    travel = np.where(present[:, :, None], np.stack([t[0] for t in tracks]), np.nan)
    yaw = np.where(present, np.stack([t[1] for t in tracks]), np.nan)
    # the first clip playing at output frame 0 that weighs something on the legs there
    lead = int(np.argmax(present[:, 0] & (n[:, 0] > 0))) if np.any(present[:, 0] & (n[:, 0] > 0)) else \
        int(np.argmax(present[:, 0]))
    lead_pos = forward_kinematics(rot[lead, :1], pos[lead, :1], first.skeleton.parents, [rig.pelvis],
                                  rotations_out=False)[0][0, 0]
    path, heading = blend_root_velocities(travel, yaw, n, lead_pos, float(yaw[lead, 0]), up)
    height = np.einsum("kt,kt->t", n, np.stack([t[2] for t in tracks]))
    pelvis_rot = quat.mul(heading_rotations(heading, up), tilt)
    pelvis_pos = path + height[:, None] * up
    rotations, positions = placed_pelvis(rotations, positions, first.skeleton.parents, rig.pelvis, pelvis_rot, pelvis_pos)
    # (slerps, and products of unit quaternions: no need to check them again)
    return _WarpedBlend(Motion.unchecked(first.skeleton, rotations, positions, first.fps), n, (rot, pos), yaw, heading)


def placed_pelvis(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray, pelvis: int,
                  world_rotation: np.ndarray, world_position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Local poses ``(T, J, 4), (T, J, 3)`` with the pelvis's local transform set so that
    its world transform is ``world_rotation (T, 4)``, ``world_position (T, 3)`` under its
    parent as the poses have it (the pelvis may hang below a ``Root`` joint 0)."""
    rotations, positions = rotations.copy(), positions.copy()
    parent = parents[pelvis]
    if parent < 0:
        rotations[:, pelvis], positions[:, pelvis] = world_rotation, world_position
        return rotations, positions
    gpos, grot = forward_kinematics(rotations, positions, parents, [parent])
    rotations[:, pelvis] = quat.inv_mul(grot[:, 0], world_rotation)
    positions[:, pelvis] = quat.inv_mul_vec(grot[:, 0], world_position - gpos[:, 0])
    return rotations, positions


def support_contacts(codes: np.ndarray) -> np.ndarray:
    """``(T, 2)`` bool (left, right) feet down from combined support codes ``(T,)`` (core.sync.Support:
    DS both, LS the left, RS the right; none in flight, none on an error, which a plan that
    synchronized has not)."""
    codes = np.asarray(codes)
    # codes 0-3 are core.analysis.Phase's: DS 0, LS 1, RS 2, NONE 3 (and ERR 4)
    left = (codes == 0) | (codes == 1)
    right = (codes == 0) | (codes == 2)
    return np.stack([left, right], axis=-1)


def weighted_support(plan, weights: np.ndarray) -> np.ndarray:
    """The combined support ``(T,)`` at every output frame of a SyncPlan: the ⊕ (Fig. 4, eq. 2)
    of the elements of the clips that weigh something there, ``weights (K, T)``
    (:func:`presence_weights`).

    Where every clip weighs something this is ``plan.support_at()``. A clip of weight 0
    is synchronized as any other (its weight may grow, as an animated influence does) but
    puts nothing into the pose, so it takes no foot off the floor: with weights 1 and 0 the
    feet held are the first clip's own, not those its partner's flights (∅ absorbs
    everything) or supports would leave.
    """
    steps = len(plan.combined)
    step = np.clip(np.searchsorted(plan.boundaries, np.arange(plan.n_frames), side="right") - 1, 0, steps - 1)
    out = np.full(plan.n_frames, int(Support.DS), dtype=np.int8)  # DS is the neutral element
    for sequence, elements, w in zip(plan.sequences, plan.elements, weights):
        element = np.asarray(elements)[step]
        # each element's code, and DS last: read at element -1, before the clip joins
        codes = np.array([sequence.element(e)[0] for e in range(int(element.max()) + 1)] + [int(Support.DS)],
                         dtype=np.int8)
        out = np.where((w > 0) & (element >= 0), combine(out, codes[element]), out)
    return out


def clip_floors(source_joints: Sequence[np.ndarray], sources: Sequence[Motion], rig: Rig, up: np.ndarray) -> np.ndarray:
    """Each source's floors ``(K, 2, 2)`` of (ankle, toe) for (left, right) (core.quality.floors_by_foot),
    from its global joint positions ``source_joints (F, J, 3)``."""
    return np.array([floors_by_foot(foot_levels(g[:, foot_joints(rig)] @ up, m.fps).floor, rig)
                     for g, m in zip(source_joints, sources)])


def held_feet(motion: Motion, contacts: np.ndarray, sources: Sequence[Motion], rig: Rig, up: np.ndarray, *,
              source_joints: Sequence[np.ndarray] | None = None, floors: np.ndarray | None = None,
              own: SourceFeet | None = None, options: ContactOptions = ContactOptions()) -> Motion:
    """The contact stage (core.contacts.hold_feet) over the whole blend: the feet ``contacts (T, 2)``
    says are down are held where they stand, on the lowest of the sources' floors (as synthesize
    takes a gap's); the first and last frames stay as blended. ``source_joints``: the sources'
    global joint positions ``(F, J, 3)``, or their floors ``(K, 2, 2)`` (:func:`clip_floors`), when
    at hand.

    With ``own``, what the sources' own feet do along their warps (:func:`warped_source_feet`),
    the stage corrects only what the blend broke: a foot down that the blend keeps where the
    sources' own feet would take it is left as blended, and a swing is lifted only where the
    blend has it lower than their own swings go. So a blend equal to one source (weights 1
    and 0) is that source, legs included, while two feet planted in different places,
    blended, are held."""
    if motion.n_frames < 3:
        return motion
    if floors is None:
        if source_joints is None:
            source_joints = [forward_kinematics(m.rotations, m.positions, m.skeleton.parents, rotations_out=False)[0]
                             for m in sources]
        floors = clip_floors(source_joints, sources, rig, up)
    leg = 0.5 * (leg_length(motion.skeleton, rig, "L") + leg_length(motion.skeleton, rig, "R"))
    return hold_feet(motion, 0, contacts, [(0, motion.n_frames - 1)], rig, up=up, leg=leg,
                     floors=np.min(floors, axis=0), sources=own, options=options)


def warped_source_feet(motions: Sequence[Motion], poses: tuple[np.ndarray, np.ndarray], warps: np.ndarray,
                       weights: np.ndarray, cyclic: Sequence[bool], yaw: np.ndarray, heading: np.ndarray, rig: Rig,
                       up: np.ndarray, floors: np.ndarray, *, options: ContactOptions = ContactOptions(),
                       bodies: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None) -> SourceFeet:
    """What the clips' own feet do along their warps ``warps (K, T)``, weighted by ``weights (K, T)``
    (core.contacts.SourceFeet), each on its own floors ``floors (K, 2, 2)`` (:func:`clip_floors`),
    their steps turned from each clip's pelvis heading ``yaw (K, T)`` to the blend's
    ``heading (T,)`` (:func:`path_at`, :func:`blend_root_velocities`).

    ``poses``: the clips' local poses along their warps, ``(K, T, J, 4)`` and ``(K, T, J, 3)``
    (:func:`sample_clips`), as blended. A cyclic clip's feet past its end are carried on by
    their own travel over a cycle (frame ``F - 1`` less frame 0, across the floor), and their
    headings by its turn, so that a new cycle is no step. ``bodies``: per clip its
    :func:`body_yaw` when at hand."""
    legs = [rig.leg("L"), rig.leg("R")]
    has_toes = all(leg.toe is not None for leg in legs)
    wanted = [leg.ankle for leg in legs] + ([leg.toe for leg in legs] if has_toes else [])
    parents = motions[0].skeleton.parents
    # (every clip's frames in one pass: forward kinematics works frame by frame)
    gpos_all, grot_all = forward_kinematics(*poses, parents, wanted)
    ankles, rotations, toes = [], [], []
    for k, (m, gpos, grot, w, c) in enumerate(zip(motions, gpos_all, grot_all, np.asarray(warps, dtype=np.float64),
                                                  cyclic)):
        _, cycles = own_frames(w, m.n_frames, cyclic=c)
        if c and cycles.any():
            ends_pos, _ = forward_kinematics(m.rotations[[0, -1]], m.positions[[0, -1]], parents, wanted)
            gpos = gpos + cycles[:, None, None] * horizontal(ends_pos[1] - ends_pos[0], up)
            # (the turn over a cycle, as the clip's track has it)
            own_yaw = np.unwrap((body_yaw(m, rig, up) if bodies is None else bodies[k])[2])
            # (the heading carried on; the feet's own swing within the cycle is left as sampled)
            grot = quat.mul(heading_rotations(cycles[:, None] * (own_yaw[-1] - own_yaw[0]), up), grot)
        ankles.append(gpos[:, :2])
        rotations.append(grot[:, :2])
        toes.append(gpos[:, 2:] if has_toes else None)
    leg = 0.5 * (leg_length(motions[0].skeleton, rig, "L") + leg_length(motions[0].skeleton, rig, "R"))
    # (before a clip joins its heading is NaN and its weight 0)
    return source_feet(np.stack(ankles), np.stack(rotations), np.stack(toes) if has_toes else None, weights, floors,
                       np.nan_to_num(yaw), heading, up=up, leg=leg, options=options)


# --------------------------------------------------------------------------
# the naive blend: Blender's NLA, Replace mode


def nla_influences(weights: Sequence[float]) -> np.ndarray:
    """Influences ``(K,)`` of strips on stacked tracks, the first at the bottom, that the NLA's
    Replace mode turns into final contributions equal to the normalised ``weights``.

    Replace mode evaluates from the bottom up, ``r_k = r_{k-1} (1 - u_k) + v_k u_k``, so
    the k-th value's final contribution is ``u_k * prod_{j > k} (1 - u_j)``. With
    ``u_1 = 1`` (what lies under the bottom strip contributes nothing) and
    ``u_k = w_k / S_k``, ``S_k = w_1 + ... + w_k``, the product telescopes:
    ``1 - u_j = S_{j-1} / S_j``, so the contribution is ``(w_k / S_k) (S_k / S_K) =
    w_k / S_K``. Where ``S_k = 0`` (all weights up to k are 0) the influence is 1: the
    first later strip of weight > 0 has influence 1 and takes their place.
    """
    w = np.asarray(weights, dtype=np.float64)
    S = np.cumsum(w)
    u = np.where(S > 0, w / np.where(S > 0, S, 1.0), 1.0)
    u[0] = 1.0
    return u


def replace_contributions(influences: np.ndarray) -> np.ndarray:
    """What each of stacked strips contributes in the NLA's Replace mode, ``(K, ...)``, from their
    influences ``influences (K, ...)`` in [0, 1], the *upper* track first (as the NLA evaluates).

    An upper strip of influence ``u`` takes ``u`` and leaves ``1 - u`` to what lies beneath it:
    ``c_1 = u_1``, ``c_k = u_k * (1 - u_1) ... (1 - u_{k-1})``. What the lowest strip leaves goes
    to the rest pose, which a blend of the strips leaves out (it renormalises). The inverse of
    :func:`nla_influences`, which lists the strips from the bottom.
    """
    u = np.clip(np.asarray(influences, dtype=np.float64), 0.0, 1.0)
    if u.ndim == 0 or len(u) == 0:
        raise ValueError(f"give one influence per strip, got shape {u.shape}")
    above = np.cumprod(np.concatenate([np.ones_like(u[:1]), 1.0 - u[:-1]]), axis=0)
    return u * above


def naive_blend(motions: Sequence[Motion], weights: Sequence[float], starts: Sequence[int]) -> Motion:
    """What Blender's NLA shows, frame by frame, for clips ``motions`` on stacked tracks
    (the first at the bottom) in Replace mode with :func:`nla_influences` of ``weights``,
    clip ``k``'s strip starting at output frame ``starts[k]`` (output frame 0 is the
    earliest start; the output ends when the last clip ends).

    No time warp and no contact stage. Each strip is its track's only one and so has
    the NLA's default extrapolation, Hold: before it starts it shows its first frame, and
    after it ends its last. Every channel is blended as the NLA does,
    ``r * (1 - u) + v * u`` from the bottom up: local translations (joint 0's world
    position, the pose bones' locations: the map between the two is affine and the
    contributions sum to 1, so it commutes) and the quaternions component by component,
    each clip's keyed as the add-on keys them (signs continuous over time,
    addon.convert.bone_channels), normalised as Blender does when it poses a bone
    (a conjugation by the bone's rest, which maps core rotations to pose-bone ones, is
    linear and keeps lengths, so this too commutes).
    """
    starts = np.asarray(starts, dtype=np.int64)
    first = motions[0]
    origin = int(starts.min())
    T = int(max(s + m.n_frames for s, m in zip(starts, motions))) - origin
    t = np.arange(T)
    u = nla_influences(weights)
    rot = pos = None
    for m, s, influence in zip(motions, starts, u):
        frames = np.clip(t + origin - s, 0, m.n_frames - 1)
        v_rot = quat.unroll(m.rotations, axis=0)[frames]
        v_pos = m.positions[frames]
        if rot is None:
            # (the bottom strip at influence 1 replaces what lies beneath entirely)
            rot, pos = v_rot * influence, v_pos * influence
        else:
            rot = rot * (1.0 - influence) + v_rot * influence
            pos = pos * (1.0 - influence) + v_pos * influence
    norm = quat.length(rot, keepdims=True)
    # a quaternion blended to zero (two opposite keys half and half) poses as the rest
    rot = np.where(norm > 1e-12, rot / np.maximum(norm, 1e-12), quat.identity(rot.shape[:-1]))
    return Motion(first.skeleton, rot, pos, first.fps)


# --------------------------------------------------------------------------
# clips to a blend: the one entry point the command line calls


@dataclass(frozen=True, eq=False)
class BlendResult:
    """A blend of clips played at the same time and what decided it.

    motion      the output, on the first clip's skeleton, from output frame 0 (the earliest start);
    names       the clips' names, in the order given;
    weights, priorities, starts, cyclic  as used, per clip (weights as given, not normalised: a
                number, or an array over output frames);
    plan        the core.sync SyncPlan (None for the naive blend);
    influences  per clip, the NLA influence of the naive blend (None for the synchronized one);
    warnings    about the clips (bones of other lengths than the first clip's, a blend far longer
                than its clips).
    part_weights  per clip its factors on :data:`BODY_PARTS` (1 where none was given), as used;
    notes       what was decided for the user (a clip standing still out of the legs' timing, a
                clip weighing nothing left out).
    origin      the start (as ``starts`` has it) of the motion's frame 0: the earliest start of the
                clips that weigh something (later than 0 where the earliest clip was left out).
    """

    motion: Motion
    names: tuple[str, ...]
    weights: tuple[float, ...]
    priorities: tuple[float, ...]
    starts: tuple[int, ...]
    cyclic: tuple[bool, ...]
    plan: object | None = None
    influences: tuple[float, ...] | None = None
    warnings: tuple[str, ...] = field(default=())
    part_weights: tuple = ()
    notes: tuple[str, ...] = field(default=())
    origin: int = 0

    def delayed(self) -> list[dict]:
        """The clips the synchronization delayed: ``[{"clip", "frames", "joins"}]`` (output frames)."""
        if self.plan is None:
            return []
        return [{"clip": name, "frames": int(d), "joins": int(s + d)}
                for name, s, d in zip(self.names, self.starts, self.plan.delays) if d]

    def entered(self) -> list[dict]:
        """The clips that start playing past their first frame, in step with the others (core.sync's
        join rule): ``[{"clip", "frame"}]`` (the clip's frame)."""
        if self.plan is None:
            return []
        return [{"clip": name, "frame": f} for name, f in zip(self.names, self.plan.entry_frames()) if f]

    def to_dict(self) -> dict:
        out = {
            "mode": "naive" if self.plan is None else "synchronized",
            "clips": list(self.names),
            "weights": [float(w) if np.ndim(w) == 0 else [round(float(x), 4) for x in w] for w in self.weights],
            "priorities": list(self.priorities),
            "starts": list(self.starts),
            "cyclic": list(self.cyclic),
            "n_frames": self.motion.n_frames,
            "fps": self.motion.fps,
            "warnings": list(self.warnings),
        }
        if any(f != 1.0 for factors in self.part_weights for f in factors):
            out["part_weights"] = {name: dict(zip(BODY_PARTS, map(float, factors)))
                                   for name, factors in zip(self.names, self.part_weights)}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.plan is not None:
            out["delayed"] = self.delayed()
            out["entered"] = self.entered()
            out["sync"] = self.plan.to_dict()
        if self.influences is not None:
            out["influences"] = list(self.influences)
        return out

    def summary(self) -> str:
        lines = [f"{'naive' if self.plan is None else 'synchronized'} blend of {len(self.names)} clips, "
                 f"{self.motion.n_frames} frames at {self.motion.fps:g} fps"]
        for k, name in enumerate(self.names):
            extra = f", influence {self.influences[k]:.3f}" if self.influences is not None else ""
            if self.part_weights and part_weights_text(self.part_weights[k]):
                extra += f", times {part_weights_text(self.part_weights[k])}"
            lines.append(f"  '{name}': weight {weight_text(self.weights[k])}, priority {self.priorities[k]:g}, starts at "
                         f"{self.starts[k]}{', cyclic' if self.cyclic[k] else ''}{extra}")
        lines += [f"  delayed: '{d['clip']}' by {d['frames']} frames (joins at {d['joins']})" for d in self.delayed()]
        lines += [f"  '{e['clip']}' starts at its frame {e['frame']}, in step with the others" for e in self.entered()]
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


# What a synchronized blend holds at its peak per output frame, clip and joint: each clip time
# warped, sampled and blended, the contact stage (measured with tracemalloc: 255 bytes, blending
# clips of 20,000 frames), with room for time warps that lengthen the output (by a third there).
BLEND_BYTES_PER_FRAME_CLIP_JOINT = 400


def blend_bytes(frames: int, joints: int, clips: int) -> int:
    """Bytes a blend of ``clips`` over ``frames`` output frames (the earliest start to the last
    clip's end) on ``joints`` joints holds at its peak."""
    return BLEND_BYTES_PER_FRAME_CLIP_JOINT * int(frames) * int(joints) * int(clips)


def check_blend_size(frames: Sequence[int], starts: Sequence[int], joints: int, *,
                     remedy: str = "start the clips closer together") -> None:
    """Refuse (core.budget) a blend of clips of ``frames`` (at the first clip's rate) joining at
    ``starts`` on ``joints`` joints whose output the memory budget cannot hold (:func:`blend_bytes`),
    saying ``remedy``."""
    span = int(max(s + n for s, n in zip(starts, frames)) - min(starts))
    check_budget("the blend", blend_bytes(span, joints, len(frames)),
                 f"{span:,} output frames from the first start to the last clip's end x {len(frames)} clips x "
                 f"{joints} joints", remedy=remedy)


def checked_blend_input(motions: Sequence[Motion], names: Sequence[str], weights, priorities, starts
                        ) -> tuple[list[Motion], np.ndarray, np.ndarray, np.ndarray]:
    """The clips (resampled to the first one's rate) and their weights, priorities and starts as
    arrays, or ``ValueError`` saying what to fix (clips on another skeleton, or at another scale:
    core.motion.scale_mismatch)."""
    K = len(motions)
    if K < 2:
        raise ValueError(f"blending needs at least two clips, got {K}")
    weights = _clip_weights(weights, K)
    priorities = _per_clip(priorities, K, "priorities", list(range(K, 0, -1)))
    starts = _per_clip(starts, K, "starts", [0] * K)
    if not np.all(np.isfinite(priorities)):
        raise ValueError(f"priorities must be numbers, got {priorities.tolist()}")
    checked_relative("priorities", priorities)
    if np.any(starts != np.round(starts)) or np.any(starts < 0):
        shifted = (f" (the earliest clip joins at output frame 0: for {','.join(f'{s:g}' for s in starts)} give "
                   f"{','.join(f'{s - starts.min():g}' for s in starts)})" if np.all(starts == np.round(starts)) else "")
        raise ValueError(f"starts must be whole output frames from 0, got {starts.tolist()}{shifted}")
    ref = motions[0]
    check_blend_size([resampled_frames(m.n_frames, m.fps, ref.fps) for m in motions], starts, len(ref.skeleton))
    out = []
    for m, name in zip(motions, names):
        if m.n_frames < 2:
            raise ValueError(f"clip '{name}' has {counted(m.n_frames, 'frame')}; a clip to blend needs at least two")
        detail = skeleton_mismatch(m.skeleton, ref.skeleton)
        if detail:
            raise ValueError(f"clip '{name}' is on another skeleton than '{names[0]}' ({detail}); all clips blended "
                             f"must share one skeleton")
        other_scale = scale_mismatch(m.skeleton, ref.skeleton, f"clip '{name}'", f"'{names[0]}'")
        if other_scale:
            raise ValueError(other_scale)
        # (a clip at another frame rate plays at the first one's, in seconds)
        out.append(m if abs(m.fps - ref.fps) <= 1e-4 * ref.fps else m.resampled(ref.fps))
    return out, weights, priorities, starts.astype(np.int64) - int(starts.min())


def _clip_weights(weights, K: int):
    """Per clip a weight: ``(K,)`` float when every clip's is a number (as before), else a list of
    numbers and ``(T,)`` weights over output frames (an animated influence); ``ValueError`` for
    negative or non-finite ones, or weights that are 0 everywhere."""
    if weights is None:
        return np.ones(K)
    weights = list(weights.astype(np.float64)) if isinstance(weights, np.ndarray) and weights.ndim == 2 else list(weights)
    if len(weights) != K:
        raise ValueError(f"weights: give one per clip ({K}), got {len(weights)}")
    if all(np.ndim(w) == 0 for w in weights):
        out = np.asarray(weights, dtype=np.float64)
        if not np.all(np.isfinite(out)) or np.any(out < 0):
            raise ValueError(f"weights must be non-negative numbers, got {out.tolist()}")
        checked_relative("weights", out)
        if out.sum() <= 0:
            raise ValueError("the weights sum to 0: give at least one clip a weight above 0")
        return out
    out = [checked_weight(w) for w in weights]
    if not any(np.any(np.asarray(w) > 0) for w in out):
        raise ValueError("the weights are 0 at every frame: give at least one clip a weight above 0")
    return out


def weight_text(weight) -> str:
    """``"0.5"``, or ``"animated 0.2-0.8"`` for weights over output frames."""
    if np.ndim(weight) == 0:
        return f"{float(weight):g}"
    return f"animated {float(np.min(weight)):.3g}-{float(np.max(weight)):.3g}"


def _per_clip(values, K: int, what: str, default) -> np.ndarray:
    values = default if values is None else list(values)
    if len(values) != K:
        raise ValueError(f"{what}: give one per clip ({K}), got {len(values)}: {list(values)}")
    return np.asarray(values, dtype=np.float64)


def blend_clips(motions: Sequence[Motion], *, names: Sequence[str] | None = None, weights=None, priorities=None,
                starts=None, cyclic: Sequence[bool] | None = None, sync: bool = True, rig: Rig | None = None,
                n_k: int = 5, options: ContactOptions = ContactOptions(), part_weights=None, ends=None) -> BlendResult:
    """Clips played at the same time, blended (the entry point of ``python -m core blend``).

    weights     per clip, >= 0, not all 0 (default equal), normalised over the clips playing at
                each frame; a clip's weight is a number or one per output frame ``(T,)`` (an animated
                NLA influence: used at every frame of the blend, and read at each step's start for
                eq. (6)'s durations; its last value held past its end); ``(K, T)`` gives all;
    priorities  per clip, higher first (default: in the order given, the first highest);
    starts      per clip, the output frame it joins (default 0; the earliest is output frame 0);
    cyclic      per clip, whether it repeats (default: core.sync.is_cyclic decides);
    sync        True: synchronized (Ménardais 2004); False: the NLA's naive blend;
    part_weights  per clip ``None`` or ``{part: factor}`` over :data:`BODY_PARTS`, or ``{name: {part:
                factor}}`` (:func:`checked_part_weights`): the clip's weight scaled on that part. A
                clip not given a legs factor whose feet stand still (:func:`feet_stand_still`)
                while another clip's move gets 0 there: its legs are out of the timing, and the
                result's ``notes`` say so;
    ends        per clip ``None`` or the last clip frame it plays (from 0), or ``{name: frame}``:
                it stops there instead of at its end, fading out as at its end, the others
                taking its weight. A cyclic clip's frames count on through its repeats (frame
                ``F - 1 + f`` is frame ``f`` of its second pass): without an end it repeats as
                long as the blend runs (§4.3), which runs until every clip has played one pass
                (a non-cyclic one: to its end).

    A clip that weighs nothing (weight 0 at every frame, or 0 on every part) is left out, as if
    not given: with one clip left the output is that clip, bit for bit.

    Clips on another skeleton or at another scale than the first (core.motion.scale_mismatch)
    are refused, and, synchronized, a clip whose legs point up (core.rig.check_legs_hang); the
    naive blend reads no joint roles.
    """
    names = tuple(names) if names is not None else tuple(f"clip {k + 1}" for k in range(len(motions)))
    given = list(motions)
    for m, name in zip(given, names):  # (before its end is read against its frames)
        if m.n_frames < 2:
            raise ValueError(f"clip '{name}' has {counted(m.n_frames, 'frame')}; a clip to blend needs at least two")
    motions, ends = ended_clips(motions, names, ends)
    cut, own_ends = list(motions), list(ends)  # (each as given, ended, at its own rate)
    motions, weights, priorities, starts = checked_blend_input(motions, names, weights, priorities, starts)
    # (the last own frame each plays at the blend's rate: a clip cut, its last; a cyclic one ended on
    # past its last frame, that frame resampled)
    ends = [None if e is None else float(m.n_frames - 1) if e <= g.n_frames - 1 else e * m.fps / g.fps
            for e, m, g in zip(ends, motions, given)]
    beyond = [k for k, (e, m) in enumerate(zip(ends, motions)) if e is not None and e > m.n_frames - 1]
    factors = checked_part_weights(part_weights, names)
    from .synthesize import bone_length_warnings  # (synthesize's own check of the same thing)
    from .plan import Clip

    warnings = tuple(bone_length_warnings([Clip(m, 0, name=n) for m, n in zip(motions, names)], blend=True))
    if not sync:
        if not isinstance(weights, np.ndarray):
            raise ValueError("the naive blend takes one number per clip as its weight, not weights over frames")
        if not np.all(np.isnan(factors)):
            raise ValueError("the naive blend (the NLA's) weighs whole clips: part weights need the synchronized blend")
        if beyond:
            k = beyond[0]
            raise ValueError(f"clip '{names[k]}' ends at a frame from 1 to its last, {given[k].n_frames - 1}, in the "
                             f"naive blend, which repeats no clip (the NLA's, unless a strip is told to), got "
                             f"{ends[k]:g}")
        return BlendResult(naive_blend(motions, weights, starts), names, tuple(weights.tolist()),
                           # (the NLA repeats no strip unless told to: nothing is cyclic here)
                           tuple(priorities.tolist()), tuple(int(s) for s in starts), (False,) * len(motions),
                           influences=tuple(nla_influences(weights).tolist()), warnings=warnings)
    rig = rig or find_rig(motions[0])
    for motion, name in zip(motions, names):
        check_legs_hang(motion, rig, clip=f"clip '{name}'")
    K = len(motions)
    if beyond:
        # a clip ended past its last frame must repeat (be cyclic) before its repeats are sized
        if cyclic is None:
            cyclic = are_cyclic(motions, rig, up=detect_up(motions[0], rig))
        clip_stops(cut, cyclic, own_ends, names)
        check_blend_size([max(m.n_frames, int(np.ceil(e or 0)) + 1) for m, e in zip(motions, ends)], starts,
                         len(motions[0].skeleton), remedy="end the cyclic clips sooner (--ends CLIP=FRAME)")
    weighs = [bool(np.any(np.asarray(w) > 0)) and not np.all(f == 0) for w, f in zip(weights, factors)]
    analysed = analysed_joints(motions, rig)
    factors, notes = still_legs_factors(motions, names, factors, weighs, rig, positions=analysed[0])
    kept = [k for k in range(K) if weighs[k]]
    notes += [f"'{names[k]}' weighs nothing: left out" for k in range(K) if not weighs[k]]
    if len(kept) > 1 and not any(np.any(np.asarray(weights[k]) * factors[k, 0] > 0) for k in kept):
        notes.append("every clip's legs weigh 0: the legs blend the clips in equal shares, and the steps are "
                     "timed over all of them equally; give one clip a legs weight above 0 to time the steps by it")
    cyclic = None if cyclic is None else [bool(c) for c in cyclic]

    def pick(values) -> list:
        return [values[k] for k in kept]

    # output frame 0 is the earliest start of the clips that weigh something; weights over output
    # frames move with it
    first = int(min(starts[k] for k in kept))
    moved = [w if np.ndim(w) == 0 or not first else np.asarray(w)[min(first, len(w) - 1):] for w in weights]
    # (one clip left at another rate than the first, left out: planned at its own rate, as it is output)
    alone = len(kept) == 1 and cut[kept[0]] is not motions[kept[0]]
    motion, plan, used_cyclic = blend_synchronized(
        pick(cut if alone else motions), pick(moved), np.asarray(pick(priorities)), np.asarray(pick(starts)) - first,
        cyclic=None if cyclic is None else pick(cyclic), rig=rig, n_k=n_k, options=options,
        part_factors=np.asarray(pick(factors)), analysed=None if alone else (pick(analysed[0]), pick(analysed[1])),
        ends=pick(own_ends if alone else ends), names=pick(names))
    if len(kept) == 1:
        # (the blend of one clip is that clip: as given, ended, at its own rate, not the left-out
        # first clip's)
        motion = cut[kept[0]]
    if len(kept) < K:
        plan = plan_with_left_out(plan, kept, K)
        used_cyclic = [used_cyclic[kept.index(k)] if k in kept else bool(cyclic and cyclic[k]) for k in range(K)]
    warnings += tuple(duration_warnings(motion.n_frames if len(kept) > 1 else motions[kept[0]].n_frames, [max(motions[k].n_frames, int(ends[k] or 0) + 1) for k in kept],
                                        [int(starts[k]) - first for k in kept], [names[k] for k in kept]))
    weights = tuple(weights.tolist()) if isinstance(weights, np.ndarray) else tuple(weights)
    return BlendResult(motion, names, weights, tuple(priorities.tolist()), tuple(int(s) for s in starts),
                       tuple(used_cyclic), plan=plan, warnings=warnings, part_weights=tuple(map(tuple, factors)),
                       notes=tuple(notes), origin=first)


def ended_clips(motions: Sequence[Motion], names: Sequence[str], ends) -> tuple[list[Motion], list[float | None]]:
    """The clips cut after the last frame each plays (``ends``: per clip ``None`` or a clip frame from
    0, or ``{name: frame}``): a clip ended within its frames is the clip up to that frame; a frame
    past its last is left for a cyclic clip's repeats to reach (:func:`clip_stops` refuses it for
    any other). Returns the clips and per clip its end (``None`` where none is given).
    ``ValueError`` saying what to fix."""
    motions = list(motions)
    if ends is None:
        return motions, [None] * len(motions)
    if isinstance(ends, dict):
        unknown = [n for n in ends if n not in names]
        if unknown:
            raise ValueError(f"ends name {unknown}, which are not clips given; the clips are {list(names)}")
        ends = [ends.get(n) for n in names]
    ends = list(ends)
    if len(ends) != len(motions):
        raise ValueError(f"ends: give one per clip ({len(motions)}) or None, got {len(ends)}")
    for k, end in enumerate(ends):
        if end is None:
            continue
        if not np.isfinite(end) or end != int(end) or end < 1:
            raise ValueError(f"clip '{names[k]}' ends at a frame from 1 to its last, {motions[k].n_frames - 1} "
                             f"(its own frames from 0; a cyclic clip's count on through its repeats), got {end}")
        ends[k] = int(end)
        if end < motions[k].n_frames - 1:
            motions[k] = motions[k][: int(end) + 1]
    return motions, ends


def clip_stops(motions: Sequence[Motion], cyclic: Sequence[bool], ends: Sequence[float | None],
               names: Sequence[str]) -> list[float | None]:
    """Per clip, the own time where it stops for core.sync.synchronize's ``stops``: ``None`` for a
    clip not ended (a cyclic one then repeats as long as the blend runs, §4.3) and for a non-cyclic
    one ended (:func:`ended_clips` cut it: it stops at its end); a cyclic clip's end, the own frame
    it plays last (its repeats counted on). ``ValueError`` for a non-cyclic clip ended past its
    last frame."""
    stops = []
    for m, c, e, name in zip(motions, cyclic, ends, names):
        if e is not None and not c and e > m.n_frames - 1 + 1e-9:
            raise ValueError(f"clip '{name}' ends at a frame from 1 to its last, {m.n_frames - 1} (its own frames "
                             f"from 0), got {e:g}: it is not cyclic (its last pose is not its first), so it does "
                             f"not repeat; give a frame within it, or --cyclic {name} if it does repeat")
        stops.append(float(e) if e is not None and c else None)
    return stops


def still_legs_factors(motions: Sequence[Motion], names: Sequence[str], factors: np.ndarray, weighs: Sequence[bool],
                       rig: Rig, *, positions: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, list[str]]:
    """The part factors ``(K, 3)`` with the defaults filled in (1), and a note per default that is not:
    a clip not given a legs factor whose feet stand still (:func:`feet_stand_still`) gets 0 on the
    legs where another clip that weighs something moves its feet. A gesture done standing then
    neither slows a walk's steps (eq. 6 would average its one long double support into each)
    nor pulls its legs and path towards standing; its upper body and arms blend as given.
    ``positions``: per clip its global joint positions ``(F, J, 3)`` (its feet among them) when at
    hand (:func:`analysed_joints`)."""
    factors = np.array(factors, dtype=np.float64)
    notes: list[str] = []
    open_legs = [k for k in range(len(motions)) if np.isnan(factors[k, 0]) and weighs[k]]
    if open_legs:
        feet = [j for side in ("L", "R") for j in (rig.leg(side).ankle, rig.leg(side).toe) if j is not None]
        if positions is None:
            positions = []
            for m in motions:
                g = np.full((m.n_frames, len(m.skeleton), 3), np.nan)
                g[:, feet] = forward_kinematics(m.rotations, m.positions, m.skeleton.parents, feet,
                                                rotations_out=False)[0]
                positions.append(g)
        leg = 0.5 * (leg_length(motions[0].skeleton, rig, "L") + leg_length(motions[0].skeleton, rig, "R"))
        still = [feet_stand_still(g, rig, leg) for g in positions]
        moving = [k for k in range(len(motions)) if weighs[k] and not still[k] and factors[k, 0] != 0]
        for k in open_legs:
            if still[k] and any(i != k for i in moving):
                factors[k, 0] = 0.0
                notes.append(f"'{names[k]}' stands still (its feet stay within {STILL_FEET_LEGS:g} leg lengths): its "
                             f"legs weigh 0, out of the steps' timing; give it a legs weight to change that")
    return np.nan_to_num(factors, nan=1.0), notes


#: A blend longer than this many times its longest clip (start included) is warned of.
LONG_BLEND_RATIO = 1.5


def duration_warnings(n_frames: int, frames: Sequence[int], starts: Sequence[int], names: Sequence[str]) -> list[str]:
    """A warning where the blend's ``n_frames`` came out far longer than its clips (``frames`` each,
    joining at ``starts``): eq. (6) averages the clips' support durations, so a clip with long
    ones slows the others' steps."""
    longest = max(s + f for s, f in zip(starts, frames))
    if n_frames <= LONG_BLEND_RATIO * longest:
        return []
    return [f"the blend lasts {n_frames} frames, {n_frames / longest:.1f} times its longest clip ({longest} frames "
            f"from the first start): the time warp averaged long double supports into the steps (eq. 6); give a "
            f"clip that stands still among {', '.join(repr(n) for n in names)} a legs weight of 0 (--part-weights "
            f"NAME:legs=0), or end it earlier (--ends NAME=FRAME)"]


def analysed_joints(motions: Sequence[Motion], rig: Rig) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per clip, global positions ``(F, J, 3)`` of the joints the analysis reads (the legs, the
    pelvis and the top of the body that core.rig.detect_up finds up by), NaN for the others (the
    arms: a third of the forward kinematics, which nothing here reads); and per clip the pelvis's
    world rotations ``(F, 4)`` (its path, :func:`root_track`, reads them with its positions).

    Every clip's frames go through one pass of forward kinematics: it works frame by frame, so
    each clip's come out as its own pass would give them, to the bit, and a pass costs per joint
    about as much over two clips' frames as over one's."""
    legs = [j for side in ("L", "R") for j in rig.leg(side).joints if j is not None]
    top = [j for j in (rig.head, rig.neck, rig.chest) if j is not None][:1]
    wanted = sorted(set(legs) | {rig.pelvis} | set(top))
    g, r = forward_kinematics(np.concatenate([m.rotations for m in motions]),
                              np.concatenate([m.positions for m in motions]), motions[0].skeleton.parents, wanted)
    positions, pelvis = [], []
    for m, first in zip(motions, np.cumsum([0] + [m.n_frames for m in motions])):
        joints = np.full((m.n_frames, len(m.skeleton), 3), np.nan)
        joints[:, wanted] = g[first : first + m.n_frames]
        positions.append(joints)
        pelvis.append(r[first : first + m.n_frames, wanted.index(rig.pelvis)])
    return positions, pelvis


def blend_synchronized(motions: Sequence[Motion], weights: np.ndarray, priorities: np.ndarray, starts: np.ndarray, *,
                       cyclic: Sequence[bool] | None = None, rig: Rig | None = None, n_k: int = 5,
                       options: ContactOptions = ContactOptions(), part_factors: np.ndarray | None = None,
                       analysed: tuple[list[np.ndarray], list[np.ndarray]] | None = None,
                       ends: Sequence[float | None] | None = None, names: Sequence[str] | None = None
                       ) -> tuple[Motion, object, list[bool]]:
    """Synchronized blend of checked clips (:func:`checked_blend_input`): each clip's support-phase
    sequence (§4), their synchronization and time warps (§5, core.sync), the warped clips
    blended (:func:`blend_warped`) and the feet the combined sequence says are down held
    (:func:`held_feet`). Returns the motion, the SyncPlan and whether each clip was cyclic.

    ``part_factors (K, 3)``: each clip's weight scaled on each of :data:`BODY_PARTS` (default
    1). The legs' timing is the legs' (§5.2: eq. 6 takes "the normalised weight associated to
    the legs"): a clip whose legs weigh 0 is out of ⊕ and eq. (6) and plays at its own pace
    from its start (:func:`untimed_warp`); the others are synchronized, their long double
    supports split (:func:`split_long_double_supports`). Where every clip's legs weigh 0 the legs
    show an equal share of each, and all are synchronized with equal weights. A cyclic clip repeats as long as the blend
    runs (§4.3), which runs until every clip has played one pass (a non-cyclic one: to its end);
    ``ends`` (per clip ``None`` or the last own frame it plays, :func:`clip_stops`) ends one
    earlier or later. Each clip fades out where it stops (``SyncPlan.ends``;
    :func:`presence_weights`). ``analysed``: :func:`analysed_joints` of the clips when at hand;
    ``names``: the clips' names for messages."""
    first = motions[0]
    K = len(motions)
    rig = rig or find_rig(first)
    part_factors = np.ones((K, len(BODY_PARTS))) if part_factors is None else np.asarray(part_factors, dtype=float)
    joints, pelvis = analysed_joints(motions, rig) if analysed is None else analysed
    up = detect_up(first, rig, joints[0])
    if cyclic is None:
        cyclic = are_cyclic(motions, rig, up=up)
    cyclic = [bool(c) for c in cyclic]
    sequences = [support_sequence(foot_contacts(m, rig, up=up, positions=g), m.fps, cyclic=c)
                 for m, g, c in zip(motions, joints, cyclic)]
    names = list(names) if names is not None else [f"clip {k + 1}" for k in range(K)]
    stops = clip_stops(motions, cyclic, [None] * K if ends is None else ends, names)
    legs = [w * f for w, f in zip(weights, part_factors[:, 0])]
    timed = [k for k in range(K) if np.any(np.asarray(legs[k]) > 0)]
    if not timed:
        # every clip's legs weigh 0: the legs then show an equal share of every clip at every frame
        # (presence_weights' rule where all weigh 0), so the legs' timing takes them all, equally
        timed, legs = list(range(K)), [1.0] * K
    if len(timed) > 1:
        sequences = split_long_double_supports(sequences, timed)
    # (the timed clips that repeat do so while a clip out of the timing plays its pass)
    untimed_ends = [starts[k] + (sequences[k].period if stops[k] is None else stops[k])
                    for k in range(K) if k not in timed]
    ending = {"stops": [stops[k] for k in timed]} if any(stops[k] is not None for k in timed) else {}
    if untimed_ends:
        ending["until"] = float(max(untimed_ends))
    # (given only where they say something: tests/bench/sync_blend.py --before runs an older core.sync)
    sub = synchronize([sequences[k] for k in timed], [priorities[k] for k in timed], [int(starts[k]) for k in timed],
                      [legs[k] for k in timed], n_k=n_k, fade_frames=BLEND_IN_S * first.fps, **ending)
    plan = plan_with_untimed(sub, timed, sequences, [int(s) for s in starts], stops)
    warps = np.asarray(plan.warps, dtype=np.float64)
    bodies = [body_yaw(m, rig, up, analysed=a) for m, a in zip(motions, zip(joints, pelvis))]
    blend = _blend_warped(motions, warps, weights, cyclic=cyclic, rig=rig, up=up, bodies=bodies, ends=plan.ends,
                          part_factors=part_factors)
    floors = clip_floors(joints, motions, rig, up)
    # (the floors of the clips whose legs weigh something: a clip out of the legs puts no foot down)
    on_legs = np.array([np.any(w > 0) for w in blend.weights])
    own = warped_source_feet(motions, blend.poses, warps, blend.weights, cyclic, blend.yaw, blend.heading, rig, up,
                             floors, options=options, bodies=bodies)
    held = held_feet(blend.motion, support_contacts(weighted_support(plan, blend.weights)), motions, rig, up,
                     floors=floors[on_legs] if on_legs.any() else floors, own=own, options=options)
    return held, plan, cyclic


def split_long_double_supports(sequences: Sequence, timed: Sequence[int]) -> list:
    """The sequences of the clips ``timed`` with their long double supports split (§7,
    core.sync.split_double_supports): a DS longer than twice the mean element of the other
    timed clips is cut into pieces about that mean long, so that eq. (6) does not average a
    clip's long stand into every step the others take (each step then averages one of their
    elements with one piece, which keeps their mean). The others' mean, not one clip's or a
    constant: the steps are theirs whatever the body, rate or style."""
    out = list(sequences)
    for k in timed:
        mean = float(np.mean(np.concatenate([sequences[i].durations for i in timed if i != k])))
        if mean >= 1:
            out[k] = split_double_supports(sequences[k], 2.0 * mean, piece=mean)
    return out


def untimed_warp(n_frames: int, start: int, period: int) -> np.ndarray:
    """``(n_frames,)`` own frames of a clip out of the legs' timing: its own pace from output frame
    ``start`` (NaN before), one own frame per output frame, on past its ``period``."""
    t = np.arange(n_frames, dtype=np.float64) - start
    return np.where(t >= 0, t, np.nan)


def plan_with_untimed(plan, timed: Sequence[int], sequences: Sequence, starts: Sequence[int],
                      stops: Sequence[float | None] | None = None):
    """The SyncPlan of every clip from ``plan``, the synchronization of the clips ``timed``: the
    others, out of the legs' timing, play at their own pace from their start (:func:`untimed_warp`)
    and stop where their frames end (``stops``: where a cyclic one is ended), a cyclic one not
    ended repeating to the blend's end (§4.3); they are in no step (elements -1, joins -1). The
    output runs to the last clip's end. With every clip timed, ``plan`` itself."""
    from .sync import WarpSpline

    K = len(sequences)
    if list(timed) == list(range(K)):
        return plan
    stops = [None] * K if stops is None else list(stops)
    at = {k: i for i, k in enumerate(timed)}
    lengths = [sequences[k].period if stops[k] is None else stops[k] for k in range(K)]
    own_ends = {k: float(starts[k] + lengths[k]) for k in range(K) if k not in at}
    end = max([float(plan.boundaries[-1])] + list(own_ends.values()))
    ends = [plan.ends[at[k]] if k in at else end if sequences[k].cyclic and stops[k] is None else own_ends[k]
            for k in range(K)]
    n_frames = max(plan.n_frames, int(np.ceil(max(own_ends.values()) - 1e-9)))

    def padded(w):
        # (past the plan's end a timed clip has stopped: its own time runs on at the output's pace, as
        # a held or repeated clip's does, while it weighs nothing)
        return np.concatenate([w, w[-1] + np.arange(1, n_frames - len(w) + 1)])

    warps = [padded(plan.warps[at[k]]) if k in at else untimed_warp(n_frames, starts[k], sequences[k].period)
             for k in range(K)]
    splines = [plan.splines[at[k]] if k in at else
               WarpSpline.through([starts[k], starts[k] + lengths[k]], [0.0, float(lengths[k])])
               for k in range(K)]
    return _plan_with_others(plan, timed, K, n_frames, warps, splines, list(sequences), ends)


def plan_with_left_out(plan, kept: Sequence[int], K: int):
    """The SyncPlan ``plan`` of the clips ``kept``, with the other clips of ``K`` (weighing nothing)
    in it as never playing: warps NaN, elements -1, no delay."""
    from .sync import SupportSequence

    at = {k: i for i, k in enumerate(kept)}
    nothing = SupportSequence([int(Support.DS)], [0], 1, plan.sequences[0].fps)

    def pick(values, other):
        return [values[at[k]] if k in at else other for k in range(K)]

    return _plan_with_others(plan, kept, K, plan.n_frames, pick(plan.warps, np.full(plan.n_frames, np.nan)),
                             pick(plan.splines, None), pick(plan.sequences, nothing), pick(plan.ends, 0.0))


def _plan_with_others(plan, members: Sequence[int], K: int, n_frames: int, warps, splines, sequences, ends):
    """A SyncPlan of ``K`` clips from ``plan``, the synchronization of the clips ``members``: theirs as
    ``plan`` has them, the others in no step (elements -1, joins -1), never delayed, weight and
    priority 0 in the timing; ``warps``, ``splines``, ``sequences`` and ``ends`` given for all."""
    from .sync import SyncPlan

    at = {k: i for i, k in enumerate(members)}

    def pick(values, other):
        return [values[at[k]] if k in at else other for k in range(K)]

    return SyncPlan(n_frames, plan.boundaries, plan.combined,
                    pick(plan.elements, np.full(len(plan.combined), -1, dtype=np.int64)), pick(plan.delays, 0),
                    warps, tuple(pick(plan.weights, 0.0)), tuple(pick(plan.priorities, 0.0)),
                    tuple(pick(plan.joins, -1)), tuple(pick(plan.finished, True)), splines, sequences,
                    tuple(float(e) for e in ends))
