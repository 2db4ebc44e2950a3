"""Motion model: construction checks, immutability, forward kinematics against a slow obvious version."""

import numpy as np
import pytest

from core import quat
from core.motion import Motion, Skeleton, bone_scale, forward_kinematics, scale_mismatch


def chain_skeleton(J=6):
    parents = np.array([-1] + [max(0, j - 1 - (j % 2)) for j in range(1, J)])
    offsets = np.tile([0.0, 1.0, 0.5], (J, 1))
    return Skeleton(tuple(f"j{j}" for j in range(J)), parents, offsets)


def slow_fk(rot, pos, parents):
    """One frame, one joint at a time, with rotation matrices."""
    F, J = rot.shape[:2]
    gp, gm = np.zeros((F, J, 3)), np.zeros((F, J, 3, 3))
    for f in range(F):
        for j in range(J):
            m = quat.to_matrix(rot[f, j])
            if parents[j] < 0:
                gm[f, j], gp[f, j] = m, pos[f, j]
            else:
                p = parents[j]
                gm[f, j] = gm[f, p] @ m
                gp[f, j] = gm[f, p] @ pos[f, j] + gp[f, p]
    return gp, gm


def test_forward_kinematics_matches_slow_version():
    rng = np.random.default_rng(0)
    skel = chain_skeleton(7)
    rot = quat.normalize(rng.normal(size=(5, 7, 4)))
    pos = rng.normal(size=(5, 7, 3))
    gp, gr = forward_kinematics(rot, pos, skel.parents)
    sp, sm = slow_fk(rot, pos, skel.parents)
    np.testing.assert_allclose(gp, sp, atol=1e-12)
    np.testing.assert_allclose(quat.to_matrix(gr), sm, atol=1e-12)


@pytest.mark.parametrize("joints", [None, [6, 2], [3], [1, 5, 6]])
def test_positions_only_forward_kinematics_gives_the_same_positions(joints):
    """Skipping the world rotations no evaluated joint hangs from changes no position."""
    rng = np.random.default_rng(1)
    skel = chain_skeleton(7)
    rot = quat.normalize(rng.normal(size=(5, 7, 4)))
    pos = rng.normal(size=(5, 7, 3))
    full, _ = forward_kinematics(rot, pos, skel.parents, joints)
    only, none = forward_kinematics(rot, pos, skel.parents, joints, rotations_out=False)
    assert none is None
    np.testing.assert_array_equal(only, full)


@pytest.mark.parametrize("frames", [(), (1,), (3,), (2, 5), (300,)])
@pytest.mark.parametrize("joints", [None, [6, 2], [9], [1, 5, 6, 11]])
@pytest.mark.parametrize("rotations_out", [True, False])
def test_few_frames_by_generation_agree_with_joint_by_joint_to_the_last_bit(frames, joints, rotations_out, monkeypatch):
    """Short inputs go generation by generation; the result is the same bit for bit,
    since leg IK downstream turns a near-straight knee on differences of 1e-16."""
    import core.motion as motion_module

    rng = np.random.default_rng(2)
    skel = chain_skeleton(12)
    rot = quat.normalize(rng.normal(size=frames + (12, 4)))
    pos = rng.normal(size=frames + (12, 3))
    fast = forward_kinematics(rot, pos, skel.parents, joints, rotations_out=rotations_out)
    monkeypatch.setattr(motion_module, "FEW_FRAMES", -1)
    monkeypatch.setattr(motion_module, "FEW_JOINT_FRAMES", -1)
    slow = forward_kinematics(rot, pos, skel.parents, joints, rotations_out=rotations_out)
    np.testing.assert_array_equal(fast[0], slow[0])
    if rotations_out:
        np.testing.assert_array_equal(fast[1], slow[1])
    assert fast[0].shape == frames + (12 if joints is None else len(joints), 3)


