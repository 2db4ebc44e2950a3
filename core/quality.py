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
Pop
    Per joint, its peak acceleration in the gap over that joint's own 99th
    percentile in the two clips; the largest over joints (and which joint).
    A mean over fifty joints dilutes one knee that snaps among the fingers;
    the worst single joint does not. Joints that do not move in the clips
    (a still root: its percentile is 0) are left out.

Each comes with what the untouched clips do on the same output frames: the
previous clip after its core and the following clip before its core, each
on its own frames, pooled (skate) or the larger (acceleration, pop).
Acceleration and pop also come with a reference: the larger of the untouched
clips' figure and that of the smoothest joint paths joining the two cores
(each joint on its own clamped spline through the gap's samples, the core
samples as they are). A tight placement asks of any motion joining its cores
about what the smoothest paths do, so it is not flagged for what no motion
could avoid; a roomy one is judged against the clips. Skate is in
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
from .text import counted

FLOOR_PERCENTILE = 2.0  # a joint's floor level: this low percentile of its height over the motion
BAND = 0.03  # a joint is down while within this share of its own height range above its floor
ACCEL_PERCENTILE = 99.0  # accelerations are given as ratios to this percentile of the clips' own
MEASURE_STEP_S = 1.0 / 30.0  # seconds between the frames a speed or an acceleration is taken over
STILL_SKATE = 0.01  # leg lengths per second (under 1 cm/s): flags compare skate with no less than this
FLAG_RATIO = 1.5  # a gap skating, accelerating or popping more than this times its reference is flagged
QUIET = 1.0  # accel and pop are compared with no less than the clips' own 99th percentile (see _quiet)
MOVING = 1e-6  # a joint whose 99th-percentile acceleration is below this share of the largest joint's is still
NO_SKATE_REFERENCE = "the untouched clips play no frame with a foot down in the gap to compare with"


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


def joint_accelerations(positions: np.ndarray, fps: float) -> np.ndarray:
    """``(F - 2k, J)`` each joint's global acceleration (units/s^2) at frames k .. F-1-k of global
    joint positions ``positions (F, J, 3)``: second differences over :func:`measure_step` ``k`` frames."""
    k = measure_step(fps)
    g = positions
    if len(g) < 2 * k + 1:
        return np.zeros((0, g.shape[1]))
    return quat.length(g[2 * k :] - 2.0 * g[k:-k] + g[: -2 * k]) * (fps / k) ** 2


@dataclass(frozen=True)
class SourceFigures:
    """What a clip brings by itself: its foot levels, its mean-joint and each joint's acceleration per frame."""

    levels: FootLevels
    accel: np.ndarray  # (F,) at every frame, 0 within measure_step of either end (no second difference there)
    feet: np.ndarray  # (F, K, 3)
    joint_accel: np.ndarray | None = None  # (F, J) each joint's, likewise

    @classmethod
    def of(cls, motion: Motion, rig: Rig, up: np.ndarray, positions: np.ndarray | None = None) -> "SourceFigures":
        """The figures of ``motion``; ``positions``, its global joint positions when at hand."""
        g = positions if positions is not None else forward_kinematics(
            motion.rotations, motion.positions, motion.skeleton.parents, rotations_out=False)[0]
        feet = g[:, foot_joints(rig)]
        k = measure_step(motion.fps)
        accel = np.zeros(motion.n_frames)
        joint_accel = np.zeros(g.shape[:2])
        if motion.n_frames > 2 * k:
            accel[k:-k] = mean_joint_acceleration(motion, g)
            joint_accel[k:-k] = joint_accelerations(g, motion.fps)
        return cls(foot_levels(feet @ up, motion.fps), accel, feet, joint_accel)


