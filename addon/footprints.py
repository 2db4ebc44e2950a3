"""Footprints in the viewport: where the synthesized feet are down, as a mesh of prints.

With the Footprints toggle on (``Scene.smart_motion.footprints``), each armature
showing a preview gets a mesh object, ``"<armature> footprints"``, in the
collection ``"Smart Motion footprints"`` that the add-on owns: one face per
contact run of a foot, a foot-shaped print where the foot is held, a streak as
long as the slide where it slides (red). GPU drawing is not available headless
and the grease pencil API differs between Blender 4.5 and 5.x; a mesh is what
every supported Blender draws, renders and tests alike.

The prints are computed in core (:mod:`core.footprints`, from the motion the
preview shows); this module only builds the mesh. It follows the preview
through :func:`.state.on_preview_motion`: shown by Synthesize, rewritten by a
live update, removed by Clear. The toggle off removes every footprint object;
on, it reads the motion back from each preview's strips. No source action or
strip is read or written here.
"""

from __future__ import annotations

import bpy
import numpy as np

from .state import on_preview_motion

COLLECTION = "Smart Motion footprints"
# (material name, colour): prints of a held foot, streaks of a sliding one
HELD = ("Smart Motion print", (0.12, 0.12, 0.14, 1.0))
SLIDING = ("Smart Motion streak", (0.85, 0.12, 0.08, 1.0))


def object_name(armature: bpy.types.Object) -> str:
    return f"{armature.name} footprints"


def owned_collection(scene: bpy.types.Scene, create: bool = True) -> bpy.types.Collection | None:
    """The add-on's footprint collection, linked under ``scene``'s (made when ``create``)."""
    collection = bpy.data.collections.get(COLLECTION)
    if collection is None and create:
        collection = bpy.data.collections.new(COLLECTION)
    if collection is not None and create and scene.collection.children.get(collection.name) is None:
        scene.collection.children.link(collection)
    return collection


def material(name: str, color) -> bpy.types.Material:
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    mat.diffuse_color = color  # (what solid shading and Workbench draw)
    return mat


def prints_object(name: str, prints: list, matrix, collection: bpy.types.Collection) -> bpy.types.Object:
    """The mesh object ``name`` in ``collection`` holding ``prints`` (core.footprints), placed by
    ``matrix`` (the armature's world matrix: prints are in armature space). An object of that name
    has its mesh rebuilt; none is made otherwise."""
    from ..core.footprints import footprint_mesh

    vertices, faces, sliding = footprint_mesh(prints)
    obj = bpy.data.objects.get(name)
    if obj is None or obj.type != 'MESH':
        obj = bpy.data.objects.new(name, bpy.data.meshes.new(name))
        obj.hide_select = True  # (drawn over the floor, never in the way of a click)
    if collection.objects.get(obj.name) is None:
        collection.objects.link(obj)
    mesh = obj.data
    mesh.clear_geometry()
    mesh.from_pydata(vertices.tolist(), [], faces)
    if not mesh.materials:
        mesh.materials.append(material(*HELD))
        mesh.materials.append(material(*SLIDING))
    mesh.polygons.foreach_set("material_index", sliding.astype(np.int32))
    mesh.update()
    obj.matrix_world = matrix
    return obj


def show_footprints(armature: bpy.types.Object, motion, scene: bpy.types.Scene | None = None) -> bpy.types.Object:
    """The footprints of ``motion`` (played on ``armature``) in the add-on's collection."""
    from ..core.footprints import footprints
    from .convert import find_armature_rig

    prints = footprints(motion, find_armature_rig(armature, motion))
    collection = owned_collection(scene or bpy.context.scene)
    return prints_object(object_name(armature), prints, armature.matrix_world.copy(), collection)


def remove_footprints(armature: bpy.types.Object | None = None) -> None:
    """Remove ``armature``'s footprints (every armature's when ``None``), and the collection and the
    prints' materials once nothing uses them."""
    collection = bpy.data.collections.get(COLLECTION)
    if collection is None:
        return
    names = [o.name for o in collection.objects] if armature is None else [object_name(armature)]
    for name in names:
        obj = bpy.data.objects.get(name)
        if obj is not None and obj.name in collection.objects:
            mesh = obj.data
            bpy.data.objects.remove(obj)
            if mesh is not None and mesh.users == 0:
                bpy.data.meshes.remove(mesh)
    if not collection.objects:
        bpy.data.collections.remove(collection)
    remove_unused_materials(HELD, SLIDING)


def remove_unused_materials(*looks) -> None:
    """Remove the materials of ``looks`` ((name, colour) pairs) that nothing uses any more."""
    for name, _ in looks:
        mat = bpy.data.materials.get(name)
        if mat is not None and mat.users == 0:
            bpy.data.materials.remove(mat)


def follow(armature: bpy.types.Object, motion, start: int) -> None:
    """The preview of ``armature`` now shows ``motion`` (``None``: cleared): its footprints follow, in
    every scene holding ``armature`` whose Footprints toggle is on (not the context's: a live update
    may come from another scene's edit). ``start``, the scene frame of the motion's first, is the
    hook's (:func:`.state.on_preview_motion`) and not needed: a print is where a foot was, not when."""
    for scene in armature.users_scene:
        if not scene.smart_motion.footprints:
            continue
        if motion is None:
            remove_footprints(armature)
        else:
            show_footprints(armature, motion, scene)


on_preview_motion("footprints", follow)


def shown_motion(armature: bpy.types.Object, scene: bpy.types.Scene):
    """The motion ``armature``'s preview shows, read back from its strips; ``None`` without a preview.

    Read, not kept from the last :func:`follow`: the toggle is turned on seldom, and what is read
    is right after a file load, an undo or a redo as well.
    """
    from .convert import scene_fps, strip_to_motion
    from .strips import has_preview, preview_track

    track = preview_track(armature) if has_preview(armature) else None
    if track is None or not track.strips:
        return None
    from ..core.motion import Motion

    parts = [strip_to_motion(armature, strip, scene_fps(scene)) for strip in sorted(track.strips, key=lambda s: s.frame_start)]
    # (each segment shares its last frame with the next one's first: .preview.segment_ranges)
    parts = parts[:1] + [p[1:] for p in parts[1:]]
    return Motion(parts[0].skeleton, np.concatenate([p.rotations for p in parts]),
                  np.concatenate([p.positions for p in parts]), parts[0].fps)


def footprints_toggled(scene: bpy.types.Scene) -> None:
    """The Footprints toggle changed: prints for every armature of ``scene`` showing a preview, or none."""
    if not scene.smart_motion.footprints:
        remove_footprints()
        return
    for armature in scene.objects:
        if armature.type != 'ARMATURE':
            continue
        motion = shown_motion(armature, scene)
        if motion is not None:
            show_footprints(armature, motion, scene)
