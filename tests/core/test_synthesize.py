"""The synthesis engine (Oshita 2014 section 4, on the methods of 2008 sections 5-7), on real capture."""

import dataclasses
import json

import numpy as np
import pytest

from core import quat
from core.analysis import Phase, foot_contacts, phase_segments, support_phases
from core.motion import Motion
from core.options import ContactOptions
from core.plan import Plan
from core.rig import RigError, body_height, find_rig, leg_length
from core.synthesize import ADAPTATION, ADAPTATION_HOLD, CONNECTION, TRANSITION, Clip, synthesize
from broken_rigs import legs_flipped_up

WALK = "bandai1/walk_normal_001"
BOW = "bandai1/bow_normal_001"
KICK = "bandai1/kick_normal_001"
PUNCH = "bandai1/punch_normal_001"
RUN = "bandai1/run_normal_001"
SLASH = "bandai1/slash_normal_001"
DANCE = "bandai1/dance-short_normal_001"
TURN = "bandai2/walk-turn-left_normal_001"
WALK_LEFT = "bandai1/walk-left_normal_001"
RUN2 = "bandai2/run_normal_001"


@pytest.fixture(scope="module")
def clips(mocap):
    return {name: mocap(name) for name in (WALK, BOW, KICK, PUNCH, RUN, SLASH, DANCE, TURN, WALK_LEFT, RUN2)}


def walk_into_walk(walk):
    # the second walk is placed so that its left-support phase (clip frames 11..25)
    # plays together with the first walk's (frames 174..188): the same foot moves in both
    return [Clip(walk, 0, (0, 120), "walk A"), Clip(walk, 163, (60, 194), "walk B")]


def timelines(c):
    return {
        TRANSITION: walk_into_walk(c[WALK]),
        CONNECTION: [Clip(c[WALK], 0, (0, 100), "walk"), Clip(c[BOW], 150, (30, 137), "bow")],
        ADAPTATION: [Clip(c[BOW], 0, (0, 100), "bow"), Clip(c[WALK], 150, (60, 194), "walk")],
        ADAPTATION_HOLD: [Clip(c[BOW], 0, (0, 100), "bow A"), Clip(c[BOW], 150, (30, 137), "bow B")],
    }


def aligned_clips(result, clips, rig):
    """Each input clip as the engine placed it: the first as given, the others by their pair's alignment."""
    by_name = {c.name: c for c in clips}
    out = {clips[0].name: clips[0].motion}
    for pair in result.plan.pairs:
        out[pair.next] = pair.alignment.apply(by_name[pair.next].motion, rig.pelvis)
    return out


def core_errors(result, clips, rig) -> dict[str, float]:
    """Each clip's largest distance of any joint on any core frame of the output from the clip as
    the engine placed it (:func:`aligned_clips`; clips in the order of their cores)."""
    out = result.motion.global_positions()
    errors = {}
    for clip, placed in zip(clips, aligned_clips(result, clips, rig).values()):
        lo, hi = clip.core_range
        got = out[clip.start + lo - result.start : clip.start + hi + 1 - result.start]
        errors[clip.name] = float(np.abs(got - placed.global_positions()[lo : hi + 1]).max())
    return errors


def largest_step(motion):
    g = motion.global_positions()
    return np.linalg.norm(np.diff(g, axis=0), axis=-1).max()


