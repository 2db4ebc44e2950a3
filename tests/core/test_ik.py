"""Two-bone leg IK: FK of IK's output hits the target, the knee keeps its side, the foot keeps its orientation,
and nothing snaps: not a knee reaching full extension, nor one passing through straight."""

import numpy as np
import pytest

from core import quat
from core.ik import SOFT_ZONE, bend_directions, leg_ik, soft_extension, two_bone_ik
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
    """Targets at random directions from the hip, at distances strictly inside the reachable shell
    and short of the last SOFT_ZONE of it, where the solver eases the reach (met short there)."""
    rng = np.random.default_rng(seed)
    l1, l2 = leg_lengths(motion)
    hip = motion.global_positions()[:, HIP]
    d = rng.normal(size=hip.shape)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    r = rng.uniform(abs(l1 - l2) + 0.02, (1.0 - SOFT_ZONE) * (l1 + l2) - 0.02)
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


def test_targets_in_the_soft_zone_or_beyond_are_met_short_on_the_hip_target_line():
    """A target in the last SOFT_ZONE of the reach, or out of reach, gives a leg pointing at it,
    its ankle at soft_extension's distance from the hip: short of straight, never snapped to it.
    With zone=0 (the plain clamp) an unreachable target gives the straight leg pointing at it."""
    m = random_motion(seed=5)
    l1, l2 = leg_lengths(m)
    reach = (l1 + l2)[:, None]
    hip = m.global_positions()[:, HIP]
    rng = np.random.default_rng(6)
    d = rng.normal(size=hip.shape)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    # (out to 1.1 reaches: further, tanh reaches 1 to within rounding, and the leg is straight)
    r = reach * rng.uniform(1.0 - SOFT_ZONE, 1.1, size=(len(hip), 1))
    poles = np.tile([0.0, -1.0, 0.0], (len(m), 1))
    g = leg_ik(m, HIP, KNEE, ANKLE, hip + d * r, poles=poles).global_positions()
    np.testing.assert_allclose(g[:, ANKLE], hip + d * soft_extension(r, reach), atol=1e-9)
    assert np.all(np.linalg.norm(g[:, ANKLE] - hip, axis=-1) < reach[:, 0] - 1e-9)  # never straight
    straight = leg_ik(m, HIP, KNEE, ANKLE, hip + d * reach * 1.05, poles=poles, zone=0.0).global_positions()
    np.testing.assert_allclose(straight[:, ANKLE], hip + d * reach, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(perpendicular_part(straight[:, KNEE] - hip, d), axis=-1), 0.0, atol=1e-6)


def test_soft_extension_is_the_identity_short_of_its_zone_and_eases_smoothly_into_the_reach():
    """Below (1 - zone) of the reach the distance is left alone; above, it rises with the
    distance, stays short of the reach however far the target, and joins the identity
    with its slope and its curvature (no step in a knee's acceleration where the zone starts)."""
    reach, zone = 2.0, 0.05
    start = (1.0 - zone) * reach
    below = np.linspace(0.0, start, 50)
    np.testing.assert_array_equal(soft_extension(below, reach, zone), below)
    d = np.linspace(start, (1.0 + 4.0 * zone) * reach, 20001)  # (further, it is the reach to within rounding)
    s = soft_extension(d, reach, zone)
    assert np.all(np.diff(s) > 0.0) and np.all(s < reach)
    assert soft_extension(np.array(100.0 * reach), reach, zone) <= reach
    h = 1e-4 * zone * reach  # one-sided differences just inside the zone
    x = start + np.array([0.0, h, 2.0 * h])
    slope = np.diff(soft_extension(x, reach, zone)) / h
    assert abs(slope[0] - 1.0) < 1e-4 and abs(slope[1] - slope[0]) < 1e-4 * h / (zone * reach) * 1e3
    assert soft_extension(np.array(5.0), reach, 0.0) == reach  # zone 0: the clamp


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


