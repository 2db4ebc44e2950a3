"""The Smart Motion sidebar panel of the NLA editor (N panel, own tab), sized to fit on a screen.

From top to bottom: the active armature, the responsiveness slider W, the
four buttons, Add as Soon as Possible and Pack, Insert Hop (its library,
weight and blend, and the last choice with its costs: hop, offset, stays, S,
w·R, direct D), Reach Target (the target Empty, the Reach Examples list or
folder, effector and feature, and the last reach's hit error, whether it
blended partially, its examples' weights), Assemble Parts (the body part and
library, and the last assembly's clip and frames), the Live Updates toggle (and why the last live update left
the preview, if it did), one row per strip of the armature (select flag, name marked when
left out or refused, core range in scene frames, Blend Synchronized), the Bone Mapping field, and the plan
of the last synthesis in one line per pair (method, the gap's figures), group, composition,
warning and rejected strip.

What those rows say at length is on demand, in sub-panels closed until opened: Strip Details
(whether a strip plays, where its default core came from, its part weights, what it is composed
over), Support Phases (once analysed), Plan Details (per pair the method and the lower- and
upper-body blending ranges, each composition (2008, section 8: the parts, blend ranges and
vibration of an additional motion), each synchronized group (its combined support sequence,
delays and weights), and every rejected strip with its reason). So the panel's rows grow by one
per strip and one per pair, not by their paragraphs (``tests/bench/panel_draw.py`` counts them).

Drawing only reads: a strip gets stored settings from Analyze, Synthesize,
its Edit Core button or its Blend Synchronized button; until its core is edited, the panel shows its
default core and where it came from (blends, overlaps with neighbours). A strip
of a synchronized group shows the group's core (its strips' edited cores count,
:func:`.timeline.group_core`), and its own fields once edited.
"""

from __future__ import annotations

import json

import bpy

from .report import composed_texts, composition_lines, group_lines, phases_text, wrapped
from .strips import has_preview, plays, source_strips, strip_settings, strip_signature
from .sync_groups import edited_group_core
from .timeline import default_cores, strip_default_core, strip_group


def shown_armature(context: bpy.types.Context) -> bpy.types.Object | None:
    """The armature the panel draws for: the active object if it is one, else ``None`` (no error: the
    panel then shows nothing to do; operators use :func:`.strips.active_armature`, which says why)."""
    obj = context.active_object
    if obj is not None and obj.type == 'ARMATURE':
        return obj
    return None


class SMART_MOTION_PT_main(bpy.types.Panel):
    bl_idname = "SMART_MOTION_PT_main"
    bl_label = "Smart Motion"
    bl_space_type = 'NLA_EDITOR'
    bl_region_type = 'UI'
    bl_category = "Smart Motion"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        armature = shown_armature(context)
        if armature is None:
            layout.label(text="Select an armature", icon='INFO')
        else:
            layout.label(text=armature.name, icon='ARMATURE_DATA')
        layout.prop(context.scene.smart_motion, "responsiveness", slider=True)
        if armature is None:
            return
        _draw_buttons(layout)
        _draw_hop(layout, context.scene, armature)
        _draw_reach(layout, context.scene, armature)
        _draw_assembly(layout, context.scene, armature)
        _draw_live(layout, context.scene, armature)
        _draw_strips(layout, armature)
        layout.prop(armature.smart_motion, "bone_mapping")
        _draw_plan(layout, armature)


def _draw_buttons(layout) -> None:
    column = layout.column(align=True)
    row = column.row(align=True)
    row.operator("smart_motion.analyze", icon='VIEWZOOM')
    row.operator("smart_motion.synthesize", icon='PLAY')
    row = column.row(align=True)
    row.operator("smart_motion.bake", icon='ACTION')
    row.operator("smart_motion.clear", icon='X')
    row = column.row(align=True)
    row.operator("smart_motion.add_asap", icon='ADD')
    row.operator("smart_motion.pack", icon='ALIGN_LEFT')


