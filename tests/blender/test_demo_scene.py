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


def test_the_plain_crossfade_pictured_plays_every_core_unblended(empty_scene, demo, core, installed_extension):
    """The crossfade the pictures compare with is fair: Blender's NLA, set up as an animator
    would, plays each clip's core as placed, and blends only across the gaps between cores."""
    pictures = importlib.import_module(f"{installed_extension}.addon.pictures")
    made = demo.build_demo_scene()
    plan = made.result.plan
    clips = core("demo").demo_timeline()
    placed = core("figures").placed_motions(clips, plan, core("rig").find_rig(clips[0].motion))

    crossfade = pictures.crossfade_armature(made, empty_scene)

    order = [crossfade.pose.bones.find(name) for name in clips[0].motion.skeleton.names]
    for clip, motion in zip(clips, placed):
        first, last = clip.core_range
        frames = np.arange(first, last + 1)
        played = pictures.evaluated_joints(crossfade, clip.start + frames)[:, order]
        assert np.abs(played - motion.global_positions()[frames]).max() < 1e-4, clip.name
    # and halfway across each gap, half of each side: neither clip plays alone
    for (first, last), prev, nxt in zip(core("figures").gap_frames(plan), placed, placed[1:]):
        middle = (first + last) // 2
        played = pictures.evaluated_joints(crossfade, [middle])[0, order]
        for clip, motion in ((c, m) for c, m in zip(clips, placed) if m is prev or m is nxt):
            own = motion.global_positions()[np.clip(middle - clip.start, 0, motion.n_frames - 1)]
            assert np.abs(played - own).max() > 1e-3, (clip.name, middle)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's header, after checking it is one."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is no PNG"
    return struct.unpack(">II", head[16:24])


def assert_pictures(folder: Path, pictures) -> None:
    """The contact sheet (and the speed plot where matplotlib is) written, of the sizes they are drawn at."""
    columns = 4 + 1  # the demo's four gaps, then its last frame
    sheet = folder / pictures.SHEET
    assert png_size(sheet) == (columns * pictures.CELL_SIZE[0] + (columns - 1) * pictures.GUTTER,
                               2 * (pictures.TITLE_HEIGHT + pictures.CELL_SIZE[1]))
    assert 20_000 < sheet.stat().st_size < 400_000
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert png_size(folder / pictures.SPEED) == (1000, 520)
    assert not list(folder.glob("_*.png"))  # (the renders it was made of are gone)


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
