"""Synchronization of motions played at the same time (Ménardais et al. 2004): the claims of §4, §5 and Appendix A."""

import itertools

import numpy as np
import pytest

from core import sync
from core.analysis import foot_contacts
from core.demo import hop_clips
from core.sync import Support, SupportSequence, combine, support_sequence, synchronize

DS, LS, RS, NONE, ERR = (int(s) for s in Support)
FEET = (LS, RS)

WALK = "bandai1/walk_normal_001"
RUN = "bandai1/run_normal_001"  # one running cycle, its last frame its first
HAPPY = "bandai1/walk_happy_001"
WALK_LEFT = "bandai1/walk-left_normal_001"


def sequence_of(motion, cyclic=None) -> SupportSequence:
    cyclic = sync.is_cyclic(motion) if cyclic is None else cyclic
    return support_sequence(foot_contacts(motion), motion.fps, cyclic=cyclic)


def contacts_of(codes, lengths) -> np.ndarray:
    """(F, 2) contacts [left, right] playing each support code for its number of frames."""
    feet = {DS: (True, True), LS: (True, False), RS: (False, True), NONE: (False, False)}
    return np.concatenate([np.tile(feet[c], (n, 1)) for c, n in zip(codes, lengths)])


def random_sequence(rng, cyclic: bool) -> SupportSequence:
    n = int(rng.integers(1, 9))
    # (but not a motion standing on one foot for ever, which no other can join: tested on its own)
    codes = [int(rng.choice([DS, NONE] if cyclic and n == 1 else [DS, LS, RS, NONE]))]
    while len(codes) < n:
        codes.append(int(rng.choice([c for c in range(4) if c != codes[-1]])))
    lengths = rng.integers(1, 25, size=n)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return SupportSequence(codes, starts, int(lengths.sum()) + (1 if cyclic else 0), 30.0, cyclic)


# --- §4.1: the ⊕ relation (Fig. 4) and eqs. (1)-(3) ---------------------------------------


def test_ds_is_neutral_and_the_empty_set_absorbs_everything():
    for x in Support:
        assert combine(DS, x) == x and combine(x, DS) == x
        assert combine(NONE, x) == NONE and combine(x, NONE) == NONE


def test_err_absorbs_the_supports_and_the_two_single_supports_clash():
    for x in (DS, LS, RS, ERR):
        assert combine(ERR, x) == ERR
    assert combine(RS, LS) == ERR and combine(LS, RS) == ERR
    assert combine(RS, RS) == RS and combine(LS, LS) == LS


def test_the_relation_is_commutative_and_associative():
    codes = list(Support)
    for a, b in itertools.product(codes, repeat=2):
        assert combine(a, b) == combine(b, a)
    for a, b, c in itertools.product(codes, repeat=3):
        assert combine(combine(a, b), c) == combine(a, combine(b, c))


def test_combine_works_elementwise_and_refuses_unknown_codes():
    a, b = np.array([DS, RS, LS, NONE]), np.array([RS, LS, LS, ERR])
    np.testing.assert_array_equal(combine(a, b), [RS, ERR, LS, NONE])
    with pytest.raises(ValueError, match="outside 0..4"):
        combine([5], [0])


def test_motions_are_synchronizable_iff_their_combination_is_never_err():
    walk = [RS, DS, LS, DS]
    assert sync.synchronizable([walk, walk, [DS, DS, NONE, DS]])  # eq. (3)
    assert not sync.synchronizable([walk, [LS, DS, LS, DS]])  # eq. (1): RS against LS at the first step
    np.testing.assert_array_equal(sync.combined_sequence([walk, [DS, RS, NONE, DS]]), [RS, RS, NONE, DS])  # eq. (2)


# --- §4.2-4.3: sequences and their extension ------------------------------------------------


def test_a_sequence_never_repeats_an_element(mocap):
    for name in (WALK, RUN, HAPPY, WALK_LEFT):
        seq = sequence_of(mocap(name))
        assert np.all(seq.codes[1:] != seq.codes[:-1]), name
        assert seq.starts[0] == 0 and seq.durations.sum() == seq.period and np.all(seq.durations > 0), name


def test_a_walk_alternates_its_feet_through_double_supports(mocap):
    seq = sequence_of(mocap(WALK), cyclic=False)
    singles = seq.codes[seq.codes != DS]
    assert len(singles) > 10 and np.all(singles[1:] != singles[:-1])


def test_fig6_a_cyclic_motion_repeats_as_a_whole_another_its_last_element():
    # a cyclic clip's last frame is its first again
    cyclic = support_sequence(contacts_of([RS, DS, LS, DS, RS], [10, 3, 10, 3, 1]), 30.0, cyclic=True)
    assert cyclic.codes.tolist() == [RS, DS, LS, DS] and cyclic.period == 26
    other = support_sequence(contacts_of([LS, DS, NONE, DS, LS], [8, 3, 6, 3, 8]), 30.0)
    assert [Support(c).name for c in cyclic.extended_codes(8)] == ["RS", "DS", "LS", "DS"] * 2
    assert [Support(c).name for c in other.extended_codes(8)] == ["LS", "DS", "NONE", "DS", "LS", "LS", "LS", "LS"]
    assert [other.element(e)[3] for e in range(7)] == [False] * 5 + [True] * 2  # held past the end


