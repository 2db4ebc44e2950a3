"""``make demo``: the embedded demo clips as NLA strips, synthesized, baked and saved."""

import importlib
import json
import struct
from pathlib import Path

import bpy
import numpy as np
import pytest

from scenes import evaluated_heads


@pytest.fixture(scope="module")
def demo(installed_extension):
    return importlib.import_module(f"{installed_extension}.addon.demo")


@pytest.fixture(scope="module")
def core(installed_extension):
    def load(name):
        return importlib.import_module(f"{installed_extension}.core.{name}")

    return load


def test_armature_from_the_demo_skeleton_has_its_identity_rest_pose(empty_scene, installed_extension, core):
    convert = importlib.import_module(f"{installed_extension}.addon.convert")
    skeleton = core("demo").demo_skeleton()

    obj = convert.armature_from_skeleton(skeleton, "Demo")

    back, info = convert.armature_skeleton(obj)
    assert back.names == skeleton.names and np.array_equal(back.parents, skeleton.parents)
    assert np.allclose(back.offsets, skeleton.offsets, atol=1e-6)
    assert all(not bone.use_connect and bone.length > 0.01 for bone in obj.data.bones)
    # leaf bones point along their End Sites, so the skeleton's tips survive
    for j, tip in skeleton.end_sites.items():
        assert np.allclose(back.end_sites[j], tip, atol=1e-6)
    # the demo clips play on it as authored: Blender's bone heads are the clip's joints
    walk = core("demo").demo_clips()["walk"].motion
    obj.animation_data_create().action = convert.write_action(obj, walk, "walk", frame_start=1)
    heads = evaluated_heads(obj, [1, 40, 80])
    order = [obj.pose.bones.find(name) for name in skeleton.names]
    assert np.abs(heads[:, order] - walk.global_positions()[[0, 39, 79]]).max() < 1e-5


def test_demo_scene_lays_out_five_strips_and_plays_the_baked_result(empty_scene, demo):
    scene = empty_scene

    made = demo.build_demo_scene()

    obj = made.armature
    assert len(made.strips) == 5 and {s.name for s in made.strips} == {"walk", "turn", "kick", "jump", "stand"}
    assert [t.name for t in obj.animation_data.nla_tracks] == list(demo.TRACKS)
    plan = json.loads(obj.smart_motion.plan_json)
    assert plan["rejected"] == [] and len(plan["pairs"]) == 4
    assert plan["pairs"][0]["method"] == "transition", "the walk's last step blends into the turn's first"
    assert obj.animation_data.action == made.action and made.action.name == "SmartMotionDemo_SmartMotion"
    assert (scene.frame_start, scene.frame_end) == (plan["start"], plan["end"])
    # the walk's core plays as authored
    walk = made.strips[0]
    frames = np.arange(1, 96, 5)
    baked = evaluated_heads(obj, frames)
    obj.animation_data.action = walk.action
    assert np.abs(baked - evaluated_heads(obj, frames)).max() < 1e-4


def test_the_plain_crossfade_pictured_plays_the_demos_strips_unmoved_and_every_core_unblended(
        empty_scene, demo, core, installed_extension):
    """The crossfade the pictures compare with is what Blender's NLA plays without Smart Motion:
    the demo's own actions, on strips laid out as the demo lays them out, each played as it is (no
    clip moved or turned: every core is its action's own frames, at their own place), faded only
    across the gaps between cores, where neither clip plays alone."""
    pictures = importlib.import_module(f"{installed_extension}.addon.pictures")
    made = demo.build_demo_scene()
    plan = made.result.plan
    clips = core("demo").demo_timeline()

    crossfade = pictures.crossfade_armature(made, empty_scene)

    strips = {s.name: s for t in crossfade.animation_data.nla_tracks for s in t.strips}
    for source in made.strips:
        strip = strips[source.name]
        assert strip.action == source.action, "the demo's own action, not a re-placed copy"
        assert (strip.frame_start, strip.frame_end, strip.action_frame_start, strip.action_frame_end) == \
            (source.frame_start, source.frame_end, source.action_frame_start, source.action_frame_end)
    order = [crossfade.pose.bones.find(name) for name in clips[0].motion.skeleton.names]
    for clip in clips:
        first, last = clip.core_range
        frames = np.arange(first, last + 1)
        played = pictures.evaluated_joints(crossfade, clip.start + frames)[:, order]
        # (the clip at its own origin, as captured: each demo clip starts there)
        assert np.abs(played - clip.motion.global_positions()[frames]).max() < 1e-4, clip.name
    # and halfway across each gap, half of each side: neither clip plays alone
    for (first, last), prev, nxt in zip(core("figures").gap_frames(plan), clips, clips[1:]):
        if last - first < 2:
            continue  # (cores that meet leave no frame between them to blend)
        middle = (first + last) // 2
        played = pictures.evaluated_joints(crossfade, [middle])[0, order]
        for clip in (prev, nxt):
            own = clip.motion.global_positions()[np.clip(middle - clip.start, 0, clip.motion.n_frames - 1)]
            assert np.abs(played - own).max() > 1e-3, (clip.name, middle)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's header, after checking it is one."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is no PNG"
    return struct.unpack(">II", head[16:24])


