"""Motion composition: an additional upper-body motion over a base motion (Oshita 2008, section 8).

An *additional motion* is a clip that lies wholly inside another on the timeline
and mainly moves its arms: the range of one shoulder's angle exceeds a threshold
(8.1). Its right arm, its left arm or, when both arms move, its whole upper body
(both arms, spine and neck) replace the base motion's, blended in and out (Fig. 6).
Copying arm channels alone leaves the body stiff: the arm's swing shakes the spine
and the pelvis. That *vibration* is extracted as the difference between the
additional motion's spine angles and pelvis position and a Hermite curve through
their values and velocities where the movement starts and ends (eq. 3), and added
to the base motion. The base motion's feet stay exactly where they were: the
added pelvis movement is scaled down vertically where it would over-extend a leg,
and the legs are solved by IK onto the base motion's ankles, their knees bending
where the base's bend. Both are continuous functions of the base motion, so that
rounding-sized changes of the input change the composite as little (see
:func:`largest_share`, :func:`knee_poles`).

Conventions as in :mod:`core.motion`: local rotations ``(F, J, 4)`` (w, x, y, z),
local translations ``(F, J, 3)``; frame ranges are end inclusive; the
:class:`Composition` record gives output frames.
"""

from __future__ import annotations

import numpy as np

from . import quat
from .analysis import horizontal, pelvis_facing
from .ik import legs_ik
from .motion import Motion, forward_kinematics
from .plan import LEFT_ARM, RIGHT_ARM, UPPER_BODY, Clip, Composition
from .render import blend, move_pelvis
from .rig import Rig, leg_length
from .weights import cubic_hermite, hermite_weights

__all__ = ["Composition", "compose", "shoulder_angles", "additional_parts", "movement_range", "hermite_curve",
           "vibration", "rotation_vibration", "composition_weights", "blend_ranges", "leg_safe_shift", "largest_share",
           "margin_bend", "knee_poles", "RIGHT_ARM", "LEFT_ARM", "UPPER_BODY"]

# Share of a shoulder angle's range by which the angle must have left its first
# (last) value for the movement to have started (not yet ended): t2 and t3 of Fig. 6.
MOVEMENT_SHARE = 0.1
# The composite's legs stretch at most this share of the leg short of straight, unless the
# base motion itself stretches them further (leg_safe_shift). The feet stay exactly on the
# base's, so the legs are solved with no soft zone (core.ik.soft_extension with zone 0,
# the clamp): this margin keeps the knee off the clamp instead.
KNEE_MARGIN = 0.01


# --- analysis of an additional motion (8.1) -------------------------------------------


def shoulder_angles(positions: np.ndarray, rig: Rig) -> np.ndarray:
    """``(F, J, 3)`` world joint positions -> ``(F, 2)`` left, right shoulder angles in degrees (8.1).

    The angle between the upper arm (shoulder to elbow) and the trunk's downward
    axis (neck, or chest, to pelvis): 0 for a hanging arm, 90 held out, 180 raised.
    Measured against the trunk, it ignores how the whole body turns or leans,
    and a walk's forward-and-back swing moves it little.
    """
    top = next((j for j in (rig.neck, rig.chest) if j is not None), None)
    if top is None or rig.left_arm is None or rig.right_arm is None:
        raise ValueError("motion composition needs a rig with a spine (neck or chest) and two arms")
    down = positions[:, rig.pelvis] - positions[:, top]
    arms = np.stack([positions[:, rig.arm(s).elbow] - positions[:, rig.arm(s).shoulder] for s in "LR"], axis=1)
    cos = np.sum(down[:, None] * arms, axis=-1) / np.maximum(
        np.linalg.norm(down, axis=-1)[:, None] * np.linalg.norm(arms, axis=-1), 1e-12)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def additional_parts(angles: np.ndarray, *, threshold_deg: float) -> str | None:
    """``(F, 2)`` shoulder angles -> which parts an additional motion uses, None when it is none (8.1).

    An arm is used when the range (max - min) of its shoulder angle exceeds
    ``threshold_deg``; both arms used means the whole upper body (spine and neck too).
    """
    if not len(angles):
        return None
    left, right = np.ptp(angles, axis=0) > threshold_deg
    if left and right:
        return UPPER_BODY
    return LEFT_ARM if left else RIGHT_ARM if right else None