@pytest.mark.parametrize("frames", [(1,), (3,), (40,), (300,)])
@pytest.mark.parametrize("joints", [None, [6, 2], [1, 5, 6, 11]])
def test_small_planes_all_components_at_once_agree_with_component_wise_to_the_last_bit(frames, joints, monkeypatch):
    """The quaternion arithmetic over all components at once (small inputs) gives the
    component-wise formula's result bit for bit, exact zeros and signs included."""
    import core.motion as motion_module

    rng = np.random.default_rng(3)
    skel = chain_skeleton(12)
    rot = quat.normalize(rng.normal(size=frames + (12, 4)))
    rot[..., ::3, 2:] = 0.0  # exact zeros, as rest poses and captured roots have
    rot[..., 1::4, 1] = -0.0
    rot = quat.normalize(rot)
    pos = rng.normal(size=frames + (12, 3))
    pos[..., ::2, 0] = 0.0
    fast = forward_kinematics(rot, pos, skel.parents, joints)
    monkeypatch.setattr(motion_module, "SMALL_PLANES", -1)
    slow = forward_kinematics(rot, pos, skel.parents, joints)
    np.testing.assert_array_equal(fast[0], slow[0])
    np.testing.assert_array_equal(fast[1], slow[1])
    assert np.array_equal(np.signbit(fast[1]), np.signbit(slow[1]))


def test_motion_arrays_are_read_only_and_edits_return_new_motions():
    skel = chain_skeleton()
    m = Motion.from_root(skel, quat.identity((4, len(skel))), np.zeros((4, 3)), 30)
    with pytest.raises(ValueError):
        m.rotations[0, 0, 0] = 2.0
    moved = m.transformed(quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), 0.5), np.array([1.0, 0.0, 0.0]))
    assert moved is not m and np.all(m.positions[:, 0] == 0.0)


def test_construction_rejects_bad_shapes_and_values():
    skel = chain_skeleton()
    with pytest.raises(ValueError, match="rotations must have shape"):
        Motion.from_root(skel, quat.identity((4, 3)), np.zeros((4, 3)), 30)
    with pytest.raises(ValueError, match="unit quaternions"):
        Motion.from_root(skel, np.ones((4, len(skel), 4)), np.zeros((4, 3)), 30)
    with pytest.raises(ValueError, match="NaN"):
        Motion.from_root(skel, quat.identity((4, len(skel))), np.full((4, 3), np.nan), 30)
    with pytest.raises(ValueError, match="parents"):
        Skeleton(("a", "b"), [-1, 1], np.zeros((2, 3)))


def test_replacing_some_joints_rotations_keeps_the_others_bit_for_bit_and_checks_the_new_ones():
    skel = chain_skeleton()
    rng = np.random.default_rng(3)
    m = Motion.from_root(skel, quat.normalize(rng.normal(size=(5, len(skel), 4))), rng.normal(size=(5, 3)), 30)
    assert not np.array_equal(Motion(skel, m.rotations, m.positions, 30).rotations, m.rotations), \
        "made again, a motion's unit quaternions move in their last bits (what the method avoids)"
    joints = np.zeros(len(skel), bool)
    joints[[1, 4]] = True
    new = 2.0 * quat.normalize(rng.normal(size=(5, 2, 4)))  # (the constructor's tolerance refuses this)
    with pytest.raises(ValueError, match="unit quaternions"):
        m.with_joint_rotations(joints, new)
    new = quat.normalize(rng.normal(size=(5, 2, 4))) * (1 + 1e-6)
    out = m.with_joint_rotations(joints, new)
    assert np.array_equal(out.rotations[:, ~joints], m.rotations[:, ~joints])
    assert np.array_equal(out.positions, m.positions) and out.skeleton is m.skeleton and out.fps == m.fps
    np.testing.assert_allclose(out.rotations[:, joints], new / (1 + 1e-6), atol=1e-15)
    assert np.array_equal(m.with_joint_rotations([1, 4], new).rotations, out.rotations), "indices as a mask"
    with pytest.raises(ValueError):
        out.rotations[0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="shape"):
        m.with_joint_rotations(joints, new[:, :1])
    with pytest.raises(ValueError, match="NaN"):
        m.with_joint_rotations(joints, np.full((5, 2, 4), np.nan))


def test_resampling_keeps_poses_at_shared_times():
    rng = np.random.default_rng(1)
    skel = chain_skeleton()
    rot = quat.slerp(quat.normalize(rng.normal(size=(len(skel), 4))), quat.normalize(rng.normal(size=(len(skel), 4))),
                     np.linspace(0, 1, 11)[:, None])
    m = Motion.from_root(skel, rot, np.linspace(0, 1, 11)[:, None] * [1.0, 0, 0], 30)
    up = m.resampled(120)
    assert up.n_frames == 41
    np.testing.assert_allclose(up.global_positions()[::4], m.global_positions(), atol=1e-9)


