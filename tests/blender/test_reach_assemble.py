"""Reach Target and Assemble Parts (Juang et al. 2009) in Blender, headless, on real clips.

Reach: eight captured raises of the right hand (bandai2-raise, one in five,
every style) on the armature of the first, as the user imports them; the
Empty is placed between their hit points. What Blender evaluates is
measured: the hand's head, carried into the world by the armature's matrix,
at the frame the reach reports.

Assembly: bandai1's walk as a strip, its punch and kick as the file's other
actions; the upper body comes from the punch, the legs stay the walk's.
"""

import json
import shutil
from pathlib import Path

import bpy
import numpy as np
import pytest
from real_capture import require

from scenes import (all_keys, clip_path, clips_on_one_armature, cmu_named_walk, draw_panel, examples_on_one_armature,
                    extension, import_action, refused, same_keys, saved_scene, snapshot, strips_by_name)

RAISES = Path(__file__).resolve().parents[2].parent / "shared" / "mocap" / "bandai2-raise"
def raise_files() -> list[Path]:
    """One raise in five of bandai2-raise, by name: eight examples, every style among them."""
    files = sorted(require(RAISES).glob("*.bvh"))
    assert len(files) == 40, f"bandai2-raise's 40 raises are expected in {RAISES}"
    return files[::5]


# ---------------------------------------------------------------- Reach Target: the scene


@pytest.fixture(scope="module")
def reach_file(tmp_path_factory, installed_extension):
    """The first raise's armature, no action assigned, and the eight raises as its Reach Examples; saved."""
    def build():
        obj, actions = examples_on_one_armature(raise_files())
        for action in reversed(actions):  # (the list's order is not the examples' order: they go by name)
            obj.smart_motion.reach_examples.add().action = action
        bpy.ops.object.empty_add(location=(0, 0, 0))
        return obj

    return saved_scene(tmp_path_factory, installed_extension, "reach", build)


@pytest.fixture
def reach_scene(reach_file):
    bpy.ops.wm.open_mainfile(filepath=str(reach_file))
    obj = bpy.data.objects[raise_files()[0].stem]
    bpy.context.view_layer.objects.active = obj
    bpy.context.scene.frame_current = 20
    return obj


def example_motions(obj) -> list:
    convert = extension("addon.convert")
    return [convert.action_to_motion(obj, row.action)
            for row in sorted(obj.smart_motion.reach_examples, key=lambda r: r.action.name)]


def inside_target(obj, effector: str = "right.wrist", feature: str = "highest") -> np.ndarray:
    """A point whole-body blending reaches, in the armature's space: the hit point of the even blend
    of the second and third examples, placed as the first starts (core.reach's registration and blends).
    (Not the midpoint of their hit points: the hull of the hit points holds points no blend hits.)"""
    reach = extension("core.reach")
    space = reach.ReachSpace.build(example_motions(obj), effector=effector, feature=feature, n_blends=0)
    weights = np.zeros(len(space.registration.motions))
    weights[1:3] = 0.5
    return space.chains.hits(weights[None], between_frames=True)[0][0]


def effector_bone(obj, effector: str = "right.wrist") -> str:
    """The bone of the rig role ``effector``."""
    skeleton, _ = extension("addon.convert").armature_skeleton(obj)
    return extension("core.rig").find_rig(skeleton).names[effector]


def evaluated_hand(obj, frame: int, effector: str = "right.wrist") -> np.ndarray:
    """The effector's (the right hand's) head in the world, as Blender evaluates ``obj`` at scene ``frame``."""
    bpy.context.scene.frame_set(frame)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    head = evaluated.pose.bones[effector_bone(obj, effector)].head
    return np.array(evaluated.matrix_world @ head)


def reach(capfd, *args) -> str:
    capfd.readouterr()
    assert bpy.ops.smart_motion.reach_target(*args) == {'FINISHED'}
    return capfd.readouterr().out


def place_empty(obj, local) -> bpy.types.Object:
    """The scene's Empty at the point ``local (3,)`` of the armature's space."""
    from mathutils import Vector

    empty = bpy.data.objects["Empty"]
    empty.location = obj.matrix_world @ Vector(tuple(local))
    bpy.context.view_layer.update()
    return empty


def shown_reach(obj) -> dict:
    return json.loads(obj.smart_motion.reach_json)


# ---------------------------------------------------------------- Reach Target: what it makes


