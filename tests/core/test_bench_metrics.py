"""The benchmarks' helpers (tests/bench/metrics.py) on clips whose answer is known."""

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from core import quat
from core.motion import Motion, Skeleton
from core.quality import SourceFigures, skate_samples
from core.rig import find_rig, leg_length

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
    with pytest.raises(ValueError, match="blend_frames >= 2"):
        metrics.naive_crossfade(m, m, 0, rig, blend_frames=1, auto_blend=True)


@pytest.mark.parametrize("start", [0, 17, 40])
def test_an_auto_blend_into_the_clips_own_continuation_changes_nothing(rig, start):
    m = swaying()
    out = metrics.naive_crossfade(m, m[start:], start, rig, blend_frames=12, auto_blend=True)
    np.testing.assert_allclose(out.global_positions(), m.global_positions(), atol=1e-9)


def test_an_auto_blend_runs_from_the_previous_clip_on_its_first_frame_to_the_next_on_its_last(rig):
    """As Blender's NLA blends two strips overlapping on frames 25..34: weight 0 on 25, 1 on 34."""
    out = metrics.naive_crossfade(still(40), sliding(60.0, F=30), 25, rig, blend_frames=10, auto_blend=True)
    hips = out.global_positions()[:, 1, 0]
    dst = 60.0 * np.arange(30) / FPS  # placed with its first hips position on the still clip's
    np.testing.assert_allclose(hips[:26], 0.0, atol=1e-9)
    np.testing.assert_allclose(hips[25:35], np.arange(10) / 9.0 * dst[:10], atol=1e-9)
    np.testing.assert_allclose(hips[34:], dst[9:], atol=1e-9)


def test_the_core_error_is_how_far_the_output_strays_from_the_placed_clip_on_its_core():
    m = swaying()
    # the clip placed at timeline frame 10 is the same motion's frames from 10 on
    assert metrics.core_error(m, 0, m[10:], 10, (0, 49)) == 0.0
    moved = m.transformed(quat.identity(), np.array([0.0, 0.0, 3.0]))
    assert metrics.core_error(moved, 0, m, 0, (5, 40)) == pytest.approx(3.0)
    # an output that stops inside the core misses it entirely
    assert metrics.core_error(m[:20], 0, m, 0, (10, 30)) == float("inf")


def test_fig5_body_parts_and_speeds(rig):
    names = legs_skeleton().names
    assert sorted(names[j] for j in metrics.lower_body_joints(rig)) == ["Hips", "LeftFoot", "RightFoot"]
    # no arms on the test skeleton: its chest (the spine) and head
    assert sorted(names[j] for j in metrics.upper_body_joints(rig)) == ["Head", "Spine"]
    m = sliding(45.0)
    np.testing.assert_allclose(metrics.mean_speed(m, metrics.lower_body_joints(rig)), 45.0)
    np.testing.assert_allclose(metrics.mean_speed(still(), metrics.upper_body_joints(rig)), 0.0)


def test_a_clip_in_cmu_names_metres_and_z_up_gives_the_same_quality_figures(mocap):
    """The same capture as another exporter writes it: core.quality's figures must not change."""
    raw = mocap("bandai1/walk_normal_001")
    clip = dataclasses.replace(raw, skeleton=dataclasses.replace(raw.skeleton, unit=0.01))  # centimetres
    other = metrics.cmu_metres_z_up(clip)
    assert other.skeleton.unit == pytest.approx(1.0)
    np.testing.assert_allclose(other.skeleton.up, [0.0, 0.0, 1.0], atol=1e-12)
    cmu = {"Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", "Spine", "Spine1", "RightHand"}
    assert cmu <= set(other.skeleton.names)
    # the same poses, in metres and turned a quarter about X: (x, y, z) -> (x, -z, y)
    g = clip.global_positions()
    np.testing.assert_allclose(other.global_positions(), 0.01 * np.stack([g[..., 0], -g[..., 2], g[..., 1]], -1),
                               atol=1e-9)

    def figures(motion):
        rig = find_rig(motion)
        up = motion.skeleton.up
        src = SourceFigures.of(motion, rig, up)
        speed, down = skate_samples(src.feet, src.levels, up, motion.fps)
        skate = speed[down].mean() / leg_length(motion, rig, "L")  # leg lengths per second
        return rig.roles, skate, down, src.accel / np.percentile(src.accel[1:-1], 99)

    roles, skate, down, accel = figures(clip)
    roles_o, skate_o, down_o, accel_o = figures(other)
    assert roles_o == roles
    assert down.any() and np.array_equal(down_o, down)
    assert skate_o == pytest.approx(skate, rel=1e-9)
    np.testing.assert_allclose(accel_o, accel, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="Y-up"):
        metrics.cmu_metres_z_up(other)


