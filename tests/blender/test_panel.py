"""The Smart Motion panel fits on a screen (issue 26 item 4): one row per strip, one line per pair of
the plan and the fixed controls, whatever the timeline's length; the rest on demand, in sub-panels
closed until opened."""

import bpy

from scenes import draw_panel, import_action, import_clip, sub_panels

STRIPS = 16
CLIPS = ("walk_normal_001", "bow_normal_001", "punch_normal_001")
FRAMES = 60  # of each clip: a long timeline of short strips, quick to synthesize
OVERLAP = 15


def long_timeline() -> tuple[bpy.types.Object, int]:
    """An armature and the rows its panel takes with no strip (the fixed controls), then STRIPS strips of
    the clips in turn on two tracks, each overlapping the previous by OVERLAP frames, all selected."""
    obj = import_clip(CLIPS[0])
    actions = [obj.animation_data.action] + [import_action(name) for name in CLIPS[1:]]
    obj.animation_data.action = None
    bpy.context.view_layer.objects.active = obj
    fixed = draw_panel(opened=False).rows
    tracks = [obj.animation_data.nla_tracks.new() for _ in range(2)]
    for k in range(STRIPS):
        action = actions[k % len(actions)]
        strip = tracks[k % 2].strips.new(f"{action.name[:5]} {k + 1}", 1 + k * (FRAMES - OVERLAP), action)
        strip.action_frame_end = strip.action_frame_start + FRAMES - 1
        strip.select = True
    return obj, fixed


def bound(fixed: int, strips: int, plan: dict | None) -> int:
    """The rows the panel may take: the fixed controls (with no strip they held one line saying so),
    one row per strip, and for a plan its heading and one line per pair, group, composition, warning
    and rejected strip."""
    rows = fixed + strips
    if plan is not None:
        rows += 1 + sum(len(plan.get(key, ())) for key in ("pairs", "groups", "compositions", "warnings", "rejected"))
    return rows


def test_sixteen_strips_take_a_row_each_and_the_plan_a_line_per_pair(empty_scene):
    import json

    obj, fixed = long_timeline()
    assert bpy.ops.smart_motion.analyze() == {'FINISHED'}
    shown = draw_panel(opened=False)
    assert shown.rows <= bound(fixed, STRIPS, None), (shown.rows, fixed)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    plan = json.loads(obj.smart_motion.plan_json)
    assert len(plan["pairs"]) >= STRIPS // 2
    shown = draw_panel(opened=False)
    assert shown.rows <= bound(fixed, STRIPS, plan), (shown.rows, fixed, len(plan["pairs"]))
    # every strip's name and every pair are on the first screen; the details are one click away
    assert all(strip.name in shown.labels for track in obj.animation_data.nla_tracks[:2] for strip in track.strips)
    assert sum(" → " in line for line in shown.labels) == len(plan["pairs"])
    opened = draw_panel(opened=True)
    assert opened.rows > shown.rows
    assert any(line.startswith("    ") and "-" in line for line in opened.labels)  # the blending segments
    assert any("DS " in line or "LS " in line or "RS " in line for line in opened.labels)  # the support phases


def test_the_details_are_closed_until_opened(installed_extension):
    details = [panel for panel in sub_panels() if panel.bl_idname != "SMART_MOTION_PT_perform"]
    assert {panel.bl_label for panel in details} == {"Strip Details", "Support Phases", "Plan Details"}
    assert all('DEFAULT_CLOSED' in panel.bl_options for panel in details)