def test_the_reached_hand_is_on_the_empty_within_the_reported_error_as_blender_evaluates_it(reach_scene, capfd):
    empty = place_empty(reach_scene, inside_target(reach_scene))
    tracks = len(reach_scene.animation_data.nla_tracks) if reach_scene.animation_data else 0
    report = reach(capfd)
    shown = shown_reach(reach_scene)
    hand = evaluated_hand(reach_scene, shown["hit_scene_frame"])
    away = np.linalg.norm(hand - np.array(empty.matrix_world.translation))
    assert away <= shown["error"] + 1e-4, "Blender's hand is where the reach says it is"
    assert shown["error"] < 0.01, "inside the examples' space the hand hits within 1 cm"
    blending = "partial blending (section 3.2)" if shown["partial"] else "whole-body blending (section 3.1)"
    assert "right.wrist reaches 'Empty' with a hit error of " in report
    assert f"by {blending} of 8 examples" in report
    strip = strips_by_name(reach_scene)[shown["strip"]]
    assert strip.frame_start == 20, "at the playhead"
    assert len(reach_scene.animation_data.nla_tracks) == tracks + 1, "on a new track"
    assert strip.action.name == shown["action"] and shown["reference"] == raise_files()[0].stem
    # the reach starts where the first example starts, relative to the armature: its hips over the same ground
    convert = extension("addon.convert")
    first = example_motions(reach_scene)[0]
    pelvis = extension("core.rig").find_rig(first).pelvis
    reached = convert.action_to_motion(reach_scene, strip.action).global_positions()[0, pelvis, :2]
    assert np.abs(reached - first.global_positions()[0, pelvis, :2]).max() < 0.01


def test_the_reach_is_a_result_no_library_of_file_actions_holds(reach_scene, capfd):
    clips = extension("addon.clips")
    place_empty(reach_scene, inside_target(reach_scene))
    reach(capfd)
    result = bpy.data.actions[shown_reach(reach_scene)["action"]]
    assert result.get(clips.RESULT_PROPERTY) == "reach"
    library = [action for action, _ in clips.file_actions(reach_scene)]
    assert result not in library and len(library) == 8, "the eight raises, not the reach"


def test_the_bone_mapping_chooses_the_effector_and_is_part_of_the_kept_alignment(reach_scene, capfd):
    """A mapping that exchanges the arms: right.wrist is then the bone Hand_L, and it is that bone which
    reaches; the alignment kept for the names' roles is not reused for the mapped ones."""
    place_empty(reach_scene, inside_target(reach_scene))
    reach(capfd)  # (the names' alignment, kept)
    reach_scene.smart_motion.bone_mapping = ", ".join(
        f"{side}.{role}={bone}_{other}" for side, other in (("left", "R"), ("right", "L"))
        for role, bone in (("clavicle", "Shoulder"), ("shoulder", "UpperArm"), ("elbow", "LowerArm"),
                           ("wrist", "Hand")))
    # (where the left hand goes: a target the mapped right.wrist reaches by whole-body blending)
    place_empty(reach_scene, inside_target(reach_scene, effector="left.wrist"))
    reach(capfd)
    shown = shown_reach(reach_scene)
    assert not shown["cached"], "another mapping, another alignment"
    frame = shown["hit_scene_frame"]
    bpy.context.scene.frame_set(frame)
    evaluated = reach_scene.evaluated_get(bpy.context.evaluated_depsgraph_get())
    left = np.array(evaluated.matrix_world @ evaluated.pose.bones["Hand_L"].head)
    right = np.array(evaluated.matrix_world @ evaluated.pose.bones["Hand_R"].head)
    target = np.array(bpy.data.objects["Empty"].matrix_world.translation)
    assert np.linalg.norm(left - target) <= shown["error"] + 1e-4, "the mapped right.wrist, Hand_L, reaches"
    assert np.linalg.norm(right - target) > shown["error"] + 0.05
    reach_scene.smart_motion.bone_mapping = "right.wrist=NoSuchBone"
    refused("reach_target", r"names joint 'NoSuchBone'.*map the bones in the Smart Motion panel's Bone Mapping")


def test_a_moved_turned_and_scaled_armature_still_reaches_the_empty_and_the_alignment_is_kept(reach_scene, capfd):
    local = inside_target(reach_scene)
    reach(capfd)  # aligned once (the Empty wherever it is)
    reach_scene.location = (2.0, -1.0, 0.5)
    reach_scene.rotation_euler = (0.0, 0.0, 2.0)
    reach_scene.scale = (1.5, 1.5, 1.5)
    bpy.context.view_layer.update()
    empty = place_empty(reach_scene, local)
    bpy.context.scene.frame_current = 80
    report = reach(capfd)
    shown = shown_reach(reach_scene)
    assert shown["cached"] and "the examples' alignment kept from before" in report
    hand = evaluated_hand(reach_scene, shown["hit_scene_frame"])
    away = np.linalg.norm(hand - np.array(empty.matrix_world.translation))
    assert away <= shown["error"] + 1e-4
    assert shown["error"] < 0.015, "1 cm of the armature's space, scaled by 1.5 into the world's"
    # how much quicker the kept alignment's query is: tests/bench/reach_assemble_blender.py (second, naive)


def test_the_effector_and_feature_chosen_are_the_ones_reaching(reach_scene, capfd):
    bpy.context.scene.smart_motion.reach_effector = 'left.wrist'
    bpy.context.scene.smart_motion.reach_feature = 'farthest'
    empty = place_empty(reach_scene, inside_target(reach_scene, "left.wrist", "farthest"))
    report = reach(capfd)
    shown = shown_reach(reach_scene)
    assert (shown["effector"], shown["feature"]) == ("left.wrist", "farthest") and shown["error"] < 0.01
    assert "left.wrist reaches 'Empty'" in report
    hand = evaluated_hand(reach_scene, shown["hit_scene_frame"], "left.wrist")
    assert np.linalg.norm(hand - np.array(empty.matrix_world.translation)) <= shown["error"] + 1e-4


