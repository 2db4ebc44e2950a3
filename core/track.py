"""What planning and rendering share: the motion synthesized so far, the context of a
synthesis, foot-moving phases on the output timeline, and the time warps of each side."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .analysis import Phase, phase_segments, support_phases
from .motion import forward_kinematics
from .options import SynthesisOptions
from .rig import Rig


@dataclass
class Track:
    """Everything synthesized so far, on output frames ``first .. first + len - 1``."""

    rotations: np.ndarray  # (T, J, 4)
    positions: np.ndarray  # (T, J, 3)
    contacts: np.ndarray  # (T, 2)
    first: int
    core_end: int  # output frame of the last clip's core end
    name: str
    # output frame of the last clip's core start: from there on the track is that clip's own
    # (cores survive synthesis), nothing of the clips before it
    core_start: int

    @property
    def last(self) -> int:
        return self.first + len(self.rotations) - 1


@dataclass(frozen=True)
class Context:
    """What every pair of one synthesis shares: the rig and its measures, and the settings."""

    rig: Rig
    up: np.ndarray
    fps: float
    leg: float
    lower: np.ndarray  # (J,) bool
    weights: tuple
    responsiveness: float
    pose_ends: str = "eased"
    options: SynthesisOptions = SynthesisOptions()


@dataclass(frozen=True)
class PhaseSpan:
    phase: Phase
    first: int  # output frames, inclusive
    last: int

    def as_tuple(self) -> tuple[str, int, int]:
        return (self.phase.name, int(self.first), int(self.last))


def moving_phases(contacts: np.ndarray, offset: int, lo: int, hi: int) -> list[PhaseSpan]:
    """Foot-moving phases (LS, RS, NS) lying entirely within output frames ``lo..hi``.

    A phase cut by either end of the clip is left out: where its foot took
    off or lands is not in the clip, so it cannot carry a transition.
    """
    out = []
    last = len(contacts) - 1
    for s in phase_segments(support_phases(contacts)):
        a, b = s.start + offset, s.end + offset
        if s.phase != Phase.DS and a >= lo and b <= hi and s.start > 0 and s.end < last:
            out.append(PhaseSpan(s.phase, a, b))
    return out


def frame_range(lo: int, hi: int) -> np.ndarray:
    return np.arange(lo, hi + 1) if hi >= lo else np.arange(0)


def ankle_toe_per_foot(rig: Rig) -> list[int]:
    """The (left ankle, left toe, right ankle, right toe) joints, the ankle again where a leg has no toe."""
    legs = [rig.leg("L"), rig.leg("R")]
    return [j for leg in legs for j in (leg.ankle, leg.ankle if leg.toe is None else leg.toe)]


def feet_at(rotations: np.ndarray, positions: np.ndarray, frame: int, parents: np.ndarray, rig: Rig) -> np.ndarray:
    """World positions ``(2, 2, 3)`` of the (left, right) (ankle, toe) at one frame (clamped) of a
    pose sequence (the ankle again where the rig has no toe)."""
    i = clamped(frame, len(rotations))
    return forward_kinematics(rotations[i], positions[i], parents, ankle_toe_per_foot(rig),
                              rotations_out=False)[0].reshape(2, 2, 3)


@dataclass(frozen=True)
class Feet:
    """The feet of a pose sequence over a window of its frames, evaluated once.

    Planning looks up where the feet stand at a handful of frames of each side
    (where S1 starts and ends, where steps leave and land); each look-up as its
    own pass of forward kinematics cost more than all of them together from the
    pass the pose features already make. Frames outside the window are
    evaluated on demand (same products, so the same bits).

    points     ``(n, 2, 2, 3)`` world (left, right) (ankle, toe) at sequence
               frames ``first .. first + n - 1`` (:func:`feet_at`'s layout).
    rotations, positions, parents, rig  the sequence, for frames outside the window.
    """

    points: np.ndarray
    first: int
    rotations: np.ndarray
    positions: np.ndarray
    parents: np.ndarray
    rig: Rig

    def at(self, frame: int) -> np.ndarray:
        """:func:`feet_at` at sequence ``frame`` (clamped to the sequence): ``(2, 2, 3)``."""
        i = clamped(frame, len(self.rotations))
        if self.first <= i < self.first + len(self.points):
            return self.points[i - self.first]
        return feet_at(self.rotations, self.positions, i, self.parents, self.rig)

    def ankles(self, frame: int) -> np.ndarray:
        """World left and right ankle ``(2, 3)`` at sequence ``frame`` (clamped)."""
        return self.at(frame)[:, 0]


def clamped(i, n: int) -> int:
    """``int(np.clip(i, 0, n - 1))``: an index clamped to ``n`` frames, in plain Python (it runs at
    every look-up of a frame, where np.clip's dispatch costs more than everything else)."""
    return int(min(max(i, 0), n - 1))


def stance_foot(phase: Phase) -> int:
    return {Phase.LS: 0, Phase.RS: 1}.get(Phase(phase), -1)


def contacts_at(track: Track, t: int) -> np.ndarray:
    """(left, right) contacts of the track at output frame ``t`` (clamped to the track)."""
    return track.contacts[clamped(t - track.first, len(track.contacts))]


def base_foot_at(track: Track, t: int) -> int:
    """The foot that supports the body at output frame ``t`` (2008, 4.2); both: the left."""
    c = contacts_at(track, t)
    return 0 if c[0] else (1 if c[1] else -1)


# --------------------------------------------------------------------------
# time warps of each side


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


def warp_transition_prev(t, p0: PhaseSpan, p1: PhaseSpan, ramp: float):
    """Previous motion's phase P0 stretched over the blended phase P0.first..P1.last (2008, 5.2)."""
    return smooth_warp(t, (p0.first, p1.last), (p0.first, p0.last), ramp=ramp)


def warp_transition_next(t, p0: PhaseSpan, p1: PhaseSpan, ramp: float):
    return smooth_warp(t, (p0.first, p1.last), (p1.first, p1.last), ramp=ramp)


def warp_connection_prev(t, p0: PhaseSpan, t1: int, ramp: float):
    """Previous motion's phase P0 fitted to end at the connection time t1 (2008, 6.2)."""
    return smooth_warp(t, (p0.first, t1), (p0.first, p0.last), ramp=ramp)