def _draw_hop(layout, scene, armature) -> None:
    """Insert Hop's settings and button, and the last choice with its costs."""
    box = layout.box()
    row = box.row(align=True)
    row.prop(scene.smart_motion, "hop_library", text="")
    row.operator("smart_motion.insert_hop", icon='NLA_PUSHDOWN')
    row = box.row(align=True)
    row.prop(scene.smart_motion, "hop_weight_auto", text="", icon='AUTO')
    weight = row.row(align=True)
    weight.enabled = not scene.smart_motion.hop_weight_auto
    weight.prop(scene.smart_motion, "hop_weight")
    row.prop(scene.smart_motion, "hop_blend")
    if armature.smart_motion.hop_json:
        from .hops import hop_lines

        for k, line in enumerate(hop_lines(json.loads(armature.smart_motion.hop_json))):
            box.label(text=line, icon='NLA' if k == 0 else 'NONE')


class SMART_MOTION_UL_reach_examples(bpy.types.UIList):
    """An armature's Reach Examples: one action per row, searchable (the list's filter field)."""

    bl_idname = "SMART_MOTION_UL_reach_examples"

    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0):
        layout.prop(item, "action", text="", emboss=False, icon='ACTION')

    def filter_items(self, context, data, property):
        # (the filter field searches the actions' names, not the rows' own empty names)
        rows = getattr(data, property)
        flags = [self.bitflag_filter_item] * len(rows)
        if self.filter_name:
            pattern = self.filter_name.lower()
            flags = [self.bitflag_filter_item if row.action is not None and pattern in row.action.name.lower() else 0
                     for row in rows]
        return flags, []


def _draw_reach(layout, scene, armature) -> None:
    """Reach Target's target, examples, options and button, and the last result."""
    settings = scene.smart_motion
    box = layout.box()
    box.prop(armature.smart_motion, "reach_target")
    box.prop(settings, "reach_library")
    if settings.reach_library == 'ACTIONS':
        row = box.row()
        row.template_list("SMART_MOTION_UL_reach_examples", "", armature.smart_motion, "reach_examples",
                          armature.smart_motion, "reach_example_index", rows=3)
        buttons = row.column(align=True)
        buttons.operator("smart_motion.reach_example_add", text="", icon='ADD')
        buttons.operator("smart_motion.reach_example_remove", text="", icon='REMOVE')
    row = box.row(align=True)
    row.prop(settings, "reach_effector", text="")
    row.prop(settings, "reach_feature", text="")
    box.operator("smart_motion.reach_target", icon='EMPTY_AXIS')
    if armature.smart_motion.reach_json:
        from .reach import reach_lines

        for k, line in enumerate(reach_lines(json.loads(armature.smart_motion.reach_json), scene)):
            box.label(text=line, icon='EMPTY_AXIS' if k == 0 else 'NONE')


def _draw_assembly(layout, scene, armature) -> None:
    """Assemble Parts' body part, library and button, and the last result."""
    settings = scene.smart_motion
    box = layout.box()
    row = box.row(align=True)
    row.prop(settings, "assembly_part", text="")
    row.prop(settings, "assembly_library", text="")
    box.operator("smart_motion.assemble_parts", icon='MOD_ARMATURE')
    if armature.smart_motion.assembly_json:
        from .assemble import assembly_lines

        for k, line in enumerate(assembly_lines(json.loads(armature.smart_motion.assembly_json))):
            box.label(text=line, icon='MOD_ARMATURE' if k == 0 else 'NONE')


def _draw_live(layout, scene, armature) -> None:
    """The Live Updates and Footprints toggles, and why the last live update left the preview as it was."""
    row = layout.row()
    row.prop(scene.smart_motion, "live")
    row.prop(scene.smart_motion, "footprints")
    error = armature.smart_motion.live_error
    if error and has_preview(armature) and scene.smart_motion.live:
        for k, line in enumerate(wrapped(f"Preview not updated: {error}")):
            layout.label(text=line, icon='ERROR' if k == 0 else 'BLANK1')


