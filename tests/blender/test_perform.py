"""Perform (Oshita 2014, section 5, eq. 17) in Blender, headless, on real clips.

The number keys of a live performance are replaced by a scripted list of
(frame, action) triggers, run through the same :class:`Performance` the
modal operator drives: by the operator's ``script`` property, or by the
class itself where a test looks at the preview between two triggers.

A walk whose core ends at frame 101 and whose strip plays to frame 195; the
bow, kick and punch are performed after it.
"""

import importlib
import json
import re
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from scenes import (addon_modules, RecordingLayout, all_keys, channel_keys, clips_on_one_armature, cmu_named_walk, evaluated_heads,
                    import_action, preview_segments, refused, same_keys, snapshot, strips_by_name)

WALK = (("walk_normal_001", 1, (1, 101)),)
WALK_CORE_END = 101
WALK_END = 195
SOURCES = ("walk_normal_001", "bow_normal_001", "kick_normal_001", "punch_normal_001")


@pytest.fixture
def walk(empty_scene):
    obj = clips_on_one_armature(WALK, tracks=1)
    for name in SOURCES[1:]:
        import_action(name)
    bpy.context.view_layer.objects.active = obj
    return obj


@pytest.fixture
def perform(installed_extension):
    return importlib.import_module(f"{installed_extension}.addon.perform")


PREVIEW_TRACK = "[Smart Motion preview]"


def sources(obj) -> dict:
    """The strips of ``obj`` by name, the preview's left out."""
    return {s.name: s for t in obj.animation_data.nla_tracks if t.name != PREVIEW_TRACK for s in t.strips}


def run(script: str, capfd, *args) -> tuple[list[bpy.types.NlaStrip], str]:
    """Run Perform with ``script``; the strips it added, in trigger order, and the printed report."""
    obj = bpy.context.view_layer.objects.active
    before = set(sources(obj))
    capfd.readouterr()
    assert bpy.ops.smart_motion.perform(*args, script=script) == {'FINISHED'}
    report = capfd.readouterr().out
    strips = sources(obj)
    added = sorted((strips[name] for name in set(strips) - before), key=lambda s: s.frame_start)
    return added, report


def preview_keys(obj) -> dict[tuple, np.ndarray]:
    """The preview's key values ``(frame, value)`` rows per F-curve."""
    return {key: arrays[0].reshape(-1, 2) for key, arrays in channel_keys(*preview_segments(obj)).items()}


def up_to(keys: dict, frame: int) -> dict:
    return {key: rows[rows[:, 0] <= frame] for key, rows in keys.items()}


def segments_into(obj, name: str) -> list[dict]:
    plan = json.loads(obj.smart_motion.plan_json)
    (pair,) = [p for p in plan["pairs"] if p["next"] == name]
    return [s for s in pair["segments"] if s["blend"] != "deformation"]


def test_each_trigger_runs_after_its_frame_and_blends_only_after_it(walk, capfd):
    triggers = ((120, "bow_normal_001"), (300, "kick_normal_001"), (1000, "punch_normal_001"))
    added, report = run(", ".join(f"{frame}:{name}" for frame, name in triggers), capfd)
    assert [s.action.name for s in added] == [name for _, name in triggers]
    for (frame, name), strip in zip(triggers, added):
        assert strip.frame_start > frame, f"{name} starts at {strip.frame_start}, triggered at {frame}"
        starts = [s["start"] for s in segments_into(walk, strip.name)]
        assert starts and min(starts) > frame, f"a blend into {name} starts at {min(starts)}, at or before {frame}"
        assert f"added {name!r} at frame {round(strip.frame_start)}, as soon as it can blend after frame" in report
    assert json.loads(walk.smart_motion.plan_json)["rejected"] == []


def test_a_trigger_during_the_walks_core_waits_for_it(walk, capfd):
    (bow,), report = run("40:bow_normal_001", capfd)
    assert WALK_CORE_END < bow.frame_start <= WALK_END, "after the core, blending into the walk's tail"
    assert f"as soon as it can blend after frame {WALK_CORE_END} (the core of 'walk')" in report


def test_triggers_faster_than_the_clips_queue_up(walk, capfd):
    (bow, kick, punch), _ = run("120:bow_normal_001, 121:kick_normal_001, 122:punch_normal_001", capfd)
    # an added strip's core is all of it: each next one starts only after the one before has played out
    assert bow.frame_end < kick.frame_start and kick.frame_end < punch.frame_start
    assert all(s.select for s in (bow, kick, punch)) and strips_by_name(walk)["walk"].select


