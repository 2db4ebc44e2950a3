"""The project's one measure of a gap (core.quality): what it counts, and that a rig's names,
unit, axes and frame rate do not change it."""

import numpy as np
import pytest

from core import quat
from core.motion import Motion
from core.quality import (SourceFigures, foot_joints, foot_levels, foot_positions, gap_quality, measure_step,
                          skate_samples)
from core.rig import detect_up, find_rig, leg_length

WALK = "bandai1/walk_normal_001"
BOW = "bandai1/bow_normal_001"


def figures(prev: Motion, nxt: Motion, start: int, gap: tuple[int, int], output: Motion):
    """The figures of ``gap`` in ``output`` (frame 0 at timeline frame 0), against the two clips."""
    rig = find_rig(prev)
    up = detect_up(prev, rig)
    feet = foot_positions(output, rig)
    return gap_quality(output, 0, gap, up=up, leg=leg_length(prev.skeleton, rig, "L"), output_feet=feet,
                       output_levels=foot_levels(feet @ up, output.fps),
                       sources=[(SourceFigures.of(prev, rig, up), 0), (SourceFigures.of(nxt, rig, up), start)])


def test_a_planted_foot_that_slides_is_caught_and_a_swinging_foot_is_not():
    """Band and floor are each joint's own: a foot sliding on the floor counts, the same foot
    moving as fast a little above its band does not."""
    up = np.array([0.0, 1.0, 0.0])
    t = np.arange(60) / 30.0
    lifted = 0.2 * (np.sin(2 * np.pi * t) > 0.5)  # up and down, mostly on the floor
    feet = np.stack([t, lifted, np.zeros_like(t)], axis=-1)[:, None]  # (F, 1, 3), 1 unit/s across
    levels = foot_levels(feet @ up, 30.0)
    speed, down = skate_samples(feet, levels, up, 30.0)
    assert down.any() and not down.all()
    np.testing.assert_allclose(speed[down], 1.0)
    assert np.all((lifted[:-1] + lifted[1:])[~down[:, 0]] > 0)


@pytest.fixture(scope="module")
def pair(mocap):
    walk, bow = mocap(WALK), mocap(BOW)
    start = walk.n_frames - 20
    # the plain juxtaposition of the two clips: the walk, then the bow from where it starts
    output = Motion(walk.skeleton, np.concatenate([walk.rotations[:start], bow.rotations]),
                    np.concatenate([walk.positions[:start], bow.positions]), walk.fps)
    return walk, bow, start, output


def test_the_untouched_clips_on_their_own_frames_measure_as_themselves(pair):
    walk, bow, start, output = pair
    q = figures(walk, bow, start, (start - 15, start - 3), output)  # frames where the output is the walk
    assert q.skate is not None and q.skate_untouched is not None
    # the output there is the walk itself (its own floor and band differ from the output's)
    assert q.accel == pytest.approx(q.accel_untouched, rel=0.02)


def rotated_metres(motion: Motion) -> Motion:
    """The clip renamed, in metres instead of centimetres, and turned Z up."""
    turn = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    names = {n: f"rig:{n}" for n in motion.skeleton.names}
    return motion.renamed(names).scaled(0.01).transformed(turn)


def test_names_units_and_axes_do_not_change_the_figures(pair):
    walk, bow, start, output = pair
    gap = (start - 10, start + 10)
    base = figures(walk, bow, start, gap, output)
    other = figures(rotated_metres(walk), rotated_metres(bow), start, gap, rotated_metres(output))
    for name in ("skate", "skate_untouched", "accel", "accel_untouched", "accel_reference", "pop", "pop_untouched",
                 "pop_reference"):
        assert getattr(other, name) == pytest.approx(getattr(base, name), rel=1e-6), name
    assert other.pop_joint == f"rig:{base.pop_joint}"


