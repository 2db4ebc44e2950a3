"""What the animator is told about a gap, and what Give Room, Add as Soon as Possible and the
user's blend length do about it (issue 26)."""

import json
from dataclasses import replace

import numpy as np
import pytest

from core.demo import demo_clips
from core.methods import nearest_length
from core.motion import Motion
from core.plan import PairPlan, Plan
from core.quality import GapQuality, gap_warning
from core.room import give_room, give_room_to_every_flagged_gap, moved_clips
from core.synthesize import Clip, pair_measure, scheduled_start, synthesize
from core.timeline import Span, default_core

WALK, RUN, GUIDE = "bandai1/walk_normal_001", "bandai2/run_normal_001", "bandai1/guide_normal_001"


@pytest.fixture(scope="module")
def tight(mocap):
    """A walk, a run and a guiding gesture placed close: both gaps flagged as placed. The run's
    gap cannot be helped within 2 s; the guide's can, with a few frames."""
    return [Clip(mocap(WALK), 0, (20, 116), "walk"), Clip(mocap(RUN), 96, (40, 48), "run"),
            Clip(mocap(GUIDE), 114, (40, 66), "guide")]


@pytest.fixture(scope="module")
def cramped(mocap):
    """A walk and a guiding gesture whose cores leave one frame between them: the gap has a warning
    of its own and flagged figures."""
    return [Clip(mocap(WALK), 0, (20, 116), "walk"), Clip(mocap(GUIDE), 78, (40, 66), "guide")]


@pytest.fixture(scope="module")
def demo():
    return demo_clips()


def pair_into(result, name):
    return next(p for p in result.plan.pairs if p.next == name)


# ---------------------------------------------------------------- one line per gap


def test_a_flagged_gap_with_a_warning_is_one_line_saying_where_what_and_what_to_do():
    quality = GapQuality(skate=0.5, skate_untouched=0.1, accel=3.0, accel_untouched=1.0, accel_reference=1.0,
                         pop=4.0, pop_untouched=1.0, pop_reference=1.0, pop_joint="LowerLeg_L")
    assert len(quality.flags) == 3
    line = gap_warning("run", "guide", (120, 140), quality, "the cores leave 3 frame(s) to blend in")
    assert "\n" not in line
    assert line.startswith("'run' → 'guide', frames 120-140: the cores leave 3 frame(s)")
    assert all(flag in line for flag in quality.flags) and "Give Room" in line and "--give-room" in line


def test_a_gap_flagged_for_nothing_says_nothing():
    quality = GapQuality(skate=0.1, skate_untouched=0.1, accel=1.0, accel_untouched=1.0, accel_reference=1.0,
                         pop=1.0, pop_untouched=1.0, pop_reference=1.0, pop_joint="Hips")
    assert gap_warning("walk", "run", (10, 20), quality) is None
    assert quality.ratios() == "skate 1.0x, accel 1.0x, pop 1.0x (Hips)"


def test_a_gap_not_measured_says_so_and_why_never_a_dash():
    unmeasured = GapQuality(None, None, None, None, why_unmeasured="frames 90-99 lie within 1 frame(s) of the end")
    assert not unmeasured.measured and unmeasured.flags == []
    assert unmeasured.ratios() == "not measured: frames 90-99 lie within 1 frame(s) of the end"
    line = gap_warning("a", "b", (90, 99), unmeasured)
    assert "not measured (frames 90-99 lie within 1 frame(s) of the end)" in line
    assert "not measured (the plan holds no figures for it)" in gap_warning("a", "b", (90, 99), None)
    # the reason survives the plan's JSON
    assert GapQuality.from_dict(json.loads(json.dumps(unmeasured.to_dict()))) == unmeasured
    # skate has nothing to judge where no foot is down: the gap is measured, and says it
    no_foot = GapQuality(None, None, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "Hips")
    assert no_foot.measured and "skate none (no foot down)" in no_foot.ratios()
    assert no_foot.unjudged == [] and gap_warning("a", "b", (1, 9), no_foot) is None