def test_reach_target_leaves_every_example_action_as_it_was(reach_scene, capfd):
    keys = {a.name: all_keys(a) for a in bpy.data.actions}
    place_empty(reach_scene, inside_target(reach_scene))
    reach(capfd)
    for name, before in keys.items():
        assert same_keys(before, all_keys(bpy.data.actions[name])), f"action {name!r} was written"


def test_reach_target_is_one_undo_step_that_removes_the_result(reach_scene, capfd):
    assert bpy.types.SMART_MOTION_OT_reach_target.bl_options >= {'REGISTER', 'UNDO'}
    place_empty(reach_scene, inside_target(reach_scene))
    before = snapshot()
    bpy.ops.ed.undo_push(message="before Reach Target")
    reach(capfd, 'EXEC_DEFAULT', True)
    assert snapshot() != before
    assert bpy.ops.ed.undo() == {'FINISHED'}
    assert snapshot() == before


def test_a_target_far_outside_the_examples_is_reached_by_partial_blending_and_says_so(reach_scene, capfd):
    reach_module = extension("core.reach")
    registration = reach_module.register_examples(example_motions(reach_scene))
    points = reach_module.parameter_space(registration, n_blends=0).hit_points
    # above the highest raise and out to the side of all of them
    target = points.mean(axis=0) + np.array([0.0, 0.0, points[:, 2].max() - points[:, 2].mean() + 0.05])
    place_empty(reach_scene, target)
    report = reach(capfd)
    shown = shown_reach(reach_scene)
    assert shown["partial"] and "by partial blending (section 3.2" in report
    hand = evaluated_hand(reach_scene, shown["hit_scene_frame"])
    assert np.linalg.norm(hand - target) <= shown["error"] + 1e-4


def test_a_joint_limit_that_stops_partial_blending_is_reported_and_the_feet_are_held(reach_scene, capfd):
    """Issue 24 item 6: the turned joints stay within the range the examples show; the report says when
    that stopped them, and the feet the examples have down stay where they stand."""
    reach_module = extension("core.reach")
    points = reach_module.parameter_space(reach_module.register_examples(example_motions(reach_scene)),
                                          n_blends=0).hit_points
    target = points[np.argmin(points[:, 0])] - np.array([0.15, 0.0, 0.0])  # (15 cm beyond the side of them all)
    place_empty(reach_scene, target)
    report = reach(capfd)
    shown = shown_reach(reach_scene)
    assert shown["partial"] and shown["limited"] and shown["feet_held"]
    assert f"joint limit: {', '.join(shown['limited'])} turned as far as the examples' range allows" in report
    assert "turned only as far as the examples' range (and its margin) allows; the hit error is" in report
    assert "why: the target lies " in report and "feet held where the examples have them down" in report
    assert f"    joint limit: {', '.join(shown['limited'])}" in "\n".join(draw_panel().labels)
    # Blender's feet, as it evaluates the new strip: where they stood on its first frame
    strip = strips_by_name(reach_scene)[shown["strip"]]
    ankles = []
    for frame in range(round(strip.frame_start), round(strip.frame_end) + 1):
        bpy.context.scene.frame_set(frame)
        evaluated = reach_scene.evaluated_get(bpy.context.evaluated_depsgraph_get())
        ankles.append([np.array(evaluated.matrix_world @ evaluated.pose.bones[bone].head) for bone in ("Foot_L",
                                                                                                        "Foot_R")])
    ankles = np.array(ankles)
    assert np.abs(ankles[:, :, :2] - ankles[:1, :, :2]).max() < 0.005, "held within 5 mm across the floor"


def test_a_joint_limit_is_warned_of_only_where_the_target_is_missed(reach_scene):
    """A limit that bit on the way to a hit (the turns stopped at a joint's range on some frame, the
    target hit within core.reach's tolerance all the same) is in the report, not a warning."""
    from dataclasses import replace

    addon_reach = extension("addon.reach")
    reach_module = extension("core.reach")
    points = reach_module.parameter_space(reach_module.register_examples(example_motions(reach_scene)),
                                          n_blends=0).hit_points
    empty = place_empty(reach_scene, points[np.argmin(points[:, 0])] - np.array([0.15, 0.0, 0.0]))
    found = addon_reach.find_reach(reach_scene, empty, effector="right.wrist", feature="highest")
    assert found.reach.limited and found.reach.missed
    assert addon_reach.limit_warnings(found, bpy.context.scene)
    hit = replace(found, reach=replace(found.reach, error=0.5 * found.reach.tolerance))
    assert not hit.reach.missed and addon_reach.limit_warnings(hit, bpy.context.scene) == []


