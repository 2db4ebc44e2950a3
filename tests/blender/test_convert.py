"""Armatures, actions and NLA strips convert to core motions and back, as Blender plays them.

Every check compares against what Blender itself evaluated (the depsgraph's
pose after ``scene.frame_set``), never against our own recomputation. Clips
come from the shared Bandai mocap set, imported with Blender's own BVH
importer at ``global_scale=0.01`` (centimetres to metres, the scene unit).
"""

import importlib
from pathlib import Path

import bpy
import mathutils
import numpy as np
import pytest
from real_capture import require
from bpy_extras import anim_utils

from scenes import all_keys, ensure_channelbag, new_fcurve

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "mocap" / "bandai1"
TOLERANCE_M = 1e-4
FRAMES = np.arange(1, 61)  # the first two seconds of each clip, every frame


@pytest.fixture(scope="module")
def convert(installed_extension):
    """``addon.convert`` of the installed extension, exactly as Blender loads it."""
    return importlib.import_module(f"{installed_extension}.addon.convert")


def sibling(module, name: str):
    """The add-on's module ``name`` next to ``module``, as Blender loaded it."""
    return importlib.import_module(f"{module.__name__.rpartition('.')[0]}.{name}")


@pytest.fixture(scope="module")
def quat(installed_extension):
    return importlib.import_module(f"{installed_extension}.core.quat")


def import_clip(name: str, rotate_mode: str) -> bpy.types.Object:
    path = MOCAP / f"{name}.bvh"
    require(path)
    result = bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode=rotate_mode, global_scale=0.01)
    assert result == {'FINISHED'}
    return bpy.context.view_layer.objects.active


def evaluated_pose(obj, frames) -> tuple[np.ndarray, np.ndarray]:
    """Blender's evaluated bone heads ``(F, B, 3)`` and pose matrices ``(F, B, 4, 4)``.

    Armature space, bones in ``obj.pose.bones`` order. Blender evaluates one
    scene frame at a time, hence the loop.
    """
    scene = bpy.context.scene
    n = len(obj.pose.bones)
    heads = np.empty((len(frames), n * 3), dtype=np.float32)
    matrices = np.empty((len(frames), n * 16), dtype=np.float32)
    for k, frame in enumerate(frames):
        scene.frame_set(int(frame))
        pose = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose
        pose.bones.foreach_get("head", heads[k])
        pose.bones.foreach_get("matrix", matrices[k])
    # foreach_get flattens Blender's column-major matrices.
    return heads.reshape(len(frames), n, 3), matrices.reshape(len(frames), n, 4, 4).transpose(0, 1, 3, 2)


def joint_bones(obj, info) -> list[int]:
    """Index into ``obj.pose.bones`` of each joint's bone (joints that are bones only)."""
    return [obj.pose.bones.find(name) for name in info.bones if name is not None]


def to_world(obj, points: np.ndarray) -> np.ndarray:
    m = np.array(obj.matrix_world)
    return points @ m[:3, :3].T + m[:3, 3]


def play(obj, action) -> None:
    obj.animation_data.action = action
    assert obj.animation_data.action_slot is not None, "the new action's slot was not picked"


# ---------------------------------------------------------------------------
# Conventions


