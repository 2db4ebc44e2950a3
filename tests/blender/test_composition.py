"""Motion composition (Oshita 2008, section 8) in Blender, headless, on real clips.

The Bandai walk on one track and, on the track above, a clip lying wholly
inside the walk's span. A wave moves one arm over the threshold and stays in
place: an additional motion, composed over the walk. A turning walk does not
qualify: it goes in sequence, as any strip laid over another.
"""

import importlib
import json

import bpy
import numpy as np
import pytest

from scenes import addon_modules, all_keys, clips_on_one_armature, draw_panel, evaluated_heads, same_keys, strips_by_name

WALK = ("bandai2/walk_normal_001", 1, None)  # frames 1-273
INSIDE = 31  # where the inner strip starts, on the track above the walk's
WAVE, TURN = "wave-right-hand", "walk-turn-left"  # strips are named after the clip's first word


def walk_and(inner: str):
    return clips_on_one_armature((WALK, (f"bandai2/{inner}_normal_001", INSIDE, None)), tracks=2)


@pytest.fixture
def wave(empty_scene):
    return walk_and(WAVE)


@pytest.fixture
def turn(empty_scene):
    return walk_and(TURN)


@pytest.fixture(scope="module")
def addon(installed_extension):
    return addon_modules(installed_extension)


def bone_heads(obj, names, frames) -> np.ndarray:
    """Blender's evaluated heads of bones ``names`` ``(F, len(names), 3)``, armature space."""
    index = [obj.pose.bones.find(name) for name in names]
    return evaluated_heads(obj, frames)[:, index]


def walk_alone(obj, names, frames) -> np.ndarray:
    """What the walk strip plays, the inner strip muted for the while."""
    inner = strips_by_name(obj)[WAVE]
    inner.mute = True
    heads = bone_heads(obj, names, frames)
    inner.mute = False
    return heads


FEET = ["Foot_L", "Foot_R", "Toes_L", "Toes_R"]


def test_a_wave_inside_the_walk_is_composed_over_it_not_rejected(wave):
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = json.loads(wave.smart_motion.plan_json)
    assert plan["rejected"] == [] and plan["pairs"] == []
    (composition,) = plan["compositions"]
    assert (composition["clip"], composition["base"], composition["parts"]) == (WAVE, "walk", "right arm")
    assert INSIDE <= composition["blend_in"][0] and composition["blend_out"][1] <= INSIDE + 186
    assert (plan["start"], plan["end"]) == (1, 273), "the walk's frames"


def test_the_composite_feet_follow_the_walk_and_the_right_hand_the_wave(wave):
    frames = range(1, 274, 4)
    feet_before = walk_alone(wave, FEET, frames)
    hands_before = walk_alone(wave, ["Hand_L", "Hand_R"], frames)
    keys = all_keys(bpy.data.actions["walk_normal_001"])
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    feet = bone_heads(wave, FEET, frames)
    hands = bone_heads(wave, ["Hand_L", "Hand_R"], frames)
    height = np.ptp(evaluated_heads(wave, [1])[0][:, 2])
    assert np.abs(feet - feet_before).max() < 1e-4 * height, "the walk's feet, as Blender evaluates the preview"
    moved = np.linalg.norm(hands - hands_before, axis=-1).max(axis=0)
    assert moved[1] > 0.2 * height and moved[1] > 3 * moved[0], "the right hand waves; the left walks on"
    assert same_keys(keys, all_keys(bpy.data.actions["walk_normal_001"])), "the walk's action is not written"


def test_the_wave_cuts_no_core_of_the_walk_and_keeps_its_whole_strip(wave, addon):
    strips = strips_by_name(wave)
    walk, inner = (addon.timeline.strip_default_core(wave, strips[name]) for name in ("walk", WAVE))
    assert (walk.first, walk.last, walk.why()) == (1, 273, "whole strip")
    assert (inner.first, inner.last) == (INSIDE, INSIDE + 186)
    assert inner.why() == "whole strip: lies inside 'walk' and moves its right arm, so it composes over it"


def test_a_strip_inside_one_the_last_synthesis_rejected_is_a_neighbour_as_the_engine_reruns_it(wave, addon):
    """Issue 25: the add-on's copy of the composition rule lacked core's rerun when the base clip is
    rejected, so the panel and the engine could disagree. The rule is core.timeline's now, given the
    recorded plan's rejections: with the walk rejected, the wave has nothing to compose over."""
    strips = strips_by_name(wave)
    wave.smart_motion.plan_json = json.dumps({"rejected": [{"clip": "walk", "reason": "(a test)"}]})
    walk, inner = (addon.timeline.strip_default_core(wave, strips[name]) for name in ("walk", WAVE))
    assert not inner.over and f"room to blend with {WAVE!r}" in walk.why(), "the wave goes in sequence"


def test_a_wave_that_would_play_before_the_first_core_goes_in_sequence_as_the_engine_orders_clips(empty_scene,
                                                                                                    addon):
    """Issue 25: the add-on took strips in start order, so core's rule that an additional motion
    starting before the sequence's first clip goes in sequence never fired. It takes them in playing
    order now (by core, an edited one's where set), as the engine does: with the walk's core set to
    begin at 150, a bow (its core 40-120) plays first, and the wave from 31 has nothing to compose over."""
    obj = clips_on_one_armature((("bandai2/walk_normal_001", 1, (150, 273)), ("bandai2/wave-right-hand_normal_001",
                                 INSIDE, None), ("bow_normal_001", 40, (40, 120))), tracks=3)
    strips = strips_by_name(obj)
    inner = addon.timeline.strip_default_core(obj, strips[WAVE])
    assert not inner.over, inner.why()


def test_the_panel_lists_the_composition_and_says_so_under_the_strip(wave):
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    labels = draw_panel().labels
    assert "composed over 'walk' (right arm)" in labels
    assert f"{WAVE} composed over walk: right arm" in labels
    assert any(label.startswith("    blend in ") and ", out " in label for label in labels)
    assert any(label.startswith("    vibration: pelvis ") and "spine" in label for label in labels)


def test_a_turn_inside_the_walk_does_not_qualify_and_goes_in_sequence_as_before(turn, addon):
    strips = strips_by_name(turn)
    walk = addon.timeline.strip_default_core(turn, strips["walk"])
    assert walk.last < INSIDE and f"room to blend with {TURN!r}" in walk.why(), "the turn cuts the walk's core"
    # its default core is all under the walk's strip, as for any strip laid over another
    with pytest.raises(RuntimeError, match=rf"NLA strip '{TURN}' of armature 'walk_normal_001' leaves no frame for "
                                           r"its default core"):
        bpy.ops.smart_motion.synthesize()
    assert bpy.ops.smart_motion.edit_core(strip=TURN) == {'FINISHED'}
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = json.loads(turn.smart_motion.plan_json)
    assert plan.get("compositions", []) == [] and plan["rejected"] == []
    assert [(p["prev"], p["next"]) for p in plan["pairs"]] == [("walk", TURN)], "joined in sequence"
