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

1. the knee bends about the leg's bend axis until the hip-ankle distance equals
   the hip-target distance, eased into the leg's reach (:func:`soft_extension`);
   a hinge knee stays a hinge: the axis is the normal of the plane of the three
   joints, or, where the leg is nearly straight and that plane is noise, turns
   smoothly to the one the pole gives;
2. the whole leg turns about the hip, by the shortest arc, until the ankle
   lies on the hip-target line;
3. the whole leg twists about the hip-target line until the knee lies on the
   side of that line that ``pole`` points to.

Near full extension the law of cosines moves the knee without bound for a
small change of reach, and a clamped distance snaps the leg straight: the
distance is eased instead over the last ``SOFT_ZONE`` of the reach, so a target
past reach gives a leg pointing at it, a little short of straight, and one too
close gives a fully folded leg. The default knee direction
(:func:`bend_directions`) is continuous in time, straight frames taking it
from the bent frames either side. Degenerate input never produces NaN: a
target at the hip, a straight leg, or a pole along the leg each fall back to a
documented choice (see :func:`two_bone_ik`).
"""

from __future__ import annotations

import numpy as np

from . import quat
from .motion import Motion, forward_kinematics
from .weights import smoothstep

# Directions shorter than this (in the clip's unit, or as a sine for angles) are
# treated as undefined, and a fallback is used instead.
_TINY = 1e-9

# The last share of a leg's reach over which the hip-target distance eases into it
# (:func:`soft_extension` says why this much).
SOFT_ZONE = 0.05
# Sines of the knee's bend: above BENT_SINE (about 3 degrees, the knee a centimetre or so
# off the hip-ankle line on an adult) the leg's own knee plane is trusted; below
# STRAIGHT_SINE the leg is straight and has none; in between the plane's say fades out
# along a smoothstep (:func:`own_plane_weight`), so no threshold makes a step.
BENT_SINE = 0.05
STRAIGHT_SINE = 1e-6


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


def soft_extension(distance: np.ndarray, reach: np.ndarray | float, zone: float | np.ndarray = SOFT_ZONE) -> np.ndarray:
    """The hip-target distance a leg of length ``reach`` is solved to: ``distance (...)``
    eased into the reach over its last ``zone`` share, ``(...)`` (``reach`` and ``zone``
    broadcast).

    The identity below ``start = (1 - zone) reach``; above it
    ``start + zone reach tanh((distance - start) / (zone reach))``: monotone, with the
    identity's value, slope and (tanh having none at 0) zero curvature where the zone
    starts, so the knee's acceleration does not step there; it approaches the reach only
    asymptotically, so the leg never locks straight and a target past reach gives a leg
    pointing at it, a little short. ``zone = 0`` gives the plain clamp ``min(distance, reach)``.

    Why 5 %: a leg of thigh ``a1`` and shin ``a2`` (reach ``L = a1 + a2``) stretched to
    ``L (1 - e)`` has its knee ``sqrt(2 e a1 a2)`` off the hip-ankle line (law of cosines,
    small bend), so the knee moves across that line ``sqrt(a1 a2 / (2 e)) / L`` per unit
    of reach: ``1 / sqrt(8 e)`` with equal bones, the worst case, and without bound as
    ``e -> 0`` (a clamped leg snaps). Eased so, the knee's speed across the line is at most
    ``1.09 / sqrt(8 zone)`` times the target's (where tanh is 1/3), plus about half the
    target's along it; keeping the knee under twice the target's speed needs
    ``zone >= 0.04``, and 0.05 leaves a margin (about 1.7x). The price: a target at full
    reach is met 1.2 % of the leg short (about a centimetre on an adult), the knee about
    18 degrees bent.
    """
    distance = np.asarray(distance, dtype=np.float64)
    width = np.maximum(zone, 0.0) * np.asarray(reach, dtype=np.float64)
    start = reach - width
    over = distance > start
    if not over.any():  # (the usual case: every target well within reach)
        return distance
    # (no zone, or a chain of no length: the clamp)
    eased = start + width * np.tanh((distance - start) / np.where(width > 0.0, width, 1.0))
    return np.where(over, eased, distance)


def own_plane_weight(sine: np.ndarray) -> np.ndarray:
    """How much a leg's own knee plane counts, from the sine of the knee's bend ``(...)``:
    0 for a leg straight to STRAIGHT_SINE (no plane), 1 from BENT_SINE on, along a
    smoothstep between, so that a plane fading into noise as the leg straightens hands
    over to another direction continuously."""
    return smoothstep((sine - STRAIGHT_SINE) / (BENT_SINE - STRAIGHT_SINE))


def two_bone_ik(
    root_pos: np.ndarray,
    mid_pos: np.ndarray,
    end_pos: np.ndarray,
    target: np.ndarray,
    pole: np.ndarray,
    *,
    zone: float | np.ndarray = SOFT_ZONE,
    reach: float | np.ndarray = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Rotations that bring the end of a root-mid-end chain to ``target`` (2008, §7.2).

    root_pos, mid_pos, end_pos  (..., 3) world positions of the three joints
                                (hip, knee, ankle).
    target                      (..., 3) where the end joint should go.
    pole                        (..., 3) bend direction: the knee ends up on the
                                side of the root-target line this points to
                                (only its part perpendicular to that line counts;
                                its length does not matter).
    zone                        share of the chain's length (upper plus lower
                                segment, per frame) over which the root-target
                                distance eases into it (:func:`soft_extension`):
                                a target in that zone or beyond is met short of
                                it, on the root-target line. 0: only clamped, so
                                a target at or past full reach snaps the chain
                                straight (for callers that keep their targets
                                within reach themselves and need them met exactly).
                                A share ``(...)`` of its own for each chain may be given.
    reach                       share of the chain's length it may stretch to, 1 by
                                default, or ``(...)``: the zone eases into that.

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

    * target out of reach: the chain pointing at the target, a little short
      of straight (straight with ``zone = 0``); too close: fully folded chain
      on the root-target line;
    * target at the root: the chain keeps its current direction;
    * chain straight, so it has no bend plane: it bends towards ``pole``, or
      about an arbitrary axis perpendicular to it when ``pole`` lies along it;
      a nearly straight chain (bend under BENT_SINE) bends about an axis turned
      smoothly from its own plane's normal to the pole's as it straightens;
    * ``pole`` along the root-target line (or zero): no swivel, the knee
      stays where step 2 put it.
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

    # 1. The knee's new angle from the law of cosines, on the distance eased into the
    # reach. It bends about the chain's own bend axis, so a hinge stays a hinge; but a
    # nearly straight chain's plane is rounding noise (a 1e-16 change of the input once
    # turned a straight thigh about itself): there the axis turns smoothly to the pole's,
    # about which the knee moves towards the pole (the shin swings away from it, i.e.
    # about pole x thigh).
    bend = quat.cross(ab, bc)
    bend_size = _norm(bend)
    sine = bend_size[..., 0] / np.maximum(l_ab * l_bc, _TINY)
    if (sine >= BENT_SINE).all():  # (the usual case: clearly bent, its own plane's normal throughout)
        axis = bend / bend_size
    else:
        from_pole = _unit(quat.cross(pole, thigh), lambda: _any_perpendicular(thigh))
        own = own_plane_weight(sine)[..., None]
        axis = _unit(own * _unit(bend, from_pole) + (1.0 - own) * from_pole, from_pole)

    l_at = np.maximum(soft_extension(_norm(t - a)[..., 0], reach * (l_ab + l_bc), zone), np.abs(l_ab - l_bc))
    denom = 2.0 * l_ab * l_bc
    has_bones = denom > _TINY
    cos_knee = np.clip((l_ab**2 + l_bc**2 - l_at**2) / np.where(has_bones, denom, 1.0), -1.0, 1.0)
    # the lower segment's new direction: the upper one's, turned about the axis by the new
    # bend (pi less the knee's angle); the knee turns by the shortest arc from where the
    # lower segment points now, about the axis itself where that is the chain's own normal
    lower = -cos_knee[..., None] * thigh + np.sqrt(1.0 - cos_knee * cos_knee)[..., None] * quat.cross(axis, thigh)
    mid_delta = _shortest_arc(_unit(bc, lower), lower, axis)
    if not has_bones.all():
        mid_delta = np.where(has_bones[..., None], mid_delta, quat.identity(a.shape[:-1]))

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

    # 3. Swivel about the root-target line so that the knee is on the pole side. The knee's
    # side of the line is the one the bend axis puts it on (line x axis): where it stands off
    # the line, and where a leg eased nearly straight has it there only to within rounding,
    # which would leave the thigh's turn about itself to chance.
    knee_side = quat.cross(to_target, quat.mul_vec(swing, axis))
    pole_offset = _perpendicular_part(pole, to_target)
    defined = (_norm(knee_side)[..., 0] > _TINY) & (_norm(pole_offset)[..., 0] > _TINY)
    swivel_angle = np.where(defined, _signed_angle(knee_side, pole_offset, to_target), 0.0)
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
    """Where each frame's knee points: ``(F, 3)`` world directions, continuous in time.

    The knee's offset from the hip-ankle line, as a unit vector, where the leg
    is clearly bent (a bend over BENT_SINE). Where it is straight the direction
    is interpolated in time between the bent frames either side, in the frame
    of the hip's parent (the pelvis) so that it turns with the body; a nearly
    straight frame mixes its own direction into that by how bent it is, so no
    threshold makes a step (:func:`own_plane_weight`). Raises ``ValueError``
    when the leg is straight in every frame: then there is no knee direction
    to preserve and the caller must give ``poles`` (for example the
    character's forward).
    """
    hip, knee, ankle = _leg_joints(motion, hip, knee, ankle)
    parent = motion.skeleton.parents[hip]
    joints = [hip, knee, ankle] + ([parent] if parent >= 0 else [])
    gpos, grot = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, joints)
    frame = grot[:, 3] if parent >= 0 else quat.identity((motion.n_frames,))
    names = [motion.skeleton.names[j] for j in (hip, knee, ankle)]
    return _bend_directions(gpos[:, 0], gpos[:, 1], gpos[:, 2], frame, names)


def _bend_directions(a: np.ndarray, b: np.ndarray, c: np.ndarray, frame: np.ndarray, names,
                     starts: np.ndarray | None = None) -> np.ndarray:
    """:func:`bend_directions` from world hip ``a``, knee ``b``, ankle ``c`` ``(F, 3)``
    and the world rotation ``frame (F, 4)`` of the hip's parent; ``starts (F,)``: frames
    that begin a run of their own (directions are carried only within runs)."""
    ab, bc = b - a, c - b
    line = _unit(c - a, np.broadcast_to([0.0, 0.0, -1.0], a.shape))
    offset = _perpendicular_part(ab, line)
    length = _norm(offset)
    sine = _norm(quat.cross(ab, bc))[..., 0] / np.maximum(_norm(ab)[..., 0] * _norm(bc)[..., 0], _TINY)
    if len(a) and not (sine > STRAIGHT_SINE).any():
        raise ValueError(
            f"the leg {names[0]!r}-{names[1]!r}-{names[2]!r} is straight in every frame, so it has no knee "
            "direction to keep; pass poles= (e.g. the character's forward direction)"
        )
    direction = offset / np.where(length > 0.0, length, 1.0)
    if (sine >= BENT_SINE).all():
        return direction
    own = own_plane_weight(sine)
    local = quat.inv_mul_vec(frame, direction)
    carried = quat.mul_vec(frame, _carried_directions(own, local, starts))
    # (a clearly bent frame's own to the bit, whether or not others are straight)
    return np.where(own[:, None] >= 1.0, direction, carried)


def _carried_directions(weights: np.ndarray, directions: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """Unit directions ``(F, 3)`` from ``directions (F, 3)`` that count as much as ``weights (F,)``
    in [0, 1] says: a frame's own where its weight is 1, and across frames of less weight an
    interpolation in time between the frames either side that have one. ``starts (F,)``:
    frames that begin a run, nothing carried into it (a run with no weight at all takes
    what is carried across runs).

    Carried forward, ``D_f = w_f d_f + (1 - w_f) D_(f-1)`` is the direction the last
    weighted frames had, and ``n_f = (1 - w_f) n_(f-1) + 1`` counts the frames since
    (1 on a frame of weight 1); carried backward likewise, ``D'`` and ``n'``. The mix
    ``n'_f D_f + n_f D'_f`` is linear in time across a run of weightless frames (nearer
    the nearer side's), a frame's own direction where its weight is 1, and a continuous
    function of the weights and directions everywhere: no threshold picks a frame.
    """
    keep = 1.0 - weights
    values = np.concatenate([weights[:, None] * directions, np.ones((len(weights), 1))], axis=-1)  # (D, n)
    forward_keep, backward_keep = keep, keep
    if starts is not None and starts[1:].any():
        ends = np.append(starts[1:], True)
        forward_keep, backward_keep = np.where(starts, 0.0, keep), np.where(ends, 0.0, keep)
    # forward, and backward as forward over the frames reversed, side by side
    carried = _affine_scan(np.stack([forward_keep, backward_keep[::-1]], axis=1), np.stack([values, values[::-1]], axis=1))
    forward, backward = carried[:, 0], carried[::-1, 1]
    mixed = backward[:, 3:] * forward[:, :3] + forward[:, 3:] * backward[:, :3]

    def fallback():
        # zero: a run with no weight at all (carried across runs), or the two sides'
        # directions opposite and equally near (either will do)
        if forward_keep is not keep:
            return _carried_directions(weights, directions)
        return _unit(forward[:, :3], lambda: _unit(backward[:, :3], np.broadcast_to([1.0, 0.0, 0.0], mixed.shape)))
    return _unit(mixed, fallback)


def _affine_scan(keep: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``x_f = keep_f x_(f-1) + values_f`` from ``x_(-1) = 0``, for every frame ``f`` at once:
    ``keep (F, ...)``, ``values (F, ..., k)`` -> ``(F, ..., k)``.

    A recurrence over frames, done in log2(F) whole-array steps rather than a loop over
    frames (a Hillis-Steele scan): each step composes every frame's map
    ``x -> keep x + value`` with the one ``step`` frames before it, doubling ``step``."""
    keep, values = keep.copy(), values.copy()
    step = 1
    while step < len(keep):
        values[step:] = keep[step:, ..., None] * values[:-step] + values[step:]
        keep[step:] = keep[step:] * keep[:-step]
        step *= 2
    return values


def leg_ik(
    motion: Motion,
    hip: int | str,
    knee: int | str,
    ankle: int | str,
    targets: np.ndarray,
    *,
    poles: np.ndarray | None = None,
    ankle_rotations: np.ndarray | None = None,
    zone: float = SOFT_ZONE,
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
    zone              share of the leg's length over which the hip-target
                      distance eases into it (:func:`soft_extension`; 0: none).

    Only the local rotations of the hip, knee and ankle change; every other
    joint keeps its local transform (so toes follow the foot). Targets in the
    last ``zone`` of the reach or beyond are met short, the leg pointing at them.
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
                   ankle_rotations=None if ankle_rotations is None else ankle_rotations[:, None], zone=zone)


def legs_ik(
    motion: Motion,
    legs,
    targets: np.ndarray,
    *,
    poles: np.ndarray | None = None,
    ankle_rotations: np.ndarray | None = None,
    evaluated: tuple[list[int], np.ndarray, np.ndarray] | None = None,
    frames: np.ndarray | None = None,
    zone: float | np.ndarray = SOFT_ZONE,
    reach: float | np.ndarray = 1.0,
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
               their rotations. The default knee directions come from these
               frames alone, a straight leg's from the bent frames either side
               within its run of consecutive frames.
    zone       as for :func:`leg_ik`, or a share for each frame and leg ``(F, L)``;
    reach      the share of each leg's length it stretches to at most (:func:`two_bone_ik`),
               1, or ``(F, L)``.
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
    starts = None
    if frames is not None:
        # every step below is per frame: the frames left out cost nothing
        a, b, c, targets, g_rot, identity = (x[frames] for x in (a, b, c, targets, g_rot, identity))
        poles = None if poles is None else np.asarray(poles)[frames]
        zone = zone[frames] if np.ndim(zone) else zone
        reach = reach[frames] if np.ndim(reach) else reach
        ankle_rotations = None if ankle_rotations is None else np.asarray(ankle_rotations)[frames]
        starts = np.diff(frames, prepend=frames[0] - 2) != 1
    if poles is None:
        # knee directions from the frames solved, carried only through runs of consecutive
        # ones (so the contact stage's gaps, which cores part, are each solved as on its own)
        pole = np.stack([_bend_directions(a[:, k], b[:, k], c[:, k], world([parents[hip]])[:, 0],
                                          [motion.skeleton.names[j] for j in chain], starts)
                         for k, (hip, chain) in enumerate(zip(hips, chains))], axis=1)
    else:
        pole = poles
    # every leg in one call: the solver works on (..., 3) arrays
    root_delta, mid_delta = two_bone_ik(a, b, c, targets, pole, zone=zone, reach=reach)
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
    return Motion.unchecked(motion.skeleton, rotations, motion.positions, motion.fps)  # products of unit quaternions


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
