"""Blending per body part and activation ramps (Ménardais et al. 2004, issue 24 items 2 and 3).

§5.2: eq. (6) takes "the normalised weight associated to the legs", so a gesture
done standing, which weighs nothing on the legs, must not time a walk's steps; §7
splits long double supports; Fig. 2: an action is deactivated as it is activated,
along a ramp, and the others take its weight.
"""

import numpy as np
import pytest
from real_capture import require

from core.analysis import foot_contacts, horizontal
from core.mkm import (BODY_PARTS, blend_clips, body_part_masks, checked_part_weights, duration_warnings,
                      feet_stand_still, presence_weights)
from core.motion import forward_kinematics
from core.rig import detect_up, find_rig, leg_length
from core.sync import Support, SupportSequence, split_double_supports, support_sequence

WALK = "bandai2/walk_normal_001"
WAVE = "bandai2/wave-both-hands_normal_001"  # cyclic: its end pose is its start
RAISE = "bandai2/raise-up-right-hand_normal_001"
RUN = "bandai2/run_normal_001"


def steps_of(motion) -> int:
    """Single supports in a motion's support sequence: its steps."""
    rig = find_rig(motion)
    codes = support_sequence(foot_contacts(motion, rig, up=detect_up(motion, rig)), motion.fps).codes
    return int(np.sum((codes == Support.LS) | (codes == Support.RS)))


def pelvis_speed(motion):
    rig = find_rig(motion)
    up = detect_up(motion, rig)
    g = forward_kinematics(motion.rotations, motion.positions, motion.skeleton.parents, [rig.pelvis],
                           rotations_out=False)[0][:, 0]
    return np.linalg.norm(horizontal(np.diff(g, axis=0), up), axis=-1) * motion.fps


# --------------------------------------------------------------------------
# item 2: body parts


def test_the_body_parts_partition_the_joints_from_the_rigs_roles_whatever_the_names(mocap):
    walk = mocap(WALK)
    rig = find_rig(walk)
    masks = body_part_masks(walk.skeleton, rig)
    assert masks.shape == (len(BODY_PARTS), len(walk.skeleton)) and np.all(masks.sum(axis=0) == 1)
    legs, upper, arms = masks
    assert legs[rig.pelvis] and legs[rig.left_leg.ankle] and upper[rig.head] and arms[rig.right_arm.wrist]
    renamed = walk.renamed([f"j{k}" for k in range(len(walk.skeleton))])  # (found by topology)
    assert np.array_equal(body_part_masks(renamed.skeleton, find_rig(renamed)), masks)


def test_a_gesture_done_standing_stands_still_and_a_walk_does_not(mocap):
    for name, still in ((WAVE, True), (RAISE, True), ("bandai1/bow_normal_001", True), (WALK, False), (RUN, False)):
        m = mocap(name)
        rig = find_rig(m)
        g = forward_kinematics(m.rotations, m.positions, m.skeleton.parents, rotations_out=False)[0]
        leg = 0.5 * (leg_length(m.skeleton, rig, "L") + leg_length(m.skeleton, rig, "R"))
        assert feet_stand_still(g, rig, leg) is still, name


@pytest.mark.parametrize("gesture", [WAVE, RAISE, "bandai1/bow_normal_001", "bandai1/bye_normal_001"])
def test_a_walk_blended_with_a_gesture_done_standing_keeps_its_steps_and_duration(mocap, gesture):
    walk = mocap(WALK)
    for priorities in ([2, 1], [1, 2]):
        result = blend_clips([walk, mocap(gesture)], names=["walk", "gesture"], priorities=priorities)
        assert abs(result.motion.n_frames - walk.n_frames) <= 0.1 * walk.n_frames
        assert abs(steps_of(result.motion) - steps_of(walk)) <= 0.1 * steps_of(walk)
        assert result.part_weights[1][0] == 0.0 and "stands still" in result.summary()


