"""Edge cases a user found (issue 26 item 5), each as Blender shows it."""

import json

import bpy
import pytest

from scenes import WALK_BOW_PUNCH, addon_modules, clips_on_one_armature, strips_by_name

PREVIEW_TRACK = "[Smart Motion preview]"


@pytest.fixture
def sm(installed_extension):
    return addon_modules(installed_extension)


@pytest.fixture
def walk_bow_punch(empty_scene):
    """walk and punch on track 'clips 1', bow on 'clips 2'; all selected."""
    return clips_on_one_armature(WALK_BOW_PUNCH)


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


# ---------------------------------------------------------------------------
# Solo: by the track itself, not by its name


def test_tracks_of_one_name_solo_apart(walk_bow_punch, sm):
    """Two tracks called alike, as Assemble Parts and Reach Target made them: with the first soloed,
    Blender does not play the second's strip, and neither does Synthesize."""
    obj = walk_bow_punch
    tracks = obj.animation_data.nla_tracks
    tracks["clips 2"].name = "clips 1"  # the bow's track, now of the walk's track's name
    walk_track, bow_track = tracks[0], tracks[1]
    assert walk_track.name == bow_track.name
    walk_track.is_solo = True
    bow = strips_by_name(obj)["bow"]
    assert not sm.strips.plays(obj, bow)
    assert [s.name for s in sm.strips.selected_strips(obj)] == ["walk", "punch"]
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert list(plan_of(obj)["clips"]) == ["walk", "punch"] and plan_of(obj)["rejected"] == []
    # the preview holds the solo: the walk's track is found again, not the bow's of the same name
    assert tracks[PREVIEW_TRACK].is_solo
    assert not sm.strips.plays(obj, bow) and sm.strips.plays(obj, strips_by_name(obj)["walk"])
    assert bpy.ops.smart_motion.clear() == {'FINISHED'}
    assert walk_track.is_solo and not bow_track.is_solo


def test_the_solo_is_found_again_after_its_track_is_renamed(walk_bow_punch, sm):
    obj = walk_bow_punch
    tracks = obj.animation_data.nla_tracks
    tracks["clips 1"].is_solo = True
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    tracks["clips 1"].name = "walking"
    assert sm.strips.solo_track(obj) == tracks["walking"]
    assert bpy.ops.smart_motion.clear() == {'FINISHED'}
    assert tracks["walking"].is_solo


def test_new_tracks_get_names_of_their_own(walk_bow_punch, sm):
    obj = walk_bow_punch
    made = [sm.clips.track_above(obj, [], 1, 10, "[Smart Motion] assembly", reuse=False) for _ in range(3)]
    names = [t.name for t in made]
    assert len(set(names)) == 3 and names[0] == "[Smart Motion] assembly", names


