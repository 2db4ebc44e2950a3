"""Give Room and the per-pair blend length in Blender, headless, on real clips (issue 26).

A walk, a run and a guiding gesture placed close on the NLA (tests/core/test_room.py's
timeline): as placed, both gaps are flagged. The gap into the guide needs a few frames
more; the one into the run cannot be helped within 2 s. Reports are printed as Blender
prints an operator's reports (``Info: ...``).
"""

import json
from types import SimpleNamespace

import bpy
import pytest

from scenes import RecordingLayout, all_keys, clips_on_one_armature, draw_panel, same_keys, snapshot, strips_by_name, sub_panels

# (clip, scene frame of its first frame, core in scene frames)
TIGHT = (
    ("walk_normal_001", 1, (21, 117)),
    ("bandai2/run_normal_001", 97, (137, 145)),
    ("guide_normal_001", 115, (155, 181)),
)
CRAMPED = (("walk_normal_001", 1, (21, 117)), ("punch_normal_001", 90, (120, 150)))
# a punch, a synchronized group of a walk and a run (the run at half influence) and a kick, every core
# the default one: the gap into the group is flagged as placed, and a frame's move unflags it
PUNCH_GROUP_KICK = (("punch_normal_001", 1, None), ("walk_normal_001", 210, None), ("run_normal_001", 250, None),
                    ("kick_normal_001", 380, None))


@pytest.fixture
def tight(empty_scene):
    obj = clips_on_one_armature(TIGHT, tracks=3)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    return obj


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


def pair_into(obj, name) -> dict:
    return next(p for p in plan_of(obj)["pairs"] if p["next"] == name)


_QUALITY = []  # core.quality of the installed extension


@pytest.fixture(autouse=True)
def _quality(installed_extension):
    from importlib import import_module

    _QUALITY[:] = [import_module(f"{installed_extension}.core.quality")]


def flags(pair) -> list:
    """The gap's flags, as core.quality judges its recorded figures."""
    return _QUALITY[0].GapQuality.from_dict(pair["quality"]).flags


def placement(obj) -> dict:
    """Where each source strip lies, and its core as set."""
    cores = {i.name: (i.has_core, i.core_first, i.core_last) for i in obj.smart_motion.strips}
    return {name: (s.frame_start, s.frame_end, cores.get(name)) for name, s in strips_by_name(obj).items()
            if name in ("walk", "run", "guide")}


def test_give_room_unflags_the_gap_and_ctrl_z_puts_every_strip_back(tight, capfd):
    obj_name = tight.name
    assert flags(pair_into(tight, "guide")), "flagged as placed"
    before = placement(tight)
    keys = {s.action.name: all_keys(s.action) for name, s in strips_by_name(tight).items()
            if name in ("walk", "run", "guide")}
    assert bpy.types.SMART_MOTION_OT_give_room.bl_options >= {'REGISTER', 'UNDO'}
    bpy.ops.ed.undo_push(message="before Give Room")
    capfd.readouterr()
    # (the second argument asks for the undo push the UI makes after an UNDO operator)
    assert bpy.ops.smart_motion.give_room('EXEC_DEFAULT', True, clip="guide") == {'FINISHED'}
    report = capfd.readouterr().out
    after = placement(bpy.data.objects[obj_name])
    moved = after["guide"][0] - before["guide"][0]
    assert moved > 0 and f"moved 'guide' {moved:g} frames" in report
    assert after["walk"] == before["walk"] and after["run"] == before["run"]
    # the gap now meets its references: the plan says so, and the panel has no Give Room beside it
    pair = pair_into(bpy.data.objects[obj_name], "guide")
    assert not flags(pair)
    drawn = draw_panel()
    assert "smart_motion.give_room" in drawn.operators  # (the run's gap is still flagged)
    for name, kept in keys.items():
        assert same_keys(kept, all_keys(bpy.data.actions[name])), f"{name}: source actions untouched"

    assert bpy.ops.ed.undo() == {'FINISHED'}
    obj = bpy.data.objects[obj_name]
    assert placement(obj) == before, "Ctrl+Z restores every strip"
    assert flags(pair_into(obj, "guide"))


def test_give_room_that_two_seconds_cannot_help_says_so_and_moves_nothing(tight, capfd):
    assert flags(pair_into(tight, "run"))
    before = snapshot()
    capfd.readouterr()
    assert bpy.ops.smart_motion.give_room(clip="run") == {'CANCELLED'}
    report = capfd.readouterr().out
    assert "up to 2 s (60 frames) later is not enough" in report and "nothing moved" in report
    assert snapshot() == before


def test_the_warnings_give_one_line_per_flagged_gap(tight, capfd):
    capfd.readouterr()
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    warnings = [line for line in capfd.readouterr().out.splitlines() if line.startswith("Warning: ")]
    flagged = [p for p in plan_of(tight)["pairs"] if flags(p) or p.get("warning")]
    assert len(warnings) == len(flagged) == 2
    assert "'walk' → 'run', frames " in warnings[0] and "'run' → 'guide', frames " in warnings[1]