def test_a_cyclic_clip_whose_ends_are_one_support_merges_them_across_the_seam(mocap):
    run = sequence_of(mocap(RUN))
    assert run.cyclic and run.seam_merges
    codes = run.extended_codes(3 * len(run.codes))
    assert np.all(codes[1:] != codes[:-1])  # still never two equal elements in a row
    spans = [run.element(e)[1:3] for e in range(3 * len(run.codes))]
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # own time runs on without gaps
    merged = run.element(len(run.codes) - 1)
    assert merged[2] - merged[1] == run.durations[-1] + run.durations[0]


def test_own_time_turns_into_clip_frames_wrapped_or_held():
    cyclic = SupportSequence([RS, LS], [0, 5], 11, 30.0, cyclic=True)  # period 10
    frames, cycles = cyclic.clip_frames(np.array([0.0, 9.5, 10.0, 23.0]))
    np.testing.assert_allclose(frames, [0.0, 9.5, 0.0, 3.0])
    np.testing.assert_array_equal(cycles, [0, 0, 1, 2])
    held = SupportSequence([RS, LS], [0, 5], 10, 30.0)
    np.testing.assert_allclose(held.clip_frames(np.array([3.0, 9.5, 14.0]))[0], [3.0, 9.0, 9.0])


def test_bad_sequences_are_refused_with_what_to_fix():
    with pytest.raises(ValueError, match="successive elements"):
        SupportSequence([RS, RS], [0, 4], 10, 30.0)
    with pytest.raises(ValueError, match="starts must rise"):
        SupportSequence([RS, LS], [0, 12], 10, 30.0)
    with pytest.raises(ValueError, match="frames, 2"):
        support_sequence(np.zeros((10, 3), bool), 30.0)


def test_a_clip_counts_as_cyclic_when_its_end_pose_and_velocity_match_its_start(mocap):
    assert sync.is_cyclic(mocap(RUN))
    assert sync.is_cyclic(mocap("bandai1/walk-back_normal_001"))
    assert not sync.is_cyclic(mocap(WALK))  # from a first step to a last one
    assert not sync.is_cyclic(mocap(HAPPY))
    pose_gap, _ = sync.cycle_mismatch(mocap(WALK))
    assert not sync.is_cyclic(mocap(WALK), pose_tolerance=0.5 * pose_gap, velocity_tolerance=1e9)


def test_clips_measured_at_once_measure_as_each_alone_does_to_the_bit(mocap):
    clips = [mocap(name) for name in (RUN, WALK, "bandai1/walk-back_normal_001", HAPPY)]
    clips.append(clips[0][:40])  # a clip of another length
    pose_gaps, velocity_gaps = sync.cycle_mismatches(clips)
    up = sync.detect_up(clips[0], sync.find_rig(clips[0]))
    for clip, pose_gap, velocity_gap in zip(clips, pose_gaps, velocity_gaps):
        assert sync.cycle_mismatch(clip, up=up) == (pose_gap, velocity_gap)
    assert sync.are_cyclic(clips + [clips[0][:2]]) == [sync.is_cyclic(c) for c in clips] + [False]
    with pytest.raises(ValueError, match="at least 3 frames"):
        sync.cycle_mismatches([clips[0], clips[0][:2]])


def test_the_cycle_measure_is_in_body_units_whatever_the_clip_s_unit_or_heading(mocap):
    run = mocap(RUN)  # Y up, centimetres
    gaps = sync.cycle_mismatch(run)
    turned = run.scaled(0.01).transformed(np.array([np.cos(0.6), 0.0, np.sin(0.6), 0.0]), np.array([3.0, 0.0, -2.0]))
    np.testing.assert_allclose(sync.cycle_mismatch(turned), gaps, rtol=1e-6, atol=1e-9)
    assert sync.is_cyclic(turned)


# --- §5.3: the time warp ---------------------------------------------------------------------


def test_a_warp_through_knots_on_a_line_is_that_line():
    times = np.array([0.0, 9.0, 12.0, 25.0, 28.0])
    spline = sync.WarpSpline.through(times, 2.0 * times + 5.0)
    t = np.linspace(0.0, 28.0, 300)
    np.testing.assert_allclose(spline(t), 2.0 * t + 5.0)
    np.testing.assert_allclose(spline.derivative(t), 2.0)