# --------------------------------------------------------------------------
# what the cores force on a gap's acceleration


def _paths(F: int = 40, J: int = 5, seed: int = 0) -> np.ndarray:
    """Joint paths ``(F, J, 3)``: smooth random motion (the cores' frames are whatever it has)."""
    t = np.linspace(0.0, 1.0, F)[:, None, None]
    rng = np.random.default_rng(seed)
    return rng.normal(size=(1, J, 3)) * 50 * np.sin(3 * t + rng.uniform(0, 6, size=(1, J, 3))) + rng.normal(size=(1, J, 3))


def _peak(g: np.ndarray, first: int, last: int, k: int, fps: float) -> float:
    """core.quality's sampling: the peak mean-joint acceleration at first .. last every k frames."""
    s = np.arange(first, last + 1, k)
    return float(np.linalg.norm(g[s + k] - 2 * g[s] + g[s - k], axis=-1).mean(axis=1).max() * (fps / k) ** 2)


def _smoothest_peak(g: np.ndarray, first: int, last: int, k: int, fps: float) -> float:
    """The peak mean-joint acceleration of core.quality's smoothest joint paths through the gap."""
    from core.quality import gap_samples, smoothest_join

    frames, fixed = gap_samples(first, last, k)
    return float(smoothest_join(g[frames], fixed, fps, k).mean(axis=1).max())


@pytest.mark.parametrize("k, first, last", [(1, 10, 19), (1, 10, 28), (4, 8, 30), (4, 8, 28)])
def test_no_motion_joining_the_cores_goes_below_the_floor_and_the_smoothest_paths_are_above_it(k, first, last):
    """Any motion with the same core frames has a peak at or above accel_floor; the smoothest
    joint paths are one such motion (so they are at or above the floor too), and no more jerky
    than the motion they replace."""
    g = _paths()
    floor = metrics.accel_floor(g, first, last, k, FPS)
    smoothest = _smoothest_peak(g, first, last, k, FPS)
    assert floor > 0
    assert floor <= smoothest + 1e-9
    rng = np.random.default_rng(1)
    for _ in range(20):
        other = g.copy()
        inside = np.arange(first + 1, last)  # the gap's inner frames: anything may happen there
        other[inside] += rng.normal(scale=30.0, size=(len(inside),) + g.shape[1:])
        assert metrics.accel_floor(other, first, last, k, FPS) == pytest.approx(floor, rel=1e-9)
        assert _peak(other, first, last, k, FPS) >= floor - 1e-9


def test_the_smoothest_paths_of_a_uniformly_accelerated_joint_are_its_own():
    """A joint under constant acceleration is already as smooth as its cores allow: its peak is its own."""
    t = np.arange(40)[:, None, None] / FPS
    g = np.concatenate([0.5 * 200.0 * t**2 * np.array([1.0, 0, 0]), 30.0 * t * np.array([0, 0, 1.0])], axis=1)
    assert _smoothest_peak(g, 10, 25, 1, FPS) == pytest.approx(100.0, rel=1e-9)  # mean of 200 and 0
    assert metrics.accel_floor(g, 10, 25, 1, FPS) == pytest.approx(100.0, rel=1e-9)
