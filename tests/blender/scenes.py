"""Scenes and measurements shared by the operator tests (not a test module).

Real clips from the shared Bandai mocap set are imported with Blender's own
BVH importer at ``global_scale=0.01`` (centimetres to metres) and laid out
as NLA strips of one armature, as a user would: the first import keeps its
armature, each later import gives its action to it and is deleted.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import bpy
import numpy as np
import pytest
from real_capture import require
from bpy_extras import anim_utils

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "mocap" / "bandai1"

# (clip, scene frame of its first frame, core in scene frames or None for the whole strip)
# walk -> bow is a motion connection, bow -> punch an adaptation.
WALK_BOW_PUNCH = (
    ("walk_normal_001", 1, (1, 101)),
    ("bow_normal_001", 151, (181, 288)),
    ("punch_normal_001", 300, None),
)


_PACKAGE = ""  # the extension's package as Blender installed it (set by saved_scene)


def extension(module: str):
    """A module of the extension as Blender loaded it (``"core.hops"``, ``"addon.convert"``); the package
    is the one :func:`saved_scene` was given by the ``installed_extension`` fixture."""
    import importlib

    # (the installed extension's package, from the fixture: ``from conftest import ...`` would find
    # tests/core's conftest when the whole suite runs)
    return importlib.import_module(f"{_PACKAGE}.{module}")


def saved_scene(tmp_path_factory, package: str, name: str, build) -> Path:
    """A scene built once and saved, for each test to open: ``build()`` on an empty file (Blender's BVH
    importer is the slow part) returns the armature, which is left active; the ``.blend`` file's path.
    ``package``: the ``installed_extension`` fixture's value, for :func:`extension`."""
    global _PACKAGE
    _PACKAGE = package
    bpy.ops.wm.read_homefile(use_empty=True)
    obj = build()
    bpy.context.view_layer.objects.active = obj
    path = tmp_path_factory.mktemp(name) / f"{name}.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def clip_path(name: str) -> Path:
    """``"walk_normal_001"`` of bandai1, or another folder's clip as ``"bandai2/walk_normal_001"``."""
    path = (MOCAP.parent if "/" in name else MOCAP) / f"{name}.bvh"
    require(path)
    return path


def import_clip(name: str) -> bpy.types.Object:
    """Blender's BVH importer, metres, the file's own rotation order, scene fps from the file."""
    result = bpy.ops.import_anim.bvh(
        filepath=str(clip_path(name)), global_scale=0.01, rotate_mode='NATIVE', update_scene_fps=True,
    )
    assert result == {'FINISHED'}
    return bpy.context.view_layer.objects.active


def clips_on_one_armature(layout=WALK_BOW_PUNCH, tracks: int = 2) -> bpy.types.Object:
    """One armature with a strip per clip, alternating over ``tracks`` tracks (overlapping
    strips cannot share one). Strips are named after the clip's first word and all selected;
    cores are set through the panel's properties. The armature is active, with no action."""
    for name, _, _ in layout:
        clip_path(name)
    obj = None
    placed = []
    for name, start, core in layout:
        imported = import_clip(name)
        action = imported.animation_data.action
        if obj is None:
            obj = imported
            obj.animation_data.action = None
            for k in range(tracks):
                obj.animation_data.nla_tracks.new().name = f"clips {k + 1}"
        else:
            data = imported.data
            bpy.data.objects.remove(imported)
            bpy.data.armatures.remove(data)
        track = obj.animation_data.nla_tracks[len(placed) % tracks]
        strip = track.strips.new(Path(name).name.split("_")[0], start, action)
        placed.append((strip.name, core))
    bpy.context.view_layer.objects.active = obj
    for strip_name, core in placed:
        if core is not None:
            item = obj.smart_motion.strips.add()
            item.name = strip_name
            item.core_start, item.core_end = core
    return obj


