"""Optimal blending range (Oshita 2014, section 4.3): eqs. (9)-(14) and their coarse-to-fine search."""

import json
import tracemalloc
from functools import lru_cache

import numpy as np
import pytest

from core import quat
from core.analysis import Phase, analyze
from core.demo import demo_clips
from core.optimize import (
    RESPONSIVE_WEIGHTS,
    BlendLimits,
    BlendSide,
    SMOOTH_WEIGHTS,
    blend_cost_terms,
    blend_weights,
    body_frames,
    body_velocity,
    distance_matrix,
    exhaustive_blend_range,
    optimal_blend_range,
    part_features,
    pose_distance,
    pose_acceleration,
    pose_features,
    pose_velocity,
    primary_joints,
)
from core.rig import detect_up, find_rig

X, Y, Z = np.eye(3)


# ---------------------------------------------------------------- helpers


def smooth_clip(rng, frames: int, joints: int, fps: float) -> np.ndarray:
    """Random pose features ``(F, n, 3)`` as smooth as motion: a few sinusoids of 0.2-2 Hz per coordinate."""
    t = np.arange(frames) / fps
    freq = rng.uniform(0.2, 2.0, size=(4, joints, 3))
    phase = rng.uniform(0, 2 * np.pi, size=(4, joints, 3))
    amp = rng.uniform(0.05, 0.3, size=(4, joints, 3))
    rest = rng.normal(scale=0.5, size=(joints, 3))
    return rest + np.sum(amp * np.sin(2 * np.pi * freq * t[:, None, None, None] + phase), axis=1)


