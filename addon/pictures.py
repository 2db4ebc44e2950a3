"""The demo's pictures: its result beside a plain NLA crossfade, rendered by Blender, and 2014 Fig. 5.

``make demo`` writes two pictures of the demo it builds (:mod:`.demo`):

``demo_contact_sheet.png``
    Blender's Workbench engine renders the synthesized motion (top row) and the
    same strips under a plain NLA crossfade (bottom row), one column per gap
    between cores and a last one from above. A gap's column shows the body
    (half transparent, so that the prints under its feet show) in the middle of
    the gap, looking down from :data:`ELEVATION_DEG`, with the prints of the
    steps into and across the gap (:mod:`.footprints`): a dark print where a
    foot is held, a red streak where it slides while down. Each row's camera is
    framed on its own body and prints, both rows of a column at one scale (the
    crossfade's body stands metres from ours). The last column looks straight
    down on every print of the row, framed on all of both rows' at one scale.
``demo_speed.png``
    Oshita 2014, Fig. 5: the speeds of the lower and upper body over time,
    ours against the crossfade, one panel per gap zoomed on it
    (:func:`core.figures.plot_gap_speeds`, written when matplotlib can be
    imported, as in ``make demo``'s environment; Blender's own Python has none,
    and the add-on never needs it).

The crossfade is what an animator gets from Blender's NLA without Smart
Motion: the demo's own actions on strips laid out as the demo lays them out,
each action playing as it is (no clip moved or turned: each demo clip starts
at its own origin, so the body walks back there as the walk fades into the
turn), each fading linearly into the next across the gap between their cores,
from the previous core's last frame to the next core's first, and nowhere else
(:func:`core.figures.crossfade_spans`), by keyed influence on the higher
strip of each gap (:func:`core.figures.crossfade_influence_keys`): both keep
their cores unblended, as the synthesis does. Its prints lie on the captured
clips' floor. Nothing of the demo's own armature, strips or actions changes;
every data block made for the pictures is removed once they are written, and
the scene's world, camera and frame are put back (its render settings are left
as the pictures').
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

from .footprints import material, prints_object

CROSSFADE = "SmartMotionDemo crossfade"
SHEET, SPEED = "demo_contact_sheet.png", "demo_speed.png"
SPEED_SIZE = (1100, 560)  # pixels of the speed plot
ROWS = ("Smart Motion", "plain NLA crossfade")
CELL_SIZE = (230, 270)  # pixels of each gap's picture
OVERVIEW_WIDTH = 2 * CELL_SIZE[0]  # the last picture's: a path of steps is longer than it is wide
GUTTER = 4  # white pixels between cells
TITLE_HEIGHT = 44  # pixels of each row's title
TITLE_TEXT = 0.6  # the row's name's height, as a share of the title's
TITLE_DETAIL_TEXT = 0.4  # and of what follows it
CAPTION_TEXT = 0.06  # a cell's caption's line height, as a share of the cell's
CAPTION_INSET = 0.03  # the caption's distance from the cell's left and top edges, as a share of the cell's
ELEVATION_DEG = 65.0  # the gaps' cameras look down by this much: steep enough that a body hides little
# of the prints around it, shallow enough that it still reads as a body
YAW_DEG = -70.0  # and along +X (-90), turned a little towards -Y, so the demo walks left to right, towards it
BODY_ALPHA = 0.45  # the body's opacity: the prints under its feet show through
MARGIN = 0.04  # of a cell's framed extent, left free on every side
CAPTION_BAND = 0.2  # of a cell's height, left free at its top for the caption's two lines
BODY_PAD_LEGS = 0.25  # framed around the joints: the head above its joint, the boxes' thickness (leg lengths)
CONTEXT_S = 0.5  # a gap's picture shows the prints made from this long before the gap to its end
FLOOR_OFFSET = 0.002  # the floor this share of the framed extent under the prints (no z-fighting)
TORSO_THICKNESS, LIMB_THICKNESS = 0.1, 0.05  # the body's boxes, as shares of its rest height: a stick
# figure's proportions, thick enough to read at a cell's size, thin enough not to hide the feet
BODY = ("Smart Motion body", (0.42, 0.55, 0.75, BODY_ALPHA))
FLOOR = ("Smart Motion floor", (0.8, 0.8, 0.78, 1.0))
LABEL = ("Smart Motion label", (0.05, 0.05, 0.05, 1.0))
CAMERA = "Smart Motion pictures"
MADE = ("objects", "meshes", "curves", "cameras", "armatures", "actions", "materials", "collections",
        "worlds", "images")  # the kinds of data block the pictures make, all removed after


def crossfade_armature(demo, scene: bpy.types.Scene) -> bpy.types.Object:
    """A second armature playing the demo's own strips as a plain NLA crossfade (see the module
    docstring): the same actions on the same tracks, at the same frames and with the same strip
    settings, nothing moved or turned; at each gap between cores, the strip on the higher track
    fades in or out linearly across it by keyed influence
    (:func:`core.figures.crossfade_influence_keys`), over the lower track's, at full weight."""
    from ..core.demo import demo_timeline
    from ..core.figures import crossfade_influence_keys, crossfade_spans
    from .convert import armature_from_skeleton

    clips = demo_timeline()
    spans = crossfade_spans(clips, demo.result.plan)
    source_tracks = list(demo.armature.animation_data.nla_tracks)
    by_name = {strip.name: strip for strip in demo.strips}
    sources = [by_name[span.name] for span in spans]
    lanes = [next(k for k, t in enumerate(source_tracks) if strip in t.strips[:]) for strip in sources]
    obj = armature_from_skeleton(clips[0].motion.skeleton, CROSSFADE, scene.collection)
    obj.matrix_world = demo.armature.matrix_world
    anim = obj.animation_data_create()
    tracks = []
    for source in source_tracks:
        tracks.append(anim.nla_tracks.new())
        tracks[-1].name = source.name
    for source, lane, keys in zip(sources, lanes, crossfade_influence_keys(
            spans, lanes, strip_frames=[(int(s.frame_start), int(s.frame_end)) for s in sources])):
        strip = tracks[lane].strips.new(source.name, int(source.frame_start), source.action)
        for setting in ("action_frame_start", "action_frame_end", "scale", "repeat",
                        "blend_type", "extrapolation", "use_reverse"):
            setattr(strip, setting, getattr(source, setting))
        if keys:
            influence_keys(strip, keys)
    return obj