def test_straight_frames_take_the_knee_direction_of_the_bent_frames_either_side_in_the_pelvis_frame():
    skel = Skeleton(("pelvis", "hip", "knee", "ankle"), [-1, 0, 1, 2],
                    [[0, 0, 1.0], [0.1, 0, -0.05], [0, 0, -0.45], [0, 0, -0.43]], up=[0, 0, 1.0])
    x, z = np.eye(3)[0], np.eye(3)[2]
    rot = quat.identity((5, 4))
    rot[0, 2] = quat.from_axis_angle(x, 0.6)  # frame 0: knee bent, pointing -Y
    rot[1, 0] = quat.from_axis_angle(z, np.pi / 2)  # frames 1-3: straight, body turned 90 degrees
    rot[2, 0] = quat.from_axis_angle(z, np.pi / 2)
    rot[3, 0] = quat.from_axis_angle(z, np.pi / 2)
    rot[4, 1] = quat.from_axis_angle(z, np.pi / 2)  # frame 4: thigh turned 90 degrees, knee bent, pointing +X
    rot[4, 2] = quat.from_axis_angle(x, 0.6)
    m = Motion.from_root(skel, rot, np.zeros((5, 3)), 30)
    d = bend_directions(m, "hip", "knee", "ankle")
    assert d[0] @ [0.0, -1.0, 0.0] > 0.9 and d[4] @ [1.0, 0.0, 0.0] > 0.9
    # in the pelvis frame, from frame 0's direction round to frame 4's, in order, the middle half way
    local = quat.inv_mul_vec(rot[:, 0], d)
    turned = np.arctan2(local[:, 0], -local[:, 1])  # 0 at -Y, pi/2 at +X
    assert turned[0] == pytest.approx(0.0, abs=1e-9) and turned[4] == pytest.approx(np.pi / 2, abs=1e-9)
    assert np.all(np.diff(turned) > 0.0) and turned[2] == pytest.approx(np.pi / 4, abs=1e-9)
    # bent on one side only: its direction, carried with the pelvis
    one_side = Motion.from_root(skel, rot[:4], np.zeros((4, 3)), 30)
    d = bend_directions(one_side, "hip", "knee", "ankle")
    np.testing.assert_allclose(d[1:], quat.mul_vec(rot[1:4, 0], np.broadcast_to(d[0], (3, 3))), atol=1e-12)


# --- nothing snaps ----------------------------------------------------------------------


def equal_leg_skeleton():
    """pelvis -> hip -> knee -> ankle, Z up, thigh and shin of equal length (the worst case for a
    knee near full extension), the knee bent a little forward (-Y) at rest."""
    return Skeleton(("pelvis", "hip", "knee", "ankle"), [-1, 0, 1, 2],
                    [[0.0, 0.0, 1.0], [0.1, 0.0, -0.05], [0.0, -0.02, -0.45], [0.0, 0.02, -0.45]], up=[0.0, 0.0, 1.0])


def test_a_knee_reaching_through_full_extension_moves_no_faster_than_twice_its_target_and_never_jolts():
    """The hip still, the ankle's target drawn steadily outward from 90 % to 110 % of the leg's
    reach, 4001 samples: the knee never moves faster than twice the target, and its acceleration
    has no spike above twice its median over the pass. The pass is the stretch a clamp or a
    soft zone changes, as far out as in, centred on full reach: below it the knee moves as the
    plain law of cosines has it (its slow acceleration far from straight would only lower the
    median), beyond it the leg barely moves. A clamped distance snaps the knee straight at
    full reach: its speed there grows without bound."""
    skel = equal_leg_skeleton()
    F = 4001
    m = Motion.from_root(skel, quat.identity((F, 4)), np.zeros((F, 3)), 30)
    g0 = m.global_positions()
    reach = np.linalg.norm(g0[0, 2] - g0[0, 1]) + np.linalg.norm(g0[0, 3] - g0[0, 2])
    way = (g0[0, 3] - g0[0, 1]) / np.linalg.norm(g0[0, 3] - g0[0, 1])
    r = np.linspace(0.9, 1.1, F) * reach
    knee = leg_ik(m, 1, 2, 3, g0[:, 1] + r[:, None] * way).global_positions()[:, 2]
    dr = r[1] - r[0]
    speed = np.linalg.norm(np.diff(knee, axis=0), axis=-1) / dr
    accel = np.linalg.norm(knee[2:] - 2.0 * knee[1:-1] + knee[:-2], axis=-1) / dr**2
    assert speed.max() <= 2.0, f"the knee moves {speed.max():.1f}x as fast as its target"
    assert accel.max() <= 2.0 * np.median(accel), f"a spike of {accel.max() / np.median(accel):.1f}x the median"