def cores_apart(prev, nxt, gap_s, margin=15):
    """Two clips whose cores, ``margin`` frames in from each clip's ends, are ``gap_s`` seconds apart."""
    margin = min(margin, prev.n_frames // 4, nxt.n_frames // 4)
    first, second = (margin, prev.n_frames - 1 - margin), (margin, nxt.n_frames - 1 - margin)
    start = first[1] + int(round(gap_s * prev.fps)) - second[0]
    return [Clip(prev, 0, first, "prev"), Clip(nxt, start, second, "next")]


def placed(prev, nxt, margin):
    """The benchmark's placement: ``nxt`` starts ``margin`` frames before ``prev`` ends, cores ``margin`` in."""
    return [Clip(prev, 0, (margin, prev.n_frames - 1 - margin), "prev"),
            Clip(nxt, prev.n_frames - margin, (margin, nxt.n_frames - 1 - margin), "next")]


def pelvis_acceleration(motion, rig):
    """Horizontal acceleration of the pelvis per frame (second differences)."""
    g = motion.global_positions()[:, rig.pelvis]
    a = (g[2:] - 2.0 * g[1:-1] + g[:-2]) * motion.fps**2
    return np.linalg.norm(a - np.outer(a @ motion.skeleton.up, motion.skeleton.up), axis=-1)


def joint_accelerations(motion):
    g = motion.global_positions()
    return np.linalg.norm(g[2:] - 2.0 * g[1:-1] + g[:-2], axis=-1) * motion.fps**2


# ---------------------------------------------------------------- method selection


@pytest.mark.parametrize("method", [TRANSITION, CONNECTION, ADAPTATION, ADAPTATION_HOLD])
def test_support_phases_decide_the_method(clips, method):
    result = synthesize(timelines(clips)[method])
    assert [p.method for p in result.plan.pairs] == [method]


def test_a_walk_into_a_walk_is_a_transition_blending_the_same_foot(clips):
    pair = synthesize(walk_into_walk(clips[WALK])).plan.pairs[0]
    assert pair.method == TRANSITION
    assert pair.prev_phase[0] == pair.next_phase[0] in {"LS", "RS"}
    lower, upper = pair.segment("lower"), pair.segment("upper")
    assert lower.blend == "motion-to-motion" and upper.blend == "pose-to-pose"


@pytest.mark.parametrize("following", [WALK, KICK, PUNCH, BOW])
def test_a_clip_ending_still_on_both_feet_is_followed_by_adaptation(clips, following):
    """The bow ends standing on both feet: nothing moves a foot, so the next clip is adapted (2008, 7.1)."""
    result = synthesize([Clip(clips[BOW], 0, (0, 100), "bow"), Clip(clips[following], 160, None, "next")])
    assert result.plan.pairs[0].method in (ADAPTATION, ADAPTATION_HOLD)


def test_adaptation_releases_each_kept_foot_in_its_own_moving_phase_eq5_eq7(clips):
    result = synthesize(timelines(clips)[ADAPTATION])
    pair = result.plan.pairs[0]
    s1 = pair.segment("lower", "pose-to-pose")
    s3 = pair.segment("lower", "deformation")
    releases = sorted((s for s in pair.segments if s.foot and s.blend not in ("step", "swing")), key=lambda s: s.start)
    assert releases and {s.foot for s in releases} <= {"left", "right"}
    assert s3.start == s1.end and s3.end == releases[-1].start  # eq. (7)
    assert all(s.start > s1.end for s in releases)
    core_start = 150 + 60
    assert all(s.end < core_start for s in releases), "feet are home before the following core starts"
    steps = [s for s in pair.segments if s.blend == "step"]
    assert all((s.start, s.end) == (s1.start, s1.end) for s in steps)
    assert pair.segment("upper") is not None


def test_adaptation_need_not_wait_for_the_previous_step_to_land(clips):
    """Eq. (6) lets S1 start anywhere between the cores: the walk is still stepping after its
    core, so S1 starts on its standing foot and the swinging foot lands where the kick wants it."""
    walk, kick = clips[WALK], clips[KICK]
    timeline = [Clip(walk, 0, (15, walk.n_frames - 16), "walk"), Clip(kick, walk.n_frames - 15, (15, kick.n_frames - 16), "kick")]
    result = synthesize(timeline)
    pair = result.plan.pairs[0]
    s1 = pair.segment("lower", "pose-to-pose")
    assert pair.method == ADAPTATION
    rig = find_rig(walk)
    ankles = [rig.leg(side).ankle for side in "LR"]
    walk_contacts = foot_contacts(walk, rig)
    assert not walk_contacts[s1.start].all(), "S1 starts while the walk has a foot in the air"
    swinging = int(np.flatnonzero(~walk_contacts[s1.start])[0])
    own = aligned_clips(result, timeline, rig)["kick"].global_positions()[s1.end - timeline[1].start, ankles[swinging]]
    out = result.motion.global_positions()[s1.end - result.start, ankles[swinging]]
    assert np.linalg.norm(out - own) < 1e-3 * body_height(walk, rig), "lands on its own place, no second step"
    assert largest_step(result.motion) <= 3 * max(largest_step(walk), largest_step(kick))


def test_a_foot_stepping_home_in_adaptation_takes_as_long_as_the_clips_own_steps(clips):
    """The side step ends with its feet apart, the run starts with them together: both step
    home during S1, which lasts at least the clips' median single-support phase."""
    side, run = clips[WALK_LEFT], clips[RUN2]
    timeline = [Clip(side, 0, (30, side.n_frames - 31), "side step"), Clip(run, side.n_frames - 30, (30, run.n_frames - 31), "run")]
    pair = synthesize(timeline).plan.pairs[0]
    assert pair.method == ADAPTATION and any(s.blend == "step" for s in pair.segments)
    rig = find_rig(side)
    steps = [seg.end - seg.start + 1 for motion in (side, run)
             for seg in phase_segments(support_phases(foot_contacts(motion, rig)))
             if seg.phase in (Phase.LS, Phase.RS) and seg.start > 0 and seg.end < motion.n_frames - 1]
    s1 = pair.segment("lower", "pose-to-pose")
    assert s1.end - s1.start + 1 >= np.median(steps), (s1, np.median(steps))


@pytest.mark.parametrize("following", [WALK_LEFT, WALK])
def test_a_connection_that_would_sweep_a_foot_across_the_floor_gives_way_to_adaptation(clips, following):
    """The slash's last step is a short shuffle on its left foot; the walks' first poses want the
    feet far from where the slash has them, so a connection would slide them there."""
    slash, nxt = clips[SLASH], clips[following]
    timeline = [Clip(slash, 0, (15, slash.n_frames - 16), "slash"), Clip(nxt, slash.n_frames - 15, (15, nxt.n_frames - 16), "walk")]
    result = synthesize(timeline)
    assert result.plan.pairs[0].method == ADAPTATION
    assert largest_step(result.motion) <= 3 * max(largest_step(slash), largest_step(nxt))


@pytest.mark.parametrize("prev_name, next_name, margin", [(KICK, SLASH, 30), (BOW, SLASH, 30), (KICK, TURN, 30)])
def test_a_foot_stepping_home_lifts_before_it_travels(clips, prev_name, next_name, margin):
    """No sliding on the way home: until a stepping foot has risen a tenth of the height the
    plan gives its step (2 % of a leg at most), and once it is back down, it moves less than
    5 % of a leg across it; and feet step one at a time."""
    prev = clips[prev_name]
    result = synthesize(placed(prev, clips[next_name], margin))
    pair = result.plan.pairs[0]
    rig = find_rig(prev)
    leg = leg_length(prev.skeleton, rig, "L")
    up = prev.skeleton.up
    steps = [s for s in pair.segments if s.blend == "step"]
    assert steps, "the pair takes a step"
    s1 = pair.segment("lower", "pose-to-pose")
    for one, other in zip(steps, steps[1:]):
        # (a foot the clip has in the air at the end of S1 joins its swing there)
        assert one.end <= other.start or one.end == s1.end, "one after the other"
    standing = foot_contacts(result.motion, rig)
    for step in steps:
        if not standing[step.start - result.start, ("left", "right").index(step.foot)]:
            continue  # already in the air (the previous motion's swing), bent onto its place
        ankle = rig.leg("L" if step.foot == "left" else "R").ankle
        g = result.motion.global_positions()[step.start - result.start : step.end + 1 - result.start, ankle]
        # (above the line from where it leaves to where it lands, whose ends need not be at one
        # height; by a tenth of what the plan has it rise, which a short step keeps low)
        height = g @ up - np.linspace(g[0] @ up, g[-1] @ up, len(g))
        across = g - np.outer(g @ up, up)
        off = min(0.02 * leg, 0.1 * step.way[2])
        clear = np.flatnonzero(height > off)
        assert len(clear), f"the {step.foot} foot leaves the floor"
        assert np.linalg.norm(across[clear[0]] - across[0]) < 0.05 * leg, f"{step.foot} foot slides off"
        if abs(height[-1]) <= off:  # back on the floor (not joining the clip's own swing)
            assert np.linalg.norm(across[-1] - across[clear[-1]]) < 0.05 * leg, f"{step.foot} foot slides in"


@pytest.mark.parametrize("prev_name, next_name, margin", [(WALK, TURN, 15), (TURN, WALK_LEFT, 15), (WALK, TURN, 30)])
def test_a_kept_foot_stays_where_it_stands_until_the_following_clip_lifts_it(clips, prev_name, next_name, margin):
    """The following clip is aligned where it plants the kept foot (2008, 4.2), not where its first
    step already has it in the air: a foot standing when S1 starts does not slide along the floor."""
    prev = clips[prev_name]
    result = synthesize(placed(prev, clips[next_name], margin))
    s1 = result.plan.pairs[0].segment("lower", "pose-to-pose")
    rig = find_rig(prev)
    leg, up = leg_length(prev.skeleton, rig, "L"), prev.skeleton.up
    standing = foot_contacts(result.motion, rig)[s1.start - result.start]
    assert standing.any()
    for k in np.flatnonzero(standing):
        g = result.motion.global_positions()[s1.start - result.start : s1.end + 1 - result.start, rig.leg("LR"[k]).ankle]
        lifted = np.flatnonzero(np.abs((g - g[0]) @ up) >= 0.02 * leg)
        down = g[: lifted[0] if len(lifted) else len(g)]
        across = down - np.outer(down @ up, up)
        assert np.linalg.norm(across - across[0], axis=-1).max() < 0.05 * leg, f"the {'LR'[k]} foot slides"


@pytest.mark.parametrize("prev_name", [DANCE, BOW])
def test_a_foot_the_following_clip_has_in_the_air_when_s1_ends_steps_onto_its_swing(clips, prev_name):
    """The run starts in flight: a foot it has in the air at the end of S1 has no place of its own
    to be kept towards, so it steps onto its swing during S1, without a jerk where it joins it."""
    prev, run = clips[prev_name], clips[RUN2]
    timeline = placed(prev, run, 15)
    result = synthesize(timeline)
    pair = result.plan.pairs[0]
    s1 = pair.segment("lower", "pose-to-pose")
    rig = find_rig(prev)
    aloft = ~foot_contacts(run, rig)[s1.end - timeline[1].start]
    assert aloft.any()
    stepping = {s.foot for s in pair.segments if s.blend in ("step", "swing")}
    released = {s.foot for s in pair.segments if s.foot and s.blend not in ("step", "swing")}
    for k in np.flatnonzero(aloft):
        side = ("left", "right")[k]
        assert side in stepping and side not in released
    ankles = [rig.leg(side).ankle for side in "LR"]
    own = max(joint_accelerations(m)[:, ankles].max() for m in (prev, run))
    assert joint_accelerations(result.motion)[:, ankles].max() <= 1.5 * own


@pytest.mark.parametrize("prev_name, next_name, margin", [(BOW, RUN2, 30), (PUNCH, RUN2, 30), (RUN2, KICK, 15)])
def test_the_body_speeds_up_and_slows_down_no_faster_than_the_clips_do(clips, prev_name, next_name, margin):
    """The pose features are relative to the pelvis; the body's own travel limits the blend
    too (from standing into a run, or a run into a kick), at 1.5 times the clips' peak at most."""
    prev, nxt = clips[prev_name], clips[next_name]
    result = synthesize(placed(prev, nxt, margin))
    rig = find_rig(prev)
    own = max(pelvis_acceleration(m, rig).max() for m in (prev, nxt))
    assert pelvis_acceleration(result.motion, rig).max() <= 1.5 * own


@pytest.mark.parametrize("following", [BOW, KICK])
def test_a_run_that_must_stop_dead_does_so_on_planted_feet(clips, following):
    """Half a second from the run's core to a standing pose: a connection would land the run's
    flight onto the pose faster than either clip ever moves (no range keeps within the limits),
    sliding both feet to a stop. Adaptation keeps the foot the run stands on and steps the other."""
    run, nxt = clips[RUN2], clips[following]
    result = synthesize(placed(run, nxt, 15))
    pair = result.plan.pairs[0]
    assert pair.method in (ADAPTATION, ADAPTATION_HOLD)
    rig = find_rig(run)
    leg, up = leg_length(run.skeleton, rig, "L"), run.skeleton.up
    first = min(s.start for s in pair.segments) - result.start
    last = max(s.end for s in pair.segments if s.blend != "deformation") - result.start
    ankles = result.motion.global_positions()[first - 1 : last + 2][:, [rig.leg(side).ankle for side in "LR"]]
    height = ankles @ up
    floor = min(np.percentile(m.global_positions()[:, [rig.leg(side).ankle for side in "LR"]] @ up, 2) for m in (run, nxt))
    velocity = np.diff(ankles, axis=0) * result.motion.fps
    speed = np.linalg.norm(velocity - (velocity @ up)[..., None] * up, axis=-1)
    down = (height[1:] < floor + 0.05 * leg) & (height[:-1] < floor + 0.05 * leg)
    assert down.any() and speed[down].mean() < 0.5 * leg, speed[down].mean() / leg


def test_adaptation_without_a_moving_foot_steps_into_the_clips_stance_before_its_core_eq8(clips):
    """Eq. (8) keeps the previous stance, but not into the core: a walk stopping into a bow steps
    into the bow's stance during S1, one foot at a time, and nothing of the pair reaches past the
    core's first frame (a bow following a bow stands where it stood: no step)."""
    walk, bow = clips[WALK], clips[BOW]
    timeline = [Clip(walk, 0, (15, walk.n_frames - 16), "walk"), Clip(bow, walk.n_frames, (30, 137), "bow")]
    pair = synthesize(timeline).plan.pairs[0]
    assert pair.method == ADAPTATION_HOLD
    steps = [s for s in pair.segments if s.blend in ("step", "swing")]
    assert steps and all(one.end <= other.start for one, other in zip(steps, steps[1:]))
    assert max(s.end for s in pair.segments) <= timeline[1].start + timeline[1].core_range[0]
    same = synthesize(timelines(clips)[ADAPTATION_HOLD]).plan.pairs[0]
    assert same.method == ADAPTATION_HOLD and not [s for s in same.segments if s.blend == "step"]


def test_overlapping_cores_reject_the_following_clip_and_the_rest_still_synthesize(clips):
    walk, bow = clips[WALK], clips[BOW]
    timeline = [Clip(walk, 0, (0, 100), "walk"), Clip(bow, 60, None, "early bow"), Clip(bow, 150, (30, 137), "bow")]
    result = synthesize(timeline)
    assert [r.clip for r in result.plan.rejected] == ["early bow"]
    assert "core" in result.plan.rejected[0].reason and "walk" in result.plan.rejected[0].reason
    assert [(p.prev, p.next) for p in result.plan.pairs] == [("walk", "bow")]


def test_clips_are_taken_in_the_order_of_their_cores_and_left_out_only_when_cores_overlap(clips, mocap):
    """A clip may start before another and still have its core after the other's (a long
    lead-in, as laid out in the NLA): both are kept, in the order of their cores, and both
    cores come out exact. A clip is left out only when its core overlaps an accepted one,
    and the reason names both cores in output frames."""
    walk, dance = clips[WALK], mocap(DANCE)
    timeline = [Clip(walk, 100, (0, 50), "walk"), Clip(dance, 0, (200, 300), "dance")]
    result = synthesize(timeline)
    assert not result.plan.rejected
    assert [(p.prev, p.next) for p in result.plan.pairs] == [("walk", "dance")]
    rig = find_rig(walk)
    height = body_height(walk, rig)
    out = result.motion.global_positions()
    placed = aligned_clips(result, [timeline[0], timeline[1]], rig)
    for clip in timeline:
        lo, hi = clip.core_range
        got = out[clip.start + lo - result.start : clip.start + hi + 1 - result.start]
        np.testing.assert_allclose(got, placed[clip.name].global_positions()[lo : hi + 1], atol=1e-6 * height)

    overlapping = [Clip(walk, 100, (0, 150), "walk"), Clip(dance, 0, (200, 300), "dance")]
    result = synthesize(overlapping)
    (rejection,) = result.plan.rejected
    assert rejection.clip == "dance"
    assert "output frames 200..300" in rejection.reason and "'walk' (output frames 100..250)" in rejection.reason


# ---------------------------------------------------------------- what the output keeps


@pytest.mark.parametrize("method", [TRANSITION, CONNECTION, ADAPTATION])
def test_cores_survive_exactly(clips, method):
    timeline = timelines(clips)[method]
    rig = find_rig(clips[WALK])
    result = synthesize(timeline)
    height = body_height(clips[WALK], rig)
    out = result.motion.global_positions()
    for clip in timeline:
        placed = aligned_clips(result, timeline, rig)[clip.name].global_positions()
        lo, hi = clip.core_range
        got = out[clip.start + lo - result.start : clip.start + hi + 1 - result.start]
        np.testing.assert_allclose(got, placed[lo : hi + 1], atol=1e-6 * height, err_msg=clip.name)


@pytest.mark.parametrize("gap_s, margin_s", [(0.3, 0.5), (1.0, 0.5), (0.3, 0.3)])
def test_every_core_is_exact_on_every_joint(clips, mocap, gap_s, margin_s):
    """No IK and no kept-foot offset inside a core, whatever the method: every joint of every core
    frame is the clip's own, as the alignment places it (eq. 8's kept stance included)."""
    names = [WALK, RUN2, BOW, KICK, DANCE, "bandai1/guide_normal_001", "bandai1/dash_angry_001", TURN]
    motions = {n: clips[n] if n in clips else mocap(n) for n in names}
    rig = find_rig(motions[WALK])
    height = body_height(motions[WALK], rig)
    for a in names:
        for b in names:
            if a == b:
                continue
            timeline = cores_apart(motions[a], motions[b], gap_s, int(round(margin_s * motions[a].fps)))
            result = synthesize(timeline)
            for name, error in core_errors(result, timeline, rig).items():
                assert error <= 1e-6 * height, f"{a} > {b}: core of {name} moved by {error:.3g}"


@pytest.mark.parametrize("method", [TRANSITION, CONNECTION, ADAPTATION, ADAPTATION_HOLD])
def test_no_joint_jumps(clips, method):
    timeline = timelines(clips)[method]
    result = synthesize(timeline)
    assert np.all(np.isfinite(result.motion.rotations))
    assert largest_step(result.motion) <= 3 * max(largest_step(c.motion) for c in timeline)


def test_random_timelines_never_give_nan_or_jumps(clips):
    rng = np.random.default_rng(7)
    names = list(clips)
    for _ in range(6):
        picked = rng.choice(names, size=4)
        start, timeline = 0, []
        for i, name in enumerate(picked):
            m = clips[name]
            n = m.n_frames
            lo = int(rng.integers(0, n // 3))
            hi = int(rng.integers(lo, n))
            timeline.append(Clip(m, start, (lo, hi), f"{i}:{name}"))
            start += int(rng.integers(n // 2, n + 40))
        result = synthesize(timeline, responsiveness=float(rng.uniform()))
        assert np.all(np.isfinite(result.motion.rotations)) and np.all(np.isfinite(result.motion.positions))
        assert largest_step(result.motion) <= 3 * max(largest_step(c.motion) for c in timeline), result.plan.summary()


def test_raising_w_lengthens_transitions(clips):
    def total_blend_frames(W):
        frames = 0
        for timeline in timelines(clips).values():
            for pair in synthesize(timeline, responsiveness=W).plan.pairs:
                frames += sum(s.end - s.start for s in pair.segments if s.blend != "deformation")
        return frames

    assert total_blend_frames(1.0) > total_blend_frames(0.0)


def test_the_plan_prints_and_serialises(clips):
    result = synthesize(timelines(clips)[ADAPTATION])
    data = json.loads(result.plan.to_json())
    assert data["pairs"][0]["method"] == ADAPTATION
    assert {"part", "blend", "start", "end", "weights"} <= set(data["pairs"][0]["segments"][0])
    assert "adaptation" in result.plan.summary()


@pytest.mark.parametrize("method", [TRANSITION, CONNECTION, ADAPTATION, ADAPTATION_HOLD])
def test_the_plan_loads_back_from_its_json(clips, method):
    """Plan.from_dict reads what to_dict wrote: the same plan, steps, alignment and quality included."""
    from core.plan import Plan

    plan = synthesize(timelines(clips)[method]).plan
    again = Plan.from_dict(json.loads(plan.to_json()))
    assert again.to_dict() == plan.to_dict()
    assert again.summary() == plan.summary()
    np.testing.assert_allclose(again.pairs[0].alignment.rotation, plan.pairs[0].alignment.rotation)


def test_a_longer_minimum_blend_given_as_an_option_gives_longer_blends(clips):
    """The synthesis reads its minimum blend from the options (SynthesisOptions.min_blend_s):
    set longer, the blends are longer."""
    from core.options import SynthesisOptions

    timeline = timelines(clips)[ADAPTATION]
    short = synthesize(timeline).plan.pairs[0].segment("upper")
    longer = synthesize(timeline, options=SynthesisOptions(min_blend_s=0.6)).plan.pairs[0].segment("upper")
    assert longer.end - longer.start >= round(0.6 * clips[WALK].fps) > short.end - short.start


def test_the_plan_keeps_the_range_search_s_excess_as_data_not_as_a_verdict(clips):
    """Half a second to stop a run dead: no range keeps within the search's limits at W, and the
    plan's data says by how much; its summary gives no verdict from it (the limits move with W
    on a motion that does not change: the gap's quality figures are the verdict)."""
    result = synthesize(placed(clips[RUN2], clips[BOW], 15))
    abrupt = [s for s in result.plan.pairs[0].segments if s.excess > 1.0]
    assert abrupt
    data = json.loads(result.plan.to_json())
    assert any(seg.get("excess", 0.0) > 1.0 for seg in data["pairs"][0]["segments"])
    assert "abrupt" not in result.plan.summary()
    # a roomy placement of the same clips keeps within them
    roomy = synthesize([Clip(clips[RUN2], 0, (0, 40), "run"), Clip(clips[BOW], 120, None, "bow")])
    assert all(s.excess <= 1.0 for s in roomy.plan.pairs[0].segments)


# ---------------------------------------------------------------- conventions of other rigs


def test_the_plan_does_not_depend_on_units_names_or_where_the_clips_stand(clips):
    base = timelines(clips)[CONNECTION]
    turn = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), 1.1)
    changed = [Clip(c.motion.scaled(0.01).renamed({"Foot_L": "LeftFoot", "Foot_R": "RightFoot"})
                    .transformed(turn, np.array([2.0, 0.0, -3.0])), c.start, c.core, c.name) for c in base]
    a, b = synthesize(base).plan, synthesize(changed).plan
    assert [p.method for p in a.pairs] == [p.method for p in b.pairs]
    assert [(s.start, s.end) for s in a.pairs[0].segments] == [(s.start, s.end) for s in b.pairs[0].segments]


def test_clips_at_another_rate_are_resampled_onto_the_first(clips):
    walk, bow = clips[WALK], clips[BOW].resampled(60)
    result = synthesize([Clip(walk, 0, (0, 100), "walk"), Clip(bow, 150, (60, 274), "bow at 60 fps")])
    assert result.motion.fps == walk.fps
    assert result.plan.end == 150 + clips[BOW].n_frames - 1


# ---------------------------------------------------------------- bad input


def test_bad_timelines_say_what_to_fix(clips):
    walk = clips[WALK]
    with pytest.raises(ValueError, match="at least one clip"):
        synthesize([])
    with pytest.raises(ValueError, match="core 10..999"):
        synthesize([Clip(walk, 0, (10, 999), "walk")])
    other = walk.renamed({"Head": "Kopf"})
    with pytest.raises(ValueError, match="another skeleton"):
        synthesize([Clip(walk, 0, None, "a"), Clip(other, 300, None, "b")])
    with pytest.raises(ValueError, match="responsiveness"):
        synthesize([Clip(walk, 0, None, "a")], responsiveness=1.5)


def test_a_clip_placed_after_a_gap_waits_in_its_first_pose(clips):
    """Connection may finish before the next clip starts: it then holds its first pose (2008, 6.2),
    its upper body as captured and nothing moving (the contact stage may plant its feet where
    its core will want them, and bring the pelvis down to them: smoothed over pelvis_s, so the
    wait is still from that long after the blend)."""
    walk, slash = clips[WALK], clips[SLASH]
    timeline = [Clip(walk, 0, (0, 100), "walk"), Clip(slash, 260, (38, 200), "slash")]
    result = synthesize(timeline)
    assert result.plan.end == 260 + slash.n_frames - 1 == result.start + result.motion.n_frames - 1
    rig = find_rig(walk)
    placed = aligned_clips(result, timeline, rig)["slash"]
    last_blend = max(s.end for s in result.plan.pairs[0].segments)
    assert last_blend < 258, "the pair leaves a wait"
    settled = last_blend + 1 + int(round(ContactOptions().pelvis_s * walk.fps))
    waiting = result.motion.global_positions()[settled - result.start : 260 - result.start]
    tolerance = 1e-6 * body_height(walk, rig)
    np.testing.assert_allclose(waiting, np.broadcast_to(waiting[0], waiting.shape), atol=tolerance)
    upper = rig.upper_body_mask(walk.skeleton)
    np.testing.assert_allclose(waiting[:, upper], np.broadcast_to(placed.global_positions()[0, upper],
                                                                  waiting[:, upper].shape), atol=tolerance)


def test_a_blend_starting_on_the_last_core_frame_leaves_it_untouched(clips):
    """Eqs. (1)-(6) allow a segment to start where the core ends; that frame is still the clip's own,
    even for straight standing legs, which leg IK must not pull in."""
    walk, bow, punch = clips[WALK], clips[BOW], clips[PUNCH]
    timeline = [Clip(walk, 1, (0, 100), "walk"), Clip(bow, 151, (30, 137), "bow"), Clip(punch, 300, None, "punch")]
    rig = find_rig(walk)
    result = synthesize(timeline)
    assert result.plan.pairs[1].segments[0].start == 151 + 137  # the bow's last core frame
    placed = aligned_clips(result, timeline, rig)["bow"].global_positions()[30:138]
    got = result.motion.global_positions()[151 + 30 - result.start : 151 + 138 - result.start]
    np.testing.assert_allclose(got, placed, atol=1e-6 * body_height(walk, rig))


def test_held_pose_ends_use_the_slopes_of_eq16(clips):
    timeline = timelines(clips)[ADAPTATION]
    held = synthesize(timeline, pose_ends="held").plan.pairs[0].segment("upper")
    eased = synthesize(timeline, pose_ends="eased").plan.pairs[0].segment("upper")
    assert (eased.weights.slope_start, eased.weights.slope_end) == (0.0, 0.0)
    assert held.weights.slope_start > 0.0 or held.weights.slope_end > 0.0
    with pytest.raises(ValueError, match="pose_ends"):
        synthesize(timeline, pose_ends="frozen")


@pytest.mark.parametrize("method", [TRANSITION, ADAPTATION])
def test_the_plan_is_the_same_for_a_z_up_rig(clips, method):
    base = timelines(clips)[method]
    z_up = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    changed = [Clip(c.motion.transformed(z_up), c.start, c.core, c.name) for c in base]
    a, b = synthesize(base).plan, synthesize(changed).plan
    assert [p.method for p in a.pairs] == [p.method for p in b.pairs]
    assert [(s.blend, s.start, s.end) for s in a.pairs[0].segments] == [(s.blend, s.start, s.end) for s in b.pairs[0].segments]


def test_cores_that_leave_no_room_to_blend_are_pointed_out(clips):
    walk, bow = clips[WALK], clips[BOW]
    tight = synthesize([Clip(walk, 0, (0, 120), "walk"), Clip(bow, 100, (21, 137), "bow")]).plan
    assert "leave 0 frames" in tight.pairs[0].warning and "start 'bow' later" in tight.pairs[0].warning
    assert "note:" in tight.summary() and json.loads(tight.to_json())["pairs"][0]["warning"]
    roomy = synthesize(timelines(clips)[CONNECTION]).plan
    assert roomy.pairs[0].warning is None


def test_a_blend_between_sides_half_a_turn_apart_turns_one_way():
    """Two sides whose headings pass through half a turn apart while they blend (a spin into a
    walk): the shorter arc frame by frame would flip the body round in one frame."""
    from core.render import blend

    up = np.array([0.0, 1.0, 0.0])
    T = 21
    src = (quat.identity((T, 1)), np.zeros((T, 1, 3)))
    dst = (quat.from_axis_angle(up, np.linspace(np.radians(170), np.radians(190), T))[:, None], np.zeros((T, 1, 3)))
    rot, _ = blend(src, dst, np.full(T, 0.5))
    turn = np.degrees(quat.angle(rot[1:, 0], rot[:-1, 0]))
    assert turn.max() < 1.0, f"the body flips by {turn.max():.0f} degrees in one frame"


def test_a_connection_standing_on_the_previous_stance_foot_is_aligned_on_it(mocap):
    """A connection pose standing on the foot the previous motion stands on is placed on that
    foot's place and heading (not on the snapped body orientation), so the planted foot does not
    pivot: from the previous phase's start to the connection it turns less than 3 degrees."""
    walk, kick = mocap("bandai1/walk_sad_001"), mocap(KICK)
    margin = 30
    timeline = [Clip(walk, 0, (margin, walk.n_frames - 1 - margin), "walk"),
                Clip(kick, walk.n_frames - 1 - margin, (margin, kick.n_frames - 1 - margin), "kick")]
    result = synthesize(timeline)
    pair = result.plan.pairs[0]
    assert pair.method == CONNECTION
    rig = find_rig(walk)
    leg = rig.leg("L" if pair.alignment.anchor == "left foot" else "R")
    lo, hi = pair.prev_phase[1], pair.segment("lower").end
    g = result.motion.global_positions()[lo - result.start : hi + 1 - result.start]
    toward = g[:, leg.toe] - g[:, leg.ankle]
    up = walk.skeleton.up
    across = toward - np.outer(toward @ up, up)
    heading = np.unwrap(np.arctan2(np.cross(across[0], across) @ up, across @ across[0]))
    assert np.degrees(np.ptp(heading)) < 3.0


def test_the_result_says_which_feet_are_down(clips):
    """Result.contacts: per output frame, the feet the blended sources hold down; on a core's
    frames, the clip's own contacts."""
    from core.analysis import foot_contacts as contacts_of

    timeline = timelines(clips)[ADAPTATION]
    result = synthesize(timeline)
    assert result.contacts.shape == (result.motion.n_frames, 2)
    clip = timeline[1]
    lo, hi = clip.core_range
    own = contacts_of(clip.motion, find_rig(clip.motion))[lo : hi + 1]
    assert np.array_equal(result.contacts[clip.start + lo - result.start : clip.start + hi + 1 - result.start], own)


def test_a_step_lands_where_the_plan_says(clips, mocap):
    """The plan is what is drawn: each step's `to` (where the aligned clip has the foot) is where
    the output's ankle is when the step lands."""
    names = ["bandai1/guide_normal_001", WALK, BOW, KICK, TURN]
    motions = {n: clips[n] if n in clips else mocap(n) for n in names}
    rig = find_rig(motions[WALK])
    leg = leg_length(motions[WALK].skeleton, rig, "L")
    up = motions[WALK].skeleton.up
    checked = 0
    for a in names:
        for b in names:
            if a == b:
                continue
            result = synthesize(cores_apart(motions[a], motions[b], 0.6, 18))
            g = result.motion.global_positions()
            for step in (s for s in result.plan.pairs[0].segments if s.way):
                ankle = g[step.end - result.start, rig.leg("L" if step.foot == "left" else "R").ankle]
                off = ankle - np.array(step.way[1])
                assert np.linalg.norm(off - (off @ up) * up) < 0.005 * leg, f"{a} > {b}: the {step.foot} step"
                checked += 1
    assert checked > 10


def test_a_clip_with_other_bone_lengths_is_synthesized_with_a_warning_naming_the_bones(clips):
    """Same names and hierarchy, bones 1.3 times longer (another performer): accepted, but the
    plan warns and names the bones, as its core keeps its rotations on the first clip's skeleton,
    not its positions. Within 2 % (calibration) nothing is said."""
    walk, bow = clips[WALK], clips[BOW]

    def scaled(motion, k):
        skeleton = dataclasses.replace(motion.skeleton, offsets=motion.skeleton.offsets * k)
        positions = np.array(motion.positions)
        positions[:, 1:] *= k
        positions[:, 0] *= k
        return Motion(skeleton, motion.rotations, positions, motion.fps)

    timeline = [Clip(walk, 0, (0, 100), "walk"), Clip(scaled(bow, 1.3), 150, (30, 137), "tall bow")]
    result = synthesize(timeline)
    (warning,) = result.plan.warnings
    assert "'tall bow'" in warning and "every bone +30 %" in warning and "rotations" in warning
    assert result.plan.pairs and "warning: clip 'tall bow'" in result.plan.summary()
    assert Plan.from_dict(json.loads(result.plan.to_json())).warnings == result.plan.warnings
    close = [Clip(walk, 0, (0, 100), "walk"), Clip(scaled(bow, 1.015), 150, (30, 137), "bow")]
    assert synthesize(close).plan.warnings == ()
    # one bone longer: named
    thigh = walk.skeleton.names.index("LowerLeg_L")  # the thigh is the knee's offset
    offsets = np.array(bow.skeleton.offsets)
    offsets[thigh] *= 1.1
    long_thigh = Motion(dataclasses.replace(bow.skeleton, offsets=offsets), bow.rotations,
                        np.where(np.arange(len(offsets))[None, :, None] == thigh, offsets[None], bow.positions), bow.fps)
    (warning,) = synthesize([Clip(walk, 0, (0, 100), "walk"), Clip(long_thigh, 150, (30, 137), "bow")]).plan.warnings
    assert "(LowerLeg_L +10 %)" in warning


@pytest.mark.parametrize("factor", [1e-12, 0.01, 2.2])
def test_a_clip_whose_bones_are_more_than_twice_or_half_as_long_is_refused_naming_both_and_the_factor(clips, factor):
    """The issue: a clip scaled by 1e-12 beside a normal one was taken, with a warning, and its
    poses measured at the first clip's size. Beyond a factor of 2 the two are not one body
    (another unit, a scaled export): the pair is refused, both named, with the factor."""
    walk, bow = clips[WALK], clips[BOW]
    with pytest.raises(ValueError, match=rf"^clip 'bow' has bones {factor:.3g} times as long as those of 'walk' "):
        synthesize([Clip(walk, 0, (0, 100), "walk"), Clip(bow.scaled(factor), 150, (30, 137), "bow")])


def test_both_clips_in_metres_are_one_scale(clips):
    """The factor compares the clips as given: a pair both in metres is at one scale."""
    walk, bow = clips[WALK].scaled(0.01), clips[BOW].scaled(0.01)
    assert synthesize([Clip(walk, 0, (0, 100), "walk"), Clip(bow, 150, (30, 137), "bow")]).plan.pairs


def test_a_clip_whose_legs_point_up_is_refused_beside_one_whose_legs_hang(clips):
    """The rig is found on the first clip; every other clip's legs are checked with it."""
    walk, bow = clips[WALK], clips[BOW]
    with pytest.raises(RigError, match=r"^clip 'bow': the legs point up"):
        synthesize([Clip(walk, 0, (0, 100), "walk"), Clip(legs_flipped_up(bow), 150, (30, 137), "bow")])


@pytest.mark.parametrize("pair", [("bandai1/dash_active_001", "bandai1/dash_feminine_001"), (WALK, RUN2),
                                  (BOW, WALK), ("bandai1/walk_sad_001", KICK)])
def test_cores_stay_exact_however_close_the_next_core_starts(clips, mocap, pair):
    """The trust issue's defect: the second core starting on the frame right after the first
    core ends turned the second clip's right leg by 33 degrees on its first core frame (a swing
    planned over a single frame, 76..76, bent onto the previous motion's foot). Every start from
    the first core's end to 30 frames after it keeps both cores exact."""
    a, b = (clips[n] if n in clips else mocap(n) for n in pair)
    rig = find_rig(a)
    height = body_height(a, rig)
    first_core = (10, min(75, a.n_frames - 1))
    for gap in range(1, 31):
        timeline = [Clip(a, 0, first_core, "a"), Clip(b, first_core[1] + gap, (0, min(77, b.n_frames - 1)), "b")]
        result = synthesize(timeline)
        if result.plan.rejected:
            continue
        for name, error in core_errors(result, timeline, rig).items():
            assert error <= 1e-6 * height, f"next core {gap} frame(s) after: core of {name} moved by {error:.3g}"


def test_no_step_runs_past_s1_into_the_next_core(mocap):
    """Found by the hostile-timeline fuzz (seed 12): a dash whose core ends on the frame before a
    raised hand's core starts planned the right foot's swing over 154..155, one frame into the
    core, which moved that clip's core by a quarter of a body height."""
    turn, dash = mocap("bandai2/walk-turn-right_normal_001"), mocap("bandai1/dash_masculinity_001")
    raise_hand = mocap("bandai2-raise/raise-up-right-hand_exhausted_004")
    timeline = [Clip(turn, 11, (94, 95), "turn"), Clip(dash, 104, (46, 49), "dash"),
                Clip(raise_hand, 154, (0, 11), "raise")]
    result = synthesize(timeline, responsiveness=1.0)
    core_start = {c.name: c.start + c.core_range[0] for c in timeline}
    for pair in result.plan.pairs:
        assert all(s.end <= core_start[pair.next] for s in pair.segments), pair.next
    rig = find_rig(turn)
    assert max(core_errors(result, timeline, rig).values()) <= 1e-6 * body_height(turn, rig)


def test_an_additional_motion_cut_short_by_the_output_s_end_is_still_composed(mocap):
    """Found by the hostile-timeline fuzz (seed 95): a run whose tail plays time-scaled short ends
    the output inside the slash composed over it; the part of the slash left no longer swung an
    arm over the threshold (8.1), and compose's None ended in a TypeError. What a clip lends is
    decided on the whole clip."""
    timeline = [Clip(mocap("bandai1/bow_sad_001"), -6, (201, 208), "bow"),
                Clip(mocap("bandai1/walk-back_sad_001"), 64, (290, 326), "walk back"),
                Clip(mocap("bandai1/slash_normal_001"), 288, (103, 125), "slash"),
                Clip(mocap("bandai1/run_feminine_001"), 414, None, "run"),
                Clip(mocap("bandai1/guide_angry_001"), 520, (14, 96), "guide")]
    for w in (0.0, 0.5, 1.0):
        result = synthesize(timeline, responsiveness=w)
        assert np.isfinite(result.motion.rotations).all()


@pytest.mark.parametrize("fps_base", [1.0, 0.999999, 1.000001])
def test_cores_leaving_the_shortest_blend_to_the_frame_are_not_pointed_out(clips, fps_base):
    """Blender's BVH importer plays 30 fps capture at 30 / 0.999999 fps: 0.2 s is 6.000006 frames there,
    and a room of 6 frames is the shortest blend to the nearest frame, not a jump; 5 frames is one short."""
    fps = 30.0 / fps_base
    walk, bow = (dataclasses.replace(clips[name], fps=fps) for name in (WALK, BOW))
    shortest = synthesize([Clip(walk, 0, (0, 120), "walk"), Clip(bow, 100, (27, 137), "bow")]).plan
    assert shortest.pairs[0].gap == (120, 127) and shortest.pairs[0].warning is None
    short = synthesize([Clip(walk, 0, (0, 120), "walk"), Clip(bow, 100, (26, 137), "bow")]).plan
    assert "leave 5 frames" in short.pairs[0].warning


@pytest.mark.parametrize("scale, how", [(1.25, "float"), (0.8, "sink")])
def test_a_clip_whose_root_height_does_not_fit_the_legs_is_synthesized_with_a_warning(clips, scale, how):
    """Issue 26 item 5: an action captured on a body 25 % larger (or smaller), played on another
    skeleton of the same bone names (as Blender plays every action on the armature's bones): its root
    stands that much higher (lower), and its feet float (sink). The plan says so."""
    walk, bow = clips[WALK], clips[BOW]
    # the path of the root down to the pelvis as captured on the other body (what an action keys); the
    # bones below are this skeleton's
    parents, moved = bow.skeleton.parents, [find_rig(bow).pelvis]
    while parents[moved[-1]] >= 0:
        moved.append(parents[moved[-1]])
    positions = bow.positions.copy()
    positions[:, moved] *= scale
    other = dataclasses.replace(bow, positions=positions)
    (warning,) = synthesize([Clip(walk, 0, (0, 100), "walk"), Clip(other, 150, (30, 137), "bow")]).plan.warnings
    assert f"the feet of 'bow' {how}" in warning and "where those of 'walk' stand" in warning
    assert "retarget it to this skeleton" in warning


def test_clips_of_one_performer_stand_on_one_floor(clips):
    """No floor warning between clips captured on one body: walking, running, dashing, kicking, dancing."""
    timeline = [Clip(clips[WALK], 0, (0, 100), "walk"), Clip(clips[RUN], 150, None, "run"),
                Clip(clips[KICK], 300, None, "kick"), Clip(clips[SLASH], 700, None, "slash")]
    assert synthesize(timeline).plan.warnings == ()
