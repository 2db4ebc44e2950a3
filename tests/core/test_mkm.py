"""MKM blending (core.mkm): what the blend of synchronized clips and the NLA's naive blend claim.

The synchronization itself (core.sync) is tested in its own file; here the
warps are given, so the blend is checked on its own.
"""

from pathlib import Path

import numpy as np
import pytest
from real_capture import require

from core import quat
from core.__main__ import main
from core.bvh import format_bvh
from core.demo import demo_clips, demo_skeleton
from core.mkm import (BLEND_IN_S, blend_clips, blend_root_velocities, blend_warped, nla_influences, naive_blend,
                      own_frames, presence_weights, sample_clips, sample_motion, support_contacts,
                      weighted_quaternion_average)
from core.motion import Motion
from core.rig import RigError, find_rig, leg_length
from broken_rigs import legs_flipped_up

ROOT = Path(__file__).resolve().parents[2]
MOCAP = ROOT.parent / "shared" / "mocap"
UP = np.array([0.0, 0.0, 1.0])  # the demo skeleton's


def random_quats(rng, shape):
    return quat.normalize(rng.normal(size=shape + (4,)))


def same_rotation(a, b, atol=1e-9):
    return np.all(np.abs(np.abs(quat.dot(a, b)) - 1.0) < atol)


# --- sampling at fractional clip frames ---------------------------------------------------------


def test_a_half_frame_is_half_way_between_its_neighbours():
    walk = demo_clips()["walk"].motion
    rot, pos = sample_motion(walk, np.array([10.5, 11.0]))
    assert same_rotation(rot[0], quat.slerp(walk.rotations[10], walk.rotations[11], 0.5))
    assert np.allclose(pos[0], 0.5 * (walk.positions[10] + walk.positions[11]))
    assert np.allclose(rot[1], walk.rotations[11]) and np.allclose(pos[1], walk.positions[11])


def test_fractional_sampling_agrees_with_a_slow_frame_by_frame_version():
    rng = np.random.default_rng(3)
    walk = demo_clips()["walk"].motion
    frames = rng.uniform(0, walk.n_frames - 1, size=17)
    rot, pos = sample_motion(walk, frames)
    for t, f in enumerate(frames):
        i = min(int(f), walk.n_frames - 2)
        a = f - i
        for j in range(len(walk.skeleton)):
            assert same_rotation(rot[t, j], quat.slerp(walk.rotations[i, j], walk.rotations[i + 1, j], a))
        assert np.allclose(pos[t], (1 - a) * walk.positions[i] + a * walk.positions[i + 1])


def test_clips_sampled_at_once_are_each_sampled_as_alone_to_the_bit():
    rng = np.random.default_rng(4)
    clips = [demo_clips()[name].motion for name in ("walk", "kick")]
    clips.append(clips[0][:7])  # another length, sampled past its end too
    frames = [np.concatenate([[0.0, m.n_frames - 1.0, m.n_frames + 3.0], rng.uniform(0, m.n_frames - 1, 20)])
              for m in clips]
    rot, pos = sample_clips([m.rotations for m in clips], [m.positions for m in clips], frames)
    for m, f, r, p in zip(clips, frames, rot, pos):
        alone = sample_motion(m, f)
        np.testing.assert_array_equal(r, alone[0])
        np.testing.assert_array_equal(p, alone[1])


def test_a_cyclic_clip_repeats_past_its_end_and_another_holds_its_last_frame():
    F = 31
    within, cycles = own_frames(np.array([5.0, 35.0, 65.5, np.nan]), F, cyclic=True)
    assert np.allclose(within[:3], [5.0, 5.0, 5.5]) and cycles[:3].tolist() == [0, 1, 2]
    assert within[3] == 0.0  # not playing yet: read as frame 0 (its weight is 0 there)
    held, cycles = own_frames(np.array([35.0, -2.0]), F, cyclic=False)
    assert held.tolist() == [30.0, 0.0] and cycles.tolist() == [0, 0]


