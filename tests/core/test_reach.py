"""Time alignment of examples of one action (Juang et al. 2009, section 3.1)."""

from dataclasses import replace

import numpy as np
import pytest
from real_capture import require

from broken_rigs import legs_flipped_up
from core import quat
from core.motion import Motion
from core.rig import find_rig
from core.reach import (
    accumulated_cost,
    blend_for_target,
    blended_motion,
    blended_rotations,
    hit_frame,
    hit_points,
    parameter_space,
    dense_sampling_weights,
    dynamic_time_warping,
    example_times,
    frame_distances,
    register_examples,
    sampled_at,
    start_placement,
)

RAISE = "bandai2-raise/raise-up-right-hand_normal_00{}"


def plain_dynamic_programming(cost):
    """The textbook O(n m) recurrence, one cell at a time: the reference for the anti-diagonal version."""
    n, m = cost.shape
    total = np.full((n, m), np.inf)
    for i in range(n):
        for k in range(m):
            if i == 0 and k == 0:
                total[i, k] = cost[0, 0]
                continue
            before = [total[i - 1, k - 1] if i and k else np.inf, total[i - 1, k] if i else np.inf,
                      total[i, k - 1] if k else np.inf]
            total[i, k] = cost[i, k] + min(before)
    return total


def warped(motion, times):
    """``motion`` played at fractional frames ``times``: a known time warp of it."""
    return sampled_at(motion, times, motion.fps)


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (5, 1), (7, 4), (9, 13)])
def test_the_anti_diagonal_dynamic_programming_equals_the_cell_by_cell_one(shape):
    cost = np.random.default_rng(sum(shape)).random(shape)
    total, _ = accumulated_cost(cost)
    np.testing.assert_allclose(total, plain_dynamic_programming(cost))


def test_the_distance_grid_sums_squared_joint_distances():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(4, 5, 3)), rng.normal(size=(6, 5, 3))
    slow = np.array([[((a[i] - b[k]) ** 2).sum() for k in range(6)] for i in range(4)])
    np.testing.assert_allclose(frame_distances(a, b), slow, atol=1e-12)


def test_the_warping_path_is_monotone_and_covers_both_ends():
    rng = np.random.default_rng(7)
    path = dynamic_time_warping(rng.normal(size=(23, 4, 3)), rng.normal(size=(31, 4, 3)))
    assert tuple(path[0]) == (0, 0) and tuple(path[-1]) == (22, 30)
    steps = np.diff(path, axis=0)
    assert ((steps == 0) | (steps == 1)).all() and (steps.sum(axis=1) >= 1).all()


def test_a_clip_registered_to_a_time_warped_copy_of_itself_recovers_the_warp(mocap):
    clip = mocap(RAISE.format(1))
    n = clip.n_frames
    times = (np.linspace(0.0, 1.0, n + 20) ** 1.6) * (n - 1)  # slow start, then faster than the clip
    copy = warped(clip, times)
    found = example_times(dynamic_time_warping(copy.global_positions(), clip.global_positions()), copy.n_frames)
    # Frames are whole on the clip's side; the warp is recovered to within about a frame.
    assert np.abs(found - times).max() < 1.5
    assert np.abs(found - times).mean() < 0.5


def test_registration_puts_every_example_on_the_reference_frames_starting_where_it_starts(mocap):
    examples = [mocap(RAISE.format(i)) for i in (1, 2, 3)]
    reg = register_examples(examples)
    ref = examples[0]
    pelvis = find_rig(ref).pelvis
    for motion, t in zip(reg.motions, reg.times):
        assert motion.n_frames == ref.n_frames and motion.fps == ref.fps
        assert (np.diff(t) >= 0).all()
        # on the ground (X, Z: these files are Y up) the first frames' pelvises coincide
        np.testing.assert_allclose(motion[:1].global_positions()[0, pelvis, [0, 2]],
                                   ref[:1].global_positions()[0, pelvis, [0, 2]], atol=1e-6)
    np.testing.assert_allclose(reg.times[0], np.arange(ref.n_frames))


