"""Live re-synthesis (Oshita 2008, 3.3): while the preview plays, it follows the user's edits, no button.

Each edit is followed by one depsgraph update (``view_layer.update()``, what
Blender runs after any edit); background Blender runs the live update in
that update's handler, where the UI runs it from a timer just after.

The walk, bow and punch of the operator tests, synthesized once; then the
strips are edited as an animator would, and the preview is compared with
what Synthesize gives for the edited strips.
"""

import importlib
import json

import bpy
import numpy as np
import pytest

from scenes import (WALK_BOW_PUNCH, all_keys, channel_keys, clips_on_one_armature, evaluated_heads, preview_segments,
                    same_keys, strips_by_name)

PREVIEW_TRACK = "[Smart Motion preview]"


@pytest.fixture(scope="module")
def live(installed_extension):
    return importlib.import_module(f"{installed_extension}.addon.live")


@pytest.fixture(scope="module")
def segments(installed_extension):
    return importlib.import_module(f"{installed_extension}.addon.preview")


@pytest.fixture
def previewed(empty_scene, live):
    obj = clips_on_one_armature(WALK_BOW_PUNCH)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    update()  # the first live update after Synthesize takes in the preview as it is
    return obj


def update() -> None:
    """One depsgraph update, as Blender runs after an edit."""
    bpy.context.view_layer.update()


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


def preview_keys(obj) -> dict:
    return channel_keys(*preview_segments(obj))


def synthesized_keys(obj) -> dict:
    """The preview keys Synthesize writes for the strips as they are now (the live preview's sources selected)."""
    for strip in strips_by_name(obj).values():
        strip.select = strip.name in plan_of(obj)["clips"]
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    return preview_keys(obj)


def close_keys(a: dict, b: dict, tolerance: float = 1e-4) -> bool:
    """Same curves and frames, values within ``tolerance`` (float32 keys of a float64 synthesis)."""
    return a.keys() == b.keys() and all(
        np.array_equal(a[k][0][0::2], b[k][0][0::2]) and np.allclose(a[k][0][1::2], b[k][0][1::2], atol=tolerance)
        for k in a)


def test_moving_a_strip_ten_frames_changes_the_preview_within_one_update(previewed):
    obj = previewed
    before = preview_keys(obj)
    end = plan_of(obj)["end"]

    strips_by_name(obj)["punch"].frame_start_ui += 10  # as a drag in the NLA editor moves it
    update()

    assert plan_of(obj)["end"] == end + 10, "the plan follows"
    moved = preview_keys(obj)
    assert not same_keys(before, moved)
    assert close_keys(moved, synthesized_keys(obj)), "as Synthesize gives for the moved strip"