def _draw_strips(layout, armature) -> None:
    """One row per strip: its select flag, name, core and what to do with it; why, on demand
    (:class:`SMART_MOTION_PT_strip_details`)."""
    strips = source_strips(armature)
    if not strips:
        layout.label(text="No NLA strips: push actions down to the NLA first", icon='INFO')
        return
    column = layout.column(align=True)
    # (worked out once per draw for every strip: the panel redraws on every mouse move)
    cores = default_cores(armature)
    for strip in strips:
        row = column.row(align=True)
        row.prop(strip, "select", text="")
        name = row.row(align=True)  # (its icon is known once the core is)
        item = strip_settings(armature, strip)
        group = strip_group(armature, strip) if item is not None and item.sync_blend else None
        if group is not None:
            refused = _draw_group_core(row, armature, strip, item, group)[2]
        else:
            refused = _draw_core(row, armature, strip, item, cores)
        # (the name's icon says what Strip Details say at length: left out, refused, or fine)
        name.label(text=strip.name, icon='HIDE_ON' if not plays(armature, strip) else 'ERROR' if refused else 'NLA')
        if item is None:
            row.operator("smart_motion.blend_synchronized", text="", icon='CHECKBOX_DEHLT').strip = strip.name
        else:
            row.prop(item, "sync_blend", text="", icon='LINKED' if item.sync_blend else 'UNLINKED')


def _draw_core(row, armature, strip, item, cores: dict) -> bool:
    """A strip's core in its row: its fields once edited, else its default core (from ``cores``, those
    of the strips a synthesis would read; a strip not among them taken alone). Returns whether
    synthesis refuses the strip for want of a core."""
    default = None
    if item is None or not item.has_core:
        default = cores.get(strip.name) or strip_default_core(armature, strip)
    if item is not None and item.has_core:
        row.prop(item, "core_start", text="")
        row.prop(item, "core_end", text="")
        row.operator("smart_motion.reset_core", text="", icon='X').strip = strip.name
    else:
        row.label(text="No core" if default.empty else f"Core {default.first}-{default.last}")
        row.operator("smart_motion.edit_core", text="", icon='EDITMODE_HLT').strip = strip.name
    return default is not None and default.empty


def _group_core(armature, strip, group) -> tuple:
    """``(first, last, why, problem)`` of the core of ``strip``'s synchronized group as the panel shows
    it (:func:`.sync_groups.edited_group_core`, else the strip's default core), cut as the last
    synthesis cut it to the blend's frames (:func:`.timeline.group_core`) when its plan holds this
    group: the number the plan shows. ``first`` is ``None`` for no core."""
    try:
        edited = edited_group_core(armature, group)
        problem = ""
    except ValueError as error:
        edited, problem = None, str(error)
    if edited is not None:
        lo, hi, names = edited
        why = (f"(synchronized blend: the group's core, scene frames {lo}-{hi}, runs over the cores edited on "
               f"{', '.join(repr(n) for n in names)}; cut to the blend's frames)")
    else:
        # (the group's default core, as .timeline.group_core takes it: its first strip's, over the group)
        default = strip_default_core(armature, group[0])
        if default.empty:
            return None, None, f"({default.why()})", problem
        lo, hi, why = default.first, default.last, f"({default.why()})"
    blend = planned_blend(armature, group)
    if blend is not None and (lo < blend[0] or hi > blend[1]):
        cut = max(lo, blend[0]), min(hi, blend[1])
        why += (f" (cut to the blend's frames {blend[0]}-{blend[1]}, as the last synthesis played them: "
                f"{cut[0]}-{cut[1]})")
        lo, hi = cut
    return lo, hi, why, problem


def planned_blend(armature, group) -> tuple[int, int] | None:
    """The scene frames the last synthesis blended ``group`` over, if its recorded plan holds the group
    (the same strips), else ``None``."""
    plan = recorded_plan(armature)
    names = {s.name for s in group}
    found = next((g for g in (plan or {}).get("groups", ()) if set(g["strips"]) == names), None)
    return None if found is None else (found["start"], found["start"] + found["frames"] - 1)