def test_fig11_warps_stay_strictly_monotone_and_c1_whatever_the_chords():
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(2, 12))
        times = np.cumsum(rng.uniform(0.5, 20.0, m))
        own = np.cumsum(rng.uniform(0.5, 20.0, m) * np.exp(rng.uniform(-4.0, 4.0, m)))  # chords up to e^8 apart
        spline = sync.WarpSpline.through(times, own)
        assert_monotone_and_c1(spline, spline(np.arange(np.ceil(times[0]), times[-1])))
        chords = np.diff(own) / np.diff(times)
        assert spline.slopes[0] == chords[0]  # the motion enters at its own speed
        # each inner slope lies between the chords either side (Fig. 11 E)
        inner = spline.slopes[1:-1]
        assert np.all(inner >= np.minimum(chords[:-1], chords[1:]) * (1 - 1e-12) * sync.SLOPE_LOW)
        assert np.all(inner <= np.maximum(chords[:-1], chords[1:]) * (1 + 1e-12))


# --- §5: synchronization on real clips ------------------------------------------------------


def assert_a_valid_plan(plan, n_motions):
    assert np.all(plan.combined != ERR)  # eq. (3) at every step
    # the output runs to the frame that plays the last clip's last frame (a cyclic one: up to its
    # period), and no further, where its time would be clamped to it (a last step shorter than the others)
    assert plan.n_frames <= int(np.ceil(plan.boundaries[-1] - 1e-9))
    for seq, spline, done in zip(plan.sequences, plan.splines, plan.finished):
        if done and spline.times[-1] >= plan.n_frames:
            assert spline(float(plan.n_frames)) >= seq.n_frames - 1 - 1e-9
    assert np.all(np.diff(plan.boundaries) > 0)
    for i in range(n_motions):
        played = plan.elements[i][plan.joins[i]:]
        steps = np.diff(played)
        # a motion advances or enlarges; it passes over an element only to fold a double support or
        # flight it has and the others lack into the step before (§7, see test_a_missed_double_support...),
        # or the single support after its DS into that DS's step, where another lands its foot
        # straight from the other one (its strike with theirs)
        skipped = played[:-1][steps == 2]
        folded = [plan.sequences[i].element(e + 1)[0] for e in skipped]
        from_ds = [plan.sequences[i].element(e)[0] == DS for e in skipped]
        assert np.all((steps >= 0) & (steps <= 2)), i
        assert all(f in (DS, NONE) or (f in FEET and ds) for f, ds in zip(folded, from_ds)), i
        assert np.all(plan.elements[i][:plan.joins[i]] == -1)
        assert_monotone_and_c1(plan.splines[i], plan.warps[i])


def assert_monotone_and_c1(spline, warp):
    played = warp[~np.isnan(warp)]
    assert len(played) and np.all(np.diff(played) > 0)
    t = np.linspace(spline.times[0], spline.times[-1], 20 * int(spline.times[-1] - spline.times[0] + 1))
    assert np.all(spline.derivative(t) > 0)  # strictly monotone
    # C¹: the derivative is the same on both sides of every knot, and the values meet
    inner = spline.times[1:-1]
    eps = 1e-9
    np.testing.assert_allclose(spline.derivative(inner - eps), spline.derivative(inner + eps), atol=1e-5)
    np.testing.assert_allclose(spline(inner - eps), spline(inner + eps), atol=1e-5)
    # and the derivative is the spline's own: finite differences agree (away from the knots, where
    # a difference straddling one mixes two cubics' second derivatives)
    h = 1e-4
    mid = t[1:-1]
    mid = mid[np.min(np.abs(mid[:, None] - spline.times[None]), axis=1) > 2 * h]
    np.testing.assert_allclose((spline(mid + h) - spline(mid - h)) / (2 * h), spline.derivative(mid), atol=1e-4)


def assert_follows_the_top_priority(plan, top):
    """The combined support keeps the top-priority motion's supports: never the other foot, never Err."""
    seq = plan.sequences[top]
    joined = plan.elements[top] >= 0
    steps = np.diff(plan.elements[top][joined])
    assert np.all(steps == 1)  # the top-priority motion never waits: its sequence is only time-scaled
    # while it plays its own elements (past its end a non-cyclic motion holds its last one, and gives way)
    playing = joined & np.array([e >= 0 and not seq.element(e)[3] for e in plan.elements[top]])
    codes = np.array([seq.element(e)[0] for e in plan.elements[top][playing]])
    combined = plan.combined[playing]
    assert len(codes) > 8
    for foot in FEET:
        assert np.all(np.isin(combined[codes == foot], [foot, NONE]))
    assert np.all(combined[codes == NONE] == NONE)


PAIRS = {
    "walk + run": (WALK, RUN),
    "two walks of different styles": (WALK, HAPPY),
    "walk-left + walk": (WALK_LEFT, WALK),
}