def shown_heads(obj) -> np.ndarray:
    """The bone heads Blender shows now, at the frame it stands on (no frame change)."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return np.array([bone.head for bone in evaluated.pose.bones])


def test_blender_shows_the_updated_preview_at_the_frame_it_stands_on(previewed):
    """A drag happens with the frame standing still: the pose shown there follows the new keys at once."""
    obj = previewed
    frame = plan_of(obj)["end"] - 30  # in the punch, which the move shifts
    bpy.context.scene.frame_set(frame)
    before = shown_heads(obj)

    strips_by_name(obj)["punch"].frame_start_ui += 10
    update()

    shown = shown_heads(obj)
    assert np.abs(shown - before).max() > 0.01, "the pose there changed"
    assert np.abs(shown - evaluated_heads(obj, [frame])[0]).max() < 1e-6, "as the keys give it"


def test_only_the_keys_of_frames_that_changed_are_written(previewed, live):
    obj = previewed
    before = preview_keys(obj)
    first_gap = plan_of(obj)["pairs"][0]["gap"][0]  # the walk's core end: nothing before changes

    strips_by_name(obj)["bow"].frame_start_ui += 5  # the preview keeps its frame range
    update()

    stats = live._sessions[obj.session_uid].stats
    after = preview_keys(obj)
    assert 0 < stats["keys written"] < sum(len(v[0]) // 2 for v in after.values()) / 2
    start = plan_of(obj)["start"]
    for key, (co, *_) in after.items():
        upto = 2 * (first_gap - start + 1)
        assert np.array_equal(co[:upto], before[key][0][:upto]), f"{key} changed before the gap"


def test_muting_a_source_leaves_it_out_and_unmuting_takes_it_back(previewed):
    obj = previewed
    three = preview_keys(obj)
    strips_by_name(obj)["bow"].mute = True
    update()
    assert plan_of(obj)["clips"] == ["walk", "punch"]
    strips_by_name(obj)["bow"].mute = False
    update()
    assert plan_of(obj)["clips"] == ["walk", "bow", "punch"]
    assert close_keys(preview_keys(obj), three, 1e-6)


def test_the_slider_and_a_core_range_update_the_preview(previewed):
    obj = previewed
    bpy.context.scene.smart_motion.responsiveness = 0.9
    update()
    assert plan_of(obj)["responsiveness"] == pytest.approx(0.9)
    assert close_keys(preview_keys(obj), synthesized_keys(obj))

    obj.smart_motion.strips["bow"].core_start = 200
    update()
    bow = next(p for p in plan_of(obj)["pairs"] if p["next"] == "bow")
    assert bow["gap"][1] == 200
    assert close_keys(preview_keys(obj), synthesized_keys(obj))


def test_live_updates_off_leave_the_preview_until_turned_on(previewed):
    obj = previewed
    scene = bpy.context.scene
    before = preview_keys(obj)
    scene.smart_motion.live = False
    strips_by_name(obj)["punch"].frame_start_ui += 10
    update()
    assert same_keys(before, preview_keys(obj))
    scene.smart_motion.live = True
    update()
    assert not same_keys(before, preview_keys(obj))


def test_a_timeline_that_cannot_be_synthesized_leaves_the_preview_and_says_why(previewed):
    obj = previewed
    before = preview_keys(obj)
    strips_by_name(obj)["punch"].frame_start_ui += 0.5
    update()
    assert "starts between frames" in obj.smart_motion.live_error
    assert same_keys(before, preview_keys(obj))
    strips_by_name(obj)["punch"].frame_start_ui -= 0.5
    update()
    assert obj.smart_motion.live_error == ""


def test_source_actions_are_never_written(previewed):
    obj = previewed
    preview = preview_segments(obj)
    sources = {s.action.name: all_keys(s.action) for s in strips_by_name(obj).values() if s.action not in preview}
    strips_by_name(obj)["bow"].frame_start_ui += 7
    update()
    strips_by_name(obj)["punch"].mute = True
    update()
    for name, keys in sources.items():
        assert same_keys(keys, all_keys(bpy.data.actions[name])), name


def test_an_undone_move_gets_the_preview_of_before_back(previewed):
    obj = previewed
    before = preview_keys(obj)
    bpy.ops.ed.undo_push(message="before the move")
    strips_by_name(obj)["bow"].frame_start_ui += 7
    update()
    bpy.ops.ed.undo_push(message="moved, the preview updated")
    assert not close_keys(preview_keys(obj), before, 1e-6)

    name = obj.name
    assert bpy.ops.ed.undo() == {'FINISHED'}
    obj = bpy.data.objects[name]  # undo reloads the file's data
    update()
    assert strips_by_name(obj)["bow"].frame_start == WALK_BOW_PUNCH[1][1]
    assert close_keys(preview_keys(obj), before, 1e-6)
    assert bpy.ops.ed.redo() == {'FINISHED'}
    obj = bpy.data.objects[name]
    update()
    assert close_keys(preview_keys(obj), synthesized_keys(obj))


def test_a_drag_of_many_small_moves_ends_as_one_move(previewed):
    obj = previewed
    for _ in range(6):
        strips_by_name(obj)["bow"].frame_start_ui += 2
        update()
    assert close_keys(preview_keys(obj), synthesized_keys(obj))


def test_after_a_source_actions_keys_are_edited_synthesize_brings_live_updates_in_step(previewed):
    """Under the preview's solo Blender does not evaluate the sources, so an edit of an action's keys
    reaches the preview at the next Synthesize; live updates after it read the edited keys."""
    obj = previewed
    strips_by_name(obj)["punch"].frame_start_ui += 2
    update()  # a live update: the strips as read are kept
    bow = strips_by_name(obj)["bow"].action
    fcurve = next(c for bag in bow.layers[0].strips[0].channelbags for c in bag.fcurves
                  if c.data_path.endswith("rotation_euler") and "Chest" in c.data_path)
    for point in fcurve.keyframe_points:
        point.co[1] += 0.2
    fcurve.update()
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    update()
    strips_by_name(obj)["punch"].frame_start_ui += 4
    update()
    live = preview_keys(obj)
    assert close_keys(live, synthesized_keys(obj)), "the move is synthesized from the edited keys"


def test_a_fault_in_a_live_update_is_said_once_and_leaves_the_preview(previewed, live, monkeypatch, capfd):
    obj = previewed
    before = preview_keys(obj)

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a stand-in fault")

    monkeypatch.setattr(live.timeline, "strip_clips", broken)
    strips_by_name(obj)["punch"].frame_start_ui += 3
    update()
    update()
    assert "ZeroDivisionError: a stand-in fault" in obj.smart_motion.live_error
    assert capfd.readouterr().err.count("Traceback") == 1, "said once, not on every update"
    assert same_keys(before, preview_keys(obj))


def test_a_clip_added_at_the_end_grows_the_preview_and_leaves_the_keys_before_it(previewed, live, segments):
    """As Perform adds clips: the curves grow by the new frames, keys that do not change are not
    written, and the result is what Synthesize gives."""
    obj = previewed
    bpy.context.scene.frame_set(420)
    before = preview_keys(obj)
    assert bpy.ops.smart_motion.add_asap(action="bow_normal_001") == {'FINISHED'}
    added = next(s for s in strips_by_name(obj).values() if s.select and s.name not in plan_of(obj)["clips"])
    strips = importlib.import_module(f"{live.__name__.rpartition('.')[0]}.strips")
    strips.strip_settings(obj, added, create=True).preview_source = True
    assert live.refresh(obj)  # as a performance takes its new strip in
    grown = preview_keys(obj)
    assert plan_of(obj)["end"] == round(added.frame_end)
    strips = obj.animation_data.nla_tracks[PREVIEW_TRACK].strips
    assert [(s.frame_start, s.frame_end) for s in strips] == [
        (plan_of(obj)["start"] + first, plan_of(obj)["start"] + last)
        for first, last in segments.segment_ranges(plan_of(obj)["end"] - plan_of(obj)["start"] + 1)]
    played = 2 * (420 - plan_of(obj)["start"] + 1)
    for key, (co, *_) in before.items():
        assert np.array_equal(grown[key][0][:played], co[:played]), key
    assert live._sessions[obj.session_uid].stats["keys written"] < sum(len(v[0]) // 2 for v in grown.values())
    assert close_keys(grown, synthesized_keys(obj))


def test_a_source_renamed_then_moved_stays_in_the_preview(previewed):
    obj = previewed
    strips_by_name(obj)["bow"].name = "bow renamed"
    update()
    strips_by_name(obj)["bow renamed"].frame_start_ui += 5
    update()
    assert plan_of(obj)["clips"] == ["walk", "bow renamed", "punch"], "the renamed strip is still a source"
    assert obj.smart_motion.strips["bow renamed"].has_core, "and keeps its edited core"
    assert close_keys(preview_keys(obj), synthesized_keys(obj))


@pytest.mark.parametrize("edit", ["curve", "key"])
def test_a_preview_curve_or_key_deleted_by_hand_is_written_again(previewed, edit):
    obj = previewed
    strips_by_name(obj)["bow"].frame_start_ui += 3
    update()  # the preview's curves are known to the live updates now
    bag = obj.smart_motion.preview_action.layers[0].strips[0].channelbags[0]
    fcurve = next(c for c in bag.fcurves if "Hips" in c.data_path and "rotation" in c.data_path)
    if edit == "curve":
        bag.fcurves.remove(fcurve)
    else:
        fcurve.keyframe_points.remove(fcurve.keyframe_points[200])
    strips_by_name(obj)["bow"].frame_start_ui += 3
    update()
    assert obj.smart_motion.live_error == ""
    assert close_keys(preview_keys(obj), synthesized_keys(obj))


def test_a_duplicated_armatures_edits_leave_the_originals_preview_alone(previewed):
    """A duplicate shares its original's preview action (the pointer is copied): its live update
    gives it a preview of its own rather than write the original's."""
    obj = previewed
    before = preview_keys(obj)
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)
    assert bpy.ops.object.duplicate() == {'FINISHED'}
    copy = bpy.context.view_layer.objects.active
    assert copy != obj
    strips_by_name(copy)["punch"].frame_start_ui += 10
    update()
    assert same_keys(before, preview_keys(obj)), "the original's preview is as it was"
    own = preview_segments(copy)
    assert own[0] == copy.smart_motion.preview_action
    assert not set(own) & set(preview_segments(obj)), "the copy plays segments of its own"
    assert plan_of(copy)["end"] == plan_of(obj)["end"] + 10
    for strip in strips_by_name(obj).values():
        strip.select = False  # (Synthesize refuses another object's selected strips)
    assert close_keys(preview_keys(copy), synthesized_keys(copy))


