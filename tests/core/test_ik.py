"""Two-bone leg IK: FK of IK's output hits the target, the knee keeps its side, the foot keeps its orientation."""

import numpy as np
import pytest

from core import quat
from core.ik import bend_directions, leg_ik, two_bone_ik
from core.motion import Motion, Skeleton

PELVIS, HIP, TWIST, KNEE, ANKLE, TOE = range(6)


def leg_skeleton():
    """pelvis -> hip -> thigh twist bone -> knee -> ankle -> toe, Z up, knee bent slightly forward (-Y) at rest."""
    names = ("pelvis", "hip", "thigh_twist", "knee", "ankle", "toe")
    parents = [-1, 0, 1, 2, 3, 4]
    offsets = [[0.0, 0.0, 1.0], [0.1, 0.0, -0.05], [0.0, 0.0, -0.2], [0.0, -0.02, -0.25], [0.0, 0.02, -0.42], [0.0, -0.13, -0.06]]
    return Skeleton(names, parents, offsets, up=[0.0, 0.0, 1.0])


def random_motion(F=64, seed=0):
    rng = np.random.default_rng(seed)
    skel = leg_skeleton()
    rot = quat.normalize(quat.identity((F, len(skel))) + 0.4 * rng.normal(size=(F, len(skel), 4)))
    root = rng.normal(scale=0.5, size=(F, 3))
    return Motion.from_root(skel, rot, root, 30)


def leg_lengths(motion):
    """Per-frame hip-knee and knee-ankle distances (the twist bone's rotation changes the first)."""
    g = motion.global_positions()
    return np.linalg.norm(g[:, KNEE] - g[:, HIP], axis=-1), np.linalg.norm(g[:, ANKLE] - g[:, KNEE], axis=-1)


def reachable_targets(motion, seed=1):
    """Targets at random directions from the hip, at distances strictly inside the reachable shell."""
    rng = np.random.default_rng(seed)
    l1, l2 = leg_lengths(motion)
    hip = motion.global_positions()[:, HIP]
    d = rng.normal(size=hip.shape)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    r = rng.uniform(abs(l1 - l2) + 0.02, l1 + l2 - 0.02)
    return hip + d * r[:, None]


def perpendicular_part(v, axis):
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    return v - np.sum(v * axis, axis=-1, keepdims=True) * axis


def same_rotation(a, b, atol=1e-9):
    return np.all(np.abs(np.abs(np.sum(a * b, axis=-1)) - 1.0) < atol)


def test_fk_of_ik_output_hits_reachable_targets():
    m = random_motion()
    targets = reachable_targets(m)
    out = leg_ik(m, HIP, KNEE, ANKLE, targets, poles=np.tile([0.0, -1.0, 0.0], (len(m), 1)))
    np.testing.assert_allclose(out.global_positions()[:, ANKLE], targets, atol=1e-6)


def test_fk_of_ik_output_hits_targets_with_the_default_knee_direction():
    m = random_motion(seed=3)
    targets = reachable_targets(m, seed=4)
    out = leg_ik(m, "hip", "knee", "ankle", targets)
    np.testing.assert_allclose(out.global_positions()[:, ANKLE], targets, atol=1e-6)


def test_deltas_move_the_chain_as_documented():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(4, 5, 3))
    b = a + rng.normal(size=a.shape)
    c = b + rng.normal(size=a.shape)
    l1, l2 = np.linalg.norm(b - a, axis=-1), np.linalg.norm(c - b, axis=-1)
    d = rng.normal(size=a.shape)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    t = a + d * (np.abs(l1 - l2) + rng.uniform(0.05, 0.95, l1.shape) * (l1 + l2 - np.abs(l1 - l2)))[..., None]
    root_delta, mid_delta = two_bone_ik(a, b, c, t, rng.normal(size=a.shape))
    assert root_delta.shape == mid_delta.shape == (4, 5, 4)
    new_mid = a + quat.mul_vec(root_delta, b - a)
    new_end = new_mid + quat.mul_vec(quat.mul(root_delta, mid_delta), c - b)
    np.testing.assert_allclose(new_end, t, atol=1e-9)
    # vectorised over leading axes: the same as solving one chain at a time
    one = two_bone_ik(a[2, 3], b[2, 3], c[2, 3], t[2, 3], np.ones(3))
    both = two_bone_ik(a, b, c, t, np.ones(3))
    np.testing.assert_allclose(one[0], both[0][2, 3], atol=1e-12)
    np.testing.assert_allclose(one[1], both[1][2, 3], atol=1e-12)


def test_unreachable_targets_give_a_straight_leg_pointing_at_the_target():
    m = random_motion(seed=5)
    l1, l2 = leg_lengths(m)
    reach = (l1 + l2)[:, None]
    hip = m.global_positions()[:, HIP]
    rng = np.random.default_rng(6)
    d = rng.normal(size=hip.shape)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    targets = hip + d * reach * rng.uniform(1.05, 3.0, size=(len(hip), 1))
    g = leg_ik(m, HIP, KNEE, ANKLE, targets, poles=np.tile([0.0, -1.0, 0.0], (len(m), 1))).global_positions()
    np.testing.assert_allclose(g[:, ANKLE], hip + d * reach, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(perpendicular_part(g[:, KNEE] - hip, d), axis=-1), 0.0, atol=1e-6)


