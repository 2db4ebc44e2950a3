"""How well a gap between two cores was filled: the one measure the project uses throughout.

The gap is every output frame from one accepted core's last frame to the
next core's first frame, inclusive: whatever the output does between two
cores counts, not only its blending segments.

Foot skate
    For each ankle and toe joint, on frame pairs 1/30 s apart (consecutive
    frames at 30 fps) where the joint is within a narrow band above its own
    floor level at both, the mean horizontal speed from forward differences.
    The floor is the 2nd percentile of that joint's height over the motion
    measured; the band is 3 % of that joint's own height range over it (about
    1 cm on a walking adult's ankle), so a planted foot that slides is caught
    and a swinging toe skimming the floor is not.
Acceleration
    Per frame, the mean over every joint of its global acceleration (second
    differences over 1/30 s); its peak over the gap.

Both come with what the untouched clips do on the same output frames: the
previous clip after its core and the following clip before its core, each
on its own frames, pooled (skate) or the larger (acceleration). Skate is in
leg lengths per second (a BVH file does not say its unit; multiply by the leg
length for the rig's own), accelerations are ratios to the 99th percentile of
the two clips' own mean-joint acceleration, so the figures do not depend on
the rig's unit, axes or frame rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quat
from .analysis import horizontal
from .motion import Motion, forward_kinematics
from .rig import Rig

FLOOR_PERCENTILE = 2.0  # a joint's floor level: this low percentile of its height over the motion
BAND = 0.03  # a joint is down while within this share of its own height range above its floor
ACCEL_PERCENTILE = 99.0  # accelerations are given as ratios to this percentile of the clips' own
MEASURE_STEP_S = 1.0 / 30.0  # seconds between the frames a speed or an acceleration is taken over
STILL_SKATE = 0.01  # leg lengths per second (under 1 cm/s): flags compare skate with no less than this
FLAG_RATIO = 1.5  # a gap skating or accelerating more than this times the untouched clips is flagged


def foot_joints(rig: Rig) -> list[int]:
    """Ankle and toe joints of both legs (toes where the rig has them)."""
    return [j for side in ("L", "R") for j in (rig.leg(side).ankle, rig.leg(side).toe) if j is not None]


@dataclass(frozen=True)
class FootLevels:
    """Per foot joint: its floor level and the band above it that counts as down."""

    floor: np.ndarray  # (K,) heights, in the motion's unit
    band: np.ndarray  # (K,)


def foot_levels(heights: np.ndarray, fps: float) -> FootLevels:
    """Floor and band of each column of ``heights (F, K)`` at ``fps`` (see the module docstring),
    on the measure's samples from frame 0 (so that a resampled clip has the same levels)."""
    heights = heights[:: measure_step(fps)]
    floor = np.percentile(heights, FLOOR_PERCENTILE, axis=0)
    return FootLevels(floor, BAND * (heights.max(axis=0) - floor))


def floors_by_foot(floor: np.ndarray, rig: Rig) -> np.ndarray:
    """``(2, 2)`` floor heights of (ankle, toe) for (left, right) from ``floor (K,)`` in
    :func:`foot_joints` order; a foot without a toe joint uses its ankle's for both."""
    out, at = np.zeros((2, 2)), 0
    for k, side in enumerate("LR"):
        out[k, 0] = floor[at]
        out[k, 1] = floor[at + 1] if rig.leg(side).toe is not None else floor[at]
        at += 2 if rig.leg(side).toe is not None else 1
    return out


def foot_positions(motion: Motion, rig: Rig, frames: slice | None = None) -> np.ndarray:
    """World positions ``(F, K, 3)`` of :func:`foot_joints` (over ``frames`` if given)."""
    m = motion if frames is None else motion[frames]
    return forward_kinematics(m.rotations, m.positions, m.skeleton.parents, foot_joints(rig), rotations_out=False)[0]


def measure_step(fps: float) -> int:
    """Frames between two samples of the measure: MEASURE_STEP_S, at least one frame.

    The measure samples every motion at the same times (every k-th frame from a
    window's first frame), so that a clip resampled to 120 fps measures as it
    does at 30: over single frames the landing and lift-off of a foot would count
    in more, and faster, samples at the higher rate, and an interpolated clip's
    acceleration would gather at its original frames.
    """
    return max(int(round(MEASURE_STEP_S * fps)), 1)


