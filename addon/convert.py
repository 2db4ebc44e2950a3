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
* **Pose channels to core channels.** Blender poses bone ``j`` as
  ``M_j = M_parent @ inv(Rest_parent) @ Rest_j @ Basis_j`` where ``Rest`` is
  ``bone.matrix_local`` (rotation ``B``, head ``h``, armature space) and
  ``Basis`` the pose channels (rotation ``b``, location ``l``). With the
  core's joint frame ``C_j = P_j inv(B_j)`` (``P_j`` the bone's posed
  rotation), the core's local channels are::

      rotation     R_j = B_j b_j inv(B_j)
      translation  t_j = (h_j - h_parent) + B_j l_j      (root: h_parent = 0)

  and back ``b_j = inv(B_j) R_j B_j``, ``l_j = inv(B_j) (t_j - (h_j - h_parent))``.
  Both directions are exact; :class:`ArmatureInfo` keeps ``B`` and ``h``.
* **Rotation channels** are the ones the pose bone's ``rotation_mode`` reads,
  as Blender evaluates it: ``rotation_quaternion`` (normalised),
  ``rotation_euler`` in any order, or ``rotation_axis_angle``. Blender's Euler
  order ``'XYZ'`` applies X first, ``R = Rz @ Ry @ Rx``, which is
  ``quat.from_euler(angles[..., ::-1], "ZYX")``.
* **Ignored**: pose scale (assumed 1, so scale inheritance does not matter),
  the location of connected bones (Blender ignores it too: a connected head
  stays on its parent's tail), and non-default inheritance of rotation or
  location (``ArmatureInfo.nonstandard_bones`` lists the bones that have it
  and are therefore not mapped exactly).
* A channel the action does not animate is at rest (not at the bone's current
  pose value): the motion is what the action says, whatever the scene holds.
* Frames: one sample per frame, end inclusive; ``fps`` is the scene's
  ``render.fps / render.fps_base``.

Reading samples F-curves, it never sets scene frames: curves whose keys are
all linear or constant, without modifiers and with constant extrapolation
(what importers and :func:`write_action` produce) are interpolated for all
frames at once from their keyframes (``foreach_get``), all the curves keyed
on the same frames in one array expression; any other curve
(Bézier keys, modifiers, cyclic extrapolation) is evaluated by Blender itself,
``FCurve.evaluate`` once per frame, as only Blender knows its exact shape.
Writing creates every F-curve's keys in bulk (``keyframe_points.add`` and
``foreach_set``), never one ``keyframe_insert`` per key.

Digests (:func:`armature_digest`, :func:`action_digest`) hash what reading
an armature or an action depends on, so that a caller can tell whether a
result computed from them earlier is still current without computing it again.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Iterator

import bpy
import numpy as np

from ..core import quat
from ..core.motion import Motion, Skeleton

__all__ = [
    "ArmatureInfo",
    "armature_from_skeleton",
    "armature_skeleton",
    "action_to_motion",
    "strip_to_motion",
    "write_action",
    "euler_to_quat",
    "quat_to_euler",
    "sample_fcurve",
    "sample_fcurves",
    "scene_fps",
    "armature_digest",
    "action_digest",
]

EULER_MODES = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")

_INTERPOLATION = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items
_CONSTANT = _INTERPOLATION["CONSTANT"].value
_LINEAR = _INTERPOLATION["LINEAR"].value

# Blender 5.0 added group_name to ActionChannelbagFCurves.new; 4.4 and 4.5 group afterwards.
_NEW_FCURVE_TAKES_GROUP = "group_name" in bpy.types.ActionChannelbagFCurves.bl_rna.functions["new"].parameters

# pose.bones["name"].channel, with the name escaped as bpy.utils.escape_identifier does.
_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(\w+)$')
_UNESCAPE = re.compile(r"\\(.)")


def bone_path(bone: str, prop: str) -> str:
    """The data path of pose bone ``bone``'s channel ``prop``: ``pose.bones["name"].prop`` (what _BONE_PATH reads)."""
    return f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'

# Channels per rotation mode, with the value of a channel the action leaves out (rest).
_REST_QUATERNION = (1.0, 0.0, 0.0, 0.0)
_REST_AXIS_ANGLE = (0.0, 0.0, 1.0, 0.0)  # angle, axis: Blender's default