# --- the weighted quaternion average ------------------------------------------------------------


def test_the_average_of_two_is_slerp_at_the_second_ones_share():
    rng = np.random.default_rng(0)
    a, b = random_quats(rng, (50,)), random_quats(rng, (50,))
    t = rng.uniform(0, 1, size=50)
    mean = weighted_quaternion_average(np.stack([a, b]), np.stack([1 - t, t]))
    assert np.allclose(mean, quat.slerp(a, b, t), atol=1e-12)


def test_the_average_does_not_depend_on_the_signs_of_the_quaternions():
    rng = np.random.default_rng(1)
    q = random_quats(rng, (3, 40))
    # rotations of one joint across clips lie within a quarter turn of each other
    q = quat.mul(q[:1], quat.exp(0.4 * rng.normal(size=(3, 40, 3))))
    w = rng.uniform(0.1, 1, size=(3, 40))
    signs = rng.choice([-1.0, 1.0], size=(3, 40, 1))
    assert same_rotation(weighted_quaternion_average(q, w), weighted_quaternion_average(q * signs, w))


def test_weights_one_and_zero_give_the_first_quaternion_bit_for_bit():
    rng = np.random.default_rng(2)
    q = random_quats(rng, (3, 20, 5))
    w = np.zeros((3, 20, 5))
    w[0] = 1.0
    assert np.array_equal(weighted_quaternion_average(q, w), q[0])


def test_three_rotations_about_one_axis_average_to_the_weighted_angle():
    angles = np.array([0.2, 0.9, -0.4])
    w = np.array([0.5, 0.3, 0.2])
    q = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), angles)
    mean = weighted_quaternion_average(q[:, None], w[:, None])[0]
    assert same_rotation(mean, quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), w @ angles))


# --- weights over time ----------------------------------------------------------------------------


def test_a_clip_that_joins_later_eases_in_from_zero_to_its_share():
    fps, T = 30.0, 60
    warps = np.stack([np.arange(T, dtype=float), np.where(np.arange(T) >= 20, np.arange(T) - 20.0, np.nan)])
    n = presence_weights(warps, [1.0, 3.0], fps)
    assert np.allclose(n.sum(axis=0), 1.0) and np.all(n >= 0)
    assert np.all(n[1, :21] == 0.0) and np.all(n[0, :21] == 1.0)
    settled = 20 + int(np.ceil(BLEND_IN_S * fps))
    assert np.allclose(n[:, settled:], [[0.25], [0.75]])
    assert np.abs(np.diff(n[1])).max() < 0.75 / (BLEND_IN_S * fps) * 1.6  # no jump: at most a smoothstep's slope


def test_present_clips_of_weight_zero_share_equally_until_a_weighted_one_joins():
    warps = np.stack([np.arange(40.0), np.where(np.arange(40) >= 10, np.arange(40.0), np.nan)])
    n = presence_weights(warps, [0.0, 1.0], 30.0)
    assert np.all(n[0, :11] == 1.0) and np.allclose(n[:, -1], [0.0, 1.0])
    assert np.abs(np.diff(n[0])).max() < 0.2


# --- the body's path blended as velocities --------------------------------------------------------


def walker(direction, *, frames: int = 60, speed: float = 1.2, facing: float = 0.0, fps: float = 30.0) -> Motion:
    """A demo skeleton gliding at ``speed`` m/s along ``direction`` in its own heading frame
    (demo: -Y forward, +X left), turned by ``facing`` radians about up."""
    skel = demo_skeleton()
    t = np.arange(frames) / fps
    local = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    turn = quat.from_axis_angle(UP, facing)
    root = quat.mul_vec(turn, local * speed)[None] * t[:, None] + np.array([0.0, 0.0, 0.95])
    rot = np.broadcast_to(quat.identity((len(skel),)), (frames, len(skel), 4)).copy()
    rot[:, 0] = turn
    return Motion.from_root(skel, rot, root, fps)