def test_one_listed_example_is_reached_by_partial_blending_alone(reach_scene, capfd):
    """Issue 24 item 5: a list of one example reaches, its joints turned, and says so."""
    rows = reach_scene.smart_motion.reach_examples
    keep = sorted(row.action.name for row in rows)[0]
    for i in reversed(range(len(rows))):
        if rows[i].action.name != keep:
            rows.remove(i)
    reach_module = extension("core.reach")
    space = reach_module.ReachSpace.build(example_motions(reach_scene), n_blends=0)
    own = space.chains.hits(np.ones((1, 1)), between_frames=True)[0][0]
    place_empty(reach_scene, own + np.array([0.0, -0.03, 0.0]))  # (3 cm across from its own hit point)
    report = reach(capfd)
    shown = shown_reach(reach_scene)
    assert shown["partial"] and shown["examples"] == 1
    assert "the one example hits at one point, which no blend moves: partial blending (section 3.2) alone" in report
    assert shown["error"] < 0.03


def test_an_active_action_playing_over_the_result_is_warned_of(reach_scene, capfd):
    place_empty(reach_scene, inside_target(reach_scene))
    reach_scene.animation_data.action = reach_scene.smart_motion.reach_examples[0].action
    report = reach(capfd)
    strip = shown_reach(reach_scene)["strip"]
    assert (f"plays its active action {reach_scene.animation_data.action.name!r} over the NLA, so strip {strip!r} "
            "does not show: push the action down to a strip, or unassign it") in report


def test_the_panel_shows_the_last_reach(reach_scene, capfd):
    place_empty(reach_scene, inside_target(reach_scene))
    reach(capfd)
    shown = shown_reach(reach_scene)
    layout = draw_panel()
    assert {"smart_motion.reach_target", "smart_motion.reach_example_add",
            "smart_motion.reach_example_remove"} <= set(layout.operators)
    assert (reach_scene.smart_motion, "reach_examples") in layout.props
    text = "\n".join(layout.labels)
    assert "Reach Empty: error " in text
    blending = "partial" if shown["partial"] else "whole-body"
    assert f"{blending} blending, hit at frame {shown['hit_scene_frame']}" in text
    assert f"8 examples (listed), from {shown['reference']}" in text


# ---------------------------------------------------------------- Reach Target: what it refuses


def test_no_target_no_examples_and_no_armature_each_say_what_to_do(reach_scene):
    bpy.data.objects.remove(bpy.data.objects["Empty"])
    refused("reach_target", r"no target: add an Empty where the hand should reach \(Add > Empty\) and pick it as "
                            r"Reach Target in the Smart Motion panel")
    bpy.ops.object.empty_add(location=(0, 0, 1))
    bpy.context.view_layer.objects.active = reach_scene
    reach_scene.smart_motion.reach_examples.clear()
    refused("reach_target", r"no examples: add actions of armature '.*' to Reach Examples in the Smart Motion panel")
    bpy.context.view_layer.objects.active = bpy.data.objects["Empty"]
    refused("reach_target", r"the active object 'Empty' is a empty, not an armature")


def test_the_target_is_the_one_set_else_the_selected_empty_else_the_only_one(reach_scene, capfd):
    first = bpy.data.objects["Empty"]
    place_empty(reach_scene, inside_target(reach_scene))
    bpy.ops.object.empty_add(location=(0, 0, 1.5))
    second = bpy.context.active_object
    bpy.context.view_layer.objects.active = reach_scene
    for empty in (first, second):
        empty.select_set(False)
    refused("reach_target", r"no target: 2 Empties are in the scene and no Reach Target is set; pick one as Reach "
                            r"Target in the Smart Motion panel, or select only it")
    second.select_set(True)
    reach(capfd)
    assert shown_reach(reach_scene)["target"] == second.name
    reach_scene.smart_motion.reach_target = first
    reach(capfd)
    assert shown_reach(reach_scene)["target"] == first.name


def test_an_example_of_another_skeleton_is_refused_when_added_and_when_listed(reach_scene, tmp_path):
    cmu = cmu_named_walk(tmp_path)
    bpy.context.view_layer.objects.active = reach_scene
    refused("reach_example_add", r"action 'cmu_walk' animates 4 of the 21 body bones .* it is not an action for this "
                                 r"armature", action=cmu.name)
    reach_scene.smart_motion.reach_examples.add().action = cmu
    refused("reach_target", r"Reach example 'cmu_walk': action 'cmu_walk' animates .* it is not an action for this "
                            r"armature.*; remove it from Reach Examples")


def test_the_examples_list_adds_and_removes_actions_of_the_armature(reach_scene):
    examples = reach_scene.smart_motion.reach_examples
    name = examples[0].action.name
    reach_scene.smart_motion.reach_example_index = 0
    assert bpy.ops.smart_motion.reach_example_remove() == {'FINISHED'}
    assert name not in [row.action.name for row in examples] and name in bpy.data.actions
    assert bpy.ops.smart_motion.reach_example_add(action=name) == {'FINISHED'}
    assert examples[len(examples) - 1].action.name == name and reach_scene.smart_motion.reach_example_index == 7
    refused("reach_example_add", rf"action '{name}' is in Reach Examples already", action=name)


# ---------------------------------------------------------------- Reach Target: a folder of examples


