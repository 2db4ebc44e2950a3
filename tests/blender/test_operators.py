"""Analyze, Synthesize, Bake to Action and Clear on real clips, through ``bpy.ops``, as a user runs them.

The extension is the installed zip (conftest). Operators are called without
any editor area: they act on the active armature and its strips' ``select``
flags. Poses are the ones Blender evaluates (depsgraph after
``scene.frame_set``), never our own forward kinematics.
"""

import importlib
import json
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

from scenes import (
    addon_modules, WALK_BOW_PUNCH, all_keys, channel_keys, clips_on_one_armature, draw_panel, evaluated_heads, preview_segments, same_keys,
    strips_by_name,
)

TOLERANCE_M = 1e-4
PREVIEW_TRACK = "[Smart Motion preview]"


@pytest.fixture(scope="module")
def sm(installed_extension):
    """Modules of the installed extension."""
    def load(name):
        return importlib.import_module(f"{installed_extension}.{name}")

    return SimpleNamespace(**vars(addon_modules(installed_extension)), rig=load("core.rig"))


@pytest.fixture
def walk_bow_punch(empty_scene):
    return clips_on_one_armature(WALK_BOW_PUNCH)


def plan_of(obj) -> dict:
    return json.loads(obj.smart_motion.plan_json)


def source_heads(obj, strip, frames) -> np.ndarray:
    """Blender's pose of ``strip``'s action alone at the scene ``frames`` the strip plays them.

    Evaluated on a copy of the armature (same bones, same rotation modes)
    playing the action as its only animation.
    """
    probe = obj.copy()
    bpy.context.scene.collection.objects.link(probe)
    probe.animation_data_clear()
    probe.animation_data_create()
    probe.animation_data.action = strip.action
    probe.animation_data.action_slot = strip.action_slot
    heads = evaluated_heads(probe, np.asarray(frames) - strip.frame_start + strip.action_frame_start)
    bpy.data.objects.remove(probe)
    return heads


def turn_about_z(points: np.ndarray, degrees: float, translation) -> np.ndarray:
    a = np.radians(degrees)
    turn = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
    return points @ turn.T + np.asarray(translation)


def source_keys(obj) -> dict:
    return {strip.name: all_keys(strip.action) for strip in strips_by_name(obj).values()}


# ---------------------------------------------------------------------------
# Bake


def test_bake_keys_every_frame_and_keeps_every_core_as_blender_plays_its_source(walk_bow_punch, sm):
    obj = walk_bow_punch
    before = source_keys(obj)
    strips_before = {n: (s.frame_start, s.frame_end, s.mute, s.action.name) for n, s in strips_by_name(obj).items()}

    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    baked = obj.animation_data.action
    assert baked.name == "walk_normal_001_SmartMotion"
    assert obj.animation_data.action_slot == baked.slots[0]
    plan = plan_of(obj)
    assert [p["method"] for p in plan["pairs"]] == ["connection", "adaptation without lower-body transition"]
    assert plan["rejected"] == []
    # a key on every frame of every animated channel: each bone's rotation (its mode) and location
    frames = np.arange(plan["start"], plan["end"] + 1)
    paths = set()
    for fcurve in baked.layers[0].strips[0].channelbag(baked.slots[0]).fcurves:
        co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
        fcurve.keyframe_points.foreach_get("co", co)
        assert np.array_equal(co[0::2], frames), fcurve.data_path
        paths.add((fcurve.data_path, fcurve.array_index))
    for bone in obj.pose.bones:
        for prop in ("rotation_euler", "location"):
            assert {(f'pose.bones["{bone.name}"].{prop}', i) for i in range(3)} <= paths

    # inside each core, Blender's pose of the baked action is the source strip's pose,
    # as placed by the plan's alignment (the first strip is not moved)
    skeleton, _ = sm.convert.armature_skeleton(obj)
    rig = sm.rig.find_rig(skeleton)
    bone_index = {bone.name: k for k, bone in enumerate(obj.pose.bones)}
    pelvis_bone = obj.data.bones[skeleton.names[rig.pelvis]]
    pelvis = bone_index[pelvis_bone.name]
    # the alignment turns and moves the pelvis and all below it; a still root above it stays
    carried = [bone_index[b.name] for b in obj.data.bones if b == pelvis_bone or pelvis_bone in b.parent_recursive]
    upper = [bone_index[skeleton.names[j]] for j in np.flatnonzero(rig.upper_body_mask(skeleton))]
    pairs = {pair["next"]: pair for pair in plan["pairs"]}
    strips = strips_by_name(obj)
    for name, _, core in WALK_BOW_PUNCH:
        strip = strips[name.split("_")[0]]
        first, last = core or (int(strip.frame_start), int(strip.frame_end))
        core_frames = np.arange(first, last + 1)
        source = source_heads(obj, strip, core_frames)
        result = evaluated_heads(obj, core_frames)
        pair = pairs.get(strip.name)
        if pair is None:  # the first strip, as captured
            assert np.abs(result - source).max() < TOLERANCE_M, strip.name
            continue
        placed = source.copy()
        placed[:, carried] = turn_about_z(source[:, carried], pair["alignment"]["angle_deg"],
                                          pair["alignment"]["translation"])
        # the upper body relative to the pelvis survives every method
        relative = result[:, upper] - result[:, pelvis, None]
        assert np.abs(relative - (placed[:, upper] - placed[:, pelvis, None])).max() < TOLERANCE_M, strip.name
        if pair["method"] in ("transition", "connection"):
            # so does the whole body: only adaptation moves the legs onto the previous feet
            assert np.abs(result - placed).max() < TOLERANCE_M, strip.name

    # the sources are as they were, key for key
    assert source_keys(obj).keys() == before.keys()
    for name, keys in before.items():
        assert same_keys(keys, all_keys(strips[name].action)), name
    assert {n: (s.frame_start, s.frame_end, s.mute, s.action.name) for n, s in strips.items()} == strips_before
    assert [t.name for t in obj.animation_data.nla_tracks] == ["clips 1", "clips 2"], "bake leaves no preview"


