"""The contact stage (core.contacts): feet the sources hold down stay planted between cores.

Each test slides a real walk's body across the floor inside a gap, as a blend of two
clips planted in different places does, and checks what the stage promises.
"""

import numpy as np
import pytest

from core import quat
from core.analysis import foot_contacts, horizontal
from core.contacts import hold_feet, twist_free
from core.quality import foot_levels, foot_positions
from core.rig import detect_up, find_rig, leg_length

WALK = "bandai1/walk_normal_001"
GAP = (40, 120)  # output frames between two cores (the walk plays from output frame 0)


@pytest.fixture(scope="module")
def walk(mocap):
    return mocap(WALK)


def slid(motion, rig, up, distance):
    """The motion with its pelvis carried ``distance`` across the floor over the gap's inner frames
    (a smoothstep in time): every planted foot slides, as in a blend of two placements."""
    pos = np.array(motion.positions)
    n = GAP[1] - GAP[0]
    u = np.zeros(motion.n_frames)
    x = np.arange(1, n) / n
    u[GAP[0] + 1 : GAP[1]] = x * x * (3 - 2 * x) * (1 - x) * 4  # out and back: zero at both cores
    forward = horizontal(np.array([0.0, 0.0, 1.0]), up)
    pos[:, rig.pelvis] += u[:, None] * distance * forward
    return motion.with_arrays(positions=pos)


def held(motion, rig, up, contacts):
    leg = leg_length(motion.skeleton, rig, "L")
    levels = foot_levels(foot_positions(motion, rig) @ up, motion.fps)
    # (as synthesis holds them: the body may come down to feet out of reach)
    return hold_feet(motion, 0, contacts, [GAP], rig, up=up, leg=leg, floors=levels.floor.reshape(2, 2),
                     pelvis_down=True), leg, levels


def test_a_foot_the_sources_hold_down_moves_less_than_half_a_percent_of_a_leg_per_frame(walk):
    rig = find_rig(walk)
    up = detect_up(walk, rig)
    contacts = foot_contacts(walk, rig, up=up)
    leg = leg_length(walk.skeleton, rig, "L")
    sliding = slid(walk, rig, up, 0.1 * leg)
    out, _, _ = held(sliding, rig, up, contacts)
    pairs = np.zeros(walk.n_frames - 1, bool)
    pairs[GAP[0] : GAP[1]] = True
    for k, side in enumerate("LR"):
        # held down by the source: in contact, and flat and still in the untouched walk itself
        # (contact also covers heel-off and the start of a swing, where capture's own foot travels)
        down = contacts[:-1, k] & contacts[1:, k] & pairs & (foot_travel(walk, rig, side, up, np.max) < 0.005 * leg)
        assert down.sum() > 10, "the walk stands on this foot in the gap"
        # a foot that stays down keeps a point on the floor: its ankle, or its toe through heel-off
        assert foot_travel(sliding, rig, side, up)[down].max() > 0.005 * leg, "the slide moves the planted foot"
        assert foot_travel(out, rig, side, up)[down].max() < 0.005 * leg, f"the {side} foot slides while down"


def foot_travel(motion, rig, side, up, of=np.min):
    """Per frame pair, the horizontal move of whichever of the foot's ankle and toe moves least
    (the point it stands on), or with ``of=np.max`` most (both still: the foot is flat and still)."""
    g = motion.global_positions()[:, [rig.leg(side).ankle, rig.leg(side).toe]]
    return of(np.linalg.norm(horizontal(np.diff(g, axis=0), up), axis=-1), axis=1)


def test_toes_never_sink_below_the_floor_by_more_than_the_band(walk):
    rig = find_rig(walk)
    up = detect_up(walk, rig)
    # push the body down into the floor as well: the feet must not follow it below
    pos = np.array(walk.positions)
    x = np.arange(GAP[1] - GAP[0] + 1) / (GAP[1] - GAP[0])
    pos[GAP[0] : GAP[1] + 1, rig.pelvis] -= (np.sin(np.pi * x) * 0.05 * leg_length(walk.skeleton, rig, "L"))[:, None] * up
    sunk = walk.with_arrays(positions=pos)
    out, leg, levels = held(sunk, rig, up, foot_contacts(walk, rig, up=up))
    toes = foot_positions(out, rig)[GAP[0] : GAP[1] + 1][:, [1, 3]] @ up
    assert toes.min(axis=0).min() < (foot_positions(walk, rig)[:, [1, 3]] @ up).max()  # sanity: heights compare
    floor, band = levels.floor[[1, 3]], levels.band[[1, 3]]
    assert np.all(toes >= floor - band), f"toes sink {float((floor - band - toes).max()):.3g} below the band"