@dataclass(frozen=True, eq=False)
class ArmatureInfo:
    """What maps an armature's pose channels to a core skeleton's joints.

    armature        name of the armature object.
    bones           (J,) bone of each joint; ``None`` for the extra joint 0
                    of an armature with several root bones.
    rest_rotations  (J, 4) bone rest rotations ``B`` in armature space
                    (from ``bone.matrix_local``; identity for the extra joint).
    rest_heads      (J, 3) bone rest heads ``h`` in armature space.
    rotation_modes  (J,) each pose bone's ``rotation_mode``.
    connected       (J,) bool: the bone is connected to its parent, so Blender
                    ignores its location channels.
    nonstandard_bones  names of bones that do not inherit rotation, use
                    parent-space location or relative parenting; their poses
                    are mapped as if they had Blender's default settings.
    """

    armature: str
    bones: tuple
    rest_rotations: np.ndarray
    rest_heads: np.ndarray
    rotation_modes: tuple
    connected: np.ndarray
    nonstandard_bones: tuple = ()


def euler_to_quat(angles: np.ndarray, mode: str) -> np.ndarray:
    """Quaternions ``(..., 4)`` of Blender Euler angles ``(..., 3)`` (radians, x y z).

    ``mode`` is a Blender ``rotation_mode`` such as ``'XYZ'``: the first axis
    is applied first, ``R = R_Z @ R_Y @ R_X`` for ``'XYZ'``.
    """
    angles = np.asarray(angles, dtype=np.float64)
    order = _check_euler_mode(mode)[::-1]
    ordered = np.stack([angles[..., "XYZ".index(axis)] for axis in order], axis=-1)
    return quat.from_euler(ordered, order)


def quat_to_euler(q: np.ndarray, mode: str) -> np.ndarray:
    """Blender Euler angles ``(..., 3)`` (radians, x y z) of quaternions ``(..., 4)``.

    Inverse of :func:`euler_to_quat`; the middle axis of ``mode`` gets the
    angle in [-pi/2, pi/2].
    """
    order = _check_euler_mode(mode)[::-1]
    ordered = quat.to_euler(q, order)
    return np.stack([ordered[..., order.index(axis)] for axis in "XYZ"], axis=-1)


def _check_euler_mode(mode: str) -> str:
    if mode not in EULER_MODES:
        raise ValueError(f"not a Blender Euler rotation mode: {mode!r}; expected one of {EULER_MODES}")
    return mode


# ---------------------------------------------------------------------------
# Armature -> skeleton


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


# ---------------------------------------------------------------------------
# Skeleton -> armature


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


# ---------------------------------------------------------------------------
# Action / strip -> motion


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


def slot_for(obj, action, slot):
    """``slot``, else the slot ``obj`` plays ``action`` with, else the action's first slot for objects."""
    if slot is not None:
        return slot
    anim = obj.animation_data
    if anim is not None and anim.action == action and anim.action_slot is not None:
        return anim.action_slot
    for candidate in action.slots:
        if candidate.target_id_type in ('OBJECT', 'UNSPECIFIED'):
            return candidate
    return None


def _channelbag(action, slot, *, ensure: bool = False):
    """The channelbag of ``slot``'s F-curves: the first keyframe strip's that has one.

    With ``ensure``, a layer, keyframe strip and channelbag are created as
    needed. Uses only the ``Action.layers`` API (Blender 4.4 and later), not
    ``bpy_extras.anim_utils``, whose helpers differ between 4.4 and 5.0.
    """
    if ensure:
        layer = action.layers[0] if action.layers else action.layers.new("Layer")
        strip = layer.strips[0] if layer.strips else layer.strips.new(type='KEYFRAME')
        return strip.channelbag(slot, ensure=True)
    for layer in action.layers:
        for strip in layer.strips:
            channelbag = strip.channelbag(slot) if strip.type == 'KEYFRAME' else None
            if channelbag is not None:
                return channelbag
    return None


