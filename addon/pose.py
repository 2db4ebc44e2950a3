"""Blender's pose channels and the core's joint channels, exact both ways (pure numpy).

Blender poses bone ``j`` as ``M_j = M_parent @ inv(Rest_parent) @ Rest_j @ Basis_j``
where ``Rest`` is ``bone.matrix_local`` (rotation ``B``, head ``h``, armature space)
and ``Basis`` the pose channels (rotation ``b``, location ``l``). With the core's
joint frame ``C_j = P_j inv(B_j)`` (``P_j`` the bone's posed rotation), the core's
local channels are::

    rotation     R_j = B_j b_j inv(B_j)
    translation  t_j = (h_j - h_parent) + B_j l_j      (root: h_parent = 0)

and back ``b_j = inv(B_j) R_j B_j``, ``l_j = inv(B_j) (t_j - (h_j - h_parent))``
(:func:`pose_basis`, :func:`pose_location`); :class:`ArmatureInfo` keeps ``B`` and ``h``.
Rotation channels are the ones the pose bone's ``rotation_mode`` reads:
``rotation_quaternion`` (normalised), ``rotation_euler`` in any order, or
``rotation_axis_angle``. Blender's Euler order ``'XYZ'`` applies X first,
``R = Rz @ Ry @ Rx``, which is ``quat.from_euler(angles[..., ::-1], "ZYX")``.
Written channels continue the signs and turns of the keys they follow
(:func:`continued_quaternions`, :func:`continued_euler`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import quat
from ..core.motion import Skeleton


EULER_MODES = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


# Channels per rotation mode, with the value of a channel the action leaves out (rest).
REST_QUATERNION = (1.0, 0.0, 0.0, 0.0)


REST_AXIS_ANGLE = (0.0, 0.0, 1.0, 0.0)  # angle, axis: Blender's default


@dataclass(frozen=True, eq=False)
class ArmatureInfo:
    """What maps an armature's pose channels to a core skeleton's joints.

    armature        name of the armature object.
    bones           (J,) bone of each joint; ``None`` for the extra joint 0
                    of an armature with several root bones.
    rest_rotations  (J, 4) bone rest rotations ``B`` in armature space
                    (from ``bone.matrix_local``; identity for the extra joint).
    rest_heads      (J, 3) bone rest heads ``h`` in armature space.
    rotation_modes  (J,) each pose bone's ``rotation_mode``.
    connected       (J,) bool: the bone is connected to its parent, so Blender
                    ignores its location channels.
    nonstandard_bones  names of bones that do not inherit rotation, use
                    parent-space location or relative parenting; their poses
                    are mapped as if they had Blender's default settings.
    """

    armature: str
    bones: tuple
    rest_rotations: np.ndarray
    rest_heads: np.ndarray
    rotation_modes: tuple
    connected: np.ndarray
    nonstandard_bones: tuple = ()


def euler_to_quat(angles: np.ndarray, mode: str) -> np.ndarray:
    """Quaternions ``(..., 4)`` of Blender Euler angles ``(..., 3)`` (radians, x y z).

    ``mode`` is a Blender ``rotation_mode`` such as ``'XYZ'``: the first axis
    is applied first, ``R = R_Z @ R_Y @ R_X`` for ``'XYZ'``.
    """
    angles = np.asarray(angles, dtype=np.float64)
    order = _check_euler_mode(mode)[::-1]
    ordered = np.stack([angles[..., "XYZ".index(axis)] for axis in order], axis=-1)
    return quat.from_euler(ordered, order)


def quat_to_euler(q: np.ndarray, mode: str) -> np.ndarray:
    """Blender Euler angles ``(..., 3)`` (radians, x y z) of quaternions ``(..., 4)``.

    Inverse of :func:`euler_to_quat`; the middle axis of ``mode`` gets the
    angle in [-pi/2, pi/2].
    """
    order = _check_euler_mode(mode)[::-1]
    ordered = quat.to_euler(q, order)
    return np.stack([ordered[..., order.index(axis)] for axis in "XYZ"], axis=-1)


def _check_euler_mode(mode: str) -> str:
    if mode not in EULER_MODES:
        raise ValueError(f"not a Blender Euler rotation mode: {mode!r}; expected one of {EULER_MODES}")
    return mode


def normalized_quaternions(q: np.ndarray) -> np.ndarray:
    """Blender normalises keyed quaternions before use; a zero one is taken as rest."""
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(norm > 1e-12, q / np.where(norm > 1e-12, norm, 1.0), REST_QUATERNION)


def axis_angle_to_quat(aa: np.ndarray) -> np.ndarray:
    """Quaternions of Blender axis-angle values ``(..., 4)`` = (angle, x, y, z); zero axis is rest."""
    axis = aa[..., 1:]
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    q = quat.from_axis_angle(axis / np.where(norm > 1e-12, norm, 1.0), aa[..., 0])
    return np.where(norm > 1e-12, q, REST_QUATERNION)


class KeyedRows:
    """Keyed values ``[joint][component] -> (F,)`` read as ``(F, K, C)`` rows, copying only the rows asked for
    (a window needs the keys next to it, and the rest of a curve only when it must be carried along)."""
    def __init__(self, curves: list):
        self.curves = curves

    def __len__(self) -> int:
        return len(self.curves[0][0])

    def __getitem__(self, rows) -> np.ndarray:
        return np.stack([np.stack([c[rows] for c in joint], axis=-1) for joint in self.curves],
                        axis=-2).astype(np.float64)


class AxisAngleRows:
    """Keyed axis-angle rows read as quaternions."""
    def __init__(self, rows: KeyedRows):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, rows) -> np.ndarray:
        return axis_angle_to_quat(self.rows[rows])


def continued_quaternions(q: np.ndarray, held, first: int, last: int) -> list[np.ndarray]:
    """Per joint, quaternions ``q (W, K, 4)`` for frames ``first..last`` unrolled on from
    ``held[first - 1]`` (``held (F, K, 4)``, or rows of it: as keyed), plus the rest of ``held``
    negated where its next key disagrees in sign with the window's last."""
    q = quat.unroll(q, axis=0)
    if first > 0:
        q = q * np.where(quat.dot(q[0], held[first - 1]) < 0.0, -1.0, 1.0)[:, None]
    flipped = (quat.dot(q[-1], held[last + 1]) < 0.0 if last + 1 < len(held)
               else np.zeros(q.shape[1], dtype=bool))
    return [np.concatenate([q[:, k], -held[last + 1:][:, k]]) if flipped[k] else q[:, k] for k in range(q.shape[1])]


