"""Smart Motion reads the NLA as Blender plays it: mutes, solo, and the strips' own blends.

Scenes are real clips imported with Blender's BVH importer (``scenes``).
"""

import importlib
import json

import bpy
import numpy as np
import pytest

from scenes import addon_modules, WALK_BOW_PUNCH, clips_on_one_armature, draw_panel, evaluated_heads, preview_segments, strips_by_name

PREVIEW_TRACK = "[Smart Motion preview]"


@pytest.fixture
def walk_bow_punch(empty_scene):
    """walk and punch on track 'clips 1', bow on 'clips 2'; all selected."""
    return clips_on_one_armature(WALK_BOW_PUNCH)


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


def mutes(obj) -> dict:
    return {s.name: s.mute for t in obj.animation_data.nla_tracks if t.name != PREVIEW_TRACK for s in t.strips}


# ---------------------------------------------------------------------------
# Mute and solo


def mute_punch(obj):
    strips_by_name(obj)["punch"].mute = True


def mute_bows_track(obj):
    obj.animation_data.nla_tracks["clips 2"].mute = True


def solo_the_first_track(obj):
    obj.animation_data.nla_tracks["clips 1"].is_solo = True


@pytest.mark.parametrize("operator", ["synthesize", "bake"])
@pytest.mark.parametrize("silence, played, left_out", [
    (mute_punch, ["walk", "bow"], "'punch'"),
    (mute_bows_track, ["walk", "punch"], "'bow'"),
    (solo_the_first_track, ["walk", "punch"], "'bow'"),
])
def test_strips_blender_does_not_play_are_left_out_not_synthesized(walk_bow_punch, operator, silence, played,
                                                                  left_out, capfd):
    """Today a muted strip is synthesized."""
    obj = walk_bow_punch
    silence(obj)
    capfd.readouterr()

    assert getattr(bpy.ops.smart_motion, operator)() == {'FINISHED'}

    plan = plan_of(obj)
    assert list(plan["clips"]) == played and plan["rejected"] == []
    assert f"left out, as Blender does not play them (muted, or another track solo): {left_out}" in capfd.readouterr().out
    assert draw_panel().labels.count("Not played (muted or not solo): left out") == 1


def tracks_state(obj) -> list:
    return [(t.name, t.is_solo, t.mute) for t in obj.animation_data.nla_tracks]


def heads_playing(obj, actions, frames) -> np.ndarray:
    """Blender's pose of ``actions`` alone, on a copy of the armature with no NLA: each frame played
    with the action that keys it (a preview has one per segment, addon/preview.py)."""
    probe = obj.copy()
    bpy.context.scene.collection.objects.link(probe)
    probe.animation_data_clear()
    probe.animation_data_create()
    heads = np.empty((len(frames), len(obj.pose.bones), 3))
    for action in actions:
        first, last = action.frame_range
        keyed = (frames >= first) & (frames <= last)
        if keyed.any():
            probe.animation_data.action = action
            probe.animation_data.action_slot = action.slots[0]
            heads[keyed] = evaluated_heads(probe, frames[keyed])
    bpy.data.objects.remove(probe)
    return heads


def test_with_a_track_solo_blender_plays_the_preview_and_clear_gives_the_solo_back(walk_bow_punch):
    """Before, the preview track was not solo, so Blender played the soloed track, its strips muted: no preview."""
    obj = walk_bow_punch
    solo_the_first_track(obj)
    before = tracks_state(obj)

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}, "again, with the preview holding the solo"

    assert list(plan_of(obj)["clips"]) == ["walk", "punch"], "the strips of the soloed track, as before"
    assert obj.animation_data.nla_tracks[PREVIEW_TRACK].is_solo
    frames = np.arange(1, 400, 37)
    assert np.abs(evaluated_heads(obj, frames) - heads_playing(obj, preview_segments(obj), frames)).max() < 1e-5

    assert bpy.ops.smart_motion.clear() == {'FINISHED'}
    assert tracks_state(obj) == before, "the first track solo again, as it was"
    assert not any(strip.mute for strip in strips_by_name(obj).values())


def test_muted_strips_do_not_count_towards_two(walk_bow_punch):
    for name in ("bow", "punch"):
        strips_by_name(walk_bow_punch)[name].mute = True
    with pytest.raises(RuntimeError, match=r"1 NLA strip of armature 'walk_normal_001' selected; left out, as "
                                           r"Blender does not play them \(muted, or another track solo\): 'bow', "
                                           r"'punch'; select at least two strips that play"):
        bpy.ops.smart_motion.synthesize()


def test_the_preview_leaves_the_users_mutes_and_sources_an_older_preview_muted_count_as_before(walk_bow_punch):
    obj = walk_bow_punch
    mute_punch(obj)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert mutes(obj) == {"walk": False, "bow": False, "punch": True}, "the preview takes the solo, not the mutes"
    assert list(plan_of(obj)["clips"]) == ["walk", "bow"], "punch, muted by the user, does not play"

    # a file saved by an earlier version, whose preview muted its sources
    for name in ("walk", "bow"):
        item = obj.smart_motion.strips[name]
        item.muted_by_preview, item.mute_before = True, False
        strips_by_name(obj)[name].mute = True
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}, "walk and bow, muted by that preview, still play"
    assert list(plan_of(obj)["clips"]) == ["walk", "bow"], "punch, muted before the preview, still does not"
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    assert list(plan_of(obj)["clips"]) == ["walk", "bow"]

    assert mutes(obj) == {"walk": False, "bow": False, "punch": True}, "every mute as it was"