def _sample_motion(obj, action, slot, frames: np.ndarray, fps: float | None, what: str) -> Motion:
    skeleton, info = armature_skeleton(obj)
    if slot is None:
        raise ValueError(
            f"{what} has no action slot for objects; pick the slot of armature {obj.name!r} "
            "next to the action's name"
        )
    _check_animates_armature(obj, action, slot, info, what, body_bones(obj, skeleton, info))
    channels = _bone_fcurves(action, slot, info)
    n_frames, n_joints = len(frames), len(info.bones)
    # Each property of all bones at once: one interpolation for all curves keyed on the same frames.
    location = np.zeros((n_frames, n_joints, 3))
    moving = [j for j, bone in enumerate(info.bones) if bone is not None and not info.connected[j]]
    location[:, moving] = _channel_values(channels, [info.bones[j] for j in moving], "location", (0.0, 0.0, 0.0), frames)
    basis = np.tile(np.asarray(_REST_QUATERNION), (n_frames, n_joints, 1))  # the extra joint 0 stays at rest
    for mode in sorted(set(info.rotation_modes)):
        joints = [j for j, bone in enumerate(info.bones) if bone is not None and info.rotation_modes[j] == mode]
        if not joints:
            continue
        bones = [info.bones[j] for j in joints]
        if mode == 'QUATERNION':
            q = _channel_values(channels, bones, "rotation_quaternion", _REST_QUATERNION, frames)
            basis[:, joints] = _normalized(q)
        elif mode == 'AXIS_ANGLE':
            aa = _channel_values(channels, bones, "rotation_axis_angle", _REST_AXIS_ANGLE, frames)
            basis[:, joints] = _axis_angle_to_quat(aa)
        else:
            angles = _channel_values(channels, bones, "rotation_euler", (0.0, 0.0, 0.0), frames)
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


def _bone_fcurves(action, slot, info: ArmatureInfo) -> dict:
    """``{(bone, property): {array index: F-curve}}`` of the bones of ``info`` the slot animates.

    Muted F-curves and F-curves with neither keys nor modifiers are left
    out: Blender does not evaluate them.
    """
    bones = {b for b in info.bones if b is not None}
    found: dict = {}
    for bone, prop, fcurve in _animated_bone_curves(action, slot):
        if bone in bones:
            found.setdefault((bone, prop), {})[fcurve.array_index] = fcurve
    return found


def _animated_bone_curves(action, slot) -> Iterator[tuple[str, str, bpy.types.FCurve]]:
    """``(bone, property, F-curve)`` for each F-curve of ``slot`` that Blender evaluates on a bone."""
    channelbag = _channelbag(action, slot)
    for fcurve in (channelbag.fcurves if channelbag is not None else ()):
        match = _BONE_PATH.match(fcurve.data_path)
        if match is not None and not fcurve.mute and _evaluated(fcurve):
            yield _UNESCAPE.sub(r"\1", match.group(1)), match.group(2), fcurve


def _evaluated(fcurve: bpy.types.FCurve) -> bool:
    return len(fcurve.keyframe_points) > 0 or len(fcurve.modifiers) > 0


def body_bones(obj, skeleton: Skeleton, info: ArmatureInfo) -> list[str] | None:
    """The bones the rig's roles use (pelvis, spine, neck, head, legs, arms), or ``None`` if none are found.

    ``core.rig.find_rig`` on the armature's rest pose, with its Bone Mapping.
    What synthesis moves the body by: fingers, face, twist, IK and control
    bones are not among them, so an action need not animate those.
    """
    from ..core.rig import find_rig
    from .nla import parse_bone_mapping  # nla imports this module

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
    channelbag = _channelbag(action, slot)
    curves = list(channelbag.fcurves) if channelbag is not None else []
    if curves and not any(_evaluated(fcurve) for fcurve in curves):
        raise ValueError(
            f"{what} has {len(curves)} F-curve{'' if len(curves) == 1 else 's'} but no keys; "
            "key the action, or pick one with keys"
        )
    armature = [b for b in info.bones if b is not None]
    animated = {bone for bone, _, _ in _animated_bone_curves(action, slot)}
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
        f"({_listed(moved)})"
        + (f" and {len(foreign)} bones the armature does not have ({_listed(foreign)})" if foreign else "")
        + f", leaving {_listed(at_rest)} at rest: it is not an action for this armature; pick the action made "
        "for it, or rename the action's bones to the armature's"
    )