def test_a_legs_weight_of_0_keeps_the_clip_in_the_upper_body_and_out_of_the_legs(mocap):
    walk, wave = mocap(WALK), mocap(WAVE)
    rig = find_rig(walk)
    legs, _, arms = body_part_masks(walk.skeleton, rig)
    result = blend_clips([walk, wave], names=["walk", "wave"], part_weights={"wave": {"legs": 0}})
    out = result.motion
    # the legs' timing is the walk's alone: it plays at its own pace
    assert np.allclose(result.plan.warps[0], np.arange(out.n_frames), atol=1e-9)
    # (positions: a rotation may come out as its opposite quaternion)
    placed = [forward_kinematics(m.rotations[: out.n_frames], m.positions[: out.n_frames], m.skeleton.parents,
                                 rotations_out=False)[0][:, legs] for m in (out, walk)]
    assert np.allclose(placed[0], placed[1], atol=1e-9 * leg_length(walk.skeleton, rig, "L"))
    # and the wave is in the arms, at its weight
    wrist = rig.right_arm.elbow
    assert np.max(np.abs(out.rotations[10:150, wrist] - walk.rotations[10:150, wrist])) > 0.1
    assert arms[wrist] and legs[rig.pelvis]


def test_a_standing_gesture_that_weighs_on_the_legs_has_its_long_double_support_split(mocap):
    walk, wave = mocap(WALK), mocap(WAVE)
    result = blend_clips([walk, wave], names=["walk", "wave"], part_weights={"wave": {"legs": 1}})
    assert result.plan.sequences[1].split
    assert abs(result.motion.n_frames - walk.n_frames) <= 0.1 * walk.n_frames


def test_splitting_cuts_only_long_double_supports_into_pieces_of_about_the_length_asked():
    walk_like = SupportSequence([0, 1, 0, 2], [0, 4, 16, 20], 32, 30.0)
    assert split_double_supports(walk_like, 20.0) is walk_like
    stand = SupportSequence([0, 1, 0], [0, 100, 110], 120, 30.0)
    cut = split_double_supports(stand, 20.0, piece=10.0)
    assert cut.split and cut.codes.tolist() == [0] * 10 + [1, 0]
    assert np.all(np.abs(cut.durations[:10] - 10) <= 1) and cut.starts[-2:].tolist() == [100, 110]
    with pytest.raises(ValueError, match="two successive elements"):
        SupportSequence([0, 0], [0, 5], 10, 30.0)


def test_a_blend_far_longer_than_its_clips_is_warned_of():
    assert duration_warnings(300, [273, 187], [0, 0], ["walk", "wave"]) == []
    (warning,) = duration_warnings(4728, [414, 187], [0, 0], ["walk", "wave"])
    assert "4728 frames, 11.4 times its longest clip" in warning and "'wave' a legs weight of 0" in warning


def test_bad_part_weights_say_what_to_fix():
    names = ["walk", "wave"]
    assert np.isnan(checked_part_weights(None, names)).all()
    assert checked_part_weights({"wave": {"legs": 0}}, names)[1, 0] == 0.0
    for bad, message in (({"wave": {"feet": 0}}, "'feet' is no body part; the parts are legs, upper, arms"),
                         ({"wav": {"legs": 0}}, "not clips given"),
                         ({"wave": {"legs": -1}}, "must be a number >= 0"),
                         ({"wave": {"legs": 1e300}}, "relative")):
        with pytest.raises(ValueError, match=message):
            checked_part_weights(bad, names)


# --------------------------------------------------------------------------
# item 3: activation ramps


@pytest.mark.parametrize("kept", [0, 1])
def test_a_weight_of_0_changes_nothing_each_clip_comes_out_bit_for_bit(mocap, kept):
    walk, run = mocap(WALK), mocap(RUN)
    weights = [1.0, 0.0] if kept == 0 else [0.0, 1.0]
    result = blend_clips([walk, run], names=["walk", "run"], weights=weights)
    clip = (walk, run)[kept]
    assert np.array_equal(result.motion.rotations, clip.rotations)
    assert np.array_equal(result.motion.positions, clip.positions)
    assert "weighs nothing: left out" in result.summary()


def test_a_clip_of_weight_0_is_out_of_every_stage(mocap):
    walk, run, sad = mocap(WALK), mocap(RUN), mocap("bandai1/walk_sad_001")
    two = blend_clips([walk, run], names=["walk", "run"], weights=[0.5, 0.5])
    three = blend_clips([walk, sad, run], names=["walk", "sad", "run"], weights=[0.5, 0.0, 0.5],
                        priorities=[2, 0, 1])
    assert np.array_equal(two.motion.rotations, three.motion.rotations)
    assert np.array_equal(two.motion.positions, three.motion.positions)
    assert np.all(np.isnan(three.plan.warps[1])) and three.plan.delays[1] == 0