@pytest.mark.parametrize("pair", PAIRS, ids=list(PAIRS))
@pytest.mark.parametrize("priorities", [(2.0, 1.0), (1.0, 2.0)], ids=["first first", "second first"])
def test_real_pairs_blend_half_and_half_without_err_following_the_top_priority(mocap, pair, priorities):
    seqs = [sequence_of(mocap(name)) for name in PAIRS[pair]]
    plan = synchronize(seqs, list(priorities), [0, 0], [0.5, 0.5])
    assert_a_valid_plan(plan, 2)
    assert_follows_the_top_priority(plan, int(np.argmax(priorities)))
    assert all(plan.finished)
    # the output ends when the last motion ends: it has played to its end by then, and not before
    ends = [sp.time_of(s.period) for s, sp in zip(seqs, plan.splines)]
    assert plan.boundaries[-1] == pytest.approx(max(ends))
    last = int(np.argmax(ends))
    assert plan.splines[last](plan.boundaries[-1]) == pytest.approx(seqs[last].period)
    support = plan.support_at()
    assert support.shape == (plan.n_frames,) and np.all(support != ERR)


def test_a_double_support_missed_by_one_motion_does_not_put_them_out_of_step():
    # a walk whose double support between LS and RS lasted under a frame goes straight from one to the
    # other; played step by step against a walk that has it, it would meet that DS with its RS and
    # stay one element off ever after: single supports against double supports, never an Err to show it
    walk = SupportSequence([RS, DS, LS, DS, RS, DS, LS, DS, RS], [0, 10, 13, 23, 26, 36, 39, 49, 52], 62, 30.0)
    missed = SupportSequence([RS, DS, LS, RS, DS, LS, DS, RS], [0, 10, 13, 24, 34, 37, 47, 50], 60, 30.0)
    for priorities in ([2.0, 1.0], [1.0, 2.0]):
        plan = synchronize([walk, missed], priorities, [0, 0], [0.5, 0.5])
        assert_a_valid_plan(plan, 2)
        both = (plan.elements[0] < len(walk.codes)) & (plan.elements[1] < len(missed.codes))
        codes = [np.array([s.element(e)[0] for e in plan.elements[i][both]]) for i, s in enumerate((walk, missed))]
        # in step at every step but one: the straight step onto RS lands that foot where the walk's DS
        # does (their strikes together), and the RS is held through the walk's RS (the walk playing it
        # within its DS's step instead, where the straight motion has the priority: it never waits)
        assert np.sum(codes[0] != codes[1]) == 1
        k = int(np.flatnonzero(codes[0] != codes[1])[0])
        assert codes[0][k] == DS and codes[1][k] == RS and plan.combined[both][k] == RS
        assert missed.element(int(plan.elements[1][both][k]))[1] == 24  # its RS starts with the walk's DS
        assert np.all(np.diff(plan.elements[int(np.argmax(priorities))]) == 1)
        # eq. (6) over the two steps the RS spans: the weighted mean of what each plays in them
        top = int(np.argmax(priorities))
        w = np.array([0.5 * priorities[0], 0.5 * priorities[1]])
        played = np.array([13.0, 10.0])  # the walk's DS and RS (23 .. 36), the other's RS (24 .. 34)
        span = plan.boundaries[k + 2] - plan.boundaries[k] if top == 0 else plan.boundaries[k + 1] - plan.boundaries[k]
        assert span == pytest.approx(np.dot(w, played) / w.sum())


def test_step_durations_are_the_weighted_mean_of_eq6(mocap):
    seqs = [sequence_of(mocap(WALK), cyclic=False), sequence_of(mocap(HAPPY), cyclic=False)]
    plan = synchronize(seqs, [2.0, 1.0], [0, 0], [0.25, 0.75])
    w = np.array([0.25 * 2.0, 0.75 * 1.0])
    w /= w.sum()
    checked = 0
    for k in range(1, len(plan.combined) - 1):
        e = [plan.elements[i][k] for i in range(2)]
        fresh = all(plan.elements[i][k - 1] != e[i] and plan.elements[i][k + 1] != e[i] for i in range(2))
        if fresh and not any(seqs[i].element(e[i])[3] for i in range(2)):
            # neither element enlarged nor held past its clip's end: both vote with their own durations
            d = [seqs[i].element(e[i])[2] - seqs[i].element(e[i])[1] for i in range(2)]
            assert plan.boundaries[k + 1] - plan.boundaries[k] == pytest.approx(np.dot(w, d))
            checked += 1
    assert checked > 10


def test_weights_one_and_zero_play_the_first_motion_as_it_is(mocap):
    walk, happy = sequence_of(mocap(WALK), cyclic=False), sequence_of(mocap(HAPPY), cyclic=False)
    for start in (0, 17):
        plan = synchronize([walk, happy], [1.0, 1.0], [start, 0], [1.0, 0.0])
        assert_a_valid_plan(plan, 2)
        first = plan.warps[0]
        join = plan.boundaries[plan.joins[0]]
        frames = np.arange(plan.n_frames)
        playing = (frames >= join) & (frames - join <= walk.n_frames - 1)
        np.testing.assert_allclose(first[playing], frames[playing] - join, atol=1e-9)  # the identity, shifted
        # while it plays, every step lasts as long as its element
        k = np.flatnonzero(plan.boundaries[:-1] >= join)
        k = k[plan.elements[0][k] < len(walk.codes) - 1]
        durations = np.diff(plan.boundaries)[k]
        np.testing.assert_allclose(durations, walk.durations[plan.elements[0][k]])