def test_scaling_scales_every_length_and_keeps_rotations():
    skel = chain_skeleton()
    m = Motion.from_root(skel, quat.identity((3, len(skel))), np.ones((3, 3)), 30)
    s = m.scaled(0.01)
    np.testing.assert_allclose(s.global_positions(), 0.01 * m.global_positions())
    assert s.skeleton.unit == pytest.approx(100.0 * m.skeleton.unit)


def test_zero_length_clip_is_allowed_and_has_no_positions():
    skel = chain_skeleton()
    m = Motion.from_root(skel, np.zeros((0, len(skel), 4)), np.zeros((0, 3)), 30)
    assert m.n_frames == 0 and m.global_positions().shape == (0, len(skel), 3)


# --- one body at one scale ------------------------------------------------------------


def test_bone_scale_is_how_many_times_as_long_a_skeletons_bones_are():
    skel = chain_skeleton(7)
    assert bone_scale(skel.scaled(0.01), skel) == pytest.approx(0.01)
    assert bone_scale(skel, skel.scaled(1e-12)) == pytest.approx(1e12)
    assert bone_scale(skel, skel) == 1.0


def test_a_few_bones_of_other_proportions_do_not_decide_the_scale():
    """Another performer's forearms may be a third longer; the median ratio is the body's."""
    skel = chain_skeleton(7)
    offsets = np.array(skel.offsets)
    offsets[[2, 5]] *= 3.0
    other = Skeleton(skel.names, skel.parents, offsets)
    assert bone_scale(other, skel) == pytest.approx(1.0)
    assert bone_scale(other.scaled(2.54), skel) == pytest.approx(2.54)


def test_where_a_skeleton_stands_is_no_bone():
    skel = chain_skeleton(4)
    offsets = np.array(skel.offsets)
    offsets[0] = (1e6, 0.0, 0.0)
    assert bone_scale(Skeleton(skel.names, skel.parents, offsets), skel) == 1.0


@pytest.mark.parametrize("factor", [0.51, 1.0, 1.3, 1.99])
def test_bones_within_a_factor_of_two_are_one_body(factor):
    skel = chain_skeleton(5)
    assert scale_mismatch(skel.scaled(factor), skel) == ""


@pytest.mark.parametrize("factor, shown", [(0.01, "0.01 times"), (2.2, "2.2 times"), (1e-12, "1e-12 times")])
def test_bones_more_than_twice_or_half_as_long_are_another_scale_and_the_message_names_both(factor, shown):
    skel = chain_skeleton(5)
    why = scale_mismatch(skel.scaled(factor), skel, "clip 'walk_m'", "the source 'walk'")
    assert why.startswith(f"clip 'walk_m' has bones {shown} as long as those of the source 'walk'")
    assert "unit" in why


def test_the_similarity_fit_recovers_a_turn_a_scale_and_a_shift_exactly():
    from core.motion import similarity_fit

    rng = np.random.default_rng(7)
    p = rng.normal(size=(20, 3))
    turn = quat.to_matrix(quat.normalize(rng.normal(size=4)))
    q = 2.5 * p @ turn.T + np.array([1.0, -2.0, 3.0])
    found, scale, shift, error = similarity_fit(p, q)
    np.testing.assert_allclose(found, turn, atol=1e-12)
    assert scale == pytest.approx(2.5) and error < 1e-12
    np.testing.assert_allclose(shift, [1.0, -2.0, 3.0], atol=1e-12)


def test_the_similarity_fit_never_reflects_a_mirrored_pose_it_leaves_an_error():
    from core.motion import similarity_fit

    p = np.random.default_rng(8).normal(size=(12, 3))
    turn, scale, _, error = similarity_fit(p, p * np.array([-1.0, 1.0, 1.0]))
    assert np.linalg.det(turn) == pytest.approx(1.0) and scale > 0
    assert error > 0.1, "a mirror image is no turn of the pose"


def test_the_similarity_fit_names_shapes_it_cannot_fit():
    from core.motion import similarity_fit

    with pytest.raises(ValueError, match=r"two \(N, 3\) arrays"):
        similarity_fit(np.zeros((4, 3)), np.zeros((5, 3)))