def test_clearing_a_duplicated_armatures_preview_leaves_the_originals(previewed):
    """With Live Updates off, nothing gives the duplicate a preview of its own before Clear."""
    obj = previewed
    bpy.context.scene.smart_motion.live = False
    before = preview_keys(obj)
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)
    assert bpy.ops.object.duplicate() == {'FINISHED'}
    copy = bpy.context.view_layer.objects.active
    for strip in strips_by_name(obj).values():
        strip.select = False
    assert bpy.ops.smart_motion.clear() == {'FINISHED'}
    assert copy.smart_motion.preview_action is None
    assert obj.smart_motion.preview_action is not None
    assert same_keys(before, preview_keys(obj))


def test_a_rejected_strip_moved_or_muted_brings_the_plan_up_to_date(empty_scene, live):
    """Moving or muting a rejected strip changes no key, but the plan the panel shows."""
    layout = (*WALK_BOW_PUNCH[:2], ("punch_normal_001", 200, (200, 260)))  # punch's core inside bow's
    obj = clips_on_one_armature(layout, tracks=3)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    update()
    assert "output frames 200..260" in plan_of(obj)["rejected"][0]["reason"]
    strips_by_name(obj)["punch"].frame_start_ui += 5
    update()
    assert "output frames 205..265" in plan_of(obj)["rejected"][0]["reason"]
    strips_by_name(obj)["punch"].mute = True
    update()
    assert plan_of(obj)["clips"] == ["walk", "bow"] and not plan_of(obj)["rejected"]


