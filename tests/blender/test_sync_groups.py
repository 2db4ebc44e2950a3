"""Synchronized blending in Blender (issue 12, item 8), headless, on real clips.

The Bandai walk on track 1 and the run on track 2 overlapping it, as an
animator lays them out for a jog. With "Blend synchronized with overlapping
strips" on both, they play as one clip: core.mkm.blend_clips of the two
strips, weighted by their influences as the NLA's Replace mode reads them.
With it off, they are two strips as before.
"""

import importlib
import json
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from scenes import (addon_modules, all_keys, channel_keys, clips_on_one_armature, draw_panel, import_action, preview_segments, refused,
                    strips_by_name)

WALK = ("walk_normal_001", 1, None)  # frames 1-195, track "clips 1"
RUN = ("run_normal_001", 41, None)  # frames 41-64 (a 24-frame cycle) on track "clips 2", above the walk's
LATE_RUN = ("run_normal_001", 180, None)  # frames 180-203: over the walk's end, so it can also follow it


@pytest.fixture(scope="module")
def sm(installed_extension):
    def load(name):
        return importlib.import_module(f"{installed_extension}.{name}")

    return SimpleNamespace(**vars(addon_modules(installed_extension)), mkm=load("core.mkm"),
                           live=load("addon.live"))


@pytest.fixture
def walk_run(empty_scene):
    return clips_on_one_armature((WALK, RUN), tracks=2)


@pytest.fixture
def walk_late_run(empty_scene):
    return clips_on_one_armature((WALK, LATE_RUN), tracks=2)


def synchronized(obj, sm, *names):
    for name in names:
        sm.strips.strip_settings(obj, strips_by_name(obj)[name], create=True).sync_blend = True


def animated_influence(strip, keys):
    """Animated Influence on ``strip``, keyed ``{frame: influence}`` (linear between keys)."""
    strip.use_animated_influence = True
    curve = strip.fcurves.find("influence")
    for point in list(curve.keyframe_points):
        curve.keyframe_points.remove(point)
    for frame, value in keys.items():
        curve.keyframe_points.insert(frame, value)
    for point in curve.keyframe_points:
        point.interpolation = 'LINEAR'


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


def expected_blend(obj, sm, weights):
    """core.mkm.blend_clips of the two strips as the add-on reads them, the run (upper track) first, each
    ended where its strip ends (a cyclic one does not repeat past it)."""
    strips = strips_by_name(obj)
    run, walk = (sm.convert.strip_to_motion(obj, strips[n]) for n in ("run", "walk"))
    rig = sm.convert.find_armature_rig(obj, run)
    starts = [round(strips[n].frame_start) for n in ("run", "walk")]
    return sm.mkm.blend_clips([run, walk], names=["run", "walk"], weights=weights, priorities=[2, 1],
                              starts=starts, rig=rig, ends=[run.n_frames - 1, walk.n_frames - 1])


def keys_of(obj, motion) -> dict:
    """The keys the add-on writes for ``motion``, by (data path, index): float32 values."""
    out = {}
    for bone, prop, values in sm_convert(obj).bone_channels(obj, motion):
        for index in range(values.shape[1]):
            out[(sm_convert(obj).bone_path(bone, prop), index)] = values[:, index].astype(np.float32)
    return out


def sm_convert(obj):
    return importlib.import_module(f"{type(obj.smart_motion).__module__.rsplit('.', 2)[0]}.addon.convert")


def preview_values(obj) -> dict:
    return {key: co[1::2] for key, (co, _) in channel_keys(*preview_segments(obj)).items()}


def assert_plays(obj, expected, start=WALK[1]):
    """The preview's keys are ``expected``'s (float32 rounding), from the group's first frame ``start``."""
    keyed = preview_values(obj)
    wanted = keys_of(obj, expected.motion)
    assert keyed.keys() == wanted.keys()
    for key, values in wanted.items():
        assert np.allclose(keyed[key], values, rtol=1e-5, atol=1e-5), key
    first = min(float(co[0]) for co, _ in channel_keys(*preview_segments(obj)).values())
    assert first == start


def source_state(obj) -> tuple:
    """The source strips (the preview's left out) and their actions' keys, as comparable values.
    (Not ``influence`` itself: with Animated Influence Blender sets it from the F-curve at each
    frame it evaluates; the curve's keys are compared.)"""
    sources = [s for t in obj.animation_data.nla_tracks if t.name != "[Smart Motion preview]" for s in t.strips]

    def curve(s):
        c = s.fcurves.find("influence")
        return tuple(tuple(k.co) for k in c.keyframe_points) if c is not None else ()

    strips = tuple((s.name, s.frame_start, s.frame_end, s.mute, s.use_animated_influence, curve(s), s.action.name)
                   for s in sources)
    actions = {s.action.name: all_keys(s.action) for s in sources}
    return strips, {name: {k: tuple(a.tobytes() for a in v) for k, v in keys.items()} for name, keys in actions.items()}