def test_cores_and_frames_outside_the_gap_stay_bit_for_bit(walk):
    rig = find_rig(walk)
    up = detect_up(walk, rig)
    sliding = slid(walk, rig, up, 0.1 * leg_length(walk.skeleton, rig, "L"))
    out, _, _ = held(sliding, rig, up, foot_contacts(walk, rig, up=up))
    outside = np.r_[0 : GAP[0] + 1, GAP[1] : walk.n_frames]
    assert np.array_equal(out.rotations[outside], sliding.rotations[outside])
    assert np.array_equal(out.positions[outside], sliding.positions[outside])
    # inside the gap only the pelvis moves (down to feet out of reach), and only along up
    others = np.arange(len(walk.skeleton.names)) != rig.pelvis
    assert np.array_equal(out.positions[:, others], sliding.positions[:, others])
    moved = out.positions[:, rig.pelvis] - sliding.positions[:, rig.pelvis]
    assert np.allclose(moved - (moved @ up)[:, None] * up, 0.0, atol=1e-9) and (moved @ up <= 1e-12).all()


def test_a_contact_that_began_in_the_previous_core_is_held_where_the_core_leaves_it(walk):
    """The old foot locks treated a contact already under way when the window opened as a touch-down
    and left it free: the standing foot of a connection slid."""
    rig = find_rig(walk)
    up = detect_up(walk, rig)
    contacts = foot_contacts(walk, rig, up=up)
    standing = int(np.flatnonzero(contacts[GAP[0]])[0])
    sliding = slid(walk, rig, up, 0.1 * leg_length(walk.skeleton, rig, "L"))
    out, leg, _ = held(sliding, rig, up, contacts)
    ankle = rig.leg("LR"[standing]).ankle
    run_end = GAP[0] + int(np.argmin(contacts[GAP[0]:, standing]))
    g = out.global_positions()[GAP[0] : run_end, ankle]
    heel_down = (g @ up) <= (g[0] @ up) + 0.01 * leg
    assert np.linalg.norm(horizontal(g[heel_down] - g[0], up), axis=-1).max() < 0.005 * leg


def test_a_held_foot_keeps_its_heading_but_rolls_with_the_blend():
    up = np.array([0.0, 1.0, 0.0])
    yaw = quat.from_axis_angle(up, 0.7)
    pitch = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 0.3)
    swing = twist_free(quat.mul(pitch, yaw), up)
    # the twist about up (heading) is gone; what is left turns no horizontal direction about up
    forward = quat.mul_vec(swing, np.array([0.0, 0.0, 1.0]))
    assert abs(np.arctan2(forward[0], forward[2])) < 1e-9
    np.testing.assert_allclose(twist_free(yaw, up), quat.identity(), atol=1e-12)


def swing_between_holds(clearance: float):
    """A foot carried 30 units across between two holds (leg 80), its ankle ``clearance`` above
    its floor on a bump highest half way, with what the contact stage makes of it."""
    from core.contacts import _Foot, _held_foot
    from core.options import ContactOptions
    from core.render import smoothstep

    up, leg, n = np.array([0.0, 1.0, 0.0]), 80.0, 25
    x = np.clip((np.arange(n) - 7) / 10.0, 0.0, 1.0)
    height = 8.0 + clearance * smoothstep(1.0 - np.abs(2.0 * x - 1.0))
    ankle = np.stack([30.0 * x * x * (3 - 2 * x), height, np.zeros(n)], axis=-1)
    foot = _Foot(ankle, quat.identity((n,)), np.tile([0.0, -4.0, 12.0], (n, 1)))
    down = (np.arange(n) <= 7) | (np.arange(n) >= 17)
    floors = np.array([8.0, 4.0])  # ankle and toe on the floor when flat
    target, _, active = _held_foot(foot, down, [], up, leg, floors, ContactOptions(), fps=30.0)
    return target @ up - floors[0], ankle @ up - floors[0], down, active


def test_a_foot_in_the_air_between_two_holds_clears_the_floor_as_a_step_would():
    """The blend of a swing and a foot at rest can carry a foot across the floor barely off
    it (a skate, by the measure); between two places on the floor it rises at least a step's
    least lift, highest half way, and stays on the floor where it is held."""
    from core.options import ContactOptions

    height, _, down, _ = swing_between_holds(0.0)
    least = ContactOptions().step_height[0] * 80.0
    assert height[12] > 0.9 * least, "half way across, the foot is up as high as a step's least lift"
    assert np.all(height[8:17] > 0.0), "in the air on every frame between the holds"
    np.testing.assert_allclose(height[down], 0.0, atol=1e-9)


