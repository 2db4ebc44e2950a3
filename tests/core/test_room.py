"""What the animator is told about a gap, and what Give Room, Add as Soon as Possible and the
user's blend length do about it (issue 26)."""

import json
from dataclasses import replace

import numpy as np
import pytest

from core.plan import PairPlan, Plan
from core.quality import GapQuality, gap_warning
from core.room import give_room, give_room_to_every_flagged_gap, moved_clips
from core.synthesize import Clip, scheduled_start, synthesize

WALK, RUN, GUIDE = "bandai1/walk_normal_001", "bandai2/run_normal_001", "bandai1/guide_normal_001"


@pytest.fixture(scope="module")
def tight(mocap):
    """A walk, a run and a guiding gesture placed close: both gaps flagged as placed. The run's
    gap cannot be helped within 2 s; the guide's can, with a few frames."""
    return [Clip(mocap(WALK), 0, (20, 116), "walk"), Clip(mocap(RUN), 96, (40, 48), "run"),
            Clip(mocap(GUIDE), 114, (40, 66), "guide")]


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


def test_the_plan_gives_one_warning_line_per_flagged_gap(tight):
    plan = synthesize(tight).plan
    flagged = [p for p in plan.pairs if p.quality.flags or p.warning]
    assert flagged, "the tight timeline has flagged gaps"
    lines = plan.gap_warnings()
    assert len(lines) == len(flagged)
    for line, pair in zip(lines, flagged):
        assert line.startswith(f"'{pair.prev}' → '{pair.next}', frames {pair.gap[0]}-{pair.gap[1]}: ")


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
    # and indeed: two seconds later, the gap is still flagged
    assert pair_into(synthesize(moved_clips(tight, ("run", "guide"), room.limit)), "run").quality.flags


def test_give_room_searches_seconds_not_frames(tight):
    """At 60 fps, the same 2 s are twice the frames."""
    fast = [replace(c, motion=c.motion.resampled(60.0), start=2 * c.start,
                    core=(2 * c.core[0], 2 * c.core[1])) for c in tight]
    assert give_room(fast, "guide").limit == 120


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


def test_the_users_blend_length_survives_a_live_update(tight):
    from core.resynthesis import Resynthesis

    live = Resynthesis()
    live.update(tight)
    timeline = [*tight[:2], replace(tight[2], blend_s=0.5)]
    assert pair_into(live.update(timeline), "guide").blend_s == 0.5
    # a move of another clip re-plans from there on, the length kept
    moved = [timeline[0], replace(timeline[1], start=timeline[1].start + 2), timeline[2]]
    kept = pair_into(live.update(moved), "guide")
    assert kept.blend_s == 0.5
    assert kept.to_dict() == pair_into(synthesize(moved), "guide").to_dict() or np.allclose(
        [s.start for s in kept.segments], [s.start for s in pair_into(synthesize(moved), "guide").segments])


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_a_blend_length_that_is_no_length_says_what_to_give(tight, seconds):
    with pytest.raises(ValueError, match="give a positive number of seconds"):
        synthesize([*tight[:2], replace(tight[2], blend_s=seconds)])


def test_an_old_plan_without_the_users_lengths_loads():
    plan = Plan(30.0, 0.5, 0, 10, ("a",), (), ())
    assert Plan.from_dict(plan.to_dict()).pairs == ()