def test_two_overlapping_strips_blend_as_one_clip_weighted_by_the_upper_influence(walk_run, sm, capfd):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})  # a constant 0.5: the walk gets the other half
    before = source_state(obj)

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert "previewing 1 clip ('walk + run': strips blended synchronized) as one motion" in capfd.readouterr().out

    plan = plan_of(obj)
    assert plan["clips"] == ["walk + run"] and plan["pairs"] == [] and plan["rejected"] == []
    (group,) = plan["groups"]
    assert group["strips"] == ["run", "walk"]  # the upper track first, as the NLA evaluates
    assert group["weights"] == {"run": 0.5, "walk": 0.5} and group["varying"] == {}
    assert "ERR" not in group["combined"] and len(group["combined"]) > 4
    expected = expected_blend(obj, sm, [0.5, 0.5])
    assert_plays(obj, expected)
    assert source_state(obj) == before, "the source strips or actions changed"
    # the run joins the walk in step past its first frame (core.sync): the plan and the panel say so
    entered = {n: f for n, f in zip(["run", "walk"], expected.plan.entry_frames()) if f}
    assert list(entered) == ["run"] and group["entered"] == entered

    lines = draw_panel().labels
    assert any(line.startswith("walk + run synchronized") for line in lines)
    assert any(line.strip().startswith(" ".join(group["combined"][:3])) for line in lines)
    assert any("weights run 0.50, walk 0.50" in line for line in lines)
    assert any(f"starts in step: run at its frame {entered['run']}" in line for line in lines)


def test_without_animated_influence_the_upper_strip_replaces_the_lower(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["weights"] == {"run": 1.0, "walk": 0.0}
    # the walk weighs nothing: the group is the run alone, where its strip starts
    assert "'walk' weighs nothing: left out" in group["notes"] and group["start"] == RUN[1]
    assert_plays(obj, expected_blend(obj, sm, [1.0, 0.0]), start=RUN[1])


def test_with_the_option_off_overlapping_strips_go_in_sequence_as_before(walk_late_run, sm):
    obj = walk_late_run
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    as_before = plan_of(obj)
    synchronized(obj, sm, "walk")  # one of the two is no group: both in sequence
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = plan_of(obj)
    assert plan == {**as_before, "groups": []} and plan["clips"] == ["walk", "run"]
    assert [(p["prev"], p["next"]) for p in plan["pairs"]] == [("walk", "run")]
    # the run overlapping the walk cuts the walk's default core where it begins, as before
    core = sm.timeline.strip_default_core(obj, strips_by_name(obj)["walk"])
    assert core.last < LATE_RUN[1] and not core.group


def test_a_strip_inside_another_is_refused_as_before_unless_both_blend_synchronized(walk_run, sm):
    obj = walk_run
    message = "NLA strip 'run' .* leaves no frame for its default core"
    refused("synthesize", message)
    synchronized(obj, sm, "run")
    refused("synthesize", message)
    synchronized(obj, sm, "walk")
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    # the group's core is the whole group: no overlap cuts it
    core = sm.timeline.strip_default_core(obj, strips_by_name(obj)["run"])
    assert (core.first, core.last, core.group) == (WALK[1], 195, "walk + run")


def test_an_animated_influence_changes_the_weights_over_frames(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    animated_influence(strips_by_name(obj)["run"], {41: 0.0, 64: 1.0})  # over the run strip, 41-64
    before = source_state(obj)

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    (group,) = plan_of(obj)["groups"]
    assert group["varying"] == {"run": "animated", "walk": "under 'run'"}
    assert group["weights"] == {"run": 0.0, "walk": 1.0}
    frames = np.arange(WALK[1], WALK[1] + 400)
    # the influence Blender's curve gives: the ramp, held at 1 past the strip's end as the NLA holds it
    u = sm.sync_groups.strip_influences(strips_by_name(obj)["run"], frames)
    assert np.allclose(u, np.clip((frames - 41) / (64 - 41), 0.0, 1.0), atol=1e-6)
    expected = expected_blend(obj, sm, [u, 1.0 - u])
    assert_plays(obj, expected)
    # not the constant blend: the weights moved over the frames
    constant = expected_blend(obj, sm, [0.5, 0.5]).motion
    n = min(constant.n_frames, expected.motion.n_frames)
    assert not np.allclose(expected.motion.rotations[:n], constant.rotations[:n], atol=1e-3)
    assert any("run 0.00 animated" in line for line in draw_panel().labels)
    assert source_state(obj) == before


def test_bake_keeps_the_preview_of_a_group_and_undo_takes_it_back(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})
    before = source_state(obj)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    previewed = preview_values(obj)
    # the preview is current: Bake keeps it rather than synthesize again
    assert sm.preview.current_preview(obj, sm.strips.selected_strips(obj),
                                  bpy.context.scene.smart_motion.responsiveness) is not None
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    baked = {key: co[1::2] for key, (co, _) in channel_keys(obj.animation_data.action).items()}
    assert baked.keys() == previewed.keys()
    assert all(np.array_equal(baked[k], previewed[k]) for k in baked)
    assert source_state(obj) == before

    # Bake again (it synthesizes: the preview is gone) as one undo step, then undo it
    obj.animation_data.action = None
    name = obj.name
    bpy.ops.ed.undo_push(message="before Bake")
    assert bpy.ops.smart_motion.bake('EXEC_DEFAULT', True) == {'FINISHED'}
    again = {key: co[1::2] for key, (co, _) in channel_keys(obj.animation_data.action).items()}
    assert all(np.allclose(again[k], baked[k], rtol=1e-5, atol=1e-5) for k in baked)
    assert bpy.ops.ed.undo() == {'FINISHED'}
    obj = bpy.data.objects[name]  # undo reloads the file's data
    assert obj.animation_data.action is None
    assert source_state(obj) == before


def previewed_half_run(obj, sm) -> bpy.types.Scene:
    """``obj``'s walk and run blended synchronized, the run's influence animated at 0.5, previewed."""
    synchronized(obj, sm, "walk", "run")
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    return bpy.context.scene


def test_live_updates_follow_the_option_and_the_influence(walk_late_run, sm):
    obj = walk_late_run
    scene = previewed_half_run(obj, sm)
    key = sm.live.timeline_key(obj, scene)

    strips_by_name(obj)["run"].fcurves.find("influence").keyframe_points[0].co.y = 0.25
    assert sm.live.timeline_key(obj, scene) != key
    assert sm.live.refresh(obj, scene, raising=True)
    assert plan_of(obj)["groups"][0]["weights"] == {"run": 0.25, "walk": 0.75}
    assert_plays(obj, expected_blend(obj, sm, [0.25, 0.75]))

    # (a setting's update asks for the live update, which background Blender runs at once)
    sm.strips.strip_settings(obj, strips_by_name(obj)["run"]).sync_blend = False
    sm.live.refresh(obj, scene, raising=True)
    plan = plan_of(obj)
    assert plan["groups"] == [] and plan["clips"] == ["walk", "run"]
    assert obj.smart_motion.live_error == ""


def test_a_strip_blended_synchronized_never_composes(empty_scene, sm):
    # the wave inside the walk composes over it (test_composition); with the option on, it does not
    obj = clips_on_one_armature((("bandai2/walk_normal_001", 1, None), ("bandai2/wave-right-hand_normal_001", 31, None)))
    strips = sorted(strips_by_name(obj).values(), key=lambda s: s.frame_start)
    assert set(sm.timeline.additional_strips(obj, strips)) == {"wave-right-hand"}
    synchronized(obj, sm, "wave-right-hand")
    assert sm.timeline.additional_strips(obj, strips) == {}
    synchronized(obj, sm, "walk")
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = plan_of(obj)
    assert plan["compositions"] == [] and [g["name"] for g in plan["groups"]] == ["walk + wave-right-hand"]


def test_a_group_is_one_clip_to_add_after_and_pack_leaves_it_alone(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    # (the run at half its influence: at 1, Replace mode leaves the walk nothing, and a strip that weighs
    # nothing is left out of the group)
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})
    bow = import_action("bow_normal_001")
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.smart_motion.add_asap(action=bow.name) == {'FINISHED'}
    added = strips_by_name(obj)["bow_normal_001"]
    assert added.frame_start > WALK[1] + 60  # after the group's core, not inside it
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = plan_of(obj)
    assert plan["clips"] == ["walk + run", "bow_normal_001"]
    assert [(p["prev"], p["next"]) for p in plan["pairs"]] == [("walk + run", "bow_normal_001")]
    refused("pack", "Pack does not re-time synchronized groups: 'walk \\+ run' .* deselect their strips, or turn "
                    "off 'Blend synchronized with overlapping strips' on them, to pack the others")