def test_a_later_start_joins_at_the_next_step_boundary_in_step(mocap):
    walk = sequence_of(mocap(WALK), cyclic=False)
    plan = synchronize([walk, walk], [2.0, 1.0], [0, 30], [0.5, 0.5])
    assert_a_valid_plan(plan, 2)
    k = plan.joins[1]
    joined_at = plan.boundaries[k]
    assert plan.boundaries[k - 1] < 30 <= joined_at and plan.delays[1] == round(joined_at - 30)
    # at the element of its first stride at the same point of a step as the walk playing
    entry = plan.elements[1][k]
    assert entry < sync.STRIDE_ELEMENTS and walk.element(entry)[0] == walk.element(plan.elements[0][k])[0]
    assert plan.delays[0] == 0
    assert np.isnan(plan.warps[1][: int(np.floor(joined_at))]).all()


def test_fig8_an_element_is_enlarged_so_that_the_supports_agree():
    stepper = SupportSequence([LS, DS, RS, DS], [0, 5, 8, 13], 17, 30.0, cyclic=True)
    flyer = SupportSequence([LS, NONE, LS, DS], [0, 5, 9, 14], 17, 30.0, cyclic=True)
    # at step 2 the stepper would put its right foot down while the flyer lands on its left: Err
    np.testing.assert_array_equal(sync.combined_sequence([stepper.extended_codes(3), flyer.extended_codes(3)]),
                                  [LS, NONE, ERR])
    plan = synchronize([stepper, flyer], [1.0, 2.0], [0, 0], [0.5, 0.5], n_k=1)
    # the flyer has the higher priority: its left support holds, the stepper's DS lasts a step more (Fig. 9)
    assert plan.elements[0][:4].tolist() == [0, 1, 1, 2] and plan.elements[1][:4].tolist() == [0, 1, 2, 3]
    assert plan.combined[:4].tolist() == [LS, NONE, LS, RS]
    plan = synchronize([stepper, flyer], [2.0, 1.0], [0, 0], [0.5, 0.5], n_k=1)
    # the other way round the flyer's flight lasts a step more (Fig. 8)
    assert plan.elements[1][:4].tolist() == [0, 1, 1, 2] and plan.elements[0][:4].tolist() == [0, 1, 2, 3]
    assert plan.combined[:4].tolist() == [LS, NONE, NONE, LS]


def test_a_right_hop_against_a_left_hop_waits_for_the_next_element():
    clips = hop_clips()
    right, left = (support_sequence(clips[n].contacts, 30.0) for n in ("hop_right", "hop_left"))
    same = synchronize([right, right], [2.0, 1.0], [0, 0], [0.5, 0.5])
    assert same.delays == [0, 0]
    plan = synchronize([right, left], [2.0, 1.0], [0, 0], [0.5, 0.5])
    assert_a_valid_plan(plan, 2)
    assert plan.joins == (0, 1)  # at step 0 its left support would meet the right one: Err
    assert plan.delays[1] == round(plan.boundaries[1]) == right.durations[0]  # it waited out the standing
    assert plan.to_dict()["delays"] == [0, right.durations[0]]


def test_appendix_a_a_solution_is_always_found_on_random_sequences():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(2, 5))
        seqs = [random_sequence(rng, bool(rng.integers(0, 2))) for _ in range(n)]
        priorities = rng.integers(1, 4, size=n).tolist()
        weights = rng.random(n).tolist()
        starts = rng.integers(0, 40, size=n).tolist()
        plan = synchronize(seqs, priorities, starts, weights, n_k=int(rng.integers(1, 7)))
        assert_a_valid_plan(plan, n)


def test_a_motion_that_can_never_start_is_refused():
    # a cyclic motion repeats as long as the blend runs (§4.3): standing on the left foot for ever,
    # it leaves the hop, whose first element RS clashes with it, no step to join at
    one_foot = SupportSequence([LS], [0], 11, 30.0, cyclic=True)
    hop = SupportSequence([RS, NONE], [0, 5], 10, 30.0)
    with pytest.raises(ValueError, match="motion 1 cannot be synchronized: its first element RS"):
        synchronize([one_foot, hop], [1.0, 1.0], [0, 0], [0.5, 0.5])


def test_a_motion_that_clashes_with_a_cyclic_one_ended_waits_for_its_end():
    # ended after one pass, the cyclic motion stops there: the hop joins where it ends
    one_foot = SupportSequence([LS], [0], 11, 30.0, cyclic=True)
    hop = SupportSequence([RS, NONE], [0, 5], 10, 30.0)
    plan = synchronize([one_foot, hop], [1.0, 1.0], [0, 0], [0.5, 0.5], stops=[10, None])
    assert plan.delays[1] == 10 and plan.ends[0] == pytest.approx(10.0)
    assert plan.finished == (True, True)