TRANSFORMS = {
    "renamed": lambda m: m.renamed({n: f"rig_{n}_x" for n in m.skeleton.names}),
    "metres": lambda m: m.scaled(0.01),
    "z up": lambda m: m.transformed(quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2)),
    "60 fps": lambda m: m.resampled(60),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_registration_does_not_depend_on_names_unit_up_axis_or_rate(mocap, name):
    change = TRANSFORMS[name]
    examples = [mocap(RAISE.format(i)) for i in (1, 4)]
    plain = register_examples(examples)
    changed = register_examples([change(m) for m in examples])
    if name == "60 fps":
        # Times count the reference's frames, twice as many at 60 fps: every other one, halved,
        # matches, up to the frame rounding of the warping path.
        np.testing.assert_allclose(changed.times[1][::2] / 2, plain.times[1], atol=1.0)
    else:
        np.testing.assert_allclose(changed.times[1], plain.times[1], atol=1e-6)


def test_registration_does_not_depend_on_where_each_example_starts(mocap):
    examples = [mocap(RAISE.format(i)) for i in (1, 4)]
    plain = register_examples(examples)
    turn = quat.from_axis_angle(np.array([0, 1.0, 0]), 2.2)
    moved = register_examples([examples[0], examples[1].transformed(turn, np.array([310.0, 0, -75.0]))])
    np.testing.assert_allclose(moved.times[1], plain.times[1], atol=1e-6)
    np.testing.assert_allclose(moved.motions[1].global_positions(), plain.motions[1].global_positions(), atol=1e-6)


def test_examples_of_another_skeleton_are_refused(mocap):
    examples = [mocap(RAISE.format(i)) for i in (1, 2)]
    with pytest.raises(ValueError, match="skeleton"):
        register_examples([examples[0], examples[1].renamed({"Hips": "Pelvis"})])


def test_examples_in_different_units_are_refused(mocap):
    examples = [mocap(RAISE.format(i)) for i in (1, 2)]
    with pytest.raises(ValueError, match="one unit"):
        register_examples([examples[0], examples[1].scaled(0.01)])


# --------------------------------------------------------------------------
# The parameter space (section 3.1, Fig. 3a)


@pytest.fixture(scope="module")
def raises(mocap):
    """Eight registered right-hand raises of two styles."""
    names = [f"bandai2-raise/raise-up-right-hand_{style}_00{i}" for style in ("normal", "exhausted") for i in (1, 2, 3, 4)]
    return register_examples([mocap(n) for n in names])


def test_blend_weights_mix_a_few_examples_each_and_sum_to_one():
    w = dense_sampling_weights(10, 500, per_blend=3, seed=4)
    assert w.shape == (510, 10)
    np.testing.assert_array_equal(w[:10], np.eye(10))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert ((w[10:] > 0).sum(axis=1) == 3).all()
    np.testing.assert_array_equal(w, dense_sampling_weights(10, 500, per_blend=3, seed=4))


def test_a_two_example_blend_is_their_slerp():
    rng = np.random.default_rng(5)
    rot = quat.normalize(rng.normal(size=(2, 6, 4)))
    t = np.array([0.0, 0.25, 0.7, 1.0])
    blends = blended_rotations(rot, np.stack([1 - t, t], axis=1))
    for row, ti in zip(blends, t):
        expected = quat.slerp(rot[0], rot[1], np.full(6, ti))
        np.testing.assert_allclose(quat.standardize(row), quat.standardize(expected), atol=1e-12)


def test_the_highest_and_the_farthest_feature_pick_their_frames():
    up = np.array([0.0, 0.0, 1.0])
    pelvis = np.zeros((4, 3))
    effector = np.array([[0, 0, 1.0], [0, 0, 2.0], [3.0, 0, 1.0], [0, 0, 0.5]])
    assert hit_frame(effector, pelvis, up, "highest") == 1
    assert hit_frame(effector, pelvis, up, "farthest") == 2
    with pytest.raises(ValueError, match="feature"):
        hit_frame(effector, pelvis, up, "lowest")