def test_a_folder_of_examples_reaches_as_the_listed_actions_do(reach_scene, capfd, tmp_path):
    # (the eight files come from five capture sessions whose Hips rest where each began, metres apart; the
    # rest of their bones are the armature's: every one maps onto it)
    for file in raise_files():
        shutil.copy(file, tmp_path / file.name)
    place_empty(reach_scene, inside_target(reach_scene))
    reach(capfd)
    listed = shown_reach(reach_scene)
    reach_scene.smart_motion.reach_examples.clear()  # the folder's files only
    extension("addon.properties").preferences(bpy.context).reach_folder = str(tmp_path)
    bpy.context.scene.smart_motion.reach_library = 'FOLDER'
    reach(capfd)
    shown = shown_reach(reach_scene)
    assert shown["library"] == str(tmp_path) and shown["examples"] == 8
    assert shown["reference"] == raise_files()[0].name
    assert abs(shown["error"] - listed["error"]) < 1e-3, "the files mapped onto the armature are its actions"
    hand = evaluated_hand(reach_scene, shown["hit_scene_frame"])
    assert np.linalg.norm(hand - np.array(bpy.data.objects["Empty"].matrix_world.translation)) <= shown["error"] + 1e-4


def test_a_folder_with_a_file_of_another_skeleton_is_refused_naming_it(reach_scene, tmp_path):
    for file in raise_files()[:3]:
        shutil.copy(file, tmp_path / file.name)
    text = raise_files()[0].read_text()
    (tmp_path / "renamed.bvh").write_text(text.replace("Hand_R", "RightHand"))
    extension("addon.properties").preferences(bpy.context).reach_folder = str(tmp_path)
    bpy.context.scene.smart_motion.reach_library = 'FOLDER'
    refused("reach_target", r"renamed.bvh: its joints are not the bones of armature .*; in the reach examples folder "
                            r".* every file must be on the skeleton of armature '[^']*': move it out of the folder")
    extension("addon.properties").preferences(bpy.context).reach_folder = ""
    refused("reach_target", r"set Reach Examples Folder in the Smart Motion add-on's preferences")


# ---------------------------------------------------------------- Assemble Parts


ASSEMBLY = (("walk_normal_001", 1, None),)
LIBRARY = ("punch_normal_001", "kick_normal_001")


@pytest.fixture(scope="module")
def assembly_file(tmp_path_factory, installed_extension):
    """The walk as a strip of its armature (selected), the punch and the kick as the file's other actions."""
    def build():
        obj = clips_on_one_armature(ASSEMBLY, tracks=1)
        for name in LIBRARY:
            import_action(name)
        return obj

    return saved_scene(tmp_path_factory, installed_extension, "assembly", build)


@pytest.fixture
def walk(assembly_file):
    bpy.ops.wm.open_mainfile(filepath=str(assembly_file))
    obj = bpy.data.objects["walk_normal_001"]
    bpy.context.view_layer.objects.active = obj
    bpy.context.scene.smart_motion.assembly_part = 'upper'
    return obj


def assemble(capfd, *args) -> str:
    capfd.readouterr()
    assert bpy.ops.smart_motion.assemble_parts(*args) == {'FINISHED'}
    return capfd.readouterr().out


def test_the_part_is_core_assembles_choice_over_the_walks_own_legs_in_a_strip_above_it(walk, capfd):
    convert = extension("addon.convert")
    source = strips_by_name(walk)["walk"]
    query = convert.strip_to_motion(walk, source)
    library = {name: convert.action_to_motion(walk, bpy.data.actions[name]) for name in LIBRARY}
    expected = extension("core.assemble").assemble(query, {"upper": library})
    match = expected.matches["upper"]
    keys = {a.name: all_keys(a) for a in bpy.data.actions}
    report = assemble(capfd)
    shown = json.loads(walk.smart_motion.assembly_json)
    # in the action's own frames: core counts from the first frame sampled, the action's range's first
    first = round(bpy.data.actions[match.clip].frame_range[0]) + match.start
    assert bpy.data.actions[match.clip].frame_range[0] == 1, "(imported actions start at frame 1)"
    assert (shown["clip"], shown["frames"]) == (match.clip, [first, first + match.length - 1])
    assert f"'walk' with its upper from {match.clip!r} frames {first}-{first + match.length - 1}" in report
    strips = strips_by_name(walk)
    new = strips[shown["new_strip"]]
    tracks = list(walk.animation_data.nla_tracks)
    level = {name: next(k for k, t in enumerate(tracks) if name in t.strips) for name in ("walk", new.name)}
    assert level[new.name] > level["walk"], "above the source strip, which the NLA then plays it over"
    assert (new.frame_start, new.frame_end) == (source.frame_start, source.frame_end)
    keyed = convert.action_to_motion(walk, new.action).global_positions()
    assert np.abs(keyed - expected.motion.global_positions()).max() < 1e-4, "the assembly, keyed"
    # the lower body is the walk's: the pelvis and the legs where the walk has them
    rig = extension("core.rig").find_rig(query)
    lower = [rig.pelvis, *(j for side in "LR" for j in rig.leg(side).joints)]
    assert np.abs(keyed[:, lower] - query.global_positions()[:, lower]).max() < 1e-4
    arms = [j for side in "LR" for j in rig.arm(side).joints]
    assert np.abs(keyed[:, arms] - query.global_positions()[:, arms]).max() > 0.05, "the arms are another clip's"
    for name, before in keys.items():
        assert same_keys(before, all_keys(bpy.data.actions[name])), f"action {name!r} was written"
    assert source.select and not new.select, "the selection is the user's"