def test_a_clip_left_out_moves_output_frame_0_to_the_first_clip_that_weighs(mocap):
    walk, run, sad = mocap(WALK), mocap(RUN), mocap("bandai1/walk_sad_001")
    alone = blend_clips([sad, run], names=["sad", "run"], weights=[0.0, 1.0], starts=[0, 30])
    assert alone.origin == 30 and np.array_equal(alone.motion.positions, run.positions)
    grows = np.linspace(0.2, 0.8, 300)
    two = blend_clips([walk, run], names=["walk", "run"], weights=[1.0 - grows[10:], grows[10:]])
    three = blend_clips([sad, walk, run], names=["sad", "walk", "run"], weights=[0.0, 1.0 - grows, grows],
                        starts=[0, 10, 10], priorities=[3, 2, 1])
    assert three.origin == 10 and np.array_equal(two.motion.positions, three.motion.positions)


def test_a_clip_fades_out_where_it_ends_and_the_others_take_its_weight():
    T, fps = 120, 30.0
    warps = np.stack([np.arange(T, dtype=float), np.arange(T, dtype=float)])
    n = presence_weights(warps, [1.0, 1.0], fps, ends=[60.0, 119.0])
    assert np.allclose(n.sum(axis=0), 1.0)
    assert np.allclose(n[:, :50], 0.5) and n[0, 60] == 0.0 and np.all(n[0, 60:] == 0.0)
    assert np.all(np.diff(n[0, 50:61]) <= 0)  # down a ramp, not a jump
    # the clip that plays last, or two ending together, do not fade
    assert np.allclose(presence_weights(warps, [1.0, 1.0], fps, ends=[119.0, 119.0]), 0.5)


def test_after_a_clip_ends_the_body_moves_as_the_remaining_clip_does(mocap):
    walk, run = mocap(WALK), mocap(RUN)
    result = blend_clips([walk, run], names=["walk", "run"], weights=[0.5, 0.5])
    end = int(np.ceil(result.plan.ends[1]))
    assert end < result.motion.n_frames - 60
    # the walk's own speed along its warp after the run ended
    warp = np.asarray(result.plan.warps[0])
    own = np.interp(warp[:-1], np.arange(walk.n_frames - 1), pelvis_speed(walk)) * np.diff(warp)
    speed = pelvis_speed(result.motion)
    assert abs(speed[end:].mean() - own[end:].mean()) <= 0.1 * own[end:].mean()


def test_ends_stops_a_clip_early_where_it_fades_out(mocap):
    walk, run = mocap(WALK), mocap(RUN)
    whole = blend_clips([walk, run], names=["walk", "run"], weights=[0.5, 0.5])
    early = blend_clips([walk, run], names=["walk", "run"], weights=[0.5, 0.5], ends={"run": 30})
    assert early.plan.ends[1] < whole.plan.ends[1] - 20
    with pytest.raises(ValueError, match="clip 'run' ends at a frame from 1 to its last, 67"):
        blend_clips([walk, run], names=["walk", "run"], ends={"run": 90})
    with pytest.raises(ValueError, match="not clips given"):
        blend_clips([walk, run], names=["walk", "run"], ends={"jog": 9})