def test_a_clip_at_120_fps_measures_as_at_30(mocap):
    """Differences over 1/30 s whatever the rate: the walk's own skate and acceleration peaks
    resampled to 120 fps are within 5 % of the same at 30."""
    walk = mocap(WALK)
    fast = walk.resampled(120.0)
    rig = find_rig(walk)
    up = detect_up(walk, rig)

    def own(m):
        src = SourceFigures.of(m, rig, up)
        speed, down = skate_samples(src.feet, src.levels, up, m.fps)
        k = measure_step(m.fps)
        return speed[down].mean(), np.percentile(src.accel[k:-k:k], 99)

    for slow_figure, fast_figure in zip(own(walk), own(fast)):
        assert fast_figure == pytest.approx(slow_figure, rel=0.05)
    assert len(foot_joints(rig)) == 4


def test_a_knee_that_snaps_hides_in_the_mean_over_joints_but_not_in_the_worst_joint(pair):
    """One leg kicked forward at the hip for a single frame inside the gap (the knee, ankle and
    toe jump): the mean over every joint barely rises, the gap's pop (the worst joint over its
    own 99th percentile) names a joint of that leg and stands far above the untouched clips'."""
    walk, bow, start, output = pair
    rig = find_rig(walk)
    gap = (start - 15, start - 3)  # where the output is the walk itself
    calm = figures(walk, bow, start, gap, output)
    leg = rig.leg("L")
    rotations = output.rotations.copy()
    kick = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 0.2)
    rotations[start - 9, leg.hip] = quat.mul(rotations[start - 9, leg.hip], kick)
    snapped = figures(walk, bow, start, gap, Motion(output.skeleton, rotations, output.positions, output.fps))
    assert snapped.pop_joint in {walk.skeleton.names[j] for j in (leg.knee, leg.ankle, leg.toe)}
    assert snapped.pop > 2.5 * calm.pop_untouched
    assert snapped.accel < 1.5 * calm.accel  # the mean over joints dilutes it: no acceleration flag
    assert [f for f in snapped.flags if "popping" in f] and not [f for f in snapped.flags if "acceleration" in f]
    assert calm.flags == []


def test_the_untouched_clips_pop_as_themselves_and_the_reference_is_at_least_theirs(pair):
    walk, bow, start, output = pair
    q = figures(walk, bow, start, (start - 15, start - 3), output)
    assert q.pop == pytest.approx(q.pop_untouched, rel=1e-9)
    assert q.pop_reference >= q.pop_untouched and q.accel_reference >= q.accel_untouched
    assert q.pop_joint in walk.skeleton.names


def test_a_gap_above_one_and_a_half_times_the_untouched_clips_is_flagged():
    from core.quality import GapQuality

    calm = GapQuality(skate=0.03, skate_untouched=0.025, accel=1.1, accel_untouched=1.0)
    sliding = GapQuality(skate=0.08, skate_untouched=0.025, accel=1.1, accel_untouched=1.0)
    jerky = GapQuality(skate=None, skate_untouched=None, accel=1.6, accel_untouched=1.0)
    assert calm.flags == [] and "!" not in calm.summary()
    assert sliding.flags == ["skate 3.2 x the untouched clips'"] and "!" in sliding.summary()
    assert jerky.flags == ["acceleration 1.6 x the untouched clips'"]
    assert GapQuality.from_dict(sliding.to_dict()) == sliding


def test_feet_that_do_not_move_at_all_are_no_reason_to_flag_a_hair_of_slide():
    """Clips whose feet are perfectly still (authored, not captured) would make any slide look
    thousands of times worse: skate compares with no less than 1 % of a leg per second."""
    from core.quality import GapQuality

    hair = GapQuality(skate=0.006, skate_untouched=0.0, accel=1.0, accel_untouched=1.0)
    slide = GapQuality(skate=0.05, skate_untouched=0.0, accel=1.0, accel_untouched=1.0)
    assert hair.flags == [] and slide.flags == ["skate 5.0 x the untouched clips'"]