def _draw_group_core(row, armature, strip, item, group) -> tuple:
    """The core of a strip of a synchronized group in its row: the group's (:func:`_group_core`), or
    this strip's edited core, with its fields, since it counts. Returns :func:`_group_core`'s
    ``(first, last, refused)``."""
    first, last, _, problem = _group_core(armature, strip, group)
    if item.has_core:
        row.prop(item, "core_start", text="")
        row.prop(item, "core_end", text="")
        row.operator("smart_motion.reset_core", text="", icon='X').strip = strip.name
    else:
        row.label(text="No core" if first is None else f"Group core {first}-{last}")
        row.operator("smart_motion.edit_core", text="", icon='EDITMODE_HLT').strip = strip.name
    return first, last, bool(problem) or (first is None and not item.has_core)


def draw_strip_details(layout, armature) -> None:
    """Each strip's box: whether it plays, its core with where it came from, its synchronized blend
    and part weights, what it is composed over."""
    cores, composed_by_name = default_cores(armature), composed_texts(armature)
    for strip in source_strips(armature):
        box = layout.box()
        box.label(text=strip.name, icon='NLA')
        if not plays(armature, strip):
            box.label(text="Not played (muted or not solo): left out", icon='HIDE_ON')
        item = strip_settings(armature, strip)  # (its Blend Synchronized toggle is in its row)
        group = strip_group(armature, strip) if item is not None and item.sync_blend else None
        if group is not None:
            _draw_part_weights(box, item)
            _, _, why, problem = _group_core(armature, strip, group)
            for line in wrapped(why):
                box.label(text=line)
            for k, line in enumerate(wrapped(problem)) if problem else ():
                box.label(text=line, icon='ERROR' if k == 0 else 'BLANK1')
        else:
            if item is None or not item.has_core:
                # (the range is in the strip's row; here where it came from)
                default = cores.get(strip.name) or strip_default_core(armature, strip)
                for line in wrapped(f"({default.why()})"):
                    box.label(text=line)
                if default.empty:
                    lines = wrapped("Synthesis refuses this strip: move it, deselect what covers it, or "
                                    "Edit Core (starts from the whole strip)")
                    for k, line in enumerate(lines):
                        box.label(text=line, icon='ERROR' if k == 0 else 'BLANK1')
            if item is not None and item.sync_blend and plays(armature, strip):
                # (a group of one blends with nothing: say so, rather than let the checkbox seem to work)
                for line in wrapped("(blends synchronized with no strip: none that plays with this on "
                                    "overlaps it, so it goes in sequence)"):
                    box.label(text=line)
        draw_blend_length(box, item if group is None else None)  # (a group blends into the sequence as one clip)
        composed = composed_by_name.get(strip.name, "")
        if composed:
            box.label(text=composed, icon='MOD_ARMATURE')


def draw_phases(layout, armature) -> None:
    """Each analysed strip's support phases in scene frames, marked when the strip changed since."""
    for strip in source_strips(armature):
        phases = phases_text(armature, strip)
        if not phases:
            continue
        stale = strip_settings(armature, strip).analysed != strip_signature(strip)
        layout.label(text=strip.name, icon='ERROR' if stale else 'NLA')
        for line in wrapped(("(out of date: Analyze again) " if stale else "") + phases):
            layout.label(text=line)


def _draw_part_weights(box, item) -> None:
    """A strip of a synchronized group: its weights per body part (legs, upper body, arms), beside its
    group; off, core's defaults (a strip standing still weighs nothing on the legs)."""
    row = box.row(align=True)
    row.prop(item, "weigh_parts")
    if item.weigh_parts:
        row = box.row(align=True)
        row.prop(item, "legs_weight")
        row.prop(item, "upper_weight")
        row.prop(item, "arms_weight")


