"""Analyze, Synthesize, Bake to Action and Clear, Add as Soon as Possible, Pack Selected Strips, Give Room, Insert Hop,
Reach Target and Assemble Parts (with the Reach Examples list's add and remove), plus the two core-range buttons.

Thin operators: ``execute`` reads the context (the active armature, the
selected strips, the scene's responsiveness) and calls :mod:`.synthesis`
(one entry per user action), :mod:`.arrange` and the features' modules, which
do the work and raises ``ValueError`` with a message saying what to fix.
Such an error becomes an error report and ``{'CANCELLED'}``, with the file
unchanged, never a traceback. None of them needs an editor area, so they
run from the NLA sidebar, a script or a headless session alike.

Every operator that changes data is ``{'REGISTER', 'UNDO'}``: one Ctrl+Z
takes it back whole.

There is no ``poll``: a greyed-out button cannot say what is missing, and a
``bpy.ops`` call that fails its poll only says "context is incorrect". The
panel shows the buttons only with an armature active; ``execute`` reports
anything else that is missing.
"""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, StringProperty

from . import live
from .arrange import (add_strip, addable_actions, asap_placement, give_room_strips, pack_placements, pack_strips,
                      pack_text, placement_text, room_for)
from .bake import rebake_note
from .preview import clear_preview
from .report import plan_cleared_text, plan_dict, plan_warnings
from .strips import (active_armature, find_strip, left_out_text, plays, PREVIEW_TRACK, preview_sources, selected_strips,
                     strip_settings)
from .synthesis import analyze_strips, bake_strips, preview_synthesis, record_analysis
from .timeline import core_to_edit


class _Reported:
    """Mixin: ``execute`` runs ``run``; a ``ValueError`` (core errors included) becomes an error report."""

    def execute(self, context):
        try:
            return self.run(context)
        except ValueError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}


class _Progress:
    """The window manager's progress bar (the cursor's counter), where there is one.

    ``with _Progress(context) as progress: progress(0.5)``; headless or
    without a window manager it does nothing.
    """

    STEPS = 1000

    def __init__(self, context):
        wm = getattr(context, "window_manager", None)
        self._wm = wm if wm is not None and hasattr(wm, "progress_begin") else None

    def __enter__(self):
        if self._wm is not None:
            self._wm.progress_begin(0, self.STEPS)
        return self

    def __call__(self, fraction: float) -> None:
        if self._wm is not None:
            self._wm.progress_update(int(round(min(max(fraction, 0.0), 1.0) * self.STEPS)))

    def __exit__(self, *exc):
        if self._wm is not None:
            self._wm.progress_end()
        return False


class SMART_MOTION_OT_analyze(_Reported, bpy.types.Operator):
    """Find the support phases of the selected NLA strips (which foot stands when)"""

    bl_idname = "smart_motion.analyze"
    bl_label = "Analyze"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        obj = active_armature(context)
        strips = selected_strips(obj, context.view_layer.objects)
        analyses = analyze_strips(obj, strips)
        record_analysis(obj, strips, analyses)
        found = ", ".join(f"{name} ({len(analysis.segments)})" for name, analysis in analyses.items())
        self.report({'INFO'}, f"support phases found: {found}; the Smart Motion panel lists them under Support Phases")
        return {'FINISHED'}


class SMART_MOTION_OT_synthesize(_Reported, bpy.types.Operator):
    """Join the selected NLA strips into one motion and play it as a preview above them"""

    bl_idname = "smart_motion.synthesize"
    bl_label = "Synthesize"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        obj = active_armature(context)
        strips = selected_strips(obj, context.view_layer.objects)
        result = preview_synthesis(obj, strips, context.scene.smart_motion.responsiveness)
        plan = result.plan
        kept = len(plan.clips) - len(plan.rejected)
        groups = [group["name"] for group in result.groups]
        what = (f"{kept} clip{'' if kept == 1 else 's'} ({', '.join(repr(name) for name in groups)}: strips "
                "blended synchronized)" if groups else f"{kept} strips")
        self.report(
            {'INFO'},
            f"previewing {what} as one motion, frames {plan.start}-{plan.end}, "
            f"on track {PREVIEW_TRACK!r}; Bake to Action keeps it, Clear removes it{left_out_text(obj)}",
        )
        for line in plan_warnings(plan_dict(result)):
            self.report({'WARNING'}, line)
        return {'FINISHED'}