def influence_keys(strip: bpy.types.NlaStrip, keys: list[tuple[int, float]]) -> None:
    """Key ``strip``'s influence at ``keys`` ((frame, weight)), linear between them, as an
    animator keys a fade."""
    strip.use_animated_influence = True  # (Blender keys the influence at the current frame: replaced)
    curve = strip.fcurves.find("influence")
    curve.keyframe_points.clear()
    curve.keyframe_points.add(len(keys))
    curve.keyframe_points.foreach_set("co", [v for key in keys for v in key])
    for point in curve.keyframe_points:
        point.interpolation = 'LINEAR'
    curve.update()


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
        thick = (TORSO_THICKNESS if name in torso else LIMB_THICKNESS) * height
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


@dataclass(frozen=True)
class Pictured:
    """What both pictures show, computed once: the plan, our motion and the crossfade's, as joint
    positions in world space ``(F, J, 3)`` (frame 0 at the plan's start), the prints of each row."""

    plan: object  # core.plan.Plan
    fps: float
    rig: object  # core.rig.Rig
    leg: float  # the mean leg length, in the armature's unit
    positions: dict  # row title -> (F, J, 3) world positions
    prints: dict  # row title -> list of core.footprints.Footprint (armature space)
    armatures: dict  # row title -> the armature it plays on