def recorded_plan(armature) -> dict | None:
    text = armature.smart_motion.plan_json
    return json.loads(text) if text else None


def draw_gap(layout, pair: dict, *, give_room: bool = True) -> None:
    """A pair's gap (``PairPlan.to_dict()``): its figures against their references (core.quality) with
    a tick, or flagged with a Give Room button beside it (``give_room``), or "not measured" and why."""
    quality = gap_quality(pair)
    where = f"    gap {pair['gap'][0]}-{pair['gap'][1]}" if pair.get("gap") else "    gap"
    if quality is None or not quality.measured:
        why = quality.why_unmeasured if quality is not None else "the plan holds no figures for it"
        for k, line in enumerate(wrapped(f"{where}: not measured ({why})")):
            layout.label(text=line, icon='QUESTION' if k == 0 else 'BLANK1')
    elif quality.flags:
        row = layout.row(align=True)
        row.label(text=f"{where}: {quality.ratios()}", icon='ERROR')
        if give_room:
            row.operator("smart_motion.give_room", text="Give Room", icon='ARROW_LEFTRIGHT').clip = pair["next"]
    else:
        layout.label(text=f"{where}: {quality.ratios()}", icon='CHECKMARK')


def draw_blend_mark(layout, pair: dict) -> None:
    """The user's blend length of a pair (its strip's Blend Length), marked as theirs; nothing when automatic."""
    if pair.get("blend") == "user":
        layout.label(text=f"    blend {pair['blend_s']:g} s: yours ({pair['next']}'s Blend Length)", icon='LOCKED')


def draw_blend_length(layout, item) -> None:
    """A strip's Blend Length (the transition into it; 0: automatic)."""
    if item is not None:
        layout.prop(item, "blend_length")


def _draw_plan(layout, armature) -> None:
    """The plan in one line per pair (its method and its gap's verdict), per group, per composition, per
    warning and per rejected strip; the details on demand (:class:`SMART_MOTION_PT_plan_details`)."""
    plan = recorded_plan(armature)
    if plan is None:
        return
    box = layout.box()
    box.label(text=f"Plan: frames {plan['start']}-{plan['end']}, W {plan['responsiveness']:.2f}", icon='MOD_TIME')
    for pair in plan["pairs"]:
        draw_pair_row(box.row(align=True), pair)
    for group in plan.get("groups", ()):
        box.label(text=group_lines(group)[0], icon='MOD_TIME')
    for composition in plan.get("compositions", ()):
        box.label(text=composition_lines(composition)[0], icon='MOD_ARMATURE')
    for warning in plan.get("warnings", ()):
        box.label(text=first_line(warning), icon='ERROR')
    for rejected in plan["rejected"]:
        box.label(text=first_line(f"Rejected {rejected['clip']}: {rejected['reason']}"), icon='ERROR')


def first_line(text: str) -> str:
    """``text``'s first panel line, ``…`` where it goes on (the rest is in the plan's details)."""
    lines = wrapped(text)
    return lines[0] + (" …" if len(lines) > 1 else "")


def draw_pair_row(row, pair: dict) -> None:
    """One pair of the plan on one ``row``: the two strips, the method and the gap's figures against the
    untouched clips (core.quality), flagged (with Give Room beside it), unflagged, or not measured; a
    pair with a warning, or whose blend length is the user's, is marked so (Plan Details says it at
    length)."""
    text = f"{pair['prev']} → {pair['next']}: {pair['method']}"
    quality = gap_quality(pair)
    icon = 'INFO' if pair.get("warning") else 'NONE'
    if quality is None or not quality.measured:
        text += ", gap not measured"
        icon = 'QUESTION' if icon == 'NONE' else icon
    else:
        text += f", {quality.ratios()}"
        icon = 'ERROR' if quality.flags else icon if icon != 'NONE' else 'CHECKMARK'
    if pair.get("blend") == "user":
        text += f", blend {pair['blend_s']:g} s yours"
    row.label(text=text, icon=icon)
    if quality is not None and quality.measured and quality.flags:
        row.operator("smart_motion.give_room", text="Give Room", icon='ARROW_LEFTRIGHT').clip = pair["next"]


