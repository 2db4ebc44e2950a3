"""F-curves: channel bags, bulk sampling, keys written in bulk, digests.

Reading samples F-curves, it never sets scene frames: curves whose keys are
all linear or constant, without modifiers and with constant extrapolation
(what importers and :func:`.convert.write_action` produce) are interpolated
for all frames at once from their keyframes (``foreach_get``), all the curves
keyed on the same frames in one array expression; any other curve (Bézier
keys, modifiers, cyclic extrapolation) is evaluated by Blender itself,
``FCurve.evaluate`` once per frame, as only Blender knows its exact shape.
Writing creates every F-curve's keys in bulk (``keyframe_points.add`` and
``foreach_set``), never one ``keyframe_insert`` per key.

Digests (:func:`armature_digest`, :func:`action_digest`, :func:`modifiers_digest`) hash what reading
an armature or an action depends on, so that a caller can tell whether a
result computed from them earlier is still current without computing it again.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from typing import Iterator

import bpy
import numpy as np

from .pose import ArmatureInfo


_INTERPOLATION = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items


_CONSTANT = _INTERPOLATION["CONSTANT"].value


LINEAR = _INTERPOLATION["LINEAR"].value


# Blender 5.0 added group_name to ActionChannelbagFCurves.new; 4.4 and 4.5 group afterwards.
_NEW_FCURVE_TAKES_GROUP = "group_name" in bpy.types.ActionChannelbagFCurves.bl_rna.functions["new"].parameters


# pose.bones["name"].channel, with the name escaped as bpy.utils.escape_identifier does.
_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(\w+)$')


_UNESCAPE = re.compile(r"\\(.)")


def bone_path(bone: str, prop: str) -> str:
    """The data path of pose bone ``bone``'s channel ``prop``: ``pose.bones["name"].prop`` (what _BONE_PATH reads)."""
    return f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'


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


def action_channelbag(action, slot, *, ensure: bool = False):
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


def animated_bone_curves(action, slot) -> Iterator[tuple[str, str, bpy.types.FCurve]]:
    """``(bone, property, F-curve)`` for each F-curve of ``slot`` that Blender evaluates on a bone."""
    channelbag = action_channelbag(action, slot)
    for fcurve in (channelbag.fcurves if channelbag is not None else ()):
        match = _BONE_PATH.match(fcurve.data_path)
        if match is not None and not fcurve.mute and has_keys_or_modifiers(fcurve):
            yield _UNESCAPE.sub(r"\1", match.group(1)), match.group(2), fcurve


def has_keys_or_modifiers(fcurve: bpy.types.FCurve) -> bool:
    return len(fcurve.keyframe_points) > 0 or len(fcurve.modifiers) > 0


# While keys_read_once is on: F-curve (its address) -> the key arrays read of it, innermost scope last
_KEYS_READ: list[dict] = []


@contextlib.contextmanager
def keys_read_once():
    """Within, each F-curve's keys are read from Blender once (:func:`keyframe_arrays`): the sampling
    and the digests of one synthesis share them. Only while nothing writes or removes an F-curve read
    (an F-curve is known by its address, which a new one may take once the old one is freed)."""
    _KEYS_READ.append({})
    try:
        yield
    finally:
        _KEYS_READ.pop()


