"""Partial-figure retrieval by Boolean relational features (Juang et al. 2009, section 4.1).

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

Every threshold is in body units (the humerus length for the arms, the leg length
for the legs) or an angle, and every direction comes from the body itself (its
facing from the hips or shoulders, the skeleton's up axis), so joint names,
units, the up axis, placement and frame rate do not change the features.

Body parts (:data:`PARTS`): ``left.arm``, ``right.arm``, ``left.leg``,
``right.leg``, ``upper`` (both arms) and ``lower`` (both legs). Feature keys are
``"{side}.{feature}"`` such as ``"right.elbow_bent"``.

Conventions as in :mod:`core.motion`; frames are indexed from 0 and a match's
``start`` is the first library frame of the matched window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from . import quat
from .analysis import horizontal, pelvis_facing
from .motion import Motion
from .rig import Rig, find_rig, leg_length

__all__ = ["PARTS", "Thresholds", "arm_features", "leg_features", "ARM_FEATURES", "LEG_FEATURES", "Match", "relational_features", "part_features",
           "part_feature_names", "humerus_length", "flexion", "in_front", "above", "speed_in_body_units",
           "window_mismatches", "best_window", "FeatureLibrary", "retrieve_parts", "retrieve_part"]

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
    cost   share of the part's feature bits that differ over the window, 0..1.
    """

    clip: str
    start: int
    cost: float


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


def part_features(features: Mapping[str, np.ndarray], part: str) -> np.ndarray:
    """``(F, K)`` bool: the columns of :func:`relational_features` that belong to ``part``."""
    return np.stack([features[k] for k in part_feature_names(part)], axis=1)


# --------------------------------------------------------------------------
# section 4.1: retrieval. The paper does not say how feature sequences are
# compared; here the query's (n, K) bits slide over each library clip and the
# cost of a window is the share of bits that differ (a normalised Hamming
# distance). A window of the query's own length keeps the query's timing, which
# assembly (4.2.1) then refines on feature poses; it is exact, cheap (one
# whole-array comparison per clip), and ties break to the earliest window.


def window_mismatches(query: np.ndarray, library: np.ndarray) -> np.ndarray:
    """``(m - n + 1,)`` int: differing bits between ``query (n, K)`` and each window of ``library (m, K)``.

    Empty when the library clip is shorter than the query.
    """
    query, library = np.asarray(query, bool), np.asarray(library, bool)
    n, m = len(query), len(library)
    if query.ndim != 2 or library.ndim != 2 or query.shape[1] != library.shape[1]:
        raise ValueError(f"feature arrays must be (frames, features) with the same features; got {query.shape} "
                         f"and {library.shape}")
    if n == 0:
        raise ValueError("the query has no frames")
    if m < n:
        return np.zeros(0, dtype=np.int64)
    # every window compared at once: (m - n + 1, K, n) booleans, a view until the
    # comparison, a few megabytes for clips of a few thousand frames
    windows = np.lib.stride_tricks.sliding_window_view(library, n, axis=0)  # (m - n + 1, K, n)
    return np.count_nonzero(windows != query.T[None], axis=(1, 2))


def best_window(query: np.ndarray, library: Mapping[str, np.ndarray]) -> Match:
    """The library window of least :func:`window_mismatches` over all clips (the first clip, earliest
    start on ties); ``ValueError`` when no clip is as long as the query."""
    best: Match | None = None
    bits = np.asarray(query).size
    for clip, features in library.items():
        costs = window_mismatches(query, features)
        if len(costs) == 0:
            continue
        start = int(np.argmin(costs))
        cost = float(costs[start]) / bits
        if best is None or cost < best.cost:
            best = Match(clip, start, cost)
    if best is None:
        raise ValueError(f"every library clip is shorter than the query ({len(query)} frames); give a shorter "
                         f"query or longer library clips")
    return best


@dataclass(frozen=True, eq=False)
class FeatureLibrary:
    """The features of every pose of a library, computed once (section 4.1: the paper precomputes them).

    fps         frame rate the features were computed at (clips at other rates are resampled).
    features    {clip: {feature key: (F,) bool}}.
    clip_fps    {clip: the clip's own frame rate}, to give matches back in its own frames.
    """

    fps: float
    features: dict
    clip_fps: dict

    @classmethod
    def build(cls, library: Mapping[str, Motion], fps: float) -> "FeatureLibrary":
        """Features of every clip of ``library`` at frame rate ``fps``."""
        if not library:
            raise ValueError("the library is empty; give at least one clip")
        features = {clip: relational_features(m if m.fps == fps else m.resampled(fps)) for clip, m in library.items()}
        return cls(fps, features, {clip: m.fps for clip, m in library.items()})


def retrieve_parts(query: Motion, library: Mapping[str, Motion] | FeatureLibrary, parts) -> dict[str, Match]:
    """Per body part of ``parts``, the library segment most similar to ``query`` (section 4.1).

    ``library`` is clips or a :class:`FeatureLibrary` built at the query's frame
    rate. Each match's ``start`` is in the library clip's own frames.
    """
    for part in parts:
        part_feature_names(part)  # an unknown part fails before any features are computed
    if not isinstance(library, FeatureLibrary):
        library = FeatureLibrary.build(library, query.fps)
    elif library.fps != query.fps:
        raise ValueError(f"the feature library was built at {library.fps:g} fps and the query is at "
                         f"{query.fps:g} fps; build it at the query's rate")
    query_features = relational_features(query)
    matches = {}
    for part in parts:
        clips = {clip: part_features(f, part) for clip, f in library.features.items()}
        match = best_window(part_features(query_features, part), clips)
        start = int(round(match.start * library.clip_fps[match.clip] / library.fps))
        matches[part] = Match(match.clip, start, match.cost)
    return matches


def retrieve_part(query: Motion, library: Mapping[str, Motion] | FeatureLibrary, part: str) -> Match:
    """The library segment most similar to ``query`` in body part ``part`` (see :func:`retrieve_parts`)."""
    return retrieve_parts(query, library, [part])[part]
