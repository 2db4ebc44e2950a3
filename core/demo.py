"""Demo content authored in code: a small humanoid and five clips with true foot contacts.

The clips exist so that the add-on can be tried, and the analysis tested,
without any motion-capture file. They are built procedurally: a pelvis
trajectory and two foot trajectories are authored in seconds, and the legs
follow the feet by analytic IK (:func:`core.ik.leg_ik`). Because the feet are
authored, their contacts are known exactly, and each clip carries them.

Conventions of the demo, on top of those of :mod:`core.motion`:

* Metres, Z up, the floor is the plane z = 0. The character faces -Y at rest
  (Blender's convention for a character), so its left is +X; joints on that
  side end in ``.L``.
* Rest pose (every local rotation the identity): standing straight, arms
  hanging, feet flat with the ankles 8 cm above the floor and the balls of
  the feet (``toe.*``) at 2 cm. The body is 1.75 m tall (top of the head).
* Timings are in seconds; a clip of ``duration`` seconds sampled at ``fps``
  has ``floor(duration * fps) + 1`` frames, frame ``f`` at ``f / fps`` (the
  last at or just before ``duration``). The same clip at another rate is the
  same motion sampled more or less densely.
* ``contacts (F, 2)`` bool, columns [left, right]: True exactly in the frames
  where that foot is held fixed, flat on the floor. While True, the foot's
  ankle and toe do not move at all (to rounding); a foot that is False is
  either off the floor or moving (lift-off and touch-down happen at a clear
  speed, so a detector sees them within a frame or two).
* Everything is whole-array numpy over frames; the loops are over steps,
  feet and joints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import quat
from .ik import leg_ik
from .motion import Motion, Skeleton
from .plan import Clip
from .weights import cubic_hermite

GRAVITY = 9.81  # m/s^2, for the jump's flight phase

# name, parent, rest offset from the parent (metres, Z up, the character faces -Y, left is +X)
_JOINTS: tuple[tuple[str, str | None, tuple[float, float, float]], ...] = (
    ("hips", None, (0.0, 0.0, 1.01)),
    ("spine", "hips", (0.0, 0.0, 0.09)),
    ("chest", "spine", (0.0, 0.0, 0.17)),
    ("neck", "chest", (0.0, 0.0, 0.19)),
    ("head", "neck", (0.0, 0.0, 0.09)),
    ("shoulder.L", "chest", (0.03, 0.0, 0.15)),
    ("upper_arm.L", "shoulder.L", (0.15, 0.0, 0.0)),
    ("forearm.L", "upper_arm.L", (0.0, 0.0, -0.28)),
    ("hand.L", "forearm.L", (0.0, 0.0, -0.25)),
    ("shoulder.R", "chest", (-0.03, 0.0, 0.15)),
    ("upper_arm.R", "shoulder.R", (-0.15, 0.0, 0.0)),
    ("forearm.R", "upper_arm.R", (0.0, 0.0, -0.28)),
    ("hand.R", "forearm.R", (0.0, 0.0, -0.25)),
    ("thigh.L", "hips", (0.09, 0.0, -0.05)),
    ("shin.L", "thigh.L", (0.0, 0.0, -0.45)),
    ("foot.L", "shin.L", (0.0, 0.0, -0.43)),
    ("toe.L", "foot.L", (0.0, -0.13, -0.06)),
    ("thigh.R", "hips", (-0.09, 0.0, -0.05)),
    ("shin.R", "thigh.R", (0.0, 0.0, -0.45)),
    ("foot.R", "shin.R", (0.0, 0.0, -0.43)),
    ("toe.R", "foot.R", (0.0, -0.13, -0.06)),
)
_END_SITES = {
    "head": (0.0, 0.0, 0.20),
    "hand.L": (0.0, 0.0, -0.18),
    "hand.R": (0.0, 0.0, -0.18),
    "toe.L": (0.0, -0.05, -0.02),
    "toe.R": (0.0, -0.05, -0.02),
}

#: Joints of each foot, [left, right], in the order of the ``contacts`` columns.
FOOT_JOINTS: tuple[tuple[str, str], tuple[str, str]] = (("foot.L", "toe.L"), ("foot.R", "toe.R"))

_NAMES = tuple(name for name, _, _ in _JOINTS)
_OFFSETS = {name: np.array(offset) for name, _, offset in _JOINTS}
_ANKLE_HEIGHT = sum(_OFFSETS[j][2] for j in ("hips", "thigh.L", "shin.L", "foot.L"))  # 0.08 m above the floor
_HIP_DROP = -_OFFSETS["thigh.L"][2]  # the hip joints are this far below the hips joint
_LEG_LENGTH = float(np.linalg.norm(_OFFSETS["shin.L"]) + np.linalg.norm(_OFFSETS["foot.L"]))  # hip to ankle, straight
_REACH = 0.999 * _LEG_LENGTH  # the furthest a planted ankle may be from its hip (IK stays exact)
_SIDES = ("L", "R")
_SIDE_SIGN = {"L": 1.0, "R": -1.0}  # +X is the character's left


def demo_skeleton() -> Skeleton:
    """The demo humanoid: 21 joints, metres, Z up, facing -Y, 1.75 m tall.

    Joints (parents first): hips (the pelvis, carrying the world translation),
    spine, chest, neck, head; shoulder, upper_arm, forearm, hand and thigh,
    shin, foot (ankle), toe (ball of the foot), each with a ``.L`` and ``.R``.
    """
    index = {name: j for j, name in enumerate(_NAMES)}
    parents = [-1 if parent is None else index[parent] for _, parent, _ in _JOINTS]
    offsets = [offset for _, _, offset in _JOINTS]
    end_sites = {index[name]: np.array(offset) for name, offset in _END_SITES.items()}
    return Skeleton(_NAMES, parents, offsets, end_sites=end_sites, up=np.array([0.0, 0.0, 1.0]), unit=1.0)


@dataclass(frozen=True, eq=False)
class DemoClip:
    """One authored clip and its ground truth.

    name      the clip's name ("walk", "kick", "jump", "turn", "stand").
    motion    the :class:`Motion` (skeleton of :func:`demo_skeleton`).
    contacts  (F, 2) bool, [left, right]: True while that foot is planted,
              i.e. held fixed and flat on the floor, as authored.
    """

    name: str
    motion: Motion
    contacts: np.ndarray

    def __post_init__(self):
        contacts = np.array(self.contacts, dtype=bool, copy=True)
        if contacts.shape != (self.motion.n_frames, 2):
            raise ValueError(f"contacts must have shape ({self.motion.n_frames}, 2), got {contacts.shape}")
        contacts.setflags(write=False)
        object.__setattr__(self, "contacts", contacts)


def demo_clips(fps: float = 30.0) -> dict[str, DemoClip]:
    """Every demo clip sampled at ``fps``: walk, kick, jump, turn, stand."""
    return {clip.name: clip for clip in (walk(fps), kick(fps), jump(fps), turn(fps), stand(fps))}


# --- small authoring tools -------------------------------------------------------------------


def _frame_times(duration: float, fps: float) -> np.ndarray:
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    return np.arange(int(np.floor(duration * fps + 1e-6)) + 1) / fps


def _min_jerk(tau: np.ndarray) -> np.ndarray:
    """0 -> 1 with zero velocity and acceleration at both ends (``tau`` clipped to [0, 1])."""
    tau = np.clip(tau, 0.0, 1.0)
    return tau**3 * (10.0 - 15.0 * tau + 6.0 * tau**2)


def _keys(t: np.ndarray, times, values) -> np.ndarray:
    """Smooth, overshoot-free curve through keys (monotone cubic, flat at the first and last key).

    times (K,) increasing seconds, values (K,) or (K, D) -> (F,) or (F, D);
    held constant before the first key and after the last.
    """
    kt = np.asarray(times, dtype=np.float64)
    kv = np.asarray(values, dtype=np.float64)
    flat = kv.ndim == 1
    kv = kv[:, None] if flat else kv
    h = np.diff(kt)[:, None]
    delta = np.diff(kv, axis=0) / h
    slope = np.zeros_like(kv)
    if len(kt) > 2:
        d0, d1 = delta[:-1], delta[1:]
        w0, w1 = 2 * h[1:] + h[:-1], h[1:] + 2 * h[:-1]
        same_sign = d0 * d1 > 0
        safe0, safe1 = np.where(same_sign, d0, 1.0), np.where(same_sign, d1, 1.0)
        slope[1:-1] = np.where(same_sign, (w0 + w1) / (w0 / safe0 + w1 / safe1), 0.0)
    i = np.clip(np.searchsorted(kt, t, side="right") - 1, 0, len(kt) - 2)
    s = np.clip((t - kt[i]) / h[i, 0], 0.0, 1.0)[:, None]
    out = cubic_hermite(s, kv[i], slope[i] * h[i], kv[i + 1], slope[i + 1] * h[i])
    return out[:, 0] if flat else out


def _piecewise(t: np.ndarray, pieces) -> np.ndarray:
    """Each piece (t0, t1, fn(seconds, s in [0, 1])) fills the times of ``t`` in [t0, t1]."""
    out = np.zeros_like(t)
    for t0, t1, fn in pieces:
        m = (t >= t0) & (t <= t1)
        out[m] = fn(t[m], (t[m] - t0) / (t1 - t0))
    return out


def _about(axis: str, angle: np.ndarray) -> np.ndarray:
    """Rotations ``(F, 4)`` by ``angle (F,)`` radians about a world/local axis "X", "Y" or "Z"."""
    return quat.from_axis_angle(np.eye(3)["XYZ".index(axis)], np.asarray(angle, dtype=np.float64))


def _euler(x=0.0, y=0.0, z=0.0, n: int = 1) -> np.ndarray:
    """``R_Z(z) R_Y(y) R_X(x)`` as ``(n, 4)``: pitch about X (+ leans forward, towards -Y), then
    roll about Y, then heading about Z (+ turns left)."""
    x, y, z = (np.broadcast_to(np.asarray(a, dtype=np.float64), (n,)) for a in (x, y, z))
    return quat.mul(_about("Z", z), quat.mul(_about("Y", y), _about("X", x)))


def _deg(*angles: float) -> np.ndarray:
    return np.radians(np.asarray(angles, dtype=np.float64))


def _forward(yaw: np.ndarray) -> np.ndarray:
    """Horizontal facing direction ``(F, 3)`` for headings ``yaw (F,)`` (0 faces -Y)."""
    yaw = np.asarray(yaw, dtype=np.float64)
    return np.stack([np.sin(yaw), -np.cos(yaw), np.zeros_like(yaw)], axis=-1)


def _side_of(yaw: float, side: str, width: float, center=(0.0, 0.0)) -> np.ndarray:
    """Floor point ``width`` to the ``side`` of ``center`` for a body heading ``yaw``."""
    c, s = np.cos(yaw), np.sin(yaw)
    x = _SIDE_SIGN[side] * width
    return np.array([center[0] + c * x, center[1] + s * x])


# --- feet ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plant:
    """A foot held flat on the floor from ``start`` to ``stop`` seconds (both included)."""

    start: float
    stop: float
    xy: tuple[float, float]  # ankle position on the floor plane
    yaw: float  # heading of the foot, radians, 0 faces -Y


# A swing: (tau (n,) in (0, 1), seconds since lift-off (n,), plant left, plant reached)
#          -> (ankle positions (n, 3), foot headings (n,), foot pitch (n,), + points the toes down)
_Swing = Callable[[np.ndarray, np.ndarray, _Plant, _Plant], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _step(lift: float) -> _Swing:
    """An ordinary step, flat-footed: up ``lift`` metres and across to the next plant.

    Height follows a flat-topped arc, ``lift (1 - (1 - sin(pi tau))^2)``, which
    leaves and meets the floor at a clear vertical speed (``2 pi lift`` per
    swing duration) and stays high in mid-swing; across the floor and in
    heading the foot moves mostly min-jerk, with a fifth of linear motion so
    that it is already moving forward at lift-off and still at touch-down.
    """

    def swing(tau, _, p0: _Plant, p1: _Plant):
        s = (0.8 * _min_jerk(tau) + 0.2 * tau)[:, None]
        xy = (1 - s) * np.array(p0.xy) + s * np.array(p1.xy)
        z = _ANKLE_HEIGHT + lift * (1.0 - (1.0 - np.sin(np.pi * tau)) ** 2)
        yaw = p0.yaw + (p1.yaw - p0.yaw) * s[:, 0]
        return np.column_stack([xy, z]), yaw, np.zeros_like(tau)

    return swing


@dataclass(frozen=True)
class _FootTrack:
    position: np.ndarray  # (F, 3) ankle target
    rotation: np.ndarray  # (F, 4) world orientation of the foot
    planted: np.ndarray  # (F,) bool
    yaw: np.ndarray  # (F,) heading, for the knee direction


def _foot_track(t: np.ndarray, plants: list[_Plant], swings: list[_Swing]) -> _FootTrack:
    """Ankle targets, foot orientations and contacts ``(F, ...)`` from plants and the swings between them.

    The first plant must start at 0 and the last end at the clip's end; a
    frame within ``[start, stop]`` of a plant is planted (to within 1e-9 s, so
    that a boundary that falls on a frame counts as planted at any frame rate).
    """
    if len(swings) != len(plants) - 1:
        raise ValueError(f"{len(plants)} plants need {len(plants) - 1} swings, got {len(swings)}")
    F = len(t)
    pos, yaw, pitch = np.zeros((F, 3)), np.zeros(F), np.zeros(F)
    planted = np.zeros(F, dtype=bool)
    eps = 1e-9
    for k, plant in enumerate(plants):
        held = (t >= plant.start - eps) & (t <= plant.stop + eps)
        pos[held] = [plant.xy[0], plant.xy[1], _ANKLE_HEIGHT]
        yaw[held] = plant.yaw
        planted |= held
        if k + 1 < len(plants):
            nxt = plants[k + 1]
            flying = (t > plant.stop + eps) & (t < nxt.start - eps)
            tau = (t[flying] - plant.stop) / (nxt.start - plant.stop)
            pos[flying], yaw[flying], pitch[flying] = swings[k](tau, t[flying] - plant.stop, plant, nxt)
    if not (t[0] >= plants[0].start - eps and t[-1] <= plants[-1].stop + eps):
        raise ValueError("plants must cover the clip's first and last frames")
    rotation = quat.mul(_about("Z", yaw), _about("X", pitch))
    return _FootTrack(pos, rotation, planted, yaw)


# --- pelvis and assembly ---------------------------------------------------------------------


def _reachable_height(t: np.ndarray, pelvis_xy: np.ndarray, pelvis_rot: np.ndarray, feet: list[_FootTrack],
                      nominal: np.ndarray) -> np.ndarray:
    """Pelvis height ``(F,)``: ``nominal``, lowered smoothly wherever a leg could not reach its foot.

    For each leg the highest pelvis that keeps the ankle within ``_REACH`` of
    the hip follows from the horizontal hip-ankle distance; the pelvis follows
    a smooth curve under the lowest of these limits and ``nominal``
    (:func:`_smooth_below`), so it dips where the feet are far apart (double
    support) and rises over a single planted foot: the bob of a walk comes out
    of the leg geometry.
    """
    limits = [np.broadcast_to(np.asarray(nominal, dtype=np.float64), t.shape)]
    for side, foot in zip(_SIDES, feet):
        hip = quat.mul_vec(pelvis_rot, _OFFSETS[f"thigh.{side}"])
        horizontal = np.linalg.norm(pelvis_xy + hip[:, :2] - foot.position[:, :2], axis=-1)
        if np.any(horizontal >= _REACH):
            raise ValueError(f"the {side} foot is authored out of the leg's reach (horizontal {horizontal.max():.3f} m)")
        limits.append(foot.position[:, 2] + np.sqrt(_REACH**2 - horizontal**2) - hip[:, 2])
    return _smooth_below(np.min(limits, axis=0), 1.0 / (t[1] - t[0]) if len(t) > 1 else 30.0)


def _smooth_below(limit: np.ndarray, fps: float, *, max_accel: float = 6.0, blur_s: float = 0.035) -> np.ndarray:
    """A smooth curve ``(F,)`` that never rises above ``limit (F,)``.

    Two whole-array steps: a parabolic erosion, ``e(t) = min_s limit(s) + c (t - s)^2``
    with ``c = max_accel / 2``, which keeps under the limit and bends upwards
    by at most ``max_accel`` (m/s^2), then a Gaussian blur of ``blur_s``
    seconds that rounds the remaining corners. Because ``e - c t^2`` is
    concave, the blur raises ``e`` by at most ``c`` times the kernel's
    variance (Jensen), and the result is lowered by exactly that, so it stays
    under the limit at every frame.
    """
    c = 0.5 * max_accel
    r = int(np.ceil(4.0 * blur_s * fps))
    padded = np.pad(limit, r, mode="edge")
    time = np.arange(len(padded)) / fps
    eroded = np.min(padded[None, :] + c * (time[:, None] - time[None, :]) ** 2, axis=1)
    lag = np.arange(-r, r + 1) / fps
    kernel = np.exp(-0.5 * (lag / blur_s) ** 2)
    kernel /= kernel.sum()
    return np.convolve(eroded, kernel, mode="valid") - c * np.sum(kernel * lag**2)


def _assemble(name: str, fps: float, pelvis: np.ndarray, pelvis_rot: np.ndarray, feet: list[_FootTrack],
              local: dict[str, np.ndarray]) -> DemoClip:
    """Pelvis, upper-body local rotations and foot tracks -> a clip, the legs solved by IK."""
    skel = demo_skeleton()
    F = len(pelvis)
    rotations = quat.identity((F, len(skel)))
    rotations[:, 0] = pelvis_rot
    for joint, rotation in local.items():
        rotations[:, skel.index(joint)] = rotation
    motion = Motion.from_root(skel, rotations, pelvis, fps)
    for side, foot in zip(_SIDES, feet):
        # (the authored feet are the truth and the pelvis keeps them within _REACH: met
        # exactly, with no soft zone, core.ik.soft_extension)
        motion = leg_ik(motion, f"thigh.{side}", f"shin.{side}", f"foot.{side}", foot.position,
                        poles=_forward(foot.yaw), ankle_rotations=foot.rotation, zone=0.0)
    return DemoClip(name, motion, np.column_stack([feet[0].planted, feet[1].planted]))


def _arms(F: int, swing_l, swing_r, *, spread_deg: float = 6.0, elbow_deg=15.0) -> dict[str, np.ndarray]:
    """Local arm rotations: ``swing_*`` (F,) radians about X (+ swings the arm back), a constant
    outward spread, and the elbows bent forward by ``elbow_deg`` (scalar or (F,))."""
    elbow = np.radians(np.broadcast_to(np.asarray(elbow_deg, dtype=np.float64), (F,)))
    out = {}
    for side, swing in (("L", swing_l), ("R", swing_r)):
        spread = -_SIDE_SIGN[side] * np.radians(spread_deg)  # about Y: - takes the left arm out to +X
        out[f"upper_arm.{side}"] = _euler(x=swing, y=spread, n=F)
        out[f"forearm.{side}"] = _about("X", -elbow)
    return out


# --- the clips -------------------------------------------------------------------------------


def walk(fps: float = 30.0) -> DemoClip:
    """Six steps straight ahead (-Y) at about 1.2 m/s, from standing to standing.

    Steps of 0.55 s (0.45 s swing, 0.1 s double support), 0.66 m long, the
    first and the last 0.4 m; the right foot leads. Swing feet rise 12 cm
    (flat, so the toes clear the floor by the same), the pelvis sways towards
    the supporting foot, turns with the stepping hip and bobs (lowest in
    double support), the chest counter-rotates and the arms swing in
    counter-phase to the legs.
    """
    step_time, swing_time, width, lift = 0.55, 0.45, 0.08, 0.12
    toe_out = np.radians(4.0)
    first = 0.5  # first lift-off
    landings = np.cumsum([0.4, 0.66, 0.66, 0.66, 0.4])  # forward distance of each new foothold
    n_steps = 6
    lift_off = first + step_time * np.arange(n_steps)
    touch_down = lift_off + swing_time
    duration = touch_down[-1] + 0.6
    t = _frame_times(duration, fps)

    # footholds: the right foot lands at landings[0], [2], [4]; the left at [1], [3], and beside the right
    ahead = {"R": [0.0, landings[0], landings[2], landings[4]], "L": [0.0, landings[1], landings[3], landings[4]]}
    swings_of = {"R": [0, 2, 4], "L": [1, 3, 5]}
    feet = []
    for side in _SIDES:
        ks = swings_of[side]
        starts = [0.0] + [touch_down[k] for k in ks]
        stops = [lift_off[k] for k in ks] + [duration]
        yaw = _SIDE_SIGN[side] * toe_out
        plants = [_Plant(a, b, (_SIDE_SIGN[side] * width, -d), yaw) for a, b, d in zip(starts, stops, ahead[side])]
        feet.append(_foot_track(t, plants, [_step(lift)] * len(ks)))

    # the pelvis passes mid-way between the feet in the middle of each double support
    double_support = touch_down + 0.5 * (step_time - swing_time)
    left_at = np.array([0.0, landings[1], landings[1], landings[3], landings[3], landings[4]])
    right_at = np.array([landings[0], landings[0], landings[2], landings[2], landings[4], landings[4]])
    along = _keys(t, [0.2, first, *double_support[:-1], touch_down[-1] + 0.35],
                  [0.0, 0.04, *(0.5 * (left_at + right_at))[:-1], landings[4]])
    # +1 while the left foot supports (the right swings: even steps), -1 for the right
    left_supports = np.where(np.arange(n_steps) % 2 == 0, 1.0, -1.0)
    sway = _keys(t, [0.1, first - 0.05, *(lift_off + 0.5 * swing_time), duration - 0.3],
                 [0.0, 0.02, *(0.025 * left_supports), 0.0])
    # +1 with the right foot ahead (after a right step), -1 with the left ahead, 0 with the feet together
    right_ahead = _keys(t, [first - 0.1, *double_support, duration - 0.2], [0.0, *left_supports[:-1], 0.0, 0.0])
    walking = _keys(t, [first - 0.3, first + 0.3, touch_down[-1] - 0.2, touch_down[-1] + 0.3], [0.0, 1.0, 1.0, 0.0])
    # the right hip comes forward with the right foot (+ about Z); a slight forward lean and a list to the swing side
    pelvis_rot = _euler(x=np.radians(3.0) * walking, y=np.radians(-3.0) * sway / 0.025,
                        z=np.radians(7.0) * right_ahead, n=len(t))
    pelvis_xy = np.column_stack([sway, -along])
    # knees a little softer while walking than standing (the legs' reach lowers it further in double support)
    z = _reachable_height(t, pelvis_xy, pelvis_rot, feet, 1.03 - 0.035 * walking)
    pelvis = np.column_stack([pelvis_xy, z])

    # arms in counter-phase: the left arm swings forward (-) with the right foot ahead; the chest
    # turns against the pelvis and the head keeps looking ahead
    local = _arms(len(t), -np.radians(22.0) * right_ahead, np.radians(22.0) * right_ahead,
                  elbow_deg=18.0 + 8.0 * walking)
    local["spine"] = _euler(x=np.radians(2.0) * walking, n=len(t))
    local["chest"] = _euler(z=-np.radians(9.0) * right_ahead, n=len(t))
    local["head"] = _euler(z=np.radians(2.0) * right_ahead, n=len(t))
    return _assemble("walk", fps, pelvis, pelvis_rot, feet, local)


def kick(fps: float = 30.0) -> DemoClip:
    """Standing, shift onto the left foot, kick forward and up with the right, return.

    The right foot is off the floor from 1.0 s to 2.0 s, more than 10 cm up
    for about 0.85 s, its ankle peaking 0.6 m ahead and 0.42 m higher than
    when planted, toes pointed; the left foot stays planted throughout.
    """
    duration, lift_off, touch_down = 3.0, 1.0, 2.0
    t = _frame_times(duration, fps)
    reach, back, rise, point = 0.60, 0.10, 0.42, 0.6

    def kick_swing(tau, _, p0: _Plant, p1: _Plant):
        s = np.sin(np.pi * tau)
        forward = (reach + back) * s**2 - back * s  # a little wind-up back, then out and up
        pos = np.column_stack([np.full_like(tau, p0.xy[0]), p0.xy[1] - forward, _ANKLE_HEIGHT + rise * s])
        return pos, np.full_like(tau, p0.yaw), point * s**2

    toe_out = np.radians(4.0)
    left = [_Plant(0.0, duration, tuple(_side_of(0.0, "L", 0.09)), toe_out)]
    right = [_Plant(0.0, lift_off, tuple(_side_of(0.0, "R", 0.09)), -toe_out),
             _Plant(touch_down, duration, tuple(_side_of(0.0, "R", 0.09)), -toe_out)]
    feet = [_foot_track(t, left, []), _foot_track(t, right, [kick_swing])]

    over_left = _keys(t, [0.4, lift_off, touch_down, 2.6], [0.0, 0.07, 0.07, 0.0])
    lean_back = _keys(t, [lift_off, 1.5, touch_down + 0.2], [0.0, 1.0, 0.0])
    pelvis_xy = np.column_stack([over_left, 0.02 * lean_back])
    pelvis_rot = _euler(x=np.radians(-8.0) * lean_back, y=np.radians(-4.0) * over_left / 0.07, n=len(t))
    z = _reachable_height(t, pelvis_xy, pelvis_rot, feet, np.full(len(t), 1.02))
    pelvis = np.column_stack([pelvis_xy, z])

    spread = _keys(t, [0.6, 1.2, 1.9, 2.5], [6.0, 25.0, 25.0, 6.0])
    F = len(t)
    local = {}
    for side, swing in (("L", -np.radians(30.0) * lean_back), ("R", np.radians(35.0) * lean_back)):
        local[f"upper_arm.{side}"] = _euler(x=swing, y=-_SIDE_SIGN[side] * np.radians(spread), n=F)
        local[f"forearm.{side}"] = _about("X", np.full(F, -np.radians(20.0)))
    local["chest"] = _euler(x=np.radians(6.0) * lean_back, n=F)
    local["neck"] = _euler(x=np.radians(5.0) * lean_back, n=F)
    return _assemble("kick", fps, pelvis, pelvis_rot, feet, local)


def jump(fps: float = 30.0) -> DemoClip:
    """Crouch, jump 0.36 m forward with both feet, land, recover.

    Take-off at 1.15 s, landing at 1.55 s: 0.4 s of flight in which the
    pelvis is ballistic (constant horizontal velocity, vertical parabola under
    ``GRAVITY``) and the feet tuck up 12 cm under it. Arms swing back in the
    crouch and forward-up for the take-off.
    """
    duration, crouch, take_off, landing, settled = 2.9, 0.4, 1.15, 1.55, 1.85
    flight = landing - take_off
    t = _frame_times(duration, fps)
    stand_z = _ANKLE_HEIGHT + _HIP_DROP + 0.99 * _LEG_LENGTH
    crouch_z, land_z = stand_z - 0.28, stand_z - 0.20
    jump_y, pelvis_back, speed = -0.36, 0.03, 0.6  # forward is -Y; the pelvis sits back 3 cm in the crouch
    takeoff_y = pelvis_back - 0.06
    landing_y = takeoff_y - speed * flight
    # Straight-ish legs at take-off and landing, as far as the farther of the two hip-ankle offsets allows.
    offset = max(abs(takeoff_y - 0.0), abs(landing_y - jump_y))
    high_z = _ANKLE_HEIGHT + _HIP_DROP + np.sqrt((0.995 * _LEG_LENGTH) ** 2 - offset**2)
    v_up = 0.5 * GRAVITY * flight

    def piecewise(pieces):
        return _piecewise(t, pieces)

    def ballistic(seconds):
        since = seconds - take_off
        return high_z + v_up * since - 0.5 * GRAVITY * since**2

    z = piecewise([
        (0.0, crouch, lambda tt, s: np.full_like(tt, stand_z)),
        (crouch, 0.9, lambda tt, s: stand_z + (crouch_z - stand_z) * _min_jerk(s)),
        (0.9, take_off, lambda tt, s: cubic_hermite(s, crouch_z, 0.0, high_z, v_up * (take_off - 0.9))),
        (take_off, landing, lambda tt, s: ballistic(tt)),
        (landing, settled, lambda tt, s: cubic_hermite(s, high_z, -v_up * (settled - landing), land_z, 0.0)),
        (settled, 2.45, lambda tt, s: land_z + (stand_z - land_z) * _min_jerk(s)),
        (2.45, duration, lambda tt, s: np.full_like(tt, stand_z)),
    ])
    y = piecewise([
        (0.0, crouch, lambda tt, s: np.zeros_like(tt)),
        (crouch, 0.9, lambda tt, s: pelvis_back * _min_jerk(s)),
        (0.9, take_off, lambda tt, s: cubic_hermite(s, pelvis_back, 0.0, takeoff_y, -speed * (take_off - 0.9))),
        (take_off, landing, lambda tt, s: takeoff_y - speed * (tt - take_off)),
        (landing, settled, lambda tt, s: cubic_hermite(s, landing_y, -speed * (settled - landing), jump_y, 0.0)),
        (settled, duration, lambda tt, s: np.full_like(tt, jump_y)),
    ])
    pelvis = np.column_stack([np.zeros_like(t), y, z])
    # lean forward in the crouches, upright at take-off and landing (where the legs are at full stretch)
    lean = _keys(t, [crouch, 0.9, take_off, 1.35, landing, 1.8, 2.4], _deg(0, 18, 0, -3, 0, 12, 0))
    pelvis_rot = _euler(x=lean, n=len(t))

    tuck, point = 0.12, 0.35

    def flight_swing(tau, since, p0: _Plant, p1: _Plant):
        s = _min_jerk(tau)[:, None]
        xy = (1 - s) * np.array(p0.xy) + s * np.array(p1.xy)
        rise = ballistic(take_off + since) - high_z  # the feet leave and meet the floor with the pelvis' speed
        z = _ANKLE_HEIGHT + rise + tuck * np.sin(np.pi * tau) ** 2
        return np.column_stack([xy, z]), np.full_like(tau, p0.yaw), point * np.sin(np.pi * tau) ** 2

    feet = []
    for side in _SIDES:
        x = _SIDE_SIGN[side] * 0.09
        plants = [_Plant(0.0, take_off, (x, 0.0), 0.0), _Plant(landing, duration, (x, jump_y), 0.0)]
        feet.append(_foot_track(t, plants, [flight_swing]))

    arm = _keys(t, [crouch, 0.9, take_off, 1.4, 1.75, 2.4], _deg(0, 45, -110, -90, -25, 0))
    local = _arms(len(t), arm, arm, spread_deg=8.0, elbow_deg=15.0)
    spine = _keys(t, [crouch, 0.9, take_off, landing, 1.8, 2.4], _deg(0, 15, -5, 0, 12, 0))
    chest = _keys(t, [crouch, 0.9, take_off, landing, 1.8, 2.4], _deg(0, 10, -5, 0, 8, 0))
    local["spine"], local["chest"] = _euler(x=spine, n=len(t)), _euler(x=chest, n=len(t))
    local["neck"] = _euler(x=-0.6 * (lean + spine + chest), n=len(t))  # keep looking ahead
    return _assemble("jump", fps, pelvis, pelvis_rot, feet, local)


def turn(fps: float = 30.0) -> DemoClip:
    """Turn left on the spot by 90 degrees in three small steps (left, right, left).

    The character ends facing +X. Steps of 0.35-0.4 s with the feet 12 cm up;
    the pelvis leans over the supporting foot, and the chest and head lead the
    turn.
    """
    duration = 2.6
    t = _frame_times(duration, fps)
    quarter = np.pi / 2
    lift = 0.12
    left = [_Plant(0.0, 0.45, tuple(_side_of(0.0, "L", 0.09)), 0.0),
            _Plant(0.85, 1.55, tuple(_side_of(np.radians(50.0), "L", 0.09)), np.radians(50.0)),
            _Plant(1.9, duration, tuple(_side_of(quarter, "L", 0.09)), quarter)]
    right = [_Plant(0.0, 1.0, tuple(_side_of(0.0, "R", 0.09)), 0.0),
             _Plant(1.4, duration, tuple(_side_of(quarter, "R", 0.09)), quarter)]
    feet = [_foot_track(t, left, [_step(lift)] * 2), _foot_track(t, right, [_step(lift)])]

    heading = _keys(t, [0.3, 0.85, 1.4, 1.95], _deg(0, 45, 80, 90))
    # over the supporting foot in the middle of each step, centred in between
    toward = [np.zeros(2), 0.3 * np.array(right[0].xy), np.zeros(2), 0.3 * np.array(left[1].xy), np.zeros(2),
              0.3 * np.array(right[1].xy), np.zeros(2)]
    pelvis_xy = _keys(t, [0.25, 0.65, 0.92, 1.2, 1.47, 1.72, 2.1], toward)
    pelvis_rot = _euler(z=heading, n=len(t))
    z = _reachable_height(t, pelvis_xy, pelvis_rot, feet, np.full(len(t), 1.02))
    pelvis = np.column_stack([pelvis_xy, z])

    local = _arms(len(t), np.zeros(len(t)), np.zeros(len(t)), spread_deg=7.0, elbow_deg=15.0)
    local["chest"] = _euler(z=_keys(t, [0.3, 0.7, 1.3, 1.9], _deg(0, 12, 10, 0)), n=len(t))
    local["head"] = _euler(z=_keys(t, [0.25, 0.6, 1.2, 1.8], _deg(0, 15, 10, 0)), n=len(t))
    return _assemble("turn", fps, pelvis, pelvis_rot, feet, local)


def stand(fps: float = 30.0) -> DemoClip:
    """Four seconds of idle standing: slow sway and breathing, both feet planted throughout."""
    duration = 4.0
    t = _frame_times(duration, fps)
    feet = [_foot_track(t, [_Plant(0.0, duration, tuple(_side_of(0.0, side, 0.09)), 0.0)], []) for side in _SIDES]
    pelvis_xy = np.column_stack([0.012 * np.sin(2 * np.pi * t / 3.6), 0.008 * np.sin(2 * np.pi * t / 5.1 + 1.0)])
    pelvis_rot = _euler(y=np.radians(1.5) * np.sin(2 * np.pi * t / 3.6), z=np.radians(2.0) * np.sin(2 * np.pi * t / 4.4), n=len(t))
    nominal = 1.0 + 0.004 * np.sin(2 * np.pi * t / 3.2)
    z = _reachable_height(t, pelvis_xy, pelvis_rot, feet, nominal)
    pelvis = np.column_stack([pelvis_xy, z])
    breath = np.sin(2 * np.pi * t / 3.2)
    local = _arms(len(t), np.radians(2.0) * breath, np.radians(2.0) * breath, spread_deg=6.0, elbow_deg=12.0)
    local["chest"] = _euler(x=np.radians(-1.5) * breath, n=len(t))
    local["head"] = _euler(z=np.radians(4.0) * np.sin(2 * np.pi * t / 4.5 + 0.5), x=np.radians(1.0) * breath, n=len(t))
    return _assemble("stand", fps, pelvis, pelvis_rot, feet, local)


def hop(fps: float = 30.0, side: str = "R") -> DemoClip:
    """Hop three times in place on one foot (``side``, "R" or "L"), the other foot lifted behind.

    Standing until 0.6 s, the pelvis shifts over the hopping foot and the
    other foot lifts (single support), three hops of 0.28 s of flight, each
    from a crouch (pelvis ballistic under ``GRAVITY`` in the air, the hopping
    foot tucking up under it), then the lifted foot comes down at 3.2 s.
    Support phases: DS, S, ∅, S, ∅, S, ∅, S, DS with S the hopping side: a
    right hop and a left hop have single supports on opposite feet, the
    failure case of Ménardais et al. 2004 (§6). Named ``hop_right`` or
    ``hop_left``.
    """
    if side not in _SIDES:
        raise ValueError(f"side must be 'L' or 'R', got {side!r}")
    other = "L" if side == "R" else "R"
    duration, lift, down = 4.0, 0.6, 3.2
    take_offs = np.array([1.0, 1.6, 2.2])
    flight = 0.28
    landings = take_offs + flight
    t = _frame_times(duration, fps)
    over = 0.07  # how far the pelvis moves towards the hopping foot (of the 0.09 to it)
    high_z = _ANKLE_HEIGHT + _HIP_DROP + np.sqrt((0.985 * _LEG_LENGTH) ** 2 - over**2)  # legs near straight
    stand_z, crouch_z = high_z - 0.02, high_z - 0.12
    v_up = 0.5 * GRAVITY * flight

    def ballistic(seconds, take_off):
        since = seconds - take_off
        return high_z + v_up * since - 0.5 * GRAVITY * since**2

    def pelvis_height(times: np.ndarray) -> np.ndarray:
        pieces = [(0.0, lift, lambda tt, s: np.full_like(tt, stand_z))]
        ground = [(lift, stand_z, 0.0)] + [(land, high_z, -v_up) for land in landings[:-1]]
        for (start, z0, v0), take_off, land in zip(ground, take_offs, landings):
            mid = 0.5 * (start + take_off)
            pieces += [
                (start, mid, lambda tt, s, z0=z0, v0=v0, d=mid - start: cubic_hermite(s, z0, v0 * d, crouch_z, 0.0)),
                (mid, take_off, lambda tt, s, d=take_off - mid: cubic_hermite(s, crouch_z, 0.0, high_z, v_up * d)),
                (take_off, land, lambda tt, s, t0=take_off: ballistic(tt, t0)),
            ]
        settled = landings[-1] + 0.35
        pieces += [
            (landings[-1], settled, lambda tt, s, d=settled - landings[-1]: cubic_hermite(s, high_z, -v_up * d, crouch_z + 0.04, 0.0)),
            (settled, down, lambda tt, s: crouch_z + 0.04 + (stand_z - crouch_z - 0.04) * _min_jerk(s)),
            (down, duration, lambda tt, s: np.full_like(tt, stand_z)),
        ]
        return _piecewise(times, pieces)

    toward = _SIDE_SIGN[side] * over

    def pelvis_x(times: np.ndarray) -> np.ndarray:
        return _keys(times, [0.1, lift - 0.05, down + 0.1, duration - 0.2], [0.0, toward, toward, 0.0])

    hop_foot = tuple(_side_of(0.0, side, 0.09))
    lifted_foot = tuple(_side_of(0.0, other, 0.09))
    tuck, point, ramp = 0.10, 0.3, 0.3

    def hop_swing(tau, since, p0: _Plant, p1: _Plant):
        rise = ballistic(p0.stop + since, p0.stop) - high_z  # the foot leaves and meets the floor with the pelvis
        z = _ANKLE_HEIGHT + rise + tuck * np.sin(np.pi * tau) ** 2
        xy = np.broadcast_to(np.array(p0.xy), (len(tau), 2))
        return np.column_stack([xy, z]), np.full_like(tau, p0.yaw), point * np.sin(np.pi * tau) ** 2

    def lifted_swing(tau, since, p0: _Plant, p1: _Plant):
        # held behind and under its hip, following the pelvis; it leaves and meets the floor along a
        # quarter sine (a clear speed at both ends)
        times = p0.stop + since
        total = p1.start - p0.stop
        up = np.sin(0.5 * np.pi * np.minimum(1.0, np.minimum(since, total - since) / ramp))[:, None]
        held = np.column_stack([pelvis_x(times) + _SIDE_SIGN[other] * 0.09, np.full_like(times, p0.xy[1] + 0.15),
                                pelvis_height(times) - 0.65])
        base = np.array([p0.xy[0], p0.xy[1], _ANKLE_HEIGHT])
        return base + up * (held - base), np.full_like(tau, p0.yaw), 0.4 * up[:, 0]

    hop_plants = [_Plant(a, b, hop_foot, 0.0) for a, b in zip([0.0, *landings], [*take_offs, duration])]
    lifted_plants = [_Plant(0.0, lift, lifted_foot, 0.0), _Plant(down, duration, lifted_foot, 0.0)]
    tracks = {side: _foot_track(t, hop_plants, [hop_swing] * len(take_offs)),
              other: _foot_track(t, lifted_plants, [lifted_swing])}
    feet = [tracks["L"], tracks["R"]]

    pelvis = np.column_stack([pelvis_x(t), np.zeros_like(t), pelvis_height(t)])
    crouches = 0.5 * (np.concatenate([[lift], landings[:-1]]) + take_offs)
    lean = _keys(t, np.sort(np.concatenate([crouches, take_offs, [landings[-1] + 0.35, down]])),
                 _deg(*([10, 0] * len(take_offs)), 8, 0))
    pelvis_rot = _euler(x=lean, y=-np.radians(4.0) * pelvis[:, 0] / over, n=len(t))

    # arms out for balance, swinging up with each take-off
    arm = _keys(t, np.sort(np.concatenate([crouches, take_offs])), _deg(*([25, -20] * len(take_offs))))
    local = _arms(len(t), arm, arm, spread_deg=25.0, elbow_deg=25.0)
    local["spine"] = _euler(x=0.5 * lean, n=len(t))
    local["neck"] = _euler(x=-lean, n=len(t))  # keep looking ahead
    return _assemble(f"hop_{'right' if side == 'R' else 'left'}", fps, pelvis, pelvis_rot, feet, local)


def hop_clips(fps: float = 30.0) -> dict[str, DemoClip]:
    """A right-foot hop and a left-foot hop (:func:`hop`), by name: ``hop_right``, ``hop_left``.

    Kept apart from :func:`demo_clips` (the demo scene's clips): together they
    show a synchronization that must wait (Ménardais et al. 2004, §6).
    """
    return {clip.name: clip for clip in (hop(fps, "R"), hop(fps, "L"))}


def raise_hand(fps: float = 30.0, *, elevation_deg: float = 120.0, spread_deg: float = 20.0,
               peak_s: float = 1.2, name: str = "raise") -> DemoClip:
    """Standing, the right hand raised to one height and side and lowered again: an example for ``reach``.

    Both feet stay planted. From hanging, the right upper arm swings forward
    and up by ``elevation_deg`` (0 hanging, 90 pointing ahead, 180 straight
    up) and out to the side by ``spread_deg``, the elbow straightening as it
    goes; the hand is highest at ``peak_s`` seconds, and the arm is down again
    by 2.6 s, the clip's end. The chest leans back a little with high raises.
    Examples of one action that differ in where the hand goes and when it
    gets there are what Juang et al. 2009 (section 3.1) register and blend.
    """
    if not 0.0 < elevation_deg <= 180.0:
        raise ValueError(f"elevation_deg must be in (0, 180], got {elevation_deg}")
    if not 0.4 <= peak_s <= 2.0:
        raise ValueError(f"peak_s must be between 0.4 and 2.0 seconds, got {peak_s}")
    duration = 2.6
    t = _frame_times(duration, fps)
    feet = [_foot_track(t, [_Plant(0.0, duration, tuple(_side_of(0.0, side, 0.09)), 0.0)], []) for side in _SIDES]
    pelvis_xy = np.column_stack([0.006 * np.sin(2 * np.pi * t / 3.0), np.zeros_like(t)])
    pelvis_rot = _euler(z=np.radians(1.0) * np.sin(2 * np.pi * t / 3.4), n=len(t))
    z = _reachable_height(t, pelvis_xy, pelvis_rot, feet, np.full_like(t, 1.0))
    pelvis = np.column_stack([pelvis_xy, z])
    # up over [0.2 s, peak], held 0.15 s, down by 2.5 s, easing in and out (no overshoot past the peak)
    up = _keys(t, [0.2, peak_s, peak_s + 0.15, 2.5], [0.0, 1.0, 1.0, 0.0])
    local = _arms(len(t), np.zeros_like(t), np.zeros_like(t), spread_deg=6.0, elbow_deg=15.0 - 10.0 * up)
    # out to the side about the vertical (Z), so that a raised arm swings out rather than twisting;
    # - turns the right arm towards -X, the character's right
    local["upper_arm.R"] = _euler(x=-np.radians(elevation_deg) * up, y=np.radians(6.0), z=-np.radians(spread_deg) * up,
                                  n=len(t))
    local["chest"] = _euler(x=np.radians(-4.0) * up * elevation_deg / 180.0, n=len(t))
    return _assemble(name, fps, pelvis, pelvis_rot, feet, local)


#: The reach examples' (elevation, spread, time of the peak): high and low, near the body and out to the side.
_REACHES = ((95.0, 10.0, 1.0), (95.0, 45.0, 1.3), (130.0, 5.0, 1.2), (130.0, 40.0, 1.1),
            (165.0, 10.0, 1.3), (165.0, 35.0, 1.0))


def reach_examples(fps: float = 30.0) -> dict[str, DemoClip]:
    """Six right-hand raises (:func:`raise_hand`) by name, ``raise_1`` .. ``raise_6``: one action whose
    hand ends at six heights and sides, for ``python -m core reach`` and Reach Target."""
    return {f"raise_{k}": raise_hand(fps, elevation_deg=e, spread_deg=s, peak_s=p, name=f"raise_{k}")
            for k, (e, s, p) in enumerate(_REACHES, start=1)}


def write_demo_files(folder, fps: float = 30.0) -> dict[str, list]:
    """Write the demo content as BVH files (Z up, metres) under ``folder``, for the command line's examples.

    ``clips/``    the demo clips (:func:`demo_clips`) and the two hops (:func:`hop_clips`):
                  what ``synthesize``, ``blend`` and ``analyze`` read, and a library for
                  ``hops`` and ``assemble``;
    ``reaches/``  the raises of :func:`reach_examples`: the examples ``reach`` blends.

    Returns ``{"clips": [paths], "reaches": [paths]}``. An existing file of the same name is replaced.
    """
    from pathlib import Path

    from .bvh import format_bvh
    from .files import write_atomically

    root = Path(folder)
    groups = {"clips": {**demo_clips(fps), **hop_clips(fps)}, "reaches": reach_examples(fps)}
    written: dict[str, list] = {}
    for group, clips in groups.items():
        (root / group).mkdir(parents=True, exist_ok=True)
        written[group] = []
        for name, clip in clips.items():
            path = root / group / f"{name}.bvh"
            write_atomically(path, format_bvh(clip.motion))
            written[group].append(path)
    return written


# --- the demo scene's timeline ---------------------------------------------------------------

#: The rate the demo scene plays at; :data:`DEMO_TIMELINE`'s frames are at this rate.
DEMO_FPS = 30.0

#: The demo scene: (clip, output frame of its first frame, core in clip frames (inclusive), lane).
#: Overlapping clips alternate between two lanes (NLA tracks), as NLA users lay out clips to blend.
#: The walk's core ends in its last double support but one (both feet down, the arms at the end
#: of their swing, so nothing is moving fast where the blend takes over) and the turn's core
#: starts in its first left step, so that the walk's last right step blends into the turn's
#: steps: a motion transition (2014, 4.1). The turn, kick, jump and stand follow on both feet
#: (adaptation). The turn steps round a quarter turn on the spot, most of it before its core:
#: the synthesized figure turns with it (its body orientation is its facing at its start, 2008
#: 4.3). The walk's core once ended at frame 94, in mid swing: the lower body's motion-to-motion
#: blend then added a step of velocity to the pelvis (eq. 16's start slope, now 0 there) and the
#: gap was flagged; it no longer is. The plan flags no gap from responsiveness W = 0.3 up; below,
#: the upper body's pose-to-pose blend is cut short enough to pop a hand (docs/design.md).
DEMO_TIMELINE: tuple[tuple[str, int, tuple[int, int], int], ...] = (
    ("walk", 1, (0, 96), 0),
    ("turn", 84, (34, 56), 1),
    ("kick", 131, (31, 59), 0),
    ("jump", 190, (30, 50), 1),
    ("stand", 260, (20, 120), 0),
)


def demo_timeline() -> list[Clip]:
    """The clips of :data:`DEMO_TIMELINE` at :data:`DEMO_FPS`, placed and with their cores, for
    :func:`core.synthesize.synthesize` (what the add-on's demo scene lays out as NLA strips)."""
    clips = demo_clips(DEMO_FPS)
    return [Clip(clips[name].motion, start, core, name) for name, start, core, _ in DEMO_TIMELINE]