def test_a_foot_sliding_with_nothing_to_judge_it_by_is_not_judged_never_none():
    """A foot down in the gap (skate measured) where the untouched clips have none down on its
    frames: not "none (no foot down)", not flagged, and not passed over in silence either."""
    sliding = GapQuality(0.3, None, 1.0, None, 1.0, 1.0, None, 1.0, "Hips")
    assert sliding.measured and sliding.flags == []
    assert sliding.ratios().startswith("skate not judged (the untouched clips play no frame with a foot down")
    assert "none (no foot down)" not in sliding.ratios()
    assert "skate not judged" in gap_warning("a", "b", (1, 9), sliding)


def test_clips_end_to_end_leave_the_gaps_skate_not_judged(demo):
    """A walk ending where a stand begins: the gap's frames are the clips' last and first, so the
    untouched clips have no frame in it to judge the walk's sliding feet by."""
    walk, stand = demo["walk"].motion, demo["stand"].motion
    (pair,) = synthesize([Clip(walk, 0, (0, walk.n_frames - 1), "walk"),
                          Clip(stand, walk.n_frames, (0, stand.n_frames - 1), "stand")]).plan.pairs
    assert pair.quality.skate is not None and pair.quality.skate_untouched is None
    assert "skate not judged" in pair.quality.ratios()


def test_the_plan_gives_one_warning_line_per_flagged_gap(tight, cramped):
    """One line per gap, whatever is wrong with it: the cramped guide's gap has both a warning of
    its own (cores leaving less than the shortest blend) and flagged figures."""
    for timeline in (tight, cramped):
        plan = synthesize(timeline).plan
        flagged = [p for p in plan.pairs if p.quality.flags or p.warning]
        assert flagged, "the timeline has flagged gaps"
        lines = plan.gap_warnings()
        assert len(lines) == len(flagged)
        for line, pair in zip(lines, flagged):
            assert line.startswith(f"'{pair.prev}' → '{pair.next}', frames {pair.gap[0]}-{pair.gap[1]}: ")
            assert all(flag in line for flag in pair.quality.flags) and (pair.warning or "") in line
    both = [p for p in synthesize(cramped).plan.pairs if p.quality.flags and p.warning]
    assert both and "leave 1 frame to blend in" in both[0].warning


# ---------------------------------------------------------------- "not measured", reached by synthesis


def test_two_clips_that_do_not_move_are_not_measured_and_say_so(demo):
    walk = demo["walk"].motion
    still = Motion(walk.skeleton, np.repeat(walk.rotations[:1], 60, 0), np.repeat(walk.positions[:1], 60, 0),
                   walk.fps)
    (pair,) = synthesize([Clip(still, 0, (0, 20), "a"), Clip(still, 40, (30, 59), "b")]).plan.pairs
    assert not pair.quality.measured
    assert pair.quality.why_unmeasured == "the clips' joints do not move, so there is no acceleration to compare with"
    assert synthesize([Clip(still, 0, (0, 20), "a"), Clip(still, 40, (30, 59), "b")]).plan.gap_warnings() == [
        "'a' → 'b', frames 20-70: not measured (the clips' joints do not move, so there is no acceleration to "
        "compare with)"]


def test_a_gap_within_a_measure_step_of_either_end_of_the_output_is_not_measured(demo):
    """At 120 fps the measure takes its accelerations over 4 frames: a gap lying within 4 frames of
    the output's first frame, or of its last, has no sample with both neighbours."""
    walk, turn = demo["walk"].motion.resampled(120.0), demo["turn"].motion.resampled(120.0)
    n, m = walk.n_frames, turn.n_frames
    first = synthesize([Clip(walk, 0, (0, 1), "a"), Clip(turn, 0, (3, m - 1), "b")])
    last = synthesize([Clip(walk, 0, (0, n - 1), "a"), Clip(turn, n - m + 2, (m - 1, m - 1), "b")])
    for result, gap in ((first, (1, 3)), (last, (n - 1, n + 1))):
        (pair,) = result.plan.pairs
        assert pair.gap == gap and (gap[0] - result.plan.start < 4 or result.plan.end - gap[1] < 4)
        assert not pair.quality.measured
        assert pair.quality.why_unmeasured == (f"frames {gap[0]}-{gap[1]} lie within 4 frames of the output's "
                                               "first or last frame, where no acceleration can be taken")