def test_knee_ends_on_the_pole_side():
    m = random_motion(seed=7)
    targets = reachable_targets(m, seed=8)
    poles = np.random.default_rng(9).normal(size=targets.shape)
    g = leg_ik(m, HIP, KNEE, ANKLE, targets, poles=poles).global_positions()
    line = targets - g[:, HIP]
    knee_side = perpendicular_part(g[:, KNEE] - g[:, HIP], line)
    assert np.all(np.sum(knee_side * perpendicular_part(poles, line), axis=-1) > 0.0)
    # ... and exactly towards it: knee, hip, target and pole lie in one plane
    normal = np.cross(line, perpendicular_part(poles, line))
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    np.testing.assert_allclose(np.sum(normal * (g[:, KNEE] - g[:, HIP]), axis=-1), 0.0, atol=1e-9)


def test_default_pole_keeps_the_knee_in_its_original_plane():
    m = random_motion(seed=10)
    g0 = m.global_positions()
    # move the ankle within the original hip-knee-ankle plane
    plane_normal = np.cross(g0[:, KNEE] - g0[:, HIP], g0[:, ANKLE] - g0[:, HIP])
    plane_normal /= np.linalg.norm(plane_normal, axis=-1, keepdims=True)
    targets = g0[:, HIP] + 0.8 * (g0[:, ANKLE] - g0[:, HIP])
    g = leg_ik(m, HIP, KNEE, ANKLE, targets).global_positions()
    np.testing.assert_allclose(g[:, ANKLE], targets, atol=1e-9)
    np.testing.assert_allclose(np.sum(plane_normal * (g[:, KNEE] - g[:, HIP]), axis=-1), 0.0, atol=1e-9)
    out = leg_ik(m, HIP, KNEE, ANKLE, targets)
    same_side = np.sum(bend_directions(m, HIP, KNEE, ANKLE) * bend_directions(out, HIP, KNEE, ANKLE), axis=-1)
    np.testing.assert_allclose(same_side, 1.0, atol=1e-9)


def test_ankle_world_rotation_is_kept_and_other_joints_untouched():
    m = random_motion(seed=11)
    out = leg_ik(m, HIP, KNEE, ANKLE, reachable_targets(m, seed=12))
    _, r0 = m.global_transforms()
    _, r1 = out.global_transforms()
    assert same_rotation(r1[:, ANKLE], r0[:, ANKLE])
    assert same_rotation(r1[:, TOE], r0[:, TOE])  # the toe follows the flat foot
    # the twist bone between hip and knee moves rigidly with the thigh: its local rotation is kept
    for j in (PELVIS, TWIST, TOE):
        np.testing.assert_allclose(out.rotations[:, j], m.rotations[:, j], atol=1e-15)
    np.testing.assert_array_equal(out.positions, m.positions)


def test_given_ankle_rotations_are_applied():
    m = random_motion(seed=13)
    want = quat.normalize(np.random.default_rng(14).normal(size=(len(m), 4)))
    out = leg_ik(m, HIP, KNEE, ANKLE, reachable_targets(m), ankle_rotations=want)
    assert same_rotation(out.global_transforms()[1][:, ANKLE], want)


def test_the_input_motion_is_not_modified():
    m = random_motion(seed=15)
    rot, pos = m.rotations.copy(), m.positions.copy()
    targets = reachable_targets(m)
    targets_copy = targets.copy()
    leg_ik(m, HIP, KNEE, ANKLE, targets)
    np.testing.assert_array_equal(m.rotations, rot)
    np.testing.assert_array_equal(m.positions, pos)
    np.testing.assert_array_equal(targets, targets_copy)


def test_degenerate_input_gives_no_nan():
    up, down, fwd = np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -1.0]), np.array([0.0, -1.0, 0.0])
    hip = np.zeros(3)
    knee, ankle = hip + 0.45 * down, hip + 0.88 * down  # straight leg
    cases = {
        "target at the hip": (hip, knee, ankle, hip, fwd),
        "straight leg, pole along it": (hip, knee, ankle, hip + 0.5 * down, down),
        "straight leg, zero pole": (hip, knee, ankle, hip + 0.5 * down, np.zeros(3)),
        "target straight up, opposite the leg": (hip, knee, ankle, hip + 0.5 * up, fwd),
        "unreachable straight on": (hip, knee, ankle, hip + 5.0 * down, fwd),
        "target at the current ankle": (hip, knee, ankle, ankle, fwd),
        "zero-length bones": (hip, hip, hip, hip + down, fwd),
        "equal bones folded onto the hip": (hip, hip + 0.4 * down, hip, hip, fwd),
    }
    for name, (a, b, c, t, p) in cases.items():
        root_delta, mid_delta = two_bone_ik(a, b, c, t, p)
        assert np.all(np.isfinite(root_delta)) and np.all(np.isfinite(mid_delta)), name
        np.testing.assert_allclose(np.linalg.norm(root_delta), 1.0, err_msg=name)
        np.testing.assert_allclose(np.linalg.norm(mid_delta), 1.0, err_msg=name)