def test_assemble_parts_is_one_undo_step(walk, capfd):
    assert bpy.types.SMART_MOTION_OT_assemble_parts.bl_options >= {'REGISTER', 'UNDO'}
    before = snapshot()
    bpy.ops.ed.undo_push(message="before Assemble Parts")
    assemble(capfd, 'EXEC_DEFAULT', True)
    assert snapshot() != before
    assert bpy.ops.ed.undo() == {'FINISHED'}
    assert snapshot() == before


def test_the_body_parts_offered_are_core_assembles(walk):
    items = bpy.context.scene.smart_motion.bl_rna.properties["assembly_part"].enum_items.keys()
    assert sorted(items) == sorted(extension("core.assemble").PARTS)


def test_the_panel_shows_the_last_assembly(walk, capfd):
    assemble(capfd)
    shown = json.loads(walk.smart_motion.assembly_json)
    layout = draw_panel()
    assert "smart_motion.assemble_parts" in layout.operators
    text = "\n".join(layout.labels)
    assert f"from {shown['clip']} frames {shown['frames'][0]}-{shown['frames'][1]}" in text


def test_anything_but_one_selected_strip_or_a_strip_of_another_skeleton_is_refused(walk, tmp_path):
    strips_by_name(walk)["walk"].select = False
    refused("assemble_parts", r"0 NLA strips of armature 'walk_normal_001' selected: Assemble Parts needs one")
    cmu = cmu_named_walk(tmp_path)
    bpy.context.view_layer.objects.active = walk
    strip = strips_by_name(walk)["walk"]
    strip.select = True
    strip.action = cmu
    refused("assemble_parts", r"\(action 'cmu_walk'\) animates 4 of the 21 body bones .* not an action for this "
                              r"armature")


def test_a_library_of_no_other_action_says_what_to_do(walk):
    for name in LIBRARY:
        bpy.data.actions.remove(bpy.data.actions[name])
    refused("assemble_parts", r"the file has no action for armature 'walk_normal_001' but the query's own "
                              r"\('walk_normal_001'\): import clips onto it")


def test_a_folder_library_gives_the_files_part(walk, capfd, tmp_path):
    assemble(capfd)
    chosen = json.loads(walk.smart_motion.assembly_json)
    for name in LIBRARY:
        shutil.copy(clip_path(name), tmp_path / f"{name}.bvh")
    for name in LIBRARY:  # the folder's files only
        bpy.data.actions.remove(bpy.data.actions[name])
    extension("addon.properties").preferences(bpy.context).assembly_folder = str(tmp_path)
    bpy.context.scene.smart_motion.assembly_library = 'FOLDER'
    report = assemble(capfd)
    shown = json.loads(walk.smart_motion.assembly_json)
    assert shown["library"] == str(tmp_path) and shown["clips"] == 2
    # the files mapped onto the armature are its actions: the same clip and frames
    assert shown["clip"] == f"{chosen['clip']}.bvh" and shown["frames"] == chosen["frames"]
    assert f"from '{chosen['clip']}.bvh' frames" in report
    (tmp_path / "renamed.bvh").write_text(clip_path("walk_normal_001").read_text().replace("UpperLeg_L", "LeftUpLeg"))
    refused("assemble_parts", r"renamed.bvh: its joints are not the bones of armature 'walk_normal_001'.*move it out "
                              r"of the folder")


def test_a_second_assembly_takes_its_part_from_a_clip_not_from_the_first_result(walk, capfd):
    clips = extension("addon.clips")
    assemble(capfd)
    first = json.loads(walk.smart_motion.assembly_json)
    result = bpy.data.actions[first["action"]]
    assert result.get(clips.RESULT_PROPERTY) == "assembly"
    assert result not in [action for action, _ in clips.file_actions(walk)], "a result is no library clip"
    assemble(capfd)
    second = json.loads(walk.smart_motion.assembly_json)
    assert second["clip"] in LIBRARY and second["clips"] == len(LIBRARY)
    assert (second["clip"], second["frames"]) == (first["clip"], first["frames"])


def test_an_action_starting_at_another_frame_is_reported_in_its_own_frames(walk, capfd):
    assemble(capfd)
    chosen = json.loads(walk.smart_motion.assembly_json)
    shift = 40  # every key of the chosen clip 40 frames later: the same clip, numbered from frame 41
    action = bpy.data.actions[chosen["clip"]]
    for fcurve in (f for layer in action.layers for strip in layer.strips for bag in strip.channelbags
                   for f in bag.fcurves):
        for key in fcurve.keyframe_points:
            key.co.x += shift
            key.handle_left.x += shift
            key.handle_right.x += shift
        fcurve.update()
    assert action.frame_range[0] == 1 + shift
    report = assemble(capfd)
    shown = json.loads(walk.smart_motion.assembly_json)
    assert shown["clip"] == chosen["clip"] and shown["frames"] == [f + shift for f in chosen["frames"]]
    assert f"frames {chosen['frames'][0] + shift}-{chosen['frames'][1] + shift}" in report