def random_problem(seed: int) -> dict:
    """A random blending problem: smooth clips, overlapping placements, candidate sets of any shape."""
    rng = np.random.default_rng(seed)
    fps = float(rng.choice([24, 30, 60]))
    F0, F1 = rng.integers(60, 300, 2)
    n = int(rng.integers(4, 12))
    prev, nxt = smooth_clip(rng, F0, n, fps), smooth_clip(rng, F1, n, fps)
    next_offset = int(rng.integers(F0 // 3, F0))
    t0 = np.arange(int(rng.integers(0, F0 // 3)), F0)
    t1 = np.arange(next_offset, next_offset + int(rng.integers(10, F1)))
    shape = rng.random()
    if shape < 0.15:
        t0 = t0[[int(rng.integers(0, np.sum(t0 < t1[-1])))]]  # the start fixed (eqs. 3, 5)
    elif shape < 0.3:
        t1 = t1[[int(rng.integers(np.sum(t1 <= t0[0]), len(t1)))]]
    elif shape < 0.45:
        t0 = np.sort(rng.choice(t0, size=max(1, len(t0) // 2), replace=False))  # not contiguous
        t0[0] = min(t0[0], t1[-1] - 1)
    return dict(
        prev_feats=prev, next_feats=nxt, prev_velocity=pose_velocity(prev, fps), next_velocity=pose_velocity(nxt, fps),
        t0_candidates=t0, t1_candidates=t1, prev_offset=0, next_offset=next_offset, fps=fps,
        phase_length_s=None if rng.random() < 0.5 else float(rng.uniform(0.1, 1.0)),
        weights=blend_weights(rng.random()),
    )


LIMITS = ("min_frames", "max_frames", "max_speed", "max_accel", "max_body_accel")


def grouped(prev_feats, next_feats, prev_velocity, next_velocity, *, t0_candidates, t1_candidates,
            prev_offset, next_offset, body_velocity=(None, None), **rest) -> dict:
    """A problem of these tests, written flat (so that a test changes one thing with ``dict(problem, ...)``),
    as the search takes it: the previous and following :class:`BlendSide` and the :class:`BlendLimits`."""
    limits = BlendLimits(**{name: rest.pop(name) for name in LIMITS if name in rest})
    return dict(previous=BlendSide(prev_feats, prev_velocity, t0_candidates, prev_offset, body_velocity[0]),
                following=BlendSide(next_feats, next_velocity, t1_candidates, next_offset, body_velocity[1]),
                limits=limits, **rest)


def optimal(**problem):
    """:func:`optimal_blend_range` of a flat problem (see :func:`grouped`)."""
    return optimal_blend_range(**grouped(**problem))


def exhaustive(**problem):
    """:func:`exhaustive_blend_range` of a flat problem (see :func:`grouped`)."""
    return exhaustive_blend_range(**grouped(**problem))


@lru_cache(maxsize=None)
def _features(motion, part):
    rig = find_rig(motion)
    feats = part_features(motion, rig, part, detect_up(motion, rig))
    return feats, pose_velocity(feats, motion.fps)


def transition(prev, nxt, part, *, overlap_s=1.5, before_s=2.0, after_s=1.5):
    """A pose-to-pose blending problem between two real clips.

    The following clip starts ``overlap_s`` before the previous one ends; the
    blend may start in the previous clip's last ``before_s`` and end in the
    following clip's first ``after_s`` (a possible range as in eq. 4).
    """
    fps = prev.fps
    F0, V0 = _features(prev, part)
    F1, V1 = _features(nxt, part)
    next_offset = len(F0) - int(round(overlap_s * fps))
    return dict(
        prev_feats=F0, next_feats=F1, prev_velocity=V0, next_velocity=V1,
        t0_candidates=np.arange(len(F0) - int(round(before_s * fps)), len(F0)),
        t1_candidates=np.arange(next_offset, next_offset + int(round(after_s * fps))),
        prev_offset=0, next_offset=next_offset, fps=fps,
    )


def step_transition(prev, nxt):
    """A lower-body motion transition (eqs. 1, 10): the previous clip's last step and the
    following clip's first step of the same foot start together; returns (problem, phase length in s)."""

    def steps(motion):
        return [s for s in analyze(motion).segments if s.phase in (Phase.LS, Phase.RS) and s.n_frames >= 6]

    p0 = steps(prev)[-1]
    p1 = next(s for s in steps(nxt) if s.phase == p0.phase)
    fps = prev.fps
    next_offset = p0.start - p1.start
    F0, V0 = _features(prev, "lower")
    F1, V1 = _features(nxt, "lower")
    p1_end = p1.end + next_offset
    problem = dict(
        prev_feats=F0, next_feats=F1, prev_velocity=V0, next_velocity=V1,
        t0_candidates=np.arange(max(p0.start - int(0.7 * fps), 0), p1_end),
        t1_candidates=np.arange(p0.start + 1, min(p1_end + int(0.7 * fps), next_offset + len(F1))),
        prev_offset=0, next_offset=next_offset, fps=fps,
    )
    return problem, (p1_end - p0.start) / fps


def blended_acceleration(problem, result, margin=3):
    """RMS acceleration (leg lengths/s^2) of the primary joints around a pose-to-pose blend.

    The previous clip up to t0, a smoothstep from its pose at t0 to the
    following clip's pose at t1, the following clip after t1.
    """
    F0, F1 = problem["prev_feats"], problem["next_feats"]
    o0, o1, fps = problem["prev_offset"], problem["next_offset"], problem["fps"]
    t = np.arange(result.t0 - margin, result.t1 + margin + 1)
    before = F0[np.clip(t - o0, 0, len(F0) - 1)]
    after = F1[np.clip(t - o1, 0, len(F1) - 1)]
    s = np.clip((t - result.t0) / (result.t1 - result.t0), 0, 1)
    w = (3 * s**2 - 2 * s**3)[:, None, None]
    blend = (1 - w) * F0[result.t0 - o0] + w * F1[result.t1 - o1]
    x = np.where((t < result.t0)[:, None, None], before, np.where((t > result.t1)[:, None, None], after, blend))
    acceleration = np.linalg.norm(np.diff(x, 2, axis=0) * fps * fps, axis=-1).mean(axis=-1)
    return float(np.sqrt(np.mean(acceleration**2)))


WALK = "bandai1/walk_normal_001"
POSE_TO_POSE_PAIRS = [
    (WALK, "bandai1/punch_normal_001"),
    (WALK, "bandai1/bow_normal_001"),
    (WALK, "bandai1/kick_normal_001"),
    (WALK, "bandai1/bye_normal_001"),
    (WALK, "bandai1/slash_normal_001"),
    ("bandai1/punch_normal_001", WALK),
    ("bandai1/kick_normal_001", "bandai1/bow_normal_001"),
    ("bandai1/bye_normal_001", "bandai1/call_normal_001"),
    ("bandai1/respond_normal_001", WALK),
]
STEP_PAIRS = [
    (WALK, "bandai1/walk_happy_001"),
    (WALK, "bandai1/walk_sad_001"),
    ("bandai1/walk_angry_001", "bandai1/walk_childish_001"),
    ("bandai1/walk_happy_001", WALK),
    ("bandai1/walk-left_normal_001", WALK),
    (WALK, "bandai1/kick_normal_001"),
]


# ---------------------------------------------------------------- eq. (12): primary joints


def test_lower_body_primary_joints_are_hip_knee_ankle_and_toe_of_both_legs(mocap):
    walk = mocap(WALK)
    names = [walk.skeleton.names[j] for j in primary_joints(find_rig(walk), "lower")]
    assert names == ["UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L", "UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"]


def test_upper_body_primary_joints_are_chest_neck_head_and_both_arms():
    motion = demo_clips(30)["stand"].motion
    names = [motion.skeleton.names[j] for j in primary_joints(find_rig(motion), "upper")]
    assert names == ["chest", "neck", "head", "upper_arm.L", "forearm.L", "hand.L", "upper_arm.R", "forearm.R", "hand.R"]


def test_an_unknown_body_part_is_refused():
    with pytest.raises(ValueError, match="part must be one of"):
        primary_joints(find_rig(demo_clips(30)["stand"].motion), "arms")


# ---------------------------------------------------------------- eq. (12): aligned poses and their distance


def test_poses_are_seen_from_the_pelvis_facing_forward_in_leg_lengths():
    """Demo figure: Z up, facing -Y, left is +X; features are (left, up, forward) in leg lengths."""
    motion = demo_clips(30)["stand"].motion
    rig = find_rig(motion)
    left, right = rig.leg("L"), rig.leg("R")
    joints = [left.hip, left.ankle, left.toe, right.hip]
    f = pose_features(motion, rig, joints)[0]
    assert f[0, 0] > 0 > f[3, 0], "the left hip is on the left"
    assert f[2, 2] > f[1, 2] + 0.05, "the toes are ahead of the ankle"
    assert -1.2 < f[1, 1] < -0.8, "the ankle is about a leg length below the pelvis"


def test_identical_poses_are_at_distance_zero(mocap):
    feats, _ = _features(mocap(WALK), "lower")
    assert np.all(pose_distance(feats, feats) == 0.0)
    assert np.all(np.diag(distance_matrix(feats, feats)) == 0.0)
    assert pose_distance(feats[10], feats[27]) > 0.2, "half a stride later the legs have swapped"


@pytest.mark.parametrize("frames", [(7, 5), (150, 90)])  # a one-broadcast block and a joint-by-joint block
def test_distance_matrix_is_the_pose_distance_of_every_pair(frames):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(frames[0], 9, 3)), rng.normal(size=(frames[1], 9, 3))
    slow = np.array([[pose_distance(p, q) for q in b] for p in a])
    np.testing.assert_allclose(distance_matrix(a, b), slow, rtol=1e-13)


def test_pose_distance_broadcasts_and_checks_shapes():
    a = np.zeros((4, 2, 5, 3))
    assert pose_distance(a, np.ones((5, 3))).shape == (4, 2)
    with pytest.raises(ValueError, match="joints"):
        pose_distance(np.zeros((5, 3)), np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"\(\.\.\., n, 3\)"):
        pose_distance(np.zeros((5, 2)), np.zeros((5, 2)))


TRANSFORMS = {
    "moved and turned on the ground": lambda m: m.transformed(quat.from_axis_angle(Z, 2.2), np.array([3.1, -0.75, 0.0])),
    "turned to Y up": lambda m: m.transformed(quat.from_axis_angle(X, -np.pi / 2)),
    "centimetres": lambda m: m.scaled(100.0),
    "inches": lambda m: m.scaled(1 / 0.0254),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
@pytest.mark.parametrize("part", ["lower", "upper"])
def test_aligned_poses_do_not_depend_on_where_the_clip_stands_or_its_unit(name, part):
    motion = demo_clips(30)["walk"].motion
    changed = TRANSFORMS[name](motion)
    a = part_features(motion, find_rig(motion), part)
    b = part_features(changed, find_rig(changed), part)
    np.testing.assert_allclose(b, a, atol=1e-9)


def test_real_capture_in_metres_has_the_same_poses_as_in_centimetres(mocap):
    walk = mocap(WALK)
    a, _ = _features(walk, "upper")
    b, _ = _features(walk.scaled(0.01), "upper")
    np.testing.assert_allclose(b, a, atol=1e-9)


def test_resampling_keeps_the_poses_at_the_same_instants(mocap):
    walk = mocap(WALK)
    fast = walk.resampled(60)
    a, _ = _features(walk, "lower")
    b, _ = _features(fast, "lower")
    # the file's rate is 30.00003 fps, so the 60 fps samples drift from the
    # original instants by up to a few microseconds over the clip
    np.testing.assert_allclose(b[::2][: len(a)], a[: len(b[::2])], atol=1e-4)


# ---------------------------------------------------------------- eq. (13): pose velocity


@pytest.mark.parametrize("fps", [24.0, 30.0, 120.0])
def test_velocity_of_a_steady_motion_is_its_speed_at_any_frame_rate(fps):
    speed = np.array([0.3, -0.4, 1.2])  # leg lengths per second, |speed| = 1.3
    t = np.arange(int(2 * fps)) / fps
    feats = np.random.default_rng(0).normal(size=(6, 3)) + t[:, None, None] * speed
    np.testing.assert_allclose(pose_velocity(feats, fps), 1.3, rtol=1e-9)
    np.testing.assert_allclose(pose_velocity(feats, fps, eps_frames=3), 1.3, rtol=1e-9)


def test_the_last_frame_uses_the_backward_difference():
    feats = np.random.default_rng(1).normal(size=(10, 4, 3))
    v = pose_velocity(feats, 30.0)
    assert v[-1] == pytest.approx(pose_distance(feats[-2], feats[-1]) * 30.0)
    assert v[3] == pytest.approx(pose_distance(feats[3], feats[4]) * 30.0)
    v = pose_velocity(feats, 30.0, eps_frames=2)
    assert v[-1] == pytest.approx(pose_distance(feats[-3], feats[-1]) * 15.0)


def test_a_single_pose_does_not_move_and_eps_must_be_whole_frames():
    assert list(pose_velocity(np.zeros((1, 3, 3)), 30.0)) == [0.0]
    assert pose_velocity(np.zeros((0, 3, 3)), 30.0).shape == (0,)
    for bad in (0, 1.5):
        with pytest.raises(ValueError, match="eps_frames"):
            pose_velocity(np.zeros((5, 3, 3)), 30.0, eps_frames=bad)


def test_real_velocities_are_in_leg_lengths_per_second_whatever_the_unit_and_rate(mocap):
    walk = mocap(WALK)
    _, v = _features(walk, "lower")
    _, v_m = _features(walk.scaled(0.01), "lower")
    _, v_60 = _features(walk.resampled(60), "lower")
    np.testing.assert_allclose(v_m, v, rtol=1e-9)
    assert np.median(v_60[::2][: len(v)]) == pytest.approx(np.median(v), rel=0.05)
    assert 0.5 < np.median(v) < 2.0, "legs of a walk move about a leg length per second"


# ---------------------------------------------------------------- eqs. (10), (11), (14): the terms


def steady(frames=60, fps=30.0, speed=(0.0, 0.0, 1.0)):
    """Features of a pose gliding at a constant ``speed`` (leg lengths per second)."""
    t = np.arange(frames) / fps
    return np.random.default_rng(2).normal(size=(5, 3)) + t[:, None, None] * np.asarray(speed)


def test_time_term_is_the_range_length_or_its_distance_from_the_phase_length():
    f = steady()
    v = pose_velocity(f, 30.0)
    side = BlendSide(f, v)
    t0, t1 = np.array([10, 10, 20]), np.array([13, 40, 50])
    np.testing.assert_allclose(blend_cost_terms(side, side, t0, t1, fps=30.0, phase_length_s=None).time, [0.1, 1.0, 1.0])
    np.testing.assert_allclose(blend_cost_terms(side, side, t0, t1, fps=30.0, phase_length_s=0.5).time, [0.4, 0.5, 0.5])


def test_pose_term_compares_the_previous_motion_at_t0_with_the_following_at_t1():
    rng = np.random.default_rng(4)
    prev, nxt = rng.normal(size=(40, 6, 3)), rng.normal(size=(50, 6, 3))
    vp, vn = pose_velocity(prev, 30.0), pose_velocity(nxt, 30.0)
    terms = blend_cost_terms(BlendSide(prev, vp, offset=5), BlendSide(nxt, vn, offset=20), 35, 42, fps=30.0,
                             phase_length_s=None)
    assert terms.pose == pytest.approx(pose_distance(prev[30], nxt[22]))


def test_velocity_term_is_zero_when_both_ends_move_at_the_blends_mean_speed():
    """A blend that carries on a steady motion: D(t0, t1) / (t1 - t0) is the motion's own speed."""
    f = steady(speed=(0.6, 0.0, 0.8))
    v = pose_velocity(f, 30.0)
    terms = blend_cost_terms(BlendSide(f, v), BlendSide(f, v), np.arange(5, 30), np.arange(12, 37), fps=30.0,
                             phase_length_s=None)
    np.testing.assert_allclose(terms.velocity, 0.0, atol=1e-12)
    np.testing.assert_allclose(terms.pose, 1.0 * 7 / 30.0, rtol=1e-12)


def test_outside_its_frames_a_clip_holds_its_end_pose_still():
    prev, nxt = steady(30), steady(30, speed=(1.0, 0.0, 0.0))
    vp, vn = pose_velocity(prev, 30.0), pose_velocity(nxt, 30.0)
    late = blend_cost_terms(BlendSide(prev, vp), BlendSide(nxt, vn, offset=20), 10, 80, fps=30.0, phase_length_s=None)
    last = blend_cost_terms(BlendSide(prev, vp * 0), BlendSide(nxt, vn * 0, offset=20), 10, 49, fps=30.0,
                            phase_length_s=None)
    assert late.pose == pytest.approx(last.pose)
    mean_speed = late.pose / (70 / 30.0)
    assert late.velocity == pytest.approx(0.5 * (abs(vp[10] - mean_speed) + mean_speed))


def test_a_range_that_does_not_move_forward_in_time_is_refused():
    f = steady()
    v = pose_velocity(f, 30.0)
    with pytest.raises(ValueError, match="t0 < t1"):
        blend_cost_terms(BlendSide(f, v), BlendSide(f, v), 10, 10, fps=30.0, phase_length_s=None)


# ---------------------------------------------------------------- eq. (9): the optimum


def test_pose_to_pose_prefers_the_shortest_range_when_time_dominates():
    """Eq. (11): with only Q_t, the shortest range the candidates allow wins."""
    problem = random_problem(7)
    problem.update(phase_length_s=None, weights=(1.0, 0.0, 0.0))
    t0, t1 = problem["t0_candidates"], problem["t1_candidates"]
    shortest = min(b - a for a in t0 for b in t1 if b > a)
    result = optimal(**problem)
    assert result.t1 - result.t0 == shortest


def test_pose_to_pose_ranges_shorten_as_the_time_weight_grows(mocap):
    problem = transition(mocap(WALK), mocap("bandai1/kick_normal_001"), "upper")
    lengths = [optimal(**problem, phase_length_s=None, weights=(w_t, 1.0, 1.0)).n_frames
               for w_t in (0.1, 0.3, 1.0, 3.0, 10.0)]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] > lengths[-1], lengths


def test_motion_to_motion_prefers_a_range_as_long_as_the_foot_moving_phase():
    """Eq. (10): with only Q_t, the range lasts the phase, to the frame."""
    problem = random_problem(8)
    for phase_s in (0.2, 0.5, 0.8):
        problem.update(phase_length_s=phase_s, weights=(1.0, 0.0, 0.0))
        result = optimal(**problem)
        assert result.t1 - result.t0 == round(phase_s * problem["fps"])


def test_real_step_transitions_last_about_their_phase(mocap):
    """Eq. (10) on walks: the range stays near the phase length at every W, unlike eq. (11)."""
    for W in (0.0, 0.5, 1.0):
        off_10, off_11 = [], []
        for prev, nxt in STEP_PAIRS:
            problem, phase_s = step_transition(mocap(prev), mocap(nxt))
            for phase, off in ((phase_s, off_10), (None, off_11)):
                r = optimal(**problem, phase_length_s=phase, weights=blend_weights(W))
                off.append(abs((r.t1 - r.t0) / problem["fps"] - phase_s))
        assert np.mean(off_10) < 0.1, f"W={W}: eq. (10) ranges are {np.round(off_10, 2)} s off their phase"
        assert np.mean(off_10) < 0.5 * np.mean(off_11), f"W={W}: {np.mean(off_10):.2f} s vs {np.mean(off_11):.2f} s"


@pytest.mark.parametrize("seed", range(40))
def test_coarse_to_fine_finds_the_exhaustive_optimum_on_random_smooth_poses(seed):
    problem = random_problem(seed)
    # exhaustive_pairs=0: the coarse-to-fine search itself, whatever the size
    fast, slow = optimal(**problem, exhaustive_pairs=0), exhaustive(**problem)
    assert fast.cost == pytest.approx(slow.cost, rel=1e-12, abs=1e-12), (fast, slow)


@pytest.mark.parametrize("W", [0.0, 0.5, 1.0])
def test_coarse_to_fine_finds_the_exhaustive_optimum_on_real_transitions(mocap, W):
    problems = [(transition(mocap(a), mocap(b), part), None) for a, b in POSE_TO_POSE_PAIRS for part in ("lower", "upper")]
    problems += [step_transition(mocap(a), mocap(b)) for a, b in STEP_PAIRS]
    for problem, phase_s in problems:
        kw = dict(problem, phase_length_s=phase_s, weights=blend_weights(W))
        fast, slow = optimal(**kw, exhaustive_pairs=0), exhaustive(**kw)
        assert (fast.t0, fast.t1) == (slow.t0, slow.t1), (fast, slow)
        assert fast.cost == slow.cost


@pytest.mark.parametrize("seed", range(100, 130))
def test_the_range_is_a_pair_of_candidates_with_t0_before_t1(seed):
    problem = random_problem(seed)
    result = optimal(**problem, exhaustive_pairs=0)
    assert result.t0 in problem["t0_candidates"] and result.t1 in problem["t1_candidates"]
    assert result.t0 < result.t1


def test_a_fixed_end_stays_where_it_is():
    problem = random_problem(11)
    for fixed, free in (("t0_candidates", "t1_candidates"), ("t1_candidates", "t0_candidates")):
        kw = dict(problem)
        kw[fixed] = np.array([int(np.median(problem[fixed]))])
        kw[free] = np.arange(problem["t0_candidates"][0], problem["t1_candidates"][-1] + 1)
        result = optimal(**kw)
        assert (result.t0 if fixed == "t0_candidates" else result.t1) == kw[fixed][0]
        assert result == exhaustive(**kw)


@pytest.mark.parametrize("step", [1, 2, 7])
def test_any_coarse_step_reaches_the_same_optimum(step):
    problem = random_problem(12)
    fast = optimal(**problem, coarse_step=step, exhaustive_pairs=0)
    assert fast.cost == pytest.approx(exhaustive(**problem).cost)


def test_the_cost_is_the_weighted_sum_of_the_terms_at_the_range():
    problem = random_problem(13)
    result = optimal(**problem)
    sides = grouped(**problem)
    terms = blend_cost_terms(sides["previous"], sides["following"], result.t0, result.t1, fps=problem["fps"],
                             phase_length_s=problem["phase_length_s"])
    np.testing.assert_allclose(tuple(result.terms), tuple(terms), rtol=1e-12)
    assert result.cost == pytest.approx(float(np.dot(problem["weights"], tuple(terms))), rel=1e-12)
    assert json.loads(json.dumps(result.to_dict()))["t0"] == result.t0


def test_impossible_searches_are_refused_with_the_reason():
    problem = random_problem(14)
    with pytest.raises(ValueError, match="t0 < t1"):
        optimal(**dict(problem, t0_candidates=[500], t1_candidates=[10, 20]))
    with pytest.raises(ValueError, match="t1_candidates is empty"):
        optimal(**dict(problem, t1_candidates=[]))
    with pytest.raises(ValueError, match="weights"):
        optimal(**dict(problem, weights=(1.0, -1.0, 0.0)))
    with pytest.raises(ValueError, match="velocities"):
        optimal(**dict(problem, prev_velocity=problem["prev_velocity"][:-1]))
    with pytest.raises(ValueError, match="coarse_step"):
        optimal(**problem, coarse_step=0)


def test_a_side_without_its_possible_range_is_refused_by_the_search():
    sides = grouped(**random_problem(14))
    bare = BlendSide(sides["following"].feats, sides["following"].velocity, offset=sides["following"].offset)
    with pytest.raises(ValueError, match="t1_candidates not given"):
        optimal_blend_range(sides["previous"], bare, fps=30.0, phase_length_s=None, weights=blend_weights(0.5))


def test_the_optimum_is_the_same_in_metres_and_centimetres(mocap):
    walk, punch = mocap(WALK), mocap("bandai1/punch_normal_001")
    a = optimal(**transition(walk, punch, "upper"), phase_length_s=None, weights=blend_weights(0.5))
    b = optimal(**transition(walk.scaled(0.01), punch.scaled(0.01), "upper"), phase_length_s=None,
                weights=blend_weights(0.5))
    assert (a.t0, a.t1) == (b.t0, b.t1)
    assert a.cost == pytest.approx(b.cost, rel=1e-9)


def test_the_optimum_hardly_depends_on_the_frame_rate(mocap):
    """Costs are in seconds: at 60 fps the same pair costs about the same at its optimum."""
    for prev, nxt in POSE_TO_POSE_PAIRS[:4]:
        a, b = mocap(prev), mocap(nxt)
        slow = optimal(**transition(a, b, "upper"), phase_length_s=None, weights=blend_weights(0.5))
        fast = optimal(**transition(a.resampled(60), b.resampled(60), "upper"), phase_length_s=None,
                       weights=blend_weights(0.5))
        assert fast.cost == pytest.approx(slow.cost, rel=0.1), (prev, nxt)
        assert fast.terms.time == pytest.approx(slow.terms.time, abs=0.1)


# ---------------------------------------------------------------- responsiveness W


def test_responsiveness_blends_the_two_documented_weight_sets_linearly():
    assert blend_weights(0) == RESPONSIVE_WEIGHTS
    assert blend_weights(1) == SMOOTH_WEIGHTS
    np.testing.assert_allclose(blend_weights(0.25), 0.75 * np.array(RESPONSIVE_WEIGHTS) + 0.25 * np.array(SMOOTH_WEIGHTS))
    assert blend_weights(0.5).time == blend_weights(0.5)[0]


@pytest.mark.parametrize("W", [-0.01, 1.01, float("nan"), float("inf")])
def test_responsiveness_outside_zero_to_one_is_refused(W):
    with pytest.raises(ValueError, match="between 0"):
        blend_weights(W)


def test_raising_W_lengthens_blends_and_lowers_their_acceleration_on_real_pairs(mocap):
    problems = [transition(mocap(a), mocap(b), part) for a, b in POSE_TO_POSE_PAIRS for part in ("lower", "upper")]
    lengths, accelerations = [], []
    for W in (0.0, 0.5, 1.0):
        results = [optimal(**p, phase_length_s=None, weights=blend_weights(W)) for p in problems]
        lengths.append([(r.t1 - r.t0) / p["fps"] for r, p in zip(results, problems)])
        accelerations.append([blended_acceleration(p, r) for r, p in zip(results, problems)])
    lengths, accelerations = np.array(lengths), np.array(accelerations)
    assert np.all(np.diff(lengths, axis=0) >= 0), f"every pair's blend lengthens with W:\n{lengths.round(2)}"
    assert lengths[0].mean() < 0.2 and lengths[2].mean() > 2 * lengths[0].mean(), lengths.mean(axis=1)
    mean = accelerations.mean(axis=1)
    assert mean[0] > mean[1] > mean[2] and mean[2] < 0.6 * mean[0], mean


def test_small_candidate_sets_are_searched_exhaustively():
    problem = random_problem(13)
    assert optimal(**problem) == exhaustive(**problem)


@pytest.mark.parametrize("seed", range(14, 20))
def test_a_speed_limit_passes_over_fast_ranges(seed):
    problem = random_problem(seed)
    free = exhaustive(**problem)
    speed = free.terms.pose * problem["fps"] / (free.t1 - free.t0)
    limited = optimal(**problem, max_speed=0.5 * speed)
    assert limited == exhaustive(**problem, max_speed=0.5 * speed)
    assert free.excess == 0.0 and limited.excess <= 1.0
    assert limited.terms.pose * problem["fps"] / (limited.t1 - limited.t0) < speed


@pytest.mark.parametrize("seed", range(20, 26))
def test_an_acceleration_limit_lengthens_blends_that_change_pose_too_fast(seed):
    problem = random_problem(seed)
    free = exhaustive(**problem)
    accel = 6.0 * free.terms.pose * (problem["fps"] / (free.t1 - free.t0)) ** 2
    limited = optimal(**problem, max_accel=0.25 * accel)
    assert limited == exhaustive(**problem, max_accel=0.25 * accel)
    assert 6.0 * limited.terms.pose * (problem["fps"] / (limited.t1 - limited.t0)) ** 2 < accel


def test_when_no_range_keeps_within_the_limits_the_gentlest_wins():
    problem = random_problem(14)
    fps = problem["fps"]
    t0, t1 = np.asarray(problem["t0_candidates"]), np.asarray(problem["t1_candidates"])
    a, b = (x.ravel() for x in np.meshgrid(t0, t1, indexing="ij"))
    a, b = a[a < b], b[a < b]
    sides = grouped(**problem)
    d = blend_cost_terms(sides["previous"], sides["following"], a, b, fps=fps,
                         phase_length_s=problem["phase_length_s"]).pose
    slowest = optimal(**problem, max_speed=1e-9)
    assert slowest == exhaustive(**problem, max_speed=1e-9)
    assert slowest.excess > 1.0  # the plan says the blend is more abrupt than the limits
    assert slowest.terms.pose * fps / (slowest.t1 - slowest.t0) == pytest.approx((d * fps / (b - a)).min(), rel=1e-9)
    gentlest = optimal(**problem, max_accel=1e-9)
    assert 6.0 * gentlest.terms.pose * (fps / (gentlest.t1 - gentlest.t0)) ** 2 == pytest.approx(
        (6.0 * d * (fps / (b - a)) ** 2).min(), rel=1e-9)


def with_body_velocities(problem: dict, seed: int) -> dict:
    """``problem`` with random body velocities: smooth, of a few leg lengths per second, none upwards."""
    rng = np.random.default_rng(seed)
    out = dict(problem)
    out["body_velocity"] = tuple(
        np.cumsum(rng.normal(0.0, 0.2, (len(problem[k]), 3)), axis=0) * [1.0, 0.0, 1.0] + [0.0, 0.0, rng.uniform(0, 3)]
        for k in ("prev_feats", "next_feats"))
    return out


def body_change(problem: dict, found) -> float:
    """``1.5 |v1 - v0| / (t1 - t0)`` of a found range: the body's peak acceleration there."""
    v0, v1 = problem["body_velocity"]
    i = int(np.clip(found.t0 - problem["prev_offset"], 0, len(v0) - 1))
    j = int(np.clip(found.t1 - problem["next_offset"], 0, len(v1) - 1))
    return 1.5 * np.linalg.norm(v1[j] - v0[i]) * problem["fps"] / (found.t1 - found.t0)


@pytest.mark.parametrize("seed", range(26, 32))
def test_a_body_acceleration_limit_lengthens_blends_that_change_the_bodys_speed_too_fast(seed):
    """The features are relative to the pelvis: only the body velocity sees standing give way to a run."""
    problem = with_body_velocities(random_problem(seed), seed)
    free = exhaustive(**problem)
    limit = 0.25 * body_change(problem, free)
    limited = optimal(**problem, max_body_accel=limit)
    assert limited == exhaustive(**problem, max_body_accel=limit)
    assert body_change(problem, limited) < body_change(problem, free)


def test_body_velocity_is_the_pelvis_travel_in_the_bodys_own_axes(mocap):
    """A clip turned about up and moved on the ground keeps its body velocity; the bounce is left out."""
    run = mocap("bandai1/run_normal_001")
    rig = find_rig(run)
    joints = primary_joints(rig, "lower")
    up = detect_up(run, rig)
    turned = run.transformed(quat.from_axis_angle(up, 2.0), np.array([120.0, 0.0, -40.0]))
    velocity, again = (body_velocity(*body_frames(m, rig, joints, up)[1:], run.fps) for m in (run, turned))
    np.testing.assert_allclose(again, velocity, atol=1e-9)
    assert np.all(velocity[:, 1] == 0.0)
    # running forward: the forward component dominates, a few leg lengths a second
    assert np.median(velocity[:, 2]) > 3.0 * np.median(np.abs(velocity[:, 0])) and np.median(velocity[:, 2]) > 2.0


def test_a_body_limit_needs_the_body_velocities():
    with pytest.raises(ValueError, match="body_velocity"):
        optimal(**random_problem(14), max_body_accel=1.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_limits_must_be_positive(bad):
    problem = with_body_velocities(random_problem(14), 14)
    for name in ("max_speed", "max_accel", "max_body_accel"):
        with pytest.raises(ValueError, match=name):
            optimal(**problem, **{name: bad})


def test_pose_acceleration_is_the_second_difference_over_a_fixed_time():
    def accelerating(fps, seconds=1.5):
        t = np.arange(int(seconds * fps)) / fps
        feats = np.zeros((len(t), 2, 3))
        feats[:, :, 0] = 0.5 * 3.0 * t[:, None] ** 2  # 3 leg lengths / s^2 along x
        return feats
    np.testing.assert_allclose(pose_acceleration(accelerating(30.0), 30.0), 3.0, rtol=1e-6)
    np.testing.assert_allclose(pose_acceleration(accelerating(30.0), 30.0, eps_frames=3), 3.0, rtol=1e-6)
    np.testing.assert_allclose(pose_acceleration(accelerating(120.0), 120.0, eps_frames=4), 3.0, rtol=1e-6)
    assert pose_acceleration(np.zeros((2, 2, 3)), 30.0).tolist() == [0.0, 0.0]


# ---------------------------------------------------------------- a bound on the blend's length


def bounded(problem: dict, seed: int) -> int:
    """A bound on ``t1 - t0`` that bites: between 2 frames and half the candidates' span."""
    span = int(problem["t1_candidates"][-1] - problem["t0_candidates"][0])
    return int(np.random.default_rng(seed).integers(2, max(span // 2, 3)))


@pytest.mark.parametrize("seed", range(40))
def test_no_blend_is_longer_than_its_bound_and_the_bounded_optimum_is_the_exhaustive_one(seed):
    problem = random_problem(seed)
    longest = bounded(problem, seed)
    # exhaustive_pairs=0: the coarse-to-fine search in every block, whatever its size
    fast = optimal(**problem, max_frames=longest, exhaustive_pairs=0)
    slow = exhaustive(**problem, max_frames=longest)
    assert fast.cost == pytest.approx(slow.cost, rel=1e-12, abs=1e-12), (fast, slow)
    t0, t1 = np.asarray(problem["t0_candidates"]), np.asarray(problem["t1_candidates"])
    shortest = min(int(t1[t1 > a][0] - a) for a in t0 if (t1 > a).any())
    assert fast.t1 - fast.t0 <= max(longest, shortest)  # longer only where no pair is that short


@pytest.mark.parametrize("seed", range(40, 60))
def test_a_bound_every_candidate_pair_keeps_changes_nothing(seed):
    problem = random_problem(seed)
    span = int(problem["t1_candidates"][-1] - problem["t0_candidates"][0])
    for pairs in (0, 40_000):
        assert (optimal(**problem, max_frames=span, exhaustive_pairs=pairs)
                == optimal(**problem, exhaustive_pairs=pairs))


@pytest.mark.parametrize("seed", range(60, 66))
def test_a_bounded_search_that_no_pair_passes_within_the_limits_takes_the_gentlest(seed):
    problem = random_problem(seed)
    longest = bounded(problem, seed)
    gentlest = optimal(**problem, max_frames=longest, max_speed=1e-9)
    assert gentlest == exhaustive(**problem, max_frames=longest, max_speed=1e-9)
    assert gentlest.excess > 1.0


def test_a_bounded_search_over_a_long_gap_needs_megabytes_not_gigabytes():
    """Two clips 20,000 frames apart, every frame between them a candidate at both ends: unbounded,
    the search's (t0, t1) grid alone would be 20,000^2 doubles (3.2 GB)."""
    rng = np.random.default_rng(3)
    fps, gap = 30.0, 20_000
    prev, nxt = smooth_clip(rng, 300, 8, fps), smooth_clip(rng, 300, 8, fps)
    problem = dict(prev_feats=prev, next_feats=nxt, prev_velocity=pose_velocity(prev, fps),
                   next_velocity=pose_velocity(nxt, fps), t0_candidates=np.arange(0, gap),
                   t1_candidates=np.arange(1, gap + 300), prev_offset=0, next_offset=gap, fps=fps,
                   phase_length_s=None, weights=blend_weights(0.5), min_frames=6)
    tracemalloc.start()
    try:
        found = optimal(**problem, max_frames=int(10 * fps))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50e6, f"{peak / 1e6:.0f} MB"
    assert 6 <= found.t1 - found.t0 <= 10 * fps


@pytest.mark.parametrize("seed", range(66, 96))
def test_a_bound_the_optimum_is_within_finds_that_optimum_in_blocks(seed):
    """Where the unbounded optimum is no longer than the bound but the candidates reach
    further (so the blocked search runs), the bound changes nothing: the same range."""
    problem = random_problem(seed)
    best = optimal(**problem, exhaustive_pairs=0)
    span = int(problem["t1_candidates"][-1] - problem["t0_candidates"][0])
    longest = max(best.t1 - best.t0, 2)
    if longest >= span:
        pytest.skip("no bound shorter than the candidates' span holds this optimum")
    found = optimal(**problem, max_frames=longest, exhaustive_pairs=0)
    assert found.cost == pytest.approx(best.cost, rel=1e-12, abs=1e-12)
    assert (found.t0, found.t1) == (best.t0, best.t1)