def test_a_cyclic_motion_repeats_as_long_as_the_blend_runs_and_stops_only_where_it_is_ended():
    # §4.3: "with cyclified motions such as locomotion, we need to extend its sequence as long as
    # the action is running"; a cyclic walk of 26 frames a pass against a clip of 100 frames
    walk = SupportSequence([RS, DS, LS, DS], [0, 10, 13, 23], 27, 30.0, cyclic=True)
    long = SupportSequence([RS, DS, LS, DS, RS, DS, LS, DS, RS], [0, 10, 13, 23, 26, 36, 39, 49, 52], 100, 30.0)
    plan = synchronize([long, walk], [2.0, 1.0], [0, 0], [0.5, 0.5], fade_frames=7.5)
    assert plan.ends[1] == pytest.approx(plan.ends[0]) == pytest.approx(plan.boundaries[-1])
    cycles = plan.clip_frames(1)[1]
    assert cycles[-1] >= 2 and plan.elements[1][-1] >= 8  # three passes and more, still stepping
    # ended through its repeats (own time 60: two passes and 8 frames), it stops there
    ended = synchronize([long, walk], [2.0, 1.0], [0, 0], [0.5, 0.5], fade_frames=7.5, stops=[None, 60.0])
    assert ended.splines[1](ended.ends[1]) == pytest.approx(60.0, abs=1e-6)
    assert ended.ends[1] < ended.ends[0] - 10
    with pytest.raises(ValueError, match="motion 0 is not cyclic, so it stops at its end"):
        synchronize([long, walk], [2.0, 1.0], [0, 0], [0.5, 0.5], stops=[50.0, None])
    # a cyclic motion longer than the others plays one pass: the blend runs until each has played one
    short = SupportSequence([RS, DS, LS], [0, 10, 13], 20, 30.0)
    alone = synchronize([walk, short], [1.0, 1.0], [0, 0], [0.5, 0.5])
    assert alone.splines[0](alone.boundaries[-1]) == pytest.approx(26.0, abs=1e-6)
    # a clip out of the timing that lasts longer: the cyclic motion repeats until it ends
    until = synchronize([walk, short], [1.0, 1.0], [0, 0], [0.5, 0.5], until=150.0)
    assert until.boundaries[-1] >= 150.0 and until.ends[0] >= 150.0 and until.ends[1] < 40


def test_the_plan_is_data(mocap):
    plan = synchronize([sequence_of(mocap(WALK)), sequence_of(mocap(RUN))], [1.0, 1.0], [0, 0], [0.5, 0.5])
    d = plan.to_dict()
    assert set(d["combined"]) <= {"DS", "LS", "RS", "NONE"}
    assert len(d["combined"]) == len(plan.boundaries) - 1 and len(d["elements"]) == 2
    import json

    assert json.loads(json.dumps(d)) == d


def test_bad_input_says_what_to_fix():
    seq = SupportSequence([RS, LS], [0, 5], 10, 30.0)
    with pytest.raises(ValueError, match="weights has 1 entries for 2 motions"):
        synchronize([seq, seq], [1, 1], [0, 0], [1.0])
    with pytest.raises(ValueError, match="non-negative"):
        synchronize([seq, seq], [1, 1], [0, 0], [1.0, -1.0])
    with pytest.raises(ValueError, match="n_k"):
        synchronize([seq], [1], [0], [1.0], n_k=0)
    with pytest.raises(ValueError, match="resample"):
        synchronize([seq, SupportSequence([RS, LS], [0, 5], 10, 60.0)], [1, 1], [0, 0], [1.0, 1.0])


# --- beyond §5.1: a motion joins in step (docs/design.md, "Keeping in step") ------------------


def in_step_share(plan, motions) -> tuple[float, float, float]:
    """(steps in step, combined steps in double support, frames that clash) of two motions, over the
    steps where both play their own elements and the frames where both play their own frames."""
    both = np.all([(e >= 0) & np.array([e >= 0 and not s.element(e)[3] for e in elements])
                   for e, elements, s in ((plan.elements[i], plan.elements[i], plan.sequences[i]) for i in range(2))],
                  axis=0)
    codes = [np.array([plan.sequences[i].element(e)[0] for e in plan.elements[i][both]]) for i in range(2)]
    in_step = np.mean([sync.in_step(a, b) for a, b in zip(*codes)])
    supports = sync.played_supports(plan.warps, [foot_contacts(m) for m in motions],
                                    [s.cyclic for s in plan.sequences])
    frames = np.all(supports >= 0, axis=0)
    a, b = supports[:, frames]
    clash = np.mean((a == LS) & (b == RS) | (a == RS) & (b == LS))
    return float(in_step), float(np.mean(plan.combined[both] == DS)), float(clash)