def pictured(demo, crossfade: bpy.types.Object) -> Pictured:
    """Evaluate ``crossfade`` (Blender's NLA) over the plan's frames and take both rows' prints
    (core.footprints), each on the floor of what it plays: ours on the synthesized motion's, the
    crossfade's on the demo clips' own, the floor they were captured on (its blends sink the feet
    for a while, and a floor from its own heights would then read its planted feet as lifted)."""
    from ..core.demo import demo_timeline
    from ..core.footprints import footprints
    from ..core.rig import mean_leg_length
    from .convert import find_armature_rig

    plan, motion = demo.result.plan, demo.result.motion
    rig = find_armature_rig(demo.armature, motion)
    order = [crossfade.pose.bones.find(name) for name in motion.skeleton.names]
    blended = evaluated_joints(crossfade, np.arange(plan.start, plan.end + 1))[:, order]
    ours = motion.global_positions()
    captured = np.concatenate([clip.motion.global_positions() for clip in demo_timeline()])
    prints = {ROWS[0]: footprints(motion, rig), ROWS[1]: footprints(motion, rig, positions=blended, reference=captured)}
    matrix = np.array(demo.armature.matrix_world)
    world = {ROWS[0]: ours @ matrix[:3, :3].T + matrix[:3, 3], ROWS[1]: blended @ matrix[:3, :3].T + matrix[:3, 3]}
    return Pictured(plan, motion.fps, rig, mean_leg_length(motion, rig), world, prints,
                    {ROWS[0]: demo.armature, ROWS[1]: crossfade})


def view_rotation(elevation_deg: float, yaw_deg: float) -> np.ndarray:
    """``(3, 3)`` world rotation of a camera looking down by ``elevation_deg``, turned ``yaw_deg``
    about Z: its columns are the picture's right, its up and the direction it looks from."""
    from mathutils import Euler

    return np.array(Euler((np.radians(90.0 - elevation_deg), 0.0, np.radians(yaw_deg))).to_matrix())


def ortho_scale(extent: np.ndarray, size: tuple[int, int]) -> float:
    """The orthographic scale that shows ``extent`` (width, height, in the scene's unit) whole in a
    picture of ``size`` pixels: Blender's scale spans the picture's longer side."""
    x, y = size
    return float(max(extent[0], extent[1] * x / y) if x >= y else max(extent[1], extent[0] * y / x))


@dataclass(frozen=True)
class View:
    """One column's camera: its rotation (:func:`view_rotation`), where it is and its scale."""

    rotation: np.ndarray
    location: np.ndarray
    scale: float
    size: tuple[int, int]
    depth: float  # how far in front of the camera the framed points reach, for its clipping


def framed(points: np.ndarray, rotation: np.ndarray, size: tuple[int, int], *, pad: float = 0.0,
           top_free: float = 0.0, min_scale: float = 0.0) -> View:
    """The view along ``rotation`` showing every one of ``points (N, 3)`` (world), ``pad`` (in their
    unit) and :data:`MARGIN` free around them, and the top ``top_free`` of the picture's height
    left free (for a caption), in a picture of ``size`` pixels, at a scale of ``min_scale`` at
    least (so that views of different things show them at one size)."""
    seen = points @ rotation  # (N, 3): right, up, towards the camera
    low, high = seen.min(axis=0) - pad, seen.max(axis=0) + pad
    extent = (high - low)[:2] * (1.0 + 2.0 * MARGIN)
    extent[1] /= 1.0 - top_free
    scale = max(ortho_scale(np.maximum(extent, 1e-6), size), min_scale)
    x, y = size
    height = scale * y / x if x >= y else scale
    centre = 0.5 * (low + high)
    centre[1] += 0.5 * top_free * height  # (the points in the picture's lower part)
    # (an orthographic camera sees the same from any distance: one scale in front of everything)
    location = rotation @ np.array([centre[0], centre[1], high[2] + scale])
    return View(rotation, location, scale, size, float(high[2] - low[2]) + 2.0 * scale)