def gap_quality(pair: dict):
    """The pair's gap measured against the untouched clips on the same frames (core.quality), or None."""
    if not pair.get("quality"):
        return None
    from ..core.quality import GapQuality

    return GapQuality.from_dict(pair["quality"])


def draw_plan_details(layout, plan: dict) -> None:
    """Every pair's blending segments, warning and gap; each group, composition, warning and rejection
    at length."""
    for pair in plan["pairs"]:
        layout.label(text=f"{pair['prev']} → {pair['next']}: {pair['method']}", icon='NLA')
        for segment in pair["segments"]:
            # (the range search's excess over W's limits is not shown: it moves with W on a motion
            # that does not change; the gap's figures below are the verdict)
            layout.label(text=f"    {segment['part']} {segment['blend']} {segment['start']}-{segment['end']}")
        if pair.get("warning"):
            for line in wrapped(pair["warning"]):
                layout.label(text=line, icon='INFO')
        draw_blend_mark(layout, pair)
        draw_gap(layout, pair, give_room=False)  # (its Give Room button is in the pair's row)
    for group in plan.get("groups", ()):
        for i, line in enumerate(group_lines(group)):
            layout.label(text=line, icon='MOD_TIME' if i == 0 else 'NONE')
    for composition in plan.get("compositions", ()):
        for i, line in enumerate(composition_lines(composition)):
            layout.label(text=line, icon='MOD_ARMATURE' if i == 0 else 'NONE')
    for warning in plan.get("warnings", ()):
        for i, line in enumerate(wrapped(warning)):
            layout.label(text=line, icon='ERROR' if i == 0 else 'NONE')
    for rejected in plan["rejected"]:
        layout.label(text=f"Rejected {rejected['clip']}", icon='ERROR')
        for line in wrapped(rejected["reason"]):
            layout.label(text=line)


class _Details:
    """A sub-panel of the main one, closed until opened: what its rows say at length."""

    bl_space_type = 'NLA_EDITOR'
    bl_region_type = 'UI'
    bl_category = "Smart Motion"
    bl_parent_id = "SMART_MOTION_PT_main"
    bl_options = {'DEFAULT_CLOSED'}


class SMART_MOTION_PT_strip_details(_Details, bpy.types.Panel):
    """Each strip at length: whether it plays, where its core came from, its synchronized blend."""

    bl_idname = "SMART_MOTION_PT_strip_details"
    bl_label = "Strip Details"

    @classmethod
    def poll(cls, context):
        armature = shown_armature(context)
        return armature is not None and bool(source_strips(armature))

    def draw(self, context):
        draw_strip_details(self.layout, shown_armature(context))


class SMART_MOTION_PT_phases(_Details, bpy.types.Panel):
    """The support phases Analyze found, one paragraph per strip."""

    bl_idname = "SMART_MOTION_PT_phases"
    bl_label = "Support Phases"

    @classmethod
    def poll(cls, context):
        armature = shown_armature(context)
        return armature is not None and any(item.phases for item in armature.smart_motion.strips)

    def draw(self, context):
        draw_phases(self.layout, shown_armature(context))


class SMART_MOTION_PT_plan_details(_Details, bpy.types.Panel):
    """The last synthesis's plan at length."""

    bl_idname = "SMART_MOTION_PT_plan_details"
    bl_label = "Plan Details"

    @classmethod
    def poll(cls, context):
        armature = shown_armature(context)
        return armature is not None and bool(armature.smart_motion.plan_json)

    def draw(self, context):
        draw_plan_details(self.layout, recorded_plan(shown_armature(context)))


# (the main panel before its sub-panels)
CLASSES = (SMART_MOTION_UL_reach_examples, SMART_MOTION_PT_main, SMART_MOTION_PT_strip_details,
           SMART_MOTION_PT_phases, SMART_MOTION_PT_plan_details)