def test_a_gap_with_a_warning_of_its_own_and_flags_is_still_one_line(empty_scene, capfd):
    """The punch's core three frames after the walk's: the cores leave less than the shortest blend (the
    pair's own warning) and the gap's figures are flagged, on one line (two, before issue 26)."""
    obj = clips_on_one_armature(CRAMPED, tracks=2)
    capfd.readouterr()
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    warnings = [line for line in capfd.readouterr().out.splitlines() if line.startswith("Warning: ")]
    (pair,) = plan_of(obj)["pairs"]
    assert pair.get("warning") and flags(pair), "the gap has both"
    (line,) = warnings
    assert pair["warning"] in line and all(flag in line for flag in flags(pair)) and "Give Room" in line


def test_the_users_blend_length_is_kept_by_the_plan_marked_and_survives_a_live_update(tight):
    obj_name = tight.name
    item = next(i for i in tight.smart_motion.strips if i.name == "guide")
    item.blend_length = 0.5
    bpy.context.view_layer.update()  # a live update follows the setting
    pair = pair_into(bpy.data.objects[obj_name], "guide")
    assert pair["blend"] == "user" and pair["blend_s"] == 0.5
    assert "blend 0.5 s: yours (guide's Blend Length)" in " ".join(draw_panel().labels)
    # an edit of another strip re-synthesizes live: the length stays the user's
    strips_by_name(tight)["walk"].frame_start_ui = 3
    bpy.context.view_layer.update()
    plan = plan_of(bpy.data.objects[obj_name])
    assert plan["pairs"][0]["gap"][0] == 119, "the live update took the walk's move"
    assert pair_into(bpy.data.objects[obj_name], "guide")["blend_s"] == 0.5
    # and 0 gives the length back to the range search
    item.blend_length = 0.0
    bpy.context.view_layer.update()
    assert "blend" not in pair_into(bpy.data.objects[obj_name], "guide")


def test_a_gap_not_measured_shows_not_measured_and_why_never_a_tick(tight):
    plan = plan_of(tight)
    plan["pairs"][0]["quality"] = None
    plan["pairs"][1]["quality"] = dict(plan["pairs"][1]["quality"], accel=None, pop=None,
                                       why_unmeasured="the clips' joints do not move")
    tight.smart_motion.plan_json = json.dumps(plan)
    labels = draw_panel().labels
    first, second = (f"    gap {p['gap'][0]}-{p['gap'][1]}" for p in plan["pairs"])
    assert f"{first}: not measured (the plan holds no figures for it)" in " ".join(labels)
    assert f"{second}: not measured (the clips' joints do not move)" in " ".join(labels)
    assert not [label for label in labels if label.startswith("    gap") and "-x" in label]


def test_add_as_soon_as_possible_does_not_place_a_strip_where_its_gap_is_flagged(empty_scene, capfd):
    """After a walk whose core ends at frame 101, the punch's earliest start by W alone is flagged:
    the strip is placed the least later that keeps its gap unflagged, and Synthesize agrees."""
    from scenes import import_action

    obj = clips_on_one_armature((("walk_normal_001", 1, (1, 101)),), tracks=1)
    import_action("punch_normal_001")
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.smart_motion.add_asap(action="punch_normal_001") == {'FINISHED'}
    for strip in strips_by_name(obj).values():
        strip.select = True
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    (pair,) = plan_of(obj)["pairs"]
    assert not flags(pair), pair["quality"]


def test_a_foot_sliding_with_nothing_to_judge_it_by_gets_no_tick(tight):
    """Skate measured, but no reference (the untouched clips have no foot down on the gap's frames): the
    panel says "skate not judged" and why, with a question mark, never "none (no foot down)" and a tick."""
    plan = plan_of(tight)
    plan["pairs"][1]["quality"] = dict(plan["pairs"][1]["quality"], skate=0.3, skate_untouched=None, accel=1.0,
                                       accel_reference=1.0, pop=1.0, pop_reference=1.0)
    tight.smart_motion.plan_json = json.dumps(plan)
    layout = IconLayout()
    bpy.types.SMART_MOTION_PT_main.draw(SimpleNamespace(layout=layout), bpy.context)
    pair = f"{plan['pairs'][1]['prev']} → {plan['pairs'][1]['next']}: "
    (icon,) = [icon for text, icon in layout.drawn if text.startswith(pair)]  # the pair's one row
    assert icon == 'QUESTION'
    for panel in sub_panels():  # and Plan Details, at length
        if not hasattr(panel, "poll") or panel.poll(bpy.context):
            panel.draw(SimpleNamespace(layout=layout), bpy.context)
    gap = f"    gap {plan['pairs'][1]['gap'][0]}-{plan['pairs'][1]['gap'][1]}: skate not judged"
    (icon,) = [icon for text, icon in layout.drawn if text.startswith(gap)]
    assert icon == 'QUESTION'
    assert not [text for text in layout.labels if "none (no foot down)" in text]


