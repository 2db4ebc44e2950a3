"""Motion composition (Oshita 2008, section 8): an upper-body action layered onto a walk."""

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from real_capture import require

from core import quat
from core.align import Alignment
from core.compose import (KNEE_MARGIN, LEFT_ARM, RIGHT_ARM, UPPER_BODY, additional_parts, blend_ranges,
                          composition_weights, hermite_curve, knee_poles, largest_share, leg_safe_shift, margin_bend,
                          movement_range, parts_mask, shoulder_angles, spine_joints, vibration)
from core.ik import two_bone_ik
from core.motion import forward_kinematics
from core.options import SynthesisOptions
from core.plan import Plan
from core.rig import body_height, find_rig
from core.synthesize import Clip, additional_motion_parts, synthesize

ADDITIONAL = {
    "wave-right-hand": RIGHT_ARM,
    "wave-left-hand": LEFT_ARM,
    "wave-both-hands": UPPER_BODY,
    "raise-up-right-hand": RIGHT_ARM,
    "raise-up-left-hand": LEFT_ARM,
    "raise-up-both-hands": UPPER_BODY,
}
START = 30  # output frame at which the additional clip starts, inside the walk

_FUZZ = Path(__file__).resolve().parents[1] / "bench" / "fuzz.py"
# tests/bench is a folder of scripts, not a package: load its timeline generator by path
_spec = importlib.util.spec_from_file_location("bench_fuzz", _FUZZ)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz  # its dataclasses look their module up there
_spec.loader.exec_module(fuzz)
# fuzzed timelines with an additional motion on which a 1e-12 rad turn of the first clip once
# moved the output by 0.03 to 0.12 body heights (docs/design.md, live re-synthesis)
CONDITIONING_SEEDS = (106, 108, 109, 124, 144, 148, 198)


@pytest.fixture(scope="module")
def walk(mocap):
    return mocap("bandai2/walk_normal_001")


@pytest.fixture(scope="module", params=sorted(ADDITIONAL))
def composed(request, mocap, walk):
    name = request.param
    clip = mocap(f"bandai2/{name}_normal_001")
    result = synthesize([Clip(walk, 0, name="walk"), Clip(clip, START, name=name)])
    return name, clip, result


def _angles_between(a, b):
    return np.degrees(quat.angle(a, b))


# --- the pieces ------------------------------------------------------------------------


def test_the_hermite_curve_meets_values_and_velocities_at_both_ends():
    t = np.linspace(0.0, 1.0, 41)[:, None]
    values = np.hstack([t ** 3 - t, np.sin(3 * t)]) + 0.01 * np.sin(40 * t)
    curve = hermite_curve(values, 5, 35)
    assert np.allclose(curve[[5, 35]], values[[5, 35]])
    v = vibration(values, 5, 35)
    assert np.all(v[:6] == 0.0) and np.all(v[35:] == 0.0)
    # a smooth trajectory (a cubic) has no vibration: with the values and velocities at
    # both ends the Hermite curve is the cubic itself
    cubic = (t - 0.3) ** 3 + t
    assert np.abs(vibration(cubic, 5, 35)).max() < 1e-3


def test_an_arm_counts_when_its_shoulder_range_exceeds_the_threshold():
    swing = np.stack([20 + 10 * np.sin(np.linspace(0, 9, 100))] * 2, axis=1)
    assert additional_parts(swing, threshold_deg=50.0) is None
    raised = swing.copy()
    raised[40:60, 1] += 100.0
    assert additional_parts(raised, threshold_deg=50.0) == RIGHT_ARM
    raised[40:60, 0] += 100.0
    assert additional_parts(raised, threshold_deg=50.0) == UPPER_BODY
    still = np.full((100, 2), 15.0)
    still[40:60] += 100.0
    t2, t3 = movement_range(still, UPPER_BODY)
    assert (t2, t3) == (39, 60)  # the last frame at rest before, the first at rest after


