"""Bad input gets a message saying what to fix, and changes nothing.

An operator's error report reaches a Python caller of ``bpy.ops`` as a
``RuntimeError`` carrying the message (the UI shows the same report); a
warning is printed. Every case compares a snapshot of the file before and
after: actions and their keys, tracks, strips, flags, settings.
"""

import importlib
import json

import bpy
import numpy as np
import pytest

from scenes import (
    addon_modules, WALK_BOW_PUNCH, clips_on_one_armature, cmu_named_walk, draw_panel, ensure_channelbag, new_fcurve, refused,
    strips_by_name,
)

OPERATORS = ("analyze", "synthesize", "bake")


@pytest.fixture
def walk_bow_punch(empty_scene):
    return clips_on_one_armature(WALK_BOW_PUNCH)


def select_only(obj, *names) -> None:
    for name, strip in strips_by_name(obj).items():
        strip.select = name in names


@pytest.mark.parametrize("operator", OPERATORS + ("clear",))
def test_no_active_object(empty_scene, operator):
    bpy.context.view_layer.objects.active = None
    refused(operator, r"no active object: click the armature")


@pytest.mark.parametrize("operator", OPERATORS + ("clear",))
def test_an_active_object_that_is_not_an_armature(walk_bow_punch, operator):
    mesh = bpy.data.objects.new("Box", bpy.data.meshes.new("Box"))
    bpy.context.scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh
    refused(operator, r"the active object 'Box' is a mesh, not an armature")


@pytest.mark.parametrize("selected", [(), ("bow",)])
@pytest.mark.parametrize("operator", ["synthesize", "bake"])
def test_fewer_than_two_strips(walk_bow_punch, operator, selected):
    select_only(walk_bow_punch, *selected)
    refused(operator, rf"{len(selected)} NLA strips? of armature 'walk_normal_001' selected; select at least two")


def test_analyze_without_a_selected_strip(walk_bow_punch):
    select_only(walk_bow_punch)
    refused("analyze", r"no NLA strip of armature 'walk_normal_001' is selected")


@pytest.mark.parametrize("operator", OPERATORS)
def test_strips_of_another_object(walk_bow_punch, operator):
    other = bpy.data.objects.new("Other", bpy.data.armatures.new("Other"))
    bpy.context.scene.collection.objects.link(other)
    other.animation_data_create()
    other.animation_data.nla_tracks.new().strips.new("wave", 1, strips_by_name(walk_bow_punch)["walk"].action)
    refused(operator, r"NLA strips of another object are selected: 'wave' of 'Other'.*make their object active")


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_strip_without_an_action(walk_bow_punch, operator):
    strips_by_name(walk_bow_punch)["bow"].action = None
    refused(operator, r"NLA strip 'bow' of armature 'walk_normal_001' has no action")


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_strip_whose_action_animates_no_bone_of_the_armature(walk_bow_punch, operator):
    wag = bpy.data.actions.new("tail wag")
    slot = wag.slots.new(id_type='OBJECT', name="Dog")
    fcurve = new_fcurve(ensure_channelbag(wag, slot), 'pose.bones["Tail"].location', 0)
    fcurve.keyframe_points.add(2)
    fcurve.keyframe_points.foreach_set("co", np.array([1.0, 0.0, 100.0, 1.0], dtype=np.float32))
    walk_bow_punch.animation_data.nla_tracks.new().strips.new("wag", 600, wag)
    refused(operator, r"NLA strip 'wag' of armature 'walk_normal_001'.*animates no bone")


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_zero_length_strip(walk_bow_punch, operator):
    strip = strips_by_name(walk_bow_punch)["punch"]
    strip.frame_end = strip.frame_start
    refused(operator, r"NLA strip 'punch' of armature 'walk_normal_001' is zero frames long")


@pytest.mark.parametrize("operator", ["synthesize", "bake"])
def test_a_strip_starting_between_frames(walk_bow_punch, operator):
    strips_by_name(walk_bow_punch)["punch"].frame_start_ui = 300.5
    refused(operator, r"NLA strip 'punch' of armature 'walk_normal_001' starts between frames, at 300.5")


@pytest.mark.parametrize("operator", OPERATORS)
def test_tweak_mode(walk_bow_punch, operator):
    walk_bow_punch.animation_data.use_tweak_mode = True
    assert walk_bow_punch.animation_data.use_tweak_mode
    refused(operator, r"the NLA of armature 'walk_normal_001' is in tweak mode; leave it first")


