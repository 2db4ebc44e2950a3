"""Clips as soon as possible (2014 section 5, 2008 section 3.3) and the current time (eq. 17)."""

import numpy as np
import pytest

from core.plan import PairPlan, Segment
from core.rig import body_height, find_rig
from core.schedule import earliest_start
from core.synthesize import Clip, as_soon_as_possible, synthesize

WALK = "bandai1/walk_normal_001"
FOLLOWING = ["bandai1/bow_normal_001", "bandai1/kick_normal_001", "bandai1/punch_normal_001",
             "bandai1/slash_normal_001", "bandai1/dance-short_normal_001", "bandai1/run_normal_001"]


def with_core(motion, name, start=0, margin=15, current=None):
    """``motion`` with its core ``margin`` frames in from each end (less in a short clip)."""
    margin = min(margin, motion.n_frames // 4)
    return Clip(motion, start, (margin, motion.n_frames - 1 - margin), name, current)


@pytest.fixture(scope="module")
def walk(mocap):
    # the walk's core ends mid-walk: its last 94 frames are material to blend with
    return Clip(mocap(WALK), 0, (0, 100), "walk")


# ---------------------------------------------------------------- the search alone


def _fake_plan(begin: int, end: int, excess: float) -> PairPlan:
    return PairPlan("a", "b", "adaptation", None, None, (Segment("lower", "pose-to-pose", begin, end,
                                                                  excess=excess),), None)


def test_the_clip_is_pulled_earlier_until_its_blend_meets_the_previous_core():
    """2014 section 5: placed at the fixed interval, then pulled by the gaps between its
    blend and the cores: the frames before the blend and the clip's lead-in after it."""
    played = 100
    # the blend starts 12 frames before the core and ends 2 before it; the lead-in is 20 frames
    calls = []

    def plan_at(start):
        calls.append(start)
        return _fake_plan(max(start + 20 - 12, played), start + 20 - 2, 0.5)

    start = earliest_start(plan_at, played=played, lead=20, fps=30.0, interval_s=1.0, min_blend_s=0.2,
                           max_interval_s=12.0)
    assert calls[0] == played + 1 + 30 - 20  # the core one second after the previous core
    # pulled until the cores leave the shortest room (0.2 s): the blend fills what is left
    assert start == played + 1 + 6 - 20


def test_a_pull_that_would_exceed_the_limits_stops_at_the_earliest_start_that_keeps_within_them():
    played, lead = 100, 10

    def plan_at(start):
        # the blend always wants to start late; below frame 103 it asks too much of the body
        return _fake_plan(start + lead - 3, start + lead, 0.9 if start >= 103 else 1.7)

    start = earliest_start(plan_at, played=played, lead=lead, fps=30.0, interval_s=1.0, min_blend_s=0.2,
                           max_interval_s=12.0)
    assert start == 103


def test_a_provisional_plan_beyond_the_limits_widens_the_interval():
    played, lead = 100, 0

    def plan_at(start):
        return _fake_plan(played, start, 2.0 if start - played < 60 else 0.8)  # two seconds of room needed

    start = earliest_start(plan_at, played=played, lead=lead, fps=30.0, interval_s=1.0, min_blend_s=0.2,
                           max_interval_s=12.0)
    assert start - played >= 60 and excess_at(plan_at, start) <= 1.0


def excess_at(plan_at, start):
    return max(s.excess for s in plan_at(start).segments)


# ---------------------------------------------------------------- on real clips


@pytest.mark.parametrize("name", FOLLOWING)
def test_a_clip_after_a_walk_starts_before_the_walk_ends_and_keeps_its_core(mocap, walk, name):
    """Placing a clip as soon as possible after a walk starts it earlier than after the walk's
    last frame (the walk's frames after its core allow a blend), the synthesis has no NaN,
    leaves room to blend, and every core is the clip's own."""
    new = with_core(mocap(name), "next")
    start = as_soon_as_possible([walk], new)
    assert start < walk.end + 1
    timeline = [walk, with_core(mocap(name), "next", start)]
    result = synthesize(timeline)
    assert np.all(np.isfinite(result.motion.rotations)) and np.all(np.isfinite(result.motion.positions))
    (pair,) = result.plan.pairs
    assert pair.warning is None and not result.plan.rejected
    # no gap left between the walk's core and the first blend (2014 section 5)
    assert min(s.start for s in pair.segments) == walk.start + walk.core_range[1]
    # nor is the start later than at the paper's fixed interval of one second
    assert start + timeline[1].core_range[0] <= walk.start + walk.core_range[1] + 1 + 30
    rig = find_rig(walk.motion)
    out = result.motion.global_positions()
    placed = pair.alignment.apply(timeline[1].motion, rig.pelvis).global_positions()
    for clip, own in ((walk, walk.motion.global_positions()), (timeline[1], placed)):
        lo, hi = clip.core_range
        got = out[clip.start + lo - result.start : clip.start + hi + 1 - result.start]
        assert np.abs(got - own[lo : hi + 1]).max() <= 1e-6 * body_height(walk.motion, rig)


@pytest.mark.parametrize("prev_name, next_name", [
    (WALK, "bandai1/bow_normal_001"), (WALK, "bandai1/kick_normal_001"), (WALK, "bandai1/punch_normal_001"),
    ("bandai1/bow_normal_001", WALK), ("bandai1/run_normal_001", "bandai1/kick_normal_001")])
def test_raising_w_never_shortens_the_delay(mocap, prev_name, next_name):
    """W acts on the start as on every blend: a smoother W never starts the clip sooner."""
    prev = with_core(mocap(prev_name), "prev")
    starts = [as_soon_as_possible([prev], with_core(mocap(next_name), "next"), responsiveness=w)
              for w in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert starts == sorted(starts), starts


# ---------------------------------------------------------------- the current time, eq. (17)


@pytest.mark.parametrize("name", ["bandai1/bow_normal_001", "bandai1/run_normal_001"])
@pytest.mark.parametrize("t_current", [60, 120, 180, 230])
def test_what_was_played_before_the_clip_was_added_never_changes(mocap, walk, name, t_current):
    """Eq. (17): every new blend starts after t_current, and no stage (render, contact stage)
    changes a frame at or before it: those frames are, bit for bit, the synthesis of the walk
    alone (t_current may lie before the walk's core ends, in its tail, or after its end)."""
    alone = synthesize([walk])
    start = as_soon_as_possible([walk], with_core(mocap(name), "next"), t_current=t_current)
    result = synthesize([walk, with_core(mocap(name), "next", start, current=t_current)])
    (pair,) = result.plan.pairs
    assert min(s.start for s in pair.segments) > t_current
    k = min(t_current + 1, alone.motion.n_frames)
    assert np.array_equal(result.motion.rotations[:k], alone.motion.rotations[:k])
    assert np.array_equal(result.motion.positions[:k], alone.motion.positions[:k])
    assert np.all(np.isfinite(result.motion.rotations))


def test_a_core_starting_at_or_before_the_current_time_is_rejected_with_what_to_do(mocap, walk):
    late = with_core(mocap("bandai1/bow_normal_001"), "bow", start=100, current=120)  # core from 115
    result = synthesize([walk, late])
    assert not result.plan.pairs and result.plan.rejected[0].clip == "bow"
    assert "eq. 17" in result.plan.rejected[0].reason and "after frame 121" in result.plan.rejected[0].reason