def test_what_was_played_before_each_trigger_stays_bit_for_bit(walk, perform):
    """Eq. (17): the preview up to each trigger frame is the preview that was playing."""
    performance = perform.Performance(walk, bpy.context)
    frames = list(range(1, 121))
    walk_alone = evaluated_heads(walk, frames)  # the walk strip plays by itself: no preview yet
    previews = []
    for frame, name in ((120, "bow_normal_001"), (200, "kick_normal_001"), (600, "punch_normal_001")):
        bpy.context.scene.frame_set(frame)
        performance.trigger(bpy.data.actions[name], frame)
        performance.keep_in_step()
        previews.append((frame, preview_keys(walk)))
    # the first preview plays the walk as the walk strip did, written as keys (float32) of the same poses
    np.testing.assert_allclose(evaluated_heads(walk, frames), walk_alone, atol=1e-5)
    for (frame, before), (_, after) in zip(previews, previews[1:]):
        played, now = up_to(before, frame), up_to(after, frame)
        assert played.keys() == now.keys()
        assert all(np.array_equal(played[k], now[k]) for k in played), f"frames up to {frame} changed"
        assert any(not np.array_equal(before[k], after[k]) for k in before), "the new clip changed nothing after"


def test_the_performance_stays_on_the_timeline_and_bakes_as_played(walk, capfd):
    added, _ = run("120:bow_normal_001, 300:kick_normal_001", capfd)
    strips = strips_by_name(walk)
    assert {s.name for s in added} <= set(strips)
    preview = walk.smart_motion.preview_action
    assert preview is not None and walk.animation_data.nla_tracks.get(PREVIEW_TRACK) is not None
    played = preview_keys(walk)
    assert bpy.context.scene.frame_current == 1, "the playhead back where the performance started"
    assert bpy.context.scene.frame_end >= round(added[-1].frame_end), "Play plays all of it"
    # Bake keeps the performance as played
    capfd.readouterr()
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    assert "(the preview, still current, kept as it is)" in capfd.readouterr().out
    baked = {key: arrays[0].reshape(-1, 2) for key, arrays in channel_keys(walk.animation_data.action).items()}
    assert baked.keys() == played.keys() and all(np.array_equal(baked[k], played[k]) for k in played)
    # Synthesize again gives the performance as played (to the float32 keys' rounding, the preview
    # having followed the triggers incrementally): each strip keeps the frame it was added at
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    again = preview_keys(walk)
    assert again.keys() == played.keys()
    assert all(np.allclose(again[k], played[k], rtol=0, atol=1e-5) for k in played)


def test_a_performed_strip_moved_by_hand_blends_freely_again(walk, capfd, installed_extension):
    addon = addon_modules(installed_extension)
    (bow,), _ = run("150:bow_normal_001", capfd)
    assert addon.strips.performed_current(walk, bow) == 150
    start = bow.frame_start
    bow.frame_end += 10  # Blender moves both ends: frame_start first would run into the end
    bow.frame_start = start + 10
    assert addon.strips.performed_current(walk, bow) is None
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert min(s["start"] for s in segments_into(walk, bow.name)) <= 150, "the blend may start earlier now"


def test_the_source_actions_are_never_written(walk, capfd):
    keys = {name: all_keys(bpy.data.actions[name]) for name in SOURCES}
    run("40:bow_normal_001, 300:kick_normal_001, 310:bow_normal_001", capfd)
    for name, before in keys.items():
        assert same_keys(before, all_keys(bpy.data.actions[name])), f"action {name!r} was written"


def test_the_performance_is_one_undo_step(walk, capfd):
    assert bpy.types.SMART_MOTION_OT_perform.bl_options >= {'REGISTER', 'UNDO'}
    before = snapshot()
    frame_end = bpy.context.scene.frame_end
    bpy.ops.ed.undo_push(message="before Perform")
    # The second argument asks for the undo push the UI makes after an UNDO operator.
    run("120:bow_normal_001, 300:kick_normal_001", capfd, 'EXEC_DEFAULT', True)
    assert snapshot() != before
    assert bpy.ops.ed.undo() == {'FINISHED'}
    assert snapshot() == before and bpy.context.scene.frame_end == frame_end


def test_an_empty_palette_key_says_where_to_set_it(walk, perform):
    scene = bpy.context.scene
    scene.smart_motion.palette.action_2 = bpy.data.actions["kick_normal_001"]
    assert perform.palette_action(scene, 2).name == "kick_normal_001"
    with pytest.raises(ValueError, match=r"key 3 has no action: pick one for it in the Perform list of the Smart "
                                         r"Motion panel"):
        perform.palette_action(scene, 3)


def test_the_number_keys_and_the_numpad_map_to_the_palette(perform):
    assert [perform.KEYS[k] for k in ("ONE", "FIVE", "NINE", "NUMPAD_1", "NUMPAD_9")] == [1, 5, 9, 1, 9]
    assert "ZERO" not in perform.KEYS and "NUMPAD_0" not in perform.KEYS