@pytest.mark.parametrize("offset", [0, 5, 10, 20, 30])
@pytest.mark.parametrize("pair", [(WALK, HAPPY), (HAPPY, WALK)], ids=["walk + happy", "happy + walk"])
def test_two_walks_blended_give_a_walk_whatever_the_start(mocap, pair, offset):
    # ⊕ lets a walk join another one element late (its single supports against the other's double
    # supports: DS is neutral), and the two then stay half a step apart with no Err to show it; the
    # combined sequence reads L R R L L R R L L, with no double support at all. A clip joins at the
    # element of its first stride in step with the others instead, whatever its start.
    motions = [mocap(name) for name in pair]
    plan = synchronize([sequence_of(m, cyclic=False) for m in motions], [2.0, 1.0], [0, offset], [0.5, 0.5])
    assert_a_valid_plan(plan, 2)
    in_step, double, clash = in_step_share(plan, motions)
    assert in_step > 0.9  # the same point of a step: the same foot alone, or neither alone
    assert double > 0.4  # single supports alternate with double supports
    assert clash < 0.01  # hardly a frame where one stands on its left foot alone and the other on its right
    assert plan.delays[1] < np.max(plan.sequences[0].durations)  # at the next step boundary: no wait


def test_a_later_clip_enters_at_the_element_in_step_with_the_others():
    walk = SupportSequence([RS, DS, LS, DS], [0, 10, 13, 23], 27, 30.0, cyclic=True)
    # it joins at the walk's DS before LS: ⊕ would take its RS there (DS is neutral), half a step off;
    # it enters at its own DS before LS instead, skipping less than a stride of its start
    plan = synchronize([walk, walk], [2.0, 1.0], [0, 9], [0.5, 0.5])
    assert plan.joins[1] == 1 and plan.elements[1][1] == 1 and plan.delays[1] == 1
    assert plan.splines[1](plan.boundaries[1]) == pytest.approx(10.0)  # it starts at its own frame 10
    np.testing.assert_array_equal(plan.elements[1][1:6], plan.elements[0][1:6])
    # nothing in step to enter at: a walk joining a clip standing still enters at its first element
    standing = SupportSequence([DS], [0], 40, 30.0)
    plan = synchronize([standing, walk], [2.0, 1.0], [0, 5], [0.5, 0.5])
    assert plan.elements[1][plan.joins[1]] == 0


def test_a_start_longer_than_a_stride_is_played_not_skipped():
    walk = SupportSequence([RS, DS, LS, DS], [0, 10, 13, 23], 27, 30.0, cyclic=True)
    # stands for 90 frames, then sets off: joining the walk's LS, its own LS is in step but would
    # skip the standing; it enters at its first element, as §5.1 has it
    dancer = SupportSequence([DS, LS, DS, RS, DS, LS], [0, 90, 100, 103, 113, 116], 126, 30.0)
    plan = synchronize([walk, dancer], [2.0, 1.0], [0, 12], [0.5, 0.5])
    assert plan.elements[1][plan.joins[1]] == 0
    # the same clip with a short start enters at that LS
    short = SupportSequence([DS, LS, DS, RS, DS, LS], [0, 5, 15, 18, 28, 31], 41, 30.0)
    plan = synchronize([walk, short], [2.0, 1.0], [0, 12], [0.5, 0.5])
    assert plan.elements[1][plan.joins[1]] == 1



def test_a_clip_with_nothing_in_step_at_a_boundary_waits_for_the_next_step_where_it_is():
    walk = SupportSequence([RS, DS, LS, DS], [0, 10, 13, 23], 27, cyclic=True, fps=30.0)
    # it stands 15 frames, then walks: asked to join at the walk's RS, its standing DS would start half
    # a step off, and its own RS lies further than one of its strides into it; the walk's next DS is
    # the one before LS, as its own standing is: it waits one step for it
    starter = SupportSequence([DS, LS, DS, RS, DS, LS, DS, RS], [0, 15, 25, 28, 38, 41, 51, 54], 64, 30.0)
    plan = synchronize([walk, starter], [2.0, 1.0], [0, 24], [0.5, 0.5])
    assert_a_valid_plan(plan, 2)
    k = plan.joins[1]
    # one step past the first boundary at or after its start, at its first element
    assert plan.boundaries[k - 2] < 24 <= plan.boundaries[k - 1] and plan.elements[1][k] == 0
    codes = [[s.element(e)[0] for e in plan.elements[i][k:k + 6]] for i, s in enumerate((walk, starter))]
    assert all(sync.in_step(a, b) for a, b in zip(*codes))


def test_played_supports_read_each_clip_s_own_contacts_at_the_frame_it_plays():
    contacts = contacts_of([RS, DS, LS], [3, 2, 3])  # 8 frames
    warps = np.array([[np.nan, 0.0, 2.6, 4.4, 7.0, 9.0],  # not yet; frames 0, 3, 4, 7; past its end
                      [0.0, 4.0, 6.0, 7.0, 12.0, 9.0]])  # cyclic (period 7): 7 is frame 0 again, 12 frame 5
    supports = sync.played_supports(warps, [contacts, contacts], [False, True])
    np.testing.assert_array_equal(supports[0], [-1, RS, DS, DS, LS, -1])
    np.testing.assert_array_equal(supports[1], [RS, DS, LS, RS, LS, RS])
    with pytest.raises(ValueError, match="contacts and cyclic .and ends, if any. for each of the 2 warps"):
        sync.played_supports(warps, [contacts], [False])


