"""The Footprints toggle: the preview's feet, where they are down, as a mesh of prints in the viewport.

On the demo scene (its strips synthesized into a preview): the toggle turns the
prints on and off, the prints lie where Blender's evaluated feet are down, they
follow a live update, Clear removes them, and no source action or strip changes.
"""

import importlib

import bpy
import numpy as np
import pytest

from scenes import evaluated_heads

COLLECTION = "Smart Motion footprints"


@pytest.fixture(scope="module")
def footprints(installed_extension):
    return importlib.import_module(f"{installed_extension}.addon.footprints")


@pytest.fixture
def previewed(empty_scene, installed_extension):
    """The demo's strips, selected, synthesized into a preview (its baked action set aside)."""
    demo = importlib.import_module(f"{installed_extension}.addon.demo")
    made = demo.build_demo_scene()
    obj = made.armature
    bpy.context.view_layer.objects.active = obj
    obj.animation_data.action = None
    for strip in made.strips:
        strip.select = True
    assert bpy.ops.smart_motion.synthesize() == {'FINISHED'}
    bpy.context.view_layer.update()  # (the first live update takes the preview in as it is)
    return obj


def prints_object(obj):
    return bpy.data.objects.get(f"{obj.name} footprints")


def source_state(obj) -> tuple:
    """What the sources are: each strip's place and action, each source action's keys."""
    strips = tuple((s.name, s.frame_start, s.frame_end, s.action.name, s.mute)
                   for t in obj.animation_data.nla_tracks if not t.name.startswith("[Smart Motion")
                   for s in t.strips)
    keys = []
    for name in sorted(a.name for a in bpy.data.actions if a.name.startswith("demo ")):
        action = bpy.data.actions[name]
        for layer in action.layers:
            for strip in layer.strips:
                for bag in strip.channelbags:
                    for curve in bag.fcurves:
                        co = np.empty(2 * len(curve.keyframe_points))
                        curve.keyframe_points.foreach_get("co", co)
                        keys.append((name, curve.data_path, curve.array_index, co.tobytes()))
    return strips, tuple(keys)


def world_polygons(mesh_obj) -> list[np.ndarray]:
    """Each face's vertices in world space, (K, 3)."""
    matrix = np.array(mesh_obj.matrix_world)
    co = np.empty(3 * len(mesh_obj.data.vertices))
    mesh_obj.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    return [co[list(p.vertices)] for p in mesh_obj.data.polygons]


def inside(point: np.ndarray, polygon: np.ndarray) -> bool:
    """Whether ``point``'s (x, y) lies in the convex ``polygon`` (K, 3), counter-clockwise from above."""
    edges = np.roll(polygon[:, :2], -1, axis=0) - polygon[:, :2]
    to_point = point[:2] - polygon[:, :2]
    return bool(np.all(edges[:, 0] * to_point[:, 1] - edges[:, 1] * to_point[:, 0] >= -1e-9))


def test_footprints_turn_on_and_off(previewed, footprints):
    scene = bpy.context.scene
    before = source_state(previewed)
    assert prints_object(previewed) is None

    scene.smart_motion.footprints = True

    mesh_obj = prints_object(previewed)
    assert mesh_obj is not None and mesh_obj.type == 'MESH'
    assert mesh_obj.name in bpy.data.collections[COLLECTION].objects
    assert len(mesh_obj.data.polygons) > 10  # the demo takes some twenty steps
    assert source_state(previewed) == before

    scene.smart_motion.footprints = False

    assert prints_object(previewed) is None and COLLECTION not in bpy.data.collections
    assert source_state(previewed) == before