def test_blends_rise_to_one_between_their_ranges_and_fall_to_zero():
    (a0, a1), (b0, b1) = blend_ranges((20, 80), 100, 9)
    assert (a0, a1, b0, b1) == (11, 20, 80, 89)
    w = composition_weights(100, (a0, a1), (b0, b1))
    assert np.all(w[:a0 + 1] == 0.0) and np.all(w[a1:b0 + 1] == 1.0) and np.all(w[b1:] == 0.0)
    assert np.all(np.diff(w[a0:a1 + 1]) >= 0.0) and np.all(np.diff(w[b0:b1 + 1]) <= 0.0)


def test_the_largest_share_keeps_a_leg_within_reach():
    rng = np.random.default_rng(3)
    start = rng.normal(size=(200, 3))
    start *= (rng.uniform(0.2, 0.95, 200) / np.linalg.norm(start, axis=-1))[:, None]
    move = rng.normal(size=(200, 3))
    k = largest_share(start, move, np.ones(200))
    reach = np.linalg.norm(start + k[:, None] * move, axis=-1)
    assert np.all(reach <= 1.0 + 1e-12)
    # the share is the largest: where it stops short, the leg is at its limit
    assert np.allclose(reach[k < 1.0], 1.0)


def test_only_the_vertical_vibration_is_scaled_down_for_a_straight_leg():
    up = np.array([0.0, 1.0, 0.0])
    hips = np.array([[[0.1, 0.0, 0.0], [-0.1, 0.0, 0.0]]])
    ankles = hips - np.array([0.0, 0.985, 0.0])  # nearly straight legs of length 1
    safe, kept = leg_safe_shift(np.array([[0.0, 0.05, 0.02]]), hips, ankles, np.ones(2), up)
    assert safe[0, 2] == 0.02 and 0.0 <= safe[0, 1] < 0.05 and kept[0] < 1.0
    assert np.all(np.linalg.norm(hips + safe[:, None] - ankles, axis=-1) <= 0.99 + 1e-12)


def test_a_leg_at_its_limit_takes_an_inward_move_whatever_the_rounding():
    """The share is continuous at the limit: a leg exactly at it, or a rounding error beyond
    it, takes all of a move inwards and none of a move outwards (no jump from all to none)."""
    start = np.array([[0.0, 1.0, 0.0]] * 3)
    limit = np.array([1.0, np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0)])  # at it, an ulp inside, an ulp beyond
    inward, outward = np.array([[0.0, -0.1, 0.05]] * 3), np.array([[0.0, 0.1, 0.05]] * 3)
    assert np.all(largest_share(start, inward, limit) == 1.0)
    assert np.all(largest_share(start, outward, limit) <= 1e-6)
    # sideways from the limit: a share that shrinks smoothly with how far inwards the move leans
    lean = np.array([[0.3, -e, 0.0] for e in (1e-3, 1e-6, 0.0)])
    k = largest_share(start, lean, np.ones(3))
    assert np.allclose(k, -2.0 * lean[:, 1] / np.sum(lean**2, axis=-1), rtol=0.0, atol=1e-12)


def test_knee_poles_keep_a_bent_knee_and_give_a_straight_one_its_usual_direction():
    """A clearly bent knee keeps its own direction; a straight one (a rounding error to either
    side of its line, or on it) points where this knee usually points from the turning pelvis;
    a leg straight in every frame points forward."""
    turns = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), np.linspace(0.0, 1.0, 6))  # the pelvis turns
    usual = np.array([np.sin(0.5), 0.0, np.cos(0.5)])  # forward and out, from the pelvis
    offsets = np.array([0.2, 0.15, 0.1, 1e-12, -1e-12, 0.0])
    local_knees = offsets[:, None] * usual + np.array([0.0, -0.4, 0.0])
    hips = np.zeros((6, 1, 3))
    knees = quat.mul_vec(turns, local_knees)[:, None]
    ankles = np.broadcast_to([0.0, -0.8, 0.0], (6, 1, 3))
    forward = quat.mul_vec(turns, np.tile([0.0, 0.0, 1.0], (6, 1)))

    def degrees_from(poles, direction):
        local = quat.inv_mul_vec(turns, poles[:, 0])
        return np.degrees(np.arccos(local @ direction / np.linalg.norm(local, axis=-1)))

    poles = knee_poles(hips, knees, ankles, turns, forward)
    assert np.all(degrees_from(poles, usual)[:3] < 3.0)
    straight = degrees_from(poles, usual)[3:]
    assert np.all(straight < 10.0) and np.ptp(straight) < 1e-6
    # legs straight throughout: the facing
    flat = knee_poles(hips, quat.mul_vec(turns, np.tile([0.0, -0.4, 0.0], (6, 1)))[:, None], ankles, turns, forward)
    assert np.all(degrees_from(flat, np.array([0.0, 0.0, 1.0])) < 1e-6)
    # the margin offset is the knee's at (1 - KNEE_MARGIN) of the leg: the law of cosines
    margin = float(margin_bend(np.array(0.5), np.array(0.5)))
    assert (0.5 * (1.0 - KNEE_MARGIN)) ** 2 + margin**2 == pytest.approx(0.5**2)