def test_a_swing_that_clears_the_floor_already_is_left_as_captured():
    """A clip's own swing clearing the floor by more than a step's least lift is not raised
    to the lift a step of its length would take: a walk's 1.3 m swing raised to a quarter of
    its length jerked the knee at three times its own acceleration."""
    height, own, down, active = swing_between_holds(5.0)  # (a step of 30 would rise 7.5)
    np.testing.assert_allclose(height[~down], own[~down], atol=1e-9)


def test_a_foot_held_from_a_core_on_a_higher_floor_settles_onto_the_gaps_floor():
    """Two clips' floors differ by millimetres (capture calibration); a foot held from the
    core of the higher one settles onto the gap's floor (the lower) within settle_s, and
    stands there, instead of hovering above it through the gap. The core's frame is its own."""
    from core.contacts import _Foot, _held_foot
    from core.options import ContactOptions

    up, leg, n, fps = np.array([0.0, 1.0, 0.0]), 80.0, 20, 30.0
    ankle = np.tile([0.0, 8.3, 0.0], (n, 1))  # 3 mm above the gap's floor, still
    foot = _Foot(ankle, quat.identity((n,)), np.tile([0.0, -4.0, 12.0], (n, 1)))
    down = np.arange(n) < 12  # held from the core, then in the air into the next core
    options = ContactOptions()
    target, _, active = _held_foot(foot, down, [], up, leg, np.array([8.0, 4.0]), options, fps=fps)
    height = target @ up - 8.0
    assert not active[0] and height[0] == pytest.approx(0.3), "the core's frame stays its own"
    settled = int(np.ceil(options.settle_s * fps))
    np.testing.assert_allclose(height[settled:12], 0.0, atol=1e-9)
    assert np.all(np.diff(height[: settled + 1]) <= 1e-12), "it settles, never rises"


# --- holds fade in and out ------------------------------------------------------------

HEEL_STRIKE = 41  # a frame of the walk whose left leg is straight (to 1e-6 of its length)


def standing(walk, fps, seconds=1.0):
    """The walk's pose at HEEL_STRIKE held still for ``seconds`` at ``fps``: a straight left leg."""
    from core.motion import Motion

    n = int(round(seconds * fps))
    return Motion(walk.skeleton, np.repeat(walk.rotations[HEEL_STRIKE : HEEL_STRIKE + 1], n, axis=0),
                  np.repeat(walk.positions[HEEL_STRIKE : HEEL_STRIKE + 1], n, axis=0), fps)


