"""The demo's pictures: its result beside a plain NLA crossfade, rendered by Blender, and 2014 Fig. 5.

``make demo`` writes two pictures of the demo it builds (:mod:`.demo`):

``demo_contact_sheet.png``
    Blender's Workbench engine renders, from above and to one side, the
    synthesized motion (top row) and the same strips under a plain NLA
    crossfade (bottom row) at the middle of each gap between cores and at the
    end: the body (a box per bone, skinned to the armature) and the footprints
    made so far on the floor (:mod:`.footprints`): a dark print where a foot
    is held, a red streak where it slides while down.
``demo_speed.png``
    Oshita 2014, Fig. 5: the speeds of the lower and upper body over time,
    ours against the crossfade, the gaps shaded (:func:`core.figures.plot_speeds`,
    written when matplotlib can be imported, as in ``make demo``'s environment;
    Blender's own Python has none, and the add-on never needs it).

The crossfade is Blender's own NLA blending: the same clips, each turned and
moved where the synthesis placed it (:func:`core.figures.placed_motions`, so
that the two differ in how they blend, not in where the clips stand), on the
demo's two tracks, each strip of the upper track blending in and out over the
frames it overlaps its neighbours (``blend_in``, ``blend_out``), the strips of
the lower track played in full. Nothing of the demo's own armature, strips or
actions changes; everything made here is removed once rendered.
"""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np

from .footprints import material, prints_object

CROSSFADE = "SmartMotionDemo crossfade"
SHEET, SPEED = "demo_contact_sheet.png", "demo_speed.png"
CELL_SIZE = (220, 260)  # pixels of each frame of the contact sheet
CELL_SPAN = 2.0  # what a cell shows, bottom to top, in the armature's units (the demo: metres)
ELEVATION_DEG = 60.0  # the camera looks down by this much
YAW_DEG = -70.0  # and along +X (-90), turned a little towards -Y, so the demo walks left to right, towards it
GUTTER = 4  # white pixels between cells
TITLE_HEIGHT = 34  # pixels of each row's title
BODY = ("Smart Motion body", (0.42, 0.55, 0.75, 1.0))
FLOOR = ("Smart Motion floor", (0.8, 0.8, 0.78, 1.0))
LABEL = ("Smart Motion label", (0.05, 0.05, 0.05, 1.0))


def crossfade_armature(demo, scene: bpy.types.Scene) -> bpy.types.Object:
    """A second armature playing the demo's clips as a plain NLA crossfade (see the module docstring):
    each clip a strip on frames :func:`core.figures.crossfade_spans` gives it, the clips alternating
    between two tracks; the upper track's strips fade in and out across the gaps (Blend In, Blend
    Out) over the lower track's, which play at full weight and so show wherever an upper strip fades."""
    from ..core.demo import demo_timeline
    from ..core.figures import crossfade_spans, held_frames, placed_motions
    from .convert import armature_from_skeleton, find_armature_rig, write_action

    clips = {clip.name: clip for clip in demo_timeline()}
    plan = demo.result.plan
    rig = find_armature_rig(demo.armature, next(iter(clips.values())).motion)
    placed = dict(zip(plan.clips, placed_motions(list(clips.values()), plan, rig)))
    obj = armature_from_skeleton(next(iter(clips.values())).motion.skeleton, CROSSFADE, scene.collection)
    obj.matrix_world = demo.armature.matrix_world
    anim = obj.animation_data_create()
    tracks = [anim.nla_tracks.new(), anim.nla_tracks.new()]
    for k, span in enumerate(crossfade_spans(list(clips.values()), plan)):
        clip = clips[span.name]
        # (a clip with no frames of its own in part of a gap holds its end pose there)
        frames = held_frames(clip.start, clip.motion.n_frames, span.first, span.last)
        action = write_action(obj, placed[span.name][frames], f"{CROSSFADE} {span.name}", frame_start=1)
        strip = tracks[k % 2].strips.new(span.name, span.first, action)
        if k % 2 == 0:
            strip.extrapolation = 'HOLD' if k == 0 else 'HOLD_FORWARD'
        else:
            strip.extrapolation = 'NOTHING'
            strip.blend_in, strip.blend_out = span.fade_in, span.fade_out
    return obj


def evaluated_joints(obj: bpy.types.Object, frames) -> np.ndarray:
    """Blender's evaluated joint positions ``(F, J, 3)`` of ``obj`` (armature space, bone heads in
    ``obj.pose.bones`` order: the demo skeleton's joints). Blender evaluates one frame at a time."""
    scene = bpy.context.scene
    heads = np.empty((len(frames), len(obj.pose.bones) * 3), dtype=np.float32)
    for k, frame in enumerate(frames):
        scene.frame_set(int(frame))
        obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones.foreach_get("head", heads[k])
    return heads.reshape(len(frames), -1, 3).astype(np.float64)


