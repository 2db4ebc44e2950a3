"""Motion analysis: foot contacts, support phases, base foot, body orientation.

Oshita 2008, section 4 ("Motion analysis"), with the two contact thresholds of
Ménardais et al. 2004, section 4.2 (a foot supports the body while its lowest
point is below a height threshold *and* slower than a speed threshold).

Every threshold is relative to the body, never to a unit or a frame rate:
heights and distances are fractions of the leg length (hip to knee to ankle,
in the clip's own unit), speeds are leg lengths per second computed from
frame differences times ``fps``, and filter windows are in seconds. So the
same capture in centimetres, metres or inches, at 30, 60 or 120 fps, Y-up or
Z-up, gives the same phases.

Phases follow the paper: DS (double support), LS (left leg support), RS
(right leg support), NS (no support, flight). Segments are end-inclusive
frame ranges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from . import quat
from .motion import Motion, forward_kinematics
from .rig import Rig, detect_up, find_rig, leg_length

LEFT, RIGHT = 0, 1


class Phase(IntEnum):
    """Support phase of a frame (Oshita 2008, section 3.1)."""

    DS = 0  # double support: both feet on the ground
    LS = 1  # left leg support: the right foot moves
    RS = 2  # right leg support: the left foot moves
    NS = 3  # no support: both feet in the air


_PHASES = tuple(Phase)  # Phase members by code
# the phase code (int8) of neither foot, the right, the left, both down (index 2 left + right)
_PHASE_OF_CONTACTS = np.array([Phase.NS, Phase.RS, Phase.LS, Phase.DS], dtype=np.int8)


@dataclass(frozen=True)
class PhaseSegment:
    """A run of frames with one support phase; ``end`` is inclusive."""

    phase: Phase
    start: int
    end: int

    @property
    def n_frames(self) -> int:
        return self.end - self.start + 1

    @property
    def moving_feet(self) -> tuple[bool, bool]:
        """(left moves, right moves) during the segment (2008, section 5)."""
        return moving_feet(self.phase)

    def to_dict(self) -> dict:
        return {"phase": self.phase.name, "start": self.start, "end": self.end}


def moving_feet(phase: Phase) -> tuple[bool, bool]:
    """Which feet are free to move in a phase: (left, right)."""
    return {
        Phase.DS: (False, False),
        Phase.LS: (False, True),
        Phase.RS: (True, False),
        Phase.NS: (True, True),
    }[Phase(phase)]


# --------------------------------------------------------------------------
# geometry helpers shared by the steps below


def horizontal(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    """``v (..., 3)`` with its component along unit ``up`` removed."""
    # (quat.sum_last: np.sum's reduction, the same bits, without its dispatch: this is hot)
    return v - quat.sum_last(v * up, keepdims=True) * up


def _unit(v: np.ndarray) -> np.ndarray:
    n = quat.length(v, keepdims=True)
    return v / np.where(n < 1e-12, 1.0, n)


def _window(fps: float, seconds: float, n_frames: int) -> int:
    """An odd window length (frames) covering about ``seconds`` at ``fps``, no longer than
    ``n_frames`` (a window wider than the clip adds nothing but memory)."""
    return min(2 * int(round(0.5 * seconds * fps)) + 1, max(2 * ((n_frames - 1) // 2) + 1, 1))


def _majority_vote(flags: np.ndarray, width: int) -> np.ndarray:
    """Median filter of booleans along axis 0 (a sliding majority vote)."""
    if width <= 1 or len(flags) == 0:
        return flags.copy()
    half = width // 2
    padded = np.concatenate([np.repeat(flags[:1], half, 0), flags, np.repeat(flags[-1:], half, 0)]).astype(np.int32)
    c = np.concatenate([np.zeros((1,) + flags.shape[1:], np.int32), np.cumsum(padded, axis=0)])
    return (c[width:] - c[:-width]) * 2 > width


def _speed(x: np.ndarray, fps: float) -> np.ndarray:
    """Speed ``(F, ...)`` of positions ``x (F, ..., 3)`` per second (central differences)."""
    if len(x) < 2:
        return np.zeros(x.shape[:-1])
    return quat.length(np.gradient(x, axis=0)) * fps


# --------------------------------------------------------------------------
# 2008 section 4.1: support phases


def foot_contacts(
    motion: Motion,
    rig: Rig | None = None,
    *,
    up: np.ndarray | None = None,
    height_threshold: float = 0.07,
    speed_threshold: float = 1.2,
    min_duration_s: float = 0.05,
    positions: np.ndarray | None = None,
) -> np.ndarray:
    """Per-frame contact of each foot, ``(F, 2) bool`` for (left, right).

    A foot supports the body while its ankle or its toe is both close to the
    floor and slow (Ménardais 2004, 4.2): ankle for heel contact, toe for the
    toe-off at the end of a stance.

    height_threshold  height above the joint's floor level, in leg lengths.
    speed_threshold   speed, in leg lengths per second.
    min_duration_s    contact flips shorter than this are voted away
                      (a sliding majority vote of this width).

    The floor level of a joint kind (ankle or toe) is its lowest height in the
    clip over both feet (a robust low percentile), so the clip may stand at
    any height and each joint's own height above the sole is accounted for.
    """
    rig = rig or find_rig(motion)
    gpos = positions if positions is not None else _foot_positions(motion, rig)
    up = detect_up(motion, rig) if up is None else np.asarray(up, dtype=np.float64)
    leg = 0.5 * (leg_length(motion.skeleton, rig, "L") + leg_length(motion.skeleton, rig, "R"))
    kinds = _contact_joints(rig)
    # every joint kind on both sides at once, (F, kinds, 2) (each number is its own joint's, as one
    # kind at a time would give it: these few values cost less than the numpy calls on them)
    x = gpos[:, sum(kinds, [])]
    F = len(x)
    height = (x @ up).reshape(F, len(kinds), 2)
    # each kind's floor over both sides' frames (np.percentile's own cost is its bookkeeping)
    floor = np.percentile(height.transpose(1, 0, 2).reshape(len(kinds), -1), 2.0, axis=1) if F else np.zeros(len(kinds))
    low = height - floor[:, None] < height_threshold * leg
    slow = _speed(x, motion.fps).reshape(F, len(kinds), 2) < speed_threshold * leg
    contacts = (low & slow).any(axis=1)
    return _majority_vote(contacts, _window(motion.fps, min_duration_s, motion.n_frames))


def _contact_joints(rig: Rig) -> list[list[int]]:
    """[[left ankle, right ankle], [left toe, right toe]] (toes when the rig has them)."""
    kinds = [[rig.leg("L").ankle, rig.leg("R").ankle]]
    toes = [rig.leg("L").toe, rig.leg("R").toe]
    if None not in toes:
        kinds.append(toes)
    return kinds


class _SomeJoints:
    """Global positions of a few joints, indexed like the full ``(F, J, 3)`` array.

    ``positions[:, j]`` and ``positions[:, [j, k]]`` work for the joints
    evaluated; analysis reads no others, and a full array of zeros for the
    rest would cost more than the forward kinematics itself.
    """

    def __init__(self, positions: np.ndarray, joints: np.ndarray, n_joints: int):
        self._positions = positions
        self._column = np.full(n_joints, -1)
        self._column[joints] = np.arange(len(joints))

    def __getitem__(self, index):
        frames, joints = index
        column = self._column[joints]
        if np.any(column < 0):
            raise IndexError(f"joint {joints} was not evaluated")
        return self._positions[frames, column]


def _foot_positions(motion: Motion, rig: Rig) -> _SomeJoints:
    """Global positions of the joints analysis reads (legs, pelvis), indexed as ``(F, J, 3)``.

    Only those joints and their ancestors are evaluated.
    """
    legs = [j for side in ("L", "R") for j in rig.leg(side).joints if j is not None]
    joints = np.array(sorted(set(legs) | {rig.pelvis}))
    positions = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, joints,
                                   rotations_out=False)[0]
    return _SomeJoints(positions, joints, len(motion.skeleton))


def support_phases(contacts: np.ndarray) -> np.ndarray:
    """``(F, 2) bool`` contacts -> ``(F,)`` :class:`Phase` codes (DS, LS, RS, NS)."""
    contacts = np.asarray(contacts, dtype=bool)
    # the phase of (left down, right down) looked up by 2 left + right: planning reads the
    # phases of every pair's sides, where np.select's dispatch costs more than the lookup
    return _PHASE_OF_CONTACTS[2 * contacts[:, LEFT] + contacts[:, RIGHT]]


def phase_segments(phases: np.ndarray) -> list[PhaseSegment]:
    """Run-length encoding of per-frame phases into end-inclusive segments."""
    phases = np.asarray(phases)
    if len(phases) == 0:
        return []
    starts = np.flatnonzero(np.concatenate(([True], phases[1:] != phases[:-1])))
    ends = np.concatenate((starts[1:] - 1, [len(phases) - 1]))
    # (indexing a tuple of the members: calling the enum is slow for thousands of segments)
    return [PhaseSegment(_PHASES[code], s, e) for code, s, e in zip(phases[starts].tolist(), starts.tolist(), ends.tolist())]


# --------------------------------------------------------------------------
# 2008 section 4.2: base foot


def base_foot(phases: np.ndarray, left_ankle: np.ndarray, right_ankle: np.ndarray, center: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The foot that mainly supports the body, per frame: ``(F,)`` 0 left, 1 right, -1 none.

    LS -> left, RS -> right, NS -> none; in DS the foot horizontally closer
    to the centre of mass (2008, 4.2). ``center (F, 3)`` is the centre-of-
    mass estimate (the pelvis is a good horizontal proxy).
    """
    dl = quat.length(horizontal(left_ankle - center, up))
    dr = quat.length(horizontal(right_ankle - center, up))
    closer = np.where(dl <= dr, LEFT, RIGHT)
    return np.select([phases == Phase.LS, phases == Phase.RS, phases == Phase.NS], [LEFT, RIGHT, -1], closer).astype(np.int8)


