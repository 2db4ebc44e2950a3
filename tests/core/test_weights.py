"""Optimal weight functions (Oshita 2014, section 4.4): Hermite curves whose end slopes keep the motion's speed."""

import json

import numpy as np
import pytest

from core.weights import (
    KINDS,
    MAX_SLOPE,
    WeightFunction,
    WeightPlan,
    end_slope,
    hermite_weights,
    motion_to_motion_weights,
    motion_to_pose_weights,
    movement_reverses,
    optimal_weight_function,
    pose_to_motion_weights,
)

ANY_SLOPES = [-1.0, 0.0, 0.3, 1.0, 2.0, 2.9, 3.0, 3.5, 10.0, 1e9, np.inf]


def measured_end_slopes(function: WeightFunction, h: float = 1e-6) -> tuple[float, float]:
    """``dw/ds`` at both ends by one-sided finite differences of the evaluated curve."""
    w0, w_h, w_1h, w1 = function.evaluate(np.array([0.0, h, 1.0 - h, 1.0]))
    return (w_h - w0) / h, (w1 - w_1h) / h


def slow_hermite(s: float, a: float, b: float) -> float:
    """The textbook cubic Hermite basis, one time at a time, from p0 = 0 to p1 = 1."""
    h01 = -2 * s**3 + 3 * s**2
    h10 = s**3 - 2 * s**2 + s
    h11 = s**3 - s**2
    return h01 + a * h10 + b * h11


# ---------------------------------------------------------------- the Hermite curve (eq. 15)


@pytest.mark.parametrize("slope_start", ANY_SLOPES)
@pytest.mark.parametrize("slope_end", ANY_SLOPES)
def test_the_weight_rises_from_0_to_1_monotonically_for_any_slopes(slope_start, slope_end):
    w = hermite_weights(2001, slope_start, slope_end)
    assert w[0] == 0.0 and w[-1] == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(w) >= -1e-12), "the weight went down somewhere"
    assert w.min() >= 0.0 and w.max() <= 1.0 + 1e-12, "the weight left [0, 1]"


def test_without_the_clamp_a_slope_past_3_would_overshoot():
    """Why slopes are limited: the raw cubic with slope 3.5 rises above 1 before it ends."""
    s = np.linspace(0, 1, 2001)
    raw = np.array([slow_hermite(x, 3.5, 0.0) for x in s])
    assert raw.max() > 1.0
    assert hermite_weights(s, 3.5, 0.0).max() <= 1.0 + 1e-12


def test_the_vectorised_curve_matches_the_textbook_basis():
    rng = np.random.default_rng(7)
    s = rng.uniform(0, 1, 50)
    for a, b in rng.uniform(0, MAX_SLOPE, (10, 2)):
        expected = [slow_hermite(x, a, b) for x in s]
        np.testing.assert_allclose(hermite_weights(s, a, b), expected, atol=1e-14)


def test_slopes_of_one_give_exactly_the_linear_ramp_and_zero_gives_smoothstep():
    s = np.linspace(0, 1, 11)
    np.testing.assert_allclose(hermite_weights(11, 1.0, 1.0), s, atol=1e-15)
    np.testing.assert_allclose(hermite_weights(11, 0.0, 0.0), 3 * s**2 - 2 * s**3, atol=1e-15)


def test_an_over_steep_end_is_clamped_without_touching_the_other_end():
    function = WeightFunction(slope_start=10.0, slope_end=0.5)
    assert (function.slope_start, function.slope_end) == (MAX_SLOPE, 0.5)
    start, end = measured_end_slopes(function)
    assert start == pytest.approx(MAX_SLOPE, abs=1e-4)
    assert end == pytest.approx(0.5, abs=1e-4)


def test_negative_slopes_become_zero():
    assert WeightFunction(-2.0, -0.1).to_dict()["slope_start"] == 0.0
    np.testing.assert_allclose(hermite_weights(9, -2.0, -0.1), hermite_weights(9, 0.0, 0.0))


def test_times_outside_the_range_hold_the_end_weights_and_keep_their_shape():
    times = np.array([[-0.5, 0.0], [1.0, 1.5]])
    w = hermite_weights(times, 2.0, 0.5)
    assert w.shape == (2, 2)
    np.testing.assert_array_equal(w, [[0.0, 0.0], [1.0, 1.0]])