def keyframe_arrays(fcurve: bpy.types.FCurve) -> tuple[np.ndarray, np.ndarray]:
    """``(co (n, 2) float32, interpolation (n,) int32)`` of ``fcurve``'s keys, read in bulk
    (``foreach_get``; once per F-curve within :func:`keys_read_once`). Not to be written to."""
    read = _KEYS_READ[-1] if _KEYS_READ else None
    address = fcurve.as_pointer()
    if read is not None and address in read:
        return read[address]
    points = fcurve.keyframe_points
    co = np.empty((len(points), 2), dtype=np.float32)
    points.foreach_get("co", co.ravel())
    kind = np.empty(len(points), dtype=np.int32)
    points.foreach_get("interpolation", kind)
    if read is not None:
        read[address] = co, kind
    return co, kind


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
        if not len(fcurve.keyframe_points) or fcurve.modifiers or fcurve.extrapolation != 'CONSTANT':
            evaluated.append(column)
            continue
        co, kind = keyframe_arrays(fcurve)
        shared.setdefault(co[:, 0].tobytes(), []).append((column, co, kind))
    for curves in shared.values():
        columns = np.array([column for column, _, _ in curves])
        co = np.stack([co for _, co, _ in curves], axis=1).astype(np.float64)  # (n, M, 2)
        segments = np.stack([kind[:-1] for _, _, kind in curves], axis=1)  # (n - 1, M)
        x = co[:, 0, 0]
        ours = np.all((segments == LINEAR) | (segments == _CONSTANT), axis=0) & bool(np.all(np.diff(x) > 0))
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


def emptied_channelbag(action: bpy.types.Action, obj: bpy.types.Object):
    """The channelbag of ``action``'s slot for objects, in an action emptied of every key.

    Every F-curve and group of every slot goes; the slots, layers and strips
    stay, so that the armature and any NLA strip playing the action keep
    playing it. (Removing the layers instead leaks their keys' memory, some
    70 MB for each rewrite of a 3,000-frame bake, and the depsgraph update
    after it grows slower with every rewrite: measured on Blender 4.5, 5.0
    and 5.2.)
    """
    for layer in action.layers:
        for strip in layer.strips:
            for channelbag in (strip.channelbags if strip.type == 'KEYFRAME' else ()):
                channelbag.fcurves.clear()
                for group in list(channelbag.groups):
                    channelbag.groups.remove(group)
    slot = next((s for s in action.slots if s.target_id_type in ('OBJECT', 'UNSPECIFIED')), None)
    if slot is None:
        slot = action.slots.new(id_type='OBJECT', name=obj.name)
    return action_channelbag(action, slot, ensure=True)


def add_curves(channelbag, bone: str, prop: str, frames: np.ndarray, values: np.ndarray) -> None:
    """One linear F-curve per component of ``values (F, C)``, all keys set in bulk."""
    path = bone_path(bone, prop)
    co = np.empty((len(frames), 2), dtype=np.float32)
    co[:, 0] = frames
    linear = np.full(len(frames), LINEAR, dtype=np.int32)
    for index in range(values.shape[1]):
        fcurve = new_fcurve(channelbag, path, index, bone)
        co[:, 1] = values[:, index]
        points = fcurve.keyframe_points
        points.add(len(frames))
        points.foreach_set("co", co.ravel())
        points.foreach_set("interpolation", linear)
        fcurve.update()


def new_fcurve(channelbag, path: str, index: int, group: str) -> bpy.types.FCurve:
    if _NEW_FCURVE_TAKES_GROUP:
        return channelbag.fcurves.new(path, index=index, group_name=group)
    fcurve = channelbag.fcurves.new(path, index=index)
    fcurve.group = channelbag.groups.get(group) or channelbag.groups.new(group)
    return fcurve


def armature_digest(obj: bpy.types.Object) -> str:
    """A hash of what :func:`.convert.armature_skeleton` reads of the armature ``obj``.

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
    constant. Keys are read in bulk (``foreach_get``, :func:`keyframe_arrays`)
    and hashed a channelbag at a time. Equal digests: equal curves; anything
    else (an edited key, a new modifier) changes it.
    """
    digest = hashlib.blake2b(digest_size=16)
    for slot, channelbag in keyframe_channelbags(action):
        digest.update(slot.identifier.encode())
        _digest_fcurves(digest, list(channelbag.fcurves))
    return digest.hexdigest()