# ---------------------------------------------------------------- Give Room


def test_give_room_moves_the_later_clips_by_the_least_that_unflags_the_gap(tight):
    assert pair_into(synthesize(tight), "guide").quality.flags
    room = give_room(tight, "guide")
    assert room.frames is not None and 0 < room.frames <= room.limit
    assert room.moved == ("guide",) and room.before
    after = pair_into(synthesize(moved_clips(tight, room.moved, room.frames)), "guide")
    assert not after.quality.flags
    # the least: one frame less is still flagged
    assert pair_into(synthesize(moved_clips(tight, room.moved, room.frames - 1)), "guide").quality.flags
    assert "later; the gap" in room.text() and f"{room.frames} frames" in room.text()


def test_give_room_that_two_seconds_cannot_help_says_so_and_moves_nothing(tight):
    room = give_room(tight, "run")
    assert room.frames is None and room.moved == () and room.after
    assert room.limit == 60  # 2 s at the clips' 30 fps
    assert "is not enough" in room.text() and "nothing moved" in room.text()
    # and indeed: two seconds later, the gap is still flagged, for what the room says (the whole
    # timeline's flags there, not those of the pair's own measure)
    furthest = pair_into(synthesize(moved_clips(tight, ("run", "guide"), room.limit)), "run")
    assert furthest.quality.flags and room.after == tuple(furthest.quality.flags)


def test_give_room_searches_seconds_not_frames(tight):
    """The same clips resampled to 60 fps: the same 2 s are twice the frames, and the guide needs
    the same room in seconds. (Searched frame by frame, 60 fps found 7 frames, 0.12 s, against 5
    at 30, 0.17 s: a move by half a sample judged the resampled guide on its interpolated frames,
    smoother than its own; flagged again at 8. The search steps by whole samples of the measure.)"""
    fast = [replace(c, motion=c.motion.resampled(60.0), start=2 * c.start,
                    core=(2 * c.core[0], 2 * c.core[1])) for c in tight]
    slow, quick = give_room(tight, "guide"), give_room(fast, "guide")
    assert (slow.limit, quick.limit) == (60, 120)
    assert slow.frames and quick.frames
    assert abs(slow.frames / slow.fps - quick.frames / quick.fps) <= 1.0 / 60.0
    assert not pair_into(synthesize(moved_clips(fast, quick.moved, quick.frames)), "guide").quality.flags


def test_give_room_to_every_flagged_gap_goes_first_gap_first(tight):
    clips, rooms = give_room_to_every_flagged_gap(tight)
    assert [r.next for r in rooms] == ["run", "guide"]
    assert rooms[0].frames is None and rooms[1].frames
    assert [c.start for c in clips] == [0, 96, 114 + rooms[1].frames]
    assert not pair_into(synthesize(clips), "guide").quality.flags


def test_give_room_on_a_clip_no_pair_joins_says_what_to_pick(tight):
    with pytest.raises(ValueError, match="no pair of the synthesis joins clip 'walk'"):
        give_room(tight, "walk")


# ---------------------------------------------------------------- placements the tool chooses