def test_synthesize_clears_why_the_last_live_update_failed(previewed):
    obj = previewed
    strips = strips_by_name(obj)
    strips["bow"].mute = strips["punch"].mute = True
    update()
    assert obj.smart_motion.live_error, "one source plays: the preview is left as it was"
    track = obj.animation_data.nla_tracks.new()
    track.strips.new("bow again", 400, strips["bow"].action)
    for strip in strips_by_name(obj).values():
        strip.select = strip.name in ("walk", "bow again")
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert plan_of(obj)["clips"] == ["walk", "bow again"]
    assert obj.smart_motion.live_error == "", "the new preview is up to date"


def test_an_unexpected_error_is_said_once_per_edit_not_on_every_update(previewed, live, monkeypatch):
    obj = previewed
    calls = []

    def broken(*args):
        calls.append(args)
        raise RuntimeError("a bug")

    monkeypatch.setattr(live, "_write_preview", broken)
    strips_by_name(obj)["bow"].frame_start_ui += 3
    update()  # (its traceback printed)
    for _ in range(2):
        obj.location.x += 0.01  # an edit of something else: another depsgraph update
        update()
    assert len(calls) == 1
    assert "a bug" in obj.smart_motion.live_error
    monkeypatch.undo()
    strips_by_name(obj)["bow"].frame_start_ui += 3
    update()
    assert obj.smart_motion.live_error == ""
    assert close_keys(preview_keys(obj), synthesized_keys(obj))


def test_a_preview_saved_by_an_earlier_version_follows_its_muted_sources(previewed):
    """Earlier previews muted their sources and flagged them so; those are its sources."""
    obj = previewed
    for item in obj.smart_motion.strips:
        item.preview_source, item.muted_by_preview, item.mute_before = False, True, False
    for track in obj.animation_data.nla_tracks:
        for strip in track.strips:
            strip.mute = track.name != PREVIEW_TRACK
    end = plan_of(obj)["end"]
    strips_by_name(obj)["punch"].frame_start_ui += 6
    update()
    assert obj.smart_motion.live_error == ""
    assert plan_of(obj)["end"] == end + 6
