"""Reaching a target by blending examples of one action (Juang et al. 2009, section 3.1).

Time alignment (section 3.1, after Kovar and Gleicher 2004): every example is
placed to start where and as the reference starts (pelvis over the same ground
point, facing the same way about the up axis), then registered to the
reference by dynamic time warping over the summed squared distances between
corresponding joints, and resampled onto the reference's frames.

Conventions: a warping path is an ``(L, 2)`` int array of ``(reference frame,
example frame)`` pairs from ``(0, 0)`` to ``(n - 1, m - 1)``, each step moving
one frame on either side or both (monotone, no frame skipped). Lengths are in
the motions' own unit; the up axis is found from the pose (core.rig.detect_up).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quat
from .analysis import horizontal, pelvis_facing, yaw_of
from .motion import Motion, forward_kinematics, skeleton_mismatch
from .rig import Rig, detect_up, find_rig

# The three moves of a warping path, as (reference step, example step): the
# order is the tie-break (a diagonal step first keeps paths short).
_MOVES = np.array([[1, 1], [1, 0], [0, 1]])


# --------------------------------------------------------------------------
# Section 3.1: the distance grid and its minimum-cost path


def frame_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The distance grid of section 3.1 (Fig. 2): ``(n, J, 3), (m, J, 3) -> (n, m)``,
    cell ``(i, k)`` the sum over joints of the squared distance between ``a[i]`` and ``b[k]``.

    Expanded as |a|^2 + |b|^2 - 2 a.b so that memory stays (n, m), not (n, m, J, 3);
    rounding can make an exact match slightly negative, hence the clip at zero.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 3 or b.ndim != 3 or a.shape[1:] != b.shape[1:] or a.shape[2] != 3:
        raise ValueError(f"need joint positions (n, J, 3) and (m, J, 3) of the same joints, got {a.shape} and {b.shape}")
    fa, fb = a.reshape(len(a), -1), b.reshape(len(b), -1)
    return np.maximum((fa * fa).sum(1)[:, None] + (fb * fb).sum(1)[None, :] - 2.0 * fa @ fb.T, 0.0)


def accumulated_cost(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dynamic programming over the grid: ``(n, m) -> (total (n, m), move (n, m) int)``.

    ``total[i, k]`` is the least summed cost of a monotone path from (0, 0) to
    (i, k); ``move[i, k]`` indexes ``_MOVES``: the step that arrived there
    (-1 at the start). Every cell of one anti-diagonal ``i + k = d`` depends only
    on the two diagonals before it, so each diagonal is one array step; the
    loop is over the n + m - 1 diagonals, never over cells.
    """
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2 or 0 in cost.shape:
        raise ValueError(f"need a non-empty (n, m) cost grid, got shape {cost.shape}")
    n, m = cost.shape
    # Padded by one row and column of +inf so the first row and column need no special case.
    total = np.full((n + 1, m + 1), np.inf)
    total[0, 0] = 0.0
    move = np.full((n, m), -1, dtype=np.int64)
    for d in range(n + m - 1):
        i = np.arange(max(0, d - m + 1), min(d, n - 1) + 1)
        k = d - i
        before = np.stack([total[i, k], total[i, k + 1], total[i + 1, k]])  # diagonal, reference, example step
        best = np.argmin(before, axis=0)
        total[i + 1, k + 1] = cost[i, k] + before[best, np.arange(len(i))]
        move[i, k] = best
    move[0, 0] = -1
    return total[1:, 1:], move


def warping_path(move: np.ndarray) -> np.ndarray:
    """The minimum-cost path ``(L, 2)`` from (0, 0) to the last cell, read back from ``move``.

    Reading back is sequential (each step depends on the one after it); the
    loop runs at most n + m - 1 times.
    """
    n, m = move.shape
    cell = np.array([n - 1, m - 1])
    path = [cell]
    while move[cell[0], cell[1]] >= 0:
        cell = cell - _MOVES[move[cell[0], cell[1]]]
        path.append(cell)
    return np.array(path[::-1])


