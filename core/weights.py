"""Optimal weight functions for blending (Oshita 2014, section 4.4).

A weight function ``w = f(s)`` (eq. 15) maps normalised time ``s`` in
``[0, 1]`` across a blending range ``t0..t1`` to the weight of the following
side (``dst``): 0 at the initial time, 1 at the terminal time. Instead of a
linear ramp or a fixed ease-in/ease-out, the paper fits a cubic Hermite curve
to each blending segment, with end slopes chosen so that the blended motion
keeps the speed of the motions around it:

- pose-to-pose and motion-to-motion (4.4.1): each end slope is the ratio of
  the motion's velocity at that end to the mean velocity over the range
  (eq. 16), or 0 where the movement reverses there (Fig. 3c); motion-to-motion
  takes slope 0 at both ends instead (:func:`motion_to_motion_weights`: both
  sides carry their own velocity, and a slope adds a step to it);
- pose-to-motion and motion-to-pose (4.4.2): the distances from the fixed pose
  to the poses of the motion decide between a Hermite curve over the whole
  range (Fig. 4a), a range cut at the turning point of the distance with slope
  0 there (Fig. 4b), and falling back to pose-to-pose blending (Fig. 4c).

Conventions:

- slopes are ``dw/ds``, in normalised units: 1 is the slope of the linear ramp;
- velocities are pose distances (eq. 12, in the clip's unit) per second, or per
  frame when both sides of a ratio use frames: only ratios are used, so the
  unit cancels;
- a blending range of ``N`` frames is sampled at ``s = linspace(0, 1, N)``: its
  first frame is ``t0``, its last frame ``t1`` (end inclusive).

Monotonicity: a cubic Hermite curve from 0 to 1 is monotone, hence stays in
``[0, 1]``, when both end slopes lie in ``[0, 3]`` (Fritsch & Carlson 1980: the
square ``0 <= alpha, beta <= 3`` lies inside the region of monotone cubics; at
its corner (3, 3) the derivative ``3 (2 s - 1)^2`` just touches 0). Steeper
slopes overshoot past 1 (or below 0), which the paper's "normalised weight
between 0.0 and 1.0" rules out, so every slope is clamped to ``[0, MAX_SLOPE]``
on its own. Fritsch and Carlson's other common choice, scaling both slopes
into the circle ``alpha^2 + beta^2 <= 9``, is stricter than needed and would
let a steep start change the slope at the end (and so the speed eq. 16 asks
for there); clamping each end separately leaves an in-range end exactly as
eq. 16 gives it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAX_SLOPE",
    "KINDS",
    "hermite_weights",
    "smoothstep",
    "end_slope",
    "movement_reverses",
    "motion_to_motion_weights",
    "optimal_weight_function",
    "WeightFunction",
    "WeightPlan",
    "pose_to_motion_weights",
    "motion_to_pose_weights",
]

# The steepest end slope a monotone Hermite curve from 0 to 1 may have (see the module docstring).
MAX_SLOPE = 3.0

# How a weight function was chosen (section 4.4): "hermite" is eq. 16 at both ends
# (4.4.1, and Fig. 4a), "turning_point" is a range cut where the distance from the
# fixed pose turns, with slope 0 there (Fig. 4b), "pose_to_pose" is the fallback
# of Fig. 4c: blend to the motion's end pose instead of the motion.
KINDS = ("hermite", "turning_point", "pose_to_pose")


def _monotone_slope(slope: float, name: str) -> float:
    """``slope`` clamped to ``[0, MAX_SLOPE]``; NaN raises."""
    slope = float(slope)
    if math.isnan(slope):
        raise ValueError(f"{name} is NaN; a weight slope must be a number (use 0 for a standstill)")
    return min(max(slope, 0.0), MAX_SLOPE)


def cubic_hermite(s: np.ndarray, p0, m0, p1, m1) -> np.ndarray:
    """The cubic from ``p0`` to ``p1`` over ``s`` in [0, 1], with end slopes ``m0``, ``m1``
    (per unit of ``s``): the Hermite basis, for values of any shape that broadcast with ``s``."""
    s2, s3 = s * s, s * s * s
    return (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * m1


def smoothstep(u: np.ndarray) -> np.ndarray:
    """``3u^2 - 2u^3`` on [0, 1] (``u`` clipped to it): a ramp whose speed is zero at both
    ends, the Hermite curve with slopes (0, 0)."""
    u = np.clip(u, 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


def hermite_weights(n_or_times: int | np.ndarray, slope_start: float, slope_end: float) -> np.ndarray:
    """The Hermite weight curve of section 4.4: ``w(0) = 0``, ``w(1) = 1``, ``w'(0) = slope_start``, ``w'(1) = slope_end``.

    n_or_times   an int ``N``: the ``N`` frames of a blending range, sampled at
                 ``s = linspace(0, 1, N)``, giving ``(N,)`` weights; or an array
                 ``(...)`` of normalised times, giving weights of the same shape.
                 Times outside ``[0, 1]`` get the end values 0 and 1 (before and
                 after the blend).
    slope_start  ``dw/ds`` at ``s = 0``; slope_end ``dw/ds`` at ``s = 1``. Each is
                 clamped to ``[0, MAX_SLOPE]`` so the curve rises monotonically
                 from 0 to 1 and never leaves ``[0, 1]`` (module docstring).

    Slopes (1, 1) give exactly the linear ramp ``w = s``; (0, 0) give smoothstep
    ``3 s^2 - 2 s^3``. ``N = 1`` gives ``[1.0]``: a range of one frame is its own
    terminal time, where the blend is complete. ``N = 0`` gives an empty array.
    """
    a = _monotone_slope(slope_start, "slope_start")
    b = _monotone_slope(slope_end, "slope_end")
    if isinstance(n_or_times, (int, np.integer)) and not isinstance(n_or_times, bool):
        n = int(n_or_times)
        if n < 0:
            raise ValueError(f"a blending range cannot have {n} frames")
        if n == 1:
            return np.ones(1)
        s = np.linspace(0.0, 1.0, n)
    else:
        s = np.asarray(n_or_times, dtype=float)
        if np.isnan(s).any():
            raise ValueError("normalised times contain NaN")
        s = np.clip(s, 0.0, 1.0)
    # w = h01(s) + a h10(s) + b h11(s) with the Hermite basis h01 = s^2 (3 - 2s),
    # h10 = s (1 - s)^2, h11 = -s^2 (1 - s): written in this factored form, every
    # term but h01 vanishes exactly at s = 0 and s = 1, so the ends are exactly 0 and 1
    # and the blend hands over without a rounding residue.
    r = 1.0 - s
    w = s * s * (3.0 - 2.0 * s) + s * r * (a * r - b * s)
    # The curve is monotone in [0, 1] mathematically; the clip only removes rounding.
    return np.clip(w, 0.0, 1.0)


@dataclass(frozen=True)
class WeightFunction:
    """A Hermite weight function as the plan records it (section 4.4).

    slope_start, slope_end  ``dw/ds`` at ``s = 0`` and ``s = 1``, stored already
                            clamped to ``[0, MAX_SLOPE]``: the values printed are
                            the slopes the rendered curve has.
    kind                    how the slopes were chosen, one of :data:`KINDS`.
    """

    slope_start: float = 1.0
    slope_end: float = 1.0
    kind: str = "hermite"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"weight function kind must be one of {KINDS}, got {self.kind!r}")
        object.__setattr__(self, "slope_start", _monotone_slope(self.slope_start, "slope_start"))
        object.__setattr__(self, "slope_end", _monotone_slope(self.slope_end, "slope_end"))

    def evaluate(self, n_or_times: int | np.ndarray) -> np.ndarray:
        """Weights ``(N,)`` over a range of ``N`` frames, or at normalised times ``(...)``; see :func:`hermite_weights`."""
        return hermite_weights(n_or_times, self.slope_start, self.slope_end)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "slope_start": self.slope_start, "slope_end": self.slope_end}

    @classmethod
    def from_dict(cls, data: dict) -> WeightFunction:
        return cls(slope_start=data["slope_start"], slope_end=data["slope_end"], kind=data["kind"])


def end_slope(v_end: float, mean_velocity: float, reversing: bool = False) -> float:
    """The slope of the weight function at one end of a blending range (eq. 16, Fig. 3).

    ``w'(t1) = V(t1) / (D(t0, t1) / (t1 - t0))``: the velocity of the motion at
    that end (eq. 13) over the mean velocity across the range, so the blend
    arrives at (or leaves) the end pose as fast as the motion moves there. The
    same function gives the slope at the initial time from ``V(t0)``.

    v_end          velocity at the end, ``V(t) = D(t, t + eps) / eps`` (>= 0).
                   A negative value (a signed rate that points back) gives 0.
    mean_velocity  ``D(t0, t1) / (t1 - t0)`` in the same unit (>= 0).
    reversing      the movement changes direction at this end (see
                   :func:`movement_reverses`): the velocity passes through zero
                   there, so the slope is 0 (Fig. 3c).

    Returns a slope in ``[0, MAX_SLOPE]``, never NaN or inf: a ratio of 3 or
    more is already the steepest monotone slope, so a mean velocity of 0 (the
    two end poses coincide) with a moving end gives ``MAX_SLOPE`` -- the limit
    of the ratio as the mean shrinks -- and a standstill (``v_end = 0``) gives 0
    whatever the mean.
    """
    if reversing:
        return 0.0
    v, mean = float(v_end), float(mean_velocity)
    if math.isnan(v) or math.isnan(mean):
        raise ValueError(f"end_slope needs numbers, got v_end={v_end!r}, mean_velocity={mean_velocity!r}")
    if mean < 0.0:
        raise ValueError(f"a mean velocity is a distance over a duration and cannot be negative, got {mean}")
    if v <= 0.0:
        return 0.0
    # Compare before dividing so a zero or tiny mean never produces inf.
    if mean <= v / MAX_SLOPE:
        return MAX_SLOPE
    return v / mean


def movement_reverses(distances: np.ndarray, index: int, *, side: str, step: int = 1) -> bool:
    """Whether the movement changes direction at one end of a blending range (section 4.4.1, Fig. 3c).

    Across a blending range the blended motion moves from the pose at one end,
    ``A``, towards the pose at the other, ``B``: its distance from ``A`` grows.
    Past the range the input motion takes over. If, stepping outwards from
    ``B``, the motion comes back towards ``A``, the movements before and after
    that end point opposite ways, the velocity must pass through zero there,
    and :func:`end_slope` gives slope 0.

    distances  (K,) pose distances (eq. 12) from ``A``, the pose at the *other*
               end of the blend, to the frames of the motion on this end's side:
               for the terminal time ``t1``, ``D(t0, t)`` over frames of the
               following motion; for the initial time ``t0``, ``D(t, t1)`` over
               frames of the previous motion.
    index      the frame of this end (``t1`` or ``t0``) in ``distances``.
    side       ``"end"``: the motion continues after ``index`` (the terminal
               time); ``"start"``: the motion arrives before ``index`` (the
               initial time).
    step       eq. 13's small time step ``eps`` in frames.

    The motion reverses when the frame ``step`` frames outwards is strictly
    nearer ``A`` than the end frame. A motion at rest there does not reverse
    (its velocity is ~0, so its slope is ~0 anyway). With no frame outwards
    (the clip ends at the blend's end) nothing reverses: the motion stops.
    """
    d = np.asarray(distances, dtype=float)
    if d.ndim != 1:
        raise ValueError(f"distances must have shape (K,), got {d.shape}")
    if side not in ("start", "end"):
        raise ValueError(f"side must be 'start' (initial time t0) or 'end' (terminal time t1), got {side!r}")
    if not 0 <= index < len(d):
        raise ValueError(f"index {index} is outside the {len(d)} distances")
    if step < 1:
        raise ValueError(f"step must be at least one frame, got {step}")
    outside = index + step if side == "end" else index - step
    if not 0 <= outside < len(d):
        return False
    return bool(d[outside] < d[index])


def motion_to_motion_weights() -> WeightFunction:
    """The weight function of a motion-to-motion blend: slope 0 at both ends (smoothstep).

    Beyond the paper, which applies eq. 16 to motion-to-motion too (4.4.1; docs/design.md,
    "Synthesis: decisions the papers leave open"). Both sides of such a blend move: the
    blended value ``x = (1 - w) a + w b`` has the velocity ``(1 - w) a' + w b' + w' (b - a)``,
    which at t0 (``w = 0``) is the previous motion's own ``a'`` plus ``w'(t0) (b - a)``. In a
    pose-to-pose blend that last term is the only velocity there is, and eq. 16 sizes it to
    the motion's; here it is a step of velocity on top of it (at t1 likewise on the
    following motion's). With slope 0 the blend leaves the previous motion and joins the
    following one each at its own velocity.
    """
    return WeightFunction(0.0, 0.0, "hermite")


def optimal_weight_function(
    v_start: float,
    v_end: float,
    distance: float,
    duration: float,
    *,
    start_reverses: bool = False,
    end_reverses: bool = False,
) -> WeightFunction:
    """The weight function of a pose-to-pose or motion-to-motion blend (section 4.4.1).

    v_start         ``V(t0)`` of the previous motion (eq. 13), distance per second.
    v_end           ``V(t1)`` of the following motion.
    distance        ``D(t0, t1)`` between the poses at the two ends (eq. 12).
    duration        ``t1 - t0`` in seconds (> 0).
    start_reverses, end_reverses
                    the movement changes direction at that end
                    (:func:`movement_reverses`): slope 0 there (Fig. 3c).

    Both slopes follow eq. 16 with the mean velocity ``distance / duration``.
    """
    if not duration > 0.0:
        raise ValueError(f"a blending range must last longer than zero seconds (t0 < t1), got {duration}")
    mean = float(distance) / float(duration)
    return WeightFunction(
        slope_start=end_slope(v_start, mean, start_reverses),
        slope_end=end_slope(v_end, mean, end_reverses),
        kind="hermite",
    )


@dataclass(frozen=True)
class WeightPlan:
    """The weight function chosen for a pose-to-motion or motion-to-pose blend (section 4.4.2, Fig. 4).

    Indices are frames of the candidate range handed to
    :func:`pose_to_motion_weights` / :func:`motion_to_pose_weights` (0 is its
    first frame); the blend runs over ``start_index..end_index`` inclusive.

    kind         ``"hermite"`` (Fig. 4a), ``"turning_point"`` (Fig. 4b: the
                 range was cut where the motion turns back, slope 0 there) or
                 ``"pose_to_pose"`` (Fig. 4c: blend to the motion's last pose --
                 first pose for motion-to-pose -- instead of the motion).
    start_index  first frame of the blend: 0 for pose-to-motion; for
                 motion-to-pose the (possibly moved) initial time.
    end_index    last frame of the blend: the (possibly moved) terminal time
                 for pose-to-motion; the last frame for motion-to-pose.
    slope_start, slope_end  end slopes of the Hermite curve, in ``[0, MAX_SLOPE]``.
    """

    kind: str
    start_index: int
    end_index: int
    slope_start: float
    slope_end: float

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"weight plan kind must be one of {KINDS}, got {self.kind!r}")
        if not 0 <= self.start_index <= self.end_index:
            raise ValueError(f"a blend needs 0 <= start_index <= end_index, got {self.start_index}..{self.end_index}")
        object.__setattr__(self, "slope_start", _monotone_slope(self.slope_start, "slope_start"))
        object.__setattr__(self, "slope_end", _monotone_slope(self.slope_end, "slope_end"))

    @property
    def function(self) -> WeightFunction:
        """The Hermite curve over ``start_index..end_index``."""
        return WeightFunction(self.slope_start, self.slope_end, self.kind)

    @property
    def n_blend_frames(self) -> int:
        return self.end_index - self.start_index + 1

    def evaluate(self, n_frames: int) -> np.ndarray:
        """Per-frame weights ``(n_frames,)`` over the candidate range (``n_frames > end_index``).

        0 before ``start_index`` (only the first side plays), the Hermite curve
        from 0 to 1 over ``start_index..end_index``, and 1 after ``end_index``
        (only the second side plays: the blend ended at the moved terminal time).
        """
        if n_frames <= self.end_index:
            raise ValueError(f"the plan blends up to frame {self.end_index}, so it needs more than {n_frames} frames")
        weights = np.ones(n_frames)
        weights[: self.start_index] = 0.0
        weights[self.start_index : self.end_index + 1] = self.function.evaluate(self.n_blend_frames)
        return weights

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "start_index": self.start_index,
            "end_index": self.end_index,
            "slope_start": self.slope_start,
            "slope_end": self.slope_end,
        }


def pose_to_motion_weights(
    distances: np.ndarray,
    fps: float,
    *,
    epsilon: float = 1.0 / 30.0,
    tolerance: float = 0.05,
) -> WeightPlan:
    """Choose the weight function of a pose-to-motion blend from its distance trajectory (section 4.4.2, Fig. 4).

    distances  (K,) pose distances (eq. 12) from the fixed pose (the pose of
               the previous motion that is held) to each frame of the following
               motion over the candidate blending range ``t0..t1`` (end
               inclusive, so frame ``K - 1`` is ``t1``).
    fps        frames per second of ``distances``.
    epsilon    eq. 13's small time step, in seconds, over which the end
               velocities are measured (at least one frame).
    tolerance  how far the distance may fall back from its largest value so far
               and still count as increasing, as a fraction of the trajectory's
               range ``max - min``, in ``[0, 0.5)``: capture noise is not a turn.

    The trajectory is read as:

    - increasing (it never falls back more than the tolerance): ``"hermite"``
      over the whole range (Fig. 4a). The weight follows the normalised
      distance, so each end slope is the distance's rate at that end over its
      mean rate ``(d[t1] - d[t0]) / (t1 - t0)`` (eq. 16 with the distance from
      the fixed pose as the signal; a distance shrinking at an end gives 0);
    - rising, then turning back: ``"turning_point"`` (Fig. 4b). The terminal
      time moves to the farthest frame before the first fall, where the weight
      reaches 1 with slope 0; blending on to ``t1`` would carry the result past
      that pose and back, and the pose at the end would never be shown;
    - falling from the start (not rising by more than the tolerance before it
      falls): ``"pose_to_pose"`` (Fig. 4c). No weight function avoids the
      problem, so the caller blends the fixed pose to the pose at ``t1`` only.
      Slopes are 0 at both ends: the fixed pose is at rest, and the motion
      after ``t1`` keeps coming back towards the fixed pose, a reversal
      (Fig. 3c).

    A flat trajectory (including ``K = 1``) is increasing, with slopes 0.

    Note for rendering: once the weight is 1 the result is the motion itself,
    so a terminal slope above 0 adds ``slope_end * d[t1] / (t1 - t0)`` to the
    pose velocity just before ``t1``, a step in velocity at ``t1``. The slope
    follows the paper (from the distance's velocity); a plan with
    ``slope_end = 0`` would keep the velocity continuous there.
    """
    d = np.asarray(distances, dtype=float)
    if d.ndim != 1 or len(d) == 0:
        raise ValueError(f"distances must have shape (K,) with K >= 1, got {d.shape}")
    if not np.isfinite(d).all():
        raise ValueError("distances contain NaN or inf; check the poses they were computed from")
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if not 0.0 <= tolerance < 0.5:
        # From half the range on, a trajectory that ends lower than it starts could pass as increasing.
        raise ValueError(f"tolerance is a fraction of the distance range in [0, 0.5), got {tolerance}")
    if not epsilon >= 0:
        raise ValueError(f"epsilon is a time step in seconds and cannot be negative, got {epsilon}")

    last = len(d) - 1
    slack = tolerance * (d.max() - d.min())
    # How far each frame has come back towards the fixed pose since the farthest frame so far.
    fallen = np.maximum.accumulate(d) - d > slack
    if fallen.any():
        end = int(np.argmax(d[: int(np.argmax(fallen))]))
        kind = "turning_point"
    else:
        end, kind = last, "hermite"

    rise = d[end] - d[0]
    if kind == "turning_point" and rise <= slack:
        return WeightPlan("pose_to_pose", 0, last, 0.0, 0.0)

    if end == 0:
        return WeightPlan(kind, 0, 0, 0.0, 0.0)
    step = min(max(1, int(round(epsilon * fps))), end)
    # Rates per frame: fps cancels in the ratios of eq. 16.
    mean = rise / end
    v_start = (d[step] - d[0]) / step
    v_end = (d[end] - d[end - step]) / step
    slope_start = end_slope(v_start, mean)
    slope_end = 0.0 if kind == "turning_point" else end_slope(v_end, mean)
    return WeightPlan(kind, 0, end, slope_start, slope_end)


def motion_to_pose_weights(
    distances: np.ndarray,
    fps: float,
    *,
    epsilon: float = 1.0 / 30.0,
    tolerance: float = 0.05,
) -> WeightPlan:
    """Choose the weight function of a motion-to-pose blend (section 4.4.2, "the same process").

    distances  (K,) pose distances from the fixed pose (the pose of the
               following motion the blend ends in) to each frame of the
               previous motion over the candidate range ``t0..t1``.

    Motion-to-pose is pose-to-motion played backwards: the trajectory is read
    from ``t1`` back to ``t0`` by :func:`pose_to_motion_weights`, and the
    result mirrored. So a turning point moves the *initial* time
    (``start_index``) and gets slope 0 at the start, and ``"pose_to_pose"``
    means blending from the pose at ``t0`` to the fixed pose. Mirroring is
    exact: ``1 - H(a, b)(1 - s) = H(b, a)(s)`` for the Hermite curve ``H``.
    """
    d = np.asarray(distances, dtype=float)
    if d.ndim != 1 or len(d) == 0:
        raise ValueError(f"distances must have shape (K,) with K >= 1, got {d.shape}")
    backwards = pose_to_motion_weights(d[::-1], fps, epsilon=epsilon, tolerance=tolerance)
    last = len(d) - 1
    return WeightPlan(
        kind=backwards.kind,
        start_index=last - backwards.end_index,
        end_index=last - backwards.start_index,
        slope_start=backwards.slope_end,
        slope_end=backwards.slope_start,
    )