def test_hit_points_of_blends_are_where_the_blended_motion_puts_the_hand(raises):
    weights = dense_sampling_weights(len(raises.motions), 5, seed=2, include_examples=False)
    points, frames = hit_points(raises, weights)
    rig = find_rig(raises.motions[0])
    for w, point, frame in zip(weights, points, frames):
        hand = blended_motion(raises.motions, w).global_positions()[:, rig.right_arm.wrist]
        assert frame == np.argmax(hand[:, 1])  # these files are Y up
        np.testing.assert_allclose(point, hand[frame], atol=1e-9)


def test_blends_posed_ahead_in_one_pass_are_the_blends_posed_alone_bit_for_bit(raises):
    from core.reach import NEAR_FRAMES, ReachSpace

    chains = ReachSpace(raises, n_blends=10).chains
    weights = np.random.default_rng(3).random((4, len(raises.motions))) + 0.1  # (every row mixes every example,
    weights = weights / weights.sum(axis=1, keepdims=True)  # as the refinement's rows mix the same ones)
    probes = weights[0] + 1e-3 * (np.eye(len(weights[0]))[:5] - weights[0])
    around = int(round(chains.hits(weights[:1], between_frames=True)[1][0]))
    points, times, near = chains.hits_ahead(weights, probes, around, 1)
    alone = chains.hits(weights, between_frames=True)
    assert np.array_equal(points, alone[0]) and np.array_equal(times, alone[1])
    for n in (around - 1, around, around + 1):
        assert np.array_equal(near(n), chains.hits(probes, between_frames=True, near=n)[0])
    assert near(around + 2) is None and near(around - 2) is None  # (not blended: the caller blends them)
    assert NEAR_FRAMES >= 2  # (the peak search reads two frames either side of the best)


def test_targeting_an_examples_own_hit_point_returns_that_example(raises):
    space = parameter_space(raises, n_blends=300, seed=1)
    rig = find_rig(raises.motions[0])
    for k, motion in enumerate(raises.motions):
        hand = motion.global_positions()[:, rig.right_arm.wrist]
        own = hand[np.argmax(hand[:, 1])]
        chosen = space.weights[space.nearest(own)]
        assert chosen[k] > 0.99


def test_without_the_examples_themselves_a_blend_still_lands_near_each_examples_hit_point(raises):
    space = parameter_space(raises, n_blends=600, seed=1, include_examples=False)
    own = hit_points(raises, np.eye(len(raises.motions)))[0]
    spread = np.linalg.norm(own - own.mean(axis=0), axis=1).max()
    misses = [np.linalg.norm(space.hit_points[space.nearest(p)] - p) for p in own]
    assert max(misses) < 0.15 * spread


def test_the_blend_returned_for_a_target_puts_the_hand_where_the_space_said(raises):
    space = parameter_space(raises, n_blends=200, seed=3)
    target = space.hit_points[:8].mean(axis=0) + np.array([0.0, 1.0, 0.0])
    motion, weights, miss = blend_for_target(raises, space, target)
    hand = motion.global_positions()[:, find_rig(motion).right_arm.wrist]
    top = hand[np.argmax(hand[:, 1])]
    np.testing.assert_allclose(top, space.hit_points[space.nearest(target)], atol=1e-9)
    assert miss == pytest.approx(np.linalg.norm(top - target))
    assert miss <= np.linalg.norm(space.hit_points - target, axis=1).min() + 1e-12


SPACE_TRANSFORMS = {  # (the change, what it does to a point)
    "renamed": (TRANSFORMS["renamed"], lambda p: p),
    "metres": (TRANSFORMS["metres"], lambda p: p * 0.01),
    "z up": (TRANSFORMS["z up"], lambda p: quat.mul_vec(quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2), p)),
}