def test_without_a_strip_to_run_after_it_says_what_to_select(walk):
    strips_by_name(walk)["walk"].select = False
    refused("perform", r"armature 'walk_normal_001' has no selected NLA strip to perform "
            r"after: select the strips the performance starts from", script="40:bow_normal_001")


@pytest.mark.parametrize("script, message", [
    ("40:bow_normal_001, 80:no_such_action", r"there is no action 'no_such_action'"),
    ("80:bow_normal_001, 40:kick_normal_001", r"playback only goes forward, so give the triggers in frame order"),
    ("40 bow_normal_001", r"'40 bow_normal_001' is not FRAME:ACTION"),
    ("", r"Perform plays live: press its button in the Smart Motion panel"),
])
def test_a_bad_script_is_refused_with_nothing_changed(walk, script, message):
    refused("perform", message, script=script)


def test_an_action_of_another_skeleton_is_refused_before_anything_is_added(walk, tmp_path):
    cmu_named_walk(tmp_path)
    bpy.context.view_layer.objects.active = walk
    refused("perform", r"action 'cmu_walk' animates 4 of the 21 body bones",
            script="120:bow_normal_001, 300:cmu_walk")


def test_playback_plays_every_frame_and_waits_at_the_end(walk, perform):
    scene = bpy.context.scene
    scene.frame_set(WALK_END - 2)
    performance = perform.Performance(walk, bpy.context)
    assert [performance.tick() for _ in range(4)] == [WALK_END - 1, WALK_END, WALK_END, WALK_END]
    strip, _ = performance.trigger(bpy.data.actions["bow_normal_001"], scene.frame_current)
    assert strip.frame_start > WALK_END
    assert performance.tick() == WALK_END + 1, "a new clip: playback goes on"
    assert walk.smart_motion.preview_action is not None, "and the preview has it before the next frame"


def test_the_palette_offers_every_action_but_previews(walk, capfd, installed_extension):
    properties = importlib.import_module(f"{installed_extension}.addon.properties")
    run("120:bow_normal_001", capfd)
    assert not any(properties._not_a_preview(None, segment) for segment in preview_segments(walk))
    assert all(properties._not_a_preview(None, bpy.data.actions[name]) for name in SOURCES)


def test_the_panel_lists_keys_one_to_nine_and_the_button(walk):
    layout = RecordingLayout()
    assert bpy.types.SMART_MOTION_PT_perform.poll(bpy.context)
    bpy.types.SMART_MOTION_PT_perform.draw(SimpleNamespace(layout=layout), bpy.context)
    assert [name for _, name in layout.props] == [f"action_{k}" for k in range(1, 10)]
    assert layout.operators == ["smart_motion.perform"]
    assert bpy.types.SMART_MOTION_PT_perform.bl_parent_id == "SMART_MOTION_PT_main"


def test_a_report_names_every_strip_added(walk, capfd):
    added, report = run("120:bow_normal_001, 300:kick_normal_001", capfd)
    names = re.search(r"performed 2 strips \((.*)\) on the timeline", report).group(1)
    assert names == ", ".join(repr(s.name) for s in added)


class WindowManager:
    """Stands in for the window manager of a UI session: records the timer and the modal handler."""

    def __init__(self):
        self.timer = self.handler = None

    def event_timer_add(self, time_step, window=None):
        self.timer = SimpleNamespace(time_step=0.0)  # every TIMER event a tick, however fast the test sends them
        return self.timer

    def event_timer_remove(self, timer):
        assert timer is self.timer
        self.timer = None

    def modal_handler_add(self, operator):
        self.handler = operator


def live_operator(perform):
    """The operator's own invoke and modal on a stand-in for the instance Blender makes (no window headless)."""
    op = perform.SMART_MOTION_OT_perform

    class Live:
        invoke, modal, execute, _end, _header, _run_script = (
            op.invoke, op.modal, op.execute, op._end, op._header, op._run_script)
        script = ""

        def __init__(self):
            self.reports = []

        def report(self, kind, text):
            self.reports.append((next(iter(kind)), text))

    return Live()


def event(kind, value='PRESS', repeat=False):
    return SimpleNamespace(type=kind, value=value, is_repeat=repeat)


