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


def test_prints_lie_where_blenders_evaluated_feet_are_down(previewed):
    scene = bpy.context.scene
    scene.smart_motion.footprints = True
    polygons = world_polygons(prints_object(previewed))
    bones = [b.name for b in previewed.pose.bones]
    frames = np.arange(scene.frame_start, scene.frame_end + 1, 3)
    heads = evaluated_heads(previewed, frames)  # armature space, (F, B, 3)
    matrix = np.array(previewed.matrix_world)
    heads = heads @ matrix[:3, :3].T + matrix[:3, 3]
    held = 0
    for side in "LR":
        ball = heads[:, bones.index(f"toe.{side}")]
        ankle = heads[:, bones.index(f"foot.{side}")]
        # flat on the floor: the ball at its lowest and the ankle within a centimetre of its lowest
        down = (ball[:, 2] < ball[:, 2].min() + 0.005) & (ankle[:, 2] < ankle[:, 2].min() + 0.01)
        for point in ball[down]:
            assert any(inside(point, polygon) for polygon in polygons), (side, point)
        held += int(down.sum())
        # and a swinging foot, well off the floor, is over no print of its own height
        assert np.all(ankle[~down, 2] >= ankle[:, 2].min())
    assert held > 50


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
