"""The contact stage: feet the blended sources hold down stay planted, over every gap between cores.

Synthesis is plan -> render -> contacts. Rendering blends and warps the
clips; the blend of two feet planted in different places slides, and one
that lands inside a blend lands wherever the weights bring it. This stage
runs last, over each gap between one core's last frame and the next core's
first frame, and only changes frames strictly inside it (cores stay exact):

* a foot the blended sources say is down is held rigidly, in position and
  in heading, where it stands: where the core leaves it for a contact that
  began in the previous core, where the next core wants it for one that goes
  on into it, where it touched down otherwise (2008, 7.2: "the foot position
  is fixed while the foot is on the ground"). So a foot touching down inside
  a blend lands on its final spot: its swing bends there, rather than
  landing and then sliding there;
* through heel-off the foot pivots about its toe, as captured feet do: it
  keeps the blended foot's pitch and roll (its change since the hold began,
  the heading held) and the ankle goes where that puts it with the toe held;
  at heel strike it pivots about the ankle. Neither toe nor ankle goes below
  its floor;
* corrections ease in and out only while the foot is in the air, along a
  smoothstep between the correction where the foot leaves the floor and the
  one where it lands (zero at the cores);
* a foot down through the whole gap whose two ends are apart (the cores
  stand it in different places) steps from one to the other, lifted, in the
  middle of the gap; two such feet step one after the other, the other foot
  standing meanwhile. Only a gap too short to step in glides.

The legs reach the held feet by two-bone IK (``render.adapt_legs``), with the
foot's world orientation given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quat
from .motion import Motion, forward_kinematics
from .render import adapt_legs, contact_runs, smoothstep
from .rig import Rig


@dataclass(frozen=True, kw_only=True)
class ContactOptions:
    """Constants of the contact stage, each relative to the body or in seconds."""

    heel_rise: float = 0.05  # leg lengths: the ankle risen this far above its hold pivots fully about the toe
    step_apart: float = 0.01  # leg lengths: a foot held at both ends of a gap further apart than this steps
    step_s: float = 0.4  # seconds a foot takes for such a step (less when the gap is shorter)
    min_step_s: float = 0.1  # a gap leaving less than this for a step glides instead
    step_rise: float = 0.25  # a step rises this share of its length ...
    step_height: tuple[float, float] = (0.02, 0.25)  # ... within these leg lengths


def twist_free(q: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The swing of rotations ``q (..., 4)``: ``q`` without its twist about ``up`` (its change of heading)."""
    along = (q[..., 1:] @ up)[..., None] * up
    twist = np.concatenate([q[..., :1], along], axis=-1)
    norm = np.linalg.norm(twist, axis=-1, keepdims=True)
    twist = np.where(norm > 1e-12, twist / np.maximum(norm, 1e-12), quat.identity(q.shape[:-1]))
    return quat.mul(q, quat.inv(twist))


@dataclass(frozen=True)
class _Foot:
    """One leg's joints and world poses over the gap, as rendered."""

    ankle: np.ndarray  # (n, 3)
    rotation: np.ndarray  # (n, 4) the ankle's world rotation
    toe_local: np.ndarray | None  # (n, 3) the toe in the ankle's frame (None: no toe joint)