def knee_bend(motion, leg):
    """Degrees ``(F,)`` the knee is bent (0: straight)."""
    g = motion.global_positions()
    thigh, shin = g[:, leg.knee] - g[:, leg.hip], g[:, leg.ankle] - g[:, leg.knee]
    cos = np.sum(thigh * shin, axis=-1) / (np.linalg.norm(thigh, axis=-1) * np.linalg.norm(shin, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def held_where_it_stands(motion, rig, on):
    """The left foot held where it stands over frames ``on`` (a millionth of the leg lower, so
    that the hold asks something of the leg), through render.adapt_legs as the contact stage
    calls it."""
    from core.options import ContactOptions
    from core.render import adapt_legs

    legs = [rig.leg("L"), rig.leg("R")]
    g, r = motion.global_transforms()
    active = np.zeros((motion.n_frames, 2), dtype=bool)
    active[on, 0] = True
    targets = g[:, [leg.ankle for leg in legs]].copy()
    targets[on, 0] -= 1e-6 * leg_length(motion.skeleton, rig, "L") * motion.skeleton.up
    turns = r[:, [leg.ankle for leg in legs]]
    return adapt_legs(motion, rig, targets, active, ankle_rotations=turns, fade_s=ContactOptions().hold_fade_s)


@pytest.mark.parametrize("fps", [30.0, 120.0])
def test_a_straight_leg_held_where_it_stands_is_reached_not_bent_short(walk, fps):
    """The solver eases a leg's reach near full extension (core.ik.soft_extension), but never
    from below the leg's own extension as blended: a straight stance leg held where it stands
    (stance legs in capture run at 98 to 100 % of their length) keeps its foot on the floor
    and its knee as it was, in the frame the hold switches on and throughout; eased from 95 %
    of the reach, the foot stood a centimetre short, in the air. The frames outside the hold
    stay bit for bit."""
    rig = find_rig(walk)
    still = standing(walk, fps)
    n = still.n_frames
    on = slice(n // 4, 3 * n // 4)
    out = held_where_it_stands(still, rig, on)
    leg = rig.leg("L")
    assert knee_bend(still, leg)[0] < 0.5, "the leg is straight"
    assert np.abs(knee_bend(out, leg) - knee_bend(still, leg)).max() < 0.5
    ankle = out.global_positions()[:, leg.ankle] - still.global_positions()[:, leg.ankle]
    assert np.linalg.norm(ankle, axis=-1).max() < 1e-4 * leg_length(still.skeleton, rig, "L")
    outside = np.r_[0 : n // 4, 3 * n // 4 : n]
    assert np.array_equal(out.rotations[outside], still.rotations[outside])


def test_hold_weights_ease_in_and_out_inside_each_run_the_same_in_seconds_at_any_rate():
    from core.render import hold_weights

    fade = 0.1
    for fps in (30.0, 120.0):
        t = np.arange(int(fps)) / fps  # one second
        active = ((t >= 0.25) & (t < 0.75))[:, None]
        w = hold_weights(active, fps, fade)
        assert np.all(w[~active] == 0.0), "nothing outside its run"
        # a smoothstep of the time from the last frame off (before the run) over fade
        since = t - t[np.argmax(active[:, 0]) - 1]
        inside = active[:, 0] & (t < 0.5)
        x = np.clip(since[inside] / fade, 0.0, 1.0)
        np.testing.assert_allclose(w[inside, 0], x * x * (3.0 - 2.0 * x), atol=1e-12)
        assert np.all(w[(t >= 0.25 + fade) & (t < 0.75 - fade)] == 1.0)


def test_the_ends_of_a_run_that_ask_nothing_of_the_leg_stay_bit_for_bit(walk):
    """Adaptation marks its window active up to the cores, with the feet where they stand
    there; those frames are left as they are, bit for bit (the solver would still ease a
    straight leg's reach), and the hold begins where a target first moves the foot."""
    rig = find_rig(walk)
    still = standing(walk, 30.0)
    from core.options import ContactOptions
    from core.render import adapt_legs

    legs = [rig.leg("L"), rig.leg("R")]
    g, r = still.global_transforms()
    targets, turns = g[:, [leg.ankle for leg in legs]].copy(), r[:, [leg.ankle for leg in legs]]
    active = np.zeros((still.n_frames, 2), dtype=bool)
    active[5:25, 0] = True
    targets[10:20, 0] += 0.01 * leg_length(still.skeleton, rig, "L") * np.array([0.0, 1.0, 0.0])  # lifted
    out = adapt_legs(still, rig, targets, active, ankle_rotations=turns, fade_s=ContactOptions().hold_fade_s)
    asks_nothing = np.r_[0:10, 20:still.n_frames]
    assert np.array_equal(out.rotations[asks_nothing], still.rotations[asks_nothing])
    assert not np.array_equal(out.rotations[10:20], still.rotations[10:20])


def test_a_body_risen_above_its_held_feet_comes_down_to_them_rather_than_stretching_the_legs(walk):
    """The issue's reach rule: a held foot is reached by a leg stretched to at most the larger of
    render.REACH of its length and its own extension as blended; where that does not reach,
    the pelvis comes down (along up only), smoothly. Here the body is lifted by 4 % of a leg
    over the gap, as a blend towards a taller pose would."""
    from core.render import REACH

    rig = find_rig(walk)
    up = detect_up(walk, rig)
    leg = leg_length(walk.skeleton, rig, "L")
    pos = np.array(walk.positions)
    n = GAP[1] - GAP[0]
    x = np.arange(1, n) / n
    pos[GAP[0] + 1 : GAP[1], rig.pelvis] += (np.sin(np.pi * x) * 0.04 * leg)[:, None] * up
    risen = walk.with_arrays(positions=pos)
    contacts = foot_contacts(walk, rig, up=up)
    out, _, levels = held(risen, rig, up, contacts)
    inner = slice(GAP[0] + 1, GAP[1])
    pelvis_drop = (risen.global_positions()[inner, rig.pelvis] - out.global_positions()[inner, rig.pelvis]) @ up
    assert pelvis_drop.max() > 0.02 * leg, "the body comes down to the feet"
    # smoothly: it accelerates the body less than half as much as the walk's own pelvis does
    pelvis = walk.global_positions()[:, rig.pelvis]
    own = np.percentile(np.linalg.norm(np.diff(pelvis, 2, axis=0), axis=1), 99)
    assert np.abs(np.diff(pelvis_drop, 2)).max() < 0.5 * own, (np.abs(np.diff(pelvis_drop, 2)).max(), own)
    g_in, g_out = risen.global_positions()[inner], out.global_positions()[inner]
    for k, side in enumerate("LR"):
        joints = rig.leg(side)
        own = np.linalg.norm(g_in[:, joints.ankle] - g_in[:, joints.hip], axis=1) / leg
        solved = np.linalg.norm(g_out[:, joints.ankle] - g_out[:, joints.hip], axis=1) / leg
        assert (solved <= np.maximum(own, REACH) + 1e-6).all(), f"the {side} leg stretched past its reach"