# --------------------------------------------------------------------------
# 2008 section 4.3: body orientation


def pelvis_facing(hip_left: np.ndarray, hip_right: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Horizontal unit facing ``(..., 3)`` of the pelvis from its hip joints.

    The figure faces ``cross(left - right, up)``: with Y up and the left hip
    on +X that is +Z, the right-handed convention of BVH and Blender alike.
    """
    return _unit(horizontal(quat.cross(hip_left - hip_right, up), up))


def ground_axes(up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two horizontal unit axes ``(e1, e2)`` with ``e2 = up x e1``: a turn by ``a`` about ``up``
    takes ``e1`` to ``cos a e1 + sin a e2``. Which e1 does not matter: a heading is only ever
    used relative to another measured the same way (core.mkm.heading_rotations turns by one)."""
    up = np.asarray(up, dtype=np.float64)
    e1 = horizontal(np.eye(3)[int(np.argmin(np.abs(up)))], up)
    e1 = e1 / np.linalg.norm(e1)
    return e1, np.cross(up, e1)


def yaw_of(facing: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The heading ``(...)`` about ``up`` of directions ``(..., 3)`` (their horizontal part), radians in (-pi, pi]."""
    e1, e2 = ground_axes(up)
    return np.arctan2(facing @ e2, facing @ e1)


def body_orientation(
    pelvis: np.ndarray,
    facing: np.ndarray,
    up: np.ndarray,
    *,
    distance: float,
    at_end: bool = False,
) -> np.ndarray:
    """Body orientation (unit, horizontal ``(3,)``) at the start or end of a clip (2008, 4.3).

    The movement vector runs from the pelvis at the first frame to the pelvis
    where it first lies ``distance`` away horizontally (at the end: from the
    last such point to the last frame). The figure may move forward,
    backward, left or right, so of that vector turned by 0, 90, 180 and 270
    degrees about ``up`` the one closest to the pelvis facing is the body
    orientation. A clip whose pelvis never moves that far has no movement
    to go by and faces where its pelvis faces at that end (its first frame,
    at the end its last): a figure turning on the spot faces one way at its
    start and another at its end (the mean facing over the clip, used
    before, is the same at both ends, and a clip aligned by it does not
    turn; docs/design.md, "Synthesis: decisions the papers leave open").

    pelvis (F, 3) positions, facing (F, 3) unit pelvis facing, up (3,).
    """
    if at_end:
        pelvis, facing = pelvis[::-1], facing[::-1]
    if not len(facing):
        return np.zeros(3)
    flat = horizontal(pelvis - pelvis[0], up)
    far = np.flatnonzero(quat.length(flat) >= distance)
    if len(far) == 0:
        return _unit(facing[0])
    k = far[0]
    move = _unit(-flat[k] if at_end else flat[k])
    # (the mean as ndarray.mean computes it, sum over count, without its dispatch: this runs
    # at every join; the four turns and the move broadcast inside the quaternion functions)
    face = _unit(np.add.reduce(facing[: k + 1], axis=0) / (k + 1))
    turns = quat.from_axis_angle(up, np.arange(4) * (np.pi / 2))
    candidates = quat.mul_vec(turns, move)
    return _unit(candidates[np.argmax(candidates @ face)])


# --------------------------------------------------------------------------
# everything at once


@dataclass(frozen=True, eq=False)
class Analysis:
    """What section 4 of the 2008 paper derives from a clip.

    contacts    (F, 2) bool, (left, right) foot supports the body.
    phases      (F,) int8 :class:`Phase` codes.
    segments    phase segments, end inclusive.
    base_foot   (F,) int8, 0 left, 1 right, -1 none.
    orientation_start, orientation_end  (3,) unit horizontal body orientation.
    up          (3,) unit up axis the analysis measured heights along.
    leg_length  leg length in the clip's unit (the scale of every threshold).
    """

    fps: float
    contacts: np.ndarray
    phases: np.ndarray
    segments: list[PhaseSegment]
    base_foot: np.ndarray
    orientation_start: np.ndarray
    orientation_end: np.ndarray
    up: np.ndarray
    leg_length: float
    rig: Rig = field(repr=False)

    def to_dict(self) -> dict:
        return {
            "fps": self.fps,
            "segments": [s.to_dict() for s in self.segments],
            "orientation_start": [float(v) for v in self.orientation_start],
            "orientation_end": [float(v) for v in self.orientation_end],
        }

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def summary(self) -> str:
        lines = [f"{len(self.phases)} frames at {self.fps:g} fps, {len(self.segments)} support-phase segments"]
        for s in self.segments:
            lines.append(f"  {s.phase.name}  {s.start:5d} .. {s.end:5d}  ({s.n_frames / self.fps:.2f} s)")
        fmt = lambda v: "(" + ", ".join(f"{x:+.3f}" for x in v) + ")"
        lines.append(f"body orientation at start {fmt(self.orientation_start)}, at end {fmt(self.orientation_end)}")
        return "\n".join(lines)


def analyze(
    motion: Motion,
    rig: Rig | None = None,
    *,
    up: np.ndarray | None = None,
    orientation_distance: float = 0.2,
    **contact_options,
) -> Analysis:
    """Contacts, support phases, segments, base foot and body orientation of a clip.

    orientation_distance  how far (leg lengths) the pelvis must move before
                          its movement defines the body orientation (4.3).
    contact_options       keyword thresholds of :func:`foot_contacts`.
    """
    if motion.n_frames == 0:
        raise ValueError("cannot analyse a clip with no frames")
    rig = rig or find_rig(motion)
    gpos = _foot_positions(motion, rig)
    up = detect_up(motion, rig) if up is None else np.asarray(up, dtype=np.float64)
    leg = 0.5 * (leg_length(motion.skeleton, rig, "L") + leg_length(motion.skeleton, rig, "R"))
    contacts = foot_contacts(motion, rig, up=up, positions=gpos, **contact_options)
    phases = support_phases(contacts)
    left, right = rig.leg("L"), rig.leg("R")
    pelvis = gpos[:, rig.pelvis]
    feet = base_foot(phases, gpos[:, left.ankle], gpos[:, right.ankle], pelvis, up)
    facing = pelvis_facing(gpos[:, left.hip], gpos[:, right.hip], up)
    distance = orientation_distance * leg
    return Analysis(
        fps=motion.fps,
        contacts=contacts,
        phases=phases,
        segments=phase_segments(phases),
        base_foot=feet,
        orientation_start=body_orientation(pelvis, facing, up, distance=distance),
        orientation_end=body_orientation(pelvis, facing, up, distance=distance, at_end=True),
        up=up,
        leg_length=leg,
        rig=rig,
    )