def body_mesh(armature: bpy.types.Object, rig, collection: bpy.types.Collection) -> bpy.types.Object:
    """A box per bone segment of ``armature`` (parent joint to each child joint, and each leaf bone
    along its length), skinned rigidly to the bone that carries it, so that renders show the body
    (armatures themselves do not render). The torso's and head's boxes are thicker."""
    bones = armature.data.bones
    heads = np.array([b.head_local for b in bones])
    tails = np.array([b.tail_local for b in bones])
    height = float(np.ptp(np.r_[heads, tails][:, 2]))
    torso = {bones[j].name for j in (rig.pelvis, *rig.spine, rig.chest, rig.neck, rig.head) if j is not None}
    segments = [(bone.parent.head_local, bone.head_local, bone.parent.name) for bone in bones if bone.parent]
    segments += [(bone.head_local, bone.tail_local, bone.name) for bone in bones if not bone.children]
    vertices, faces, groups = [], [], []
    for a, b, name in segments:
        a, b = np.array(a), np.array(b)
        along = b - a
        if np.linalg.norm(along) < 1e-6:
            continue
        thick = (0.1 if name in torso else 0.05) * height
        side = np.cross(along, [0.0, 0.0, 1.0] if abs(along[2]) < 0.9 * np.linalg.norm(along) else [1.0, 0.0, 0.0])
        side *= 0.5 * thick / np.linalg.norm(side)
        other = np.cross(along, side)
        other *= 0.5 * thick / np.linalg.norm(other)
        base = len(vertices)
        for end in (a, b):
            vertices += [end + side + other, end - side + other, end - side - other, end + side - other]
        faces += [[base + i for i in face] for face in
                  ((0, 1, 2, 3), (7, 6, 5, 4), (0, 4, 5, 1), (1, 5, 6, 2), (2, 6, 7, 3), (3, 7, 4, 0))]
        groups.append((name, range(base, base + 8)))
    mesh = bpy.data.meshes.new(f"{armature.name} body")
    mesh.from_pydata([tuple(v) for v in vertices], [], faces)
    mesh.materials.append(material(*BODY))
    obj = bpy.data.objects.new(f"{armature.name} body", mesh)
    collection.objects.link(obj)
    for name, indices in groups:
        group = obj.vertex_groups.get(name) or obj.vertex_groups.new(name=name)
        group.add(list(indices), 1.0, 'REPLACE')
    obj.parent = armature
    obj.modifiers.new("Armature", 'ARMATURE').object = armature
    return obj