def print_pixels(cell: np.ndarray) -> np.ndarray:
    """``(H, W) bool``: the pixels of ``cell (H, W, 3)`` (0..1) in a print's colour as Workbench
    renders it: red (a streak) or an even mid grey (a held print); the floor is a lighter grey,
    the body blue, the captions and outlines near black."""
    red = (cell[..., 0] > 0.75) & (cell[..., 0] - cell[..., 1:].max(axis=-1) > 0.3)
    grey = np.all((cell > 0.35) & (cell < 0.55), axis=-1) & (np.ptp(cell, axis=-1) < 0.06)
    return red | grey


def assert_pictures(folder: Path, pictures) -> None:
    """The contact sheet (and the speed plot where matplotlib is) written, of the sizes they are
    drawn at, the renders they were made of removed; prints in every row's overview, and no print
    cut by the edge of any cell."""
    gaps = 4  # the demo's
    sheet = folder / pictures.SHEET
    width = gaps * (pictures.CELL_SIZE[0] + pictures.GUTTER) + pictures.OVERVIEW_WIDTH
    assert png_size(sheet) == (width, 2 * (pictures.TITLE_HEIGHT + pictures.CELL_SIZE[1]))
    assert 20_000 < sheet.stat().st_size < 400_000
    assert not list(folder.glob("_*.png"))  # (the renders it was made of are gone)
    image = bpy.data.images.load(str(sheet))
    pixels = np.empty(len(image.pixels), dtype=np.float32)
    image.pixels.foreach_get(pixels)
    bpy.data.images.remove(image)
    pixels = pixels.reshape(png_size(sheet)[1], width, 4)[::-1, :, :3]  # (top row first)
    for k in range(2):
        top = k * (pictures.TITLE_HEIGHT + pictures.CELL_SIZE[1]) + pictures.TITLE_HEIGHT
        lefts = [c * (pictures.CELL_SIZE[0] + pictures.GUTTER) for c in range(gaps + 1)]
        for left, right in zip(lefts, lefts[1:] + [width + pictures.GUTTER]):
            printed = print_pixels(pixels[top:top + pictures.CELL_SIZE[1], left:right - pictures.GUTTER])
            edge = np.r_[printed[0], printed[-1], printed[:, 0], printed[:, -1]]
            assert not edge.any(), f"a print is cut by the edge of row {k}'s cell at x {left}"
        assert printed.sum() > 100, "the overview shows the prints"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert png_size(folder / pictures.SPEED) == pictures.SPEED_SIZE


