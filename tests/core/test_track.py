"""What planning and rendering share (core.track)."""

import numpy as np

from core.motion import forward_kinematics
from core.optimize import body_frame_joints, body_frames, body_frames_of, primary_joints
from core.rig import detect_up, find_rig
from core.track import Feet, ankle_toe_per_foot, feet_at

WALK = "bandai1/walk_normal_001"


def test_feet_from_one_pass_are_the_single_frame_look_ups(mocap):
    """Feet evaluated over a window in one pass are bit for bit the single-frame look-ups,
    inside the window and (evaluated on demand) outside it, clamped alike."""
    walk = mocap(WALK)
    rig = find_rig(walk)
    parents = walk.skeleton.parents
    lo, hi = 30, 90
    points = forward_kinematics(walk.rotations[lo:hi], walk.positions[lo:hi], parents, ankle_toe_per_foot(rig),
                                rotations_out=False)[0].reshape(-1, 2, 2, 3)
    feet = Feet(points, lo, walk.rotations, walk.positions, parents, rig)
    for frame in (-5, 0, lo - 1, lo, 55, hi - 1, hi, walk.n_frames - 1, walk.n_frames + 3):
        expected = feet_at(walk.rotations, walk.positions, frame, parents, rig)
        assert np.array_equal(feet.at(frame), expected), frame
        assert np.array_equal(feet.ankles(frame), expected[:, 0]), frame


def test_body_frames_of_a_wider_pass_are_body_frames(mocap):
    """Features read out of a pass of forward kinematics that evaluates more joints are the same bits."""
    walk = mocap(WALK)[:120]
    rig = find_rig(walk)
    up = detect_up(walk, rig)
    joints = primary_joints(rig, "lower")
    wanted = body_frame_joints(rig, joints)
    world = forward_kinematics(walk.rotations, walk.positions, walk.skeleton.parents,
                               np.concatenate([wanted, ankle_toe_per_foot(rig)]), rotations_out=False)[0]
    for a, b in zip(body_frames_of(world[:, : len(wanted)], walk.skeleton, rig, up), body_frames(walk, rig, joints, up)):
        assert np.array_equal(a, b)