def hold_feet(motion: Motion, first: int, contacts: np.ndarray, gap: tuple[int, int], rig: Rig, *,
              up: np.ndarray, leg: float, floors: np.ndarray, options: ContactOptions = ContactOptions()) -> Motion:
    """``motion`` with its feet held over output frames ``gap`` (inclusive, cores at both ends).

    motion, first  the output and the timeline frame of its frame 0;
    contacts       (F, 2) bool, left and right foot down, as the blended sources say;
    floors         (2, 2) floor heights of (ankle, toe) for (left, right) (see core.quality).
    """
    g0, g1 = gap[0] - first, gap[1] - first
    if g1 - g0 < 2 or g0 < 0 or g1 >= motion.n_frames:
        return motion
    window = motion[g0 : g1 + 1]
    parents = motion.skeleton.parents
    legs = [rig.leg("L"), rig.leg("R")]
    joints = [leg.ankle for leg in legs] + [leg.toe for leg in legs if leg.toe is not None]
    gpos, grot = forward_kinematics(window.rotations, window.positions, parents, joints)
    has_toes = len(joints) == 4
    n = len(window.rotations)
    targets = np.zeros((n, 2, 3))
    rotations = np.zeros((n, 2, 4))
    active = np.zeros((n, 2), dtype=bool)
    down = np.array(contacts[g0 : g1 + 1], dtype=bool)
    slots = _step_slots(down, gpos[:, :2], n, window.fps, leg, up, options)
    for k in range(2):
        toe_local = quat.inv_mul_vec(grot[:, k], gpos[:, 2 + k] - gpos[:, k]) if has_toes else None
        foot = _Foot(gpos[:, k], grot[:, k], toe_local)
        targets[:, k], rotations[:, k], active[:, k] = _held_foot(
            foot, down[:, k], slots.get(k), up, leg, floors[k], options)
    if not active.any():
        return motion
    adapted = adapt_legs(window, rig, targets, active, ankle_rotations=rotations)
    rot = np.array(motion.rotations)
    rot[g0 : g1 + 1] = adapted.rotations
    return Motion._trusted(motion.skeleton, rot, motion.positions, motion.fps)


def _step_slots(down: np.ndarray, ankles: np.ndarray, n: int, fps: float, leg: float, up: np.ndarray,
                options: ContactOptions) -> dict[int, tuple[int, int]]:
    """Frames ``{foot: (first, last)}`` in which a foot down through the whole gap, with its
    two ends apart, steps from one to the other: one foot after the other, each in the
    middle of its share of the gap."""
    apart = [k for k in range(2) if down[:, k].all()
             and np.linalg.norm(_horizontal(ankles[-1, k] - ankles[0, k], up)) > options.step_apart * leg]
    slots = {}
    share = (n - 2) / max(len(apart), 1)
    for i, k in enumerate(apart):
        lo, hi = 1 + i * share, 1 + (i + 1) * share  # this foot's share of the inner frames
        length = min(options.step_s * fps, hi - lo)
        if length < options.min_step_s * fps:
            continue  # too short to step: it glides
        mid = 0.5 * (lo + hi)
        slots[k] = (int(np.floor(mid - 0.5 * length)), int(np.ceil(mid + 0.5 * length)) - 1)
    return slots