# ---------------------------------------------------------------------------
# Rigs whose legs cannot be found, and the Bone Mapping that maps them


def snake(installed_extension) -> bpy.types.Object:
    """A four-bone chain with two strips: nothing that could be legs."""
    core = importlib.import_module(f"{installed_extension}.core.motion")
    convert = importlib.import_module(f"{installed_extension}.addon.convert")
    skeleton = core.Skeleton(
        ("head", "neck", "body", "tail"), [-1, 0, 1, 2], np.array([[0, 0, 0.2], [0, 0.2, 0], [0, 0.3, 0], [0, 0.3, 0]]),
        up=np.array([0.0, 0.0, 1.0]),
    )
    obj = convert.armature_from_skeleton(skeleton, "Snake")
    angles = np.linspace(0.0, 1.0, 30)
    rotations = np.zeros((30, 4, 4))
    rotations[..., 0] = np.cos(angles / 2)[:, None]
    rotations[..., 3] = np.sin(angles / 2)[:, None]
    positions = np.broadcast_to(skeleton.offsets, (30, 4, 3))
    action = convert.write_action(obj, core.Motion(skeleton, rotations, positions, 30.0), "slither", frame_start=1)
    track = obj.animation_data_create().nla_tracks.new()
    track.strips.new("slither", 1, action)
    track.strips.new("slither again", 40, action)
    return obj


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_rig_whose_legs_cannot_be_found_says_what_was_found_and_how_to_map(empty_scene, installed_extension, operator):
    snake(installed_extension)
    refused(operator, r"armature 'Snake': cannot find the legs.*Joints: head, neck, body, tail.*Bone Mapping field, e\.g\. left\.hip=")


def test_the_bone_mapping_reaches_the_rig_finder(walk_bow_punch):
    walk_bow_punch.smart_motion.bone_mapping = "left.ankle=Foot_L, right.ankle=Nope"
    refused("synthesize", r"override 'right.ankle' names joint 'Nope', which is not in the skeleton; available joints are: joint_Root")

    walk_bow_punch.smart_motion.bone_mapping = "left.ankle = Foot_L, right.ankle = Foot_R; left.toe=none, right.toe=none"
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}


def test_a_bone_mapping_that_is_not_role_bone_pairs(walk_bow_punch):
    walk_bow_punch.smart_motion.bone_mapping = "Foot_L"
    refused("synthesize", r"Bone Mapping: 'Foot_L' is not ROLE=BONE")


# ---------------------------------------------------------------------------
# Overlapping cores: the strip is rejected, named, and the rest still synthesize


@pytest.mark.parametrize("operator", ["synthesize", "bake"])
def test_a_core_overlapping_the_previous_one_rejects_that_strip_only(walk_bow_punch, operator, capfd):
    obj = walk_bow_punch
    obj.smart_motion.strips["walk"].core_end = 190  # the bow's core starts at 181

    assert getattr(bpy.ops.smart_motion, operator)() == {'FINISHED'}

    plan = json.loads(obj.smart_motion.plan_json)
    assert [r["clip"] for r in plan["rejected"]] == ["bow"]
    assert [(p["prev"], p["next"]) for p in plan["pairs"]] == [("walk", "punch")]
    warning = capfd.readouterr().out
    assert "Warning: strip 'bow' rejected: its core (output frames 181.." in warning
    assert "overlaps the core of 'walk' (output frames 1..190)" in warning
    assert "Rejected bow" in draw_panel().labels


# ---------------------------------------------------------------------------
# Actions that are not for this armature, and cores outside their strips


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_strip_whose_action_has_f_curves_but_no_keys(walk_bow_punch, operator):
    empty = strips_by_name(walk_bow_punch)["bow"].action.copy()
    empty.name = "unkeyed"
    for fcurve in empty.layers[0].strips[0].channelbags[0].fcurves:
        fcurve.keyframe_points.clear()
    walk_bow_punch.animation_data.nla_tracks.new().strips.new("unkeyed", 600, empty)
    refused(operator, r"NLA strip 'unkeyed' of armature 'walk_normal_001' \(action 'unkeyed'\) has 132 F-curves "
                      r"but no keys; key the action, or pick one with keys")


