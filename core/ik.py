"""Analytic two-bone inverse kinematics for legs (Oshita 2008, §7.2).

Motion adaptation moves the feet of a clip to new positions and lets inverse
kinematics repose the legs. A leg is a chain of three joints, *root*, *mid*
and *end* (hip, knee, ankle), and the solution is closed form: the law of
cosines gives the knee angle, and a bend direction (the *pole*, where the
knee should point) removes the one remaining degree of freedom, the swivel of
the leg about the hip-target line.

Conventions are those of :mod:`core.quat` and :mod:`core.motion`: unit
quaternions ``(w, x, y, z)``, positions in the clip's own unit, everything
vectorised over leading frame axes ``...``; nothing here changes its inputs.

The solution in three rotations, all expressed in the world frame:

1. the knee turns about its current bend axis (the normal of the plane of the
   three joints) until the hip-ankle distance equals the hip-target distance,
   so a hinge knee stays a hinge: its rotation axis does not change;
2. the whole leg turns about the hip, by the shortest arc, until the ankle
   lies on the hip-target line;
3. the whole leg twists about the hip-target line until the knee lies on the
   side of that line that ``pole`` points to.

The hip-target distance is clamped to ``[|l_thigh - l_shin|, l_thigh + l_shin]``,
so an unreachable target gives a straight leg pointing at it, and one too
close gives a fully folded leg. Degenerate input never produces NaN: a target
at the hip, a straight leg, or a pole along the leg each fall back to a
documented choice (see :func:`two_bone_ik`).
"""

from __future__ import annotations

import numpy as np

from . import quat
from .motion import Motion, forward_kinematics

# Directions shorter than this (in the clip's unit, or as a sine for angles) are
# treated as undefined, and a fallback is used instead.
_TINY = 1e-9


def _norm(v: np.ndarray) -> np.ndarray:
    # np.linalg.norm's own arithmetic for real input (the same bits) without its dispatch: hot, on a few frames
    return np.sqrt(quat.sum_last(v * v, keepdims=True))


def _unit(v: np.ndarray, fallback) -> np.ndarray:
    """``v / |v|`` where ``|v|`` is not tiny, ``fallback`` (already unit) elsewhere.

    ``fallback`` may be a function making it: called only where some ``|v|`` is tiny
    (legs are rarely straight or folded, and the fallbacks cost as much as the rest:
    this runs on a few frames, where the count of numpy calls is the cost)."""
    n = _norm(v)
    ok = n > _TINY
    if ok.all():
        return v / n  # (np.where's values, every one taken from v / n)
    if callable(fallback):
        fallback = fallback()
    return np.where(ok, v / np.where(ok, n, 1.0), fallback)