FORWARD, SIDEWAYS = (0.0, -1.0, 0.0), (1.0, 0.0, 0.0)


@pytest.mark.parametrize("side_facing", [0.0, np.pi / 2, -2.5])
def test_a_side_step_and_a_forward_walk_at_half_and_half_travel_diagonally(side_facing):
    # Fig. 15: whichever way the side-step was captured facing, its step is sideways in its own
    # heading frame, and so half of it and half of a forward walk go 45 degrees off forward
    forward, side = walker(FORWARD), walker(SIDEWAYS, facing=side_facing)
    rig = find_rig(forward)
    warps = np.stack([np.arange(60.0)] * 2)
    out, _ = blend_warped([forward, side], warps, [0.5, 0.5], cyclic=[False, False], rig=rig, up=UP)
    travel = out.positions[-1, 0] - out.positions[0, 0]
    assert np.allclose(travel, 0.5 * 1.2 * 59 / 30 * (np.array(FORWARD) + np.array(SIDEWAYS)), atol=1e-9)
    assert same_rotation(out.rotations[:, 0], quat.identity())  # facing stays the first clip's


def test_the_path_starts_where_the_first_clip_starts_and_heads_its_way():
    forward = walker(FORWARD, facing=1.0).transformed(quat.identity(), np.array([3.0, -2.0, 0.0]))
    side = walker(SIDEWAYS, facing=-0.3)
    out, _ = blend_warped([forward, side], np.stack([np.arange(60.0)] * 2), [0.25, 0.75], cyclic=[False, False],
                          rig=find_rig(forward), up=UP)
    assert np.allclose(out.positions[0, 0], forward.positions[0, 0])
    assert same_rotation(out.rotations[:, 0], forward.rotations[:, 0])


def test_a_turning_clip_alone_gives_back_its_own_path():
    yaw = np.repeat(np.linspace(0, 1.5, 90)[None], 1, 0)
    step = np.stack([np.zeros(89), -np.full(89, 0.04), np.zeros(89)], axis=-1)  # forward in its heading frame
    travel = np.concatenate([np.zeros((1, 3)), np.cumsum(step, axis=0)])[None]
    path, heading = blend_root_velocities(travel, yaw, np.ones((1, 90)), np.zeros(3), 0.0, UP)
    assert np.allclose(heading, yaw[0])
    # a constant speed along a steadily turning heading: an arc of radius v / omega
    radius = 0.04 / (1.5 / 89)
    assert np.allclose(np.linalg.norm(path - np.array([radius, 0.0, 0.0]), axis=-1), radius, rtol=1e-3)


def test_weights_one_and_zero_give_the_first_real_clip_as_it_is():
    require(MOCAP)
    from core.bvh import read_bvh
    from core.rig import detect_up

    walk = read_bvh(MOCAP / "bandai1" / "walk_normal_001.bvh")  # a still Root above the Hips that move
    run = read_bvh(MOCAP / "bandai1" / "run_normal_001.bvh")
    rig = find_rig(walk)
    T = walk.n_frames
    warps = np.stack([np.arange(T, dtype=float), np.arange(T) * 0.7])
    out, _ = blend_warped([walk, run], warps, [1.0, 0.0], cyclic=[False, True], rig=rig, up=detect_up(walk, rig))
    assert np.abs(out.global_positions() - walk.global_positions()).max() < 1e-9 * np.abs(walk.positions).max()


# --- the contact stage's input ---------------------------------------------------------------------


def test_the_combined_support_says_which_feet_are_down():
    # DS, LS, RS, NONE (codes of core.analysis.Phase), ERR
    assert support_contacts(np.array([0, 1, 2, 3, 4])).tolist() == [
        [True, True], [True, False], [False, True], [False, False], [False, False]]


# --- the naive blend: the NLA in Replace mode -------------------------------------------------------