@pytest.mark.parametrize("name", sorted(SPACE_TRANSFORMS))
def test_the_parameter_space_does_not_depend_on_names_unit_or_up_axis(mocap, name):
    change, move_point = SPACE_TRANSFORMS[name]
    examples = [mocap(RAISE.format(i)) for i in (1, 2, 3)]
    plain = parameter_space(register_examples(examples), n_blends=50, seed=6)
    changed = parameter_space(register_examples([change(m) for m in examples]), n_blends=50, seed=6)
    np.testing.assert_array_equal(changed.hit_frames, plain.hit_frames)
    np.testing.assert_allclose(changed.hit_points, move_point(plain.hit_points), atol=1e-6)


def test_an_effector_that_is_not_a_joint_role_is_refused(raises):
    with pytest.raises(ValueError, match="effector"):
        hit_points(raises, np.eye(len(raises.motions)), effector="right.tentacle")


def test_examples_at_another_scale_or_with_legs_up_are_refused_naming_them(mocap):
    """Files carry no unit: two examples in centimetres and metres read alike, and blended, one
    pulls every joint towards its size. Beyond a factor of 2 in bone length they are refused, as is
    an example whose legs point up; the messages name the examples."""
    examples = [mocap(RAISE.format(i)) for i in (1, 2)]
    in_metres = replace(examples[1].skeleton, offsets=examples[1].skeleton.offsets * 0.01)
    metres = Motion(in_metres, examples[1].rotations, examples[1].positions * 0.01, examples[1].fps)
    with pytest.raises(ValueError, match=r"^example 'b.bvh' has bones 0.01 times as long as those of the reference "
                                         r"example 'a.bvh'"):
        register_examples([examples[0], metres], names=["a.bvh", "b.bvh"])
    with pytest.raises(ValueError, match=r"^example 1: the legs point up"):
        register_examples([examples[0], legs_flipped_up(examples[1])])
    with pytest.raises(ValueError, match=r"^example 'a.bvh': the legs point up"):
        register_examples([legs_flipped_up(examples[0]), examples[1]], names=["a.bvh", "b.bvh"])


# --------------------------------------------------------------------------
# Inside the space: the hull test (Lawson-Hanson), the refinement, the product (ReachSpace)

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from rig_names import CMU_NAMES  # noqa: E402

from core.__main__ import main  # noqa: E402
from core.bvh import read_bvh  # noqa: E402
from core.reach import ReachOptions, ReachSpace, hull_combination, nonnegative_least_squares  # noqa: E402

RAISES = Path(__file__).resolve().parents[2].parent / "shared" / "mocap" / "bandai2-raise"


@pytest.mark.parametrize("seed", range(6))
def test_nonnegative_least_squares_meets_the_optimality_conditions(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(4, 30)), rng.normal(size=4) * 3
    x = nonnegative_least_squares(a, b)
    gradient = a.T @ (b - a @ x)  # of -|ax - b|^2 / 2: no free direction may still descend
    assert (x >= 0).all()
    assert (gradient <= 1e-9).all()
    np.testing.assert_allclose(gradient[x > 0], 0.0, atol=1e-9)


def test_the_hull_of_a_cubes_corners_holds_its_inside_and_measures_its_outside():
    corners = np.array([[x, y, z] for x in (0.0, 1) for y in (0.0, 1) for z in (0.0, 1)])
    lam, distance = hull_combination(corners, [0.3, 0.9, 0.5])
    assert distance < 1e-9 and (lam >= 0).all() and lam.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(lam @ corners, [0.3, 0.9, 0.5], atol=1e-9)
    _, distance = hull_combination(corners, [1.5, 0.5, 2.0])
    assert distance == pytest.approx(np.hypot(0.5, 1.0), abs=1e-5)


@pytest.fixture(scope="module")
def all_raises():
    require(RAISES)
    return [read_bvh(p) for p in sorted(RAISES.glob("*.bvh"))]