def _any_perpendicular(v: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to ``v (..., 3)`` (cross with the least-aligned basis axis)."""
    basis = np.eye(3)[np.argmin(np.abs(v), axis=-1)]
    return _unit(quat.cross(v, basis), lambda: np.broadcast_to([1.0, 0.0, 0.0], v.shape))


def _perpendicular_part(v: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """The component of ``v`` perpendicular to unit ``axis``."""
    return v - quat.sum_last(v * axis, keepdims=True) * axis


def _signed_angle(u: np.ndarray, v: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Angle ``(...)`` turning ``u`` to ``v`` about ``axis`` (both perpendicular to it), right-handed."""
    return np.arctan2(quat.sum_last(axis * quat.cross(u, v)), quat.sum_last(u * v))


def two_bone_ik(
    root_pos: np.ndarray,
    mid_pos: np.ndarray,
    end_pos: np.ndarray,
    target: np.ndarray,
    pole: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Rotations that bring the end of a root-mid-end chain to ``target``.

    root_pos, mid_pos, end_pos  (..., 3) world positions of the three joints
                                (hip, knee, ankle).
    target                      (..., 3) where the end joint should go.
    pole                        (..., 3) bend direction: the knee ends up on the
                                side of the root-target line this points to
                                (only its part perpendicular to that line counts;
                                its length does not matter).

    Returns ``(root_delta, mid_delta)``, unit quaternions ``(..., 4)`` in the
    world frame. ``mid_delta`` turns the lower segment about the *current* mid
    joint; ``root_delta`` then turns the whole chain about the root joint. So,
    with ``G`` the current world rotations,

        new G_root = root_delta * G_root
        new G_mid  = root_delta * mid_delta * G_mid
        new mid    = root_pos + root_delta (mid_pos - root_pos)
        new end    = new mid  + root_delta mid_delta (end_pos - mid_pos)

    and any joint between root and mid moves with the root, any joint between
    mid and end with the mid. The end joint's own orientation is not decided
    here: applying the deltas to a pose would turn the foot with the shin;
    :func:`leg_ik` instead keeps the end's world orientation.

    Degenerate input (all without NaN):

    * target out of reach: straight chain pointing at the target; too close:
      fully folded chain on the root-target line;
    * target at the root: the chain keeps its current direction;
    * chain straight, so it has no bend plane: it bends towards ``pole``, or
      about an arbitrary axis perpendicular to it when ``pole`` lies along it;
    * ``pole`` along the root-target line (or zero), or the result straight:
      no swivel, the knee stays where step 2 put it.
    """
    a = np.asarray(root_pos, dtype=np.float64)
    b = np.asarray(mid_pos, dtype=np.float64)
    c = np.asarray(end_pos, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    pole = np.asarray(pole, dtype=np.float64)
    for name, v in (("root_pos", a), ("mid_pos", b), ("end_pos", c), ("target", t), ("pole", pole)):
        if v.shape[-1:] != (3,):
            raise ValueError(f"{name} must have shape (..., 3), got {v.shape}")
    if not a.shape == b.shape == c.shape == t.shape == pole.shape:
        a, b, c, t, pole = np.broadcast_arrays(a, b, c, t, pole)

    ab, bc = b - a, c - b
    l_ab, l_bc = _norm(ab)[..., 0], _norm(bc)[..., 0]
    # direction of the upper segment (of the whole chain if that has no length)
    thigh = _unit(ab, lambda: _unit(c - a, lambda: np.broadcast_to([0.0, 0.0, -1.0], a.shape)))

    # 1. Knee angle from the law of cosines, turning about the current bend axis.
    bend = quat.cross(ab, bc)
    bent = _norm(bend)[..., 0] > _TINY * np.maximum(l_ab * l_bc, _TINY)
    # A straight chain bends so that the knee moves towards the pole: the shin
    # then swings away from it, i.e. about pole x thigh.
    def fallback_axis():
        return _unit(quat.cross(pole, thigh), lambda: _any_perpendicular(thigh))
    if bent.all():  # (the usual case: np.where would take every value from the first branch)
        axis = _unit(bend, fallback_axis)
    else:
        fallback = fallback_axis()
        axis = np.where(bent[..., None], _unit(bend, fallback), fallback)

    l_at = np.clip(_norm(t - a)[..., 0], np.abs(l_ab - l_bc), l_ab + l_bc)
    denom = 2.0 * l_ab * l_bc
    has_bones = denom > _TINY
    cos_knee = (l_ab**2 + l_bc**2 - l_at**2) / np.where(has_bones, denom, 1.0)
    knee_new = np.arccos(np.clip(cos_knee, -1.0, 1.0))
    knee_now = np.arctan2(_norm(quat.cross(-ab, bc))[..., 0], quat.sum_last(-ab * bc))
    mid_delta = quat.from_axis_angle(axis, np.where(has_bones, knee_now - knee_new, 0.0))

    # 2. Point the chain at the target by the shortest arc about the root.
    c1 = b + quat.mul_vec(mid_delta, bc)
    ac1 = c1 - a
    d_now = _unit(ac1, thigh)
    to_target = _unit(t - a, d_now)
    swing = _shortest_arc(d_now, to_target, axis)
    # With no defined current direction (fully folded onto the root) there is nothing to turn.
    folded = ~(_norm(ac1) > _TINY)
    if folded.any():
        swing = np.where(folded, quat.identity(a.shape[:-1]), swing)

    # 3. Swivel about the root-target line so that the knee is on the pole side.
    knee_offset = _perpendicular_part(quat.mul_vec(swing, ab), to_target)
    pole_offset = _perpendicular_part(pole, to_target)
    defined = (_norm(knee_offset)[..., 0] > _TINY * np.maximum(l_ab, _TINY)) & (_norm(pole_offset)[..., 0] > _TINY)
    swivel_angle = np.where(defined, _signed_angle(knee_offset, pole_offset, to_target), 0.0)
    swivel = quat.from_axis_angle(to_target, swivel_angle)

    return quat.mul(swivel, swing), mid_delta


def _shortest_arc(u: np.ndarray, v: np.ndarray, axis_if_opposite: np.ndarray) -> np.ndarray:
    """Rotation taking unit ``u`` to unit ``v``; a half turn about the given axis when they are opposite.

    ``axis_if_opposite`` must be perpendicular to ``u`` (the bend axis is: ``u``
    lies in the bend plane), so the half turn keeps the chain in its plane.
    """
    w = 1.0 + quat.sum_last(u * v, keepdims=True)
    xyz = quat.cross(u, v)
    opposite = w < 1e-12
    if opposite.any():
        w, xyz = np.where(opposite, 0.0, w), np.where(opposite, axis_if_opposite, xyz)
    q = np.concatenate([w, xyz], axis=-1)
    return q / _norm(q)


def bend_directions(motion: Motion, hip: int | str, knee: int | str, ankle: int | str) -> np.ndarray:
    """Where each frame's knee points: ``(F, 3)`` world directions.

    The knee's offset from the hip-ankle line, as a unit vector. In frames
    where the leg is straight the direction is taken from the nearest frame
    in which it is bent, carried along in the frame of the hip's parent (the
    pelvis) so that it turns with the body. Raises ``ValueError`` when the leg
    is straight in every frame: then there is no knee direction to preserve
    and the caller must give ``poles`` (for example the character's forward).
    """
    hip, knee, ankle = _leg_joints(motion, hip, knee, ankle)
    parent = motion.skeleton.parents[hip]
    joints = [hip, knee, ankle] + ([parent] if parent >= 0 else [])
    gpos, grot = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, joints)
    frame = grot[:, 3] if parent >= 0 else quat.identity((motion.n_frames,))
    names = [motion.skeleton.names[j] for j in (hip, knee, ankle)]
    return _bend_directions(gpos[:, 0], gpos[:, 1], gpos[:, 2], frame, names)


def _bend_directions(a: np.ndarray, b: np.ndarray, c: np.ndarray, frame: np.ndarray, names) -> np.ndarray:
    """:func:`bend_directions` from world hip ``a``, knee ``b``, ankle ``c`` ``(F, 3)``
    and the world rotation ``frame (F, 4)`` of the hip's parent."""
    line = _unit(c - a, np.broadcast_to([0.0, 0.0, -1.0], a.shape))
    offset = _perpendicular_part(b - a, line)
    length = _norm(offset)[..., 0]
    bent = length > 1e-6 * np.maximum(_norm(b - a)[..., 0], _TINY)
    if len(a) and not np.any(bent):
        raise ValueError(
            f"the leg {names[0]!r}-{names[1]!r}-{names[2]!r} is straight in every frame, so it has no knee "
            "direction to keep; pass poles= (e.g. the character's forward direction)"
        )
    direction = offset / np.where(bent, length, 1.0)[:, None]
    if np.all(bent):
        return direction
    local = quat.inv_mul_vec(frame, direction)
    # nearest bent frame for every frame (ties go to the earlier one)
    good = np.flatnonzero(bent)
    frames = np.arange(len(a))
    after = np.clip(np.searchsorted(good, frames), 0, len(good) - 1)
    before = np.clip(after - 1, 0, len(good) - 1)
    nearest = np.where(np.abs(good[before] - frames) <= np.abs(good[after] - frames), good[before], good[after])
    return quat.mul_vec(frame, local[nearest])


def leg_ik(
    motion: Motion,
    hip: int | str,
    knee: int | str,
    ankle: int | str,
    targets: np.ndarray,
    *,
    poles: np.ndarray | None = None,
    ankle_rotations: np.ndarray | None = None,
) -> Motion:
    """A new motion whose ankle reaches ``targets``; ``motion`` is not changed.

    hip, knee, ankle  joint indices or names; the knee must descend from the
                      hip and the ankle from the knee (joints in between, such
                      as twist bones, move rigidly with their parent segment).
    targets           (F, 3) world positions for the ankle.
    poles             (F, 3) world bend directions (see :func:`two_bone_ik`);
                      by default the knee keeps pointing where it points now
                      (:func:`bend_directions`), i.e. it bends in its original
                      plane as far as the new target allows.
    ankle_rotations   (F, 4) world orientations to give the ankle; by default
                      the ankle keeps its current *world* orientation, so a
                      flat foot stays flat wherever the leg moves it.

    Only the local rotations of the hip, knee and ankle change; every other
    joint keeps its local transform (so toes follow the foot). Unreachable
    targets give a straight leg pointing at them (the ankle then stops short).
    """
    F = motion.n_frames
    targets = np.asarray(targets, dtype=np.float64)
    if targets.shape != (F, 3):
        raise ValueError(f"targets must have shape ({F}, 3) for a {F}-frame motion, got {targets.shape}")
    if ankle_rotations is not None:
        ankle_rotations = np.asarray(ankle_rotations, dtype=np.float64)
        if ankle_rotations.shape != (F, 4):
            raise ValueError(f"ankle_rotations must have shape ({F}, 4), got {ankle_rotations.shape}")
    if poles is not None:
        poles = np.asarray(poles, dtype=np.float64)
        if poles.shape != (F, 3):
            raise ValueError(f"poles must have shape ({F}, 3), got {poles.shape}")
    return legs_ik(motion, [(hip, knee, ankle)], targets[:, None],
                   poles=None if poles is None else poles[:, None],
                   ankle_rotations=None if ankle_rotations is None else ankle_rotations[:, None])


def legs_ik(
    motion: Motion,
    legs,
    targets: np.ndarray,
    *,
    poles: np.ndarray | None = None,
    ankle_rotations: np.ndarray | None = None,
    evaluated: tuple[list[int], np.ndarray, np.ndarray] | None = None,
    frames: np.ndarray | None = None,
) -> Motion:
    """:func:`leg_ik` for several legs at once: ``legs`` a list of (hip, knee, ankle).

    targets (F, L, 3), and poles (F, L, 3) and ankle_rotations (F, L, 4) if
    given, one column per leg. The legs must not share joints below their
    hips' parents (two legs of one pelvis): each is solved on the same
    forward kinematics, evaluated once.

    evaluated  that forward kinematics when the caller has it already:
               ``(joints, positions (F, K, 3), rotations (F, K, 4))`` of joints
               that include :func:`chain_joints` of the legs;
    frames     the only frames to solve (indices, increasing); the others keep
               their rotations. The default knee directions still come from
               every frame (a straight leg takes its nearest bent frame's).
    """
    chains = [_leg_joints(motion, *leg) for leg in legs]
    F, L = motion.n_frames, len(chains)
    for name, value, size in (("targets", targets, 3), ("poles", poles, 3), ("ankle_rotations", ankle_rotations, 4)):
        if value is not None and np.shape(value) != (F, L, size):
            raise ValueError(f"{name} must have shape ({F}, {L}, {size}), got {np.shape(value)}")
    targets = np.asarray(targets, dtype=np.float64)
    if F == 0:
        return motion
    parents = motion.skeleton.parents
    if evaluated is None:
        # only the legs' joints and their parents are needed: evaluate just those chains, once
        needed = chain_joints(parents, chains)
        evaluated = (needed, *forward_kinematics(motion.rotations, motion.positions, parents, needed))
    column = {j: k for k, j in enumerate(evaluated[0])}
    g_pos, g_rot = evaluated[1], evaluated[2]
    identity = quat.identity((F,))

    def world(joints) -> np.ndarray:
        """World rotations ``(F, L, 4)`` of one joint per leg (the identity above the root)."""
        if all(j >= 0 for j in joints):  # (one gather rather than a stack: this runs on a few frames)
            return g_rot[:, [column[j] for j in joints]]
        return np.stack([g_rot[:, column[j]] if j >= 0 else identity for j in joints], axis=1)

    hips, knees, ankles = (np.array(j) for j in zip(*chains))
    a, b, c = (g_pos[:, [column[j] for j in joints]] for joints in (hips, knees, ankles))
    if poles is None:
        pole = np.stack([_bend_directions(a[:, k], b[:, k], c[:, k], world([parents[hip]])[:, 0],
                                          [motion.skeleton.names[j] for j in chain])
                         for k, (hip, chain) in enumerate(zip(hips, chains))], axis=1)
    else:
        pole = poles
    if frames is not None:
        # every step below is per frame: the frames left out cost nothing
        a, b, c, targets, pole, g_rot, identity = (x[frames] for x in (a, b, c, targets, pole, g_rot, identity))
        ankle_rotations = None if ankle_rotations is None else np.asarray(ankle_rotations)[frames]
    # every leg in one call: the solver works on (..., 3) arrays
    root_delta, mid_delta = two_bone_ik(a, b, c, targets, pole)
    # Joints from the hip down to the knee's parent turn with root_delta; joints
    # from the knee down to the ankle's parent also turn with mid_delta.
    new_hip = quat.mul(root_delta, world(hips))
    new_knee = quat.mul(root_delta, quat.mul(mid_delta, world(knees)))
    # (where the knee hangs from the hip and the ankle from the knee, as in most rigs, their
    # parents' new rotations are those two, the same products: not computed twice)
    knee_parents, ankle_parents = parents[knees], parents[ankles]
    new_knee_parent = new_hip if np.array_equal(knee_parents, hips) else quat.mul(root_delta, world(knee_parents))
    new_ankle_parent = new_knee if np.array_equal(ankle_parents, knees) else quat.mul(
        root_delta, quat.mul(mid_delta, world(ankle_parents)))
    ankle_world = world(ankles) if ankle_rotations is None else ankle_rotations
    rotations = motion.rotations.copy()
    solved = rotations if frames is None else rotations[frames]
    solved[:, hips] = quat.inv_mul(world(parents[hips]), new_hip)
    solved[:, knees] = quat.inv_mul(new_knee_parent, new_knee)
    solved[:, ankles] = quat.inv_mul(new_ankle_parent, ankle_world)
    if frames is not None:
        rotations[frames] = solved
    return Motion._trusted(motion.skeleton, rotations, motion.positions, motion.fps)  # products of unit quaternions


def chain_joints(parents: np.ndarray, chains) -> list[int]:
    """The joints :func:`legs_ik` evaluates for leg ``chains`` (hip, knee, ankle): each
    chain's joints and their parents, sorted."""
    return sorted({int(j) for chain in chains for joint in chain for j in (joint, parents[joint]) if j >= 0})


def _leg_joints(motion: Motion, hip, knee, ankle) -> tuple[int, int, int]:
    skel = motion.skeleton
    joints = []
    for role, j in (("hip", hip), ("knee", knee), ("ankle", ankle)):
        if isinstance(j, str):
            j = skel.index(j)
        j = int(j)
        if not 0 <= j < len(skel):
            raise ValueError(f"{role} joint index {j} is out of range for a {len(skel)}-joint skeleton")
        joints.append(j)
    hip, knee, ankle = joints
    if hip == knee or knee == ankle or hip not in skel.chain(knee) or knee not in skel.chain(ankle):
        raise ValueError(
            f"not a leg chain: {skel.names[knee]!r} must descend from {skel.names[hip]!r} "
            f"and {skel.names[ankle]!r} from {skel.names[knee]!r}"
        )
    return hip, knee, ankle
