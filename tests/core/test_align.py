"""Placing the following clip on the previous one (Oshita 2008, sections 4.2-4.3), on real capture."""

import numpy as np
import pytest

from core import quat
from core.align import align_clip, body_track, orientation_near, signed_angle
from core.analysis import horizontal
from core.rig import detect_up, find_rig, leg_length

WALK = "bandai1/walk_normal_001"
KICK = "bandai1/kick_normal_001"


@pytest.fixture(scope="module")
def walk_and_kick(mocap):
    walk, kick = mocap(WALK), mocap(KICK)
    rig = find_rig(walk)
    up = detect_up(walk, rig)
    return walk, kick, rig, up


def placed(walk, kick, rig, up, foot=0):
    prev = body_track(walk.rotations, walk.positions, walk.skeleton.parents, rig, up)
    nxt = body_track(kick.rotations, kick.positions, kick.skeleton.parents, rig, up)
    alignment = align_clip(prev, walk.n_frames - 1, nxt, 0, foot, up, distance=0.2 * leg_length(walk.skeleton, rig, "L"))
    return alignment, prev, nxt


@pytest.mark.parametrize("foot", [0, 1])
def test_the_base_foot_lands_on_the_previous_one_and_nothing_moves_vertically(walk_and_kick, foot):
    walk, kick, rig, up = walk_and_kick
    alignment, prev, _ = placed(walk, kick, rig, up, foot)
    ankle = [rig.leg("L").ankle, rig.leg("R").ankle][foot]
    moved = alignment.apply(kick, rig.pelvis).global_positions()
    original = kick.global_positions()
    # the foot lands on the previous clip's foot, on the ground plane
    np.testing.assert_allclose(horizontal(moved[0, ankle] - prev[2][-1, foot], up), 0.0, atol=1e-9)
    # heights are the clip's own, every joint, every frame
    np.testing.assert_allclose(moved @ up, original @ up, atol=1e-9)
    assert alignment.anchor == ("left", "right")[foot] + " foot"


def test_body_orientation_is_matched_by_a_turn_about_up(walk_and_kick):
    walk, kick, rig, up = walk_and_kick
    distance = 0.2 * leg_length(walk.skeleton, rig, "L")
    alignment, prev, nxt = placed(walk, kick, rig, up)
    moved = alignment.apply(kick, rig.pelvis)
    after = body_track(moved.rotations, moved.positions, moved.skeleton.parents, rig, up)
    # after the turn, the kick's body orientation at its start is the walk's at its end
    o_prev = orientation_near(prev[0], prev[1], up, walk.n_frames - 1, distance=distance, before=True)
    o_next = orientation_near(after[0], after[1], up, 0, distance=distance, before=False)
    assert signed_angle(o_next, o_prev, up) == pytest.approx(0.0, abs=1e-9)
    # by a turn about up alone: the pelvis facing turned by the alignment's angle
    assert signed_angle(nxt[1][0], after[1][0], up) == pytest.approx(alignment.angle, abs=1e-9)
    assert np.linalg.norm(alignment.translation @ up) < 1e-12


def test_apply_points_puts_a_point_where_apply_puts_the_joint(walk_and_kick):
    walk, kick, rig, up = walk_and_kick
    alignment, _, _ = placed(walk, kick, rig, up)
    # with or without the pelvis carrying the change, the body moves rigidly
    for pelvis in (None, rig.pelvis):
        moved = alignment.apply(kick, pelvis).global_positions()
        joints = slice(rig.pelvis, None)  # the pelvis and everything after it in the skeleton
        np.testing.assert_allclose(moved[:, joints], alignment.apply_points(kick.global_positions()[:, joints]), atol=1e-9)


# ---------------------------------------------------------------- turning on the spot (no capture)


def turning_on_the_spot(frames=60):
    """Pelvis (F, 3) swaying 2 cm about one place and facing (F, 3) that turns a quarter turn left
    about Z over the middle third: the figure of the demo's turn."""
    up = np.array([0.0, 0.0, 1.0])
    s = np.clip((np.arange(frames) - frames / 3) / (frames / 3), 0.0, 1.0)
    facing = quat.mul_vec(quat.from_axis_angle(up, 0.5 * np.pi * s), np.array([0.0, -1.0, 0.0]))
    pelvis = np.column_stack([0.02 * np.sin(np.arange(frames) / 4.0), np.zeros(frames), np.ones(frames)])
    return pelvis, facing, up


def test_a_clip_turning_on_the_spot_is_placed_by_its_start_wherever_it_is_joined():
    """A following clip joined in the middle of its turn on the spot is turned by where it faces at
    its start (2008, 4.3: the orientation at the start of a motion), so the turn is kept whole: the
    facing mid-turn would place the half turned body on the previous clip's orientation and the
    first half of the turn would be lost."""
    pelvis, facing, up = turning_on_the_spot()
    middle = len(pelvis) // 2
    got = orientation_near(pelvis, facing, up, middle, distance=0.1, before=False)
    np.testing.assert_allclose(got, facing[0], atol=1e-12)
    assert abs(signed_angle(facing[middle], facing[0], up)) > np.radians(30)  # (mid-turn indeed)


def test_a_previous_clip_turning_on_the_spot_ends_where_its_turn_ends():
    pelvis, facing, up = turning_on_the_spot()
    got = orientation_near(pelvis, facing, up, len(pelvis) // 2, distance=0.1, before=True)
    np.testing.assert_allclose(got, facing[-1], atol=1e-12)


def test_a_travelling_clip_is_placed_by_its_movement_at_the_join():
    """Where the pelvis travels near the join, the movement there is the orientation: a walk that
    curves before the join is placed on the way it walks at the join, not at its start."""
    up = np.array([0.0, 0.0, 1.0])
    heading = np.radians(np.r_[np.linspace(0.0, 90.0, 40), np.full(40, 90.0)])
    step = np.stack([np.cos(heading), np.sin(heading), np.zeros(80)], axis=1) * 0.02
    pelvis, facing = np.cumsum(step, axis=0), step / 0.02
    got = orientation_near(pelvis, facing, up, 50, distance=0.1, before=False)
    np.testing.assert_allclose(got, [0.0, 1.0, 0.0], atol=1e-9)
    got = orientation_near(pelvis, facing, up, 50, distance=0.1, before=True)
    np.testing.assert_allclose(got, [0.0, 1.0, 0.0], atol=1e-9)