def examples_on_one_armature(files) -> tuple[bpy.types.Object, list[bpy.types.Action]]:
    """BVH ``files`` of one skeleton imported as :func:`import_clip` does, each action kept by a fake
    user: the first file's armature with no action assigned, and the actions in the files' order."""
    obj, actions = None, []
    for file in files:
        result = bpy.ops.import_anim.bvh(filepath=str(file), global_scale=0.01, rotate_mode='NATIVE',
                                         update_scene_fps=True)
        assert result == {'FINISHED'}
        imported = bpy.context.view_layer.objects.active
        if obj is None:
            obj = imported
            actions.append(obj.animation_data.action)
            actions[-1].use_fake_user = True
            obj.animation_data.action = None
        else:
            actions.append(_action_kept(imported))
    bpy.context.view_layer.objects.active = obj
    return obj, actions


def import_action(name: str) -> bpy.types.Action:
    """The action of a clip imported with :func:`import_clip`, its armature deleted (a fake user keeps it)."""
    return _action_kept(import_clip(name))


def _action_kept(imported) -> bpy.types.Action:
    """The action of the armature object ``imported``, kept by a fake user, the armature deleted."""
    action = imported.animation_data.action
    action.use_fake_user = True
    data = imported.data
    bpy.data.objects.remove(imported)
    bpy.data.armatures.remove(data)
    return action


CMU_NAMES = {
    "joint_Root": "root", "Chest": "Spine1",
    **{f"{bandai}_{side}": f"{'Left' if side == 'L' else 'Right'}{cmu}" for side in "LR" for bandai, cmu in (
        ("Shoulder", "Shoulder"), ("UpperArm", "Arm"), ("LowerArm", "ForeArm"), ("Hand", "Hand"),
        ("UpperLeg", "UpLeg"), ("LowerLeg", "Leg"), ("Foot", "Foot"), ("Toes", "ToeBase"))},
}


def cmu_named_walk(tmp_path) -> bpy.types.Action:
    """The Bandai walk with CMU's bone names (Hips, Spine, Neck and Head are the same), imported
    through Blender's BVH importer like any clip; its armature is deleted, its action kept."""
    text = clip_path("walk_normal_001").read_text()
    renamed = re.sub(r"^(\s*(?:ROOT|JOINT) )(\S+)", lambda m: m.group(1) + CMU_NAMES.get(m.group(2), m.group(2)),
                     text, flags=re.MULTILINE)
    path = tmp_path / "cmu_walk.bvh"
    path.write_text(renamed)
    result = bpy.ops.import_anim.bvh(filepath=str(path), global_scale=0.01, rotate_mode='NATIVE')
    assert result == {'FINISHED'}
    return _action_kept(bpy.context.view_layer.objects.active)


def ensure_channelbag(action, slot):
    """``slot``'s channelbag in ``action``, a layer and keyframe strip created as needed.

    Blender 5.0 has ``anim_utils.action_ensure_channelbag_for_slot`` for this; 4.5
    lacks it, and gets the same from the ``Action.layers`` API it does have.
    """
    if hasattr(anim_utils, "action_ensure_channelbag_for_slot"):
        return anim_utils.action_ensure_channelbag_for_slot(action, slot)
    layer = action.layers[0] if action.layers else action.layers.new("Layer")
    strip = layer.strips[0] if layer.strips else layer.strips.new(type='KEYFRAME')
    return strip.channelbag(slot, ensure=True)


def new_fcurve(channelbag, path: str, index: int, group: str | None = None) -> bpy.types.FCurve:
    """A new F-curve in ``channelbag``, in the F-curve group ``group`` if given.

    ``fcurves.new`` takes ``group_name`` from Blender 5.0 on; on 4.5 the group is set after.
    """
    if group is None:
        return channelbag.fcurves.new(path, index=index)
    if "group_name" in bpy.types.ActionChannelbagFCurves.bl_rna.functions["new"].parameters:
        return channelbag.fcurves.new(path, index=index, group_name=group)
    fcurve = channelbag.fcurves.new(path, index=index)
    fcurve.group = channelbag.groups.get(group) or channelbag.groups.new(group)
    return fcurve