def straightening_leg(F=61, twist=0.8, noise=0.0):
    """A leg bending forward (-Y), straight for the middle fifth of the frames and bending again,
    its thigh turning about itself by ``twist`` radians over the clip (so the knee's plane turns),
    the pelvis still; ``noise``: a sideways bend of that many radians throughout, the size of
    rounding, which gives a straight leg a bend plane of its own."""
    skel = equal_leg_skeleton()
    skel = Skeleton(skel.names, skel.parents, [[0.0, 0.0, 1.0], [0.1, 0.0, -0.05], [0.0, 0.0, -0.45], [0.0, 0.0, -0.45]],
                    up=[0.0, 0.0, 1.0])
    t = np.linspace(-1.0, 1.0, F)
    x, y, z = np.eye(3)
    rot = quat.identity((F, 4))
    rot[:, 1] = quat.from_axis_angle(z, twist * (t + 1.0) / 2.0)
    rot[:, 2] = quat.mul(quat.from_axis_angle(x, 0.5 * np.maximum(np.abs(t) - 0.2, 0.0)),
                         quat.from_axis_angle(y, np.full(F, noise)))
    return Motion.from_root(skel, rot, np.zeros((F, 3)), 30)


def frame_to_frame_angles(rotations):
    return quat.angle(rotations[1:], rotations[:-1])


def test_knee_directions_turn_smoothly_through_frames_where_the_leg_is_straight():
    """The knee's plane turns with the thigh while the leg straightens and bends again: the
    knee direction turns by about as much on every frame, carried through the straight ones
    (taking the nearest bent frame's stepped half the turn in one frame, half way through)."""
    m = straightening_leg()
    d = bend_directions(m, "hip", "knee", "ankle")
    change = np.arccos(np.clip(np.sum(d[1:] * d[:-1], axis=-1), -1.0, 1.0))
    assert change.max() <= 2.0 * np.median(change), f"a step of {change.max() / np.median(change):.1f}x the typical"


def test_an_input_leg_passing_through_straight_gives_rotations_continuous_frame_to_frame():
    """Solved onto targets nearer the hip, with a pole turning smoothly with the thigh, a leg
    whose input passes through straight, with a bend plane of rounding size there, turns its
    thigh and shin by about as much on every frame: the straight frames do not bend about that
    plane's normal and twist the thigh round to the pole (the knee's place is the same either
    way; its joints' rotations are not)."""
    twist = 0.8
    m = straightening_leg(twist=twist, noise=1e-7)
    g = m.global_positions()
    way = (g[:, 3] - g[:, 1]) / np.linalg.norm(g[:, 3] - g[:, 1], axis=-1, keepdims=True)
    targets = g[:, 1] + 0.85 * 0.9 * way
    t = np.linspace(-1.0, 1.0, len(m))
    poles = quat.mul_vec(quat.from_axis_angle(np.eye(3)[2], twist * (t + 1.0) / 2.0), np.array([0.0, -1.0, 0.0]))
    out = leg_ik(m, 1, 2, 3, targets, poles=poles)
    np.testing.assert_allclose(out.global_positions()[:, 3], targets, atol=1e-9)
    world = out.global_transforms()[1]
    for joint, name in ((1, "thigh"), (2, "shin")):
        change = frame_to_frame_angles(world[:, joint])
        assert change.max() <= 2.0 * np.median(change), f"the {name} turns {change.max() / np.median(change):.1f}x the typical"


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
    to the last bit as a solve of every frame does (the random legs are clearly bent: each
    knee's direction its own)."""
    from core.ik import legs_ik

    m = random_motion(F=40, seed=5)
    targets = reachable_targets(m, seed=6)[:, None]
    rows = np.array([0, 3, 4, 5, 17, 39])
    every = legs_ik(m, [(HIP, KNEE, ANKLE)], targets).rotations
    some = legs_ik(m, [(HIP, KNEE, ANKLE)], targets, frames=rows).rotations
    np.testing.assert_array_equal(some[rows], every[rows])
    others = np.setdiff1d(np.arange(len(m)), rows)
    np.testing.assert_array_equal(some[others], m.rotations[others])
