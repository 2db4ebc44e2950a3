"""The benchmarks' measures (tests/bench/metrics.py) on clips whose answer is known."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from core import quat
from core.motion import Motion, Skeleton
from core.rig import find_rig

_PATH = Path(__file__).resolve().parents[1] / "bench" / "metrics.py"
# tests/bench is a folder of scripts, not a package: load the module by path
_spec = importlib.util.spec_from_file_location("bench_metrics", _PATH)
metrics = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(metrics)

FPS = 30.0
UP = np.array([0.0, 1.0, 0.0])


def legs_skeleton() -> Skeleton:
    """A still root above the hips (as in the Bandai Namco files), two 80-unit legs, Y up, facing +Z.

    Ankles stand 5 units above the floor and toes on it when the hips are 90 high.
    """
    names = ("joint_Root", "Hips", "Spine", "Head",
             "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToe",
             "RightUpLeg", "RightLeg", "RightFoot", "RightToe")
    parents = [-1, 0, 1, 2, 1, 4, 5, 6, 1, 8, 9, 10]
    offsets = [[0, 0, 0], [0, 90, 0], [0, 20, 0], [0, 40, 0],
               [10, -5, 0], [0, -40, 0], [0, -40, 0], [0, -5, 12],
               [-10, -5, 0], [0, -40, 0], [0, -40, 0], [0, -5, 12]]
    return Skeleton(names, parents, offsets, up=UP, unit=0.01)


def clip(hips: np.ndarray, rotations: np.ndarray | None = None) -> Motion:
    """A motion of the legs skeleton whose hips follow ``hips (F, 3)``."""
    skel = legs_skeleton()
    F = len(hips)
    rot = quat.identity((F, len(skel))) if rotations is None else rotations
    pos = np.broadcast_to(skel.offsets, (F, len(skel), 3)).copy()
    pos[:, 1] = hips
    return Motion(skel, rot, pos, FPS)


def still(F=30) -> Motion:
    return clip(np.tile([0.0, 90.0, 0.0], (F, 1)))


def sliding(v: float, F=30, lift=0.0) -> Motion:
    """Standing with both feet on the floor (raised by ``lift``), sliding along +X at ``v`` units/s."""
    t = np.arange(F) / FPS
    return clip(np.c_[v * t, np.full(F, 90.0 + lift), np.zeros(F)])


def swaying(F=60, seed=0) -> Motion:
    """Walking forward while every joint turns smoothly (seeded), so no two frames are alike."""
    rng = np.random.default_rng(seed)
    t = np.arange(F) / FPS
    J = len(legs_skeleton())
    axes = rng.normal(size=(J, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    phase = rng.uniform(0, 2 * np.pi, J)
    angles = 0.3 * np.sin(2 * np.pi * t[:, None] + phase)
    rot = quat.from_axis_angle(np.broadcast_to(axes, (F, J, 3)), angles)
    rot[:, 0] = quat.identity()
    hips = np.c_[5 * np.sin(t), 90 + 2 * np.sin(4 * t), 120 * t]
    return clip(hips, rot)


@pytest.fixture(scope="module")
def rig():
    return find_rig(still())


def test_foot_joints_are_ankles_and_toes(rig):
    names = [legs_skeleton().names[j] for j in metrics.foot_joints(rig)]
    assert sorted(names) == ["LeftFoot", "LeftToe", "RightFoot", "RightToe"]


def test_floor_level_is_each_joints_lowest_height(rig):
    floors = metrics.floor_levels([still()], rig)
    names = legs_skeleton().names
    assert {names[j]: round(h, 9) for j, h in floors.items()} == {
        "LeftFoot": 5.0, "LeftToe": 0.0, "RightFoot": 5.0, "RightToe": 0.0}


def test_a_still_clip_has_no_skate(rig):
    m = still()
    assert metrics.foot_skate(m, rig, None, metrics.floor_levels([m], rig)) == 0.0


@pytest.mark.parametrize("v", [7.0, 50.0])
def test_a_planted_foot_sliding_at_constant_speed_skates_at_that_speed(rig, v):
    m = sliding(v)
    floors = metrics.floor_levels([still()], rig)
    assert metrics.foot_skate(m, rig, None, floors) == pytest.approx(v, rel=1e-9)
    # a window at either end is measured like the middle (one-sided differences there)
    assert metrics.foot_skate(m, rig, (0, 3), floors) == pytest.approx(v, rel=1e-9)
    assert metrics.foot_skate(m, rig, (26, 40), floors) == pytest.approx(v, rel=1e-9)


def test_feet_in_the_air_do_not_skate(rig):
    """4 units above the floor is more than 0.0375 leg lengths (3 units): nothing is planted."""
    floors = metrics.floor_levels([still()], rig)
    assert metrics.foot_skate(sliding(50.0, lift=4.0), rig, None, floors) == 0.0
    assert metrics.foot_skate(sliding(50.0, lift=2.0), rig, None, floors) == pytest.approx(50.0)


def test_skate_is_the_mean_over_planted_samples_only(rig):
    """The hips slide at 60 units/s, then stand still: the still samples count as zero in the mean."""
    hips = np.r_[np.c_[np.arange(10) * 2.0, np.full(10, 90.0), np.zeros(10)],
                 np.c_[np.full(10, 20.0), np.full(10, 90.0), np.zeros(10)]]
    floors = metrics.floor_levels([still()], rig)
    # frames 0..9 move at 60; frame 10 (central difference, half a step) at 30; then still
    got = metrics.foot_skate(clip(hips), rig, (0, 19), floors)
    assert got == pytest.approx((10 * 60 + 30) / 20)


def test_a_constant_velocity_clip_has_no_acceleration():
    m = sliding(80.0)
    assert metrics.peak_acceleration(m, None) == pytest.approx(0.0, abs=1e-6)
    assert metrics.acceleration_percentile([m]) == pytest.approx(0.0, abs=1e-6)


def test_constant_acceleration_is_measured_in_units_per_second_squared():
    t = np.arange(30) / FPS
    m = clip(np.c_[0.5 * 40.0 * t**2, np.full(30, 90.0), np.zeros(30)])
    assert metrics.peak_acceleration(m, (5, 20)) == pytest.approx(40.0, rel=1e-6)
    assert metrics.acceleration_percentile([m, m], 99) == pytest.approx(40.0, rel=1e-6)


def test_a_jump_in_the_window_is_the_peak():
    hips = np.tile([0.0, 90.0, 0.0], (20, 1))
    hips[10:, 0] = 3.0  # 3 units in one frame
    m = clip(hips)
    assert metrics.peak_acceleration(m, (0, 19)) == pytest.approx(3.0 * FPS**2)
    assert metrics.peak_acceleration(m, (12, 19)) == pytest.approx(0.0, abs=1e-9)


def test_the_peak_of_some_joints_is_the_largest_of_theirs(rig):
    """The legs of the test skeleton are its hips, knees, ankles and toes; a jump of the spine alone
    is in the whole body's peak, not in theirs."""
    m = still(20)
    spine = m.skeleton.index("Spine")
    positions = m.positions.copy()
    positions[10:, spine, 0] += 3.0
    jumped = Motion(m.skeleton, m.rotations, positions, m.fps)
    legs = metrics.leg_joints(rig)
    assert sorted(m.skeleton.names[j] for j in legs) == sorted(
        ["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToe", "RightUpLeg", "RightLeg", "RightFoot", "RightToe"])
    assert metrics.peak_acceleration(jumped, None) > 0.0
    assert metrics.peak_acceleration(jumped, None, legs) == pytest.approx(0.0, abs=1e-9)
    assert metrics.peak_acceleration(jumped, None, [spine]) == pytest.approx(3.0 * FPS**2)