def test_playing_an_animated_influence_does_not_ask_for_a_live_update(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    animated_influence(strips_by_name(obj)["run"], {1: 0.0, 100: 1.0})
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    scene = bpy.context.scene
    key = sm.live.timeline_key(obj, scene)
    run = strips_by_name(obj)["run"]
    run.influence = 0.3  # as Blender sets it from the curve at each frame it evaluates the strip
    scene.frame_set(60)
    assert sm.live.timeline_key(obj, scene) == key


def test_the_panel_offers_the_option_on_every_strip_and_its_button_is_one_undoable_toggle(walk_run, sm):
    obj = walk_run
    layout = draw_panel()
    assert layout.operators.count("smart_motion.blend_synchronized") == 2  # no settings yet: the button
    assert bpy.types.SMART_MOTION_OT_blend_synchronized.bl_options >= {'REGISTER', 'UNDO'}
    assert bpy.ops.smart_motion.blend_synchronized(strip="run") == {'FINISHED'}
    assert sm.sync_groups.blends_synchronized(obj, strips_by_name(obj)["run"])
    layout = draw_panel()
    assert layout.operators.count("smart_motion.blend_synchronized") == 1
    assert (sm.strips.strip_settings(obj, "run"), "sync_blend") in layout.props


def test_an_edited_influence_or_option_makes_bake_synthesize_again(walk_late_run, sm):
    obj = walk_late_run
    synchronized(obj, sm, "walk", "run")
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})
    scene = bpy.context.scene
    scene.smart_motion.live = False  # (else the live update would bring the preview up to date)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    strips = sm.strips.selected_strips(obj)
    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is not None
    curve = strips_by_name(obj)["run"].fcurves.find("influence")
    curve.keyframe_points[0].co.y = 0.75
    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is None
    curve.keyframe_points[0].co.y = 0.5
    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is not None
    # a modifier's setting changes the influence Blender evaluates as much as a key does
    generator = curve.modifiers.new('GENERATOR')
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is not None
    generator.coefficients[0] = 0.1
    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is None
    sm.strips.strip_settings(obj, "walk").sync_blend = False
    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is None