def test_tiny_ranges_give_finite_weights():
    assert hermite_weights(0, 1.0, 1.0).shape == (0,)
    np.testing.assert_array_equal(hermite_weights(1, 2.0, 0.0), [1.0])  # one frame is its own terminal time
    np.testing.assert_array_equal(hermite_weights(2, 2.0, 0.0), [0.0, 1.0])
    with pytest.raises(ValueError, match="-3 frames"):
        hermite_weights(-3, 1.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        hermite_weights(5, np.nan, 1.0)


# ---------------------------------------------------------------- end slopes (eq. 16, Fig. 3)


def test_end_slopes_match_eq_16():
    """w'(t) = V(t) / (D(t0, t1) / (t1 - t0)) at both ends, seen on the curve itself."""
    distance, duration = 1.2, 0.8  # mean velocity 1.5 per second
    function = optimal_weight_function(v_start=0.6, v_end=3.3, distance=distance, duration=duration)
    assert function.slope_start == pytest.approx(0.6 / 1.5)
    assert function.slope_end == pytest.approx(3.3 / 1.5)
    start, end = measured_end_slopes(function)
    assert start == pytest.approx(0.4, abs=1e-4)
    assert end == pytest.approx(2.2, abs=1e-4)


def test_a_motion_to_motion_blend_leaves_and_joins_each_motion_at_its_own_velocity():
    """Both sides move through a motion-to-motion blend: x = (1 - w) a + w b moves at
    a' + w'(0) (b - a) / T on its first frame. Eq. 16's slope (the motions' speed over the mean
    speed D / T, here 1.5) adds the second term as a step of velocity; slope 0 leaves it out."""
    t = np.linspace(0.0, 1.0, 301)  # a blend of T = 1 s
    a, b = 0.75 * t, 0.75 * t + 0.5  # the same velocity, half a unit apart
    h = t[1] - t[0]
    paper = optimal_weight_function(0.75, 0.75, distance=0.5, duration=1.0)
    assert (paper.slope_start, paper.slope_end) == (1.5, 1.5)
    for function in (paper, motion_to_motion_weights()):
        w = function.evaluate(t)
        x = (1 - w) * a + w * b
        assert (x[1] - x[0]) / h == pytest.approx(0.75 + 0.5 * function.slope_start, abs=0.01)
        assert (x[-1] - x[-2]) / h == pytest.approx(0.75 + 0.5 * function.slope_end, abs=0.01)
    assert (motion_to_motion_weights().slope_start, motion_to_motion_weights().slope_end) == (0.0, 0.0)


def test_velocities_equal_to_the_mean_give_slope_one_and_a_linear_blend():
    function = optimal_weight_function(v_start=2.0, v_end=2.0, distance=1.0, duration=0.5)
    assert (function.slope_start, function.slope_end) == (1.0, 1.0)
    np.testing.assert_allclose(function.evaluate(31), np.linspace(0, 1, 31), atol=1e-15)


def test_a_reversing_end_gets_slope_zero():
    """Fig. 3c: the motion turns back at the end, so the blend arrives there at rest."""
    assert end_slope(5.0, 1.0, reversing=True) == 0.0
    function = optimal_weight_function(1.0, 5.0, 1.0, 1.0, end_reverses=True)
    start, end = measured_end_slopes(function)
    assert function.slope_end == 0.0 and end == pytest.approx(0.0, abs=1e-5)
    assert start == pytest.approx(1.0, abs=1e-4), "the other end keeps its eq. 16 slope"


def test_zero_mean_velocity_gives_finite_slopes():
    """The two end poses coincide: a moving end gets the steepest monotone slope, a resting one 0."""
    assert end_slope(0.7, 0.0) == MAX_SLOPE
    assert end_slope(0.7, 1e-300) == MAX_SLOPE
    assert end_slope(0.0, 0.0) == 0.0
    assert end_slope(-0.3, 1.0) == 0.0
    function = optimal_weight_function(0.7, 0.0, distance=0.0, duration=0.5)
    assert np.isfinite(function.evaluate(50)).all()
    with pytest.raises(ValueError, match="longer than zero"):
        optimal_weight_function(1.0, 1.0, distance=1.0, duration=0.0)
    with pytest.raises(ValueError, match="negative"):
        end_slope(1.0, -1.0)


def test_a_motion_that_turns_back_after_the_terminal_time_reverses():
    """Distances D(t0, t) from the blend's initial pose along the following motion, peaking at frame 5."""
    d = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 0.9, 0.8])
    assert movement_reverses(d, 5, side="end")  # the blend moves away from A, the motion then comes back
    assert not movement_reverses(d, 3, side="end")  # the motion keeps moving away
    assert not movement_reverses(d, 7, side="end")  # the clip ends: nothing to reverse into