def test_a_straight_leg_bent_by_a_dip_of_the_pelvis_bends_forward_whatever_the_rounding():
    """A leg the base holds straight has no knee direction of its own: a knee a hair (1e-7 of the
    leg) to either side of its hip-ankle line must bend the same way when the hip comes down,
    where a pole taken from that offset alone would throw the knee from one side to the other."""
    hips = np.zeros((2, 1, 3))
    ankles = np.array([[[0.0, -1.0, 0.0]]] * 2)
    knees = np.array([[[1e-7, -0.5, 0.0]], [[-1e-7, -0.5, 0.0]]])  # either side of the line
    forward = np.array([[0.0, 0.0, 1.0]] * 2)
    lowered = ankles + np.array([0.0, 0.1, 0.0])  # the hip 0.1 of the leg lower: the ankle as seen from it

    def bent_knee(pole):
        root_delta, _ = two_bone_ik(hips, knees, ankles, lowered, pole)
        return hips + quat.mul_vec(root_delta, knees - hips)

    ours = bent_knee(knee_poles(hips, knees, ankles, quat.identity((len(hips),)), forward))
    assert np.abs(ours[0] - ours[1]).max() < 1e-6 and np.all(ours[:, 0, 2] > 0.2)  # forward, both
    own = bent_knee(knees - hips)
    assert np.abs(own[0] - own[1]).max() > 0.4  # the offset alone: one knee left, the other right


# --- the paper's claims on real clips ---------------------------------------------------


def test_a_walk_swings_its_arms_under_the_threshold(mocap):
    """Both arms swing (a visible 10 degrees at the least: the angle is measured on moving arms,
    not on joints that stay still), and neither by the threshold: a walk is no additional motion."""
    threshold = SynthesisOptions().additional_shoulder_deg
    for name in ("bandai2/walk_normal_001", "bandai1/walk_normal_001", "bandai2/walk-turn-left_normal_001"):
        m = mocap(name)
        angles = shoulder_angles(m.global_positions(), find_rig(m))
        assert np.all(np.ptp(angles, axis=0) > 10.0), name
        assert additional_parts(angles, threshold_deg=threshold) is None, name


@pytest.mark.parametrize("name", sorted(ADDITIONAL))
def test_waving_and_raising_use_the_arms_they_move(mocap, name):
    m = mocap(f"bandai2/{name}_normal_001")
    angles = shoulder_angles(m.global_positions(), find_rig(m))
    assert additional_parts(angles, threshold_deg=SynthesisOptions().additional_shoulder_deg) == ADDITIONAL[name]


@pytest.mark.parametrize("name", [*sorted(ADDITIONAL), "walk", "run", "walk-turn-left"])
def test_a_clip_alone_says_whether_it_would_compose_and_with_what(mocap, name):
    # what the add-on asks of a strip lying inside another (addon.timeline's default cores)
    m = mocap(f"bandai2/{name}_normal_001")
    assert additional_motion_parts(m) == ADDITIONAL.get(name)


def test_an_additional_clip_is_composed_not_rejected(composed):
    name, _, result = composed
    plan = result.plan
    assert not plan.rejected and not plan.pairs
    (c,) = plan.compositions
    assert (c.clip, c.base, c.parts) == (name, "walk", ADDITIONAL[name])
    assert START <= c.blend_in[0] <= c.blend_in[1] <= c.blend_out[0] <= c.blend_out[1]
    assert c.pelvis_vibration > 0.0
    assert np.all(np.isfinite(result.motion.rotations)) and np.all(np.isfinite(result.motion.positions))