def test_bake_never_overwrites_an_action_it_did_not_bake(walk_bow_punch):
    obj = walk_bow_punch
    existing = bpy.data.actions.new("walk_normal_001_SmartMotion")
    existing.use_fake_user = True

    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert existing.name == "walk_normal_001_SmartMotion" and not existing.layers
    names = sorted(a.name for a in bpy.data.actions if a.name.startswith("walk_normal_001_SmartMotion"))
    assert names == ["walk_normal_001_SmartMotion", "walk_normal_001_SmartMotion.001"], "the second bake re-bakes .001"
    assert obj.animation_data.action.name == "walk_normal_001_SmartMotion.001"


@pytest.mark.parametrize("second", ["bake", "synthesize then bake"])
def test_a_second_bake_replaces_the_keys_of_the_same_action_undoably(walk_bow_punch, second):
    """Before, a second Bake made `.001` and left the first bake with no user, lost on save."""
    obj_name = walk_bow_punch.name
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    first = walk_bow_punch.animation_data.action
    first_keys = all_keys(first)
    walk_bow_punch.smart_motion.strips["bow"].core_start = 190  # so the second bake differs
    bpy.ops.ed.undo_push(message="before the second Bake")

    if second == "synthesize then bake":
        assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert bpy.ops.smart_motion.bake('EXEC_DEFAULT', True) == {'FINISHED'}

    obj = bpy.data.objects[obj_name]
    assert obj.animation_data.action == first and first.name == "walk_normal_001_SmartMotion"
    assert [a.name for a in bpy.data.actions if a.name.startswith("walk_normal_001_SmartMotion")] == [first.name]
    assert first.users == 2, "the armature and the settings still use it"
    second_keys = all_keys(first)
    assert not same_keys(first_keys, second_keys), "its keys are the second bake's"

    assert bpy.ops.ed.undo() == {'FINISHED'}
    assert same_keys(all_keys(bpy.data.actions["walk_normal_001_SmartMotion"]), first_keys), "undo brings back the first"


def push_down(obj, action, where: str):
    """Put ``action`` into the NLA as a user might, on a strip that is not a source of the next Bake."""
    if where == "another object":
        other = bpy.data.objects.new("other", None)
        bpy.context.scene.collection.objects.link(other)
        obj = other
    anim = obj.animation_data or obj.animation_data_create()
    strip = anim.nla_tracks.new().strips.new("pushed down", 700, action)
    strip.select = False
    strip.mute = where == "a muted strip"


@pytest.mark.parametrize("where", ["an unselected strip", "a muted strip", "another object"])
@pytest.mark.parametrize("second", ["bake", "synthesize then bake"])
def test_a_second_bake_never_writes_the_first_once_an_nla_strip_plays_it(walk_bow_punch, where, second, capfd):
    """The first Bake pushed down into the NLA is a source now: the second Bake writes `.001` and says why."""
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    first = obj.animation_data.action
    first_keys = all_keys(first)
    push_down(obj, first, where)
    obj.smart_motion.strips["bow"].core_start = 190  # so the second bake differs

    if second == "synthesize then bake":
        assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    capfd.readouterr()
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert same_keys(first_keys, all_keys(first)), "the pushed-down strip keeps its keys"
    assert first.name == "walk_normal_001_SmartMotion"
    second_action = obj.animation_data.action
    assert second_action.name == "walk_normal_001_SmartMotion.001"
    assert obj.smart_motion.baked_action == second_action
    report = capfd.readouterr().out
    assert "the last bake 'walk_normal_001_SmartMotion' is kept as it is" in report, report
    assert "'pushed down'" in report, report