def test_a_motion_that_came_from_the_far_side_before_the_initial_time_reverses():
    """Distances D(t, t1) to the blend's terminal pose along the previous motion."""
    arriving = np.array([1.4, 1.2, 1.0, 0.9])  # the motion already heads towards B
    leaving = np.array([0.6, 0.8, 1.0, 0.9])  # the motion was nearer B and moved away from it
    assert not movement_reverses(arriving, 2, side="start")
    assert movement_reverses(leaving, 2, side="start")
    assert not movement_reverses(leaving, 0, side="start")
    assert not movement_reverses(np.ones(4), 2, side="start"), "a motion at rest does not reverse"
    assert movement_reverses(np.array([0.0, 0.5, 0.9, 1.0, 0.95]), 2, side="start", step=2)


def test_movement_reverses_names_bad_arguments():
    with pytest.raises(ValueError, match="'start'"):
        movement_reverses(np.zeros(3), 1, side="after")
    with pytest.raises(ValueError, match="outside"):
        movement_reverses(np.zeros(3), 3, side="end")


# ---------------------------------------------------------------- pose-to-motion and motion-to-pose (Fig. 4)


def trajectory(f, seconds: float = 1.0, fps: float = 60.0) -> np.ndarray:
    """Distances ``f(x)`` sampled over a range of ``seconds`` at ``fps`` (``x`` normalised to [0, 1])."""
    return f(np.linspace(0.0, 1.0, int(round(seconds * fps)) + 1))


def test_an_increasing_distance_gives_a_hermite_curve_with_the_distances_velocities():
    """Fig. 4a: d = x + x^2 / 2 moves at rate 1 at the start, 2 at the end, 1.5 on average."""
    d = trajectory(lambda x: x + 0.5 * x**2, fps=120.0)
    plan = pose_to_motion_weights(d, fps=120.0, epsilon=1 / 120)
    assert (plan.kind, plan.start_index, plan.end_index) == ("hermite", 0, len(d) - 1)
    assert plan.slope_start == pytest.approx(1 / 1.5, abs=0.01)
    assert plan.slope_end == pytest.approx(2 / 1.5, abs=0.01)
    w = plan.evaluate(len(d))
    assert w[0] == 0.0 and w[-1] == pytest.approx(1.0) and np.all(np.diff(w) > 0)


def test_capture_noise_within_the_tolerance_is_not_a_turn():
    rng = np.random.default_rng(3)
    d = trajectory(lambda x: x) + rng.normal(0.0, 0.005, 61)
    assert pose_to_motion_weights(d, fps=60.0).kind == "hermite"


def test_a_distance_peaking_in_the_middle_moves_the_end_to_the_peak_with_slope_zero():
    """Fig. 4b: blending on past the peak would overshoot the end pose and come back."""
    d = trajectory(lambda x: np.sin(0.75 * np.pi * x))  # peak at x = 2/3, frame 40 of 61
    plan = pose_to_motion_weights(d, fps=60.0)
    assert (plan.kind, plan.start_index, plan.end_index) == ("turning_point", 0, 40)
    assert plan.slope_end == 0.0 and plan.slope_start > 0.0
    w = plan.evaluate(len(d))
    assert w[40] == pytest.approx(1.0)
    np.testing.assert_array_equal(w[40:], 1.0)  # after the moved terminal time only the motion plays
    assert np.all(np.diff(w[:41]) > 0)


def test_the_first_real_turn_ends_the_blend_even_if_the_motion_later_goes_farther():
    d = np.concatenate([np.linspace(0, 1, 11), np.linspace(0.7, 2.0, 10)])
    plan = pose_to_motion_weights(d, fps=30.0)
    assert (plan.kind, plan.end_index) == ("turning_point", 10)


def test_a_decreasing_distance_falls_back_to_pose_to_pose():
    """Fig. 4c: no weight function helps; blend to the end pose, at rest at both ends."""
    d = trajectory(lambda x: 1.0 - x)
    plan = pose_to_motion_weights(d, fps=60.0)
    assert plan == WeightPlan("pose_to_pose", 0, len(d) - 1, 0.0, 0.0)
    np.testing.assert_allclose(plan.evaluate(len(d)), hermite_weights(len(d), 0.0, 0.0))


def test_a_barely_rising_start_before_a_fall_is_still_decreasing():
    d = np.concatenate([[1.0, 1.01], np.linspace(1.0, 0.0, 20)])
    assert pose_to_motion_weights(d, fps=30.0).kind == "pose_to_pose"


