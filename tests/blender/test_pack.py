"""Pack Selected Strips (Oshita 2014, section 5, one strip after another) in Blender, headless, on real clips.

A walk, a bow and a punch spread out on one track, far apart: packing pulls
each one as early as it can blend in after the one before it. The bow then
overlaps the walk's strip, so it cannot stay on their track. Reports are
printed as Blender prints an operator's reports (``Info: ...``).
"""

import importlib
import json
import re

import bpy
import pytest

from scenes import (addon_modules, all_keys, clips_on_one_armature, cmu_named_walk, draw_panel, refused, same_keys, snapshot,
                    strips_by_name)

# cores in scene frames: the walk's ends at frame 101, the bow's (its lead-in left out) runs to its strip's end
SPREAD = (
    ("walk_normal_001", 1, (1, 101)),
    ("bow_normal_001", 400, (430, 537)),
    ("punch_normal_001", 800, None),
)


@pytest.fixture
def spread(empty_scene):
    return clips_on_one_armature(SPREAD, tracks=1)


@pytest.fixture
def addon(installed_extension):
    return addon_modules(installed_extension)


def pack(capfd, *args) -> tuple[set, str]:
    capfd.readouterr()
    result = bpy.ops.smart_motion.pack(*args)
    return result, capfd.readouterr().out


def layout(obj, addon) -> dict:
    """``{strip: (track, first frame, last frame, core first, core last)}``, cores in scene frames as synthesis reads them."""
    out = {}
    for track in obj.animation_data.nla_tracks:
        for strip in track.strips:
            first, last = addon.timeline.core_offsets(obj, strip)
            start = round(strip.frame_start)
            out[strip.name] = (track.name, strip.frame_start, strip.frame_end, start + first, start + last)
    return out


def test_packing_pulls_each_strip_earlier_but_never_into_the_core_before_it(spread, addon, capfd):
    before = {name: strip.frame_start for name, strip in strips_by_name(spread).items()}
    keys = {a.name: all_keys(a) for a in bpy.data.actions}
    result, report = pack(capfd)
    assert result == {'FINISHED'}
    after = layout(spread, addon)
    assert after["walk"][1] == before["walk"] == 1, "the first strip stays"
    for name in ("bow", "punch"):
        assert after[name][1] < before[name], f"{name!r} is pulled earlier"
    walk, bow, punch = after["walk"], after["bow"], after["punch"]
    assert bow[3] > walk[4] == 101 and punch[3] > bow[4], "each core after the one before it"
    assert bow[1] <= walk[2], "the bow starts before the walk's strip ends: its lead-in plays over the walk's tail"
    assert bow[3] - bow[1] == 30 and bow[4] == bow[2], "the edited core moved with its strip"
    assert bow[2] - bow[1] == 137 and punch[2] - punch[1] == 223, "lengths kept"
    assert re.search(r"packed 3 strips: 'walk' stays at 1, 'bow' 400 -> (\d+) .*'punch' 800 -> (\d+)", report)
    assert f"'bow' 400 -> {int(bow[1])}" in report and f"'punch' 800 -> {int(punch[1])}" in report
    for name, old in keys.items():
        assert same_keys(old, all_keys(bpy.data.actions[name])), f"action {name!r} was written"


def test_a_strip_that_would_overlap_one_on_its_track_goes_to_a_track_with_room(spread, addon, capfd):
    _, report = pack(capfd)
    after = layout(spread, addon)
    assert after["walk"][0] == after["punch"][0] == "clips 1", "the punch slides along its track"
    assert after["bow"][0] == "[Smart Motion] bow", "the bow overlaps the walk: a new track"
    assert "'bow' 400 -> " in report and "on new track '[Smart Motion] bow', as 'walk' lies there on 'clips 1'" in report
    names = [t.name for t in spread.animation_data.nla_tracks]
    assert names == ["clips 1", "[Smart Motion] bow"], "above the sources"
    bow = strips_by_name(spread)["bow"]
    assert bow.action.name == "bow_normal_001" and bow.select and not bow.mute
    assert (bow.action_frame_start, bow.action_frame_end, bow.scale, bow.repeat) == (1.0, 138.0, 1.0, 1.0)