def test_the_preview_gets_its_solo_back_once_a_source_is_un_soloed(walk_bow_punch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    tracks = obj.animation_data.nla_tracks
    tracks["clips 1"].is_solo = True  # the user listens to one track alone
    bpy.context.view_layer.update()
    assert not tracks[PREVIEW_TRACK].is_solo, "the user's solo is left alone while it lasts"
    tracks["clips 1"].is_solo = False
    bpy.context.view_layer.update()
    assert tracks[PREVIEW_TRACK].is_solo
    assert bpy.ops.smart_motion.clear() == {'FINISHED'}
    assert not any(t.is_solo for t in tracks), "no track was solo before: none is after"


# ---------------------------------------------------------------------------
# The shortest blend, to the frame


def test_cores_leaving_the_shortest_blend_give_no_jump_warning_at_the_importers_rate(empty_scene):
    """Blender's BVH importer sets the scene to 30 / 0.999999 fps for 30 fps capture (the file's frame
    time, 0.033333 s): cores 6 frames apart leave 0.2 s to the frame, the shortest blend."""
    obj = clips_on_one_armature((("walk_normal_001", 1, (1, 101)), ("bow_normal_001", 78, (108, 215))))
    render = bpy.context.scene.render
    assert render.fps_base != 1.0 and round(0.2 * render.fps / render.fps_base) == 6
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (pair,) = plan_of(obj)["pairs"]
    assert pair["gap"] == [101, 108] and not pair.get("warning")


# ---------------------------------------------------------------------------
# Wording


def test_a_perform_script_s_example_names_actions_the_file_holds(walk_bow_punch):
    held = {a.name for a in bpy.data.actions}
    with pytest.raises(RuntimeError, match="is not FRAME:ACTION; write e.g. ") as error:
        bpy.ops.smart_motion.perform(script="40 bow_normal_001")
    example = str(error.value).split("write e.g. ")[1].split("\n")[0]
    named = [piece.split(":")[1].strip() for piece in example.split(",")]
    assert named and set(named) <= held, (named, held)
    with pytest.raises(RuntimeError, match=r"there is no action 'bow_normal_01'; name one of the file's actions, "
                                           r"such as 'bow_normal_001'"):
        bpy.ops.smart_motion.perform(script="40:bow_normal_01")


def test_a_count_of_one_is_singular_and_no_quoted_name_takes_an_apostrophe_s(walk_bow_punch):
    for name, strip in strips_by_name(walk_bow_punch).items():
        strip.select = name == "walk"
    with pytest.raises(RuntimeError, match="1 NLA strip of armature 'walk_normal_001' selected: Insert Hop") as error:
        bpy.ops.smart_motion.insert_hop()
    assert "1 NLA strips" not in str(error.value)


def test_no_message_of_the_add_on_puts_an_apostrophe_s_after_a_quoted_name():
    """``'bow_old_001''s``: a name printed quoted (``!r``) and then a possessive reads as a typo."""
    import re
    from pathlib import Path

    sources = Path(__file__).resolve().parents[2]
    found = [f"{path.name}:{k + 1}" for folder in ("addon", "core") for path in sorted((sources / folder).glob("*.py"))
             for k, line in enumerate(path.read_text().splitlines()) if re.search(r"(!r\}|\}')'s\b", line)]
    assert not found, found


# ---------------------------------------------------------------------------
# An action of another body


def body_with_its_height_keyed(package: str, clip: str, scale: float, path) -> str:
    """``clip`` as a BVH file of a body ``scale`` times its size whose root joints rest at the origin, so that
    the root's height is in its keys (as CMU's and many exporters' files have it): its action, played on
    another armature of the same bone names, keeps that height. Written with core's BVH writer."""
    import importlib
    from dataclasses import replace

    from scenes import clip_path

    bvh = importlib.import_module(f"{package}.core.bvh")
    motion = bvh.read_bvh(clip_path(clip)).scaled(scale)
    rig = importlib.import_module(f"{package}.core.rig").find_rig(motion)
    offsets = motion.skeleton.offsets.copy()
    parents, joint = motion.skeleton.parents, rig.pelvis
    while joint >= 0:  # (the pelvis and the joints above it rest at the origin; their keys carry the height)
        offsets[joint] = 0.0
        joint = parents[joint]
    motion = replace(motion, skeleton=replace(motion.skeleton, offsets=offsets))
    bvh.write_bvh(motion, path)
    return str(path)


def test_an_action_captured_on_a_larger_body_is_synthesized_with_a_warning(empty_scene, installed_extension, tmp_path):
    """Issue 26 item 5: an action of a body 25 % larger, same bone names, played on the armature: its root
    stands 25 % higher than these legs reach, and its feet float. The plan says so, naming it."""
    from scenes import examples_on_one_armature

    files = [body_with_its_height_keyed(installed_extension, "walk_normal_001", 1.0, tmp_path / "walk.bvh"),
             body_with_its_height_keyed(installed_extension, "bow_normal_001", 1.25, tmp_path / "tall_bow.bvh")]
    obj, (walk, bow) = examples_on_one_armature(files)
    tracks = [obj.animation_data.nla_tracks.new() for _ in range(2)]
    tracks[0].strips.new("walk", 1, walk).select = True
    tracks[1].strips.new("tall bow", 151, bow).select = True
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    warnings = plan_of(obj)["warnings"]
    assert any("the feet of 'tall bow' float" in w and "where those of 'walk' stand" in w for w in warnings), warnings