def test_a_folder_file_at_another_rate_than_the_scene_is_reported_in_its_own_frames(walk, capfd, tmp_path):
    bvh, assembly = extension("core.bvh"), extension("core.assemble")
    assemble(capfd)
    chosen = json.loads(walk.smart_motion.assembly_json)
    for name in LIBRARY:  # the library at 60 fps, the scene at 30
        motion = bvh.read_bvh(clip_path(name))
        bvh.write_bvh(motion.resampled(2 * motion.fps), tmp_path / f"{name}.bvh")
    for name in LIBRARY:
        bpy.data.actions.remove(bpy.data.actions[name])
    extension("addon.properties").preferences(bpy.context).assembly_folder = str(tmp_path)
    bpy.context.scene.smart_motion.assembly_library = 'FOLDER'
    report = assemble(capfd)
    shown = json.loads(walk.smart_motion.assembly_json)
    convert, clips = extension("addon.convert"), extension("addon.clips")
    query = convert.strip_to_motion(walk, strips_by_name(walk)["walk"])
    library = {f"{name}.bvh": clips.folder_clip(walk, tmp_path / f"{name}.bvh", None).motion for name in LIBRARY}
    assert all(m.fps == pytest.approx(2 * query.fps, rel=1e-6) for m in library.values())
    match = assembly.assemble(query, {"upper": library}).matches["upper"]
    assert shown["clip"] == match.clip == f"{chosen['clip']}.bvh"
    assert shown["frames"] == [1 + match.start, match.start + match.length], "the file's 60 fps frames, from 1"
    # the same segment as at 30 fps, its frame numbers doubled (a frame either way: resampled)
    assert abs((shown["frames"][0] - 1) - 2 * (chosen["frames"][0] - 1)) <= 2
    assert abs((shown["frames"][1] - shown["frames"][0]) - 2 * (chosen["frames"][1] - chosen["frames"][0])) <= 2
    assert f"frames {shown['frames'][0]}-{shown['frames'][1]}" in report


def test_a_strip_starting_between_frames_gets_its_result_keyed_on_the_frames_it_was_sampled_at(walk, capfd):
    source = strips_by_name(walk)["walk"]
    source.frame_start_ui = 10.5  # (moves the strip, its length kept)
    assert (source.frame_start, source.frame_end) == (10.5, 10.5 + 194)
    convert = extension("addon.convert")
    query = convert.strip_to_motion(walk, source)
    library = {name: convert.action_to_motion(walk, bpy.data.actions[name]) for name in LIBRARY}
    expected = extension("core.assemble").assemble(query, {"upper": library}).motion
    assemble(capfd)
    new = strips_by_name(walk)[json.loads(walk.smart_motion.assembly_json)["new_strip"]]
    assert (new.frame_start, new.frame_end) == (source.frame_start, source.frame_end)
    assert tuple(new.action.frame_range) == (10.5, 10.5 + 194) and new.action_frame_start == 10.5
    # as Blender evaluates it at the frames the query was sampled at: the assembly's poses there
    source.mute = True
    rig = extension("core.rig").find_rig(query)
    for k in (0, 61, 150):
        heads = evaluated_heads_at(walk, 10.5 + k)
        hand = walk.pose.bones[query.skeleton.names[rig.left_arm.wrist]]
        hips = query.skeleton.names[rig.pelvis]
        expected_world = expected.global_positions()[k]
        assert np.abs(heads[hand.name] - heads[hips] - (expected_world[rig.left_arm.wrist]
                                                         - expected_world[rig.pelvis])).max() < 1e-4


def evaluated_heads_at(obj, frame: float) -> dict:
    """{bone: (3,) head in armature space} as Blender evaluates ``obj`` at scene ``frame`` (may be fractional)."""
    bpy.context.scene.frame_set(int(np.floor(frame)), subframe=frame - np.floor(frame))
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {bone.name: np.array(bone.head) for bone in evaluated.pose.bones}


def test_the_bone_mapping_chooses_the_bones_of_the_part(walk, capfd):
    """Bones named the other side's (a mapping that exchanges the arms): the mapping, not the names, says
    which bones are the left arm; a mapping naming no bone is refused saying where to fix it."""
    convert, assembly = extension("addon.convert"), extension("core.assemble")
    walk.smart_motion.bone_mapping = ", ".join(
        f"{side}.{role}={bone}_{other}" for side, other in (("left", "R"), ("right", "L"))
        for role, bone in (("clavicle", "Shoulder"), ("shoulder", "UpperArm"), ("elbow", "LowerArm"),
                           ("wrist", "Hand")))
    bpy.context.scene.smart_motion.assembly_part = 'left.arm'
    assemble(capfd)
    new = strips_by_name(walk)[json.loads(walk.smart_motion.assembly_json)["new_strip"]]
    query = convert.strip_to_motion(walk, strips_by_name(walk)["walk"])
    keyed = convert.action_to_motion(walk, new.action)
    names = query.skeleton.names
    changed = {names[j] for j in range(len(names))
               if np.abs(keyed.rotations[:, j] - query.rotations[:, j]).max() > 1e-4}
    assert changed and all(name.endswith("_R") for name in changed), f"the mapped left arm, {sorted(changed)}"
    rig = extension("addon.convert").find_armature_rig(walk, query)
    library = {name: convert.action_to_motion(walk, bpy.data.actions[name]) for name in LIBRARY}
    expected = assembly.assemble(query, {"left.arm": library}, rig=rig).motion
    assert np.abs(keyed.global_positions() - expected.global_positions()).max() < 1e-4
    walk.smart_motion.bone_mapping = "left.wrist=NoSuchBone"
    refused("assemble_parts", r"names joint 'NoSuchBone'.*map the bones in the Smart Motion panel's Bone Mapping")