class SMART_MOTION_OT_bake(_Reported, bpy.types.Operator):
    """Synthesize the selected NLA strips into a new action keyed on every frame (or keep a current preview)"""

    bl_idname = "smart_motion.bake"
    bl_label = "Bake to Action"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        obj = active_armature(context)
        strips = selected_strips(obj, context.view_layer.objects)
        note = rebake_note(obj, strips)
        with _Progress(context) as progress:
            action, plan, kept = bake_strips(obj, strips, context.scene.smart_motion.responsiveness, progress)
        kept_text = " (the preview, still current, kept as it is)" if kept else ""
        self.report(
            {'INFO'},
            f"baked frames {plan['start']}-{plan['end']} into action {action.name!r}, assigned to {obj.name!r}"
            f"{kept_text}{note}{left_out_text(obj)}",
        )
        for line in plan_warnings(plan):
            self.report({'WARNING'}, line)
        return {'FINISHED'}


class SMART_MOTION_OT_clear(_Reported, bpy.types.Operator):
    """Remove the preview and its plan; unmute the source strips"""

    bl_idname = "smart_motion.clear"
    bl_label = "Clear"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        obj = active_armature(context)
        had_plan = bool(obj.smart_motion.plan_json)
        had_preview = clear_preview(obj)
        if not had_preview and not had_plan:
            self.report({'INFO'}, f"armature {obj.name!r} has no Smart Motion preview to clear")
            return {'CANCELLED'}
        obj.smart_motion.plan_json = ""
        if had_preview:
            self.report({'INFO'}, "preview removed, source strips as they were")
        else:
            self.report({'INFO'}, plan_cleared_text(obj))
        return {'FINISHED'}


def _action_choices(purpose: str):
    """An ``EnumProperty`` items callback: the file's actions that can be added, each described as
    "Add action 'walk' ``purpose``", or one "(no action)" item."""
    # Blender keeps only pointers to an enum's strings: the items must outlive the callback (bpy.props
    # docs), so each callback keeps its list.
    kept: list[tuple[str, str, str]] = []

    def items(self, context):
        kept[:] = [(a.name, a.name, f"Add action {a.name!r} {purpose}") for a in addable_actions()]
        return kept or [("", "(no action)", "The file has no action to add")]

    return items


class _SearchedAction:
    """Mixin of an operator with an ``action`` enum: invoked, it asks for it in a search popup."""

    def invoke(self, context, event):
        context.window_manager.invoke_search_popup(self)
        return {'RUNNING_MODAL'}

    def chosen_action(self) -> bpy.types.Action:
        """The action picked, or ``ValueError`` when there is none of that name."""
        action = bpy.data.actions.get(self.action)
        if action is None:
            raise ValueError(f"there is no action {self.action!r}; pick one from the list")
        return action


class SMART_MOTION_OT_add_asap(_SearchedAction, _Reported, bpy.types.Operator):
    """Add an action as a strip at the earliest start whose blends come after the playhead"""

    bl_idname = "smart_motion.add_asap"
    bl_label = "Add as Soon as Possible"
    bl_options = {'REGISTER', 'UNDO'}
    bl_property = "action"

    action: EnumProperty(name="Action", description="The action to add as a strip",
                         items=_action_choices("as a strip"))

    def run(self, context):
        obj = active_armature(context)
        action = self.chosen_action()
        strips = selected_strips(obj, context.view_layer.objects)
        # (with a live preview, its reads and track serve: the same start, sooner)
        placement = asap_placement(obj, strips, action, context.scene.smart_motion.responsiveness,
                                       context.scene.frame_current, read=live.reader(obj), place=live.placer(obj))
        strip = add_strip(obj, action, placement)
        self.report({'INFO'}, f"{placement_text(action, placement)}, as strip {strip.name!r}; "
                              "Synthesize joins it with the others")
        return {'FINISHED'}


class SMART_MOTION_OT_pack(_Reported, bpy.types.Operator):
    """Re-time the selected NLA strips one after another, each as early as it can blend in"""

    bl_idname = "smart_motion.pack"
    bl_label = "Pack Selected Strips"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        obj = active_armature(context)
        strips = selected_strips(obj, context.view_layer.objects)
        packing = pack_placements(obj, strips, context.scene.smart_motion.responsiveness)
        if not any(move.moved for move in packing.moves):
            self.report({'INFO'}, pack_text(packing))
            return {'CANCELLED'}
        pack_strips(obj, packing)
        self.report({'INFO'}, f"{pack_text(packing)}; Synthesize joins them")
        return {'FINISHED'}