@pytest.fixture(scope="module")
def raise_space(all_raises):
    return ReachSpace.build(all_raises), None


def held_out_targets(space, n, seed):
    """Hit points of random blends the space did not sample (another seed), and convex
    combinations of its sampled hit points: targets inside the space either way."""
    k = len(space.registration.motions)
    blends = dense_sampling_weights(k, n, seed=seed, include_examples=False)
    points = space.chains.hits(blends, between_frames=True)[0]
    mix = np.random.default_rng(seed).dirichlet(np.ones(4), size=n)
    chosen = np.random.default_rng(seed + 1).integers(0, len(space.space.hit_points), size=(n, 4))
    return np.concatenate([points, np.einsum("nc,ncd->nd", mix, space.space.hit_points[chosen])])


def test_inside_the_space_the_hand_hits_the_target_by_whole_body_blending(raise_space):
    space, _ = raise_space
    for target in held_out_targets(space, 6, seed=11)[:6]:  # (hit points of blends: whole-body reaches them)
        assert space.inside(target)
        result = space.reach(target)
        assert not result.partial and result.error <= space.tolerance
        np.testing.assert_allclose(np.linalg.norm(result.hit_point - target), result.error)


def test_a_target_is_inside_exactly_when_whole_body_blending_hits_it(raise_space):
    # Issue 24 item 7: the hull of the hit points holds targets no blend hits (the raises' hits lie
    # on a shell about the shoulder); "inside" counted those and their queries went silently to
    # partial blending. Now inside is what whole-body blending reaches, and the reach says why.
    space, _ = raise_space
    targets = held_out_targets(space, 6, seed=11)
    in_hull_missed = 0
    for target in targets:
        regular, result = space.regular_reach(target), space.reach(target)
        assert space.inside(target) == (regular.error <= space.tolerance)
        if space.inside(target):
            assert not result.partial and "whole-body blending (section 3.1) hits it" in result.why
        elif space.hull_distance(target) <= space.tolerance:
            in_hull_missed += 1
            assert result.partial and result.error < regular.error
            assert "inside the hull" in result.why and f"misses it by {regular.error:.3g}" in result.why
    assert in_hull_missed >= 2  # (combinations of hit points: in the hull, off the shell)


def test_a_reach_hits_at_its_highest_frame_and_starts_where_the_reference_starts(raise_space, all_raises):
    space, _ = raise_space
    target = held_out_targets(space, 1, seed=3)[0]
    result = space.reach(target)
    rig = find_rig(result.motion)
    pos = result.motion.global_positions()
    hand = pos[:, rig.right_arm.wrist]
    assert result.hit_frame == np.argmax(hand[:, 1])  # these files are Y up
    np.testing.assert_allclose(hand[result.hit_frame], result.hit_point, atol=1e-9)
    start = all_raises[0].global_positions()[0, rig.pelvis]
    np.testing.assert_allclose(pos[0, rig.pelvis, [0, 2]], start[[0, 2]], atol=1e-6)  # on the ground (Y up)
    # facing as the reference does, to the blend of the examples' headings (each placed facing so)
    heading, _ = start_placement(result.motion, rig, space.up)
    assert abs(heading - start_placement(all_raises[0], rig, space.up)[0]) < np.radians(2.0)
    assert result.motion.fps == all_raises[0].fps
    assert result.weights.shape == (40,) and result.weights.sum() == pytest.approx(1.0)