def test_the_packed_timeline_synthesizes_with_nothing_rejected(spread, capfd):
    pack(capfd)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = json.loads(spread.smart_motion.plan_json)
    assert plan["rejected"] == [] and len(plan["pairs"]) == 2


def test_a_packed_timeline_is_packed_already(spread, capfd):
    pack(capfd)
    before = snapshot()
    result, report = pack(capfd)
    assert result == {'CANCELLED'}
    assert re.search(r"the 3 selected strips are packed already \('walk' at 1, 'bow' at \d+, 'punch' at \d+\); "
                     r"nothing moved", report)
    assert snapshot() == before


def test_pack_is_one_undo_step_that_puts_every_strip_back(spread, capfd):
    assert bpy.types.SMART_MOTION_OT_pack.bl_options >= {'REGISTER', 'UNDO'}
    before = snapshot()
    bpy.ops.ed.undo_push(message="before Pack")
    # The second argument asks for the undo push the UI makes after an UNDO operator.
    assert pack(capfd, 'EXEC_DEFAULT', True)[0] == {'FINISHED'}
    assert snapshot() != before
    assert bpy.ops.ed.undo() == {'FINISHED'}
    assert snapshot() == before


def test_a_strip_of_another_skeleton_is_refused_by_name_with_nothing_moved(spread, tmp_path):
    action = cmu_named_walk(tmp_path)
    bpy.context.view_layer.objects.active = spread
    track = spread.animation_data.nla_tracks.new()
    track.strips.new("cmu", 1200, action).select = True
    refused("pack", r"NLA strip 'cmu' of armature 'walk_normal_001' \(action 'cmu_walk'\) "
            r"animates 4 of the 21 body bones")


def test_one_selected_strip_is_not_packed(spread):
    for name in ("bow", "punch"):
        strips_by_name(spread)[name].select = False
    refused("pack", r"1 NLA strip of armature 'walk_normal_001' selected; select the strips "
            r"to pack, at least two that play")


def test_the_panel_has_the_button_next_to_add_as_soon_as_possible(spread):
    operators = draw_panel().operators
    assert operators[operators.index("smart_motion.add_asap") + 1] == "smart_motion.pack"


def test_an_additional_motion_moves_with_the_strip_it_composes_over(empty_scene, addon, capfd):
    # a run, then far later a walk with a wave on the track above, inside the walk's span (2008, section 8)
    obj = clips_on_one_armature((("bandai2/run_normal_001", 1, None), ("bandai2/walk_normal_001", 400, None),
                                 ("bandai2/wave-right-hand_normal_001", 430, None)), tracks=2)
    result, report = pack(capfd)
    assert result == {'FINISHED'}
    strips = strips_by_name(obj)
    walk, wave = strips["walk"], strips["wave-right-hand"]
    assert walk.frame_start < 400 and wave.frame_start - walk.frame_start == 30, "the wave keeps its place in the walk"
    assert f"'wave-right-hand' 430 -> {int(wave.frame_start)} (with 'walk', which it composes over)" in report
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = json.loads(obj.smart_motion.plan_json)
    assert plan["rejected"] == [] and [c["clip"] for c in plan["compositions"]] == ["wave-right-hand"]


def test_a_strip_that_must_change_track_with_animated_influence_is_refused_with_nothing_moved(spread):
    strips_by_name(spread)["bow"].use_animated_influence = True  # its F-curve lives on the strip itself
    refused("pack", r"NLA strip 'bow' of armature 'walk_normal_001' must leave track 'clips 1' "
            r"\('walk' lies in the way\) but has animated influence")
