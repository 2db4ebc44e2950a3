"""Footprints: where a motion's feet are down, as prints on the floor.

What the add-on's Footprints overlay and the demo's pictures draw, so that a
foot sliding can be seen without scrubbing. A contact run is a run of frames
in which a foot is down by the definition the skate measure uses
(:mod:`core.quality`: its ankle or its toe within a narrow band above that
joint's own floor level, however fast it moves), so the prints show what the
quality figures measure. (The support analysis of 2008 section 4.1,
:func:`core.analysis.foot_contacts`, also asks the foot to be slow and allows
it higher: right for support phases, but a sliding foot would leave no print
and a low shuffle would count as down.) Each run leaves one print: the
outline of the sole, swept over every frame of the run. A foot held still
leaves a foot-shaped print; one that slides while down leaves a streak as
long as the slide.

A print is *sliding* when none of heel, ball and toe tip stayed within
``slide_legs`` of where it was planted, over the frames it was (:func:`planted`,
:func:`sole_slide`): a foot pivoting on one of them keeps that one and does
not slide, and the samples in which each touches down or lifts off do not
count. A run of frames in the band
begins with the foot still arriving: a captured running heel enters the band
at three leg lengths a second and travels a tenth of a leg more before it
stops, and a walk's ball still moves as the foot rolls onto it. Counted,
these made a third of the prints of untouched capture read as slides
(tests/bench/footprints.py); a foot blended between two places by a
crossfade slides while planted, and still reads so.

The sole is the segment from the ankle to the ball of the foot (the rig's toe
joint), laid on the floor, lengthened past the ball and widened in proportion
to its own length, so prints fit any body in any unit. A rig without a toe
joint gets a square print around the ankle, a fixed share of the leg long.
The floor is the foot joints' own floor level over the motion (a low
percentile of their heights, as :mod:`core.quality` finds it), so prints lie
at the height of the lowest joint when down, whatever the capture's floor.

Positions are in the motion's own space and unit, along its up axis; frames
are the motion's, end-inclusive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .analysis import ground_axes, horizontal
from .motion import Motion, forward_kinematics
from .quality import FLOOR_PERCENTILE, foot_levels, measure_step
from .rig import Rig, detect_up, find_rig, mean_leg_length

SIDES = ("L", "R")


@dataclass(frozen=True)
class FootprintOptions:
    """How prints are shaped and when one counts as a slide (shares of lengths; no unit)."""

    toe_reach: float = 0.5  # the sole goes past the ball of the foot by this share of ankle-to-ball
    width: float = 0.7  # the sole's width, as a share of ankle-to-ball
    no_toe_size: float = 0.15  # a rig without toes: the side of a square print, in leg lengths
    # A print whose sole moved more than this many leg lengths while planted is a streak: about a
    # quarter of the sole's length (heel to toe tip is some 0.2 leg lengths in people), the slide past
    # which the swept print stops reading as one footprint and reads as a smear. A rule of ours
    # (docs/design.md).
    slide_legs: float = 0.05
    min_run_s: float = 0.05  # a foot down for less than this (seconds) leaves no print (a graze, not a step)
    min_band_legs: float = 0.01  # the band counting as down is at least this many leg lengths (a foot that
    # never lifts has no height range for core.quality's band to be a share of)


@dataclass(frozen=True, eq=False)
class Footprint:
    """One contact run of one foot, as a print on the floor.

    side     ``"L"`` or ``"R"``.
    frames   (first, last) frames of the run, inclusive.
    outline  (K, 3) convex polygon on the floor, counter-clockwise seen from above (about up).
    slide    how far the sole slid over the run, in the motion's unit (:func:`sole_slide`): of
             its heel, ball and toe tip, the one that moved least while planted, at its furthest
             from its first planted place (0 for a foot held in place; a foot that pivots on its
             heel, its ball or its toe tip, or lifts its heel, keeps that point and does not slide).
    sliding  whether ``slide`` exceeds the options' ``slide_legs`` leg lengths.
    """

    side: str
    frames: tuple[int, int]
    outline: np.ndarray
    slide: float
    sliding: bool


def contact_runs(down: np.ndarray) -> list[tuple[int, int]]:
    """``down (F,) bool`` -> the (first, last) frames, inclusive, of each run of True."""
    edges = np.flatnonzero(np.diff(np.r_[0, np.asarray(down, dtype=np.int8), 0]))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2])]


def sole_corners(ankle: np.ndarray, ball: np.ndarray, up: np.ndarray, *, options: FootprintOptions) -> np.ndarray:
    """``(F, 3)`` ankle and ball positions -> ``(F, 4, 3)`` corners of the sole laid on the plane
    through the origin normal to ``up`` (heel left, heel right, toe right, toe left)."""
    heel, ball = horizontal(ankle, up), horizontal(ball, up)
    along = ball - heel
    toe = ball + options.toe_reach * along
    side = np.cross(up, along) * (0.5 * options.width)  # (|along| long: the width scales with the foot)
    return np.stack([heel + side, heel - side, toe - side, toe + side], axis=1)


def square_corners(ankle: np.ndarray, up: np.ndarray, size: float) -> np.ndarray:
    """``(F, 3)`` ankle positions -> ``(F, 4, 3)`` corners of a square of side ``size`` around each,
    on the plane through the origin normal to ``up``, along the ground axes."""
    e1, e2 = ground_axes(up)
    offsets = 0.5 * size * np.array([-e1 - e2, e1 - e2, e1 + e2, e2 - e1])
    return horizontal(ankle, up)[:, None, :] + offsets


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Indices of the convex hull of ``points (N, 2)``, counter-clockwise, collinear points left out
    (Andrew's monotone chain). Fewer than three distinct points give them as they are."""
    order = np.lexsort((points[:, 1], points[:, 0]))
    _, first = np.unique(points[order], axis=0, return_index=True)
    order = order[np.sort(first)]
    if len(order) < 3:
        return order

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    # (each point's fate depends on the chain kept so far: the one sequential step, over a print's few corners)
    def chain(indices):
        kept: list[int] = []
        for i in indices:
            while len(kept) >= 2 and cross(points[kept[-2]], points[kept[-1]], points[i]) <= 0:
                kept.pop()
            kept.append(int(i))
        return kept

    lower, upper = chain(order), chain(order[::-1])
    return np.array(lower[:-1] + upper[:-1])


