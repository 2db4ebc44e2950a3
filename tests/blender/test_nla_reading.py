"""Smart Motion reads the NLA as Blender plays it: mutes, solo, and the strips' own blends.

Scenes are real clips imported with Blender's BVH importer (``scenes``).
"""

import importlib
import json

import bpy
import pytest

from scenes import WALK_BOW_PUNCH, clips_on_one_armature, draw_panel, strips_by_name


@pytest.fixture
def walk_bow_punch(empty_scene):
    """walk and punch on track 'clips 1', bow on 'clips 2'; all selected."""
    return clips_on_one_armature(WALK_BOW_PUNCH)


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


def mutes(obj) -> dict:
    return {name: strip.mute for name, strip in strips_by_name(obj).items() if name != "Smart Motion preview"}


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


def test_muted_strips_do_not_count_towards_two(walk_bow_punch):
    for name in ("bow", "punch"):
        strips_by_name(walk_bow_punch)[name].mute = True
    with pytest.raises(RuntimeError, match=r"1 NLA strip of armature 'walk_normal_001' selected; left out, as "
                                           r"Blender does not play them \(muted, or another track solo\): 'bow', "
                                           r"'punch'; select at least two strips that play"):
        bpy.ops.smart_motion.synthesize()


def test_sources_muted_by_the_preview_count_with_the_mute_they_had_before(walk_bow_punch):
    obj = walk_bow_punch
    mute_punch(obj)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert mutes(obj) == {"walk": True, "bow": True, "punch": True}

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}, "walk and bow, muted by the preview, still play"
    assert list(plan_of(obj)["clips"]) == ["walk", "bow"], "punch, muted before the preview, still does not"
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    assert list(plan_of(obj)["clips"]) == ["walk", "bow"]

    assert mutes(obj) == {"walk": False, "bow": False, "punch": True}, "every mute as it was"