def test_a_cyclic_clip_shorter_than_the_other_repeats_at_its_weight_until_the_blend_ends(mocap, tmp_path):
    """§4.3: "with cyclified motions such as locomotion, we need to extend its sequence as long as
    the action is running ... their sequences are repeated as a whole". A run of one stride (24
    frames) blended with a walk of 195 keeps running at its weight to the blend's end; ended by
    --ends through its repeats, it fades out there and the walk takes its weight."""
    import json

    from core.__main__ import main
    from core.sync import played_supports
    from tests.core.conftest import MOCAP

    walk, run = mocap("bandai1/walk_normal_001"), mocap("bandai1/run_normal_001")
    result = blend_clips([walk, run], names=["walk", "run"], weights=[0.5, 0.5])
    plan = result.plan
    assert result.cyclic == (False, True)
    assert plan.ends[1] == pytest.approx(plan.ends[0]) and plan.ends[1] >= result.motion.n_frames - 1
    assert plan.clip_frames(1)[1][-1] >= 4  # five passes and more
    weights = presence_weights(np.asarray(plan.warps), [0.5, 0.5], walk.fps, ends=plan.ends)
    assert np.allclose(weights[1, 30:], 0.5)
    # its feet are the blend's to the end: both clips' supports shown at every frame from its join
    contacts = [foot_contacts(m, find_rig(m), up=detect_up(m, find_rig(m))) for m in (walk, run)]
    shown = played_supports(plan.warps, contacts, result.cyclic, plan.ends)
    assert np.all(shown[:, int(np.ceil(plan.boundaries[plan.joins[1]])):] >= 0)

    ended = blend_clips([walk, run], names=["walk", "run"], weights=[0.5, 0.5], ends={"run": 100})
    stop = ended.plan.ends[1]
    assert ended.plan.splines[1](stop) == pytest.approx(100.0, abs=1e-6)  # own frame 100: its fifth pass
    assert stop < ended.motion.n_frames - 30
    faded = presence_weights(np.asarray(ended.plan.warps), [0.5, 0.5], walk.fps, ends=ended.plan.ends)
    after = int(np.ceil(stop))
    assert np.allclose(faded[1, 30:after - 10], 0.5) and np.all(faded[1, after:] == 0) and \
        np.all(faded[0, after:] == 1)
    with pytest.raises(ValueError, match="clip 'walk' ends at a frame from 1 to its last, 194 .* it is not cyclic"):
        blend_clips([walk, run], names=["walk", "run"], ends={"walk": 300})
    with pytest.raises(ValueError, match="above the .* memory budget: end the cyclic clips sooner"):
        blend_clips([walk, run], names=["walk", "run"], ends={"run": 10 ** 8})

    # the command line: --ends ends it where asked, through its repeats
    out, record = tmp_path / "out.bvh", tmp_path / "plan.json"
    files = [str(MOCAP / f"bandai1/{name}_001.bvh") for name in ("walk_normal", "run_normal")]
    assert main(["blend", *files, "-o", str(out), "--plan", str(record), "--ends", "run_normal_001=100"]) == 0
    sync = json.loads(record.read_text())["sync"]
    assert sync["ends"][1] == pytest.approx(stop, abs=0.01) and sync["ends"][0] > stop + 30


# --------------------------------------------------------------------------
# the command line


def test_the_command_line_takes_weights_by_name_part_weights_and_ends(mocap, tmp_path, capsys):
    import json

    from core.__main__ import main
    from tests.core.conftest import MOCAP

    walk, wave = str(MOCAP / f"{WALK}.bvh"), str(MOCAP / f"{WAVE}.bvh")
    out, plan = tmp_path / "out.bvh", tmp_path / "plan.json"
    assert main(["blend", walk, wave, "-o", str(out), "--plan", str(plan)]) == 0
    text = capsys.readouterr().out
    assert "note: 'wave-both-hands_normal_001' stands still" in text and "times legs 0" in text
    assert f"wrote {mocap(WALK).n_frames} frames" in text
    assert main(["blend", walk, wave, "-o", str(out), "--plan", str(plan), "--weights", "wave-both-hands_normal_001=0.5",
                 "--part-weights", "wave-both-hands_normal_001:legs=1,wave-both-hands_normal_001:arms=2",
                 "--ends", "walk_normal_001=150"]) == 0
    record = json.loads(plan.read_text())
    assert record["weights"] == [1.0, 0.5] and record["part_weights"]["wave-both-hands_normal_001"] == \
        {"legs": 1.0, "upper": 1.0, "arms": 2.0}
    assert record["sync"]["ends"][0] < 160
    for option, value, message in (("--part-weights", "wave:legs=0", "--part-weights names 'wave', which is not"),
                                   ("--part-weights", "legs=0", "--part-weights expects CLIP:PART=WEIGHT"),
                                   ("--weights", "walk_normal_001=1,0.5", "give every clip's weight by name"),
                                   ("--ends", "120", "--ends expects CLIP=FRAME")):
        capsys.readouterr()
        assert main(["blend", walk, wave, "-o", str(out), option, value]) == 2
        assert message in capsys.readouterr().err