def test_bake_never_writes_a_source_action(walk_bow_punch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    baked = obj.animation_data.action
    obj.animation_data.action = None
    obj.animation_data.nla_tracks["clips 1"].strips.new("baked walk", 700, baked)  # selected: a source now
    keys = all_keys(baked)

    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert obj.animation_data.action != baked and same_keys(keys, all_keys(baked))


@pytest.mark.parametrize("preview", [False, True], ids=["from the strips", "after a preview"])
def test_bake_is_one_undo_step_that_takes_the_new_action_away(walk_bow_punch, preview, sm, monkeypatch):
    obj_name = walk_bow_punch.name
    if preview:
        assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    actions_before = sorted(a.name for a in bpy.data.actions)
    keys_before = {a.name: all_keys(a) for a in bpy.data.actions}
    tracks_before = [t.name for t in walk_bow_punch.animation_data.nla_tracks]
    plan_before = walk_bow_punch.smart_motion.plan_json
    assert bpy.types.SMART_MOTION_OT_bake.bl_options >= {'REGISTER', 'UNDO'}
    bpy.ops.ed.undo_push(message="before Bake")

    # The second argument asks for the undo push the UI makes after an UNDO operator.
    assert bpy.ops.smart_motion.bake('EXEC_DEFAULT', True) == {'FINISHED'}
    assert "walk_normal_001_SmartMotion" in bpy.data.actions
    assert bpy.data.objects[obj_name].animation_data.action is not None

    assert bpy.ops.ed.undo() == {'FINISHED'}

    # Undo reloads the file state: every Python reference from before is stale, look things up again.
    assert sorted(a.name for a in bpy.data.actions) == actions_before
    obj = bpy.data.objects[obj_name]
    assert obj.animation_data.action is None
    assert [t.name for t in obj.animation_data.nla_tracks] == tracks_before, "a preview comes back"
    assert obj.smart_motion.plan_json == plan_before
    for name, keys in keys_before.items():
        assert same_keys(keys, all_keys(bpy.data.actions[name])), name
    if preview:  # and it is still current: the file state it is recorded in came back with it
        spy = SynthesisSpy(sm.synthesis, monkeypatch)
        assert bpy.ops.smart_motion.bake() == {'FINISHED'}
        assert spy.runs == 0


class SynthesisSpy:
    """Counts the synthesis runs of ``synthesis.synthesize_strips`` (which Bake calls unless it keeps the preview)."""

    def __init__(self, synthesis, monkeypatch):
        self.runs = 0
        synthesize_strips = synthesis.synthesize_strips

        def counted(*args, **kwargs):
            self.runs += 1
            return synthesize_strips(*args, **kwargs)

        monkeypatch.setattr(synthesis, "synthesize_strips", counted)


def close_keys(a: dict, b: dict) -> bool:
    """Same channels and keys, values equal within float32 rounding."""
    return a.keys() == b.keys() and all(
        all(x.shape == y.shape and np.allclose(x, y, rtol=1e-6, atol=1e-6) for x, y in zip(a[k], b[k])) for k in a
    )


def test_bake_after_synthesize_keeps_the_preview_and_bakes_what_the_strips_would(walk_bow_punch, sm, monkeypatch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    from_strips = obj.animation_data.action
    strips_keys = all_keys(from_strips)
    plan = plan_of(obj)
    obj.animation_data.action = None
    spy = SynthesisSpy(sm.synthesis, monkeypatch)

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert spy.runs == 1
    preview_keys = channel_keys(*preview_segments(obj))
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert spy.runs == 1, "Bake synthesized again although the preview was current"
    from_preview = obj.animation_data.action
    assert from_preview == from_strips, "the first bake's action is baked again"
    assert obj.animation_data.action_slot == from_preview.slots[0]
    assert plan_of(obj) == plan
    # the same keys as the bake straight from the strips: every channel keyed on every frame
    baked_keys = all_keys(from_preview)
    assert close_keys(baked_keys, strips_keys)
    assert same_keys(channel_keys(from_preview), preview_keys), "the preview's keys, its segments joined"
    frames = np.arange(plan["start"], plan["end"] + 1)
    assert all(np.array_equal(co[0::2], frames) for co, *_ in baked_keys.values())
    # and the preview is gone as after any bake
    assert [t.name for t in obj.animation_data.nla_tracks] == ["clips 1", "clips 2"]
    assert not [a for a in bpy.data.actions if a.name.startswith("walk_normal_001_SmartMotion_preview")]
    assert obj.smart_motion.preview_action is None and obj.smart_motion.preview_signature == ""
    assert not any(strip.mute for strip in strips_by_name(obj).values())


def move_punch_one_frame(obj):
    strips_by_name(obj)["punch"].frame_start_ui += 1


def lower_responsiveness(obj):
    bpy.context.scene.smart_motion.responsiveness = 0.1  # shorter blends (W = 0.5 to 1 all give the longest here)


def edit_a_source_key(obj):
    fcurve = strips_by_name(obj)["bow"].action.layers[0].strips[0].channelbags[0].fcurves[5]
    fcurve.keyframe_points[40].co.y += 0.1


def shorten_a_core(obj):
    obj.smart_motion.strips["bow"].core_end -= 5


def edit_the_preview(obj):
    fcurve = obj.smart_motion.preview_action.layers[0].strips[0].channelbags[0].fcurves[0]
    fcurve.keyframe_points[250].co.y += 0.1


def add_noise_to_a_source_curve(obj):
    strips_by_name(obj)["walk"].action.layers[0].strips[0].channelbags[0].fcurves[7].modifiers.new('NOISE')


def select_other_strips(obj):
    strips_by_name(obj)["punch"].select = False


def map_a_bone(obj):
    obj.smart_motion.bone_mapping = "pelvis=Hips"


def turn_a_bone_to_quaternions(obj):
    obj.pose.bones["Spine"].rotation_mode = 'QUATERNION'


@pytest.mark.parametrize("change", [
    move_punch_one_frame, lower_responsiveness, edit_a_source_key, add_noise_to_a_source_curve, shorten_a_core,
    edit_the_preview, select_other_strips, map_a_bone, turn_a_bone_to_quaternions,
], ids=lambda change: change.__name__.replace("_", " "))
def test_a_preview_out_of_date_is_synthesized_again(walk_bow_punch, sm, monkeypatch, change):
    obj = walk_bow_punch
    spy = SynthesisSpy(sm.synthesis, monkeypatch)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    preview_keys = channel_keys(*preview_segments(obj))

    change(obj)
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert spy.runs == 2, "Bake kept a preview that is out of date"
    baked_keys = channel_keys(obj.animation_data.action)
    if change in (move_punch_one_frame, lower_responsiveness):
        assert not close_keys(baked_keys, preview_keys)
    # what a bake with no preview at all gives
    obj.animation_data.action = None
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    assert close_keys(channel_keys(obj.animation_data.action), baked_keys)


def a_preview_curve(obj, segment: int = 1):
    """An F-curve of the preview's second segment (the first is ``preview_action``)."""
    action = preview_segments(obj)[segment]
    return action.layers[0].strips[0].channelbags[0].fcurves[4]


def edit_a_preview_key_in_the_ui(obj):
    # as the Graph Editor does: one key through RNA, then the event loop evaluates the depsgraph
    a_preview_curve(obj).keyframe_points[30].co.y += 0.1
    bpy.context.view_layer.update()


def edit_preview_keys_from_python(obj):
    # keys written in bulk by a script, and no depsgraph update before Bake
    points = a_preview_curve(obj).keyframe_points
    co = np.empty(2 * len(points), dtype=np.float32)
    points.foreach_get("co", co)
    co[1::2] += 0.1
    points.foreach_set("co", co)


def add_noise_to_a_preview_curve_from_python(obj):
    # a modifier added from Python tags nothing for the depsgraph: no event reports it
    a_preview_curve(obj).modifiers.new('NOISE')


@pytest.mark.parametrize("edit", [
    edit_a_preview_key_in_the_ui, edit_preview_keys_from_python, add_noise_to_a_preview_curve_from_python,
], ids=lambda edit: edit.__name__.replace("_", " "))
def test_a_preview_edited_after_synthesize_is_never_baked_as_current(walk_bow_punch, sm, monkeypatch, edit):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    strips, responsiveness = sm.strips.selected_strips(obj), bpy.context.scene.smart_motion.responsiveness
    assert sm.preview.current_preview(obj, strips, responsiveness) is not None
    spy = SynthesisSpy(sm.synthesis, monkeypatch)

    edit(obj)
    # the entry function a script calls, not bpy.ops (whose call brings the depsgraph up to date first)
    action, _plan, kept = sm.synthesis.bake_strips(obj, strips, responsiveness)

    assert not kept and spy.runs == 1, "Bake kept a preview edited after Synthesize"
    baked_keys = channel_keys(action)
    obj.animation_data.action = None
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    assert close_keys(channel_keys(obj.animation_data.action), baked_keys), "not what the strips give"


def test_synthesize_reads_each_source_key_once_for_the_motion_and_its_signature(walk_bow_punch, sm, monkeypatch):
    obj = walk_bow_punch
    reads = {}  # F-curve address -> every key array handed out for it
    keyframe_arrays = sm.fcurves.keyframe_arrays

    def recorded(fcurve):
        co, kind = keyframe_arrays(fcurve)
        reads.setdefault(fcurve.as_pointer(), []).append(co)
        return co, kind

    monkeypatch.setattr(sm.fcurves, "keyframe_arrays", recorded)
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    strips, responsiveness = sm.strips.selected_strips(obj), bpy.context.scene.smart_motion.responsiveness
    sources = [fcurve.as_pointer() for strip in strips for fcurve in strip.action.layers[0].strips[0].channelbags[0].fcurves]
    assert len(sources) == 3 * 132
    assert all(len(reads[address]) == 2 for address in sources), "each source curve sampled and hashed"
    assert all(reads[address][1] is reads[address][0] for address in sources), "from one read of its keys"
    # and the signature is what hashing the sources afresh gives
    assert obj.smart_motion.preview_signature.split()[:2] == list(sm.preview.signature_parts(obj, strips, responsiveness))


def bezier_key(fcurve):
    fcurve.keyframe_points[20].interpolation = 'BEZIER'


@pytest.mark.parametrize("prepare, edit", [
    (None, lambda f: setattr(f.keyframe_points[20].co, "y", f.keyframe_points[20].co.y + 0.1)),
    (None, lambda f: setattr(f.keyframe_points[20], "interpolation", 'CONSTANT')),
    (bezier_key, lambda f: setattr(f.keyframe_points[20].handle_right, "y", f.keyframe_points[20].handle_right.y + 1)),
    (bezier_key, lambda f: setattr(f.keyframe_points[20], "easing", 'EASE_IN')),
    (None, lambda f: setattr(f, "mute", True)),
    (None, lambda f: setattr(f, "extrapolation", 'LINEAR')),
    (None, lambda f: f.modifiers.new('NOISE')),
    (lambda f: f.modifiers.new('NOISE'), lambda f: setattr(f.modifiers[0], "strength", 3.0)),
    (None, lambda f: f.keyframe_points.insert(f.keyframe_points[20].co.x + 0.5, 0.0)),
], ids=["key value", "interpolation", "handle of a bezier key", "easing", "mute", "extrapolation", "modifier added",
        "modifier setting", "key added"])
def test_the_action_digest_changes_with_anything_that_shapes_the_curves(walk_bow_punch, sm, prepare, edit):
    action = strips_by_name(walk_bow_punch)["bow"].action
    fcurve = action.layers[0].strips[0].channelbags[0].fcurves[5]
    if prepare is not None:
        prepare(fcurve)
    before = sm.fcurves.action_digest(action)
    assert sm.fcurves.action_digest(action) == before
    edit(fcurve)
    assert sm.fcurves.action_digest(action) != before


def hashed_actions(sm, monkeypatch) -> list:
    """The session_uids of the actions whose keys the preview's check hashes from now on."""
    hashed = []
    action_digest = sm.preview.action_digest

    def recorded(action):
        hashed.append(action.session_uid)
        return action_digest(action)

    monkeypatch.setattr(sm.preview, "action_digest", recorded)
    return hashed


def test_bake_after_synthesize_knows_the_preview_current_without_hashing_any_key(walk_bow_punch, sm, monkeypatch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    hashed = hashed_actions(sm, monkeypatch)
    spy = SynthesisSpy(sm.synthesis, monkeypatch)
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert spy.runs == 0, "the preview was current"
    # the preview's keys: no edit reported of its actions; the sources' keys (under the preview's solo, not
    # evaluated): no edit reported of any action at all
    assert hashed == [], "the edit reports say every key is as Synthesize read or wrote it"


def test_bake_hashes_the_sources_keys_once_any_action_was_edited_and_keeps_a_preview_still_current(
        walk_bow_punch, sm, monkeypatch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    other = bpy.data.actions.new("another action")  # an edit of an action that is no source: reported by type
    other.slots.new(id_type='OBJECT', name="Other")
    sm.fcurves.action_channelbag(other, other.slots[0], ensure=True).fcurves.new("location").keyframe_points.insert(1, 0.0)
    hashed = hashed_actions(sm, monkeypatch)
    spy = SynthesisSpy(sm.synthesis, monkeypatch)
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    sources = {strip.action.session_uid for strip in strips_by_name(obj).values()}
    assert set(hashed) == sources, "the edit reports could not answer for the sources: their keys were hashed"
    assert spy.runs == 0, "and found as Synthesize read them"


def edit_a_source_key_from_python(obj):
    # no depsgraph update before Bake
    fcurve = strips_by_name(obj)["bow"].action.layers[0].strips[0].channelbags[0].fcurves[5]
    points = fcurve.keyframe_points
    co = np.empty(2 * len(points), dtype=np.float32)
    points.foreach_get("co", co)
    co[1::2] += 0.1
    points.foreach_set("co", co)


def edit_a_source_key_then_change_the_frame(obj):
    # the frame change evaluates the edit's tags and runs no depsgraph_update_post handler
    strips_by_name(obj)["bow"].action.layers[0].strips[0].channelbags[0].fcurves[5].keyframe_points[40].co.y += 0.1
    bpy.context.scene.frame_set(bpy.context.scene.frame_current + 7)


def edit_a_preview_key_then_change_the_frame(obj):
    a_preview_curve(obj).keyframe_points[30].co.y += 0.1
    bpy.context.scene.frame_set(bpy.context.scene.frame_current + 7)


def mute_a_source_curve(obj):
    strips_by_name(obj)["walk"].action.layers[0].strips[0].channelbags[0].fcurves[9].mute = True


def make_a_source_key_bezier(obj):
    strips_by_name(obj)["punch"].action.layers[0].strips[0].channelbags[0].fcurves[9].keyframe_points[20].interpolation = 'BEZIER'


def set_a_blend_length_with_live_updates_off(obj):
    # (with them on, a live update would write the preview anew first)
    bpy.context.scene.smart_motion.live = False
    next(item for item in obj.smart_motion.strips if item.name == "bow").blend_length = 1.5


@pytest.mark.parametrize("edit", [
    edit_a_source_key_from_python, edit_a_source_key_then_change_the_frame, edit_a_preview_key_then_change_the_frame,
    mute_a_source_curve, make_a_source_key_bezier, add_noise_to_a_source_curve, set_a_blend_length_with_live_updates_off,
], ids=lambda edit: edit.__name__.replace("_", " "))
def test_a_source_edited_after_synthesize_is_synthesized_again_by_bake(walk_bow_punch, sm, monkeypatch, edit):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    strips, responsiveness = sm.strips.selected_strips(obj), bpy.context.scene.smart_motion.responsiveness
    spy = SynthesisSpy(sm.synthesis, monkeypatch)

    edit(obj)
    # the entry function a script calls, not bpy.ops (whose call brings the depsgraph up to date first)
    action, _plan, kept = sm.synthesis.bake_strips(obj, strips, responsiveness)

    assert not kept and spy.runs == 1, "Bake kept a preview whose sources were edited after Synthesize"


def test_bake_after_synthesize_writes_the_motion_synthesize_kept_the_keys_read_back_would_give(
        walk_bow_punch, sm, monkeypatch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    read_back = bpy.data.actions.new("read back")
    sm.preview.bake_into(preview_segments(obj), read_back, obj)

    def read_segments(*args):
        raise AssertionError("the preview's segments were read back: Synthesize kept the motion they key")

    monkeypatch.setattr(sm.bake, "bake_into", read_segments)
    spy = SynthesisSpy(sm.synthesis, monkeypatch)
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert spy.runs == 0, "the preview was current"
    baked, expected = all_keys(obj.animation_data.action), all_keys(read_back)
    # every key, handle and interpolation, and the same F-curves in their bones' groups
    assert same_keys(baked, expected)
    groups = [[(f.data_path, f.array_index, f.group.name) for f in bag.fcurves]
              for bag in (sm.fcurves.action_channelbag(a, a.slots[0]) for a in (obj.animation_data.action, read_back))]
    assert groups[0] == groups[1]


def test_bake_reads_the_preview_back_when_the_synthesized_motion_is_no_longer_kept(walk_bow_punch, sm, monkeypatch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    preview_keys = channel_keys(*preview_segments(obj))
    sm.state.forget_all()  # (as after another session's Synthesize, or evicted)
    spy = SynthesisSpy(sm.synthesis, monkeypatch)
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert spy.runs == 0, "the preview was current all the same"
    assert same_keys(channel_keys(obj.animation_data.action), preview_keys)


class RecordingWindowManager:
    def __init__(self):
        self.calls = []

    def progress_begin(self, low, high):
        self.calls.append(("begin", low, high))

    def progress_update(self, value):
        self.calls.append(("update", value))

    def progress_end(self):
        self.calls.append(("end",))


def test_progress_goes_to_the_window_manager_and_is_skipped_without_one(installed_extension):
    operators = importlib.import_module(f"{installed_extension}.addon.operators")
    wm = RecordingWindowManager()
    with operators._Progress(SimpleNamespace(window_manager=wm)) as progress:
        progress(0.25)
        progress(1.5)
    assert wm.calls == [("begin", 0, 1000), ("update", 250), ("update", 1000), ("end",)]
    with operators._Progress(SimpleNamespace(window_manager=None)) as progress:
        progress(0.5)  # headless without a window manager: nothing to show, no error


def test_bake_reports_progress_from_start_to_finish(walk_bow_punch, installed_extension, monkeypatch):
    operators = importlib.import_module(f"{installed_extension}.addon.operators")
    fractions = []

    class Recording(operators._Progress):
        def __call__(self, fraction):
            fractions.append(fraction)
            super().__call__(fraction)

    monkeypatch.setattr(operators, "_Progress", Recording)

    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert len(fractions) > len(walk_bow_punch.pose.bones), "at least one step per bone written"


# ---------------------------------------------------------------------------
# Preview


def test_synthesize_previews_on_its_own_solo_track_and_clear_restores_all(walk_bow_punch, sm):
    obj = walk_bow_punch
    strips = strips_by_name(obj)
    strips["punch"].mute = True  # muted before: stays muted after Clear
    walk_action = strips["walk"].action
    obj.animation_data.action = walk_action  # an active action would hide the preview
    before = source_keys(obj)
    actions_before = sorted(a.name for a in bpy.data.actions)

    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    tracks = obj.animation_data.nla_tracks
    assert tracks[-1].name == PREVIEW_TRACK, "the preview is the top track"
    segments = list(tracks[-1].strips)  # the preview's segments (addon/preview.py), one strip each
    assert [s.action.name for s in segments] == [f"walk_normal_001_SmartMotion_preview {k + 1}"
                                                 for k in range(len(segments))]
    assert obj.animation_data.action is None, "the active action is set aside while previewing"
    assert tracks[-1].is_solo, "Blender plays the preview alone"
    assert [strips[n].mute for n in ("walk", "bow", "punch")] == [False, False, True], "the user's mutes are left"
    plan = plan_of(obj)
    assert (segments[0].frame_start, segments[-1].frame_end) == (plan["start"], plan["end"])
    assert all(a.frame_end == b.frame_start for a, b in zip(segments, segments[1:])), "the strips touch"
    # it plays at once: the first strip's core as captured
    frames = np.arange(1, 102, 10)
    assert np.abs(evaluated_heads(obj, frames) - source_heads(obj, strips["walk"], frames)).max() < TOLERANCE_M

    assert bpy.ops.smart_motion.clear() == {'FINISHED'}

    assert [t.name for t in obj.animation_data.nla_tracks] == ["clips 1", "clips 2"]
    assert sorted(a.name for a in bpy.data.actions) == actions_before
    assert [strips[n].mute for n in ("walk", "bow", "punch")] == [False, False, True]
    assert obj.animation_data.action == walk_action
    assert obj.animation_data.action_slot == walk_action.slots[0]
    assert obj.smart_motion.plan_json == ""
    for name, keys in before.items():
        assert same_keys(keys, all_keys(strips[name].action)), name


def basis_at(obj, times) -> np.ndarray:
    """Every pose bone's evaluated basis matrix at each of ``times`` (scene frames, subframes allowed)."""
    scene = bpy.context.scene
    out = []
    for time in times:
        scene.frame_set(int(time), subframe=time % 1.0)
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        out.append([np.array(bone.matrix_basis) for bone in evaluated.pose.bones])
    return np.array(out)


def test_the_preview_in_segments_plays_between_frames_as_one_curve_would(walk_bow_punch):
    """The preview is keyed in segments, one strip each (addon/preview.py): where two meet, Blender
    interpolates between frames as in the one curve per channel that Bake makes of them."""
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    segments = obj.animation_data.nla_tracks[PREVIEW_TRACK].strips
    assert len(segments) > 1, "a preview of 523 frames has several segments"
    boundary = segments[1].frame_start
    times = [boundary + t for t in (-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0)]
    played = basis_at(obj, times)
    assert bpy.ops.smart_motion.bake() == {'FINISHED'}
    assert obj.animation_data.nla_tracks.get(PREVIEW_TRACK) is None, "baked from the preview's keys"
    assert np.abs(basis_at(obj, times) - played).max() < 1e-6


def test_synthesizing_again_after_moving_a_strip_or_the_slider_replaces_the_preview(walk_bow_punch):
    obj = walk_bow_punch
    scene = bpy.context.scene
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    actions = len(bpy.data.actions)
    first_end = plan_of(obj)["end"]

    strips_by_name(obj)["punch"].frame_start_ui += 10  # moves the whole strip
    scene.smart_motion.responsiveness = 0.9
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    assert len(bpy.data.actions) == actions, "no action piles up"
    assert [t.name for t in obj.animation_data.nla_tracks].count(PREVIEW_TRACK) == 1
    plan = plan_of(obj)
    assert plan["end"] == first_end + 10 and plan["responsiveness"] == pytest.approx(0.9)
    segments = obj.animation_data.nla_tracks[PREVIEW_TRACK].strips
    assert [s.action.name for s in segments] == [f"walk_normal_001_SmartMotion_preview {k + 1}"
                                                 for k in range(len(segments))]
    assert segments[-1].frame_end == plan["end"]

    assert bpy.ops.smart_motion.clear() == {'FINISHED'}
    assert not any(strip.mute for strip in strips_by_name(obj).values())


def test_bake_after_a_preview_replaces_the_preview_by_the_baked_action(walk_bow_punch):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}

    assert bpy.ops.smart_motion.bake() == {'FINISHED'}

    assert [t.name for t in obj.animation_data.nla_tracks] == ["clips 1", "clips 2"]
    assert not [a for a in bpy.data.actions if a.name.startswith("walk_normal_001_SmartMotion_preview")]
    assert obj.smart_motion.preview_action is None
    assert not any(strip.mute for strip in strips_by_name(obj).values())
    assert obj.animation_data.action.name == "walk_normal_001_SmartMotion"


def test_analyze_stores_each_strips_support_phases_in_strip_frames(walk_bow_punch, sm):
    obj = walk_bow_punch

    assert bpy.ops.smart_motion.analyze() == {'FINISHED'}

    walk = obj.smart_motion.strips["walk"]
    phases = [(p.phase, p.start, p.end) for p in walk.phases]
    assert {p for p, _, _ in phases} >= {"DS", "LS", "RS"}, "a walk alternates single and double support"
    assert phases[0][1] == 0 and phases[-1][2] == 194
    assert all(a[2] + 1 == b[1] for a, b in zip(phases, phases[1:]))
    assert [p.phase for p in obj.smart_motion.strips["bow"].phases] == ["DS"], "a bow stands on both feet"
    bow = strips_by_name(obj)["bow"]
    assert sm.report.phases_text(obj, bow) == "DS 151-288"


# ---------------------------------------------------------------------------
# Core ranges


def test_core_range_is_shown_in_scene_frames_and_moves_with_its_strip(walk_bow_punch, sm):
    obj = walk_bow_punch
    strips = strips_by_name(obj)
    bow = obj.smart_motion.strips["bow"]
    assert (bow.core_start, bow.core_end) == (181, 288)
    assert (bow.core_first, bow.core_last) == (30, 137), "stored from the strip's start"

    strips["bow"].frame_start_ui += 5
    assert (bow.core_start, bow.core_end) == (186, 293)

    bow.core_start = 400  # past the end: pushes the end along, clamped to the strip
    assert (bow.core_start, bow.core_end) == (293, 293)
    bow.core_end = 100  # before the start of the strip: clamped, pulls the start along
    assert (bow.core_start, bow.core_end) == (156, 156)

    assert bpy.ops.smart_motion.reset_core(strip="bow") == {'FINISHED'}
    # the default: the bow overlaps the walk (to frame 195) with no blend, and stops 3 frames short of it
    assert (bow.core_start, bow.core_end) == (199, 293), "the default core"
    assert sm.timeline.core_offsets(obj, strips["punch"]) == (0, 223), "a strip without settings: the whole strip"


def test_edit_core_gives_a_strip_editable_settings_starting_from_the_whole_strip(walk_bow_punch):
    obj = walk_bow_punch
    assert "punch" not in obj.smart_motion.strips

    assert bpy.ops.smart_motion.edit_core(strip="punch") == {'FINISHED'}

    punch = obj.smart_motion.strips["punch"]
    assert punch.has_core and (punch.core_start, punch.core_end) == (300, 523)


def test_a_renamed_strip_keeps_its_core_and_stays_a_source_of_the_preview(walk_bow_punch, sm):
    obj = walk_bow_punch
    assert bpy.ops.smart_motion.edit_core(strip="punch") == {'FINISHED'}
    settings = obj.smart_motion.strips["punch"]
    settings.core_start, settings.core_end = 320, 400

    strips_by_name(obj)["punch"].name = "jab"
    assert sm.timeline.core_offsets(obj, strips_by_name(obj)["jab"]) == (20, 100), "found by what it plays and where"
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    assert "jab" in obj.smart_motion.strips and "punch" not in obj.smart_motion.strips, "re-keyed to the new name"
    assert sm.timeline.core_offsets(obj, strips_by_name(obj)["jab"]) == (20, 100)

    strips_by_name(obj)["jab"].name = "hook"  # renamed while the preview plays
    assert sm.strips.strip_settings(obj, strips_by_name(obj)["hook"]).preview_source
    assert bpy.ops.smart_motion.clear() == {'FINISHED'}
    assert not any(strip.mute for strip in strips_by_name(obj).values()), "no source strip muted"
    assert not any(item.preview_source for item in obj.smart_motion.strips), "no preview, no sources"

    strips_by_name(obj)["hook"].frame_start_ui += 3  # moved, then renamed without any operator in between
    strips_by_name(obj)["hook"].name = "cross"
    assert sm.timeline.core_offsets(obj, strips_by_name(obj)["cross"]) == (0, 223), "not recognised: the whole strip"


def test_cores_reach_the_engine_as_clip_frames(walk_bow_punch, sm):
    obj = walk_bow_punch
    clips = sm.timeline.strip_clips(obj, sm.strips.selected_strips(obj))
    assert [(c.name, c.start, c.core) for c in clips] == [
        ("walk", 1, (0, 100)), ("bow", 151, (30, 137)), ("punch", 300, (0, 223)),
    ]


# ---------------------------------------------------------------------------
# Panel


def test_panel_shows_buttons_strips_cores_phases_and_the_plan(walk_bow_punch):
    obj = walk_bow_punch
    layout = draw_panel()
    assert layout.operators[:4] == [
        "smart_motion.analyze", "smart_motion.synthesize", "smart_motion.bake", "smart_motion.clear"]
    assert "Core 300-523" in layout.labels and "(whole strip)" in layout.labels
    cores = [(data.name, name) for data, name in layout.props if name.startswith("core_")]
    assert cores == [("walk", "core_start"), ("walk", "core_end"), ("bow", "core_start"), ("bow", "core_end")]
    assert (obj.smart_motion, "bone_mapping") in layout.props

    bpy.ops.smart_motion.analyze()
    bpy.ops.smart_motion.synthesize()
    labels = draw_panel().labels

    assert "DS 151-288" in labels
    assert "walk → bow: connection" in labels and "bow → punch: adaptation without lower-body transition" in labels
    pair = plan_of(obj)["pairs"][0]
    for segment in pair["segments"]:
        assert f"    {segment['part']} {segment['blend']} {segment['start']}-{segment['end']}" in labels
    assert {s["part"] for s in pair["segments"]} == {"lower", "upper"}
    # each gap's quality against its references, as multiples of them, the worst joint named
    for pair in plan_of(obj)["pairs"]:
        q = pair["quality"]
        assert set(q) == {"skate", "skate_untouched", "accel", "accel_untouched", "accel_reference", "pop",
                          "pop_untouched", "pop_reference", "pop_joint"}
        line = next(label for label in labels if label.startswith(f"    gap {pair['gap'][0]}-{pair['gap'][1]}: "))
        if q["accel"] is not None and q["accel_reference"]:
            assert f"accel {q['accel'] / max(q['accel_reference'], 1.0):.1f}x" in line
        if q["pop"] is not None and q["pop_reference"]:
            assert f"pop {q['pop'] / max(q['pop_reference'], 1.0):.1f}x ({q['pop_joint']})" in line


def test_panel_shows_no_verdict_from_the_range_search_s_limits_at_W(empty_scene):
    """The bow's core ends half a second before the kick's starts: no range between them keeps
    within the search's limits at W (its excess is above 1), but those limits move with W on a
    motion that does not change: the panel's verdict on the gap is its quality figures alone."""
    obj = clips_on_one_armature((("bow_normal_001", 1, (16, 123)), ("kick_normal_001", 124, (139, 466))))
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    abrupt = [s for s in plan_of(obj)["pairs"][0]["segments"] if s.get("excess", 0.0) > 1.0]
    assert abrupt
    labels = draw_panel().labels
    for segment in abrupt:
        assert f"    {segment['part']} {segment['blend']} {segment['start']}-{segment['end']}" in labels
    assert not [label for label in labels if "abrupt" in label]
