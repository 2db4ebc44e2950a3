"""Frames from a plan: time warps, pose sampling, blending and leg adaptation.

Everything here works on plain pose arrays over a range of output frames:
``rotations (T, J, 4)`` local quaternions and ``positions (T, J, 3)`` local
translations, as in :class:`core.motion.Motion`. Times are output frames
(floats where a warp makes them fractional).
"""

from __future__ import annotations

import numpy as np

from . import quat
from .analysis import horizontal
from .ik import legs_ik
from .motion import Motion, forward_kinematics
from .rig import Rig, leg_length


def sample(rotations: np.ndarray, positions: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Poses at fractional frame indices ``frames (T,)``, clamped to the clip.

    Rotations are slerped between the two neighbouring frames, translations
    interpolated linearly. A frame before the first or after the last holds
    that pose (a clip waits in its first pose before it starts).
    """
    n = len(rotations)
    frames = np.clip(np.asarray(frames, dtype=np.float64), 0.0, n - 1)
    i0 = np.minimum(np.floor(frames).astype(np.int64), max(n - 2, 0))
    i1 = np.minimum(i0 + 1, n - 1)
    a = (frames - i0)[:, None]
    rot = quat.slerp(rotations[i0], rotations[i1], np.broadcast_to(a, (len(frames), rotations.shape[1])))
    pos = positions[i0] + a[..., None] * (positions[i1] - positions[i0])
    return rot, pos


def piecewise_warp(t: np.ndarray, knots_out: tuple[float, float], knots_in: tuple[float, float]) -> np.ndarray:
    """Time warp mapping output interval ``knots_out`` onto source interval ``knots_in``.

    Linear inside; outside the interval the source plays at its own speed,
    continuing from the nearer knot, so the warp is continuous everywhere.
    """
    t = np.asarray(t, dtype=np.float64)
    (a, b), (c, d) = knots_out, knots_in
    scale = (d - c) / (b - a) if b > a else 1.0
    inside = c + (t - a) * scale
    return np.where(t < a, c + (t - a), np.where(t > b, d + (t - b), inside))


def smooth_warp(t: np.ndarray, knots_out: tuple[float, float], knots_in: tuple[float, float], *, ramp: float) -> np.ndarray:
    """:func:`piecewise_warp` with its speed changes eased over ``ramp`` frames.

    A piecewise linear warp changes the source's playback speed in one frame,
    a kink every joint feels as a jolt. Here the speed goes from 1 to the
    warp's rate and back along smoothsteps, each within the interval, and the
    rate in between is chosen so that the interval still maps exactly onto
    ``knots_in``: the poses at both knots are the ones the plan asked for.
    """
    t = np.asarray(t, dtype=np.float64)
    (a, b), (c, d) = knots_out, knots_in
    k = min(float(ramp), 0.5 * (b - a), 0.5 * (d - c))
    if b <= a or k <= 0.0:
        return piecewise_warp(t, knots_out, knots_in)
    r = (d - c - k) / (b - a - k)

    def ramp_area(x):  # integral of smoothstep from 0 to x
        x = np.clip(x, 0.0, 1.0)
        return x**3 - 0.5 * x**4

    u1 = c + k + (r - 1.0) * 0.5 * k  # at a + k
    u2 = u1 + r * (b - a - 2.0 * k)  # at b - k
    return np.select(
        [t <= a, t <= a + k, t <= b - k, t <= b],
        [
            c + (t - a),
            c + (t - a) + (r - 1.0) * k * ramp_area((t - a) / k),
            u1 + r * (t - (a + k)),
            u2 + r * (t - (b - k)) + (1.0 - r) * k * ramp_area((t - (b - k)) / k),
        ],
        d + (t - b),
    )


def blend(
    src: tuple[np.ndarray, np.ndarray], dst: tuple[np.ndarray, np.ndarray], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Poses blended from ``src`` (weight 0) to ``dst`` (weight 1), over consecutive frames.

    Joint rotations by slerp, translations linearly; ``weights (T,)`` broadcast
    over joints. Each joint turns from ``src`` towards ``dst`` the same way round
    on every frame: the shorter arc on the first frame, and from there on the
    arc that continues it. Taking the shorter arc frame by frame flips the body
    the other way round in one frame wherever the two sides come to face half a
    turn apart (a spin into a walk), a jump of up to 180 degrees.
    """
    w = np.asarray(weights, dtype=np.float64)
    relative = quat.inv_mul(src[0], dst[0])
    relative = quat.unroll(np.where(relative[:1, ..., :1] < 0.0, -relative, relative), axis=0)
    rot = quat.mul(src[0], quat.power(relative, w[:, None]))
    pos = src[1] + w[:, None, None] * (dst[1] - src[1])
    return rot, pos


def contact_runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """End-inclusive runs of True in a boolean array."""
    flags = np.asarray(flags, dtype=bool)
    if not len(flags):
        return []
    edges = np.diff(np.r_[0, flags.astype(np.int8), 0])
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def smoothstep(u: np.ndarray) -> np.ndarray:
    """``3u^2 - 2u^3`` on [0, 1]: a ramp whose speed is zero at both ends."""
    u = np.clip(u, 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


def adapt_legs(
    motion: Motion,
    rig,
    ankle_targets: np.ndarray,
    active: np.ndarray,
    *,
    ankle_rotations: np.ndarray | None = None,
) -> Motion:
    """Legs of ``motion`` solved by two-bone IK so that each ankle reaches its target.

    ankle_targets (F, 2, 3) world targets of the left and right ankle;
    active (F, 2) bool, where False the leg is left as it is (2008, 7.2).
    The knee keeps bending in its own plane; the foot keeps its world
    orientation, so a flat foot stays flat, unless ``ankle_rotations (F, 2,
    4)`` gives the world orientation each foot should have.
    """
    rows = np.flatnonzero(active.any(axis=1))
    if not len(rows):
        return motion
    # only the frames where a leg is adapted are solved
    part = slice(rows[0], rows[-1] + 1)
    window = motion[part]
    left, right = rig.leg("L"), rig.leg("R")
    # ankles, then hips (which solving a leg does not move)
    joints = [left.ankle, right.ankle, left.hip, right.hip]
    found = forward_kinematics(window.rotations, window.positions, window.skeleton.parents, joints,
                               rotations_out=False)[0]
    gpos, hip_positions = found[:, :2], found[:, 2:]
    legs, columns, targets = [], [], []
    given = None if ankle_rotations is None else ankle_rotations[part]
    for side, col in (("L", 0), ("R", 1)):
        on = active[part, col]
        if not on.any():
            continue
        leg = rig.leg(side)
        hips = hip_positions[:, col]
        reach = leg_length(window.skeleton, rig, side)
        # the move the soft reach allows, applied to where the ankle is now: a
        # target at the ankle leaves it exactly there, however straight the leg
        soft = gpos[:, col] + soft_reach(hips, ankle_targets[part, col], reach) - soft_reach(hips, gpos[:, col], reach)
        targets.append(np.where(on[:, None], soft, gpos[:, col]))
        legs.append((leg.hip, leg.knee, leg.ankle))
        columns.append(col)
    # both legs on one evaluation of their chains (solving one leg does not move the other)
    solved = legs_ik(window, legs, np.stack(targets, axis=1),
                     ankle_rotations=None if given is None else given[:, columns]).rotations
    # frames left alone keep their leg bit for bit
    kept = window.rotations
    new = kept.copy()
    for (hip, knee, ankle), col in zip(legs, columns):
        on = active[part, col][:, None, None]
        joints = [hip, knee, ankle]
        new[:, joints] = np.where(on, solved[:, joints], kept[:, joints])
    window = Motion._trusted(window.skeleton, new, window.positions, window.fps)
    rotations = motion.rotations.copy()
    rotations[part] = window.rotations
    return Motion._trusted(motion.skeleton, rotations, motion.positions, motion.fps)  # products of unit quaternions


def soft_reach(hips: np.ndarray, targets: np.ndarray, reach: float, *, soft: float = 0.05) -> np.ndarray:
    """Targets ``(F, 3)`` pulled in so that a leg of length ``reach`` meets them without snapping straight.

    Near full extension a two-bone knee angle changes very fast for a small
    move of the target, and an out-of-reach target would lock the knee: the
    last ``soft`` fraction of the reach is approached exponentially instead
    ("soft IK"), so the knee straightens smoothly and the foot stops a hair
    short of a target it cannot reach.
    """
    offset = targets - hips
    distance = np.linalg.norm(offset, axis=-1, keepdims=True)
    knee_zone = (1.0 - soft) * reach
    softened = knee_zone + soft * reach * (1.0 - np.exp(-(distance - knee_zone) / (soft * reach)))
    new = np.where(distance > knee_zone, softened, distance)
    return hips + offset * (new / np.maximum(distance, 1e-12))


def pelvis_shift(
    pelvis: np.ndarray, left: np.ndarray, right: np.ndarray, body: np.ndarray, up: np.ndarray,
    new_left: np.ndarray, new_right: np.ndarray,
) -> np.ndarray:
    """How far the pelvis moves ``(F, 3)`` when the feet move to ``new_left``/``new_right`` (eq. 2, 2008 7.2).

    Eq. (2) places the root at ``P_lfoot + root_x (P_rfoot - P_lfoot) +
    root_z V_body``. The body orientation does not change in adaptation, so
    keeping (root_x, root_z) moves the root by ``(1 - root_x) dP_lfoot +
    root_x dP_rfoot``: only root_x, the pelvis's place along the line from
    the left foot to the right, matters. It is read on the ground plane and
    kept within [0, 1] (between the feet): where the feet line up with the
    body orientation eq. (2) has no unique root_x, and an unbounded value
    would fling the pelvis. Vertical foot changes are not passed on.
    """
    across = horizontal(right - left, up)
    width2 = np.sum(across * across, axis=-1)
    side = horizontal(pelvis - left, up)
    forward = horizontal(body, up)
    forward = forward / np.maximum(np.linalg.norm(forward, axis=-1, keepdims=True), 1e-12)
    # root_x from the component of the pelvis across the body orientation (eq. 2 solved for root_x)
    lateral = quat.cross(forward, up)
    denom = np.sum(across * lateral, axis=-1)
    # how well the feet span the body's side-to-side axis: 1 across it, 0 along it;
    # root_x fades to the midpoint (0.5) as eq. (2) loses its grip, never jumping there
    grip = np.clip((np.abs(denom) / np.maximum(np.sqrt(width2), 1e-12) - 0.2) / 0.4, 0.0, 1.0)
    raw = np.sum(side * lateral, axis=-1) / np.where(np.abs(denom) > 1e-12, denom, 1.0)
    root_x = (grip * np.clip(raw, 0.0, 1.0) + (1.0 - grip) * 0.5)[:, None]
    shift = (1.0 - root_x) * (new_left - left) + root_x * (new_right - right)
    return horizontal(shift, up)


def move_pelvis(pose, skeleton, rig: Rig, shift: np.ndarray):
    """Poses with the pelvis moved by ``shift (T, 3)`` in world space (its children follow)."""
    rot, pos = pose
    pos = pos.copy()
    pelvis = rig.pelvis
    parent = skeleton.parents[pelvis]
    if parent < 0:
        pos[:, pelvis] += shift
    else:
        # the shift expressed in the parent's frame
        _, grot = forward_kinematics(rot, pos, skeleton.parents, [parent])
        pos[:, pelvis] += quat.inv_mul_vec(grot[:, 0], shift)
    return rot, pos