def test_a_group_whose_influences_are_all_zero_is_refused_by_name(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    for name in ("walk", "run"):
        animated_influence(strips_by_name(obj)[name], {1: 0.0})
    refused("synthesize", "the synchronized group 'walk \\+ run' of armature 'walk_normal_001' cannot be blended: "
                          "its strips' influence is 0 at every frame")


def test_live_updates_blend_a_group_again_only_when_what_it_reads_changes(walk_late_run, sm):
    obj = walk_late_run
    scene = previewed_half_run(obj, sm)
    scene.smart_motion.responsiveness = 0.3  # (its update runs the live update at once, headless)
    session = sm.live._sessions[obj.session_uid]
    (blend,) = [kept[2] for kept in session.groups.values()]
    scene.smart_motion.responsiveness = 0.7
    assert [kept[2] for kept in session.groups.values()] == [blend]  # kept, not blended again
    strips_by_name(obj)["run"].fcurves.find("influence").keyframe_points[0].co.y = 0.25
    sm.live.refresh(obj, scene, raising=True)
    (again,) = [kept[2] for kept in session.groups.values()]
    assert again is not blend and again.weights == (0.25, 0.75)


def test_the_weights_read_a_strips_blend_ramps_as_the_nla_computes_its_influence(walk_late_run, sm):
    """Without Animated Influence the NLA ramps a strip's influence over its blend-in and blend-out
    (nlastrip_get_influence: 0 at the strip's ends, 1 between the ramps): the group's weights read
    the same ramps, and a live update follows a change of them."""
    obj = walk_late_run
    run = strips_by_name(obj)["run"]
    start, end = run.frame_start, run.frame_end
    run.blend_in, run.blend_out = 8.0, 4.0
    frames = np.array([start - 5, start, start + 2, start + 8, (start + end) / 2, end - 2, end, end + 5])
    expected = [0.0, 0.0, 0.25, 1.0, 1.0, 0.5, 0.0, 0.0]  # (held at its ends before and after the strip)
    assert np.allclose(sm.sync_groups.strip_influences(run, frames), expected)
    synchronized(obj, sm, "walk", "run")
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    key = sm.live.timeline_key(obj, bpy.context.scene)
    run.blend_in = 6.0
    assert sm.live.timeline_key(obj, bpy.context.scene) != key, "a live update follows the ramp"


def test_the_plan_says_a_ramped_weight_is_ramped_not_animated(walk_late_run, sm):
    """Blend-in and blend-out make the upper strip's weight vary with Animated Influence off: the
    plan and the panel say "ramped" for it, and that the walk's varies under it, not "animated"."""
    obj = walk_late_run
    run = strips_by_name(obj)["run"]
    run.blend_in, run.blend_out = 8.0, 4.0
    synchronized(obj, sm, "walk", "run")
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["varying"] == {"run": "ramped", "walk": "under 'run'"}
    lines = draw_panel().labels
    assert any("weights run 0.00 ramped, walk 1.00 under 'run'" in line for line in lines), lines
    assert not any("animated" in line for line in lines)


def test_strips_of_one_track_in_a_group_play_in_turn_as_the_nla_plays_them(empty_scene, sm):
    """Two walks one after the other on track 1 and a run over where they meet on track 2, all
    blended synchronized: one group. The NLA plays a track's strips in turn (the later from its
    start), so the track's share goes to the first walk, then to the second: not to the first
    alone, held on past its end as if the second lay beneath it."""
    obj = clips_on_one_armature((WALK, LATE_RUN, ("walk_normal_001", 196, None)), tracks=2)
    strips = strips_by_name(obj)
    assert strips["walk"].frame_end == 195 and strips["walk.001"].frame_start == 196
    synchronized(obj, sm, "walk", "run", "walk.001")
    animated_influence(strips["run"], {1: 0.5})  # the run takes half, track 1 the other half
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["strips"] == ["run", "walk", "walk.001"]
    assert group["varying"] == {"walk": "in turn with 'walk.001'", "walk.001": "in turn with 'walk'"}

    motions = [sm.convert.strip_to_motion(obj, strips[n]) for n in group["strips"]]
    frames = np.arange(WALK[1], WALK[1] + 195 + motions[2].n_frames)
    second = frames >= 196
    weights = [0.5, np.where(second, 0.0, 0.5), np.where(second, 0.5, 0.0)]
    expected = sm.mkm.blend_clips(motions, names=group["strips"], weights=weights, priorities=[3, 2, 1],
                                  starts=[180, 1, 196], rig=sm.convert.find_armature_rig(obj, motions[0]),
                                  ends=[m.n_frames - 1 for m in motions])
    assert_plays(obj, expected)


def edited_core(obj, sm, name, first, last):
    """An edited core on strip ``name`` over scene frames ``first``-``last``, as the panel's fields set it."""
    item = sm.strips.strip_settings(obj, strips_by_name(obj)[name], create=True)
    item.core_start, item.core_end = first, last
    assert item.has_core and (item.core_start, item.core_end) == (first, last)


def test_a_core_edited_on_a_strip_of_a_group_is_the_groups_core_in_scene_frames(walk_run, sm):
    """Edited cores count: the group's core runs over the scene frames its strips' edited cores
    span, not the group's default core (the whole group here)."""
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    # (the run at half its influence: at 1, Replace mode leaves the walk nothing, and a strip that weighs
    # nothing is left out of the group)
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})
    edited_core(obj, sm, "walk", 60, 150)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["core"] == [60, 150] and group["core_from"] == "edited on 'walk'"
    lines = draw_panel().labels
    assert "Group core 60-150" in lines  # under the run, which has none of its own
    assert "runs over the cores edited on 'walk'" in " ".join(lines)  # (wrapped over labels)

    edited_core(obj, sm, "run", 41, 64)  # a second one: the group's core spans both
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["core"] == [41, 150] and group["core_from"] == "edited on 'walk', 'run'"
    assert bpy.ops.smart_motion.reset_core(strip="walk") == {'FINISHED'}
    assert bpy.ops.smart_motion.reset_core(strip="run") == {'FINISHED'}
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert plan_of(obj)["groups"][0]["core"][0] == WALK[1]  # the default again: the group's span


