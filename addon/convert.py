"""Blender armatures, actions and NLA strips to and from core motions.

The one place where Blender's conventions meet the core's (:mod:`core.motion`).
They are made explicit here, once:

* **Joints are bones**, parents first (depth first from the root, children in
  the armature's order). An armature with several root bones gets one extra
  joint 0, named after the armature object, fixed at the armature's origin;
  the root bones hang from it.
* **World frame = armature object space**: Z up, lengths in Blender units
  (``Skeleton.unit`` is the scene's unit scale, metres per unit, usually 1;
  ``Skeleton.up`` is +Z). The object's own transform is not part of the motion.
* **The skeleton has an identity rest pose**: every joint frame has the
  armature's axes, so the rest offsets are the differences of the bone heads
  (``Skeleton.rest_positions()`` is the rest heads relative to joint 0) and
  the global joint positions of a motion are the bone heads in armature space.
* **Pose channels to core channels**, quaternion, Euler or axis-angle as the
  bone's ``rotation_mode`` reads them: exact both ways, written down in
  :mod:`.pose` (:class:`.pose.ArmatureInfo` keeps each bone's rest rotation and head).
* **Ignored**: pose scale (assumed 1, so scale inheritance does not matter),
  the location of connected bones (Blender ignores it too: a connected head
  stays on its parent's tail), and non-default inheritance of rotation or
  location (``ArmatureInfo.nonstandard_bones`` lists the bones that have it
  and are therefore not mapped exactly).
* A channel the action does not animate is at rest (not at the bone's current
  pose value): the motion is what the action says, whatever the scene holds.
* Frames: one sample per frame, end inclusive; ``fps`` is the scene's
  ``render.fps / render.fps_base``.

Sampling and writing F-curves, and digests: :mod:`.fcurves`.
"""

from __future__ import annotations

from typing import Callable

import bpy
import numpy as np

from ..core import quat
from ..core.motion import Motion, Skeleton
from ..core.rig import parse_bone_mapping
from ..core.text import counted
from .fcurves import (action_channelbag, add_curves, animated_bone_curves, bone_fcurves, bone_path, channel_values,
                      emptied_channelbag, has_keys_or_modifiers, slot_for)
from .pose import (ArmatureInfo, axis_angle_to_quat, AxisAngleRows, continued_euler, continued_quaternions,
                   euler_to_quat, KeyedRows, normalized_quaternions, pose_basis, pose_location, quat_to_axis_angle,
                   quat_to_euler, REST_AXIS_ANGLE, REST_QUATERNION)


def armature_skeleton(obj: bpy.types.Object) -> tuple[Skeleton, ArmatureInfo]:
    """The armature's rest pose as a core :class:`Skeleton`, and the mapping to its bones.

    See the module docstring for the conventions. Leaf bones get their tail
    as an end site, so the skeleton writes as a BVH whose tips are the tails.
    """
    if obj is None or obj.type != 'ARMATURE':
        kind = "nothing" if obj is None else f"{obj.name!r} ({obj.type.lower()})"
        raise ValueError(f"an armature object is needed, got {kind}")
    bones = obj.data.bones
    if len(bones) == 0:
        raise ValueError(f"armature {obj.name!r} has no bones")
    order = _parents_first(bones)
    index = {bone.name: k for k, bone in enumerate(order)}
    n = len(order)

    matrices = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix_local", matrices)
    # foreach_get flattens Blender's column-major matrices: transpose back.
    matrices = matrices.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)
    tails = np.empty(len(bones) * 3, dtype=np.float32)
    bones.foreach_get("tail_local", tails)
    tails = tails.reshape(-1, 3).astype(np.float64)
    position = {bone.name: k for k, bone in enumerate(bones)}
    rows = [position[bone.name] for bone in order]
    rest_rot = quat.from_matrix(matrices[rows, :3, :3])
    heads = matrices[rows, :3, 3]
    tails = tails[rows]
    parents = np.array([index[b.parent.name] if b.parent else -1 for b in order], dtype=np.int64)

    names = [bone.name for bone in order]
    joint_bones: list = list(names)
    modes = [obj.pose.bones[name].rotation_mode for name in names]
    connected = [bool(bone.use_connect) for bone in order]
    end_sites = {j: tails[j] - heads[j] for j in range(n) if not order[j].children}

    roots = np.flatnonzero(parents < 0)
    if len(roots) > 1:
        # A core skeleton has one root: the armature origin becomes joint 0.
        origin = obj.name
        while origin in index:
            origin += "_origin"
        names.insert(0, origin)
        joint_bones.insert(0, None)
        modes.insert(0, 'QUATERNION')
        connected.insert(0, False)
        parents = np.concatenate([[-1], np.where(parents < 0, 0, parents + 1)])
        rest_rot = np.concatenate([quat.identity((1,)), rest_rot])
        heads = np.concatenate([np.zeros((1, 3)), heads])
        end_sites = {j + 1: v for j, v in end_sites.items()}

    parent_heads = np.where(parents[:, None] >= 0, heads[np.maximum(parents, 0)], 0.0)
    skeleton = Skeleton(
        names=tuple(names),
        parents=parents,
        offsets=heads - parent_heads,
        end_sites=end_sites,
        up=np.array([0.0, 0.0, 1.0]),
        unit=float(bpy.context.scene.unit_settings.scale_length),
    )
    nonstandard = tuple(
        bone.name for bone in order
        if not bone.use_inherit_rotation or not bone.use_local_location or bone.use_relative_parent
    )
    info = ArmatureInfo(
        armature=obj.name,
        bones=tuple(joint_bones),
        rest_rotations=_frozen(rest_rot),
        rest_heads=_frozen(heads),
        rotation_modes=tuple(modes),
        connected=_frozen(np.array(connected, dtype=bool)),
        nonstandard_bones=nonstandard,
    )
    return skeleton, info