def nla_by_hand(values, influences):
    """The NLA's Replace mode from the bottom track up, one strip at a time."""
    r = np.zeros_like(values[0])  # what lies under the bottom strip (its influence 1 replaces it)
    for v, u in zip(values, influences):
        r = r * (1 - u) + v * u
    return r


def test_influences_make_the_final_contributions_the_weights():
    for weights in ([1, 1], [1, 3], [0.2, 0.5, 0.3], [0, 2, 1], [0, 0, 1]):
        u = nla_influences(weights)
        contributions = nla_by_hand(np.eye(len(weights)), u)
        assert np.allclose(contributions, np.array(weights) / np.sum(weights))


def test_the_naive_blend_is_the_nla_formula_channel_by_channel():
    clips = demo_clips()
    motions = [clips["walk"].motion, clips["kick"].motion, clips["turn"].motion]
    weights, starts = [0.5, 0.3, 0.2], [0, 12, 5]
    out = naive_blend(motions, weights, starts)
    T = max(s + m.n_frames for s, m in zip(starts, motions))
    assert out.n_frames == T
    u = nla_influences(weights)
    for t in (0, 7, 30, T - 1):
        # each strip holds its first frame before it starts and its last after it ends (extrapolation Hold)
        frames = [min(max(t - s, 0), m.n_frames - 1) for s, m in zip(starts, motions)]
        q = nla_by_hand([quat.unroll(m.rotations, 0)[f] for m, f in zip(motions, frames)], u)
        p = nla_by_hand([m.positions[f] for m, f in zip(motions, frames)], u)
        assert np.allclose(out.rotations[t], q / np.linalg.norm(q, axis=-1, keepdims=True))
        assert np.allclose(out.positions[t], p)


def test_the_naive_blend_with_weights_one_and_zero_is_the_first_clip():
    clips = demo_clips()
    walk, kick = clips["walk"].motion, clips["kick"].motion
    out = naive_blend([walk, kick], [1.0, 0.0], [0, 0])
    n = walk.n_frames
    assert np.allclose(out.rotations[:n], quat.unroll(walk.rotations, 0), atol=1e-15)
    assert np.array_equal(out.positions[:n], walk.positions)


def test_the_naive_blend_does_not_align_signs_as_the_nla_does_not():
    # two keys of one rotation, opposite in sign, half and half: the NLA's component-wise
    # blend goes through zero, which Blender poses as the rest
    skel = demo_skeleton()
    q = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 1.0)
    rot = np.broadcast_to(q, (2, len(skel), 4))
    a = Motion.from_root(skel, rot, np.zeros((2, 3)), 30.0)
    b = Motion.from_root(skel, -rot, np.zeros((2, 3)), 30.0)
    out = naive_blend([a, b], [0.5, 0.5], [0, 0])
    assert np.allclose(out.rotations, quat.identity((2, len(skel))))


# --- the command line ---------------------------------------------------------------------------------