def _listed(names: list[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _channel_values(channels: dict, bones: list, prop: str, rest: tuple, frames: np.ndarray) -> np.ndarray:
    """``(F, len(bones), len(rest))`` values of property ``prop`` of ``bones``.

    A component no F-curve animates keeps its ``rest`` value.
    """
    out = np.tile(np.asarray(rest, dtype=np.float64), (len(frames), len(bones), 1))
    placed = [
        (b, index, fcurve)
        for b, bone in enumerate(bones)
        for index, fcurve in channels.get((bone, prop), {}).items()
        if index < len(rest)
    ]
    if placed:
        b, index, fcurves = zip(*placed)
        out[:, list(b), list(index)] = sample_fcurves(fcurves, frames)
    return out


def sample_fcurve(fcurve: bpy.types.FCurve, frames: np.ndarray) -> np.ndarray:
    """Values ``(F,)`` of ``fcurve`` at ``frames (F,)``, as Blender evaluates it (see :func:`sample_fcurves`)."""
    return sample_fcurves([fcurve], frames)[:, 0]


def sample_fcurves(fcurves, frames: np.ndarray) -> np.ndarray:
    """Values ``(F, N)`` of ``N`` F-curves at ``frames (F,)``, as Blender evaluates them.

    Linear and constant keys without modifiers and with constant
    extrapolation are interpolated here for all frames at once, and all
    such curves keyed on the same frames (every channel of an imported or
    baked action) together, in one array expression. Any other curve is
    evaluated by Blender, one ``FCurve.evaluate`` per frame, since Bézier
    segments, modifiers and extrapolation are Blender's to define.
    """
    frames = np.asarray(frames, dtype=np.float64)
    out = np.empty((len(frames), len(fcurves)))
    evaluated = []
    shared: dict[bytes, list] = {}  # key frames -> [(column, co (n, 2), interpolation (n,))]
    for column, fcurve in enumerate(fcurves):
        points = fcurve.keyframe_points
        n = len(points)
        if not n or fcurve.modifiers or fcurve.extrapolation != 'CONSTANT':
            evaluated.append(column)
            continue
        co = np.empty((n, 2), dtype=np.float32)
        points.foreach_get("co", co.ravel())
        kind = np.empty(n, dtype=np.int32)
        points.foreach_get("interpolation", kind)
        shared.setdefault(co[:, 0].tobytes(), []).append((column, co, kind))
    for curves in shared.values():
        columns = np.array([column for column, _, _ in curves])
        co = np.stack([co for _, co, _ in curves], axis=1).astype(np.float64)  # (n, M, 2)
        segments = np.stack([kind[:-1] for _, _, kind in curves], axis=1)  # (n - 1, M)
        x = co[:, 0, 0]
        ours = np.all((segments == _LINEAR) | (segments == _CONSTANT), axis=0) & bool(np.all(np.diff(x) > 0))
        out[:, columns[ours]] = _interpolated(x, co[:, ours, 1], segments[:, ours], frames)
        evaluated.extend(columns[~ours].tolist())
    for column in evaluated:
        fcurve = fcurves[column]
        out[:, column] = np.fromiter((fcurve.evaluate(f) for f in frames), dtype=np.float64, count=len(frames))
    return out


def _interpolated(x: np.ndarray, y: np.ndarray, segments: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """``(F, M)`` values at ``frames (F,)`` of ``M`` curves keyed at ``x (n,)`` to ``y (n, M)``.

    ``segments (n - 1, M)``: each segment's kind, linear or constant; held
    flat before the first key and after the last (constant extrapolation).
    """
    if len(x) == 1:
        return np.broadcast_to(y[0], (len(frames), y.shape[1]))
    i = np.clip(np.searchsorted(x, frames, side="right") - 1, 0, len(x) - 2)
    t = np.clip((frames - x[i]) / (x[i + 1] - x[i]), 0.0, 1.0)
    after = (frames >= x[i + 1]).astype(np.float64)
    t = np.where(segments[i] == _CONSTANT, after[:, None], t[:, None])
    return y[i] + t * (y[i + 1] - y[i])


def _normalized(q: np.ndarray) -> np.ndarray:
    """Blender normalises keyed quaternions before use; a zero one is taken as rest."""
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(norm > 1e-12, q / np.where(norm > 1e-12, norm, 1.0), _REST_QUATERNION)


def _axis_angle_to_quat(aa: np.ndarray) -> np.ndarray:
    """Quaternions of Blender axis-angle values ``(..., 4)`` = (angle, x, y, z); zero axis is rest."""
    axis = aa[..., 1:]
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    q = quat.from_axis_angle(axis / np.where(norm > 1e-12, norm, 1.0), aa[..., 0])
    return np.where(norm > 1e-12, q, _REST_QUATERNION)


# ---------------------------------------------------------------------------
# Motion -> action


def write_action(
    obj: bpy.types.Object,
    motion: Motion,
    name: str,
    frame_start: float | None = None,
    progress: Callable[[float], None] | None = None,
    into: bpy.types.Action | None = None,
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
    are replaced (:func:`emptied_channelbag`) and ``name`` is ignored, so
    whatever uses it (the armature, an NLA strip) plays the new keys.
    """
    if frame_start is None:
        frame_start = bpy.context.scene.frame_start
    channels = bone_channels(obj, motion)
    if into is None:
        action = bpy.data.actions.new(name)
        channelbag = _channelbag(action, action.slots.new(id_type='OBJECT', name=obj.name), ensure=True)
    else:
        action, channelbag = into, emptied_channelbag(into, obj)
    frames = float(frame_start) + np.arange(motion.n_frames, dtype=np.float64)
    bones = list(dict.fromkeys(bone for bone, _, _ in channels))
    for bone, prop, values in channels:
        _add_curves(channelbag, bone, prop, frames, values)
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
    basis = _basis(info, motion.rotations[:, [s for s, _ in pairs]], joints)  # (F, K, 4)
    location = _location(skeleton, info, motion.positions[:, [s for s, _ in pairs]], joints)
    channels = []
    for k, j in enumerate(joints):
        bone, mode = info.bones[j], info.rotation_modes[j]
        if mode == 'QUATERNION':
            channels.append((bone, "rotation_quaternion", quat.unroll(basis[:, k], axis=0)))
        elif mode == 'AXIS_ANGLE':
            channels.append((bone, "rotation_axis_angle", _quat_to_axis_angle(quat.unroll(basis[:, k], axis=0))))
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
        held = _KeyedRows(curves)
        basis = _basis(info, motion.rotations[first:last + 1][:, sources], joints)  # (W, K, 4)
        if prop == "rotation_euler":
            values = _continued_euler(quat_to_euler(basis, mode), held, first, last)
        else:
            quats = held if prop == "rotation_quaternion" else _AxisAngleRows(held)
            values = _continued_quaternions(basis, quats, first, last)
            if prop == "rotation_axis_angle":
                values = [_quat_to_axis_angle(v) for v in values]
        for j, v in zip(joints, values):
            out += [(bone_path(info.bones[j], prop), i, first, v[:, i]) for i in range(size)]
        unconnected = [k for k, j in enumerate(joints) if not info.connected[j]]
        if unconnected:
            location = _location(skeleton, info, motion.positions[first:last + 1][:, [sources[k] for k in unconnected]],
                                 [joints[k] for k in unconnected])
            for n, k in enumerate(unconnected):
                out += [(bone_path(info.bones[joints[k]], "location"), i, first, location[:, n, i]) for i in range(3)]
    return out


class _KeyedRows:
    """Keyed values ``[joint][component] -> (F,)`` read as ``(F, K, C)`` rows, copying only the rows asked for
    (a window needs the keys next to it, and the rest of a curve only when it must be carried along)."""

    def __init__(self, curves: list):
        self.curves = curves

    def __len__(self) -> int:
        return len(self.curves[0][0])

    def __getitem__(self, rows) -> np.ndarray:
        return np.stack([np.stack([c[rows] for c in joint], axis=-1) for joint in self.curves],
                        axis=-2).astype(np.float64)


class _AxisAngleRows:
    """Keyed axis-angle rows read as quaternions."""

    def __init__(self, rows: _KeyedRows):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, rows) -> np.ndarray:
        return _axis_angle_to_quat(self.rows[rows])


def _continued_quaternions(q: np.ndarray, held, first: int, last: int) -> list[np.ndarray]:
    """Per joint, quaternions ``q (W, K, 4)`` for frames ``first..last`` unrolled on from
    ``held[first - 1]`` (``held (F, K, 4)``, or rows of it: as keyed), plus the rest of ``held``
    negated where its next key disagrees in sign with the window's last."""
    q = quat.unroll(q, axis=0)
    if first > 0:
        q = q * np.where(quat.dot(q[0], held[first - 1]) < 0.0, -1.0, 1.0)[:, None]
    flipped = (quat.dot(q[-1], held[last + 1]) < 0.0 if last + 1 < len(held)
               else np.zeros(q.shape[1], dtype=bool))
    return [np.concatenate([q[:, k], -held[last + 1:][:, k]]) if flipped[k] else q[:, k] for k in range(q.shape[1])]


def _continued_euler(angles: np.ndarray, held, first: int, last: int) -> list[np.ndarray]:
    """Per joint, Euler ``angles (W, K, 3)`` for frames ``first..last`` unwrapped on from
    ``held[first - 1]`` (``held (F, K, 3)``, or rows of it: as keyed), plus the rest of ``held``
    shifted by whole turns where its next key no longer unwraps from the window's last."""
    if first > 0:
        angles = np.unwrap(np.concatenate([held[first - 1:first], angles]), axis=0)[1:]
    else:
        angles = np.unwrap(angles, axis=0)
    shift = (np.unwrap(np.stack([angles[-1], held[last + 1]]), axis=0)[1] - held[last + 1]
             if last + 1 < len(held) else np.zeros(angles.shape[1:]))
    return [np.concatenate([angles[:, k], held[last + 1:][:, k] + shift[k]]) if np.any(shift[k] != 0.0)
            else angles[:, k] for k in range(angles.shape[1])]


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


def _basis(info: ArmatureInfo, rotations: np.ndarray, j) -> np.ndarray:
    """Joint ``j``'s rotations ``(F, 4)`` as the pose bone's basis rotation (relative to its rest);
    with a list of joints, their rotations ``(F, K, 4)``."""
    rest = info.rest_rotations[j]
    return quat.mul(quat.mul(quat.inv(rest), rotations), rest)


def _location(skeleton: Skeleton, info: ArmatureInfo, positions: np.ndarray, j) -> np.ndarray:
    """Joint ``j``'s local positions ``(F, 3)`` as the pose bone's location (from its rest head, in its rest
    frame); with a list of joints, their positions ``(F, K, 3)``."""
    return quat.inv_mul_vec(info.rest_rotations[j], positions - skeleton.offsets[j])


def emptied_channelbag(action: bpy.types.Action, obj: bpy.types.Object):
    """The channelbag of ``action``'s slot for objects, in an action emptied of every key.

    Layers go (with every key of every slot); the slot stays, so that the
    armature and any NLA strip playing the action keep playing it.
    """
    for layer in list(action.layers):
        action.layers.remove(layer)
    slot = next((s for s in action.slots if s.target_id_type in ('OBJECT', 'UNSPECIFIED')), None)
    if slot is None:
        slot = action.slots.new(id_type='OBJECT', name=obj.name)
    return _channelbag(action, slot, ensure=True)


def _add_curves(channelbag, bone: str, prop: str, frames: np.ndarray, values: np.ndarray) -> None:
    """One linear F-curve per component of ``values (F, C)``, all keys set in bulk."""
    path = bone_path(bone, prop)
    co = np.empty((len(frames), 2), dtype=np.float32)
    co[:, 0] = frames
    linear = np.full(len(frames), _LINEAR, dtype=np.int32)
    for index in range(values.shape[1]):
        fcurve = _new_fcurve(channelbag, path, index, bone)
        co[:, 1] = values[:, index]
        points = fcurve.keyframe_points
        points.add(len(frames))
        points.foreach_set("co", co.ravel())
        points.foreach_set("interpolation", linear)
        fcurve.update()


def _new_fcurve(channelbag, path: str, index: int, group: str) -> bpy.types.FCurve:
    if _NEW_FCURVE_TAKES_GROUP:
        return channelbag.fcurves.new(path, index=index, group_name=group)
    fcurve = channelbag.fcurves.new(path, index=index)
    fcurve.group = channelbag.groups.get(group) or channelbag.groups.new(group)
    return fcurve


def _quat_to_axis_angle(q: np.ndarray) -> np.ndarray:
    """Blender axis-angle values ``(..., 4)`` = (angle, x, y, z) of unit quaternions.

    Keeps the sign of ``q`` (angles up to 2 pi), so a sign-continuous
    sequence gives a continuous angle; the axis of a zero rotation is +Y.
    """
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s[..., 0], q[..., 0])
    axis = np.where(s > 1e-12, q[..., 1:] / np.where(s > 1e-12, s, 1.0), (0.0, 1.0, 0.0))
    return np.concatenate([angle[..., None], axis], axis=-1)


# ---------------------------------------------------------------------------
# Digests


def armature_digest(obj: bpy.types.Object) -> str:
    """A hash of what :func:`armature_skeleton` reads of the armature ``obj``.

    Bone names, parents and children in order, rest matrices and tails,
    connection and inheritance flags, and each pose bone's rotation mode.
    """
    bones = obj.data.bones
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr([
        (bone.name, bone.parent.name if bone.parent else None, [child.name for child in bone.children])
        for bone in bones
    ]).encode())
    digest.update(repr([(bone.name, bone.rotation_mode) for bone in obj.pose.bones]).encode())
    for name, size, dtype in (
        ("matrix_local", 16, np.float32), ("tail_local", 3, np.float32), ("use_connect", 1, bool),
        ("use_inherit_rotation", 1, bool), ("use_local_location", 1, bool), ("use_relative_parent", 1, bool),
    ):
        values = np.empty(len(bones) * size, dtype=dtype)
        bones.foreach_get(name, values)
        digest.update(values.tobytes())
    return digest.hexdigest()


def action_digest(action: bpy.types.Action) -> str:
    """A hash of everything that decides what ``action``'s F-curves evaluate to.

    Each channelbag's slot, and each F-curve's path, index, mute flag,
    extrapolation, modifiers (every setting) and keys: frames, values and
    interpolation, plus handles and easing where a key is neither linear nor
    constant. Keys are read in bulk (``foreach_get``). Equal digests: equal
    curves; anything else (an edited key, a new modifier) changes it.
    """
    digest = hashlib.blake2b(digest_size=16)
    for layer in action.layers:
        for strip in layer.strips:
            if strip.type != 'KEYFRAME':
                continue
            for slot in [channelbag.slot for channelbag in strip.channelbags]:
                digest.update(slot.identifier.encode())
                # Looked up, not iterated: foreach_get reads the keys of F-curves reached through
                # strip.channelbags about three times slower (measured, Blender 5.0).
                for fcurve in strip.channelbag(slot).fcurves:
                    _digest_fcurve(digest, fcurve)
    return digest.hexdigest()


def _digest_fcurve(digest, fcurve: bpy.types.FCurve) -> None:
    points = fcurve.keyframe_points
    n = len(points)
    digest.update(repr((
        fcurve.data_path, fcurve.array_index, fcurve.mute, fcurve.extrapolation, n,
        [_settings(modifier) for modifier in fcurve.modifiers],
    )).encode())
    co = np.empty(2 * n, dtype=np.float32)
    points.foreach_get("co", co)
    kind = np.empty(n, dtype=np.int32)
    points.foreach_get("interpolation", kind)
    digest.update(co.tobytes())
    digest.update(kind.tobytes())
    if np.all((kind == _LINEAR) | (kind == _CONSTANT)):
        return  # nothing else shapes a linear or constant segment
    for name, size, dtype in (
        ("handle_left", 2, np.float32), ("handle_right", 2, np.float32), ("easing", 1, np.int32),
        ("back", 1, np.float32), ("amplitude", 1, np.float32), ("period", 1, np.float32),
    ):
        values = np.empty(size * n, dtype=dtype)
        points.foreach_get(name, values)
        digest.update(values.tobytes())


def _settings(struct) -> tuple:
    """Every plain setting of ``struct`` (an F-curve modifier), and of its collections' items, as values."""
    values = []
    for prop in struct.bl_rna.properties:
        if prop.identifier == "rna_type" or prop.type == 'POINTER':
            continue
        value = getattr(struct, prop.identifier)
        if prop.type == 'COLLECTION':
            value = tuple(_settings(item) for item in value)
        elif isinstance(value, set):
            value = tuple(sorted(value))
        elif not isinstance(value, (str, int, float, bool)):
            value = tuple(value)
        values.append((prop.identifier, value))
    return tuple(values)


# ---------------------------------------------------------------------------
# A BVH clip on an armature of the same joints


def motion_on_armature(obj: bpy.types.Object, motion: Motion, what: str, armature: tuple | None = None,
                       *, tolerance: float = 0.02) -> Motion:
    """``motion`` (a BVH file's, :func:`core.bvh.read_bvh`) as a motion of the armature ``obj``.

    The add-on has no importer of its own: this maps only a clip whose joints are the armature's
    bones, by name, with the same parents, and whose rest pose is the armature's up to a turn and
    a scale (a file the armature was imported from, in its own axes and unit, for example). The
    turn ``A`` and scale ``s`` are the least-squares fit of the armature's rest heads to the
    file's rest joints (Umeyama's closed form, no reflection), an origin joint left out
    (:func:`body_joints`: a file of the same bones captured elsewhere fits); then every joint rotation
    becomes ``A R inv(A)`` and every joint's translation ``s A p`` (the root's plus the fitted
    shift; connected bones keep their rest offsets, as Blender plays them). ``tolerance``: the
    fit's RMS error, as a fraction of the rest pose's size, above which the rest poses differ
    and the clip is refused.

    ``ValueError`` naming ``what`` (the file) and what differs. ``obj`` is not changed.
    """
    skeleton, info = armature or armature_skeleton(obj)
    bones = [name for name, bone in zip(skeleton.names, info.bones) if bone is not None]
    names = motion.skeleton.names
    if sorted(names) != sorted(bones):
        missing, extra = sorted(set(bones) - set(names)), sorted(set(names) - set(bones))
        raise ValueError(f"{what}: its joints are not the bones of armature {obj.name!r}"
                         + (f"; it lacks {_listed(missing)}" if missing else "")
                         + (f"; it has {_listed(extra)}, which the armature does not" if extra else "")
                         + " (only files whose joint names are the armature's bone names are read)")
    joints = np.array([skeleton.index(n) for n in names])
    parent_of = {n: (names[p] if p >= 0 else None) for n, p in zip(names, motion.skeleton.parents)}
    def bone_parent(name):  # (None for a root bone, under the origin joint of a several-root armature or not)
        p = skeleton.parents[skeleton.index(name)]
        return skeleton.names[p] if p >= 0 and info.bones[p] is not None else None

    moved = [n for n in names if bone_parent(n) != parent_of[n]]
    if moved:
        raise ValueError(f"{what}: joints {_listed(moved)} hang from other parents than the bones of armature "
                         f"{obj.name!r} of the same names")
    rest_armature = (skeleton.offsets[0] + skeleton.rest_positions())[joints]
    rest_file = motion.skeleton.offsets[0] + motion.skeleton.rest_positions()
    body = body_joints(motion.skeleton)
    # (the shift puts the file's body at rest on the armature's, as the file imported by Blender and its
    # action played on this armature stands)
    turn, scale, shift, error = _similarity_fit(rest_file[body], rest_armature[body])
    size = np.sqrt(np.mean(np.sum((rest_armature[body] - rest_armature[body].mean(axis=0)) ** 2, axis=1)))
    if not error <= tolerance * size:
        raise ValueError(f"{what}: its rest pose is not armature {obj.name!r}'s (after the best turn and scale the "
                         f"joints are {error / size:.0%} of the body's size away); only a clip in the armature's rest "
                         f"pose is read")
    a = quat.from_matrix(turn)
    rotations = np.tile(np.array(_REST_QUATERNION), (motion.n_frames, len(skeleton), 1))
    rotations[:, joints] = quat.mul(quat.mul(a, motion.rotations), quat.inv(a))
    positions = np.broadcast_to(skeleton.offsets, (motion.n_frames, len(skeleton), 3)).copy()
    # every joint's translation turned and scaled (a file may move a joint below its root: Bandai's Hips),
    # but a connected bone's, whose location Blender ignores
    free = np.array([not info.connected[j] for j in joints])
    positions[:, joints[free]] = scale * motion.positions[:, free] @ turn.T
    root = joints[0]  # the file's joint 0, the armature's root bone (joint 0, or 1 under a several-root origin)
    positions[:, root] += shift - (skeleton.offsets[0] if root != 0 else 0.0)
    return Motion(skeleton, rotations, positions, motion.fps)


def body_joints(skeleton: Skeleton) -> np.ndarray:
    """The joints whose rest positions give a skeleton's rest pose: all of them, but an origin joint.

    A joint 0 with a single child (Bandai's ``joint_Root``) is an origin: its child's rest offset is
    where the body stood at the capture, not its shape. Files of one capture set differ there by
    metres and nowhere else (bandai2-raise's styles), so the rest pose is the child's subtree.
    """
    parents = np.asarray(skeleton.parents)
    if len(parents) > 2 and np.count_nonzero(parents == 0) == 1:
        return np.arange(1, len(parents))
    return np.arange(len(parents))


def _similarity_fit(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, float]:
    """``(A (3, 3), s, c (3,), rms)`` minimising ``|q - (s A p + c)|`` over points ``p, q (N, 3)`` (Umeyama's
    closed form; ``A`` a rotation, never a reflection)."""
    pc, qc = p - p.mean(axis=0), q - q.mean(axis=0)
    u, sigma, vt = np.linalg.svd(qc.T @ pc)
    sign = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt)) or 1.0])
    turn = u @ sign @ vt
    scale = float(np.trace(np.diag(sigma) @ sign) / max(np.sum(pc ** 2), 1e-300))
    shift = q.mean(axis=0) - scale * p.mean(axis=0) @ turn.T
    error = float(np.sqrt(np.mean(np.sum((q - (scale * p @ turn.T + shift)) ** 2, axis=1))))
    return turn, scale, shift, error