def test_a_copy_of_the_query_in_the_library_is_left_out_and_warned_of(walk, capfd):
    assemble(capfd)
    plain = json.loads(walk.smart_motion.assembly_json)
    copy = bpy.data.actions["walk_normal_001"].copy()
    copy.use_fake_user = True
    report = assemble(capfd)
    shown = json.loads(walk.smart_motion.assembly_json)
    assert (shown["clip"], shown["frames"]) == (plain["clip"], plain["frames"]) and shown["clip"] != copy.name
    assert f"library clip {copy.name!r} plays what strip 'walk' plays: left out of the library" in report


def test_a_strip_longer_than_the_librarys_clips_is_assembled_piecewise_and_says_so(walk, capfd, tmp_path):
    """Issue 24, item 9: a folder of clips shorter than 0.7 of the strip held none that could stand in
    for it whole; the strip is assembled piece by piece, and the report and the panel say so."""
    bvh = extension("core.bvh")
    for name in LIBRARY:  # two-second pieces of the punch and the kick: the walk strip is longer
        motion = bvh.read_bvh(clip_path(name))
        for first in (0, 60, 120):
            bvh.write_bvh(motion[first:first + 60], tmp_path / f"{name} {first}.bvh")
    extension("addon.properties").preferences(bpy.context).assembly_folder = str(tmp_path)
    bpy.context.scene.smart_motion.assembly_library = 'FOLDER'
    report = assemble(capfd)
    shown = json.loads(walk.smart_motion.assembly_json)
    assert len(shown["pieces"]) > 1
    assert shown["pieces"][0]["query_frames"][0] == 0
    source = strips_by_name(walk)["walk"]
    assert shown["pieces"][-1]["query_frames"][1] == round(source.frame_end - source.frame_start)
    assert f"assembled in {len(shown['pieces'])} pieces" in report
    text = "\n".join(draw_panel().labels)
    assert f"in {len(shown['pieces'])} pieces" in text
    assert all(f"from {p['clip']} frames {p['frames'][0]}-{p['frames'][1]}" in text for p in shown["pieces"])


def test_reach_words_every_distance_in_the_scene_s_units(reach_scene, capfd):
    """Issue 26 item 5: a scene of centimetres (unit scale 0.01, as after a BVH import at scale 1) reads
    its distances in centimetres or millimetres, the reasons' too, never as bare numbers or metres."""
    import re

    bpy.context.scene.unit_settings.scale_length = 0.01
    reach_module = extension("core.reach")
    points = reach_module.parameter_space(reach_module.register_examples(example_motions(reach_scene)),
                                          n_blends=0).hit_points
    place_empty(reach_scene, points[np.argmin(points[:, 0])] - np.array([0.15, 0.0, 0.0]))
    report = reach(capfd)
    assert re.search(r"the target lies [\d.]+ (cm|mm) outside the hull", report), report
    assert re.search(r"hit error of [\d.]+ (cm|mm|µm)", report), report
    assert not re.search(r"\d m\b", report), report
    assert re.search(r"error [\d.]+ (cm|mm|µm)$", next(line for line in draw_panel().labels if line.startswith("Reach ")))


def rising_to_one(fractions: list) -> bool:
    return (bool(fractions) and all(0.0 <= f <= 1.0 for f in fractions)
            and all(a <= b for a, b in zip(fractions, fractions[1:])) and fractions[-1] == 1.0)


def test_reach_and_assemble_report_their_progress_to_blenders_indicator(reach_scene, capfd):
    """Issue 26 item 6: the first build of the examples' space (a few seconds) reports its progress; the
    operator drives the window manager's progress indicator with it, headless too."""
    extension("addon.reach")._SPACES.clear()  # (the session keeps built spaces: this one is built here)
    empty = place_empty(reach_scene, np.array([0.3, -0.2, 1.5]))
    fractions = []
    extension("addon.reach").find_reach(reach_scene, empty, effector="left.wrist", feature="farthest",
                                        progress=fractions.append)
    assert rising_to_one(fractions) and len(fractions) > 2, fractions
    reach(capfd)  # (the operator, its progress indicator begun and ended headless)


def test_assemble_parts_reports_its_progress(walk, capfd):
    strips = [s for s in extension("addon.strips").selected_strips(walk)]
    fractions = []
    extension("addon.assemble").find_assembly(walk, strips, bpy.context.scene.smart_motion.assembly_part,
                                              progress=fractions.append)
    assert rising_to_one(fractions) and len(fractions) > 2, fractions
    assemble(capfd)