def movement_range(angles: np.ndarray, parts: str) -> tuple[int, int]:
    """``(F, 2)`` shoulder angles -> (t2, t3), the clip frames where the used arms start and stop moving (Fig. 6).

    t2: the first frame at which a used arm's angle has left its first value by more
    than MOVEMENT_SHARE of its range; t3: the last frame at which one is that far
    from its last value.
    """
    used = {LEFT_ARM: [0], RIGHT_ARM: [1], UPPER_BODY: [0, 1]}[parts]
    a = angles[:, used]
    tolerance = MOVEMENT_SHARE * np.ptp(a, axis=0)
    left_start = np.any(np.abs(a - a[0]) > tolerance, axis=1)
    left_end = np.any(np.abs(a - a[-1]) > tolerance, axis=1)
    t2 = int(np.argmax(left_start)) if left_start.any() else 0
    t3 = int(len(a) - 1 - np.argmax(left_end[::-1])) if left_end.any() else len(a) - 1
    t2 = max(t2 - 1, 0)  # the last frame still at rest
    t3 = min(t3 + 1, len(a) - 1)
    return (t2, max(t3, t2 + 1)) if len(a) > 1 else (0, 0)


def hermite_curve(values: np.ndarray, t2: int, t3: int) -> np.ndarray:
    """θ_b of eq. (3): ``(F, D)`` values -> ``(F, D)``, the cubic Hermite curve through the
    values and velocities (per frame) at t2 and t3, between them; the values themselves elsewhere."""
    values = np.asarray(values, dtype=np.float64)
    velocity = np.gradient(values, axis=0) if len(values) > 1 else np.zeros_like(values)
    n = t3 - t2
    s = (np.arange(t2, t3 + 1) - t2) / max(n, 1)
    s = s.reshape((-1,) + (1,) * (values.ndim - 1))
    # velocities are per frame; the curve's parameter runs over n frames
    curve = cubic_hermite(s, values[t2], n * velocity[t2], values[t3], n * velocity[t3])
    out = values.copy()
    out[t2:t3 + 1] = curve
    return out


def vibration(values: np.ndarray, t2: int, t3: int) -> np.ndarray:
    """Eq. (3), θ_v(t) = θ(t) - θ_b(t): ``(F, D)`` -> ``(F, D)``, zero outside [t2, t3].

    The Hermite curve meets the values and their velocities at t2 and t3, so the
    vibration starts and ends at rest: adding it to another motion leaves no jump.
    """
    return np.asarray(values, dtype=np.float64) - hermite_curve(values, t2, t3)


def rotation_vibration(rotations: np.ndarray, t2: int, t3: int) -> np.ndarray:
    """Eq. (3) on joint rotations: ``(F, K, 4)`` local quaternions -> ``(F, K, 3)`` rotation vectors.

    Each DOF is a component of the rotation from the pose at t2 (a rotation vector:
    the spine turns little, so its three components behave like three angles).
    """
    relative = quat.unroll(quat.inv_mul(rotations[t2], rotations), axis=0)
    angles = quat.log(relative)  # log standardizes the sign: small turns stay small
    F, K, _ = angles.shape
    return vibration(angles.reshape(F, K * 3), t2, t3).reshape(F, K, 3)


def composition_weights(n_frames: int, blend_in: tuple[int, int], blend_out: tuple[int, int]) -> np.ndarray:
    """``(F,)`` weight of the additional body parts (Fig. 6): 0 before ``blend_in``, rising
    over it (a Hermite weight with zero end slopes), 1 between, falling over ``blend_out``."""
    t = np.arange(n_frames, dtype=np.float64)
    rise = hermite_weights((t - blend_in[0]) / max(blend_in[1] - blend_in[0], 1), 0.0, 0.0)
    fall = 1.0 - hermite_weights((t - blend_out[0]) / max(blend_out[1] - blend_out[0], 1), 0.0, 0.0)
    return np.minimum(rise, fall)