def test_empty_windows_and_short_clips_give_zero_not_nan(rig):
    floors = metrics.floor_levels([still()], rig)
    m = sliding(10.0, F=2)
    assert metrics.foot_skate(m, rig, (5, 9), floors) == 0.0
    assert metrics.foot_skate(m[:1], rig, None, floors) == 0.0
    assert metrics.peak_acceleration(m, None) == 0.0
    assert metrics.acceleration_percentile([m]) == 0.0


@pytest.mark.parametrize("start", [0, 17, 40])
def test_crossfading_a_clip_into_its_own_continuation_changes_nothing(rig, start):
    m = swaying()
    out = metrics.naive_crossfade(m, m[start:], start, rig)
    assert out.n_frames == m.n_frames
    np.testing.assert_allclose(out.global_positions(), m.global_positions(), atol=1e-9)


@pytest.mark.parametrize("turn", [0.7, np.pi, -2.0])
def test_the_next_clip_is_placed_by_hand_on_the_previous_one(rig, turn):
    """Turned about the up axis and moved on the ground, the continuation is put back where it belongs."""
    m = swaying()
    start = 20
    moved = m[start:].transformed(quat.from_axis_angle(UP, turn), np.array([300.0, 0.0, -50.0]))
    out = metrics.naive_crossfade(m, moved, start, rig)
    assert np.all(np.isfinite(out.rotations)) and np.all(np.isfinite(out.positions))
    np.testing.assert_allclose(out.global_positions(), m.global_positions(), atol=1e-6)


def test_the_crossfade_mixes_only_its_frames(rig):
    a = still(40)
    b = sliding(60.0, F=30).transformed(quat.identity(), np.array([0.0, 0.0, 0.0]))
    out = metrics.naive_crossfade(a, b, 25, rig, blend_frames=10)
    assert out.n_frames == 25 + 30
    hips = out.global_positions()[:, 1, 0]
    np.testing.assert_allclose(hips[:25], 0.0, atol=1e-9)
    # dst is placed with its first hips position on src's: x offset 0, then it slides
    w = np.arange(1, 11) / 11.0
    np.testing.assert_allclose(hips[25:35], w * (60.0 * np.arange(10) / FPS), atol=1e-9)
    np.testing.assert_allclose(hips[35:], 60.0 * np.arange(10, 30) / FPS, atol=1e-9)


def test_a_gap_holds_the_previous_clips_last_pose(rig):
    a = sliding(30.0, F=10)
    out = metrics.naive_crossfade(a, still(20), 15, rig, blend_frames=4)
    hips = out.global_positions()[:, 1, 0]
    np.testing.assert_allclose(hips[9:16], hips[9], atol=1e-9)
    assert out.n_frames == 35


def test_inputs_are_not_modified(rig):
    m = swaying()
    before = m.rotations.copy(), m.positions.copy()
    metrics.naive_crossfade(m, m[10:], 10, rig)
    np.testing.assert_array_equal(m.rotations, before[0])
    np.testing.assert_array_equal(m.positions, before[1])


def test_bad_arguments_raise(rig):
    m = still()
    with pytest.raises(ValueError, match="start"):
        metrics.naive_crossfade(m, m, -1, rig)
    with pytest.raises(ValueError, match="same skeleton"):
        metrics.naive_crossfade(m, m.renamed({"Head": "Skull"}), 0, rig)
