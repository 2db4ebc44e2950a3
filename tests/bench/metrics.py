"""Measures of a synthesized transition, and the naive crossfade it is compared with.

Shared by the benchmark scripts in this folder (not a test, not a package:
scripts import it from their own directory, tests load it by path).

Conventions are those of :mod:`core.motion`: lengths in the skeleton's unit,
the up axis is ``motion.skeleton.up``, frame windows are ``(first, last)``
*inclusive* frame indices of the motion measured, or ``None`` for every frame.
Speeds come out in skeleton units per second and accelerations in units per
second squared; multiply by ``skeleton.unit`` for metres.

* :func:`foot_skate` — mean horizontal speed of the ankle and toe joints over
  the frames where that joint is within ``height_threshold`` leg lengths of its
  floor level (a planted foot should not move; 0.0375 leg lengths is 3 cm on
  the 80 cm legs of the Bandai Namco capture).
* :func:`peak_acceleration` — the largest joint acceleration (global
  positions, second differences times fps squared, every joint) in a window;
  benchmarks divide it by :func:`acceleration_percentile` of the source clips.
  Given joints (:func:`leg_joints`, say), the largest of those joints only.
* :func:`naive_crossfade` — what an animator does with the NLA: move the next
  clip onto the previous one by hand (pelvis onto pelvis on the ground, facing
  onto facing about the up axis) and crossfade every local rotation (slerp)
  and translation (linear) over a few frames.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core import quat  # noqa: E402
from core.analysis import horizontal, pelvis_facing  # noqa: E402
from core.motion import Motion, forward_kinematics  # noqa: E402
from core.rig import Rig, leg_length  # noqa: E402

SKATE_HEIGHT = 0.0375  # leg lengths: 3 cm on an 80 cm leg
FLOOR_PERCENTILE = 2.0  # the floor level of a joint is this low percentile of its height


def foot_joints(rig: Rig) -> list[int]:
    """Ankle and toe joints of both legs (toes where the rig has them)."""
    return [j for side in ("L", "R") for j in (rig.leg(side).ankle, rig.leg(side).toe) if j is not None]


def _frames(window, n_frames: int) -> np.ndarray:
    """Frame indices of a window, clipped to ``[0, n_frames)``.

    ``window`` is an inclusive ``(first, last)`` pair, an array of frame
    indices (several separate blends), or None for every frame.
    """
    if window is None:
        return np.arange(n_frames)
    if isinstance(window, np.ndarray):
        frames = np.unique(window.astype(np.int64))
        return frames[(frames >= 0) & (frames < n_frames)]
    first, last = int(window[0]), int(window[1])
    return np.arange(max(first, 0), min(last, n_frames - 1) + 1)


def floor_levels(
    motions: Iterable[Motion],
    rig: Rig,
    *,
    percentile: float = FLOOR_PERCENTILE,
) -> dict[int, float]:
    """{foot joint: floor level}: a low percentile of the joint's height over all ``motions``.

    Heights are measured along each motion's ``skeleton.up``. A kick lifts one
    foot for a long time, but its planted frames still set the low percentile.
    """
    joints = foot_joints(rig)
    heights = []
    for motion in motions:
        g = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, joints)[0]
        heights.append(g @ motion.skeleton.up)
    h = np.concatenate(heights, axis=0)
    if len(h) == 0:
        raise ValueError("floor levels need at least one frame")
    return {j: float(np.percentile(h[:, k], percentile)) for k, j in enumerate(joints)}


def foot_skate(
    motion: Motion,
    rig: Rig,
    window: tuple[int, int] | None,
    floor_levels: Mapping[int, float],
    *,
    height_threshold: float = SKATE_HEIGHT,
) -> float:
    """Mean horizontal speed (units/s) of planted foot joints in ``window``.

    A sample is one joint at one frame; it counts when the joint is less than
    ``height_threshold`` leg lengths above its floor level. The joints are the
    keys of ``floor_levels`` (see :func:`floor_levels`). Velocities are central
    differences over the whole motion (one-sided at its ends) times fps, so a
    window at the edge of the motion is measured like any other. A window with
    no planted sample has no skate: 0.0.
    """
    frames = _frames(window, motion.n_frames)
    if len(frames) == 0 or motion.n_frames < 2:
        return 0.0
    joints = list(floor_levels)
    up = motion.skeleton.up
    # one frame either side is all the central difference needs
    lo, hi = max(frames[0] - 1, 0), min(frames[-1] + 1, motion.n_frames - 1)
    part = motion[lo : hi + 1]
    g = forward_kinematics(part.rotations, part.positions, part.skeleton.parents, joints)[0]
    velocity = horizontal(np.gradient(g, axis=0), up) * motion.fps
    speed = np.linalg.norm(velocity, axis=-1)[frames - lo]
    height = (g @ up)[frames - lo] - np.array([floor_levels[j] for j in joints])
    leg = 0.5 * (leg_length(motion.skeleton, rig, "L") + leg_length(motion.skeleton, rig, "R"))
    planted = height < height_threshold * leg
    return float(speed[planted].mean()) if planted.any() else 0.0


def joint_accelerations(motion: Motion) -> np.ndarray:
    """``(F - 2, J)`` magnitudes of every joint's global acceleration at frames 1 .. F-2.

    Second differences of global positions times fps squared (units/s^2).
    """
    if motion.n_frames < 3:
        return np.zeros((0, len(motion.skeleton)))
    g = motion.global_positions()
    return np.linalg.norm(g[2:] - 2.0 * g[1:-1] + g[:-2], axis=-1) * motion.fps**2


def peak_acceleration(motion: Motion, window: tuple[int, int] | None, joints=None) -> float:
    """Largest joint acceleration (units/s^2) at any frame of ``window``, any joint (of ``joints`` if given).

    Frames without a neighbour on both sides (the first and the last of the
    motion) have no second difference and are skipped; 0.0 when none is left.
    """
    frames = _frames(window, motion.n_frames)
    frames = frames[(frames >= 1) & (frames <= motion.n_frames - 2)]
    if len(frames) == 0:
        return 0.0
    accel = joint_accelerations(motion[frames[0] - 1 : frames[-1] + 2])[frames - frames[0]]
    return float((accel if joints is None else accel[:, list(joints)]).max())


def leg_joints(rig: Rig) -> list[int]:
    """Hip, knee, ankle and toe joints of both legs (toes where the rig has them)."""
    return [j for side in ("L", "R") for leg in (rig.leg(side),)
            for j in (leg.hip, leg.knee, leg.ankle, leg.toe) if j is not None]


def acceleration_percentile(motions: Iterable[Motion], q: float = 99.0) -> float:
    """The ``q``-th percentile of :func:`joint_accelerations` over all frames and joints of ``motions``."""
    accel = np.concatenate([joint_accelerations(m).ravel() for m in motions])
    return float(np.percentile(accel, q)) if len(accel) else 0.0


def _rooted(motion: Motion, pelvis: int) -> tuple[np.ndarray, np.ndarray]:
    """Local ``(rotations, positions)`` with the pelvis carrying its world transform.

    The joints above the pelvis (a still ``joint_Root``, say) get the identity
    and a zero translation. Blending then turns the body about its pelvis, not
    about an ancestor that may be metres away, as an animator's crossfade does.
    """
    rot = motion.rotations.copy()
    pos = motion.positions.copy()
    gpos, grot = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, [pelvis])
    above = motion.skeleton.chain(pelvis)[:-1]
    rot[:, above] = quat.identity()
    pos[:, above] = 0.0
    rot[:, pelvis] = grot[:, 0]
    pos[:, pelvis] = gpos[:, 0]
    return rot, pos


def _facing(rot: np.ndarray, pos: np.ndarray, motion: Motion, rig: Rig, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """World pelvis position ``(3,)`` and horizontal facing ``(3,)`` at one frame."""
    hips = [rig.leg("L").hip, rig.leg("R").hip]
    g = forward_kinematics(rot[frame], pos[frame], motion.skeleton.parents, [rig.pelvis] + hips)[0]
    return g[0], pelvis_facing(g[1], g[2], motion.skeleton.up)


def naive_crossfade(src: Motion, dst: Motion, start: int, rig: Rig, *, blend_frames: int = 10) -> Motion:
    """The NLA way: ``dst`` placed by hand onto ``src`` and crossfaded linearly.

    src, dst      the previous and the next clip, on the same skeleton.
    start         frame of ``src`` at which ``dst`` frame 0 plays (the next
                  strip's start on the timeline when ``src`` starts at 0);
                  ``start >= src.n_frames`` leaves a gap in which ``src``
                  holds its last pose, as an NLA strip does.
    blend_frames  length of the crossfade; output frames ``start .. start +
                  blend_frames - 1`` mix the two clips with weights
                  ``(i + 1) / (blend_frames + 1)`` of ``dst``, so no mixed
                  frame is a copy of either side.

    Placing by hand: ``dst`` is turned about the up axis so that its pelvis
    facing at frame 0 matches that of ``src`` at ``start``, then moved on the
    ground (not vertically) so that its pelvis sits on ``src``'s pelvis there.
    Every local rotation is slerped and every local translation, the pelvis
    world translation included, interpolated linearly.

    Returns a new motion of ``start + dst.n_frames`` frames, frame 0 being
    ``src`` frame 0; the joints above the pelvis are left at the world origin
    (the pelvis carries the world transform). Inputs are not modified.
    """
    if src.skeleton.names != dst.skeleton.names:
        raise ValueError("naive_crossfade needs both clips on the same skeleton")
    if start < 0 or blend_frames < 1:
        raise ValueError(f"start must be >= 0 and blend_frames >= 1, got {start} and {blend_frames}")
    if src.n_frames == 0 or dst.n_frames == 0:
        raise ValueError("naive_crossfade needs clips with frames")
    up = src.skeleton.up
    pelvis = rig.pelvis
    src_rot, src_pos = _rooted(src, pelvis)
    dst_rot, dst_pos = _rooted(dst, pelvis)

    at = min(start, src.n_frames - 1)
    src_pelvis, src_facing = _facing(src_rot, src_pos, src, rig, at)
    dst_pelvis, dst_facing = _facing(dst_rot, dst_pos, dst, rig, 0)
    angle = np.arctan2(np.dot(up, np.cross(dst_facing, src_facing)), np.dot(dst_facing, src_facing))
    turn = quat.from_axis_angle(up, angle)
    shift = horizontal(src_pelvis - quat.mul_vec(turn, dst_pelvis), up)
    dst_rot[:, pelvis] = quat.mul(turn, dst_rot[:, pelvis])
    dst_pos[:, pelvis] = quat.mul_vec(turn, dst_pos[:, pelvis]) + shift

    n = min(blend_frames, dst.n_frames)
    held = np.minimum(np.arange(start, start + n), src.n_frames - 1)
    w = (np.arange(n) + 1.0) / (blend_frames + 1.0)
    mixed_rot = quat.slerp(src_rot[held], dst_rot[:n], w[:, None])
    mixed_pos = src_pos[held] + w[:, None, None] * (dst_pos[:n] - src_pos[held])
    before = np.minimum(np.arange(start), src.n_frames - 1)
    rot = np.concatenate([src_rot[before], mixed_rot, dst_rot[n:]])
    pos = np.concatenate([src_pos[before], mixed_pos, dst_pos[n:]])
    return Motion(src.skeleton, rot, pos, src.fps)