def sheet_frames(plan) -> list[tuple[int, str]]:
    """The sheet's columns, (frame, caption): the middle of each gap between cores, then the last
    frame (every print made by then)."""
    columns = [((p.gap[0] + p.gap[1]) // 2, f"{p.prev} \u2192 {p.next}") for p in plan.pairs if p.gap is not None]
    return columns + [(plan.end, "the end")]


def cell_camera(scene: bpy.types.Scene, target: np.ndarray) -> bpy.types.Object:
    """The sheet's orthographic camera, looking down at :data:`ELEVATION_DEG`, turned :data:`YAW_DEG`
    about Z, at ``target`` (world), :data:`CELL_SPAN` units high."""
    from mathutils import Euler

    camera = bpy.data.objects.get("Smart Motion pictures")
    if camera is None:
        data = bpy.data.cameras.new("Smart Motion pictures")
        data.type = 'ORTHO'
        camera = bpy.data.objects.new("Smart Motion pictures", data)
        scene.collection.objects.link(camera)
        camera.rotation_euler = Euler((np.radians(90.0 - ELEVATION_DEG), 0.0, np.radians(YAW_DEG)))
        data.clip_start, data.clip_end = 0.01, 100.0
    aspect = scene.render.resolution_x / scene.render.resolution_y
    camera.data.ortho_scale = CELL_SPAN * max(aspect, 1.0)
    view = np.array(camera.rotation_euler.to_matrix())[:, 2]  # the camera looks along -view
    camera.location = target + 20.0 * view
    scene.camera = camera
    return camera


def text_object(text: str, size: float, collection: bpy.types.Collection) -> bpy.types.Object:
    curve = bpy.data.curves.new(f"Smart Motion label {len(collection.objects)}", 'FONT')
    curve.body = text
    curve.size = size
    curve.materials.append(material(*LABEL))
    obj = bpy.data.objects.new(curve.name, curve)
    collection.objects.link(obj)
    return obj


def caption(camera: bpy.types.Object, text: str, collection: bpy.types.Collection, scene: bpy.types.Scene,
            size: float) -> bpy.types.Object:
    """``text`` in the top left corner of ``camera``'s view, ``size`` of its height."""
    x, y = scene.render.resolution_x, scene.render.resolution_y
    scale = camera.data.ortho_scale  # (an orthographic camera's scale spans the longer side)
    width, height = (scale, scale * y / x) if x >= y else (scale * x / y, scale)
    obj = text_object(text, size * height, collection)
    obj.parent = camera
    obj.location = (-0.47 * width, 0.5 * height - 1.25 * size * height, -1.0)
    return obj


def floor_plane(centre: np.ndarray, half: float, height: float, collection: bpy.types.Collection) -> bpy.types.Object:
    """A square floor ``2 * half`` wide around ``centre`` (world) at ``height``."""
    x, y = centre[0], centre[1]
    mesh = bpy.data.meshes.new("Smart Motion floor")
    mesh.from_pydata([(x - half, y - half, height), (x + half, y - half, height), (x + half, y + half, height),
                      (x - half, y + half, height)], [], [(0, 1, 2, 3)])
    mesh.materials.append(material(*FLOOR))
    obj = bpy.data.objects.new("Smart Motion floor", mesh)
    collection.objects.link(obj)
    return obj


def render_settings(scene: bpy.types.Scene, size: tuple[int, int]) -> None:
    """Workbench, material colours under studio light, a white background, 8-bit RGB PNG."""
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    settings = scene.render.image_settings
    settings.file_format, settings.color_mode, settings.color_depth, settings.compression = 'PNG', 'RGB', '8', 100
    shading = scene.display.shading
    shading.light = 'STUDIO'
    shading.color_type = 'MATERIAL'
    shading.show_object_outline = True
    scene.world = scene.world or bpy.data.worlds.new("Smart Motion pictures")
    scene.world.color = (1.0, 1.0, 1.0)
    scene.view_settings.view_transform = 'Standard'
    scene.view_settings.exposure = 0.6  # (studio light leaves a white floor grey)


def rendered(scene: bpy.types.Scene, path: Path) -> np.ndarray:
    """Render ``scene`` to ``path``, read the image back and remove the file: ``(H, W, 4)`` float,
    top row first."""
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(path))
    width, height = image.size
    pixels = np.empty(width * height * 4, dtype=np.float32)
    image.pixels.foreach_get(pixels)
    bpy.data.images.remove(image)
    path.unlink()
    return pixels.reshape(height, width, 4)[::-1]


def write_png(pixels: np.ndarray, path: Path, scene: bpy.types.Scene) -> Path:
    """``pixels (H, W, 4)`` (top row first) written as a PNG at ``path`` with ``scene``'s image settings."""
    height, width = pixels.shape[:2]
    image = bpy.data.images.new(path.stem, width, height, alpha=False)
    image.pixels.foreach_set(np.ascontiguousarray(pixels[::-1]).ravel())
    image.save_render(str(path), scene=scene)
    bpy.data.images.remove(image)
    return path


def title_strip(scene: bpy.types.Scene, text: str, width: int, collection: bpy.types.Collection, path: Path
                ) -> np.ndarray:
    """A white strip ``width`` pixels wide holding one line of ``text``, rendered alone."""
    kept = scene.render.resolution_x, scene.render.resolution_y
    render_settings(scene, (width, TITLE_HEIGHT))
    camera = cell_camera(scene, np.array([0.0, 0.0, -500.0]))  # (far below the floor: nothing else in view)
    label = caption(camera, text, collection, scene, 0.5)
    visible = [o for o in scene.objects if not o.hide_render and o is not label]
    for obj in visible:
        obj.hide_render = True
    pixels = rendered(scene, path)
    for obj in visible:
        obj.hide_render = False
    label.hide_render = True
    render_settings(scene, kept)
    return pixels


def write_pictures(demo, out: Path, scene: bpy.types.Scene | None = None) -> list[Path]:
    """Write :data:`SHEET` (and :data:`SPEED` when matplotlib can be imported) of ``demo`` (a
    :class:`.demo.DemoScene`) into the folder ``out``; the paths written. Everything made for the
    pictures is removed and the scene's frame restored; its render settings are left as the pictures'."""
    from ..core.figures import body_part_speeds, gap_frames
    from ..core.rig import mean_leg_length
    from ..core.footprints import footprints
    from .convert import find_armature_rig

    scene = scene or bpy.context.scene
    out.mkdir(parents=True, exist_ok=True)
    plan, motion = demo.result.plan, demo.result.motion
    rig = find_armature_rig(demo.armature, motion)
    frames = np.arange(plan.start, plan.end + 1)
    kept_frame = scene.frame_current
    collection = bpy.data.collections.new("Smart Motion pictures")
    scene.collection.children.link(collection)
    crossfade = crossfade_armature(demo, scene)
    try:
        order = [crossfade.pose.bones.find(name) for name in motion.skeleton.names]
        blended = evaluated_joints(crossfade, frames)[:, order]  # Blender's NLA, in the skeleton's order
        ours = motion.global_positions()
        matrix = np.array(demo.armature.matrix_world)
        columns = sheet_frames(plan)
        rows = []
        for who, positions, title in ((demo.armature, None, "Smart Motion: the demo's strips synthesized"),
                                      (crossfade, blended, "the same strips, plain NLA crossfade (blend in / out)")):
            # (one floor for both: the synthesized motion's, whose feet the clips put on it)
            prints = footprints(motion, rig, positions=positions, reference=ours)
            rows.append((who, body_mesh(who, rig, collection), prints, title))
        floor = min(float((p.outline @ matrix[:3, :3].T + matrix[:3, 3])[:, 2].min()) for row in rows for p in row[2])
        pelvis = ours[:, rig.pelvis] @ matrix[:3, :3].T + matrix[:3, 3]
        floor_plane(pelvis.mean(axis=0), 2.0 * CELL_SPAN + float(np.ptp(pelvis, axis=0).max()),
                    floor - 0.002 * CELL_SPAN, collection)
        render_settings(scene, CELL_SIZE)
        sheet = []
        for k, (who, body, prints, title) in enumerate(rows):
            cells = []
            for frame, what in columns:
                made = [p for p in prints if p.frames[0] + plan.start <= frame]
                trail = prints_object(f"{who.name} pictured prints", made, demo.armature.matrix_world.copy(), collection)
                scene.frame_set(int(frame))
                target = pelvis[frame - plan.start] * np.array([1.0, 1.0, 0.0]) + np.array([0.0, 0.0, floor + 0.3 * CELL_SPAN])
                camera = cell_camera(scene, target)
                for other_who, other_body, _, _ in rows:
                    other_body.hide_render = other_body is not body
                label = caption(camera, f"frame {frame}, {what}", collection, scene, 0.055)
                cells.append(rendered(scene, out / f"_cell{k}_{frame}.png"))
                label.hide_render = True
                trail.hide_render = True
                trail.name = f"{trail.name} at {frame}"  # (kept for the cleanup; the next cell gets a new one)
            slides = sum(p.sliding for p in prints)
            strip = title_strip(scene, f"{title}: {len(prints)} footprints, {slides} sliding while down (red)",
                                len(columns) * CELL_SIZE[0] + (len(columns) - 1) * GUTTER, collection,
                                out / f"_title{k}.png")
            gutter = np.ones((CELL_SIZE[1], GUTTER, 4), dtype=np.float32)  # (white between the cells)
            row = np.concatenate([part for cell in cells for part in (cell, gutter)][:-1], axis=1)
            sheet += [strip, row]
        written = [write_png(np.concatenate(sheet), out / SHEET, scene)]
        leg = mean_leg_length(motion, rig)
        speeds = {"Smart Motion": body_part_speeds(ours, rig, motion.fps, leg),
                  "plain NLA crossfade": body_part_speeds(blended, rig, motion.fps, leg)}
        try:
            from ..core.figures import plot_speeds

            written.append(plot_speeds(out / SPEED, plan.start, motion.fps, speeds, gap_frames(plan),
                                       title="Speeds of the lower and upper body (Oshita 2014, Fig. 5), "
                                             "gaps between cores shaded"))
        except ImportError as error:
            print(f"not written: {out / SPEED} ({error})")
    finally:
        remove_made(collection, crossfade)
        scene.frame_set(kept_frame)
    return written


def remove_made(collection: bpy.types.Collection, crossfade: bpy.types.Object) -> None:
    """Remove what :func:`write_pictures` made: the collection's objects and their data, the crossfade
    armature and its actions, the camera."""
    actions = [s.action for t in crossfade.animation_data.nla_tracks for s in t.strips if s.action]
    for obj in list(collection.objects):
        data = obj.data
        bpy.data.objects.remove(obj)
        if isinstance(data, bpy.types.Mesh) and data.users == 0:
            bpy.data.meshes.remove(data)
        elif isinstance(data, bpy.types.Curve) and data.users == 0:
            bpy.data.curves.remove(data)
    bpy.data.collections.remove(collection)
    armature = crossfade.data
    bpy.data.objects.remove(crossfade)
    bpy.data.armatures.remove(armature)
    for action in actions:
        bpy.data.actions.remove(action)
    camera = bpy.data.objects.get("Smart Motion pictures")
    if camera is not None:
        data = camera.data
        bpy.data.objects.remove(camera)
        bpy.data.cameras.remove(data)