def blend_ranges(movement: tuple[int, int], n_frames: int, blend_frames: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(blend in, blend out) clip frames (Fig. 6): the parts blend in over ``blend_frames``
    up to t2 and out from t3, as far as the clip has frames; a clip that moves at
    once blends in over its first frames of movement instead (and so at its end)."""
    t2, t3 = movement
    last = n_frames - 1
    a0 = max(0, t2 - blend_frames)
    a1 = min(max(t2, a0 + blend_frames), t3)
    b1 = min(last, t3 + blend_frames)
    b0 = max(min(t3, b1 - blend_frames), a1)
    return (a0, a1), (b0, b1)


def parts_mask(skeleton, rig: Rig, parts: str) -> np.ndarray:
    """(J,) bool: the joints an additional motion's ``parts`` replace in the base motion."""
    if parts == UPPER_BODY:
        return rig.upper_body_mask(skeleton)
    arm = rig.arm("R" if parts == RIGHT_ARM else "L")
    return rig.subtree_mask(skeleton, arm.joints[0])


def spine_joints(rig: Rig) -> list[int]:
    """The joints whose angles carry an arm's vibration: the spine up to the neck (8.1)."""
    return list(rig.spine) + ([rig.neck] if rig.neck is not None and rig.neck not in rig.spine else [])


# --- legs ----------------------------------------------------------------------------


def largest_share(start: np.ndarray, move: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """``(F, 3), (F, 3), (F,)`` -> ``(F,)``: the largest k in [0, 1] with |start + k move| <= limit.

    ``start`` (a hip relative to its ankle) is within ``limit``. The points within
    reach along the move form one interval around k = 0, whose upper end is the
    larger root of a quadratic. That root is taken even where rounding puts
    ``start`` a hair beyond the limit (a leg already at its limit, as a leg
    stretched further than the margin is, or one the horizontal share just
    stretched to it): the share then stays a continuous function of the legs,
    none for a move outwards and the part of the move inwards that stays within
    reach, rather than dropping to none on the sign of a rounding error.
    """
    a = np.sum(move * move, axis=-1)
    b = np.sum(start * move, axis=-1)
    c = np.sum(start * start, axis=-1) - limit * limit
    root = np.sqrt(np.maximum(b * b - a * c, 0.0))
    k = np.where(a > 1e-18, (root - b) / np.where(a > 1e-18, a, 1.0), 1.0)
    return np.clip(k, 0.0, 1.0)


def leg_safe_shift(shift: np.ndarray, hips: np.ndarray, ankles: np.ndarray, reach: np.ndarray, up: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The pelvis vibration ``shift (F, 3)`` with its vertical part scaled down where a leg would
    over-extend, and the share kept ``(F,)``.

    hips, ankles (F, 2, 3) the base motion's, world; reach (2,) leg lengths. A leg may
    stretch to (1 - KNEE_MARGIN) of its length, or as far as the base motion stretches
    it. The horizontal part is kept (scaled too only where it alone would over-extend).
    """
    start = hips - ankles
    limit = np.maximum((1.0 - KNEE_MARGIN) * reach, np.linalg.norm(start, axis=-1))  # (F, 2)
    flat = horizontal(shift, up)
    vertical = shift - flat
    k_flat = largest_share(start, flat[:, None], limit).min(axis=1)
    start = start + (k_flat[:, None] * flat)[:, None]
    k_up = largest_share(start, vertical[:, None], limit).min(axis=1)
    return k_flat[:, None] * flat + k_up[:, None] * vertical, k_up


def margin_bend(thigh: np.ndarray, shin: np.ndarray) -> np.ndarray:
    """How far a knee stands off its hip-ankle line when the leg is stretched to (1 - KNEE_MARGIN)
    of its length: bone lengths ``(...)`` -> ``(...)``, in their unit (law of cosines)."""
    d = (1.0 - KNEE_MARGIN) * (thigh + shin)
    along = (thigh * thigh - shin * shin + d * d) / np.maximum(2.0 * d, 1e-300)  # (no bones: no offset)
    return np.sqrt(np.maximum(thigh * thigh - along * along, 0.0))


def knee_poles(hips: np.ndarray, knees: np.ndarray, ankles: np.ndarray, pelvis: np.ndarray, forward: np.ndarray
               ) -> np.ndarray:
    """Where the composed legs' knees point: the base motion's world hips, knees, ankles ``(F, L, 3)``,
    its pelvis's world rotations ``(F, 4)`` and facing ``forward (F, 3)`` -> ``(F, L, 3)`` poles
    for :func:`core.ik.legs_ik`.

    The base's own knee direction, its knee's offset from the hip-ankle line, plus a
    fallback scaled by the offset a knee has at the margin stretch (:func:`margin_bend`):
    a bent leg keeps bending where it bends, while as a leg nears straight its offset,
    and with it the meaning of its direction, shrinks to nothing (a straight leg's twist
    does not show in its joints, and rounding turns a tiny offset any way), and the pole
    turns smoothly to the fallback. The fallback is where this knee points relative to
    the pelvis over the span, each frame weighted by its offset (so by how clearly it
    bends), plus the facing weighted by the margin offset (for a leg straight throughout).
    Each is a continuous function of the joints, where a pole from the offset alone, or
    from the nearest clearly bent frame as :func:`core.ik.bend_directions` takes it,
    jumps under rounding wherever a leg the base holds straight bends as the pelvis dips.
    """
    line = ankles - hips
    line = line / np.maximum(np.linalg.norm(line, axis=-1, keepdims=True), 1e-300)
    offset = knees - hips
    offset = offset - np.sum(offset * line, axis=-1, keepdims=True) * line
    size = np.linalg.norm(offset, axis=-1, keepdims=True)
    margin = margin_bend(np.linalg.norm(knees - hips, axis=-1), np.linalg.norm(ankles - knees, axis=-1))[..., None]
    # in the pelvis frame, weighted by the offset as a share of the margin offset: a length, as the facing's weight is
    typical = np.mean(size / np.maximum(margin, 1e-300) * quat.inv_mul_vec(pelvis[:, None], offset), axis=0)  # (L, 3)
    fallback = quat.mul_vec(pelvis[:, None], typical) + margin * forward[:, None]
    fallback = fallback / np.maximum(np.linalg.norm(fallback, axis=-1, keepdims=True), 1e-300)
    return offset + margin * fallback


# --- composition (8.2) -----------------------------------------------------------------


def compose(
    base: Motion, base_first: int, clip: Clip, rig: Rig, up: np.ndarray, *, threshold_deg: float, blend_s: float,
    base_name: str = "", parts: str | None = None,
) -> tuple[Motion, Composition] | None:
    """``clip`` composed over ``base`` as an additional motion (2008, section 8), or None when it is none.

    base        the output so far; its frame 0 plays at output frame ``base_first``;
                the clip must lie wholly inside it.
    rig, up     the synthesis's joint roles and up axis.
    threshold_deg  a shoulder angle range above this makes an arm additional (8.1).
    blend_s     seconds over which the parts blend in before and out after the movement.
    parts       the parts it lends when already decided (on the whole of a clip this one is
                cut from); None: decided here, from its shoulder angles (8.1).

    The used parts take the clip's local rotations (and translations), blended in and
    out (Fig. 6); the spine angles (one arm) and the pelvis position carry the clip's
    vibration (eq. 3), the pelvis's turned from the clip's facing to the base's and
    scaled down vertically where a leg would over-extend; the legs are solved onto
    the base motion's ankle positions and orientations, so the feet do not move.
    """
    motion = clip.motion
    first = clip.start - base_first
    if first < 0 or first + motion.n_frames > base.n_frames:
        raise ValueError(f"clip '{clip.name}' (output frames {clip.start}..{clip.end}) does not lie inside the "
                         f"motion it is composed over (output frames {base_first}..{base_first + base.n_frames - 1})")
    positions, _ = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, rotations_out=False)
    angles = shoulder_angles(positions, rig)
    parts = parts or additional_parts(angles, threshold_deg=threshold_deg)
    if parts is None:
        return None
    t2, t3 = movement_range(angles, parts)
    span = slice(first, first + motion.n_frames)
    blend_in, blend_out = blend_ranges((t2, t3), motion.n_frames, max(int(round(blend_s * motion.fps)), 1))
    w = composition_weights(motion.n_frames, blend_in, blend_out)

    rotations, local = np.array(base.rotations), np.array(base.positions)
    mask = parts_mask(base.skeleton, rig, parts)
    rot, pos = blend((rotations[span][:, mask], local[span][:, mask]),
                     (motion.rotations[:, mask], motion.positions[:, mask]), w)
    rotations[span, mask], local[span, mask] = rot, pos

    spine_deg = 0.0
    if parts != UPPER_BODY:
        spine = spine_joints(rig)
        spine_v = rotation_vibration(motion.rotations[:, spine], t2, t3)
        rotations[span, spine] = quat.mul(rotations[span][:, spine], quat.exp(spine_v))
        spine_deg = float(np.degrees(np.linalg.norm(spine_v, axis=-1).max(initial=0.0)))

    # the pelvis vibration, turned from the clip's facing (over its movement) to the base's at each frame
    legs = [rig.leg(s) for s in "LR"]
    shift = vibration(positions[:, rig.pelvis], t2, t3)
    clip_facing = pelvis_facing(positions[t2:t3 + 1, legs[0].hip], positions[t2:t3 + 1, legs[1].hip], up).mean(axis=0)
    base_joints = [rig.pelvis] + [j for leg in legs for j in (leg.hip, leg.ankle)] + [leg.knee for leg in legs]
    gpos, grot = forward_kinematics(base.rotations[span], base.positions[span], base.skeleton.parents, base_joints)
    base_facing = pelvis_facing(gpos[:, 1], gpos[:, 3], up)
    shift = quat.mul_vec(quat.between(np.broadcast_to(clip_facing, base_facing.shape), base_facing), shift)
    hips, ankles = gpos[:, [1, 3]], gpos[:, [2, 4]]
    reach = np.array([leg_length(base.skeleton, rig, s) for s in "LR"])
    safe, _ = leg_safe_shift(shift, hips, ankles, reach, up)
    rise = np.abs(shift @ up).max(initial=0.0)
    kept = np.abs(safe @ up).max(initial=0.0) / rise if rise > 0.0 else 1.0
    shift = safe
    rot_span, pos_span = move_pelvis((rotations[span], local[span]), base.skeleton, rig, shift)
    local[span] = pos_span

    composed = Motion.unchecked(base.skeleton, rotations, local, base.fps)  # slerps and products of unit quaternions
    # the legs onto the base's ankles wherever the pelvis moved (t2..t3): the feet do not move
    moved = np.arange(first + t2, first + t3 + 1)
    targets = np.zeros((base.n_frames, 2, 3))
    turns = np.tile(quat.identity((1, 2)), (base.n_frames, 1, 1))
    poles = np.zeros((base.n_frames, 2, 3))
    targets[span], turns[span] = ankles, grot[:, [2, 4]]
    poles[span] = knee_poles(hips, gpos[:, [5, 6]], ankles, grot[:, 0], base_facing)
    composed = legs_ik(composed, [(leg.hip, leg.knee, leg.ankle) for leg in legs], targets, ankle_rotations=turns,
                       poles=poles, frames=moved, zone=0.0)
    record = Composition(
        clip=clip.name, base=base_name, parts=parts,
        shoulder_range_deg=tuple(float(v) for v in np.ptp(angles, axis=0)),
        movement=(clip.start + t2, clip.start + t3),
        blend_in=(clip.start + blend_in[0], clip.start + blend_in[1]),
        blend_out=(clip.start + blend_out[0], clip.start + blend_out[1]),
        spine_vibration_deg=spine_deg,
        pelvis_vibration=float(np.linalg.norm(shift, axis=-1).max(initial=0.0)),
        vertical_scale=float(kept),
    )
    return composed, record
