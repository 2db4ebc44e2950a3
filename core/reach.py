"""Reaching a target by blending examples of one action (Juang et al. 2009, sections 3 and 5.2).

Time alignment (section 3.1, after Kovar and Gleicher 2004): every example is
placed to start where and as the reference starts (pelvis over the same ground
point, facing the same way about the up axis), then registered to the
reference by dynamic time warping over the summed squared distances between
corresponding joints, and resampled onto the reference's frames.

The parameter space (section 3.1): hit points of densely sampled slerp blends.
A target is inside the space when it lies in the convex hull of those hit
points (non-negative least squares, Lawson and Hanson); the blend for a target
is refined onto it by Gauss-Newton on the weights, kept on the simplex. Where
that misses, section 3.2's partial blending: the body blended with P_H's
weights, the adjustment joints from P_V's blend, turned hierarchically onto the
target (a punch or raise), or the kicking leg spliced and its hip turned (a
kick). :class:`ReachSpace` is the product; :func:`cross_validation` is section
5.2's experiment.

Conventions: a warping path is an ``(L, 2)`` int array of ``(reference frame,
example frame)`` pairs from ``(0, 0)`` to ``(n - 1, m - 1)``, each step moving
one frame on either side or both (monotone, no frame skipped). Lengths are in
the motions' own unit; the up axis is found from the pose (core.rig.detect_up).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from . import quat
from .analysis import foot_contacts, horizontal, pelvis_facing, yaw_of
from .budget import check_budget
from .contacts import hold_feet
from .mkm import clip_floors
from .motion import Motion, forward_kinematics, resampled_frames, skeleton_mismatch
from .options import ContactOptions
from .progress import Progress, part_of, report
from .rig import Rig, body_height, body_mismatch, check_legs_hang, detect_up, find_rig, leg_length

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


# The registration's grids per cell at their peak: the distances, their temporaries, the
# accumulated cost and the moves (three doubles; measured with tracemalloc: 24.1 bytes).
DTW_BYTES_PER_CELL = 24


# The joint ranges (issue 24 item 6, :func:`joint_ranges`) per example, frame and joint at their
# peak: the examples' rotations stacked, the measured copy, the forward kinematics over every
# example's frames, the signs made to agree and the rotation vectors (tracemalloc: 199.5 bytes).
RANGES_BYTES_PER_EXAMPLE_FRAME_JOINT = 200
# The contact stage's look at the examples' feet (:meth:`ReachSpace.feet_held`, on the first
# query): their global positions and the contacts found on them (tracemalloc: 72.0 bytes).
FEET_BYTES_PER_EXAMPLE_FRAME_JOINT = 72


def reach_bytes(reference_frames: int, example_frames: list[int], joints: int) -> int:
    """Bytes a :class:`ReachSpace` holds at its peak, built (:meth:`ReachSpace.build`) and queried,
    for a reference of ``reference_frames``, examples of ``example_frames`` at the reference's
    rate (the reference among them) on ``joints`` joints: the examples registered (three copies:
    the motions, their stacks and the effector's chains, 7 doubles a joint and frame), and the
    largest of what comes and goes on top of them: the distance grid of the longest example
    (section 3.1, ``DTW_BYTES_PER_CELL`` a cell), a block of hit points, the joint ranges and the
    examples' feet (``RANGES_...`` and ``FEET_BYTES_PER_EXAMPLE_FRAME_JOINT``)."""
    example_frame_joints = len(example_frames) * reference_frames * joints
    held = 3 * 56 * example_frame_joints
    grid = DTW_BYTES_PER_CELL * reference_frames * max(example_frames, default=0)
    hits = max(HIT_BLOCK_BYTES, HIT_BYTES_PER_BLEND_FRAME_JOINT * reference_frames * joints)
    ranges = RANGES_BYTES_PER_EXAMPLE_FRAME_JOINT * example_frame_joints
    feet = FEET_BYTES_PER_EXAMPLE_FRAME_JOINT * example_frame_joints
    return held + max(grid, hits, ranges, feet)


def check_reach_size(reference_frames: int, example_frames: list[int], joints: int) -> None:
    """Refuse (core.budget) a reach space the memory budget cannot hold (:func:`reach_bytes`)."""
    longest = max(example_frames, default=0)
    check_budget("reach", reach_bytes(reference_frames, example_frames, joints),
                 f"{reference_frames:,} frames of the reference x {longest:,} frames of the longest example, "
                 f"{len(example_frames)} examples of {joints} joints",
                 remedy="give shorter examples (the action alone)")


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


def register_examples(examples: list[Motion], reference: int = 0, rig: Rig | None = None,
                      names: Sequence[str] | None = None, progress: Progress | None = None) -> Registration:
    """Section 3.1: align every example to ``examples[reference]`` in start placement and time.

    Examples must share one skeleton (the same joint names in the same order) at one scale
    (core.rig.body_mismatch: bones at most twice or half as long as the reference's, legs that do
    not point up); any up axis (shared), rate and place will do, in one unit. Each is first
    resampled to the reference's rate, placed like it, then warped onto its frames. ``rig``: the
    skeleton's joint roles (found from the reference's names when ``None``), one for all: they
    share the skeleton. ``names``: the examples' names, for messages (``example 0``, ... when None).
    ``progress`` (:mod:`core.progress`) hears the share of the examples registered.
    """
    if not examples:
        raise ValueError("need at least one example to register")
    names = [f"example {i}" for i in range(len(examples))] if names is None else [f"example {n!r}" for n in names]
    ref = examples[reference]
    for i, ex in enumerate(examples):
        problem = skeleton_mismatch(ex.skeleton, ref.skeleton)
        if problem:
            raise ValueError(f"{names[i]} does not share the reference's skeleton: {problem}")
        if not np.isclose(ex.skeleton.unit, ref.skeleton.unit):
            raise ValueError(f"{names[i]} is in {ex.skeleton.unit} m per unit, the reference in "
                             f"{ref.skeleton.unit}; scale the examples to one unit first")
    ref_rig = find_rig(ref, clip=names[reference]) if rig is None else rig
    check_legs_hang(ref, ref_rig, clip=names[reference])
    for i, ex in enumerate(examples):
        # (blended together, an example of another size or with its legs up would bend every blend)
        why = "" if i == reference else body_mismatch(ex, ref, ref_rig, names[i], f"the reference {names[reference]}")
        if why:
            raise ValueError(why)
    up = detect_up(ref, ref_rig)
    heading, ground = start_placement(ref, ref_rig, up)
    ref_pos = ref.global_positions()
    motions, paths, times = [], [], []
    for ex in examples:
        placed = placed_like(ex.resampled(ref.fps), ref_rig if rig is not None else find_rig(ex), up, heading, ground)
        path = dynamic_time_warping(ref_pos, placed.global_positions())
        t = example_times(path, ref.n_frames)
        motions.append(sampled_at(placed, t, ref.fps))
        paths.append(path)
        times.append(t)
        report(progress, len(motions) / len(examples))
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


def blended_rotations(rotations: np.ndarray, weights: np.ndarray, *, mixes: int | None = None) -> np.ndarray:
    """Section 3.1's slerp blend of ``K`` aligned examples: ``(K, ..., 4), (S, K) -> (S, ..., 4)``.

    Several rotations are blended by successive slerps: after the examples
    before ``k`` hold the summed weight ``W``, example ``k`` enters with
    ``t = w_k / (W + w_k)``, so each example's share ends as its weight (exact
    for two, the usual approximation for more). Weights of each row sum to 1.
    Only the examples a row weights enter it (in example order): a blend of 3
    among 40 costs 3 slerps, not 40 (the 2000 blends of the parameter space in
    a tenth of the time). The loop is over the most examples one row mixes;
    samples, frames and joints are one array. ``mixes``: slerp that many examples into every row
    (at least as many as any row weights; those beyond a row's own enter at weight zero), so that
    rows blended in several calls come out as blended together (the default: as many as the
    row that mixes most).
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[1] != len(rotations):
        raise ValueError(f"need weights (S, {len(rotations)}), one per example, got shape {weights.shape}")
    # (np.allclose(sums, 1.0)'s test, without its dispatch: the refinement blends a few rows, often)
    if (weights < 0).any() or not (np.abs(weights.sum(axis=1) - 1.0) <= 1e-5 + 1e-8).all():
        raise ValueError("blend weights must be non-negative and sum to 1 in every row")
    order, share = _weighted_first(weights, mixes)
    # (as component planes (4, S, rest): the weights then broadcast over rows of quaternions, not
    # over each one's four components; quat.slerp_planes is slerp's arithmetic, the same bits)
    used, order = np.unique(order, return_inverse=True)
    order = order.reshape(share.shape)
    planes = np.moveaxis(rotations[used], -1, 0).reshape(4, len(used), -1)
    blend = _slerped_in_turn(lambda i: planes[:, order[:, i]], share, lambda t: t[:, None])
    return np.moveaxis(blend, 0, -1).reshape((len(weights),) + rotations.shape[1:])


def _weighted_first(weights: np.ndarray, mixes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``weights (S, K)``, the examples it weights first, in example order (a stable
    sort of "weight is zero"), as far as the row that mixes most (or ``mixes``): ``(order, share) (S, n)``."""
    order = np.argsort(weights == 0, axis=1, kind="stable")[:, :mixes or most_mixed(weights)]
    return order, np.take_along_axis(weights, order, axis=1)


def most_mixed(weights: np.ndarray) -> int:
    """The most examples a row of ``weights (S, K)`` mixes (at least 1)."""
    return max(1, int((weights > 0).sum(axis=1).max(initial=0)))


def _slerped_in_turn(example, share: np.ndarray, spread) -> np.ndarray:
    """The successive slerps of :func:`blended_rotations`: ``example(i)`` the component planes of
    each row's ``i``-th example, ``share (S, n)`` their weights, ``spread(t)`` a row's ``t (S,)``
    broadcast over its planes."""
    blend = example(0)
    held = share[:, 0].copy()
    for i in range(1, share.shape[1]):
        held = held + share[:, i]
        t = np.divide(share[:, i], held, out=np.zeros_like(held), where=held > 0)
        blend = quat.slerp_planes(blend, example(i), spread(t))
    return blend


def blended_rows(rotations: np.ndarray, frames: np.ndarray, weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """:func:`blended_rotations` of single frames: ``(K, F, ..., 4)``, frames ``(N,)``, weights
    ``(S, K)``, rows ``(N,)`` (which weights each frame takes) -> ``(N, ..., 4)``, the same bits
    as frame ``frames[i]`` of ``blended_rotations(rotations, weights)[rows[i]]``: the same
    slerps in the same order, over frames of several blends and stretches in one pass."""
    order, share = _weighted_first(weights)
    # (as component planes, as blended_rotations)
    planes = np.moveaxis(rotations, -1, 0)
    rest = (1,) * (planes.ndim - 3)  # the joints' axes of a frame's planes
    blend = _slerped_in_turn(lambda i: planes[:, order[rows, i], frames], share,
                             lambda t: t[rows].reshape((-1,) + rest))
    return np.moveaxis(blend, 0, -1)


def blended_motion(motions: tuple[Motion, ...] | list[Motion], weights: np.ndarray) -> Motion:
    """One blend ``weights (K,)`` of registered examples (same frames): rotations by slerp
    (:func:`blended_rotations`), joint translations as the weighted mean."""
    weights = np.asarray(weights, dtype=np.float64)
    rot = blended_rotations(np.stack([m.rotations for m in motions]), weights[None])[0]
    pos = np.einsum("k,kfjc->fjc", weights, np.stack([m.positions for m in motions]))
    return Motion(motions[0].skeleton, rot, pos, motions[0].fps)


def dense_sampling_weights(n_examples: int, n_blends: int, *, per_blend: int = 3, seed: int = 0,
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
    """Hit points ``(S, 3)`` and frames ``(S,)`` of the blends ``weights (S, K)``, over whole frames.

    Only the effector's and the pelvis's chains are blended and posed
    (:class:`EffectorChains`): the rest of the body cannot move them.
    """
    motions = registration.motions
    rig = find_rig(motions[0])
    joint = rig.roles.get(effector)
    if not isinstance(joint, (int, np.integer)):
        raise ValueError(f"effector must be a single-joint rig role present in this skeleton "
                         f"(e.g. right.wrist), got {effector!r}")
    return EffectorChains.of(motions, rig, detect_up(motions[0], rig), int(joint), feature).hits(weights)


def parameter_space(registration: Registration, *, effector: str = "right.wrist", feature: str = "highest",
                    n_blends: int = 2000, per_blend: int = 3, seed: int = 0,
                    include_examples: bool = True) -> ParameterSpace:
    """Section 3.1: sample blends of the registered examples densely
    (:func:`dense_sampling_weights`) and record each one's hit point."""
    weights = dense_sampling_weights(len(registration.motions), n_blends, per_blend=per_blend, seed=seed,
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


# --------------------------------------------------------------------------
# Inside the space: the convex hull of the sampled hit points


def nonnegative_least_squares(a: np.ndarray, b: np.ndarray, *, max_iterations: int | None = None) -> np.ndarray:
    """``x (n,) >= 0`` minimising ``|a x - b|`` for ``a (m, n)``, ``b (m,)``: Lawson and Hanson's
    active-set method (Solving Least Squares Problems, 1974, ch. 23), numpy only.

    Variables enter the passive (free) set one at a time, the one whose gradient
    is the most positive first; a least-squares step that would make a passive
    variable negative is cut short where the first one reaches zero, and that
    one leaves. With ``m`` rows at most about ``m`` variables stay passive, so a
    few hundred columns cost a handful of small solves.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.shape != (a.shape[0],):
        raise ValueError(f"need a (m, n) matrix and a (m,) vector, got {a.shape} and {b.shape}")
    m, n = a.shape
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    tolerance = 10 * np.finfo(float).eps * np.abs(a).sum(axis=0).max(initial=0.0) * max(m, n)
    gradient = a.T @ b
    refused = np.zeros(n, dtype=bool)  # entered and at once pushed out again: not tried again until x moves
    for _ in range(max_iterations or 3 * n):
        free = np.where(passive | refused, -np.inf, gradient)
        if passive.all() or free.max() <= tolerance:
            break
        entering = int(np.argmax(free))
        passive[entering] = True
        trial = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
        if trial[np.flatnonzero(passive) == entering][0] <= tolerance:
            # rounding: its gradient says it should grow, the solve says it cannot (degenerate columns)
            passive[entering] = False
            refused[entering] = True
            continue
        refused[:] = False
        while True:
            step = np.zeros(n)
            step[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (step[passive] > tolerance).all():
                break
            # the step leaves the feasible set: go as far as the first variable that reaches zero
            blocking = passive & (step <= tolerance)
            alpha = np.min(x[blocking] / np.maximum(x[blocking] - step[blocking], 1e-300))
            x = x + alpha * (step - x)
            passive &= x > tolerance
            x[~passive] = 0.0
            if not passive.any():
                step = x
                break
        x = step
        gradient = a.T @ (b - a @ x)
    return np.maximum(x, 0.0)


# How much more the "weights sum to 1" row counts than a coordinate, and a coordinate that must
# be matched than one only to be approached: large enough that the solution keeps the first
# within 1e-6 of exact, small enough that the least-squares steps stay well conditioned.
_EXACT = 1e4
_FIRM = 1e2


def hull_combination(points: np.ndarray, target, *, metric: np.ndarray | None = None,
                     scale: float = 1.0) -> tuple[np.ndarray, float]:
    """The convex combination ``lambda (S,)`` of ``points (S, 3)`` nearest ``target (3,)``, and its
    distance to the target: zero (to rounding) when the target lies inside their convex hull.

    Non-negative least squares (:func:`nonnegative_least_squares`) on
    ``[G P^T; c 1^T] lambda = [G t; c]``, ``c`` large, so that ``lambda >= 0``
    and (nearly exactly) sums to 1, then normalised. ``metric`` (3, 3),
    ``G``, weighs directions: the identity (default) is the Euclidean nearest
    point; the queries of section 3.2 weigh height or the ground plane firmly.
    ``scale`` is a length of the motion's size (coordinates are divided by it).
    """
    points = np.asarray(points, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    metric = np.eye(3) if metric is None else np.asarray(metric, dtype=np.float64)
    centre = points.mean(axis=0)
    a = np.vstack([metric @ ((points - centre) / scale).T, np.full((1, len(points)), _EXACT)])
    b = np.concatenate([metric @ ((target - centre) / scale), [_EXACT]])
    lam = nonnegative_least_squares(a, b)
    lam = lam / lam.sum()
    return lam, float(np.linalg.norm(lam @ points - target))


# --------------------------------------------------------------------------
# Section 3.1: the hit point as a function of the blend weights, and its refinement


def peak_between_frames(value: np.ndarray, frames: np.ndarray, *, first_frame: int = 0) -> np.ndarray:
    """``(S,)`` fractional frame where the Catmull-Rom spline through ``value (S, F)`` peaks
    within a frame of the best whole frame ``frames (S,)``. ``value``'s columns may be a
    stretch of a longer clip starting at its frame ``first_frame``: ``frames`` count from the
    stretch's start, the result from the clip's (the same bits as over the whole clip).

    The spline has a continuous slope, so its peak moves continuously as the values change,
    also when the best whole frame changes (a parabola through three frames jumps there).
    On each of the two segments next to the best frame, the cubic's slope is a quadratic:
    its roots in the segment and the segment's ends are the candidates.
    """
    s, f = value.shape
    rows = np.arange(s)[:, None]
    first = np.clip(frames[:, None] + np.array([-1, 0]), 0, f - 2)  # (S, 2) segment starts
    p0, p1, p2, p3 = (value[rows, np.clip(first + d, 0, f - 1)] for d in (-1, 0, 1, 2))
    m1, m2 = 0.5 * (p2 - p0), 0.5 * (p3 - p1)
    a, b, c = 6 * p1 + 3 * m1 - 6 * p2 + 3 * m2, -6 * p1 - 4 * m1 + 6 * p2 - 2 * m2, m1
    disc = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
    safe = np.where(np.abs(a) > 1e-12, a, 1.0)
    roots = np.stack([(-b + disc) / (2 * safe), (-b - disc) / (2 * safe),
                      np.where(np.abs(a) > 1e-12, 0.0, -c / np.where(np.abs(b) > 1e-12, b, 1.0))], axis=-1)
    u = np.clip(np.concatenate([np.zeros((s, 2, 1)), np.ones((s, 2, 1)), roots], axis=-1), 0.0, 1.0)  # (S, 2, 5)
    spline = ((2 * u**3 - 3 * u**2 + 1) * p1[..., None] + (u**3 - 2 * u**2 + u) * m1[..., None]
              + (-2 * u**3 + 3 * u**2) * p2[..., None] + (u**3 - u**2) * m2[..., None])
    best = np.argmax(spline.reshape(s, -1), axis=1)
    return (first[:, :, None] + first_frame + u).reshape(s, -1)[np.arange(s), best]


@dataclass(frozen=True, eq=False)
class EffectorChains:
    """The joints that place the effector and the pelvis, stacked over the registered examples:
    enough to find the hit point of any blend without posing the whole body.

    rotations (K, F, C, 4), positions (K, F, C, 3)  the examples' local transforms of the ``C``
    joints (ancestors first); parents (C,) within them; effector, pelvis: their columns.
    start   (3,) or None: where a blend's first-frame pelvis is put on the ground (the
            reference's), the hit moving with it (:meth:`ReachSpace.placed`); None: left as blended.
    """

    rotations: np.ndarray
    positions: np.ndarray
    parents: np.ndarray
    effector: int
    pelvis: int
    up: np.ndarray
    feature: str
    start: np.ndarray | None = None

    @classmethod
    def of(cls, motions, rig: Rig, up: np.ndarray, effector: int, feature: str,
           start: np.ndarray | None = None) -> "EffectorChains":
        skel = motions[0].skeleton
        chain = _ancestors_of(skel.parents, [effector, rig.pelvis])
        remap = np.full(len(skel), -1)
        remap[chain] = np.arange(len(chain))
        parents = np.where(skel.parents[chain] >= 0, remap[skel.parents[chain]], -1)
        return cls(np.stack([m.rotations[:, chain] for m in motions]), np.stack([m.positions[:, chain] for m in motions]),
                   parents, int(remap[effector]), int(remap[rig.pelvis]), up, feature, start)

    def hits(self, weights: np.ndarray, *, between_frames: bool = False,
             near: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Hit points ``(S, 3)`` and frames ``(S,)`` of the blends ``weights (S, K)``.

        ``between_frames``: the feature's peak between frames (:func:`peak_between_frames`),
        the chain posed there as :func:`sampled_at` would pose it; frames are then fractional.
        Over whole frames the hit point jumps when the best frame changes with the weights;
        between frames it moves continuously, which the refinement needs.
        ``near``: a whole frame; only the frames within ``NEAR_FRAMES`` of it are blended and
        searched (and the first, where the start placement is measured): for the blends of a
        finite-difference derivative, whose peaks lie within a frame of their base's (10 of the
        raises' 50 frames: 40 % of the time). Their hits then follow the peak near ``near`` (the
        derivative of the hit there), not a distant frame that might overtake it; over those
        frames the hits are the same bits as over the whole clip.
        """
        weights = np.asarray(weights, dtype=np.float64)
        n_frames = self.rotations.shape[1]
        if near is None:
            lo, rotations, positions = 0, self.rotations, self.positions
        else:
            lo = max(0, near - NEAR_FRAMES)
            taken = np.r_[0, lo:min(n_frames, near + NEAR_FRAMES + 1)]
            rotations, positions = self.rotations[:, taken], self.positions[:, taken]
        rows = hit_rows_per_block(*rotations.shape[1:3])
        if len(weights) > rows:
            # blends in blocks, so that a long reference costs time, not memory; every block
            # mixes as many examples as the most mixed blend (the same bits as one pass)
            mixes = most_mixed(weights)
            found = [self._hits(rotations, positions, weights[i:i + rows], lo, near is not None, between_frames,
                                mixes) for i in range(0, len(weights), rows)]
            return np.concatenate([p for p, _ in found]), np.concatenate([t for _, t in found])
        return self._hits(rotations, positions, weights, lo, near is not None, between_frames, None)

    def _hits(self, rotations: np.ndarray, positions: np.ndarray, weights: np.ndarray, lo: int, near: bool,
              between_frames: bool, mixes: int | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`hits` of the blends ``weights`` in one pass over the chains' frames ``rotations``,
        ``positions`` (the clip's from ``lo``)."""
        rot = blended_rotations(rotations, weights, mixes=mixes)
        pos = np.einsum("sk,kfjc->sfjc", weights, positions)
        s, f, c = rot.shape[:3]
        world, _ = forward_kinematics(rot.reshape(s * f, c, 4), pos.reshape(s * f, c, 3), self.parents,
                                      [self.effector, self.pelvis], rotations_out=False)
        return self._found(rot, pos, world.reshape(s, f, 2, 3), lo, near, between_frames)

    def hits_ahead(self, weights: np.ndarray, probes: np.ndarray, around: int,
                   spread: int) -> tuple[np.ndarray, np.ndarray, Callable[[int], np.ndarray | None]]:
        """``hits(weights, between_frames=True)`` and, blended and posed in the same pass, the
        blends ``probes (P, K)`` over the frames within ``NEAR_FRAMES + spread`` of ``around``:
        returns the points, the times, and ``near(n)``, the probes' points as ``hits(probes,
        between_frames=True, near=n)[0]`` gives them (the same bits: the same frames, sliced out
        of a wider stretch), or None when ``n``'s frames lie outside the stretch.

        For the refinement's start, whose first derivative is taken around its hit, which lies
        near a sampled blend's: one pass instead of two when it does (measured on the raises'
        cross-validation: 45 of 55 starts within a frame of the nearest sampled blend's hit).
        Tried and dropped: each step's trials with the next step's derivative blends, around the
        least damped trial. Only a third were used (the refinement often stops after the step, or
        takes another trial), and a pass costs mostly its arithmetic (the slerps' sines), not
        its numpy calls, so the unused ones cost what the used ones saved.
        Every row must mix the same number of examples (a row blended beside one mixing more
        gets zero-weight slerps, whose last bits differ); otherwise two passes, as ``hits``."""
        weights = np.asarray(weights, dtype=np.float64)
        probes = np.asarray(probes, dtype=np.float64)
        n_frames = self.rotations.shape[1]
        counts = np.r_[(weights > 0).sum(axis=1), (probes > 0).sum(axis=1)]
        if (counts != counts[0]).any():
            points, times = self.hits(weights, between_frames=True)
            return points, times, lambda n: None
        lo, hi = max(0, around - NEAR_FRAMES - spread), min(n_frames, around + NEAR_FRAMES + spread + 1)
        taken = np.r_[0, lo:hi]
        s, p, w, c = len(weights), len(probes), len(taken), self.rotations.shape[2]
        frames = np.r_[np.tile(np.arange(n_frames), s), np.tile(taken, p)]
        rows = np.r_[np.repeat(np.arange(s), n_frames), s + np.repeat(np.arange(p), w)]
        rot = blended_rows(self.rotations, frames, np.concatenate([weights, probes]), rows)
        pos = np.concatenate([np.einsum("sk,kfjc->sfjc", weights, self.positions).reshape(s * n_frames, c, 3),
                              np.einsum("sk,kfjc->sfjc", probes, self.positions[:, taken]).reshape(p * w, c, 3)])
        world, _ = forward_kinematics(rot, pos, self.parents, [self.effector, self.pelvis], rotations_out=False)
        cut = s * n_frames
        points, times = self._found(rot[:cut].reshape(s, n_frames, c, 4), pos[:cut].reshape(s, n_frames, c, 3),
                                    world[:cut].reshape(s, n_frames, 2, 3), 0, False, True)
        rot, pos, world = rot[cut:].reshape(p, w, c, 4), pos[cut:].reshape(p, w, c, 3), world[cut:].reshape(p, w, 2, 3)

        def near(n: int) -> np.ndarray | None:
            first, last = max(0, n - NEAR_FRAMES), min(n_frames, n + NEAR_FRAMES + 1)
            if first < lo or last > hi:
                return None
            columns = np.r_[0, 1 + first - lo:1 + last - lo]
            return self._found(rot[:, columns], pos[:, columns], world[:, columns], first, True, True)[0]

        return points, times, near

    def _found(self, rot: np.ndarray, pos: np.ndarray, world: np.ndarray, lo: int, near: bool,
               between_frames: bool) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`hits` from the blended chains ``rot (S, F, C, 4)``, ``pos (S, F, C, 3)`` and the
        effector's and pelvis's world positions ``world (S, F, 2, 3)``, whose frames start at the
        clip's frame ``lo`` (``near``: after the first frame, taken for the start placement)."""
        s, f, c = rot.shape[:3]
        rows = np.arange(s)
        shift = 0.0 if self.start is None else horizontal(self.start - world[:, 0, 1], self.up)
        if near:  # (the first frame was taken for the start placement only)
            rot, pos, world, f = rot[:, 1:], pos[:, 1:], world[:, 1:], f - 1
        frames = hit_frame(world[:, :, 0], world[:, :, 1], self.up, self.feature)
        if not between_frames or f < 3:
            return world[rows, frames, 0] + shift, frames + lo
        if self.feature == "highest":
            value = world[:, :, 0] @ self.up
        else:
            value = np.linalg.norm(world[:, :, 0] - world[:, :, 1], axis=-1)
        times = peak_between_frames(value, frames, first_frame=lo)
        start = np.minimum(np.floor(times).astype(int), lo + f - 2)
        share = times - start
        start = start - lo
        posed_rot = quat.slerp(rot[rows, start], rot[rows, start + 1], np.broadcast_to(share[:, None], (s, c)))
        posed_pos = pos[rows, start] + share[:, None, None] * (pos[rows, start + 1] - pos[rows, start])
        point, _ = forward_kinematics(posed_rot, posed_pos, self.parents, [self.effector], rotations_out=False)
        return point[:, 0] + shift, times


# What hit points hold at their peak per blend, frame and chain joint: the blended rotations
# and translations, the slerps' temporaries, the forward kinematics (measured with tracemalloc
# on the raises: 182 bytes), and the most bytes one block of blends may take.
HIT_BYTES_PER_BLEND_FRAME_JOINT = 192
HIT_BLOCK_BYTES = 256 << 20


def hit_rows_per_block(frames: int, joints: int) -> int:
    """How many blends :meth:`EffectorChains.hits` poses at once over ``frames`` of ``joints``
    chain joints (at least one): a block holds HIT_BLOCK_BYTES at most, or one blend."""
    return max(1, HIT_BLOCK_BYTES // (HIT_BYTES_PER_BLEND_FRAME_JOINT * max(frames * joints, 1)))


# How many frames either side of the base blend's hit the finite-difference blends of the
# refinement are evaluated over: their best whole frame lies within a frame of the base's,
# and the spline around it reads two more either side (:func:`peak_between_frames`).
NEAR_FRAMES = 4
# How far from the nearest sampled blend's hit, in frames, the refinement's start is expected to
# hit: its first finite-difference blends are blended with it over NEAR_FRAMES + this around that
# frame (:meth:`EffectorChains.hits_ahead`), and again, alone, when its hit lies farther.
AHEAD_FRAMES = 1


# How many sampled blends the start of a refinement interpolates (:func:`neighbour_blend`), and the
# share below which an example is dropped from it (subtracted from every share, so an example
# enters and leaves at weight zero, continuously): 8 of the 2000 blends (3 of 40 examples each) give
# a start of about 5-15 examples, so the refinement's finite differences stay affordable. Measured:
# 6 and 0.05 (fewer examples) query 20 % faster on the cross-validation, but the start then moves
# too steeply with the target (the frame-rate and moved-target tests fail).
NEIGHBOURS = 8
WEIGHT_FLOOR = 0.03


def neighbour_blend(points: np.ndarray, weights: np.ndarray, target: np.ndarray, *, k: int = NEIGHBOURS,
                    floor: float = WEIGHT_FLOOR, scale: float = 1.0) -> np.ndarray:
    """``(K,)`` the weights of the sampled blends ``weights (S, K)`` whose hit points ``points (S, 3)``
    lie nearest ``target (3,)``, interpolated by k nearest neighbours (Kovar and Gleicher 2004, after
    Buehler et al.): neighbour ``i`` of the ``k`` nearest counts ``1/d_i - 1/d_(k+1)``, ``d_(k+1)``
    the distance of the next nearest, normalised.

    Every neighbour's share falls to zero as it recedes to the next one's distance, so the result
    moves continuously with the target and with the hit points (the blend nearest, or a hull
    vertex combination, jumps from one blend to another). ``scale``: a length of the motion's size
    (a target on a hit point takes that blend, to a billionth of it).
    """
    k = min(k, len(points) - 1)
    if k < 1:
        return weights[0].copy()
    distance = np.sqrt(((points - target) ** 2).sum(axis=1)) + 1e-9 * scale
    nearest = np.argpartition(distance, k)[:k + 1]
    nearest = nearest[np.argsort(distance[nearest], kind="stable")]
    share = 1.0 / distance[nearest[:k]] - 1.0 / distance[nearest[k]]
    if not share.sum() > 0.0:
        # (every neighbour as near as the next: blends that all hit one point, any of which will do)
        share = np.ones(k)
    blend = np.maximum((share / share.sum()) @ weights[nearest[:k]] - floor, 0.0)
    if not blend.sum() > 0.0:
        blend = weights[nearest[0]].copy()
    return blend / blend.sum()


def refined_weights(chains: EffectorChains, prior: np.ndarray, target: np.ndarray, *, scale: float,
                    iterations: int = 8, settled: float = 1e-3, tolerance: float = 0.0,
                    hit: tuple[np.ndarray, float] | None = None,
                    around: int | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Issue item 2, "refined to hit the target": the blend nearest ``prior (K,)`` whose hit point
    is ``target (3,)``, by Gauss-Newton on the weights; returns ``(weights, hit point (3,), hit
    frame)``, the frame fractional (:meth:`EffectorChains.hits` between frames). ``hit``: the
    prior's hit point and frame when the caller has them already; else ``around``: a whole frame
    near which the prior likely hits (its first derivative's blends are then posed with it, in one
    pass, :meth:`EffectorChains.hits_ahead`; the same bits).

    Three coordinates of a hit, many weights: the blends hitting a target form a manifold, and
    which one a refinement ends on must not depend on its path (the number of steps, the
    rounding), or a target moved by a hair gives another blend. So the refinement solves a
    problem with one answer: over the examples the prior mixes, the weights
    ``w = prior * exp(z)`` (normalised) with the least ``|z|`` that hit the target. Positive
    weights on the prior's examples for every ``z``; an example the prior barely weighs can change
    little (its share scales with its prior weight), so the answer moves continuously as the
    prior does. Each step is Gauss-Newton for the nearest point of that manifold, damped
    (Levenberg-Marquardt): ``dz`` minimises ``|r - J dz|^2 + lambda |z + dz|^2 + mu |dz|^2``
    (``J = dh/dz`` by finite differences, one batched evaluation; ``lambda`` tiny, a hit within
    about 1e-4 body sizes of a reachable target, the nearest compromise for one the examples
    cannot reach). At its fixed point, ``dz = 0``, ``z = J^T r / lambda``: the least-norm
    condition, whatever ``mu`` and the path were, so the answer is the same for any path that
    gets there. Four ``mu`` at once, each ten times the last (shorter steps turned towards
    steepest descent, for where the hit map folds: a distant frame overtakes the peak); the least
    damped one that lowers ``|r|^2 + lambda |z|^2`` is taken. Stops when a full (least damped)
    step changes no weight by more than ``settled``, or after ``iterations``; stopping one step
    earlier or later then moves the weights by about ``settled``. Also when, still missing by
    more than ``tolerance``, a step gains less than 2 %, or three steps leave it more than twice
    ``tolerance`` away: the target is beyond what these examples reach (partial blending's case),
    not worth the time (measured on the raises' cross-validation: such refinements crept on by
    3-15 % a step and ended beyond ``tolerance``). ``scale``: a length of the motion's size.
    """
    prior = np.asarray(prior, dtype=np.float64)
    support = np.flatnonzero(prior > 0)
    base = prior[support]
    vertices = np.eye(len(prior))[support]
    damping = (1e-4 * scale) ** 2

    def weights_at(z: np.ndarray) -> np.ndarray:  # (n, m) -> (n, K) on the simplex
        share = base * np.exp(z - z.max(axis=-1, keepdims=True))
        full = np.zeros(z.shape[:-1] + (len(prior),))
        full[..., support] = share / share.sum(axis=-1, keepdims=True)
        return full

    z = np.zeros(len(support))
    weights = prior
    probe = 1e-3
    ahead = None  # (the finite-difference blends around the weights, when blended beforehand)
    if hit is None and around is not None and iterations > 0:
        points, times, ahead = chains.hits_ahead(weights[None], weights + probe * (vertices - weights), around,
                                                 AHEAD_FRAMES)
        hit = points[0], times[0]
    elif hit is None:
        points, times = chains.hits(weights[None], between_frames=True)
        hit = points[0], times[0]
    point, peak = hit
    merit = float(((target - point) ** 2).sum())  # (+ damping |z|^2, zero at the prior)
    trust = None
    for step in range(iterations):
        moved = None if ahead is None else ahead(int(round(peak)))
        ahead = None
        if moved is None:
            moved = chains.hits(weights + probe * (vertices - weights), between_frames=True, near=int(round(peak)))[0]
        # d hit / d z_k = w_k d hit / d(towards example k): the finite difference towards its vertex
        jac = (moved - point) / probe * weights[support, None]  # (m, 3)
        gram = jac @ jac.T
        trust = 1e-3 * np.trace(gram) if trust is None else trust
        # (the four damped steps of the docstring, least damped first; trust is its mu)
        trusts = trust * 10.0 ** np.arange(4)
        rhs = jac @ (target - point) - damping * z
        steps = np.stack([np.linalg.solve(gram + (damping + mu) * np.eye(len(z)), rhs) for mu in trusts])
        trial_z = z + steps
        trials = weights_at(trial_z)
        points, times = chains.hits(trials, between_frames=True)
        merits = ((target - points) ** 2).sum(axis=1) + damping * (trial_z**2).sum(axis=1)
        better = np.flatnonzero(merits < merit)
        if not len(better):
            break
        pick = better[0]  # (the least damped step that helps)
        trust = trusts[pick] * (0.01 if pick == 0 else 0.1)
        change = np.abs(trials[pick] - weights).max()
        miss = np.linalg.norm(target - point)
        z, weights, point, peak, merit = trial_z[pick], trials[pick], points[pick], times[pick], merits[pick]
        if pick == 0 and change < settled:  # (a full step that changed little: near the fixed point)
            break
        if np.linalg.norm(target - point) > max(tolerance, 0.98 * miss):  # (creeping, far from the target)
            break
        if step >= 2 and np.linalg.norm(target - point) > 2.0 * tolerance:  # (three steps, still far: the same)
            break
    return weights, point, peak


# --------------------------------------------------------------------------
# Playing a blend on its own timing ("shortened and time-warped", section 3.2)


def blended_timing(times, weights: np.ndarray) -> np.ndarray:
    """``(F,)`` when the blend plays each reference frame, in frames of the blend's own clock:
    the weighted mean of its examples' own frame times along the registration (Kovar and
    Gleicher's registration curves), counted from its first frame; strictly increasing."""
    timing = np.einsum("k,kf->f", np.asarray(weights, dtype=np.float64), np.stack(times))
    timing = timing - timing[0]
    # (a registration may hold one example frame over several reference frames: keep the order strict)
    return timing + 1e-6 * np.arange(len(timing))


def retimed(motion: Motion, timing: np.ndarray, pinned: float) -> tuple[Motion, int]:
    """``motion`` (on the reference's frames) played on ``timing (F,)`` (:func:`blended_timing`),
    one output frame per unit of it, as ``(motion, output frame of the hit)``
    (:func:`retimed_frames`)."""
    frames, out_pinned = retimed_frames(timing, pinned)
    if motion.n_frames < 2:
        return motion, 0
    return sampled_at(motion, frames, motion.fps), out_pinned


def retimed_frames(timing: np.ndarray, pinned: float) -> tuple[np.ndarray, int]:
    """``(frames (T,), output frame of the hit)``: the fractional reference frame each output frame
    of :func:`retimed` plays, the reference's frames played on ``timing (F,)``.

    The (fractional) reference frame ``pinned``, the hit, is sampled exactly by an output
    frame: the clock before it and the clock after it are each scaled linearly (by at most
    half a frame over their length) to put it on a whole frame.
    """
    n = len(timing)
    if n < 2:
        return np.zeros(n), 0
    reference = np.arange(n, dtype=np.float64)
    at, last = float(np.interp(pinned, reference, timing)), float(timing[-1])
    out_pinned = int(round(at))
    if pinned > 0:
        out_pinned = max(out_pinned, 1)
    n_out = max(int(round(last)) + 1, out_pinned + (2 if pinned < n - 1 else 1), 2)
    before = out_pinned / at if at > 0 else 1.0
    after = (n_out - 1 - out_pinned) / (last - at) if last > at else 1.0
    fitted = np.where(timing <= at, timing * before, out_pinned + (timing - at) * after)
    frames = np.interp(np.arange(n_out, dtype=np.float64), fitted, reference)
    frames[out_pinned] = pinned
    return frames, out_pinned


# --------------------------------------------------------------------------
# Section 3.2: runtime motion tuning by partial blending


def adjustment_profile(value: np.ndarray, peak: int, *, hold: float = 0.2) -> np.ndarray:
    """``(F,)`` how much of an adjustment solved at frame ``peak`` applies at each frame.

    value  ``(F,)`` the feature over the frames (the effector's height, or its distance from the
           pelvis). The adjustment holds in full over the frames around ``peak`` where the
           feature stays within ``hold`` of its range below the peak (the hand held up), so that
           no frame of that stretch, adjusted less, rises above the adjusted hit; it rises from 0
           at the first frame and falls to 0 at the last by smoothstep (zero slope at the
           joins), so the adjusted motion starts and ends as the blend does, without a jump.
    """
    n = len(value)
    high = value >= value[peak] - hold * (value.max() - value.min())
    low = np.flatnonzero(~high)
    start = low[low < peak].max() + 1 if (low < peak).any() else 0
    end = low[low > peak].min() - 1 if (low > peak).any() else n - 1
    t = np.arange(n, dtype=np.float64)
    rise = np.clip(t / start, 0.0, 1.0) if start > 0 else np.ones(n)
    fall = np.clip((n - 1 - t) / (n - 1 - end), 0.0, 1.0) if end < n - 1 else np.ones(n)
    u = np.minimum(rise, fall)
    return u * u * (3.0 - 2.0 * u)


# --------------------------------------------------------------------------
# Issue 24 item 6: the turned joints kept to the range the examples show


@dataclass(frozen=True)
class JointRanges:
    """How far each joint turns over the examples: section 3.2's adjustments keep the joints they
    turn within this (:func:`joint_ranges`).

    centre     (J, 4) each joint's mean rotation over every frame of every example.
    low, high  (J, 3) the range of the rotation vector of ``centre^-1 q`` (radians, about the axes
               of the centre's frame) over the examples, widened at each end by its margin.
    margin     (J, 3, 2) the margins (low, high) it was widened by, radians.
    in_world   (J,) whether the joint's rotation is taken in the world (the pelvis and the joints
               above it: placing an example turns those, and every example is placed facing the
               reference's way) rather than against its parent's.
    varied     whether the examples differ at all: one example, or copies of one, is one
               performance, whose range says how it went, not how far its joints may go
               (:class:`ReachSpace` keeps no limits then, and says so).
    """

    centre: np.ndarray
    low: np.ndarray
    high: np.ndarray
    margin: np.ndarray
    in_world: np.ndarray
    varied: bool = True

    def kept(self, joints: np.ndarray, local: np.ndarray, own: np.ndarray,
             parent_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(local (..., n, 4), excess (..., n))``: local rotations ``local`` of ``joints (n,)``
        brought into their ranges, widened to hold ``own (..., n, 4)`` (the rotations before any
        turn: a turn keeps a joint within its range, or no further out than the blend had it), and
        by how much each was outside (radians). ``parent_world (..., n, 4)``: the world rotations
        of their parents, for the joints taken in the world. Clamping each axis is continuous, so
        turns kept on every frame change from frame to frame as smoothly as before."""
        world = self.in_world[joints][:, None]
        centre = self.centre[joints]
        measured, own = (np.where(world, quat.mul(parent_world, q), q) for q in (local, own))
        v = quat.log(quat.mul(quat.inv(centre), measured))
        v_own = quat.log(quat.mul(quat.inv(centre), own))
        inside = np.clip(v, np.minimum(self.low[joints], v_own), np.maximum(self.high[joints], v_own))
        excess = np.linalg.norm(v - inside, axis=-1)
        kept = quat.mul(centre, quat.exp(inside))
        kept = np.where(world, quat.mul(quat.inv(parent_world), kept), kept)
        # (unchanged where nothing was outside: the same bits as without limits)
        return np.where((excess > 0)[..., None], kept, local), excess


# Rotations closer than this (radians, a millionth of a degree's order) are one rotation: far
# above rounding, far below any difference between two performances.
_SAME_ROTATION = 1e-8


def joint_ranges(motions: Sequence[Motion], rig: Rig) -> JointRanges:
    """:class:`JointRanges` of registered examples ``motions`` (one skeleton, the same frames).

    The margin at each end of an axis's range is the gap between the example that goes furthest
    that way and the next one: how far the furthest example took the range beyond all the others,
    a leave-one-out estimate of how far one more example of the action would take it. It follows
    the examples' own spread, in any unit or rig; it is zero for one example (nothing says how the
    action varies) and for copies of one, which are therefore not ``varied``."""
    rotations = np.stack([m.rotations for m in motions])  # (K, F, J, 4)
    K, F, J = rotations.shape[:3]
    skel = motions[0].skeleton
    in_world = np.zeros(J, dtype=bool)
    in_world[_ancestors_of(skel.parents, [rig.pelvis])] = True
    above = np.flatnonzero(in_world)
    _, world = forward_kinematics(rotations.reshape(K * F, J, 4), np.stack([m.positions for m in motions]).reshape(
        K * F, J, 3), skel.parents, list(above))
    measured = rotations.copy()
    measured[:, :, above] = world.reshape(K, F, len(above), 4)
    # each joint's mean rotation, its samples' signs made to agree with the first's
    flat = quat.standardize(measured.reshape(K * F, J, 4))
    flat = np.where((flat * flat[:1]).sum(-1, keepdims=True) < 0, -flat, flat)
    centre = flat.sum(axis=0)
    centre = centre / np.linalg.norm(centre, axis=-1, keepdims=True)
    v = quat.log(quat.mul(quat.inv(centre), measured))  # (K, F, J, 3)
    highest, lowest = np.sort(v.max(axis=1), axis=0), np.sort(v.min(axis=1), axis=0)  # (K, J, 3) per example
    if K > 1:
        margin = np.stack([lowest[1] - lowest[0], highest[-1] - highest[-2]], axis=-1)
    else:
        margin = np.zeros((J, 3, 2))
    # (copies of one example register onto the same frames: their rotations agree to rounding)
    varied = bool(K > 1 and np.ptp(v, axis=0).max() > _SAME_ROTATION)
    return JointRanges(centre, lowest[0] - margin[..., 0], highest[-1] + margin[..., 1], margin, in_world, varied)



def joint_adjustments(motion: Motion, frame: int, effector: int, target: np.ndarray,
                      joints: list[tuple[int, np.ndarray, float]], *, iterations: int = 12,
                      tolerance: float = 0.0, ranges: JointRanges | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Section 3.2's adjustments of joint orientations, solved at one frame: ``(local rotations
    (n, 4), limited (n,) bool)``, one rotation per ``(joint, world axes (a, 3), stiffness)`` of
    ``joints``, that, applied before each joint's own local rotation, bring the ``effector`` to
    ``target (3,)`` at ``frame``.

    Each joint turns about its world axes; the least-norm Gauss-Newton step weighs joint
    ``j``'s angles by its stiffness squared (a small one moves little: the hips in a punch,
    after Fig. 14's discussion), damped, over ``iterations`` linearisations. A world rotation
    ``R`` of joint ``j`` is the local ``G_parent^-1 R G_parent`` put before its own.
    ``ranges``: each turned joint is kept within its range (:meth:`JointRanges.kept`); one a step
    takes beyond it stays at its edge and turns no more (``limited``), the others take up the rest.
    """
    rot = motion.rotations[frame]
    pos = motion.positions[frame]
    parents = motion.skeleton.parents
    moved = np.array([j for j, _, _ in joints])
    owner = np.concatenate([np.full(len(np.atleast_2d(axes)), k) for k, (_, axes, _) in enumerate(joints)])
    axes = np.concatenate([np.atleast_2d(axes) for _, axes, _ in joints])
    stiffness = np.array([joints[k][2] for k in owner])
    limited = np.zeros(len(joints), dtype=bool)
    start = rot[moved].copy()
    fractions = np.array([1.0, 0.5, 0.25, 0.125])
    # only the joints the step needs are posed: the effector, the turned joints and their parents
    wanted = np.unique(np.concatenate([[effector], moved, np.maximum(parents[moved], 0)]))
    column = {int(j): c for c, j in enumerate(wanted)}
    effector_c, moved_c = column[effector], np.array([column[int(j)] for j in moved])
    parent_c = np.array([column[int(max(parents[j], 0))] for j in moved])

    def posed(rot):
        return forward_kinematics(rot, np.broadcast_to(pos, rot.shape[:-1] + (3,)), parents, wanted)

    world, wrot = posed(rot[None])
    world, wrot = world[0], wrot[0]
    damping = 1e-3  # Levenberg-Marquardt: less after a full step, more after a shortened one
    for _ in range(iterations):
        miss = target - world[effector_c]
        if np.linalg.norm(miss) <= tolerance or limited.all():
            break
        scale = stiffness * ~limited[owner]  # (a joint at its limit turns no more)
        jac = np.cross(axes, world[effector_c] - world[moved_c[owner]]).T * scale
        gram = jac @ jac.T
        angles = scale * (jac.T @ np.linalg.solve(gram + damping * np.trace(gram) * np.eye(3) + 1e-300, miss))
        vectors = np.zeros((len(joints), 3))
        np.add.at(vectors, owner, angles[:, None] * axes)
        length = np.linalg.norm(vectors, axis=1)
        # the step and its halves at once: one that the linearisation overshoots (a target the
        # turns can only approach) gives way to the longest shorter one that still helps
        turns = quat.from_axis_angle(vectors / np.maximum(length, 1e-300)[:, None], fractions[:, None] * length)
        parent = np.where((parents[moved] >= 0)[:, None], wrot[parent_c], quat.identity())
        local = quat.mul(quat.inv(parent), quat.mul(turns, parent))  # (4, n, 4)
        trial_rot = np.broadcast_to(rot, (len(fractions),) + rot.shape).copy()
        trial_rot[:, moved] = quat.mul(local, rot[moved])
        excess = np.zeros((len(fractions), len(joints)))
        if ranges is not None:
            trial_rot[:, moved], excess = ranges.kept(moved, trial_rot[:, moved], start, parent)
        trial_world, trial_wrot = posed(trial_rot)
        misses = np.linalg.norm(target - trial_world[:, effector_c], axis=1)
        better = np.flatnonzero(misses < np.linalg.norm(miss))
        if not len(better):
            break
        pick = better[0]
        damping = max(damping * 0.1, 1e-7) if pick == 0 else min(damping * 10.0, 1.0)
        rot, world, wrot = trial_rot[pick], trial_world[pick], trial_wrot[pick]
        limited |= excess[pick] > LIMIT_BITES
        if misses[pick] > 0.99 * np.linalg.norm(miss) and not (excess[pick] > LIMIT_BITES).any():
            break  # (creeping: the turns cannot take it much nearer)
    # (each turn as the local rotation put before the joint's own: new = delta old)
    return quat.standardize(quat.mul(rot[moved], quat.inv(start))), limited


# How far (radians) a turn must have gone beyond a joint's range for its limit to count as biting:
# far above rounding, far below what the eye sees (a thousandth of a degree).
LIMIT_BITES = np.radians(1e-3)


def with_adjustments(motion: Motion, joints: list[int], deltas: np.ndarray, profile: np.ndarray,
                     ranges: JointRanges | None = None) -> tuple[Motion, np.ndarray]:
    """``(motion, limited (n,) bool)``: ``motion`` with each local rotation ``deltas[k] (4,)`` put
    before joint ``joints[k]``'s own, by the fraction ``profile (F,)`` of its angle at each frame;
    with ``ranges``, each joint kept within its range on every frame (:meth:`JointRanges.kept`:
    no further out than the motion had it), ``limited`` where that bit."""
    joints = np.asarray(joints, dtype=np.int64)
    rot = motion.rotations.copy()
    own = rot[:, joints]
    turned = quat.mul(quat.power(np.broadcast_to(deltas, (len(profile),) + deltas.shape), profile[:, None]), own)
    limited = np.zeros(len(joints), dtype=bool)
    if ranges is not None:
        parents = motion.skeleton.parents[joints]
        parent_world = np.broadcast_to(quat.identity(), turned.shape).copy()
        if ranges.in_world[joints].any():
            # (the joints taken in the world are the pelvis and above: no turned joint moves their parents)
            above = [int(p) for p in parents[ranges.in_world[joints]] if p >= 0]
            if above:
                _, wrot = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, above)
                parent_world[:, np.flatnonzero(ranges.in_world[joints] & (parents >= 0))] = wrot
        turned, excess = ranges.kept(joints, turned, own, parent_world)
        limited = (excess > LIMIT_BITES).any(axis=0)
    rot[:, joints] = turned
    return motion.with_arrays(rotations=rot), limited


def spliced(base: Motion, donor: Motion, mask: np.ndarray) -> Motion:
    """``base`` with the local transforms of the joints of ``mask (J,)`` taken from ``donor`` (same frames)."""
    rot = np.where(mask[None, :, None], donor.rotations, base.rotations)
    pos = np.where(mask[None, :, None], donor.positions, base.positions)
    return base.with_arrays(rotations=rot, positions=pos)


# --------------------------------------------------------------------------
# The product: a reach for a target


@dataclass(frozen=True)
class Reach:
    """A motion whose effector hits a target (section 3).

    motion     whole body, in the reference example's coordinates, starting where and as it
               starts, at its fps, played on the blend's own timing.
    hit_point  (3,) where the effector is at the feature (highest or farthest), same coordinates.
    hit_frame  the frame of ``motion`` at which it is there.
    error      |hit_point - target| in the motion's units.
    weights    (K,) per example in the order given: the blend (with partial blending, P_H's,
               which the effector's limb and the body other than the adjustment joints follow).
    partial    True when section 3.2's partial blending was needed.
    vertical_weights  (K,) P_V's weights with partial blending, else None.
    why        which way was taken and why, in a sentence (for the report).
    limited    the joints (names) whose range (:class:`JointRanges`) stopped partial
               blending's turns: there the target may be missed for it.
    reference_frames  (F,) the (fractional) reference frame each frame of ``motion`` plays.
    feet_held  whether the contact stage held the feet the examples have down.
    tolerance  the miss taken as a hit (:attr:`ReachSpace.tolerance`), in the motion's units: a
               limit that bit matters to the user only where ``error`` exceeds it.
    """

    motion: Motion
    hit_point: np.ndarray
    hit_frame: int
    error: float
    weights: np.ndarray
    partial: bool
    vertical_weights: np.ndarray | None = None
    why: str = ""
    limited: tuple[str, ...] = ()
    reference_frames: np.ndarray | None = None
    feet_held: bool = False
    tolerance: float = 0.0

    @property
    def missed(self) -> bool:
        """Whether the target was missed by more than :attr:`tolerance`."""
        return self.error > self.tolerance


@dataclass(frozen=True, kw_only=True)
class ReachOptions:
    """What a reach does beyond section 3 of the paper (issue 24, item 6); both on by default,
    each can be turned off (the benchmark compares with both off, as before).

    hold_feet     the feet the examples have down are held where they stand, through the
                  contact stage of synthesis (:meth:`ReachSpace.feet_held`).
    joint_limits  section 3.2's turned joints stay within the range the examples show, widened
                  by a margin (:func:`joint_ranges`).
    contacts      the contact stage's constants.
    """

    hold_feet: bool = True
    joint_limits: bool = True
    contacts: ContactOptions = ContactOptions()


# The largest miss of the refined regular blend taken as a hit, as a fraction of the body size
# (core.rig.body_height, about 0.78 of standing height): 0.4 cm for the raises' performer
# (body height 128 cm), 0.4 cm for a 1.75 m adult; a good deal above what the refinement
# leaves inside the space (hundredths of a millimetre) and below what the eye sees on a hand.
HIT_TOLERANCE = 0.003

# How stiff each adjustment joint of a punch is (section 3.2): the hips least, as the
# discussion of Fig. 14 says ("only slightly adjustments at Hips", the chest compensating).
_STIFFNESS = {"pelvis": 0.25, "chest": 1.0, "collar": 0.8}

_LEG_PARTS = ("hip", "knee", "ankle", "toe")


class ReachSpace:
    """Examples of one action aligned once (section 3.1); reaching a target is then a query.

    registration  the examples on the reference's frames (:func:`register_examples`), in the
                  order given; ``reference`` indexes the one the others were registered to.
    space         the sampled blends and their hit points (:class:`ParameterSpace`).
    rig, up       of the reference; ``effector`` (role), ``effector_joint`` (index), ``feature``.
    scale         the reference's body size (core.rig.body_height), in its unit.
    tolerance     the miss accepted from regular blending (HIT_TOLERANCE times ``scale``).
    """

    def __init__(self, registration: Registration, *, reference: int = 0, effector: str = "right.wrist",
                 feature: str = "highest", n_blends: int = 2000, seed: int = 0, rig: Rig | None = None,
                 options: ReachOptions = ReachOptions()):
        if feature not in FEATURES:
            raise ValueError(f"feature must be one of {FEATURES}, got {feature!r}")
        self.reference = reference
        reference = registration.motions[reference]
        rig = find_rig(reference) if rig is None else rig
        joint = rig.roles.get(effector)
        if not isinstance(joint, (int, np.integer)):
            singles = sorted(k for k, v in rig.roles.items() if isinstance(v, (int, np.integer)))
            raise ValueError(f"effector must be a single-joint rig role present in this skeleton, one of "
                             f"{', '.join(singles)}; got {effector!r}")
        self.registration = registration
        self.rig = rig
        self.up = detect_up(reference, rig)
        self.effector, self.effector_joint, self.feature = effector, int(joint), feature
        self.scale = body_height(reference, rig)
        self.tolerance = HIT_TOLERANCE * self.scale
        self.rotations = np.stack([m.rotations for m in registration.motions])
        self.positions = np.stack([m.positions for m in registration.motions])
        self.start = horizontal(reference[:1].global_positions()[0, rig.pelvis], self.up)
        self.chains = EffectorChains.of(registration.motions, rig, self.up, self.effector_joint, feature, self.start)
        self.options = options
        weights = dense_sampling_weights(len(registration.motions), n_blends, seed=seed)
        points, frames = self.chains.hits(weights, between_frames=True)
        # One example, or copies of one: no blend moves the hit, and only partial blending
        # (section 3.2, the joints turned) can take it anywhere else.
        self.one_point = not np.ptp(points, axis=0).max() > 1e-6 * self.scale
        self.space = ParameterSpace(weights, points, frames, effector, feature)
        self.ranges = joint_ranges(registration.motions, rig)
        self._feet = None  # (each example's contacts and floors, when the contact stage first asks)

    @classmethod
    def build(cls, examples: list[Motion], *, effector: str = "right.wrist", feature: str = "highest",
              reference: int = 0, seed: int = 0, n_blends: int = 2000, rig: Rig | None = None,
              names: Sequence[str] | None = None, options: ReachOptions = ReachOptions(),
              progress: Progress | None = None) -> "ReachSpace":
        """Section 3.1 once: register ``examples`` to ``examples[reference]`` and sample
        ``n_blends`` blends of them. Weights of every reach follow the order of ``examples``.
        ``rig``: the examples' joint roles (one skeleton, one rig), found from the names when ``None``.
        ``names``: the examples' names (file names), for messages. ``progress`` (:mod:`core.progress`):
        the registration (one time warp per example) as the first 90 %, the blends sampled the rest."""
        if not examples:
            raise ValueError("need at least one example motion to reach by blending")
        if not 0 <= reference < len(examples):
            raise ValueError(f"reference must index one of the {len(examples)} examples, got {reference}")
        if feature not in FEATURES:
            raise ValueError(f"feature must be one of {FEATURES}, got {feature!r}")
        ref = examples[reference]
        check_reach_size(ref.n_frames, [resampled_frames(m.n_frames, m.fps, ref.fps) for m in examples],
                         len(ref.skeleton))
        order = [reference] + [k for k in range(len(examples)) if k != reference]
        reg = register_examples([examples[k] for k in order], rig=rig,
                                names=None if names is None else [names[k] for k in order],
                                progress=part_of(progress, 0.0, 0.9))
        back = np.argsort(order)  # registered position of each example given
        reg = Registration(tuple(reg.motions[k] for k in back), tuple(reg.paths[k] for k in back),
                           tuple(reg.times[k] for k in back))
        space = cls(reg, reference=reference, effector=effector, feature=feature, n_blends=n_blends, seed=seed,
                    rig=rig, options=options)
        report(progress, 1.0)
        return space

    # -- pieces of a query

    def blend(self, weights: np.ndarray) -> Motion:
        """The whole-body blend ``weights (K,)`` on the reference's frames."""
        weights = np.asarray(weights, dtype=np.float64)
        rot = blended_rotations(self.rotations, weights[None])[0]
        pos = np.einsum("k,kfjc->fjc", weights, self.positions)
        ref = self.registration.motions[self.reference]
        return Motion(ref.skeleton, rot, pos, ref.fps)

    def placed(self, motion: Motion) -> Motion:
        """``motion`` moved on the ground so that its first frame's pelvis stands where the
        reference's does: every example starts there, but a blend starts where the blended pelvis
        is, off by the example frames the warping paths match to the reference's first."""
        pelvis = forward_kinematics(motion.rotations[:1], motion.positions[:1], motion.skeleton.parents,
                                    [self.rig.pelvis], rotations_out=False)[0][0, 0]
        return motion.transformed(quat.identity(), horizontal(self.start - pelvis, self.up))

    def inside(self, target) -> bool:
        """Whether whole-body blending (section 3.1, refined) hits ``target`` within :attr:`tolerance`:
        "inside the space" as what blending the whole body can reach, so that a target inside
        is one :meth:`reach` answers by whole-body blending.

        Not the convex hull of the sampled hit points (:meth:`hull_distance`): hit points can lie
        on a curved shell (a raise's hand at its highest, about the shoulder), and the hull then
        holds much that no blend hits (issue 24 item 7; figures in docs/design.md). A target
        farther than twice the tolerance outside the hull is outside without a refinement (no
        refined blend reaches that far beyond it)."""
        target = self._target(target)
        lam, beyond = hull_combination(self.space.hit_points, target, scale=self.scale)
        if beyond > 2.0 * self.tolerance:
            return False
        return self._regular(target, lam @ self.space.hit_points).error <= self.tolerance

    def hull_distance(self, target) -> float:
        """How far ``target`` lies outside the convex hull of the sampled hit points (0 inside it)."""
        return hull_combination(self.space.hit_points, self._target(target), scale=self.scale)[1]

    def blend_towards(self, point: np.ndarray, metric: np.ndarray | None = None, *,
                      iterations: int = 8) -> tuple[np.ndarray, np.ndarray]:
        """The blend ``(weights (K,), hit point (3,))`` hitting ``point``, or as near as the space
        allows in ``metric``: the hull's nearest point to it (its goal), then
        :func:`refined_weights` onto that goal from the sampled blends around it, interpolated
        (:func:`neighbour_blend`)."""
        weights, hit, _ = self._refined_towards(point, metric, iterations=iterations)
        return weights, hit

    def _refined_towards(self, point: np.ndarray, metric: np.ndarray | None = None, *, iterations: int = 8,
                         goal: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
        """:meth:`blend_towards`, with the blend's (fractional) hit frame; ``goal``: the hull's
        nearest point to ``point`` in ``metric`` when the caller has it already."""
        prior, goal = self._start_towards(point, metric, goal=goal)
        # (the prior's hit is near the nearest sampled blend's: the first derivative's blends go
        # into the same pass as the prior, see refined_weights)
        nearest = np.argmin(((self.space.hit_points - goal) ** 2).sum(axis=1))
        return refined_weights(self.chains, prior, goal, scale=self.scale, iterations=iterations,
                               tolerance=self.tolerance, around=int(round(self.space.hit_frames[nearest])))

    def _start_towards(self, point: np.ndarray, metric: np.ndarray | None = None, *,
                       goal: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Where :meth:`blend_towards` starts: ``(weights (K,), goal (3,))``. The goal is the point
        of the hull nearest ``point`` in ``metric`` (itself when inside): a projection onto a
        convex set, so it moves continuously with ``point``, although the combination of hit
        points that gives it need not (many do; the solver picks a few, and others for a point a
        hair away). The start interpolates the weights of the sampled blends nearest the goal."""
        if goal is None:
            lam = hull_combination(self.space.hit_points, point, metric=metric, scale=self.scale)[0]
            goal = lam @ self.space.hit_points
        return neighbour_blend(self.space.hit_points, self.space.weights, goal, scale=self.scale), goal

    def _target(self, target) -> np.ndarray:
        target = np.asarray(target, dtype=np.float64)
        if target.shape != (3,) or not np.isfinite(target).all():
            raise ValueError(f"a target is one finite point (x, y, z), got {np.asarray(target).tolist()!r}")
        return target

    def _retimed(self, motion: Motion, weights: np.ndarray, pinned: float) -> tuple[Motion, int, np.ndarray]:
        """Section 3.2's "shortened and time-warped to get a smoother result", read as: the
        motion (on the reference's frames) played on its blend's own timing (the weighted mean
        of the examples' own clocks, :func:`blended_timing`), the hit on a whole output frame:
        ``(motion, hit frame, the reference frame each output frame plays (T,))``."""
        frames, pinned_at = retimed_frames(blended_timing(self.registration.times, weights), pinned)
        if motion.n_frames < 2:
            return motion, 0, np.zeros(motion.n_frames)
        return sampled_at(motion, frames, motion.fps), pinned_at, frames

    def _measured(self, motion: Motion, target: np.ndarray, weights: np.ndarray, partial: bool,
                  vertical: np.ndarray | None = None, world: np.ndarray | None = None,
                  frames: np.ndarray | None = None, limited: tuple[str, ...] = ()) -> Reach:
        """The reach of ``motion``, its hit found on it (the feature over its whole frames);
        ``world``: its effector's and pelvis's positions ``(F, 2, 3)`` when the caller has them;
        ``frames``: the reference frame each of its frames plays."""
        if world is None:
            world = self._effector_and_pelvis(motion)
        frame = int(hit_frame(world[:, 0], world[:, 1], self.up, self.feature))
        point = world[frame, 0]
        return Reach(motion, point, frame, float(np.linalg.norm(point - target)), weights, partial, vertical,
                     limited=limited, reference_frames=frames, tolerance=self.tolerance)

    def _effector_and_pelvis(self, motion: Motion) -> np.ndarray:
        """``(F, 2, 3)`` world positions of the effector and the pelvis over ``motion``."""
        return forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents,
                                  [self.effector_joint, self.rig.pelvis], rotations_out=False)[0]

    # -- the query

    def reach(self, target, *, length: Callable[[float], str] | None = None) -> Reach:
        """A motion whose effector hits ``target (3,)`` (reference example's coordinates).

        ``length``: how ``Reach.why`` words a distance given in the examples' units (default: the bare
        number, three significant digits; Blender's add-on gives its scene's unit system).

        Regular blending first (section 3.1, refined); when it misses by more than
        :attr:`tolerance` (the target outside the space, or the refinement short of it),
        section 3.2's partial blending, kept when it misses less. ``Reach.why`` says which was
        taken and why. Examples that all hit at one point (one example, or copies of one) are
        reached by partial blending alone. Then the feet the examples have down are held
        (:attr:`options`, :meth:`feet_held`).

        A target farther than :attr:`tolerance` outside the hull of the sampled hit points
        cannot be hit by regular blending: partial blending comes first there, and regular
        blending is not tried when partial blending already misses by less than the target's
        distance from the hull less a tolerance, since no refined blend comes that close (on
        the 40 raises' cross-validation the refined blends reach at most 0.05 tolerance beyond
        the hull). The product is the same; the query saves the regular refinement.
        """
        target = self._target(target)
        length = length or "{:.3g}".format
        lam, beyond = hull_combination(self.space.hit_points, target, scale=self.scale)
        if self.one_point:
            one = len(self.registration.motions)
            given = "the one example hits" if one == 1 else f"the {one} examples all hit"
            return self._finished(self._partial(target, beyond), target,
                                  f"{given} at one point, which no blend moves: partial blending (section 3.2) "
                                  f"alone, its joints turned", length)
        partial = self._partial(target, beyond) if beyond > self.tolerance else None
        outside = f"the target lies {length(beyond)} outside the hull of the blends' hit points"
        if partial is not None and partial.error < beyond - self.tolerance:
            return self._finished(partial, target, f"{outside}, beyond whole-body blending (section 3.1): "
                                                   f"partial blending (section 3.2)", length)
        # (beyond the hull, regular blending only approaches it: 4 steps, not 6, for the comparison)
        regular = self._regular(target, lam @ self.space.hit_points, 6 if partial is None else 4)
        if regular.error <= self.tolerance:
            return self._finished(regular, target, "whole-body blending (section 3.1) hits it", length)
        partial = self._partial(target, beyond) if partial is None else partial
        where = outside if beyond > self.tolerance else "the target lies inside the hull of the blends' hit points"
        missed = f"whole-body blending (section 3.1) misses it by {length(regular.error)}"
        if partial.error < regular.error:
            return self._finished(partial, target, f"{where}, but {missed}: partial blending (section 3.2), "
                                                   f"which misses less", length)
        # (the whole-body blend turned no joint: the limits that stopped the discarded partial
        # blending are the reason it was no better, said in ``why`` and not in ``limited``)
        stopped = (f", the range the examples show stopping its turn of {', '.join(partial.limited)}"
                   if partial.limited else "")
        return self._finished(regular, target, f"{where}; {missed} and partial blending (section 3.2) by no less "
                                               f"({length(partial.error)}{stopped}): whole-body kept", length)

    @property
    def limits(self) -> JointRanges | None:
        """The ranges section 3.2's turns are kept within (:func:`joint_ranges`), or ``None``: turned
        off (:attr:`options`), or one performance (one example, or copies of one), whose range
        says nothing of how far its joints may go; kept to it, partial blending could barely move
        the hand (10 cm below one raise's hit: missed by 9.8 cm with it, hit without)."""
        return self.ranges if self.options.joint_limits and self.ranges.varied else None

    def _finished(self, result: Reach, target: np.ndarray, why: str, length: Callable[[float], str]) -> Reach:
        """``result`` with ``why`` (and the joints whose limit bit; distances worded by ``length``), its feet
        held (:meth:`feet_held`)."""
        if result.limited:
            why += (f"; the range the examples show stopped the turn of {', '.join(result.limited)}"
                    + (f" (missing by {length(result.error)})" if result.missed else ""))
        elif result.partial and self.options.joint_limits and not self.ranges.varied:
            why += ("; no joint limits: one performance shows how its joints went, not how far they may go "
                    "(give two or more different examples of the action to keep the turns within their range)")
        result = replace(result, why=why)
        return self.feet_held(result, target) if self.options.hold_feet else result

    def feet_held(self, result: Reach, target) -> Reach:
        """``result`` with the feet its examples have down held (issue 24 item 6), through the contact
        stage of synthesis (core.contacts.hold_feet, as synthesis runs it: every foot down held
        still where it stands, on the floor; the pelvis left as it is, as for blends and assembly).
        A foot is down where the examples of the blend its leg came from have it down, weighted
        (:meth:`foot_sources`; core.analysis.foot_contacts of each, at the reference frame each
        output frame plays), on their floors, weighted. Only the legs change (the leg IK): a hit on an arm stays where it
        was; the foot of a leg that hits (a kick) is left as blended, or the stage would carry it
        between its holds. The hit is measured again on the result all the same."""
        target = self._target(target)
        if result.reference_frames is None or result.motion.n_frames < 3:
            return result
        # The stage keeps a gap's first and last frames as they are (there synthesis has its cores)
        # and glides a foot down throughout from one to the other, or steps it. A reach has no
        # cores: its feet stand where they stand on its first frame. So it runs over the motion with
        # the first frame repeated before it (a foot down there is held from there, in full from the
        # real first frame on) and the last after it with the feet up (in the air there, a held
        # foot is let go only in the copies, which are dropped again).
        pad = 1 + int(np.ceil(self.options.contacts.hold_fade_s * result.motion.fps))
        n = result.motion.n_frames
        padded = np.r_[np.zeros(pad, dtype=np.int64), np.arange(n), np.full(pad, n - 1)]
        contacts, floors = self._example_feet()
        sources = self.foot_sources(result)
        nearest = np.clip(np.rint(result.reference_frames[padded]).astype(np.int64), 0, contacts.shape[1] - 1)
        down = np.einsum("sk,kfs->fs", sources, contacts[:, nearest]) >= 0.5
        down[-pad:] = False
        for k, side in enumerate("LR"):
            if self.effector_joint in self.rig.leg(side).joints:
                down[:, k] = False
        motion = result.motion
        leg = 0.5 * (leg_length(motion.skeleton, self.rig, "L") + leg_length(motion.skeleton, self.rig, "R"))
        held = hold_feet(motion[padded], 0, down, [(0, len(padded) - 1)], self.rig, up=self.up, leg=leg,
                         floors=np.einsum("sk,ksa->sa", sources, floors), options=self.options.contacts)[pad:pad + n]
        measured = self._measured(held, target, result.weights, result.partial)
        return replace(result, motion=held, hit_point=measured.hit_point, hit_frame=measured.hit_frame,
                       error=measured.error, feet_held=True)

    def foot_sources(self, result: Reach) -> np.ndarray:
        """``(2, K)`` the weights, summing to one, of the blend each foot (left, right) of ``result``
        was taken from: its contacts and floors are that blend's. Whole-body blending and a punch
        or raise (section 3.2: the body, legs included, from P_H): ``result.weights``. A kick
        (the effector on a leg): the body, the standing leg included, is M_V's and only the kicking
        leg M_H's, so the standing foot is P_V's (``result.vertical_weights``)."""
        weights = result.weights / result.weights.sum()
        sources = np.stack([weights, weights])
        if result.partial and result.vertical_weights is not None:
            vertical = result.vertical_weights / result.vertical_weights.sum()
            for k, side in enumerate("LR"):
                if self.effector.partition(".")[2] in _LEG_PARTS and self.effector_joint not in self.rig.leg(side).joints:
                    sources[k] = vertical
        return sources

    def _example_feet(self) -> tuple[np.ndarray, np.ndarray]:
        """``(contacts (K, F, 2) bool, floors (K, 2, 2))``: each registered example's feet down
        (core.analysis.foot_contacts) and its floors (core.mkm.clip_floors), found once."""
        if self._feet is None:
            motions = self.registration.motions
            joints = [m.global_positions() for m in motions]
            contacts = np.stack([foot_contacts(m, self.rig, up=self.up, positions=g) for m, g in zip(motions, joints)])
            self._feet = contacts, clip_floors(joints, motions, self.rig, self.up)
        return self._feet

    def regular_reach(self, target) -> Reach:
        """Section 3.1 alone: the whole-body blend refined towards ``target`` (:meth:`blend_towards`),
        however far it stays from a target outside the space."""
        return self._regular(self._target(target))

    def _regular(self, target: np.ndarray, goal: np.ndarray | None = None, iterations: int = 6) -> Reach:
        weights, _, frame = self._refined_towards(target, goal=goal, iterations=iterations)
        motion, _, frames = self._retimed(self.placed(self.blend(weights)), weights, frame)
        return self._measured(motion, target, weights, False, frames=frames)

    def without(self, k: int, **kwargs) -> "ReachSpace":
        """The space of the same examples but the ``k``-th, on the same registration (section
        5.2's cross-validation); ``k`` must not be the reference. Weights then count the others."""
        if k == self.reference:
            raise ValueError("the reference cannot be left out of its own registration: build the space again "
                             "with another reference")
        keep = [i for i in range(len(self.registration.motions)) if i != k]
        reg = Registration(*(tuple(part[i] for i in keep) for part in
                             (self.registration.motions, self.registration.paths, self.registration.times)))
        return ReachSpace(reg, reference=keep.index(self.reference), effector=self.effector, feature=self.feature,
                          **{"rig": self.rig, "options": self.options, **kwargs})

    def partial_reach(self, target) -> Reach:
        """Section 3.2 (Figs. 4-5): partial blending for a target the space does not reach.

        P_H: the blend hitting at the target's height, nearest it horizontally; P_V: the blend
        nearest the target's vertical line (whose hit lies in the target's direction from the
        body, hence the waist turn that direction asks for). Both are points of the hull with
        one direction matched firmly, refined onto by their blends. A punch or raise (the
        effector on an arm, or the trunk): the body with P_H's weights, the adjustment joints
        (hips, chest, the reaching side's collar, its shoulder without one) from M_V, then
        turned hierarchically so the effector reaches the target. A kick (the effector on a
        leg): the kicking leg of M_H spliced onto M_V, its hip turned about up (direction) and
        about the body's lateral axis (height).
        """
        target = self._target(target)
        return self._partial(target, hull_combination(self.space.hit_points, target, scale=self.scale)[1])

    def _partial(self, target: np.ndarray, beyond: float) -> Reach:
        """:meth:`partial_reach`, given the target's distance ``beyond`` from the hull. Inside it
        (regular refinement fell short), P_H and P_V are the target itself in any metric: their
        hull queries are skipped (the firm metrics make them slow there, up to 0.17 s, cycling
        among hit points that all hold the target)."""
        up = self.up
        level = np.outer(up, up)
        # (P_H refined twice, P_V not at all: the adjustments below take up what they leave)
        inside = target if beyond <= 1e-6 * self.scale else None
        weights_h, _, frame_h = self._refined_towards(target, (np.eye(3) - level) + _FIRM * level, iterations=2,
                                                      goal=inside)
        weights_v = self._start_towards(target, _FIRM * (np.eye(3) - level) + level, goal=inside)[0]
        motion_h, motion_v = self.blend(weights_h), self.blend(weights_v)
        side, _, part = self.effector.partition(".")
        skel = motion_h.skeleton
        if part in _LEG_PARTS:
            hip = self.rig.leg(side).hip
            motion, frame, frames = self._retimed(self.placed(spliced(motion_v, motion_h,
                                                                      self.rig.subtree_mask(skel, hip))),
                                                  weights_h, frame_h)
            world = motion[frame].global_positions()[0]
            legs = self.rig.leg("R").hip, self.rig.leg("L").hip
            lateral = horizontal(world[legs[0]] - world[legs[1]], up)
            lateral = lateral / max(np.linalg.norm(lateral), 1e-300)
            adjusted = [(hip, np.stack([up, lateral]), 1.0)]
        else:
            adjusted_roles = [("pelvis", self.rig.pelvis), ("chest", self.rig.chest)]
            arm = self.rig.arm(side) if side in ("left", "right") else None
            if arm is not None and self.effector_joint in arm.joints:
                adjusted_roles.append(("collar", arm.clavicle if arm.clavicle is not None else arm.shoulder))
            adjusted_roles = [(role, j) for role, j in adjusted_roles if j is not None]
            mask = np.zeros(len(skel), dtype=bool)
            mask[[j for _, j in adjusted_roles]] = True
            motion, frame, frames = self._retimed(self.placed(spliced(motion_h, motion_v, mask)), weights_h, frame_h)
            adjusted = [(j, up[None] if role == "pelvis" else np.eye(3), _STIFFNESS[role]) for role, j in adjusted_roles]
        joints = [j for j, _, _ in adjusted]
        world = self._effector_and_pelvis(motion)
        value = world[:, 0] @ up if self.feature == "highest" else np.linalg.norm(world[:, 0] - world[:, 1], axis=-1)
        deltas = quat.identity((len(joints),))
        best = found = self._measured(motion, target, weights_h, True, weights_v, world, frames)
        ranges = self.limits
        names = self.registration.motions[0].skeleton.names
        # The adjustment changes which frame is the hit (a lower hand at the peak, a higher one
        # elsewhere): solved again at the frame the result hits from, a few times, the profile
        # peaking there (so the solution holds in full at that frame); the best kept.
        for _ in range(5):
            if found.error <= 0.02 * self.tolerance:
                break
            profile = adjustment_profile(value, found.hit_frame)
            centred, _ = with_adjustments(motion, joints, deltas, profile, ranges)
            more, stopped = joint_adjustments(centred, found.hit_frame, self.effector_joint, target, adjusted,
                                              tolerance=0.01 * self.tolerance, ranges=ranges)
            deltas = quat.mul(more, deltas)
            before = found
            turned, kept = with_adjustments(motion, joints, deltas, profile, ranges)
            limited = tuple(names[j] for j, bit in zip(joints, stopped | kept) if bit)
            found = self._measured(turned, target, weights_h, True, weights_v, frames=frames, limited=limited)
            best = found if found.error < best.error else best
            if found.error > 0.9 * before.error and found.hit_frame == before.hit_frame:
                break  # (no longer getting closer at the same frame: the turns cannot reach it)
        return best


# --------------------------------------------------------------------------
# Section 5.2: the cross-validation


@dataclass(frozen=True)
class LeftOut:
    """One example left out of the space and its hit point targeted (section 5.2).

    example   its index among the examples; outside: whether whole-body blending of the others
    misses it (:meth:`ReachSpace.inside`: "outside of newly formed shrunk space"); regular,
    product: the hit errors of regular blending alone and of :meth:`ReachSpace.reach` (partial
    blending where regular misses); partial: whether the product used partial blending; scale:
    the body size (errors / scale are unit-free); seconds: how long the product's query took (the
    median of the runs timed); body: the product's whole-body distance to the left-out example
    (:func:`body_distance`); limited: the joints whose range stopped the product's turns;
    motion: the product's motion.
    """

    example: int
    outside: bool
    regular: float
    product: float
    partial: bool
    scale: float
    seconds: float = 0.0
    body: float = 0.0
    limited: tuple[str, ...] = ()
    motion: Motion | None = None


def body_distance(result: Reach, example: Motion) -> float:
    """Section 5.2's comparison of joint trajectories, as one figure: the mean, over the frames of
    ``result.motion`` and every joint, of the distance between its joint and ``example``'s (an
    example registered on the reference's frames) at the reference frame that frame plays
    (``result.reference_frames``). In the motions' unit."""
    played = sampled_at(example, result.reference_frames, example.fps)
    return float(np.linalg.norm(result.motion.global_positions() - played.global_positions(), axis=-1).mean())


def cross_validation(examples: list[Motion], left_out, *, effector: str = "right.wrist", feature: str = "highest",
                     n_blends: int = 2000, seed: int = 0, repeats: int = 1,
                     options: ReachOptions = ReachOptions()) -> list[LeftOut]:
    """Section 5.2: for each index of ``left_out``, the space of the other examples, and the
    left-out example's own hit point (on the full registration, in its coordinates) as the
    target. Example 0 is the reference; when it is the one left out, example 1 is.
    ``repeats``: the product's query is timed that many times, the median kept (on a machine
    other jobs share, one run can be twice the idle time). ``options``: the reach's."""
    spaces = {}
    rows = []
    for k in left_out:
        reference = 1 if k == 0 else 0
        if reference not in spaces:
            spaces[reference] = ReachSpace.build(examples, effector=effector, feature=feature, reference=reference,
                                                 seed=seed, n_blends=0, options=options)
        full = spaces[reference]
        target = full.chains.hits(np.eye(len(examples))[k][None], between_frames=True)[0][0]
        shrunk = full.without(k, n_blends=n_blends, seed=seed)
        regular = shrunk.regular_reach(target)
        durations = []
        for _ in range(max(1, repeats)):
            start = time.perf_counter()
            product = shrunk.reach(target)
            durations.append(time.perf_counter() - start)
        rows.append(LeftOut(k, not shrunk.inside(target), regular.error, product.error, product.partial, shrunk.scale,
                            float(np.median(durations)), body_distance(product, full.registration.motions[k]),
                            product.limited, product.motion))
    return rows