def test_a_target_beyond_the_space_is_reached_by_partial_blending(raise_space):
    space, _ = raise_space
    points = space.space.hit_points
    # beyond the side of the space (by a rule: 8 cm past the hit furthest along -X, at its height)
    target = points[np.argmin(points[:, 0])] + np.array([-8.0, 0, 0])
    assert not space.inside(target)
    regular, product = space.regular_reach(target), space.reach(target)
    assert product.partial and product.vertical_weights is not None
    # (measured: whole-body blending misses by 8.26 cm, partial blending with the limits by 5.91 cm,
    # without them by 2.79 cm; pinned within the hit tolerance, 0.38 cm)
    assert regular.error == pytest.approx(8.26, abs=space.tolerance)
    assert product.error == pytest.approx(5.91, abs=space.tolerance)
    assert "outside the hull" in product.why and "partial blending" in product.why
    # 8 cm beyond, farther than the cross-validation's left-out examples lie: the turns that would
    # reach it (40 to 50 degrees of chest and collar) go past what the examples do, and the report
    # says which joints stopped (issue 24 item 6)
    assert product.limited and all(name in product.why for name in product.limited)
    unlimited = ReachSpace(space.registration, options=ReachOptions(joint_limits=False)).reach(target)
    assert unlimited.error == pytest.approx(2.79, abs=space.tolerance) and not unlimited.limited


def test_far_beyond_the_space_partial_blending_answers_without_regular_blending(raise_space, monkeypatch):
    space, _ = raise_space
    points = space.space.hit_points
    target = points[np.argmin(points[:, 0])] + np.array([-8.0, 0, 0])  # (as above: 8 cm beyond the side)
    regular, partial = space.regular_reach(target), space.partial_reach(target)
    # regular blending first would give the same product: partial blending misses less
    assert partial.error < regular.error
    monkeypatch.setattr(space, "_regular", lambda *args: pytest.fail("regular blending was tried"))
    product = space.reach(target)
    assert product.partial and product.error == partial.error
    assert np.array_equal(product.weights, partial.weights)


def test_reach_refuses_bad_input(all_raises, raise_space):
    space, _ = raise_space
    with pytest.raises(ValueError, match="target"):
        space.reach([1.0, 2.0])
    with pytest.raises(ValueError, match="example"):
        ReachSpace.build([])
    with pytest.raises(ValueError, match="effector"):
        ReachSpace.build(all_raises[:2], effector="right.tentacle")
    with pytest.raises(ValueError, match="feature"):
        ReachSpace.build(all_raises[:2], feature="lowest")
    with pytest.raises(ValueError, match="skeleton"):
        ReachSpace.build([all_raises[0], all_raises[1].renamed({"Hips": "Pelvis"})])


REACH_TRANSFORMS = {  # (the change of the examples, of a point, of a length)
    "renamed": (lambda m: m.renamed(CMU_NAMES), lambda p: p, 1.0),
    "metres": (lambda m: m.scaled(0.01), lambda p: p * 0.01, 0.01),
    "z up": (TRANSFORMS["z up"], SPACE_TRANSFORMS["z up"][1], 1.0),
}


@pytest.mark.parametrize("name", sorted(REACH_TRANSFORMS))
def test_reaching_does_not_depend_on_names_unit_or_up_axis(all_raises, name):
    change, move_point, unit = REACH_TRANSFORMS[name]
    examples = all_raises[::5]
    plain = ReachSpace.build(examples, n_blends=400)
    changed = ReachSpace.build([change(m) for m in examples], n_blends=400)
    inside = held_out_targets(plain, 2, seed=8)[:2]
    outside = plain.space.hit_points[np.argmin(plain.space.hit_points[:, 0])] + np.array([-8.0, 0, 0])
    for target in list(inside) + [outside]:
        a, b = plain.reach(target), changed.reach(move_point(target))
        assert b.partial == a.partial and len(b.limited) == len(a.limited)  # (the same joints, by their names)
        assert b.error / unit == pytest.approx(a.error, abs=0.05)
        np.testing.assert_allclose(b.hit_point, move_point(a.hit_point), atol=0.05 * unit)
    assert a.partial and a.error < plain.regular_reach(outside).error