def _horizontal(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    return v - (v @ up)[..., None] * up


def _held_foot(foot: _Foot, down: np.ndarray, slot: tuple[int, int] | None, up: np.ndarray, leg: float,
               floors: np.ndarray, options: ContactOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World ankle targets ``(n, 3)``, ankle rotations ``(n, 4)`` and where they apply ``(n,)``
    for one foot over the gap (frame 0 and n - 1 are the cores' and stay as they are)."""
    n = len(down)
    down = down.copy()
    lift = np.zeros(n)
    # no lower than the floor, nor than the cores at either end already have the foot
    floors = np.minimum(floors, _heights(foot, [0, n - 1], up).min(axis=0))
    if slot is not None:
        a, b = slot
        down[a : b + 1] = False
        length = np.linalg.norm(_horizontal(foot.ankle[-1] - foot.ankle[0], up))
        height = np.clip(options.step_rise * length, *(h * leg for h in options.step_height))
        lift[a : b + 1] = height * smoothstep(1.0 - np.abs(2.0 * (np.arange(a, b + 1) - a + 0.5) / (b - a + 1) - 1.0))
    # the correction at each frame: a translation of the ankle and a rotation of the foot
    offset = np.full((n, 3), np.nan)
    turn = np.full((n, 4), np.nan)
    offset[[0, -1]], turn[[0, -1]] = 0.0, quat.identity()  # the cores' own frames
    for start, end in contact_runs(down):
        frames = np.arange(start, end + 1)
        if start == 0 and end == n - 1:
            # down through a gap too short to step in: glide from one core's place to the other's
            u = smoothstep(frames / (n - 1))[:, None]
            place = (1.0 - u) * foot.ankle[0] + u * foot.ankle[-1]
            rotation = quat.slerp(foot.rotation[0], foot.rotation[-1], u[:, 0])
        else:
            h = 0 if start == 0 else (n - 1 if end == n - 1 else start)  # where it is held
            place, rotation = _planted(foot, frames, h, up, leg, options)
        place = _above_floor(place, rotation, foot, frames, up, floors)
        offset[frames] = place - foot.ankle[frames]
        turn[frames] = quat.mul(rotation, quat.inv(foot.rotation[frames]))
    # in the air the correction eases from where the foot left the floor to where it lands
    known = np.flatnonzero(~np.isnan(offset[:, 0]))
    air = np.flatnonzero(np.isnan(offset[:, 0]))
    if len(air):
        after = known[np.searchsorted(known, air)]
        before = known[np.searchsorted(known, air) - 1]
        u = smoothstep((air - before) / (after - before))
        offset[air] = (1.0 - u)[:, None] * offset[before] + u[:, None] * offset[after]
        turn[air] = quat.slerp(turn[before], turn[after], u)
    target = foot.ankle + offset + lift[:, None] * up
    rotation = quat.mul(turn, foot.rotation)
    active = (np.linalg.norm(offset, axis=-1) > 1e-9 * leg) | (lift > 0) | (quat.angle(turn, quat.identity()) > 1e-9)
    active[[0, -1]] = False
    return target, rotation, active


def _planted(foot: _Foot, frames: np.ndarray, h: int, up: np.ndarray, leg: float,
             options: ContactOptions) -> tuple[np.ndarray, np.ndarray]:
    """Ankle places and world rotations of a foot held down over ``frames`` where it is at frame ``h``.

    The heading is held; pitch and roll follow the blended foot's change since
    ``h``, about the ankle while the heel is down and about the toe as the heel
    rises (heel-off), so a planted foot rolls onto its toes as captured.
    """
    swing = twist_free(quat.mul(foot.rotation[frames], quat.inv(foot.rotation[h])), up)
    rotation = quat.mul(swing, foot.rotation[h])
    place = np.broadcast_to(foot.ankle[h], (len(frames), 3))
    if foot.toe_local is None:
        return place.copy(), rotation
    toe = foot.ankle[h] + quat.mul_vec(foot.rotation[h], foot.toe_local[h])
    about_toe = toe - quat.mul_vec(rotation, foot.toe_local[frames])
    rise = (foot.ankle[frames] - foot.ankle[h]) @ up
    s = smoothstep(rise / (options.heel_rise * leg))[:, None]
    return (1.0 - s) * place + s * about_toe, rotation


def _heights(foot: _Foot, frames, up: np.ndarray) -> np.ndarray:
    """Heights ``(len(frames), 2)`` of the ankle and the toe (the ankle again without a toe)."""
    ankle = foot.ankle[frames]
    toe = ankle if foot.toe_local is None else ankle + quat.mul_vec(foot.rotation[frames], foot.toe_local[frames])
    return np.stack([ankle @ up, toe @ up], axis=-1)


def _above_floor(place: np.ndarray, rotation: np.ndarray, foot: _Foot, frames: np.ndarray, up: np.ndarray,
                 floors: np.ndarray) -> np.ndarray:
    """Ankle places raised where the ankle or the toe would go below its floor ``floors (ankle, toe)``."""
    below = floors[0] - place @ up
    if foot.toe_local is not None:
        toe = place + quat.mul_vec(rotation, foot.toe_local[frames])
        below = np.maximum(below, floors[1] - toe @ up)
    return place + np.maximum(below, 0.0)[:, None] * up
