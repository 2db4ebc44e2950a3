"""Placing the following clip on the previous one (Oshita 2008, sections 4.2-4.3).

The following clip is turned about the up axis so that its body orientation
matches the previous clip's at the connection, then moved on the ground so
that its base foot lands on the previous clip's base foot. Nothing is moved
vertically: both clips keep their own floor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import quat
from .analysis import body_orientation, horizontal, pelvis_facing
from .motion import Motion, forward_kinematics
from .rig import Rig


@dataclass(frozen=True)
class Alignment:
    """A turn about ``up`` by ``angle`` radians (about the world origin), then a ground move.

    angle        radians, counter-clockwise about ``up``.
    translation  (3,) horizontal offset, in the clip's unit.
    anchor       what was matched: "left foot", "right foot" or "pelvis".
    """

    angle: float
    translation: np.ndarray
    up: np.ndarray
    anchor: str

    @cached_property
    def rotation(self) -> np.ndarray:
        """The turn as a unit quaternion ``(4,)`` (read-only): made once, as every point
        and pose the alignment moves reads it (tens of times per live update)."""
        q = quat.from_axis_angle(self.up, self.angle)
        q.setflags(write=False)
        return q

    def apply_points(self, points: np.ndarray) -> np.ndarray:
        """World points ``(..., 3)`` of the clip where :meth:`apply` puts them."""
        return quat.mul_vec(self.rotation, np.asarray(points, dtype=np.float64)) + self.translation

    def apply(self, motion: Motion, pelvis: int | None = None) -> Motion:
        """``motion`` turned and moved as a whole.

        With ``pelvis`` the change is carried by the pelvis joint instead of
        joint 0: joints above the pelvis (a still ``Root`` at the origin, as
        in many capture files) keep their local transforms, so two aligned
        clips differ only below the pelvis and blend as bodies, not as a
        swinging root with a counter-moving pelvis.
        """
        if pelvis is None or pelvis == 0:
            return motion.transformed(self.rotation, self.translation)
        parents = motion.skeleton.parents
        gpos, grot = forward_kinematics(motion.rotations, motion.positions, parents, [parents[pelvis]])
        parent_rot, parent_pos = grot[:, 0], gpos[:, 0]
        turn = self.rotation
        # pelvis world transform T * G_parent * L_pelvis, re-expressed under the unchanged parent
        world_rot = quat.mul(turn, quat.mul(parent_rot, motion.rotations[:, pelvis]))
        world_pos = quat.mul_vec(turn, quat.mul_vec(parent_rot, motion.positions[:, pelvis]) + parent_pos) + self.translation
        rot = motion.rotations.copy()
        pos = motion.positions.copy()
        rot[:, pelvis] = quat.inv_mul(parent_rot, world_rot)
        pos[:, pelvis] = quat.inv_mul_vec(parent_rot, world_pos - parent_pos)
        return Motion.unchecked(motion.skeleton, rot, pos, motion.fps)  # products of unit quaternions

    def to_dict(self) -> dict:
        return {
            "angle_deg": float(np.degrees(self.angle)),
            "angle": float(self.angle),  # (radians, to the bit: a loaded plan renders the same motion)
            "translation": [float(v) for v in self.translation],
            "up": [float(v) for v in self.up],
            "anchor": self.anchor,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Alignment":
        angle = float(d["angle"]) if "angle" in d else float(np.radians(d["angle_deg"]))
        return cls(angle, np.array(d["translation"], dtype=np.float64),
                   np.array(d["up"], dtype=np.float64), d["anchor"])


def signed_angle(u: np.ndarray, v: np.ndarray, up: np.ndarray) -> float:
    """Angle (radians) turning horizontal direction ``u`` onto ``v`` about ``up``."""
    return float(np.arctan2(quat.cross(u, v) @ up, u @ v))


def travels(pelvis: np.ndarray, up: np.ndarray, *, distance: float) -> bool:
    """Whether the pelvis ``(F, 3)`` ever lies ``distance`` or more from its first frame on the ground."""
    return bool(len(pelvis)) and bool((quat.length(horizontal(pelvis - pelvis[0], up)) >= distance).any())


def join_orientation(
    near: tuple[np.ndarray, np.ndarray],
    own_end: Callable[[], tuple[np.ndarray, np.ndarray]],
    up: np.ndarray,
    *,
    distance: float,
    before: bool,
) -> np.ndarray:
    """Body orientation (2008, 4.3) of one side where it meets the other.

    near     (pelvis (F, 3), facing (F, 3)) of the side's frames next to the join:
             ending on it for the previous side (``before``), starting on it for the
             following one.
    own_end  returns the same of the side's own end: the previous side's last
             frames, the following side's first (read only when needed).

    The paper measures the orientation at the end of the previous motion and
    the start of the following one. A clip meets another at a frame inside
    it, so where the pelvis travels ``distance`` next to the join, its
    movement there is the orientation (a walk that curves before the join is
    placed on the direction it walks in at the join). Where it does not (a
    figure standing or turning on the spot) nothing near the join says which
    way the body faces, and the pelvis facing there is caught mid-turn: the
    side's own end is used, as in the paper, so a turn on the spot is kept
    whole, the blend carrying out the part of it the join does not play.
    """
    pelvis, facing = near
    if not travels(pelvis[::-1] if before else pelvis, up, distance=distance):
        pelvis, facing = own_end()
    return body_orientation(pelvis, facing, up, distance=distance, at_end=before)


def orientation_near(
    pelvis: np.ndarray, facing: np.ndarray, up: np.ndarray, frame: int, *, distance: float, before: bool,
    reach: int | None = None,
) -> np.ndarray:
    """Body orientation (2008, 4.3) of a whole track ``(F, 3)`` meeting another at ``frame``:
    from the ``reach`` frames (all when None) ending there (``before``) or starting there, or,
    where the pelvis does not travel over those, at the track's own end (:func:`join_orientation`)."""
    reach = len(pelvis) if reach is None else max(int(reach), 1)
    if before:
        lo = max(frame + 1 - reach, 0)
        near = pelvis[lo : frame + 1], facing[lo : frame + 1]
        return join_orientation(near, lambda: (pelvis[-reach:], facing[-reach:]), up, distance=distance, before=True)
    near = pelvis[frame : frame + reach], facing[frame : frame + reach]
    return join_orientation(near, lambda: (pelvis[:reach], facing[:reach]), up, distance=distance, before=False)