class SMART_MOTION_OT_give_room(_Reported, bpy.types.Operator):
    """Move the strip after this flagged gap, and every later one, later by the least that puts the gap under its flag threshold (at most 2 s)"""

    bl_idname = "smart_motion.give_room"
    bl_label = "Give Room"
    bl_options = {'REGISTER', 'UNDO'}

    clip: StringProperty(name="Clip", description="The strip (or synchronized group) after the flagged gap")

    def run(self, context):
        obj = active_armature(context)
        # the strips the plan was made from: the preview's that play, else the selection
        strips = [s for s in preview_sources(obj) if plays(obj, s)] or selected_strips(obj, context.view_layer.objects)
        responsiveness = context.scene.smart_motion.responsiveness
        move = room_for(obj, strips, self.clip, responsiveness)
        if not move.room.frames:
            self.report({'WARNING'} if move.room.before else {'INFO'}, move.room.text())
            return {'CANCELLED'}
        give_room_strips(obj, move)
        result = preview_synthesis(obj, strips, responsiveness)
        self.report({'INFO'}, move.room.text())
        for line in plan_warnings(plan_dict(result)):
            self.report({'WARNING'}, line)
        return {'FINISHED'}


class SMART_MOTION_OT_insert_hop(_Reported, bpy.types.Operator):
    """Insert the best hop clip of the library between the two selected strips at the playhead (Koyama & Goto 2019)"""

    bl_idname = "smart_motion.insert_hop"
    bl_label = "Insert Hop"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        from . import hops
        from .properties import preferences

        obj = active_armature(context)
        strips = selected_strips(obj, context.view_layer.objects)
        settings = context.scene.smart_motion
        folder = None
        if settings.hop_library == 'FOLDER':
            prefs = preferences(context)
            folder = prefs.hop_folder if prefs is not None else ""
        weight = None if settings.hop_weight_auto else settings.hop_weight
        with _Progress(context) as progress:
            choice = hops.find_hop(obj, strips, context.scene.frame_current, weight=weight,
                                   blend_seconds=settings.hop_blend, folder=folder, progress=progress)
        _, notes = hops.insert_hop(obj, choice)
        self.report({'INFO'}, "; ".join([hops.hop_text(choice), *notes]))
        for line in choice.skipped:
            self.report({'WARNING'}, f"left out of the hop library: {line}")
        for line in choice.warnings:
            self.report({'WARNING'}, line)
        return {'FINISHED'}


class SMART_MOTION_OT_reach_target(_Reported, bpy.types.Operator):
    """Blend the armature's examples into a new action whose effector hits the target Empty, as a strip at the
    playhead (Juang et al. 2009)"""

    bl_idname = "smart_motion.reach_target"
    bl_label = "Reach Target"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        from . import reach
        from .clips import active_action_warning

        obj = active_armature(context)
        settings = context.scene.smart_motion
        empty = reach.target_empty(obj, context.view_layer)
        folder = _folder(context, "reach_folder") if settings.reach_library == 'FOLDER' else None
        with _Progress(context) as progress:
            found = reach.find_reach(obj, empty, effector=settings.reach_effector, feature=settings.reach_feature,
                                     folder=folder, progress=progress)
        strip = reach.insert_reach(obj, found, context.scene.frame_current)
        self.report({'INFO'}, reach.reach_text(found, strip, context.scene))
        for line in reach.limit_warnings(found, context.scene) + active_action_warning(obj, strip):
            self.report({'WARNING'}, line)
        return {'FINISHED'}


class SMART_MOTION_OT_assemble_parts(_Reported, bpy.types.Operator):
    """Replace a body part of the selected strip with the library's best match, as a new action in a strip above
    it (Juang et al. 2009)"""

    bl_idname = "smart_motion.assemble_parts"
    bl_label = "Assemble Parts"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        from . import assemble
        from .clips import active_action_warning

        obj = active_armature(context)
        settings = context.scene.smart_motion
        strips = selected_strips(obj, context.view_layer.objects)
        folder = _folder(context, "assembly_folder") if settings.assembly_library == 'FOLDER' else None
        with _Progress(context) as progress:
            found = assemble.find_assembly(obj, strips, settings.assembly_part, folder, progress)
        strip = assemble.insert_assembly(obj, found)
        self.report({'INFO'}, assemble.assembly_text(found, strip))
        for line in assemble.left_out_warnings(found) + active_action_warning(obj, strip):
            self.report({'WARNING'}, line)
        return {'FINISHED'}


def _folder(context, name: str) -> str:
    """The add-on preference ``name`` (a folder), "" where the add-on is not registered as one."""
    from .properties import preferences

    prefs = preferences(context)
    return getattr(prefs, name) if prefs is not None else ""