def test_as_soon_as_possible_does_not_choose_a_start_it_then_flags(mocap):
    """After a walk, the punch's earliest start by W is flagged; it waits the least that keeps its
    gap unflagged. The kick's gap is flagged wherever it starts within 2 s, and the start says so."""
    walk = Clip(mocap(WALK), 0, (0, 100), "walk")

    def with_core(name, start=0):
        m = mocap(name)
        return Clip(m, start, (15, m.n_frames - 16), "next")

    punch = scheduled_start([walk], with_core("bandai1/punch_normal_001"))
    assert punch.moved > 0 and punch.flags == ()
    (pair,) = synthesize([walk, with_core("bandai1/punch_normal_001", punch.start)]).plan.pairs
    assert not pair.quality.flags
    kick = scheduled_start([walk], with_core("bandai1/kick_normal_001"))
    assert kick.flags
    (pair,) = synthesize([walk, with_core("bandai1/kick_normal_001", kick.start)]).plan.pairs
    assert pair.quality.flags


@pytest.mark.parametrize("name, w", [("bandai1/punch_normal_001", 1.0), ("bandai1/guide_normal_001", 0.0),
                                     ("bandai1/guide_normal_001", 0.25), ("bandai1/guide_normal_001", 1.0)])
def test_as_soon_as_possible_at_any_w_is_flagged_by_synthesize_at_that_w_exactly_when_it_says_so(mocap, name, w):
    """The start is confirmed under W's own plan, the one synthesize renders. Judged under W = 0.5's
    alone, the punch at W = 1 was placed where its Hand_R pops 1.8 times its reference, the guide at
    W = 0 where it pops 1.6 times, each said to be unflagged; and the guide at W = 1 was said to have
    no unflagged start where W = 1 flags nothing."""
    walk = Clip(mocap(WALK), 0, (0, 100), "walk")
    motion = mocap(name)
    clip = Clip(motion, 0, (15, motion.n_frames - 16), "next")
    scheduled = scheduled_start([walk], clip, responsiveness=w)
    (pair,) = synthesize([walk, replace(clip, start=scheduled.start)], responsiveness=w).plan.pairs
    assert bool(pair.quality.flags) == bool(scheduled.flags), (scheduled, pair.quality.flags)
    if name.startswith("bandai1/guide") and w == 1.0:
        assert not scheduled.flags


def test_the_pairs_own_measure_reads_the_skate_synthesize_reads(mocap):
    """A walk, a kick and a run end to end with half a second of overlap, default cores, W = 0: the
    measure Add as Soon as Possible and Give Room search with (the pair alone) reads the run's gap as
    synthesize does. Its floor levels are those of the motion so far after the contact stage: taken
    before it, feet sunk below the floor in the walk-kick gap put the floor lower, and the run's
    skate read 0.165 legs/s where synthesize reads 0.185."""
    placed, start = [], 0
    for name in (WALK, "bandai1/kick_normal_001", RUN):
        motion = mocap(name)
        placed.append((motion, start))
        start += motion.n_frames - 15
    spans = [Span(str(k), s, s + m.n_frames - 1) for k, (m, s) in enumerate(placed)]
    clips = []
    for k, (motion, s) in enumerate(placed):
        core = default_core(spans[k], spans[:k], spans[k + 1:], 6)
        clips.append(Clip(motion, s, (core.first - s, core.last - s), ("walk", "kick", "run")[k]))
    run = pair_into(synthesize(clips, responsiveness=0.0), "run").quality
    measured = pair_measure(clips, "run", responsiveness=0.0).measured(clips[2].start).quality
    assert measured.skate == pytest.approx(run.skate, rel=1e-9) and measured.flags == run.flags


# ---------------------------------------------------------------- the user's blend length


def blend_lengths(pair):
    return {s.end - s.start for s in pair.segments if s.blend not in ("step", "swing", "glide", "deformation")}