def test_the_composite_feet_follow_the_walk_exactly(composed, walk):
    _, _, result = composed
    rig = find_rig(walk)
    feet = [j for leg in (rig.left_leg, rig.right_leg) for j in leg.joints[2:]]  # ankles and toes
    own = forward_kinematics(walk.rotations, walk.positions, walk.skeleton.parents, feet)[0]
    out = forward_kinematics(result.motion.rotations, result.motion.positions, walk.skeleton.parents, feet)[0]
    assert np.abs(out - own).max() <= 1e-6 * body_height(walk, rig)


def test_the_chosen_arms_follow_the_additional_clip(composed, walk):
    name, clip, result = composed
    rig = find_rig(walk)
    (c,) = result.plan.compositions
    used = parts_mask(walk.skeleton, rig, c.parts)
    arms = {"L": rig.left_arm.joints, "R": rig.right_arm.joints}
    full = np.arange(c.blend_in[1], c.blend_out[0] + 1)
    out = result.motion.rotations[full]
    for side, joints in arms.items():
        joints = list(joints)
        if used[joints].all():  # a chosen arm: the clip's own, wholly blended in
            assert _angles_between(out[:, joints], clip.rotations[full - START][:, joints]).max() < 1e-4  # degrees: arccos rounds to ~2e-6
        else:  # the other arm stays the walk's
            assert _angles_between(out[:, joints], walk.rotations[full][:, joints]).max() < 1e-4  # degrees: arccos rounds to ~2e-6
    # before the blend in the arms are the walk's
    assert _angles_between(result.motion.rotations[:START], walk.rotations[:START]).max() < 1e-4  # degrees: arccos rounds to ~2e-6


def test_pelvis_and_spine_carry_a_vibration_a_plain_arm_copy_lacks(composed, walk):
    name, clip, result = composed
    rig = find_rig(walk)
    (c,) = result.plan.compositions
    used = parts_mask(walk.skeleton, rig, c.parts)
    moving = np.arange(c.movement[0], c.movement[1] + 1)
    # the plain copy: the clip's arm channels in the walk, its spine and pelvis the walk's own
    plain_rot = np.array(walk.rotations)
    plain_rot[moving[:, None], used] = clip.rotations[moving - START][:, used]
    plain_pos = np.array(walk.positions)
    out_pelvis = forward_kinematics(result.motion.rotations, result.motion.positions, walk.skeleton.parents,
                                    [rig.pelvis])[0][moving, 0]
    plain_pelvis = forward_kinematics(plain_rot, plain_pos, walk.skeleton.parents, [rig.pelvis])[0][moving, 0]
    height = body_height(walk, rig)
    assert np.abs(out_pelvis - plain_pelvis).max() > 1e-3 * height
    spine = [j for j in spine_joints(rig) if not used[j]]
    if spine:  # one arm: the spine angles vibrate over the walk's
        change = _angles_between(result.motion.rotations[moving][:, spine], plain_rot[moving][:, spine])
        assert change.max() > 0.5
    # the vibration is the clip's movement only: outside it, spine and pelvis are the walk's
    outside = np.r_[0:c.movement[0], c.movement[1] + 1:walk.n_frames]
    assert np.allclose(result.motion.positions[outside, rig.pelvis], walk.positions[outside, rig.pelvis])


def test_a_walk_inside_a_walk_is_joined_in_sequence_as_before(walk):
    inner = walk[60:160]
    alone = synthesize([Clip(walk, 0, name="walk"), Clip(inner, 80, name="inner walk")])
    assert not alone.plan.compositions
    # rejection rules unchanged: its core overlaps the walk's
    assert [r.clip for r in alone.plan.rejected] == ["inner walk"]


def test_several_additional_clips_are_composed_one_after_another(mocap, walk):
    wave = mocap("bandai2/wave-right-hand_normal_001")
    lift = mocap("bandai2/raise-up-left-hand_normal_001")
    result = synthesize([Clip(walk, 0, name="walk"), Clip(wave, 20, name="wave"), Clip(lift, 120, name="raise")])
    assert [(c.clip, c.parts) for c in result.plan.compositions] == [("wave", RIGHT_ARM), ("raise", LEFT_ARM)]
    rig = find_rig(walk)
    # the later composition keeps the earlier one's right arm
    frames = np.arange(130, 150)
    right = list(rig.right_arm.joints)
    assert _angles_between(result.motion.rotations[frames][:, right], wave.rotations[frames - 20][:, right]).max() < 1e-4  # degrees: arccos rounds to ~2e-6