def test_a_last_element_cut_short_by_the_clips_end_does_not_hurry_the_others():
    from core.sync import synchronize

    # A's capture ends 2 frames into its left support; B's lasts 15 frames
    a = SupportSequence([2, 0, 1], [0, 15, 20], 22, 30.0)
    b = SupportSequence([2, 0, 1, 0, 2], [0, 15, 20, 35, 40], 55, 30.0)
    plain = synchronize([a, b], [1, 1], [0, 0], [0.5, 0.5])
    faded = synchronize([a, b], [1, 1], [0, 0], [0.5, 0.5], fade_frames=7.5)
    step = int(np.flatnonzero(faded.elements[0] == 2)[0])  # (where A's last element begins)
    assert np.diff(plain.boundaries)[step] == pytest.approx(8.5)  # (2 + 15) / 2: B's left support rushed
    assert np.diff(faded.boundaries)[step] >= 0.9 * 15


def test_the_output_ends_on_the_frame_that_plays_the_last_clips_last_frame(mocap):
    walk, happy = mocap("bandai1/walk_normal_001"), mocap("bandai1/walk_happy_001")
    result = blend_clips([walk, happy], names=["walk", "happy"], weights=[0.5, 0.5])
    last = int(np.argmax(result.plan.ends))
    final = (walk, happy)[last].n_frames - 1
    # not a frame more, where its time would be clamped to its last frame (a jolt at the very end)
    assert final - 1.5 <= result.plan.warps[last][-1] <= final + 1e-9


# --------------------------------------------------------------------------
# review of issue 24: ramps and joins where a clip has already finished


def test_a_clip_that_ends_just_before_the_next_joins_gives_it_its_share():
    T, fps = 300, 30.0
    frames = np.arange(T, dtype=float)
    for join, end in ((95, 100.0), (100, 68.0)):
        warps = np.stack([frames, np.where(frames >= join, frames - join, np.nan)])
        n = presence_weights(warps, [1.0, 1.0], fps, ends=[end, 299.0])
        assert np.allclose(n.sum(axis=0), 1.0) and np.all(n >= 0)
        assert n[1, join] == 0.0  # (the joining clip eases in from 0)
        # weight 0 where it stops, or, stopped before the next joins, once that one has eased in
        gone = int(np.ceil(end if join < end else join + 0.25 * fps))
        assert np.all(n[0, gone:] == 0.0), (join, end)
        assert np.all(np.diff(n[0]) <= 1e-12)  # (down a ramp, not a jump)
    # stopped before the next joins: it holds at its weight until then
    assert np.all(n[0, :100] == 1.0)


def test_a_short_clip_fades_all_the_way_out_where_it_stops():
    T, fps = 60, 30.0
    warps = np.stack([np.arange(T, dtype=float)] * 2)
    n = presence_weights(warps, [1.0, 1.0], fps, ends=[10.0, 59.0])
    assert n[0, 10] == 0.0 and n[0, 4] == 0.5 and np.all(np.diff(n[0, 5:11]) < 0)


def test_a_run_that_ended_before_a_walk_joins_leaves_the_walk_alone_and_out_of_step_with_nothing(mocap):
    run, walk = mocap(RUN), mocap(WALK)
    result = blend_clips([run, walk], names=["run", "walk"], starts=[0, 100])
    plan = result.plan
    assert plan.ends[0] < 100
    n = presence_weights(np.asarray(plan.warps), [1.0, 1.0], walk.fps, ends=plan.ends)
    assert np.all(n[0, 110:] == 0.0)
    # nothing plays its own steps at the walk's join: it starts at its first frame
    assert plan.entry_frames() == [0, 0] and "in step with the others" not in result.summary()


def test_a_clip_out_of_the_legs_timing_starts_at_its_first_frame(mocap):
    walk, wave = mocap(WALK), mocap(WAVE)
    result = blend_clips([walk, wave], names=["walk", "wave"], part_weights={"walk": {"legs": 0}})
    assert result.plan.joins[0] == -1 and result.plan.entry_frames() == [0, 0]
    assert result.plan.to_dict()["entry_frames"] == [0, 0] and "starts at its frame" not in result.summary()