def armature_from_skeleton(
    skeleton: Skeleton,
    name: str,
    collection: bpy.types.Collection | None = None,
) -> bpy.types.Object:
    """A new armature object whose rest pose is ``skeleton``'s identity rest pose.

    One bone per joint, named after it, with the same parent. A bone's head
    is at its joint's rest position; its tail points at the joint's first
    child, or along its End Site, or else on along its parent's bone (so
    no bone has zero length, which Blender would delete). No bone is
    connected, so every bone keeps its location channels, and every bone
    rotates in quaternions. :func:`armature_skeleton` of the result gives
    back ``skeleton``'s names, parents and offsets, so motions on
    ``skeleton`` write to it with :func:`write_action` unchanged.

    ``skeleton`` must be Z up (Blender's up axis); its lengths become Blender
    units as they are (set the scene's unit scale to ``skeleton.unit`` for
    true sizes). The object is linked to ``collection`` (default the
    scene's), made active and left in Object mode.

    Raises ``ValueError`` for a skeleton that is not Z up.
    """
    if not np.allclose(skeleton.up, (0.0, 0.0, 1.0), atol=1e-6):
        raise ValueError(f"the skeleton's up axis is {skeleton.up.tolist()}, not +Z; convert it to Z up first")
    heads = skeleton.rest_positions() + skeleton.offsets[0]
    tails = _rest_tails(skeleton, heads)
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    (collection or bpy.context.scene.collection).objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    # Edit bones exist only in Edit mode.
    bpy.ops.object.mode_set(mode='EDIT')
    bones = []
    for j, joint in enumerate(skeleton.names):
        bone = data.edit_bones.new(joint)
        bone.head = heads[j]
        bone.tail = tails[j]
        if skeleton.parents[j] >= 0:
            bone.parent = bones[skeleton.parents[j]]
            bone.use_connect = False
        bones.append(bone)
    bpy.ops.object.mode_set(mode='OBJECT')
    for bone in obj.pose.bones:
        bone.rotation_mode = 'QUATERNION'
    return obj


def _rest_tails(skeleton: Skeleton, heads: np.ndarray) -> np.ndarray:
    """Bone tails ``(J, 3)``: toward the first child, along the End Site, or on along the parent."""
    scale = max(float(np.linalg.norm(skeleton.offsets, axis=-1).max()), 1e-3)
    shortest = 1e-3 * scale
    tails = np.empty_like(heads)
    for j in range(len(skeleton)):
        children = skeleton.children(j)
        toward = skeleton.offsets[children[0]] if children else skeleton.end_sites.get(j, np.zeros(3))
        if np.linalg.norm(toward) < shortest:
            parent = skeleton.parents[j]
            along = tails[parent] - heads[parent] if parent >= 0 else np.array([0.0, 0.0, 1.0])
            toward = 0.5 * along if np.linalg.norm(along) >= shortest else np.array([0.0, 0.0, 0.1 * scale])
        tails[j] = heads[j] + toward
    return tails