def test_give_room_moves_a_strip_that_an_earlier_one_touches_on_its_track(empty_scene, installed_extension):
    """Strips end to end on one track, as the NLA allows: only the frames the strip moves into are
    looked at, so the neighbour ending where it starts does not block it, one starting where it
    will end does not either, and one in the way does."""
    from importlib import import_module

    arrange = import_module(f"{installed_extension}.addon.arrange")
    room = import_module(f"{installed_extension}.core.room")
    obj = bpy.data.objects.new("arm", bpy.data.armatures.new("arm"))
    bpy.context.scene.collection.objects.link(obj)
    track = obj.animation_data_create().nla_tracks.new()
    strips = {}
    for name, start in (("A", 1), ("B", 100), ("C", 215)):
        action = bpy.data.actions.new(name)
        action.use_frame_range, action.frame_start, action.frame_end = True, 1, 100
        strips[name] = track.strips.new(name, start, action)
    assert strips["A"].frame_end == strips["B"].frame_start == 100 and strips["B"].frame_end == 199

    def move(frames):
        return arrange.RoomMove(room.Room("A", "B", (50, 120), frames, 60, 30.0, ("B",), ("flagged",)), ("B",), {},
                                ("A", "B", "C"))

    arrange.give_room_strips(obj, move(16))  # B to 116-215: touching C
    assert (strips["B"].frame_start, strips["B"].frame_end) == (116, 215)
    with pytest.raises(ValueError, match="would move NLA strip 'B' onto 'C'"):
        arrange.give_room_strips(obj, move(1))
    assert strips["B"].frame_start == 116


def test_give_room_keeps_the_default_cores_it_read_a_groups_too(empty_scene, installed_extension, capfd):
    """Give Room on the gap into a synchronized group moves the group and the kick after it. The punch's
    default core would grow into the room made, and the group's would start sooner: each keeps the
    core the search read (the group's on its strips, as an edited group core reads). The kick's does
    not change with the move (it moves with the group that cuts it): it stays the default one, not
    made an edited core. Ctrl+Z gives every strip and setting back."""
    from importlib import import_module

    strip_settings = import_module(f"{installed_extension}.addon.strips").strip_settings
    obj = clips_on_one_armature(PUNCH_GROUP_KICK, tracks=3)
    for name in ("walk", "run"):
        strip_settings(obj, strips_by_name(obj)[name], create=True).sync_blend = True
    run = strips_by_name(obj)["run"]
    run.use_animated_influence = True
    run.fcurves.find("influence").keyframe_points.insert(1, 0.5)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    name, before = obj.name, plan_of(obj)
    (group,) = before["groups"]
    into = next(p for p in before["pairs"] if p["next"] == group["name"])
    assert flags(into), "flagged as placed"
    assert not any(i.has_core for i in obj.smart_motion.strips), "every core the default one"
    placed = placement_of(obj)
    bpy.ops.ed.undo_push(message="before Give Room")
    assert bpy.ops.smart_motion.give_room('EXEC_DEFAULT', True, clip=group["name"]) == {'FINISHED'}
    obj = bpy.data.objects[name]
    after = plan_of(obj)
    moved = strips_by_name(obj)["walk"].frame_start - placed["walk"][0]
    assert moved > 0 and strips_by_name(obj)["kick"].frame_start - placed["kick"][0] == moved
    assert after["groups"][0]["core"] == [c + moved for c in group["core"]], "the group's core as read, moved"
    punch = next(p for p in after["pairs"] if p["next"] == group["name"])
    assert punch["gap"] == [into["gap"][0], into["gap"][1] + moved], "the punch's core as read"
    assert not flags(punch)
    kick = {i.name: i.has_core for i in obj.smart_motion.strips}["kick"]
    assert not kick, "the kick's default core did not change: not made an edited one"
    assert bpy.ops.ed.undo() == {'FINISHED'}
    obj = bpy.data.objects[name]
    assert placement_of(obj) == placed and not any(i.has_core for i in obj.smart_motion.strips)


def placement_of(obj) -> dict:
    return {name: (s.frame_start, s.frame_end) for name, s in strips_by_name(obj).items()
            if name in ("punch", "walk", "run", "kick")}


class IconLayout(RecordingLayout):
    """A :class:`scenes.RecordingLayout` that also records each label's icon."""

    def __init__(self):
        super().__init__()
        self.drawn: list[tuple[str, str]] = []

    def label(self, *, text="", icon='NONE'):
        super().label(text=text, icon=icon)
        self.drawn.append((text, icon))

    def _child(self, in_row: bool) -> "IconLayout":
        # (rows, columns and boxes record into the same lists, icons too)
        child = IconLayout()
        child.labels, child.props, child.operators, child.drawn = self.labels, self.props, self.operators, self.drawn
        child._counts, child._in_row = self._counts, in_row
        return child