def test_legs_weighing_0_on_every_clip_are_timed_equally_as_they_are_blended_and_a_note_says_so(mocap):
    walk, run = mocap(WALK), mocap(RUN)
    nothing = blend_clips([walk, run], names=["walk", "run"], weights=[3.0, 1.0],
                          part_weights={"walk": {"legs": 0}, "run": {"legs": 0}})
    equal = blend_clips([walk, run], names=["walk", "run"], weights=[1.0, 1.0])
    # the legs show each clip in an equal share, so the steps are timed by both equally
    assert all(j >= 0 for j in nothing.plan.joins)
    assert np.array_equal(nothing.plan.boundaries, equal.plan.boundaries)
    assert "every clip's legs weigh 0" in nothing.summary()


def test_a_weight_of_0_gives_the_other_clip_bit_for_bit_at_its_own_rate(mocap):
    walk, run = mocap(WALK), mocap(RUN)
    for first, second in ((walk.resampled(4 * walk.fps), run), (walk, run.resampled(4 * run.fps))):
        result = blend_clips([first, second], names=["walk", "run"], weights=[0.0, 1.0])
        assert result.motion.fps == second.fps and result.motion.n_frames == second.n_frames
        assert result.plan.n_frames == second.n_frames  # (the plan of what is output, at its rate)
        assert np.array_equal(result.motion.rotations, second.rotations)
        assert np.array_equal(result.motion.positions, second.positions)
    ended = blend_clips([walk.resampled(4 * walk.fps), run], names=["walk", "run"], weights=[0.0, 1.0],
                        ends={"run": 40})
    assert np.array_equal(ended.motion.positions, run[:41].positions)


def test_a_one_frame_clip_is_refused_for_its_length_whatever_its_end(mocap):
    walk, run = mocap(WALK), mocap(RUN)
    with pytest.raises(ValueError, match=r"clip 'pose' has 1 frame; a clip to blend needs at least two"):
        blend_clips([walk, run[:1]], names=["walk", "pose"], ends=[walk.n_frames - 1, 0])


def test_a_non_cyclic_clip_ended_far_past_its_last_frame_is_told_it_does_not_repeat(mocap):
    walk, run = mocap(WALK), mocap(RUN)
    with pytest.raises(ValueError, match=f"clip 'walk' ends at a frame from 1 to its last, {walk.n_frames - 1}.*"
                                         f"it is not cyclic"):
        blend_clips([walk, run], names=["walk", "run"], ends={"walk": 100_000_000})


def test_the_command_line_shows_each_options_own_syntax_for_a_bad_number_and_refuses_a_name_given_twice(tmp_path,
                                                                                                       capsys):
    from core.__main__ import main
    from tests.core.conftest import MOCAP

    require(MOCAP)
    walk, wave = str(MOCAP / f"{WALK}.bvh"), str(MOCAP / f"{WAVE}.bvh")
    out = tmp_path / "out.bvh"
    for option, value, message in (
            ("--ends", "walk_normal_001=1.5", "for example --ends run=120"),
            ("--part-weights", "walk_normal_001:legs=abc", "for example --part-weights wave:legs=0"),
            ("--weights", "walk_normal_001=x", "for example --weights walk=1,wave=0.5"),
            ("--weights", "walk_normal_001=1,walk_normal_001=0", "gives 'walk_normal_001' more than once"),
            ("--part-weights", "walk_normal_001:legs=1,walk_normal_001:legs=0",
             "gives 'walk_normal_001:legs' more than once"),
            ("--ends", "walk_normal_001=100,walk_normal_001=90", "gives 'walk_normal_001' more than once")):
        capsys.readouterr()
        assert main(["blend", walk, wave, "-o", str(out), option, value]) == 2, (option, value)
        assert message in capsys.readouterr().err, (option, value)
    # another part of the same clip is not a repeat
    assert main(["blend", walk, wave, "-o", str(out), "--part-weights",
                 "wave-both-hands_normal_001:legs=0,wave-both-hands_normal_001:arms=2"]) == 0