def skate_samples(feet: np.ndarray, levels: FootLevels, up: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """Horizontal speeds of consecutive samples ``(t, t + k)``, t = 0, k, 2k, ... of ``feet (F, K, 3)``
    (:func:`measure_step` ``k`` frames; forward differences), and whether the joint is down on
    every frame from t to t + k."""
    k = measure_step(fps)
    height = feet @ up - levels.floor
    down = (height <= levels.band).astype(np.int64)
    runs = np.concatenate([np.zeros((1,) + down.shape[1:], np.int64), np.cumsum(down, axis=0)])
    t = np.arange(0, len(feet) - k, k)
    speed = quat.length(horizontal(feet[t + k] - feet[t], up)) * fps / k
    return speed, (runs[t + k + 1] - runs[t]) == k + 1


def mean_joint_acceleration(motion: Motion, positions: np.ndarray | None = None) -> np.ndarray:
    """``(F - 2k,)`` mean over joints of each joint's global acceleration at frames k .. F-1-k
    (units/s^2; second differences over :func:`measure_step` ``k`` frames). ``positions``:
    the motion's global joint positions ``(F, J, 3)`` when already at hand."""
    k = measure_step(motion.fps)
    if motion.n_frames < 2 * k + 1:
        return np.zeros(0)
    g = positions if positions is not None else forward_kinematics(
        motion.rotations, motion.positions, motion.skeleton.parents, rotations_out=False)[0]
    size = quat.length(g[2 * k :] - 2.0 * g[k:-k] + g[: -2 * k])
    return np.add.reduce(size, axis=1) / size.shape[1] * (motion.fps / k) ** 2  # (np.mean's arithmetic)


@dataclass(frozen=True)
class SourceFigures:
    """What a clip brings by itself: its foot levels and its mean-joint acceleration per frame."""

    levels: FootLevels
    accel: np.ndarray  # (F,) at every frame, 0 within measure_step of either end (no second difference there)
    feet: np.ndarray  # (F, K, 3)

    @classmethod
    def of(cls, motion: Motion, rig: Rig, up: np.ndarray, positions: np.ndarray | None = None) -> "SourceFigures":
        """The figures of ``motion``; ``positions``, its global joint positions when at hand."""
        g = positions if positions is not None else forward_kinematics(
            motion.rotations, motion.positions, motion.skeleton.parents, rotations_out=False)[0]
        feet = g[:, foot_joints(rig)]
        k = measure_step(motion.fps)
        accel = np.zeros(motion.n_frames)
        if motion.n_frames > 2 * k:
            accel[k:-k] = mean_joint_acceleration(motion, g)
        return cls(foot_levels(feet @ up, motion.fps), accel, feet)


@dataclass(frozen=True)
class GapQuality:
    """The figures of one gap; ``None`` where there is nothing to measure.

    skate            leg lengths per second of the output's foot joints while down in the gap.
    skate_untouched  the same of the untouched clips on the same frames, pooled.
    accel            the output's peak mean-joint acceleration in the gap, over
                     the two clips' 99th percentile.
    accel_untouched  the untouched clips' peak on the same frames, likewise.
    """

    skate: float | None
    skate_untouched: float | None
    accel: float | None
    accel_untouched: float | None

    @property
    def flags(self) -> list[str]:
        """What exceeds FLAG_RATIO times the untouched clips."""
        out = []
        for name, mine, theirs in (("skate", self.skate, _still(self.skate_untouched)),
                                   ("acceleration", self.accel, self.accel_untouched)):
            if mine is not None and theirs is not None and mine > FLAG_RATIO * theirs:
                out.append(f"{name} {mine / max(theirs, 1e-12):.1f} x the untouched clips'")
        return out

    def to_dict(self) -> dict:
        return {"skate": self.skate, "skate_untouched": self.skate_untouched,
                "accel": self.accel, "accel_untouched": self.accel_untouched}

    @classmethod
    def from_dict(cls, d: dict) -> "GapQuality":
        return cls(d.get("skate"), d.get("skate_untouched"), d.get("accel"), d.get("accel_untouched"))

    def ratios(self) -> str:
        """The figures as multiples of the untouched clips', for a narrow display."""
        def r(mine, theirs):
            return "-" if mine is None or not theirs else f"{mine / theirs:.1f}x"
        return (f"skate {r(self.skate, _still(self.skate_untouched))}, "
                f"accel {r(self.accel, self.accel_untouched)} the clips'")

    def summary(self) -> str:
        def f(x, digits):
            return "-" if x is None else f"{x:.{digits}f}"
        text = (f"skate {f(self.skate, 3)} legs/s (untouched clips {f(self.skate_untouched, 3)}), "
                f"peak acceleration {f(self.accel, 2)} x p99 (untouched {f(self.accel_untouched, 2)})")
        flags = self.flags
        return text + (f"  ! {'; '.join(flags)}" if flags else "")


def _still(skate: float | None) -> float | None:
    """A skate figure to compare with: no less than STILL_SKATE (feet that do not move
    at all would make any slide look infinitely worse)."""
    return None if skate is None else max(skate, STILL_SKATE)


def _pooled_mean(speeds: list[np.ndarray], down: list[np.ndarray]) -> float | None:
    n = sum(int(d.sum()) for d in down)
    return float(sum(float(s[d].sum()) for s, d in zip(speeds, down)) / n) if n else None


def clips_accel_p99(sources: list[SourceFigures], fps: float) -> float:
    """The clips' own 99th percentile of mean-joint acceleration, on their samples from
    frame 0 (0 for clips too short to have one: no figure)."""
    k = measure_step(fps)
    samples = np.concatenate([s.accel[k:-k:k] for s in sources])
    return float(np.percentile(samples, ACCEL_PERCENTILE)) if len(samples) else 0.0


def gap_skate(output_feet: np.ndarray, output_start: int, gap: tuple[int, int], output_levels: FootLevels,
              up: np.ndarray, fps: float) -> float | None:
    """The output's own foot skate over ``gap`` (units per second, None when no foot is down):
    :func:`gap_quality`'s ``skate`` before it is divided by the leg length. ``output_feet``
    ``(F, K, 3)`` from the output's frame 0 (timeline frame ``output_start``)."""
    # skate over the samples (t, t + k) from the gap's first frame on
    first, last = gap
    a, b = max(first - output_start, 0), min(last - output_start, len(output_feet) - 1)
    speed, down = skate_samples(output_feet[a : b + 1], output_levels, up, fps)
    return _pooled_mean([speed], [down])


def gap_quality(
    output: Motion, output_start: int, gap: tuple[int, int], *, up: np.ndarray, leg: float,
    output_feet: np.ndarray, output_levels: FootLevels,
    sources: list[tuple[SourceFigures, int]],
) -> GapQuality:
    """The figures of output frames ``gap = (first, last)`` (inclusive, on the timeline).

    output, output_start  the output motion and the timeline frame of its frame 0;
    up, leg               the up axis and the leg length (skate comes out in legs/s);
    output_feet, output_levels  its :func:`foot_positions` and :func:`foot_levels`;
    sources               the two untouched clips, each with the timeline
                          frame its frame 0 plays at (as placed, so the gap's
                          frames are theirs too where they have them).
    """
    fps = output.fps
    k = measure_step(fps)
    first, last = gap
    skate = gap_skate(output_feet, output_start, gap, output_levels, up, fps)
    speeds, downs, peaks = [], [], []
    for src, start in sources:
        i, j = max(first - start, 0), min(last - start, len(src.accel) - 1)
        i += (first - start - i) % k  # on the gap's samples
        if j - i >= k:
            s, d = skate_samples(src.feet[i : j + 1], src.levels, up, fps)
            speeds.append(s)
            downs.append(d)
        on = np.arange(i, j + 1, k)
        on = on[(on >= k) & (on <= len(src.accel) - 1 - k)]
        if len(on):
            peaks.append(float(src.accel[on].max()))
    untouched = _pooled_mean(speeds, downs)
    p99 = clips_accel_p99([s for s, _ in sources], fps)
    # acceleration at the gap's samples, each with k frames either side in the output
    on = np.arange(first - output_start, last - output_start + 1, k)
    on = on[(on >= k) & (on <= output.n_frames - 1 - k)]
    accel = None
    if len(on) and p99 > 0:
        accel = float(mean_joint_acceleration(output[on[0] - k : on[-1] + k + 1])[on - on[0]].max()) / p99
    return GapQuality(
        skate=None if skate is None else skate / leg,
        skate_untouched=None if untouched is None else untouched / leg,
        accel=accel,
        accel_untouched=max(peaks) / p99 if peaks and p99 > 0 else None,
    )
