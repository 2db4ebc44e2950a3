"""Partial-figure retrieval and assembly (Juang et al. 2009, section 4).

Retrieval (4.1) by Boolean relational features; assembly (4.2) of the retrieved
parts onto the query: segment alignment on feature poses with a monotone Bezier
time curve (4.2.1), eq. (1) at the juncture joints (4.2.2), and the project's
feet-planted contact stage under a replaced leg (:func:`assemble`).

The paper precomputes, for every pose of a library, Boolean geometric features
in the manner of Mueller et al.'s relational motion features (its Table 1):

    F1  is the right foot in front?   F2  is the left foot in front?
    F3  does the right elbow bend?    F4  does the left elbow bend?

and retrieves, per body part, the library motion whose features match a query's.
Table 1 covers locomotion and punches; this module adds the matching features of
the other limbs (a hand in front, a knee bent) and one of speed per limb, so that
every limb has the same four kinds of question:

    arm:  ``hand_in_front``, ``hand_raised``, ``elbow_bent``, ``hand_fast``, ``hand_out``
    leg:  ``foot_in_front``, ``foot_raised``, ``knee_bent``,  ``foot_fast``

``hand_out`` (the hand far out from the body's vertical axis) is there because a
punch thrown from a fighting stance goes sideways to the body: in bandai1's
punch the jab at its peak is 46 cm to the left of its shoulder and only 10 cm in
front of it, so "in front of the body plane" alone does not see it.

Beyond the paper (issue 24): the Boolean features cannot tell a run's arms from a
walk's, and arms whose bits never change matched any window at cost 0, the first
clip by name winning. So each limb also has continuous measures (:data:`MEASURES`:
how fast the body carries it, how far it swings, in leg lengths), compared as
soft bits beside the Boolean ones (a leg's speed as the window is played, since the
legs must carry the query's pelvis: :data:`PLAYED_MEASURES`), and windows of equal
cost go to the one whose part poses lie nearest the query's (:func:`best_window`). A query longer than the
library's clips can hold is assembled in overlapping pieces joined by slerp (:func:`assembly_pieces`),
each retrieved with what the piece before plays over their overlap in its cost
(:func:`window_join_differences`).

Every threshold is in body units (the humerus length for the arms, the leg length
for the legs) or an angle, and every direction comes from the body itself (its
facing from the hips or shoulders, the skeleton's up axis), so joint names,
units, the up axis, placement and frame rate do not change the features.

Body parts (:data:`PARTS`): ``left.arm``, ``right.arm``, ``left.leg``,
``right.leg``, ``upper`` (both arms) and ``lower`` (both legs). Feature keys are
``"{side}.{feature}"`` such as ``"right.elbow_bent"``.

Assembly puts each part's joints (:func:`part_joints`) on the query's skeleton:
their local rotations, time-warped, with the query's bone lengths; the pelvis
(the root's translation and rotation) stays the query's. The juncture joints
(:func:`juncture_joints`, where a part meets the rest of the body) are then
standardised per Euler axis to the query's statistics, the Euler angles taken
about the body's own anatomical axes (:func:`anatomical_frame`: right-to-left,
up, forwards) in one order (:data:`EULER_ORDER`), so that the result does not
depend on the axes a file or an armature expresses the motion in.

Conventions as in :mod:`core.motion`; frames are indexed from 0 and a match's
``start`` is the first library frame of the matched window, ``length`` the
library frames it spans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from . import quat
from .analysis import foot_contacts, horizontal, pelvis_facing
from .budget import check_budget
from .contacts import SourceFeet, hold_feet, source_feet
from .mkm import body_yaw, clip_floors
from .motion import Motion, Skeleton, forward_kinematics, skeleton_mismatch
from .options import ContactOptions
from .progress import Progress, part_of, report
from .render import sample
from .rig import Rig, body_mismatch, check_legs_hang, find_rig, leg_length
from .weights import smoothstep

__all__ = ["PARTS", "Thresholds", "arm_features", "leg_features", "ARM_FEATURES", "LEG_FEATURES", "Match", "relational_features", "part_relational_features",
           "part_feature_names", "humerus_length", "flexion", "in_front", "above", "speed_in_body_units",
           "window_mismatches", "window_offsets", "best_window", "FeatureLibrary", "retrieve_parts", "retrieve_part",
           "SEGMENT_SCALES", "Assembly", "assemble", "part_joints", "juncture_joints", "anatomical_frame",
           "juncture_angles", "juncture_rotations",
           "standardized_angles", "feature_changes", "paired_feature_poses", "monotone_time_curve", "segment_time_map",
           "held_assembled_feet", "is_the_query", "EULER_ORDER", "STILL_AXIS", "POSE_WINDOW", "PACKED_BITS",
           "MEASURES", "PLAYED_MEASURES", "PART_LIMBS", "body_unit", "moving_range", "limb_frames", "limb_measures",
           "continuous_features", "PartFrames", "part_frames", "measure_differences", "window_measure_differences",
           "window_pose_distances", "window_join_differences", "window_mean_poses", "LIMB_POSE_JOINTS", "poses_at",
           "COST_TIE",
           "PIECE_OVERLAP", "SHORTEST_PIECE_S", "assembly_pieces", "piece_weights", "joined_pieces", "Piece"]

ARM_FEATURES = ("hand_in_front", "hand_raised", "elbow_bent", "hand_fast", "hand_out")
LEG_FEATURES = ("foot_in_front", "foot_raised", "knee_bent", "foot_fast")
_SIDES = {"left": "L", "right": "R"}


@dataclass(frozen=True)
class Thresholds:
    """Where each feature turns true; all unit-free. Set from bandai1's punch, walk
    and kick: the walk's knees flex 0-73 degrees and its elbows at most 39, a
    punch's guard elbow 126-140; a walking hand swings up to 1.3 humerus lengths
    ahead of its shoulder and 1.53 out from the chest, a jab reaches 2.24 out."""

    hand_in_front: float = 0.5   # humerus lengths ahead of the shoulder, across the chest's frontal plane
    hand_raised: float = 0.0     # humerus lengths above the shoulder
    elbow_bent_deg: float = 60.0  # forearm turned this far from the upper arm's direction (0 = stretched)
    hand_fast: float = 8.0       # humerus lengths per second relative to the chest (a walk's swing: < 7.5, a jab: 11)
    hand_out: float = 1.75       # humerus lengths out from the chest's vertical axis
    foot_in_front: float = 0.1   # leg lengths ahead of the pelvis, across the hips' frontal plane
    foot_raised: float = 0.1     # leg lengths above the lower of the two ankles
    knee_bent_deg: float = 35.0  # shin turned this far from the thigh's direction
    foot_fast: float = 1.0       # leg lengths per second over the ground
    # the continuous measures (issue 24, item 8; :data:`MEASURES`)
    swing_window_s: float = 1.0  # seconds around a frame a limb's swing is measured over (about a stride)
    speed_floor: float = 0.25    # leg lengths per second: speeds both under about this differ little
    swing_floor: float = 0.05    # leg lengths: swings both under about this differ little
    # a piece's join to the one before (issue 24, review of item 9; :func:`window_join_differences`)
    join_distance: float = 0.25  # leg lengths: a limb this far from the piece before's pose is a whole bit apart


def _parts() -> dict[str, tuple[str, ...]]:
    arm = {side: tuple(f"{side}.{f}" for f in ARM_FEATURES) for side in _SIDES}
    leg = {side: tuple(f"{side}.{f}" for f in LEG_FEATURES) for side in _SIDES}
    return {"left.arm": arm["left"], "right.arm": arm["right"], "left.leg": leg["left"], "right.leg": leg["right"],
            "upper": arm["left"] + arm["right"], "lower": leg["left"] + leg["right"]}


PARTS: dict[str, tuple[str, ...]] = _parts()


@dataclass(frozen=True)
class Match:
    """The library segment that best matches a query's part (section 4.1).

    clip   key of the library clip.
    start  first frame of the matched window, in the library clip's own frames.
    cost   share of the part's feature bits that differ over the window, 0..1, its measures'
           differences counted as soft bits among them (:func:`best_window`).
    length frames of the library clip the window spans, in its own frames (section 4.2.1: a
           segment may be shorter or longer than the query, see :data:`SEGMENT_SCALES`).
    bits   share of the part's Boolean feature bits alone that differ over the window (the
           paper's comparison); None where not measured.
    """

    clip: str
    start: int
    cost: float
    length: int = 0
    bits: float | None = None


# --------------------------------------------------------------------------
# geometric measures, whole-array over frames


def humerus_length(motion: Motion, rig: Rig, side: str) -> float:
    """Rest distance from shoulder to elbow of one arm, in the motion's unit."""
    arm = rig.arm(side)
    rest = motion.skeleton.rest_positions()
    return float(np.linalg.norm(rest[arm.elbow] - rest[arm.shoulder]))


def flexion(root: np.ndarray, middle: np.ndarray, tip: np.ndarray) -> np.ndarray:
    """Angle ``(F,)`` in degrees between the bones root->middle and middle->tip:
    0 for a stretched limb, growing as the elbow or knee bends."""
    a, b = middle - root, tip - middle
    # atan2 of |a x b| and a . b: accurate near 0 and 180 degrees, where acos of a cosine is not
    return np.degrees(np.arctan2(quat.length(quat.cross(a, b)), quat.sum_last(a * b)))


def in_front(point: np.ndarray, origin: np.ndarray, facing: np.ndarray) -> np.ndarray:
    """Signed distance ``(F,)`` of ``point`` ahead of the plane through ``origin`` with normal ``facing`` (unit)."""
    return quat.sum_last((point - origin) * facing)