def _parents_first(bones) -> list:
    """Bones depth first from each root, children in the armature's order."""
    order = []
    stack = [bone for bone in bones if bone.parent is None][::-1]
    while stack:
        bone = stack.pop()
        order.append(bone)
        stack.extend(list(bone.children)[::-1])
    return order


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def action_to_motion(
    obj: bpy.types.Object,
    action: bpy.types.Action,
    slot: bpy.types.ActionSlot | None = None,
    frame_start: float | None = None,
    frame_end: float | None = None,
    fps: float | None = None,
) -> Motion:
    """The motion ``action`` gives the armature ``obj``, one sample per frame.

    slot         the action slot to read; by default the one ``obj`` uses if
                 the action is assigned to it, else the action's first slot
                 for objects.
    frame_start, frame_end   action frames, end inclusive; default the
                 action's frame range (its manual range if set).
    fps          default the scene's ``render.fps / render.fps_base``.

    Raises ``ValueError`` if the action animates no bone of ``obj``. Neither
    the action nor the object is changed.
    """
    if action is None:
        raise ValueError(f"no action given for armature {obj.name!r}")
    range_start, range_end = action.frame_range
    start = float(range_start if frame_start is None else frame_start)
    end = float(range_end if frame_end is None else frame_end)
    if end < start:
        raise ValueError(f"frame range of action {action.name!r} is empty: {start:g} to {end:g}")
    frames = start + np.arange(_frame_count(end - start))
    slot = slot_for(obj, action, slot)
    return _sample_motion(obj, action, slot, frames, fps, f"action {action.name!r}")


def strip_to_motion(obj: bpy.types.Object, strip: bpy.types.NlaStrip, fps: float | None = None) -> Motion:
    """What the NLA ``strip`` plays on ``obj``: one sample per scene frame of the strip.

    Samples are at ``strip.frame_start + k`` up to ``strip.frame_end``
    (inclusive), each mapped to an action frame as Blender's NLA does
    (``nlastrip_get_frame_actionclip``): the action range
    ``action_frame_start..action_frame_end`` is played ``repeat`` times, each
    time stretched by ``scale``, backwards if ``use_reverse``; at the strip's
    last frame a whole number of repeats ends on the range's last frame. The
    strip's blending (influence, blend type, extrapolation) is not part of
    the motion.

    Raises ``ValueError`` naming the strip and the armature for a strip that
    is not an action clip, has no action, lasts zero frames, has animated
    strip time, or whose action animates no bone of ``obj``.
    """
    where = f"NLA strip {strip.name!r} of armature {obj.name!r}"
    if strip.type != 'CLIP':
        raise ValueError(f"{where} is a {strip.type.lower()} strip; only action strips hold a motion")
    if strip.action is None:
        raise ValueError(f"{where} has no action; pick one in the strip's properties (NLA sidebar, Strip tab)")
    length = strip.frame_end - strip.frame_start
    if not length > 1e-6:
        raise ValueError(f"{where} is zero frames long (frame {strip.frame_start:g} to {strip.frame_end:g}); lengthen it")
    if strip.use_animated_time:
        raise ValueError(f"{where} has animated Strip Time, which is not supported; bake the strip to an action first")
    frames = strip.frame_start + np.arange(_frame_count(length))
    return _sample_motion(
        obj, strip.action, strip.action_slot, _strip_action_frames(strip, frames), fps,
        f"{where} (action {strip.action.name!r})",
    )


def _frame_count(length: float) -> int:
    """Samples of a range ``length`` frames long, both ends included."""
    return int(np.floor(length + 1e-6)) + 1


def _strip_action_frames(strip: bpy.types.NlaStrip, frames: np.ndarray) -> np.ndarray:
    """Action frames an action-clip strip plays at scene ``frames`` (Blender's NLA time map)."""
    start, end = strip.frame_start, strip.frame_end
    act_start, act_end = strip.action_frame_start, strip.action_frame_end
    scale = abs(strip.scale) or 1.0
    repeat = strip.repeat or 1.0
    act_length = act_end - act_start
    if abs(act_length) < 1e-6:
        act_length = 1.0  # as BKE_nla_clip_length_get_nonzero
    phase = np.fmod(frames - start, act_length * scale) / scale
    at_end = np.isclose(frames, end, rtol=0.0, atol=1e-6) & np.isclose(repeat, np.floor(repeat))
    if strip.use_reverse:
        return np.where(at_end, act_start, act_end - phase)
    return np.where(at_end, act_end, act_start + phase)