def continued_euler(angles: np.ndarray, held, first: int, last: int) -> list[np.ndarray]:
    """Per joint, Euler ``angles (W, K, 3)`` for frames ``first..last`` unwrapped on from
    ``held[first - 1]`` (``held (F, K, 3)``, or rows of it: as keyed), plus the rest of ``held``
    shifted by whole turns where its next key no longer unwraps from the window's last."""
    if first > 0:
        angles = np.unwrap(np.concatenate([held[first - 1:first], angles]), axis=0)[1:]
    else:
        angles = np.unwrap(angles, axis=0)
    shift = (np.unwrap(np.stack([angles[-1], held[last + 1]]), axis=0)[1] - held[last + 1]
             if last + 1 < len(held) else np.zeros(angles.shape[1:]))
    return [np.concatenate([angles[:, k], held[last + 1:][:, k] + shift[k]]) if np.any(shift[k] != 0.0)
            else angles[:, k] for k in range(angles.shape[1])]


def pose_basis(info: ArmatureInfo, rotations: np.ndarray, j) -> np.ndarray:
    """Joint ``j``'s rotations ``(F, 4)`` as the pose bone's basis rotation (relative to its rest);
    with a list of joints, their rotations ``(F, K, 4)``."""
    rest = info.rest_rotations[j]
    return quat.mul(quat.mul(quat.inv(rest), rotations), rest)


def pose_location(skeleton: Skeleton, info: ArmatureInfo, positions: np.ndarray, j) -> np.ndarray:
    """Joint ``j``'s local positions ``(F, 3)`` as the pose bone's location (from its rest head, in its rest
    frame); with a list of joints, their positions ``(F, K, 3)``."""
    return quat.inv_mul_vec(info.rest_rotations[j], positions - skeleton.offsets[j])


def quat_to_axis_angle(q: np.ndarray) -> np.ndarray:
    """Blender axis-angle values ``(..., 4)`` = (angle, x, y, z) of unit quaternions.

    Keeps the sign of ``q`` (angles up to 2 pi), so a sign-continuous
    sequence gives a continuous angle; the axis of a zero rotation is +Y.
    """
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s[..., 0], q[..., 0])
    axis = np.where(s > 1e-12, q[..., 1:] / np.where(s > 1e-12, s, 1.0), (0.0, 1.0, 0.0))
    return np.concatenate([angle[..., None], axis], axis=-1)