def strips_by_name(obj) -> dict:
    return {strip.name: strip for track in obj.animation_data.nla_tracks for strip in track.strips}


def all_keys(action) -> dict:
    """Every keyframe (co, handles, interpolation) of every channelbag of ``action``."""
    keys = {}
    for layer in action.layers:
        for strip in layer.strips:
            for channelbag in strip.channelbags:
                for fcurve in channelbag.fcurves:
                    points = fcurve.keyframe_points
                    arrays = []
                    for name in ("co", "handle_left", "handle_right"):
                        a = np.empty(2 * len(points), dtype=np.float32)
                        points.foreach_get(name, a)
                        arrays.append(a)
                    kind = np.empty(len(points), dtype=np.int32)
                    points.foreach_get("interpolation", kind)
                    arrays.append(kind)
                    keys[(channelbag.slot.identifier, fcurve.data_path, fcurve.array_index)] = arrays
    return keys


def channel_keys(*actions) -> dict:
    """Each channel's keys ``[co (2F,), interpolation (F,)]`` by ``(data path, index)``, over ``actions``
    and whichever slots key it: a preview's segment actions (addon/preview.py) joined in frame order
    with each shared boundary key once, so that a preview compares with the one action baked from
    it. (Handles are left out: a segment's end key has its own, a joined curve recomputes them.)"""
    parts: dict = {}
    keyed = [(key, arrays) for action in actions for key, arrays in all_keys(action).items()]
    for (_, path, index), (co, _, _, kind) in sorted(keyed, key=lambda item: item[1][0][:1].tolist()):
        rows = parts.setdefault((path, index), [[], []])
        repeated = bool(rows[0]) and len(co) and rows[0][-1][-2] == co[0]
        rows[0].append(co[2:] if repeated else co)
        rows[1].append(kind[1:] if repeated else kind)
    return {key: [np.concatenate(co), np.concatenate(kind)] for key, (co, kind) in parts.items()}


def preview_segments(obj) -> list:
    """The actions of the preview's segments, in frame order: what the preview track's strips play."""
    track = obj.animation_data.nla_tracks.get("[Smart Motion preview]")
    return [s.action for s in sorted(track.strips, key=lambda s: s.frame_start)] if track is not None else []


def same_keys(before: dict, after: dict) -> bool:
    return before.keys() == after.keys() and all(
        all(np.array_equal(old, new) for old, new in zip(before[k], after[k])) for k in before
    )


def evaluated_heads(obj, frames) -> np.ndarray:
    """Blender's evaluated bone heads ``(F, B, 3)``, armature space, ``obj.pose.bones`` order.

    Blender evaluates one scene frame at a time, hence the loop.
    """
    scene = bpy.context.scene
    heads = np.empty((len(frames), len(obj.pose.bones) * 3), dtype=np.float32)
    for k, frame in enumerate(frames):
        scene.frame_set(int(frame))
        obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones.foreach_get("head", heads[k])
    return heads.reshape(len(frames), -1, 3).astype(np.float64)


def snapshot(obj=None) -> tuple:
    """Everything an operator that failed must have left alone, as comparable values."""
    actions = tuple(
        (a.name, a.users, tuple(sorted((k, tuple(v.tobytes() for v in arrays)) for k, arrays in all_keys(a).items())))
        for a in bpy.data.actions
    )
    objects = []
    for o in bpy.data.objects:
        anim = o.animation_data
        tracks = ()
        active = None
        if anim is not None:
            active = (anim.action.name if anim.action else None, anim.action_slot.identifier if anim.action_slot else None)
            tracks = tuple(
                (t.name, t.mute, tuple(
                    (s.name, s.frame_start, s.frame_end, s.mute, s.select, s.action.name if s.action else None)
                    for s in t.strips))
                for t in anim.nla_tracks
            )
        settings = ()
        if o.type == 'ARMATURE':
            state = o.smart_motion
            settings = (
                state.plan_json, state.bone_mapping, state.preview_action, state.set_aside_action,
                tuple((i.name, i.has_core, i.core_first, i.core_last, len(i.phases), i.muted_by_preview)
                      for i in state.strips),
            )
        objects.append((o.name, active, tracks, settings))
    return actions, tuple(objects)