class SMART_MOTION_OT_reach_example_add(_SearchedAction, _Reported, bpy.types.Operator):
    """Add an action of this armature to its Reach Examples"""

    bl_idname = "smart_motion.reach_example_add"
    bl_label = "Add Reach Example"
    bl_options = {'REGISTER', 'UNDO'}
    bl_property = "action"

    action: EnumProperty(name="Action", description="The example to add",
                         items=_action_choices("to Reach Examples"))

    def run(self, context):
        from .convert import action_to_motion

        obj = active_armature(context)
        action = self.chosen_action()
        if any(row.action == action for row in obj.smart_motion.reach_examples):
            raise ValueError(f"action {action.name!r} is in Reach Examples already")
        action_to_motion(obj, action)  # (refuses an action of another skeleton, saying what to do)
        examples = obj.smart_motion.reach_examples
        examples.add().action = action
        obj.smart_motion.reach_example_index = len(examples) - 1
        return {'FINISHED'}


class SMART_MOTION_OT_reach_example_remove(_Reported, bpy.types.Operator):
    """Remove the selected row of Reach Examples (the action stays in the file)"""

    bl_idname = "smart_motion.reach_example_remove"
    bl_label = "Remove Reach Example"
    bl_options = {'REGISTER', 'UNDO'}

    def run(self, context):
        obj = active_armature(context)
        settings = obj.smart_motion
        if not 0 <= settings.reach_example_index < len(settings.reach_examples):
            raise ValueError(f"no row of the Reach Examples of armature {obj.name!r} is selected")
        settings.reach_examples.remove(settings.reach_example_index)
        settings.reach_example_index = max(min(settings.reach_example_index, len(settings.reach_examples) - 1), 0)
        return {'FINISHED'}


def _strip_named(context, name: str):
    """``(armature, strip)``: the active armature and its NLA strip ``name``; ValueError when it has none."""
    obj = active_armature(context)
    strip = find_strip(obj, name)
    if strip is None:
        raise ValueError(f"armature {obj.name!r} has no NLA strip {name!r}")
    return obj, strip


class _StripOperator(_Reported):
    """Mixin of the panel's per-strip buttons: one undo step each, on the strip named ``strip``."""

    bl_options = {'REGISTER', 'UNDO', 'INTERNAL'}

    strip: StringProperty(name="Strip", description="Name of the NLA strip")


class SMART_MOTION_OT_edit_core(_StripOperator, bpy.types.Operator):
    """Set this strip's core by hand (it starts as its default core)"""

    bl_idname = "smart_motion.edit_core"
    bl_label = "Edit Core"

    def run(self, context):
        obj, strip = _strip_named(context, self.strip)
        # (an empty default core, strips covering all of this one, would be stored as a one-frame core;
        # a group's core may reach beyond the strip)
        offsets = core_to_edit(obj, strip)
        item = strip_settings(obj, strip, create=True)
        item.core_first, item.core_last = offsets
        item.has_core = True
        return {'FINISHED'}


class SMART_MOTION_OT_reset_core(_StripOperator, bpy.types.Operator):
    """Give this strip its default core again: the strip minus its blends and overlaps"""

    bl_idname = "smart_motion.reset_core"
    bl_label = "Default Core"

    def run(self, context):
        obj = active_armature(context)
        strip = find_strip(obj, self.strip)
        item = strip_settings(obj, self.strip if strip is None else strip)
        if item is not None:
            item.has_core = False
        return {'FINISHED'}


class SMART_MOTION_OT_blend_synchronized(_StripOperator, bpy.types.Operator):
    """Blend this strip synchronized with the overlapping strips that have this on too (their steps in phase)"""

    bl_idname = "smart_motion.blend_synchronized"
    bl_label = "Blend synchronized with overlapping strips"

    def run(self, context):
        # (the panel shows the option itself once the strip has settings; this gives it some)
        obj, strip = _strip_named(context, self.strip)
        item = strip_settings(obj, strip, create=True)
        item.sync_blend = not item.sync_blend
        return {'FINISHED'}


CLASSES = (
    SMART_MOTION_OT_analyze,
    SMART_MOTION_OT_synthesize,
    SMART_MOTION_OT_bake,
    SMART_MOTION_OT_clear,
    SMART_MOTION_OT_add_asap,
    SMART_MOTION_OT_pack,
    SMART_MOTION_OT_give_room,
    SMART_MOTION_OT_insert_hop,
    SMART_MOTION_OT_reach_target,
    SMART_MOTION_OT_assemble_parts,
    SMART_MOTION_OT_reach_example_add,
    SMART_MOTION_OT_reach_example_remove,
    SMART_MOTION_OT_edit_core,
    SMART_MOTION_OT_reset_core,
    SMART_MOTION_OT_blend_synchronized,
)