@dataclass(frozen=True)
class GapQuality:
    """The figures of one gap; ``None`` where there is nothing to measure.

    skate            leg lengths per second of the output's foot joints while down in the gap.
    skate_untouched  the same of the untouched clips on the same frames, pooled.
    accel            the output's peak mean-joint acceleration in the gap, over
                     the two clips' 99th percentile.
    accel_untouched  the untouched clips' peak on the same frames, likewise.
    accel_reference  the larger of ``accel_untouched`` and the smoothest joint paths'
                     peak joining the cores: what the gap is judged against.
    pop              the largest over joints of each joint's peak acceleration in
                     the gap over its own 99th percentile in the two clips.
    pop_untouched    the same for the untouched clips on the same frames.
    pop_reference    the larger of ``pop_untouched`` and the smoothest joint paths'.
    pop_joint        the joint whose figure is ``pop`` (its name).
    """

    skate: float | None
    skate_untouched: float | None
    accel: float | None
    accel_untouched: float | None
    accel_reference: float | None = None
    pop: float | None = None
    pop_untouched: float | None = None
    pop_reference: float | None = None
    pop_joint: str | None = None
    why_unmeasured: str | None = None  # why acceleration and pop could not be measured, when they were not

    def _judged(self) -> list[tuple[str, float | None, float | None, str]]:
        """(name, figure, what it is compared with, whose that is) for each figure that can be flagged.
        Acceleration and pop are compared with their references (the untouched clips' where a
        figure from before references were kept has none): never with the range search's limits
        at W, which move with W on a motion that does not change."""
        def whose(untouched, reference):
            if reference is not None and reference < QUIET:
                return "its own p99"
            return "the untouched clips'" if reference is None or reference == untouched else "the smoothest join's"
        accel_ref = self.accel_reference if self.accel_reference is not None else self.accel_untouched
        pop_ref = self.pop_reference if self.pop_reference is not None else self.pop_untouched
        return [("skate", self.skate, _still(self.skate_untouched), "the untouched clips'"),
                ("acceleration", self.accel, _quiet(accel_ref), whose(self.accel_untouched, accel_ref)),
                (f"{self.pop_joint or 'a joint'} popping", self.pop, _quiet(pop_ref), whose(self.pop_untouched, pop_ref))]

    @property
    def accel_judged(self) -> float | None:
        """``accel`` over what it is judged against (its reference, no less than QUIET); None without one."""
        return _over(*self._judged()[1][1:3])

    @property
    def pop_judged(self) -> float | None:
        """``pop`` over what it is judged against (its reference, no less than QUIET); None without one."""
        return _over(*self._judged()[2][1:3])

    @property
    def flags(self) -> list[str]:
        """What exceeds FLAG_RATIO times its reference."""
        return [f"{name} {mine / max(theirs, 1e-12):.1f} x {whose}" for name, mine, theirs, whose in self._judged()
                if mine is not None and theirs is not None and mine > FLAG_RATIO * theirs]

    def to_dict(self) -> dict:
        return {"skate": self.skate, "skate_untouched": self.skate_untouched,
                "accel": self.accel, "accel_untouched": self.accel_untouched, "accel_reference": self.accel_reference,
                "pop": self.pop, "pop_untouched": self.pop_untouched, "pop_reference": self.pop_reference,
                "pop_joint": self.pop_joint,
                **({"why_unmeasured": self.why_unmeasured} if self.why_unmeasured else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "GapQuality":
        return cls(d.get("skate"), d.get("skate_untouched"), d.get("accel"), d.get("accel_untouched"),
                   d.get("accel_reference"), d.get("pop"), d.get("pop_untouched"), d.get("pop_reference"),
                   d.get("pop_joint"), d.get("why_unmeasured"))

    @property
    def measured(self) -> bool:
        """Whether the gap's motion was judged at all: its acceleration and pop (skate has
        nothing to judge where no foot is down, which is no fault of the gap)."""
        return self.accel is not None and self.pop is not None

    @property
    def unjudged(self) -> list[str]:
        """What of a measured gap was measured but has nothing to be judged against, and why: a foot
        down in the gap where the untouched clips have none down on its frames (a clip ending where
        the next begins leaves them no frame there). Such a figure is never flagged, so the gap is
        not shown as fine either."""
        if self.skate is not None and self.skate_untouched is None:
            return [f"skate not judged ({NO_SKATE_REFERENCE})"]
        return []

    def ratios(self) -> str:
        """The figures as multiples of their references, for a narrow display."""
        if not self.measured:
            return f"not measured: {self.why_unmeasured or 'the gap has no frame to measure'}"

        def r(mine, theirs, missing="-"):
            return missing if mine is None or not theirs else f"{mine / theirs:.1f}x"
        (_, skate, skate_ref, _), (_, accel, accel_ref, _), (_, pop, pop_ref, _) = self._judged()
        joint = f" ({self.pop_joint})" if self.pop_joint else ""
        # "none" only where no foot is down; a foot down with nothing to judge it by is not "none"
        skated = ("skate none (no foot down)" if skate is None else
                  f"skate {r(skate, skate_ref)}" if skate_ref is not None else self.unjudged[0])
        return f"{skated}, accel {r(accel, accel_ref)}, pop {r(pop, pop_ref)}{joint}"

    def summary(self) -> str:
        def f(x, digits):
            return "-" if x is None else f"{x:.{digits}f}"
        text = (f"skate {f(self.skate, 3)} legs/s (untouched clips {f(self.skate_untouched, 3)}), "
                f"peak acceleration {f(self.accel, 2)} x p99 (untouched {f(self.accel_untouched, 2)}, "
                f"reference {f(self.accel_reference, 2)}), "
                f"pop {f(self.pop, 2)} x its p99{f' at {self.pop_joint}' if self.pop_joint else ''} "
                f"(untouched {f(self.pop_untouched, 2)}, reference {f(self.pop_reference, 2)})")
        flags = self.flags
        return text + (f"  ! {'; '.join(flags)}" if flags else "")


def gap_warning(prev: str, nxt: str, gap: tuple[int, int] | None, quality: GapQuality | None,
                warning: str | None = None) -> str | None:
    """The one line the gap from ``prev``'s core to ``nxt``'s gets among a plan's warnings, or None
    when there is nothing to say: where (output frames, the scene's in Blender), what is wrong (the
    pair's own ``warning``, e.g. cores that leave no room; the figures flagged against their
    references; or that the gap could not be measured, and why) and what to do.

    One line per gap, whatever is wrong with it: a reader scans a list of gaps, not of symptoms."""
    where = f"{prev!r} → {nxt!r}" + (f", frames {gap[0]}-{gap[1]}" if gap else "")
    parts = [warning] if warning else []
    if quality is None or not quality.measured:
        why = "the plan holds no figures for it" if quality is None else quality.why_unmeasured
        parts.append(f"not measured ({why})")
    if quality is not None and quality.measured:
        parts += quality.unjudged
    if quality is not None and quality.flags:
        parts.append(f"{', '.join(quality.flags)}: give it room (Give Room beside the gap, --give-room on the "
                     f"command line) or set a blend length on {nxt!r}")
    return f"{where}: {'; '.join(parts)}" if parts else None


def _over(mine: float | None, theirs: float | None) -> float | None:
    return None if mine is None or theirs is None or theirs <= 0 else mine / theirs


def _quiet(peak: float | None) -> float | None:
    """A peak (over the clips' 99th percentile) to compare with: no less than QUIET. Between two
    calm stretches (a bow into a guiding gesture) the untouched clips and the smoothest join
    barely move a knee, and any ordinary step of it would read as ten times theirs; a joint
    accelerating within its own 99th percentile in the clips is not a pop."""
    return None if peak is None else max(peak, QUIET)


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


def clips_joint_p99(sources: list[SourceFigures], fps: float) -> np.ndarray:
    """``(J,)`` each joint's own 99th percentile of acceleration in the clips, pooled, on their
    samples from frame 0; zeros for clips too short to have one."""
    k = measure_step(fps)
    samples = np.concatenate([s.joint_accel[k:-k:k] for s in sources])
    return np.percentile(samples, ACCEL_PERCENTILE, axis=0) if len(samples) else np.zeros(sources[0].joint_accel.shape[1])


def gap_samples(first: int, last: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The frames a gap's acceleration is sampled on (``first`` .. ``last`` every ``k``, with a
    sample either side, so that each inner one has a second difference), and which of them
    the cores fix: the previous core's last two samples, the next core's first (and the one
    before it when a sample falls on the next core's first frame)."""
    inner = np.arange(first, last + 1, k)
    frames = np.concatenate([[first - k], inner, [inner[-1] + k]])
    fixed = np.zeros(len(frames), dtype=bool)
    fixed[[0, 1, -1]] = True
    fixed[-2] |= inner[-1] == last  # (with one inner sample, that is the previous core's last)
    return frames, fixed


def smoothest_join(samples: np.ndarray, fixed: np.ndarray, fps: float, k: int) -> np.ndarray:
    """``(n - 2, J)`` each joint's acceleration (units/s^2) at the inner samples of the smoothest
    joint paths through a gap: ``samples (n, J, 3)`` global positions every ``k`` frames
    (:func:`gap_samples`), those ``fixed`` by the cores kept, the others chosen to minimise
    each joint's summed squared acceleration (a clamped spline). No skeleton holds the joints
    together, so no motion keeping the cores is much smoother than this anywhere: what the
    cores ask of a gap, whatever fills it.

    The minimiser in closed form, not by least squares over the gap's samples (a gap of
    20,000 frames asked for a dense 20,000-square system): where the summed squared second
    differences are least, each free sample's fourth difference is zero, so every path is
    one cubic in the sample index through the fixed samples (the previous core's last two,
    the next core's first two where a sample falls on its first frame); with the next
    core's first alone, the cubic's second difference is zero there (the free end's
    natural condition). One 4 x 4 solve serves every joint."""
    n = len(samples)
    p = samples.reshape(n, -1).copy()
    if (~fixed).any():
        u = np.arange(n, dtype=np.float64) / (n - 1)  # (the index over its span: a long gap's cubes stay tame)
        powers = np.stack([np.ones(n), u, u * u, u * u * u], axis=1)  # the cubic's basis at each sample
        if fixed[-2]:
            rows, values = powers[[0, 1, n - 2, n - 1]], p[[0, 1, n - 2, n - 1]]
        else:
            # (the second difference at the last sample, over the step squared: 2 c2 + 6 c3 u there)
            rows = np.concatenate([powers[[0, 1, n - 1]], [[0.0, 0.0, 2.0, 6.0]]])
            values = np.concatenate([p[[0, 1, n - 1]], np.zeros((1, p.shape[1]))])
        p[~fixed] = (powers @ np.linalg.solve(rows, values))[~fixed]
    return quat.length((p[2:] - 2.0 * p[1:-1] + p[:-2]).reshape(n - 2, -1, 3)) * (fps / k) ** 2


def _pop(peaks: np.ndarray, p99: np.ndarray, moving: np.ndarray) -> tuple[float, int] | None:
    """The largest of per-joint ``peaks (J,)`` over ``p99 (J,)`` among ``moving`` joints, and which joint."""
    if not moving.any():
        return None
    ratios = np.where(moving, peaks / np.where(moving, p99, 1.0), -np.inf)
    j = int(np.argmax(ratios))
    return float(ratios[j]), j


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
    speeds, downs, peaks, joint_peaks = [], [], [], []
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
            joint_peaks.append(src.joint_accel[on].max(axis=0))
    untouched = _pooled_mean(speeds, downs)
    p99 = clips_accel_p99([s for s, _ in sources], fps)
    joint_p99 = clips_joint_p99([s for s, _ in sources], fps)
    moving = joint_p99 > MOVING * joint_p99.max() if len(joint_p99) and joint_p99.max() > 0 else joint_p99 > 0
    # acceleration at the gap's samples, each with k frames either side in the output
    on = np.arange(first - output_start, last - output_start + 1, k)
    whole = len(on) > 0 and on[0] >= k and on[-1] <= output.n_frames - 1 - k  # every sample has its neighbours
    on = on[(on >= k) & (on <= output.n_frames - 1 - k)]
    accel = pop = smoothest = None
    # (the clips' mean-joint p99 can be above 0 while every joint's own is 0, each joint moving on
    # fewer than 1 % of the samples: no joint then has a p99 to judge its pop by, nor is the mean's
    # worth judging, and the gap is not measured, for the same reason as clips that do not move)
    still = p99 <= 0 or not moving.any()
    if len(on) and not still:
        window = output[on[0] - k : on[-1] + k + 1]
        g = forward_kinematics(window.rotations, window.positions, window.skeleton.parents, rotations_out=False)[0]
        accel = float(mean_joint_acceleration(window, g)[on - on[0]].max()) / p99
        pop = _pop(joint_accelerations(g, fps)[on - on[0]].max(axis=0), joint_p99, moving)
        if whole:
            # the smoothest joint paths through the same samples, the cores' as they are
            frames, fixed = gap_samples(first - output_start, last - output_start, k)
            join = smoothest_join(g[frames - frames[0]], fixed, fps, k)
            smoothest = (float(join.mean(axis=1).max()) / p99, _pop(join.max(axis=0), joint_p99, moving))
    why = None
    if accel is None:
        why = ("the clips' joints do not move, so there is no acceleration to compare with" if still else
               f"frames {first}-{last} lie within {counted(k, 'frame')} of the output's first or last frame, where no "
               "acceleration can be taken")
    accel_untouched = max(peaks) / p99 if peaks and p99 > 0 else None
    pop_untouched = _pop(np.max(joint_peaks, axis=0), joint_p99, moving) if joint_peaks else None
    pop_untouched = None if pop_untouched is None else pop_untouched[0]
    return GapQuality(
        skate=None if skate is None else skate / leg,
        skate_untouched=None if untouched is None else untouched / leg,
        accel=accel,
        accel_untouched=accel_untouched,
        accel_reference=_larger(accel_untouched, None if smoothest is None else smoothest[0]),
        pop=None if pop is None else pop[0],
        pop_untouched=pop_untouched,
        pop_reference=_larger(pop_untouched, None if smoothest is None else smoothest[1][0]),
        pop_joint=None if pop is None else output.skeleton.names[pop[1]],
        why_unmeasured=why,
    )


def _larger(a: float | None, b: float | None) -> float | None:
    return a if b is None else b if a is None else max(a, b)
