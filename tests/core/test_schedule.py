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


def _search(plan_at, peak_at, played, lead, w):
    return earliest_start(plan_at, peak_at, played=played, lead=lead, fps=30.0, responsiveness=w, interval_s=1.0,
                          min_blend_s=0.2, max_interval_s=12.0)


def test_the_clip_is_pulled_earlier_until_its_blend_meets_the_previous_core():
    """2014 section 5: placed at the fixed interval, then pulled by the gaps between its
    blend and the cores: the frames before the blend and the clip's lead-in after it."""
    played = 100
    # the blend starts 12 frames before the core and ends 2 before it; the lead-in is 20 frames
    calls = []

    def plan_at(start):
        calls.append(start)
        return _fake_plan(max(start + 20 - 12, played), start + 20 - 2, 0.5)

    start = _search(plan_at, lambda s: 1.0, played, 20, 0.5)
    assert calls[0] == played + 1 + 30 - 20  # the core one second after the previous core
    # as smooth at every start: pulled until the cores leave the shortest room (0.2 s)
    assert start == played + 1 + 6 - 20


@pytest.mark.parametrize("w", [0.25, 0.5, 0.75, 1.0])
def test_a_pull_that_would_raise_the_peak_more_than_its_delay_is_worth_is_not_taken(w):
    played, lead = 100, 10

    def plan_at(start):
        return _fake_plan(played, start + lead, 0.5)  # a blend from the previous core to the next

    # rougher in less room than 0.5 s
    start = _search(plan_at, lambda s: 1.0 if s + lead - played - 1 >= 15 else 3.0, played, lead, w)
    assert start + lead - played - 1 >= 15


def test_at_w_0_a_later_start_is_taken_only_for_a_peak_lower_by_more_than_its_delay_is_worth():
    """At W = 0 a shortest blend's length of delay (0.2 s) buys one unit of peak."""
    played, lead = 100, 10
    lowest = played + 1 + 6 - lead

    def plan_at(s):
        return _fake_plan(played, s + lead, 0.5)

    # a frame later lowers the peak by 0.01, worth 0.002 s, less than the frame
    assert _search(plan_at, lambda s: 2.0 - 0.01 * (s - lowest), played, lead, 0.0) == lowest
    # rough in less than 0.5 s of room: 2 units of peak, worth 0.4 s
    start = _search(plan_at, lambda s: 1.0 if s + lead - played - 1 >= 15 else 3.0, played, lead, 0.0)
    assert start + lead - played - 1 >= 15


def test_the_smoother_w_never_starts_sooner_nor_where_the_peak_is_higher():
    """Least delay plus W's price on the peak, over the same starts: W orders both."""
    played, lead = 100, 10
    rng = np.random.default_rng(7)
    for _ in range(20):
        peaks = rng.uniform(0.2, 3.0, 60)

        def plan_at(start):
            return _fake_plan(played, start + lead, 0.5)

        def peak_at(start):
            return float(peaks[start + lead - played - 1])

        starts = [_search(plan_at, peak_at, played, lead, w) for w in (0.0, 0.25, 0.5, 0.75, 1.0)]
        assert starts == sorted(starts)
        got = [peak_at(s) for s in starts]
        assert got == sorted(got, reverse=True)


def test_a_provisional_plan_beyond_the_limits_widens_the_interval():
    played, lead = 100, 0

    def plan_at(start):
        return _fake_plan(played, start, 2.0 if start - played < 60 else 0.8)  # two seconds of room needed

    def peak_at(start):
        return 5.0 if start - played < 60 else 1.0  # and rough with less

    start = _search(plan_at, peak_at, played, lead, 0.75)
    assert start - played >= 60


# ---------------------------------------------------------------- on real clips


@pytest.mark.parametrize("name", FOLLOWING)
def test_a_clip_after_a_walk_starts_before_the_walk_ends_and_keeps_its_core(mocap, walk, name):
    """Placing a clip as soon as possible after a walk starts it earlier than after the walk's
    last frame (the walk's frames after its core allow a blend), the synthesis has no NaN,
    leaves room to blend, leaves no gap before the blend that would be smoother closed,
    and every core is the clip's own."""
    new = with_core(mocap(name), "next")
    start = as_soon_as_possible([walk], new)
    assert start < walk.end + 1
    timeline = [walk, with_core(mocap(name), "next", start)]
    result = synthesize(timeline)
    assert np.all(np.isfinite(result.motion.rotations)) and np.all(np.isfinite(result.motion.positions))
    (pair,) = result.plan.pairs
    assert pair.warning is None and not result.plan.rejected
    # no gap left between the walk's core and the first blend (2014 section 5), unless
    # closing it makes the gap rougher (W's price on the peak, core.schedule)
    gap = min(s.start for s in pair.segments) - (walk.start + walk.core_range[1])
    if gap:
        (closed,) = synthesize([walk, with_core(mocap(name), "next", start - gap)]).plan.pairs
        assert closed.quality.accel > pair.quality.accel
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
    (WALK, "bandai1/kick_normal_001"), (WALK, "bandai1/punch_normal_001"), ("bandai1/bow_normal_001", WALK),
    ("bandai1/run_normal_001", "bandai1/kick_normal_001"), ("bandai1/run_normal_001", "bandai1/bow_normal_001"),
    ("bandai1/guide_normal_001", "bandai1/run_normal_001")])
def test_raising_w_never_shortens_the_delay_nor_raises_the_peak(mocap, prev_name, next_name):
    """W acts on the start as on every blend: a smoother W never starts the clip sooner,
    and its gap's peak acceleration (core.quality, fixed scale per pair) is no higher
    (1 % for float noise and the little W changes the ranges at one start)."""
    prev = with_core(mocap(prev_name), "prev")
    starts, peaks = [], []
    for w in (0.0, 0.25, 0.5, 0.75, 1.0):
        start = as_soon_as_possible([prev], with_core(mocap(next_name), "next"), responsiveness=w)
        (pair,) = synthesize([prev, with_core(mocap(next_name), "next", start)], responsiveness=w).plan.pairs
        starts.append(start)
        peaks.append(pair.quality.accel)
    assert starts == sorted(starts), starts
    assert all(b <= 1.01 * a for a, b in zip(peaks, peaks[1:])), peaks


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