def joints_down(positions: np.ndarray, up: np.ndarray, fps: float, *, min_band: float = 0.0,
                reference: np.ndarray | None = None) -> np.ndarray:
    """``(F, K) bool``: whether each joint of ``positions (F, K, 3)`` is down as the skate measure
    counts it (core.quality: within the band above that joint's floor level, both from the joint's
    own heights over the motion, or over ``reference (F', K, 3)`` when given), the band no narrower
    than ``min_band`` (in the positions' unit)."""
    heights = positions @ up
    if len(heights) == 0:
        return np.zeros(heights.shape, dtype=bool)
    levels = foot_levels(heights if reference is None else reference @ up, fps)
    return heights - levels.floor <= np.maximum(levels.band, min_band)


def planted(down: np.ndarray, step: int) -> np.ndarray:
    """``down (n, E) bool`` -> ``(n, E) bool``: down on every frame within ``step`` frames either side
    (within the ``n`` frames: before the first and after the last nothing is known, so nothing is
    taken away there).

    The frame in which a joint enters the band is its touch-down, the one in which it leaves it its
    lift-off: over those samples the foot is still arriving or leaving (a running heel lands at
    three leg lengths a second and covers a tenth of a leg in the sample it lands in). A joint is
    planted a whole sample of the skate measure (:func:`core.quality.measure_step`) from either."""
    down = np.asarray(down, dtype=bool)
    counts = np.concatenate([np.zeros((1,) + down.shape[1:], np.int64), np.cumsum(down, axis=0)])
    frames = np.arange(len(down))
    lo, hi = np.maximum(frames - step, 0), np.minimum(frames + step, len(down) - 1)
    return (counts[hi + 1] - counts[lo]) == (hi - lo + 1)[:, None]


def sole_slide(ends: np.ndarray, planted_ends: np.ndarray) -> float:
    """How far a sole slid over one contact run: ``ends (n, E, 3)`` points of the sole on the floor
    (heel, ball, toe tip), ``planted_ends (n, E) bool`` the frames each is planted (:func:`planted`)
    -> of the points planted at all, the one that moved least, at its furthest over its planted
    frames from its place on its first (0 when none is planted: a graze, not a step). A foot that
    pivots on one of them keeps that one in place and does not slide."""
    first = np.argmax(planted_ends, axis=0)  # (E,) each point's first planted frame
    away = np.linalg.norm(ends - ends[first, np.arange(ends.shape[1])], axis=-1)  # (n, E)
    travel = np.where(planted_ends, away, 0.0).max(axis=0)
    held = planted_ends.any(axis=0)
    return float(travel[held].min()) if held.any() else 0.0


