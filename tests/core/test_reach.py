"""Time alignment of examples of one action (Juang et al. 2009, section 3.1)."""

import numpy as np
import pytest

from core import quat
from core.rig import find_rig
from core.reach import (
    accumulated_cost,
    blend_for_target,
    blend_weights,
    blended_motion,
    blended_rotations,
    hit_frame,
    hit_points,
    parameter_space,
    dynamic_time_warping,
    example_times,
    frame_distances,
    register_examples,
    sampled_at,
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
    w = blend_weights(10, 500, per_blend=3, seed=4)
    assert w.shape == (510, 10)
    np.testing.assert_array_equal(w[:10], np.eye(10))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    assert ((w[10:] > 0).sum(axis=1) == 3).all()
    np.testing.assert_array_equal(w, blend_weights(10, 500, per_blend=3, seed=4))


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
    weights = blend_weights(len(raises.motions), 5, seed=2, include_examples=False)
    points, frames = hit_points(raises, weights)
    rig = find_rig(raises.motions[0])
    for w, point, frame in zip(weights, points, frames):
        hand = blended_motion(raises.motions, w).global_positions()[:, rig.right_arm.wrist]
        assert frame == np.argmax(hand[:, 1])  # these files are Y up
        np.testing.assert_allclose(point, hand[frame], atol=1e-9)


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