def test_straight_leg_bends_towards_the_pole():
    hip, knee, ankle = np.zeros(3), np.array([0.0, 0.0, -0.45]), np.array([0.0, 0.0, -0.88])
    target = np.array([0.0, 0.0, -0.6])
    root_delta, mid_delta = two_bone_ik(hip, knee, ankle, target, np.array([0.0, -1.0, 0.0]))
    new_knee = quat.mul_vec(root_delta, knee)
    new_ankle = new_knee + quat.mul_vec(quat.mul(root_delta, mid_delta), ankle - knee)
    np.testing.assert_allclose(new_ankle, target, atol=1e-12)
    assert new_knee[1] < -0.1 and abs(new_knee[0]) < 1e-12


def test_a_leg_straight_in_every_frame_needs_poles():
    skel = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1], [[0, 0, 1.0], [0, 0, -0.45], [0, 0, -0.43]], up=[0, 0, 1.0])
    m = Motion.from_root(skel, quat.identity((3, 3)), np.zeros((3, 3)), 30)
    targets = np.tile([0.0, 0.0, -0.6], (3, 1))
    with pytest.raises(ValueError, match="poles="):
        leg_ik(m, 0, 1, 2, targets)
    out = leg_ik(m, 0, 1, 2, targets, poles=np.tile([0.0, -1.0, 0.0], (3, 1)))
    np.testing.assert_allclose(out.global_positions()[:, 2], targets, atol=1e-12)


def test_straight_frames_borrow_the_knee_direction_of_the_nearest_bent_frame():
    skel = Skeleton(("pelvis", "hip", "knee", "ankle"), [-1, 0, 1, 2],
                    [[0, 0, 1.0], [0.1, 0, -0.05], [0, 0, -0.45], [0, 0, -0.43]], up=[0, 0, 1.0])
    x, z = np.eye(3)[0], np.eye(3)[2]
    rot = quat.identity((4, 4))
    rot[0, 2] = quat.from_axis_angle(x, 0.6)  # frame 0: knee bent, pointing -Y
    rot[1, 0] = quat.from_axis_angle(z, np.pi / 2)  # frame 1: straight, body turned 90 degrees
    rot[3, 1] = quat.from_axis_angle(z, np.pi)  # frame 3: leg turned round, knee bent, pointing +Y
    rot[3, 2] = quat.from_axis_angle(x, 0.6)  # frame 2: straight; frame 3 is its nearest bent frame
    m = Motion.from_root(skel, rot, np.zeros((4, 3)), 30)
    d = bend_directions(m, "hip", "knee", "ankle")
    assert d[0] @ [0.0, -1.0, 0.0] > 0.9 and d[3] @ [0.0, 1.0, 0.0] > 0.9
    np.testing.assert_allclose(d[1], quat.mul_vec(rot[1, 0], d[0]), atol=1e-12)  # frame 0's, turned with the pelvis
    np.testing.assert_allclose(d[2], d[3], atol=1e-12)


def test_bad_arguments_raise_with_the_facts():
    m = random_motion(F=4)
    with pytest.raises(ValueError, match=r"targets must have shape \(4, 3\)"):
        leg_ik(m, HIP, KNEE, ANKLE, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="not a leg chain"):
        leg_ik(m, KNEE, HIP, ANKLE, np.zeros((4, 3)))
    with pytest.raises(KeyError, match="no joint named"):
        leg_ik(m, "thigh", KNEE, ANKLE, np.zeros((4, 3)))


def test_zero_length_clip():
    skel = leg_skeleton()
    m = Motion.from_root(skel, np.zeros((0, len(skel), 4)), np.zeros((0, 3)), 30)
    assert leg_ik(m, HIP, KNEE, ANKLE, np.zeros((0, 3))).n_frames == 0


def test_solving_some_frames_changes_only_those_and_as_solving_them_all_does():
    """legs_ik(frames=...) leaves every other frame as it is and solves the chosen ones
    to the last bit as a solve of every frame does (knee directions from every frame)."""
    from core.ik import legs_ik

    m = random_motion(F=40, seed=5)
    targets = reachable_targets(m, seed=6)[:, None]
    rows = np.array([0, 3, 4, 5, 17, 39])
    every = legs_ik(m, [(HIP, KNEE, ANKLE)], targets).rotations
    some = legs_ik(m, [(HIP, KNEE, ANKLE)], targets, frames=rows).rotations
    np.testing.assert_array_equal(some[rows], every[rows])
    others = np.setdiff1d(np.arange(len(m)), rows)
    np.testing.assert_array_equal(some[others], m.rotations[others])