class RecordingLayout:
    """Stands in for ``UILayout``, which only exists while Blender draws a region.

    Records labels, properties and operator buttons, and counts the ``rows`` the panel takes on
    screen as Blender lays it out: a ``row()`` is one line however many items it holds (a row
    inside a row adds none); in a column, a box or the panel itself each item is a line of its own,
    and a list (``template_list``) as many as it shows. Rows, columns and boxes record into the
    same lists.
    """

    def __init__(self, counts=None, in_row: bool = False):
        self.labels: list[str] = []
        self.props: list[tuple[object, str]] = []
        self.operators: list[str] = []
        self._counts = counts if counts is not None else [0]
        self._in_row = in_row

    @property
    def rows(self) -> int:
        return self._counts[0]

    def _child(self, in_row: bool) -> "RecordingLayout":
        child = RecordingLayout(self._counts, in_row)
        child.labels, child.props, child.operators = self.labels, self.props, self.operators
        return child

    def _line(self, lines: int = 1) -> None:
        if not self._in_row:
            self._counts[0] += lines

    def label(self, *, text="", icon='NONE', **options):
        self.labels.append(text)
        self._line()

    def prop(self, data, name, **options):
        self.props.append((data, name))
        self._line()

    def operator(self, idname, **options):
        self.operators.append(idname)
        self._line()
        return SimpleNamespace()  # takes the operator's properties

    def separator(self, **options):
        pass

    def row(self, **options):
        self._line()
        return self._child(True)

    def column(self, **options):
        return self._child(self._in_row)

    def box(self, **options):
        # (a box in a row is a line of that row; elsewhere its items are lines of their own)
        return self._child(self._in_row)

    split = column

    def template_list(self, list_type, list_id, data, name, active_data, active_name, rows=5, **options):
        self.props.append((data, name))
        self._line(rows)



def refused(operator: str, message: str, **properties) -> None:
    """``bpy.ops.smart_motion.<operator>(**properties)`` reports an error matching ``message`` and leaves
    the file as it was."""
    before = snapshot()
    with pytest.raises(RuntimeError, match=message):
        getattr(bpy.ops.smart_motion, operator)(**properties)
    assert snapshot() == before, f"{operator} changed the file although it refused"

def sub_panels(parent: str = "SMART_MOTION_PT_main") -> list:
    """The registered panels under ``parent``, in the order Blender draws them."""
    return [cls for cls in bpy.types.Panel.__subclasses__()
            if getattr(cls, "bl_parent_id", "") == parent and getattr(cls, "is_registered", False)]


def draw_panel(*, opened: bool = True) -> RecordingLayout:
    """The Smart Motion panel drawn into a :class:`RecordingLayout`, with its sub-panels that show
    (their ``poll``): every one when ``opened`` (the user opened them all), else only those open by
    default, as a user first sees the panel."""
    layout = RecordingLayout()
    bpy.types.SMART_MOTION_PT_main.draw(SimpleNamespace(layout=layout), bpy.context)
    for panel in sub_panels():
        closed = 'DEFAULT_CLOSED' in getattr(panel, "bl_options", set())
        if (opened or not closed) and (not hasattr(panel, "poll") or panel.poll(bpy.context)):
            panel.draw(SimpleNamespace(layout=layout), bpy.context)
    return layout


ADDON_MODULES = ("fcurves", "strips", "pose", "convert", "timeline", "sync_groups", "state", "preview", "report",
                 "synthesis", "bake", "arrange", "clips")


def addon_modules(package: str) -> SimpleNamespace:
    """The add-on's modules of the installed extension ``package`` by role (``.timeline``, ``.synthesis``, ...)."""
    import importlib

    return SimpleNamespace(**{name: importlib.import_module(f"{package}.addon.{name}") for name in ADDON_MODULES})