# ---------------------------------------------------------------------------
# Default cores from the NLA's own blend-in and blend-out


@pytest.fixture(scope="module")
def addon(installed_extension):
    return addon_modules(installed_extension)


def test_strips_butted_end_to_end_synthesize_with_no_edits(empty_scene):
    """Today the second is rejected: its core starts at frame 195, where the walk's ends."""
    obj = clips_on_one_armature((("walk_normal_001", 1, None), ("bow_normal_001", 195, None)), tracks=1)
    walk, bow = strips_by_name(obj)["walk"], strips_by_name(obj)["bow"]
    assert walk.frame_end == bow.frame_start == 195

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    plan = plan_of(obj)
    assert plan["rejected"] == [] and [(p["prev"], p["next"]) for p in plan["pairs"]] == [("walk", "bow")]
    # each core stops 3 frames (half the shortest blend, 0.2 s at 30 fps) short of the shared frame 195
    assert (obj.smart_motion.strips["walk"].core_start, obj.smart_motion.strips["walk"].core_end) == (1, 191)
    assert (obj.smart_motion.strips["bow"].core_start, obj.smart_motion.strips["bow"].core_end) == (199, 332)
    assert plan["pairs"][0]["gap"] == [191, 199]
    labels = draw_panel().labels
    assert "(strip minus room to blend with 'bow')" in labels and "(strip minus room to blend with 'walk')" in labels


FOUR_OVERLAPPING = (
    ("walk_normal_001", 1, None),      # 1-195
    ("bow_normal_001", 161, None),     # 161-298, above the walk
    ("punch_normal_001", 270, None),   # 270-493
    ("kick_normal_001", 460, None),    # from 460, above the punch
)


def test_strips_overlapped_with_auto_blend_synthesize_with_no_edits(empty_scene):
    """Today two of these four real clips are rejected until their cores are edited by hand."""
    obj = clips_on_one_armature(FOUR_OVERLAPPING)
    strips = strips_by_name(obj)
    for strip in strips.values():
        strip.use_auto_blend = True  # as a user ticks Auto Blend In/Out: Blender sets the blends to the overlaps
    assert (strips["bow"].blend_in, strips["bow"].blend_out) == (34.0, 28.0)
    assert strips["kick"].blend_in == 33.0

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    plan = plan_of(obj)
    assert plan["rejected"] == []
    assert [p["next"] for p in plan["pairs"]] == ["bow", "punch", "kick"]
    cores = {name: (s.core_start, s.core_end) for name, s in obj.smart_motion.strips.items()}
    assert cores["walk"] == (1, 160), "the walk stops where the bow begins"
    assert cores["bow"] == (196, 269), "the bow starts after its blend-in, ends before its blend-out"
    assert cores["punch"] == (299, 459)
    assert cores["kick"][0] == 494
    shown = " ".join(draw_panel().labels)  # labels wrap
    assert "bow (strip minus blend-in 34, blend-out 28, overlap with 'walk', overlap with 'punch')" in shown


def test_edited_cores_are_kept_as_edited(empty_scene):
    obj = clips_on_one_armature((("walk_normal_001", 1, (1, 100)), ("bow_normal_001", 195, (195, 332))), tracks=1)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert plan_of(obj)["pairs"][0]["gap"] == [100, 195]


LONG_STRIP_WITH_AN_OVERLAY = (("kick_normal_001", 1, None), ("bow_normal_001", 100, None), ("walk_normal_001", 300, None))


def test_a_strip_laid_over_a_longer_one_is_refused_until_edited_and_edit_core_takes_the_whole_strip(
        empty_scene, addon, capfd):
    obj = clips_on_one_armature(LONG_STRIP_WITH_AN_OVERLAY, tracks=3)  # kick 1-358, bow 100-237, walk 300-494
    strips = strips_by_name(obj)
    assert addon.timeline.core_offsets(obj, strips["kick"]) == (0, 95), "the kick stops 3 frames short of the bow"
    assert addon.timeline.core_offsets(obj, strips["walk"]) == (62, 194), "the walk starts 3 frames after the kick ends"

    labels = " ".join(draw_panel().labels)
    assert "No core" in labels and "(no frame left: strip minus room to blend with 'kick' (frames 1-358, all of" in labels
    assert "Synthesis refuses this strip" in labels
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=r"NLA strip 'bow' of armature 'kick_normal_001' leaves no frame for its "
                                           r"default core \(no frame left: strip minus room to blend with 'kick' "
                                           r"\(frames 1-358, all of it\)\); .* Edit Core"):
        bpy.ops.smart_motion.synthesize()

    assert bpy.ops.smart_motion.edit_core(strip="bow") == {'FINISHED'}
    bow = obj.smart_motion.strips["bow"]
    assert bow.has_core and (bow.core_start, bow.core_end) == (100, 237), "the whole strip, not one frame"
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert [p["next"] for p in plan_of(obj)["pairs"]] == ["bow", "walk"]