def test_the_users_blend_length_is_the_pairs_and_the_plan_says_so(tight):
    """Where the cores leave room for it, every blend of the pair is the user's length (eq. 9
    chooses where it lies), the method as without it; the plan marks the length as the user's."""
    roomy = [*tight[:2], replace(tight[2], start=144)]
    auto = pair_into(synthesize(roomy), "guide")
    user = pair_into(synthesize([*roomy[:2], replace(roomy[2], blend_s=0.5)]), "guide")
    assert blend_lengths(user) == {15}  # 0.5 s at 30 fps
    assert blend_lengths(auto) != {15} and user.method == auto.method
    assert "does not fit" not in (user.note or "")
    assert blend_lengths(pair_into(synthesize([*roomy[:2], replace(roomy[2], blend_s=1.0)]), "guide")) == {30}
    assert user.blend_s == 0.5 and auto.blend_s is None
    d = user.to_dict()
    assert d["blend"] == "user" and d["blend_s"] == 0.5 and "blend" not in auto.to_dict()
    assert PairPlan.from_dict(json.loads(json.dumps(d))).blend_s == 0.5
    assert "(blend 0.5 s, the user's)" in synthesize([*roomy[:2], replace(roomy[2], blend_s=0.5)]).plan.summary()


def test_a_users_blend_longer_than_the_papers_ranges_allow_is_the_nearest_and_the_plan_says_so(tight):
    """The tight guide's gap is 10 frames: a 1 s blend cannot fit the possible ranges (eqs. 1-8)."""
    pair = pair_into(synthesize([*tight[:2], replace(tight[2], blend_s=1.0)]), "guide")
    assert pair.blend_s == 1.0 and max(blend_lengths(pair)) < 30
    assert "the user's blend of 1 s (30 frames) does not fit" in pair.note


def test_a_users_blend_length_the_ranges_cannot_meet_is_the_nearest_they_allow_shorter_or_longer():
    """Candidate pairs (eqs. 1-8's possible ranges) 3, 4 or 20 frames long: a 10-frame length is met by
    4, the nearest; 13 by 20; 12 as near 4 as 20 by the longer. (The shortest range at least that
    long, the rule before, gave 20 for 10: twice as far.)"""
    assert nearest_length([0], [3, 4, 20], 10.0) == 4
    assert nearest_length([0], [3, 4, 20], 13.0) == 20
    assert nearest_length([0], [3, 4, 20], 12.0) == 20
    assert nearest_length([0, 10], [3, 4, 20], 10.0) == 10  # (10 to 20)
    assert nearest_length([0], [3, 4, 20], 1e300) == 20 and nearest_length([0], [3, 4, 20], 0.01) == 3
    assert nearest_length([5], [1, 2, 5], 3.0) == 1  # (no pair has t0 < t1: the range search says so)


def test_the_users_blend_length_survives_a_live_update(tight):
    from core.resynthesis import Resynthesis

    live = Resynthesis()
    roomy = [*tight[:2], replace(tight[2], start=144)]  # (room for the user's 0.5 s)
    live.update(roomy)
    timeline = [*roomy[:2], replace(roomy[2], blend_s=0.5)]
    assert pair_into(live.update(timeline), "guide").blend_s == 0.5
    # a move of another clip re-plans from there on, the length kept
    moved = [timeline[0], replace(timeline[1], start=timeline[1].start + 2), timeline[2]]
    kept = pair_into(live.update(moved), "guide")
    assert kept.blend_s == 0.5
    # the user's length, where synthesize puts it
    anew = pair_into(synthesize(moved), "guide")
    assert blend_lengths(kept) == blend_lengths(anew) == {15}
    assert [(s.part, s.blend, s.start, s.end) for s in kept.segments] == [
        (s.part, s.blend, s.start, s.end) for s in anew.segments]


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_a_blend_length_that_is_no_length_says_what_to_give(tight, seconds):
    with pytest.raises(ValueError, match="give a positive number of seconds"):
        synthesize([*tight[:2], replace(tight[2], blend_s=seconds)])


def test_an_old_plan_without_the_users_lengths_loads():
    plan = Plan(30.0, 0.5, 0, 10, ("a",), (), ())
    assert Plan.from_dict(plan.to_dict()).pairs == ()