def body_track(rotations: np.ndarray, positions: np.ndarray, parents: np.ndarray, rig: Rig, up: np.ndarray,
               *, ankles: bool = True):
    """Pelvis positions ``(F, 3)``, pelvis facing ``(F, 3)`` and ankles ``(F, 2, 3)`` of a pose sequence.

    ``ankles=False`` leaves the legs below the hips unevaluated (ankles None):
    the body orientation needs the pelvis and hips only.
    """
    left, right = rig.leg("L"), rig.leg("R")
    joints = [rig.pelvis, left.hip, right.hip] + ([left.ankle, right.ankle] if ankles else [])
    g, _ = forward_kinematics(rotations, positions, parents, joints, rotations_out=False)
    return g[:, 0], pelvis_facing(g[:, 1], g[:, 2], up), (g[:, 3:5] if ankles else None)


def align_clip(
    prev_track: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    prev_frame: int,
    next_track: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    next_frame: int,
    anchor_foot: int,
    up: np.ndarray,
    *,
    distance: float,
    feet: tuple[np.ndarray, np.ndarray] | None = None,
    foot_headings: tuple[np.ndarray, np.ndarray] | None = None,
    orientations: tuple[np.ndarray, np.ndarray] | None = None,
) -> Alignment:
    """The alignment that puts the following clip on the previous one.

    prev_track, next_track  (pelvis (F, 3), facing (F, 3), ankles (F, 2, 3) or
                            None) of the previous output and of the unaligned clip.
    prev_frame, next_frame  the frames that meet (indices into the tracks).
    anchor_foot             0 left, 1 right, -1 none (flight: the pelvis is used, 2008 4.2).
    distance                how far the pelvis must move to define the body orientation.
    feet                    the ankles ``(2, 3)`` of both sides at the frames that
                            meet, when the tracks carry none.
    foot_headings           (previous, next) directions ``(3,)`` the anchor foot
                            points in at the frames that meet: the clip is then
                            turned so that the foot keeps its heading, rather than
                            by the body orientation (a foot standing through the
                            join must not pivot).
    orientations            (previous, next) body orientations ``(3,)`` at the join
                            (:func:`join_orientation`), when the caller measured them
                            on frames the tracks do not hold; otherwise measured on
                            the tracks (:func:`orientation_near`).
    """
    p_pelvis, p_facing, p_ankles = prev_track
    n_pelvis, n_facing, n_ankles = next_track
    p_feet, n_feet = (p_ankles[prev_frame], n_ankles[next_frame]) if feet is None else feet
    if orientations is None:
        orientations = (orientation_near(p_pelvis, p_facing, up, prev_frame, distance=distance, before=True),
                        orientation_near(n_pelvis, n_facing, up, next_frame, distance=distance, before=False))
    o_prev, o_next = orientations
    angle = signed_angle(o_next, o_prev, up)
    if foot_headings is not None and anchor_foot in (0, 1):
        prev_heading, next_heading = (horizontal(np.asarray(h, dtype=np.float64), up) for h in foot_headings)
        if min(np.linalg.norm(prev_heading), np.linalg.norm(next_heading)) > 1e-9:
            angle = signed_angle(next_heading, prev_heading, up)
    turn = quat.from_axis_angle(up, angle)
    if anchor_foot in (0, 1):
        src, dst = n_feet[anchor_foot], p_feet[anchor_foot]
        anchor = ("left", "right")[anchor_foot] + " foot"
    else:
        src, dst = n_pelvis[next_frame], p_pelvis[prev_frame]
        anchor = "pelvis"
    translation = horizontal(dst - quat.mul_vec(turn, src), up)
    return Alignment(angle, translation, up, anchor)