def test_clips_too_short_to_measure_give_no_figure_not_a_crash(mocap):
    """Two one-frame clips: no acceleration can be taken over 1/30 s (de9b3bd synthesized them;
    the measure must not stop that)."""
    from core.synthesize import Clip, synthesize

    bow = mocap(BOW)
    result = synthesize([Clip(bow[40:41], 0, name="a"), Clip(bow[60:61], 10, name="b")])
    assert result.plan.pairs[0].quality.accel is None


def test_each_foot_has_its_own_floors_even_when_only_one_has_a_toe(mocap):
    from dataclasses import replace

    from core.quality import floors_by_foot

    walk = mocap(WALK)
    rig = find_rig(walk)
    floor = np.array([1.0, 2.0, 3.0, 4.0])  # left ankle, left toe, right ankle, right toe
    np.testing.assert_array_equal(floors_by_foot(floor, rig), [[1.0, 2.0], [3.0, 4.0]])
    no_right_toe = replace(rig, right_leg=replace(rig.right_leg, toe=None))
    np.testing.assert_array_equal(floors_by_foot(floor[:3], no_right_toe), [[1.0, 2.0], [3.0, 3.0]])


def test_pop_and_acceleration_are_judged_against_their_references_and_no_less_than_the_clips_p99():
    """A gap the cores force to be jerky (the smoothest join peaks at 3) is not flagged for a peak
    of 4; a calm gap (the clips and the smoothest join barely move the knee) is not flagged
    for a knee within its own 99th percentile, however small the reference."""
    from core.quality import GapQuality

    forced = GapQuality(skate=None, skate_untouched=None, accel=4.0, accel_untouched=1.0, accel_reference=3.0,
                        pop=4.0, pop_untouched=1.0, pop_reference=3.0, pop_joint="knee")
    assert forced.flags == []
    calm = GapQuality(skate=None, skate_untouched=None, accel=0.4, accel_untouched=0.05, accel_reference=0.05,
                      pop=0.9, pop_untouched=0.06, pop_reference=0.06, pop_joint="knee")
    assert calm.flags == [] and calm.pop_judged == pytest.approx(0.9)
    snapping = GapQuality(skate=None, skate_untouched=None, accel=1.0, accel_untouched=1.0, accel_reference=1.0,
                          pop=3.2, pop_untouched=1.1, pop_reference=1.6, pop_joint="knee")
    assert snapping.flags == ["knee popping 2.0 x the smoothest join's"]
    assert GapQuality.from_dict(snapping.to_dict()) == snapping


def test_a_flag_does_not_change_with_W_when_the_motion_does_not(mocap):
    """A walk into an angry dash, cores 0.6 s apart: W 0.25 and W 1 render the same motion, while
    the range search's estimate of the blend against W's limits doubles and crosses 1 (it used
    to flag the gap at W 1 only). The gap is judged on what is rendered."""
    from core.synthesize import Clip, synthesize

    walk, dash = mocap(WALK), mocap("bandai1/dash_angry_001")
    margin = round(0.6 * walk.fps)
    prev_core = (margin, walk.n_frames - 1 - margin)
    timeline = [Clip(walk, 0, prev_core, "walk"),
                Clip(dash, prev_core[1], (margin, dash.n_frames - 1 - margin), "dash")]
    calm, smooth = (synthesize(timeline, responsiveness=w) for w in (0.25, 1.0))
    np.testing.assert_array_equal(calm.motion.rotations, smooth.motion.rotations)
    excess = [max(s.excess for s in r.plan.pairs[0].segments) for r in (calm, smooth)]
    assert excess[0] < 1.0 < excess[1]
    assert calm.plan.pairs[0].quality == smooth.plan.pairs[0].quality
    # what the plan says of the gap (the notes may say how W's search got there)
    def verdict(result):
        return [line for line in result.plan.summary().splitlines() if line.startswith("    gap ")]
    assert verdict(calm) == verdict(smooth) and len(verdict(calm)) == 1
    assert "abrupt" not in smooth.plan.summary()