def test_the_modal_operator_turns_keys_ticks_and_esc_into_the_same_performance(walk, perform):
    scene = bpy.context.scene
    scene.smart_motion.palette.action_1 = bpy.data.actions["bow_normal_001"]
    scene.frame_set(120)
    wm = WindowManager()
    headers = []
    area = SimpleNamespace(header_text_set=headers.append)
    context = SimpleNamespace(scene=scene, view_layer=bpy.context.view_layer, active_object=walk,
                              window_manager=wm, window=None, screen=None, area=area)
    live = live_operator(perform)
    assert live.invoke(context, event('LEFTMOUSE')) == {'RUNNING_MODAL'}
    assert wm.handler is live and wm.timer is not None
    assert headers[-1].startswith("Perform: 1:bow_normal_001 · Esc ends"), "the editor's header shows the palette"
    for _ in range(3):
        assert live.modal(context, event('TIMER', 'NOTHING')) == {'RUNNING_MODAL'}
    assert scene.frame_current == 123, "one frame per tick"
    assert live.modal(context, event('TWO')) == {'RUNNING_MODAL'}, "an empty key: the performance goes on"
    assert live.reports[-1][0] == 'WARNING' and "key 2 has no action" in live.reports[-1][1]
    assert live.modal(context, event('ONE')) == {'RUNNING_MODAL'}
    assert live.modal(context, event('ONE', repeat=True)) == {'RUNNING_MODAL'}, "a held key adds once"
    assert live.modal(context, event('LEFTMOUSE')) == {'RUNNING_MODAL'}, "clicks edit nothing while it plays"
    assert live.modal(context, event('MOUSEMOVE', 'NOTHING')) == {'PASS_THROUGH'}
    (bow,) = [s for s in sources(walk).values() if s.action.name == "bow_normal_001"]
    assert bow.frame_start > 123 and bow.select
    assert "as soon as it can blend after frame 123 (the playhead)" in live.reports[-1][1]
    assert walk.smart_motion.preview_action is None, "the preview takes the new strip at the next tick"
    assert live.modal(context, event('TIMER', 'NOTHING')) == {'RUNNING_MODAL'}
    assert walk.smart_motion.preview_action is not None and scene.frame_current == 124
    assert live.modal(context, event('ESC')) == {'FINISHED'}
    assert wm.timer is None and scene.frame_current == 120 and headers[-1] is None
    assert bow.name in sources(walk), "the performed strip stays"


def test_esc_before_any_key_changes_nothing(walk, perform):
    scene = bpy.context.scene
    scene.frame_set(150)
    before = snapshot()
    wm = WindowManager()
    context = SimpleNamespace(scene=scene, view_layer=bpy.context.view_layer, active_object=walk,
                              window_manager=wm, window=None, screen=None, area=None)
    live = live_operator(perform)
    assert live.invoke(context, event('LEFTMOUSE')) == {'RUNNING_MODAL'}
    live.modal(context, event('TIMER', 'NOTHING'))
    assert live.modal(context, event('RIGHTMOUSE')) == {'CANCELLED'}, "no undo step for nothing"
    assert snapshot() == before and scene.frame_current == 150


def test_a_single_strip_plays_itself_not_an_old_preview_of_others(empty_scene, perform):
    obj = clips_on_one_armature((("walk_normal_001", 1, (1, 101)), ("bow_normal_001", 151, (181, 288))), tracks=2)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    strips_by_name(obj)["bow"].select = False
    bpy.context.scene.frame_set(120)
    performance = perform.Performance(obj, bpy.context)
    assert performance.tick() == 121
    assert obj.smart_motion.preview_action is None, "what plays is the walk, not the preview of walk and bow"
    assert not strips_by_name(obj)["walk"].mute and not strips_by_name(obj)["bow"].mute


def test_pack_re_times_a_performance_as_a_timeline_not_as_played(walk, capfd, installed_extension):
    addon = addon_modules(installed_extension)
    added, _ = run("120:bow_normal_001, 600:kick_normal_001, 601:punch_normal_001", capfd)
    names = [strip.name for strip in added]
    assert added[1].frame_start > 600
    assert bpy.ops.smart_motion.pack() == {'FINISHED'}
    bow, kick, punch = (sources(walk)[name] for name in names)  # Pack may move a strip to another track
    assert kick.frame_start < 600, "packing is no performance: the frame it was played at is no limit"
    assert addon.strips.performed_current(walk, kick) is None, "moved: it blends as any strip"
    assert bow.frame_end < kick.frame_start and kick.frame_end < punch.frame_start, "still one after another"
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert json.loads(walk.smart_motion.plan_json)["rejected"] == []


def test_a_preview_whose_track_was_deleted_by_hand_is_made_again(walk, capfd):
    """Deleting the preview's track by hand leaves its action: the performance must not sign that
    preview, which lacks the performed strip, as current (Bake would keep it)."""
    obj = walk
    run("120:bow_normal_001", capfd)
    anim = obj.animation_data
    anim.nla_tracks.remove(anim.nla_tracks[PREVIEW_TRACK])
    added, _ = run("300:kick_normal_001", capfd)
    assert PREVIEW_TRACK in anim.nla_tracks
    assert added[0].name in json.loads(obj.smart_motion.plan_json)["clips"], "the preview plays the performed strip"