def test_every_print_a_picture_shows_is_in_its_cameras_view(empty_scene, demo, installed_extension):
    """Each row's camera in each column frames what that row shows: the prints of the steps into
    and across its gap and its body (the overview: every print of both rows), clear of the caption
    at its top; both rows' cameras of a column at one scale."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    pictures = importlib.import_module(f"{installed_extension}.addon.pictures")
    made = demo.build_demo_scene()
    shown = pictures.pictured(made, pictures.crossfade_armature(made, empty_scene))
    plan = shown.plan

    columns = pictures.sheet_columns(shown)

    assert len(columns) == 4 + 1 and columns[-1].frame is None
    for column, row in ((column, row) for column in columns for row in shown.prints):
        assert len({view.scale for view in column.views.values()}) == 1, column.caption
        camera = pictures.place_camera(empty_scene, column.views[row])
        rows = list(shown.prints) if column.frame is None else [row]
        points = [pictures.world_outline(p, shown, r) for r in rows for p in shown.prints[r]
                  if pictures.overlaps(p, column.prints_from, plan.start)]
        if column.frame is not None:
            points += [shown.positions[row][column.frame - plan.start]]
        seen = np.array([world_to_camera_view(empty_scene, camera, Vector(p)) for p in np.concatenate(points)])
        assert np.all((seen[:, :2] > 0.0) & (seen[:, :2] < 1.0)), column.caption
        assert np.all(seen[:, 1] < 1.0 - pictures.CAPTION_BAND), column.caption  # (under the caption)
        assert np.all((seen[:, 2] > camera.data.clip_start) & (seen[:, 2] < camera.data.clip_end))
    assert columns[-1].prints_from == (plan.start, plan.end)  # (the overview: every print of both rows)


def test_the_pictures_leave_nothing_behind(empty_scene, demo, installed_extension, tmp_path):
    """Every data block made for the pictures is removed (the crossfade, bodies, prints, floor,
    labels, camera, their materials, the world and the render result), the scene's put back."""
    pictures = importlib.import_module(f"{installed_extension}.addon.pictures")
    made = demo.build_demo_scene()
    kinds = ("objects", "meshes", "curves", "cameras", "armatures", "actions", "materials", "collections",
             "worlds", "images")
    before = {kind: sorted(b.name for b in getattr(bpy.data, kind)) for kind in kinds}
    kept = empty_scene.world, empty_scene.camera, empty_scene.frame_current

    written = pictures.write_pictures(made, tmp_path)

    assert written and all(path.is_file() for path in written)
    assert {kind: sorted(b.name for b in getattr(bpy.data, kind)) for kind in kinds} == before
    assert (empty_scene.world, empty_scene.camera, empty_scene.frame_current) == kept


def test_make_demo_writes_a_blend_that_opens_playing_a_bvh_and_the_pictures(empty_scene, demo, core, tmp_path,
                                                                             capsys, installed_extension):
    copies = tmp_path / "images"
    assert demo.main(["--out", str(tmp_path), "--pictures", str(copies)]) == 0

    printed = capsys.readouterr().out
    assert "walk -> turn: transition" in printed and "wrote" in printed
    assert "!" not in printed.split("baked")[0], "the demo's plan flags no gap"
    pictures = importlib.import_module(f"{installed_extension}.addon.pictures")
    assert_pictures(tmp_path, pictures)
    assert sorted(p.name for p in copies.iterdir()) == sorted(p.name for p in tmp_path.glob("demo_*.png"))
    assert not any(o.name.startswith(pictures.CROSSFADE) for o in bpy.data.objects)  # (made for the pictures only)
    motion = core("bvh").read_bvh(tmp_path / "demo.bvh")
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "demo.blend"))
    scene = bpy.context.scene
    obj = bpy.data.objects["SmartMotionDemo"]
    assert obj.animation_data.action.name == "SmartMotionDemo_SmartMotion"
    assert obj.animation_data.action_slot is not None
    assert motion.n_frames == scene.frame_end - scene.frame_start + 1
    assert scene.render.fps == 30


def test_the_demo_runs_from_a_checkout_as_make_demo_runs_it(tmp_path):
    """``make demo`` runs ``addon/demo.py`` from the repository root, where the add-on is no
    installed extension. The add-on's split (issue 25) had made the package import the core
    relatively on import, which `python -m addon.demo` could not resolve: the demo failed while
    every test, run on the installed extension, passed."""
    import os
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    profile = tmp_path / "profile"  # (Blender's user folders kept out of the user's own, as make demo does)
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(profile), BLENDER_USER_CONFIG=str(profile / "config"),
               BLENDER_USER_SCRIPTS=str(profile / "scripts"), BLENDER_USER_DATAFILES=str(profile / "datafiles"),
               BLENDER_USER_EXTENSIONS=str(profile / "extensions"))
    # (the command make demo's recipe gives, with this interpreter for $(PY))
    lines = (root / "Makefile").read_text().splitlines()
    recipe = lines[lines.index(next(line for line in lines if line.startswith("demo:"))) + 1]
    command = shlex.split(recipe.replace("$(BLENDER_ENV)", "").replace("$(PY)", shlex.quote(sys.executable)))
    command[command.index("--out") + 1] = str(tmp_path / "out")
    run = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "baked" in run.stdout and (tmp_path / "out" / "demo.blend").is_file()
    assert (tmp_path / "out" / "demo.bvh").stat().st_size > 0
    assert (tmp_path / "out" / "demo_contact_sheet.png").stat().st_size > 20_000
    try:
        import matplotlib  # noqa: F401  (make demo's environment has it; the other Blenders' may not)
    except ImportError:
        assert "not written" in run.stdout and "needs matplotlib" in run.stdout
    else:
        assert (tmp_path / "out" / "demo_speed.png").stat().st_size > 20_000