@pytest.mark.parametrize("operator", OPERATORS)
def test_a_cmu_action_on_a_bandai_rig_is_refused_with_the_names(walk_bow_punch, operator, tmp_path):
    """Today it is synthesized and baked without a word, the limbs at rest."""
    action = cmu_named_walk(tmp_path)
    bpy.context.view_layer.objects.active = walk_bow_punch
    walk_bow_punch.animation_data.nla_tracks.new().strips.new("cmu walk", 600, action)
    refused(operator, r"NLA strip 'cmu walk' of armature 'walk_normal_001' \(action 'cmu_walk'\) animates 4 of the "
                      r"21 body bones \(pelvis, spine, legs, arms\) of armature 'walk_normal_001' \(Hips, Spine, Neck, "
                      r"Head\) and 18 bones the armature does not have \(LeftArm, LeftFoot, .* and 10 more\), leaving "
                      r"Chest, Shoulder_L, .* at rest: "
                      r"it is not an action for this armature")


@pytest.mark.parametrize("operator", OPERATORS)
def test_an_action_animating_under_half_the_bones_is_refused_with_the_names(walk_bow_punch, operator):
    arms = {f"{part}_{side}" for part in ("Shoulder", "UpperArm", "LowerArm", "Hand") for side in "LR"}
    wave = strips_by_name(walk_bow_punch)["bow"].action.copy()
    wave.name = "arms only"
    fcurves = wave.layers[0].strips[0].channelbags[0].fcurves
    for fcurve in list(fcurves):
        if not any(f'"{bone}"' in fcurve.data_path for bone in arms):
            fcurves.remove(fcurve)
    walk_bow_punch.animation_data.nla_tracks.new().strips.new("arms", 600, wave)
    refused(operator, r"NLA strip 'arms' .* animates 8 of the 21 body bones "
                      r"\(pelvis, spine, legs, arms\) of armature 'walk_normal_001' \(Shoulder_L, UpperArm_L, .*\), "
                      r"leaving Hips, .* at rest")


def add_unanimated_bones(obj) -> int:
    """Fingers (three bones each) on both hands and a twist bone on each limb, as a production rig has.

    Added in Edit Mode, as a user would; no action animates them. Returns how many.
    """
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='EDIT')
    bones = obj.data.edit_bones
    added = 0
    for side in "LR":
        hand = bones[f"Hand_{side}"]
        for finger in ("thumb", "index", "middle", "ring", "pinky"):
            parent = hand
            for k in range(3):
                bone = bones.new(f"{finger}_{k + 1}_{side}")
                bone.head = parent.tail
                bone.tail = bone.head + (parent.tail - parent.head).normalized() * 0.02 + hand.z_axis * 0.001
                bone.parent = parent
                parent = bone
                added += 1
        for limb in ("UpperArm", "LowerArm", "UpperLeg", "LowerLeg"):
            bone = bones.new(f"{limb}_twist_{side}")
            bone.head, bone.tail = bones[f"{limb}_{side}"].head, bones[f"{limb}_{side}"].tail
            bone.parent = bones[f"{limb}_{side}"]
            added += 1
    bpy.ops.object.mode_set(mode='OBJECT')
    return added


@pytest.mark.parametrize("operator", OPERATORS)
def test_body_mocap_on_a_rig_with_fingers_and_twist_bones_is_synthesized(walk_bow_punch, operator):
    """Before, 22 animated of the 60 bones was refused as 'not an action for this armature'."""
    assert add_unanimated_bones(walk_bow_punch) == 38
    assert len(walk_bow_punch.data.bones) == 60
    assert getattr(bpy.ops.smart_motion, operator)() == {'FINISHED'}
    if operator != "analyze":
        assert json.loads(walk_bow_punch.smart_motion.plan_json)["rejected"] == []


@pytest.mark.parametrize("operator", ["synthesize", "bake"])
def test_a_core_reaching_past_its_shortened_strip_is_an_error_not_a_silent_clamp(walk_bow_punch, operator):
    bow = strips_by_name(walk_bow_punch)["bow"]
    bow.frame_end_ui = 250  # the bow's core is 181-288
    assert bow.frame_end == 250
    refused(operator, r"the core of NLA strip 'bow' of armature 'walk_normal_001', frames 181-288, reaches past the "
                      r"strip, which ends at frame 250; edit the core")