@pytest.mark.parametrize("mode", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_blender_euler_modes_apply_their_first_axis_first(convert, quat, mode):
    rng = np.random.default_rng(7)
    angles = rng.uniform(-np.pi, np.pi, size=(50, 3))
    ours = sibling(convert, "pose").euler_to_quat(angles, mode)
    blenders = np.array([mathutils.Euler(a, mode).to_quaternion() for a in angles])
    assert np.allclose(np.abs(np.sum(ours * blenders, axis=-1)), 1.0, atol=1e-6)

    back = sibling(convert, "pose").quat_to_euler(ours, mode)
    matrices = np.array([mathutils.Euler(a, mode).to_matrix() for a in back])
    assert np.allclose(matrices, quat.to_matrix(ours), atol=1e-6)


def test_blender_xyz_is_core_zyx_of_the_reversed_angles(convert, quat):
    angles = np.array([0.3, -1.1, 2.0])
    assert np.allclose(sibling(convert, "pose").euler_to_quat(angles, "XYZ"), quat.from_euler(angles[::-1], "ZYX"))


def test_skeleton_is_the_rest_pose_in_armature_space(empty_scene, convert):
    empty_scene.unit_settings.scale_length = 0.5
    obj = import_clip("walk_normal_001", 'QUATERNION')

    skeleton, info = convert.armature_skeleton(obj)

    assert list(skeleton.names) == [bone.name for bone in obj.data.bones]  # BVH order is parents first
    assert all(skeleton.parents[j] < j for j in range(1, len(skeleton)))
    assert np.allclose(skeleton.up, [0.0, 0.0, 1.0])
    assert skeleton.unit == pytest.approx(0.5)
    heads = np.array([obj.data.bones[name].head_local for name in info.bones])
    assert np.allclose(skeleton.rest_positions() + skeleton.offsets[0], heads, atol=1e-6)
    rest = np.array([obj.data.bones[name].matrix_local.to_quaternion() for name in info.bones])
    assert np.allclose(np.abs(np.sum(info.rest_rotations * rest, axis=-1)), 1.0, atol=1e-6)


# ---------------------------------------------------------------------------
# Action -> motion -> action


CLIPS = [
    ("walk_normal_001", 'QUATERNION'),
    ("kick_normal_001", 'NATIVE'),  # Euler, the file's own order (ZXY)
    ("walk_normal_001", 'YZX'),
]


@pytest.mark.parametrize("clip, rotate_mode", CLIPS)
def test_core_forward_kinematics_lands_on_blenders_bone_heads(empty_scene, convert, quat, clip, rotate_mode):
    obj = import_clip(clip, rotate_mode)
    action = obj.animation_data.action

    motion = convert.action_to_motion(obj, action, frame_start=FRAMES[0], frame_end=FRAMES[-1])

    _, info = convert.armature_skeleton(obj)
    heads, matrices = evaluated_pose(obj, FRAMES)
    order = joint_bones(obj, info)
    positions, rotations = motion.global_transforms()
    assert motion.n_frames == len(FRAMES)
    assert motion.fps == pytest.approx(empty_scene.render.fps / empty_scene.render.fps_base)
    assert np.abs(positions * motion.skeleton.unit - heads[:, order]).max() < TOLERANCE_M
    # Joint frames have the armature's axes: the bone's posed rotation is C_j B_j.
    posed = quat.to_matrix(quat.mul(rotations, info.rest_rotations))
    assert np.abs(posed - matrices[:, order, :3, :3]).max() < 1e-5
    # Leaf tips (end sites) land on the evaluated tails.
    tails = np.empty(len(obj.pose.bones) * 3, dtype=np.float32)
    obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones.foreach_get("tail", tails)
    for j, tip in motion.skeleton.end_sites.items():
        ours = positions[-1, j] + quat.mul_vec(rotations[-1, j], tip)
        assert np.abs(ours - tails.reshape(-1, 3)[order[j]]).max() < TOLERANCE_M


@pytest.mark.parametrize("clip, rotate_mode", CLIPS)
def test_round_trip_through_a_core_motion_poses_the_armature_the_same(
    empty_scene, convert, clip, rotate_mode,
):
    obj = import_clip(clip, rotate_mode)
    obj.matrix_world = mathutils.Matrix.LocRotScale((2.0, -1.0, 0.5), mathutils.Euler((0.0, 0.0, 0.7)), None)
    source = obj.animation_data.action
    # every frame of the imported clip
    first, last = (int(round(f)) for f in source.frame_range)
    frames = np.arange(first, last + 1)
    heads_before, matrices_before = evaluated_pose(obj, frames)

    motion = convert.action_to_motion(obj, source, frame_start=first, frame_end=last)
    written = convert.write_action(obj, motion, "round trip", frame_start=first)
    play(obj, written)
    heads_after, matrices_after = evaluated_pose(obj, frames)

    assert np.abs(to_world(obj, heads_after) - to_world(obj, heads_before)).max() < TOLERANCE_M
    assert np.abs(matrices_after[..., :3, :3] - matrices_before[..., :3, :3]).max() < 1e-5


def test_written_action_keys_every_frame_of_each_bones_own_channels_linearly(empty_scene, convert):
    obj = import_clip("kick_normal_001", 'NATIVE')
    motion = convert.action_to_motion(obj, obj.animation_data.action, frame_start=5, frame_end=64)

    written = convert.write_action(obj, motion, "written", frame_start=101)

    assert [slot.target_id_type for slot in written.slots] == ['OBJECT']
    channelbag = anim_utils.action_get_channelbag_for_slot(written, written.slots[0])
    paths = {(fcurve.data_path, fcurve.array_index) for fcurve in channelbag.fcurves}
    for bone in obj.pose.bones:
        assert bone.rotation_mode == 'ZXY'
        expected = {(f'pose.bones["{bone.name}"].{prop}', i) for prop in ("rotation_euler", "location") for i in range(3)}
        assert expected <= paths
    assert len(paths) == len(obj.pose.bones) * 6
    for fcurve in channelbag.fcurves:
        frames = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
        fcurve.keyframe_points.foreach_get("co", frames)
        assert np.array_equal(frames[0::2], np.arange(101, 161))
        assert {point.interpolation for point in fcurve.keyframe_points} == {'LINEAR'}
        assert fcurve.group.name in obj.pose.bones
    # Unwrapped Euler angles: no key-to-key jump of a full turn.
    euler = [f for f in channelbag.fcurves if f.data_path.endswith("rotation_euler")]
    for fcurve in euler:
        values = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
        fcurve.keyframe_points.foreach_get("co", values)
        assert np.abs(np.diff(values[1::2])).max() < np.pi


def test_curves_are_grouped_by_bone_also_where_fcurves_new_takes_no_group(empty_scene, convert, monkeypatch):
    # Blender 4.4 and 4.5: ActionChannelbagFCurves.new has no group_name yet.
    monkeypatch.setattr(sibling(convert, "fcurves"), "_NEW_FCURVE_TAKES_GROUP", False)
    obj = import_clip("walk_normal_001", 'QUATERNION')
    motion = convert.action_to_motion(obj, obj.animation_data.action, frame_start=1, frame_end=5)

    written = convert.write_action(obj, motion, "grouped", frame_start=1)

    channelbag = anim_utils.action_get_channelbag_for_slot(written, written.slots[0])
    assert sorted(group.name for group in channelbag.groups) == sorted(bone.name for bone in obj.pose.bones)
    for fcurve in channelbag.fcurves:
        assert fcurve.data_path.startswith(f'pose.bones["{fcurve.group.name}"]')


def test_quaternion_keys_keep_their_sign_from_frame_to_frame(empty_scene, convert, quat):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    motion = convert.action_to_motion(obj, obj.animation_data.action, frame_start=1, frame_end=60)
    flipped = motion.rotations.copy()
    flipped[1::2] *= -1.0  # the same rotations, every other one with the opposite sign

    written = convert.write_action(obj, motion.with_arrays(rotations=flipped), "flipped", frame_start=1)

    channelbag = anim_utils.action_get_channelbag_for_slot(written, written.slots[0])
    name = obj.pose.bones[1].name
    curves = [channelbag.fcurves.find(f'pose.bones["{name}"].rotation_quaternion', index=i) for i in range(4)]
    values = np.empty((4, 120), dtype=np.float32)
    for i, fcurve in enumerate(curves):
        fcurve.keyframe_points.foreach_get("co", values[i])
    q = values[:, 1::2].T
    assert np.all(np.sum(q[1:] * q[:-1], axis=-1) > 0.0)


def test_converting_and_writing_leave_the_source_action_unchanged(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    source = obj.animation_data.action
    before = all_keys(source)
    slots_before = [slot.identifier for slot in source.slots]
    frame_range = tuple(source.frame_range)

    motion = convert.action_to_motion(obj, source)
    convert.write_action(obj, motion, "copy")
    strip = obj.animation_data.nla_tracks.new().strips.new("walk", 1, source)
    strip.scale = 2.0
    convert.strip_to_motion(obj, strip)

    after = all_keys(source)
    assert after.keys() == before.keys()
    for channel, arrays in before.items():
        for old, new in zip(arrays, after[channel]):
            assert np.array_equal(old, new), channel
    assert [slot.identifier for slot in source.slots] == slots_before
    assert tuple(source.frame_range) == frame_range
    assert obj.animation_data.action == source


# ---------------------------------------------------------------------------
# Every rotation mode, connected bones, bone roll, several roots, Bézier keys


ROTATION_MODES = ['QUATERNION', 'XYZ', 'XZY', 'YXZ', 'YZX', 'ZXY', 'ZYX', 'AXIS_ANGLE']
KEY_FRAMES = np.array([1.0, 4.0, 7.0, 10.0, 13.0])


def build_rig(scene, seed: int = 3) -> bpy.types.Object:
    """Eight bones in two trees, rolled and tilted at random, one per rotation mode.

    Bones 2 and 5 are connected to their parents; ``prop`` and ``ik_target``
    are roots. Every channel of the bone's mode and its location is keyed at
    random on ``KEY_FRAMES``, linearly, except one rotation curve with Bézier
    keys and one location curve with constant keys.
    """
    rng = np.random.default_rng(seed)
    armature = bpy.data.armatures.new("Rig")
    obj = bpy.data.objects.new("Rig", armature)
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='EDIT')
    layout = [  # name, parent, connected
        ("pelvis", None, False), ("spine", "pelvis", False), ("chest", "spine", True),
        ("arm", "chest", False), ("hand", "arm", False), ("finger", "hand", True),
        ("prop", None, False), ("ik_target", None, False),
    ]
    for name, parent, connected in layout:
        bone = armature.edit_bones.new(name)
        if connected:
            bone.head = armature.edit_bones[parent].tail
        else:
            bone.head = rng.uniform(-1.0, 1.0, 3)
        bone.tail = np.array(bone.head) + rng.uniform(-1.0, 1.0, 3)
        bone.roll = rng.uniform(-np.pi, np.pi)
        if parent:
            bone.parent = armature.edit_bones[parent]
            bone.use_connect = connected
    bpy.ops.object.mode_set(mode='OBJECT')

    action = bpy.data.actions.new("Rig moves")
    slot = action.slots.new(id_type='OBJECT', name=obj.name)
    channelbag = ensure_channelbag(action, slot)
    for (name, _, _), mode in zip(layout, ROTATION_MODES):
        pose_bone = obj.pose.bones[name]
        pose_bone.rotation_mode = mode
        prop, size = {'QUATERNION': ("rotation_quaternion", 4), 'AXIS_ANGLE': ("rotation_axis_angle", 4)}.get(
            mode, ("rotation_euler", 3))
        channels = [(prop, i, rng.uniform(-2.0, 2.0, len(KEY_FRAMES))) for i in range(size)]
        channels += [("location", i, rng.uniform(-0.5, 0.5, len(KEY_FRAMES))) for i in range(3)]
        for prop, index, values in channels:
            fcurve = new_fcurve(channelbag, f'pose.bones["{name}"].{prop}', index, name)
            points = fcurve.keyframe_points
            points.add(len(KEY_FRAMES))
            points.foreach_set("co", np.stack([KEY_FRAMES, values], axis=-1).ravel().astype(np.float32))
            kind = {("spine", "rotation_euler", 1): 'BEZIER', ("arm", "location", 2): 'CONSTANT'}.get(
                (name, prop, index), 'LINEAR')
            for point in points:
                point.interpolation = kind
            fcurve.update()
    obj.animation_data_create()
    play(obj, action)
    return obj


def test_every_rotation_mode_maps_onto_blenders_pose(empty_scene, convert, quat):
    obj = build_rig(empty_scene)
    frames = np.arange(1, 14)

    skeleton, info = convert.armature_skeleton(obj)
    motion = convert.action_to_motion(obj, obj.animation_data.action)

    assert skeleton.names[0] == "Rig" and info.bones[0] is None, "two roots: the armature origin is joint 0"
    assert set(info.rotation_modes[1:]) == set(ROTATION_MODES)
    assert motion.n_frames == len(frames)
    heads, matrices = evaluated_pose(obj, frames)
    order = joint_bones(obj, info)
    positions, rotations = motion.global_transforms()
    assert np.abs(positions[:, 1:] - heads[:, order]).max() < TOLERANCE_M
    posed = quat.to_matrix(quat.mul(rotations[:, 1:], info.rest_rotations[1:]))
    assert np.abs(posed - matrices[:, order, :3, :3]).max() < 1e-5

    play(obj, convert.write_action(obj, motion, "Rig again", frame_start=1))
    heads_again, matrices_again = evaluated_pose(obj, frames)
    assert np.abs(heads_again - heads).max() < TOLERANCE_M
    assert np.abs(matrices_again[..., :3, :3] - matrices[..., :3, :3]).max() < 1e-5


def test_whole_array_sampling_matches_blenders_fcurve_evaluate(empty_scene, convert):
    obj = build_rig(empty_scene)
    channelbag = anim_utils.action_get_channelbag_for_slot(obj.animation_data.action, obj.animation_data.action_slot)
    frames = np.linspace(-2.0, 16.0, 181)  # before, between, on and after the keys

    for fcurve in channelbag.fcurves:
        slow = np.array([fcurve.evaluate(f) for f in frames])
        assert np.abs(sibling(convert, "fcurves").sample_fcurve(fcurve, frames) - slow).max() < 1e-6, fcurve.data_path


def test_curves_sampled_together_match_blenders_evaluate_one_by_one(empty_scene, convert):
    obj = build_rig(empty_scene)
    channelbag = anim_utils.action_get_channelbag_for_slot(obj.animation_data.action, obj.animation_data.action_slot)
    # besides the rig's curves (all keyed on the same frames, one Bézier, one constant):
    # other key frames, a single key, cyclic extrapolation, a modifier
    rng = np.random.default_rng(5)
    for index, key_frames in enumerate(([0.0, 3.5, 9.0], [4.0], [1.0, 2.0, 6.0], [1.0, 2.0, 6.0])):
        fcurve = channelbag.fcurves.new('pose.bones["prop"].scale', index=index)
        fcurve.keyframe_points.add(len(key_frames))
        co = np.stack([key_frames, rng.uniform(-1.0, 1.0, len(key_frames))], axis=-1)
        fcurve.keyframe_points.foreach_set("co", co.ravel().astype(np.float32))
        for point in fcurve.keyframe_points:
            point.interpolation = 'LINEAR'
        fcurve.update()
    channelbag.fcurves[-2].extrapolation = 'LINEAR'
    channelbag.fcurves[-1].modifiers.new('NOISE')
    fcurves = list(channelbag.fcurves)
    frames = np.linspace(-2.0, 16.0, 181)

    together = sibling(convert, "fcurves").sample_fcurves(fcurves, frames)

    slow = np.array([[fcurve.evaluate(f) for fcurve in fcurves] for f in frames])
    assert together.shape == (len(frames), len(fcurves))
    assert np.abs(together - slow).max() < 1e-6


# ---------------------------------------------------------------------------
# NLA strips


def walk_strip(obj) -> bpy.types.NlaStrip:
    """The clip's action, frames 10 to 40, as the only strip on the NLA, from scene frame 1."""
    action = obj.animation_data.action
    obj.animation_data.action = None
    strip = obj.animation_data.nla_tracks.new().strips.new("walk", 1, action)
    strip.action_frame_start = 10.0
    strip.action_frame_end = 40.0
    return strip


@pytest.mark.parametrize(
    "scale, repeat, reverse",
    [(1.0, 1.0, False), (2.0, 1.0, False), (1.0, 2.5, False), (0.5, 2.0, True), (1.5, 1.0, True)],
)
def test_a_strip_plays_the_motion_blender_evaluates(empty_scene, convert, scale, repeat, reverse):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    strip = walk_strip(obj)
    strip.scale = scale
    strip.repeat = repeat
    strip.use_reverse = reverse

    motion = convert.strip_to_motion(obj, strip)

    assert motion.n_frames == int(strip.frame_end - strip.frame_start) + 1
    _, info = convert.armature_skeleton(obj)
    heads, _ = evaluated_pose(obj, strip.frame_start + np.arange(motion.n_frames))
    assert np.abs(motion.global_positions() - heads[:, joint_bones(obj, info)]).max() < TOLERANCE_M


def test_scale_two_plays_each_pose_at_twice_the_frame(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    strip = walk_strip(obj)
    once = convert.strip_to_motion(obj, strip)

    strip.scale = 2.0
    slow = convert.strip_to_motion(obj, strip)

    assert slow.n_frames == 2 * (once.n_frames - 1) + 1 == 61
    assert np.allclose(slow.global_positions()[::2], once.global_positions(), atol=1e-9)
    halfway = convert.action_to_motion(obj, strip.action, frame_start=10.5, frame_end=39.5)
    assert np.allclose(slow.global_positions()[1::2], halfway.global_positions(), atol=1e-9)


def test_repeat_starts_the_action_range_again_and_ends_on_its_last_frame(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    strip = walk_strip(obj)
    once = convert.strip_to_motion(obj, strip).global_positions()

    strip.repeat = 2.0
    twice = convert.strip_to_motion(obj, strip).global_positions()

    assert len(twice) == 61
    assert np.allclose(twice[:30], once[:30], atol=1e-9)
    assert np.allclose(twice[30:60], once[:30], atol=1e-9)
    assert np.allclose(twice[60], once[30], atol=1e-9)


def test_a_strip_plays_its_action_range_only(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    strip = walk_strip(obj)

    motion = convert.strip_to_motion(obj, strip)

    whole = convert.action_to_motion(obj, strip.action)
    assert whole.n_frames == 195 and motion.n_frames == 31
    assert np.allclose(motion.global_positions(), whole.global_positions()[9:40], atol=1e-9)


# ---------------------------------------------------------------------------
# Errors that say what to fix


def test_a_strip_without_an_action_is_named(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    strip = walk_strip(obj)
    strip.action = None

    with pytest.raises(ValueError, match=r"strip 'walk' of armature 'walk_normal_001' has no action"):
        convert.strip_to_motion(obj, strip)


def test_an_action_for_another_armature_is_refused_naming_both(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    other = bpy.data.actions.new("tail wag")
    slot = other.slots.new(id_type='OBJECT', name="Dog")
    channelbag = ensure_channelbag(other, slot)
    for path in ('pose.bones["Tail"].rotation_quaternion', "location"):
        fcurve = channelbag.fcurves.new(path, index=0)
        fcurve.keyframe_points.add(2)
        fcurve.keyframe_points.foreach_set("co", np.array([1.0, 0.0, 10.0, 1.0], dtype=np.float32))
    strip = obj.animation_data.nla_tracks.new().strips.new("wag", 1, other)

    with pytest.raises(ValueError, match=r"strip 'wag' of armature 'walk_normal_001'.*animates no bone"):
        convert.strip_to_motion(obj, strip)
    with pytest.raises(ValueError, match=r"action 'tail wag' animates no bone of armature 'walk_normal_001'"):
        convert.action_to_motion(obj, other)


def test_a_zero_length_strip_is_refused(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    strip = walk_strip(obj)
    strip.frame_end = strip.frame_start

    with pytest.raises(ValueError, match=r"strip 'walk' of armature 'walk_normal_001' is zero frames long"):
        convert.strip_to_motion(obj, strip)


def test_writing_a_motion_with_joints_the_armature_lacks_names_them(empty_scene, convert):
    obj = import_clip("walk_normal_001", 'QUATERNION')
    motion = convert.action_to_motion(obj, obj.animation_data.action, frame_start=1, frame_end=3)

    with pytest.raises(ValueError, match=r"\['Pelvis'\] are not bones of armature 'walk_normal_001'"):
        convert.write_action(obj, motion.renamed({"Hips": "Pelvis"}), "renamed")


@pytest.mark.parametrize("seed", range(5))
def test_a_window_of_changed_keys_continues_as_a_whole_write_would(convert, quat, seed):
    """Quaternion signs and Euler turns in a rewritten window follow the key before it, and the
    rest of the curve is flipped or turned with it where needed: the same keys as writing it all."""
    rng = np.random.default_rng(seed)
    frames, first, last = 200, 60, 90
    # a rotation turning several times about a wobbling axis: sign flips and Euler wraps all along
    angle = np.cumsum(rng.uniform(0.0, 0.25, frames))
    axis = np.array([0.3, 1.0, 0.2]) + 0.2 * rng.standard_normal((frames, 3))
    raw = quat.from_axis_angle(axis / np.linalg.norm(axis, axis=-1, keepdims=True), angle)
    raw *= np.where(rng.random(frames) < 0.3, -1.0, 1.0)[:, None]  # arbitrary signs, as rendering gives
    changed = raw.copy()
    changed[first:last + 1] = quat.mul(quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 2.5), raw[first:last + 1])

    held = quat.unroll(raw, axis=0)
    (window,) = sibling(convert, "pose").continued_quaternions(changed[first:last + 1, None], held[:, None], first, last)
    stitched = np.concatenate([held[:first], window, held[first + len(window):]])
    np.testing.assert_allclose(stitched, quat.unroll(changed, axis=0), atol=1e-12)

    euler = np.unwrap(sibling(convert, "pose").quat_to_euler(raw, 'XYZ'), axis=0)
    (window,) = sibling(convert, "pose").continued_euler(sibling(convert, "pose").quat_to_euler(changed[first:last + 1, None], 'XYZ'), euler[:, None],
                                         first, last)
    stitched = np.concatenate([euler[:first], window, euler[first + len(window):]])
    np.testing.assert_allclose(stitched, np.unwrap(sibling(convert, "pose").quat_to_euler(changed, 'XYZ'), axis=0), atol=1e-9)


def test_an_action_written_again_lets_go_of_the_keys_it_had(empty_scene, installed_extension):
    """Writing an action again (a re-bake, a live update's segment) replaces its keys without keeping
    the old ones: Blender's ``action.layers.remove`` kept their memory (some 70 MB a re-bake of 3,000
    frames on 25 bones, and the depsgraph grew slower with each), so the action is emptied curve by
    curve, and its layer, strip and slot stay."""
    import resource

    fcurves = importlib.import_module(f"{installed_extension}.addon.fcurves")
    obj = bpy.data.objects.new("rig", None)
    action = bpy.data.actions.new("rewritten")
    frames, values = np.arange(20_000, dtype=np.float64), np.zeros((20_000, 4))
    bones = 5  # 400,000 keys a write

    def write():
        channelbag = fcurves.emptied_channelbag(action, obj)
        for bone in range(bones):
            fcurves.add_curves(channelbag, f"bone {bone}", "rotation_quaternion", frames, values)

    write()
    layer, first = action.layers[0], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(6):
        write()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - first  # (KiB)
    keys_kib = bones * 4 * len(frames) * 40 / 1024  # at least 40 bytes a key (a BezTriple holds 9 floats)
    assert grown < keys_kib, f"six writes grew the process by {grown:.0f} KiB, a write's keys are {keys_kib:.0f}"
    assert action.layers[0] == layer and len(action.layers) == 1 and len(action.slots) == 1
    assert sum(len(bag.fcurves) for bag in action.layers[0].strips[0].channelbags) == bones * 4