def test_prints_lie_where_blenders_evaluated_feet_are_down(previewed, footprints):
    scene = bpy.context.scene
    scene.smart_motion.footprints = True
    polygons = world_polygons(prints_object(previewed))
    # (the mesh keeps the prints' order, so each face is its print's: side and frames)
    core = importlib.import_module(footprints.__name__.rsplit(".", 2)[0] + ".core.footprints")
    prints = core.footprints(footprints.shown_motion(previewed, scene))
    assert len(prints) == len(polygons)
    bones = [b.name for b in previewed.pose.bones]
    frames = np.arange(scene.frame_start, scene.frame_end + 1)
    heads = evaluated_heads(previewed, frames)  # armature space, (F, B, 3)
    matrix = np.array(previewed.matrix_world)
    heads = heads @ matrix[:3, :3].T + matrix[:3, 3]
    held = swinging = 0
    for side in "LR":
        ball = heads[:, bones.index(f"toe.{side}")]
        ankle = heads[:, bones.index(f"foot.{side}")]
        # flat on the floor: the ball at its lowest and the ankle within a centimetre of its lowest
        down = (ball[:, 2] < ball[:, 2].min() + 0.005) & (ankle[:, 2] < ankle[:, 2].min() + 0.01)
        for point in ball[down]:
            assert any(inside(point, polygon) for p, polygon in zip(prints, polygons) if p.side == side), (side, point)
        held += int(down.sum())
        # and while the foot is in the air (its ball over 10 cm up), no print of its side is being
        # made (the old check here, the ankle no lower than its lowest, held whatever the prints)
        up = np.flatnonzero(ball[:, 2] - ball[:, 2].min() > 0.1)
        for k in up:
            frame = frames[k] - scene.frame_start  # (the preview's frame 0 plays at the scene's start)
            assert not any(p.frames[0] <= frame <= p.frames[1] for p in prints if p.side == side), (side, frames[k])
        swinging += len(up)
    assert held > 50 and swinging > 30


def test_prints_follow_a_live_update_and_go_with_clear(previewed, footprints):
    scene = bpy.context.scene
    scene.smart_motion.footprints = True
    before = world_polygons(prints_object(previewed))
    jump = next(s for t in previewed.animation_data.nla_tracks for s in t.strips if s.name == "jump")

    jump.mute = True  # the kick now joins the stand: no take-off, no landing
    bpy.context.view_layer.update()

    after = world_polygons(prints_object(previewed))
    assert "jump" not in previewed.smart_motion.plan_json
    assert len(after) != len(before) or any(a.shape != b.shape or not np.allclose(a, b) for a, b in zip(after, before))
    # the mesh is the prints of the motion the preview now shows, read back from its keys
    motion = footprints.shown_motion(previewed, scene)
    core = importlib.import_module(footprints.__name__.rsplit(".", 2)[0] + ".core.footprints")
    assert len(after) == len(core.footprints(motion))

    assert bpy.ops.smart_motion.clear() == {'FINISHED'}

    assert prints_object(previewed) is None and COLLECTION not in bpy.data.collections
    scene.smart_motion.footprints = False  # (nothing left to remove: no error)
    scene.smart_motion.footprints = True  # no preview, no prints
    assert prints_object(previewed) is None


def made_data() -> dict:
    """How many of each kind of data block the file holds."""
    return {kind: len(getattr(bpy.data, kind)) for kind in
            ("objects", "meshes", "materials", "collections", "images", "worlds", "cameras", "curves")}


def test_toggling_the_prints_off_leaves_nothing_behind(previewed):
    scene = bpy.context.scene
    before = made_data()

    scene.smart_motion.footprints = True
    assert made_data() != before
    scene.smart_motion.footprints = False

    assert made_data() == before  # (the prints' and the streaks' materials too)


def test_the_prints_come_back_with_undo_and_with_the_file(previewed, tmp_path):
    scene = bpy.context.scene
    scene.smart_motion.footprints = True
    shown = len(prints_object(previewed).data.polygons)
    bpy.ops.ed.undo_push(message="footprints on")

    # (the second argument asks for the undo push the UI makes after an UNDO operator)
    assert bpy.ops.smart_motion.clear('EXEC_DEFAULT', True) == {'FINISHED'}
    assert prints_object(previewed) is None
    assert bpy.ops.ed.undo() == {'FINISHED'}

    armature = bpy.data.objects["SmartMotionDemo"]  # (undo rebuilt every data block: names, not references)
    assert len(prints_object(armature).data.polygons) == shown
    assert bpy.context.scene.smart_motion.footprints

    path = tmp_path / "prints.blend"
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path), check_existing=False) == {'FINISHED'}
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.wm.open_mainfile(filepath=str(path)) == {'FINISHED'}

    scene, armature = bpy.context.scene, bpy.data.objects["SmartMotionDemo"]
    assert len(prints_object(armature).data.polygons) == shown
    scene.smart_motion.footprints = False
    assert prints_object(armature) is None and COLLECTION not in bpy.data.collections
    scene.smart_motion.footprints = True  # (read back from the loaded preview's strips)
    assert len(prints_object(armature).data.polygons) == shown
