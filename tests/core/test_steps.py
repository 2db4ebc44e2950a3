"""Adaptation's steps planned with the supports (2008, 7.2; the legs issue, item 3), on real capture.

The plan decides every step before anything is drawn: which foot, from where, to where,
when it lifts and lands, how high it rises. A step is paced like the clips' own steps and
no more accelerated than they allow; where S1 has no room for that, a foot glides along
the floor instead of being crammed into a few frames; and the contact stage draws what
the plan says.
"""

import json

import numpy as np
import pytest

from core import quat
from core.analysis import Phase, foot_contacts, horizontal, phase_segments, support_phases
from core.contacts import PlannedStep, _Foot, _held_foot
from core.options import ContactOptions, SynthesisOptions
from core.plan import Plan
from core.quality import SourceFigures, clips_joint_p99, foot_levels, foot_positions, joint_accelerations
from core.rig import find_rig, leg_length
from core.synthesize import Clip, planned_steps, synthesize

WALK = "bandai1/walk_normal_001"
WALK_SAD = "bandai1/walk_sad_001"
BOW = "bandai1/bow_normal_001"
BYE = "bandai1/bye_normal_001"
PUNCH = "bandai1/punch_normal_001"
KICK = "bandai1/kick_normal_001"
RUN = "bandai1/run_happy_001"
TURN = "bandai2/walk-turn-left_normal_001"

# pairs whose steps were lifted higher than their time allows (cores this many seconds
# apart, as tests/bench/quality.py places them); the first four were crammed into S1 too
CRAMMED = [(WALK, BOW, 0.6), (WALK_SAD, PUNCH, 0.3), (RUN, WALK_SAD, 0.3), (TURN, BYE, 0.6)]
TIGHT = CRAMMED + [(BOW, PUNCH, 0.6), (KICK, BOW, 1.0), (BOW, BYE, 0.6)]


def label(pair):
    return f"{pair[0].split('/')[1]}>{pair[1].split('/')[1]}@{pair[2]}"