def test_reaching_does_not_depend_on_the_frame_rate(all_raises):
    # (build and query times are the benchmark's, tests/bench/reach_crossval.py: not asserted here)
    examples = all_raises[::5]
    plain = ReachSpace.build(examples, n_blends=400)
    faster = ReachSpace.build([m.resampled(4 * m.fps) for m in examples], n_blends=400)
    assert faster.reach(plain.space.hit_points[0]).motion.fps == 4 * examples[0].fps
    inside = held_out_targets(plain, 2, seed=8)[:2]
    outside = plain.space.hit_points[np.argmin(plain.space.hit_points[:, 0])] + np.array([-8.0, 0, 0])
    for target in list(inside) + [outside]:
        a, b = plain.reach(target), faster.reach(target)
        assert b.error < (1.0 if plain.inside(target) else a.error + 0.1)  # cm, as at the captured rate
        # the hand gets there at the same moment, within a frame of the captured rate
        assert abs(b.hit_frame / b.motion.fps - a.hit_frame / a.motion.fps) <= 1.0 / a.motion.fps + 1e-6
        # and the body moves alike on the way: the pelvis path within 1 cm at the captured frames
        rig = find_rig(a.motion)
        n = min(a.motion.n_frames, b.motion.n_frames // 4)
        pelvis_a = a.motion.global_positions()[:n, rig.pelvis]
        pelvis_b = b.motion.global_positions()[: 4 * n : 4, rig.pelvis]
        assert np.median(np.linalg.norm(pelvis_a - pelvis_b, axis=1)) < 1.0


def test_a_target_moved_a_little_moves_the_reach_a_little(all_raises):
    # An animator drags the target a hair and reaches again: the same blend, nudged, not another one.
    # Bounds: 1e-9 cm is rounding, so the weights move by rounding too (1e-6); 1 mm is a thousandth
    # of the raises' reach: the weights may move by 0.05 (the blend-to-hit map is steep in places),
    # the hand along its path by a few times the target's move (median 0.5 cm: the output is retimed on
    # its blend's clock, the hit pinned to a whole frame, so the clock may shift by part of a frame).
    space = ReachSpace.build(all_raises[::5], n_blends=400)
    rig = find_rig(all_raises[0])
    direction = np.random.default_rng(2).normal(size=(3, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    for target, towards in zip(held_out_targets(space, 3, seed=8)[:3], direction):
        a = space.reach(target)
        for size, weights_bound, path_bound in ((1e-9, 1e-6, 1e-6), (0.1, 0.05, 0.5)):
            b = space.reach(target + size * towards)
            assert b.partial == a.partial
            assert np.abs(b.weights - a.weights).max() < weights_bound
            assert abs(b.hit_frame / b.motion.fps - a.hit_frame / a.motion.fps) <= 1.0 / a.motion.fps + 1e-6
            n = min(a.motion.n_frames, b.motion.n_frames)
            hand_a = a.motion.global_positions()[:n, rig.right_arm.wrist]
            hand_b = b.motion.global_positions()[:n, rig.right_arm.wrist]
            assert np.median(np.linalg.norm(hand_a - hand_b, axis=1)) < path_bound


# --------------------------------------------------------------------------
# Kicks (section 3.2's second case): the kicking leg spliced, its hip turned


def kicks_of(motion):
    """The kicks of one clip as separate examples, by a rule: each stretch where the right ankle
    rises above half its height range is a kick; the clip is cut halfway between their peaks."""
    rig = find_rig(motion)
    height = motion.global_positions()[:, rig.right_leg.ankle, 1]  # Y up
    high = (height - height.min()) > 0.5 * (height.max() - height.min())
    edges = np.flatnonzero(np.diff(high.astype(int)))
    peaks = [int(a + np.argmax(height[a:b + 1])) for a, b in zip(edges[::2], edges[1::2])]
    cuts = [0] + [(a + b) // 2 for a, b in zip(peaks, peaks[1:])] + [motion.n_frames]
    return [motion[a:b] for a, b in zip(cuts, cuts[1:])]


def test_a_kick_beyond_its_examples_is_reached_by_turning_the_kicking_hip(mocap):
    kicks = kicks_of(mocap("bandai1/kick_normal_001"))
    assert len(kicks) == 3
    space = ReachSpace.build(kicks, effector="right.ankle")
    own = space.chains.hits(np.eye(3), between_frames=True)[0]
    for offset in ([0.0, 10, 0], [0, -10, 0], [10, 0, 0]):
        target = own[0] + np.array(offset)
        regular, product = space.regular_reach(target), space.reach(target)
        assert product.partial
        assert product.error < 0.7 * regular.error
        rig = find_rig(product.motion)
        foot = product.motion.global_positions()[:, rig.right_leg.ankle]
        np.testing.assert_allclose(foot[product.hit_frame], product.hit_point, atol=1e-9)


# --------------------------------------------------------------------------
# The command line


@pytest.fixture()
def raise_folder(tmp_path):
    """Ten of the raises (every fourth by file name), linked into a folder of their own."""
    require(RAISES)
    folder = tmp_path / "raises"
    folder.mkdir()
    for path in sorted(RAISES.glob("*.bvh"))[::4]:
        (folder / path.name).symlink_to(path)
    return folder


def test_the_reach_command_writes_a_motion_that_hits_the_target_in_the_first_files_coordinates(raise_folder, tmp_path):
    out, report_path = tmp_path / "out.bvh", tmp_path / "r.json"
    target = [-15.7, 128.4, 18.6]
    assert main(["reach", str(raise_folder), "--target=-15.7,128.4,18.6", "-o", str(out),
                 "--report", str(report_path)]) == 0
    report = json.loads(report_path.read_text())
    assert {"error", "weights", "partial", "hit_point", "hit_frame"} <= set(report)
    assert isinstance(report["partial"], bool) and isinstance(report["error"], float)
    assert sorted(report["weights"]) == sorted(p.name for p in raise_folder.iterdir())
    motion = read_bvh(out)
    hand = motion.global_positions()[:, find_rig(motion).right_arm.wrist]
    np.testing.assert_allclose(hand[report["hit_frame"]], report["hit_point"], atol=1e-3)
    assert np.linalg.norm(hand[report["hit_frame"]] - target) == pytest.approx(report["error"], abs=1e-3)
    # 10.1 cm beyond these ten examples' hull: partial blending with the turned joints kept to their
    # range misses it by 2.81 cm (measured; pinned within the hit tolerance, 0.38 cm) and says so
    assert report["error"] == pytest.approx(2.81, abs=0.38)
    assert report["partial"] and report["limited"] and f"(missing by {report['error']:.3g})" in report["why"]
    assert report["why"] and report["feet_held"]
    first = read_bvh(sorted(raise_folder.iterdir())[0])
    pelvis = find_rig(first).pelvis
    np.testing.assert_allclose(motion.global_positions()[0, pelvis, [0, 2]],
                               first.global_positions()[0, pelvis, [0, 2]], atol=1e-3)  # (as written in the file)


@pytest.mark.parametrize("args, message", [
    (["--target", "1,2"], "three numbers"),
    (["--target", "1,2,x"], "three numbers"),
    (["--target", "1,2,3", "--effector", "right.tentacle"], "effector"),
])
def test_the_reach_command_says_what_to_fix(raise_folder, tmp_path, capsys, args, message):
    assert main(["reach", str(raise_folder), *args, "-o", str(tmp_path / "o.bvh")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "o.bvh").exists()


def test_the_reach_command_refuses_a_folder_without_examples(tmp_path, capsys):
    assert main(["reach", str(tmp_path), "--target", "1,2,3", "-o", str(tmp_path / "o.bvh")]) == 2
    assert "no .bvh files" in capsys.readouterr().err
    assert main(["reach", str(tmp_path / "missing"), "--target", "1,2,3", "-o", str(tmp_path / "o.bvh")]) == 2
    assert "not a folder" in capsys.readouterr().err