def above(point: np.ndarray, origin: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Height ``(F,)`` of ``point`` above ``origin`` along unit ``up``."""
    return (point - origin) @ up


def speed_in_body_units(x: np.ndarray, fps: float, body_unit: float) -> np.ndarray:
    """Speed ``(F,)`` of positions ``x (F, 3)`` in body units per second (central differences)."""
    if len(x) < 2:
        return np.zeros(len(x))
    return quat.length(np.gradient(x, axis=0)) * fps / body_unit


# --------------------------------------------------------------------------
# What the Boolean features cannot tell apart (issue 24, item 8): a run's arms and a walk's
# swing in front in turn with the elbows bent alike, so their bits match about as well; what
# separates them is how fast the body carries the limb and how far the limb swings. Both are
# continuous, in leg lengths (per second), so that any rig, unit or rate gives the same figures;
# a window compares them as "soft bits" (:func:`measure_differences`), each frame's difference
# a share from 0 (equal) to 1, added to the differing bits.

MEASURES = ("carried_speed", "swing")
# A library window spanning ``scale`` times the query's frames is played in the query's time
# (section 4.2.1), so it carries a limb ``scale`` times as fast as its clip did. For a leg that is
# the speed that counts: the assembled legs stand under the query's pelvis (never part of a part),
# and a stance foot keeps its place only if the leg played sweeps back under the hip as fast as that
# pelvis travels; a leg played faster or slower than the pelvis carries it slides (or the contact
# stage must stretch it). So a leg's carried speed is compared as the window plays it. An arm
# touches nothing: its carried speed tells a run's arms from a walk's (the clip's action, whatever
# the pace it is played at), so it is compared as the clip has it. The swing is a distance, the
# same played faster or slower.
PLAYED_MEASURES = {"leg": ("carried_speed",), "arm": ()}


def body_unit(motion: Motion | Skeleton, rig: Rig) -> float:
    """The body's length unit for every measure of this module: the mean of the two rest leg lengths."""
    return 0.5 * (leg_length(motion, rig, "L") + leg_length(motion, rig, "R"))


def moving_range(x: np.ndarray, frames: int) -> np.ndarray:
    """``(F,)`` the range (max - min) of ``x (F,)`` over a centred window of ``frames`` frames (odd;
    the ends repeated), whole-array through a sliding view."""
    half = max(int(frames) // 2, 0)
    padded = np.concatenate([np.repeat(x[:1], half), x, np.repeat(x[-1:], half)])
    view = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1)
    return view.max(axis=1) - view.min(axis=1)


def limb_frames(motion: Motion, rig: Rig, g: np.ndarray, side: str, limb: str) -> tuple[np.ndarray, ...]:
    """``(root, middle, tip, facing)`` ``(F, 3)`` each: an arm's shoulder, elbow and wrist with the
    chest's facing (from the shoulders), a leg's hip, knee and ankle with the hips' facing."""
    up = np.asarray(motion.skeleton.up, dtype=np.float64)
    if limb == "arm":
        arm = rig.arm(side)
        facing = pelvis_facing(g[:, rig.left_arm.shoulder], g[:, rig.right_arm.shoulder], up)
        return g[:, arm.shoulder], g[:, arm.elbow], g[:, arm.wrist], facing
    leg = rig.leg(side)
    facing = pelvis_facing(g[:, rig.left_leg.hip], g[:, rig.right_leg.hip], up)
    return g[:, leg.hip], g[:, leg.knee], g[:, leg.ankle], facing


def limb_measures(motion: Motion, rig: Rig, g: np.ndarray, side: str, limb: str, t: "Thresholds"
                  ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``({measure: (F,)}, pose (F, 6))`` of one limb ("arm" or "leg") from world positions ``g (F, J, 3)``.

    carried_speed  the limb's root (shoulder, hip) over the ground, leg lengths per second: how fast
                   the body carries it (a run carries it about twice a walk's speed).
    swing          how far the tip (wrist, ankle) swings fore and aft of the root across the body's
                   frontal plane within ``t.swing_window_s`` around the frame, leg lengths.
    pose           the middle and tip joints (elbow and wrist, knee and ankle) relative to the root
                   in the body's frame (forwards, leftwards, up), leg lengths: what retrieval's
                   tie-break compares (:func:`pose_distances`).
    """
    up = np.asarray(motion.skeleton.up, dtype=np.float64)
    unit = body_unit(motion, rig)
    root, middle, tip, facing = limb_frames(motion, rig, g, side, limb)
    left = quat.cross(up, facing)
    window = 2 * int(round(0.5 * t.swing_window_s * motion.fps)) + 1
    measures = {"carried_speed": speed_in_body_units(horizontal(root, up), motion.fps, unit),
                "swing": moving_range(in_front(tip, root, facing) / unit, window)}
    axes = np.stack([facing, left, np.broadcast_to(up, facing.shape)], axis=1)  # (F, 3 axes, 3)
    pose = np.concatenate([np.einsum("fad,fd->fa", axes, p - root) for p in (middle, tip)], axis=1) / unit
    return measures, pose


# --------------------------------------------------------------------------
# section 4.1, Table 1 and its counterparts for the other limbs


def relational_features(motion: Motion, rig: Rig | None = None, thresholds: Thresholds = Thresholds()
                        ) -> dict[str, np.ndarray]:
    """Boolean features ``{key: (F,) bool}`` of every pose (section 4.1, Table 1's F1-F4 and the others).

    An arm is measured in the chest's frame (its facing from the shoulders, the
    chest joint) and a leg in the hips' (facing from the hips, the pelvis), so
    that a part's features stay what they were when assembly (4.2) puts it on
    another body. "In front" is across that frame's frontal plane (the body
    plane of Mueller et al.), through the shoulder for a hand and the pelvis
    for a foot; a hand's speed is relative to the chest, a foot's is its speed
    over the ground (planted or swinging). Arm lengths are in humerus
    lengths, leg lengths in leg lengths (hip to ankle), speeds per second.
    Raises ``ValueError`` for a skeleton without arms.
    """
    rig = find_rig(motion) if rig is None else rig
    if rig.left_arm is None or rig.right_arm is None:
        raise ValueError("relational features need both arms; this skeleton has no arms the rig finder recognises "
                         "(give them as overrides, e.g. {'left.shoulder': ..., 'left.elbow': ..., 'left.wrist': ...})")
    g = motion.global_positions()
    out: dict[str, np.ndarray] = {}
    for side, s in _SIDES.items():
        out.update({f"{side}.{k}": v for k, v in arm_features(motion, rig, g, s, thresholds).items()})
    for side, s in _SIDES.items():
        out.update({f"{side}.{k}": v for k, v in leg_features(motion, rig, g, s, thresholds).items()})
    return out


def arm_features(motion: Motion, rig: Rig, g: np.ndarray, side: str, t: Thresholds) -> dict[str, np.ndarray]:
    """{feature: (F,) bool} of one arm from world positions ``g (F, J, 3)``, in the chest's frame."""
    up = np.asarray(motion.skeleton.up, dtype=np.float64)
    arm, unit = rig.arm(side), humerus_length(motion, rig, side)
    chest = g[:, rig.chest if rig.chest is not None else rig.pelvis]
    chest_facing = pelvis_facing(g[:, rig.left_arm.shoulder], g[:, rig.right_arm.shoulder], up)
    shoulder, elbow, wrist = g[:, arm.shoulder], g[:, arm.elbow], g[:, arm.wrist]
    return {
        "hand_in_front": in_front(wrist, shoulder, chest_facing) > t.hand_in_front * unit,
        "hand_raised": above(wrist, shoulder, up) > t.hand_raised * unit,
        "elbow_bent": flexion(shoulder, elbow, wrist) > t.elbow_bent_deg,  # Table 1, F3 (right) and F4 (left)
        "hand_fast": speed_in_body_units(wrist - chest, motion.fps, unit) > t.hand_fast,
        "hand_out": quat.length(horizontal(wrist - chest, up)) > t.hand_out * unit,
    }


def leg_features(motion: Motion, rig: Rig, g: np.ndarray, side: str, t: Thresholds) -> dict[str, np.ndarray]:
    """{feature: (F,) bool} of one leg from world positions ``g (F, J, 3)``, in the hips' frame."""
    up = np.asarray(motion.skeleton.up, dtype=np.float64)
    leg, unit = rig.leg(side), leg_length(motion, rig, side)
    facing = pelvis_facing(g[:, rig.left_leg.hip], g[:, rig.right_leg.hip], up)
    lower_ankle = np.minimum(g[:, rig.left_leg.ankle] @ up, g[:, rig.right_leg.ankle] @ up)
    hip, knee, ankle = g[:, leg.hip], g[:, leg.knee], g[:, leg.ankle]
    return {
        "foot_in_front": in_front(ankle, g[:, rig.pelvis], facing) > t.foot_in_front * unit,  # Table 1, F1 and F2
        "foot_raised": ankle @ up - lower_ankle > t.foot_raised * unit,
        "knee_bent": flexion(hip, knee, ankle) > t.knee_bent_deg,
        "foot_fast": speed_in_body_units(ankle, motion.fps, unit) > t.foot_fast,
    }


def part_feature_names(part: str) -> tuple[str, ...]:
    """The feature keys of body part ``part`` (a key of :data:`PARTS`), in column order."""
    if part not in PARTS:
        raise ValueError(f"unknown body part {part!r}; give one of {', '.join(PARTS)}")
    return PARTS[part]


def part_relational_features(features: Mapping[str, np.ndarray], part: str) -> np.ndarray:
    """``(F, K)`` bool: the columns of :func:`relational_features` that belong to ``part``."""
    return np.stack([features[k] for k in part_feature_names(part)], axis=1)


# the limbs of each body part, as keys of :func:`continuous_features`' poses
PART_LIMBS = {"left.arm": ("left.arm",), "right.arm": ("right.arm",), "left.leg": ("left.leg",),
              "right.leg": ("right.leg",), "upper": ("left.arm", "right.arm"), "lower": ("left.leg", "right.leg")}


def continuous_features(motion: Motion, rig: Rig | None = None, thresholds: Thresholds = Thresholds()
                        ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """``({"{side}.{limb}.{measure}": (F,)}, {"{side}.{limb}": (F, 6)})``: every limb's
    :func:`limb_measures` and pose, in leg lengths (issue 24, item 8)."""
    rig = find_rig(motion) if rig is None else rig
    g = motion.global_positions()
    measures, poses = {}, {}
    for limb_key in ("left.arm", "right.arm", "left.leg", "right.leg"):
        side, limb = limb_key.split(".")
        m, pose = limb_measures(motion, rig, g, _SIDES[side], limb, thresholds)
        measures.update({f"{limb_key}.{k}": v for k, v in m.items()})
        poses[limb_key] = pose
    return measures, poses


@dataclass(frozen=True)
class PartFrames:
    """One body part of a clip frame by frame, as retrieval compares it.

    bits      (F, K) bool: the part's Boolean features (:func:`part_relational_features`).
    measures  (F, C) float or None: its limbs' :data:`MEASURES`, leg lengths (per second).
    poses     (F, D) float or None: its limbs' poses (:func:`limb_measures`), leg lengths.
    floors    (C,) the measures' floors (:func:`measure_differences`).
    played    (C,) bool: the measures compared as a window plays them, times its time scale
              (:data:`PLAYED_MEASURES`); None: none.
    joined    (O, D) float or None: of a query piece after the first, the poses the piece before
              it plays over their overlap (its first O frames) less its window's mean pose, leg
              lengths; compared with each window's there (:func:`window_join_differences`), so
              that adjacent pieces agree.
    join_distance  leg lengths: a limb's pose this far from ``joined`` is a whole bit apart."""

    bits: np.ndarray
    measures: np.ndarray | None = None
    poses: np.ndarray | None = None
    floors: np.ndarray | None = None
    played: np.ndarray | None = None
    joined: np.ndarray | None = None
    join_distance: float | None = None


def part_frames(features: Mapping[str, np.ndarray], part: str, measures: Mapping[str, np.ndarray] | None = None,
                poses: Mapping[str, np.ndarray] | None = None, thresholds: Thresholds = Thresholds(),
                joined: np.ndarray | None = None) -> PartFrames:
    """The :class:`PartFrames` of ``part`` from a clip's features (and, when given, its continuous ones
    and the piece before's poses over its first frames, ``joined``)."""
    bits = part_relational_features(features, part)
    if not measures:
        return PartFrames(bits)
    limbs = PART_LIMBS[part]
    floors = {"carried_speed": thresholds.speed_floor, "swing": thresholds.swing_floor}
    return PartFrames(bits, np.stack([measures[f"{limb}.{m}"] for limb in limbs for m in MEASURES], axis=1),
                      np.concatenate([poses[limb] for limb in limbs], axis=1),
                      np.array([floors[m] for _ in limbs for m in MEASURES]),
                      np.array([m in PLAYED_MEASURES[limb.split(".")[1]] for limb in limbs for m in MEASURES]),
                      joined, thresholds.join_distance if joined is not None else None)


def measure_differences(query: np.ndarray, library: np.ndarray, floors: np.ndarray) -> np.ndarray:
    """Each measure's difference as a share of a bit: how many octaves (factors of two) apart the two
    are, ``|log2((a + floor) / (b + floor))|``, at most 1, of non-negative ``query`` and ``library``
    measures broadcast together, ``floors`` last axis. A soft bit, so that a window's cost adds it to
    its differing bits: twice as fast, or swinging twice as far, is a whole bit apart. A ratio, so it
    does not depend on the body's size; the floor keeps two still limbs' noise from counting."""
    return np.minimum(np.abs(np.log2((query + floors) / (library + floors))), 1.0)


# --------------------------------------------------------------------------
# section 4.1: retrieval. The paper does not say how feature sequences are
# compared; here the query's (n, K) bits are laid over each library clip and the
# cost of a window is the share of bits that differ (a normalised Hamming
# distance). Section 4.2.1 says the query and the retrieved motion need not have
# the same length or speed, so a window may also span the query's length scaled
# by SEGMENT_SCALES, sampled at n frames (the nearest library frame to each);
# assembly then aligns the two on feature poses. It is exact, cheap (one
# whole-array comparison per clip and scale), and ties break to the scale
# nearest 1 (listed first), the first clip given, the earliest window.

# How much longer (> 1) or shorter a library segment may be than the query: the
# time scaling the 2008 synthesis allows a segment (0.7 .. 1.5, SynthesisOptions
# s_min, s_max) in steps of a quarter octave, nearest 1 first (ties go to it).
SEGMENT_SCALES = (1.0, 2 ** -0.25, 2 ** 0.25, 2 ** -0.5, 2 ** 0.5)


def window_offsets(n: int, scale: float = 1.0) -> np.ndarray:
    """``(n,)`` int: the library frames, from a window's first, compared with the query's ``n`` frames
    when the window spans ``scale`` times the query's length (the nearest frame to each)."""
    return np.rint(np.arange(n) * float(scale)).astype(np.int64)


def window_mismatches(query: np.ndarray, library: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``(m - L + 1,)`` int: differing bits between ``query (n, K)`` and each window of ``library (m, K)``
    spanning ``L`` frames (:func:`window_offsets` ``(n, scale)[-1] + 1``; ``n`` at scale 1).

    Empty when the library clip is shorter than the window.
    """
    query, library = np.asarray(query, bool), np.asarray(library, bool)
    n, m = len(query), len(library)
    if query.ndim != 2 or library.ndim != 2 or query.shape[1] != library.shape[1]:
        raise ValueError(f"feature arrays must be (frames, features) with the same features; got {query.shape} "
                         f"and {library.shape}")
    if n == 0:
        raise ValueError("the query has no frames")
    offsets = window_offsets(n, scale)
    span = int(offsets[-1]) + 1
    if m < span:
        return np.zeros(0, dtype=np.int64)
    packed = query.shape[1] <= PACKED_BITS
    if packed:
        # each frame's bits as one small integer: a window's differing bits are the popcounts of
        # its n frames' codes xor the query's, a tenth of the data of comparing bit by bit
        weights = 1 << np.arange(query.shape[1], dtype=np.uint16)
        q, lib = (query @ weights).astype(np.uint16), (library @ weights).astype(np.uint16)

    def mismatches(first: int, stop: int) -> np.ndarray:
        """Of the windows starting at library frames ``first .. stop - 1``, all at once."""
        if packed and span == n:  # (every window a view, until the xor)
            return _POPCOUNT[np.lib.stride_tricks.sliding_window_view(lib, n)[first:stop] ^ q].sum(
                axis=1, dtype=np.int64)
        # a scaled window: its n frames gathered for every start at once
        frames = np.arange(first, stop)[:, None] + offsets[None, :]
        if packed:
            return _POPCOUNT[lib[frames] ^ q].sum(axis=1, dtype=np.int64)
        return np.count_nonzero(library[frames] != query[None], axis=(1, 2))  # ((starts, n, K) booleans)

    # windows in blocks of at most WINDOW_BLOCK_BYTES: a query and a library clip both long have
    # many windows of many frames (100,000-frame ones asked for 11.9 GiB at once)
    starts = m - span + 1
    per_window = n * (WINDOW_BYTES_PER_FRAME if packed else 8 + 2 * query.shape[1])
    rows = max(1, WINDOW_BLOCK_BYTES // per_window)
    return np.concatenate([mismatches(first, min(first + rows, starts)) for first in range(0, starts, rows)])


# parts of up to this many features compare windows by popcounts of packed bits (a part has at most 10)
PACKED_BITS = 12
_POPCOUNT = np.array([bin(i).count("1") for i in range(1 << PACKED_BITS)], dtype=np.int64)
# What comparing one window frame holds: its index, its code, the xor and the popcount (bytes);
# and the most one block of windows may hold.
WINDOW_BYTES_PER_FRAME = 20
WINDOW_BLOCK_BYTES = 64 << 20


def _window_frames(starts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``(S, n)`` library frames of the windows starting at ``starts`` (their offsets ``(n,)``)."""
    return np.asarray(starts)[:, None] + offsets[None, :]


def _in_blocks(starts: np.ndarray, per_window: int, compute) -> np.ndarray:
    """``compute(block of starts)`` over ``starts`` in blocks of at most WINDOW_BLOCK_BYTES."""
    rows = max(1, WINDOW_BLOCK_BYTES // max(per_window, 1))
    if len(starts) == 0:
        return np.zeros(0)
    return np.concatenate([compute(starts[first:first + rows]) for first in range(0, len(starts), rows)])


def window_measure_differences(query: np.ndarray, library: np.ndarray, floors: np.ndarray,
                               scale: float = 1.0, played: np.ndarray | None = None) -> np.ndarray:
    """``(m - L + 1,)`` float: the summed :func:`measure_differences` between ``query (n, C)`` and each
    window of ``library (m, C)`` (frames as :func:`window_mismatches` lays them), soft bits to add to
    its differing bits. The speeds ``played`` ``(C,)`` bool are compared as the window plays them,
    ``scale`` times the library's (:data:`PLAYED_MEASURES`): a window of twice the query's frames
    played in its time carries the limb twice as fast."""
    n, m = len(query), len(library)
    if played is not None:
        library = library * np.where(played, float(scale), 1.0)
    offsets = window_offsets(n, scale)
    starts = np.arange(max(m - int(offsets[-1]), 0))
    # measure_differences with the logarithms taken once per frame, not once per frame of every
    # window. A loop over the query's frames, each a whole-array step over every window at once:
    # query frame i meets library frames offsets[i] + starts, a contiguous slice (best_window
    # passes every clip at once, end to end), where gathering every window's frames (fancy
    # indexing, (starts, n, C)) took more time than the rest of retrieval
    # (single precision, in place: a sum of shares of a bit needs no more)
    own = np.log2(query + floors).astype(np.float32)
    theirs = np.ascontiguousarray(np.log2(library + floors).T, dtype=np.float32)  # (C, m): rows contiguous
    total = np.zeros(len(starts), dtype=np.float32)
    d = np.empty((query.shape[1], len(starts)), dtype=np.float32)
    for i, offset in enumerate(offsets):
        np.subtract(theirs[:, offset:offset + len(starts)], own[i][:, None], out=d)
        np.abs(d, out=d)
        np.minimum(d, np.float32(1.0), out=d)
        for row in d:
            total += row
    return total.astype(np.float64)


def window_pose_distances(query: np.ndarray, library: np.ndarray, starts: np.ndarray,
                          scale: float = 1.0) -> np.ndarray:
    """``(S,)``: the root mean square, over the query's ``n`` frames, of the distance between the
    query's poses ``(n, D)`` and those of the library's windows at ``starts`` ``(S,)`` (leg lengths)."""
    offsets = window_offsets(len(query), scale)
    return _in_blocks(np.asarray(starts), 8 * query.size * 2, lambda s: np.sqrt(
        np.mean(np.sum((library[_window_frames(s, offsets)] - query[None]) ** 2, axis=2), axis=1)))


# Adjacent pieces were retrieved each on its own (issue 24, review of item 9): a piece took its best
# window whatever the piece before it plays over their overlap, and the slerp across the overlap
# between two arms swinging out of phase partly cancels the swing. So a piece's window is also
# compared, over the overlap, with what the piece before plays there: per frame and limb, the root
# mean square distance of its middle and end joints (elbow and wrist, knee and ankle; the poses of
# :func:`limb_measures`, leg lengths) as a share of ``distance``, at most 1, added to the window's
# cost (:func:`best_window` weighs it). Each pose is taken about its window's mean pose (the
# window's frames end to end): eq. (1) moves every piece's juncture to the query's mean, so what
# the two pieces play over the overlap differs by how each moves about its mean (compared as they
# were, bandai1's clips' postures differed by up to 0.3 leg lengths between what retrieval saw and
# what the pieces played). The window's frames as it lays them, before the time alignment (as the
# tie-break compares them: a window's feature poses are paired only once it is chosen).
LIMB_POSE_JOINTS = 2  # the joints of a limb's pose: its middle and end joints


def window_mean_poses(poses: np.ndarray, span: int) -> np.ndarray:
    """``(m - span + 1, D)``: the mean of ``poses (m, D)`` over each run of ``span`` frames (cumulative sums)."""
    sums = np.concatenate([np.zeros((1, poses.shape[1])), np.cumsum(poses, axis=0)])
    return (sums[span:] - sums[:-span]) / span


def window_join_differences(joined: np.ndarray, library: np.ndarray, n: int, distance: float,
                            scale: float = 1.0) -> np.ndarray:
    """``(m - L + 1,)`` float: soft bits between ``joined (O, D)``, the poses the piece before plays over
    the first ``O`` of a query piece's ``n`` frames less its window's :func:`window_mean_poses`, and
    each window of ``library (m, D)`` (poses, leg lengths; frames as :func:`window_mismatches` lays
    them, spanning ``L``) less its own mean: per frame and limb (``D / 6`` limbs), its joints' root
    mean square distance over ``distance``, at most 1, summed."""
    offsets = window_offsets(n, scale)
    span = int(offsets[-1]) + 1
    starts = max(len(library) - span + 1, 0)
    if not starts:
        return np.zeros(0)
    columns = 3 * LIMB_POSE_JOINTS
    means = np.ascontiguousarray(window_mean_poses(library, span).T, dtype=np.float32)  # (D, starts)
    theirs = np.ascontiguousarray(library.T, dtype=np.float32)  # (D, m): rows contiguous
    joined = np.asarray(joined, dtype=np.float32)
    total = np.zeros(starts, dtype=np.float32)
    d = np.empty(starts, dtype=np.float32)
    squares = np.empty(starts, dtype=np.float32)
    # a loop over the overlap's frames and the poses' columns, each a whole-array step over every
    # window at once (as window_measure_differences: the frames a query frame meets are one
    # contiguous slice; single precision, in place: a sum of shares of a bit needs no more)
    for pose, offset in zip(joined, offsets[:len(joined)]):
        for limb in range(0, len(pose), columns):
            squares.fill(0.0)
            for c in range(limb, limb + columns):
                np.subtract(theirs[c, offset:offset + starts], means[c], out=d)
                d -= pose[c]
                d *= d
                squares += d
            np.sqrt(squares * np.float32(1.0 / (LIMB_POSE_JOINTS * distance * distance)), out=d)
            np.minimum(d, np.float32(1.0), out=d)
            total += d
    return total.astype(np.float64)


# costs this close are ties (a sum of shares over a window: rounding, not a difference)
COST_TIE = 1e-9


def best_window(query: np.ndarray | PartFrames, library: Mapping[str, np.ndarray | PartFrames],
                scales=(1.0,)) -> Match:
    """The library window of least cost over all clips and ``scales``, its ``start`` and ``length`` in the
    library's frames; ``ValueError`` when no clip is as long as the query at any scale.

    Of bits alone (arrays ``(F, K)``), the cost is the share of differing bits (:func:`window_mismatches`),
    ties going to the scale listed first, the first clip, the earliest window. Of :class:`PartFrames`
    with measures, each frame's :data:`MEASURES` count as soft bits besides the Boolean ones
    (:func:`measure_differences`; a leg's carried speed as the window plays it, times its scale):
    cost = (differing bits + measure differences) / (frames x (K + C)). A query piece after the first
    (``joined``) adds its windows' :func:`window_join_differences` to the piece before over their
    overlap, each overlap frame's mean over the limbs counting as a frame's K + C bits.
    Windows whose cost ties with the least (within :data:`COST_TIE`, rounding) are told apart by how
    near their part's poses lie to the query's (:func:`window_pose_distances`; issue 24, item 8: an arm
    whose bits never change matched every window at cost 0, and the first clip by name won)."""
    query = query if isinstance(query, PartFrames) else PartFrames(np.asarray(query))
    library = {clip: f if isinstance(f, PartFrames) else PartFrames(np.asarray(f)) for clip, f in library.items()}
    soft = query.measures is not None and all(f.measures is not None for f in library.values())
    n = len(query.bits)
    units = query.bits.size + (query.measures.size if soft else 0)
    joins = soft and query.joined is not None and len(query.joined) and query.poses is not None
    if joins:
        # an overlap frame a window plays out of the piece before's pose is spoilt as much as one
        # whose every bit differs: each frame's join counts as a frame's bits and measures
        per_frame = query.bits.shape[1] + query.measures.shape[1]
        join_weight = per_frame / (query.joined.shape[1] // (3 * LIMB_POSE_JOINTS))
        units += len(query.joined) * per_frame
    candidates = []  # (scale index, clip index, clip, costs (starts,), span, differing bits (starts,))
    if soft:  # every clip end to end: one pass per scale (windows across two clips are not read)
        firsts = np.cumsum([0] + [len(f.measures) for f in library.values()])
        every = np.concatenate([f.measures for f in library.values()])
        if joins:
            every_pose = np.concatenate([f.poses for f in library.values()])
    for s, scale in enumerate(scales):
        span = int(window_offsets(n, scale)[-1]) + 1
        if soft:
            soft_costs = window_measure_differences(query.measures, every, query.floors, scale, query.played)
            if joins:
                soft_costs = soft_costs + join_weight * window_join_differences(query.joined, every_pose, n,
                                                                                query.join_distance, scale)
        for c, (clip, frames) in enumerate(library.items()):
            bits = window_mismatches(query.bits, frames.bits, scale)
            if len(bits) == 0:
                continue
            costs = bits.astype(np.float64)
            if soft:
                costs = costs + soft_costs[firsts[c]:firsts[c] + len(bits)]
            candidates.append((s, c, clip, costs / units, span, bits))
    if not candidates:
        raise ValueError(f"every library clip is shorter than the query ({n} frames); give a shorter "
                         f"query or longer library clips")
    least = min(float(x[3].min()) for x in candidates)

    def bits_share(bits: np.ndarray, start: int) -> float:
        return float(bits[start]) / query.bits.size

    if not soft or query.poses is None:
        s, c, clip, costs, span, bits = next(x for x in candidates if float(x[3].min()) == least)
        start = int(np.argmin(costs))
        return Match(clip, start, least, span, bits_share(bits, start))
    tie = least + COST_TIE
    best = None
    for s, c, clip, costs, span, bits in candidates:
        starts = np.flatnonzero(costs <= tie)
        if not len(starts):
            continue
        distances = window_pose_distances(query.poses, library[clip].poses, starts, scales[s])
        k = int(np.argmin(distances))
        if best is None or distances[k] < best[0]:
            start = int(starts[k])
            best = (float(distances[k]), Match(clip, start, float(costs[start]), span, bits_share(bits, start)))
    return best[1]


@dataclass(frozen=True, eq=False)
class FeatureLibrary:
    """The features of every pose of a library, computed once (section 4.1: the paper precomputes them).

    fps         frame rate the features were computed at (clips at other rates are resampled).
    features    {clip: {feature key: (F,) bool}}.
    clip_fps    {clip: the clip's own frame rate}, to give matches back in its own frames.
    motions     {clip: Motion} the clips themselves, as given (assembly, section 4.2, takes the
                retrieved parts from them); empty for a library of features alone.
    thresholds  the :class:`Thresholds` the features were computed with.
    measures    {clip: {measure key: (F,) float}} and
    poses       {clip: {limb: (F, 6) float}}: :func:`continuous_features` (empty for a library of
                Boolean features alone: retrieval then compares bits alone).
    """

    fps: float
    features: dict
    clip_fps: dict
    motions: dict = field(default_factory=dict)
    thresholds: Thresholds = Thresholds()
    measures: dict = field(default_factory=dict)
    poses: dict = field(default_factory=dict)

    def subset(self, clips) -> "FeatureLibrary":
        """This library with only ``clips`` (keys of it), in their order here."""
        kept = [c for c in self.features if c in set(clips)]
        return FeatureLibrary(self.fps, {c: self.features[c] for c in kept}, {c: self.clip_fps[c] for c in kept},
                              {c: self.motions[c] for c in kept if c in self.motions}, self.thresholds,
                              {c: self.measures[c] for c in kept if c in self.measures},
                              {c: self.poses[c] for c in kept if c in self.poses})

    def part_frames(self, clip: str, part: str) -> PartFrames:
        """:class:`PartFrames` of ``part`` of library clip ``clip``."""
        return part_frames(self.features[clip], part, self.measures.get(clip), self.poses.get(clip),
                           self.thresholds)

    @classmethod
    def build(cls, library: Mapping[str, Motion], fps: float, thresholds: Thresholds = Thresholds(),
              rig: Rig | None = None, progress: Progress | None = None) -> "FeatureLibrary":
        """Features of every clip of ``library`` at frame rate ``fps``; ``rig``: the joint roles of
        every clip (all on one skeleton) when known, else each clip's own are found. ``progress``
        (:mod:`core.progress`) hears the share of the clips done."""
        if not library:
            raise ValueError("the library is empty; give at least one clip")
        features, continuous = {}, {}
        for clip, m in library.items():  # (one clip at a time: the features are per clip, its length its own)
            at_rate = m if m.fps == fps else m.resampled(fps)
            features[clip] = relational_features(at_rate, rig, thresholds)
            continuous[clip] = continuous_features(at_rate, rig, thresholds)
            report(progress, len(features) / len(library))
        return cls(fps, features, {clip: m.fps for clip, m in library.items()}, dict(library), thresholds,
                   {clip: c[0] for clip, c in continuous.items()}, {clip: c[1] for clip, c in continuous.items()})


def _feature_library(library: Mapping[str, Motion] | FeatureLibrary, fps: float,
                     thresholds: Thresholds = Thresholds(), rig: Rig | None = None,
                     progress: Progress | None = None) -> FeatureLibrary:
    if not isinstance(library, FeatureLibrary):
        return FeatureLibrary.build(library, fps, thresholds, rig, progress)
    if library.fps != fps:
        raise ValueError(f"the feature library was built at {library.fps:g} fps and the query is at "
                         f"{fps:g} fps; build it at the query's rate")
    return library


def _matches_in_library_frames(query_features: Mapping[str, np.ndarray], library: FeatureLibrary, parts,
                               scales, query_continuous=None, joined: np.ndarray | None = None) -> dict[str, Match]:
    """Per part, :func:`best_window` over ``library``: start and length in its frames (at ``library.fps``).
    ``query_continuous``: the query's :func:`continuous_features`, compared where the library has them;
    ``joined``: the piece before's poses over the first frames (of one part, :class:`PartFrames`)."""
    measures, poses = query_continuous if query_continuous is not None and library.measures else (None, None)
    return {part: best_window(part_frames(query_features, part, measures, poses, library.thresholds, joined),
                              {clip: library.part_frames(clip, part) for clip in library.features}, scales)
            for part in parts}


def _in_own_frames(match: Match, library: FeatureLibrary) -> Match:
    """``match`` with its start and length in the library clip's own frames."""
    ratio = library.clip_fps[match.clip] / library.fps
    if ratio == 1.0:
        return match
    start = int(round(match.start * ratio))
    return Match(match.clip, start, match.cost, int(round((match.start + match.length - 1) * ratio)) - start + 1,
                 match.bits)


def retrieve_parts(query: Motion, library: Mapping[str, Motion] | FeatureLibrary, parts, *,
                   scales=SEGMENT_SCALES) -> dict[str, Match]:
    """Per body part of ``parts``, the library segment most similar to ``query`` (section 4.1), among
    windows of the query's length times each of ``scales`` (section 4.2.1).

    ``library`` is clips or a :class:`FeatureLibrary` built at the query's frame
    rate. Each match's ``start`` and ``length`` are in the library clip's own frames.
    """
    for part in parts:
        part_feature_names(part)  # an unknown part fails before any features are computed
    library = _feature_library(library, query.fps)
    rig = find_rig(query)
    matches = _matches_in_library_frames(relational_features(query, rig, library.thresholds), library, parts,
                                         scales, continuous_features(query, rig, library.thresholds))
    return {part: _in_own_frames(match, library) for part, match in matches.items()}


def retrieve_part(query: Motion, library: Mapping[str, Motion] | FeatureLibrary, part: str, *,
                  scales=SEGMENT_SCALES) -> Match:
    """The library segment most similar to ``query`` in body part ``part`` (see :func:`retrieve_parts`)."""
    return retrieve_parts(query, library, [part], scales=scales)[part]


# --------------------------------------------------------------------------
# section 4.2: assembly


def part_joints(skeleton: Skeleton, rig: Rig, part: str) -> np.ndarray:
    """``(J,)`` bool: the joints body part ``part`` replaces. An arm is its collar (or its shoulder
    where the rig has no collar) and every joint below it, a leg its hip and below; ``upper`` is
    the spine above the pelvis and everything above it (chest, neck, head, both arms), ``lower``
    both legs. The pelvis (the root's translation and rotation) is never part of one."""
    part_feature_names(part)
    if part in ("upper", "lower"):
        if part == "upper":
            return rig.upper_body_mask(skeleton)
        return rig.subtree_mask(skeleton, rig.left_leg.hip) | rig.subtree_mask(skeleton, rig.right_leg.hip)
    side, limb = part.split(".")
    if limb == "leg":
        return rig.subtree_mask(skeleton, rig.leg(side).hip)
    arm = rig.arm(side)
    if arm is None:
        raise ValueError(f"this skeleton has no {side} arm the rig finder recognises; give it as overrides "
                         f"({side}.shoulder, {side}.elbow, {side}.wrist)")
    return rig.subtree_mask(skeleton, arm.clavicle if arm.clavicle is not None else arm.shoulder)


def juncture_joints(skeleton: Skeleton, joints: np.ndarray) -> np.ndarray:
    """Indices of the joints of mask ``joints (J,)`` whose parent is not among them: where a part
    meets the rest of the body (section 4.2.2's critical joints): an arm's collar or shoulder,
    a leg's hip, the lowest spine joint of the upper body, both hips of the lower body."""
    parents = skeleton.parents
    outside = np.ones(len(parents), dtype=bool)
    outside[1:] = ~joints[parents[1:]]
    return np.flatnonzero(joints & outside)


# Eq. (1) works on Euler angles, and Euler angles depend on the axes they are taken about: the
# same clip as a BVH file (Y up) and as a Blender armature (Z up) would give other angles, and
# standardising each axis to the query's statistics would give other rotations. So the angles
# are taken in one frame of the body itself (:func:`anatomical_frame`), in one order for every
# rig, whatever a BVH file's channels say: Y (the vertical: the spine's twist) first, then Z (the
# forward axis: bending sideways), then X (the right-to-left axis: bending forwards). The middle
# angle, the one limited to [-90, 90] degrees (beyond it the rotation reads back on the other
# Euler branch), is the sideways one, the smallest at the junctures: over bandai1's 130 clips its
# largest is 30 degrees at the spine, 45 at a collar and 70 at a hip (a dance), where the
# forward bend reaches 115 and a hip's turns 210 (bandai's rest pose lays the legs along the spine).
EULER_ORDER = "YZX"


def anatomical_frame(motion: Motion, rig: Rig) -> np.ndarray:
    """``(4,)`` the rotation taking the body's anatomical axes into the axes ``motion``'s local
    rotations are expressed in (its rest offsets' coordinates): Y the up axis, X from the right hip
    to the left (in the rest pose, made horizontal), Z = X x Y forwards. A local rotation ``q`` reads
    ``inv(C) q C`` about these axes.

    Up is the skeleton's up (a world direction) carried back through the root joint's rotation,
    averaged over the frames: the direction the root's children are hung in. So the same motion
    in other coordinates gives the same rotations about these axes, whether the whole of it is
    re-expressed (every offset turned and every local rotation conjugated, as Blender's armatures
    are Z up) or only its root turned (``Motion.transformed``). ``ValueError`` when the rest pose's
    hips lie one above the other."""
    up = quat.mul_vec(quat.inv(motion.rotations[:, 0]), np.asarray(motion.skeleton.up, dtype=np.float64)).mean(axis=0)
    up = up / np.linalg.norm(up)
    rest = motion.skeleton.rest_positions()
    across = rest[rig.left_leg.hip] - rest[rig.right_leg.hip]
    across = across - (across @ up) * up
    size = np.linalg.norm(across)
    if not size > 1e-9 * max(np.abs(rest).max(), 1e-12):
        raise ValueError("the rest pose's hips lie one above the other, so they give no right-to-left direction "
                         "for eq. (1)'s Euler angles; give a skeleton whose rest pose has the hips side by side")
    x = across / size
    return quat.from_matrix(np.stack([x, up, np.cross(x, up)], axis=1))


def juncture_angles(rotations: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Euler angles ``(F, 3)`` in radians, in :data:`EULER_ORDER`, of local rotations ``(F, 4)`` taken
    about the anatomical axes ``frame (4,)`` (:func:`anatomical_frame`), each axis unwrapped along time
    and shifted by whole turns so its mean lies in [-pi, pi]: the same motion read twice gives the
    same angles, whatever turn its first frame started on."""
    about = quat.mul(quat.mul(quat.inv(frame), rotations), frame)
    angles = np.unwrap(quat.to_euler(about, EULER_ORDER), axis=0)
    return angles - 2.0 * np.pi * np.round(angles.mean(axis=0) / (2.0 * np.pi))


def juncture_rotations(angles: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Local rotations ``(F, 4)`` of Euler angles ``angles (F, 3)`` (:func:`juncture_angles`'s inverse)."""
    return quat.mul(quat.mul(frame, quat.from_euler(angles, EULER_ORDER)), quat.inv(frame))


# below this standard deviation (radians) an axis of the retrieved juncture counts as still
STILL_AXIS = 1e-6


def standardized_angles(retrieved: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Section 4.2.2, eq. (1): ``S_i = (R_i - M_R) / sigma_R * sigma_Q + M_Q``, per Euler axis, of the
    retrieved juncture angles ``retrieved (F, 3)`` against the query's ``query (F, 3)``
    (:func:`juncture_angles`). S keeps the retrieved motion's local variation with the query's
    mean and standard deviation. An axis the retrieved motion holds still (sigma_R under
    :data:`STILL_AXIS`) is only moved to the query's mean: scaling it up to sigma_Q would
    turn rounding noise into motion."""
    m_r, s_r = retrieved.mean(axis=0), retrieved.std(axis=0)
    m_q, s_q = query.mean(axis=0), query.std(axis=0)
    still = s_r < STILL_AXIS
    scale = np.where(still, 1.0, s_q / np.where(still, 1.0, s_r))
    return (retrieved - m_r) * scale + m_q


def feature_changes(features: np.ndarray) -> np.ndarray:
    """``(F, K)`` int8 of ``features (F, K)`` bool: +1 where a bit turns true at that frame, -1 where
    it turns false, 0 elsewhere (and at frame 0)."""
    features = np.asarray(features, dtype=bool)
    out = np.zeros(features.shape, dtype=np.int8)
    turned = features[1:] != features[:-1]
    out[1:] = np.where(turned, np.where(features[1:], 1, -1), 0)
    return out


# A feature pose pairs only with one this share of the segments' length (in each one's own
# frames) from the same place: the window was retrieved as a whole, so a pose's counterpart
# lies near it; a look-alike far off would make many frames play in one (a kick retrieved
# for a punch paired a pose 15 of its 51 frames away and played them in one query frame;
# tests/bench/assemble_quality.py measures the difference).
POSE_WINDOW = 0.15


def pairing_bytes(query_poses: int, segment_poses: int) -> int:
    """Bytes :func:`paired_feature_poses` holds for that many feature poses: its table of doubles."""
    return 8 * (query_poses + 1) * (segment_poses + 1)


def paired_feature_poses(query: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Section 4.2.1: feature poses of ``query (n, K)`` paired with those of ``segment (L, K)``
    (a part's bits), ``(P, 2)`` int of (query frame, segment frame), strictly increasing in both.

    A feature pose is a frame where one of the part's bits changes. Two poses may pair when
    they share a change (the same bit, the same direction); the pairs are in order and chosen
    to share the most changes, each pair counting less the farther apart the two poses lie in
    their segments (a weight from 1, the same place, to 0, :data:`POSE_WINDOW` of the length
    apart, beyond which they do not pair), so a logically similar segment pairs each pose with
    its counterpart and not with a later one. Poses
    without a partner are left unpaired: the time curve passes between its neighbours'
    pairs. Only poses strictly inside both segments pair: the segments' ends meet anyway.
    """
    q, s = feature_changes(query), feature_changes(segment)
    n, L = len(q), len(s)
    qf = np.flatnonzero(q[1:-1].any(axis=1)) + 1
    sf = np.flatnonzero(s[1:-1].any(axis=1)) + 1
    if not len(qf) or not len(sf):
        return np.zeros((0, 2), dtype=np.int64)
    check_budget("assembling", pairing_bytes(len(qf), len(sf)),
                 f"{len(qf):,} feature poses of the query x {len(sf):,} of the segment",
                 remedy="give a shorter query")
    # the most gain over pairs in order: a longest-common-subsequence table, one row per query
    # pose (each row needs the one before it: the one sequential step, over a few dozen poses;
    # each row's gains are made with it, so that only the table grows with both lengths)
    best = np.zeros((len(qf) + 1, len(sf) + 1))
    for i in range(1, len(qf) + 1):
        pose = q[qf[i - 1]]
        shared = np.count_nonzero((pose[None] == s[sf]) & (pose[None] != 0), axis=1)
        near = 1.0 - np.abs(qf[i - 1] / (n - 1) - sf / (L - 1)) / POSE_WINDOW
        gain = np.where((shared > 0) & (near > 0), shared * near, -np.inf)
        best[i, 1:] = np.maximum.accumulate(np.maximum(best[i - 1, 1:], best[i - 1, :-1] + gain))
    pairs = []
    i, j = len(qf), len(sf)
    while i > 0 and j > 0:
        if best[i, j] == best[i - 1, j]:
            i -= 1
        elif best[i, j] == best[i, j - 1]:
            j -= 1
        else:
            pairs.append((qf[i - 1], sf[j - 1]))
            i, j = i - 1, j - 1
    return np.array(pairs[::-1], dtype=np.int64).reshape(-1, 2)


def monotone_time_curve(knots: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Section 4.2.1's Bezier time curve: at query frames ``frames (T,)``, the segment frame
    ``(T,)`` through ``knots (P, 2)`` of (query frame, segment frame), both strictly increasing.

    Between two knots the curve is a cubic Bezier whose four control values are the two
    knots' segment frames and, a third of the way in from each, the knot's plus (minus) a
    third of its tangent times the step. Tangents are the harmonic mean of the slopes either
    side (Fritsch and Butland), within 1.5 times the smaller: the control values then never
    decrease, and a Bezier curve whose control values do not decrease does not either (its
    derivative is a Bezier curve of their differences), so the map is monotone, with C1 joins.
    """
    knots = np.asarray(knots, dtype=np.float64)
    x, y = knots[:, 0], knots[:, 1]
    if len(x) < 2 or np.any(np.diff(x) <= 0) or np.any(np.diff(y) <= 0):
        raise ValueError("the time curve needs two or more knots increasing in both frames")
    step = np.diff(x)
    slope = np.diff(y) / step
    tangent = np.empty(len(x))
    tangent[[0, -1]] = slope[[0, -1]]
    a, b = slope[:-1], slope[1:]
    tangent[1:-1] = np.minimum(2.0 * a * b / (a + b), 1.5 * np.minimum(a, b))
    frames = np.asarray(frames, dtype=np.float64)
    k = np.clip(np.searchsorted(x, frames, side="right") - 1, 0, len(x) - 2)
    h = step[k]
    u = np.clip((frames - x[k]) / h, 0.0, 1.0)
    b0, b3 = y[k], y[k + 1]
    b1, b2 = b0 + h * tangent[k] / 3.0, b3 - h * tangent[k + 1] / 3.0
    v = 1.0 - u
    return v ** 3 * b0 + 3.0 * v * v * u * b1 + 3.0 * v * u * u * b2 + u ** 3 * b3


def segment_time_map(query: np.ndarray, segment: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(frames (n,), knots (P, 2))``: the segment frame (fractional) each of the query's ``n``
    frames plays, along :func:`monotone_time_curve` through the segments' first frames, their
    :func:`paired_feature_poses` and their last frames (section 4.2.1), and those knots."""
    n, L = len(query), len(segment)
    if n == 1 or L == 1:
        return np.zeros(n), np.zeros((1, 2), dtype=np.int64)
    knots = np.concatenate([[[0, 0]], paired_feature_poses(query, segment), [[n - 1, L - 1]]]).astype(np.int64)
    return monotone_time_curve(knots, np.arange(n)), knots


# Issue 24, item 9: a library clip shorter than the query's window at its smallest scale
# cannot hold it, so a long query would leave out most of a library of short clips (a
# 400-frame walk, bandai1's clips a median 152 frames). Such a query is assembled piecewise,
# each piece assembled on its own (retrieved with what the piece before plays over their overlap
# in mind: window_join_differences), overlapping the next by PIECE_OVERLAP of a piece, and
# joined by slerp over the overlaps along a smoothstep weight (zero speed at both ends of a
# join: no kink where one piece takes over).
#
# How long a piece is (the review of item 9: the plain median clip decided, and three 8-frame
# snippets beside two whole walks cut a 195-frame walk into 33 pieces of 8 frames, none of which
# paired a feature pose): no piece is shorter than SHORTEST_PIECE_S, about a walk's stride
# (bandai1's walks: 0.77-1.88 s, median 1.10), so that each limb's bits change within it and its
# feature poses can pair; clips that cannot hold a piece that long do not count; of the others,
# each counts with its frames (more frames, more windows to choose from), up to the query's (a
# long take, a dance of 1,900 frames, offers a query no more at once than a clip as long as the
# query, and would otherwise outvote a library of shorter clips of the query's action). Pieces
# are as long as the clips holding half of that can hold, and the query stays whole when they
# can hold all of it.
PIECE_OVERLAP = 0.25
SHORTEST_PIECE_S = 1.0


def assembly_pieces(n_frames: int, clip_frames, fps: float, scales=SEGMENT_SCALES) -> list[tuple[int, int]]:
    """The query frames ``[(first, stop), ...]`` assembled each on its own, in order.

    clip_frames  each library clip's length, in frames at the query's rate ``fps``.

    The piece length is a frame-weighted median of the clips' lengths: the longest length that
    clips holding at least half of the library's frames can hold, among the clips at least
    :data:`SHORTEST_PIECE_S` long (every clip where none is), each counting with its frames up to
    the query's. The whole query when that length holds the query's window at the smallest of
    ``scales``; else as few pieces as keep each no longer than it, all of one length (to a frame),
    each sharing :data:`PIECE_OVERLAP` of it (a frame at least) with the next, the first starting
    and the last ending with the query. A piece overlaps only its neighbours."""
    lengths = np.asarray(clip_frames, dtype=np.int64)
    if not len(lengths):
        raise ValueError("give the length of at least one library clip")
    shortest = min(max(int(round(SHORTEST_PIECE_S * fps)), 2), n_frames)
    holding = lengths[lengths >= shortest]
    holding = np.sort(holding if len(holding) else lengths)[::-1]
    frames = np.cumsum(np.minimum(holding, n_frames))
    held = int(holding[np.searchsorted(frames, 0.5 * frames[-1])])
    if int(window_offsets(n_frames, min(scales))[-1]) + 1 <= held:
        return [(0, n_frames)]
    longest = max(held, 2)
    overlap = min(max(int(round(PIECE_OVERLAP * longest)), 1), longest - 1)
    count = int(np.ceil((n_frames - overlap) / (longest - overlap)))
    length = int(np.ceil((n_frames + (count - 1) * overlap) / count))
    firsts = np.rint(np.linspace(0, n_frames - length, count)).astype(int)
    return [(int(first), int(first) + length) for first in firsts]


def piece_weights(pieces: list[tuple[int, int]], n_frames: int) -> np.ndarray:
    """``(K, n_frames)`` each piece's weight at every query frame: 1 on its own, 0 outside it, and
    across an overlap a smoothstep from the piece before to the next, the two summing to 1."""
    weights = np.zeros((len(pieces), n_frames))
    for k, (first, stop) in enumerate(pieces):
        weights[k, first:stop] = 1.0
        if k:
            end = pieces[k - 1][1]
            rising = smoothstep(np.arange(1, end - first + 1) / (end - first + 1))
            weights[k, first:end] = rising
            weights[k - 1, first:end] = 1.0 - rising
    return weights


def joined_pieces(pieces: list[tuple[int, int]], rotations: list[np.ndarray], n_frames: int) -> np.ndarray:
    """``(n_frames, J, 4)``: each piece's local rotations ``(stop - first, J, 4)`` where it is alone, and
    across an overlap the slerp from the piece before to the next along :func:`piece_weights`."""
    weights = piece_weights(pieces, n_frames)
    out = np.empty((n_frames,) + rotations[0].shape[1:])
    for k, ((first, stop), own) in enumerate(zip(pieces, rotations)):
        end = pieces[k - 1][1] if k else first
        out[first:end] = quat.slerp(out[first:end], own[:end - first], weights[k, first:end, None])
        out[end:stop] = own[end - first:]
    return out


@dataclass(frozen=True)
class Piece:
    """A stretch of the query assembled on its own (:func:`assembly_pieces`).

    first, stop  the query frames it covers, ``[first, stop)``.
    match        the library segment retrieved for it (start and length in the clip's own frames).
    time_map     ``(stop - first,)`` the segment frame (at the query's rate, from the segment's first)
                 each of its frames plays (section 4.2.1).
    knots        ``(P, 2)`` (frame from ``first``, segment frame) pairs the time map passes through.
    """

    first: int
    stop: int
    match: Match
    time_map: np.ndarray
    knots: np.ndarray

    def feature_poses(self) -> int:
        """How many feature poses were paired: the knots but the two ends."""
        return max(len(self.knots) - 2, 0)


def poses_at(poses: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """``(T, D)``: ``poses (F, D)`` at fractional frames ``frames (T,)`` (within ``[0, F - 1]``), linearly
    between the two nearest."""
    frames = np.clip(np.asarray(frames, dtype=np.float64), 0, len(poses) - 1)
    below = np.minimum(np.floor(frames).astype(np.int64), max(len(poses) - 2, 0))
    above = np.minimum(below + 1, len(poses) - 1)
    a = (frames - below)[:, None]
    return (1.0 - a) * poses[below] + a * poses[above]


def _sliced(features: Mapping[str, np.ndarray], first: int, stop: int) -> dict[str, np.ndarray]:
    return {k: v[first:stop] for k, v in features.items()}


@dataclass(frozen=True)
class Assembly:
    """A query motion with body parts replaced by retrieved ones (section 4.2).

    motion      the query with the parts replaced: the query's skeleton, frame rate and frames.
    matches     {part: :class:`Match`}: the library segment each part came from (start and
                length in the clip's own frames).
    time_maps   {part: (F,)} the segment frame (at the query's rate, from the segment's first)
                each query frame plays (section 4.2.1).
    knots       {part: (P, 2)} the (query frame, segment frame) pairs the time map passes
                through: the ends and the paired feature poses.
    left_out    {part: (clip, ...)} library clips left out because they hold the query's own
                poses (:func:`is_the_query`): the query would retrieve itself, at cost 0.
    warnings    one per library clip left out because it cannot stand beside the query (its
                bones at another scale, its legs pointing up: core.rig.body_mismatch), saying why;
                one per part (or piece) none of whose feature poses was paired.
    pieces      {part: (:class:`Piece`, ...)}: the query assembled piecewise where it is longer
                than the library's clips (:func:`assembly_pieces`), one piece where it is not.
                ``matches``, ``time_maps`` and ``knots`` are the first piece's.
    """

    motion: Motion
    matches: dict
    time_maps: dict = field(default_factory=dict)
    knots: dict = field(default_factory=dict)
    left_out: dict = field(default_factory=dict)
    warnings: tuple = ()
    pieces: dict = field(default_factory=dict)

    def feature_poses(self, part: str) -> int:
        """How many feature poses of ``part`` were paired: its knots but the segments' two ends
        (one knot, both ends at once, for a one-frame query)."""
        return max(len(self.knots[part]) - 2, 0)


def is_the_query(motion: Motion, query: Motion) -> bool:
    """Whether library clip ``motion`` holds ``query``'s own poses: the same frames, rate,
    rotations and positions (a query kept in its own library)."""
    return (motion.n_frames == query.n_frames and motion.fps == query.fps
            and np.array_equal(motion.rotations, query.rotations) and np.array_equal(motion.positions, query.positions))


def _without_the_query(library: FeatureLibrary, query: Motion, part: str) -> tuple[FeatureLibrary, tuple[str, ...]]:
    """``library`` without its clips that are the query (:func:`is_the_query`), and their names;
    ``ValueError`` when nothing else is left."""
    own = tuple(clip for clip, motion in library.motions.items() if is_the_query(motion, query))
    if not own:
        return library, own
    if len(own) == len(library.motions):
        raise ValueError(f"the library of {part} holds only the query itself ({', '.join(own)}); give other clips "
                         f"to take the {part} from")
    return library.subset([clip for clip in library.motions if clip not in own]), own


def _checked_library(query: Motion, part: str, library, rig: Rig) -> tuple[Mapping[str, Motion] | FeatureLibrary,
                                                                            dict[str, str]]:
    """``library`` without its clips that cannot stand beside the query (core.rig.body_mismatch:
    bones at another scale, legs pointing up), and why each was left out ({clip: reason}): a
    folder may hold a clip in another unit, which would be retrieved at the wrong size. A clip on
    another skeleton, an empty library or one left empty is refused (``ValueError``)."""
    motions = library.motions if isinstance(library, FeatureLibrary) else library
    if isinstance(library, FeatureLibrary) and not motions:
        raise ValueError(f"the library of {part} holds features only; build it with FeatureLibrary.build(clips, fps) "
                         f"so that it holds the clips too")
    if not motions:
        raise ValueError(f"the library of {part} is empty; give at least one clip")
    for clip, motion in motions.items():
        why = skeleton_mismatch(motion.skeleton, query.skeleton)
        if why:
            raise ValueError(f"library clip {clip!r} (for {part}) is on another skeleton than the query ({why}); "
                             f"give clips of the query's skeleton")
    left_out = {clip: why for clip, motion in motions.items()
                if (why := body_mismatch(motion, query, rig, f"library clip {clip!r}", "the query"))}
    if not left_out:
        return library, left_out
    if len(left_out) == len(motions):
        raise ValueError(f"no clip of the library of {part} can stand beside the query: "
                         + "; ".join(left_out.values()))
    if not isinstance(library, FeatureLibrary):
        return {c: m for c, m in library.items() if c not in left_out}, left_out
    return library.subset([c for c in library.motions if c not in left_out]), left_out


def assemble(query: Motion, parts: Mapping[str, Mapping[str, Motion] | FeatureLibrary], *,
             thresholds: Thresholds = Thresholds(), scales=SEGMENT_SCALES, rig: Rig | None = None,
             contacts: ContactOptions | None = ContactOptions(), progress: Progress | None = None) -> Assembly:
    """``query`` with each body part of ``parts`` taken from the library given for it (section 4.2).

    parts   {part (a key of :data:`PARTS`): library}: clips ``{name: Motion}`` of the query's
            skeleton (any frame rate: resampled to the query's), or a :class:`FeatureLibrary`
            built from them at the query's rate. Parts may not overlap.

    Per part: the library segment most like the query in that part's features (section 4.1;
    its length the query's times one of ``scales``); its feature poses paired with the
    query's and every frame mapped along a monotone Bezier time curve through them (4.2.1);
    the part's joints' local rotations sampled along it by slerp and put on the query's
    skeleton (the query's bone lengths; the pelvis stays the query's); the juncture joints
    standardised per Euler axis to the query's mean and standard deviation (4.2.2, eq. (1)).
    Where a leg is replaced, the feet-planted contact stage (core.contacts) holds the feet
    that leg's source has down: a foot the assembly slides is held where it touches down, one
    it leaves where its source's own steps take it is left as assembled. Legs left as the
    query's are the query's, bit for bit (they hang from the pelvis, which is the query's).
    ``contacts=None`` leaves the contact stage out (for comparison). A library clip that is the
    query itself (:func:`is_the_query`) is left out (``Assembly.left_out`` names it): it would be
    retrieved at cost 0 and the query written back out. So is a library clip whose bones are at
    another scale or whose legs point up (core.rig.body_mismatch; ``Assembly.warnings`` says why);
    a query whose legs point up is refused.

    ``progress`` (:mod:`core.progress`): each part an equal share, the first half of it its library's
    features (once per library), the second its pieces retrieved; 1 once assembled.
    """
    if not parts:
        raise ValueError(f"give at least one body part to replace, one of {', '.join(PARTS)}")
    for part in parts:
        part_feature_names(part)
    rig = find_rig(query) if rig is None else rig
    check_legs_hang(query, rig, clip="the query")
    checked: dict[int, tuple] = {}  # per library given (several parts may share one): the checked library
    warnings = []
    for part, given in parts.items():
        if id(given) not in checked:
            checked[id(given)] = _checked_library(query, part, given, rig)
            sharing = [p for p, other in parts.items() if other is given]
            warnings += [f"{why}; left out of the library of {', '.join(sharing)}"
                         for why in checked[id(given)][1].values()]
    parts = {part: checked[id(given)][0] for part, given in parts.items()}
    skeleton = query.skeleton
    masks = {part: part_joints(skeleton, rig, part) for part in parts}
    names = list(parts)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = masks[a] & masks[b]
            if both.any():
                raise ValueError(f"the parts {a} and {b} overlap (both replace {skeleton.names[np.argmax(both)]}); "
                                 f"give one of them")
    frame = anatomical_frame(query, rig)  # (eq. (1)'s axes)
    query_features = relational_features(query, rig, thresholds)
    query_measures, query_poses = continuous_features(query, rig, thresholds)
    libraries: dict[int, FeatureLibrary] = {}  # one feature library per library given (several parts may share it)
    clips: dict[tuple[int, str], Motion] = {}
    rotations = query.rotations.copy()
    n = query.n_frames
    all_pieces, leg_sources, left_out = {}, {}, {}
    for index, (part, given) in enumerate(parts.items()):
        share = index / len(parts), (index + 0.5) / len(parts), (index + 1) / len(parts)
        library = libraries.get(id(given))
        if library is None:
            # (the library's clips are on the query's skeleton: the query's joint roles are theirs)
            library = libraries[id(given)] = _feature_library(given, query.fps, thresholds, rig,
                                                              part_of(progress, share[0], share[1]))
        library, own = _without_the_query(library, query, part)
        if own:
            left_out[part] = own
        if library.thresholds != thresholds:
            raise ValueError(f"the feature library of {part} was built with other thresholds than the ones given; "
                             f"build it with these")
        mask = masks[part]
        layout = assembly_pieces(n, [len(next(iter(f.values()))) for f in library.features.values()], query.fps,
                                 scales)
        weights = piece_weights(layout, n)
        pieces, piece_rotations = [], []
        joined = None  # the poses the piece before plays over its overlap with the next
        for k, (first, stop) in enumerate(layout):
            features = _sliced(query_features, first, stop)
            continuous = _sliced(query_measures, first, stop), _sliced(query_poses, first, stop)
            match = _matches_in_library_frames(features, library, [part], scales, continuous, joined)[part]
            clip = clips.get((id(library), match.clip))
            if clip is None:
                own_clip = library.motions[match.clip]
                clip = own_clip if own_clip.fps == query.fps else own_clip.resampled(query.fps)
                clips[(id(library), match.clip)] = clip
            frames = slice(match.start, match.start + match.length)
            segment = clip[frames]
            times, knots = segment_time_map(part_relational_features(features, part),
                                            part_relational_features(library.features[match.clip], part)[frames])
            sampled, sampled_positions = sample(segment.rotations, segment.positions, times)
            own_rotations = query.rotations[first:stop].copy()
            own_rotations[:, mask] = sampled[:, mask]
            for j in juncture_joints(skeleton, mask):  # section 4.2.2, eq. (1), over the piece
                angles = standardized_angles(juncture_angles(sampled[:, j], frame),
                                             juncture_angles(query.rotations[first:stop, j], frame))
                own_rotations[:, j] = juncture_rotations(angles, frame)
            piece_rotations.append(own_rotations)
            pieces.append(Piece(first, stop, _in_own_frames(match, library), times, knots))
            report(part_of(progress, share[1], share[2]), (k + 1) / len(layout))
            if k + 1 < len(layout) and library.poses:
                poses = library.part_frames(match.clip, part).poses
                joined = (poses_at(poses, match.start + times[layout[k + 1][0] - first:])
                          - poses[frames].mean(axis=0))
            if stop - first > 1 and pieces[-1].feature_poses() == 0:
                within = f" (query frames {first}-{stop - 1})" if len(layout) > 1 else ""
                warnings.append(f"no feature pose of the {part}{within} was paired with {match.clip!r}: its segment "
                                f"plays at an even speed, and it was chosen by its measures and pose alone (check it, "
                                f"or give clips of the query's action)")
            # the frames this piece is played at, its ends held outside it (where its weight is 0)
            held = np.clip(np.arange(n) - first, 0, stop - first - 1)
            for side, leg in (("L", rig.left_leg), ("R", rig.right_leg)):
                if mask[leg.hip]:
                    leg_sources.setdefault(side, []).append(
                        (clip, match.start + times[held],
                         Motion(clip.skeleton, sampled[held], sampled_positions[held], query.fps), weights[k]))
        rotations[:, mask] = joined_pieces(layout, piece_rotations, n)[:, mask]
        all_pieces[part] = tuple(pieces)
    # (made again by Motion, the query's untouched joints would change in their last bits)
    replaced = np.any([masks[part] for part in parts], axis=0)
    motion = query.with_joint_rotations(replaced, rotations[:, replaced])
    if leg_sources and contacts is not None:
        motion = held_assembled_feet(motion, query, leg_sources, rig, options=contacts)
    firsts = {part: pieces[0] for part, pieces in all_pieces.items()}
    report(progress, 1.0)
    return Assembly(motion, {p: f.match for p, f in firsts.items()}, {p: f.time_map for p, f in firsts.items()},
                    {p: f.knots for p, f in firsts.items()}, left_out, tuple(warnings), all_pieces)


def held_assembled_feet(motion: Motion, query: Motion, leg_sources: Mapping[str, list], rig: Rig, *,
                        options: ContactOptions = ContactOptions()) -> Motion:
    """The contact stage (core.contacts.hold_feet) over an assembled ``motion``, for its replaced legs.

    leg_sources  {side ("L", "R"): [(the whole library clip at the query's rate, the clip frame
                 (fractional) each output frame plays, the clip sampled there, its weight (F,)
                 at each output frame), ...]}: one source per piece (:func:`piece_weights`), their
                 weights summing to 1 at each frame; a side not given keeps the query's leg.

    Each foot is held as its leg's source has it down (core.analysis.foot_contacts of the
    source clip, at the nearest frame; of the source weighing most there), on the query's
    floors, with the sources' own steps and swings, weighted, as what the stage compares
    against (core.contacts.SourceFeet): a foot the query's pelvis carries along while the
    source had it planted is held where it touches down; a foot its source moves, or a leg
    left as the query's, is left as it is.
    """
    up = np.asarray(query.skeleton.up, dtype=np.float64)
    leg = body_unit(query.skeleton, rig)
    query_floors = clip_floors([query.global_positions()], [query], rig, up)[0]
    contacts = foot_contacts(query, rig, up=up)
    # hold_feet keeps a gap's first and last frames as they are (there synthesis has its
    # cores), and eases a hold in over hold_fade_s from there; here every frame may be held,
    # so the stage runs over the motion with its first and last frames repeated as often as
    # that takes, and those copies are dropped again after it
    pad = 1 + int(np.ceil(options.hold_fade_s * query.fps))
    padded = _padded(query, pad)
    heading = np.unwrap(body_yaw(padded, rig, up)[2])
    query_feet = _own_feet([padded], np.ones((1, padded.n_frames)), query_floors[None], heading, rig, up, leg, options)
    per_side = []
    for k, side in enumerate("LR"):
        if side not in leg_sources:
            per_side.append(query_feet)
            continue
        sources = leg_sources[side]
        weights = np.stack([w for *_, w in sources])
        down, floors = [], []
        for clip, played, _, _ in sources:
            clip_joints = clip.global_positions()
            own_contacts = foot_contacts(clip, rig, up=up, positions=clip_joints)
            down.append(own_contacts[np.clip(np.rint(played).astype(np.int64), 0, clip.n_frames - 1), k])
            floors.append(clip_floors([clip_joints], [clip], rig, up)[0])
        contacts[:, k] = np.stack(down)[np.argmax(weights, axis=0), np.arange(motion.n_frames)]
        padded_weights = np.concatenate([weights[:, :1].repeat(pad, 1), weights, weights[:, -1:].repeat(pad, 1)], 1)
        per_side.append(_own_feet([_padded(sampled, pad) for _, _, sampled, _ in sources], padded_weights,
                                  np.stack(floors), heading, rig, up, leg, options))
    # each foot's figures from its own leg's sources; the floors the output stands on are the query's
    own = SourceFeet(*(np.stack([getattr(per_side[k], name)[:, k] for k in range(2)], axis=1)
                       for name in ("steps", "turns", "clearance", "reach")), query_floors)
    contacts = np.concatenate([contacts[:1].repeat(pad, 0), contacts, contacts[-1:].repeat(pad, 0)])
    held = hold_feet(_padded(motion, pad), 0, contacts, [(0, motion.n_frames + 2 * pad - 1)], rig, up=up, leg=leg,
                     floors=query_floors, sources=own, options=options)
    return held[pad:-pad]


def _padded(motion: Motion, pad: int = 1) -> Motion:
    """``motion`` with its first and last frames repeated ``pad`` times."""
    frames = np.concatenate([np.zeros(pad, dtype=np.int64), np.arange(motion.n_frames), np.full(pad, motion.n_frames - 1)])
    return motion[frames]


def _own_feet(sources: list[Motion], weights: np.ndarray, floors: np.ndarray, heading: np.ndarray, rig: Rig,
              up: np.ndarray, leg: float, options: ContactOptions) -> SourceFeet:
    """core.contacts.SourceFeet of source motions played at the output's frames with ``weights (K, F)``
    and floors ``(K, 2, 2)``, their steps turned from their bodies' headings to the output's ``heading``."""
    legs = rig.left_leg, rig.right_leg
    has_toes = all(leg.toe is not None for leg in legs)
    wanted = [legs[0].ankle, legs[1].ankle] + ([legs[0].toe, legs[1].toe] if has_toes else [])
    kinematics = [forward_kinematics(s.rotations, s.positions, s.skeleton.parents, wanted) for s in sources]
    gpos = np.stack([g for g, _ in kinematics])
    grot = np.stack([r for _, r in kinematics])
    yaw = np.stack([np.unwrap(body_yaw(s, rig, up)[2]) for s in sources])
    return source_feet(gpos[:, :, :2], grot[:, :, :2], gpos[:, :, 2:] if has_toes else None, weights, floors, yaw,
                       heading, up=up, leg=leg, options=options)