@pytest.fixture
def two_clips(tmp_path):
    clips = demo_clips()
    paths = []
    for name in ("walk", "turn"):
        path = tmp_path / f"{name}.bvh"
        path.write_text(format_bvh(clips[name].motion))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("extra, message", [
    (["--weights", "0.5"], "weights: give one per clip (2)"),
    (["--weights", "0.5,-1"], "non-negative"),
    (["--weights", "0,0"], "sum to 0"),
    (["--weights", "half,half"], "--weights expects numbers"),
    (["--priorities", "1,2,3"], "priorities: give one per clip (2)"),
    (["--starts", "0,2.5"], "--starts expects whole numbers"),
    (["--starts", "0,-3"], "whole output frames from 0"),
    (["--cyclic", "run"], "--cyclic names ['run']"),
])
def test_bad_arguments_say_what_to_fix(two_clips, tmp_path, capsys, extra, message):
    assert main(["blend", *two_clips, "-o", str(tmp_path / "out.bvh"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err
    assert not (tmp_path / "out.bvh").exists()


def test_clips_on_other_skeletons_are_refused(two_clips, tmp_path, capsys):
    clips = demo_clips()
    other = clips["walk"].motion.renamed({"toe.L": "toes.L"})
    path = tmp_path / "other.bvh"
    path.write_text(format_bvh(other))
    assert main(["blend", two_clips[0], str(path), "-o", str(tmp_path / "out.bvh")]) == 2
    err = capsys.readouterr().err
    assert "another skeleton" in err and "toes.L" in err


def test_clips_at_other_scales_or_with_legs_up_are_not_blended(mocap):
    """Blended, a clip in another unit pulls every joint towards its size, and one whose legs point
    up folds the other's legs in; both are refused, naming the clips (the naive blend reads no
    joint roles: only the scale is checked there)."""
    walk, run = mocap("bandai1/walk_normal_001")[:60], mocap("bandai1/run_normal_001")[:60]
    for sync in (True, False):
        with pytest.raises(ValueError, match=r"^clip 'run' has bones 0.01 times as long as those of 'walk'"):
            blend_clips([walk, run.scaled(0.01)], names=["walk", "run"], sync=sync)
    with pytest.raises(RigError, match=r"^clip 'run': the legs point up"):
        blend_clips([walk, legs_flipped_up(run)], names=["walk", "run"])


def test_one_clip_is_not_a_blend(two_clips, tmp_path, capsys):
    assert main(["blend", two_clips[0], "-o", str(tmp_path / "out.bvh")]) == 2
    assert "at least two clips" in capsys.readouterr().err


def test_the_output_may_not_overwrite_a_clip(two_clips, capsys):
    assert main(["blend", *two_clips, "-o", two_clips[1], "--no-sync"]) == 2
    assert "would destroy it" in capsys.readouterr().err


def test_no_sync_writes_the_naive_blend_and_its_plan(two_clips, tmp_path, capsys):
    import json

    from core.bvh import read_bvh

    out, plan = tmp_path / "out.bvh", tmp_path / "plan.json"
    assert main(["blend", *two_clips, "-o", str(out), "--plan", str(plan), "--no-sync", "--weights", "1,3",
                 "--starts", "0,10"]) == 0
    written = read_bvh(out)
    clips = demo_clips()
    expected = naive_blend([clips["walk"].motion, clips["turn"].motion], [1, 3], [0, 10])
    assert written.n_frames == expected.n_frames
    assert np.allclose(written.global_positions(), expected.global_positions(), atol=1e-3)
    report = json.loads(plan.read_text())
    assert report["mode"] == "naive" and report["influences"] == [1.0, 0.75] and report["starts"] == [0, 10]


def test_the_synchronized_blend_writes_the_motion_and_its_plan(tmp_path, capsys):
    require(MOCAP)
    import json

    from core.bvh import read_bvh

    walk, run = MOCAP / "bandai1" / "walk_normal_001.bvh", MOCAP / "bandai1" / "run_happy_001.bvh"
    out, plan = tmp_path / "out.bvh", tmp_path / "plan.json"
    assert main(["blend", str(walk), str(run), "-o", str(out), "--plan", str(plan), "--weights", "0.5,0.5",
                 "--starts", "0,15", "--cyclic", "run_happy_001"]) == 0
    report = json.loads(plan.read_text())
    assert report["mode"] == "synchronized" and report["cyclic"] == [False, True] and report["starts"] == [0, 15]
    assert read_bvh(out).n_frames == report["n_frames"] and "sync" in report
    assert all(d["frames"] > 0 and d["joins"] == 15 + d["frames"] for d in report["delayed"])


def test_bones_of_other_lengths_warn_as_synthesize_does(two_clips, tmp_path, capsys):
    from dataclasses import replace

    walk = demo_clips()["walk"].motion
    offsets = walk.skeleton.offsets.copy()
    offsets[walk.skeleton.index("shin.L")] *= 1.1
    longer = replace(walk, skeleton=replace(walk.skeleton, offsets=offsets))
    path = tmp_path / "longer.bvh"
    path.write_text(format_bvh(longer))
    assert main(["blend", two_clips[0], str(path), "-o", str(tmp_path / "out.bvh"), "--no-sync"]) == 0
    out = capsys.readouterr().out
    assert "warning: clip 'longer' has bones of other lengths than 'walk' (shin.L +10 %)" in out
    # in words of blending: a clip blended has no core (a synthesis term)
    assert "so 'longer' is blended by its joint rotations but not its joint positions" in out
    assert "core" not in out.split("warning: ")[1]


@pytest.fixture(scope="module")
def walk_and_run():
    """bandai1's walk and happy run, the walk's rig and up axis."""
    require(MOCAP)
    from core.bvh import read_bvh
    from core.rig import detect_up

    walk = read_bvh(MOCAP / "bandai1" / "walk_normal_001.bvh")
    run = read_bvh(MOCAP / "bandai1" / "run_happy_001.bvh")
    rig = find_rig(walk)
    return walk, run, rig, detect_up(walk, rig)


def test_a_clip_of_weight_zero_takes_no_foot_off_the_floor(walk_and_run):
    from core.analysis import foot_contacts
    from core.mkm import weighted_support
    from core.sync import Support, support_sequence, synchronize

    walk, run, rig, up = walk_and_run
    sequences = [support_sequence(foot_contacts(m, rig, up=up), m.fps) for m in (walk, run)]
    plan = synchronize(sequences, [2, 1], [0, 0], [1.0, 0.0])
    weights = presence_weights(np.asarray(plan.warps, dtype=float), [1.0, 0.0], walk.fps)
    # the run's flights absorb the walk's double supports in the plan's ⊕ ...
    assert np.any(plan.support_at() == Support.NONE)
    # ... but with weight 0 it puts nothing into the pose: the walk's own supports are held
    support = weighted_support(plan, weights)
    assert not np.any(support == Support.NONE)
    assert np.array_equal(weighted_support(plan, np.ones_like(weights)), plan.support_at())


# --- the contact stage corrects what the blend broke ------------------------------------------------


@pytest.mark.parametrize("first, second", [("walk_normal_001", "run_happy_001"), ("walk_sad_001", "walk_proud_001")])
def test_weights_one_and_zero_give_the_first_motion_aligned_legs_included(first, second):
    require(MOCAP)
    from core.bvh import read_bvh
    from core.mkm import blend_clips

    a, b = (read_bvh(MOCAP / "bandai1" / f"{name}.bvh") for name in (first, second))
    result = blend_clips([a, b], weights=[1.0, 0.0])
    # its own frames along its warp (past its end, its last), where it stands and faces
    rotations, positions = sample_motion(a, np.asarray(result.plan.warps[0], dtype=float), cyclic=result.cyclic[0])
    own = Motion(a.skeleton, rotations, positions, a.fps).global_positions()
    height = np.ptp(a.global_positions()[0] @ np.array([0.0, 1.0, 0.0]))
    assert np.abs(result.motion.global_positions() - own).max() < 1e-6 * height


def test_half_and_half_the_feet_down_slide_no_more_than_the_clips_own(walk_and_run):
    from core.mkm import blend_synchronized, support_contacts, weighted_support

    walk, run, rig, up = walk_and_run
    weights = np.array([0.5, 0.5])
    held, plan, cyclic = blend_synchronized([walk, run], weights, np.array([2.0, 1.0]), np.array([0, 0]))
    blended, used = blend_warped([walk, run], np.asarray(plan.warps, dtype=float), weights, cyclic=cyclic, rig=rig, up=up)
    down = support_contacts(weighted_support(plan, used))
    legs = [rig.leg("L"), rig.leg("R")]

    def sliding(motion):
        # how far the part of a foot on the floor moves across it (the slower of its ankle and
        # its toe: through heel-off the ankle rises and travels about the toe) on frame pairs
        # where the foot is down at both
        joints = motion.global_positions()
        step = np.diff(np.stack([joints[:, [leg.ankle for leg in legs]], joints[:, [leg.toe for leg in legs]]]), axis=1)
        step -= (step @ up)[..., None] * up
        both = down[1:] & down[:-1]
        return np.linalg.norm(step, axis=-1).min(axis=0)[both].mean()

    # the blend slides the feet more than either clip slides its own ...
    own = [sliding(Motion(m.skeleton, *sample_motion(m, np.asarray(w, dtype=float), cyclic=c), m.fps))
           for m, w, c in zip([walk, run], plan.warps, cyclic)]
    assert sliding(blended) > np.mean(own)
    # ... and the contact stage brings that back under what the clips' own feet do
    assert sliding(held) < np.mean(own)


# --- the output's support phases (§5: the top priority's sequence, time-scaled) -------------------


PHASE_PAIRS = [("walk_normal_001", "run_happy_001"), ("walk_normal_001", "walk_happy_001"),
               ("walk-left_normal_001", "walk_normal_001")]


def own_phases(motion):
    from core.analysis import foot_contacts, support_phases
    from core.rig import detect_up

    rig = find_rig(motion)
    return support_phases(foot_contacts(motion, rig, up=detect_up(motion, rig)))


def standing(top_phases, output_phases):
    """(share of the top priority's single-support frames the output stands on the same foot,
    share of frames the output stands on the other foot alone, but for those next to a change
    of the top priority's phase, where contact detection's thresholds decide the frame)."""
    single = np.isin(top_phases, [1, 2])  # LS, RS (core.analysis.Phase)
    change = np.flatnonzero(np.diff(top_phases))
    steady = np.ones(len(top_phases), dtype=bool)
    steady[np.concatenate([change, change + 1])] = False
    other = steady & single & np.isin(output_phases, [1, 2]) & (output_phases != top_phases)
    return float(np.mean(output_phases[single] == top_phases[single])), float(np.mean(other))


@pytest.mark.parametrize("pair", PHASE_PAIRS, ids=["walk + run", "two walks", "walk-left + walk"])
@pytest.mark.parametrize("priorities", [(2.0, 1.0), (1.0, 2.0)], ids=["first first", "second first"])
def test_the_output_stands_on_the_top_priority_s_feet_time_scaled(pair, priorities):
    """The output's own support phases, found in it as in any capture, follow the top-priority
    clip's along its warp: never the other foot alone, and the same single support almost
    throughout (the contact detection's thresholds blur the frames where a phase changes)."""
    require(MOCAP)
    from core.bvh import read_bvh
    from core.mkm import blend_clips

    clips = [read_bvh(MOCAP / "bandai1" / f"{name}.bvh") for name in pair]
    result = blend_clips(clips, weights=[0.5, 0.5], priorities=list(priorities))
    top = int(np.argmax(priorities))
    warp = np.asarray(result.plan.warps[top], dtype=float)
    playing = ~np.isnan(warp) & (warp <= clips[top].n_frames - 1)
    top_phases = own_phases(clips[top])[np.round(warp[playing]).astype(int)]
    same, other = standing(top_phases, own_phases(result.motion)[playing])
    assert other == 0.0 and same >= 0.9


def test_the_naive_blend_of_two_walks_stands_on_the_wrong_foot():
    # the claim above can fail: the NLA's frame-by-frame blend of two walks out of phase does
    require(MOCAP)
    from core.bvh import read_bvh
    from core.mkm import blend_clips

    clips = [read_bvh(MOCAP / "bandai1" / f"{name}.bvh") for name in PHASE_PAIRS[1]]
    naive = own_phases(blend_clips(clips, weights=[0.5, 0.5], sync=False).motion)
    n = min(len(naive), clips[0].n_frames)
    same, other = standing(own_phases(clips[0])[:n], naive[:n])
    assert other > 0.02 and same < 0.9


# --- other rigs: names, units, axes and rates do not change the blend ------------------------------


def renamed_metres_z_up(motion):
    """The clip renamed, in metres instead of centimetres, and turned Z up: the same capture."""
    turn = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    return motion.renamed({n: f"rig:{n}" for n in motion.skeleton.names}).scaled(0.01).transformed(turn)


@pytest.mark.parametrize("pair", PHASE_PAIRS, ids=["walk + run", "two walks", "walk-left + walk"])
def test_names_units_and_axes_do_not_change_the_blend(pair):
    require(MOCAP)
    from core.bvh import read_bvh
    from core.mkm import blend_clips

    clips = [read_bvh(MOCAP / "bandai1" / f"{name}.bvh") for name in pair]
    base = blend_clips(clips, weights=[0.5, 0.5])
    other = blend_clips([renamed_metres_z_up(c) for c in clips], weights=[0.5, 0.5])
    assert np.array_equal(base.plan.boundaries, other.plan.boundaries)
    expected = renamed_metres_z_up(base.motion).global_positions()
    # (to 0.1 µm: the knees' IK solves are not bit-for-bit across frames of reference)
    np.testing.assert_allclose(other.motion.global_positions(), expected, atol=1e-7)  # metres


@pytest.mark.parametrize("pair", PHASE_PAIRS, ids=["walk + run", "two walks", "walk-left + walk"])
def test_a_rate_of_120_fps_gives_the_blend_at_30_to_a_frame(pair):
    """Resampled to 120 fps the clips' support phases are found to 1/120 s instead of 1/30 s, so
    the steps move by up to a frame or two of the 30 fps capture; the blend is otherwise the same."""
    require(MOCAP)
    from core.bvh import read_bvh
    from core.mkm import blend_clips

    clips = [read_bvh(MOCAP / "bandai1" / f"{name}.bvh") for name in pair]
    base = blend_clips(clips, weights=[0.5, 0.5])
    fast = blend_clips([c.resampled(120.0) for c in clips], weights=[0.5, 0.5])
    assert len(fast.plan.combined) == len(base.plan.combined)
    np.testing.assert_allclose(fast.plan.boundaries / 120.0, base.plan.boundaries / 30.0, atol=0.1)  # seconds
    assert fast.motion.n_frames / 120.0 == pytest.approx(base.motion.n_frames / 30.0, abs=0.1)
    n = min(base.motion.n_frames, len(fast.motion.global_positions()[::4]))
    apart = np.linalg.norm(fast.motion.global_positions()[::4][:n] - base.motion.global_positions()[:n], axis=-1)
    rig = find_rig(clips[0])
    leg = 0.5 * sum(leg_length(clips[0].skeleton, rig, side) for side in "LR")
    assert np.median(apart) < 0.02 * leg


def test_a_walk_joining_another_says_which_frame_it_starts_at(tmp_path, capsys):
    # two walks of one performer, the second at frame 10: it joins at the next step boundary, at the
    # element of its first stride in step with the first walk (core.sync), and the report says so
    require(MOCAP)
    import json

    walk, happy = MOCAP / "bandai1" / "walk_normal_001.bvh", MOCAP / "bandai1" / "walk_happy_001.bvh"
    plan = tmp_path / "plan.json"
    assert main(["blend", str(walk), str(happy), "-o", str(tmp_path / "out.bvh"), "--starts", "0,10",
                 "--plan", str(plan)]) == 0
    report = json.loads(plan.read_text())
    entered = report["entered"]
    assert [e["clip"] for e in entered] == ["walk_happy_001"] and entered[0]["frame"] > 0
    assert report["sync"]["entry_frames"] == [0, entered[0]["frame"]]
    said = f"'walk_happy_001' starts at its frame {entered[0]['frame']}, in step with the others"
    assert said in capsys.readouterr().out
    # and the combined sequence alternates single supports with double supports from the start
    combined = report["sync"]["combined"]
    assert combined[:12] == ["RS", "DS", "LS", "DS"] * 3