def overview_rotation(points: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """Straight down, turned so that the longer horizontal extent of ``points (N, 3)`` runs across
    the picture (the overview is wider than high), ``forward`` (the way the motion went overall)
    to the right."""
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    direction = np.linalg.eigh(xy.T @ xy)[1][:, -1]  # the principal axis on the floor
    if direction @ forward[:2] < 0:
        direction = -direction
    return view_rotation(90.0, np.degrees(np.arctan2(direction[1], direction[0])))


def place_camera(scene: bpy.types.Scene, view: View) -> bpy.types.Object:
    """The pictures' one orthographic camera, set to ``view`` and made the scene's."""
    from mathutils import Matrix

    camera = bpy.data.objects.get(CAMERA)
    if camera is None:
        data = bpy.data.cameras.new(CAMERA)
        data.type = 'ORTHO'
        camera = bpy.data.objects.new(CAMERA, data)
        scene.collection.objects.link(camera)
    matrix = np.eye(4)
    matrix[:3, :3], matrix[:3, 3] = view.rotation, view.location
    camera.matrix_world = Matrix(matrix.tolist())
    camera.data.ortho_scale = view.scale
    camera.data.clip_start, camera.data.clip_end = 1e-3 * view.scale, view.depth
    scene.render.resolution_x, scene.render.resolution_y = view.size
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


def caption(camera: bpy.types.Object, text: str, collection: bpy.types.Collection, size: tuple[int, int],
            line: float) -> bpy.types.Object:
    """``text`` in the top left corner of ``camera``'s picture of ``size`` pixels, each line
    ``line`` of the picture's height."""
    x, y = size
    scale = camera.data.ortho_scale  # (spans the longer side)
    width, height = (scale, scale * y / x) if x >= y else (scale * x / y, scale)
    obj = text_object(text, line * height, collection)
    obj.parent = camera  # (in the camera's frame: x right, y up, looking along -z)
    inset = CAPTION_INSET * min(width, height)
    obj.location = (-0.5 * width + inset, 0.5 * height - inset - line * height, -2.0 * inset)
    return obj


def floor_plane(points: np.ndarray, height: float, collection: bpy.types.Collection) -> bpy.types.Object:
    """A floor at ``height`` under every one of ``points (N, 3)`` (world), as wide again around them."""
    low, high = points[:, :2].min(axis=0), points[:, :2].max(axis=0)
    low, high = low - (high - low).max(), high + (high - low).max()
    mesh = bpy.data.meshes.new(FLOOR[0])
    mesh.from_pydata([(low[0], low[1], height), (high[0], low[1], height), (high[0], high[1], height),
                      (low[0], high[1], height)], [], [(0, 1, 2, 3)])
    mesh.materials.append(material(*FLOOR))
    obj = bpy.data.objects.new(FLOOR[0], mesh)
    collection.objects.link(obj)
    return obj


def render_settings(scene: bpy.types.Scene, world: bpy.types.World) -> None:
    """Workbench, material colours (and their alpha) under studio light, a white background
    (``world``), 8-bit RGB PNG."""
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.render.dither_intensity = 0.0  # (dither's noise on the flat floor would double the file)
    settings = scene.render.image_settings
    settings.file_format, settings.color_mode, settings.color_depth, settings.compression = 'PNG', 'RGB', '8', 100
    shading = scene.display.shading
    shading.light = 'STUDIO'
    shading.color_type = 'MATERIAL'
    shading.show_object_outline = True
    world.color = (1.0, 1.0, 1.0)
    scene.world = world
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


def alone(scene: bpy.types.Scene, shown: list) -> list:
    """Hide from the render every object of ``scene`` but ``shown``; the objects hidden, to show again."""
    hidden = [o for o in scene.objects if not o.hide_render and o not in shown]
    for obj in hidden:
        obj.hide_render = True
    return hidden


def title_strip(scene: bpy.types.Scene, name: str, detail: str, width: int, collection: bpy.types.Collection,
                path: Path) -> np.ndarray:
    """A white strip ``width`` pixels wide holding the row's ``name`` in large type, then ``detail``
    in smaller type on the same line, rendered alone."""
    size = (width, TITLE_HEIGHT)
    camera = place_camera(scene, View(np.eye(3), np.array([0.0, 0.0, -1e3]), 1.0, size, 10.0))
    label = caption(camera, name, collection, size, TITLE_TEXT)  # (far below the floor: nothing else in view)
    bpy.context.view_layer.update()  # (a text's dimensions are known once evaluated)
    more = text_object(detail, TITLE_DETAIL_TEXT * TITLE_HEIGHT / width, collection)
    more.parent = camera
    x, y, z = label.location
    more.location = (x + label.dimensions.x + 0.5 * more.data.size, y, z)
    hidden = alone(scene, [label, more, camera])
    pixels = rendered(scene, path)
    for obj in hidden:
        obj.hide_render = False
    label.hide_render = more.hide_render = True
    return pixels


@dataclass(frozen=True)
class Column:
    """One column of the contact sheet: its caption, the frame its bodies show (None: no body),
    the output frames whose prints it shows, and each row's view (row title -> View)."""

    caption: str
    frame: int | None
    prints_from: tuple[int, int]
    views: dict


def sheet_columns(shown: Pictured) -> list[Column]:
    """A column per gap between cores (the middle of the gap; the prints of the steps from
    :data:`CONTEXT_S` before it to its end, each row framed on its own body and prints, both rows
    at one scale: the plain crossfade plays each clip where it was captured, metres from where
    the synthesis puts it, so one camera for both would show each body small in a corner), then
    one from above on every print of both rows, one view for both."""
    from ..core.figures import gap_frames

    plan = shown.plan
    rotation = view_rotation(ELEVATION_DEG, YAW_DEG)
    context = int(round(CONTEXT_S * shown.fps))
    columns = []
    for pair, (first, last) in zip((p for p in plan.pairs if p.gap is not None), gap_frames(plan)):
        middle = (first + last) // 2
        within = (first - context, last)
        points = {row: np.concatenate([shown.positions[row][middle - plan.start]]
                                      + [world_outline(p, shown, row) for p in prints if overlaps(p, within, plan.start)])
                  for row, prints in shown.prints.items()}
        views = {row: framed(p, rotation, CELL_SIZE, pad=BODY_PAD_LEGS * shown.leg, top_free=CAPTION_BAND)
                 for row, p in points.items()}
        scale = max(view.scale for view in views.values())
        views = {row: framed(p, rotation, CELL_SIZE, pad=BODY_PAD_LEGS * shown.leg, top_free=CAPTION_BAND,
                             min_scale=scale) for row, p in points.items()}
        columns.append(Column(f"{pair.prev} \u2192 {pair.next}\nframes {first}-{last}, body at {middle}", middle,
                              within, views))
    ours = shown.prints[ROWS[0]]
    every = np.concatenate([world_outline(p, shown, row) for row, prints in shown.prints.items() for p in prints])
    forward = (world_outline(ours[-1], shown, ROWS[0]).mean(axis=0) - world_outline(ours[0], shown, ROWS[0]).mean(axis=0)
               if ours else np.array([1.0, 0.0, 0.0]))
    overview = framed(every, overview_rotation(every, forward), (OVERVIEW_WIDTH, CELL_SIZE[1]), top_free=CAPTION_BAND)
    columns.append(Column("every print, from above", None, (plan.start, plan.end),
                          {row: overview for row in shown.prints}))
    return columns


def overlaps(print_, frames: tuple[int, int], start: int) -> bool:
    """Whether a print's run (motion frames, frame 0 at output frame ``start``) meets output ``frames``."""
    return print_.frames[0] + start <= frames[1] and print_.frames[1] + start >= frames[0]


def world_outline(print_, shown: Pictured, row: str) -> np.ndarray:
    matrix = np.array(shown.armatures[row].matrix_world)
    return print_.outline @ matrix[:3, :3].T + matrix[:3, 3]


def write_contact_sheet(shown: Pictured, path: Path, scene: bpy.types.Scene, collection: bpy.types.Collection
                        ) -> Path:
    """The contact sheet (module docstring) of ``shown``, written to ``path``."""
    plan = shown.plan
    columns = sheet_columns(shown)
    every = np.concatenate([world_outline(p, shown, row) for row, prints in shown.prints.items() for p in prints])
    extent = float(np.ptp(every[:, :2], axis=0).max())
    floor = floor_plane(np.concatenate([every, *[g[:, shown.rig.pelvis] for g in shown.positions.values()]]),
                float(every[:, 2].min()) - FLOOR_OFFSET * extent, collection)
    bodies = {row: body_mesh(armature, shown.rig, collection) for row, armature in shown.armatures.items()}
    sheet = []
    for k, (row, prints) in enumerate(shown.prints.items()):
        cells = []
        for c, column in enumerate(columns):
            made = [p for p in prints if overlaps(p, column.prints_from, plan.start)]
            trail = prints_object(f"{row} pictured prints {c}", made, shown.armatures[row].matrix_world.copy(),
                                  collection)
            if column.frame is not None:
                scene.frame_set(int(column.frame))
            view = column.views[row]
            camera = place_camera(scene, view)
            label = caption(camera, column.caption, collection, view.size, CAPTION_TEXT * CELL_SIZE[1] / view.size[1])
            hidden = alone(scene, [trail, label, floor, camera] + ([bodies[row]] if column.frame is not None else []))
            cells.append(rendered(scene, path.parent / f"_cell{k}_{c}.png"))
            for obj in hidden:
                obj.hide_render = False
            label.hide_render = trail.hide_render = True
        slides = sum(p.sliding for p in prints)
        gutter = np.ones((CELL_SIZE[1], GUTTER, 4), dtype=np.float32)  # (white between the cells)
        row_pixels = np.concatenate([part for cell in cells for part in (cell, gutter)][:-1], axis=1)
        how = ("the same strips in Blender's NLA, each action as it is, fading linearly across the gaps "
               "between cores") if k else "the demo's strips synthesized"
        detail = f"({how}): {len(prints)} footprints, {slides or 'none'} sliding while down (red)"
        sheet += [title_strip(scene, row, detail, row_pixels.shape[1], collection, path.parent / f"_title{k}.png"),
                  row_pixels]
    return write_png(np.concatenate(sheet), path, scene)


def write_speed_plot(shown: Pictured, path: Path) -> Path:
    """2014 Fig. 5 of ``shown``, one panel per gap (:func:`core.figures.plot_gap_speeds`), at ``path``.
    Raises ImportError without matplotlib."""
    from ..core.figures import body_part_speeds, plot_gap_speeds

    plan = shown.plan
    speeds = {row: body_part_speeds(g, shown.rig, shown.fps, shown.leg) for row, g in shown.positions.items()}
    gaps = [(p.gap, f"{p.prev} \u2192 {p.next}", p.quality) for p in plan.pairs if p.gap is not None]
    return plot_gap_speeds(path, plan.start, shown.fps, speeds, gaps, size_px=SPEED_SIZE,
                           title="Speeds of the lower and upper body around each gap between cores "
                                 "(Oshita 2014, Fig. 5)")


def write_pictures(demo, out: Path, scene: bpy.types.Scene | None = None) -> list[Path]:
    """Write :data:`SHEET` (and :data:`SPEED` when matplotlib can be imported) of ``demo`` (a
    :class:`.demo.DemoScene`) into the folder ``out``; the paths written. Every data block made for
    the pictures is removed, and the scene's world, camera and frame put back; its render settings
    are left as the pictures'."""
    scene = scene or bpy.context.scene
    out.mkdir(parents=True, exist_ok=True)
    before = {kind: set(getattr(bpy.data, kind)) for kind in MADE}
    kept = scene.frame_current, scene.world, scene.camera
    try:
        collection = bpy.data.collections.new("Smart Motion pictures")
        scene.collection.children.link(collection)
        render_settings(scene, bpy.data.worlds.new("Smart Motion pictures"))
        shown = pictured(demo, crossfade_armature(demo, scene))
        written = [write_contact_sheet(shown, out / SHEET, scene, collection)]
        try:
            written.append(write_speed_plot(shown, out / SPEED))
        except ImportError as error:
            print(f"not written: {out / SPEED} ({error})")
    finally:
        scene.world, scene.camera = kept[1], kept[2]
        remove_made(before)
        scene.frame_set(kept[0])
    return written


def remove_made(before: dict) -> None:
    """Remove every data block of the kinds :data:`MADE` that is not among ``before`` (kind -> the
    blocks there were): objects first, so that their data is left unused."""
    for kind in MADE:
        blocks = getattr(bpy.data, kind)
        for block in [b for b in blocks if b not in before[kind]]:
            blocks.remove(block)
