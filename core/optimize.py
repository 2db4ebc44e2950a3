"""Optimal blending range (Oshita 2014, section 4.3): Q_t, Q_p, Q_v and their search.

A blending segment starts at ``t0`` in the previous motion and ends at ``t1``
in the following motion; eq. (9) picks the pair that minimises

    w_t Q_t(t0, t1) + w_p Q_p(t0, t1) + w_v Q_v(t0, t1)

over the possible ranges of section 4.2 (one end may be fixed there, by
eqs. 3, 5 and 7, so one candidate set may hold a single frame).

Conventions of this module:

* **Times.** ``t0`` and ``t1`` are integer *output frames*: frames of the
  synthesized timeline, sampled at ``fps`` like both clips. Output frame ``t``
  is frame ``t - prev_offset`` of the previous clip and ``t - next_offset`` of
  the following one. Every cost is computed in seconds (frames / ``fps``), so
  the same pair sampled at 30 or 120 fps costs the same at the same instants
  (up to the one-frame difference of eq. 13's velocity).
* **Poses.** A pose is the positions of a part's *primary joints*
  (:func:`primary_joints`) after aligning pelvis position and body
  orientation (eq. 12): relative to the pelvis, in the pelvis's own
  horizontal frame, in leg lengths (:func:`pose_features`). Features have
  shape ``(F, n, 3)``; the last axis is ``(left, up, forward)`` of the body.
* **Units of the three terms.** Q_t in seconds, Q_p in leg lengths, Q_v in
  leg lengths per second; the weights of :func:`blend_weights` are chosen in
  those units, so no term depends on the file's unit or frame rate.

The search (:func:`optimal_blend_range`) is coarse to fine (end of 4.3):
pose distances on a grid of about 0.1 s bound the optimum and are
interpolated to estimate the pairs that can still win, then downhill walks
on exact costs at 1-frame resolution start from the best few minima of the
estimate. :func:`exhaustive_blend_range` evaluates every pair with the same
cost function; the tests hold the two to the same optimum. A bound on the
blend's length (``max_frames``) keeps a search over a long gap between two
cores linear in the gap: it runs in blocks of the pairs within the bound.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import quat
from .analysis import pelvis_facing
from .motion import Motion, forward_kinematics
from .rig import Rig, detect_up, leg_length

PARTS = ("lower", "upper")
COARSE_STEP_S = 0.1  # coarse grid spacing of the search, seconds
# up to this many candidate pairs the search evaluates them all: below it the
# coarse-to-fine bookkeeping costs more than it saves (tests/bench/synthesis_speed.py)
EXHAUSTIVE_PAIRS = 40_000
_COARSE_SEEDS = 8  # minima of the coarse estimate refined at 1-frame resolution
_EXACT_SPAN = 4  # ranges up to this many coarse steps long are never estimated
_WALK_RADIUS = 1.0  # a downhill walk looks this many coarse steps around its pair
_SMALL_BLOCK = 1 << 14  # joints x pairs below which a distance block is one broadcast
# a search whose longest blend is bounded (max_frames) over candidates reaching
# further runs in blocks of at most this many candidate pairs, so that its
# arrays stay a few megabytes however long the gap between the cores
_BLOCK_PAIRS = 1 << 19


# --------------------------------------------------------------------------
# eq. (12): primary joints and aligned poses


def primary_joints(rig: Rig, part: str) -> np.ndarray:
    """Joint indices ``(n,)`` whose positions define a pose of ``part`` (eq. 12).

    ``"lower"``: hip, knee, ankle and toe of both legs (toes where present).
    ``"upper"``: chest (the last spine joint), neck, head, and shoulder,
    elbow and wrist of both arms (those present).

    The paper only says "primary joints" of the lower or upper body. These
    are the joints whose *positions* carry the part's pose once the pelvis is
    aligned: each is placed by its parent's rotation, so the knee shows the
    thigh, the ankle the shin, the toe the foot, the elbow the upper arm, the
    wrist the forearm, the head the neck. The pelvis is left out (alignment
    puts it at the origin of every pose); so are clavicles (they hardly move,
    and the shoulder position already shows them) and fingers.
    """
    if part == "lower":
        joints = [j for side in ("L", "R") for j in rig.leg(side).joints]
    elif part == "upper":
        chest = rig.chest if rig.chest is not None else (rig.spine[-1] if rig.spine else None)
        joints = [j for j in (chest, rig.neck, rig.head) if j is not None]
        for side in ("L", "R"):
            arm = rig.arm(side)
            if arm is not None:
                joints += [arm.shoulder, arm.elbow, arm.wrist]
    else:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    joints = list(dict.fromkeys(int(j) for j in joints))
    if not joints:
        raise ValueError(
            "the rig has no upper-body joints (no chest, neck, head or arms); "
            "map them with rig overrides, or blend the whole body as the lower part"
        )
    return np.array(joints, dtype=np.int64)


def pose_features(motion: Motion, rig: Rig, joints: np.ndarray, up: np.ndarray | None = None) -> np.ndarray:
    """Aligned positions of ``joints`` per frame: ``(F, n, 3)`` in leg lengths.

    Eq. (12) compares poses after aligning their pelvis positions and body
    orientations; see :func:`body_frames`, which also returns the body's own
    place and axes per frame.
    """
    return body_frames(motion, rig, joints, up)[0]


def body_frames(motion: Motion, rig: Rig, joints: np.ndarray,
                up: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(features (F, n, 3), pelvis (F, 3), axes (F, 3, 3))``, all lengths in leg lengths.

    features  the positions of ``joints`` relative to the pelvis in the body's
              axes: :func:`pose_features`.
    pelvis    the pelvis's world position.
    axes      per frame, rows ``(left, up, forward)``: ``axes @ v`` is ``v`` in
              the body's axes (see :func:`body_velocity`).

    Eq. (12) compares poses "after two poses are aligned so that their pelvis
    positions and body orientations match":

    * the pelvis position is subtracted entirely (height included), so two
      poses are compared as if their pelvises coincided; a crouch still
      differs from a stance through the legs, which then reach less far;
    * the result is turned about ``up`` so that the pelvis facing
      (:func:`core.analysis.pelvis_facing`, from the hips) is the canonical
      forward: the last axis is ``(left, up, forward)`` with
      ``left = up x forward``. The body orientation of 2008 section 4.3 is
      defined for the ends of a clip from its travel; for one pose the
      pelvis facing is the orientation there is;
    * lengths are divided by the mean leg length (hip to ankle), so the same
      clip in centimetres or metres, moved, turned or with another up axis,
      gives the same features.

    ``up`` (3,) is the clip's up axis, detected when ``None``. Only the
    requested joints, the pelvis and the hips (and their ancestors) are
    evaluated. A pose whose hips line up along ``up`` (lying on its side)
    has no facing; its horizontal coordinates are then 0.
    """
    joints = np.asarray(joints, dtype=np.int64).reshape(-1)
    up = detect_up(motion, rig) if up is None else np.asarray(up, dtype=np.float64).reshape(3)
    gpos = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents,
                              body_frame_joints(rig, joints), rotations_out=False)[0]
    return body_frames_of(gpos, motion.skeleton, rig, up)