def footprints(motion: Motion, rig: Rig | None = None, *, contacts: np.ndarray | None = None,
               options: FootprintOptions | None = None, positions: np.ndarray | None = None,
               reference: np.ndarray | None = None) -> list[Footprint]:
    """The prints of ``motion``'s feet, one per contact run, ordered by first frame (left first on a tie).

    contacts   ``(F, 2) bool`` [left, right]; default :func:`feet_down` of ``motion``.
    positions  ``(F, J, 3)`` the global joint positions to print instead of ``motion``'s own (what
               another program evaluated for the same skeleton, such as Blender's NLA); ``motion``
               then gives the skeleton, the rate and the up axis only.
    reference  ``(F', J, 3)`` global joint positions of a motion on the same floor whose feet give
               the floor levels and bands (default: the printed motion's own). Two motions compared
               are best judged on one floor: a blend that sinks the feet for a while would lower a
               floor taken from its own heights, and its planted feet would then read as lifted.
    """
    options = options or FootprintOptions()
    rig = rig or find_rig(motion)
    up = detect_up(motion, rig)
    legs = [rig.leg(side) for side in SIDES]
    joints = sorted({j for leg in legs for j in (leg.ankle, leg.toe) if j is not None})
    if positions is None:
        g = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, joints,
                               rotations_out=False)[0]
    else:
        positions = np.asarray(positions, dtype=np.float64)
        if positions.ndim != 3 or positions.shape[1:] != (len(motion.skeleton), 3):
            raise ValueError(f"positions must have shape (F, {len(motion.skeleton)}, 3) for the skeleton's "
                             f"{len(motion.skeleton)} joints, got {positions.shape}")
        g = positions[:, joints]
    n_frames = len(g)
    if contacts is not None:
        contacts = np.asarray(contacts, dtype=bool)
        if contacts.shape != (n_frames, 2):
            raise ValueError(f"contacts must have shape ({n_frames}, 2) for a motion of {n_frames} "
                             f"frames, got {contacts.shape}")
    column = {j: k for k, j in enumerate(joints)}
    leg = mean_leg_length(motion, rig)
    floors_from = g if reference is None else np.asarray(reference, dtype=np.float64)[:, joints]
    # each foot's (heel, ball) columns; a foot without a toe joint has its ankle for both
    columns = [[column[limb.ankle], column[limb.toe if limb.toe is not None else limb.ankle]] for limb in legs]
    down = joints_down(g, up, motion.fps, min_band=options.min_band_legs * leg, reference=floors_from)
    if contacts is None:
        contacts = np.stack([down[:, heel] | down[:, ball] for heel, ball in columns], axis=-1)
    shortest = options.min_run_s * motion.fps
    step = measure_step(motion.fps)
    floor = float(np.percentile(floors_from @ up, FLOOR_PERCENTILE, axis=0).min()) if len(floors_from) else 0.0
    e1, e2 = ground_axes(up)
    prints = []
    for k, (side, limb) in enumerate(zip(SIDES, legs)):
        ankle = g[:, column[limb.ankle]]
        ball = g[:, column[limb.toe]] if limb.toe is not None else ankle
        corners = (sole_corners(ankle, ball, up, options=options) if limb.toe is not None
                   else square_corners(ankle, up, options.no_toe_size * leg))
        tip = ball + options.toe_reach * (ball - ankle)  # the print's front edge
        ends = horizontal(np.stack([ankle, ball, tip], axis=1), up)
        # the heel planted while the ankle is, the ball and the tip while the toe joint is, within the foot's runs
        ends_planted = planted(down[:, columns[k] + columns[k][1:]] & contacts[:, k:k + 1], step)
        for first, last in contact_runs(contacts[:, k]):
            if last - first + 1 < shortest:
                continue
            run = corners[first:last + 1]  # (n, 4, 3)
            flat = run.reshape(-1, 3)
            hull = convex_hull(np.column_stack([flat @ e1, flat @ e2]))
            slide = sole_slide(ends[first:last + 1], ends_planted[first:last + 1])
            prints.append(Footprint(side, (first, last), flat[hull] + floor * up, slide,
                                    slide > options.slide_legs * leg))
    prints.sort(key=lambda p: (p.frames[0], p.side))
    return prints


def footprint_mesh(prints: list[Footprint]) -> tuple[np.ndarray, list[list[int]], np.ndarray]:
    """Prints as one mesh: vertices ``(V, 3)``, one face (vertex indices, counter-clockwise about up)
    per print, and ``(P,) bool`` whether each print is a streak (for its material)."""
    sizes = [len(p.outline) for p in prints]
    starts = np.cumsum([0, *sizes])
    vertices = np.concatenate([p.outline for p in prints]) if prints else np.zeros((0, 3))
    faces = [list(range(int(a), int(b))) for a, b in zip(starts[:-1], starts[1:])]
    return vertices, faces, np.array([p.sliding for p in prints], dtype=bool)
