"""Add as Soon as Possible (Oshita 2014, section 5, eq. 17) in Blender, headless, on real clips.

A walk whose core ends at frame 101 and whose strip plays to frame 195; the
bow is added after it. The report is printed as Blender prints an operator's
reports (``Info: ...``).
"""

import json
import re

import bpy
import pytest

from scenes import (all_keys, clips_on_one_armature, cmu_named_walk, import_action, refused, same_keys, snapshot,
                    strips_by_name)

WALK = (("walk_normal_001", 1, (1, 101)),)
WALK_END = 195


@pytest.fixture
def walk(empty_scene):
    obj = clips_on_one_armature(WALK, tracks=1)
    import_action("bow_normal_001")
    bpy.context.view_layer.objects.active = obj
    return obj


def add(action: str, capfd, *args) -> tuple[bpy.types.NlaStrip, str]:
    """Run Add as Soon as Possible; the new strip and the printed report."""
    before = set(strips_by_name(bpy.context.view_layer.objects.active))
    capfd.readouterr()
    assert bpy.ops.smart_motion.add_asap(*args, action=action) == {'FINISHED'}
    report = capfd.readouterr().out
    strips = strips_by_name(bpy.context.view_layer.objects.active)
    (name,) = set(strips) - before
    return strips[name], report


def chosen_start(report: str) -> int:
    return int(re.search(r"added '\w+' at frame (\d+), as soon as it can blend after frame", report).group(1))


def test_a_bow_added_after_a_walk_starts_before_the_walk_strip_ends_and_after_its_core(walk, capfd):
    keys = {a.name: all_keys(a) for a in bpy.data.actions}
    bpy.context.scene.frame_current = 1
    strip, report = add("bow_normal_001", capfd)
    assert 101 < strip.frame_start < WALK_END + 1, "earlier than after the last strip ends, never into its core"
    assert strip.select and strip.frame_end - strip.frame_start == 137, "the whole action, selected"
    assert chosen_start(report) == strip.frame_start
    assert "as soon as it can blend after frame 101 (the core of 'walk')" in report
    assert strips_by_name(walk)["walk"].frame_start == 1 and strips_by_name(walk)["walk"].frame_end == WALK_END
    for name, before in keys.items():
        assert same_keys(before, all_keys(bpy.data.actions[name])), f"action {name!r} was written"
    # Synthesize joins it with the cores the placement assumed: nothing rejected
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert json.loads(walk.smart_motion.plan_json)["rejected"] == []


@pytest.mark.parametrize("playhead", [130, 180, 260])
def test_the_blends_start_after_the_playhead(walk, capfd, playhead):
    bpy.context.scene.frame_current = playhead
    strip, report = add("bow_normal_001", capfd)
    assert strip.frame_start > playhead
    assert f"as soon as it can blend after frame {playhead} (the playhead)" in report
    assert chosen_start(report) == strip.frame_start


def test_a_later_playhead_never_gives_an_earlier_start(walk, capfd):
    starts = []
    for playhead in (1, 120, 200):
        bpy.context.scene.frame_current = playhead
        strip, _ = add("bow_normal_001", capfd)
        starts.append(strip.frame_start)
        strip.id_data.animation_data.nla_tracks.remove(
            next(t for t in strip.id_data.animation_data.nla_tracks if strip.name in t.strips))
    assert starts == sorted(starts), starts


def test_the_new_strip_goes_on_a_track_with_room_else_on_a_new_one(walk, capfd):
    tracks = [t.name for t in walk.animation_data.nla_tracks]
    strip, _ = add("bow_normal_001", capfd)
    assert strip.frame_start <= WALK_END, "it overlaps the walk, so it cannot share its track"
    assert [t.name for t in walk.animation_data.nla_tracks][:len(tracks)] == tracks
    assert len(walk.animation_data.nla_tracks) == len(tracks) + 1
    bpy.context.scene.frame_current = 2000
    later, _ = add("bow_normal_001", capfd)
    assert later.frame_start > 2000
    assert len(walk.animation_data.nla_tracks) == len(tracks) + 1, "room on the first track: no new one"
    assert later.name in walk.animation_data.nla_tracks[0].strips


def test_add_is_one_undo_step_that_takes_the_strip_away(walk, capfd):
    assert bpy.types.SMART_MOTION_OT_add_asap.bl_options >= {'REGISTER', 'UNDO'}
    before = snapshot()
    bpy.ops.ed.undo_push(message="before Add as Soon as Possible")
    # The second argument asks for the undo push the UI makes after an UNDO operator.
    add("bow_normal_001", capfd, 'EXEC_DEFAULT', True)
    assert snapshot() != before
    assert bpy.ops.ed.undo() == {'FINISHED'}
    assert snapshot() == before


def test_an_action_of_another_skeleton_is_refused_by_name(walk, tmp_path):
    cmu_named_walk(tmp_path)
    bpy.context.view_layer.objects.active = walk
    refused("add_asap", r"action 'cmu_walk' animates 4 of the 21 body bones .* of armature "
            r"'walk_normal_001' .* it is not an action for this armature", action="cmu_walk")


def test_without_a_selected_strip_it_says_what_to_select(walk):
    strips_by_name(walk)["walk"].select = False
    refused("add_asap", r"no NLA strip of armature 'walk_normal_001' is selected; select the "
            r"strips that play before 'bow_normal_001'", action="bow_normal_001")


def test_the_panel_has_the_button(walk):
    from scenes import draw_panel

    assert "smart_motion.add_asap" in draw_panel().operators