def _sample_motion(obj, action, slot, frames: np.ndarray, fps: float | None, what: str) -> Motion:
    skeleton, info = armature_skeleton(obj)
    if slot is None:
        raise ValueError(
            f"{what} has no action slot for objects; pick the slot of armature {obj.name!r} "
            "next to the action's name"
        )
    _check_animates_armature(obj, action, slot, info, what, body_bones(obj, skeleton, info))
    channels = bone_fcurves(action, slot, info)
    n_frames, n_joints = len(frames), len(info.bones)
    # Each property of all bones at once: one interpolation for all curves keyed on the same frames.
    location = np.zeros((n_frames, n_joints, 3))
    moving = [j for j, bone in enumerate(info.bones) if bone is not None and not info.connected[j]]
    location[:, moving] = channel_values(channels, [info.bones[j] for j in moving], "location", (0.0, 0.0, 0.0), frames)
    basis = np.tile(np.asarray(REST_QUATERNION), (n_frames, n_joints, 1))  # the extra joint 0 stays at rest
    for mode in sorted(set(info.rotation_modes)):
        joints = [j for j, bone in enumerate(info.bones) if bone is not None and info.rotation_modes[j] == mode]
        if not joints:
            continue
        bones = [info.bones[j] for j in joints]
        if mode == 'QUATERNION':
            q = channel_values(channels, bones, "rotation_quaternion", REST_QUATERNION, frames)
            basis[:, joints] = normalized_quaternions(q)
        elif mode == 'AXIS_ANGLE':
            aa = channel_values(channels, bones, "rotation_axis_angle", REST_AXIS_ANGLE, frames)
            basis[:, joints] = axis_angle_to_quat(aa)
        else:
            angles = channel_values(channels, bones, "rotation_euler", (0.0, 0.0, 0.0), frames)
            basis[:, joints] = euler_to_quat(angles, mode)
    rest = info.rest_rotations
    rotations = quat.mul(quat.mul(rest, basis), quat.inv(rest))
    positions = skeleton.offsets + quat.mul_vec(rest, location)
    if fps is None:
        fps = scene_fps(bpy.context.scene)
    return Motion(skeleton, rotations, positions, fps)


def scene_fps(scene: bpy.types.Scene) -> float:
    """Frames per second of ``scene``: ``render.fps / render.fps_base``."""
    return scene.render.fps / scene.render.fps_base


def body_bones(obj, skeleton: Skeleton, info: ArmatureInfo) -> list[str] | None:
    """The bones the rig's roles use (pelvis, spine, neck, head, legs, arms), or ``None`` if none are found.

    ``core.rig.find_rig`` on the armature's rest pose, with its Bone Mapping.
    What synthesis moves the body by: fingers, face, twist, IK and control
    bones are not among them, so an action need not animate those.
    """
    from ..core.rig import find_rig

    try:
        overrides = parse_bone_mapping(obj.smart_motion.bone_mapping) if hasattr(obj, "smart_motion") else {}
        rig = find_rig(skeleton, overrides=overrides or None)
    except ValueError:  # RigError too: the synthesis reports it, with what to map
        return None
    joints = set()
    for joint in rig.roles.values():
        joints.update(joint if isinstance(joint, tuple) else () if joint is None else (joint,))
    return [info.bones[j] for j in sorted(joints) if info.bones[j] is not None]


def _check_animates_armature(obj, action, slot, info: ArmatureInfo, what: str, body: list[str] | None) -> None:
    """Refuse an action that is not for ``obj``: no keys, or under half its ``body`` bones, or mostly other bones.

    Such an action would still sample (unanimated bones stay at rest), and
    synthesize and bake a body half at rest without a word: a CMU action
    on a Bandai rig shares 4 of its 22 bone names. Coverage is judged on
    the ``body`` bones (:func:`body_bones`), or every bone where the rig's
    roles are not found: a body clip on a rig with fingers, twist and
    control bones leaves those at rest, as it should.
    """
    channelbag = action_channelbag(action, slot)
    curves = list(channelbag.fcurves) if channelbag is not None else []
    if curves and not any(has_keys_or_modifiers(fcurve) for fcurve in curves):
        raise ValueError(
            f"{what} has {len(curves)} F-curve{'' if len(curves) == 1 else 's'} but no keys; "
            "key the action, or pick one with keys"
        )
    armature = [b for b in info.bones if b is not None]
    animated = {bone for bone, _, _ in animated_bone_curves(action, slot)}
    shared = [b for b in armature if b in animated]
    if not shared:
        raise ValueError(
            f"{what} animates no bone of armature {obj.name!r} "
            f"(bones are named like {armature[:3]}); "
            "pick the action made for this armature or rename the bones to match"
        )
    judged = body if body else armature
    moved = [b for b in judged if b in animated]
    if 2 * len(moved) >= len(judged) and 2 * len(shared) >= len(animated):
        return
    foreign = sorted(animated.difference(armature))
    at_rest = [b for b in judged if b not in animated]
    which = "body bones (pelvis, spine, legs, arms)" if body else "bones"
    raise ValueError(
        f"{what} animates {len(moved)} of the {len(judged)} {which} of armature {obj.name!r} "
        f"({listed_names(moved)})"
        + (f" and {counted(len(foreign), 'bone')} the armature does not have ({listed_names(foreign)})" if foreign else "")
        + f", leaving {listed_names(at_rest)} at rest: it is not an action for this armature; pick the action made "
        "for it, or rename the action's bones to the armature's"
    )