def test_the_choice_does_not_depend_on_the_frame_rate():
    def f(x):
        return np.sin(0.75 * np.pi * x) + 0.3 * x

    slow = pose_to_motion_weights(trajectory(f, fps=30.0), fps=30.0)
    fast = pose_to_motion_weights(trajectory(f, fps=120.0), fps=120.0)
    assert slow.kind == fast.kind == "turning_point"
    assert slow.end_index / 30.0 == pytest.approx(fast.end_index / 120.0, abs=1 / 30)
    assert slow.slope_start == pytest.approx(fast.slope_start, abs=0.05)


@pytest.mark.parametrize(
    "d",
    [
        np.array([0.0]),
        np.array([0.2, 0.9]),
        np.ones(7),
        trajectory(lambda x: 1.0 - x),
        trajectory(lambda x: x + 0.5 * x**2),
        trajectory(lambda x: np.sin(0.75 * np.pi * x)),
    ],
    ids=["one frame", "two frames", "flat", "decreasing", "increasing", "peak"],
)
def test_degenerate_and_regular_trajectories_give_finite_weights(d):
    for choose in (pose_to_motion_weights, motion_to_pose_weights):
        plan = choose(d, fps=30.0)
        w = plan.evaluate(len(d))
        assert w.shape == d.shape and np.isfinite(w).all()
        assert w[-1] == 1.0 and np.all(np.diff(w) >= 0)


@pytest.mark.parametrize(
    "f",
    [lambda x: x + 0.5 * x**2, lambda x: np.sin(0.75 * np.pi * x), lambda x: 1.0 - x, lambda x: x**3],
    ids=["increasing", "peak", "decreasing", "slow start"],
)
def test_motion_to_pose_is_pose_to_motion_played_backwards(f):
    d = trajectory(f)
    forwards = pose_to_motion_weights(d, fps=60.0)
    backwards = motion_to_pose_weights(d[::-1], fps=60.0)
    last = len(d) - 1
    assert backwards.kind == forwards.kind
    assert (backwards.start_index, backwards.end_index) == (last - forwards.end_index, last - forwards.start_index)
    assert (backwards.slope_start, backwards.slope_end) == (forwards.slope_end, forwards.slope_start)
    np.testing.assert_allclose(backwards.evaluate(len(d)), 1.0 - forwards.evaluate(len(d))[::-1], atol=1e-12)


def test_a_motion_turning_before_the_fixed_pose_moves_the_initial_time():
    d = trajectory(lambda x: np.sin(0.75 * np.pi * x))[::-1]  # distances to the end pose, peaking at frame 20
    plan = motion_to_pose_weights(d, fps=60.0)
    assert (plan.kind, plan.start_index, plan.end_index, plan.slope_start) == ("turning_point", 20, 60, 0.0)
    np.testing.assert_array_equal(plan.evaluate(len(d))[:21], 0.0)


def test_pose_to_motion_names_bad_input():
    with pytest.raises(ValueError, match=r"\(K,\)"):
        pose_to_motion_weights(np.zeros((3, 2)), fps=30.0)
    with pytest.raises(ValueError, match=r"\(K,\)"):
        motion_to_pose_weights(np.zeros(0), fps=30.0)
    with pytest.raises(ValueError, match="NaN"):
        pose_to_motion_weights(np.array([0.0, np.nan]), fps=30.0)
    with pytest.raises(ValueError, match="fps"):
        pose_to_motion_weights(np.arange(3.0), fps=0.0)
    with pytest.raises(ValueError, match="tolerance"):
        pose_to_motion_weights(np.arange(3.0), fps=30.0, tolerance=0.5)
    with pytest.raises(ValueError, match="more than 3 frames"):
        pose_to_motion_weights(np.arange(5.0), fps=30.0).evaluate(3)


# ---------------------------------------------------------------- the plan is data


def test_weight_functions_and_plans_print_and_round_trip_through_json():
    function = optimal_weight_function(0.6, 3.3, 1.2, 0.8)
    text = json.dumps(function.to_dict())
    assert WeightFunction.from_dict(json.loads(text)) == function
    plan = pose_to_motion_weights(trajectory(lambda x: np.sin(0.75 * np.pi * x)), fps=60.0)
    assert json.loads(json.dumps(plan.to_dict())) == plan.to_dict()
    assert WeightPlan(**plan.to_dict()) == plan
    assert plan.function == WeightFunction(plan.slope_start, 0.0, "turning_point")
    assert "turning_point" in repr(plan)


def test_kinds_are_checked():
    assert set(KINDS) == {"hermite", "turning_point", "pose_to_pose"}
    with pytest.raises(ValueError, match="kind"):
        WeightFunction(1.0, 1.0, kind="linear")
    with pytest.raises(ValueError, match="start_index"):
        WeightPlan("hermite", 5, 2, 1.0, 1.0)