def test_the_plan_records_each_composition_and_loads_back(composed):
    _, _, result = composed
    plan = result.plan
    again = Plan.from_dict(plan.to_dict())
    assert again == plan and again.compositions == plan.compositions
    assert "composed over walk" in plan.summary()


@pytest.mark.parametrize("walk", ["bandai1/walk_angry_001", "bandai1/walk_happy_001"])
def test_a_walk_swinging_its_arms_wide_inside_another_clip_goes_in_sequence(mocap, walk):
    """An additional motion mainly moves the upper body (2008, 8): a walk travels, however
    wide it swings its arms (these swing past the shoulder threshold), so it is not composed."""
    from core.synthesize import Clip, additional_motion_parts, synthesize

    base = mocap("bandai1/dance-short_normal_001")
    styled = mocap(walk)
    result = synthesize([Clip(base, 0, (0, 100), "dance"), Clip(styled, 400, None, "walk")])
    assert not result.plan.compositions
    assert [(p.prev, p.next) for p in result.plan.pairs] == [("dance", "walk")]


@pytest.mark.parametrize("current, composes", [(START - 1, True), (START, False), (START + 40, False)])
def test_composition_changes_no_frame_played_before_the_clip_was_added(mocap, walk, current, composes):
    """Eq. (17) for composition: an additional motion added while the output up to t_current was
    played composes only when it starts after t_current; then everything up to t_current is
    bit for bit what it was, else it is rejected with what to do and nothing changes."""
    wave = mocap("bandai2/wave-right-hand_normal_001")
    alone = synthesize([Clip(walk, 0, name="walk")])
    result = synthesize([Clip(walk, 0, name="walk"), Clip(wave, START, name="wave", current=current)])
    if composes:
        assert [c.clip for c in result.plan.compositions] == ["wave"]
        played = slice(0, current + 1)
        assert np.array_equal(result.motion.rotations[played], alone.motion.rotations[played])
        assert np.array_equal(result.motion.positions[played], alone.motion.positions[played])
        assert not np.array_equal(result.motion.rotations, alone.motion.rotations)
    else:
        assert not result.plan.compositions
        (rejected,) = result.plan.rejected
        assert rejected.clip == "wave" and "eq. 17" in rejected.reason and f"after frame {current}" in rejected.reason
        assert np.array_equal(result.motion.rotations, alone.motion.rotations)


@pytest.fixture(scope="module")
def fuzz_clips():
    require(fuzz.MOCAP)
    return fuzz.Clips()


@pytest.mark.parametrize("seed", CONDITIONING_SEEDS)
def test_a_composition_follows_a_rounding_sized_turn_of_the_first_clip(fuzz_clips, seed):
    """Composition is well conditioned: turning the first clip by 1e-12 rad about up turns the
    composed output with it to 1e-6 body heights (without composition: 5e-9). A share of the
    pelvis vibration that jumped between none and all at a leg's limit under rounding once
    moved it by a tenth of the body."""
    timeline, w = fuzz.random_timeline(seed, fuzz_clips)
    first = timeline[0]
    rig = find_rig(first.motion)
    turn = Alignment(1e-12, np.zeros(3), np.array([0.0, 1.0, 0.0]), "")
    a = synthesize(timeline, responsiveness=w)
    b = synthesize([replace(first, motion=turn.apply(first.motion, rig.pelvis)), *timeline[1:]], responsiveness=w)
    assert a.plan.compositions and [p.method for p in a.plan.pairs] == [p.method for p in b.plan.pairs]
    ga, gb = (forward_kinematics(r.motion.rotations, r.motion.positions, r.motion.skeleton.parents,
                                 rotations_out=False)[0][:, rig.pelvis:] for r in (a, b))
    assert np.abs(turn.apply_points(ga) - gb).max() <= 1e-6 * body_height(first.motion, rig)