def body_frame_joints(rig: Rig, joints: np.ndarray) -> np.ndarray:
    """The joints :func:`body_frames_of` reads, in its order: the pelvis, the hips, then ``joints``."""
    return np.concatenate([[rig.pelvis, rig.leg("L").hip, rig.leg("R").hip], np.asarray(joints, dtype=np.int64)])


def body_frames_of(gpos: np.ndarray, skeleton, rig: Rig, up: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`body_frames` from world positions ``(F, 3 + n, 3)`` of :func:`body_frame_joints`
    (for a caller whose pass of forward kinematics evaluates other joints too)."""
    pelvis = gpos[:, 0]
    forward = pelvis_facing(gpos[:, 1], gpos[:, 2], up)
    left = quat.cross(up, forward)
    # rows are the body axes, so basis @ v gives v's (left, up, forward) coordinates
    basis = np.stack([left, np.broadcast_to(up, left.shape), forward], axis=1)
    leg = 0.5 * (leg_length(skeleton, rig, "L") + leg_length(skeleton, rig, "R"))
    relative = gpos[:, 3:] - pelvis[:, None]
    return np.matmul(relative, basis.transpose(0, 2, 1)) / leg, pelvis / leg, basis


def part_features(motion: Motion, rig: Rig, part: str, up: np.ndarray | None = None) -> np.ndarray:
    """:func:`pose_features` of ``part``'s :func:`primary_joints`: ``(F, n, 3)``."""
    return pose_features(motion, rig, primary_joints(rig, part), up)


# --------------------------------------------------------------------------
# eqs. (12) and (13): pose distance and pose velocity


def _check_features(a: np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim < 2 or a.shape[-1] != 3:
        raise ValueError(f"{name} must have shape (..., n, 3), got {a.shape}")
    return a


def pose_distance(a_feats: np.ndarray, b_feats: np.ndarray) -> np.ndarray:
    """Eq. (12): mean over joints of the distance between aligned positions.

    ``a (..., n, 3)`` and ``b (..., n, 3)`` broadcast over ``...`` -> ``(...)``,
    in the features' unit (leg lengths for :func:`pose_features`).
    """
    a, b = _check_features(a_feats, "a_feats"), _check_features(b_feats, "b_feats")
    if a.shape[-2] != b.shape[-2]:
        raise ValueError(f"poses have {a.shape[-2]} and {b.shape[-2]} joints; compare the same primary joints")
    # (np.mean's own sum and division, the same bits, without its dispatch: planning measures
    # distances between a few poses many times over)
    d = quat.length(a - b)
    return np.add.reduce(d, axis=-1) / d.shape[-1]


def distance_matrix(prev_feats: np.ndarray, next_feats: np.ndarray) -> np.ndarray:
    """Eq. (12) between every pose of two clips: ``(F0, n, 3), (F1, n, 3) -> (F0, F1)``.

    Exact differences (identical poses give exactly 0), no Gram-matrix trick.
    """
    a, b = _check_features(prev_feats, "prev_feats"), _check_features(next_feats, "next_feats")
    if a.ndim != 3 or b.ndim != 3 or a.shape[1] != b.shape[1]:
        raise ValueError(f"expected (F0, n, 3) and (F1, n, 3) with the same n, got {a.shape} and {b.shape}")
    a = np.ascontiguousarray(a.transpose(1, 2, 0))
    b = np.ascontiguousarray(b.transpose(1, 2, 0))
    return _plane_distances(a[:, :, :, None], b[:, :, None, :])


def pose_velocity(feats: np.ndarray, fps: float, eps_frames: int = 1) -> np.ndarray:
    """Eq. (13): ``V(t) = D(t, t + eps) / eps`` per frame, ``(F, n, 3) -> (F,)``.

    ``eps`` is ``eps_frames`` frames, in seconds (``eps_frames / fps``), so V
    is in feature units (leg lengths) per second. The last ``eps`` frames,
    which have no frame ``eps`` ahead, use the backward difference
    ``D(t - eps, t) / eps``. A clip shorter than ``2 eps`` frames uses
    ``eps = F // 2``; a one-frame clip has velocity 0.
    """
    feats = _check_features(feats, "feats")
    if int(eps_frames) != eps_frames or eps_frames < 1:
        raise ValueError(f"eps_frames must be a positive whole number of frames, got {eps_frames}")
    F = feats.shape[0]
    if F < 2:
        return np.zeros(F)
    e = min(int(eps_frames), F // 2)
    step = pose_distance(feats[:-e], feats[e:]) * (fps / e)  # (F - e,) D(t, t + e) / eps
    return np.concatenate([step, step[-e:]])


def pose_acceleration(feats: np.ndarray, fps: float, eps_frames: int = 1) -> np.ndarray:
    """Mean over joints of the pose's acceleration, ``(F, n, 3) -> (F,)``, leg lengths per second squared.

    Second differences ``|p(t + eps) - 2 p(t) + p(t - eps)| / eps^2`` with
    ``eps = eps_frames / fps`` seconds; the first and last ``eps`` frames take
    their nearest neighbour's value. Not one of the paper's terms: the
    synthesis uses it to keep blends as gentle as the clips (see
    :attr:`BlendLimits.max_accel`). Take ``eps`` as a fixed time
    (``eps_frames`` proportional to ``fps``) so that a resampled clip
    measures the same. Fewer than ``2 eps + 1`` frames: zeros.
    """
    feats = _check_features(feats, "feats")
    if int(eps_frames) != eps_frames or eps_frames < 1:
        raise ValueError(f"eps_frames must be a positive whole number of frames, got {eps_frames}")
    F, e = feats.shape[0], int(eps_frames)
    if F < 2 * e + 1:
        return np.zeros(F)
    second = feats[2 * e :] - 2.0 * feats[e:-e] + feats[: -2 * e]
    size = quat.length(second)
    accel = np.add.reduce(size, axis=-1) / size.shape[-1] * (fps / e) ** 2  # (np.mean's arithmetic)
    return np.concatenate([np.full(e, accel[0]), accel, np.full(e, accel[-1])])


def body_velocity(pelvis: np.ndarray, axes: np.ndarray, fps: float) -> np.ndarray:
    """The body's travel: the pelvis's horizontal velocity in the body's own axes, ``(F, 3)``, per second.

    ``pelvis (F, 3)`` and ``axes (F, 3, 3)`` as :func:`body_frames` gives them;
    the coordinates are ``(left, 0, forward)``, so two clips' body velocities
    compare before either is turned or moved onto the other (alignment is a
    turn about up and a move on the ground). The up component, the bounce of
    a run say, is left out: it is part of the pose, not of where the body goes.
    Central differences (one-sided at the ends); one frame: zeros.
    """
    if len(pelvis) < 2:
        return np.zeros((len(pelvis), 3))
    velocity = np.einsum("fij,fj->fi", axes, np.gradient(pelvis, axis=0) * fps)
    velocity[:, 1] = 0.0
    return velocity


# --------------------------------------------------------------------------
# eqs. (10), (11), (14): the three terms


class BlendTerms(NamedTuple):
    """The three objective terms of eq. (9), each broadcast over pairs.

    time      Q_t, seconds: eq. (10) ``|phase length - (t1 - t0)|``, or eq. (11)
              ``t1 - t0`` for pose-to-pose segments.
    pose      Q_p = D(t0, t1), leg lengths (eq. 12).
    velocity  Q_v, leg lengths per second (eq. 14).
    """

    time: np.ndarray
    pose: np.ndarray
    velocity: np.ndarray


class BlendWeights(NamedTuple):
    """``(w_t, w_p, w_v)`` of eq. (9), per second, per leg length, per (leg length / s)."""

    time: float
    pose: float
    velocity: float


@dataclass(frozen=True)
class BlendRange:
    """The optimal blending range of one segment.

    t0, t1   output frames where blending starts (previous motion) and ends
             (following motion), ``t0 < t1``, each one of its candidates.
    cost     the minimised eq. (9) value.
    terms    Q_t, Q_p, Q_v at ``(t0, t1)`` as floats (see :class:`BlendTerms`).
    excess   how far the range exceeds the search's speed and acceleration
             limits (1 at a limit; 0 without limits): above 1 only when no
             candidate pair keeps within them and this is the gentlest.
    """

    t0: int
    t1: int
    cost: float
    terms: BlendTerms
    excess: float = 0.0

    @property
    def n_frames(self) -> int:
        """Frames from ``t0`` to ``t1``, both included."""
        return self.t1 - self.t0 + 1

    def to_dict(self) -> dict:
        return {"t0": self.t0, "t1": self.t1, "cost": self.cost, "terms": {k: float(v) for k, v in self.terms._asdict().items()}}


@dataclass(frozen=True, eq=False)
class BlendSide:
    """One of the two motions a blending range joins, as eq. (9) reads it (2014, 4.3).

    The range's initial time t0 is searched for within the *previous* motion and its
    terminal time t1 within the *following* one; each side brings its own poses,
    velocities, placement and possible range.

    feats          ``(F, n, 3)`` :func:`pose_features` of the part's primary joints (eq. 12).
    velocity       ``(F,)`` :func:`pose_velocity` V(t) of eq. (13).
    candidates     ``(K,)`` integer output frames: this end's possible range S of
                   section 4.2 (t0 for the previous side, t1 for the following
                   one). It may hold a single frame (an end fixed by eqs. 3/5/7)
                   and need not be contiguous. Only the search reads it
                   (:func:`blend_cost_terms` is given its pairs).
    offset         output frame ``t`` is frame ``t - offset`` of this clip (outside
                   its frames a clip holds its end pose, velocity 0).
    body_velocity  ``(F, 3)`` :func:`body_velocity` per frame, or None; needed only
                   by :attr:`BlendLimits.max_body_accel`.

    Checked where the search reads it (shapes, whole frames), with the reason.
    """

    feats: np.ndarray
    velocity: np.ndarray
    candidates: np.ndarray | None = None
    offset: int = 0
    body_velocity: np.ndarray | None = None


@dataclass(frozen=True)
class BlendLimits:
    """Bounds a blending range must keep beside eq. (9); none of them is the paper's.

    min_frames     the shortest range ``t1 - t0`` worth having, in frames; when no
                   candidate pair is that long, the longest pairs there are compete
                   as if it were 1.
    max_frames     the longest range ``t1 - t0`` a blend may take, in frames (None: no
                   bound); lengthened to the shortest candidate pair of ``min_frames``
                   when no pair is both. Where candidates reach further apart, the
                   search runs in blocks of pairs within it (:meth:`_Search.blocks`):
                   memory and time then grow linearly with the candidates' span, not
                   with its square. Where every candidate pair is within it, the
                   search is the same as without it.
    max_speed      the fastest mean pose speed ``D(t0, t1) / (t1 - t0)`` (leg lengths
                   per second) a range may ask of the body, e.g. the fastest the clips
                   themselves move.
    max_accel      the largest peak acceleration ``6 D(t0, t1) / (t1 - t0)^2`` (leg
                   lengths per second squared; that of a smoothstep blend between two
                   poses D apart) a range may add to the motion, e.g. the clips' own
                   typical :func:`pose_acceleration`.
    max_body_accel the largest acceleration ``1.5 |v1 - v0| / (t1 - t0)`` (leg lengths
                   per second squared) a range may ask of the body to go from the
                   previous side's :attr:`BlendSide.body_velocity` at t0 to the
                   following side's at t1. The pose features leave the body's travel
                   out (they are relative to the pelvis), so without it a blend from
                   standing into a run may be as short as the poses allow.

    When no candidate pair keeps within ``max_speed``, ``max_accel`` and
    ``max_body_accel``, the pair exceeding them least wins (eq. 9 breaks ties):
    the gentlest blend the ranges allow.
    """

    min_frames: int = 1
    max_frames: int | None = None
    max_speed: float | None = None
    max_accel: float | None = None
    max_body_accel: float | None = None


# W = 0 (most responsive) and W = 1 (smoothest), as (w_t, w_p, w_v) per
# second, per leg length and per leg length per second. Only the exchange
# rates between the terms matter, so w_t stays 1:
#
# * W = 0: 0.1 s of blending is worth 0.1 leg length of pose difference or
#   0.5 leg length/s of velocity mismatch. Pose-to-pose blends (eq. 11) are
#   cut short unless a clearly better pose is a little later.
# * W = 1: 0.1 s is worth 0.5 leg length of pose difference (pose hardly
#   matters) but only 0.03 leg length/s of velocity mismatch. A pose-to-pose
#   blend then lasts until its mean speed D / (t1 - t0) matches the motion at
#   both ends, about D / V: the gentlest blend two poses allow.
#
# Q_p loses weight as W rises because for moving clips D(t0, t1) grows with
# t1 - t0 (the motion travels during the range): a heavy pose term prefers
# short jumps between neighbouring poses, the opposite of smooth. w_t stays
# put so that eq. (10) segments keep about their foot-moving phase's length
# at every W. On 22 pose-to-pose transitions between real clips (walk,
# punch, kick, bow, bye, slash, guide, call, respond; both body parts) the
# optimal range lengthens with W for every pair, on average from 0.11 s at
# W = 0 to 0.35 s at W = 1, and the RMS acceleration of the blended primary
# joints falls from about 19 to 9 leg lengths/s^2. On 11 motion-to-motion
# transitions between walks the range stays on average within 2 frames of
# its phase's length at every W, and their acceleration (a plain smoothstep
# cross-fade) rises a little, from about 14 to 16: W is a pose-to-pose knob.
RESPONSIVE_WEIGHTS = BlendWeights(time=1.0, pose=1.0, velocity=0.2)
SMOOTH_WEIGHTS = BlendWeights(time=1.0, pose=0.2, velocity=3.0)


def blend_weights(W: float) -> BlendWeights:
    """``(w_t, w_p, w_v)`` for responsiveness ``W`` in [0, 1] (end of 4.3).

    Linear between :data:`RESPONSIVE_WEIGHTS` (``W = 0``, quick transitions)
    and :data:`SMOOTH_WEIGHTS` (``W = 1``, longer, gentler blends).
    """
    W = float(W)
    if not 0.0 <= W <= 1.0:
        raise ValueError(f"responsiveness W must be between 0 (most responsive) and 1 (smoothest), got {W}")
    return BlendWeights(*((1.0 - W) * np.array(RESPONSIVE_WEIGHTS) + W * np.array(SMOOTH_WEIGHTS)))


def _on_clip(t: np.ndarray, offset: int, n_frames: int) -> tuple[np.ndarray, np.ndarray]:
    """Clip frames of output frames ``t`` (clamped) and whether each lies inside the clip."""
    frame = np.asarray(t, dtype=np.int64) - int(offset)
    inside = (frame >= 0) & (frame < n_frames)
    return np.clip(frame, 0, max(n_frames - 1, 0)), inside


def _terms(distance, v0, v1, duration_s, phase_length_s) -> BlendTerms:
    """Eqs. (10)/(11) and (14) from D(t0, t1), V(t0), V(t1) and t1 - t0 (seconds), broadcast."""
    time = duration_s if phase_length_s is None else np.abs(phase_length_s - duration_s)
    mean_speed = distance / duration_s
    velocity = 0.5 * (np.abs(v0 - mean_speed) + np.abs(v1 - mean_speed))
    return BlendTerms(np.asarray(time, dtype=np.float64), np.asarray(distance, dtype=np.float64), velocity)


def _cost(distance: np.ndarray, v0: np.ndarray, v1: np.ndarray, frames: np.ndarray, fps: float,
          phase_length_s: float | None, w: np.ndarray) -> np.ndarray:
    """``w . (Q_t, Q_p, Q_v)`` of pairs, ``inf`` where ``t1 <= t0``.

    distance D(t0, t1), v0 V(t0), v1 V(t1), frames ``t1 - t0`` in frames, all
    broadcasting to the shape of ``frames`` (e.g. ``(a, b)``, ``(a, 1)``,
    ``(1, b)``, ``(a, b)``). The same sums as :func:`_terms`, fused in place:
    the estimate over a band of pairs is the search's largest array work,
    and temporaries of that size cost more than the arithmetic.
    """
    duration = np.maximum(frames, 1) * (1.0 / fps)
    speed = distance / duration
    cost = np.subtract(v0, speed)
    np.abs(cost, out=cost)
    np.subtract(v1, speed, out=speed)
    np.abs(speed, out=speed)
    cost += speed
    cost *= 0.5 * w[2]
    if phase_length_s is not None:
        np.subtract(duration, phase_length_s, out=duration)
        np.abs(duration, out=duration)
    duration *= w[0]
    cost += duration
    np.multiply(distance, w[1], out=speed)
    cost += speed
    cost[frames <= 0] = np.inf
    return cost


def _check_clips(prev_feats, next_feats, prev_velocity, next_velocity):
    """The two clips' features ``(F, n, 3)`` and velocities ``(F,)`` as float arrays, shapes checked."""
    prev = _check_features(prev_feats, "prev_feats")
    nxt = _check_features(next_feats, "next_feats")
    if prev.ndim != 3 or nxt.ndim != 3 or prev.shape[1] != nxt.shape[1]:
        raise ValueError(f"expected (F0, n, 3) and (F1, n, 3) with the same n, got {prev.shape} and {nxt.shape}")
    if len(prev) == 0 or len(nxt) == 0:
        raise ValueError(f"both clips need frames, got {len(prev)} and {len(nxt)}")
    prev_velocity = np.asarray(prev_velocity, dtype=np.float64).reshape(-1)
    next_velocity = np.asarray(next_velocity, dtype=np.float64).reshape(-1)
    if len(prev_velocity) != len(prev) or len(next_velocity) != len(nxt):
        raise ValueError(
            f"velocities must have one value per frame: {len(prev_velocity)} for {len(prev)} "
            f"previous frames, {len(next_velocity)} for {len(nxt)} following frames"
        )
    return prev, nxt, prev_velocity, next_velocity


def _check_timing(fps, phase_length_s) -> None:
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if phase_length_s is not None and not phase_length_s >= 0:
        raise ValueError(f"phase_length_s must be a duration in seconds (>= 0) or None, got {phase_length_s}")


class _Search:
    """Both clips read at the candidate frames, and the cost of candidate pairs.

    Outside a clip its nearest end pose is held, and a held pose does not
    move: its velocity is 0.
    """

    def __init__(self, previous: BlendSide, following: BlendSide, *, fps: float, phase_length_s: float | None,
                 weights, limits: BlendLimits):
        prev, nxt, prev_velocity, next_velocity = _check_clips(previous.feats, following.feats,
                                                               previous.velocity, following.velocity)
        prev_offset, next_offset = previous.offset, following.offset
        min_frames, max_frames = limits.min_frames, limits.max_frames
        _check_timing(fps, phase_length_s)
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape != (3,) or np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError(f"weights must be three non-negative numbers (w_t, w_p, w_v), got {weights}")
        self.t0 = _candidates(previous.candidates, "t0_candidates")
        self.t1 = _candidates(following.candidates, "t1_candidates")
        if self.t0[0] >= self.t1[-1]:
            raise ValueError(
                f"no candidate pair has t0 < t1: t0 candidates run {self.t0[0]}..{self.t0[-1]}, "
                f"t1 candidates {self.t1[0]}..{self.t1[-1]} (the blend must start in the previous "
                "motion before it ends in the following one)"
            )
        f0, inside0 = _on_clip(self.t0, prev_offset, len(prev))
        f1, inside1 = _on_clip(self.t1, next_offset, len(nxt))
        # per candidate: its pose as contiguous joint planes (n, 3, K), and
        # its velocity (0 where the clip holds a pose)
        self.pose0 = np.ascontiguousarray(prev[f0].transpose(1, 2, 0))
        self.pose1 = np.ascontiguousarray(nxt[f1].transpose(1, 2, 0))
        self.v0 = np.where(inside0, prev_velocity[f0], 0.0)
        self.v1 = np.where(inside1, next_velocity[f1], 0.0)
        self.fps = float(fps)
        self.phase_length_s = None if phase_length_s is None else float(phase_length_s)
        self.w = w
        # when no candidate pair is min_frames long, the longest there are compete as if it were 1
        self.min_frames = min(max(int(min_frames), 1), max(int(self.t1[-1] - self.t0[0]), 1))
        self.max_frames = _longest_allowed(self.t0, self.t1, self.min_frames, max_frames)
        self.max_speed = _limit(limits.max_speed, "max_speed")
        self.max_accel = _limit(limits.max_accel, "max_accel")
        self.max_body_accel = _limit(limits.max_body_accel, "max_body_accel")
        if self.max_body_accel is not None:
            b0, b1 = _check_body_velocity(previous.body_velocity, following.body_velocity, len(prev), len(nxt))
            self.b0 = np.where(inside0[:, None], b0[f0], 0.0)
            self.b1 = np.where(inside1[:, None], b1[f1], 0.0)

    @property
    def limited(self) -> bool:
        return self.max_speed is not None or self.max_accel is not None or self.max_body_accel is not None

    def distance(self, i, j) -> np.ndarray:
        """D at pairs of candidate indices ``i``, ``j`` broadcast together (e.g. ``(a, 1)`` and ``(1, b)``)."""
        return _plane_distances(self.pose0[:, :, i], self.pose1[:, :, j])

    def cost(self, i, j, distance: np.ndarray | None = None) -> np.ndarray:
        """Eq. (9) at pairs of candidate indices ``i``, ``j`` broadcast together; inf where ``t1 <= t0``.

        ``distance``, when given, stands in for D (an estimate).
        """
        i, j = np.asarray(i), np.asarray(j)
        if distance is None:
            distance = self.distance(i, j)
        frames = self.t1[j] - self.t0[i]
        cost = self._unlimited_cost(i, j, distance, frames)
        excess = self.excess(i, j, distance, frames)
        return cost if excess is None else np.where(excess > 1.0, np.inf, cost)

    def gentlest_cost(self, i, j) -> np.ndarray:
        """The excess over the limits at pairs ``i``, ``j``, eq. (9) breaking ties (the limits must be set)."""
        i, j = np.asarray(i), np.asarray(j)
        distance = self.distance(i, j)
        frames = self.t1[j] - self.t0[i]
        return self.excess(i, j, distance, frames) + 1e-6 * self._unlimited_cost(i, j, distance, frames)

    def _unlimited_cost(self, i, j, distance, frames) -> np.ndarray:
        """Eq. (9) with ``min_frames`` and ``max_frames`` but without the speed and acceleration limits."""
        cost = _cost(distance, self.v0[i], self.v1[j], frames, self.fps, self.phase_length_s, self.w)
        if self.min_frames > 1:
            cost = np.where(frames < self.min_frames, np.inf, cost)
        return cost if self.max_frames is None else np.where(frames > self.max_frames, np.inf, cost)

    def excess(self, i, j, distance, frames) -> np.ndarray | None:
        """How far pairs ``i``, ``j`` exceed the limits: 1 at the limit, None without limits.

        The mean speed of a blend is ``D / (t1 - t0)``; the peak acceleration
        of a smoothstep blend between two poses ``D`` apart is ``6 D / (t1 - t0)^2``,
        and that of the body changing its velocity by ``dv`` over the blend
        (a smoothstep in velocity) ``1.5 |dv| / (t1 - t0)``.
        """
        duration = np.maximum(frames, 1) / self.fps
        excess = None
        if self.max_speed is not None:
            excess = distance / duration / self.max_speed
        if self.max_accel is not None:
            accel = 6.0 * distance / duration**2 / self.max_accel
            excess = accel if excess is None else np.maximum(excess, accel)
        if self.max_body_accel is not None:
            change = quat.length(self.b1[np.asarray(j)] - self.b0[np.asarray(i)])
            body = 1.5 * change / duration / self.max_body_accel
            excess = body if excess is None else np.maximum(excess, body)
        return excess


    def durations_below(self, cost: float) -> tuple[int, int]:
        """Shortest and longest ``t1 - t0`` (frames, >= 1) whose ``w_t Q_t`` is at most ``cost``.

        A frame of margin on each side: the band may be wider, never narrower.
        """
        longest = int(self.t1[-1] - self.t0[0]) if self.max_frames is None else self.max_frames
        if not self.w[0] > 0 or not np.isfinite(cost):
            return self.min_frames, max(longest, self.min_frames)
        reach = cost / self.w[0] * self.fps  # frames of Q_t the cost can pay for
        centre = 0.0 if self.phase_length_s is None else self.phase_length_s * self.fps
        shortest = max(self.min_frames, int(np.floor(centre - reach)) - 1)
        return shortest, max(shortest, min(longest, int(np.ceil(centre + reach)) + 1))

    def blocks(self) -> list["_Search"]:
        """The search cut into blocks of consecutive t0 candidates, each with the t1
        candidates its pairs reach within ``max_frames`` (the whole search without a bound).

        A block spans at most ``max_frames`` frames of t0 and at most
        :data:`_BLOCK_PAIRS` pairs, so the blocks' pairs, and the time to search
        them, grow linearly with the candidates' span. Every pair within the
        bound lies in exactly one block.
        """
        if self.max_frames is None:
            return [self]
        rows = max(1, min(self.max_frames, _BLOCK_PAIRS // (2 * self.max_frames)))  # frames of t0 per block
        out, i = [], 0
        while i < len(self.t0):
            first = int(self.t0[i])
            i1 = int(np.searchsorted(self.t0, first + rows))
            j0 = int(np.searchsorted(self.t1, first, side="right"))
            j1 = int(np.searchsorted(self.t1, int(self.t0[i1 - 1]) + self.max_frames, side="right"))
            if j1 > j0:
                out.append(self._block(slice(i, i1), slice(j0, j1)))
            i = i1
        return out

    def _block(self, rows: slice, columns: slice) -> "_Search":
        """The same search over ``t0[rows]`` and ``t1[columns]`` (views; the limits stay the whole search's)."""
        block = copy.copy(self)
        block.t0, block.v0, block.pose0 = self.t0[rows], self.v0[rows], self.pose0[:, :, rows]
        block.t1, block.v1, block.pose1 = self.t1[columns], self.v1[columns], self.pose1[:, :, columns]
        if self.max_body_accel is not None:
            block.b0, block.b1 = self.b0[rows], self.b1[columns]
        return block

    def result(self, i: int, j: int) -> BlendRange:
        t0, t1 = int(self.t0[i]), int(self.t1[j])
        distance = self.distance(i, j)
        terms = _terms(distance, self.v0[i], self.v1[j], (t1 - t0) * (1.0 / self.fps), self.phase_length_s)
        terms = BlendTerms(*(float(x) for x in terms))
        excess = self.excess(i, j, distance, t1 - t0)
        return BlendRange(t0, t1, float(np.dot(self.w, terms)), terms, 0.0 if excess is None else float(excess))


def _check_body_velocity(prev_body, next_body, n_prev: int, n_next: int) -> tuple[np.ndarray, np.ndarray]:
    if prev_body is None or next_body is None:
        raise ValueError("max_body_accel needs the body_velocity of both sides (BlendSide.body_velocity): "
                         "previous (F0, 3) and following (F1, 3), one per frame")
    out = tuple(np.asarray(v, dtype=np.float64) for v in (prev_body, next_body))
    for v, n, side in zip(out, (n_prev, n_next), ("previous", "following")):
        if v.shape != (n, 3) or not np.all(np.isfinite(v)):
            raise ValueError(f"the {side} clip's body velocity must be finite ({n}, 3) (one per frame), got {v.shape}")
    return out


def _longest_allowed(t0: np.ndarray, t1: np.ndarray, min_frames: int, max_frames: int | None) -> int | None:
    """The longest range ``t1 - t0`` a search over candidates ``t0``, ``t1`` (sorted) keeps, in
    frames: ``max_frames``, lengthened where no candidate pair is both that short and
    ``min_frames`` long; None where every candidate pair is within it (the bound cannot bite)."""
    if max_frames is None:
        return None
    if int(max_frames) < 1:
        raise ValueError(f"max_frames must be at least 1 frame or None (no bound), got {max_frames}")
    # the shortest pair of at least min_frames each t0 has
    first = np.searchsorted(t1, t0 + min_frames)
    reachable = first < len(t1)
    shortest = int((t1[first[reachable]] - t0[reachable]).min()) if reachable.any() else min_frames
    longest = max(int(max_frames), min_frames, shortest)
    return None if longest >= int(t1[-1] - t0[0]) else longest


def _limit(value, name: str) -> float | None:
    """A speed or acceleration limit: None (no limit) or a positive number."""
    if value is None:
        return None
    value = float(value)
    if not value > 0.0 or not np.isfinite(value):
        raise ValueError(f"{name} must be a positive number or None (no limit), got {value}")
    return value


def _candidates(t, name: str) -> np.ndarray:
    if t is None:
        raise ValueError(f"{name} not given: the search needs this end's possible range (BlendSide.candidates)")
    t = np.asarray(t)
    if t.size == 0:
        raise ValueError(f"{name} is empty: the possible range of this blending segment has no frames")
    if not np.issubdtype(t.dtype, np.integer):
        if not np.all(t == np.round(t)):
            raise ValueError(f"{name} must be whole output frames, got {t.reshape(-1)[:5]}")
    t = t.astype(np.int64).reshape(-1)
    if (t[1:] > t[:-1]).all():  # (already sorted and unique, as planning's ranges are: np.unique's values)
        return t
    return np.unique(t)


def blend_cost_terms(previous: BlendSide, following: BlendSide, t0: np.ndarray, t1: np.ndarray, *, fps: float,
                     phase_length_s: float | None) -> BlendTerms:
    """Q_t, Q_p, Q_v of eqs. (10)-(14) at pairs ``(t0, t1)`` of output frames.

    previous, following   the two motions (:class:`BlendSide`; their ``feats``, ``velocity``
                      and ``offset``: outside its frames a clip holds its end pose, velocity 0;
                      their candidates are not read).
    t0, t1            integer output frames, broadcast together; ``t1 > t0`` everywhere.
    fps               frames per second of the timeline (and of both clips).
    phase_length_s    ``t_p,end - t_p,begin`` of the foot-moving phase P the
                      segment is tied to, seconds (eq. 10: motion-to-motion,
                      pose-to-motion, motion-to-pose), or ``None`` for a
                      pose-to-pose segment (eq. 11).

    Returns :class:`BlendTerms` of arrays shaped like ``broadcast(t0, t1)``.
    """
    t0, t1 = np.broadcast_arrays(np.asarray(t0, dtype=np.int64), np.asarray(t1, dtype=np.int64))
    if np.any(t1 <= t0):
        raise ValueError("a blending range needs t0 < t1 (the following motion's end after the previous one's start)")
    prev, nxt, prev_velocity, next_velocity = _check_clips(previous.feats, following.feats,
                                                           previous.velocity, following.velocity)
    _check_timing(fps, phase_length_s)
    f0, inside0 = _on_clip(t0, previous.offset, len(prev))
    f1, inside1 = _on_clip(t1, following.offset, len(nxt))
    v0 = np.where(inside0, prev_velocity[f0], 0.0)
    v1 = np.where(inside1, next_velocity[f1], 0.0)
    return _terms(pose_distance(prev[f0], nxt[f1]), v0, v1, (t1 - t0) * (1.0 / fps), phase_length_s)


def _plane_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Eq. (12) between poses stored as joint planes: ``(n, 3, ...)`` and ``(n, 3, ...)`` broadcast -> ``(...)``.

    Joint by joint, each ``sqrt((dx^2 + dy^2) + dz^2)`` added in joint order,
    whichever branch runs, so a pair's distance does not depend on the
    block it was evaluated in.
    """
    n = a.shape[0]
    # (plain Python where it can be: the search calls this often, on small blocks)
    shape = a.shape[2:] if a.shape[2:] == b.shape[2:] else np.broadcast_shapes(a.shape[2:], b.shape[2:])
    if n == 0:
        return np.zeros(shape)
    if n * math.prod(shape) <= _SMALL_BLOCK:
        # small blocks (the search's neighbourhoods) in one broadcast: the
        # loop below would be all call overhead
        difference = a - b
        np.square(difference, out=difference)
        square = difference[:, 0] + difference[:, 1]
        square += difference[:, 2]
        np.sqrt(square, out=square)
        return np.add.reduce(square, axis=0) / n
    out = np.zeros(shape)
    square = np.empty(shape)
    part = np.empty(shape)
    # One joint at a time keeps the working set at two planes of pairs
    # instead of an (n, 3, pairs) block: several times faster at a few
    # hundred candidates a side. The loop is over joints, never frames.
    for i in range(n):
        np.subtract(a[i, 0], b[i, 0], out=square)
        np.square(square, out=square)
        for axis in (1, 2):
            np.subtract(a[i, axis], b[i, axis], out=part)
            np.square(part, out=part)
            square += part
        np.sqrt(square, out=square)
        out += square
    out /= n
    return out


def exhaustive_blend_range(previous: BlendSide, following: BlendSide, *, fps: float,
                           phase_length_s: float | None, weights, limits: BlendLimits = BlendLimits()) -> BlendRange:
    """Eq. (9) by evaluating every candidate pair; the reference for :func:`optimal_blend_range`.

    Same arguments and result as :func:`optimal_blend_range` (without ``coarse_step``).
    """
    search = _Search(previous, following, fps=fps, phase_length_s=phase_length_s, weights=weights, limits=limits)
    everything = search.cost(np.arange(len(search.t0))[:, None], np.arange(len(search.t1))[None, :])
    if not np.isfinite(everything).any() and search.limited:
        return _gentlest(search)  # no pair keeps within the limits: the gentlest there is
    return search.result(*_best(everything))


def optimal_blend_range(
    previous: BlendSide,
    following: BlendSide,
    *,
    fps: float,
    phase_length_s: float | None,
    weights,
    limits: BlendLimits = BlendLimits(),
    coarse_step: int | None = None,
    exhaustive_pairs: int = EXHAUSTIVE_PAIRS,
) -> BlendRange:
    """Eq. (9): the pair ``t0 < t1`` of candidates minimising ``w . (Q_t, Q_p, Q_v)``.

    previous, following   the two motions (:class:`BlendSide`): t0 is one of the
                  previous side's candidates, t1 one of the following side's.
    fps, phase_length_s   as in :func:`blend_cost_terms`.
                  (The sides' candidates are the possible range S of eq. 9.)
    weights       ``(w_t, w_p, w_v)``, e.g. :func:`blend_weights` of W.
    limits        :class:`BlendLimits`: the shortest and longest range, and the
                  speed and accelerations a range may ask of the body.
    exhaustive_pairs  up to this many candidate pairs every pair is evaluated
                  (faster than searching at that size); 0 always searches.
    coarse_step   candidates between coarse samples; default about 0.1 s
                  (:data:`COARSE_STEP_S` times ``fps``, at least 1).

    Coarse to fine (end of 4.3):

    1. *Coarse.* D, the one costly term, on every ``coarse_step``-th
       candidate of each side (both ends included), with the exact costs of
       those pairs. The best of them bounds the optimum, and since every
       term is >= 0, no pair whose ``w_t Q_t`` alone exceeds that bound can
       win: the search narrows to a band of durations ``t1 - t0``.
    2. *Estimate.* In the band, D is interpolated linearly from the coarse
       grid (it compares two clips' poses and is as smooth in t0 and t1 as
       the motion), while durations and velocities are exact: the cheap
       terms are the sharp ones (eq. 11, and ``D / (t1 - t0)`` inside the
       absolute values of eq. 14 make valleys a frame or two wide). Ranges
       shorter than a few coarse steps, where ``D / (t1 - t0)`` magnifies the
       interpolation error, are evaluated exactly instead.
    3. *Fine.* From each of the best few local minima of the estimate, a
       walk downhill on exact costs at 1-frame resolution: evaluate the
       candidates within ``coarse_step`` of the pair, move to the best,
       stop when the pair is that best.

    The result is the best pair evaluated exactly. It equals
    :func:`exhaustive_blend_range` on the real and the seeded random pairs of
    the tests (over 3000 random smooth problems, one differed, by 0.02 % of
    the cost), and takes about half its time at 300 x 300 candidates, a
    sixth at 1200 x 1200.

    Raises ValueError when a candidate set is empty or no pair has ``t0 < t1``.
    """
    search = _Search(previous, following, fps=fps, phase_length_s=phase_length_s, weights=weights, limits=limits)
    if search.max_frames is not None:
        return _in_blocks(search, coarse_step, exhaustive_pairs)
    found = search.result(*_optimal(search, coarse_step, exhaustive_pairs))
    if found.excess <= 1.0:
        return found
    return _gentlest(search)  # no pair keeps within the limits: the gentlest there is


def _in_blocks(search: "_Search", coarse_step: int | None, exhaustive_pairs: int) -> BlendRange:
    """:func:`optimal_blend_range` over the blocks of a bounded search (:meth:`_Search.blocks`).

    Each block is searched as a whole search is, and the blocks' best pairs
    compared on their exact cost, an earlier block winning a tie (as the first
    pair wins one within a search). When no block has a pair within the
    limits, the gentlest pair of all blocks.
    """
    best = None  # (cost, block, i, j)
    blocks = search.blocks()
    for block in blocks:
        i, j = _optimal(block, coarse_step, exhaustive_pairs)
        cost = float(block.cost(np.array([i]), np.array([j]))[0])
        if np.isfinite(cost) and (best is None or cost < best[0]):
            best = (cost, block, i, j)
    if best is None:
        # no pair keeps within the limits (or min_frames): the gentlest there is
        for block in blocks:
            every = np.arange(len(block.t0))[:, None], np.arange(len(block.t1))[None, :]
            cost = block.gentlest_cost(*every) if block.limited else block.cost(*every)
            i, j = _best(cost)
            if best is None or cost[i, j] < best[0]:
                best = (float(cost[i, j]), block, i, j)
    return best[1].result(best[2], best[3])


def _optimal(search: "_Search", coarse_step: int | None, exhaustive_pairs: int) -> tuple[int, int]:
    """The search of :func:`optimal_blend_range` on a prepared :class:`_Search`: the
    candidate indices of the best pair it finds."""
    step = max(1, int(round(COARSE_STEP_S * search.fps))) if coarse_step is None else int(coarse_step)
    if step < 1:
        raise ValueError(f"coarse_step must be at least 1 frame, got {coarse_step}")
    K0, K1 = len(search.t0), len(search.t1)
    if K0 * K1 <= exhaustive_pairs:
        # a few hundred pairs cost less to evaluate outright than to plan a search over
        everything = search.cost(np.arange(K0)[:, None], np.arange(K1)[None, :])
        return _best(everything)
    exact = np.full((K0, K1), np.nan)  # NaN: not evaluated yet

    # 1. coarse: D and exact costs on every step-th candidate, a first best pair
    gi = np.unique(np.r_[np.arange(0, K0, step), K0 - 1])
    gj = np.unique(np.r_[np.arange(0, K1, step), K1 - 1])
    coarse = search.distance(gi[:, None], gj[None, :])
    exact[np.ix_(gi, gj)] = search.cost(gi[:, None], gj[None, :], coarse)
    best = _best(exact[np.ix_(gi, gj)])
    best = int(gi[best[0]]), int(gj[best[1]])
    # the band of durations that can still win, held as (K0, width): column
    # k of row i is the candidate band[i, k] = first[i] + k
    shortest, longest = search.durations_below(exact[best])
    first = np.searchsorted(search.t1, search.t0 + shortest)
    count = np.searchsorted(search.t1, search.t0 + longest, side="right") - first
    band = np.minimum(first[:, None] + np.arange(max(count.max(), 1)), K1 - 1)
    rows = np.arange(K0)[:, None]
    inside = np.arange(band.shape[1]) < count[:, None]

    # 2. estimate: D interpolated, durations and velocities exact; short ranges exact
    along = _interpolate(coarse, search.t1, gj, axis=1)  # (coarse rows, K1)
    left, a = _interpolation(search.t0, gi)
    distance = along[left[:, None], band]
    distance += a[:, None] * (along[np.minimum(left + 1, len(gi) - 1)[:, None], band] - distance)
    estimate = search.cost(rows, band, distance)
    estimate[~inside] = np.inf
    short = inside & (search.t1[band] - search.t0[:, None] <= _EXACT_SPAN * step)
    width = int(short.sum(axis=1).max()) if short.any() else 0
    if width:
        # short ranges come first in each row of the band
        near = search.cost(rows, band[:, :width])
        short = short[:, :width]
        estimate[:, :width][short] = exact[np.broadcast_to(rows, short.shape)[short], band[:, :width][short]] = near[short]

    # 3. fine: all walks advance together (one array evaluation per round,
    # not per walk); every move lowers a walk's cost, so the rounds end.
    # Minima of the band's (row, column) grid are local in (t0, t1) too:
    # its neighbours are pairs a frame or two away in t0 and t1.
    at = np.array([(i, band[i, k]) for i, k in _grid_minima(estimate, _COARSE_SEEDS)], dtype=np.int64).reshape(-1, 2)
    radius = max(1, int(round(_WALK_RADIUS * step)))
    reach = np.arange(-radius, radius + 1)
    while len(at):
        i = np.clip(at[:, 0, None, None] + reach[:, None], 0, K0 - 1)  # (walks, 2r + 1, 1)
        j = np.clip(at[:, 1, None, None] + reach[None, :], 0, K1 - 1)  # (walks, 1, 2r + 1)
        near = exact[i, j]
        if np.isnan(near).any():
            near = search.cost(i, j)
            exact[i, j] = near
        near = near.reshape(len(at), -1)
        k = np.argmin(near, axis=1)
        walks = np.arange(len(at))
        moved = near[walks, k] < exact[at[:, 0], at[:, 1]]
        for stop in at[~moved]:  # a walk that stays put is the best of everything it saw
            if exact[stop[0], stop[1]] < exact[best]:
                best = int(stop[0]), int(stop[1])
        i, j = np.broadcast_arrays(i, j)
        at = np.stack([i.reshape(len(at), -1)[walks, k], j.reshape(len(at), -1)[walks, k]], axis=1)[moved]
    return best


def _gentlest(search: "_Search") -> BlendRange:
    """The pair of least excess over the limits, every pair evaluated.

    Only reached when no pair keeps within them, and the coarse-to-fine
    bounds of :func:`_optimal` hold for eq. (9), not for the excess.
    """
    return search.result(*_best(search.gentlest_cost(np.arange(len(search.t0))[:, None], np.arange(len(search.t1))[None, :])))


def _best(cost: np.ndarray) -> tuple[int, int]:
    i, j = np.unravel_index(np.argmin(cost), cost.shape)
    return int(i), int(j)


def _interpolation(x: np.ndarray, knots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Linear interpolation from ``x[knots]`` to every ``x`` (sorted): left knot (index into knots) and weight of the right one."""
    if len(knots) == 1:
        return np.zeros(len(x), dtype=np.int64), np.zeros(len(x))
    xk = x[knots].astype(np.float64)
    left = np.clip(np.searchsorted(xk, x, side="right") - 1, 0, len(xk) - 2)
    return left, (x - xk[left]) / (xk[left + 1] - xk[left])


def _interpolate(values: np.ndarray, x: np.ndarray, knots: np.ndarray, axis: int) -> np.ndarray:
    """Values known at ``x[knots]`` along ``axis``, linearly interpolated to every ``x``."""
    left, a = _interpolation(x, knots)
    right = np.minimum(left + 1, len(knots) - 1)
    lo = np.take(values, left, axis=axis)
    out = np.take(values, right, axis=axis)
    out -= lo
    out *= a[:, None] if axis == 0 else a[None, :]
    out += lo
    return out


def _grid_minima(cost: np.ndarray, count: int) -> list[tuple[int, int]]:
    """Up to ``count`` finite local minima (3 x 3 neighbourhood, ties allowed) of a 2-D array, best first."""
    # a 3 x 3 minimum filter as two separable passes of shifted minima
    low = cost.copy()
    np.minimum(low[:, 1:], cost[:, :-1], out=low[:, 1:])
    np.minimum(low[:, :-1], cost[:, 1:], out=low[:, :-1])
    neighbourhood = low.copy()
    np.minimum(neighbourhood[1:], low[:-1], out=neighbourhood[1:])
    np.minimum(neighbourhood[:-1], low[1:], out=neighbourhood[:-1])
    i, j = np.nonzero((cost <= neighbourhood) & np.isfinite(cost))
    values = cost[i, j]
    if len(values) > count:
        keep = np.argpartition(values, count)[:count]
        i, j, values = i[keep], j[keep], values[keep]
    order = np.argsort(values, kind="stable")
    return [(int(i[k]), int(j[k])) for k in order]