def dynamic_time_warping(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Section 3.1: the monotone path ``(L, 2)`` of least summed joint distance between joint
    positions ``a (n, J, 3)`` and ``b (m, J, 3)``."""
    _, move = accumulated_cost(frame_distances(a, b))
    return warping_path(move)


def example_times(path: np.ndarray, n_reference: int) -> np.ndarray:
    """``(n_reference,)`` fractional example frame matched to each reference frame.

    Where the path stays on one reference frame over several example frames,
    the reference frame takes their mean; the result is non-decreasing because
    the path is monotone.
    """
    ref, ex = path[:, 0], path[:, 1]
    counts = np.bincount(ref, minlength=n_reference)
    if (counts == 0).any():
        raise ValueError("the warping path does not visit every reference frame")
    return np.bincount(ref, weights=ex, minlength=n_reference) / counts


def sampled_at(motion: Motion, times: np.ndarray, fps: float) -> Motion:
    """``motion`` sampled at fractional frames ``times (T,)``: rotations by slerp, positions linearly."""
    times = np.clip(np.asarray(times, dtype=np.float64), 0, motion.n_frames - 1)
    if motion.n_frames < 2:
        return Motion(motion.skeleton, motion.rotations[np.zeros(len(times), int)],
                      motion.positions[np.zeros(len(times), int)], fps)
    i0 = np.minimum(np.floor(times).astype(int), motion.n_frames - 2)
    a = (times - i0)[:, None]
    rot = quat.unroll(motion.rotations, axis=0)
    rot = quat.slerp(rot[i0], rot[i0 + 1], np.broadcast_to(a, (len(times), len(motion.skeleton))))
    pos = motion.positions[i0] + a[:, :, None] * (motion.positions[i0 + 1] - motion.positions[i0])
    return Motion(motion.skeleton, rot, pos, fps)


# --------------------------------------------------------------------------
# Section 3.1: "aligned together in time and starting orientation"


def start_placement(motion: Motion, rig: Rig, up: np.ndarray) -> tuple[float, np.ndarray]:
    """The heading (radians about ``up``) and the ground point ``(3,)`` of the pelvis at frame 0."""
    pos = motion[:1].global_positions()[0]
    facing = pelvis_facing(pos[rig.leg("L").hip], pos[rig.leg("R").hip], up)
    return float(yaw_of(facing, up)), horizontal(pos[rig.pelvis], up)


def placed_like(motion: Motion, rig: Rig, up: np.ndarray, heading: float, ground: np.ndarray) -> Motion:
    """``motion`` turned about ``up`` and moved on the ground so that its first frame's pelvis
    stands on ``ground (3,)`` facing ``heading`` (:func:`start_placement` of the reference).
    Nothing moves vertically."""
    if not np.allclose(detect_up(motion, rig), up):
        raise ValueError("the examples do not share an up axis; convert them to one before aligning")
    own_heading, own_ground = start_placement(motion, rig, up)
    turn = quat.from_axis_angle(up, heading - own_heading)
    return motion.transformed(turn, ground - quat.mul_vec(turn, own_ground))


@dataclass(frozen=True)
class Registration:
    """Examples of one action on the reference's time base (section 3.1).

    motions  the examples placed like the reference and resampled onto its
             frames: every motion has the reference's frame count and fps.
    paths    per example, its warping path ``(L, 2)`` (reference, example frame)
             over the example at the reference's rate.
    times    per example, ``(F,)`` the example frame (at the reference's rate)
             played at each reference frame.
    """

    motions: tuple[Motion, ...]
    paths: tuple[np.ndarray, ...]
    times: tuple[np.ndarray, ...]


def register_examples(examples: list[Motion], reference: int = 0) -> Registration:
    """Section 3.1: align every example to ``examples[reference]`` in start placement and time.

    Examples must share one skeleton (the same joint names in the same order);
    any up axis (shared), rate and place will do, in one unit. Each is first resampled to the
    reference's rate, placed like it, then warped onto its frames.
    """
    if not examples:
        raise ValueError("need at least one example to register")
    ref = examples[reference]
    for i, ex in enumerate(examples):
        problem = skeleton_mismatch(ex.skeleton, ref.skeleton)
        if problem:
            raise ValueError(f"example {i} does not share the reference's skeleton: {problem}")
        if not np.isclose(ex.skeleton.unit, ref.skeleton.unit):
            raise ValueError(f"example {i} is in {ex.skeleton.unit} m per unit, the reference in "
                             f"{ref.skeleton.unit}; scale the examples to one unit first")
    ref_rig = find_rig(ref)
    up = detect_up(ref, ref_rig)
    heading, ground = start_placement(ref, ref_rig, up)
    ref_pos = ref.global_positions()
    motions, paths, times = [], [], []
    for ex in examples:
        placed = placed_like(ex.resampled(ref.fps), find_rig(ex), up, heading, ground)
        path = dynamic_time_warping(ref_pos, placed.global_positions())
        t = example_times(path, ref.n_frames)
        motions.append(sampled_at(placed, t, ref.fps))
        paths.append(path)
        times.append(t)
    return Registration(tuple(motions), tuple(paths), tuple(times))


# --------------------------------------------------------------------------
# Section 3.1: the parameter space of hit points (Fig. 3a)

FEATURES = ("highest", "farthest")


def hit_frame(effector: np.ndarray, pelvis: np.ndarray, up: np.ndarray, feature: str = "highest") -> np.ndarray:
    """Section 3.1's feature: the frame ``(...)`` of the hit point along the last frame axis.

    effector, pelvis  ``(..., F, 3)`` world positions.
    feature  ``"highest"``: the effector furthest along ``up`` (a raise, a reach up);
             ``"farthest"``: the effector furthest from the pelvis (the paper's
             "farthest stretched position" of a punch).
    """
    if feature == "highest":
        return np.argmax(effector @ up, axis=-1)
    if feature == "farthest":
        return np.argmax(np.linalg.norm(effector - pelvis, axis=-1), axis=-1)
    raise ValueError(f"feature must be one of {FEATURES}, got {feature!r}")


def blended_rotations(rotations: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Section 3.1's slerp blend of ``K`` aligned examples: ``(K, ..., 4), (S, K) -> (S, ..., 4)``.

    Several rotations are blended by successive slerps: after the examples
    before ``k`` hold the summed weight ``W``, example ``k`` enters with
    ``t = w_k / (W + w_k)``, so each example's share ends as its weight (exact
    for two, the usual approximation for more). Weights of each row sum to 1.
    Only the examples a row weights enter it (in example order): a blend of 3
    among 40 costs 3 slerps, not 40 (the 2000 blends of the parameter space in
    a tenth of the time). The loop is over the most examples one row mixes;
    samples, frames and joints are one array.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[1] != len(rotations):
        raise ValueError(f"need weights (S, {len(rotations)}), one per example, got shape {weights.shape}")
    if (weights < 0).any() or not np.allclose(weights.sum(axis=1), 1.0):
        raise ValueError("blend weights must be non-negative and sum to 1 in every row")
    extra = (1,) * (rotations.ndim - 2)
    # per row, the weighted examples first, in example order (a stable sort of "weight is zero")
    order = np.argsort(weights == 0, axis=1, kind="stable")[:, :max(1, int((weights > 0).sum(axis=1).max()))]
    share = np.take_along_axis(weights, order, axis=1)
    blend = rotations[order[:, 0]]
    held = share[:, 0].copy()
    for i in range(1, order.shape[1]):
        held = held + share[:, i]
        t = np.divide(share[:, i], held, out=np.zeros_like(held), where=held > 0)
        blend = quat.slerp(blend, rotations[order[:, i]], t.reshape((-1,) + extra))
    return blend


def blended_motion(motions: tuple[Motion, ...] | list[Motion], weights: np.ndarray) -> Motion:
    """One blend ``weights (K,)`` of registered examples (same frames): rotations by slerp
    (:func:`blended_rotations`), joint translations as the weighted mean."""
    weights = np.asarray(weights, dtype=np.float64)
    rot = blended_rotations(np.stack([m.rotations for m in motions]), weights[None])[0]
    pos = np.einsum("k,kfjc->fjc", weights, np.stack([m.positions for m in motions]))
    return Motion(motions[0].skeleton, rot, pos, motions[0].fps)


def blend_weights(n_examples: int, n_blends: int, *, per_blend: int = 3, seed: int = 0,
                  include_examples: bool = True) -> np.ndarray:
    """``(S, K)`` weights of the dense sampling of section 3.1.

    Each blend mixes ``per_blend`` examples drawn at random (without
    repetition) with weights uniform over their simplex (Dirichlet(1, ..., 1)),
    seeded. Blends of a few examples spread over the space's whole extent,
    where blends of all forty would crowd at the mean. With
    ``include_examples`` the examples themselves come first (one-hot rows).
    """
    if n_examples < 1 or n_blends < 0:
        raise ValueError(f"need at least one example and a non-negative blend count, got {n_examples}, {n_blends}")
    rng = np.random.default_rng(seed)
    per_blend = min(per_blend, n_examples)
    chosen = np.argsort(rng.random((n_blends, n_examples)), axis=1)[:, :per_blend]
    weights = np.zeros((n_blends, n_examples))
    np.put_along_axis(weights, chosen, rng.dirichlet(np.ones(per_blend), size=n_blends), axis=1)
    return np.concatenate([np.eye(n_examples), weights]) if include_examples else weights


def _ancestors_of(parents: np.ndarray, joints: list[int]) -> np.ndarray:
    """Sorted indices of ``joints`` and all their ancestors (parents come first)."""
    keep = set()
    for j in joints:
        while j >= 0 and j not in keep:
            keep.add(j)
            j = int(parents[j])
    return np.array(sorted(keep))


@dataclass(frozen=True)
class ParameterSpace:
    """Hit points of blends of registered examples (section 3.1, Fig. 3a).

    weights     (S, K) each blend's weight per example.
    hit_points  (S, 3) where the effector is at the feature, world coordinates
                of the reference's file.
    hit_frames  (S,) at which reference frame.
    effector    the effector's rig role; feature "highest" or "farthest".
    """

    weights: np.ndarray
    hit_points: np.ndarray
    hit_frames: np.ndarray
    effector: str
    feature: str

    def nearest(self, target) -> int:
        """Index of the blend whose hit point is nearest ``target (3,)``."""
        target = np.asarray(target, dtype=np.float64)
        if target.shape != (3,):
            raise ValueError(f"a target is one point (x, y, z), got shape {target.shape}")
        return int(np.argmin(((self.hit_points - target) ** 2).sum(axis=1)))


def hit_points(registration: Registration, weights: np.ndarray, *, effector: str = "right.wrist",
               feature: str = "highest") -> tuple[np.ndarray, np.ndarray]:
    """Hit points ``(S, 3)`` and frames ``(S,)`` of the blends ``weights (S, K)``.

    Only the effector's and the pelvis's chains are blended and posed: the
    rest of the body cannot move them.
    """
    motions = registration.motions
    rig = find_rig(motions[0])
    joint = rig.roles.get(effector)
    if not isinstance(joint, (int, np.integer)):
        raise ValueError(f"effector must be a single-joint rig role present in this skeleton "
                         f"(e.g. right.wrist), got {effector!r}")
    up = detect_up(motions[0], rig)
    skel = motions[0].skeleton
    chain = _ancestors_of(skel.parents, [joint, rig.pelvis])
    remap = np.full(len(skel), -1)
    remap[chain] = np.arange(len(chain))
    parents = np.where(skel.parents[chain] >= 0, remap[skel.parents[chain]], -1)
    weights = np.asarray(weights, dtype=np.float64)
    rot = blended_rotations(np.stack([m.rotations[:, chain] for m in motions]), weights)
    pos = np.einsum("sk,kfjc->sfjc", weights, np.stack([m.positions[:, chain] for m in motions]))
    s, f = rot.shape[:2]
    world, _ = forward_kinematics(rot.reshape(s * f, len(chain), 4), pos.reshape(s * f, len(chain), 3), parents,
                                  [remap[joint], remap[rig.pelvis]], rotations_out=False)
    world = world.reshape(s, f, 2, 3)
    frames = hit_frame(world[:, :, 0], world[:, :, 1], up, feature)
    return world[np.arange(s), frames, 0], frames


def parameter_space(registration: Registration, *, effector: str = "right.wrist", feature: str = "highest",
                    n_blends: int = 2000, per_blend: int = 3, seed: int = 0,
                    include_examples: bool = True) -> ParameterSpace:
    """Section 3.1: sample blends of the registered examples densely
    (:func:`blend_weights`) and record each one's hit point."""
    weights = blend_weights(len(registration.motions), n_blends, per_blend=per_blend, seed=seed,
                            include_examples=include_examples)
    points, frames = hit_points(registration, weights, effector=effector, feature=feature)
    return ParameterSpace(weights, points, frames, effector, feature)


def blend_for_target(registration: Registration, space: ParameterSpace, target) -> tuple[Motion, np.ndarray, float]:
    """Section 3.1: the sampled blend whose hit point is nearest ``target (3,)``, as
    ``(motion, weights (K,), miss)``: the blended motion on the reference's frames, its
    weights per example, and how far its hit point lies from the target (motion units).

    Not yet refined onto the target: ``miss`` says how far the sampling left it.
    """
    index = space.nearest(target)
    weights = space.weights[index]
    miss = float(np.linalg.norm(space.hit_points[index] - np.asarray(target, dtype=np.float64)))
    return blended_motion(registration.motions, weights), weights, miss
