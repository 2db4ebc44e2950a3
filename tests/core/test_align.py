"""Placing the following clip on the previous one (Oshita 2008, sections 4.2-4.3), on real capture."""

import numpy as np
import pytest

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
