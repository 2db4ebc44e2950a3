"""Frames from a plan: time warps, pose sampling, blending and leg adaptation.

Everything here works on plain pose arrays over a range of output frames:
``rotations (T, J, 4)`` local quaternions and ``positions (T, J, 3)`` local
translations, as in :class:`core.motion.Motion`. Times are output frames
(floats where a warp makes them fractional).
"""

from __future__ import annotations

import numpy as np

from . import quat
from .ik import leg_ik
from .motion import Motion, forward_kinematics


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


def blend(
    src: tuple[np.ndarray, np.ndarray], dst: tuple[np.ndarray, np.ndarray], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Poses blended from ``src`` (weight 0) to ``dst`` (weight 1), per frame.

    Joint rotations by slerp (the shorter arc, so opposite quaternion signs are
    harmless), translations linearly. ``weights (T,)`` broadcast over joints.
    """
    w = np.asarray(weights, dtype=np.float64)
    rot = quat.slerp(src[0], dst[0], w[:, None] * np.ones(src[0].shape[1]))
    pos = src[1] + w[:, None, None] * (dst[1] - src[1])
    return rot, pos


def ramp(n_frames: int, start: int, end: int, values: np.ndarray) -> np.ndarray:
    """Per-frame weights ``(n_frames,)``: 0 before ``start``, ``values`` on [start, end], 1 after."""
    w = np.zeros(n_frames)
    w[end + 1 :] = 1.0
    lo, hi = max(start, 0), min(end, n_frames - 1)
    if hi >= lo:
        w[lo : hi + 1] = values[lo - start : hi - start + 1]
    return w


def contact_runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """End-inclusive runs of True in a boolean array."""
    flags = np.asarray(flags, dtype=bool)
    if not len(flags):
        return []
    edges = np.diff(np.r_[0, flags.astype(np.int8), 0])
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def foot_lock_offsets(
    ankles: np.ndarray, contacts: np.ndarray, *, window: tuple[int, int], release_frames: int
) -> np.ndarray:
    """Offsets ``(T, 3)`` that hold one ankle still through each contact inside ``window``.

    ankles (T, 3) ankle positions of the blended poses, contacts (T,) bool.
    A contact run is pinned where it starts (or where the window starts, if
    it began earlier: there the output still equals its source exactly). A
    run that goes on past the window is eased back to its own trajectory
    by the window's end, so the frames after the window stay untouched; after
    a lift-off the correction fades over ``release_frames``, while the foot
    is moving anyway. Outside the window the offset is zero.
    """
    T = len(ankles)
    lo, hi = window
    offsets = np.zeros((T, 3))
    inside = np.zeros(T, dtype=bool)
    inside[max(lo, 0) : min(hi, T - 1) + 1] = True
    for start, end in contact_runs(contacts & inside):
        pin = ankles[start]
        offsets[start : end + 1] = pin - ankles[start : end + 1]
        if end >= hi and contacts[min(end + 1, T - 1)] and end + 1 < T:
            # the contact continues after the window: ease the pin out inside the run
            n = end - start + 1
            offsets[start : end + 1] *= np.linspace(1.0, 0.0, n + 1)[1:, None] if n > 1 else 0.0
        else:
            stop = min(end + release_frames, hi, T - 1)
            k = stop - end
            if k > 0:
                offsets[end + 1 : stop + 1] = offsets[end] * np.linspace(1.0, 0.0, k + 2)[1:-1, None]
    return offsets


def adapt_legs(
    motion: Motion,
    rig,
    ankle_targets: np.ndarray,
    active: np.ndarray,
) -> Motion:
    """Legs of ``motion`` solved by two-bone IK so that each ankle reaches its target.

    ankle_targets (F, 2, 3) world targets of the left and right ankle;
    active (F, 2) bool, where False the leg is left as it is (2008, 7.2).
    The knee keeps bending in its own plane; the foot keeps its world
    orientation, so a flat foot stays flat.
    """
    gpos = motion.global_positions()
    out = motion
    for side, col in (("L", 0), ("R", 1)):
        if not active[:, col].any():
            continue
        leg = rig.leg(side)
        targets = np.where(active[:, col, None], ankle_targets[:, col], gpos[:, leg.ankle])
        out = leg_ik(out, leg.hip, leg.knee, leg.ankle, targets)
    return out


def root_parameters(pelvis: np.ndarray, left: np.ndarray, right: np.ndarray, body: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(root_x, root_z) of eq. (2), 2008 section 7.2, per frame ``(F, 2)``.

    P_root - P_lfoot = root_x (P_rfoot - P_lfoot) + root_z V_body, on the
    ground plane. When the feet lie along the body orientation the first
    basis vector is replaced by the body's right-hand direction scaled to the
    stance width, so the system never becomes singular.
    """
    e1, e2 = _root_basis(left, right, body, up)
    rel = _flat(pelvis - left, up)
    m = np.stack([e1, e2], axis=-1)  # (F, 3, 2)
    return _solve2(m, rel)


def root_position(params: np.ndarray, left: np.ndarray, right: np.ndarray, body: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Horizontal pelvis position ``(F, 3)`` from eq. (2) parameters and (new) feet."""
    e1, e2 = _root_basis(left, right, body, up)
    return _flat(left, up) + params[:, :1] * e1 + params[:, 1:] * e2


def _flat(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    return v - (v @ up)[..., None] * up


def _root_basis(left, right, body, up):
    e1 = _flat(right - left, up)
    e2 = _flat(body, up)
    e2 = e2 / np.maximum(np.linalg.norm(e2, axis=-1, keepdims=True), 1e-12)
    width = np.linalg.norm(e1, axis=-1, keepdims=True)
    side = np.cross(e2, up)
    along = np.abs(np.sum(e1 * e2, axis=-1, keepdims=True)) > 0.95 * np.maximum(width, 1e-12)
    e1 = np.where(along | (width < 1e-9), side * np.maximum(width, 1.0), e1)
    return e1, e2


def _solve2(m: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """Least-squares ``m @ x = rel`` for stacks of (3, 2) systems."""
    mt = np.swapaxes(m, -1, -2)
    return np.linalg.solve(mt @ m, (mt @ rel[..., None]))[..., 0]


def global_joints(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray, joints) -> np.ndarray:
    return forward_kinematics(rotations, positions, parents, joints)[0]