def listed_names(names: list[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def write_action(
    obj: bpy.types.Object,
    motion: Motion,
    name: str,
    frame_start: float | None = None,
    progress: Callable[[float], None] | None = None,
    into: bpy.types.Action | None = None,
    channels: list | None = None,
) -> bpy.types.Action:
    """A new action posing the armature ``obj`` as ``motion`` does, keyed on every frame.

    Joints are matched to bones by name; every joint must be a bone of
    ``obj`` (the extra origin joint of a several-root armature excepted),
    bones without a joint get no keys. Each bone gets its location (not for
    connected bones, whose location Blender ignores) and the rotation
    channels of its ``rotation_mode``, one linear key per frame from
    ``frame_start`` (default the scene's start frame), so that Blender's
    evaluation between keys is the straight interpolation. Quaternion signs
    are kept continuous and Euler angles unwrapped, so interpolation never
    swings the long way round.

    The action gets one slot for objects, named after ``obj``, and is not
    assigned: ``obj.animation_data.action = action`` plays it. ``obj`` and
    ``motion`` are unchanged. ``progress``, if given, is called with the
    fraction of bones written so far, after each bone.

    With ``into``, that action is written instead of a new one: its keys
    are replaced (:func:`.fcurves.emptied_channelbag`) and ``name`` is ignored, so
    whatever uses it (the armature, an NLA strip) plays the new keys. ``channels``:
    :func:`bone_channels` of ``motion`` on ``obj`` when the caller has them (the armature unchanged since).
    """
    if frame_start is None:
        frame_start = bpy.context.scene.frame_start
    channels = bone_channels(obj, motion) if channels is None else channels
    if into is None:
        action = bpy.data.actions.new(name)
        channelbag = action_channelbag(action, action.slots.new(id_type='OBJECT', name=obj.name), ensure=True)
    else:
        action, channelbag = into, emptied_channelbag(into, obj)
    frames = float(frame_start) + np.arange(motion.n_frames, dtype=np.float64)
    bones = list(dict.fromkeys(bone for bone, _, _ in channels))
    for bone, prop, values in channels:
        add_curves(channelbag, bone, prop, frames, values)
        if progress is not None:
            progress((bones.index(bone) + 1) / len(bones))
    return action


def bone_channels(obj: bpy.types.Object, motion: Motion) -> list[tuple[str, str, np.ndarray]]:
    """``(bone, property, values (F, C))`` of every channel :func:`write_action` keys for ``motion`` on ``obj``.

    Per bone its rotation in the bone's ``rotation_mode`` (signs kept
    continuous, Euler angles unwrapped) and, unless connected, its location.
    Raises ``ValueError`` for a motion joint that is not a bone of ``obj``.
    """
    skeleton, info, pairs = _bone_joints(obj, motion)
    joints = [j for _, j in pairs]
    basis = pose_basis(info, motion.rotations[:, [s for s, _ in pairs]], joints)  # (F, K, 4)
    location = pose_location(skeleton, info, motion.positions[:, [s for s, _ in pairs]], joints)
    channels = []
    for k, j in enumerate(joints):
        bone, mode = info.bones[j], info.rotation_modes[j]
        if mode == 'QUATERNION':
            channels.append((bone, "rotation_quaternion", quat.unroll(basis[:, k], axis=0)))
        elif mode == 'AXIS_ANGLE':
            channels.append((bone, "rotation_axis_angle", quat_to_axis_angle(quat.unroll(basis[:, k], axis=0))))
        else:
            channels.append((bone, "rotation_euler", np.unwrap(quat_to_euler(basis[:, k], mode), axis=0)))
        if not info.connected[j]:
            channels.append((bone, "location", location[:, k]))
    return channels


def changed_bone_channels(
    obj: bpy.types.Object, motion: Motion, windows: dict, keyed: dict, armature: tuple | None = None,
) -> list[tuple[str, int, int, np.ndarray]]:
    """What :func:`bone_channels` gives for ``motion``, only where it differs from the keys an earlier
    motion of the same frames left: ``(data path, index, first frame, values)`` per F-curve to write.

    windows  ``{joint: (first, last)}``: the frames (from 0) where each joint of
             ``motion`` differs from the earlier motion; other joints are as keyed.
    keyed    ``{(data path, index): values (F,)}`` as the curves hold them now.

    A window continues from the key before it as a whole-motion write would:
    quaternion signs agree with it, Euler angles unwrap from it. Where the key
    after the window no longer follows (the other sign, another turn of
    2 pi), the rest of that curve is carried along, flipped or shifted, as a
    whole-motion write would give it. Joints sharing a window and a rotation
    mode are converted together (a moved strip gives one window to most joints).
    ``armature``: :func:`armature_skeleton` of ``obj`` when the caller keeps it.
    """
    skeleton, info, pairs = _bone_joints(obj, motion, armature)
    groups: dict[tuple, list[tuple[int, int]]] = {}
    for s, j in pairs:
        if s in windows:
            groups.setdefault((*windows[s], info.rotation_modes[j]), []).append((s, j))
    out = []
    for (first, last, mode), members in groups.items():
        sources = [s for s, _ in members]
        joints = [j for _, j in members]
        prop = {'QUATERNION': "rotation_quaternion", 'AXIS_ANGLE': "rotation_axis_angle"}.get(mode, "rotation_euler")
        size = 3 if prop == "rotation_euler" else 4
        curves = [[keyed[(bone_path(info.bones[j], prop), i)] for i in range(size)] for j in joints]
        held = KeyedRows(curves)
        basis = pose_basis(info, motion.rotations[first:last + 1][:, sources], joints)  # (W, K, 4)
        if prop == "rotation_euler":
            values = continued_euler(quat_to_euler(basis, mode), held, first, last)
        else:
            quats = held if prop == "rotation_quaternion" else AxisAngleRows(held)
            values = continued_quaternions(basis, quats, first, last)
            if prop == "rotation_axis_angle":
                values = [quat_to_axis_angle(v) for v in values]
        for j, v in zip(joints, values):
            out += [(bone_path(info.bones[j], prop), i, first, v[:, i]) for i in range(size)]
        unconnected = [k for k, j in enumerate(joints) if not info.connected[j]]
        if unconnected:
            location = pose_location(skeleton, info, motion.positions[first:last + 1][:, [sources[k] for k in unconnected]],
                                 [joints[k] for k in unconnected])
            for n, k in enumerate(unconnected):
                out += [(bone_path(info.bones[joints[k]], "location"), i, first, location[:, n, i]) for i in range(3)]
    return out


def _bone_joints(obj: bpy.types.Object, motion: Motion, armature: tuple | None = None):
    """``(skeleton, info, [(motion joint, armature joint), ...])`` of the joints that are bones of ``obj``
    (``armature``: its :func:`armature_skeleton`, read when ``None``)."""
    skeleton, info = armature or armature_skeleton(obj)
    pairs = []
    unknown = []
    for source, joint_name in enumerate(motion.skeleton.names):
        if joint_name in skeleton.names:
            j = skeleton.index(joint_name)
            if info.bones[j] is not None:
                pairs.append((source, j))
        else:
            unknown.append(joint_name)
    if unknown:
        raise ValueError(
            f"motion joints {unknown} are not bones of armature {obj.name!r}; "
            "rename the motion's joints to the armature's bone names first"
        )
    return skeleton, info, pairs


def find_armature_rig(obj: bpy.types.Object, motion):
    """The joint roles of ``obj`` (``core.rig.find_rig`` with the armature's Bone Mapping)."""
    from ..core.rig import RigError, find_rig

    overrides = parse_bone_mapping(obj.smart_motion.bone_mapping)
    try:
        return find_rig(motion, overrides=overrides or None)
    except RigError as error:
        raise RigError(
            f"armature {obj.name!r}: {error}. In Blender, map the bones in the Smart Motion panel's "
            "Bone Mapping field, e.g. left.hip=thigh_L, left.knee=shin_L, left.ankle=foot_L, "
            "right.hip=thigh_R, right.knee=shin_R, right.ankle=foot_R"
        ) from None