def test_a_clip_past_where_it_stops_shows_none_of_its_feet():
    # a clip fades out where it stops (SyncPlan.ends: a cyclic one where it is ended): weighing nothing
    # past it, its supports there are not the blend's, whatever its warp goes on to play
    contacts = contacts_of([RS, DS, LS], [3, 2, 3])
    warps = np.array([[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 4.0, 6.0, 7.0, 12.0, 9.0]])
    supports = sync.played_supports(warps, [contacts, contacts], [False, True], ends=[5.0, 2.5])
    np.testing.assert_array_equal(supports[0], [RS, RS, RS, DS, DS, LS])
    np.testing.assert_array_equal(supports[1], [RS, DS, LS, -1, -1, -1])


def walk_codes(first: int, n: int) -> list[int]:
    """A walk's elements from single support ``first``: it, DS, the other foot, DS, ..."""
    feet = [first, RS if first == LS else LS]
    return [feet[(k // 2) % 2] if k % 2 == 0 else DS for k in range(n)]


@pytest.mark.parametrize("pieces", [2, 3])
def test_a_walk_leaving_a_split_standing_start_steps_in_step_with_the_other(pieces):
    # §7's splitting cuts a walk's standing start into pieces; each takes a step, and an odd or even
    # count of them against the other walk's alternating elements must not leave the two half a
    # step apart (single supports against double supports) once the standing is over
    walk = SupportSequence(walk_codes(RS, 24), np.arange(24) * 8, 24 * 8, 30.0)
    codes = [DS] * pieces + walk_codes(LS, 22)
    starter = SupportSequence(codes, np.arange(len(codes)) * 8, len(codes) * 8, 30.0, split=True)
    for start in (0, 8, 16):
        plan = synchronize([walk, starter], [2.0, 1.0], [0, start], [0.5, 0.5])
        assert_a_valid_plan(plan, 2)
        steps = [k for k in range(len(plan.combined)) if plan.elements[1][k] >= pieces
                 and not starter.element(int(plan.elements[1][k]))[3] and not walk.element(int(plan.elements[0][k]))[3]]
        assert len(steps) > 10
        for k in steps:
            a, b = (s.element(int(plan.elements[i][k]))[0] for i, s in enumerate((walk, starter)))
            assert sync.in_step(a, b), (start, k, a, b)


def test_a_split_double_support_does_not_wait_for_a_clip_that_has_ended():
    # past its end a clip holds its last element and shows no step: the pieces of a split DS are
    # not held waiting for it (they were, one step at a time, until the plan's patience ran out)
    short = SupportSequence(walk_codes(RS, 5), np.arange(5) * 8, 40, 30.0)
    codes = walk_codes(LS, 3) + [DS] * 3 + walk_codes(LS, 12)
    split = SupportSequence(codes, np.arange(len(codes)) * 8, len(codes) * 8, 30.0, split=True)
    plan = synchronize([short, split], [1.0, 1.0], [0, 0], [0.5, 0.5])
    assert_a_valid_plan(plan, 2)
    # once the walk has ended, the other plays at its own pace: its own length from where it joined
    assert plan.n_frames <= plan.boundaries[plan.joins[1]] + split.n_frames + 1


def strike_separation(supports: np.ndarray) -> float:
    """The median distance, in strides of the first motion, from each of its heel strikes (a foot's
    contact beginning) to the second's nearest strike of the same foot, over frames both play."""
    both = np.all(supports >= 0, axis=0)
    out = []
    for foot in FEET:
        down = np.isin(supports, [DS, foot]) & both
        a, b = (np.flatnonzero(d[1:] & ~d[:-1] & both[1:] & both[:-1]) + 1 for d in down)
        stride = np.median(np.diff(a))
        out.append(np.min(np.abs(b[None] - a[:, None]), axis=1) / stride)
    return float(np.median(np.concatenate(out)))


@pytest.mark.parametrize("offset", [0, 10])
@pytest.mark.parametrize("pair", [("bandai1/walk_sad_001", "bandai1/walk_angry_001"),
                                  ("bandai1/walk_angry_001", "bandai1/walk_sad_001")], ids=["sad + angry", "angry + sad"])
def test_a_walk_without_double_supports_puts_its_feet_down_with_one_that_has_long_ones(mocap, pair, offset):
    # walk_angry goes from foot to foot with double supports of a frame or none, walk_sad stands on both
    # feet a quarter of its stride: folded into the single support before, the straight step landed a
    # whole DS after the other's (a quarter stride); it lands with the DS's start instead
    motions = [mocap(name) for name in pair]
    plan = synchronize([sequence_of(m, cyclic=False) for m in motions], [2.0, 1.0], [0, offset], [0.5, 0.5])
    assert_a_valid_plan(plan, 2)
    supports = sync.played_supports(plan.warps, [foot_contacts(m) for m in motions], [False, False], plan.ends)
    assert strike_separation(supports) <= 0.05