def test_a_live_update_follows_a_core_edited_on_a_strip_of_a_group(walk_late_run, sm):
    obj = walk_late_run
    scene = previewed_half_run(obj, sm)
    edited_core(obj, sm, "walk", 30, 120)  # (the field's update runs the live update at once, headless)
    assert plan_of(obj)["groups"][0]["core"] == [30, 120]
    assert obj.smart_motion.live_error == ""
    assert sm.live.timeline_key(obj, scene) == sm.live._sessions[obj.session_uid].key


def test_an_edited_core_past_the_groups_blend_is_cut_or_refused_saying_what_to_edit(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    # (the run at half its influence: at 1, Replace mode leaves the walk nothing, and a strip that weighs
    # nothing is left out of the group)
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    end = group["start"] + group["frames"] - 1
    assert end < 195, "the run's pace makes the blend shorter than the walk"
    edited_core(obj, sm, "walk", 100, 195)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["core"] == [100, end]
    assert any(f"frames 100-195, is cut to the blend's frames, 100-{end}" in w for w in group["warnings"])
    assert any("is cut to the blend's frames" in line for line in sm.report.plan_warnings(plan_of(obj)))

    edited_core(obj, sm, "walk", end + 1, 195)
    refused("synthesize", f"the core edited on 'walk', frames {end + 1}-195, lies outside the group's blend, "
                          f"frames 1-{end} .* edit the core to lie within frames 1-{end}")


def test_edit_core_on_a_strip_of_a_group_starts_from_the_groups_core_cut_to_the_strip(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    # the group's default core is the whole group, frames 1-195: the run's share is all of it
    assert bpy.ops.smart_motion.edit_core(strip="run") == {'FINISHED'}
    item = sm.strips.strip_settings(obj, "run")
    assert item.has_core and (item.core_start, item.core_end) == (41, 64)
    assert (item, "core_start") in draw_panel().props


def test_the_panel_says_a_strip_blended_synchronized_that_overlaps_no_such_strip_is_no_group(walk_late_run, sm):
    obj = walk_late_run
    synchronized(obj, sm, "walk")  # the run overlaps it but has the option off
    text = " ".join(draw_panel().labels)
    assert "blends synchronized with no strip: none that plays with this on overlaps it" in text
    synchronized(obj, sm, "run")
    assert "blends synchronized with no strip" not in " ".join(draw_panel().labels)
    strips_by_name(obj)["run"].mute = True  # a muted strip is no member: Blender does not play it
    assert sm.sync_groups.sync_groups(obj, sm.strips.core_neighbours(obj)) == []
    assert "blends synchronized with no strip" in " ".join(draw_panel().labels)


def test_each_group_button_is_one_undo_step(walk_run, sm):
    obj = walk_run
    name = obj.name
    synchronized(obj, sm, "walk")
    for operator, check in (
            ("blend_synchronized", lambda o: sm.strips.strip_settings(o, "run").sync_blend),
            ("edit_core", lambda o: sm.strips.strip_settings(o, "run").has_core)):
        bpy.ops.ed.undo_push(message=f"before {operator}")
        assert getattr(bpy.ops.smart_motion, operator)('EXEC_DEFAULT', True, strip="run") == {'FINISHED'}
        assert check(bpy.data.objects[name])
        assert bpy.ops.ed.undo() == {'FINISHED'}
        obj = bpy.data.objects[name]  # (undo reloads the file's data)
        item = sm.strips.strip_settings(obj, "run")
        assert item is None or not check(obj), f"undo left {operator}'s change"
        assert bpy.ops.ed.redo() == {'FINISHED'}
        assert check(bpy.data.objects[name])


def test_a_live_update_follows_a_strip_of_a_group_dragged(walk_late_run, sm):
    obj = walk_late_run
    scene = previewed_half_run(obj, sm)
    strips_by_name(obj)["run"].frame_start_ui = 170  # (a drag: its update runs the live update, headless)
    sm.live.refresh(obj, scene, raising=True)
    assert plan_of(obj)["groups"][0]["strips"] == ["run", "walk"] and obj.smart_motion.live_error == ""
    assert_plays(obj, expected_blend(obj, sm, [0.5, 0.5]))
    assert round(strips_by_name(obj)["run"].frame_start) == 170


def test_a_group_whose_strip_plays_another_skeletons_action_is_refused_by_name(walk_run, sm, tmp_path):
    from scenes import cmu_named_walk

    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    strips_by_name(obj)["run"].action = cmu_named_walk(tmp_path)
    bpy.context.view_layer.objects.active = obj  # (the import made its armature active)
    refused("synthesize", "the synchronized group 'walk \\+ run' of armature 'walk_normal_001' cannot be blended: "
                          "NLA strip 'run' .* it is not an action for this armature; pick the action made for it")


def test_adding_after_a_group_keeps_the_groups_core_as_the_placement_assumed(walk_run, sm):
    """Add as Soon as Possible places after the group's core (the blend's, cut to its frames); the
    new strip overlapping the group's span cuts nothing of that core, so Synthesize joins what
    the placement assumed."""
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    bpy.context.scene.smart_motion.responsiveness = 0.0
    clips, _ = sm.timeline.sequence_clips(obj, sm.strips.selected_strips(obj))
    (group,) = clips
    assumed = [group.start + group.core_range[0], group.start + group.core_range[1]]
    bow = import_action("bow_normal_001")
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.smart_motion.add_asap(action=bow.name) == {'FINISHED'}
    assert strips_by_name(obj)["bow_normal_001"].frame_start <= 195  # over the walk's end: it overlaps the group
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert plan_of(obj)["groups"][0]["core"] == assumed


def test_a_strip_the_nla_does_not_hold_weighs_nothing_outside_its_frames(walk_run, sm):
    """Extrapolation Nothing: the NLA plays the run over its frames only, the walk beneath shows
    before and after it; the group's weights follow (Hold, the default, holds it both ways; Hold
    Forward only after), and the plan says why the run's weight varies."""
    obj = walk_run
    run = strips_by_name(obj)["run"]
    frames = np.array([1, 40, 41, 64, 65, 195])
    assert np.array_equal(sm.sync_groups.strip_influences(run, frames), [1, 1, 1, 1, 1, 1])
    run.extrapolation = 'HOLD_FORWARD'
    assert np.array_equal(sm.sync_groups.strip_influences(run, frames), [0, 0, 1, 1, 1, 1])
    run.extrapolation = 'NOTHING'
    assert np.array_equal(sm.sync_groups.strip_influences(run, frames), [0, 0, 1, 1, 0, 0])

    synchronized(obj, sm, "walk", "run")
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["varying"] == {"run": "extrapolation Nothing", "walk": "under 'run'"}
    scene = np.arange(WALK[1], WALK[1] + 195)
    u = ((scene >= 41) & (scene <= 64)).astype(float)
    assert_plays(obj, expected_blend(obj, sm, [u, 1.0 - u]))

    key = sm.live.timeline_key(obj, bpy.context.scene)
    run.extrapolation = 'HOLD'
    assert sm.live.timeline_key(obj, bpy.context.scene) != key, "a live update follows the extrapolation"


def test_a_strip_of_a_group_not_in_replace_mode_is_warned_of(walk_run, sm, capfd):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    strips_by_name(obj)["run"].blend_type = 'ADD'
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    warning = ("synchronized group 'walk + run': 'run' blends in Add mode in the NLA, but the group weighs its "
               "strips as Replace mode does")
    assert warning in capfd.readouterr().out
    key = sm.live.timeline_key(obj, bpy.context.scene)
    strips_by_name(obj)["run"].blend_type = 'REPLACE'
    assert sm.live.timeline_key(obj, bpy.context.scene) != key
    assert sm.live.refresh(obj, bpy.context.scene, raising=True)  # (the live update drops the warning)
    assert plan_of(obj)["groups"][0]["warnings"] == []


@pytest.mark.parametrize("tracks", [1, 2])
def test_strips_that_butt_are_no_group_but_go_in_sequence(empty_scene, sm, tracks):
    """A walk, and a run starting on the frame it ends on (on its track, or the next): they share
    that frame only, so they play one after the other, not at the same time; with the option on
    both they go in sequence, as they would without it."""
    obj = clips_on_one_armature((WALK, ("run_normal_001", 195, None)), tracks=tracks)
    strips = strips_by_name(obj)
    assert strips["walk"].frame_end == strips["run"].frame_start == 195
    synchronized(obj, sm, "walk", "run")
    assert sm.sync_groups.sync_groups(obj, sm.strips.selected_strips(obj)) == []
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = plan_of(obj)
    assert plan["groups"] == [] and [(p["prev"], p["next"]) for p in plan["pairs"]] == [("walk", "run")]
    if tracks == 2:  # (on one track, Blender lets no strip overlap another)
        strips["run"].frame_start_ui = 194  # two frames shared: a group
        groups = sm.sync_groups.sync_groups(obj, sm.strips.selected_strips(obj))
        assert [sm.sync_groups.group_name(g) for g in groups] == ["walk + run"]


def test_analyze_reads_the_strips_of_a_group_each_on_its_own(walk_run, sm, capfd):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    assert bpy.ops.smart_motion.analyze() == {'FINISHED'}
    assert "support phases found: walk (" in capfd.readouterr().out
    assert sm.report.phases_text(obj, strips_by_name(obj)["run"]).startswith(("DS 41", "LS 41", "RS 41", "NS 41"))


def test_setting_one_end_of_a_core_on_a_strip_of_a_group_keeps_the_other_inside_the_strip(walk_run, sm):
    """The run's fields start from the group's core, frames 1-195, which reaches beyond the run
    (41-64) on both sides: setting its end alone keeps its start within the strip."""
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    item = sm.strips.strip_settings(obj, "run")
    item.core_end = 50
    assert item.has_core and (item.core_start, item.core_end) == (41, 50)
    assert item.core_first >= 0


def pelvis_speeds(obj, frames) -> np.ndarray:
    """The pelvis's horizontal speed (m/s) between the scene ``frames`` as Blender evaluates the
    armature (the preview playing), from the world heads of its pose bone."""
    scene = bpy.context.scene
    pelvis = obj.pose.bones["Hips"]  # (the Bandai rig's pelvis: the clips these tests load)
    heads = []
    for frame in frames:
        scene.frame_set(int(frame))
        heads.append(np.array(obj.matrix_world @ pelvis.head))
    heads = np.array(heads)
    return np.linalg.norm(np.diff(heads[:, :2], axis=0), axis=-1) * scene.render.fps / scene.render.fps_base


def test_a_strip_of_a_group_fades_out_where_it_ends_and_the_body_then_moves_as_the_walk(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    animated_influence(strips_by_name(obj)["run"], {1: 0.5})
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    start, end = group["start"], group["start"] + group["frames"] - 1
    run_end = start + group["ends"]["run"]
    assert run_end < end - 60
    assert any(line.strip().startswith("fades out: run at") for line in sm.report.group_lines(group))
    # the walk's own speed along its warp, after the run has ended
    expected = expected_blend(obj, sm, [0.5, 0.5])
    walk = sm.convert.strip_to_motion(obj, strips_by_name(obj)["walk"])
    rig = sm.convert.find_armature_rig(obj, walk)
    package = type(obj.smart_motion).__module__.rsplit('.', 2)[0]
    motion, analysis = (importlib.import_module(f"{package}.core.{name}") for name in ("motion", "analysis"))
    hips = motion.forward_kinematics(walk.rotations, walk.positions, walk.skeleton.parents, [rig.pelvis],
                                     rotations_out=False)[0][:, 0]
    up = importlib.import_module(f"{package}.core.rig").detect_up(walk, rig)
    own = np.linalg.norm(analysis.horizontal(np.diff(hips, axis=0), up), axis=-1)  # (per own frame)
    warp = np.asarray(expected.plan.warps[1])  # (the run first: the upper track)
    tail = np.arange(int(np.ceil(run_end)) + 1, end + 1)
    walk_speed = np.interp(warp[tail[:-1] - start], np.arange(len(own)), own) * np.diff(warp[tail - start])
    evaluated = pelvis_speeds(obj, tail)
    assert abs(evaluated.mean() - walk_speed.mean() * walk.fps) <= 0.1 * walk_speed.mean() * walk.fps


def test_a_cyclic_strip_shorter_than_its_group_fades_out_where_the_strip_ends(empty_scene, sm):
    """A cyclic clip repeats as long as the blend runs unless it is ended (Ménardais 2004 §4.3); in
    a group the strip's length, its repeats included, is the user's end: the wave goodbye (111
    frames, its last pose its first) stops where its strip does, not at the walk's end."""
    obj = clips_on_one_armature((WALK, ("bye_normal_001", 30, None)), tracks=2)
    synchronized(obj, sm, "walk", "bye")
    animated_influence(strips_by_name(obj)["bye"], {1: 0.5})
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    bye = strips_by_name(obj)["bye"]
    assert group["cyclic"] == ["bye"]
    end = group["start"] + group["frames"] - 1
    assert abs(group["start"] + group["ends"]["bye"] - bye.frame_end) <= 1 and bye.frame_end < end - 40
    assert any(line.strip().startswith("fades out: bye at") for line in sm.report.group_lines(group))


def test_a_strips_legs_weight_is_a_setting_beside_its_group_and_a_gesture_standing_keeps_the_walks_pace(
        empty_scene, sm):
    obj = clips_on_one_armature((WALK, ("bye_normal_001", 30, None)), tracks=2)
    synchronized(obj, sm, "walk", "bye")
    animated_influence(strips_by_name(obj)["bye"], {1: 0.5})
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    walk_frames = strips_by_name(obj)["walk"].frame_end - strips_by_name(obj)["walk"].frame_start + 1
    assert abs(group["frames"] - walk_frames) <= 0.1 * walk_frames
    assert group["part_weights"] == {"bye": {"legs": 0.0, "upper": 1.0, "arms": 1.0}}
    assert any("'bye' stands still" in note for note in group["notes"])
    layout = draw_panel()
    item = sm.strips.strip_settings(obj, strips_by_name(obj)["bye"])
    assert (item, "weigh_parts") in layout.props and (item, "legs_weight") not in layout.props
    before = source_state(obj)

    name = obj.name
    bpy.ops.ed.undo_push(message="before Weigh body parts")  # (as the panel's toggle pushes one)
    item.weigh_parts = True
    item.legs_weight = 1.0
    item.arms_weight = 2.0
    bpy.ops.ed.undo_push(message="Weigh body parts")
    assert (item, "legs_weight") in draw_panel().props
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["part_weights"] == {"bye": {"legs": 1.0, "upper": 1.0, "arms": 2.0}}
    assert not any("stands still" in note for note in group["notes"])
    assert any(line.strip() == "parts: bye arms 2" for line in sm.report.group_lines(group))
    # the setting is the strip's alone: the source strips and their actions are as they were
    assert source_state(obj) == before
    strips = strips_by_name(obj)
    bye, walk = (sm.convert.strip_to_motion(obj, strips[n]) for n in ("bye", "walk"))
    expected = sm.mkm.blend_clips([bye, walk], names=["bye", "walk"], weights=[0.5, 0.5], priorities=[2, 1],
                                  starts=[30, 1], rig=sm.convert.find_armature_rig(obj, bye),
                                  part_weights=[{"legs": 1.0, "upper": 1.0, "arms": 2.0}, None],
                                  ends=[bye.n_frames - 1, walk.n_frames - 1])  # (a strip ends where it ends)
    keyed = preview_values(obj)
    for key, values in keys_of(obj, expected.motion).items():
        assert np.allclose(keyed[key], values, rtol=1e-5, atol=1e-5), key

    # undone, the strip weighs as one again and the gesture standing is out of the legs once more
    assert bpy.ops.ed.undo() == {'FINISHED'}
    obj = bpy.data.objects[name]  # (undo reloads the file's data)
    item = sm.strips.strip_settings(obj, strips_by_name(obj)["bye"])
    assert not item.weigh_parts and item.legs_weight == 1.0 and item.arms_weight == 1.0
    assert source_state(obj) == before
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    assert group["part_weights"] == {"bye": {"legs": 0.0, "upper": 1.0, "arms": 1.0}}


def test_a_one_frame_strip_of_a_group_is_refused_for_its_length_not_for_an_end_never_set(walk_run, sm):
    obj = walk_run
    synchronized(obj, sm, "walk", "run")
    run = strips_by_name(obj)["run"]
    run.action_frame_end = run.action_frame_start + 0.5
    run.frame_end = run.frame_start + 0.5  # (shorter than a frame: one frame sampled)
    motion = sm.convert.strip_to_motion(obj, run)
    assert motion.n_frames == 1
    refused("synthesize", "'run' has 1 frame; a clip to blend needs at least two")


@pytest.mark.parametrize("edited", [None, (1, 195)])
def test_the_group_core_shown_is_the_one_the_plan_synchronized(walk_late_run, sm, edited):
    """Issue 26 item 5: the panel showed the group's core before its cut to the blend's frames (1-414)
    beside the plan's synchronized frames (1-376): both now show the core the synthesis used."""
    obj = walk_late_run
    synchronized(obj, sm, "walk", "run")
    if edited is not None:
        item = sm.strips.strip_settings(obj, strips_by_name(obj)["walk"])
        item.core_start, item.core_end = edited
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (group,) = plan_of(obj)["groups"]
    first, last = group["core"]
    assert group["start"] <= first <= last <= group["start"] + group["frames"] - 1
    labels = draw_panel().labels
    assert any(line.startswith("walk + run synchronized") and line.endswith(f", core {first}-{last}") for line in labels)
    shown = [line for line in labels if line.startswith("Group core ")]
    if edited is None:
        assert shown and set(shown) == {f"Group core {first}-{last}"}, (shown, group["core"])
    fields = [(data.name, data.core_start, data.core_end) for data, name in draw_panel().props if name == "core_start"]
    assert all(field[0] == "walk" for field in fields)  # (an edited core keeps its own fields: it is the user's)


def test_the_same_strips_on_swapped_tracks_make_bake_synthesize_again(walk_late_run, sm):
    """A group weighs its strips by track, the upper over the lower (Ménardais et al. 2004 blend them by
    weight; the NLA's order gives the weights): the same strips, frames, actions and influences on each
    other's tracks blend otherwise, so the preview made before is not what Bake may keep."""
    obj = walk_late_run
    synchronized(obj, sm, "walk", "run")
    scene = bpy.context.scene
    scene.smart_motion.live = False  # (else the live update would bring the preview up to date)
    for name in ("walk", "run"):
        animated_influence(strips_by_name(obj)[name], {1: 0.5})
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    strips = sm.strips.selected_strips(obj)
    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is not None

    placed = {}
    for track in obj.animation_data.nla_tracks:
        for strip in list(track.strips):
            if strip.name in ("walk", "run"):
                placed[strip.name] = (track, strip.action, strip.frame_start, strip.select)
                track.strips.remove(strip)
    (walk_track, *walk), (run_track, *run) = placed["walk"], placed["run"]
    for name, track, (action, start, select) in (("walk", run_track, walk), ("run", walk_track, run)):
        strip = track.strips.new(name, int(start), action)
        strip.select = select
        animated_influence(strip, {1: 0.5})
    strips = sm.strips.selected_strips(obj)
    assert sorted(s.name for s in strips) == ["run", "walk"]

    assert sm.preview.current_preview(obj, strips, scene.smart_motion.responsiveness) is None