def cores_apart(prev, nxt, gap_s):
    """The benchmark's placement (tests/bench/quality.py, ``placed``): each core leaves
    ``gap_s`` at both ends of its clip (at most a third of it), the next core starts
    ``gap_s`` after the previous one ends."""
    gap = int(round(gap_s * prev.fps))
    mp, mn = min(gap, prev.n_frames // 3), min(gap, nxt.n_frames // 3)
    prev_core = (mp, prev.n_frames - 1 - mp)
    return [Clip(prev, 0, prev_core, "prev"), Clip(nxt, prev_core[1] + gap - mn, (mn, nxt.n_frames - 1 - mn), "next")]


@pytest.fixture(scope="module")
def synthesized(mocap):
    """Each pair of TIGHT synthesized, with its timeline."""
    out = {}
    for a, b, gap_s in TIGHT:
        timeline = cores_apart(mocap(a), mocap(b), gap_s)
        out[a, b, gap_s] = timeline, synthesize(timeline)
    return out


def single_supports(motion, rig, frames):
    """(frames, stride) of each single-support phase inside ``frames`` of ``motion``, not cut
    by either end: how long it lasts and how far the moving ankle travels across it."""
    contacts = foot_contacts(motion, rig)[frames]
    first = range(motion.n_frames)[frames][0]
    ankles = motion.global_positions()[:, [rig.leg("L").ankle, rig.leg("R").ankle]]
    up = motion.skeleton.up
    out = []
    for s in phase_segments(support_phases(contacts)):
        if s.phase in (Phase.LS, Phase.RS) and s.start > 0 and s.end < len(contacts) - 1:
            moving = 1 if s.phase == Phase.LS else 0
            a, b = first + s.start - 1, first + s.end + 1
            travel = horizontal(ankles[b, moving] - ankles[a, moving], up)
            out.append((s.end - s.start + 1, float(np.linalg.norm(travel))))
    return out


def pace_seconds(timeline, rig, length, options=SynthesisOptions()):
    """How long a step of ``length`` takes at the clips' pace, worked out the slow obvious way:
    the median single-support phase of the previous clip's last step_window_s and of the next
    clip, for their median stride, a shorter step quicker by the root of its share of it, no
    quicker than min_step_s, all over the share of a step spent travelling."""
    prev, nxt = timeline[0].motion, timeline[1].motion
    window = int(options.step_window_s * prev.fps)
    phases = single_supports(prev, rig, slice(max(prev.n_frames - window, 0), prev.n_frames))
    phases += single_supports(nxt, rig, slice(0, nxt.n_frames))
    if not phases:
        step_s, share = options.step_s, 1.0
    else:
        step_s = np.median([f for f, _ in phases]) / prev.fps
        share = np.sqrt(np.clip(length / np.median([s for _, s in phases]), 0.0, 1.0))
    return max(step_s * share, options.contacts.min_step_s) / (1.0 - 2.0 * options.step_delay)


def stepping(result, timeline, rig):
    """The planned steps that land (not those joining a swing of the following clip's own),
    each with how far its ankle or toe goes in the output from its first frame to its last."""
    pair = result.plan.pairs[0]
    s1 = pair.segment("lower", "pose-to-pose")
    nxt = timeline[1]
    aloft = ~foot_contacts(nxt.motion, rig)[min(s1.end - nxt.start, nxt.motion.n_frames - 1)]
    g = result.motion.global_positions()
    up = result.motion.skeleton.up
    out = []
    for step in (s for s in pair.segments if s.blend == "step"):
        k = ("left", "right").index(step.foot)
        if step.end == s1.end and aloft[k]:
            continue
        leg = rig.leg("LR"[k])
        ends = g[[step.start - result.start, step.end - result.start]][:, [leg.ankle, leg.toe]]
        # (the longer of the output's and the plan's: the foot may shift before its turn comes)
        way = float(np.linalg.norm(horizontal(np.subtract(step.way[1], step.way[0]), up)))
        out.append((step, max(float(np.linalg.norm(horizontal(ends[1] - ends[0], up), axis=-1).max()), way)))
    return out


@pytest.mark.parametrize("pair", CRAMMED, ids=label)
def test_a_step_is_no_quicker_than_the_clips_own_steps_allow(synthesized, pair):
    """Every step that lands takes its time at the clips' pace, less a frame of rounding, however
    short S1 is; where S1 has no room for that, the plan says which foot glides instead."""
    timeline, result = synthesized[pair]
    rig = find_rig(timeline[0].motion)
    fps = timeline[0].motion.fps
    for step, length in stepping(result, timeline, rig):
        quickest = pace_seconds(timeline, rig, length) - 1.0 / fps
        # (the output's ends of the step: within a few millimetres of the plan's way)
        assert (step.end - step.start) / fps >= quickest - 0.01 / fps, (step, length, quickest)
    glides = [s for s in result.plan.pairs[0].segments if s.blend == "glide"]
    assert not glides or "glide" in result.plan.pairs[0].note


@pytest.mark.parametrize("pair", TIGHT, ids=label)
def test_a_step_rises_no_more_than_its_time_allows(synthesized, pair):
    """A short or quick step is a low one: its rise (a bump of height h over T seconds peaks
    at 24 h / T^2 up and down) is no more accelerated than a step of its length at the clips'
    pace, which rises a quarter of its length; so it rises at most a quarter of its length,
    less by the square of how much quicker than that pace it is, and the output's ankle rises
    no higher than the plan says (no fixed least lift: a foot moving a millimetre does not
    hop up 3 cm)."""
    timeline, result = synthesized[pair]
    rig = find_rig(timeline[0].motion)
    motion = timeline[0].motion
    fps, up, leg = motion.fps, motion.skeleton.up, leg_length(motion.skeleton, rig, "L")
    g = result.motion.global_positions()
    for step, length in stepping(result, timeline, rig):
        seconds = (step.end - step.start) / fps
        allowed = min(0.25 * length, 0.25 * leg) * min(1.0, seconds / pace_seconds(timeline, rig, length)) ** 2
        assert step.way[2] <= allowed + 0.002 * leg, (step, length, allowed)
        side = "L" if step.foot == "left" else "R"
        ankle = g[step.start - result.start : step.end + 1 - result.start, rig.leg(side).ankle]
        height = ankle @ up
        line = np.linspace(height[0], height[-1], len(height))
        assert (height - line).max() <= step.way[2] + 0.005 * leg, (step, (height - line).max())


# a bow into a wave: both stand on nearly straight legs (99.9 % of their length); a held foot
# settling half a millimetre onto the gap's floor stretched one straight, its knee crossing
# 9 mm in a frame, 11 times its own p99 (the solver now stretches no leg past its own
# extension above render.REACH: the body comes down instead)
STRAIGHT = [(BOW, BYE, 0.6)]
KNEE_CASES = [(pair, fps) for pair in CRAMMED + STRAIGHT for fps in (30.0, 120.0)]


@pytest.mark.parametrize("pair, fps", KNEE_CASES, ids=[f"{label(pair)}-{fps:g}fps" for pair, fps in KNEE_CASES])
def test_a_knee_accelerates_no_more_than_twice_what_the_gap_asks_of_any_motion(synthesized, mocap, pair, fps):
    """The knees carried the pops: legs reaching feet crammed into a few frames. Neither knee's
    peak acceleration in the gap, over its own 99th percentile in the two clips, is more than
    twice the gap's pop reference (the untouched clips', or the smoothest joint paths joining
    the cores, core.quality), at the capture's 30 fps and resampled to 120 (sampled every
    1/30 s at both rates, as core.quality samples)."""
    from core.quality import measure_step

    if fps == 30.0:
        timeline, result = synthesized[pair]
    else:
        timeline = cores_apart(*(mocap(name).resampled(fps) for name in pair[:2]), pair[2])
        result = synthesize(timeline)
    rig = find_rig(timeline[0].motion)
    up = timeline[0].motion.skeleton.up
    gap = result.plan.pairs[0].gap
    k = measure_step(fps)
    p99 = clips_joint_p99([SourceFigures.of(c.motion, rig, up) for c in timeline], fps)
    g = result.motion.global_positions()
    on = np.arange(gap[0], gap[1] + 1, k) - result.start
    accel = joint_accelerations(g[on[0] - k : on[-1] + k + 1], fps)[on - on[0]]
    knees = [rig.leg(side).knee for side in "LR"]
    worst = (accel[:, knees].max(axis=0) / p99[knees]).max()
    assert worst <= 2.0 * result.plan.pairs[0].quality.pop_reference, worst


def both_feet_up(motion, rig, up, frames):
    """``(len(frames),)`` whether every ankle and toe joint of both feet stands above the floor
    band of core.quality (3 % of its own height range above its 2nd percentile)."""
    feet = foot_positions(motion, rig)
    levels = foot_levels(feet @ up, motion.fps)
    above = (feet[frames] @ up - levels.floor) > levels.band  # (n, 4): left ankle, toe, right ankle, toe
    return above[:, :2].all(axis=1) & above[:, 2:].all(axis=1)


# A held foot the blended leg reaches only past its own extension is eased short by the leg
# solver's soft zone (core.ik.soft_extension: a centimetre at most), above the band: both
# feet count as up on two frames. The pelvis path that brings the body to held feet (the
# legs issue, item 3) is still to build.
SHORT_OF_REACH = pytest.mark.xfail(strict=True, reason="a held foot eased short of reach: no pelvis path yet")


@pytest.mark.parametrize("prev, nxt", [pytest.param(BYE, WALK, marks=SHORT_OF_REACH),
                                       pytest.param(WALK_SAD, TURN, marks=SHORT_OF_REACH), (PUNCH, TURN)],
                         ids=lambda n: n.split("/")[1])
def test_feet_take_turns_in_the_air_where_the_clips_do(mocap, prev, nxt):
    """Never both feet off the floor at once (a hop) where neither clip has both up: with cores
    0.3 s apart these pairs used to step both feet in turn, the second a few frames after
    the first and in the air with it; the foot with no room to step now glides on the floor."""
    timeline = cores_apart(mocap(prev), mocap(nxt), 0.3)
    result = synthesize(timeline)
    rig = find_rig(timeline[0].motion)
    up = timeline[0].motion.skeleton.up
    gap = np.arange(result.plan.pairs[0].gap[0], result.plan.pairs[0].gap[1] + 1)
    hop = both_feet_up(result.motion, rig, up, gap - result.start)
    for clip in timeline:
        inside = (gap - clip.start >= 0) & (gap - clip.start < clip.motion.n_frames)
        hop[inside] &= ~both_feet_up(clip.motion, rig, up, gap[inside] - clip.start)
    assert not hop.any(), gap[hop]
    air = sorted((s for s in result.plan.pairs[0].segments if s.blend in ("step", "swing")), key=lambda s: s.start)
    assert all(one.end <= other.start for one, other in zip(air, air[1:])), "one after the other"


def test_a_foot_with_no_room_to_step_glides_instead_of_being_crammed(synthesized):
    """Cores 0.3 s apart leave S1 nine frames: a sad walk stopping into a punch has a 60 cm step
    to take, which needs them all at the clips' pace, and a foot that turns on the spot. That
    one has no room to step after it: it glides along the floor over the whole of S1, as the
    plan says (and measured as skate), rather than stepping in the last three frames."""
    timeline, result = synthesized[WALK_SAD, PUNCH, 0.3]
    pair = result.plan.pairs[0]
    s1 = pair.segment("lower", "pose-to-pose")
    glides = [s for s in pair.segments if s.blend == "glide"]
    assert glides and all((g.start, g.end) == (s1.start, s1.end) for g in glides)
    assert glides[0].way[2] == 0.0
    assert "glide" in pair.note


def test_the_plans_steps_round_trip_and_are_what_the_contact_stage_is_given(synthesized):
    """The plan holds each step's frames, way and lift, and each glide, as data: they survive
    its JSON, and what the contact stage draws (core.synthesize.planned_steps) is read from
    them, not worked out again."""
    for timeline, result in synthesized.values():
        back = Plan.from_dict(json.loads(json.dumps(result.plan.to_dict())))
        feet = [s for s in result.plan.pairs[0].segments if s.foot]
        assert [s for s in back.pairs[0].segments if s.foot] == feet
        drawn = planned_steps(result.plan.pairs[0])
        for s in (s for s in result.plan.pairs[0].segments if s.blend in ("step", "glide")):
            (one,) = [p for p in drawn[("left", "right").index(s.foot)] if (p.first, p.last) == (s.start, s.end)]
            assert one.glide == (s.blend == "glide")
            assert one.lift == s.way[2]
            np.testing.assert_array_equal(one.to, s.way[1])
    assert any(s.blend == "glide" for _, r in synthesized.values() for s in r.plan.pairs[0].segments)


def _foot_on_the_floor(n, across):
    """A flat foot whose rendered ankle stands at x = 0 until frame 7 and at x = ``across`` from
    frame 17 (carried there in between), 8 units above its floor, its toe 12 ahead."""
    x = np.clip((np.arange(n) - 7) / 10.0, 0.0, 1.0)
    ankle = np.stack([across * x * x * (3 - 2 * x), np.full(n, 8.0), np.zeros(n)], axis=-1)
    return _Foot(ankle, quat.identity((n,)), np.tile([0.0, -4.0, 12.0], (n, 1)))


@pytest.mark.parametrize("lift", [0.5, 6.0])
def test_the_contact_stage_lifts_a_planned_step_as_high_as_the_plan_says(lift):
    """The plan's lift, not a rule of the contact stage: a 30-unit step the plan lifts 0.5 rises
    0.5 half way (the rule alone would lift it 7.5), and one it lifts 6 rises 6."""
    up, leg, n = np.array([0.0, 1.0, 0.0]), 80.0, 25
    foot = _foot_on_the_floor(n, 30.0)
    down = (np.arange(n) <= 7) | (np.arange(n) >= 17)
    target, _, _ = _held_foot(foot, down, [PlannedStep(8, 16, lift=lift)], up, leg, np.array([8.0, 4.0]), ContactOptions(),
                              fps=30.0)
    height = target @ up - 8.0
    assert height[12] == pytest.approx(lift, abs=1e-9), "half way, as high as planned"
    assert height.max() == pytest.approx(lift, abs=1e-9)


def test_a_glide_slides_along_the_floor_from_where_the_foot_stands_to_its_place():
    """A glide does not lift: the foot stays on the floor (its ankle at its floor) and travels
    over all of its frames, from where it stands to where it lands, without a jerk at either end."""
    up, leg, n = np.array([0.0, 1.0, 0.0]), 80.0, 25
    foot = _foot_on_the_floor(n, 30.0)
    down = (np.arange(n) <= 7) | (np.arange(n) >= 17)
    target, _, _ = _held_foot(foot, down, [PlannedStep(8, 16, lift=0.0, glide=True)], up, leg, np.array([8.0, 4.0]),
                              ContactOptions(), fps=30.0)
    np.testing.assert_allclose(target @ up, 8.0, atol=1e-9)
    x = target[:, 0]
    np.testing.assert_allclose(x[:8], 0.0, atol=1e-9)
    np.testing.assert_allclose(x[17:], 30.0, atol=1e-9)
    assert np.all(np.diff(x[7:18]) > 0.0), "moving on every frame of the glide"
    speeds = np.diff(x[7:18])
    assert speeds[0] < speeds[len(speeds) // 2] and speeds[-1] < speeds[len(speeds) // 2], "eased at both ends"


def test_planned_steps_carry_the_plans_lift_and_glide():
    """core.synthesize.planned_steps hands the contact stage each step as the plan has it."""
    from core.plan import Segment

    class Pair:
        segments = (Segment("lower", "step", 10, 20, foot="left", way=((0, 0, 0), (30, 0, 0), 1.5)),
                    Segment("lower", "glide", 5, 25, foot="right", way=((0, 0, 0), (9, 0, 0), 0.0)),
                    Segment("lower", "swing", 5, 12, foot="right"))

    steps = planned_steps(Pair())
    (left,), (right,) = steps[0], steps[1]
    assert isinstance(left, PlannedStep) and (left.first, left.last, left.lift, left.glide) == (10, 20, 1.5, False)
    assert (right.first, right.last, right.lift, right.glide) == (5, 25, 0.0, True)
    np.testing.assert_array_equal(left.to, [30, 0, 0])