def modifiers_digest(action: bpy.types.Action) -> str:
    """A hash of ``action``'s F-curves as a set, and of their modifiers (every setting), keys left out.

    What the depsgraph does not report: adding an F-curve modifier from Python
    tags nothing (measured, Blender 5.0), while edits of keys, mute flags and
    extrapolation are reported.
    """
    digest = hashlib.blake2b(digest_size=16)
    for slot, channelbag in keyframe_channelbags(action):
        digest.update(slot.identifier.encode())
        digest.update(repr([(fcurve.data_path, fcurve.array_index,
                             [rna_settings(m) for m in fcurve.modifiers] if fcurve.modifiers else 0)
                            for fcurve in channelbag.fcurves]).encode())
    return digest.hexdigest()


def keyframe_channelbags(action: bpy.types.Action) -> Iterator[tuple[bpy.types.ActionSlot, object]]:
    """``(slot, its channel bag)`` of every keyframe strip of ``action``, in layer and strip order.

    Each bag is looked up by its slot, not taken from ``strip.channelbags``: foreach_get reads the
    keys of F-curves reached through the latter about three times slower (measured, Blender 5.0)."""
    for layer in action.layers:
        for strip in layer.strips:
            if strip.type == 'KEYFRAME':
                for slot in [channelbag.slot for channelbag in strip.channelbags]:
                    yield slot, strip.channelbag(slot)


def _digest_fcurves(digest, fcurves: list) -> None:
    """Each F-curve's settings and key count, then the keys of all of them at once (frames, values,
    interpolation), then the handles and easing of the curves with keys neither linear nor constant."""
    keys = [keyframe_arrays(fcurve) for fcurve in fcurves]
    digest.update(repr([
        (fcurve.data_path, fcurve.array_index, fcurve.mute, fcurve.extrapolation, len(kind),
         [rna_settings(modifier) for modifier in fcurve.modifiers])
        for fcurve, (_, kind) in zip(fcurves, keys)
    ]).encode())
    if not keys:
        return
    kind = np.concatenate([kind for _, kind in keys])
    digest.update(np.concatenate([co for co, _ in keys]).tobytes())
    digest.update(kind.tobytes())
    shaped = (kind != LINEAR) & (kind != _CONSTANT)  # (nothing else shapes a linear or constant segment)
    if not shaped.any():
        return
    counts = np.array([len(kind) for _, kind in keys])
    ends = np.cumsum(counts)
    for fcurve, first, last in zip(fcurves, ends - counts, ends):
        if not shaped[first:last].any():
            continue
        points = fcurve.keyframe_points
        for name, size, dtype in (
            ("handle_left", 2, np.float32), ("handle_right", 2, np.float32), ("easing", 1, np.int32),
            ("back", 1, np.float32), ("amplitude", 1, np.float32), ("period", 1, np.float32),
        ):
            values = np.empty(size * len(points), dtype=dtype)
            points.foreach_get(name, values)
            digest.update(values.tobytes())


def rna_settings(struct) -> tuple:
    """Every plain setting of ``struct`` (an F-curve modifier), and of its collections' items, as values."""
    values = []
    for prop in struct.bl_rna.properties:
        if prop.identifier == "rna_type" or prop.type == 'POINTER':
            continue
        value = getattr(struct, prop.identifier)
        if prop.type == 'COLLECTION':
            value = tuple(rna_settings(item) for item in value)
        elif isinstance(value, set):
            value = tuple(sorted(value))
        elif not isinstance(value, (str, int, float, bool)):
            value = tuple(value)
        values.append((prop.identifier, value))
    return tuple(values)


def bone_fcurves(action, slot, info: ArmatureInfo) -> dict:
    """``{(bone, property): {array index: F-curve}}`` of the bones of ``info`` the slot animates.

    Muted F-curves and F-curves with neither keys nor modifiers are left
    out: Blender does not evaluate them.
    """
    bones = {b for b in info.bones if b is not None}
    found: dict = {}
    for bone, prop, fcurve in animated_bone_curves(action, slot):
        if bone in bones:
            found.setdefault((bone, prop), {})[fcurve.array_index] = fcurve
    return found


def channel_values(channels: dict, bones: list, prop: str, rest: tuple, frames: np.ndarray) -> np.ndarray:
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
